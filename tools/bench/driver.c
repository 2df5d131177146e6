// SPDX-License-Identifier: MIT
/*
 * tools/bench/driver.c - run every measurement in a child of its own.
 *
 * For each repetition, each workload and each contender in turn (so the
 * contenders of one workload are measured minutes apart at most, A B C A B
 * C ...), the driver re-executes this program with "--child" and, for a
 * peer, LD_PRELOAD set to the peer's library.  A fresh process per
 * measurement keeps heaps, RSS peaks and preloads apart.  The child's
 * record comes back on a pipe at fd 3 (child.c); its stdout and stderr are
 * the driver's.
 *
 * The driver refuses a record whose library check failed, counts a failed
 * child as an error, and checks that every contender of a workload folded
 * the same expected checksum (same objects, same tags).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "tools/bench/bench.h"

/* --- the program the children run ------------------------------------------------ */

/*
 * Every child must be the very build the driver is.  A rebuild during a
 * run replaces the file (the linker unlinks it and writes a new one), so
 * the children started after it would run other code, and those started
 * while it is written would not start at all.  A hard link beside the
 * program, made at start and removed at exit, keeps this build's file for
 * the whole run; where no link can be made (a read-only folder), the
 * children run the program by its name.
 */
static char bench_exec_link[PATH_MAX];

static void bench_exec_unlink(void)
{
	unlink(bench_exec_link);
}

static void bench_exec_pin(struct bench_run *run)
{
	char real[PATH_MAX];
	const char *base;
	int n;

	run->exec = run->self;
	if (!realpath(run->self, real))
		return;
	base = strrchr(real, '/') + 1;
	n = snprintf(bench_exec_link, sizeof(bench_exec_link), "%.*s.%s.%ld",
		     (int)(base - real), real, base, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(bench_exec_link) ||
	    linkat(AT_FDCWD, real, AT_FDCWD, bench_exec_link,
		   AT_SYMLINK_FOLLOW))
		return;
	atexit(bench_exec_unlink);
	run->exec = bench_exec_link;
}

/* --- contenders: installed or skipped ----------------------------------------- */

/* A variant build: the program beside this one, with the contender's suffix. */
static void bench_variant_resolve(const struct bench_run *run,
				  struct bench_contender_state *s)
{
	char real[PATH_MAX];
	int n;

	if (!realpath(run->self, real)) {
		s->skipped = true;
		snprintf(s->reason, sizeof(s->reason), "cannot resolve %s",
			 run->self);
		return;
	}
	n = snprintf(s->exec, sizeof(s->exec), "%s%s", real,
		     s->c->exec_suffix);
	if (n < 0 || (size_t)n >= sizeof(s->exec) || access(s->exec, X_OK)) {
		s->skipped = true;
		snprintf(s->reason, sizeof(s->reason),
			 "not built (segpool-bench%s; make bench-stats-cost "
			 "builds it)", s->c->exec_suffix);
		s->exec[0] = '\0';
	}
}

static void bench_contenders_resolve(struct bench_run *run)
{
	for (unsigned int i = 0; i < run->nr_cs; i++) {
		struct bench_contender_state *s = &run->cs[i];
		const struct bench_contender *c = s->c;

		if (s->selected && c->exec_suffix) {
			bench_variant_resolve(run, s);
			continue;
		}
		if (!s->selected || c->kind != BENCH_MALLOC)
			continue;
		if (BENCH_SANITIZED) {
			s->skipped = true;
			snprintf(s->reason, sizeof(s->reason),
				 "sanitizer build: the sanitizer's malloc "
				 "serves every call");
		} else if (c->soname &&
			   !bench_peer_path(c, s->path, sizeof(s->path))) {
			s->skipped = true;
			snprintf(s->reason, sizeof(s->reason),
				 "not installed (%s not found%s%s%s)", c->soname,
				 c->package ? "; Debian package " : "; set "
				 "SEGPOOL_BENCH_LIBPATH to its folder",
				 c->package ? c->package : "", "");
		}
	}
}

/* --- the cells: workload x threads x contender -------------------------------- */

/*
 * The rows beneath the hit path run for the plain contenders: segpool-cache
 * (where the row has no NO_CACHE flag), segpool-malloc and the mallocs;
 * not the inline contender (its calls are the same beneath the hit path),
 * not the per-CPU mode and hardening variants, not the floor.
 */
