// SPDX-License-Identifier: MIT
/*
 * tools/bench/child.c - one contender, one workload, one record.
 *
 * The driver starts this for every measurement, with the peer library
 * preloaded when there is one.  Order: prove who serves malloc and, for
 * segpool, that it runs in the contender's per-CPU mode (verify.c), set
 * the contender up, measure the cost of an empty latency measurement
 * (latency workloads only), run the workload once to warm up and once for
 * real, note what segpool's caches hold in per-CPU magazines and depots
 * (segpool-cache contenders), then write the record.
 *
 * The record is "key value" lines on the file descriptor the driver passed;
 * "status ok" only when every object's tag came back intact, the checksum
 * equals the expected one and no call failed.  Exit status: 0 ok, 1 error,
 * 2 checksum or object errors, 3 refused (the wrong library serves malloc,
 * or segpool runs in another per-CPU mode).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench/bench.h"

/*
 * The median cost of a latency measurement around nothing, and the clock's
 * step (smallest non-zero difference of two reads), both in ns.
 */
static void bench_empty_cost(const struct bench_cfg *cfg,
			     struct bench_result *res)
{
	enum { N = 100000 };
	uint32_t *v = bench_map(N * sizeof(*v));
	uint64_t step = UINT64_MAX;

	if (!v)
		return;
	for (int i = 0; i < N; i++) {
		uint64_t t0 = bench_tick_begin();

		v[i] = (uint32_t)(bench_tick_end() - t0);
	}
	for (int i = 0; i < 1000; i++) {
		uint64_t a = bench_tick_raw(), b;

		while ((b = bench_tick_raw()) == a)
			;
		if (b - a < step)
			step = b - a;
	}
	qsort(v, N, sizeof(*v), bench_cmp_u32);
	res->empty_ns = bench_percentile(v, N, 0.5) * 1e9 / cfg->tsc_hz;
	res->tick_ns = (double)step * 1e9 / cfg->tsc_hz;
	bench_unmap(v, N * sizeof(*v));
}

/* What a child found out about its contender before running. */
struct bench_found {
	char served[256];		/* the file that serves malloc */
	char mapped[256];		/* allocator libraries mapped */
	char version[64];		/* the library's own version */
	char mode[128];			/* segpool's per-CPU mode, or "" */
};

static void bench_record(int fd, const char *status,
			 const struct bench_contender *c,
			 const struct bench_workload *wl,
			 const struct bench_cfg *cfg,
			 const struct bench_result *r,
			 const struct bench_found *found)
{
	static const char *const kind[] = { "alloc", "free" };
	static const char *const pct[] = { "p50", "p99", "p999" };

	dprintf(fd, "status %s\ncontender %s\nworkload %s\nthreads %u\n",
		status, c->name, wl->name, cfg->threads);
	dprintf(fd, "served %s\nmapped %s\nself_version %s\n", found->served,
		found->mapped[0] ? found->mapped : "-",
		found->version[0] ? found->version : "-");
	if (found->mode[0])
		dprintf(fd, "percpu_mode %s\n", found->mode);
	dprintf(fd, "ops %llu\ncpu_ns %.0f\nwall_ns %.0f\n",
		(unsigned long long)r->ops, r->cpu_ns, r->wall_ns);
	dprintf(fd, "checksum %llu\nexpect %llu\nerrors %d\npeak_rss_kb %ld\n",
		(unsigned long long)r->checksum,
		(unsigned long long)r->expect, r->errors, r->peak_rss_kb);
	if (wl->flags & BENCH_WL_MEMORY) {
		dprintf(fd, "live %llu\nrss_base_kb %ld\nrss_live_kb %ld\n",
			(unsigned long long)r->live, r->rss_base_kb,
			r->rss_live_kb);
		dprintf(fd, "rss_freed_kb %ld\nrss_trim_kb %ld\ntrim %s\n",
			r->rss_freed_kb, r->rss_trim_kb, r->trim);
	}
	if (r->has_cached) {
		dprintf(fd, "cpu_objs %llu\ndepot_objs %llu\n",
			(unsigned long long)r->cpu_objs,
			(unsigned long long)r->depot_objs);
		dprintf(fd, "cached_bytes %llu\ncpu_bytes %llu\nmag_size %u\n"
			"depot_max %u\ncaches %u\n",
			(unsigned long long)r->cached_bytes,
			(unsigned long long)r->cpu_bytes, r->mag_size,
			r->depot_max, r->caches);
		dprintf(fd, "fast_allocs %llu\nslow_allocs %llu\n"
			"fast_frees %llu\nslow_frees %llu\n",
			(unsigned long long)r->fast_allocs,
			(unsigned long long)r->slow_allocs,
			(unsigned long long)r->fast_frees,
			(unsigned long long)r->slow_frees);
	}
	for (int k = 0; k < BENCH_NR_X; k++)
		if (r->has_x & (1u << k))
			dprintf(fd, "x_%s %.3f\n", bench_x_names[k], r->x[k]);
	if (r->has_lat) {
		for (int k = 0; k < BENCH_NR_LAT; k++)
			for (int j = 0; j < BENCH_NR_PCT; j++)
				dprintf(fd, "lat_%s_%s %.2f\n", kind[k], pct[j],
					r->lat[k][j]);
		dprintf(fd, "empty_ns %.2f\ntick_ns %.2f\nsamples %llu\n",
			r->empty_ns, r->tick_ns,
			(unsigned long long)r->samples);
	}
}

