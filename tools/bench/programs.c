// SPDX-License-Identifier: MIT
/*
 * tools/bench/programs.c - real programs under each malloc (--programs).
 *
 * The allocation workloads measure calls; this measures what a user sees
 * when an unmodified program runs under an allocator: wall time, CPU time
 * (user + system, the program's waited-for children included: gcc's cc1
 * and as) and peak RSS, from wait4(), for each malloc contender (glibc, the
 * preloaded peers and segpool-preload, libsegpool-malloc.so), side by side,
 * with CPU-time ratios against glibc and against the best peer.  Each cell
 * is the median of --reps runs (3 by default), each run a fresh process
 * with LD_PRELOAD set; the contenders take turns within a repetition so
 * that drift of the machine falls on all of them alike.
 *
 * Each cell also gets the system time alone and, from one more run of
 * each program under "strace -f -c" (syscount.c; strace's slowdown never
 * reaches the timed runs), its mmap, munmap and mremap calls, the
 * program's children included.
 *
 * The programs come from Debian packages; one that is not installed is
 * skipped.  Their inputs are made once in a temporary folder
 * (prog_inputs.c), sized by --scale:
 *   python  python3: a JSON round trip of a 200k-key dict, 300 bytearrays
 *           of 40-340 KB
 *   sort    sort -n of 600k lines
 *   gcc     gcc -O2 -c of a 130-line C file
 *   git-log git log -p of a 400-commit repository
 *   git-gc  git gc --aggressive of it (every delta found again each run)
 *   perl    a hash-heavy script: 300k keys, sorted, deleted, counted
 *   sqlite  sqlite3 :memory:, 300k inserts, two indexes, queries
 *   cxx     segpool-bench-xthread (xthread.cc): 4 threads in a ring, every
 *           free cross-thread
 *   logpipe examples/logpipe -b malloc, the main job on malloc/free, under
 *           each malloc; logpipe-cache the same on segpool's caches (-b
 *           cache, run once per repetition, malloc left to glibc).  Both
 *           also go into a table of their own: records per second and the
 *           share of CPU time in allocation calls (logpipe -p), medians.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tools/bench/bench.h"

#define BENCH_PROG_MAX_REPS	15
#define BENCH_PROG_MAX_ARGS	16
#define BENCH_PROG_MAX_C	(BENCH_NR_BUILTIN + BENCH_MAX_EXTRA)

/*
 * A program: argv with %T (the inputs' folder), %B (this program's
 * folder), %N and %M (counts: n and m times the scale, at least 1/100).
 */
struct bench_prog {
	const char *name;
	const char *title;
	const char *argv[BENCH_PROG_MAX_ARGS];
	unsigned long n, m;
	const char *needs;		/* a file the run needs in %T, or NULL */
	/* its stdout says "N records/s, X% in alloc/free" (logpipe -q -p) */
	bool rate;
	/* run once per repetition, with glibc's malloc: segpool's caches */
	bool cache_only;
};

static const struct bench_prog bench_progs[] = {
	{ "python", "python3: JSON round trip of a 200k-key dict, 300 "
	  "bytearrays of 40-340 KB",
	  { "python3", "%T/bench.py", "%N", "%M" }, 200000, 300, NULL },
	{ "sort", "sort -n of 600k lines",
	  { "sort", "-n", "-o", "/dev/null", "%T/sort-input" }, 0, 0, NULL },
	{ "gcc", "gcc -O2 -c of a 130-line C file",
	  { "gcc", "-O2", "-c", "-o", "/dev/null", "%T/unit.c" }, 0, 0, NULL },
	{ "git-log", "git log -p of a 400-commit repository",
	  { "git", "--git-dir=%T/repo.git", "log", "-p", "main" }, 0, 0,
	  "repo.git" },
	{ "git-gc", "git gc --aggressive of that repository",
	  { "git", "--git-dir=%T/repo.git", "gc", "--aggressive", "-q" }, 0, 0,
	  "repo.git" },
	{ "perl", "perl: a hash of 300k keys, sorted, deleted, counted",
	  { "perl", "%T/bench.pl", "%N" }, 300000, 0, NULL },
	{ "sqlite", "sqlite3 :memory:: 300k inserts, two indexes, queries",
	  { "sqlite3", ":memory:", ".read %T/bench.sql" }, 0, 0, NULL },
	{ "cxx", "C++17, 4 threads in a ring, every free cross-thread",
	  { "%B/segpool-bench-xthread", "4", "%N" }, 10000, 0, NULL },
	{ "logpipe", "examples/logpipe -b malloc: the main job on malloc/free",
	  { "%B/../../examples/logpipe", "-q", "-p", "-b", "malloc", "-n", "%N" },
	  2000000, 0, NULL, .rate = true },
	{ "logpipe-cache", "examples/logpipe -b cache: on segpool's caches",
	  { "%B/../../examples/logpipe", "-q", "-p", "-b", "cache", "-n", "%N" },
	  2000000, 0, NULL, .rate = true, .cache_only = true },
};

