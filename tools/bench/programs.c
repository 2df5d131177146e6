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
 * The programs come from Debian packages; one that is not installed is
 * skipped:
 *   python  python3: dicts, lists, strings and a JSON round trip
 *   gcc     gcc -O2 -g compiling slab/debug.c of this source tree
 *   sort    sort of a generated 1.5M-line file (fixed seed)
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

struct bench_prog {
	const char *name;
	const char *title;
	const char *argv[BENCH_PROG_MAX_ARGS];	/* %S: source tree, %T: temp dir */
};

static const char bench_py_work[] =
	"import json, random\n"
	"random.seed(20251201)\n"
	"d = {}\n"
	"for i in range(300000):\n"
	"    d['key-%d' % i] = [i, str(i) * (i % 7), {'n': i, 'f': i / 7.0}]\n"
	"for i in range(0, 300000, 3):\n"
	"    del d['key-%d' % i]\n"
	"w = [''.join(random.choice('abcdefghij') for _ in range(random.randint(1, 30)))"
	" for _ in range(150000)]\n"
	"w.sort()\n"
	"s = json.dumps(d, sort_keys=True)\n"
	"assert json.loads(s) == d\n"
	"print(len(s), len(' '.join(w).split(' ')))\n";

static const struct bench_prog bench_progs[] = {
	{ "python", "python3: dicts, lists, strings, JSON round trip",
	  { "/usr/bin/python3", "-c", bench_py_work } },
	{ "gcc", "gcc -O2 -g -S slab/debug.c",
	  { "gcc", "-O2", "-g", "-D_GNU_SOURCE", "-I%S", "-I%S/include", "-S",
	    "-o", "/dev/null", "%S/slab/debug.c" } },
	{ "sort", "sort of a 1.5M-line generated file",
	  { "sort", "-o", "/dev/null", "%T/sort-input" } },
};

struct bench_prog_cell {
	double wall[BENCH_PROG_MAX_REPS], cpu[BENCH_PROG_MAX_REPS];
	long rss_kb[BENCH_PROG_MAX_REPS];
	int nr;
	bool failed;
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

/* One run of @p with @preload (or none); false when it did not exit 0. */
static bool bench_prog_run(const struct bench_prog *p, const char *preload,
			   const char *srctree, const char *tmp, double *wall,
			   double *cpu, long *rss_kb)
{
	char args[BENCH_PROG_MAX_ARGS][1024];
	char *argv[BENCH_PROG_MAX_ARGS + 1];
	struct timespec t0, t1;
	struct rusage ru;
	int status, i;
	pid_t pid;

	for (i = 0; i < BENCH_PROG_MAX_ARGS && p->argv[i]; i++) {
		const char *a = p->argv[i];
		size_t o = 0;

		for (; *a && o < sizeof(args[i]) - 1; a++) {
			if (a[0] == '%' && (a[1] == 'S' || a[1] == 'T')) {
				o += (size_t)snprintf(args[i] + o, sizeof(args[i]) - o,
						      "%s", a[1] == 'S' ? srctree : tmp);
				if (o >= sizeof(args[i]))
					o = sizeof(args[i]) - 1;
				a++;
			} else {
				args[i][o++] = *a;
			}
		}
		args[i][o] = '\0';
		argv[i] = args[i];
	}
	argv[i] = NULL;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0)
		bench_die("fork: %s", strerror(errno));
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
		}
		if (preload)
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
	*cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	*rss_kb = ru.ru_maxrss;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int bench_prog_sort_input(const char *tmp, unsigned long lines)
{
	char path[512];
	uint64_t x = 42;
	FILE *f;

	snprintf(path, sizeof(path), "%s/sort-input", tmp);
	f = fopen(path, "w");
	if (!f)
		return -1;
	for (unsigned long i = 0; i < lines; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		fprintf(f, "%08llx %llu line-%lu\n",
			(unsigned long long)(x >> 32),
			(unsigned long long)(x % 1000), i);
	}
	return fclose(f);
}

