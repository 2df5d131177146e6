// SPDX-License-Identifier: MIT
/*
 * tools/segpool-top/view_help.c - the keys (key h).
 */
#include "tools/segpool-top/top.h"

void top_view_help(struct top_ctx *ctx, struct top_screen *scr)
{
	static const char *const lines[] = {
		"",
		" q            quit (also ^C)",
		" h, ?         this help; any key goes back",
		"",
		" s            sort by cache size (slab memory), largest first",
		" o            sort by active objects, most first",
		" n            sort by name",
		" g            sort by growth of the cache size since the last refresh",
		" r            reverse the order",
		" e            hide or show caches without slabs",
		"",
		" up, down, j, k, PgUp, PgDn, Home, End    move the selection",
		" c, Enter     the selected cache in detail (c or Esc: back)",
		" N            the NUMA nodes: regions and memory per node",
		" space        refresh now",
		"",
		" Columns of the list: OBJS object slots in all slabs, ACTIVE objects",
		" the program holds, USE their share, OBJ SIZE bytes from one object",
		" to the next, SLABS all slabs, OBJ/SLAB objects in a slab, CACHE SIZE",
		" memory in slabs, GROWTH its change since the last refresh.",
		" Documentation/stats.md describes every figure.",
	};

	top_view_title(ctx, scr, "help");
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		top_scr_line(scr, TOP_A_NONE, "%s", lines[i]);
}
