// SPDX-License-Identifier: MIT
/*
 * tools/bench/main.c - segpool-bench: options, and which mode to run.
 *
 * segpool side by side with glibc malloc, jemalloc, tcmalloc and mimalloc.
 * See Documentation/internals/benchmarks.md for the method and the numbers, and
 * bench.h for how the parts fit.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/bench/bench.h"

/* The source tree this program was built from (the Makefile says). */
#ifndef BENCH_SRCTREE
#define BENCH_SRCTREE "."
#endif

#ifdef CONFIG_SEGPOOL_TSAN
/*
 * segpool's fork handler takes every cache's lock at once, more than the
 * 64 held locks ThreadSanitizer's deadlock detector can track (it stops
 * the driver at its first fork); liburcu is not instrumented (as in the
 * selftests' harness).  TSAN_OPTIONS from the environment still applies.
 */
__attribute__((visibility("default"))) const char *__tsan_default_options(void);
__attribute__((visibility("default"))) const char *__tsan_default_options(void)
{
	return "detect_deadlocks=0:ignore_noninstrumented_modules=1:"
	       "die_after_fork=0";
}
#endif

static void bench_usage(FILE *f)
{
	fprintf(f,
"usage: " BENCH_NAME " [options]\n"
"\n"
"Runs allocation workloads against segpool and the peer allocators, each\n"
"measurement in a process of its own, and reports medians and ranges of\n"
"thread CPU time (primary) and wall time per operation.\n"
"\n"
"Selection:\n"
"  -w, --workload LIST    names or numbers, comma-separated (default: all);\n"
"      --rows LIST        the same; \"beneath\" names the rows beneath the\n"
"                         hit path (large, realloc, live-1e4..live-1e7,\n"
"                         idle), \"live\" the four live-set rows\n"
"  -c, --contender LIST   contender names (default: all)\n"
"      --peer NAME=LIB    one more malloc peer: LIB (an absolute path) by\n"
"                         LD_PRELOAD, verified like the others; repeatable\n"
"  -l, --list             list workloads and contenders, then exit\n"
"Sizes and counts:\n"
"  -t, --threads LIST     thread counts of workload 3 (default 1,2,4,8,64)\n"
"  -r, --reps N           repetitions of every measurement (default 5)\n"
"  -n, --ops N            operations per thread for every workload\n"
"  -S, --scale F          multiply every default count by F (default 1)\n"
"  -s, --size N           object size of workloads 1, 2, 5, 7, 8 (64)\n"
"      --size-range A-B   random sizes of workload 3 (8-128)\n"
"      --pairs N          producer/consumer pairs of workload 5 (1)\n"
"      --fs-threads N     threads of workload 6 (default: usable CPUs)\n"
"      --writes N         writes per object in workload 6 (100)\n"
"      --live N           live objects of workload 8 (1000000)\n"
"      --warmup F         warm-up run of F x the count first (0.1)\n"
"      --rows-scale F     the counts of the rows beneath the hit path\n"
"                         (default: as -S)\n"
"      --grow-max N       realloc row: grow to N bytes (268435456;\n"
"                         33554432 when the rows' scale is below 0.1)\n"
"      --idle-max S       idle row: sample RSS for S seconds at most (30;\n"
"                         3 when the rows' scale is below 0.1)\n"
"      --no-count         no counting pass under strace (mmap calls)\n"
"      --seed N           random seed (sizes and slots)\n"
"      --no-pin           do not pin threads to CPUs\n"
"Output:\n"
"  -f, --format FMT       terminal output: text, md or json (text)\n"
"  -o, --out DIR          write results.json, results.md and PNG plots\n"
"      --no-plots         no gnuplot run\n"
"      --update-doc FILE  replace FILE's results section (needs --out)\n"
"      --programs         instead of the workloads: real programs (python3,\n"
"                         sort, gcc, git, perl, sqlite3, a threaded C++\n"
"                         program, examples/logpipe -b malloc and -b cache)\n"
"                         under each malloc contender, -r runs (default 3;\n"
"                         1 with --smoke) and a counting pass under strace;\n"
"                         CPU, system time, peak RSS, mmap calls, ratios,\n"
"                         logpipe's records/s; -S scales the inputs\n"
"      --prog LIST        with --programs: only these programs\n"
"      --smoke            tiny counts, every workload and installed\n"
"                         contender, one repetition: checks correctness\n"
"                         only; exit status 1 on any error\n"
"  -q, --quiet            no progress lines\n"
"\n"
"Contenders whose library is not installed are reported as skipped.\n"
"segpool-cache-lock and segpool-cache-off are segpool-cache run with\n"
"SEGPOOL_PERCPU=lock and off; the other segpool contenders run without it, in\n"
"segpool's default mode (rseq where available), and each child checks its mode.\n"
"segpool-cache-plain and segpool-cache-off-plain are segpool-cache and\n"
"segpool-cache-off with SEGPOOL_FREELIST_HARDENED=0; segpool-cache-inline is\n"
"segpool-cache's calls built with SEGPOOL_INLINE.\n"
"Environment: SEGPOOL_BENCH_LIBPATH, folders to look for peer libraries in;\n"
"SEGPOOL_PERCPU and SEGPOOL_FREELIST_HARDENED are not passed on to the\n"
"children (see above).\n");
}

