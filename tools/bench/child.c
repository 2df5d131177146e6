// SPDX-License-Identifier: MIT
/*
 * tools/bench/child.c - one contender, one workload, one record.
 *
 * Prove who serves malloc and segpool's per-CPU mode (contenders.c), set the
 * contender up, measure an empty latency measurement (latency workloads),
 * run the workload once to warm up and once for real, note what segpool's
 * caches hold, then write its record to fd 3: "ok" only when every tag
 * came back intact, the checksum is the one expected and no call
 * failed.  Exit status: 0 ok, 1 error, 2 object errors, 3 refused.
 */
#include <stdlib.h>
#include <unistd.h>

#include "tools/bench/bench.h"

/* The median cost of a measurement around nothing, and the clock's step. */
static void bench_empty_cost(const struct bench_cfg *cfg,
			     struct bench_result *res)
{
	enum { N = 100000 };
	uint32_t *v = bench_map(N * sizeof(*v));
	uint64_t step = UINT64_MAX;

	for (int i = 0; v && i < N; i++) {
		uint64_t t0 = bench_tick();

		v[i] = (uint32_t)(bench_tick() - t0);
	}
	for (int i = 0; v && i < 1000; i++) {
		uint64_t a = bench_tick(), b;

		while ((b = bench_tick()) == a)
			;
		step = b - a < step ? b - a : step;
	}
	if (!v)
		return;
	qsort(v, N, sizeof(*v), bench_cmp_u32);
	bench_x_set(res, BENCH_X_EMPTY,
		    bench_percentile(v, N, 0.5) * 1e9 / cfg->tsc_hz);
	bench_x_set(res, BENCH_X_TICK, (double)step * 1e9 / cfg->tsc_hz);
	bench_unmap(v, N * sizeof(*v));
}

static int bench_record(struct bench_record *rec, const char *status,
			const struct bench_result *r, int ret)
{
	snprintf(rec->status, sizeof(rec->status), "%s", status);
	rec->r = *r;
	if (write(3, rec, sizeof(*rec)) != (ssize_t)sizeof(*rec))
		return 1;
	return ret;
}

static bool bench_ok(const struct bench_result *r)
{
	return r->errors == 0 && r->checksum == r->expect && r->ops > 0;
}

int bench_child_main(const struct bench_cfg *cfg, const char *contender,
		     const char *workload)
{
	const struct bench_contender *c = bench_contender_find(contender);
	const struct bench_workload *wl = bench_workload_find(workload);
	struct bench_result res = { .ops = 0 }, warm = { .ops = 0 };
	static struct bench_record rec;
	bench_wl_fn run;
	uint64_t ops;

	if (!c || !wl)
		bench_die("child: unknown contender '%s' or workload '%s'",
			  contender, workload);
	if (bench_verify_heap(c, rec.served, sizeof(rec.served), rec.mapped,
			      sizeof(rec.mapped)) |
	    bench_verify_percpu(c, rec.mode, sizeof(rec.mode)))
		return bench_record(&rec, "refused", &res, 3);
	if (bench_heap_setup(c, wl->cls ? wl->cls : &cfg->size,
			     wl->cls ? wl->nr_cls : 1))
		return bench_record(&rec, "error", &res, 1);
	run = c->inline_api ? bench_wl_inline_of(wl->run) : wl->run;
	ops = bench_workload_ops(wl, cfg);
	if (wl->flags & BENCH_WL_LATENCY)
		bench_empty_cost(cfg, &res);
	warm.x[BENCH_X_EMPTY] = res.x[BENCH_X_EMPTY];
	if (!(wl->flags & (BENCH_WL_MEMORY | BENCH_WL_NO_WARMUP)) &&
	    (run(cfg, (uint64_t)((double)ops * cfg->warmup) + 1, &warm) ||
	     !bench_ok(&warm))) {
		bench_warn("%s/%s: the warm-up run failed", c->name, wl->name);
		return bench_record(&rec, "failed", &warm, 2);
	}
	if (run(cfg, ops, &res))
		return bench_record(&rec, "error", &res, 1);
	res.peak_rss_kb = bench_peak_rss_kb();
	bench_heap_cached(&res);	/* the workers' CPUs' magazines */
	bench_heap_teardown();
	if (!bench_ok(&res)) {
		bench_warn("%s/%s: %d object errors, checksum %llx, expected "
			   "%llx", c->name, wl->name, res.errors,
			   (unsigned long long)res.checksum,
			   (unsigned long long)res.expect);
		return bench_record(&rec, "failed", &res, 2);
	}
	return bench_record(&rec, "ok", &res, 0);
}
