// SPDX-License-Identifier: MIT
/*
 * tools/segpool-top/view_list.c - the slabtop-like list of caches.
 *
 *   segpool-top - pid 4242 (logpipe) - segpool 0.1.0 - rseq (...)
 *    Caches: 49 (5 in use)  Objects: 1204 / 2300 active (52.3%)  ...
 *    Magazines: 120 objects on CPUs, 180 in depots  Nodes: 1  CPUs: 8
 *    Snapshot #45 every 1000 ms, 0.3 s old  Refresh 2.0 s  Sort: ...
 *   (a passing note)
 *       OBJS   ACTIVE  USE OBJ SIZE   SLABS OBJ/SLAB CACHE SIZE   GROWTH NAME
 *   ...one row per cache, the selected one in reverse video...
 */
#include <time.h>

#include "tools/segpool-top/top.h"

#define TOP_LIST_HEAD_LINES	6

int top_view_list_height(const struct top_screen *scr)
{
	int h = scr->rows - TOP_LIST_HEAD_LINES;

	return h > 1 ? h : 1;
}

void top_view_title(struct top_ctx *ctx, struct top_screen *scr,
		    const char *what)
{
	const struct segpool_export_header *h = &ctx->cur->hdr;

	top_scr_line(scr, TOP_A_BOLD, "%s - pid %d (%s) - segpool %s - %s%s%s",
		     TOP_PROG, h->pid, h->comm, h->version, h->percpu_mode,
		     what ? " - " : "", what ? what : "");
}

/*
 * The fourth line: a note when there is one; else the arenas, summed
 * (their bytes in use, chunk memory, largest peak and resets), when the
 * process has any; and the hint that empty caches are hidden.
 */
static void top_list_arenas(struct top_ctx *ctx, struct top_screen *scr)
{
	const struct top_snap *s = ctx->cur;
	const char *hint = ctx->hide_empty ? " (empty caches hidden: e shows them)"
					   : "";
	uint64_t in_use = 0, held = 0, peak = 0, chunks = 0, resets = 0;
	char b1[16], b2[16], b3[16];

	if (ctx->note[0] || !s->hdr.nr_arenas) {
		top_scr_line(scr, TOP_A_NONE, "%s", ctx->note[0] ? ctx->note : hint);
		return;
	}
	for (uint32_t i = 0; i < s->hdr.nr_arenas; i++) {
		const struct segpool_export_arena *a = &s->arenas[i];

		in_use += a->in_use;
		held += a->held;
		chunks += a->chunks;
		resets += a->resets;
		if (a->peak > peak)
			peak = a->peak;
	}
	top_scr_line(scr, TOP_A_NONE, " Arenas: %u  In use: %s  Held: %s  "
		     "Largest peak: %s  Chunks: %llu  Resets: %llu%s",
		     s->hdr.nr_arenas, top_fmt_bytes(b1, sizeof(b1), in_use),
		     top_fmt_bytes(b2, sizeof(b2), held),
		     top_fmt_bytes(b3, sizeof(b3), peak),
		     (unsigned long long)chunks, (unsigned long long)resets, hint);
}

