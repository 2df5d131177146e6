// SPDX-License-Identifier: MIT
/*
 * tools/segpool-top/view_cache.c - one cache in detail (Enter or i).
 *
 * Left, how the cache is now; right, its counters since creation with
 * their rate over the last refresh; below, its slabs and objects on each
 * NUMA node, with the objects taken out of the node's slabs and given back
 * since creation (for the application directly or through magazines),
 * memory in K.  The field names are those of struct segpool_cache_info and
 * SLUB's counters (Documentation/reference/stats-keys.md explains each).
 */
#include <string.h>

#include "tools/segpool-top/top.h"

/* The i-th field of @want kind (state or counter), or NULL. */
static const struct top_field *top_nth_field(size_t i, bool counter)
{
	for (size_t k = 0; k < top_cache_nfields; k++) {
		if (top_cache_fields[k].counter != counter)
			continue;
		if (i-- == 0)
			return &top_cache_fields[k];
	}
	return NULL;
}

static void top_cache_fields_table(struct top_ctx *ctx, struct top_screen *scr,
				   const struct segpool_export_cache *c,
				   const struct segpool_export_cache *p)
{
	const struct segpool_export_header *h = &ctx->cur->hdr;
	double dt = 0;

	if (p && h->monotonic_ns > ctx->prev->hdr.monotonic_ns)
		dt = (double)(h->monotonic_ns - ctx->prev->hdr.monotonic_ns) /
		     1e9;
	top_scr_line(scr, TOP_A_REVERSE, " %-22s %14s   %-18s %16s %12s", "NOW",
		     "", "SINCE CREATION", "TOTAL", "PER SECOND");
	for (size_t i = 0;; i++) {
		const struct top_field *l = top_nth_field(i, false);
		const struct top_field *r = top_nth_field(i, true);
		char left[64] = "", rate[32] = "";

		if (!l && !r)
			break;
		if (l)
			snprintf(left, sizeof(left), "%-22s %14llu", l->name,
				 (unsigned long long)top_field_get(c, l));
		if (r && dt > 0) {
			uint64_t now = top_field_get(c, r);
			uint64_t then = top_field_get(p, r);

			snprintf(rate, sizeof(rate), "%.1f", now >= then ?
				 (double)(now - then) / dt : 0.0);
		}
		if (r)
			top_scr_line(scr, TOP_A_NONE,
				     " %-37s   %-18s %16llu %12s", left,
				     r->name,
				     (unsigned long long)top_field_get(c, r),
				     rate);
		else
			top_scr_line(scr, TOP_A_NONE, " %s", left);
	}
}

static void top_cache_node_table(struct top_ctx *ctx, struct top_screen *scr,
				 size_t idx)
{
	const struct top_snap *s = ctx->cur;
	const struct segpool_export_cache *c = &s->caches[idx];
	const struct segpool_export_cache_node *cn =
		top_snap_cache_nodes(s, idx);
	uint64_t slab = (uint64_t)c->pages_per_slab * s->hdr.page_size;

	top_scr_line(scr, TOP_A_NONE, "%s", "");
	top_scr_line(scr, TOP_A_REVERSE, " NODE  PARTIAL     FULL    EMPTY    "
		     "OBJECTS  SLAB MEMORY  DEPOT OBJS  SLAB TAKEN  SLAB BACK");
	for (uint32_t n = 0; n < s->hdr.nr_nodes; n++) {
		const struct segpool_export_cache_node *x = &cn[n];
		uint64_t slabs =
			x->partial_slabs + x->full_slabs + x->empty_slabs;
		char mem[16];

		top_scr_line(scr, TOP_A_NONE,
			     " %4d %8llu %8llu %8llu %10llu %12s "
			     "%11llu %11llu %10llu",
			     x->node_id, (unsigned long long)x->partial_slabs,
			     (unsigned long long)x->full_slabs,
			     (unsigned long long)x->empty_slabs,
			     (unsigned long long)x->objects,
			     top_fmt_kib(mem, sizeof(mem), slabs * slab),
			     (unsigned long long)x->depot_objs,
			     (unsigned long long)(x->allocs + x->xfer_allocs),
			     (unsigned long long)(x->frees + x->xfer_frees));
	}
}

void top_view_cache(struct top_ctx *ctx, struct top_screen *scr)
{
	const struct segpool_export_cache *c, *p = NULL;
	char title[96], flags[96];
	size_t idx;

	c = top_snap_find(ctx->cur, ctx->selected);
	if (!c) {
		snprintf(ctx->note, sizeof(ctx->note), " cache %s is gone",
			 ctx->selected);
		ctx->mode = TOP_VIEW_LIST;
		top_view_list(ctx, scr);
		return;
	}
	idx = (size_t)(c - ctx->cur->caches);
	if (ctx->have_prev)
		p = top_prev_find(ctx->prev, c->name);
	snprintf(title, sizeof(title), "cache %s", c->name);
	top_view_title(ctx, scr, title);
	top_scr_line(scr, TOP_A_NONE,
		     " Flags: %s  Object size %llu  stride %llu"
		     "  align %llu",
		     top_fmt_flags(flags, sizeof(flags), c->flags),
		     (unsigned long long)c->object_size,
		     (unsigned long long)c->stride,
		     (unsigned long long)c->align);
	top_scr_line(scr, TOP_A_NONE,
		     " Slab: %u page%s of %u bytes, %u objects  "
		     "Magazines: %u objects each, a depot keeps %u full",
		     c->pages_per_slab, c->pages_per_slab == 1 ? "" : "s",
		     ctx->cur->hdr.page_size, c->objs_per_slab, c->mag_size,
		     c->depot_max);
	top_scr_line(
		scr, TOP_A_NONE, "%s",
		ctx->note[0] ?
			ctx->note :
			" (Esc or Enter: back to the list; up and down: "
			"other caches)");
	top_cache_fields_table(ctx, scr, c, p);
	top_cache_node_table(ctx, scr, idx);
}
