// SPDX-License-Identifier: MIT
/*
 * tools/bench/workloads.c - the workloads: names, defaults, sizes, columns.
 *
 * The numbers are those of the issues that asked for them; the loops are
 * in wl_local.c (objects stay in their thread), wl_shared.c (they cross
 * threads or share lines) and wl_beneath.c (beneath the hit path).
 *
 * Every one runs on a team of pinned threads that start together (a team
 * of one for one thread), so all are timed alike: each worker reads its own
 * CLOCK_THREAD_CPUTIME_ID around its part (the primary figure, summed), and
 * wall time runs from the first worker's start after the common barrier to
 * the last one's end, read by the workers themselves.
 */
#include <pthread.h>
#include <stdlib.h>

#include "tools/bench/bench.h"

static const size_t bench_small[] = { 8 }, bench_mixed[] = { 32, 128, 1024 };
static const size_t bench_b48[] = { BENCH_BATCHES_SIZE };
/* 8-128 bytes: segpool_malloc()'s classes, 8, then steps of 16 */
static const size_t bench_range[] = { 8, 16, 32, 48, 64, 80, 96, 112, 128 };

#define C(x) BENCH_COL_##x
#define X(x) BENCH_X_##x
static const signed char bench_cols_speed[] = {
	C(CPU), C(RANGE), C(WALL), C(MOPS), C(GLIBC), C(PEER), C(RSS), -1,
};
static const signed char bench_cols_threads[] = {
	C(CPU), C(RANGE), C(WALL), C(MOPS), C(GLIBC), C(PEER), C(RSS),
	X(CACHED), C(OBJS), -1,
};
static const signed char bench_cols_lat[] = {
	X(AP50), X(AP99), X(AP999), X(FP50), X(FP99), X(FP999), -1,
};
static const signed char bench_cols_memory[] = {
	X(BYTES), X(OVER), X(BASE), C(RSS), X(FREED), X(TRIM), C(TRIM), -1,
};
static const signed char bench_cols_churn[] = {
	C(CPU), C(RANGE), C(WALL), X(MINFLT), C(SYS), C(GLIBC), C(PEER),
	C(RSS), -1,
};
static const signed char bench_cols_live[] = {
	C(CPU), C(RANGE), C(GLIBC), C(PEER), C(RSS), -1,
};
static const signed char bench_cols_idle[] = {
	X(BEFORE), X(PEAK), X(1S), X(5S), X(20S), X(BACK), -1,
};

#define OP "one allocation or one free"
#define FS "one object: allocate, write it W times, free"
#define SPEED bench_cols_speed, 1
#define BENEATH (BENCH_WL_BENEATH | BENCH_WL_NO_WARMUP)
#define LIVE(name, n) { name, 11, "live-set scaling: N live, scattered " \
	"frees, best of 3 rounds", "one allocation and its free", n, \
	BENCH_ON_ONE, BENEATH, NULL, 0, bench_wl_live, 3, 100, \
	bench_cols_live, 1 }

