// SPDX-License-Identifier: MIT
/*
 * tools/bench/workloads.c - the workloads: names, defaults and sizes.
 *
 * The numbers are those of the issue that asked for the benchmark; the
 * loops themselves are in wl_local.c (objects stay in their thread) and
 * wl_shared.c (objects cross threads or share lines).
 */
#include <stdio.h>
#include <string.h>

#include "tools/bench/bench.h"

/* --- size plans: which classes a segpool cache per class needs ------------- */

static void bench_sizes_fixed(struct bench_sizes *s, const size_t *v,
			      unsigned int n)
{
	memset(s, 0, sizeof(*s));
	for (unsigned int i = 0; i < n; i++)
		s->cls[s->nr++] = v[i];
	s->min = v[0];
	s->max = v[n - 1];
}

static void bench_sizes_object(const struct bench_cfg *cfg,
			       struct bench_sizes *s)
{
	bench_sizes_fixed(s, &cfg->size, 1);
}

static void bench_sizes_small(const struct bench_cfg *cfg,
			      struct bench_sizes *s)
{
	static const size_t small = 8;

	(void)cfg;
	bench_sizes_fixed(s, &small, 1);
}

static void bench_sizes_mixed(const struct bench_cfg *cfg,
			      struct bench_sizes *s)
{
	static const size_t mixed[] = { 32, 128, 1024 };

	(void)cfg;
	bench_sizes_fixed(s, mixed, 3);
}

/*
 * Random sizes min..max: the classes segpool_malloc() uses up to 128 bytes
 * (8, then steps of 16), with the step doubled until they fit the table.
 */
static void bench_sizes_range(const struct bench_cfg *cfg,
			      struct bench_sizes *s)
{
	size_t step = 16;

	memset(s, 0, sizeof(*s));
	s->min = cfg->size_min;
	s->max = cfg->size_max;
	while ((s->max + step - 1) / step + 1 > BENCH_MAX_CLASSES)
		step *= 2;
	if (s->min <= 8 && step == 16)
		s->cls[s->nr++] = 8;
	for (size_t c = step; c < s->max + step; c += step)
		if (c >= s->min)
			s->cls[s->nr++] = c < s->max ? c : s->max;
}

/* --- the table -------------------------------------------------------------------- */

