// SPDX-License-Identifier: MIT
/*
 * tools/bench/report_beneath.c - the tables of the rows beneath the hit
 * path (wl_beneath.c): large-block churn, realloc growth, live-set scaling
 * and idle release.  Medians over the repetitions; the mmap, munmap and
 * mremap columns come from the counting pass under strace (syscount.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench/bench.h"

static void bench_beneath_heading(FILE *f, const struct bench_run *run,
				  const struct bench_workload *wl, bool md)
{
	char desc[256];

	bench_describe(wl, &run->cfg, desc, sizeof(desc));
	bench_heading(f, md, "%u %s: %s", wl->number, wl->name, desc);
}

static void bench_set_ratio(struct bench_table *t, unsigned int r,
			    unsigned int c, double v)
{
	if (!isnan(v))
		bench_table_set(t, r, c, "%.2fx", v);
}

static void bench_set_sys(struct bench_table *t, unsigned int r,
			  unsigned int c, const struct bench_cell *cell)
{
	for (int k = 0; k < BENCH_NR_SYS; k++)
		if (cell->counted)
			bench_table_set(t, r, c + (unsigned int)k, "%ld",
					cell->sys[k]);
}

/* large and realloc: time per op, the calls, ratios, peak RSS */
static void bench_report_churn(FILE *f, const struct bench_run *run,
			       const struct bench_workload *wl, bool md)
{
	static const char *const large_head[] = {
		"contender", "us/block CPU", "min-max", "us/block wall",
		"faults/block", "mmap", "munmap", "mremap", "reached the OS",
		"CPU x glibc", "CPU x best peer", "peak RSS MiB", NULL
	};
	static const char *const grow_head[] = {
		"contender", "ms/series CPU", "min-max", "ms/series wall",
		"faults/series", "mmap", "munmap", "mremap", "CPU x glibc",
		"CPU x best peer", "peak RSS MiB", NULL
	};
	bool large = !strcmp(wl->name, "large");
	double unit = large ? 1e3 : 1e6;	/* ns to us or ms */
	struct bench_table *t = bench_table_new(large ? large_head : grow_head);
	unsigned int any = 0;

	for (unsigned int i = 0; i < run->nr_cells; i++) {
		const struct bench_cell *c = &run->cells[i];
		unsigned int r, col;

		if (c->job.wl != wl || !c->nr)
			continue;
		any++;
		r = bench_table_row(t);
		bench_table_set(t, r, 0, "%s", c->job.c->name);
		bench_table_set(t, r, 1, "%.2f", c->cpu.median / unit);
		bench_table_set(t, r, 2, "%.2f-%.2f", c->cpu.min / unit,
				c->cpu.max / unit);
		bench_table_set(t, r, 3, "%.2f", c->wall.median / unit);
		if (c->has_x & (1u << BENCH_X_MINFLT))
			bench_table_set(t, r, 4, "%.1f",
					c->x[BENCH_X_MINFLT].median);
		bench_set_sys(t, r, 5, c);
		col = 8;
		if (large) {
			double blocks = (double)c->samples[0].ops;

			if (c->counted && blocks > 0)
				bench_table_set(t, r, col, "%.2f%%", 100.0 *
					(double)(c->sys[BENCH_SYS_MMAP] +
						 c->sys[BENCH_SYS_MREMAP]) /
					blocks);
			col++;
		}
		bench_set_ratio(t, r, col++, c->ratio_glibc);
		bench_set_ratio(t, r, col++, c->ratio_peer);
		bench_table_set(t, r, col, "%.1f", c->rss.median / 1024);
	}
	if (!any) {
		free(t);
		return;
	}
	bench_beneath_heading(f, run, wl, md);
	bench_table_print(f, t, md);
	fprintf(f, "%s\n\n", large ?
		"Time per block: its allocation, a write at each end and its "
		"free, median of the repetitions (range: min-max).  mmap, "
		"munmap, mremap: the calls of the timed part, counted in one "
		"more run under strace; reached the OS: (mmap + mremap) / "
		"blocks.  Faults: minor page faults per block." :
		"Time per series: 40 KiB grown by steps of 1.5x with a write "
		"in every page of each new tail, then freed.  mmap, munmap, "
		"mremap: the calls of the timed part, counted in one more run "
		"under strace.");
}

