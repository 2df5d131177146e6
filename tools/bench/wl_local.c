// SPDX-License-Identifier: MIT
/*
 * tools/bench/wl_local.c - workloads whose objects never leave their
 * thread: pool (1, 7), pair and batch (2), the churn of threads and mixed
 * (3, 4) and threads' batches (3), memory (8);
 * Documentation/internals/benchmarks.md has each loop.
 * One op is one allocation or one free; every object is written on
 * allocation and checked on free (bench.h).
 */
#include "tools/bench/bench.h"

#define BENCH_POOL_ALLOC	100
#define BENCH_POOL_FREE		50
#define BENCH_POOL_OPS		(2 * BENCH_POOL_ALLOC)
#define BENCH_BATCH		1000
#define BENCH_BATCHES		6000	/* per thread, workload 3's batches */
#define BENCH_WINDOW		1024
#define BENCH_SIZE_TAB		4096

/* churn's sizes, drawn before the clock starts */
static uint16_t bench_size_tab[BENCH_SIZE_TAB];

/* Per-worker pointer (and size) arrays, mapped before the clock starts. */
struct bench_arrays {
	void **ptr;
	uint16_t *size;
	size_t each;			/* entries per worker */
	long rss_live, rss_freed;	/* memory */
};

static struct bench_arrays *bench_arrays_map(unsigned int nr, size_t each)
{
	struct bench_arrays *a = bench_map(sizeof(*a));

	if (!a)
		return NULL;
	a->each = each;
	a->ptr = bench_map(nr * each * sizeof(void *));
	a->size = bench_map(nr * each * sizeof(uint16_t));
	return a;
}

static void bench_arrays_unmap(struct bench_arrays *a, unsigned int nr)
{
	bench_unmap(a->ptr, nr * a->each * sizeof(void *));
	bench_unmap(a->size, nr * a->each * sizeof(uint16_t));
	bench_unmap(a, sizeof(*a));
}

/* @fn on @nr threads with arrays of @each entries for each. */
static int bench_run_arrays(const struct bench_cfg *cfg, unsigned int nr,
			    bench_work_fn fn, size_t each, uint64_t ops,
			    uint64_t lat, struct bench_result *res)
{
	struct bench_arrays *a = bench_arrays_map(nr, each);
	int ret = -1;

	if (a && a->ptr && a->size)
		ret = bench_team_run(cfg, nr, fn, a, ops, lat, res);
	if (a)
		bench_arrays_unmap(a, nr);
	return ret;
}

static inline __attribute__((always_inline)) void
bench_pool_body(struct bench_worker *w, bool lat)
{
	struct bench_arrays *a = w->shared;
	void **keep = a->ptr, *batch[BENCH_POOL_ALLOC];
	uint64_t rounds = w->ops / BENCH_POOL_OPS, seq = 0, kept = 0;
	size_t size = w->cfg->size;

	for (uint64_t r = 0; r < rounds; r++) {
		for (int i = 0; i < BENCH_POOL_ALLOC; i++)
			if (!(batch[i] = bench_obj_alloc(w, size, seq++, lat)))
				return;
		for (int i = 0; i < BENCH_POOL_FREE; i++)
			bench_obj_free(w, batch[i], size, lat);
		for (int i = BENCH_POOL_FREE; i < BENCH_POOL_ALLOC; i++)
			keep[kept++] = batch[i];
	}
	for (uint64_t i = 0; i < kept; i++)
		bench_obj_free(w, keep[i], size, lat);
	w->done = rounds * BENCH_POOL_OPS;
}

static void bench_pool_worker(struct bench_worker *w)
{
	bench_pool_body(w, false);
}

static void bench_pool_lat_worker(struct bench_worker *w)
{
	bench_pool_body(w, true);
}

static int bench_pool_run(const struct bench_cfg *cfg, uint64_t ops,
			  struct bench_result *res, bool lat)
{
	uint64_t rounds = ops < BENCH_POOL_OPS ? 1 : ops / BENCH_POOL_OPS;

	ops = rounds * BENCH_POOL_OPS;
	return bench_run_arrays(cfg, 1, lat ? bench_pool_lat_worker :
				bench_pool_worker, rounds * BENCH_POOL_FREE,
				ops, lat ? ops : 0, res);
}

BENCH_WL(bench_wl_pool)
{
	return bench_pool_run(cfg, ops, res, false);
}

BENCH_WL(bench_wl_pool_lat)
{
	return bench_pool_run(cfg, ops, res, true);
}

static void bench_pair_worker(struct bench_worker *w)
{
	size_t size = w->cfg->size;
	uint64_t n = w->ops / 2;

	for (uint64_t i = 0; i < n; i++) {
		void *p = bench_obj_alloc(w, size, i, false);

		if (!p)
			return;
		bench_obj_free(w, p, size, false);
	}
	w->done = 2 * n;
}

BENCH_WL(bench_wl_pair)
{
	return bench_team_run(cfg, 1, bench_pair_worker, NULL, ops, 0, res);
}

static void bench_batch_worker(struct bench_worker *w)
{
	struct bench_arrays *a = w->shared;
	uint64_t rounds = w->ops / (2 * BENCH_BATCH), seq = 0;
	size_t size = w->cfg->size;

	for (uint64_t r = 0; r < rounds; r++) {
		for (int i = 0; i < BENCH_BATCH; i++)
			if (!(a->ptr[i] = bench_obj_alloc(w, size, seq++,
							  false)))
				return;
		for (int i = 0; i < BENCH_BATCH; i++)
			bench_obj_free(w, a->ptr[i], size, false);
	}
	w->done = rounds * 2 * BENCH_BATCH;
}