struct bench_prog_cell {
	double wall[BENCH_PROG_MAX_REPS], cpu[BENCH_PROG_MAX_REPS];
	double sys[BENCH_PROG_MAX_REPS];
	double rate[BENCH_PROG_MAX_REPS], share[BENCH_PROG_MAX_REPS];
	long rss_kb[BENCH_PROG_MAX_REPS];
	int nr;
	bool failed;
	bool counted;			/* the strace pass gave counts */
	long calls[BENCH_NR_SYS];
};

/* What a run substitutes into a program's arguments. */
struct bench_prog_env {
	const char *tmp, *bindir;
	double scale;
	const char *strace;		/* "" for none */
};

static double bench_prog_median(double *v, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
			double t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n ? v[n / 2] : 0;
}

/* Is @prog an executable file, found on PATH if it has no slash? */
static bool bench_prog_present(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[512];

	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0;
	while (path && *path) {
		size_t n = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, prog);
		if (access(buf, X_OK) == 0)
			return true;
		path += n + (path[n] == ':');
	}
	return false;
}

static unsigned long bench_prog_count(unsigned long n, double scale)
{
	double v = (double)n * scale;

	return v < (double)n / 100 ? (n + 99) / 100 : (unsigned long)v;
}

static void bench_prog_argv(const struct bench_prog *p,
			    const struct bench_prog_env *e,
			    char args[][1024], char **argv)
{
	int i;

	for (i = 0; i < BENCH_PROG_MAX_ARGS && p->argv[i]; i++) {
		const char *a = p->argv[i];
		size_t o = 0;

		for (; *a && o < 1023; a++) {
			const char *sub = NULL;
			char num[32];

			if (a[0] == '%' && a[1] == 'T')
				sub = e->tmp;
			else if (a[0] == '%' && a[1] == 'B')
				sub = e->bindir;
			else if (a[0] == '%' && (a[1] == 'N' || a[1] == 'M')) {
				snprintf(num, sizeof(num), "%lu",
					 bench_prog_count(a[1] == 'N' ? p->n :
							  p->m, e->scale));
				sub = num;
			}
			if (sub) {
				o += (size_t)snprintf(args[i] + o, 1024 - o,
						      "%s", sub);
				if (o > 1023)
					o = 1023;
				a++;
			} else {
				args[i][o++] = *a;
			}
		}
		args[i][o] = '\0';
		argv[i] = args[i];
	}
	argv[i] = NULL;
}

/*
 * One run of @p with @preload (or none); false when it did not exit 0.
 * With @count, under strace -f -c, writing its summary to @count.  With
 * @out, the program's stdout goes there (else to /dev/null).
 */
