// SPDX-License-Identifier: MIT
/*
 * tools/segpool-top/view_list.c - the slabtop-like list of caches.
 *
 *   segpool-top - pid 4242 (logpipe) - segpool 0.1.0 - rseq (...)
 *    Active / Total Objects (% used)    : 1204 / 2300 (52.3%)
 *    Active / Total Slabs (% used)      : 60 / 64 (93.8%)
 *    Active / Total Caches (% used)     : 5 / 49 (10.2%)
 *    Active / Total Size (% used)       : 180.50K / 345.00K (52.3%)
 *    Minimum / Average / Maximum Object : 0.01K / 0.15K / 32.00K
 *    Slab memory: ...  Magazines: 120 objects on CPUs, 180 in depots ...
 *    Snapshot #45 every 1000 ms, 0.3 s old  Refresh 3.0 s  Sort: ...
 *   (a passing note)
 *     OBJS ACTIVE  USE OBJ SIZE  SLABS OBJ/SLAB CACHE SIZE NAME
 *   ...one row per cache, the selected one in reverse video...
 *
 * The five summary lines and the columns are slabtop's, with slabtop's
 * widths and meanings: a row is 78 columns with a 23-character name, so it
 * fits 80 with the name in view.  Each column keeps one unit in every row:
 * counts in full, OBJ SIZE in K with two decimals, CACHE SIZE in K.  A
 * screen wide enough for them gets segpool-top's STRIDE (bytes from one
 * object to the next, slabinfo's objsize) and GROWTH (K) before NAME.
 *
 * -o prints slabtop -o's frame and nothing else: the five summary lines, a
 * blank line, the header and the rows, without the title, the rates and
 * the hints of the live view.
 */
#include <inttypes.h>
#include <time.h>

#include "tools/segpool-top/top.h"

#define TOP_LIST_HEAD_LINES	10
/* slabtop's header and rows, in one format so they cannot drift apart */
#define TOP_LIST_ROW	"%6s %6s %4s %8s %6s %8s %10s %-23s"
/* the same with segpool-top's two columns before NAME */
#define TOP_LIST_WIDE	"%6s %6s %4s %8s %6s %8s %10s %7s %7s %-23s"
#define TOP_LIST_WIDE_COLS	(79 + 16)

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

static double top_pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/*
 * The fourth line: a note when there is one; else the arenas, summed
 * (their bytes in use, chunk memory, largest peak and resets), when the
 * process has any; and the hint that empty caches are hidden.
 */
