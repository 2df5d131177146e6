// SPDX-License-Identifier: MIT
/*
 * tools/bench/report.c - the results as tables, for a terminal or markdown.
 *
 * One table per workload: medians of CPU and wall time per operation with
 * their min-max range over the repetitions, throughput per CPU-second,
 * the CPU-time ratios against glibc and against the best peer, and peak
 * RSS; then latency percentiles, memory, a summary of every workload, and
 * the per-CPU layer's figures: ns per alloc+free pair in each mode against
 * each peer, and throughput and memory held in magazines by threads.  The
 * same tables render as aligned text or as markdown.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench/bench.h"

static void bench_ratio(struct bench_table *t, unsigned int row,
			unsigned int col, double v)
{
	if (!isnan(v))
		bench_table_set(t, row, col, "%.2fx", v);
}

static void bench_range(struct bench_table *t, unsigned int row,
			unsigned int col, const struct bench_summary *s)
{
	bench_table_set(t, row, col, "%.1f-%.1f", s->min, s->max);
}

/* --- machine and contenders ------------------------------------------------------ */

static void bench_report_machine(FILE *f, const struct bench_run *run, bool md)
{
	const struct bench_machine *m = &run->machine;
	const char *li = md ? "- " : "  ";

	bench_heading(f, md, "Machine");
	fprintf(f, "%sCPU: %s, %u CPUs online, %u usable, TSC %.3f GHz\n", li,
		m->cpu, m->online, m->usable, m->tsc_ghz);
	fprintf(f, "%sMemory: %ld MiB, %d NUMA node%s\n", li, m->mem_mb,
		m->numa_nodes, m->numa_nodes == 1 ? "" : "s");
	fprintf(f, "%sKernel: %s\n", li, m->kernel);
	fprintf(f, "%sglibc %s, %s, segpool %s%s%s%s\n", li, m->glibc,
		m->compiler, m->segpool, m->revision[0] ? " (source " : "",
		m->revision, m->revision[0] ? ")" : "");
	fprintf(f, "%sRun: %s, %u repetition%s interleaved, warm-up %gx, "
		"threads %s, %.0f s%s\n\n", li, m->date, run->reps,
		run->reps == 1 ? "" : "s", run->cfg.warmup,
		run->cfg.pin ? "pinned" : "not pinned", run->elapsed_s,
		run->smoke ? "; SMOKE RUN: tiny counts, the figures are not "
		"measurements" : "");
}

/* Did @c run anything (the rows beneath the hit path skip some)? */
static bool bench_has_cells(const struct bench_run *run,
			    const struct bench_contender *c)
{
	for (unsigned int i = 0; i < run->nr_cells; i++)
		if (run->cells[i].job.c == c)
			return true;
	return false;
}

static void bench_report_contenders(FILE *f, const struct bench_run *run,
				    bool md)
{
	static const char *const head[] = {
		"contender", "version", "malloc served by (checked)",
		"allocator libraries mapped", "segpool per-CPU mode (checked)",
		NULL
	};
	struct bench_table *t = bench_table_new(head);

	bench_heading(f, md, "Contenders");
	for (unsigned int i = 0; i < run->nr_cs; i++) {
		const struct bench_contender_state *s = &run->cs[i];
		unsigned int r;

		if (!s->selected || (!s->skipped && !bench_has_cells(run, s->c)))
			continue;
		r = bench_table_row(t);
		bench_table_set(t, r, 0, "%s", s->c->name);
		bench_table_set(t, r, 1, "%s", s->version);
		if (s->skipped)
			bench_table_set(t, r, 2, "skipped (see below)");
		else if (s->refused && s->c->kind == BENCH_MALLOC)
			bench_table_set(t, r, 2, "REFUSED: %.38s", s->served);
		else if (s->refused)
			bench_table_set(t, r, 2, "REFUSED (see the mode)");
		else if (s->c->kind == BENCH_MALLOC)
			bench_table_set(t, r, 2, "%s", s->served);
		else
			bench_table_set(t, r, 2, "(not malloc)");
		if (!s->skipped)
			bench_table_set(t, r, 3, "%s", s->mapped);
		if (s->c->percpu)
			bench_table_set(t, r, 4, "%s%s", s->refused ?
					"REFUSED: " : "", s->mode);
	}
	bench_table_print(f, t, md);
	for (unsigned int i = 0; i < run->nr_cs; i++)
		if (run->cs[i].selected && run->cs[i].skipped)
			fprintf(f, "%s%s skipped: %s\n", md ? "- " : "  ",
				run->cs[i].c->name, run->cs[i].reason);
}