static void bench_list(void)
{
	printf("workloads:\n");
	for (unsigned int i = 0; i < bench_nr_workloads; i++) {
		const struct bench_workload *wl = &bench_workloads[i];

		printf("  %2u %-9s %s\n", wl->number, wl->name, wl->title);
	}
	printf("contenders:\n");
	for (unsigned int i = 0; i < bench_nr_contenders; i++) {
		const struct bench_contender *c = &bench_contenders[i];
		char path[256];
		const char *where = c->soname ?
			bench_peer_path(c, path, sizeof(path)) : "built in";

		printf("  %-23s %s [%s]\n", c->name, c->title,
		       where ? where : "not installed");
	}
}

static uint64_t bench_num(const char *opt, const char *s, uint64_t lo,
			  uint64_t hi)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (!*s || *end || v < lo || v > hi)
		bench_die("%s: '%s' is not a number from %llu to %llu", opt, s,
			  (unsigned long long)lo, (unsigned long long)hi);
	return v;
}

static double bench_real(const char *opt, const char *s, double lo, double hi)
{
	char *end;
	double v = strtod(s, &end);

	if (!*s || *end || !(v >= lo && v <= hi))
		bench_die("%s: '%s' is not a number from %g to %g", opt, s, lo,
			  hi);
	return v;
}

static void bench_parse_threads(struct bench_cfg *cfg, char *list)
{
	cfg->nr_thread_list = 0;
	for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) {
		if (cfg->nr_thread_list == BENCH_MAX_LIST)
			bench_die("--threads: at most %d values", BENCH_MAX_LIST);
		cfg->thread_list[cfg->nr_thread_list++] =
			(unsigned int)bench_num("--threads", t, 1,
						BENCH_MAX_THREADS);
	}
}

static void bench_select_workloads(struct bench_run *run, char *list)
{
	memset(run->wl_selected, 0, sizeof(run->wl_selected));
	for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) {
		bool found = false;

		for (unsigned int i = 0; i < bench_nr_workloads; i++) {
			const struct bench_workload *wl = &bench_workloads[i];
			char num[8];

			snprintf(num, sizeof(num), "%u", wl->number);
			if (!strcmp(t, wl->name) || !strcmp(t, num) ||
			    (!strcmp(t, "beneath") &&
			     (wl->flags & BENCH_WL_BENEATH)) ||
			    (!strcmp(t, "live") &&
			     !strncmp(wl->name, "live-", 5))) {
				run->wl_selected[i] = true;
				found = true;
			}
		}
		if (!found)
			bench_die("unknown workload '%s' (see --list)", t);
	}
}

