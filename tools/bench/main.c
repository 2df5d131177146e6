// SPDX-License-Identifier: MIT
/*
 * tools/bench/main.c - segpool-bench: options, and which mode to run.
 *
 * segpool side by side with glibc malloc, jemalloc, tcmalloc, mimalloc and
 * any --peer; Documentation/internals/benchmarks.md has the method.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>

#include "tools/bench/bench.h"

/* The source tree this program was built from (the Makefile says). */
#ifndef BENCH_SRCTREE
#define BENCH_SRCTREE "."
#endif

#ifdef CONFIG_SEGPOOL_TSAN
/* fork takes more locks than the deadlock detector tracks; liburcu */
__attribute__((visibility("default"))) const char *__tsan_default_options(void);
__attribute__((visibility("default"))) const char *__tsan_default_options(void)
{
	return "detect_deadlocks=0:ignore_noninstrumented_modules=1:"
	       "die_after_fork=0";
}
#endif

static const char bench_usage[] =
"usage: " BENCH_NAME " [options]\n"
"\n"
"Allocation workloads against segpool and the peer allocators, each\n"
"measurement a process of its own: medians and ranges of thread CPU time\n"
"(primary) and wall time per operation, as markdown tables.\n"
"\n"
"  -w, --workload LIST    names or numbers, comma-separated (default: all);\n"
"                         \"beneath\": the rows beneath the hit path (large,\n"
"                         realloc, live-1e4..live-1e7, idle), \"live\"\n"
"  -c, --contender LIST   contender names (default: all but -nostats)\n"
"      --peer NAME=LIB    one more malloc peer, LIB an absolute path, by\n"
"                         LD_PRELOAD and verified like the others\n"
"  -l, --list             list workloads and contenders, then exit\n"
"  -t, --threads LIST     thread counts of workload 3 (1,2,4,8,64)\n"
"  -r, --reps N           repetitions of every measurement (5)\n"
"  -n, --ops N            operations per thread (not beneath the hit path)\n"
"  -S, --scale F          multiply every default count by F (1)\n"
"  -s, --size N           object size of workloads 1, 2, 5, 7, 8, 11 (64)\n"
"      --live N           live objects of workload 8 (1000000)\n"
"      --no-count         no counting pass under strace (mmap calls)\n"
"  -o, --out DIR          write results.md, the plots and their data\n"
"      --no-plots         no gnuplot run\n"
"      --update-doc FILE  put results.md into FILE's results (needs -o)\n"
"      --programs         real programs under each malloc instead\n"
"                         (tools/bench/programs.sh; -r runs, default 5)\n"
"      --prog LIST        with --programs: only these programs\n"
"      --smoke            tiny counts, one repetition: correctness only\n"
"  -q, --quiet            no progress lines\n"
"\n"
"segpool-cache-lock and -off run with SEGPOOL_PERCPU=lock and off, -plain\n"
"with SEGPOOL_FREELIST_HARDENED=0 (the driver sets both for the children);\n"
"-inline is built with SEGPOOL_INLINE.  SEGPOOL_BENCH_LIBPATH: folders to\n"
"find peer libraries in first.\n";

static double bench_num(const char *opt, const char *s, double lo,
			double hi)
{
	char *end;
	double v = strtod(s, &end);

	if (!*s || *end || !(v >= lo && v <= hi))
		bench_die("%s: '%s' is not a number from %g to %g", opt, s, lo,
			  hi);
	return v;
}

static void bench_select(struct bench_run *run, char *list, bool wl)
{
	for (unsigned int i = 0; i < 32; i++)
		run->wl_selected[i] = run->wl_selected[i] && !wl;
	for (unsigned int i = 0; i < run->nr_cs; i++)
		run->cs[i].selected = run->cs[i].selected && wl;
	for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) {
		const struct bench_contender *c = bench_contender_find(t);
		bool found = c && !wl;

		for (unsigned int i = 0; wl && i < bench_nr_workloads; i++) {
			const struct bench_workload *w = &bench_workloads[i];
			bool is = !strcmp(t, w->name) ||
				  strtoul(t, NULL, 10) == w->number ||
				  (!strcmp(t, "beneath") &&
				   (w->flags & BENCH_WL_BENEATH)) ||
				  (!strcmp(t, "live") && w->number == 11);

			run->wl_selected[i] |= is;
			found |= is;
		}
		if (!found)
			bench_die("unknown %s '%s' (see --list)", wl ?
				  "workload" : "contender", t);
		if (c && !wl)
			run->cs[c - bench_contenders].selected = true;
	}
}

