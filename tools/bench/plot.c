// SPDX-License-Identifier: MIT
/*
 * tools/bench/plot.c - data files for gnuplot, and the PNGs made from them:
 * bench-summary, bench-threads, bench-latency and bench-percpu, each a
 * .dat file and the .gp script of that name beside the sources says what
 * it draws ("?" for a missing value).  No chart has more than eight
 * series, which common.gp tells apart: the summary and the threads chart
 * come as pages, segpool's four ways in beside four peers at a time
 * (bench-X.png, bench-X-2.png, ...), then segpool-cache's variants and the
 * floor (bench-X-modes.png); each .dat names its series, "# series:" per
 * panel.
 */
#include <math.h>
#include <unistd.h>

#include "tools/bench/bench.h"

#define SERIES 8

static bool bench_primary(const struct bench_contender *c)
{
	return !strcmp(c->name, "segpool-cache") || c->inline_api ||
	       !strcmp(c->name, "segpool-malloc") ||
	       !strcmp(c->name, "segpool-preload");
}

static bool bench_variant(const struct bench_contender *c)
{
	return c->kind == BENCH_SEGPOOL_CACHE || c->kind == BENCH_FLOOR;
}

/* segpool-cache in each per-CPU mode: the percpu chart's memory panel */
static bool bench_mode(const struct bench_contender *c)
{
	return c->kind == BENCH_SEGPOOL_CACHE && !c->env && !c->exec_suffix &&
	       !c->sampled_of;
}

static void bench_val(FILE *f, bool ok, double v)
{
	fprintf(f, ok && isfinite(v) ? " %.4g" : " ?", v);
}

static void bench_series(FILE *f, const struct bench_contender **cols,
			 unsigned int nr, bool modes)
{
	fputs("# series:", f);
	for (unsigned int k = 0; k < nr; k++)
		if (!modes || bench_mode(cols[k]))
			fprintf(f, modes ? " %s %s-magazines" : " %s",
				cols[k]->name, cols[k]->name);
	fputc('\n', f);
}

typedef int (*bench_dat_fn)(const struct bench_run *run, FILE *f,
			    const struct bench_contender **cols,
			    unsigned int nr);

static int bench_dat_summary(const struct bench_run *run, FILE *f,
			     const struct bench_contender **cols,
			     unsigned int nr)
{
	int rows = 0;

	bench_series(f, cols, nr, false);
	for (unsigned int i = 0; i < run->nr_cells; i++) {
		const struct bench_cell *a = &run->cells[i];

		if (!bench_cell_summary(run, i))
			continue;
		fprintf(f, "\"%u %s", a->wl->number, a->wl->name);
		if (a->wl->on == BENCH_ON_LIST)
			fprintf(f, "/%u%s", a->threads, a->threads >
				run->usable ? " (oversubscribed)" : "");
		fputc('"', f);
		for (unsigned int k = 0; k < nr; k++) {
			const struct bench_cell *c = bench_cell_get(run, a->wl,
				a->threads, cols[k]);

			bench_val(f, c, c ? c->ratio_glibc : 0);
		}
		fputc('\n', f);
		rows++;
	}
	return rows;
}

static int bench_dat_threads(const struct bench_run *run, FILE *f,
			     const struct bench_contender **cols,
			     unsigned int nr)
{
	const struct bench_workload *wl = bench_workload_find("threads");
	int rows = 0;

	bench_series(f, cols, nr, false);
	for (unsigned int t = 0; t < run->cfg.nr_thread_list; t++) {
		unsigned int threads = run->cfg.thread_list[t];
		bool any = false;

		for (unsigned int k = 0; k < nr; k++)
			any |= !!bench_cell_get(run, wl, threads, cols[k]);
		if (!any)
			continue;
		fprintf(f, "%u", threads);
		for (unsigned int k = 0; k < nr; k++) {
			const struct bench_cell *c = bench_cell_get(run, wl,
				threads, cols[k]);
			const struct bench_summary *s[2] = {
				c ? &c->cpu : NULL, c ? &c->wall : NULL,
			};

			/* ns per op to Mops per s: median, low, high */
			for (int j = 0; j < 2; j++) {
				bench_val(f, c, c ? 1e3 / s[j]->median : 0);
				bench_val(f, c, c ? 1e3 / s[j]->max : 0);
				bench_val(f, c, c ? 1e3 / s[j]->min : 0);
			}
		}
		fputc('\n', f);
		rows++;
	}
	return rows;
}

