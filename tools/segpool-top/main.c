// SPDX-License-Identifier: MIT
/*
 * tools/segpool-top/main.c - segpool-top: options, one-shot modes, exit status.
 *
 *   segpool-top -p PID [-d SECONDS] [-n COUNT] [-s KEY]   full screen
 *   segpool-top -p PID -o                                 slabinfo 2.1, once
 *   segpool-top -p PID --json                             JSON, once
 *
 * Exit status: 0; 1 when the process is not there, does not export, exports
 * a layout this program does not read, or exits while watched; 2 for a
 * usage error.  Killed by a signal, it restores the terminal and dies of
 * that signal.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/segpool-top/top.h"

#define TOP_DEFAULT_DELAY	2.0
#define TOP_MIN_DELAY		0.1

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

static void top_usage(FILE *out)
{
	fprintf(out,
		"usage: %s -p PID [-d SECONDS] [-n COUNT] [-s KEY]\n"
		"       %s -p PID -o | --json\n"
		"\n"
		"Show the segpool caches of a running process, like slabtop.  The\n"
		"process must export its statistics: run it with SEGPOOL_EXPORT=1\n"
		"(SEGPOOL_EXPORT_INTERVAL_MS sets how often, default 1000), or have it\n"
		"call segpool_export_start().\n"
		"\n"
		"  -p, --pid PID        the process (a lone PID argument works too)\n"
		"  -d, --delay SECONDS  refresh every SECONDS (default %.0f, at least %.1f)\n"
		"  -n, --iterations N   stop after N snapshots shown\n"
		"  -s, --sort KEY       size, objects, name or growth (default size)\n"
		"  -o, --once           print the slabinfo 2.1 dump once and exit\n"
		"      --json           print the snapshot as JSON once and exit\n"
		"  -h, --help           this text\n"
		"  -V, --version        the export layout this program reads\n"
		"\n"
		"Keys: q quit, h help, s/o/n/g sort by size/objects/name/growth,\n"
		"r reverse, c or Enter the selected cache in detail, N NUMA nodes,\n"
		"up/down or j/k select, e hide empty caches.\n"
		"\n"
		"Exit status: 0; 1 when the process is missing, does not export, uses\n"
		"another layout version or exits while watched; 2 for a usage error.\n",
		TOP_PROG, TOP_PROG, TOP_DEFAULT_DELAY, TOP_MIN_DELAY);
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

/* -o and --json: one snapshot, printed, then exit. */
static int top_once(int pid, bool json)
{
	struct top_seg sg;
	struct top_snap snap = { 0 };
	char msg[TOP_MSG_LEN];
	enum top_status st;
	int ret = TOP_EXIT_OK;

	st = top_seg_open(&sg, pid, msg, sizeof(msg));
	if (st != TOP_OK) {
		top_error("%s", msg);
		return TOP_EXIT_TARGET;
	}
	st = top_snap_read(&sg, &snap, msg, sizeof(msg));
	if (st != TOP_OK) {
		top_error("%s", msg);
		ret = TOP_EXIT_TARGET;
	} else if (json ? top_print_json(stdout, &snap) :
			  top_print_slabinfo(stdout, &snap)) {
		top_error("cannot write: %s", strerror(errno));
		ret = TOP_EXIT_TARGET;
	}
	top_snap_free(&snap);
	top_seg_close(&sg);
	return ret;
}

int main(int argc, char **argv)
{
	enum { OPT_JSON = 0x100 };
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "delay", required_argument, NULL, 'd' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "sort", required_argument, NULL, 's' },
		{ "once", no_argument, NULL, 'o' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	enum top_sort sort = TOP_SORT_SIZE;
	double delay = TOP_DEFAULT_DELAY;
	unsigned long iterations = 0;
	bool once = false, json = false;
	int pid = 0, opt;
	char *end;

	while ((opt = getopt_long(argc, argv, "p:d:n:s:ohV", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (top_parse_pid(optarg, &pid)) {
				top_error("'%s' is not a pid", optarg);
				return TOP_EXIT_USAGE;
			}
			break;
		case 'd':
			errno = 0;
			delay = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(delay >= TOP_MIN_DELAY) ||
			    delay > 86400) {
				top_error("-d wants seconds, %.1f to 86400, not '%s'",
					  TOP_MIN_DELAY, optarg);
				return TOP_EXIT_USAGE;
			}
			break;
		case 'n':
			errno = 0;
			iterations = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || !iterations) {
				top_error("-n wants a positive count, not '%s'", optarg);
				return TOP_EXIT_USAGE;
			}
			break;
		case 's':
			if (top_sort_parse(optarg, &sort)) {
				top_error("-s wants size, objects, name or growth, "
					  "not '%s'", optarg);
				return TOP_EXIT_USAGE;
			}
			break;
		case 'o':
			once = true;
			break;
		case OPT_JSON:
			json = true;
			break;
		case 'h':
			top_usage(stdout);
			return TOP_EXIT_OK;
		case 'V':
			printf("%s reads segpool export layout version %u\n",
			       TOP_PROG, SEGPOOL_EXPORT_LAYOUT_VERSION);
			return TOP_EXIT_OK;
		default:
			top_usage(stderr);
			return TOP_EXIT_USAGE;
		}
	}
	if (!pid && optind == argc - 1 && !top_parse_pid(argv[optind], &pid))
		optind++;
	if (optind < argc) {
		top_error("unexpected argument '%s'", argv[optind]);
		return TOP_EXIT_USAGE;
	}
	if (!pid) {
		top_error("which process? give its pid with -p PID");
		top_usage(stderr);
		return TOP_EXIT_USAGE;
	}
	if (once && json) {
		top_error("-o and --json: choose one");
		return TOP_EXIT_USAGE;
	}
	if (once || json)
		return top_once(pid, json);
	return top_watch(pid, delay, iterations, sort);
}