const struct bench_workload bench_workloads[] = {
	{ "pool", 1, "allocate 100, free the first 50 (the rest at the end)",
	  OP, 10000000, BENCH_ON_ONE, 0, NULL, 0, bench_wl_pool,
	  0, 0, SPEED },
	{ "pair", 2, "hot pair: allocate, then free at once", OP, 10000000,
	  BENCH_ON_ONE, 0, NULL, 0, bench_wl_pair, 0, 0, SPEED },
	{ "batch", 2, "batch: allocate 1000, then free the 1000", OP,
	  10000000, BENCH_ON_ONE, 0, NULL, 0, bench_wl_batch,
	  0, 0, SPEED },
	{ "threads", 3, "random sizes weighted toward small, random slots",
	  OP, 500000, BENCH_ON_LIST, 0, bench_range, 9, bench_wl_threads,
	  0, 0, bench_cols_threads, 1 },
	{ "batches", 3, "threads' batches: allocate 6000, write, free them "
	  "all", OP, 2000000, BENCH_ON_LIST, 0, bench_b48, 1,
	  bench_wl_batches, 0, 0, bench_cols_threads, 1 },
	{ "mixed", 4, "mixed sizes at 30/50/20%, random slots", OP, 4000000,
	  BENCH_ON_ONE, 0, bench_mixed, 3, bench_wl_mixed, 0, 0, SPEED },
	{ "xfer", 5, "producer/consumer, every free cross-thread", OP,
	  2000000, BENCH_ON_PAIR, 0, NULL, 0, bench_wl_xfer,
	  0, 0, SPEED },
	{ "thrash", 6, "false sharing, active: threads write their own "
	  "objects", FS, 1000000, BENCH_ON_CPUS, 0, bench_small, 1,
	  bench_wl_thrash, 0, 0, SPEED },
	{ "scratch", 6, "false sharing, passive: objects handed over, "
	  "written", FS, 1000000, BENCH_ON_CPUS, 0, bench_small, 1,
	  bench_wl_scratch, 0, 0, SPEED },
	{ "lat-pool", 7, "latency of workload 1 (pool)", OP, 2000000,
	  BENCH_ON_ONE, BENCH_WL_LATENCY, NULL, 0,
	  bench_wl_pool_lat, 0, 0, bench_cols_lat, 1 },
	{ "lat-xfer", 7, "latency of workload 5 (xfer)", OP, 1000000,
	  BENCH_ON_PAIR, BENCH_WL_LATENCY, NULL, 0,
	  bench_wl_xfer_lat, 0, 0, bench_cols_lat, 1 },
	{ "memory", 8, "N live objects, then all freed and trimmed", OP, 0,
	  BENCH_ON_ONE, BENCH_WL_MEMORY, NULL, 0, bench_wl_memory,
	  0, 0, bench_cols_memory, 1 },
	{ "large", 9, "large-block churn: 33 KiB-2 MiB, both ends written, "
	  "32 live", "one block: allocate, write both ends, free", 100000,
	  BENCH_ON_ONE, BENCH_WL_BENEATH | BENCH_WL_NO_CACHE |
	  BENCH_WL_SYSCOUNT, NULL, 0, bench_wl_large, 0, 100,
	  bench_cols_churn, 1e3 },
	{ "realloc", 10, "realloc growth: 40 KiB by steps of 1.5x, new tail "
	  "written", "one growth series", 10, BENCH_ON_ONE, BENCH_WL_BENEATH |
	  BENCH_WL_NO_CACHE | BENCH_WL_SYSCOUNT, NULL, 0,
	  bench_wl_realloc, 0, 1, bench_cols_churn, 1e6 },
	LIVE("live-1e4", 10000), LIVE("live-1e5", 100000),
	LIVE("live-1e6", 1000000), LIVE("live-1e7", 10000000),
	{ "idle", 12, "idle release: objects and 260 MiB of blocks, all "
	  "freed, then no call", OP, 1000000, BENCH_ON_ONE, BENEATH,
	  NULL, 0, bench_wl_idle, 3, 100, bench_cols_idle, 1 },
};

const unsigned int bench_nr_workloads =
	sizeof(bench_workloads) / sizeof(bench_workloads[0]);

const struct bench_workload *bench_workload_find(const char *name)
{
	for (unsigned int i = 0; i < bench_nr_workloads; i++)
		if (!strcmp(bench_workloads[i].name, name))
			return &bench_workloads[i];
	return NULL;
}

/*
 * Per thread: --ops, or the default times -S; memory's is --live; the
 * rows beneath the hit path take the default times -S, at least min_ops.
 */
uint64_t bench_workload_ops(const struct bench_workload *wl,
			    const struct bench_cfg *cfg)
{
	double n = (double)wl->default_ops * cfg->scale;

	if (wl->flags & BENCH_WL_MEMORY)
		return cfg->live;
	if (cfg->ops && !(wl->flags & BENCH_WL_BENEATH))
		return cfg->ops;
	if (n < (double)wl->min_ops)
		return wl->min_ops;
	return n < 1 ? 1 : (uint64_t)n;
}

