// SPDX-License-Identifier: MIT
/*
 * tools/segpool-top/main.c - segpool-top: the one-shot dumps, exit status.
 *
 *   segpool-top [-p] PID [-d SECONDS] [-s KEY] [-b] [-n COUNT]  live
 *   segpool-top [-p] PID -o                  the table once (as slabtop -o)
 *   segpool-top [-p] PID --slabinfo | --json     a dump once
 *
 * options.c reads the command line.  Live, the view is full screen on a
 * terminal and plain frames otherwise.  The process is looked at before
 * the terminal is, so "no such process" comes first whatever the output
 * is.  Exit status: 0; 1 when the process is not there, does not export,
 * exports a layout this program does not read, or exits while watched; 2
 * for a usage error.  Killed by a signal, it restores the terminal and dies
 * of that signal.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tools/segpool-top/top.h"

/* --slabinfo and --json: one snapshot, printed, then exit. */
static int top_dump(int pid, bool json)
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
	char msg[TOP_MSG_LEN];
	struct top_opts o;

	if (top_parse_args(argc, argv, &o, msg, sizeof(msg))) {
		top_error("%s", msg);
		fprintf(stderr, "Try '%s --help' for more information.\n",
			TOP_PROG);
		return TOP_EXIT_USAGE;
	}
	switch (o.mode) {
	case TOP_RUN_HELP:
		top_usage(stdout);
		return TOP_EXIT_OK;
	case TOP_RUN_VERSION:
		top_version(stdout);
		return TOP_EXIT_OK;
	case TOP_RUN_SLABINFO:
	case TOP_RUN_JSON:
		return top_dump(o.pid, o.mode == TOP_RUN_JSON);
	case TOP_RUN_CTL:
		if (o.ctl_op == SEGPOOL_CTL_OP_TOP_SITES)
			return top_sites_request(o.pid, o.ctl_arg);
		return top_ctl_request(o.pid, o.ctl_op, o.ctl_arg, o.ctl_path);
	case TOP_RUN_WATCH:
	case TOP_RUN_ONCE:
		break;
	}
	return top_watch(&o);
}
