// SPDX-License-Identifier: MIT
/*
 * tools/bench/driver.c - run every measurement in a child of its own.
 *
 * For each repetition, each workload and each contender in turn (A B C A
 * B C ..., so the contenders of a workload are measured minutes apart at
 * most) a fresh child keeps heaps, RSS peaks and preloads apart.  The
 * driver refuses a record whose library check failed, counts a failed
 * child as an error, checks that every contender of a workload folded the
 * same expected checksum (same objects, same tags), and reduces the
 * samples to medians and ratios against glibc and the best peer.
 *
 * A child is this very build again (through a file descriptor the driver
 * holds on it: a rebuild during a run changes nothing), or a variant build
 * beside it, with the driver's command line and "--child NAME -w WORKLOAD
 * -t THREADS", from which it derives the same settings; the driver's
 * environment less LD_PRELOAD, SEGPOOL_PERCPU, SEGPOOL_FREELIST_HARDENED
 * and SEGPOOL_HEAP_PROFILE, plus the peer to preload or the mode and
 * variable the contender asks for (a sampled contender's profile goes to
 * a file of the driver's own, removed once the child ended).  Its record
 * comes back on a pipe at fd 3.  The counting pass runs it under
 * "strace -f -e trace=mmap,munmap,mremap,write" (the preload for the
 * child alone, -E) and counts the calls between the "segpool-bench:begin"
 * and ":end" the child writes to fd -1 around its timed part
 * (bench_sys_mark()).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>

#include "tools/bench/bench.h"

static int bench_spawn(const struct bench_run *run,
		       const struct bench_cell *cell, struct bench_record *rec,
		       const char *trace)
{
	static const char *const strace[] = {
		"-f", "--seccomp-bpf", "-qq", "-e",
		"trace=mmap,munmap,mremap,write", "-e", "signal=none", "-o",
	};
	const struct bench_cstate *s = &run->cs[cell->c - bench_contenders];
	const char *preload = s->path[0] ? s->path : NULL;
	const char *mode = cell->c->percpu;
	char pre[300], thr[16], hz[32], prof[PATH_MAX + 32];
	static unsigned int nr_prof;
	char *argv[BENCH_MAX_C + 64];
	int n = 0, fds[2], status;
	size_t used = 0;
	ssize_t got;
	pid_t pid;

	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", preload ? preload : "");
	/* the profile written at the child's exit: a name of this run's */
	snprintf(prof, sizeof(prof), "%s/segpool-bench-heap.%d.%u",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid(),
		 nr_prof++);
	snprintf(thr, sizeof(thr), "%u", cell->threads);
	snprintf(hz, sizeof(hz), "%.0f", run->cfg.tsc_hz);
	if (trace) {
		argv[n++] = (char *)run->strace;
		for (size_t i = 0; i < sizeof(strace) / sizeof(*strace); i++)
			argv[n++] = (char *)strace[i];
		argv[n++] = (char *)trace;
		if (preload) {
			argv[n++] = (char *)"-E";
			argv[n++] = pre;
		}
		argv[n++] = (char *)"--";
		argv[n++] = (char *)(s->exec[0] ? s->exec : run->exec);
	} else {
		argv[n++] = run->argv[0];
	}
	for (int i = 1; i < run->argc && n < BENCH_MAX_C + 50; i++)
		argv[n++] = run->argv[i];
	memcpy(argv + n, (char *[]){ "--child", (char *)cell->c->name,
		"-w", (char *)cell->wl->name, "-t", thr, "--tsc-hz", hz,
		run->smoke ? "--smoke" : NULL, NULL }, 10 * sizeof(*argv));
	memset(rec, 0, sizeof(*rec));
	if (pipe2(fds, O_CLOEXEC))
		bench_die("pipe: %s", strerror(errno));
	fflush(NULL);
	if ((pid = fork()) < 0)
		bench_die("fork: %s", strerror(errno));
	if (pid == 0) {
		/* dup2 clears close-on-exec; if fds[1] is 3 already, do it */
		if (fds[1] == 3 ? fcntl(3, F_SETFD, 0) : dup2(fds[1], 3) < 0)
			_exit(127);
		unsetenv("SEGPOOL_FREELIST_HARDENED");
		unsetenv("SEGPOOL_PERCPU");
		unsetenv("SEGPOOL_HEAP_PROFILE");
		unsetenv("LD_PRELOAD");
		if (cell->c->sampled_of &&
		    setenv("SEGPOOL_HEAP_PROFILE", prof, 1))
			_exit(127);
		/* "rseq" is the default: the mode segpool picks by itself */
		if ((mode && strcmp(mode, "rseq") &&
		     setenv("SEGPOOL_PERCPU", mode, 1)) ||
		    (cell->c->env && putenv((char *)cell->c->env)) ||
		    (preload && !trace && putenv(pre)))
			_exit(127);
		execv(trace ? run->strace : s->exec[0] ? s->exec : run->exec,
		      argv);
		_exit(127);
	}
	close(fds[1]);
	while (used < sizeof(*rec) && (got = read(fds[0], (char *)rec + used,
						  sizeof(*rec) - used)) != 0)
		if (got > 0)
			used += (size_t)got;
		else if (errno != EINTR)
			break;
	if (used < sizeof(*rec))
		memset(rec, 0, sizeof(*rec));
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (cell->c->sampled_of)
		unlink(prof);
	if (WIFEXITED(status) && !WEXITSTATUS(status) &&
	    !strcmp(rec->status, "ok"))
		return 0;
	bench_warn("%s/%s (%u threads): child %s %d, status '%s'",
		   cell->c->name, cell->wl->name, cell->threads,
		   WIFSIGNALED(status) ? "killed by signal" : "exit status",
		   WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
		   rec->status);
	return -1;
}