static bool bench_applies(const struct bench_workload *wl,
			  const struct bench_contender *c)
{
	if (!(wl->flags & BENCH_WL_BENEATH))
		return true;
	switch (c->kind) {
	case BENCH_FLOOR:
		return false;
	case BENCH_SEGPOOL_CACHE:
		return !(wl->flags & BENCH_WL_NO_CACHE) && c->percpu &&
		       !strcmp(c->percpu, "rseq") && !c->env && !c->exec_suffix &&
		       !c->inline_api;
	case BENCH_SEGPOOL_MALLOC:
	case BENCH_MALLOC:
		break;
	}
	return true;
}

/* Repetitions of @cell: -r, or fewer where its workload says so. */
static unsigned int bench_cell_reps(const struct bench_run *run,
				    const struct bench_cell *cell)
{
	unsigned int m = cell->job.wl->max_reps;

	return m && m < run->reps ? m : run->reps;
}

static unsigned int bench_total_runs(const struct bench_run *run)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < run->nr_cells; i++)
		n += bench_cell_reps(run, &run->cells[i]);
	return n;
}

static void bench_cells_build(struct bench_run *run)
{
	unsigned int max = 0;

	for (unsigned int w = 0; w < bench_nr_workloads; w++)
		max += run->cfg.nr_thread_list;
	max *= run->nr_cs;
	run->cells = calloc(max, sizeof(*run->cells));
	if (!run->cells)
		bench_die("out of memory");

	for (unsigned int w = 0; w < bench_nr_workloads; w++) {
		const struct bench_workload *wl = &bench_workloads[w];
		unsigned int nt = wl->on == BENCH_ON_LIST ?
				  run->cfg.nr_thread_list : 1;

		if (!run->wl_selected[w])
			continue;
		for (unsigned int t = 0; t < nt; t++) {
			for (unsigned int i = 0; i < run->nr_cs; i++) {
				struct bench_contender_state *s = &run->cs[i];
				struct bench_cell *cell;

				if (!s->selected || s->skipped ||
				    (s->c->kind == BENCH_FLOOR &&
				     (wl->flags & BENCH_WL_MEMORY)) ||
				    !bench_applies(wl, s->c))
					continue;
				cell = &run->cells[run->nr_cells++];
				cell->job.wl = wl;
				cell->job.c = s->c;
				cell->job.threads = bench_workload_threads(wl,
					&run->cfg, run->cfg.thread_list[t]);
				cell->samples = calloc(run->reps,
						       sizeof(*cell->samples));
				if (!cell->samples)
					bench_die("out of memory");
			}
		}
	}
}

const struct bench_cell *bench_cell_get(const struct bench_run *run,
					const struct bench_workload *wl,
					unsigned int threads,
					const struct bench_contender *c)
{
	for (unsigned int i = 0; i < run->nr_cells; i++) {
		const struct bench_cell *cell = &run->cells[i];

		if (cell->job.wl == wl && cell->job.threads == threads &&
		    cell->job.c == c)
			return cell;
	}
	return NULL;
}

/* --- the repetitions ---------------------------------------------------------------- */

static struct bench_contender_state *
bench_state_of(struct bench_run *run, const struct bench_contender *c)
{
	for (unsigned int i = 0; i < run->nr_cs; i++)
		if (run->cs[i].c == c)
			return &run->cs[i];
	return NULL;
}

/*
 * Seconds the runs after this one will take: in the first repetition the
 * mean so far for each run left; after it, each measurement's own first
 * run again for every one left.
 */
static double bench_eta(const struct bench_run *run, unsigned int rep,
			const struct bench_cell *cell)
{
	unsigned int total = bench_total_runs(run), left;
	double el = (double)(bench_ns(CLOCK_MONOTONIC) - run->start_ns) / 1e9;
	double eta = 0;
	size_t at = (size_t)(cell - run->cells);

	left = total - run->runs_done;
	if (rep == 0)
		return run->runs_done ? el / run->runs_done * left : 0;
	for (size_t i = at + 1; i < run->nr_cells; i++)
		if (rep < bench_cell_reps(run, &run->cells[i]))
			eta += run->cells[i].first_s;
	for (unsigned int r = rep + 1; r < run->reps; r++)
		for (size_t i = 0; i < run->nr_cells; i++)
			if (r < bench_cell_reps(run, &run->cells[i]))
				eta += run->cells[i].first_s;
	return eta;
}

