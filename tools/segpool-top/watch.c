// SPDX-License-Identifier: MIT
/*
 * tools/segpool-top/watch.c - the full-screen loop.
 *
 * Draw, then wait for a key, a signal or the next refresh, whichever comes
 * first; a key redraws at once, a refresh reads a new snapshot first.  The
 * viewer keeps three snapshots: the one on screen, the previous one with
 * other data (growth and rates are measured against it) and a spare to
 * read into, so a refresh faster than the process publishes does not reset
 * growth to zero.  Each refresh first asks whether the process is still
 * there; when it is gone the terminal is restored and segpool-top says so
 * and exits 1.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tools/segpool-top/top.h"

enum top_action {
	TOP_ACT_NONE,
	TOP_ACT_REDRAW,
	TOP_ACT_REFRESH,
	TOP_ACT_QUIT,
};

static double top_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Age of the snapshot on screen: both clocks are this machine's monotonic. */
static void top_update_age(struct top_ctx *ctx)
{
	ctx->stale = top_now() - (double)ctx->cur->hdr.monotonic_ns / 1e9;
}

/* The rows in order, with the selection following its cache by name. */
static int top_relayout(struct top_ctx *ctx)
{
	long n = top_rows_build(&ctx->rows, &ctx->rows_cap, ctx->cur,
				ctx->have_prev ? ctx->prev : NULL, ctx->sort,
				ctx->reverse, ctx->hide_empty);

	if (n < 0)
		return -1;
	ctx->nrows = (size_t)n;
	for (size_t i = 0; i < ctx->nrows; i++) {
		if (!strcmp(ctx->rows[i].c->name, ctx->selected)) {
			ctx->sel = i;
			return 0;
		}
	}
	if (ctx->sel >= ctx->nrows)
		ctx->sel = ctx->nrows ? ctx->nrows - 1 : 0;
	if (ctx->nrows)
		snprintf(ctx->selected, sizeof(ctx->selected), "%s",
			 ctx->rows[ctx->sel].c->name);
	return 0;
}

static enum top_status top_refresh(struct top_ctx *ctx, struct top_snap **spare,
				   char *msg, size_t len)
{
	enum top_status st = top_seg_check(&ctx->seg, msg, len);
	struct top_snap *s;

	if (st == TOP_OK)
		st = top_snap_read(&ctx->seg, *spare, msg, len);
	if (st != TOP_OK)
		return st;
	s = *spare;
	if (s->hdr.updates == ctx->cur->hdr.updates &&
	    s->hdr.monotonic_ns == ctx->cur->hdr.monotonic_ns)
		return TOP_OK;			/* nothing new */
	*spare = ctx->prev;
	ctx->prev = ctx->cur;
	ctx->cur = s;
	ctx->have_prev = true;
	return TOP_OK;
}

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
	snprintf(ctx->selected, sizeof(ctx->selected), "%s",
		 ctx->rows[ctx->sel].c->name);
}

static enum top_action top_sort_key(struct top_ctx *ctx, enum top_sort sort)
{
	ctx->sort = sort;
	snprintf(ctx->note, sizeof(ctx->note), " sorted by %s", top_sort_name(sort));
	return TOP_ACT_REDRAW;
}