/* The totals over every cache, and when the data is from. */
static void top_list_summary(struct top_ctx *ctx, struct top_screen *scr)
{
	const struct top_snap *s = ctx->cur;
	const struct segpool_export_header *h = &s->hdr;
	uint64_t active = 0, total = 0, aslabs = 0, tslabs = 0, bytes = 0;
	uint64_t cpu = 0, depot = 0, allocs = 0, pallocs = 0;
	unsigned int used = 0;
	char b1[32], b2[32];
	double rate = 0;

	for (size_t i = 0; i < h->nr_caches; i++) {
		const struct segpool_export_cache *c = &s->caches[i];
		const struct segpool_export_cache *p =
			ctx->have_prev ? top_prev_find(ctx->prev, c->name) : NULL;

		active += c->active_objs;
		total += c->total_objs;
		aslabs += c->active_slabs;
		tslabs += c->total_slabs;
		bytes += c->slab_bytes;
		cpu += c->cpu_objs;
		depot += c->depot_objs;
		used += c->total_slabs != 0;
		if (p) {
			allocs += c->allocs;
			pallocs += p->allocs;
		}
	}
	if (ctx->have_prev && h->monotonic_ns > ctx->prev->hdr.monotonic_ns &&
	    allocs >= pallocs)
		rate = (double)(allocs - pallocs) * 1e9 /
		       (double)(h->monotonic_ns - ctx->prev->hdr.monotonic_ns);
	top_scr_line(scr, TOP_A_NONE, " Caches: %u (%u in use)  Objects: %llu / "
		     "%llu active (%.1f%%)  Slabs: %llu / %llu active  Memory: %s",
		     h->nr_caches, used, (unsigned long long)active,
		     (unsigned long long)total,
		     total ? 100.0 * (double)active / (double)total : 0.0,
		     (unsigned long long)aslabs, (unsigned long long)tslabs,
		     top_fmt_bytes(b1, sizeof(b1), bytes));
	top_scr_line(scr, TOP_A_NONE, " Magazines: %llu objects on CPUs, %llu in "
		     "depots  Allocations: %.0f/s  Nodes: %u  CPUs: %u%s",
		     (unsigned long long)cpu, (unsigned long long)depot, rate,
		     h->nr_nodes, h->nr_cpus,
		     (h->flags & SEGPOOL_EXPORT_F_TRUNCATED) ?
		     "  (segment full: some caches missing)" : "");
	top_scr_line(scr, TOP_A_NONE, " Snapshot #%llu every %u ms, %s old%s  "
		     "Refresh %.1f s  Sort: %s%s  (h: help)",
		     (unsigned long long)h->updates, h->interval_ms,
		     top_fmt_age(b2, sizeof(b2), ctx->stale),
		     ctx->stale > 3.0 * h->interval_ms / 1000.0 + 2.0 ?
		     " (not updating)" : "", ctx->delay,
		     top_sort_name(ctx->sort), ctx->reverse ? ", reversed" : "");
	top_list_arenas(ctx, scr);
}

void top_view_list(struct top_ctx *ctx, struct top_screen *scr)
{
	int height = top_view_list_height(scr);

	top_view_title(ctx, scr, NULL);
	top_list_summary(ctx, scr);
	top_scr_line(scr, TOP_A_REVERSE, "    OBJS   ACTIVE  USE OBJ SIZE   SLABS "
		     "OBJ/SLAB CACHE SIZE   GROWTH NAME");
	/* keep the selected row on screen */
	if (ctx->sel < ctx->first)
		ctx->first = ctx->sel;
	if (ctx->sel >= ctx->first + (size_t)height)
		ctx->first = ctx->sel - (size_t)height + 1;
	for (size_t i = ctx->first; i < ctx->nrows && !top_scr_full(scr); i++) {
		const struct top_row *r = &ctx->rows[i];
		const struct segpool_export_cache *c = r->c;
		char objs[16], act[16], size[16], slabs[16], bytes[16], grow[16];
		unsigned int use = c->total_objs ?
			(unsigned int)(100 * c->active_objs / c->total_objs) : 0;

		top_scr_line(scr, i == ctx->sel ? TOP_A_REVERSE : TOP_A_NONE,
			     "%8s %8s %3u%% %8s %7s %8u %10s %8s %s",
			     top_fmt_count(objs, sizeof(objs), c->total_objs, 8),
			     top_fmt_count(act, sizeof(act), c->active_objs, 8),
			     use, top_fmt_bytes(size, sizeof(size), c->stride),
			     top_fmt_count(slabs, sizeof(slabs), c->total_slabs, 7),
			     c->objs_per_slab,
			     top_fmt_bytes(bytes, sizeof(bytes), c->slab_bytes),
			     r->is_new ? "new" :
			     top_fmt_delta(grow, sizeof(grow), r->growth),
			     c->name);
	}
}
