// SPDX-License-Identifier: MIT
/*
 * stats/arena.c - the arenas in the detail dump.
 *
 * After the caches, one block per arena, in creation order, in the form of
 * a cache's block: "arena <name>", then "<key> <value>" lines (node, flags
 * and the field list of arena/arena.h, SP_ARENA_FIELDS), then an empty
 * line.  The JSON rendering (stats/json.c) uses the same keys.
 */
#include "arena/arena.h"
#include "stats/snap.h"

static void sp_stats_arena_text(const struct sp_bump_snap *s, void *arg)
{
	struct sp_sbuf *b = arg;
	const char *names[8];
	size_t n =
		sp_bump_flag_names(s->info.flags, names, SP_ARRAY_SIZE(names));

	sp_sbuf_printf(b, "arena %s\n", s->name);
	sp_sbuf_printf(b, "node %d\n", s->info.node);
	sp_sbuf_names(b, "flags", names, n);
	for (size_t i = 0; i < sp_nr_bump_fields; i++)
		sp_sbuf_printf(
			b, "%s %llu\n", sp_bump_fields[i].name,
			(unsigned long long)sp_bump_fields[i].get(&s->info));
	sp_sbuf_putc(b, '\n');
}

void sp_stats_arenas_text(struct sp_sbuf *b)
{
	sp_bump_walk(sp_stats_arena_text, b);
}
