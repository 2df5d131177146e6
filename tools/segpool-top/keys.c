// SPDX-License-Identifier: MIT
/*
 * tools/segpool-top/keys.c - what each key does.
 *
 * procps slabtop's keys mean what they mean there: its sort letters in
 * either case (rows.c lists them), space to refresh, q to quit.
 * segpool-top's own keys sit on letters slabtop leaves free: r, g, e, i,
 * m, h, j, k.  Choosing an order clears a reversal, so r reverses the order
 * on screen and nothing after it.  top_keys[] is the list the help screen
 * and the usage text print (the sort keys come from top_sort_keys[]).
 */
#include <string.h>

#include "tools/segpool-top/top.h"

const struct top_key_help top_keys[] = {
	{ "q, Q",	"quit (also ^C)",				true },
	{ "space",	"refresh now",					true },
	{ "r",		"reverse the order on screen (a new order clears it)",
			false },
	{ "e",		"hide or show caches without slabs",		false },
	{ "Enter, i",	"the selected cache in detail (again or Esc: back)",
			false },
	{ "m",		"the NUMA nodes: regions and memory (again: back)",
			false },
	{ "up, down, j, k", "move the selection by one row",	false },
	{ "PgUp, PgDn",	"move it by a page",				false },
	{ "Home, End",	"move it to the first or last row",		false },
	{ "h, ?",	"this help; any key goes back",			false },
};
const size_t top_nkeys = sizeof(top_keys) / sizeof(top_keys[0]);

static void top_select(struct top_ctx *ctx, long delta)
{
	long sel = (long)ctx->sel + delta;

	if (!ctx->nrows)
		return;
	if (sel < 0)
		sel = 0;
	if (sel >= (long)ctx->nrows)
		sel = (long)ctx->nrows - 1;
	ctx->sel = (size_t)sel;
	if (ctx->rows)
		snprintf(ctx->selected, sizeof(ctx->selected), "%s",
			 ctx->rows[ctx->sel].c->name);
}

static enum top_action top_sort_key(struct top_ctx *ctx, enum top_sort sort)
{
	ctx->sort = sort;
	ctx->reverse = false;
	snprintf(ctx->note, sizeof(ctx->note), " sorted by %s",
		 top_sort_name(sort));
	return TOP_ACT_REDRAW;
}

enum top_action top_handle_key(struct top_ctx *ctx, int key, long page)
{
	enum top_sort sort;

	if (ctx->mode == TOP_VIEW_HELP) {
		if (key == 'q' || key == 'Q')
			return TOP_ACT_QUIT;
		ctx->mode = ctx->back;
		return TOP_ACT_REDRAW;
	}
	if (top_sort_of_key(key, &sort) == 0)
		return top_sort_key(ctx, sort);
	switch (key) {
	case 'q':
	case 'Q':
		return TOP_ACT_QUIT;
	case 'h':
	case '?':
		ctx->back = ctx->mode;
		ctx->mode = TOP_VIEW_HELP;
		return TOP_ACT_REDRAW;
	case 'r':
		ctx->reverse = !ctx->reverse;
		snprintf(ctx->note, sizeof(ctx->note), " sorted by %s%s",
			 top_sort_name(ctx->sort),
			 ctx->reverse ? ", reversed" : "");
		return TOP_ACT_REDRAW;
	case 'e':
		ctx->hide_empty = !ctx->hide_empty;
		return TOP_ACT_REDRAW;
	case 'i':
	case TOP_KEY_ENTER:
		if (ctx->mode == TOP_VIEW_CACHE)
			ctx->mode = TOP_VIEW_LIST;
		else if (ctx->nrows)
			ctx->mode = TOP_VIEW_CACHE;
		return TOP_ACT_REDRAW;
	case 'm':
		ctx->mode = ctx->mode == TOP_VIEW_NODES ? TOP_VIEW_LIST :
							  TOP_VIEW_NODES;
		return TOP_ACT_REDRAW;
	case TOP_KEY_ESC:
	case TOP_KEY_BACKSPACE:
	case TOP_KEY_LEFT:
		ctx->mode = TOP_VIEW_LIST;
		return TOP_ACT_REDRAW;
	case TOP_KEY_UP:
	case 'k':
		top_select(ctx, -1);
		return TOP_ACT_REDRAW;
	case TOP_KEY_DOWN:
	case 'j':
		top_select(ctx, 1);
		return TOP_ACT_REDRAW;
	case TOP_KEY_PGUP:
		top_select(ctx, -page);
		return TOP_ACT_REDRAW;
	case TOP_KEY_PGDN:
		top_select(ctx, page);
		return TOP_ACT_REDRAW;
	case TOP_KEY_HOME:
		top_select(ctx, -(long)ctx->nrows);
		return TOP_ACT_REDRAW;
	case TOP_KEY_END:
		top_select(ctx, (long)ctx->nrows);
		return TOP_ACT_REDRAW;
	case ' ':
		return TOP_ACT_REFRESH;
	default:
		return TOP_ACT_NONE;
	}
}