static void bench_fmt_secs(char *buf, size_t len, double s)
{
	if (s < 90)
		snprintf(buf, len, "%.0f s", s);
	else if (s < 5400)
		snprintf(buf, len, "%.0f min", s / 60);
	else
		snprintf(buf, len, "%.1f h", s / 3600);
}

static void bench_progress(const struct bench_run *run, unsigned int rep,
			   const struct bench_cell *cell,
			   const struct bench_result *r)
{
	char eta[32];

	if (run->quiet)
		return;
	bench_fmt_secs(eta, sizeof(eta), bench_eta(run, rep, cell));
	/* position over the whole run, time left, then the repetition */
	fprintf(stderr, "[%u/%u, %s left] rep %u/%u %-9s %3u thr  %-23s ",
		run->runs_done, bench_total_runs(run), eta, rep + 1,
		bench_cell_reps(run, cell), cell->job.wl->name,
		cell->job.threads, cell->job.c->name);
	if (r)
		fprintf(stderr, "%9.1f ns/op cpu %9.1f wall  (%.2f s)\n",
			r->cpu_ns / (double)r->ops, r->wall_ns / (double)r->ops,
			r->wall_ns / 1e9);
	else
		fprintf(stderr, "FAILED\n");
}

static void bench_run_cell(struct bench_run *run, struct bench_cell *cell,
			   unsigned int rep)
{
	struct bench_contender_state *s = bench_state_of(run, cell->job.c);
	uint64_t t0 = bench_ns(CLOCK_MONOTONIC);
	struct bench_record rec;
	int failed;

	failed = bench_spawn(run, &cell->job, s->path[0] ? s->path : NULL, &rec,
			     NULL);
	run->runs_done++;
	if (rep == 0)
		cell->first_s = (double)(bench_ns(CLOCK_MONOTONIC) - t0) / 1e9;
	if (failed) {
		if (!strcmp(rec.status, "refused")) {
			s->refused = true;
			snprintf(s->served, sizeof(s->served), "%s", rec.served);
			snprintf(s->mode, sizeof(s->mode), "%s", rec.mode);
		}
		cell->failed++;
		run->errors++;
		bench_progress(run, rep, cell, NULL);
		return;
	}
	if (!s->served[0] && !s->refused) {
		snprintf(s->served, sizeof(s->served), "%s", rec.served);
		snprintf(s->mapped, sizeof(s->mapped), "%s", rec.mapped);
		snprintf(s->mode, sizeof(s->mode), "%s", rec.mode);
		if (rec.version[0] && strcmp(rec.version, "-") &&
		    !s->version[0])
			snprintf(s->version, sizeof(s->version), "%s",
				 rec.version);
	}
	/* one mode per contender: every child decides it again at start-up */
	if (strcmp(s->mode, rec.mode) && !s->refused) {
		bench_warn("%s: per-CPU mode '%s' in one child, '%s' in "
			   "another", s->c->name, s->mode, rec.mode);
		run->errors++;
	}
	snprintf(cell->served, sizeof(cell->served), "%s", rec.served);
	cell->samples[cell->nr++] = rec.r;
	bench_progress(run, rep, cell, &rec.r);
}

/*
 * The counting pass: once more each cell of a BENCH_WL_SYSCOUNT row that
 * ran, under strace; its calls between the child's marks (syscount.c).
 * Without strace, or with --no-count, the counts are left out.
 */
static void bench_count_cells(struct bench_run *run)
{
	char trace[] = "/tmp/segpool-bench-trace.XXXXXX";
	int fd;

	if (run->no_count || !run->strace[0])
		return;
	fd = mkstemp(trace);
	if (fd < 0) {
		bench_warn("mkstemp: %s", strerror(errno));
		return;
	}
	close(fd);
	for (unsigned int i = 0; i < run->nr_cells; i++) {
		struct bench_cell *cell = &run->cells[i];
		struct bench_contender_state *s = bench_state_of(run,
								 cell->job.c);
		struct bench_record rec;

		if (!(cell->job.wl->flags & BENCH_WL_SYSCOUNT) || !cell->nr)
			continue;
		if (!run->quiet)
			fprintf(stderr, "[count] %-9s %-23s strace: mmap, munmap, "
				"mremap\n", cell->job.wl->name, cell->job.c->name);
		if (bench_spawn(run, &cell->job, s->path[0] ? s->path : NULL,
				&rec, trace))
			continue;	/* reported; the counts stay out */
		if (bench_syscount_marked(trace, cell->sys))
			bench_warn("%s/%s: no marks in the trace",
				   cell->job.wl->name, cell->job.c->name);
		else
			cell->counted = true;
	}
	unlink(trace);
}