/* a row per contender: p50 p99 p99.9 of pool alloc, free, xfer's too */
static int bench_dat_latency(const struct bench_run *run, FILE *f,
			     const struct bench_contender **cols,
			     unsigned int nr)
{
	const struct bench_workload *lp = bench_workload_find("lat-pool");
	const struct bench_workload *lx = bench_workload_find("lat-xfer");
	int rows = 0;

	fputs("# series: p50 p99 p99.9\n", f);
	for (unsigned int k = 0; k < nr; k++) {
		const struct bench_cell *c[2] = {
			bench_cell_get(run, lp, 1, cols[k]),
			bench_cell_get(run, lx, 2, cols[k]),
		};

		if (!c[0] && !c[1])
			continue;
		fprintf(f, "%s", cols[k]->name);
		for (int w = 0; w < 2; w++)
			for (int x = BENCH_X_AP50; x <= BENCH_X_FP999; x++)
				bench_val(f, c[w], c[w] ? c[w]->x[x].median
							: 0);
		fputc('\n', f);
		rows++;
	}
	return rows;
}

/* block 0: ns per pair by contender; 1: cached KiB by threads, modes */
static int bench_dat_percpu(const struct bench_run *run, FILE *f,
			    const struct bench_contender **cols,
			    unsigned int nr)
{
	static const char *const wls[] = { "pair", "pool", "batch" };
	const struct bench_workload *thr = bench_workload_find("threads");
	int pairs = 0, rows = 0;

	fputs("# series: pair pool batch\n", f);
	for (unsigned int k = 0; k < nr; k++) {
		const struct bench_cell *c[3];

		for (int w = 0; w < 3; w++)
			c[w] = bench_cell_get(run, bench_workload_find(wls[w]),
					      1, cols[k]);
		if (!c[0] && !c[1] && !c[2])
			continue;
		fprintf(f, "%s", cols[k]->name);
		for (int w = 0; w < 3; w++)
			bench_val(f, c[w], c[w] ? 2 * c[w]->cpu.median : 0);
		fputc('\n', f);
		pairs++;
	}
	fputs("\n\n", f);
	bench_series(f, cols, nr, true);
	for (unsigned int t = 0; t < run->cfg.nr_thread_list; t++) {
		unsigned int threads = run->cfg.thread_list[t];
		const struct bench_cell *c[SERIES] = { NULL };
		unsigned int n = 0;
		bool any = false;

		for (unsigned int k = 0; k < nr && n < SERIES; k++)
			if (bench_mode(cols[k])) {
				c[n] = bench_cell_get(run, thr, threads,
						      cols[k]);
				any |= c[n] && (c[n]->has_x &
						(1u << BENCH_X_CACHED));
				n++;
			}
		if (!any)
			continue;
		fprintf(f, "%u", threads);
		for (unsigned int k = 0; k < n; k++) {
			const struct bench_summary *x = c[k] ? c[k]->x : NULL;
			bool ok = x && (c[k]->has_x & (1u << BENCH_X_CACHED));

			bench_val(f, ok, ok ? x[BENCH_X_CACHED].median : 0);
			bench_val(f, ok, ok ? x[BENCH_X_MAGS].median : 0);
		}
		fputc('\n', f);
		rows++;
	}
	return pairs && rows ? pairs : 0;
}

/* gnuplot's word lists: the names of @cols (those of the modes only) */
static void bench_words(const struct bench_contender **cols, unsigned int nr,
			bool modes, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned int k = 0; k < nr && used < len; k++)
		if (!modes || bench_mode(cols[k]))
			used += (size_t)snprintf(buf + used, len - used,
						 "%s%s", used ? " " : "",
						 cols[k]->name);
}