/* Objects in magazines (@depot false) or depots, median of the repetitions. */
static double bench_cached_objs(const struct bench_cell *c, bool depot)
{
	double v[64];
	struct bench_summary s;
	unsigned int n = c->nr < 64 ? c->nr : 64;

	for (unsigned int i = 0; i < n; i++)
		v[i] = (double)(depot ? c->samples[i].depot_objs :
				c->samples[i].cpu_objs);
	bench_summarize(v, n, &s);
	return s.median;
}

/* --- speed -------------------------------------------------------------------------- */

static void bench_report_speed(FILE *f, const struct bench_run *run,
			       const struct bench_workload *wl, bool md)
{
	static const char *const head[] = {
		"contender", "threads", "CPU ns/op", "min-max", "wall ns/op",
		"min-max", "Mops/CPU-s", "x glibc", "x best peer",
		"peak RSS MiB", "cached KiB", "cached objs", NULL
	};
	/* what segpool's magazines hold: shown where threads vary */
	bool cached = wl->on == BENCH_ON_LIST;
	struct bench_table *t = bench_table_new(head);
	char desc[200];

	if (!cached)
		t->ncol -= 2;

	bench_describe(wl, &run->cfg, desc, sizeof(desc));
	bench_heading(f, md, "Workload %u, %s: %s", wl->number, wl->name, desc);
	for (unsigned int i = 0; i < run->nr_cells; i++) {
		const struct bench_cell *c = &run->cells[i];
		unsigned int r;

		if (c->job.wl != wl)
			continue;
		r = bench_table_row(t);
		bench_table_set(t, r, 0, "%s", c->job.c->name);
		bench_table_set(t, r, 1, "%u%s", c->job.threads,
				c->job.threads > run->machine.usable ? "*" : "");
		if (!c->nr) {
			bench_table_set(t, r, 2, "failed");
			continue;
		}
		bench_table_set(t, r, 2, "%.1f", c->cpu.median);
		bench_range(t, r, 3, &c->cpu);
		bench_table_set(t, r, 4, "%.1f", c->wall.median);
		bench_range(t, r, 5, &c->wall);
		bench_table_set(t, r, 6, "%.1f", 1e3 / c->cpu.median);
		bench_ratio(t, r, 7, c->ratio_glibc);
		bench_ratio(t, r, 8, c->ratio_peer);
		bench_table_set(t, r, 9, "%.1f", c->rss.median / 1024);
		if (cached && c->has_cached) {
			bench_table_set(t, r, 10, "%.1f", c->cached.median);
			bench_table_set(t, r, 11, "%.0f+%.0f",
					bench_cached_objs(c, false),
					bench_cached_objs(c, true));
		}
	}
	fprintf(f, "One op: %s.%s\n\n", wl->op, cached ? "  *: oversubscribed, "
		"more threads than the usable CPUs." : "");
	if (cached)
		fprintf(f, "cached: free objects segpool's caches hold in "
			"per-CPU magazines and in the depots after the run, "
			"when every worker has ended, in KiB (objects times "
			"their size) and as objects in magazines + in depots; "
			"medians over the repetitions; \"-\" for contenders "
			"without them.\n\n");
	bench_table_print(f, t, md);
}

/* --- latency ------------------------------------------------------------------------ */