/* The mmap, munmap and mremap calls between the trace's last marks. */
static int bench_syscount(const char *trace, long sys[BENCH_NR_SYS])
{
	static const char *const names[] = { "mmap(", "munmap(", "mremap(" };
	long cur[BENCH_NR_SYS] = { 0 };
	bool in = false, done = false;
	char line[1024];
	FILE *f = fopen(trace, "r");

	while (f && fgets(line, sizeof(line), f)) {
		char *call = line + strspn(line, "0123456789 ");

		if (strstr(line, "\"segpool-bench:begin\"")) {
			memset(cur, 0, sizeof(cur));
			in = true;
		} else if (in && strstr(line, "\"segpool-bench:end\"")) {
			memcpy(sys, cur, sizeof(cur));
			in = false;
			done = true;
		}
		for (int k = 0; in && k < BENCH_NR_SYS; k++)
			cur[k] += !strncmp(call, names[k], strlen(names[k]));
		/* a long line: skip the rest of it */
		while (!strchr(line, '\n') && fgets(line, sizeof(line), f))
			;
	}
	if (f)
		fclose(f);
	return done ? 0 : -1;
}

static void bench_resolve(struct bench_cstate *s)
{
	const struct bench_contender *c = s->c;
	char real[PATH_MAX];

	if (c->exec_suffix) {
		if (realpath("/proc/self/exe", real))
			snprintf(s->exec, sizeof(s->exec), "%.*s%s",
				 PATH_MAX - 16, real, c->exec_suffix);
		if (access(s->exec, X_OK))
			snprintf(s->reason, sizeof(s->reason), "not built "
				 "(make bench-stats-cost builds it)");
	} else if (c->kind == BENCH_MALLOC && BENCH_SANITIZED) {
		snprintf(s->reason, sizeof(s->reason), "sanitizer build: its "
			 "malloc serves every call");
	} else if (c->soname && !bench_peer_path(c, s->path,
						 sizeof(s->path))) {
		snprintf(s->reason, sizeof(s->reason), "not installed (%s not "
			 "found; %s%s)", c->soname, c->package ? "package " :
			 "set SEGPOOL_BENCH_LIBPATH", c->package ? c->package :
			 "");
	}
	s->skipped = s->reason[0];
}