static void bench_list(void)
{
	char path[256];

	printf("workloads:\n");
	for (unsigned int i = 0; i < bench_nr_workloads; i++)
		printf("  %2u %-9s %s\n", bench_workloads[i].number,
		       bench_workloads[i].name, bench_workloads[i].title);
	printf("contenders:\n");
	for (unsigned int i = 0; i < bench_nr_contenders; i++) {
		const struct bench_contender *c = &bench_contenders[i];
		const char *at = bench_peer_path(c, path, sizeof(path));

		printf("  %-23s %s [%s]\n", c->name, c->title, at ? at :
		       c->soname ? "not installed" : "built in");
	}
}

int main(int argc, char **argv)
{
	static struct bench_run run = {
		.cfg = { .scale = 1, .size = 64, .live = 1000000,
			 .writes = 100, .warmup = 0.1,
			 .thread_list = { 1, 2, 4, 8, 64 },
			 .nr_thread_list = 5 },
		.reps = 5, .srctree = BENCH_SRCTREE,
	};
	enum { OPT_LIVE = 256, OPT_DOC, OPT_PROG, OPT_PEER, OPT_CHILD,
	       OPT_TSC };
	static int programs;
	const struct option opts[] = {
		{ "workload", required_argument, NULL, 'w' },
		{ "contender", required_argument, NULL, 'c' },
		{ "peer", required_argument, NULL, OPT_PEER },
		{ "list", no_argument, NULL, 'l' },
		{ "threads", required_argument, NULL, 't' },
		{ "reps", required_argument, NULL, 'r' },
		{ "ops", required_argument, NULL, 'n' },
		{ "scale", required_argument, NULL, 'S' },
		{ "size", required_argument, NULL, 's' },
		{ "live", required_argument, NULL, OPT_LIVE },
		{ "no-count", no_argument, &run.no_count, 1 },
		{ "out", required_argument, NULL, 'o' },
		{ "no-plots", no_argument, &run.no_plots, 1 },
		{ "update-doc", required_argument, NULL, OPT_DOC },
		{ "programs", no_argument, &programs, 1 },
		{ "prog", required_argument, NULL, OPT_PROG },
		{ "smoke", no_argument, &run.smoke, 1 },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		/* from the driver to its children */
		{ "child", required_argument, NULL, OPT_CHILD },
		{ "tsc-hz", required_argument, NULL, OPT_TSC },
		{ NULL, 0, NULL, 0 },
	};
	const char *child = NULL, *prog = NULL;
	static char workload[64];
	bool ops_set = false, reps_set = false, scale_set = false;
	size_t n = strlen(argv[0]);
	int opt, err;

	run.smoke = n >= 6 && !strcmp(argv[0] + n - 6, "-smoke");
	/* the children get the command line as it was before parsing */
	run.argc = argc;
	run.argv = calloc((size_t)argc + 1, sizeof(char *));
	for (int i = 0; run.argv && i < argc; i++)
		run.argv[i] = strdup(argv[i]);
	/* peers first: every other option may name them */
	for (int i = 1; i < argc; i++) {
		const char *spec = !strncmp(argv[i], "--peer=", 7) ?
				   argv[i] + 7 : !strcmp(argv[i], "--peer") &&
				   i + 1 < argc ? argv[++i] : NULL;

		if (spec && (err = bench_add_peer(spec)))
			bench_die("--peer %s: %s", spec, err == -EEXIST ?
				  "the name is taken" : err == -ENOSPC ?
				  "too many peers" : "not NAME=/path/lib.so");
	}
	for (unsigned int i = 0; i < bench_nr_contenders; i++) {
		run.cs[i].c = &bench_contenders[i];
		run.cs[i].selected = !bench_contenders[i].exec_suffix;
	}
	run.nr_cs = bench_nr_contenders;
	memset(run.wl_selected, 1, sizeof(run.wl_selected));
	while ((opt = getopt_long(argc, argv, "w:c:lt:r:n:S:s:o:qh",
				  opts, NULL)) != -1) {
		switch (opt) {
		case 'w':
			snprintf(workload, sizeof(workload), "%s", optarg);
			bench_select(&run, optarg, true);
			break;
		case 'c':
			bench_select(&run, optarg, false);
			break;
		case 'l':
			bench_list();
			return 0;
		case 't':
			run.cfg.nr_thread_list = 0;
			for (char *t = strtok(optarg, ","); t &&
			     run.cfg.nr_thread_list < BENCH_MAX_LIST;
			     t = strtok(NULL, ","))
				run.cfg.thread_list[run.cfg.nr_thread_list++] =
					(unsigned int)bench_num("-t", t, 1,
						BENCH_MAX_THREADS);
			run.cfg.threads = run.cfg.thread_list[0];
			break;
		case 'r':
			run.reps = (unsigned int)bench_num("-r", optarg, 1,
							   BENCH_MAX_REPS);
			reps_set = true;
			break;
		case 'n':
			run.cfg.ops = (uint64_t)bench_num("-n", optarg, 1,
							  0x1p40);
			ops_set = true;
			break;
		case 'S':
			run.cfg.scale = bench_num("-S", optarg, 1e-6, 1e3);
			scale_set = true;
			break;
		case 's':
			run.cfg.size = (size_t)bench_num("-s", optarg, 8, 4096);
			break;
		case OPT_LIVE:
			run.cfg.live = (uint64_t)bench_num("--live", optarg, 1,
							0x1p32);
			break;
		case 'o':
			run.out_dir = optarg;
			break;
		case OPT_DOC:
			run.doc = optarg;
			break;
		case OPT_PROG:
			prog = optarg;
			break;
		case 'q':
			run.quiet = true;
			break;
		case 'h':
			fputs(bench_usage, stdout);
			return 0;
		case 0:
		case OPT_PEER:		/* a flag; the peers are taken */
			break;
		case OPT_CHILD:
			child = optarg;
			break;
		case OPT_TSC:
			run.cfg.tsc_hz = strtod(optarg, NULL);
			break;
		default:
			fputs(bench_usage, stderr);
			return 2;
		}
	}
	if (optind < argc)
		bench_die("unexpected argument '%s' (see --help)",
			  argv[optind]);
	if (run.doc && !run.out_dir)
		bench_die("--update-doc needs --out");
	if (programs) {
		struct bench_prog_opts po = {
			.out_dir = run.out_dir, .doc = run.doc, .only = prog,
			.srctree = run.srctree, .scale = run.smoke ? 0.01 :
			run.cfg.scale, .smoke = run.smoke,
			/*
			 * the workloads' default: with three runs, one run
			 * of a case disturbed by the machine moved its
			 * median (git read 1.41x glibc's in one such table,
			 * 1.23x with five; internals/benchmarks.md)
			 */
			.reps = run.smoke && !reps_set ? 1 : run.reps,
		};

		return bench_programs_main(&po);
	}
	if (run.smoke) {
		/* tiny counts; the rows beneath the hit path by -S */
		run.cfg.scale = scale_set ? run.cfg.scale : 0.001;
		run.cfg.ops = ops_set ? run.cfg.ops : 4000;
		run.reps = reps_set ? run.reps : 1;
		run.cfg.live = 20000;
		run.cfg.writes = 10;
		run.cfg.warmup = 0.25;
		run.quiet = true;
	}
	/* below -S 0.1 a quick look: realloc to 32 MiB, idle waits 3 s */
	run.cfg.grow_max = (run.smoke ? 2 : run.cfg.scale < 0.1 ? 32 : 256)
			   << 20;
	run.cfg.idle_max_s = run.smoke ? 1 : run.cfg.scale < 0.1 ? 3 : 30;
	if (child) {
		if (!workload[0] || run.cfg.tsc_hz == 0)
			bench_die("--child needs -w and --tsc-hz");
		return bench_child_main(&run.cfg, child, workload);
	}
	if (!run.argv)
		bench_die("out of memory");
	run.cfg.tsc_hz = bench_tick_hz();
	return bench_driver_main(&run);
}
