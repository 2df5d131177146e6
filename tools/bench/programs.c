// SPDX-License-Identifier: MIT
/*
 * tools/bench/programs.c - real programs under each malloc (--programs).
 *
 * What a user sees when an unmodified program runs under an allocator:
 * CPU time (user + system of the program and its waited-for children),
 * system time, wall time and peak RSS, from wait4(), under glibc, every
 * installed peer and segpool-preload, with ratios against glibc and the
 * best peer; the median of -r runs, the contenders in turn within each;
 * then one more run of each under "strace -f -c" for its mmap, munmap and
 * mremap calls (strace's slowdown never reaches the timed runs).
 * The programs, their inputs and the runner are programs.sh's, which
 * scripts/check-preload.sh runs too; logpipe's records per second get a
 * table of their own (logpipe-cache: segpool's caches, under glibc).
 *
 * The programs' files live on a tmpfs when there is one with room
 * (bench_prog_parent()): on ext4, a run that creates files soon after
 * another run deleted its own pays for the inode allocator's scan past
 * recently deleted inodes (recently_deleted(): 9-13% of the git case's
 * CPU samples here, and twice as much in one run as in the next), a cost
 * that depends on which contender ran before, not on the malloc.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/statfs.h>

#include "tools/bench/bench.h"

#define NPROG	12
#define NREP	15

struct bench_prog_cell {
	double v[5][NREP];		/* CPU, sys, wall s; RSS MiB; rate */
	double share[NREP];		/* logpipe: % in alloc/free */
	double calls;			/* mmap + munmap + mremap, or -1 */
	int nr;
	bool failed;
};

static double bench_med(const double *v, int n)
{
	struct bench_summary s;

	bench_summarize(v, (unsigned int)n, &s);
	return s.median;
}

/*
 * One run: false when it did not exit 0.  With @count, under strace -f -c
 * writing its summary there (LD_PRELOAD for the program only, -E).
 */
static bool bench_prog_run(const char *sh, const char *tmp, const char *name,
			   const char *preload, const char *out,
			   const char *count, struct bench_prog_cell *c)
{
	char pre[300], *run[] = { "/usr/bin/strace", "-f", "-qq", "-c", "-o",
		(char *)count, "-e", "trace=mmap,munmap,mremap", "-E", pre,
		"/bin/bash", (char *)sh, "run", (char *)tmp, (char *)name,
		NULL };
	struct timespec t0, t1;
	struct rusage ru;
	int k = c->nr;
	bool ok;

	snprintf(pre, sizeof(pre), "LD_PRELOAD%s%s", preload ? "=" : "",
		 preload ? preload : "");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ok = !bench_cmd(count ? run : run + 10, out, count ? NULL : preload,
			&ru);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (count)
		return ok;
	c->v[1][k] = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	c->v[0][k] = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
		     c->v[1][k];
	c->v[2][k] = (double)(t1.tv_sec - t0.tv_sec) +
		     (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	c->v[3][k] = (double)ru.ru_maxrss / 1024;
	return ok;
}

/* logpipe -q -p's line: "..., N records/s, X% in alloc/free, ..." */
static bool bench_prog_rate(const char *out, struct bench_prog_cell *c)
{
	char line[512], *p;
	FILE *f = fopen(out, "r");
	bool ok = false;

	while (f && !ok && fgets(line, sizeof(line), f))
		if ((p = strstr(line, " records/s, "))) {
			while (p > line && p[-1] != ' ')
				p--;
			ok = sscanf(p, "%lf records/s, %lf%% in alloc/free",
				    &c->v[4][c->nr], &c->share[c->nr]) == 2;
		}
	if (f)
		fclose(f);
	return ok;
}

/* The calls column of strace -c's "total" line in @path, or -1. */
static double bench_prog_calls(const char *path)
{
	char line[256], word[32];
	double calls = -1, pct, secs, usecs, n;
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lf %lf %lf %lf %31s", &pct, &secs, &usecs,
			   &n, word) == 5 && !strcmp(word, "total"))
			calls = n;
		else if (sscanf(line, "%lf %lf %lf %31s", &pct, &secs, &n,
				word) == 4 && !strcmp(word, "total"))
			calls = n;	/* strace leaves usecs/call out */
	if (f)
		fclose(f);
	return calls;
}