/*
 * The rows beneath the hit path run for the plain contenders only:
 * segpool-cache (where the row applies), segpool-malloc and the mallocs;
 * the sampled ones measure what sampling adds to the hit paths.
 */
static bool bench_applies(const struct bench_workload *wl,
			  const struct bench_contender *c)
{
	if (c->kind == BENCH_FLOOR || c->sampled_of)
		return !(wl->flags & (BENCH_WL_BENEATH | BENCH_WL_MEMORY));
	if (!(wl->flags & BENCH_WL_BENEATH) || c->kind != BENCH_SEGPOOL_CACHE)
		return true;
	return !(wl->flags & BENCH_WL_NO_CACHE) && !strcmp(c->percpu, "rseq")
	       && !c->env && !c->exec_suffix && !c->inline_api;
}

static unsigned int bench_cell_reps(const struct bench_run *run,
				    const struct bench_cell *cell)
{
	unsigned int m = cell->wl->max_reps;

	return m && m < run->reps ? m : run->reps;
}

static void bench_cells_build(struct bench_run *run)
{
	run->cells = calloc(bench_nr_workloads * BENCH_MAX_LIST * run->nr_cs,
			    sizeof(*run->cells));
	for (unsigned int w = 0; run->cells && w < bench_nr_workloads; w++) {
		const struct bench_workload *wl = &bench_workloads[w];
		unsigned int nt = wl->on == BENCH_ON_LIST ?
				  run->cfg.nr_thread_list : 1;

		for (unsigned int t = 0; run->wl_selected[w] && t < nt; t++)
			for (unsigned int i = 0; i < run->nr_cs; i++) {
				const struct bench_cstate *s = &run->cs[i];
				struct bench_cell *cell;

				if (!s->selected || s->skipped ||
				    !bench_applies(wl, s->c))
					continue;
				cell = &run->cells[run->nr_cells++];
				cell->wl = wl;
				cell->c = run->cs[i].c;
				cell->threads = bench_workload_threads(wl,
					run->cfg.thread_list[t]);
				cell->samples = calloc(run->reps,
						       sizeof(*cell->samples));
				if (!cell->samples)
					bench_die("out of memory");
			}
	}
	if (!run->cells)
		bench_die("out of memory");
}

const struct bench_cell *bench_cell_get(const struct bench_run *run,
					const struct bench_workload *wl,
					unsigned int threads,
					const struct bench_contender *c)
{
	for (unsigned int i = 0; i < run->nr_cells; i++)
		if (run->cells[i].wl == wl && run->cells[i].c == c &&
		    run->cells[i].threads == threads && run->cells[i].nr)
			return &run->cells[i];
	return NULL;
}

/* A row of the summary: a speed workload's first cell at a thread count */
bool bench_cell_summary(const struct bench_run *run, unsigned int i)
{
	const struct bench_cell *a = &run->cells[i];

	return a->wl->cols[0] == BENCH_COL_CPU &&
	       !(a->wl->flags & BENCH_WL_BENEATH) &&
	       (!i || run->cells[i - 1].wl != a->wl ||
		run->cells[i - 1].threads != a->threads);
}

