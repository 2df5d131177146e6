// SPDX-License-Identifier: MIT
/*
 * tools/bench/plot.c - data files for gnuplot, and the PNGs made from them.
 *
 *  bench-summary.dat/png  CPU time per op over glibc's, every speed
 *                         workload, one bar per contender (summary.gp)
 *  bench-threads.dat/png  workload 3: Mops per CPU-second and per wall
 *                         second by thread count, min-max bars (threads.gp)
 *  bench-latency.dat/png  workloads 1 and 5: p50, p99, p99.9 of allocation
 *                         and free per contender (latency.gp)
 *  bench-percpu.dat/png   the per-CPU layer: ns per alloc+free pair of the
 *                         hot pair, pool and batch per contender, and the
 *                         KiB segpool-cache's modes hold in magazines and
 *                         depots by thread count (percpu.gp)
 *
 * The scripts live beside the sources (--gp-dir); missing values are "?".
 * Every script gets the contenders' names (names) and those of the
 * segpool-cache contenders (cached), space-separated, the usable CPUs
 * (cpus) and a note for the caption (what "floor" is, what is
 * oversubscribed).
 *
 * No chart has more than BENCH_PLOT_SERIES series: the summary and the
 * threads chart come as pages, segpool against the peers (bench-X.png, then
 * bench-X-2.png, ... when the peers do not fit one) and segpool's own
 * variants (bench-X-modes.png); each .dat file names its series in a
 * "# series:" line per panel, which the bench smoke test counts.
 */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "tools/bench/bench.h"

#define BENCH_PLOT_SERIES	8	/* colours common.gp tells apart */
#define BENCH_PLOT_PRIMARY	4	/* segpool's on every peer page */

/* segpool's four ways in, beside the peers on every page */
static bool bench_plot_primary(const struct bench_contender *c)
{
	return !strcmp(c->name, "segpool-cache") ||
	       !strcmp(c->name, "segpool-cache-inline") ||
	       !strcmp(c->name, "segpool-malloc") ||
	       !strcmp(c->name, "segpool-preload");
}

/* a variant of segpool-cache's (modes, hardening, builds), or the floor */
static bool bench_plot_variant(const struct bench_contender *c)
{
	return c->kind == BENCH_SEGPOOL_CACHE || c->kind == BENCH_FLOOR;
}

/* the per-CPU modes of the percpu chart's right panel (two series each) */
static bool bench_plot_mode(const struct bench_contender *c)
{
	return c->kind == BENCH_SEGPOOL_CACHE && !c->env && !c->exec_suffix;
}

static void bench_plot_series(FILE *f, const struct bench_contender *const *cols,
			      unsigned int nr)
{
	fputs("# series:", f);
	for (unsigned int k = 0; k < nr; k++)
		fprintf(f, " %s", cols[k]->name);
	fputc('\n', f);
}

/*
 * Page @page of the contenders that ran into @cols: pages 0.. are segpool's
 * primaries and up to BENCH_PLOT_SERIES - BENCH_PLOT_PRIMARY peers each
 * (glibc left out when @no_glibc: the charts' 1.0 line), the last page
 * segpool's variants and the floor.  Return: the series, 0 past the end;
 * *@modes tells the last page.
 */