/* The median over repetitions of one percentile. */
static double bench_lat_median(const struct bench_cell *c, int k, int j)
{
	double v[64];
	struct bench_summary s;
	unsigned int n = c->nr < 64 ? c->nr : 64;

	for (unsigned int i = 0; i < n; i++)
		v[i] = c->samples[i].lat[k][j];
	bench_summarize(v, n, &s);
	return s.median;
}

static void bench_report_latency(FILE *f, const struct bench_run *run,
				 const struct bench_workload *wl, bool md)
{
	static const char *const head[] = {
		"contender", "alloc p50", "alloc p99", "alloc p99.9",
		"free p50", "free p99", "free p99.9", NULL
	};
	struct bench_table *t = bench_table_new(head);
	double empty = 0, tick = 0;
	char desc[200];

	bench_describe(wl, &run->cfg, desc, sizeof(desc));
	bench_heading(f, md, "Workload %u, %s: %s", wl->number, wl->name, desc);
	for (unsigned int i = 0; i < run->nr_cells; i++) {
		const struct bench_cell *c = &run->cells[i];
		unsigned int r;

		if (c->job.wl != wl)
			continue;
		r = bench_table_row(t);
		bench_table_set(t, r, 0, "%s", c->job.c->name);
		if (!c->nr) {
			bench_table_set(t, r, 1, "failed");
			continue;
		}
		empty = c->samples[0].empty_ns;
		tick = c->samples[0].tick_ns;
		for (int k = 0; k < BENCH_NR_LAT; k++)
			for (int j = 0; j < BENCH_NR_PCT; j++)
				bench_table_set(t, r, 1 + k * 3 + j, "%.0f",
						bench_lat_median(c, k, j));
	}
	fprintf(f, "Nanoseconds per call, every call timed, median over the "
		"repetitions; the cost of an empty measurement (%.1f ns) is "
		"subtracted; the clock advances in steps of %.1f ns.\n\n",
		empty, tick);
	bench_table_print(f, t, md);
}

/* --- memory ---------------------------------------------------------------------------- */

static void bench_report_memory(FILE *f, const struct bench_run *run,
				const struct bench_workload *wl, bool md)
{
	static const char *const head[] = {
		"contender", "bytes/object", "overhead", "before MiB",
		"peak RSS MiB", "after free MiB", "after trim MiB", "trim by",
		NULL
	};
	struct bench_table *t = bench_table_new(head);
	char desc[200];

	bench_describe(wl, &run->cfg, desc, sizeof(desc));
	bench_heading(f, md, "Workload %u, %s: %s", wl->number, wl->name, desc);
	for (unsigned int i = 0; i < run->nr_cells; i++) {
		const struct bench_cell *c = &run->cells[i];
		const struct bench_result *s;
		double per;
		unsigned int r;

		if (c->job.wl != wl)
			continue;
		r = bench_table_row(t);
		bench_table_set(t, r, 0, "%s", c->job.c->name);
		if (!c->nr) {
			bench_table_set(t, r, 1, "failed");
			continue;
		}
		/* RSS barely moves between repetitions: the first one stands */
		s = &c->samples[0];
		per = (double)(s->rss_live_kb - s->rss_base_kb) * 1024 /
		      (double)s->live;
		bench_table_set(t, r, 1, "%.1f", per);
		bench_table_set(t, r, 2, "%+.1f%%",
				100 * (per / (double)run->cfg.size - 1));
		bench_table_set(t, r, 3, "%.1f", (double)s->rss_base_kb / 1024);
		bench_table_set(t, r, 4, "%.1f", (double)s->peak_rss_kb / 1024);
		bench_table_set(t, r, 5, "%.1f", (double)s->rss_freed_kb / 1024);
		bench_table_set(t, r, 6, "%.1f", (double)s->rss_trim_kb / 1024);
		bench_table_set(t, r, 7, "%s", s->trim);
	}
	fprintf(f, "bytes/object: RSS growth while the objects are live, over "
		"their count; overhead: against the %zu bytes asked for; the "
		"MiB columns are the whole process's RSS before allocating, at "
		"its peak, after freeing every object and after trimming.\n\n",
		run->cfg.size);
	bench_table_print(f, t, md);
}