static void bench_prog_report(FILE *f, const struct bench_prog_opts *o,
			       char names[][32], unsigned int np,
			       struct bench_prog_cell cell[][BENCH_MAX_C],
			       const struct bench_contender **cs,
			       unsigned int nc, const char *fs)
{
	static const char *const head[] = {
		"program", "malloc", "CPU s", "sys s", "wall s",
		"peak RSS MiB", "CPU x glibc", "CPU x best peer", "RSS x glibc",
		"mmap calls",
	}, *const lhead[] = {
		"logpipe on", "malloc", "records/s", "x glibc", "CPU s",
		"in alloc/free", "peak RSS MiB",
	};
	struct bench_table *t = bench_table_new(head, 10);
	struct bench_table *l = bench_table_new(lhead, 7);
	double glibc_rate = 0;

	t->nkey = 2;
	for (unsigned int p = 0; p < np; p++) {
		double m[BENCH_MAX_C][5] = { { 0 } }, g[5] = { 0 }, best = 0;
		bool rate = !strncmp(names[p], "logpipe", 7);

		for (unsigned int k = 0; k < nc; k++) {
			const struct bench_prog_cell *c = &cell[p][k];

			for (int i = 0; i < 5 && c->nr; i++)
				m[k][i] = bench_med(c->v[i], c->nr);
			if (c->nr && !strcmp(cs[k]->name, "glibc"))
				memcpy(g, m[k], sizeof(g));
			if (c->nr && cs[k]->peer && (!best || m[k][0] < best))
				best = m[k][0];
		}
		glibc_rate = rate && !strcmp(names[p], "logpipe") ? g[4]
								  : glibc_rate;
		for (unsigned int k = 0; k < nc; k++) {
			const struct bench_prog_cell *c = &cell[p][k];
			unsigned int r;

			if (!c->nr)
				continue;
			r = bench_table_row(t);
			bench_table_set(t, r, 0, "%s", names[p]);
			bench_table_set(t, r, 1, "%s", cs[k]->name);
			for (int i = 0; i < 4; i++)
				bench_table_set(t, r, 2 + i, i < 3 ? "%.3f" :
						"%.1f", m[k][i]);
			for (int i = 0; i < 3; i++)
				if ((i == 1 ? best : g[i ? 3 : 0]) > 0)
					bench_table_set(t, r, 6 + i, "%.2fx",
						m[k][i < 2 ? 0 : 3] /
						(i == 1 ? best : g[i ? 3 : 0]));
			if (c->calls >= 0)
				bench_table_set(t, r, 9, "%.0f", c->calls);
			if (!rate)
				continue;
			r = bench_table_row(l);
			bench_table_set(l, r, 0, strcmp(names[p], "logpipe") ?
					"segpool caches" : "malloc/free");
			bench_table_set(l, r, 1, "%s", strcmp(names[p],
					"logpipe") ? "-" : cs[k]->name);
			bench_table_set(l, r, 2, "%.0f", m[k][4]);
			if (glibc_rate)
				bench_table_set(l, r, 3, "%.2fx",
						m[k][4] / glibc_rate);
			bench_table_set(l, r, 4, "%.3f", m[k][0]);
			bench_table_set(l, r, 5, "%.1f%%",
					bench_med(c->share, c->nr));
			bench_table_set(l, r, 6, "%.1f", m[k][3]);
		}
	}
	if (o->smoke)
		bench_para(f, "**SMOKE RUN**: tiny inputs, one run each; these "
			   "figures are not measurements.");
	fprintf(f, "### Real programs under each malloc\n\n");
	bench_para(f, "tools/bench/programs.sh's programs; medians of %u "
		   "run%s each, the contenders in turn.  CPU is user + system "
		   "time of the program and its waited-for children (wait4); "
		   "peak RSS is the largest of them.  Best peer: the peer "
		   "(glibc included) with the least CPU time.  mmap calls: "
		   "mmap, munmap and mremap of the program and its children, "
		   "counted in one more run under strace -f -c (empty: no "
		   "strace).  The programs' files were on %s.", o->reps,
		   o->reps == 1 ? "" : "s", fs);
	bench_table_print(f, t);
	if (!bench_table_section(f, l, "The main job: examples/logpipe"))
		return;
	bench_para(f, "Records per second (higher is better; x glibc: over "
		   "logpipe -b malloc on glibc's malloc), medians.  On segpool "
		   "caches: segpool_cache_alloc_node() and segpool_malloc() "
		   "(-b cache); on malloc/free: malloc() served by the malloc "
		   "named.  In alloc/free: the share of the workers' CPU time "
		   "sampled inside those calls (logpipe -p).");
	bench_table_print(f, l);
}

/* Free bytes a tmpfs needs to take the inputs and every case's files. */
#define BENCH_PROG_TMPFS_MIN	(2ULL << 30)

/*
 * The folder the work folder goes in: $SEGPOOL_BENCH_TMPDIR, else
 * /dev/shm when it is a tmpfs with room, else /tmp.  *@fs: what it is.
 */
static const char *bench_prog_parent(const char **fs)
{
	const char *dir = getenv("SEGPOOL_BENCH_TMPDIR");
	struct statfs st;

	if (!dir || !*dir) {
		dir = "/tmp";
		if (!statfs("/dev/shm", &st) && st.f_type == TMPFS_MAGIC &&
		    (unsigned long long)st.f_bavail * st.f_bsize >=
		    BENCH_PROG_TMPFS_MIN && !access("/dev/shm", W_OK))
			dir = "/dev/shm";
	}
	*fs = "a file system of unknown type";
	if (!statfs(dir, &st))
		*fs = st.f_type == TMPFS_MAGIC ? "tmpfs" :
		      st.f_type == EXT4_SUPER_MAGIC ? "ext4" :
		      st.f_type == BTRFS_SUPER_MAGIC ? "btrfs" :
		      st.f_type == XFS_SUPER_MAGIC ? "xfs" :
		      "another file system";
	return dir;
}