static unsigned int bench_plot_page(const struct bench_run *run,
				    unsigned int page, bool no_glibc,
				    const struct bench_contender **cols,
				    bool *modes)
{
	const unsigned int per = BENCH_PLOT_SERIES - BENCH_PLOT_PRIMARY;
	const struct bench_contender *peers[BENCH_NR_BUILTIN + BENCH_MAX_EXTRA];
	unsigned int np = 0, nr = 0, npages;

	for (unsigned int i = 0; i < run->nr_cs; i++) {
		const struct bench_contender *c = run->cs[i].c;

		if (!run->cs[i].selected || run->cs[i].skipped)
			continue;
		if (!bench_plot_primary(c) && !bench_plot_variant(c) &&
		    !(no_glibc && !strcmp(c->name, "glibc")))
			peers[np++] = c;
	}
	npages = np ? (np + per - 1) / per : 1;
	*modes = page == npages;
	if (page > npages)
		return 0;
	for (unsigned int i = 0; i < run->nr_cs && nr < BENCH_PLOT_SERIES; i++) {
		const struct bench_contender *c = run->cs[i].c;

		if (!run->cs[i].selected || run->cs[i].skipped)
			continue;
		if (*modes ? bench_plot_variant(c) : bench_plot_primary(c))
			cols[nr++] = c;
	}
	for (unsigned int i = page * per; !*modes && i < np && i < (page + 1) * per; i++)
		cols[nr++] = peers[i];
	return nr;
}

/* The contenders that ran, by name, space-separated (gnuplot's word list). */
static void bench_plot_names(const struct bench_run *run, char *buf,
			     size_t len, const struct bench_contender **cols,
			     unsigned int *nr)
{
	size_t used = 0;

	*nr = 0;
	buf[0] = '\0';
	for (unsigned int i = 0; i < run->nr_cs && *nr < 16; i++) {
		const struct bench_contender_state *s = &run->cs[i];

		if (!s->selected || s->skipped)
			continue;
		cols[(*nr)++] = s->c;
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 used ? " " : "", s->c->name);
		if (used >= len)
			used = len - 1;
	}
}

static void bench_plot_val(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, " %.4g", v);
	else
		fputs(" ?", f);
}

/* Rows: speed workloads (and thread counts); columns: ratio to glibc. */
static int bench_plot_summary(const struct bench_run *run, FILE *f,
			      const struct bench_contender *const *cols,
			      unsigned int nr)
{
	int rows = 0;

	fprintf(f, "# workload, then CPU time per op / glibc's per contender\n");
	bench_plot_series(f, cols, nr);
	for (unsigned int i = 0; i < run->nr_cells; i++) {
		const struct bench_cell *first = &run->cells[i];
		const struct bench_workload *wl = first->job.wl;

		if (wl->flags & (BENCH_WL_MEMORY | BENCH_WL_LATENCY |
				 BENCH_WL_BENEATH) ||
		    (i && run->cells[i - 1].job.wl == wl &&
		     run->cells[i - 1].job.threads == first->job.threads))
			continue;
		if (wl->on == BENCH_ON_LIST)
			fprintf(f, "\"%u %s/%u%s\"", wl->number, wl->name,
				first->job.threads, first->job.threads >
				run->machine.usable ? " (oversubscribed)" : "");
		else
			fprintf(f, "\"%u %s\"", wl->number, wl->name);
		for (unsigned int k = 0; k < nr; k++) {
			const struct bench_cell *c = bench_cell_get(run, wl,
				first->job.threads, cols[k]);

			bench_plot_val(f, c && c->nr ? c->ratio_glibc : NAN);
		}
		fputc('\n', f);
		rows++;
	}
	return rows;
}

/* Rows: thread counts; per contender: CPU median min max, wall the same. */
static int bench_plot_threads(const struct bench_run *run, FILE *f,
			      const struct bench_contender *const *cols,
			      unsigned int nr)
{
	const struct bench_workload *wl = bench_workload_find("threads");
	int rows = 0;

	fprintf(f, "# threads, then per contender Mops per CPU-second "
		"(median min max) and per wall second (median min max)\n");
	bench_plot_series(f, cols, nr);
	for (unsigned int t = 0; t < run->cfg.nr_thread_list; t++) {
		unsigned int threads = run->cfg.thread_list[t];
		bool any = false;

		for (unsigned int k = 0; k < nr; k++)
			any |= bench_cell_get(run, wl, threads, cols[k]) != NULL;
		if (!any)
			continue;
		fprintf(f, "%u", threads);
		for (unsigned int k = 0; k < nr; k++) {
			const struct bench_cell *c = bench_cell_get(run, wl,
				threads, cols[k]);
			bool ok = c && c->nr;

			/* ns per op -> millions of ops per second */
			bench_plot_val(f, ok ? 1e3 / c->cpu.median : NAN);
			bench_plot_val(f, ok ? 1e3 / c->cpu.max : NAN);
			bench_plot_val(f, ok ? 1e3 / c->cpu.min : NAN);
			bench_plot_val(f, ok ? 1e3 / c->wall.median : NAN);
			bench_plot_val(f, ok ? 1e3 / c->wall.max : NAN);
			bench_plot_val(f, ok ? 1e3 / c->wall.min : NAN);
		}
		fputc('\n', f);
		rows++;
	}
	return rows;
}