/* --- summary -------------------------------------------------------------------------- */

static void bench_report_summary(FILE *f, const struct bench_run *run, bool md)
{
	const char *head[BENCH_TCOLS + 1] = { "workload" };
	const struct bench_contender *cols[BENCH_TCOLS];
	const struct bench_contender *sp = bench_contender_find("segpool-cache");
	unsigned int nc = 1, rows = 0;
	struct bench_table *t;

	/* none when only the rows beneath the hit path ran */
	for (unsigned int i = 0; i < run->nr_cells; i++)
		rows += !(run->cells[i].job.wl->flags &
			  (BENCH_WL_MEMORY | BENCH_WL_LATENCY | BENCH_WL_BENEATH));
	if (!rows)
		return;
	for (unsigned int i = 0; i < run->nr_cs && nc < BENCH_TCOLS - 1; i++)
		if (run->cs[i].selected && !run->cs[i].skipped) {
			cols[nc] = run->cs[i].c;
			head[nc++] = run->cs[i].c->name;
		}
	head[nc] = "segpool-cache vs best peer";
	t = bench_table_new(head);

	bench_heading(f, md, "Summary: CPU ns per op, median");
	for (unsigned int i = 0; i < run->nr_cells; i++) {
		const struct bench_cell *first = &run->cells[i];
		const struct bench_cell *mine;
		unsigned int r;

		if (first->job.wl->flags & (BENCH_WL_MEMORY | BENCH_WL_LATENCY |
					       BENCH_WL_BENEATH))
			continue;
		/* one row per workload and thread count, at its first cell */
		if (i && run->cells[i - 1].job.wl == first->job.wl &&
		    run->cells[i - 1].job.threads == first->job.threads)
			continue;
		r = bench_table_row(t);
		bench_table_set(t, r, 0, "%u %s, %u thr%s", first->job.wl->number,
				first->job.wl->name, first->job.threads,
				first->job.threads > run->machine.usable ? "*" : "");
		for (unsigned int k = 1; k < nc; k++) {
			const struct bench_cell *c = bench_cell_get(run,
				first->job.wl, first->job.threads, cols[k]);

			if (c && c->nr)
				bench_table_set(t, r, k, "%.1f", c->cpu.median);
		}
		mine = bench_cell_get(run, first->job.wl, first->job.threads, sp);
		if (mine && mine->nr && mine->best_peer)
			bench_table_set(t, r, nc, "%.2fx (%s)", mine->ratio_peer,
					mine->best_peer);
	}
	fprintf(f, "Thread CPU time summed over workers, per operation; lower "
		"is better.  The last column is segpool-cache's CPU time over "
		"the best peer's (below 1.00x: segpool is ahead).  *: "
		"oversubscribed, more threads than the %u usable CPUs.  floor: "
		"the benchmark loop with no allocator, the cost every figure "
		"includes.\n\n", run->machine.usable);
	bench_table_print(f, t, md);
}

/* --- the per-CPU layer against the peers (issue 4) ------------------------------- */

/* "rseq", "lock", "off", or "lock (fallback)" when rseq was not available. */
static void bench_mode_short(const struct bench_contender_state *s, char *buf,
			     size_t len)
{
	size_t n = strcspn(s->mode, " ");

	if (!s->c->percpu || !s->mode[0])
		snprintf(buf, len, "%s", "");
	else if (strcmp(s->c->percpu, "rseq") || !strncmp(s->mode, "rseq", n))
		snprintf(buf, len, "%.*s", (int)n, s->mode);
	else
		snprintf(buf, len, "%.*s (fallback)", (int)n, s->mode);
}