/* False-sharing threads: every usable CPU, at least 2. */
unsigned int bench_fs_threads(void)
{
	int cpus[BENCH_MAX_THREADS];
	unsigned int n = bench_cpus(cpus, BENCH_MAX_THREADS);

	return n < 2 ? 2 : n;
}

unsigned int bench_workload_threads(const struct bench_workload *wl,
				    unsigned int listed)
{
	return wl->on == BENCH_ON_LIST ? listed : wl->on == BENCH_ON_PAIR ? 2 :
	       wl->on == BENCH_ON_CPUS ? bench_fs_threads() : 1;
}

/* What a run of @wl does with @cfg's settings: threads, sizes, count. */
void bench_describe(const struct bench_workload *wl,
		    const struct bench_cfg *cfg, char *buf, size_t len)
{
	const size_t *cls = wl->cls ? wl->cls : &cfg->size;
	unsigned int nr = wl->cls ? wl->nr_cls : 1;
	char thr[64] = "1 thread", sz[48], more[64] = "";
	size_t n = 0;

	if (nr > 3)
		snprintf(sz, sizeof(sz), "%zu-%zu B", cls[0], cls[nr - 1]);
	else
		for (unsigned int i = 0; i < nr; i++)
			n += (size_t)snprintf(sz + n, sizeof(sz) - n, "%s%zu%s",
					      i ? "/" : "", cls[i],
					      i + 1 < nr ? "" : " B");
	if (wl->on == BENCH_ON_LIST)
		for (unsigned int i = n = 0; i < cfg->nr_thread_list; i++)
			n += (size_t)snprintf(thr + n, sizeof(thr) - n, "%u%s",
					      cfg->thread_list[i],
					      i + 1 < cfg->nr_thread_list ?
					      "," : " threads");
	else if (wl->on == BENCH_ON_PAIR)
		snprintf(thr, sizeof(thr), "1 producer/consumer pair");
	else if (wl->on == BENCH_ON_CPUS)
		snprintf(thr, sizeof(thr), "%u threads, W = %u",
			 bench_fs_threads(), cfg->writes);
	if (!strcmp(wl->name, "realloc"))
		snprintf(more, sizeof(more), ", to %zu KiB",
			 cfg->grow_max / 1024);
	else if (!strcmp(wl->name, "idle"))
		snprintf(more, sizeof(more), ", %.1f MiB of blocks, RSS "
			 "sampled up to %u s", 260 * cfg->scale,
			 cfg->idle_max_s);
	snprintf(buf, len, "%s; %s; %llu per thread%s", thr, sz,
		 (unsigned long long)bench_workload_ops(wl, cfg), more);
}

struct bench_team {
	pthread_barrier_t start;
	bench_work_fn fn;
	int cpus[BENCH_MAX_THREADS];
	unsigned int nr_cpus;
};

static void *bench_team_thread(void *p)
{
	struct bench_worker *w = p;
	uint64_t c0;

	bench_pin(w->team->cpus[w->id % w->team->nr_cpus]);
	pthread_barrier_wait(&w->team->start);
	w->wall_start = bench_ns(CLOCK_MONOTONIC);
	c0 = bench_ns(CLOCK_THREAD_CPUTIME_ID);
	w->team->fn(w);
	w->cpu_ns = (double)(bench_ns(CLOCK_THREAD_CPUTIME_ID) - c0);
	w->wall_end = bench_ns(CLOCK_MONOTONIC);
	return NULL;
}

/* Every worker's samples of one kind, sorted: percentiles, empty less. */
static void bench_team_latency(const struct bench_cfg *cfg,
			       struct bench_worker *ws, unsigned int nr,
			       struct bench_result *res)
{
	static const double pct[3] = { 0.50, 0.99, 0.999 };

