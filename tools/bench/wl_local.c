// SPDX-License-Identifier: MIT
/*
 * tools/bench/wl_local.c - workloads whose objects never leave their thread.
 *
 *  pool    (1, 7) rounds of: allocate 100, free the first 50 of them; the
 *          other 50 stay live to the end and are freed then, in order.
 *          One op = one allocation or one free; 200 ops a round.
 *  pair    (2)    allocate, free at once.
 *  batch   (2)    allocate 1000, free the 1000 in allocation order.
 *  churn   (3, 4) a window of 1024 slots per thread; each step picks a random
 *          slot, frees what it holds and puts a new object of a random size
 *          there (sizes from a table drawn once from the seed); the window
 *          is emptied at the end.
 *  memory  (8)    read RSS; allocate N objects, read RSS; free them, read
 *          RSS; give memory back (bench_heap_trim()), read RSS.
 *
 * Every object is written on allocation and checked on free (bench.h).
 */
#include <string.h>

#include "tools/bench/bench.h"

#define BENCH_POOL_ALLOC	100
#define BENCH_POOL_FREE		50
#define BENCH_POOL_ROUND_OPS	(2 * BENCH_POOL_ALLOC)
#define BENCH_BATCH		1000
#define BENCH_WINDOW		1024
#define BENCH_SIZE_TAB		4096

/* Per-worker pointer arrays, mapped before the clock starts. */
struct bench_arrays {
	void **ptr;
	uint16_t *size;
	size_t each;			/* entries per worker */
	const uint16_t *size_tab;	/* BENCH_SIZE_TAB sizes (churn) */
	long rss_live, rss_freed;	/* memory workload */
};

static int bench_arrays_map(struct bench_arrays *a, unsigned int nr,
			    size_t each, bool sizes)
{
	memset(a, 0, sizeof(*a));
	a->each = each;
	a->ptr = bench_map(nr * each * sizeof(void *));
	if (sizes)
		a->size = bench_map(nr * each * sizeof(uint16_t));
	return a->ptr && (!sizes || a->size) ? 0 : -1;
}

static void bench_arrays_unmap(struct bench_arrays *a, unsigned int nr)
{
	bench_unmap(a->ptr, nr * a->each * sizeof(void *));
	if (a->size)
		bench_unmap(a->size, nr * a->each * sizeof(uint16_t));
}

/* --- pool: allocate 100, free the first 50 ---------------------------------- */

static inline __attribute__((always_inline)) void
bench_pool_body(struct bench_worker *w, bool lat)
{
	struct bench_arrays *a = w->shared;
	void **keep = a->ptr + w->id * a->each;
	size_t size = w->cfg->size;
	uint64_t rounds = w->ops / BENCH_POOL_ROUND_OPS;
	uint64_t seq = bench_seq_base(w), kept = 0;
	void *batch[BENCH_POOL_ALLOC];

	for (uint64_t r = 0; r < rounds; r++) {
		for (int i = 0; i < BENCH_POOL_ALLOC; i++) {
			batch[i] = bench_obj_alloc(w, size, seq++, lat);
			if (!batch[i])
				return;
		}
		for (int i = 0; i < BENCH_POOL_FREE; i++)
			bench_obj_free(w, batch[i], size, lat);
		for (int i = BENCH_POOL_FREE; i < BENCH_POOL_ALLOC; i++)
			keep[kept++] = batch[i];
	}
	for (uint64_t i = 0; i < kept; i++)
		bench_obj_free(w, keep[i], size, lat);
	w->done = rounds * BENCH_POOL_ROUND_OPS;
}

static void bench_pool_worker(struct bench_worker *w)
{
	bench_pool_body(w, false);
}

static void bench_pool_lat_worker(struct bench_worker *w)
{
	bench_pool_body(w, true);
}