static void bench_run_cell(struct bench_run *run, struct bench_cell *cell,
			   unsigned int rep, unsigned int total, uint64_t t0)
{
	struct bench_cstate *s = &run->cs[cell->c - bench_contenders];
	struct bench_record rec;
	const struct bench_result *r = &rec.r;
	bool ok = !bench_spawn(run, cell, &rec, NULL);
	bool refused = !ok && !strcmp(rec.status, "refused");
	double el;

	/* what the first child found, or what made one refuse */
	if (refused || (ok && !s->served[0] && !s->refused)) {
		snprintf(s->served, sizeof(s->served), "%s", rec.served);
		snprintf(s->mapped, sizeof(s->mapped), "%s", rec.mapped);
		snprintf(s->mode, sizeof(s->mode), "%s", rec.mode);
	}
	s->refused |= refused;
	if (!ok) {
		cell->failed++;
		run->errors++;
	} else {
		/* one mode per contender: each child decides it again */
		if (strcmp(s->mode, rec.mode) && !s->refused) {
			bench_warn("%s: per-CPU mode '%s' in one child, '%s' "
				   "in another", s->c->name, s->mode, rec.mode);
			run->errors++;
		}
		cell->samples[cell->nr++] = rec.r;
	}
	el = (double)(bench_ns(CLOCK_MONOTONIC) - t0) / 1e9;
	if (++run->runs_done && !run->quiet)
		fprintf(stderr, "[%u/%u, %.0f min left] rep %u %-9s %3u thr "
			"%-23s %s%.1f ns/op\n", run->runs_done, total,
			el / run->runs_done * (total - run->runs_done) / 60,
			rep + 1, cell->wl->name, cell->threads, cell->c->name,
			cell->nr > rep ? "" : "FAILED ",
			cell->nr > rep ? r->cpu_ns / (double)r->ops : 0);
}

/* Once more each cell of a row that counts its calls, under strace. */
static void bench_count_cells(struct bench_run *run)
{
	char trace[] = "/tmp/segpool-bench-trace.XXXXXX";
	struct bench_record rec;
	int fd;

	if (run->no_count || !run->strace[0] || (fd = mkstemp(trace)) < 0)
		return;
	close(fd);
	for (unsigned int i = 0; i < run->nr_cells; i++) {
		struct bench_cell *cell = &run->cells[i];

		if (!(cell->wl->flags & BENCH_WL_SYSCOUNT) || !cell->nr)
			continue;
		if (!run->quiet)
			fprintf(stderr, "[count] %-9s %s\n", cell->wl->name,
				cell->c->name);
		if (!bench_spawn(run, cell, &rec, trace))
			cell->counted = !bench_syscount(trace, cell->sys);
	}
	unlink(trace);
}

/* Medians and ranges; the checksums; CPU ratios to glibc and best peer. */
static void bench_reduce(struct bench_run *run)
{
	const struct bench_contender *glibc = bench_contender_find("glibc");

	for (unsigned int i = 0; i < run->nr_cells; i++) {
		struct bench_cell *cell = &run->cells[i];
		const struct bench_cell *ref = cell;
		double v[4][BENCH_MAX_REPS];
		unsigned int n = cell->nr;

		/* the first cell of this workload and thread count */
		for (unsigned int j = i; j-- > 0;)
			if (run->cells[j].wl == cell->wl && run->cells[j].nr &&
			    run->cells[j].threads == cell->threads)
				ref = &run->cells[j];

		cell->has_x = n ? ~0u : 0;
		for (unsigned int k = 0; k < n; k++) {
			const struct bench_result *r = &cell->samples[k];

			v[0][k] = r->cpu_ns / (double)r->ops;
			v[1][k] = r->wall_ns / (double)r->ops;
			v[2][k] = (double)r->peak_rss_kb;
			cell->has_x &= r->has_x;
			if (r->expect != ref->samples[0].expect) {
				bench_warn("%s (%u threads): %s and %s folded "
					   "other checksums", cell->wl->name,
					   cell->threads, cell->c->name,
					   ref->c->name);
				run->errors++;
			}
		}
		bench_summarize(v[0], n, &cell->cpu);
		bench_summarize(v[1], n, &cell->wall);
		bench_summarize(v[2], n, &cell->rss);
		for (int x = 0; x < BENCH_NR_X; x++) {
			for (unsigned int k = 0; k < n; k++)
				v[3][k] = cell->samples[k].x[x];
			bench_summarize(v[3], n, &cell->x[x]);
		}
	}
	for (unsigned int i = 0; i < run->nr_cells; i++) {
		struct bench_cell *cell = &run->cells[i];
		const struct bench_cell *g, *best = NULL;

		g = bench_cell_get(run, cell->wl, cell->threads, glibc);
		for (unsigned int j = 0; j < run->nr_cells; j++) {
			const struct bench_cell *o = &run->cells[j];

			if (o->wl == cell->wl && o->threads == cell->threads &&
			    o->c->peer && o->nr &&
			    (!best || o->cpu.median < best->cpu.median))
				best = o;
		}
		cell->ratio_glibc = g ? cell->cpu.median / g->cpu.median : NAN;
		cell->ratio_peer = best ? cell->cpu.median / best->cpu.median
					: NAN;
		cell->best_peer = best ? best->c->name : NULL;
	}
}