/* Rows: contenders; columns: pool alloc, pool free, xfer alloc, xfer free. */
static int bench_plot_latency(const struct bench_run *run, FILE *f,
			      const struct bench_contender *const *cols,
			      unsigned int nr)
{
	const struct bench_workload *wls[2] = {
		bench_workload_find("lat-pool"), bench_workload_find("lat-xfer"),
	};
	int rows = 0;

	fprintf(f, "# contender, then p50 p99 p99.9 (ns) of: pool alloc, "
		"pool free, xfer alloc, xfer free\n# series: p50 p99 p99.9\n");
	for (unsigned int k = 0; k < nr; k++) {
		bool any = false;

		for (int w = 0; w < 2; w++)
			for (unsigned int i = 0; i < run->nr_cells; i++)
				any |= run->cells[i].job.wl == wls[w] &&
				       run->cells[i].job.c == cols[k] &&
				       run->cells[i].nr;
		if (!any)
			continue;
		fprintf(f, "%s", cols[k]->name);
		for (int w = 0; w < 2; w++) {
			const struct bench_cell *c = NULL;

			for (unsigned int i = 0; i < run->nr_cells; i++)
				if (run->cells[i].job.wl == wls[w] &&
				    run->cells[i].job.c == cols[k])
					c = &run->cells[i];
			for (int l = 0; l < BENCH_NR_LAT; l++)
				for (int j = 0; j < BENCH_NR_PCT; j++) {
					double v[64];
					struct bench_summary s;
					unsigned int n = c ? c->nr : 0;

					for (unsigned int x = 0; x < n && x < 64; x++)
						v[x] = c->samples[x].lat[l][j];
					bench_summarize(v, n < 64 ? n : 64, &s);
					bench_plot_val(f, n ? s.median : NAN);
				}
		}
		fputc('\n', f);
		rows++;
	}
	return rows;
}

/*
 * Two blocks (gnuplot's index 0 and 1).  0: a row per contender, its name
 * and CPU ns per alloc+free pair of the hot pair, pool and batch.  1: a
 * row per thread count of workload 3, then per segpool-cache contender the
 * KiB in magazines and depots, and in magazines alone.  Nothing unless
 * both have rows.
 */