static int bench_pool_run_common(const struct bench_cfg *cfg, uint64_t ops,
				 struct bench_result *res, bool lat)
{
	uint64_t rounds = ops / BENCH_POOL_ROUND_OPS;
	struct bench_arrays a;
	int ret;

	if (rounds == 0)
		rounds = 1;
	ops = rounds * BENCH_POOL_ROUND_OPS;
	if (bench_arrays_map(&a, 1, rounds * BENCH_POOL_FREE, false))
		return -1;
	ret = bench_team_run(cfg, 1, lat ? bench_pool_lat_worker :
				     bench_pool_worker,
			     &a, ops, lat ? ops : 0, res);
	bench_arrays_unmap(&a, 1);
	return ret;
}

int bench_wl_pool(const struct bench_cfg *cfg, uint64_t ops,
		  struct bench_result *res)
{
	return bench_pool_run_common(cfg, ops, res, false);
}

int bench_wl_pool_lat(const struct bench_cfg *cfg, uint64_t ops,
		      struct bench_result *res)
{
	return bench_pool_run_common(cfg, ops, res, true);
}

/* --- pair and batch ------------------------------------------------------------ */

static void bench_pair_worker(struct bench_worker *w)
{
	size_t size = w->cfg->size;
	uint64_t n = w->ops / 2, seq = bench_seq_base(w);

	for (uint64_t i = 0; i < n; i++) {
		void *p = bench_obj_alloc(w, size, seq++, false);

		if (!p)
			return;
		bench_obj_free(w, p, size, false);
	}
	w->done = 2 * n;
}

int bench_wl_pair(const struct bench_cfg *cfg, uint64_t ops,
		  struct bench_result *res)
{
	return bench_team_run(cfg, 1, bench_pair_worker, NULL, ops, 0, res);
}

static void bench_batch_worker(struct bench_worker *w)
{
	struct bench_arrays *a = w->shared;
	void **batch = a->ptr + w->id * a->each;
	size_t size = w->cfg->size;
	uint64_t rounds = w->ops / (2 * BENCH_BATCH), seq = bench_seq_base(w);

	for (uint64_t r = 0; r < rounds; r++) {
		for (int i = 0; i < BENCH_BATCH; i++) {
			batch[i] = bench_obj_alloc(w, size, seq++, false);
			if (!batch[i])
				return;
		}
		for (int i = 0; i < BENCH_BATCH; i++)
			bench_obj_free(w, batch[i], size, false);
	}
	w->done = rounds * 2 * BENCH_BATCH;
}

int bench_wl_batch(const struct bench_cfg *cfg, uint64_t ops,
		   struct bench_result *res)
{
	struct bench_arrays a;
	int ret;

	if (ops < 2 * BENCH_BATCH)
		ops = 2 * BENCH_BATCH;
	if (bench_arrays_map(&a, 1, BENCH_BATCH, false))
		return -1;
	ret = bench_team_run(cfg, 1, bench_batch_worker, &a, ops, 0, res);
	bench_arrays_unmap(&a, 1);
	return ret;
}

/* --- churn: random slots, random sizes --------------------------------------- */

static void bench_churn_worker(struct bench_worker *w)
{
	struct bench_arrays *a = w->shared;
	void **slot = a->ptr + w->id * a->each;
	uint16_t *ssz = a->size + w->id * a->each;
	uint64_t n = w->ops / 2, seq = bench_seq_base(w);

	for (uint64_t i = 0; i < n; i++) {
		uint64_t r = bench_rand(&w->rng);
		unsigned int k = r & (BENCH_WINDOW - 1);
		size_t size = a->size_tab[(r >> 32) & (BENCH_SIZE_TAB - 1)];

		if (slot[k])
			bench_obj_free(w, slot[k], ssz[k], false);
		slot[k] = bench_obj_alloc(w, size, seq++, false);
		if (!slot[k])
			return;
		ssz[k] = (uint16_t)size;
	}
	for (unsigned int k = 0; k < BENCH_WINDOW; k++)
		if (slot[k])
			bench_obj_free(w, slot[k], ssz[k], false);
	w->done = 2 * n;
}