static int bench_gnuplot(const struct bench_run *run, const char *script,
			 const char *base, const char *title,
			 const struct bench_contender **cols, unsigned int nr,
			 bench_dat_fn dat)
{
	char names[512], cached[512], cap[1400], vars[4096], path[PATH_MAX];
	bool floor = false;
	FILE *f;
	int rows;

	snprintf(path, sizeof(path), "%s/%s.dat", run->out_dir, base);
	if (!(f = fopen(path, "w")))
		return -1;
	rows = dat(run, f, cols, nr);
	fclose(f);
	snprintf(path, sizeof(path), "%s/%s.png", run->out_dir, base);
	if (!rows)
		return unlink(path), 1;	/* nothing to draw: no stale one */
	for (unsigned int k = 0; k < nr; k++)
		floor |= cols[k]->kind == BENCH_FLOOR;
	bench_words(cols, nr, false, names, sizeof(names));
	bench_words(cols, nr, true, cached, sizeof(cached));
	snprintf(cap, sizeof(cap), "%s%s; %s; %s; %s; %s", run->smoke ?
		 "SMOKE RUN, not measurements: " : "", run->machine[0],
		 run->machine[1], run->machine[2], run->machine[3],
		 run->machine[4]);
	for (char *p = cap; *p; p++)	/* a gnuplot string */
		*p = strchr("'\"\\", *p) || (unsigned char)*p < 0x20 ? ' ' : *p;
	if (snprintf(vars, sizeof(vars), "gpdir='%s/tools/bench'; "
		 "caption='%s'; "
		 "datafile='%s/%s.dat'; outfile='%s'; names='%s'; cached='%s'; "
		 "cpus=%u; note='%s%s'; page='%s'", run->srctree, cap,
		 run->out_dir, base, path, names, cached, run->usable, floor ?
		 "floor: the benchmark loop with no allocator, the cost every "
		 "figure includes.  " : "", run->cfg.thread_list[
		 run->cfg.nr_thread_list - 1] > run->usable ? "Oversubscribed:"
		 " more threads than the usable CPUs." : "", title) >=
	    (int)sizeof(vars))
		return -1;
	snprintf(cap, sizeof(cap), "%s/tools/bench/%s", run->srctree, script);
	return bench_cmd((char *[]){ "gnuplot", "-e", vars, cap, NULL }, NULL,
			 NULL, NULL) ? -1 : 0;
}

int bench_plot(struct bench_run *run)
{
	static const struct {
		const char *name;
		bench_dat_fn dat;
		bool paged;
	} plots[] = {
		{ "summary", bench_dat_summary, true },
		{ "threads", bench_dat_threads, true },
		{ "latency", bench_dat_latency, false },
		{ "percpu", bench_dat_percpu, false },
	};
	const struct bench_contender *all[BENCH_MAX_C], *peers[BENCH_MAX_C];
	const struct bench_contender *cols[SERIES];
	unsigned int nall = 0, np = 0, pages;
	char base[64], script[32], title[64], pg[16];
	int ret = 0;

	if (strchr(run->out_dir, '\'') || strchr(run->srctree, '\''))
		return -1;
	for (unsigned int i = 0; i < run->nr_cs; i++)
		if (run->cs[i].selected && !run->cs[i].skipped)
			all[nall++] = run->cs[i].c;
	for (int i = 0; i < 4; i++) {
		snprintf(script, sizeof(script), "%s.gp", plots[i].name);
		if (!plots[i].paged) {
			snprintf(base, sizeof(base), "bench-%s", plots[i].name);
			if (!bench_gnuplot(run, script, base, "", all, nall,
					   plots[i].dat))
				run->plotted |= 1u << i;
			continue;
		}
		/* glibc is the summary's 1.0 line */
		for (unsigned int k = np = 0; k < nall; k++)
			if (!bench_primary(all[k]) && !bench_variant(all[k]) &&
			    (i || strcmp(all[k]->name, "glibc")))
				peers[np++] = all[k];
		pages = np ? (np + SERIES / 2 - 1) / (SERIES / 2) : 1;
		for (unsigned int p = 0; p <= pages; p++) {
			unsigned int nr = 0;

			for (unsigned int k = 0; k < nall && nr < SERIES; k++)
				if (p < pages ? bench_primary(all[k]) :
				    bench_variant(all[k]))
					cols[nr++] = all[k];
			for (unsigned int k = p * 4; p < pages && k < np &&
			     k < p * 4 + 4; k++)
				cols[nr++] = peers[k];
			snprintf(pg, sizeof(pg), "-%u", p + 1);
			snprintf(base, sizeof(base), "bench-%s%s",
				 plots[i].name, p == pages ? "-modes" :
				 p ? pg : "");
			snprintf(title, sizeof(title), p == pages ? "the "
				 "variants of segpool-cache, and the floor" :
				 "segpool against the peers%s%.0u", p ?
				 ", page " : "", p ? p + 1 : 0);
			ret = bench_gnuplot(run, script, base, title, cols, nr,
					    plots[i].dat) < 0 ? -1 : ret;
			if (!p && !ret)
				run->plotted |= 1u << i;
		}
	}
	return ret;
}