static int bench_plot_percpu(const struct bench_run *run, FILE *f,
			     const struct bench_contender *const *cols,
			     unsigned int nr)
{
	static const char *const wls[] = { "pair", "pool", "batch" };
	const struct bench_workload *thr = bench_workload_find("threads");
	int pairs = 0, rows = 0;

	fprintf(f, "# contender, then CPU ns per alloc+free pair of: hot pair, "
		"pool, batch\n# series: pair pool batch\n");
	for (unsigned int k = 0; k < nr; k++) {
		const struct bench_cell *c[3];
		bool any = false;

		for (int w = 0; w < 3; w++) {
			c[w] = bench_cell_get(run, bench_workload_find(wls[w]),
					      1, cols[k]);
			c[w] = c[w] && c[w]->nr ? c[w] : NULL;
			any |= c[w] != NULL;
		}
		if (!any)
			continue;
		fprintf(f, "%s", cols[k]->name);
		for (int w = 0; w < 3; w++)
			bench_plot_val(f, c[w] ? 2 * c[w]->cpu.median : NAN);
		fputc('\n', f);
		pairs++;
	}
	fprintf(f, "\n\n# threads, then per segpool-cache contender KiB held "
		"in magazines and depots, and in magazines alone\n# series:");
	for (unsigned int k = 0; k < nr; k++)
		if (bench_plot_mode(cols[k]))
			fprintf(f, " %s %s-magazines", cols[k]->name,
				cols[k]->name);
	fputc('\n', f);
	for (unsigned int t = 0; t < run->cfg.nr_thread_list; t++) {
		unsigned int threads = run->cfg.thread_list[t];
		bool any = false;

		for (unsigned int k = 0; k < nr; k++) {
			const struct bench_cell *c = bench_cell_get(run, thr,
				threads, cols[k]);

			any |= bench_plot_mode(cols[k]) && c && c->has_cached;
		}
		if (!any)
			continue;
		fprintf(f, "%u", threads);
		for (unsigned int k = 0; k < nr; k++) {
			const struct bench_cell *c = bench_cell_get(run, thr,
				threads, cols[k]);

			if (!bench_plot_mode(cols[k]))
				continue;
			bench_plot_val(f, c && c->has_cached ?
				       c->cached.median : NAN);
			bench_plot_val(f, c && c->has_cached ?
				       c->cached_cpu.median : NAN);
		}
		fputc('\n', f);
		rows++;
	}
	return pairs && rows ? pairs : 0;
}

/*
 * The caption every image carries: the machine and the commit the figures
 * come from, as the report's header gives them.  No quotes (gnuplot string)
 * and no control bytes.
 */
static void bench_plot_caption(const struct bench_run *run, char *buf,
			       size_t len)
{
	const struct bench_machine *m = &run->machine;

	snprintf(buf, len, "%s%s, %u of %u CPUs, %d NUMA node%s, %ld MiB; "
		 "kernel %s, glibc %s, %s; segpool %s%s%s; %s",
		 run->smoke ? "SMOKE RUN, not measurements: " : "", m->cpu,
		 m->usable, m->online, m->numa_nodes,
		 m->numa_nodes == 1 ? "" : "s", m->mem_mb, m->kernel, m->glibc,
		 m->compiler, m->segpool, m->revision[0] ? " at " : "",
		 m->revision, m->date);
	for (char *p = buf; *p; p++)
		if (*p == '\'' || *p == '"' || *p == '\\' ||
		    (unsigned char)*p < 0x20)
			*p = ' ';
}