static bool bench_prog_run(const struct bench_prog *p, const char *preload,
			   const struct bench_prog_env *e, const char *count,
			   const char *out, double *wall, double *cpu,
			   double *sys, long *rss_kb)
{
	char args[BENCH_PROG_MAX_ARGS][1024], pre[300];
	char *argv[BENCH_PROG_MAX_ARGS + 12];
	struct timespec t0, t1;
	struct rusage ru;
	int status, off = 0;
	pid_t pid;

	if (count) {
		argv[off++] = (char *)e->strace;
		argv[off++] = (char *)"-f";
		argv[off++] = (char *)"--seccomp-bpf";
		argv[off++] = (char *)"-c";
		argv[off++] = (char *)"-o";
		argv[off++] = (char *)count;
		argv[off++] = (char *)"-e";
		argv[off++] = (char *)"trace=mmap,munmap,mremap";
		if (preload) {
			snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", preload);
			argv[off++] = (char *)"-E";
			argv[off++] = pre;
		}
		argv[off++] = (char *)"--";
	}
	bench_prog_argv(p, e, args, argv + off);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0)
		bench_die("fork: %s", strerror(errno));
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		int fd = out ? open(out, O_WRONLY | O_CREAT | O_TRUNC, 0666) :
			 null;

		if (null >= 0)
			dup2(null, STDIN_FILENO);
		if (fd >= 0)
			dup2(fd, STDOUT_FILENO);
		if (preload && !count)
			setenv("LD_PRELOAD", preload, 1);
		else
			unsetenv("LD_PRELOAD");
		execvp(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid)
		bench_die("wait4: %s", strerror(errno));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*wall = (double)(t1.tv_sec - t0.tv_sec) +
		(double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	*sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	*cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       *sys;
	*rss_kb = ru.ru_maxrss;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Can @p run here: its program installed, its input made? */
static bool bench_prog_ready(const struct bench_prog *p,
			     const struct bench_prog_env *e)
{
	char args[BENCH_PROG_MAX_ARGS][1024], *argv[BENCH_PROG_MAX_ARGS + 1];
	char path[600];

	bench_prog_argv(p, e, args, argv);
	if (!bench_prog_present(argv[0]))
		return false;
	snprintf(path, sizeof(path), "%s/%s", e->tmp, p->needs ? p->needs : "");
	return !p->needs || access(path, F_OK) == 0;
}

static bool bench_prog_selected(const char *only, const char *name)
{
	size_t n = strlen(name);

	for (const char *t = only; t && *t;) {
		size_t len = strcspn(t, ",");

		if (len == n && !strncmp(t, name, n))
			return true;
		t += len + (t[len] == ',');
	}
	return !only;
}

static double bench_prog_median_of(const struct bench_prog_cell *c,
				   const double *v)
{
	double tmp[BENCH_PROG_MAX_REPS];

	memcpy(tmp, v, (size_t)c->nr * sizeof(*v));
	return bench_prog_median(tmp, c->nr);
}

/* logpipe -q -p's line: "..., N records/s, X% in alloc/free, ..." */
static int bench_prog_rate(const char *out, double *rate, double *share)
{
	char line[512], *p;
	FILE *f = fopen(out, "r");
	int ret = -1;

	if (!f)
		return -1;
	while (ret && fgets(line, sizeof(line), f)) {
		p = strstr(line, " records/s, ");
		if (!p)
			continue;
		while (p > line && p[-1] != ' ')
			p--;
		if (sscanf(p, "%lf records/s, %lf%% in alloc/free", rate,
			   share) == 2)
			ret = 0;
	}
	fclose(f);
	return ret;
}

/* The main job: logpipe on the caches, and on malloc under each malloc. */
static void bench_prog_logpipe(FILE *f, bool md,
			       const struct bench_prog_cell cell[][BENCH_PROG_MAX_C],
			       const struct bench_contender *const *cs,
			       unsigned int nc)
{
	static const char *const head[] = {
		"logpipe on", "malloc", "records/s", "x glibc", "CPU s",
		"in alloc/free", "peak RSS MiB", NULL
	};
	struct bench_table *t = bench_table_new(head);
	double glibc = 0;

	for (unsigned int p = 0; p < BENCH_NPROGS; p++)
		for (unsigned int k = 0; k < nc; k++)
			if (bench_progs[p].rate && !bench_progs[p].cache_only &&
			    cell[p][k].nr && !cell[p][k].failed &&
			    !strcmp(cs[k]->name, "glibc"))
				glibc = bench_prog_median_of(&cell[p][k],
							     cell[p][k].rate);
	for (unsigned int p = BENCH_NPROGS; p-- > 0;) {
		if (!bench_progs[p].rate)
			continue;
		for (unsigned int k = 0; k < nc; k++) {
			const struct bench_prog_cell *c = &cell[p][k];
			double rss[BENCH_PROG_MAX_REPS], rate;
			unsigned int r;

			if (!c->nr || c->failed)
				continue;
			for (int i = 0; i < c->nr; i++)
				rss[i] = (double)c->rss_kb[i] / 1024.0;
			rate = bench_prog_median_of(c, c->rate);
			r = bench_table_row(t);
			bench_table_set(t, r, 0, "%s", bench_progs[p].cache_only ?
					"segpool caches" : "malloc/free");
			bench_table_set(t, r, 1, "%s", bench_progs[p].cache_only ?
					"-" : cs[k]->name);
			bench_table_set(t, r, 2, "%.0f", rate);
			if (glibc)
				bench_table_set(t, r, 3, "%.2fx", rate / glibc);
			bench_table_set(t, r, 4, "%.3f",
					bench_prog_median_of(c, c->cpu));
			bench_table_set(t, r, 5, "%.1f%%",
					bench_prog_median_of(c, c->share));
			bench_table_set(t, r, 6, "%.1f",
					bench_prog_median(rss, c->nr));
		}
	}
	if (!t->nrow) {
		free(t);
		return;
	}
	bench_heading(f, md, "The main job: examples/logpipe");
	bench_table_print(f, t, md);
	fprintf(f, "Records per second (higher is better; x glibc: over "
		"logpipe -b malloc on glibc's malloc), medians.  On segpool "
		"caches the records, batches and long messages come from "
		"segpool_cache_alloc_node() and segpool_malloc() (-b cache); "
		"on malloc/free from malloc() (-b malloc), served by the "
		"malloc named.  In alloc/free: the share of the workers' CPU "
		"time sampled inside those calls (logpipe -p).\n\n");
}

/* The table, for a terminal (@md false) or for programs.md. */
static void bench_prog_report(FILE *f, bool md,
			      const struct bench_prog_cell cell[][BENCH_PROG_MAX_C],
			      const struct bench_contender *const *cs,
			      unsigned int nc, int reps, bool counted)
{
	static const char *const head[] = {
		"program", "malloc", "CPU s", "sys s", "wall s", "peak RSS MiB",
		"mmap", "munmap+mremap", "CPU x glibc", "CPU x best peer",
		"sys x glibc", "RSS x glibc", NULL
	};
	struct bench_table *t = bench_table_new(head);

	t->nkey = 2;	/* program and malloc head each part */

	for (unsigned int p = 0; p < BENCH_NPROGS; p++) {
		double cpu[BENCH_PROG_MAX_C] = { 0 }, sys[BENCH_PROG_MAX_C] = { 0 };

		if (bench_progs[p].cache_only)
			continue;
		double rss[BENCH_PROG_MAX_C] = { 0 };
		double g_cpu = 0, g_sys = 0, g_rss = 0, best = 0;

		for (unsigned int k = 0; k < nc; k++) {
			const struct bench_prog_cell *c = &cell[p][k];
			double r[BENCH_PROG_MAX_REPS];

			if (!c->nr || c->failed)
				continue;
			for (int i = 0; i < c->nr; i++)
				r[i] = (double)c->rss_kb[i] / 1024.0;
			cpu[k] = bench_prog_median_of(c, c->cpu);
			sys[k] = bench_prog_median_of(c, c->sys);
			rss[k] = bench_prog_median(r, c->nr);
			if (!strcmp(cs[k]->name, "glibc")) {
				g_cpu = cpu[k];
				g_sys = sys[k];
				g_rss = rss[k];
			}
			if (cs[k]->peer && (!best || cpu[k] < best))
				best = cpu[k];
		}
		for (unsigned int k = 0; k < nc; k++) {
			const struct bench_prog_cell *c = &cell[p][k];
			unsigned int r;

			if (!c->nr || c->failed)
				continue;
			r = bench_table_row(t);
			bench_table_set(t, r, 0, "%s", bench_progs[p].name);
			bench_table_set(t, r, 1, "%s", cs[k]->name);
			bench_table_set(t, r, 2, "%.3f", cpu[k]);
			bench_table_set(t, r, 3, "%.3f", sys[k]);
			bench_table_set(t, r, 4, "%.3f",
					bench_prog_median_of(c, c->wall));
			bench_table_set(t, r, 5, "%.1f", rss[k]);
			if (c->counted) {
				bench_table_set(t, r, 6, "%ld",
						c->calls[BENCH_SYS_MMAP]);
				bench_table_set(t, r, 7, "%ld",
						c->calls[BENCH_SYS_MUNMAP] +
						c->calls[BENCH_SYS_MREMAP]);
			}
			if (g_cpu)
				bench_table_set(t, r, 8, "%.2fx", cpu[k] / g_cpu);
			if (best)
				bench_table_set(t, r, 9, "%.2fx", cpu[k] / best);
			if (g_sys)
				bench_table_set(t, r, 10, "%.2fx", sys[k] / g_sys);
			if (g_rss)
				bench_table_set(t, r, 11, "%.2fx", rss[k] / g_rss);
		}
	}
	bench_heading(f, md, "Real programs under each malloc");
	for (unsigned int p = 0; p < BENCH_NPROGS; p++)
		if (!bench_progs[p].cache_only)
			fprintf(f, "%s%s: %s\n", md ? "- " : "  ",
				bench_progs[p].name, bench_progs[p].title);
	fputc('\n', f);
	bench_table_print(f, t, md);
	fprintf(f, "Medians of %d run%s each, the contenders in turn.  CPU is "
		"user + system time of the program and its waited-for "
		"children (wait4); peak RSS is the largest of them.  mmap, "
		"munmap, mremap: %s.  Best peer: the peer (glibc included) "
		"with the least CPU time.\n\n", reps, reps == 1 ? "" : "s",
		counted ? "calls of the whole program and its children, "
		"counted in one more run under strace -f -c" :
		"not counted (no strace, or --no-count)");
	bench_prog_logpipe(f, md, cell, cs, nc);
}

int bench_programs_main(const struct bench_prog_opts *o)
{
	static struct bench_prog_cell cell[BENCH_NPROGS][BENCH_PROG_MAX_C];
	const struct bench_contender *cs[BENCH_PROG_MAX_C];
	char paths[BENCH_PROG_MAX_C][256], bindir[PATH_MAX], strace[PATH_MAX];
	char tmp[] = "/tmp/segpool-bench-programs.XXXXXX", out[64];
	struct bench_prog_env env = { .tmp = tmp, .bindir = bindir,
				      .scale = o->smoke ? 0.01 : o->scale,
				      .strace = "" };
	struct bench_text_buf tb;
	bool counted = false;
	unsigned int nc = 0;
	int failures = 0;
	const char *slash;

	_Static_assert(sizeof(bench_progs) / sizeof(bench_progs[0]) ==
		       BENCH_NPROGS, "one cell row per program");
	if (o->reps < 1 || o->reps > BENCH_PROG_MAX_REPS)
		bench_die("--reps: 1 to %d for --programs", BENCH_PROG_MAX_REPS);
	if (BENCH_SANITIZED)
		bench_die("--programs: a sanitizer build cannot preload");
	slash = strrchr(o->self, '/');
	snprintf(bindir, sizeof(bindir), "%.*s", slash ?
		 (int)(slash - o->self) : 1, slash ? o->self : ".");
	if (!o->no_count && bench_strace_find(strace, sizeof(strace)))
		env.strace = strace;
	for (unsigned int i = 0; i < bench_nr_contenders &&
	     nc < BENCH_PROG_MAX_C; i++) {
		const struct bench_contender *c = &bench_contenders[i];

		if (c->kind != BENCH_MALLOC)
			continue;
		if (c->soname && !bench_peer_path(c, paths[nc], sizeof(paths[nc]))) {
			printf("%-16s skipped: %s not found\n", c->name, c->soname);
			continue;
		}
		cs[nc++] = c;
	}
	if (!mkdtemp(tmp))
		bench_die("mkdtemp: %s", strerror(errno));
	snprintf(out, sizeof(out), "%s/stdout", tmp);
	if (bench_prog_inputs(tmp, env.scale))
		bench_die("cannot write the programs' inputs in %s", tmp);
	memset(cell, 0, sizeof(cell));

	for (int r = 0; r < o->reps; r++) {
		for (unsigned int p = 0; p < BENCH_NPROGS; p++) {
			const struct bench_prog *pr = &bench_progs[p];

			if (!bench_prog_selected(o->only, pr->name) ||
			    !bench_prog_ready(pr, &env))
				continue;
			for (unsigned int k = 0; k < nc; k++) {
				struct bench_prog_cell *c = &cell[p][k];

				if (c->failed || (pr->cache_only &&
						  strcmp(cs[k]->name, "glibc")))
					continue;
				if (!bench_prog_run(pr, cs[k]->soname ? paths[k] :
						    NULL, &env, NULL,
						    pr->rate ? out : NULL,
						    &c->wall[c->nr], &c->cpu[c->nr],
						    &c->sys[c->nr],
						    &c->rss_kb[c->nr]) ||
				    (pr->rate && bench_prog_rate(out,
						&c->rate[c->nr],
						&c->share[c->nr]))) {
					bench_warn("%s under %s failed", pr->name,
						   cs[k]->name);
					c->failed = true;
					failures++;
					continue;
				}
				c->nr++;
			}
		}
	}
	/* the counting pass: once more each, under strace -f -c */
	for (unsigned int p = 0; env.strace[0] && p < BENCH_NPROGS; p++) {
		char count[600];

		if (bench_progs[p].cache_only)
			continue;
		snprintf(count, sizeof(count), "%s/strace-count", tmp);
		for (unsigned int k = 0; k < nc; k++) {
			struct bench_prog_cell *c = &cell[p][k];
			double w, u, sy;
			long rss;

			if (!c->nr || c->failed)
				continue;
			if (!bench_prog_run(&bench_progs[p], cs[k]->soname ?
					    paths[k] : NULL, &env, count, NULL, &w, &u,
					    &sy, &rss) ||
			    bench_syscount_summary(count, c->calls)) {
				bench_warn("%s under %s: the strace count failed",
					   bench_progs[p].name, cs[k]->name);
				continue;
			}
			c->counted = counted = true;
		}
	}

	if (o->smoke)
		printf("=== SMOKE RUN: tiny inputs, one run each; these "
		       "figures are not measurements ===\n");
	bench_prog_report(bench_text_begin(&tb), false, cell, cs, nc, o->reps,
			  counted);
	bench_text_end(&tb, stdout);
	if (o->out_dir) {
		char path[600];
		FILE *md;

		mkdir(o->out_dir, 0777);
		snprintf(path, sizeof(path), "%s/programs.md", o->out_dir);
		md = fopen(path, "w");
		if (!md) {
			bench_warn("cannot write %s: %s", path, strerror(errno));
			failures++;
		} else {
			if (o->smoke)
				fprintf(md, "**SMOKE RUN**: tiny inputs, one run "
					"each; these figures are not "
					"measurements.\n\n");
			bench_prog_report(md, true, cell, cs, nc, o->reps,
					  counted);
			fclose(md);
			if (o->doc && bench_doc_update_part(o->doc, "programs",
							    path))
				failures++;
		}
	}
	bench_prog_cleanup(tmp);
	return failures ? 1 : 0;
}
