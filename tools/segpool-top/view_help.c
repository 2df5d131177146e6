// SPDX-License-Identifier: MIT
/*
 * tools/segpool-top/view_help.c - the keys (key h), from the tables that
 * drive them (rows.c's sort keys, keys.c's others), marked where slabtop
 * has the same key.
 */
#include "tools/segpool-top/top.h"

void top_view_help(struct top_ctx *ctx, struct top_screen *scr)
{
	static const char *const columns[] = {
		"",
		" Columns: OBJS object slots in all slabs, "
		"ACTIVE objects the program",
		" holds, USE their share, OBJ SIZE the size asked for, "
		"STRIDE bytes from",
		" one object to the next (bytes), SLABS all slabs, "
		"OBJ/SLAB objects in a",
		" slab, CACHE SIZE memory in slabs, "
		"GROWTH its change since the last",
		" refresh (K = 1024 bytes).  man segpool-top has it all.",
	};

	top_view_title(ctx, scr, "help");
	top_scr_line(scr, TOP_A_NONE, "%s", "");
	top_scr_line(scr, TOP_A_BOLD, " %-14s %-52s %s", "Sort key",
		     "Order (largest first; names A to Z)", "slabtop");
	for (int i = 0; i < TOP_SORT_NR; i++) {
		const struct top_sort_key *k = &top_sort_keys[i];
		char keys[16];

		if (k->slabtop)
			snprintf(keys, sizeof(keys), "%c, %c", k->key,
				 k->key - 'a' + 'A');
		else
			snprintf(keys, sizeof(keys), "%c", k->key);
		top_scr_line(scr, ctx->sort == (enum top_sort)i ? TOP_A_BOLD :
			     TOP_A_NONE, " %-14s %-52s %s", keys, k->what,
			     k->slabtop ? "same" : "-");
	}
	top_scr_line(scr, TOP_A_NONE, "%s", "");
	top_scr_line(scr, TOP_A_BOLD, " %-14s %-52s %s", "Key", "Does",
		     "slabtop");
	for (size_t i = 0; i < top_nkeys; i++)
		top_scr_line(scr, TOP_A_NONE, " %-14s %-52s %s",
			     top_keys[i].keys, top_keys[i].what,
			     top_keys[i].slabtop ? "same" : "-");
	for (size_t i = 0; i < sizeof(columns) / sizeof(columns[0]); i++)
		top_scr_line(scr, TOP_A_NONE, "%s", columns[i]);
}
