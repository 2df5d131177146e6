// SPDX-License-Identifier: MIT
/*
 * tools/segpool-top/options.c - the command line.
 *
 * procps slabtop's options with slabtop's meanings:
 *
 *   -d, --delay N    refresh every N seconds (default 3; not with -o)
 *   -o, --once       show the table once and exit
 *   -s, --sort S     order by S: one of slabtop's letters (rows.c)
 *   -h, --help       usage; -V, --version
 *
 * and segpool-top's own: -p PID (or a lone PID argument), -n COUNT, -b
 * (plain frames even on a terminal; without a terminal they are the
 * default), --slabinfo and --json (one dump, then exit).  Words work for
 * -s too ("-s cachesize").
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <segpool/segpool.h>

#include "tools/segpool-top/top.h"

void top_error(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", TOP_PROG);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void top_usage(FILE *out)
{
	fprintf(out,
		"usage: %s [-p] PID [-d SECONDS] [-s KEY] [-o | -b [-n "
		"COUNT]]\n"
		"       %s [-p] PID --slabinfo | --json\n"
		"       %s [-p] PID --shrink | --validate | --heap-profile "
		"FILE |\n"
		"                   --set NAME=VALUE | --sites[=N]\n"
		"\n"
		"Show the segpool caches of a running process, "
		"like slabtop.  The\n"
		"process must export its statistics: "
		"run it with SEGPOOL_EXPORT=1\n"
		"(SEGPOOL_EXPORT_INTERVAL_MS sets how often, default 1000), "
		"or have it\n"
		"call segpool_export_start().\n"
		"\n"
		"  -p, --pid PID        the process (a lone PID argument works "
		"too)\n"
		"  -d, --delay SECONDS  refresh every SECONDS (default %.0f, "
		"at least %.1f)\n"
		"  -s, --sort KEY       order by KEY, "
		"a slabtop sort letter (below)\n"
		"  -o, --once           print the table once and exit\n"
		"  -b, --batch          plain frames, "
		"one per refresh (the default when\n"
		"                       standard output is not a terminal)\n"
		"  -n, --iterations N   stop after N frames\n"
		"      --slabinfo       print the slabinfo 2.1 dump once and "
		"exit\n"
		"      --json           print the statistics JSON document "
		"once and exit\n"
		"      --shrink         ask the process to shrink every cache\n"
		"      --validate       ask it to validate every cache\n"
		"      --heap-profile FILE  ask it to write its heap profile "
		"to FILE\n"
		"      --set NAME=VALUE ask it to change a tunable: "
		"decay-ms=MS (-1:\n"
		"                       never) or memory-limit=BYTES (K, M, G; "
		"0: none)\n"
		"      --sites[=N]      show its top N call sites (N: %d,\n"
		"                       at most %d) by sampled bytes in use\n"
		"                       (SEGPOOL_HEAP_PROFILE)\n"
		"  -h, --help           this text\n"
		"  -V, --version        the release, and the export layout it "
		"reads\n"
		"\n"
		"Sort keys (-s and while running; slabtop's in either case):\n",
		TOP_PROG, TOP_PROG, TOP_PROG, TOP_DEFAULT_DELAY, TOP_MIN_DELAY,
		TOP_SITES_DEFAULT, SEGPOOL_CTL_SITES_MAX);
	for (int i = 0; i < TOP_SORT_NR; i++)
		fprintf(out, "  %c %c  %-12s %s\n", top_sort_keys[i].slabtop ?
			' ' : '*', top_sort_keys[i].key, top_sort_keys[i].word,
			top_sort_keys[i].what);
	fprintf(out, "\nOther keys:\n");
	for (size_t i = 0; i < top_nkeys; i++)
		fprintf(out, "  %c %-16s %s\n", top_keys[i].slabtop ? ' ' : '*',
			top_keys[i].keys, top_keys[i].what);
	fprintf(out,
		"\n"
		"* segpool-top's own, on keys slabtop leaves free; "
		"the others are\n"
		"slabtop's, with slabtop's meaning.\n"
		"\n"
		"A request is served by the process's export thread; "
		"only the user\n"
		"the process runs as may ask.  Its answer is printed.\n"
		"\n"
		"Exit status: 0; 1 when the process is missing, "
		"does not export, uses\n"
		"another layout version or exits while watched, "
		"or refused or failed\n"
		"a request; 2 for a usage error.\n");
}

void top_version(FILE *out)
{
	fprintf(out, "%s (segpool) %s\n"
		"reads the export layout version %u\n", TOP_PROG,
		SEGPOOL_VERSION_STRING, SEGPOOL_EXPORT_LAYOUT_VERSION);
}

static int top_parse_pid(const char *s, int *pid)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > 0x3fffffff)
		return -1;
	*pid = (int)v;
	return 0;
}

static int top_bad(char *msg, size_t len, const char *fmt, ...)
	TOP_PRINTF(3, 4);
static int top_bad(char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
	return TOP_EXIT_USAGE;
}

static int top_set_mode(struct top_opts *o, enum top_run mode, char *msg,
			size_t len)
{
	static const char *const names[] = {
		[TOP_RUN_ONCE] = "-o", [TOP_RUN_SLABINFO] = "--slabinfo",
		[TOP_RUN_JSON] = "--json",
		[TOP_RUN_CTL] = "a request (--shrink, --validate, "
				"--heap-profile, --set, --sites)",
	};

	if (o->mode != TOP_RUN_WATCH && o->mode != mode)
		return top_bad(msg, len, "%s and %s: choose one",
			       names[o->mode], names[mode]);
	o->mode = mode;
	return 0;
}

/* The long options without a letter. */
enum { OPT_JSON = 0x100, OPT_SLABINFO, OPT_SHRINK, OPT_VALIDATE,
       OPT_HEAP_PROFILE, OPT_SET, OPT_SITES };

