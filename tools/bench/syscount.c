// SPDX-License-Identifier: MIT
/*
 * tools/bench/syscount.c - how many mmap, munmap and mremap calls a run made.
 *
 * Counted by strace in a pass of its own (strace slows every call it
 * stops at, so no timed figure comes from such a run):
 *
 *  - a workload (driver.c): "strace -f -o FILE -e
 *    trace=mmap,munmap,mremap,write" runs the child; the child writes
 *    "segpool-bench:begin" and "segpool-bench:end" to fd -1 around its
 *    timed part (bench_sys_mark()), and the calls between the last such
 *    pair are counted, so the loader, the harness's own arrays and the
 *    warm-up run are left out;
 *
 *  - a real program (programs.c): "strace -f -c -o FILE" runs it, and the
 *    summary's "calls" column is read: the whole program, its children
 *    included.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/bench/bench.h"

const char *const bench_sys_names[BENCH_NR_SYS] = {
	[BENCH_SYS_MMAP] = "mmap",
	[BENCH_SYS_MUNMAP] = "munmap",
	[BENCH_SYS_MREMAP] = "mremap",
};

bool bench_strace_find(char *buf, size_t len)
{
	static const char *const where[] = { "/usr/bin/strace", "/bin/strace",
					     "/usr/local/bin/strace" };

	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++)
		if (access(where[i], X_OK) == 0) {
			snprintf(buf, len, "%s", where[i]);
			return true;
		}
	return false;
}

/* The call a trace line starts, after its pid: "mmap(", or -1. */
static int bench_sys_of_line(const char *line)
{
	while (*line >= '0' && *line <= '9')
		line++;
	while (*line == ' ')
		line++;
	for (int k = 0; k < BENCH_NR_SYS; k++) {
		size_t n = strlen(bench_sys_names[k]);

		if (!strncmp(line, bench_sys_names[k], n) && line[n] == '(')
			return k;
	}
	return -1;
}

int bench_syscount_marked(const char *path, long sys[BENCH_NR_SYS])
{
	long cur[BENCH_NR_SYS] = { 0 };
	bool in = false, done = false;
	char line[1024];
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		int k;

		if (strstr(line, "\"segpool-bench:begin\"")) {
			memset(cur, 0, sizeof(cur));
			in = true;
			continue;
		}
		if (strstr(line, "\"segpool-bench:end\"") && in) {
			memcpy(sys, cur, sizeof(cur));
			in = false;
			done = true;
			continue;
		}
		if (in && (k = bench_sys_of_line(line)) >= 0)
			cur[k]++;
		/* a long line: skip the rest of it */
		while (!strchr(line, '\n') && fgets(line, sizeof(line), f))
			;
	}
	fclose(f);
	return done ? 0 : -1;
}

int bench_syscount_summary(const char *path, long sys[BENCH_NR_SYS])
{
	char line[512];
	bool any = false;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	memset(sys, 0, BENCH_NR_SYS * sizeof(sys[0]));
	/* "% time  seconds  usecs/call  calls  [errors]  syscall" */
	while (fgets(line, sizeof(line), f)) {
		char *tok[8], *save = NULL;
		int n = 0;

		for (char *t = strtok_r(line, " \t\n", &save); t && n < 8;
		     t = strtok_r(NULL, " \t\n", &save))
			tok[n++] = t;
		if (n < 5 || n > 6)
			continue;
		if (!strcmp(tok[n - 1], "total"))
			any = true;
		for (int k = 0; k < BENCH_NR_SYS; k++)
			if (!strcmp(tok[n - 1], bench_sys_names[k])) {
				sys[k] = atol(tok[3]);
				any = true;
			}
	}
	fclose(f);
	return any ? 0 : -1;
}
