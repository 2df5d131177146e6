// SPDX-License-Identifier: MIT
/*
 * internal/report.c - error reports that are safe inside the allocator.
 *
 * Everything goes through one stack buffer and one write(2): no stdio, no
 * allocation, no lock, so a report from inside a locked slow path (or from a
 * child after fork) cannot deadlock or recurse into segpool.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal/report.h"

static void sp_write_all(const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(STDERR_FILENO, buf, len);

		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

static __sp_printf(1, 0) void sp_vreport(const char *fmt, va_list ap)
{
	char buf[512];
	int n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);

	if (n < 0)
		return;
	if ((size_t)n > sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	sp_write_all(buf, (size_t)n);
}

static __sp_printf(1, 2) void sp_report(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sp_vreport(fmt, ap);
	va_end(ap);
}

void sp_report_bad_free(const char *what, const void *addr, const char *cache)
{
	sp_report("segpool: %s %p (cache %s)", what, addr, cache ? cache : "none");
	abort();
}

void sp_bug_at(const char *file, int line, const char *fmt, ...)
{
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sp_report("segpool: internal error at %s:%d: %s", file, line, msg);
	abort();
}

void sp_warn(const char *fmt, ...)
{
	char msg[448];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sp_report("segpool: %s", msg);
}
