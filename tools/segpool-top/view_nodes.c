// SPDX-License-Identifier: MIT
/*
 * tools/segpool-top/view_nodes.c - the NUMA nodes (key m).
 *
 * First each node's memory region: whether it is bound to its node, how
 * much address space it reserved, committed and handed out, how much is
 * free but resident (retained, waiting for the decay), given back to the
 * OS so far and backed by huge pages, and the slabs,
 * objects and slab memory of every cache on it.  Then, for the caches in
 * the list's order (without the empty ones), the slab memory each holds on
 * each node, as many nodes as fit across.  Every memory column is in K,
 * as the list's CACHE SIZE, so figures line up.
 */
#include "tools/segpool-top/top.h"

#define TOP_NODE_COL	10		/* width of one node's column */

static void top_nodes_regions(struct top_ctx *ctx, struct top_screen *scr)
{
	const struct top_snap *s = ctx->cur;
	uint64_t page = s->hdr.page_size;

	top_scr_line(scr, TOP_A_REVERSE, " NODE BOUND    RESERVED   COMMITTED"
		     "        USED    RETAINED      PURGED        HUGE"
		     "      SLABS     OBJECTS  SLAB MEMORY");
	for (uint32_t n = 0; n < s->hdr.nr_nodes; n++) {
		const struct segpool_export_node *r = &s->nodes[n];
		uint64_t slabs = 0, objs = 0, bytes = 0;
		char res[16], com[16], used[16], mem[16];
		char dirty[16], purged[16], huge[16];

		for (size_t i = 0; i < s->hdr.nr_caches; i++) {
			const struct segpool_export_cache *c = &s->caches[i];
			const struct segpool_export_cache_node *x =
				&top_snap_cache_nodes(s, i)[n];
			uint64_t k = x->partial_slabs + x->full_slabs +
				     x->empty_slabs;

			slabs += k;
			objs += x->objects;
			bytes += k * c->pages_per_slab * page;
		}
		top_scr_line(
			scr, TOP_A_NONE,
			" %4d %5s %11s %11s %11s %11s "
			"%11s %11s %10llu %11llu %12s",
			r->node_id, r->bound ? "yes" : "no",
			top_fmt_kib(res, sizeof(res), r->pages_reserved * page),
			top_fmt_kib(com, sizeof(com),
				    r->pages_committed * page),
			top_fmt_kib(used, sizeof(used), r->pages_used * page),
			top_fmt_kib(dirty, sizeof(dirty),
				    r->pages_dirty * page),
			top_fmt_kib(purged, sizeof(purged),
				    r->pages_purged * page),
			top_fmt_kib(huge, sizeof(huge), r->huge_bytes),
			(unsigned long long)slabs, (unsigned long long)objs,
			top_fmt_kib(mem, sizeof(mem), bytes));
	}
}

static void top_nodes_caches(struct top_ctx *ctx, struct top_screen *scr)
{
	const struct top_snap *s = ctx->cur;
	uint32_t nn = s->hdr.nr_nodes, shown;
	char line[1024];
	size_t len;

	/* as many node columns as fit beside a 24-character name */
	shown = (uint32_t)((scr->cols - 26) / TOP_NODE_COL);
	if (shown > nn)
		shown = nn;
	if (shown == 0)
		shown = 1;
	len = (size_t)snprintf(line, sizeof(line), " %-24s",
			       "CACHE MEMORY BY NODE");
	for (uint32_t n = 0; n < shown && len < sizeof(line); n++)
		len += (size_t)snprintf(line + len, sizeof(line) - len,
					" %*s%d", TOP_NODE_COL - 2, "N",
					s->nodes[n].node_id);
	top_scr_line(scr, TOP_A_NONE, "%s", "");
	top_scr_line(scr, TOP_A_REVERSE, "%s", line);
	for (size_t i = 0; i < ctx->nrows && !top_scr_full(scr); i++) {
		const struct segpool_export_cache *c = ctx->rows[i].c;
		const struct segpool_export_cache_node *x =
			top_snap_cache_nodes(s, ctx->rows[i].idx);

		if (!c->total_slabs)
			continue;
		len = (size_t)snprintf(line, sizeof(line), " %-24.24s",
				       c->name);
		for (uint32_t n = 0; n < shown && len < sizeof(line); n++) {
			char mem[16];
			uint64_t k = x[n].partial_slabs + x[n].full_slabs +
				     x[n].empty_slabs;

			len += (size_t)snprintf(
				line + len, sizeof(line) - len, " %*s",
				TOP_NODE_COL - 1,
				top_fmt_kib(mem, sizeof(mem),
					    k * c->pages_per_slab *
						    s->hdr.page_size));
		}
		top_scr_line(scr, TOP_A_NONE, "%s", line);
	}
}

void top_view_nodes(struct top_ctx *ctx, struct top_screen *scr)
{
	top_view_title(ctx, scr, "NUMA nodes");
	top_scr_line(scr, TOP_A_NONE,
		     " %u node%s, %u CPUs  (m or Esc: back to "
		     "the list; memory in K)",
		     ctx->cur->hdr.nr_nodes,
		     ctx->cur->hdr.nr_nodes == 1 ? "" : "s",
		     ctx->cur->hdr.nr_cpus);
	top_scr_line(scr, TOP_A_NONE, "%s", ctx->note);
	top_nodes_regions(ctx, scr);
	top_nodes_caches(ctx, scr);
}
