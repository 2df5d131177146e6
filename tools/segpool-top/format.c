// SPDX-License-Identifier: MIT
/*
 * tools/segpool-top/format.c - numbers for people.
 *
 * Binary units (K = 1024) as slabtop and free print them.  A column of the
 * list keeps one unit in every row (bytes, or K as slabtop's CACHE SIZE),
 * so its figures line up and compare at a glance; the detail views scale
 * each figure (one decimal below 100 of a unit, none above).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tools/segpool-top/top.h"

const char *top_fmt_bytes(char *buf, size_t len, uint64_t bytes)
{
	static const char units[] = "KMGTPE";
	double v = (double)bytes;
	int u = -1;

	if (bytes < 10000) {
		snprintf(buf, len, "%" PRIu64, bytes);
		return buf;
	}
	while (v >= 1024.0 && u < 5) {
		v /= 1024.0;
		u++;
	}
	snprintf(buf, len, v < 100.0 ? "%.1f%c" : "%.0f%c", v, units[u]);
	return buf;
}

const char *top_fmt_kib(char *buf, size_t len, uint64_t bytes)
{
	snprintf(buf, len, "%" PRIu64 "K", bytes / 1024 + (bytes % 1024 != 0));
	return buf;
}

const char *top_fmt_delta_kib(char *buf, size_t len, int64_t delta)
{
	uint64_t a = delta < 0 ? (uint64_t)0 - (uint64_t)delta :
				 (uint64_t)delta;

	if (!a)
		snprintf(buf, len, "0K");
	else
		snprintf(buf, len, "%c%" PRIu64 "K", delta < 0 ? '-' : '+',
			 a / 1024 + (a % 1024 != 0));
	return buf;
}

const char *top_fmt_kib2(char *buf, size_t len, double bytes)
{
	snprintf(buf, len, "%.2fK", bytes / 1024.0);
	return buf;
}

const char *top_fmt_delta(char *buf, size_t len, int64_t delta)
{
	char mag[32];
	uint64_t a;

	if (delta == 0) {
		snprintf(buf, len, "0");
		return buf;
	}
	a = delta < 0 ? (uint64_t)0 - (uint64_t)delta : (uint64_t)delta;
	snprintf(buf, len, "%c%s", delta < 0 ? '-' : '+',
		 top_fmt_bytes(mag, sizeof(mag), a));
	return buf;
}

const char *top_fmt_count(char *buf, size_t len, uint64_t v, int width)
{
	static const char units[] = "kMGTPE";
	int u = -1;

	snprintf(buf, len, "%" PRIu64, v);
	while ((int)strlen(buf) > width && u < 5) {
		v /= 1000;
		u++;
		snprintf(buf, len, "%" PRIu64 "%c", v, units[u]);
	}
	return buf;
}

const char *top_fmt_flags(char *buf, size_t len, uint32_t flags)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t b = 0; b < top_cache_nflags; b++) {
		int n;

		if (!(flags & (1U << b)))
			continue;
		n = snprintf(buf + used, len - used, "%s%s", used ? " " : "",
			     top_cache_flag_names[b]);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
	if (!used)
		snprintf(buf, len, "-");
	return buf;
}

const char *top_fmt_age(char *buf, size_t len, double seconds)
{
	if (seconds < 0)
		seconds = 0;
	if (seconds < 10)
		snprintf(buf, len, "%.1f s", seconds);
	else if (seconds < 120)
		snprintf(buf, len, "%.0f s", seconds);
	else if (seconds < 7200)
		snprintf(buf, len, "%.0f min", seconds / 60);
	else
		snprintf(buf, len, "%.0f h", seconds / 3600);
	return buf;
}
