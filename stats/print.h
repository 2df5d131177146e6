/* SPDX-License-Identifier: MIT */
/*
 * stats/print.h - the print of statistics at exit (stats/print.c).
 */
#ifndef SP_STATS_PRINT_H
#define SP_STATS_PRINT_H

#include <stddef.h>

#include "internal/compiler.h"

/* The settings, validated by sp_stats_print_configure(). */
#define SP_STATS_PRINT_ENV	"SEGPOOL_STATS_PRINT"
#define SP_STATS_PRINT_FILE_ENV	"SEGPOOL_STATS_PRINT_FILE"

/*
 * sp_stats_print_parse() - a SEGPOOL_STATS_PRINT value into
 * segpool_stats_print() options (0: print nothing).  Return: 0 or -EINVAL.
 */
SP_INTERNAL int sp_stats_print_parse(const char *s, unsigned int *opts);

/* "unused" in SEGPOOL_STATS_PRINT: list the caches that never held an
 * object instead of folding them into one line (not a public option). */
#define SP_STATS_PRINT_UNUSED	(1U << 30)

/*
 * sp_stats_path_expand() - @pattern with %p replaced by @pid and %% by %,
 * into @out.  Return: 0, -EINVAL (empty, or another %-sequence) or
 * -ENAMETOOLONG.
 */
SP_INTERNAL int sp_stats_path_expand(const char *pattern, int pid, char *out,
				     size_t len);

/*
 * sp_stats_print_configure() - print @sections (a SEGPOOL_STATS_PRINT
 * value; NULL: leave as it is) at exit to the file @file names (NULL, ""
 * or "-": standard error).  A value that is not understood is reported
 * and disables the print.  Return: 0 or a negative errno.
 * Context: initialisation, or a test's single thread.
 */
SP_INTERNAL int sp_stats_print_configure(const char *sections,
					 const char *file);

/* Read the settings from the environment (from sp_init()). */
SP_INTERNAL void sp_stats_print_init(void);

/*
 * sp_stats_print_request() - the malloc replacement's stats_print: print
 * @sections at exit as SEGPOOL_STATS_PRINT would, unless that is set (then
 * it decides, and the print happens once).  Return: 0 or a negative errno.
 * Context: after sp_init(), single-threaded start-up.
 */
SP_INTERNAL int sp_stats_print_request(const char *sections);

#endif /* SP_STATS_PRINT_H */