/* A request's option @opt and its @arg into @o. */
static int top_parse_request(int opt, const char *arg, struct top_opts *o,
			     char *msg, size_t len)
{
	char cwd[SEGPOOL_CTL_PATH_MAX], *end;
	int n;

	switch (opt) {
	case OPT_SHRINK:
		o->ctl_op = SEGPOOL_CTL_OP_SHRINK;
		return 0;
	case OPT_VALIDATE:
		o->ctl_op = SEGPOOL_CTL_OP_VALIDATE;
		return 0;
	case OPT_HEAP_PROFILE:
		o->ctl_op = SEGPOOL_CTL_OP_HEAP_PROFILE;
		/* the process's working directory is not ours: absolute */
		if (!arg[0])
			return top_bad(msg, len, "--heap-profile wants a file");
		if (arg[0] == '/')
			n = snprintf(o->ctl_path, sizeof(o->ctl_path), "%s",
				     arg);
		else if (getcwd(cwd, sizeof(cwd)))
			n = snprintf(o->ctl_path, sizeof(o->ctl_path), "%s/%s",
				     cwd, arg);
		else
			return top_bad(msg, len, "--heap-profile %s: cannot "
				       "tell the working directory", arg);
		if (n < 0 || (size_t)n >= sizeof(o->ctl_path))
			return top_bad(msg, len, "--heap-profile: the path is "
				       "longer than %d bytes",
				       SEGPOOL_CTL_PATH_MAX - 1);
		return 0;
	case OPT_SITES:
		o->ctl_op = SEGPOOL_CTL_OP_TOP_SITES;
		o->ctl_arg = TOP_SITES_DEFAULT;
		if (!arg)
			return 0;
		errno = 0;
		o->ctl_arg = strtoll(arg, &end, 10);
		if (errno || end == arg || *end || o->ctl_arg < 1 ||
		    o->ctl_arg > SEGPOOL_CTL_SITES_MAX)
			return top_bad(msg, len, "--sites wants a count, 1 "
				       "to %d, not '%s'", SEGPOOL_CTL_SITES_MAX,
				       arg);
		return 0;
	default:
		if (top_ctl_parse_set(arg, &o->ctl_op, &o->ctl_arg, msg, len))
			return TOP_EXIT_USAGE;
		return 0;
	}
}