static const struct bench_cell *bench_cell_by_name(const struct bench_run *run,
						   const char *wl,
						   unsigned int threads,
						   const struct bench_contender *c)
{
	const struct bench_cell *cell = bench_cell_get(run,
		bench_workload_find(wl), threads, c);

	return cell && cell->nr ? cell : NULL;
}

/* The contenders that ran; @peers only the peer allocators. */
static unsigned int bench_ran(const struct bench_run *run, bool peers,
			      const struct bench_contender_state **out,
			      unsigned int max)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < run->nr_cs && n < max; i++)
		if (run->cs[i].selected && !run->cs[i].skipped &&
		    (!peers || run->cs[i].c->peer))
			out[n++] = &run->cs[i];
	return n;
}

static void bench_report_percpu_pairs(FILE *f, const struct bench_run *run,
				      bool md)
{
	static const char *const wls[] = { "pair", "pool", "batch" };
	static const char *const head[] = {
		"contender", "per-CPU mode", "hot pair ns", "x glibc",
		"pool ns", "x glibc", "batch ns", "x glibc", NULL
	};
	const struct bench_contender_state *cs[16];
	const struct bench_contender *glibc = bench_contender_find("glibc");
	unsigned int nr = bench_ran(run, false, cs, 16);
	struct bench_table *t = bench_table_new(head);

	for (unsigned int i = 0; i < nr; i++) {
		unsigned int r = 0;
		bool any = false;

		for (int w = 0; w < 3; w++) {
			const struct bench_cell *c = bench_cell_by_name(run,
				wls[w], 1, cs[i]->c);
			const struct bench_cell *g = bench_cell_by_name(run,
				wls[w], 1, glibc);
			char mode[64];

			if (!c)
				continue;
			if (!any) {
				r = bench_table_row(t);
				bench_table_set(t, r, 0, "%s", cs[i]->c->name);
				bench_mode_short(cs[i], mode, sizeof(mode));
				bench_table_set(t, r, 1, "%s", mode);
				any = true;
			}
			/* an op is an allocation or a free: a pair is two */
			bench_table_set(t, r, 2 + 2 * w, "%.1f",
					2 * c->cpu.median);
			if (g)
				bench_ratio(t, r, 3 + 2 * w,
					    c->cpu.median / g->cpu.median);
		}
	}
	if (!t->nrow) {
		free(t);
		return;
	}
	bench_heading(f, md, "Per-CPU fast path: ns per alloc+free pair, "
		      "one thread, %zu B", run->cfg.size);
	fprintf(f, "CPU time per allocation and free of one object, median "
		"(twice the per-op figure of workloads 2 and 1): the hot pair "
		"(allocate, free at once), the pool pattern (allocate 100, free "
		"the first 50) and the batch (allocate 1000, free 1000); "
		"x glibc: over glibc's in the same run.  segpool-cache-lock and "
		"-off are segpool-cache with SEGPOOL_PERCPU=lock and off; "
		"-plain and -off-plain with SEGPOOL_FREELIST_HARDENED=0.\n\n");
	bench_table_print(f, t, md);
}