BENCH_WL(bench_wl_batch)
{
	return bench_run_arrays(cfg, 1, bench_batch_worker, BENCH_BATCH,
				ops < 2 * BENCH_BATCH ? 2 * BENCH_BATCH : ops,
				0, res);
}

/*
 * Threads' batches (issue 24): each thread allocates BENCH_BATCHES objects
 * of one class, writes them (the tags), then frees them all, round after
 * round, past any two magazines: the allocator keeps each thread's
 * objects on its CPU, or the threads trade them and write each other's
 * lines.
 */
static void bench_batches_worker(struct bench_worker *w)
{
	struct bench_arrays *a = w->shared;
	void **mine = a->ptr + w->id * a->each;
	uint64_t rounds = w->ops / (2 * BENCH_BATCHES), seq = bench_seq_base(w);
	size_t size = BENCH_BATCHES_SIZE;

	for (uint64_t r = 0; r < rounds; r++) {
		for (int i = 0; i < BENCH_BATCHES; i++)
			if (!(mine[i] = bench_obj_alloc(w, size, seq++,
							false)))
				return;
		for (int i = 0; i < BENCH_BATCHES; i++)
			bench_obj_free(w, mine[i], size, false);
	}
	w->done = rounds * 2 * BENCH_BATCHES;
}

BENCH_WL(bench_wl_batches)
{
	return bench_run_arrays(cfg, cfg->threads, bench_batches_worker,
				BENCH_BATCHES,
				ops < 2 * BENCH_BATCHES ? 2 * BENCH_BATCHES :
				ops, 0, res);
}

static void bench_churn_worker(struct bench_worker *w)
{
	struct bench_arrays *a = w->shared;
	void **slot = a->ptr + w->id * a->each;
	uint16_t *ssz = a->size + w->id * a->each;
	uint64_t n = w->ops / 2, seq = bench_seq_base(w);

	for (uint64_t i = 0; i < n; i++) {
		uint64_t r = bench_rand(&w->rng);
		unsigned int k = r & (BENCH_WINDOW - 1);
		size_t size = bench_size_tab[(r >> 32) & (BENCH_SIZE_TAB - 1)];

		if (slot[k])
			bench_obj_free(w, slot[k], ssz[k], false);
		if (!(slot[k] = bench_obj_alloc(w, size, seq++, false)))
			return;
		ssz[k] = (uint16_t)size;
	}
	for (unsigned int k = 0; k < BENCH_WINDOW; k++)
		if (slot[k])
			bench_obj_free(w, slot[k], ssz[k], false);
	w->done = 2 * n;
}

/*
 * Workload 3's sizes: min + (max - min + 1) u^2, u uniform in [0, 1), a
 * quarter of them in the lowest eighth; workload 4's: 32, 128 and 1024
 * bytes at 30, 50 and 20%.  Drawn once from the seed.
 */
static int bench_churn_run(const struct bench_cfg *cfg, unsigned int nr,
			   uint64_t ops, bool mixed, struct bench_result *res)
{
	uint64_t rng = BENCH_SEED ^ 0x5DEECE66DULL;
	double span = BENCH_SIZE_MAX - BENCH_SIZE_MIN + 1;

	for (int i = 0; i < BENCH_SIZE_TAB; i++) {
		double u = (double)(bench_rand(&rng) >> 11) * 0x1.0p-53;

		if (mixed)
			bench_size_tab[i] = u < 0.3 ? 32 : u < 0.8 ? 128 : 1024;
		else
			bench_size_tab[i] = (uint16_t)(BENCH_SIZE_MIN +
						       (size_t)(span * u * u));
	}
	return bench_run_arrays(cfg, nr, bench_churn_worker, BENCH_WINDOW,
				ops, 0, res);
}

BENCH_WL(bench_wl_threads)
{
	return bench_churn_run(cfg, cfg->threads, ops, false, res);
}

BENCH_WL(bench_wl_mixed)
{
	return bench_churn_run(cfg, 1, ops, true, res);
}

static void bench_memory_worker(struct bench_worker *w)
{
	struct bench_arrays *a = w->shared;
	size_t size = w->cfg->size;

	for (uint64_t i = 0; i < w->ops; i++)
		if (!(a->ptr[i] = bench_obj_alloc(w, size, i, false)))
			return;
	a->rss_live = bench_rss_kb();
	for (uint64_t i = 0; i < w->ops; i++)
		bench_obj_free(w, a->ptr[i], size, false);
	a->rss_freed = bench_rss_kb();
	w->done = 2 * w->ops;
}

/* RSS is read with the pointer array mapped at every step. */
BENCH_WL(bench_wl_memory)
{
	struct bench_arrays *a = bench_arrays_map(1, ops);
	double base = (double)bench_rss_kb(), bytes;
	int ret = -1;

	if (a && a->ptr && a->size)
		ret = bench_team_run(cfg, 1, bench_memory_worker, a, ops, 0,
				     res);
	if (!ret) {
		bytes = ((double)a->rss_live - base) * 1024 / (double)ops;
		bench_x_set(res, BENCH_X_BASE, base);
		bench_x_set(res, BENCH_X_LIVE, (double)a->rss_live);
		bench_x_set(res, BENCH_X_FREED, (double)a->rss_freed);
		bench_x_set(res, BENCH_X_BYTES, bytes);
		bench_x_set(res, BENCH_X_OVER,
			    100 * (bytes / (double)cfg->size - 1));
		snprintf(res->trim, sizeof(res->trim), "%s", bench_heap_trim());
		bench_x_set(res, BENCH_X_TRIM, (double)bench_rss_kb());
	}
	if (a)
		bench_arrays_unmap(a, 1);
	return ret;
}
