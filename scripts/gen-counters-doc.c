// SPDX-License-Identifier: MIT
/*
 * scripts/gen-counters-doc.c - the per-CPU counter tables of
 * Documentation/reference/stats-keys.md and stats-json.md, generated from
 * SEGPOOL_PCPU_COUNTERS() (include/segpool/counters.h) by make docs; make
 * check-docs compares.  Built and run on the build machine; it needs only
 * the public header.
 *
 * Usage: gen-counters-doc < page.md > page.md.new
 * Copies its input, replacing what lies between each pair of marker lines
 *	<!-- generated:counters begin -->	... end -->	(stats-keys.md)
 *	<!-- generated:counters-json begin -->	... end -->	(stats-json.md)
 * with the table of that name.  An input with no marker pair, or with one
 * left open, is an error.
 */
#include <stdio.h>
#include <string.h>

#include <segpool/counters.h>

struct ctr {
	const char *key;
	const char *unit;
	const char *doc;
	int exported;		/* the export record has it */
};

#define CTR_EXPORTED_SEGPOOL_CTR_HIT		1
#define CTR_EXPORTED_SEGPOOL_CTR_INFO		1
#define CTR_EXPORTED_SEGPOOL_CTR_EXPORT		1
#define CTR_EXPORTED_SEGPOOL_CTR_LIBRARY	0
#define CTR(key, id, class, unit, doc)					\
	{ #key, unit, doc, CTR_EXPORTED_##class },
static const struct ctr ctrs[] = {
	SEGPOOL_PCPU_COUNTERS(CTR)
};
#undef CTR
#define NR_CTRS		(sizeof(ctrs) / sizeof(ctrs[0]))

static void table_counters(void)
{
	puts("| Key | Unit | Meaning |");
	puts("|-----|------|---------|");
	for (size_t i = 0; i < NR_CTRS; i++)
		printf("| `%s` | %s | %s |\n", ctrs[i].key, ctrs[i].unit,
		       ctrs[i].doc);
}

static void table_json(void)
{
	puts("| Path | Type | In | Meaning |");
	puts("|------|------|----|---------|");
	for (size_t i = 0; i < NR_CTRS; i++)
		/* every counter: a record field or the key table's */
		printf("| `caches[].%s` | integer | both | %s (counter) |\n",
		       ctrs[i].key, ctrs[i].doc);
	for (size_t i = 0; i < NR_CTRS; i++)
		printf("| `caches[].cpus[].%s` | integer | library | as the "
		       "cache's, in this slot (counter) |\n", ctrs[i].key);
}

static const struct {
	const char *name;
	void (*print)(void);
} tables[] = {
	{ "counters", table_counters },
	{ "counters-json", table_json },
};

/* The table whose begin marker @line is, or -1. */
static int begin_of(const char *line)
{
	char m[96];

	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		snprintf(m, sizeof(m), "<!-- generated:%s begin",
			 tables[i].name);
		if (!strncmp(line, m, strlen(m)) &&
		    (line[strlen(m)] == ' ' || line[strlen(m)] == '-'))
			return (int)i;
	}
	return -1;
}

int main(void)
{
	char line[4096], end[96];
	int open = -1, done = 0;

	while (fgets(line, sizeof(line), stdin)) {
		if (open < 0) {
			int t = begin_of(line);

			fputs(line, stdout);
			if (t >= 0) {
				open = t;
				tables[t].print();
				snprintf(end, sizeof(end),
					 "<!-- generated:%s end",
					 tables[t].name);
			}
		} else if (!strncmp(line, end, strlen(end))) {
			fputs(line, stdout);
			open = -1;
			done++;
		}
	}
	if (open >= 0) {
		fprintf(stderr, "gen-counters-doc: no end marker for '%s'\n",
			tables[open].name);
		return 1;
	}
	if (!done) {
		fprintf(stderr, "gen-counters-doc: no generated:counters "
			"markers in the input\n");
		return 1;
	}
	return 0;
}
