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

#define SP_BUG_ON(cond)							\
	do {								\
		if (unlikely(cond))					\
			sp_bug_at(__FILE__, __LINE__, "BUG_ON(%s)", #cond); \
	} while (0)

#endif /* SP_INTERNAL_REPORT_H */