static void bench_report_percpu_peers(FILE *f, const struct bench_run *run,
				      bool md)
{
	static const char *const wls[] = { "pair", "pool", "batch" };
	static const char *const wl_title[] = { "hot pair", "pool", "batch" };
	const char *head[BENCH_TCOLS + 1] = { "segpool", "workload" };
	const struct bench_contender_state *cs[16], *peers[8];
	unsigned int nr = bench_ran(run, false, cs, 16);
	unsigned int np = bench_ran(run, true, peers, 8);
	char names[8][32];
	struct bench_table *t;

	for (unsigned int k = 0; k < np; k++) {
		snprintf(names[k], sizeof(names[k]), "x %s", peers[k]->c->name);
		head[2 + k] = names[k];
	}
	head[2 + np] = "ahead of";
	t = bench_table_new(head);
	for (unsigned int i = 0; i < nr; i++) {
		if (!cs[i]->c->percpu)
			continue;
		for (int w = 0; w < 3; w++) {
			const struct bench_cell *c = bench_cell_by_name(run,
				wls[w], 1, cs[i]->c);
			unsigned int r, ahead = 0, known = 0;

			if (!c)
				continue;
			r = bench_table_row(t);
			bench_table_set(t, r, 0, "%s", cs[i]->c->name);
			bench_table_set(t, r, 1, "%s", wl_title[w]);
			for (unsigned int k = 0; k < np; k++) {
				const struct bench_cell *p = bench_cell_by_name(
					run, wls[w], 1, peers[k]->c);

				if (!p)
					continue;
				known++;
				ahead += c->cpu.median < p->cpu.median;
				bench_ratio(t, r, 2 + k,
					    c->cpu.median / p->cpu.median);
			}
			bench_table_set(t, r, 2 + np, "%u of %u", ahead, known);
		}
	}
	if (!t->nrow || !np) {
		free(t);
		return;
	}
	bench_heading(f, md, "Per-CPU fast path against each peer");
	fprintf(f, "segpool's CPU time per pair over each peer's, same run, "
		"medians; below 1.00x segpool is ahead.\n\n");
	bench_table_print(f, t, md);
}

static void bench_report_percpu_threads(FILE *f, const struct bench_run *run,
					bool md)
{
	const struct bench_workload *wl = bench_workload_find("threads");
	const char *head[BENCH_TCOLS + 1] = { "threads" };
	const struct bench_contender *col[BENCH_TCOLS];
	bool is_cached[BENCH_TCOLS] = { false };
	const struct bench_contender_state *cs[16];
	const struct bench_result *geo = NULL;
	unsigned int nr = bench_ran(run, false, cs, 16), nc = 1;
	char names[BENCH_TCOLS][48];
	struct bench_table *t;

	for (unsigned int i = 0; i < nr && nc < BENCH_TCOLS - 1; i++) {
		if (cs[i]->c->kind == BENCH_FLOOR)
			continue;
		col[nc] = cs[i]->c;
		head[nc++] = cs[i]->c->name;
		if (cs[i]->c->kind != BENCH_SEGPOOL_CACHE)
			continue;
		snprintf(names[nc], sizeof(names[nc]), "%s KiB",
			 cs[i]->c->percpu);
		col[nc] = cs[i]->c;
		is_cached[nc] = true;
		head[nc] = names[nc];
		nc++;
	}
	t = bench_table_new(head);
	for (unsigned int k = 0; k < run->cfg.nr_thread_list; k++) {
		unsigned int threads = run->cfg.thread_list[k], r = 0;
		bool any = false;

		for (unsigned int j = 1; j < nc; j++) {
			const struct bench_cell *c = bench_cell_get(run, wl,
				threads, col[j]);

			if (!c || !c->nr)
				continue;
			if (!any) {
				r = bench_table_row(t);
				bench_table_set(t, r, 0, "%u", threads);
				any = true;
			}
			if (!is_cached[j])
				bench_table_set(t, r, j, "%.1f",
						1e3 / c->wall.median);
			else if (c->has_cached)
				bench_table_set(t, r, j, "%.1f",
						c->cached.median);
		}
	}
	if (!t->nrow) {
		free(t);
		return;
	}
	/* the sizes behind the bound, from any run that recorded them */
	for (unsigned int i = 0; i < run->nr_cells && !geo; i++)
		if (run->cells[i].job.wl == wl && run->cells[i].has_cached &&
		    run->cells[i].samples[0].caches &&
		    run->cells[i].samples[0].mag_size)
			geo = &run->cells[i].samples[0];
	bench_heading(f, md, "Per-CPU layer by threads: throughput and memory "
		      "in magazines");
	fprintf(f, "Workload 3 (random sizes %zu-%zu B): total throughput, "
		"millions of operations of all threads per wall-clock second, "
		"median (wall time is the noisier figure here; CPU time per op "
		"is in the workload 3 table); and after each segpool-cache "
		"contender, the KiB of free objects its caches hold in per-CPU "
		"magazines and depots after the run, which the per-CPU design "
		"bounds by CPUs, not threads.", run->cfg.size_min,
		run->cfg.size_max);
	if (geo)
		fprintf(f, "  Here %u caches, magazines of %u objects (at the "
			"end of the run), depots of at most %u full magazines "
			"per cache and node: per cache at most 2 x %u objects "
			"per CPU in magazines and %u in a node's depot.",
			geo->caches, geo->mag_size, geo->depot_max,
			geo->mag_size, geo->depot_max * geo->mag_size);
	fputs("\n\n", f);
	bench_table_print(f, t, md);
}

