/* SPDX-License-Identifier: MIT */
/*
 * selftests/lib/stats_parse.h - the statistics text renderings read back
 * as a tool reads them: the slabinfo dump (segpool_stats_dump()) row by row
 * with sscanf(), the detail and health blocks (segpool_stats_dump_detail(),
 * segpool_stats_health()) as "key value" lines.  The JSON document has its
 * own parser, selftests/lib/json.h.
 *
 * Functions that say they fail the test call cmocka's fail_msg(): only in
 * the thread running the cmocka test.
 */
#ifndef SP_SELFTESTS_LIB_STATS_PARSE_H
#define SP_SELFTESTS_LIB_STATS_PARSE_H

#include <stdbool.h>
#include <stddef.h>

/* --- capturing an output ------------------------------------------------ */

enum sp_stats_what {
	SP_STATS_SLABINFO,	/* segpool_stats_dump() */
	SP_STATS_DETAIL,	/* segpool_stats_dump_detail(, cache, 0) */
	SP_STATS_DETAIL_PERCPU,	/* the same with SEGPOOL_STATS_PERCPU */
	SP_STATS_HEALTH,	/* segpool_stats_health() */
	SP_STATS_JSON,		/* segpool_stats_json(, 0) */
	SP_STATS_JSON_PERCPU,	/* the same with SEGPOOL_STATS_PERCPU */
};

/*
 * sp_stats_capture() - the output of one statistics call (@cache for the
 * detail ones, NULL: every cache), NUL-terminated, malloc'ed; fails the
 * test when the call does not return 0.
 */
char *sp_stats_capture(enum sp_stats_what w, const char *cache);

/* --- slabinfo ----------------------------------------------------------- */

#define SP_SLABINFO_VERSION	"slabinfo - version: 2.1"
#define SP_SLABINFO_HEADER						\
	"# name            <active_objs> <num_objs> <objsize> "	\
	"<objperslab> <pagesperslab> : tunables <limit> <batchcount> "	\
	"<sharedfactor> : slabdata <active_slabs> <num_slabs> <sharedavail>"

struct sp_slabinfo_row {
	char name[64];
	unsigned long long active, num, objsize, perslab, pages;
	unsigned long long limit, batch, shared;
	unsigned long long active_slabs, slabs, sharedavail;
};

/* Parse one row as a slabinfo reader does; false when it does not parse. */
bool sp_slabinfo_parse_row(const char *line, struct sp_slabinfo_row *r);

/*
 * sp_slabinfo_check() - check a whole dump @text (cut up in place): the
 * two fixed lines, then rows that parse and hold together (active <= num,
 * num = slabs * perslab, the geometry fits the slab, limit = 2 * batch);
 * fails the test otherwise.  The row of @name goes to *@want when @name is
 * set (exactly one must be there).
 * Return: the number of rows.
 */
int sp_slabinfo_check(char *text, const char *name,
		      struct sp_slabinfo_row *want);

/* sp_slabinfo_row() - the checked row of cache @name in a fresh dump. */
struct sp_slabinfo_row sp_slabinfo_row(const char *name);

/*
 * sp_slabinfo_find() - the row of cache @name in a fresh dump into *@r,
 * without checking the other rows.
 * Return: false when the dump failed or has no such row.
 */
bool sp_slabinfo_find(const char *name, struct sp_slabinfo_row *r);

/*
 * sp_slabinfo_sum_active() - the active_objs of every row whose name
 * starts with @prefix, summed, from a fresh dump (fails the test when the
 * dump fails).
 */
unsigned long long sp_slabinfo_sum_active(const char *prefix);

/* --- detail ------------------------------------------------------------- */

/*
 * sp_detail_get() - the line of @key in the block of cache @name (or of
 * "health" when @name is NULL) of detail @text: the value's first word into
 * @val, the rest (the split) into @rest.  False when the key is not there;
 * fails the test when the block is missing or the key is there twice.
 */
bool sp_detail_get(const char *text, const char *name, const char *key,
		   char *val, size_t vsize, char *rest, size_t rsize);

/* sp_detail_num() - @key's value as a number (fails the test otherwise). */
unsigned long long sp_detail_num(const char *text, const char *name,
				 const char *key);

/* sp_detail_str() - @key's value word, in a static buffer. */
const char *sp_detail_str(const char *text, const char *name,
			  const char *key);

/*
 * sp_detail_split() - the "<tag><id>=<value>" entries after @key's total:
 * their sum, the value of @id into *@at (0 when absent), how many entries
 * into *@count.
 */
unsigned long long sp_detail_split(const char *text, const char *name,
				   const char *key, char tag, int id,
				   unsigned long long *at, int *count);

#endif /* SP_SELFTESTS_LIB_STATS_PARSE_H */