static enum top_action top_handle_key(struct top_ctx *ctx, int key, long page)
{
	if (ctx->mode == TOP_VIEW_HELP) {
		if (key == 'q' || key == 'Q')
			return TOP_ACT_QUIT;
		ctx->mode = ctx->back;
		return TOP_ACT_REDRAW;
	}
	switch (key) {
	case 'q':
	case 'Q':
		return TOP_ACT_QUIT;
	case 'h':
	case '?':
		ctx->back = ctx->mode;
		ctx->mode = TOP_VIEW_HELP;
		return TOP_ACT_REDRAW;
	case 's':
		return top_sort_key(ctx, TOP_SORT_SIZE);
	case 'o':
		return top_sort_key(ctx, TOP_SORT_OBJS);
	case 'n':
		return top_sort_key(ctx, TOP_SORT_NAME);
	case 'g':
		return top_sort_key(ctx, TOP_SORT_GROWTH);
	case 'r':
		ctx->reverse = !ctx->reverse;
		return TOP_ACT_REDRAW;
	case 'e':
		ctx->hide_empty = !ctx->hide_empty;
		return TOP_ACT_REDRAW;
	case 'c':
	case TOP_KEY_ENTER:
		if (ctx->mode == TOP_VIEW_CACHE)
			ctx->mode = TOP_VIEW_LIST;
		else if (ctx->nrows)
			ctx->mode = TOP_VIEW_CACHE;
		return TOP_ACT_REDRAW;
	case 'N':
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

static int top_draw(struct top_ctx *ctx, struct top_screen *scr)
{
	int rows, cols;

	top_term_size(&rows, &cols);
	top_update_age(ctx);
	if (top_relayout(ctx))
		return -1;
	top_scr_begin(scr, rows, cols);
	switch (ctx->mode) {
	case TOP_VIEW_LIST:
		top_view_list(ctx, scr);
		break;
	case TOP_VIEW_CACHE:
		top_view_cache(ctx, scr);
		break;
	case TOP_VIEW_NODES:
		top_view_nodes(ctx, scr);
		break;
	case TOP_VIEW_HELP:
		top_view_help(ctx, scr);
		break;
	}
	return top_scr_flush(scr, STDOUT_FILENO);
}

/* Leave the screen as it was, then die of @sig as if we had not caught it. */
static void top_die_of(int sig)
{
	struct sigaction sa;

	top_term_leave();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	raise(sig);
	_exit(128 + sig);
}

/*
 * Wait for the next thing to do: a key's action, a refresh when @next is
 * reached, or a redraw after a resize.  Dies of a terminating signal.
 */
static enum top_action top_wait(struct top_ctx *ctx, double next, long page)
{
	for (;;) {
		double left = next - top_now();
		enum top_action act = TOP_ACT_NONE;
		int key, sig;

		top_term_wait(left > 0 ? (int)(left * 1000) + 1 : 0);
		sig = top_term_fatal_signal();
		if (sig)
			top_die_of(sig);
		top_term_suspend_if_asked();
		while ((key = top_term_key()) != TOP_KEY_NONE) {
			enum top_action a = top_handle_key(ctx, key, page);

			if (a == TOP_ACT_QUIT)
				return a;
			if (a > act)
				act = a;
		}
		if (act != TOP_ACT_NONE)
			return act;
		if (top_term_resized())
			return TOP_ACT_REDRAW;
		if (top_now() >= next)
			return TOP_ACT_REFRESH;
	}
}

static void top_ctx_free(struct top_ctx *ctx)
{
	for (size_t i = 0; i < sizeof(ctx->snap) / sizeof(ctx->snap[0]); i++)
		top_snap_free(&ctx->snap[i]);
	free(ctx->rows);
	top_seg_close(&ctx->seg);
}

int top_watch(int pid, double delay, unsigned long iterations,
	      enum top_sort sort)
{
	struct top_ctx ctx;
	struct top_screen scr = { 0 };
	struct top_snap *spare;
	char msg[TOP_MSG_LEN];
	enum top_status st;
	unsigned long frames = 0;
	int ret = TOP_EXIT_OK;
	bool refreshed = true;
	double next;

	memset(&ctx, 0, sizeof(ctx));
	if (!isatty(STDOUT_FILENO)) {
		top_error("standard output is not a terminal; use -o (slabinfo) "
			  "or --json for a one-shot dump");
		return TOP_EXIT_USAGE;
	}
	st = top_seg_open(&ctx.seg, pid, msg, sizeof(msg));
	ctx.cur = &ctx.snap[0];
	ctx.prev = &ctx.snap[1];
	spare = &ctx.snap[2];
	if (st == TOP_OK)
		st = top_snap_read(&ctx.seg, ctx.cur, msg, sizeof(msg));
	if (st != TOP_OK) {
		top_error("%s", msg);
		top_ctx_free(&ctx);
		return TOP_EXIT_TARGET;
	}
	ctx.delay = delay;
	ctx.sort = sort;
	if (top_term_enter()) {
		top_error("cannot set up the terminal: %s", strerror(errno));
		top_term_leave();
		top_ctx_free(&ctx);
		return TOP_EXIT_USAGE;
	}
	next = top_now() + delay;
	for (;;) {
		enum top_action act;
		int rows, cols;

		if (top_draw(&ctx, &scr)) {
			snprintf(msg, sizeof(msg), "cannot draw: %s", strerror(errno));
			ret = TOP_EXIT_TARGET;
			break;
		}
		/* -n counts the snapshots shown, not redraws after a key */
		if (refreshed && iterations && ++frames >= iterations)
			break;
		refreshed = false;
		top_term_size(&rows, &cols);
		top_scr_begin(&scr, rows, cols);
		act = top_wait(&ctx, next, top_view_list_height(&scr));
		if (act == TOP_ACT_QUIT)
			break;
		if (act != TOP_ACT_REFRESH)
			continue;
		ctx.note[0] = '\0';
		st = top_refresh(&ctx, &spare, msg, sizeof(msg));
		if (st != TOP_OK) {
			ret = TOP_EXIT_TARGET;
			break;
		}
		next = top_now() + delay;
		refreshed = true;
	}
	top_term_leave();
	if (ret != TOP_EXIT_OK)
		top_error("%s", msg);
	top_scr_free(&scr);
	top_ctx_free(&ctx);
	return ret;
}