static bool bench_result_ok(const struct bench_result *r)
{
	return r->errors == 0 && r->checksum == r->expect && r->ops > 0;
}

int bench_child_main(const struct bench_cfg *cfg, const char *contender,
		     const char *workload, int fd)
{
	const struct bench_contender *c = bench_contender_find(contender);
	const struct bench_workload *wl = bench_workload_find(workload);
	struct bench_result res = { 0 }, warm = { 0 };
	struct bench_found found = { .version = "" };
	struct bench_sizes sizes;
	uint64_t ops;

	if (!c || !wl)
		bench_die("child: unknown contender '%s' or workload '%s'",
			  contender, workload);
	if (bench_verify_heap(c, found.served, sizeof(found.served),
			      found.mapped, sizeof(found.mapped)) ||
	    bench_verify_percpu(c, found.mode, sizeof(found.mode))) {
		bench_record(fd, "refused", c, wl, cfg, &res, &found);
		return 3;
	}
	bench_self_version(c, found.version, sizeof(found.version));
	wl->sizes(cfg, &sizes);
	if (bench_heap_setup(c, &sizes)) {
		bench_record(fd, "error", c, wl, cfg, &res, &found);
		return 1;
	}
	ops = bench_workload_ops(wl, cfg);

	if (wl->flags & BENCH_WL_LATENCY)
		bench_empty_cost(cfg, &res);
	if (cfg->warmup > 0 &&
	    !(wl->flags & (BENCH_WL_MEMORY | BENCH_WL_NO_WARMUP))) {
		uint64_t n = (uint64_t)((double)ops * cfg->warmup);

		warm.empty_ns = res.empty_ns;
		if (wl->run(cfg, n ? n : 1, &warm) || !bench_result_ok(&warm)) {
			bench_warn("%s/%s: the warm-up run failed (%d errors, "
				   "checksum %s)", c->name, wl->name,
				   warm.errors, warm.checksum == warm.expect ?
				   "ok" : "wrong");
			bench_record(fd, "failed", c, wl, cfg, &warm, &found);
			return 2;
		}
	}
	if (wl->run(cfg, ops, &res)) {
		bench_record(fd, "error", c, wl, cfg, &res, &found);
		return 1;
	}
	res.peak_rss_kb = bench_peak_rss_kb();
	/* the workers have ended; their CPUs' magazines stay filled */
	bench_heap_cached(&res);
	bench_heap_teardown();

	if (!bench_result_ok(&res)) {
		bench_warn("%s/%s: %d object errors, checksum %llx, expected "
			   "%llx", c->name, wl->name, res.errors,
			   (unsigned long long)res.checksum,
			   (unsigned long long)res.expect);
		bench_record(fd, "failed", c, wl, cfg, &res, &found);
		return 2;
	}
	bench_record(fd, "ok", c, wl, cfg, &res, &found);
	return 0;
}