	for (int k = 0; k < 2; k++) {
		uint64_t n = 0;
		uint32_t *all;

		for (unsigned int i = 0; i < nr; i++)
			n += ws[i].lat[k].n;
		all = n ? bench_map(n * sizeof(*all)) : NULL;
		if (!all) {
			res->errors++;
			return;
		}
		n = 0;
		for (unsigned int i = 0; i < nr; i++) {
			memcpy(all + n, ws[i].lat[k].v,
			       ws[i].lat[k].n * sizeof(*all));
			n += ws[i].lat[k].n;
		}
		qsort(all, n, sizeof(*all), bench_cmp_u32);
		for (int j = 0; j < 3; j++) {
			double ns = bench_percentile(all, n, pct[j]) * 1e9 /
				    cfg->tsc_hz - res->x[BENCH_X_EMPTY];

			bench_x_set(res, BENCH_X_AP50 + 3 * k + j,
				    ns > 0 ? ns : 0);
		}
		bench_unmap(all, n * sizeof(*all));
	}
}

void bench_worker_init(struct bench_worker *w, const struct bench_cfg *cfg,
		       unsigned int id)
{
	memset(w, 0, sizeof(*w));
	w->id = id;
	w->cfg = cfg;
	w->rng = BENCH_SEED * 0x100000001B3ULL + id + 1;
}

int bench_team_run(const struct bench_cfg *cfg, unsigned int nr,
		   bench_work_fn fn, void *shared, uint64_t ops_each,
		   uint64_t lat_cap, struct bench_result *res)
{
	size_t bytes = nr * sizeof(struct bench_worker);
	struct bench_team team = { .fn = fn };
	pthread_t tids[BENCH_MAX_THREADS];
	struct bench_worker *ws;
	uint64_t t0 = UINT64_MAX, t1 = 0;

	if (nr == 0 || nr > BENCH_MAX_THREADS || !(ws = bench_map(bytes)))
		return -1;
	team.nr_cpus = bench_cpus(team.cpus, BENCH_MAX_THREADS);
	for (unsigned int i = 0; i < nr; i++) {
		bench_worker_init(&ws[i], cfg, i);
		ws[i].ops = ops_each;
		ws[i].shared = shared;
		ws[i].team = &team;
		for (int k = 0; lat_cap && k < 2; k++) {
			ws[i].lat[k].v = bench_map(lat_cap * sizeof(uint32_t));
			ws[i].lat[k].cap = ws[i].lat[k].v ? lat_cap : 0;
		}
	}
	pthread_barrier_init(&team.start, NULL, nr + 1);
	for (unsigned int i = 0; i < nr; i++) {
		int err;

		err = pthread_create(&tids[i], NULL, bench_team_thread,
				     &ws[i]);
		if (err)	/* the barrier can never open */
			bench_die("pthread_create: %s", strerror(err));
	}
	pthread_barrier_wait(&team.start);
	for (unsigned int i = 0; i < nr; i++)
		pthread_join(tids[i], NULL);
	pthread_barrier_destroy(&team.start);
	for (unsigned int i = 0; i < nr; i++) {
		t0 = ws[i].wall_start < t0 ? ws[i].wall_start : t0;
		t1 = ws[i].wall_end > t1 ? ws[i].wall_end : t1;
		res->cpu_ns += ws[i].cpu_ns;
		res->ops += ws[i].done;
		res->checksum += ws[i].checksum;
		res->expect += ws[i].expect;
		res->errors += ws[i].errors;
	}
	res->wall_ns += (double)(t1 - t0);
	if (lat_cap)
		bench_team_latency(cfg, ws, nr, res);
	for (unsigned int i = 0; i < nr; i++)
		for (int k = 0; k < 2; k++)
			bench_unmap(ws[i].lat[k].v,
				    ws[i].lat[k].cap * sizeof(uint32_t));
	bench_unmap(ws, bytes);
	return 0;
}