/*
 * Same workload, same thread count: every contender allocated the same
 * objects with the same tags, so the expected checksums must agree.
 */
static void bench_check_checksums(struct bench_run *run)
{
	for (unsigned int i = 0; i < run->nr_cells; i++) {
		const struct bench_cell *a = &run->cells[i];
		const struct bench_cell *ref = NULL;

		/* the reference: the first cell of this workload and count */
		for (unsigned int j = 0; j < run->nr_cells && !ref; j++)
			if (run->cells[j].job.wl == a->job.wl &&
			    run->cells[j].job.threads == a->job.threads &&
			    run->cells[j].nr)
				ref = &run->cells[j];
		for (unsigned int k = 0; ref && k < a->nr; k++) {
			if (a->samples[k].expect == ref->samples[0].expect)
				continue;
			bench_warn("%s (%u threads): %s and %s folded different "
				   "checksums", a->job.wl->name, a->job.threads,
				   a->job.c->name, ref->job.c->name);
			run->errors++;
			break;
		}
	}
}

/* Medians and ranges per cell; ratios of CPU time against glibc and the best peer. */
static void bench_reduce(struct bench_run *run)
{
	for (unsigned int i = 0; i < run->nr_cells; i++) {
		struct bench_cell *cell = &run->cells[i];
		double cpu[64], wall[64], rss[64], cached[64], ccpu[64];
		unsigned int n = cell->nr < 64 ? cell->nr : 64;

		cell->has_cached = n > 0;
		for (unsigned int k = 0; k < n; k++) {
			const struct bench_result *r = &cell->samples[k];

			cpu[k] = r->cpu_ns / (double)r->ops;
			wall[k] = r->wall_ns / (double)r->ops;
			rss[k] = (double)r->peak_rss_kb;
			cached[k] = (double)r->cached_bytes / 1024;
			ccpu[k] = (double)r->cpu_bytes / 1024;
			cell->has_cached &= r->has_cached;
		}
		bench_summarize(cpu, n, &cell->cpu);
		bench_summarize(wall, n, &cell->wall);
		bench_summarize(rss, n, &cell->rss);
		bench_summarize(cached, n, &cell->cached);
		bench_summarize(ccpu, n, &cell->cached_cpu);
		cell->has_x = n ? ~0u : 0;
		for (unsigned int k = 0; k < n; k++)
			cell->has_x &= cell->samples[k].has_x;
		for (int x = 0; x < BENCH_NR_X; x++) {
			double v[64];

			if (!(cell->has_x & (1u << x)))
				continue;
			for (unsigned int k = 0; k < n; k++)
				v[k] = cell->samples[k].x[x];
			bench_summarize(v, n, &cell->x[x]);
		}
	}
	for (unsigned int i = 0; i < run->nr_cells; i++) {
		struct bench_cell *cell = &run->cells[i];
		const struct bench_cell *best = NULL, *glibc;

		glibc = bench_cell_get(run, cell->job.wl, cell->job.threads,
				       bench_contender_find("glibc"));
		for (unsigned int j = 0; j < run->nr_cells; j++) {
			const struct bench_cell *o = &run->cells[j];

			if (o->job.wl != cell->job.wl ||
			    o->job.threads != cell->job.threads ||
			    !o->job.c->peer || !o->nr)
				continue;
			if (!best || o->cpu.median < best->cpu.median)
				best = o;
		}
		cell->ratio_glibc = glibc && glibc->nr ?
				    cell->cpu.median / glibc->cpu.median : NAN;
		cell->ratio_peer = best ? cell->cpu.median / best->cpu.median
					: NAN;
		cell->best_peer = best ? best->job.c->name : NULL;
	}
}

