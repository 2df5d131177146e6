// SPDX-License-Identifier: MIT
/*
 * internal/report.c - error reports that are safe inside the allocator.
 *
 * Everything goes through one stack buffer and one write(2): no stdio, no
 * allocation, no lock, so a report from inside a locked slow path (or from a
 * child after fork) cannot deadlock or recurse into segpool.
 *
 * The report blocks of the debug caches (struct sp_rbuf) follow the same
 * rule with a larger stack buffer; only the stack frames they print take a
 * lock of the C library (the dynamic loader's, in dladdr()), never one of
 * segpool's.  A block written to a stdio stream (segpool_cache_leaks())
 * takes that stream's lock.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	sp_report("segpool: %s %p (cache %s)", what, addr,
		  cache ? cache : "none");
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

/* --- report blocks ------------------------------------------------------ */

void sp_rbuf_init(struct sp_rbuf *b, void *file)
{
	b->file = file;
	b->sink = NULL;
	b->sink_arg = NULL;
	b->len = 0;
}

void sp_rbuf_init_sink(struct sp_rbuf *b,
		       void (*sink)(void *, const char *, size_t), void *arg)
{
	sp_rbuf_init(b, NULL);
	b->sink = sink;
	b->sink_arg = arg;
}

void sp_report_text(void *file, const char *text, size_t len)
{
	if (!len)
		return;
	if (file) {
		fwrite(text, 1, len, file);
		fflush(file);
	} else {
		sp_write_all(text, len);
	}
}

void sp_rbuf_flush(struct sp_rbuf *b)
{
	if (!b->len)
		return;
	if (b->sink)
		b->sink(b->sink_arg, b->buf, b->len);
	else
		sp_report_text(b->file, b->buf, b->len);
	b->len = 0;
}

static __sp_printf(2, 0) void sp_rbuf_vline(struct sp_rbuf *b, const char *fmt,
					    va_list ap)
{
	char line[512];
	int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);

	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (b->len + (size_t)n + 9 > sizeof(b->buf))
		sp_rbuf_flush(b);
	memcpy(b->buf + b->len, "segpool: ", 9);
	memcpy(b->buf + b->len + 9, line, (size_t)n);
	b->len += (size_t)n + 9;
}

void sp_rbuf_line(struct sp_rbuf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sp_rbuf_vline(b, fmt, ap);
	va_end(ap);
}

void sp_rbuf_bytes(struct sp_rbuf *b, const char *label,
		   const unsigned char *p, size_t n)
{
	char hex[16 * 3 + 1];
	size_t len = 0;

	for (size_t i = 0; i < n && i < 16; i++)
		len += (size_t)snprintf(hex + len, sizeof(hex) - len, " %02x",
					p[i]);
	hex[len] = '\0';
	sp_rbuf_line(b, "  %-9s%s", label, hex);
}

void sp_rbuf_frames(struct sp_rbuf *b, void *const *addrs, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		Dl_info info;
		uintptr_t a = (uintptr_t)addrs[i];

		if (!dladdr(addrs[i], &info) || !info.dli_fname) {
			sp_rbuf_line(b, "    #%u %#lx", i, (unsigned long)a);
		} else if (info.dli_sname && info.dli_saddr) {
			sp_rbuf_line(
				b, "    #%u %#lx %s+%#lx (%s)", i,
				(unsigned long)a, info.dli_sname,
				(unsigned long)(a - (uintptr_t)info.dli_saddr),
				info.dli_fname);
		} else {
			sp_rbuf_line(
				b, "    #%u %#lx (%s+%#lx)", i,
				(unsigned long)a, info.dli_fname,
				(unsigned long)(a - (uintptr_t)info.dli_fbase));
		}
	}
}