static void bench_report_percpu(FILE *f, const struct bench_run *run, bool md)
{
	bench_report_percpu_pairs(f, run, md);
	bench_report_percpu_peers(f, run, md);
	bench_report_percpu_threads(f, run, md);
}

void bench_report_smoke(FILE *f, const struct bench_run *run)
{
	bench_report_machine(f, run, false);
	bench_report_contenders(f, run, false);
	fputc('\n', f);
	for (unsigned int w = 0; w < bench_nr_workloads; w++) {
		const struct bench_workload *wl = &bench_workloads[w];
		unsigned int ok = 0, failed = 0;

		for (unsigned int i = 0; i < run->nr_cells; i++) {
			const struct bench_cell *c = &run->cells[i];

			if (c->job.wl != wl)
				continue;
			ok += c->nr;
			failed += c->failed;
		}
		if (ok + failed)
			fprintf(f, "%-6s %-9s %u runs checked, %u failed\n",
				failed ? "FAILED" : "ok", wl->name, ok + failed,
				failed);
	}
	/* the widest table, so that a smoke run shows it fits */
	fputc('\n', f);
	bench_report_summary(f, run, false);
}

void bench_report(FILE *f, const struct bench_run *run, bool md,
		  const char *img_prefix)
{
	if (md)
		fprintf(f, "<!-- generated by " BENCH_NAME "; do not edit -->\n\n");
	bench_report_machine(f, run, md);
	bench_report_contenders(f, run, md);
	fputc('\n', f);
	if (md) {
		bench_report_summary(f, run, md);
		bench_report_percpu(f, run, md);
	}
	for (unsigned int w = 0; w < bench_nr_workloads; w++) {
		const struct bench_workload *wl = &bench_workloads[w];

		if (!run->wl_selected[w])
			continue;
		if (wl->flags & BENCH_WL_BENEATH)
			bench_report_beneath(f, run, wl, md);
		else if (wl->flags & BENCH_WL_LATENCY)
			bench_report_latency(f, run, wl, md);
		else if (wl->flags & BENCH_WL_MEMORY)
			bench_report_memory(f, run, wl, md);
		else
			bench_report_speed(f, run, wl, md);
	}
	if (!md) {
		bench_report_summary(f, run, md);
		bench_report_percpu(f, run, md);
	}
	if (md && run->plotted)
		fprintf(f, "### Plots\n\n");
	if (md && (run->plotted & BENCH_PLOT_SUMMARY))
		fprintf(f, "![CPU time per op against glibc, every workload](%s"
			"bench-summary.png)\n\n", img_prefix);
	if (md && (run->plotted & BENCH_PLOT_THREADS))
		fprintf(f, "![Throughput by threads, workload 3](%s"
			"bench-threads.png)\n\n", img_prefix);
	if (md && (run->plotted & BENCH_PLOT_LATENCY))
		fprintf(f, "![Latency percentiles, workloads 1 and 5](%s"
			"bench-latency.png)\n\n", img_prefix);
	if (md && (run->plotted & BENCH_PLOT_PERCPU))
		fprintf(f, "![Per-CPU layer: ns per pair in each mode, memory "
			"in magazines by threads](%sbench-percpu.png)\n\n",
			img_prefix);
}
