// SPDX-License-Identifier: MIT
/*
 * os/cpu.c - CPU enumeration.
 *
 * Per-CPU arrays are indexed by the kernel's CPU id, which is what rseq's
 * cpu_id and sched_getcpu() return; ids run up to the highest *possible* CPU,
 * so arrays are sized from the possible list, which also covers CPUs brought
 * online later.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "os/cpu.h"

int sp_cpu_parse_list(const char *list)
{
	const char *p = list;
	long max = -1;

	while (*p && *p != '\n') {
		char *end;
		long a = strtol(p, &end, 10), b;

		if (end == p || a < 0)
			return -1;
		b = a;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a)
				return -1;
			p = end;
		}
		if (b > max)
			max = b;
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -1;
	}
	return max > 1L << 20 ? -1 : (int)max;
}

int sp_cpu_possible_count(void)
{
	char buf[4096];
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	int max = -1;
	long n;

	if (f) {
		if (fgets(buf, sizeof(buf), f))
			max = sp_cpu_parse_list(buf);
		fclose(f);
	}
	if (max >= 0)
		return max + 1;
	n = sysconf(_SC_NPROCESSORS_CONF);
	return n > 0 ? (int)n : 1;
}