/* live-1e4 .. live-1e7: one table, a row per N */
static void bench_report_live(FILE *f, const struct bench_run *run,
			      const struct bench_workload *wl, bool md)
{
	const char *head[BENCH_TCOLS + 1] = { "N" };
	const struct bench_contender *cols[BENCH_TCOLS];
	const struct bench_contender *sc = bench_contender_find("segpool-cache");
	const struct bench_contender *sm = bench_contender_find("segpool-malloc");
	double own_first = NAN;
	unsigned int nc = 1;
	struct bench_table *t;

	/* one table for all N: at the first live row selected */
	for (unsigned int w = 0; w < bench_nr_workloads; w++) {
		const struct bench_workload *o = &bench_workloads[w];

		if (run->wl_selected[w] && o->number == wl->number) {
			if (o != wl)
				return;
			break;
		}
	}
	for (unsigned int i = 0; i < run->nr_cs && nc < BENCH_TCOLS - 4; i++) {
		const struct bench_contender *c = run->cs[i].c;
		bool ran = false;

		for (unsigned int k = 0; k < run->nr_cells && !ran; k++)
			ran = run->cells[k].job.c == c && run->cells[k].nr &&
			      run->cells[k].job.wl->number == wl->number;
		if (ran) {
			cols[nc] = c;
			head[nc++] = c->name;
		}
	}
	if (nc == 1)
		return;
	head[nc] = "best peer";
	head[nc + 1] = "segpool-cache x best peer";
	head[nc + 2] = "segpool-malloc x best peer";
	head[nc + 3] = "segpool-cache x own first N";
	t = bench_table_new(head);
	for (unsigned int w = 0; w < bench_nr_workloads; w++) {
		const struct bench_workload *o = &bench_workloads[w];
		const struct bench_cell *mc, *mm, *best = NULL;
		unsigned int r;

		if (!run->wl_selected[w] || o->number != wl->number)
			continue;
		r = bench_table_row(t);
		bench_table_set(t, r, 0, "%llu", (unsigned long long)
				bench_workload_ops(o, &run->cfg));
		for (unsigned int k = 1; k < nc; k++) {
			const struct bench_cell *c = bench_cell_get(run, o, 1,
								    cols[k]);

			if (!c || !c->nr)
				continue;
			bench_table_set(t, r, k, "%.1f", c->cpu.median);
			if (c->job.c->peer &&
			    (!best || c->cpu.median < best->cpu.median))
				best = c;
		}
		if (best)
			bench_table_set(t, r, nc, "%s", best->job.c->name);
		mc = sc ? bench_cell_get(run, o, 1, sc) : NULL;
		mm = sm ? bench_cell_get(run, o, 1, sm) : NULL;
		if (mc && mc->nr && best)
			bench_table_set(t, r, nc + 1, "%.2fx",
					mc->cpu.median / best->cpu.median);
		if (mm && mm->nr && best)
			bench_table_set(t, r, nc + 2, "%.2fx",
					mm->cpu.median / best->cpu.median);
		if (mc && mc->nr) {
			if (isnan(own_first))
				own_first = mc->cpu.median;
			bench_table_set(t, r, nc + 3, "%.2fx",
					mc->cpu.median / own_first);
		}
	}
	bench_heading(f, md, "%u live set: CPU ns per allocation and its free, "
		      "N objects of %zu B live, freed in the order i * 7919 "
		      "mod N", wl->number, run->cfg.size);
	bench_table_print(f, t, md);
	fprintf(f, "The best of 3 rounds in one process (each round allocates "
		"all N, writes a word in each, frees them scattered); the "
		"median of that over %u process%s.\n\n",
		wl->max_reps && wl->max_reps < run->reps ? wl->max_reps :
		run->reps, (wl->max_reps && wl->max_reps < run->reps ?
			    wl->max_reps : run->reps) == 1 ? "" : "es");
}

/* Median of back_ms over the samples, "never" (-1) counting as the longest. */
static double bench_back_median(const struct bench_cell *c)
{
	double v[64];
	unsigned int n = c->nr < 64 ? c->nr : 64;

	for (unsigned int k = 0; k < n; k++) {
		double b = c->samples[k].x[BENCH_X_BACK_MS];

		v[k] = b < 0 ? INFINITY : b;
	}
	for (unsigned int i = 1; i < n; i++)
		for (unsigned int j = i; j > 0 && v[j] < v[j - 1]; j--) {
			double x = v[j];

			v[j] = v[j - 1];
			v[j - 1] = x;
		}
	return n ? v[n / 2] : INFINITY;
}

static void bench_report_idle(FILE *f, const struct bench_run *run,
			      const struct bench_workload *wl, bool md)
{
	static const char *const head[] = {
		"contender", "RSS before MiB", "peak MiB", "at 1 s", "at 5 s",
		"at 20 s", "back within 8 MiB after", NULL
	};
	static const enum bench_x cols[] = {
		BENCH_X_RSS_BEFORE, BENCH_X_RSS_PEAK, BENCH_X_RSS_1S,
		BENCH_X_RSS_5S, BENCH_X_RSS_20S,
	};
	struct bench_table *t = bench_table_new(head);
	unsigned int any = 0;

	for (unsigned int i = 0; i < run->nr_cells; i++) {
		const struct bench_cell *c = &run->cells[i];
		double back;
		unsigned int r;

		if (c->job.wl != wl || !c->nr)
			continue;
		any++;
		r = bench_table_row(t);
		bench_table_set(t, r, 0, "%s", c->job.c->name);
		for (unsigned int k = 0; k < sizeof(cols) / sizeof(cols[0]); k++)
			if (c->has_x & (1u << cols[k]))
				bench_table_set(t, r, 1 + k, "%.1f",
						c->x[cols[k]].median / 1024);
		back = bench_back_median(c);
		if (isinf(back))
			bench_table_set(t, r, 6, "not in %u s",
					run->cfg.idle_max_s);
		else
			bench_table_set(t, r, 6, "%.1f s", back / 1000);
	}
	if (!any) {
		free(t);
		return;
	}
	bench_beneath_heading(f, run, wl, md);
	bench_table_print(f, t, md);
	fprintf(f, "RSS (/proc/self/statm) before the burst, with it live, "
		"then 1, 5 and 20 s after the last free, with no call in "
		"between; sampled every 100 ms, and no longer once it is back "
		"within 8 MiB of the start (it cannot grow with no call: the "
		"later marks then take that sample).  Medians of the "
		"repetitions.\n\n");
}

void bench_report_beneath(FILE *f, const struct bench_run *run,
			  const struct bench_workload *wl, bool md)
{
	if (!strcmp(wl->name, "large") || !strcmp(wl->name, "realloc"))
		bench_report_churn(f, run, wl, md);
	else if (!strncmp(wl->name, "live-", 5))
		bench_report_live(f, run, wl, md);
	else if (!strcmp(wl->name, "idle"))
		bench_report_idle(f, run, wl, md);
}