/*
 * The size table.  Workload 3: min + (max - min + 1) * u^2 for u uniform in
 * [0, 1), which makes small sizes the most frequent (a quarter of the draws
 * fall in the lowest eighth of the range).  Workload 4: 32, 128 and 1024
 * bytes at 30, 50 and 20%.
 */
static void bench_size_tab(const struct bench_cfg *cfg, bool mixed,
			   uint16_t *tab)
{
	uint64_t rng = cfg->seed ^ 0x5DEECE66DULL;

	for (int i = 0; i < BENCH_SIZE_TAB; i++) {
		double u = (double)(bench_rand(&rng) >> 11) * 0x1.0p-53;

		if (mixed)
			tab[i] = u < 0.3 ? 32 : u < 0.8 ? 128 : 1024;
		else
			tab[i] = (uint16_t)(cfg->size_min +
				 (size_t)((double)(cfg->size_max -
						   cfg->size_min + 1) * u * u));
	}
}

static int bench_churn_run(const struct bench_cfg *cfg, unsigned int nr,
			   uint64_t ops, bool mixed, struct bench_result *res)
{
	struct bench_arrays a;
	uint16_t *tab = bench_map(BENCH_SIZE_TAB * sizeof(*tab));
	int ret = -1;

	if (!tab)
		return -1;
	bench_size_tab(cfg, mixed, tab);
	if (!bench_arrays_map(&a, nr, BENCH_WINDOW, true)) {
		a.size_tab = tab;
		ret = bench_team_run(cfg, nr, bench_churn_worker, &a, ops, 0,
				     res);
	}
	bench_arrays_unmap(&a, nr);
	bench_unmap(tab, BENCH_SIZE_TAB * sizeof(*tab));
	return ret;
}

int bench_wl_threads(const struct bench_cfg *cfg, uint64_t ops,
		     struct bench_result *res)
{
	return bench_churn_run(cfg, cfg->threads, ops, false, res);
}

int bench_wl_mixed(const struct bench_cfg *cfg, uint64_t ops,
		   struct bench_result *res)
{
	return bench_churn_run(cfg, 1, ops, true, res);
}

/* --- memory: N live objects ---------------------------------------------------- */

static void bench_memory_worker(struct bench_worker *w)
{
	struct bench_arrays *a = w->shared;
	size_t size = w->cfg->size;
	uint64_t seq = bench_seq_base(w);

	for (uint64_t i = 0; i < w->ops; i++) {
		a->ptr[i] = bench_obj_alloc(w, size, seq++, false);
		if (!a->ptr[i])
			return;
	}
	a->rss_live = bench_rss_kb();
	for (uint64_t i = 0; i < w->ops; i++)
		bench_obj_free(w, a->ptr[i], size, false);
	a->rss_freed = bench_rss_kb();
	w->done = 2 * w->ops;
}

/*
 * RSS is read with the harness's pointer array still mapped at every step
 * (before, live, freed, trimmed), so that the differences are the heap's.
 */
int bench_wl_memory(const struct bench_cfg *cfg, uint64_t ops,
		    struct bench_result *res)
{
	struct bench_arrays a;
	int ret;

	if (bench_arrays_map(&a, 1, ops, false))
		return -1;
	res->rss_base_kb = bench_rss_kb();
	ret = bench_team_run(cfg, 1, bench_memory_worker, &a, ops, 0, res);
	res->rss_live_kb = a.rss_live;
	res->rss_freed_kb = a.rss_freed;
	res->live = ops;
	snprintf(res->trim, sizeof(res->trim), "%s", bench_heap_trim());
	res->rss_trim_kb = bench_rss_kb();
	bench_arrays_unmap(&a, 1);
	return ret;
}