const struct bench_workload bench_workloads[] = {
	{ "pool", 1, "allocate 100, free the first 50 (the rest at the end)",
	  "one allocation or one free", "ops", 10000000, BENCH_ON_ONE, 0,
	  bench_sizes_object, bench_wl_pool },
	{ "pair", 2, "hot pair: allocate, then free at once",
	  "one allocation or one free", "ops", 10000000, BENCH_ON_ONE, 0,
	  bench_sizes_object, bench_wl_pair },
	{ "batch", 2, "batch: allocate 1000, then free the 1000",
	  "one allocation or one free", "ops", 10000000, BENCH_ON_ONE, 0,
	  bench_sizes_object, bench_wl_batch },
	{ "threads", 3, "random sizes weighted toward small, random slots",
	  "one allocation or one free", "ops per thread", 500000,
	  BENCH_ON_LIST, 0, bench_sizes_range, bench_wl_threads },
	{ "mixed", 4, "mixed sizes at 30/50/20%, random slots",
	  "one allocation or one free", "ops", 4000000, BENCH_ON_ONE, 0,
	  bench_sizes_mixed, bench_wl_mixed },
	{ "xfer", 5, "producer/consumer, every free cross-thread",
	  "one allocation or one free", "objects per pair", 2000000,
	  BENCH_ON_PAIRS, 0, bench_sizes_object, bench_wl_xfer },
	{ "thrash", 6, "false sharing, active: threads write their own objects",
	  "one object: allocate, write it W times, free", "objects per thread",
	  1000000, BENCH_ON_CPUS, 0, bench_sizes_small, bench_wl_thrash },
	{ "scratch", 6, "false sharing, passive: objects handed over, written",
	  "one object: allocate, write it W times, free", "objects per thread",
	  1000000, BENCH_ON_CPUS, 0, bench_sizes_small, bench_wl_scratch },
	{ "lat-pool", 7, "latency of workload 1 (pool)",
	  "one allocation or one free", "ops", 2000000, BENCH_ON_ONE,
	  BENCH_WL_LATENCY, bench_sizes_object, bench_wl_pool_lat },
	{ "lat-xfer", 7, "latency of workload 5 (xfer)",
	  "one allocation or one free", "objects per pair", 1000000,
	  BENCH_ON_PAIRS, BENCH_WL_LATENCY, bench_sizes_object,
	  bench_wl_xfer_lat },
	{ "memory", 8, "N live objects, then all freed and trimmed",
	  "one allocation or one free", "live objects", 1000000, BENCH_ON_ONE,
	  BENCH_WL_MEMORY, bench_sizes_object, bench_wl_memory },
	/* beneath the hit path (wl_beneath.c) */
	{ "large", 9, "large-block churn: 33 KiB-2 MiB, both ends written, "
	  "32 live", "one block: allocate, write both ends, free", "blocks",
	  100000, BENCH_ON_ONE,
	  BENCH_WL_BENEATH | BENCH_WL_NO_CACHE | BENCH_WL_SYSCOUNT,
	  bench_sizes_object, bench_wl_large, 0, 100 },
	{ "realloc", 10, "realloc growth: 40 KiB by steps of 1.5x, new tail "
	  "written", "one growth series", "series", 10, BENCH_ON_ONE,
	  BENCH_WL_BENEATH | BENCH_WL_NO_CACHE | BENCH_WL_SYSCOUNT,
	  bench_sizes_object, bench_wl_realloc, 0, 1 },
	{ "live-1e4", 11, "live-set scaling: N live, scattered frees",
	  "one allocation and its free", "live objects", 10000, BENCH_ON_ONE,
	  BENCH_WL_BENEATH | BENCH_WL_NO_WARMUP, bench_sizes_object,
	  bench_wl_live, 3, 100 },
	{ "live-1e5", 11, "live-set scaling: N live, scattered frees",
	  "one allocation and its free", "live objects", 100000, BENCH_ON_ONE,
	  BENCH_WL_BENEATH | BENCH_WL_NO_WARMUP, bench_sizes_object,
	  bench_wl_live, 3, 100 },
	{ "live-1e6", 11, "live-set scaling: N live, scattered frees",
	  "one allocation and its free", "live objects", 1000000, BENCH_ON_ONE,
	  BENCH_WL_BENEATH | BENCH_WL_NO_WARMUP, bench_sizes_object,
	  bench_wl_live, 3, 100 },
	{ "live-1e7", 11, "live-set scaling: N live, scattered frees",
	  "one allocation and its free", "live objects", 10000000,
	  BENCH_ON_ONE, BENCH_WL_BENEATH | BENCH_WL_NO_WARMUP,
	  bench_sizes_object, bench_wl_live, 3, 100 },
	{ "idle", 12, "idle release: objects and 260 MiB of blocks, all freed, "
	  "then no call", "one allocation or one free", "objects", 1000000,
	  BENCH_ON_ONE, BENCH_WL_BENEATH | BENCH_WL_NO_WARMUP,
	  bench_sizes_object, bench_wl_idle, 3, 100 },
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

double bench_wl_scale(const struct bench_workload *wl,
		      const struct bench_cfg *cfg)
{
	if ((wl->flags & BENCH_WL_BENEATH) && cfg->rows_scale > 0)
		return cfg->rows_scale;
	return cfg->scale;
}

/*
 * Operations per thread (objects for memory): --ops, or default x --scale;
 * the rows beneath the hit path take default x --scale, at least min_ops.
 */
uint64_t bench_workload_ops(const struct bench_workload *wl,
			    const struct bench_cfg *cfg)
{
	double n;

	if (wl->flags & BENCH_WL_MEMORY)
		return cfg->live;
	if (cfg->ops && !(wl->flags & BENCH_WL_BENEATH))
		return cfg->ops;
	n = (double)wl->default_ops * bench_wl_scale(wl, cfg);
	if (n < (double)wl->min_ops)
		return wl->min_ops > 1 ? wl->min_ops : 1;
	return n < 1 ? 1 : (uint64_t)n;
}

/* False-sharing threads: --fs-threads, else every usable CPU (at least 2). */
unsigned int bench_fs_threads(const struct bench_cfg *cfg)
{
	int cpus[BENCH_MAX_THREADS];
	unsigned int n;

	if (cfg->fs_threads)
		return cfg->fs_threads;
	n = bench_cpus(cpus, BENCH_MAX_THREADS);
	return n < 2 ? 2 : n;
}

static void bench_count(char *buf, size_t len, uint64_t n)
{
	if (n >= 1000000 && n % 100000 == 0)
		snprintf(buf, len, "%gM", (double)n / 1e6);
	else if (n >= 1000 && n % 100 == 0)
		snprintf(buf, len, "%gk", (double)n / 1e3);
	else
		snprintf(buf, len, "%llu", (unsigned long long)n);
}

unsigned int bench_workload_threads(const struct bench_workload *wl,
				    const struct bench_cfg *cfg,
				    unsigned int listed)
{
	switch (wl->on) {
	case BENCH_ON_LIST:
		return listed;
	case BENCH_ON_PAIRS:
		return 2 * cfg->pairs;
	case BENCH_ON_CPUS:
		return bench_fs_threads(cfg);
	case BENCH_ON_ONE:
		break;
	}
	return 1;
}

/* "64 B", "32/128/1024 B" or "8-128 B": the sizes a workload asks for. */
static void bench_sizes_text(const struct bench_workload *wl,
			     const struct bench_cfg *cfg, char *buf, size_t len)
{
	struct bench_sizes s;
	size_t used = 0;

	wl->sizes(cfg, &s);
	if (s.nr > 3) {
		snprintf(buf, len, "%zu-%zu B", s.min, s.max);
		return;
	}
	for (unsigned int i = 0; i < s.nr && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%zu",
					 i ? "/" : "", s.cls[i]);
	if (used < len)
		snprintf(buf + used, len - used, " B");
}

static void bench_describe_beneath(const struct bench_workload *wl,
				   const struct bench_cfg *cfg, const char *n,
				   const char *sizes, char *buf, size_t len)
{
	if (!strcmp(wl->name, "realloc"))
		snprintf(buf, len, "%s; 1 thread; to %zu KiB; %s %s", wl->title,
			 cfg->grow_max / 1024, n, wl->count);
	else if (!strcmp(wl->name, "idle"))
		snprintf(buf, len, "%s; 1 thread; %s; %s %s and %.1f MiB of "
			 "blocks; RSS sampled for up to %u s", wl->title, sizes,
			 n, wl->count, 260 * bench_wl_scale(wl, cfg),
			 cfg->idle_max_s);
	else if (!strcmp(wl->name, "large"))
		snprintf(buf, len, "%s; 1 thread; %s %s", wl->title, n,
			 wl->count);
	else
		snprintf(buf, len, "%s; 1 thread; %s; N = %s, best of 3 rounds",
			 wl->title, sizes, n);
}

/* One line saying what a run of @wl does with @cfg's settings. */
void bench_describe(const struct bench_workload *wl,
		    const struct bench_cfg *cfg, char *buf, size_t len)
{
	char n[32], sizes[64], threads[32], writes[40] = "";

	bench_count(n, sizeof(n), bench_workload_ops(wl, cfg));
	bench_sizes_text(wl, cfg, sizes, sizeof(sizes));
	if (wl->flags & BENCH_WL_BENEATH) {
		bench_describe_beneath(wl, cfg, n, sizes, buf, len);
		return;
	}
	switch (wl->on) {
	case BENCH_ON_LIST: {
		size_t used = 0;

		for (unsigned int i = 0; i < cfg->nr_thread_list &&
		     used < sizeof(threads); i++)
			used += (size_t)snprintf(threads + used,
						 sizeof(threads) - used, "%s%u",
						 i ? "," : "",
						 cfg->thread_list[i]);
		if (used < sizeof(threads))
			snprintf(threads + used, sizeof(threads) - used,
				 " threads");
		break;
	}
	case BENCH_ON_PAIRS:
		snprintf(threads, sizeof(threads), "%u pair%s", cfg->pairs,
			 cfg->pairs == 1 ? "" : "s");
		break;
	case BENCH_ON_CPUS:
		snprintf(threads, sizeof(threads), "%u threads",
			 bench_fs_threads(cfg));
		snprintf(writes, sizeof(writes), ", W = %u writes",
			 cfg->writes);
		break;
	case BENCH_ON_ONE:
		snprintf(threads, sizeof(threads), "1 thread");
		break;
	}
	snprintf(buf, len, "%s; %s; %s; %s %s%s", wl->title, threads, sizes,
		 n, wl->count, writes);
}