static void top_list_arenas(struct top_ctx *ctx, struct top_screen *scr)
{
	const struct top_snap *s = ctx->cur;
	const char *hint =
		ctx->hide_empty ? " (empty caches hidden: e shows them)" : "";
	uint64_t in_use = 0, held = 0, peak = 0, chunks = 0, resets = 0;
	char b1[16], b2[16], b3[16];

	if (ctx->note[0] || !s->hdr.nr_arenas) {
		top_scr_line(scr, TOP_A_NONE, "%s",
			     ctx->note[0] ? ctx->note : hint);
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
	top_scr_line(scr, TOP_A_NONE,
		     " Arenas: %u  In use: %s  Held: %s  "
		     "Largest peak: %s  Chunks: %llu  Resets: %llu%s",
		     s->hdr.nr_arenas, top_fmt_bytes(b1, sizeof(b1), in_use),
		     top_fmt_bytes(b2, sizeof(b2), held),
		     top_fmt_bytes(b3, sizeof(b3), peak),
		     (unsigned long long)chunks, (unsigned long long)resets,
		     hint);
}

/* The totals over every cache, and when the data is from. */
static void top_list_summary(struct top_ctx *ctx, struct top_screen *scr)
{
	const struct top_snap *s = ctx->cur;
	const struct segpool_export_header *h = &s->hdr;
	uint64_t active = 0, total = 0, aslabs = 0, tslabs = 0;
	uint64_t asize = 0, tsize = 0, osum = 0, omin = 0, omax = 0;
	uint64_t cpu = 0, depot = 0, allocs = 0, pallocs = 0, bytes = 0;
	unsigned int used = 0;
	char b1[32], b2[32], b3[32];
	double rate = 0;

	for (size_t i = 0; i < h->nr_caches; i++) {
		const struct segpool_export_cache *c = &s->caches[i];
		const struct segpool_export_cache *p =
			ctx->have_prev ? top_prev_find(ctx->prev, c->name) :
					 NULL;

		active += c->active_objs;
		total += c->total_objs;
		aslabs += c->active_slabs;
		tslabs += c->total_slabs;
		asize += c->active_objs * c->stride;
		tsize += c->total_objs * c->stride;
		osum += c->active_objs * c->object_size;
		if (c->total_objs) {
			if (!omin || c->object_size < omin)
				omin = c->object_size;
			if (c->object_size > omax)
				omax = c->object_size;
		}
		bytes += c->slab_bytes;
		cpu += c->cpu_objs;
		depot += c->depot_objs;
		used += c->active_objs != 0;
		if (p) {
			allocs += c->allocs;
			pallocs += p->allocs;
		}
	}
	if (ctx->have_prev && h->monotonic_ns > ctx->prev->hdr.monotonic_ns &&
	    allocs >= pallocs)
		rate = (double)(allocs - pallocs) * 1e9 /
		       (double)(h->monotonic_ns - ctx->prev->hdr.monotonic_ns);
	top_scr_line(scr, TOP_A_NONE, " Active / Total Objects (%% used)    : "
		     "%" PRIu64 " / %" PRIu64 " (%.1f%%)", active, total,
		     top_pct(active, total));
	top_scr_line(scr, TOP_A_NONE, " Active / Total Slabs (%% used)      : "
		     "%" PRIu64 " / %" PRIu64 " (%.1f%%)", aslabs, tslabs,
		     top_pct(aslabs, tslabs));
	top_scr_line(scr, TOP_A_NONE, " Active / Total Caches (%% used)     : "
		     "%u / %u (%.1f%%)", used, h->nr_caches,
		     top_pct(used, h->nr_caches));
	top_scr_line(scr, TOP_A_NONE,
		     " Active / Total Size (%% used)       : "
		     "%s / %s (%.1f%%)",
		     top_fmt_kib2(b1, sizeof(b1), (double)asize),
		     top_fmt_kib2(b2, sizeof(b2), (double)tsize),
		     top_pct(asize, tsize));
	top_scr_line(scr, TOP_A_NONE, " Minimum / Average / Maximum Object : "
		     "%s / %s / %s", top_fmt_kib2(b1, sizeof(b1), (double)omin),
		     top_fmt_kib2(b2, sizeof(b2), active ?
				  (double)osum / (double)active : 0.0),
		     top_fmt_kib2(b3, sizeof(b3), (double)omax));
	if (ctx->once)
		return;		/* slabtop -o: no rates, no hints */
	top_scr_line(scr, TOP_A_NONE, " Slab memory: %s  Magazines: %" PRIu64
		     " objects on CPUs, %" PRIu64 " in depots  Allocations: "
		     "%.0f/s  Nodes: %u  CPUs: %u%s",
		     top_fmt_kib(b1, sizeof(b1), bytes), cpu, depot, rate,
		     h->nr_nodes, h->nr_cpus,
		     (h->flags & SEGPOOL_EXPORT_F_TRUNCATED) ?
		     "  (segment full: some caches missing)" : "");
	top_scr_line(scr, TOP_A_NONE,
		     " Snapshot #%llu every %u ms, %s old%s  "
		     "Refresh %.1f s  Sort: %s%s  (h: help)",
		     (unsigned long long)h->updates, h->interval_ms,
		     top_fmt_age(b2, sizeof(b2), ctx->stale),
		     ctx->stale > 3.0 * h->interval_ms / 1000.0 + 2.0 ?
			     " (not updating)" :
			     "",
		     ctx->delay, top_sort_name(ctx->sort),
		     ctx->reverse ? ", reversed" : "");
	top_list_arenas(ctx, scr);
}

/* The first row to show: the selection in view, and no empty screen below. */
static void top_list_scroll(struct top_ctx *ctx, const struct top_screen *scr)
{
	size_t height = (size_t)top_view_list_height(scr);

	if (scr->plain) {
		ctx->first = 0;
		return;
	}
	if (ctx->sel < ctx->first)
		ctx->first = ctx->sel;
	if (ctx->sel >= ctx->first + height)
		ctx->first = ctx->sel - height + 1;
	/* fewer rows than before (e after End): fill the screen again */
	if (ctx->first + height > ctx->nrows)
		ctx->first = ctx->nrows > height ? ctx->nrows - height : 0;
}

void top_view_list(struct top_ctx *ctx, struct top_screen *scr)
{
	bool wide = !ctx->once && scr->cols >= TOP_LIST_WIDE_COLS;

	if (!ctx->once)
		top_view_title(ctx, scr, NULL);
	top_list_summary(ctx, scr);
	if (ctx->once)
		top_scr_line(scr, TOP_A_NONE, "%s", "");
	if (wide)
		top_scr_line(scr, TOP_A_REVERSE, TOP_LIST_WIDE, "OBJS",
			     "ACTIVE", "USE", "OBJ SIZE", "SLABS", "OBJ/SLAB",
			     "CACHE SIZE", "STRIDE", "GROWTH", "NAME");
	else
		top_scr_line(scr, TOP_A_REVERSE, TOP_LIST_ROW, "OBJS", "ACTIVE",
			     "USE", "OBJ SIZE", "SLABS", "OBJ/SLAB",
			     "CACHE SIZE", "NAME");
	top_list_scroll(ctx, scr);
	for (size_t i = ctx->first; i < ctx->nrows && !top_scr_full(scr); i++) {
		const struct top_row *r = &ctx->rows[i];
		const struct segpool_export_cache *c = r->c;
		enum top_attr a = i == ctx->sel && !scr->plain ? TOP_A_REVERSE :
								 TOP_A_NONE;
		char objs[24], act[24], use[8], size[24], stride[24], slabs[24];
		char per[16], bytes[24], grow[24];

		snprintf(objs, sizeof(objs), "%" PRIu64, c->total_objs);
		snprintf(act, sizeof(act), "%" PRIu64, c->active_objs);
		/* slabtop's: the whole percent, rounded down */
		snprintf(use, sizeof(use), "%u%%",
			 c->total_objs ? (unsigned int)(c->active_objs * 100 /
							c->total_objs) :
					 0);
		snprintf(size, sizeof(size), "%.2fK",
			 (double)c->object_size / 1024.0);
		snprintf(slabs, sizeof(slabs), "%" PRIu64, c->total_slabs);
		snprintf(per, sizeof(per), "%u", c->objs_per_slab);
		top_fmt_kib(bytes, sizeof(bytes), c->slab_bytes);
		if (!wide) {
			top_scr_line(scr, a, TOP_LIST_ROW, objs, act, use, size,
				     slabs, per, bytes, c->name);
			continue;
		}
		snprintf(stride, sizeof(stride), "%" PRIu64, c->stride);
		top_scr_line(scr, a, TOP_LIST_WIDE, objs, act, use, size, slabs,
			     per, bytes, stride, r->is_new ? "new" :
			     top_fmt_delta_kib(grow, sizeof(grow), r->growth),
			     c->name);
	}
}