int bench_programs_main(const char *out_dir, int reps, bool smoke)
{
	const struct bench_contender *cs[16];
	char paths[16][256];
	struct bench_prog_cell cell[BENCH_NPROGS][16];
	unsigned int nc = 0;
	char tmp[] = "/tmp/segpool-bench-programs.XXXXXX";
	FILE *md = NULL;
	int failures = 0;

	_Static_assert(sizeof(bench_progs) / sizeof(bench_progs[0]) ==
		       BENCH_NPROGS, "one cell row per program");
	if (reps < 1 || reps > BENCH_PROG_MAX_REPS)
		bench_die("--reps: 1 to %d for --programs", BENCH_PROG_MAX_REPS);
	if (BENCH_SANITIZED)
		bench_die("--programs: a sanitizer build cannot preload");
	for (unsigned int i = 0; i < bench_nr_contenders && nc < 16; i++) {
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
	if (bench_prog_sort_input(tmp, smoke ? 20000 : 1500000))
		bench_die("cannot write the sort input in %s", tmp);
	memset(cell, 0, sizeof(cell));

	for (int r = 0; r < reps; r++) {
		for (unsigned int p = 0; p < BENCH_NPROGS; p++) {
			const struct bench_prog *pr = &bench_progs[p];

			if (!bench_prog_present(pr->argv[0]))
				continue;
			for (unsigned int k = 0; k < nc; k++) {
				struct bench_prog_cell *c = &cell[p][k];

				if (c->failed)
					continue;
				if (!bench_prog_run(pr, cs[k]->soname ? paths[k] : NULL,
						    BENCH_SRCTREE, tmp, &c->wall[c->nr],
						    &c->cpu[c->nr], &c->rss_kb[c->nr])) {
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

	if (out_dir) {
		char path[512];

		mkdir(out_dir, 0777);
		snprintf(path, sizeof(path), "%s/programs.md", out_dir);
		md = fopen(path, "w");
		if (!md)
			bench_warn("cannot write %s: %s", path, strerror(errno));
	}
	if (md)
		fprintf(md, "| Program | Malloc | Wall s | CPU s | Peak RSS MiB | "
			"CPU x glibc | CPU x best peer | RSS x glibc |\n"
			"|---|---|---|---|---|---|---|---|\n");
	printf("%-8s %-16s %8s %8s %9s %8s %9s %8s\n", "program", "malloc",
	       "wall s", "CPU s", "RSS MiB", "x glibc", "x best", "RSS x gl");
	for (unsigned int p = 0; p < BENCH_NPROGS; p++) {
		double wall[16] = { 0 }, cpu[16] = { 0 }, rss[16] = { 0 };
		double glibc_cpu = 0, glibc_rss = 0, best = 0;

		for (unsigned int k = 0; k < nc; k++) {
			struct bench_prog_cell *c = &cell[p][k];
			double r[BENCH_PROG_MAX_REPS];

			if (!c->nr || c->failed)
				continue;
			for (int i = 0; i < c->nr; i++)
				r[i] = (double)c->rss_kb[i] / 1024.0;
			wall[k] = bench_prog_median(c->wall, c->nr);
			cpu[k] = bench_prog_median(c->cpu, c->nr);
			rss[k] = bench_prog_median(r, c->nr);
			if (!strcmp(cs[k]->name, "glibc")) {
				glibc_cpu = cpu[k];
				glibc_rss = rss[k];
			}
			if (cs[k]->peer && (!best || cpu[k] < best))
				best = cpu[k];
		}
		for (unsigned int k = 0; k < nc; k++) {
			double xg, xb, xr;

			if (!cpu[k] && !wall[k]) {
				continue;
			}
			xg = glibc_cpu ? cpu[k] / glibc_cpu : 0;
			xb = best ? cpu[k] / best : 0;
			xr = glibc_rss ? rss[k] / glibc_rss : 0;
			printf("%-8s %-16s %8.3f %8.3f %9.1f %8.2f %9.2f %8.2f\n",
			       bench_progs[p].name, cs[k]->name, wall[k], cpu[k],
			       rss[k], xg, xb, xr);
			if (md)
				fprintf(md, "| %s | %s | %.3f | %.3f | %.1f | %.2f | "
					"%.2f | %.2f |\n", bench_progs[p].name,
					cs[k]->name, wall[k], cpu[k], rss[k],
					xg, xb, xr);
		}
	}
	if (md) {
		fprintf(md, "\nMedians of %d run%s; CPU is user + system of the "
			"program and its waited-for children.\n", reps,
			reps == 1 ? "" : "s");
		fclose(md);
	}
	{
		char path[600];

		snprintf(path, sizeof(path), "%s/sort-input", tmp);
		unlink(path);
		rmdir(tmp);
	}
	return failures ? 1 : 0;
}
