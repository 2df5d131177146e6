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
 * and exits 1.  Without a terminal (or with -b, or -o) the same frames are
 * written as plain text, one per refresh (-o: one), as top -b does.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tools/segpool-top/top.h"

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
int top_ctx_relayout(struct top_ctx *ctx)
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

/* One frame: full screen, or plain text (@plain) @cols wide. */
static int top_draw(struct top_ctx *ctx, struct top_screen *scr, bool plain,
		    int cols)
{
	int rows;

	top_update_age(ctx);
	if (top_ctx_relayout(ctx))
		return -1;
	if (plain) {
		top_scr_begin_plain(scr, cols);
	} else {
		top_term_size(&rows, &cols);
		top_scr_begin(scr, rows, cols);
	}
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

/* Sleep until @until (monotonic seconds); a signal cuts it short. */
static void top_sleep_until(double until)
{
	double left = until - top_now();
	struct timespec ts;

	if (left <= 0)
		return;
	ts.tv_sec = (time_t)left;
	ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

/*
 * Plain frames, for a file, a pipe or -o: no terminal set-up, no keys.
 * Frames are separated by an empty line; the width is the terminal's when
 * there is one (-o on a terminal), else wide enough for any row.
 */
static int top_batch(struct top_ctx *ctx, const struct top_opts *o,
		     struct top_snap *spare)
{
	struct top_screen scr = { 0 };
	char msg[TOP_MSG_LEN];
	unsigned long frames = 0;
	int ret = TOP_EXIT_OK, rows, cols = 1000;
	double next;

	if (isatty(STDOUT_FILENO))
		top_term_size(&rows, &cols);
	for (;;) {
		next = top_now() + o->delay;
		if (top_draw(ctx, &scr, true, cols)) {
			top_error("cannot write: %s", strerror(errno));
			ret = TOP_EXIT_TARGET;
			break;
		}
		frames++;
		if (o->mode == TOP_RUN_ONCE || (o->iterations &&
						frames >= o->iterations))
			break;
		top_sleep_until(next);
		ctx->note[0] = '\0';
		if (top_refresh(ctx, &spare, msg, sizeof(msg)) != TOP_OK) {
			top_error("%s", msg);
			ret = TOP_EXIT_TARGET;
			break;
		}
		if (write(STDOUT_FILENO, "\n", 1) != 1) {
			ret = TOP_EXIT_TARGET;
			break;
		}
	}
	top_scr_free(&scr);
	return ret;
}

int top_watch(const struct top_opts *o)
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
	/* the process first: "no such process" whatever the output is */
	st = top_seg_open(&ctx.seg, o->pid, msg, sizeof(msg));
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
	ctx.delay = o->delay;
	ctx.sort = o->sort;
	ctx.once = o->mode == TOP_RUN_ONCE;
	if (o->mode == TOP_RUN_ONCE || o->batch || !isatty(STDOUT_FILENO)) {
		ret = top_batch(&ctx, o, spare);
		top_ctx_free(&ctx);
		return ret;
	}
	if (top_term_enter()) {
		top_error("cannot set up the terminal: %s", strerror(errno));
		top_term_leave();
		top_ctx_free(&ctx);
		return TOP_EXIT_USAGE;
	}
	next = top_now() + o->delay;
	for (;;) {
		enum top_action act;
		int rows, cols;

		if (top_draw(&ctx, &scr, false, 0)) {
			snprintf(msg, sizeof(msg), "cannot draw: %s",
				 strerror(errno));
			ret = TOP_EXIT_TARGET;
			break;
		}
		/* -n counts the snapshots shown, not redraws after a key */
		if (refreshed && o->iterations && ++frames >= o->iterations)
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
		next = top_now() + o->delay;
		refreshed = true;
	}
	top_term_leave();
	if (ret != TOP_EXIT_OK)
		top_error("%s", msg);
	top_scr_free(&scr);
	top_ctx_free(&ctx);
	return ret;
}
