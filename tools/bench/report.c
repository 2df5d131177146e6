// SPDX-License-Identifier: MIT
/*
 * tools/bench/report.c - the results as tables, for a terminal or markdown.
 *
 * One table per workload: medians of CPU and wall time per operation with
 * their min-max range over the repetitions, throughput per CPU-second,
 * the CPU-time ratios against glibc and against the best peer, and peak
 * RSS; then latency percentiles, memory, and a summary of every workload.
 * The same tables render as aligned text or as markdown.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench/bench.h"

#define BENCH_TCOLS	12
#define BENCH_TROWS	160
#define BENCH_TCELL	48

struct bench_table {
	unsigned int ncol, nrow;
	const char *head[BENCH_TCOLS];
	char cell[BENCH_TROWS][BENCH_TCOLS][BENCH_TCELL];
};

static struct bench_table *bench_table_new(const char *const *head)
{
	struct bench_table *t = calloc(1, sizeof(*t));

	if (!t)
		bench_die("out of memory");
	while (head[t->ncol] && t->ncol < BENCH_TCOLS) {
		t->head[t->ncol] = head[t->ncol];
		t->ncol++;
	}
	return t;
}

static unsigned int bench_table_row(struct bench_table *t)
{
	if (t->nrow == BENCH_TROWS)
		bench_die("report: table too long");
	return t->nrow++;
}

static void __attribute__((format(printf, 4, 5)))
bench_table_set(struct bench_table *t, unsigned int row, unsigned int col,
		const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->cell[row][col], BENCH_TCELL, fmt, ap);
	va_end(ap);
}

/* First column left-aligned, numbers right-aligned. */
static void bench_table_print(FILE *f, struct bench_table *t, bool md)
{
	size_t w[BENCH_TCOLS];

	for (unsigned int c = 0; c < t->ncol; c++) {
		w[c] = strlen(t->head[c]);
		for (unsigned int r = 0; r < t->nrow; r++)
			if (strlen(t->cell[r][c]) > w[c])
				w[c] = strlen(t->cell[r][c]);
	}
	for (int r = -1; r < (int)t->nrow; r++) {
		for (unsigned int c = 0; c < t->ncol; c++) {
			const char *s = r < 0 ? t->head[c] : t->cell[r][c];

			fprintf(f, md ? "| %*s " : c ? "  %*s" : "%*s",
				c ? (int)w[c] : -(int)w[c], s[0] ? s : "-");
		}
		fprintf(f, md ? "|\n" : "\n");
		if (r == -1 && md) {
			/* |:----|----:|: first column left, the rest right */
			for (unsigned int c = 0; c < t->ncol; c++) {
				fputs(c ? "|" : "|:", f);
				for (size_t k = 0; k <= w[c]; k++)
					fputc('-', f);
				fputs(c ? ":" : "", f);
			}
			fputs("|\n", f);
		}
	}
	fputc('\n', f);
	free(t);
}

static void bench_heading(FILE *f, bool md, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void bench_heading(FILE *f, bool md, const char *fmt, ...)
{
	va_list ap;

	fprintf(f, md ? "### " : "== ");
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fprintf(f, md ? "\n\n" : " ==\n");
}

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
		"threads %s, %.0f s\n\n", li, m->date, run->reps,
		run->reps == 1 ? "" : "s", run->cfg.warmup,
		run->cfg.pin ? "pinned" : "not pinned", run->elapsed_s);
}

static void bench_report_contenders(FILE *f, const struct bench_run *run,
				    bool md)
{
	static const char *const head[] = {
		"contender", "version", "malloc served by (checked)",
		"allocator libraries mapped", NULL
	};
	struct bench_table *t = bench_table_new(head);

	bench_heading(f, md, "Contenders");
	for (unsigned int i = 0; i < run->nr_cs; i++) {
		const struct bench_contender_state *s = &run->cs[i];
		unsigned int r;

		if (!s->selected)
			continue;
		r = bench_table_row(t);
		bench_table_set(t, r, 0, "%s", s->c->name);
		bench_table_set(t, r, 1, "%s", s->version);
		if (s->skipped)
			bench_table_set(t, r, 2, "skipped (see below)");
		else if (s->refused)
			bench_table_set(t, r, 2, "REFUSED: %.38s", s->served);
		else if (s->c->kind == BENCH_MALLOC)
			bench_table_set(t, r, 2, "%s", s->served);
		else
			bench_table_set(t, r, 2, "(not malloc)");
		if (!s->skipped)
			bench_table_set(t, r, 3, "%s", s->mapped);
	}
	bench_table_print(f, t, md);
	for (unsigned int i = 0; i < run->nr_cs; i++)
		if (run->cs[i].selected && run->cs[i].skipped)
			fprintf(f, "%s%s skipped: %s\n", md ? "- " : "  ",
				run->cs[i].c->name, run->cs[i].reason);
}

/* --- speed -------------------------------------------------------------------------- */

static void bench_report_speed(FILE *f, const struct bench_run *run,
			       const struct bench_workload *wl, bool md)
{
	static const char *const head[] = {
		"contender", "threads", "CPU ns/op", "min-max", "wall ns/op",
		"min-max", "Mops/CPU-s", "x glibc", "x best peer",
		"peak RSS MiB", NULL
	};
	struct bench_table *t = bench_table_new(head);
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
		bench_table_set(t, r, 1, "%u", c->job.threads);
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
	}
	fprintf(f, "One op: %s.\n\n", wl->op);
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
	unsigned int nc = 1;
	struct bench_table *t;

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

		if (first->job.wl->flags & (BENCH_WL_MEMORY | BENCH_WL_LATENCY))
			continue;
		/* one row per workload and thread count, at its first cell */
		if (i && run->cells[i - 1].job.wl == first->job.wl &&
		    run->cells[i - 1].job.threads == first->job.threads)
			continue;
		r = bench_table_row(t);
		bench_table_set(t, r, 0, "%u %s, %u thr", first->job.wl->number,
				first->job.wl->name, first->job.threads);
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
		"the best peer's (below 1.00x: segpool is ahead).\n\n");
	bench_table_print(f, t, md);
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
}

void bench_report(FILE *f, const struct bench_run *run, bool md,
		  const char *img_prefix)
{
	if (md)
		fprintf(f, "<!-- generated by " BENCH_NAME "; do not edit -->\n\n");
	bench_report_machine(f, run, md);
	bench_report_contenders(f, run, md);
	fputc('\n', f);
	if (md)
		bench_report_summary(f, run, md);
	for (unsigned int w = 0; w < bench_nr_workloads; w++) {
		const struct bench_workload *wl = &bench_workloads[w];

		if (!run->wl_selected[w])
			continue;
		if (wl->flags & BENCH_WL_LATENCY)
			bench_report_latency(f, run, wl, md);
		else if (wl->flags & BENCH_WL_MEMORY)
			bench_report_memory(f, run, wl, md);
		else
			bench_report_speed(f, run, wl, md);
	}
	if (!md)
		bench_report_summary(f, run, md);
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
}