/* --- outputs ----------------------------------------------------------------------- */

static FILE *bench_open_out(const char *dir, const char *name, char *path,
			    size_t len)
{
	FILE *f;

	snprintf(path, len, "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		bench_warn("%s: %s", path, strerror(errno));
	return f;
}

static int bench_mkdirs(const char *dir)
{
	char path[512];

	snprintf(path, sizeof(path), "%s", dir);
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0777) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(path, 0777) && errno != EEXIST ? -1 : 0;
}

static void bench_write_outputs(struct bench_run *run)
{
	char path[600];
	FILE *f;

	if (bench_mkdirs(run->out_dir)) {
		bench_warn("%s: %s", run->out_dir, strerror(errno));
		run->errors++;
		return;
	}
	if (run->plots && bench_plot(run, run->out_dir, &run->plotted))
		bench_warn("some plots not made (is gnuplot installed?)");
	if ((f = bench_open_out(run->out_dir, "results.json", path,
				sizeof(path)))) {
		bench_json(f, run);
		fclose(f);
	}
	if ((f = bench_open_out(run->out_dir, "results.md", path,
				sizeof(path)))) {
		bench_report(f, run, true, "");
		fclose(f);
	}
	if (!run->doc)
		return;
	/*
	 * the copy for Documentation/reference/bench-results.md links its
	 * images in Documentation/images/
	 */
	if ((f = bench_open_out(run->out_dir, "results-doc.md", path,
				sizeof(path)))) {
		bench_report(f, run, true, "../images/");
		fclose(f);
		if (bench_doc_update(run->doc, path))
			run->errors++;
		else if (!run->quiet)
			fprintf(stderr, "updated %s\n", run->doc);
	}
}

int bench_driver_main(struct bench_run *run)
{
	uint64_t t0 = bench_ns(CLOCK_MONOTONIC);
	unsigned int skipped = 0;

	bench_exec_pin(run);
	bench_contenders_resolve(run);
	if (!run->no_count && !BENCH_SANITIZED &&
	    !bench_strace_find(run->strace, sizeof(run->strace)))
		bench_warn("strace not found: no mmap counts (Debian package "
			   "strace)");
	bench_machine_read(&run->machine, run);
	bench_cells_build(run);
	for (unsigned int i = 0; i < run->nr_cs; i++)
		skipped += run->cs[i].selected && run->cs[i].skipped;
	if (!run->quiet)
		fprintf(stderr, "%s: %u runs (%u measurements x up to %u "
			"repetitions)%s\n", BENCH_NAME, bench_total_runs(run),
			run->nr_cells, run->reps,
			run->smoke ? ", smoke mode" : "");

	if (run->smoke)
		printf("=== SMOKE RUN: tiny counts, correctness only; "
		       "these figures are not measurements ===\n");
	run->start_ns = bench_ns(CLOCK_MONOTONIC);
	for (unsigned int rep = 0; rep < run->reps; rep++)
		for (unsigned int i = 0; i < run->nr_cells; i++)
			if (rep < bench_cell_reps(run, &run->cells[i]))
				bench_run_cell(run, &run->cells[i], rep);
	bench_count_cells(run);
	bench_check_checksums(run);
	bench_reduce(run);
	run->elapsed_s = (double)(bench_ns(CLOCK_MONOTONIC) - t0) / 1e9;

	if (run->out_dir)
		bench_write_outputs(run);
	if (run->smoke) {
		struct bench_text_buf tb;

		bench_report_smoke(bench_text_begin(&tb), run);
		bench_text_end(&tb, stdout);
	} else if (!strcmp(run->format, "json")) {
		bench_json(stdout, run);
	} else if (!strcmp(run->format, "md")) {
		bench_report(stdout, run, true, "");
	} else {
		struct bench_text_buf tb;

		bench_report(bench_text_begin(&tb), run, false, "");
		bench_text_end(&tb, stdout);
	}
	if (run->smoke)
		printf("smoke: %u runs, %u contender%s skipped, %d error%s; "
		       "SMOKE RUN, not measurements\n",
		       bench_total_runs(run), skipped,
		       skipped == 1 ? "" : "s", run->errors,
		       run->errors == 1 ? "" : "s");
	return run->errors ? 1 : 0;
}