static void bench_select_contenders(struct bench_run *run, char *list)
{
	for (unsigned int i = 0; i < run->nr_cs; i++)
		run->cs[i].selected = false;
	for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) {
		const struct bench_contender *c = bench_contender_find(t);

		if (!c)
			bench_die("unknown contender '%s' (see --list)", t);
		run->cs[c - bench_contenders].selected = true;
	}
}

/* Where this program is, to run it again: argv[0] when it is a path. */
static char *bench_self(char *argv0)
{
	static char path[PATH_MAX];
	ssize_t n;

	if (strchr(argv0, '/'))
		return argv0;
	n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	if (n <= 0)
		bench_die("cannot find this program (/proc/self/exe)");
	path[n] = '\0';
	return path;
}

enum {
	OPT_SIZE_RANGE = 256, OPT_PAIRS, OPT_FS_THREADS, OPT_WRITES, OPT_LIVE,
	OPT_WARMUP, OPT_SEED, OPT_NO_PIN, OPT_NO_PLOTS, OPT_DOC, OPT_SMOKE,
	OPT_CHILD, OPT_RESULT_FD, OPT_TSC_HZ, OPT_GP_DIR, OPT_PROGRAMS,
	OPT_PEER, OPT_ROWS_SCALE, OPT_GROW_MAX, OPT_IDLE_MAX, OPT_NO_COUNT, OPT_PROG,
};

static const struct option bench_options[] = {
	{ "workload", required_argument, NULL, 'w' },
	{ "rows", required_argument, NULL, 'w' },
	{ "grow-max", required_argument, NULL, OPT_GROW_MAX },
	{ "rows-scale", required_argument, NULL, OPT_ROWS_SCALE },
	{ "idle-max", required_argument, NULL, OPT_IDLE_MAX },
	{ "no-count", no_argument, NULL, OPT_NO_COUNT },
	{ "prog", required_argument, NULL, OPT_PROG },
	{ "contender", required_argument, NULL, 'c' },
	{ "peer", required_argument, NULL, OPT_PEER },
	{ "list", no_argument, NULL, 'l' },
	{ "threads", required_argument, NULL, 't' },
	{ "reps", required_argument, NULL, 'r' },
	{ "ops", required_argument, NULL, 'n' },
	{ "scale", required_argument, NULL, 'S' },
	{ "size", required_argument, NULL, 's' },
	{ "size-range", required_argument, NULL, OPT_SIZE_RANGE },
	{ "pairs", required_argument, NULL, OPT_PAIRS },
	{ "fs-threads", required_argument, NULL, OPT_FS_THREADS },
	{ "writes", required_argument, NULL, OPT_WRITES },
	{ "live", required_argument, NULL, OPT_LIVE },
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "no-pin", no_argument, NULL, OPT_NO_PIN },
	{ "programs", no_argument, NULL, OPT_PROGRAMS },
	{ "format", required_argument, NULL, 'f' },
	{ "out", required_argument, NULL, 'o' },
	{ "no-plots", no_argument, NULL, OPT_NO_PLOTS },
	{ "update-doc", required_argument, NULL, OPT_DOC },
	{ "smoke", no_argument, NULL, OPT_SMOKE },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	/* between the driver and its children */
	{ "child", required_argument, NULL, OPT_CHILD },
	{ "result-fd", required_argument, NULL, OPT_RESULT_FD },
	{ "tsc-hz", required_argument, NULL, OPT_TSC_HZ },
	{ "gp-dir", required_argument, NULL, OPT_GP_DIR },
	{ NULL, 0, NULL, 0 },
};

/* Settings that --smoke changes unless given explicitly. */
static void bench_smoke_defaults(struct bench_run *run, bool ops_set,
				 bool reps_set, bool scale_set)
{
	/* the rows beneath the hit path: counts by --scale, short series */
	if (!scale_set)
		run->cfg.scale = 0.001;
	run->cfg.grow_max = 2 << 20;
	run->cfg.idle_max_s = 1;
	if (!ops_set)
		run->cfg.ops = 4000;
	if (!reps_set)
		run->reps = 1;
	run->cfg.live = 20000;
	run->cfg.writes = 10;
	run->cfg.warmup = 0.25;
	run->quiet = true;
	if (!run->out_dir)
		run->plots = false;
}