int top_parse_args(int argc, char **argv, struct top_opts *o, char *msg,
		   size_t len)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "delay", required_argument, NULL, 'd' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "sort", required_argument, NULL, 's' },
		{ "once", no_argument, NULL, 'o' },
		{ "batch", no_argument, NULL, 'b' },
		{ "slabinfo", no_argument, NULL, OPT_SLABINFO },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "shrink", no_argument, NULL, OPT_SHRINK },
		{ "validate", no_argument, NULL, OPT_VALIDATE },
		{ "heap-profile", required_argument, NULL, OPT_HEAP_PROFILE },
		{ "set", required_argument, NULL, OPT_SET },
		{ "sites", optional_argument, NULL, OPT_SITES },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int opt, ret;

	memset(o, 0, sizeof(*o));
	o->delay = TOP_DEFAULT_DELAY;
	o->sort = TOP_SORT_DEFAULT;
	msg[0] = '\0';
	/* 0, not 1: glibc starts afresh (a second parse) */
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":p:d:n:s:obhV", longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (top_parse_pid(optarg, &o->pid))
				return top_bad(msg, len, "'%s' is not a pid",
					       optarg);
			break;
		case 'd':
			errno = 0;
			o->delay = strtod(optarg, &end);
			if (errno || end == optarg || *end ||
			    !(o->delay >= TOP_MIN_DELAY) || o->delay > 86400)
				return top_bad(msg, len,
					       "-d wants seconds, %.1f to "
					       "86400, not '%s'",
					       TOP_MIN_DELAY, optarg);
			o->delay_given = true;
			break;
		case 'n':
			errno = 0;
			o->iterations = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || !o->iterations ||
			    optarg[0] == '-')
				return top_bad(msg, len, "-n wants a positive "
					       "count, not '%s'", optarg);
			break;
		case 's':
			if (top_sort_parse(optarg, &o->sort))
				return top_bad(msg, len, "-s wants a sort key "
					       "(a b c l v n o p s u g, or its "
					       "word), not '%s'", optarg);
			break;
		case 'o':
			ret = top_set_mode(o, TOP_RUN_ONCE, msg, len);
			if (ret)
				return ret;
			break;
		case 'b':
			o->batch = true;
			break;
		case OPT_SLABINFO:
			ret = top_set_mode(o, TOP_RUN_SLABINFO, msg, len);
			if (ret)
				return ret;
			break;
		case OPT_JSON:
			ret = top_set_mode(o, TOP_RUN_JSON, msg, len);
			if (ret)
				return ret;
			break;
		case OPT_SHRINK:
		case OPT_VALIDATE:
		case OPT_HEAP_PROFILE:
		case OPT_SET:
		case OPT_SITES:
			ret = top_set_mode(o, TOP_RUN_CTL, msg, len);
			if (!ret && o->ctl_op)
				ret = top_bad(msg, len,
					      "one request at a time");
			if (ret)
				return ret;
			ret = top_parse_request(opt, optarg, o, msg, len);
			if (ret)
				return ret;
			break;
		case 'h':
			o->mode = TOP_RUN_HELP;
			return 0;
		case 'V':
			o->mode = TOP_RUN_VERSION;
			return 0;
		case ':':
			return top_bad(msg, len, "option '%s' wants a value",
				       argv[optind - 1]);
		default:
			/* "-oz": name the letter, not the word it sits in */
			if (optopt)
				return top_bad(msg, len, "unknown option '-%c'",
					       optopt);
			return top_bad(msg, len, "unknown option '%s'",
				       argv[optind - 1]);
		}
	}
	/* a lone PID: the first operand; any after it is the extra one */
	if (!o->pid && optind < argc && !top_parse_pid(argv[optind], &o->pid))
		optind++;
	if (optind < argc)
		return top_bad(msg, len, "unexpected argument '%s'%s",
			       argv[optind],
			       o->pid ? " (one process at a time)" : "");
	if (!o->pid)
		return top_bad(msg, len,
			       "which process? give its pid with -p PID");
	/* as slabtop: a delay means nothing for one frame */
	if (o->delay_given && o->mode == TOP_RUN_ONCE)
		return top_bad(msg, len, "-d cannot be combined with -o");
	if (o->iterations && o->mode != TOP_RUN_WATCH)
		return top_bad(msg, len,
			       "-n goes with the live view, not with a "
			       "one-shot dump");
	return 0;
}