int bench_programs_main(const struct bench_prog_opts *o)
{
	static struct bench_prog_cell cell[NPROG][BENCH_MAX_C];
	const struct bench_contender *cs[BENCH_MAX_C];
	char tmp[256], scale[32];
	char sh[PATH_MAX], obj[PATH_MAX], out[PATH_MAX + 16];
	char names[NPROG][32];
	char paths[BENCH_MAX_C][256], *at, only[512], path[PATH_MAX];
	char cmd[PATH_MAX + 320];
	unsigned int nc = 0, np = 0;
	const char *fs, *parent = bench_prog_parent(&fs);
	int failures = 0;
	FILE *f;

	if (o->reps > NREP || BENCH_SANITIZED)
		bench_die("--programs: at most %d runs, no sanitizer", NREP);
	snprintf(sh, sizeof(sh), "%s/tools/bench/programs.sh", o->srctree);
	/* the build tree: this program is its tools/bench/segpool-bench */
	if (!realpath("/proc/self/exe", obj))
		bench_die("cannot find this program");
	for (int i = 0; i < 3 && (at = strrchr(obj, '/')); i++)
		*at = '\0';
	for (unsigned int i = 0; i < bench_nr_contenders; i++) {
		const struct bench_contender *c = &bench_contenders[i];

		if (c->kind != BENCH_MALLOC)
			continue;
		if (c->soname && !bench_peer_path(c, paths[nc], 256))
			printf("- %s skipped: %s not found\n", c->name,
			       c->soname);
		else
			cs[nc++] = c;
	}
	snprintf(scale, sizeof(scale), "%g", o->scale);
	snprintf(only, sizeof(only), ",%s,", o->only ? o->only : "");
	if (snprintf(tmp, sizeof(tmp), "%s/segpool-bench-programs.XXXXXX",
		     parent) >= (int)sizeof(tmp))
		bench_die("SEGPOOL_BENCH_TMPDIR: %s is too long", parent);
	if (!mkdtemp(tmp))
		bench_die("mkdtemp %s: %s", tmp, strerror(errno));
	snprintf(out, sizeof(out), "%s/stdout", tmp);
	if (bench_cmd((char *[]){ "bash", sh, "prepare", tmp, scale, obj,
				  NULL }, NULL, NULL, NULL))
		bench_die("%s prepare %s failed", sh, tmp);
	snprintf(cmd, sizeof(cmd), "bash '%s' list '%s'", sh, tmp);
	for (f = popen(cmd, "r"); f && np < NPROG &&
	     fgets(names[np], sizeof(names[np]), f);) {
		names[np][strcspn(names[np], "\n")] = '\0';
		snprintf(path, sizeof(path), ",%s,", names[np]);
		np += !o->only || strstr(only, path);
	}
	if (f)
		pclose(f);
	for (unsigned int r = 0; r < o->reps; r++)
		for (unsigned int p = 0; p < np; p++)
			for (unsigned int k = 0; k < nc; k++) {
				struct bench_prog_cell *c = &cell[p][k];
				bool cache = strstr(names[p], "-cache");

				if (c->failed || (cache &&
				    strcmp(cs[k]->name, "glibc")))
					continue;
				if (!bench_prog_run(sh, tmp, names[p],
						    cs[k]->soname ? paths[k] :
						    NULL, out, NULL, c) ||
				    (!strncmp(names[p], "logpipe", 7) &&
				     !bench_prog_rate(out, c))) {
					bench_warn("%s under %s failed",
						   names[p], cs[k]->name);
					c->failed = true;
					c->nr = 0;
					failures++;
					continue;
				}
				c->nr++;
			}
	/* the counting pass: once more each, under strace -f -c */
	snprintf(path, sizeof(path), "%s/strace", tmp);
	for (unsigned int p = 0; p < np; p++)
		for (unsigned int k = 0; k < nc; k++) {
			struct bench_prog_cell *c = &cell[p][k];

			c->calls = -1;
			if (c->nr && !access("/usr/bin/strace", X_OK) &&
			    bench_prog_run(sh, tmp, names[p], cs[k]->soname ?
					   paths[k] : NULL, out, path, c))
				c->calls = bench_prog_calls(path);
		}
	bench_prog_report(stdout, o, names, np, cell, cs, nc, fs);
	if (o->out_dir) {
		bench_cmd((char *[]){ "mkdir", "-p", (char *)o->out_dir,
				      NULL }, NULL, NULL, NULL);
		snprintf(path, sizeof(path), "%s/programs.md", o->out_dir);
		if (!(f = fopen(path, "w"))) {
			bench_warn("%s: %s", path, strerror(errno));
			failures++;
		} else {
			bench_prog_report(f, o, names, np, cell, cs, nc,
					  fs);
			if (fclose(f) || (o->doc && bench_doc_update(o->doc,
						"programs", path)))
				failures++;
		}
	}
	bench_cmd((char *[]){ "rm", "-rf", tmp, NULL }, NULL, NULL, NULL);
	return failures ? 1 : 0;
}