int main(int argc, char **argv)
{
	static struct bench_run run = {
		.cfg = {
			.scale = 1, .size = 64, .size_min = 8, .size_max = 128,
			.pairs = 1, .writes = 100, .live = 1000000,
			.seed = 20261130, .warmup = 0.1, .pin = true,
			.thread_list = { 1, 2, 4, 8, 64 }, .nr_thread_list = 5,

		},
		.reps = 5, .plots = true, .format = "text",
		.srctree = BENCH_SRCTREE,
		.gp_dir = BENCH_SRCTREE "/tools/bench",
	};
	const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1
						 : argv[0];
	const char *child = NULL, *workload = NULL;
	bool ops_set = false, reps_set = false, programs = false;
	bool scale_set = false, idle_set = false, grow_set = false;
	const char *prog_only = NULL;
	int result_fd = -1, opt;
	size_t blen = strlen(base);

	run.smoke = blen > 6 && !strcmp(base + blen - 6, "-smoke");
	/* peers of the command line first: every later option may name them */
	for (int i = 1; i < argc; i++) {
		const char *spec = NULL;
		int err;

		if (!strncmp(argv[i], "--peer=", 7))
			spec = argv[i] + 7;
		else if (!strcmp(argv[i], "--peer") && i + 1 < argc)
			spec = argv[++i];
		if (spec && (err = bench_add_peer(spec)))
			bench_die("--peer %s: %s", spec, err == -EEXIST ?
				  "that name is taken" : err == -ENOSPC ?
				  "too many peers" :
				  "expected NAME=/absolute/path/to/library.so");
	}
	for (unsigned int i = 0; i < bench_nr_contenders; i++) {
		run.cs[i].c = &bench_contenders[i];
		/* a variant build runs only when asked for by name */
		run.cs[i].selected = !bench_contenders[i].exec_suffix;
	}
	run.nr_cs = bench_nr_contenders;
	for (unsigned int i = 0; i < bench_nr_workloads; i++)
		run.wl_selected[i] = true;

	while ((opt = getopt_long(argc, argv, "w:c:lt:r:n:S:s:f:o:qh",
				  bench_options, NULL)) != -1) {
		switch (opt) {
		case 'w':
			workload = optarg;
			bench_select_workloads(&run, optarg);
			break;
		case 'c':
			bench_select_contenders(&run, optarg);
			break;
		case OPT_PEER:
			break;		/* taken before the other options */
		case 'l':
			bench_list();
			return 0;
		case 't':
			bench_parse_threads(&run.cfg, optarg);
			run.cfg.threads = run.cfg.thread_list[0];
			break;
		case 'r':
			run.reps = (unsigned int)bench_num("--reps", optarg, 1, 64);
			reps_set = true;
			break;
		case 'n':
			run.cfg.ops = bench_num("--ops", optarg, 1, 1ULL << 40);
			ops_set = true;
			break;
		case 'S':
			run.cfg.scale = bench_real("--scale", optarg, 1e-6, 1e3);
			scale_set = true;
			break;
		case OPT_ROWS_SCALE:
			run.cfg.rows_scale = bench_real("--rows-scale", optarg,
							0, 1e3);
			break;
		case OPT_GROW_MAX:
			run.cfg.grow_max = bench_num("--grow-max", optarg,
						     64 << 10, 1ULL << 40);
			grow_set = true;
			break;
		case OPT_IDLE_MAX:
			run.cfg.idle_max_s = (unsigned int)bench_num(
				"--idle-max", optarg, 0, 3600);
			idle_set = true;
			break;
		case OPT_NO_COUNT:
			run.no_count = true;
			break;
		case OPT_PROG:
			prog_only = optarg;
			break;
		case 's':
			run.cfg.size = bench_num("--size", optarg, 8, 4096);
			break;
		case OPT_SIZE_RANGE:
			if (sscanf(optarg, "%zu-%zu", &run.cfg.size_min,
				   &run.cfg.size_max) != 2 ||
			    run.cfg.size_min < 8 || run.cfg.size_max > 4096 ||
			    run.cfg.size_min > run.cfg.size_max)
				bench_die("--size-range: MIN-MAX within 8-4096");
			break;
		case OPT_PAIRS:
			run.cfg.pairs = (unsigned int)bench_num("--pairs",
				optarg, 1, BENCH_MAX_THREADS / 2);
			break;
		case OPT_FS_THREADS:
			run.cfg.fs_threads = (unsigned int)bench_num(
				"--fs-threads", optarg, 1, BENCH_MAX_THREADS);
			break;
		case OPT_WRITES:
			run.cfg.writes = (unsigned int)bench_num("--writes",
				optarg, 1, 1u << 30);
			break;
		case OPT_LIVE:
			run.cfg.live = bench_num("--live", optarg, 1, 1ULL << 32);
			break;
		case OPT_WARMUP:
			run.cfg.warmup = bench_real("--warmup", optarg, 0, 10);
			break;
		case OPT_SEED:
			run.cfg.seed = bench_num("--seed", optarg, 1, UINT64_MAX);
			break;
		case OPT_NO_PIN:
			run.cfg.pin = false;
			break;
		case 'f':
			if (strcmp(optarg, "text") && strcmp(optarg, "md") &&
			    strcmp(optarg, "json"))
				bench_die("--format: text, md or json");
			run.format = optarg;
			break;
		case 'o':
			run.out_dir = optarg;
			break;
		case OPT_NO_PLOTS:
			run.plots = false;
			break;
		case OPT_DOC:
			run.doc = optarg;
			break;
		case OPT_SMOKE:
			run.smoke = true;
			break;
		case 'q':
			run.quiet = true;
			break;
		case 'h':
			bench_usage(stdout);
			return 0;
		case OPT_CHILD:
			child = optarg;
			break;
		case OPT_RESULT_FD:
			result_fd = (int)bench_num("--result-fd", optarg, 0, 1024);
			break;
		case OPT_TSC_HZ:
			run.cfg.tsc_hz = bench_real("--tsc-hz", optarg, 1e6, 1e11);
			break;
		case OPT_GP_DIR:
			run.gp_dir = optarg;
			break;
		case OPT_PROGRAMS:
			programs = true;
			break;
		default:
			bench_usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		bench_warn("unexpected argument '%s'", argv[optind]);
		bench_usage(stderr);
		return 2;
	}

	if (child) {
		if (!workload || result_fd < 0 || run.cfg.tsc_hz == 0)
			bench_die("--child needs --workload, --result-fd and "
				  "--tsc-hz");
		return bench_child_main(&run.cfg, child, workload, result_fd);
	}
	if (programs) {
		struct bench_prog_opts po = {
			.out_dir = run.out_dir, .doc = run.doc,
			.self = bench_self(argv[0]), .only = prog_only,
			.reps = reps_set ? (int)run.reps : run.smoke ? 1 : 3,
			.scale = run.cfg.scale, .smoke = run.smoke,
			.no_count = run.no_count,
		};

		if (run.doc && !run.out_dir)
			bench_die("--update-doc needs --out");
		return bench_programs_main(&po);
	}
	if (run.doc && !run.out_dir)
		bench_die("--update-doc needs --out");
	if (run.smoke)
		bench_smoke_defaults(&run, ops_set, reps_set, scale_set);
	/*
	 * a quick look (the rows' scale below 0.1) waits less for memory to
	 * go back and grows its realloc series to 32 MiB, not 256
	 */
	if (!run.smoke) {
		bool quick = (run.cfg.rows_scale > 0 ? run.cfg.rows_scale :
			      run.cfg.scale) < 0.1;

		if (!idle_set)
			run.cfg.idle_max_s = quick ? 3 : 30;
		if (!grow_set)
			run.cfg.grow_max = (quick ? 32ULL : 256ULL) << 20;
	}
	run.self = bench_self(argv[0]);
	run.cfg.tsc_hz = bench_tick_hz();
	return bench_driver_main(&run);
}