static int bench_gnuplot(const struct bench_run *run, const char *script,
			 const char *dat, const char *png, const char *names,
			 const char *cached, const char *note, const char *page)
{
	char vars[4096], gp[512], caption[768];
	int status;
	pid_t pid;

	if (strchr(dat, '\'') || strchr(png, '\'') || strchr(run->gp_dir, '\'')) {
		bench_warn("plot: a path with a quote in it: %s", dat);
		return -1;
	}
	bench_plot_caption(run, caption, sizeof(caption));
	snprintf(gp, sizeof(gp), "%s/%s", run->gp_dir, script);
	snprintf(vars, sizeof(vars), "gpdir='%s'; caption='%s'; datafile='%s'; "
		 "outfile='%s'; names='%s'; cached='%s'; cpus=%u; note='%s'; "
		 "page='%s'", run->gp_dir, caption, dat, png, names, cached,
		 run->machine.usable, note, page);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		execlp("gnuplot", "gnuplot", "-e", vars, gp, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* The names of @cols, space-separated; those of the per-CPU modes too. */
static void bench_plot_words(const struct bench_contender *const *cols,
			     unsigned int nr, bool modes_only, char *buf,
			     size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned int k = 0; k < nr && used < len; k++)
		if (!modes_only || bench_plot_mode(cols[k]))
			used += (size_t)snprintf(buf + used, len - used, "%s%s",
						 used ? " " : "",
						 cols[k]->name);
}

/* The caption's second line: what the floor is, what is oversubscribed. */
static void bench_plot_note(const struct bench_run *run,
			    const struct bench_contender *const *cols,
			    unsigned int nr, bool threads, char *buf, size_t len)
{
	bool floor = false, over = false;

	for (unsigned int k = 0; k < nr; k++)
		floor |= cols[k]->kind == BENCH_FLOOR;
	for (unsigned int t = 0; threads && t < run->cfg.nr_thread_list; t++)
		over |= run->cfg.thread_list[t] > run->machine.usable;
	size_t used = 0;

	buf[0] = '\0';
	if (floor)
		used = (size_t)snprintf(buf, len, "floor: the benchmark loop "
					"with no allocator (a per-thread stack "
					"of slots), the cost every figure "
					"includes.  ");
	if (over && used < len)
		snprintf(buf + used, len - used, "Oversubscribed: more threads "
			 "than the %u usable CPUs; they take turns on them.",
			 run->machine.usable);
}

int bench_plot(const struct bench_run *run, const char *dir,
	       unsigned int *made)
{
	static const struct {
		const char *base, *script;
		int (*write)(const struct bench_run *run, FILE *f,
			     const struct bench_contender *const *cols,
			     unsigned int nr);
		bool paged, no_glibc, threads;
	} plots[] = {
		{ "bench-summary", "summary.gp", bench_plot_summary,
		  true, true, true },
		{ "bench-threads", "threads.gp", bench_plot_threads,
		  true, false, true },
		{ "bench-latency", "latency.gp", bench_plot_latency,
		  false, false, false },
		{ "bench-percpu", "percpu.gp", bench_plot_percpu,
		  false, false, true },
	};
	const struct bench_contender *all[16], *cols[16];
	char names[512], cached[512], note[512], title[64], dat[600], png[610];
	unsigned int nall, nr;
	int ret = 0;

	*made = 0;
	bench_plot_names(run, names, sizeof(names), all, &nall);
	bench_plot_words(all, nall, true, cached, sizeof(cached));
	for (size_t i = 0; i < sizeof(plots) / sizeof(plots[0]); i++) {
		for (unsigned int page = 0;; page++) {
			bool modes = false;
			FILE *f;
			int rows;

			if (plots[i].paged) {
				nr = bench_plot_page(run, page, plots[i].no_glibc,
						     cols, &modes);
				if (!nr)
					break;
			} else if (page) {
				break;
			} else {
				memcpy(cols, all, sizeof(all));
				nr = nall;
			}
			if (modes)
				snprintf(dat, sizeof(dat), "%s/%s-modes",
					 dir, plots[i].base);
			else if (page)
				snprintf(dat, sizeof(dat), "%s/%s-%u", dir,
					 plots[i].base, page + 1);
			else
				snprintf(dat, sizeof(dat), "%s/%s", dir,
					 plots[i].base);
			snprintf(png, sizeof(png), "%s.png", dat);
			strncat(dat, ".dat", sizeof(dat) - strlen(dat) - 1);
			f = fopen(dat, "w");
			if (!f) {
				bench_warn("%s: %s", dat, strerror(errno));
				return -1;
			}
			rows = plots[i].write(run, f, cols, nr);
			fclose(f);
			if (rows == 0) {
				unlink(png);	/* no stale picture */
				continue;
			}
			bench_plot_words(cols, nr, false, names, sizeof(names));
			bench_plot_note(run, cols, nr, plots[i].threads, note,
					sizeof(note));
			if (!plots[i].paged)
				title[0] = '\0';
			else if (modes)
				snprintf(title, sizeof(title), "the variants of "
					 "segpool-cache, and the floor");
			else
				snprintf(title, sizeof(title), "segpool against "
					 "the peers%s%.0u", page ? ", page " : "",
					 page ? page + 1 : 0);
			if (bench_gnuplot(run, plots[i].script, dat, png, names,
					  cached, note, title))
				ret = -1;
			else if (!page)
				*made |= 1u << i;
		}
	}
	return ret;
}
