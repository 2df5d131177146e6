/* SPDX-License-Identifier: MIT */
/*
 * internal/report.h - how segpool tells the user something went wrong.
 *
 * sp_report_bad_free(): caller misuse that would corrupt memory; one line
 *   "segpool: <what> <address> (cache <name>)" on stderr, then abort().
 * sp_bug(): internal corruption; names file:line, then abort().
 * sp_warn(): a condition the caller should know of; the process goes on.
 *
 * All three write with write(2) into a stack buffer: no stdio locks, no
 * allocation, so they are safe from inside the allocator.
 */
#ifndef SP_INTERNAL_REPORT_H
#define SP_INTERNAL_REPORT_H

#include "internal/compiler.h"

SP_INTERNAL __sp_cold __sp_noreturn void
sp_report_bad_free(const char *what, const void *addr, const char *cache);

SP_INTERNAL __sp_cold __sp_noreturn __sp_printf(3, 4) void
sp_bug_at(const char *file, int line, const char *fmt, ...);

SP_INTERNAL __sp_cold __sp_printf(1, 2) void sp_warn(const char *fmt, ...);

#define sp_bug(...)	sp_bug_at(__FILE__, __LINE__, __VA_ARGS__)

/*
 * Report blocks: the multi-line reports of the debug caches (slab/debug.c)
 * are built in a struct sp_rbuf on the caller's stack and written with as
 * few write(2) calls as fit (one for a block of normal size), so blocks of
 * two threads do not interleave line by line.  Every line starts with
 * "segpool: ".  With @file set, the lines go to that stdio stream instead;
 * with a @sink set (sp_rbuf_init_sink()), each flush hands the bytes to it
 * instead, so that a report formatted under a lock is written after it.
 */
struct sp_rbuf {
	void *file;			/* FILE *, or NULL for
					 * write(2) to fd 2 */
	void (*sink)(void *arg, const char *text, size_t len);
	void *sink_arg;
	size_t len;			/* bytes used in @buf */
	char buf[6144];
};

SP_INTERNAL void sp_rbuf_init(struct sp_rbuf *b, void *file);
SP_INTERNAL void sp_rbuf_init_sink(struct sp_rbuf *b,
				   void (*sink)(void *, const char *, size_t),
				   void *arg);
/* sp_report_text() - @len bytes of @text to @file (a FILE *), or to fd 2. */
SP_INTERNAL void sp_report_text(void *file, const char *text, size_t len);
/* sp_rbuf_line() - one line: "segpool: " + the format + a newline. */
SP_INTERNAL __sp_printf(2, 3) void sp_rbuf_line(struct sp_rbuf *b,
						const char *fmt, ...);
/* sp_rbuf_bytes() - "segpool:   <label> xx xx ..." for @n bytes at @p. */
SP_INTERNAL void sp_rbuf_bytes(struct sp_rbuf *b, const char *label,
			       const unsigned char *p, size_t n);
/*
 * sp_rbuf_frames() - one line per return address, "    #i 0x... sym+off
 * (module)" or "    #i 0x... (module+offset)", symbolized with dladdr().
 */
SP_INTERNAL void sp_rbuf_frames(struct sp_rbuf *b, void *const *addrs,
				unsigned int n);
/* sp_rbuf_flush() - write out what is buffered. */
SP_INTERNAL void sp_rbuf_flush(struct sp_rbuf *b);

#define SP_BUG_ON(cond)							\
	do {								\
		if (unlikely(cond))					\
			sp_bug_at(__FILE__, __LINE__, "BUG_ON(%s)", #cond); \
	} while (0)

#endif /* SP_INTERNAL_REPORT_H */