static int bench_write(struct bench_run *run, const char *name,
		       const char *img)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", run->out_dir, name);
	if (!(f = fopen(path, "w"))) {
		bench_warn("%s: %s", path, strerror(errno));
		return -1;
	}
	bench_report(f, run, img);
	return fclose(f) || (img[0] && bench_doc_update(run->doc, "results",
							 path));
}

int bench_driver_main(struct bench_run *run)
{
	uint64_t t0 = bench_ns(CLOCK_MONOTONIC);
	unsigned int total = 0;
	int fd;

	/* this very build for every child, even once a rebuild replaced it */
	if (!realpath("/proc/self/exe", run->exec))
		bench_die("cannot find this program");
	if ((fd = open(run->exec, O_RDONLY | O_CLOEXEC)) >= 0)
		snprintf(run->exec, sizeof(run->exec), "/proc/%d/fd/%d",
			 (int)getpid(), fd);
	for (unsigned int i = 0; i < run->nr_cs; i++)
		if (run->cs[i].selected)
			bench_resolve(&run->cs[i]);
	if (!run->no_count && !BENCH_SANITIZED) {
		snprintf(run->strace, sizeof(run->strace), "/usr/bin/strace");
		if (access(run->strace, X_OK)) {
			run->strace[0] = '\0';
			bench_warn("no strace: no mmap counts");
		}
	}
	bench_machine_read(run);
	bench_cells_build(run);
	for (unsigned int i = 0; i < run->nr_cells; i++)
		total += bench_cell_reps(run, &run->cells[i]);
	if (run->smoke)
		printf("=== SMOKE RUN: tiny counts, correctness only; these "
		       "figures are not measurements ===\n\n");
	for (unsigned int rep = 0; rep < run->reps; rep++)
		for (unsigned int i = 0; i < run->nr_cells; i++)
			if (rep < bench_cell_reps(run, &run->cells[i]))
				bench_run_cell(run, &run->cells[i], rep, total,
					       t0);
	bench_count_cells(run);
	bench_reduce(run);
	run->elapsed_s = (double)(bench_ns(CLOCK_MONOTONIC) - t0) / 1e9;
	if (run->out_dir) {
		char *mk[] = { "mkdir", "-p", (char *)run->out_dir, NULL };

		if (bench_cmd(mk, NULL, NULL, NULL))
			bench_die("cannot make %s", run->out_dir);
		if (!run->no_plots && bench_plot(run))
			bench_warn("some plots not made (is gnuplot there?)");
		if (bench_write(run, "results.md", "") ||
		    (run->doc && bench_write(run, "results-doc.md",
					     "../images/")))
			run->errors++;
	}
	bench_report(stdout, run, "");
	if (run->smoke)
		printf("smoke: %u runs, %d error%s; SMOKE RUN, not "
		       "measurements\n", total, run->errors,
		       run->errors == 1 ? "" : "s");
	return run->errors ? 1 : 0;
}
