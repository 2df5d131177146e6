// SPDX-License-Identifier: MIT
/*
 * selftests/unit/test_top.c - segpool-top's pieces, unit by unit: the command
 * line (slabtop's options with slabtop's meanings), the keys, the orders
 * and the natural sort of names, and its manual's sort criteria against the
 * program's (Documentation/man/segpool-top.1.in).  test_export drives the whole
 * program against a live process; this test links its objects directly.
 *
 * And the segment as segpool-top opens it when someone else put a file at
 * its name (issue 23): a FIFO, a file of another mode or owner, a segment
 * that shrinks under the mapping.  The files are made under this
 * program's own pid, which is alive and owned by us.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <segpool/segpool.h>

#include "selftests/lib/harness.h"
#include "tools/segpool-top/top.h"

#ifndef SEGPOOL_SRCTREE
#define SEGPOOL_SRCTREE "."
#endif
#define TOP_DOC		SEGPOOL_SRCTREE "/Documentation/man/segpool-top.1.in"

/* slabtop(1), procps-ng: its sort letters and what they sort by */
static const struct {
	char key;
	const char *what;
} slabtop_sorts[] = {
	{ 'a', "number of active objects" }, { 'b', "objects per slab" },
	{ 'c', "cache size" }, { 'l', "number of slabs" },
	{ 'v', "number of active slabs" }, { 'n', "name" },
	{ 'o', "number of objects" }, { 'p', "pages per slab" },
	{ 's', "object size" }, { 'u', "cache utilization" },
};

static void test_natural_sort(void **state)
{
	static const char *const sorted[] = {
		"kmalloc-8", "kmalloc-16", "kmalloc-96", "kmalloc-112",
		"kmalloc-1k", "kmalloc-2k", "kmalloc-10k", "kmalloc-32k",
		"kmalloc-1m", "log", "log2", "log10", "log10x", "logpipe",
	};
	const size_t n = sizeof(sorted) / sizeof(sorted[0]);

	(void)state;
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(top_natcmp(sorted[i], sorted[i]), 0);
		for (size_t j = i + 1; j < n; j++) {
			if (top_natcmp(sorted[i], sorted[j]) >= 0)
				fail_msg("%s is not before %s", sorted[i],
					 sorted[j]);
			if (top_natcmp(sorted[j], sorted[i]) <= 0)
				fail_msg("%s is not after %s", sorted[j],
					 sorted[i]);
		}
	}
	/* a suffix counts only at a word's end: "10kb" is 10 then "kb" */
	assert_true(top_natcmp("x-10kb", "x-11") < 0);
	/* equal values, other spellings: still a strict order */
	assert_true(top_natcmp("k010", "k10") != 0);
	assert_true((top_natcmp("k010", "k10") < 0) ==
		    (top_natcmp("k10", "k010") > 0));
	/* digits that overflow saturate instead of wrapping */
	assert_true(top_natcmp("a99999999999999999999999", "a1") > 0);
}

static void test_sort_keys(void **state)
{
	enum top_sort s;

	(void)state;
	/* slabtop's letters, in either case, mean what they mean there */
	for (size_t i = 0; i < sizeof(slabtop_sorts) / sizeof(slabtop_sorts[0]);
	     i++) {
		char lower[2] = { slabtop_sorts[i].key, 0 };
		char upper[2] = { (char)(slabtop_sorts[i].key - 'a' + 'A'), 0 };
		enum top_sort t;

		assert_int_equal(top_sort_parse(lower, &s), 0);
		assert_string_equal(top_sort_name(s), slabtop_sorts[i].what);
		assert_true(top_sort_keys[s].slabtop);
		assert_int_equal(top_sort_parse(upper, &t), 0);
		assert_int_equal(t, s);
		assert_int_equal(top_sort_of_key(slabtop_sorts[i].key, &t), 0);
		assert_int_equal(t, s);
		/* the word works too */
		assert_int_equal(top_sort_parse(top_sort_keys[s].word, &t), 0);
		assert_int_equal(t, s);
	}
	/*
	 * every entry is slabtop's but growth, on a letter slabtop leaves free
	 */
	for (int i = 0; i < TOP_SORT_NR; i++) {
		bool theirs = false;

		for (size_t k = 0; k < sizeof(slabtop_sorts) /
		     sizeof(slabtop_sorts[0]); k++)
			theirs |= slabtop_sorts[k].key == top_sort_keys[i].key;
		assert_int_equal(theirs, top_sort_keys[i].slabtop);
	}
	assert_int_equal(top_sort_parse("g", &s), 0);
	assert_int_equal(s, TOP_SORT_GROWTH);
	assert_int_equal(top_sort_parse("c", &s), 0);
	assert_int_equal(s, TOP_SORT_CACHE_SIZE);
	assert_int_equal(top_sort_parse("G", &s), -1);
	assert_int_equal(top_sort_parse("x", &s), -1);
	assert_int_equal(top_sort_parse("", &s), -1);
	assert_int_equal(top_sort_parse("cache", &s), -1);
	assert_int_equal(top_sort_of_key(TOP_KEY_UP, &s), -1);
}

/* Parse a command line given as one string split on spaces. */
static int parse(const char *line, struct top_opts *o, char *msg, size_t len)
{
	char buf[256], *argv[32], *save = NULL;
	int argc = 0;

	snprintf(buf, sizeof(buf), "segpool-top %s", line);
	for (char *t = strtok_r(buf, " ", &save); t && argc < 31;
	     t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	argv[argc] = NULL;
	return top_parse_args(argc, argv, o, msg, len);
}

static void expect_usage(const char *line, const char *needle)
{
	struct top_opts o;
	char msg[TOP_MSG_LEN];

	if (parse(line, &o, msg, sizeof(msg)) != TOP_EXIT_USAGE)
		fail_msg("'%s' was accepted", line);
	if (!strstr(msg, needle))
		fail_msg("'%s': \"%s\" does not say \"%s\"", line, msg, needle);
}

static void test_options(void **state)
{
	struct top_opts o;
	char msg[TOP_MSG_LEN];

	(void)state;
	/* slabtop's defaults: order o, every 3 seconds */
	assert_int_equal(parse("-p 42", &o, msg, sizeof(msg)), 0);
	assert_int_equal(o.pid, 42);
	assert_int_equal(o.sort, TOP_SORT_OBJS);
	assert_true(o.delay == 3.0);
	assert_int_equal(o.mode, TOP_RUN_WATCH);
	assert_false(o.batch);

	assert_int_equal(parse("-o -s c 42", &o, msg, sizeof(msg)), 0);
	assert_int_equal(o.mode, TOP_RUN_ONCE);
	assert_int_equal(o.sort, TOP_SORT_CACHE_SIZE);
	assert_int_equal(o.pid, 42);
	assert_int_equal(parse("--once --sort=objsize 7", &o, msg, sizeof(msg)),
			 0);
	assert_int_equal(o.sort, TOP_SORT_OBJ_SIZE);
	assert_int_equal(
		parse("--delay=0.5 -b -n 3 -p 9", &o, msg, sizeof(msg)), 0);
	assert_true(o.delay == 0.5 && o.batch && o.iterations == 3);
	assert_int_equal(parse("--slabinfo 5", &o, msg, sizeof(msg)), 0);
	assert_int_equal(o.mode, TOP_RUN_SLABINFO);
	assert_int_equal(parse("--json 5", &o, msg, sizeof(msg)), 0);
	assert_int_equal(o.mode, TOP_RUN_JSON);
	assert_int_equal(parse("-h", &o, msg, sizeof(msg)), 0);
	assert_int_equal(o.mode, TOP_RUN_HELP);
	assert_int_equal(parse("-V", &o, msg, sizeof(msg)), 0);
	assert_int_equal(o.mode, TOP_RUN_VERSION);

	expect_usage("-o -d 1 5", "-d cannot be combined with -o");
	expect_usage("-s x 5", "-s wants a sort key");
	expect_usage("-s G 5", "-s wants a sort key");
	expect_usage("-d 0.05 5", "-d wants seconds");
	expect_usage("-d 3x 5", "-d wants seconds");
	expect_usage("-n 0 5", "-n wants a positive count");
	expect_usage("-n -2 5", "-n wants a positive count");
	expect_usage("-o --json 5", "choose one");
	expect_usage("--slabinfo --json 5", "choose one");
	expect_usage("-n 2 --json 5", "-n goes with the live view");
	expect_usage("-o", "give its pid with -p PID");
	expect_usage("-p 12x", "is not a pid");
	expect_usage("-p 0", "is not a pid");
	expect_usage("-z 5", "unknown option '-z'");
	expect_usage("-p", "wants a value");
	/* the extra one is the one named: 5 is the process, 6 too many */
	expect_usage("5 6", "unexpected argument '6'");
	expect_usage("-p 5 6", "unexpected argument '6'");
	expect_usage("-oz 5", "unknown option '-z'");
}

/* -V: the release, as other tools' --version prints theirs */
static void test_version(void **state)
{
	const char *want = "segpool-top (segpool) " SEGPOOL_VERSION_STRING "\n";
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	top_version(f);
	fclose(f);
	if (strncmp(text, want, strlen(want)))
		fail_msg("-V prints \"%s\"", text);
	free(text);
}


/* A snapshot of made-up caches on one node, for the keys and the views. */
static struct segpool_export_cache fake[5];
static struct segpool_export_cache_node fake_cnodes[5];
static struct segpool_export_node fake_node;
static struct top_snap snap;

static void fake_snapshot(void)
{
	static const struct {
		const char *name;
		uint64_t objs, active, size, bytes;
	} c[] = {
		{ "kmalloc-10k", 3, 1, 10240, 32768 },
		{ "kmalloc-112", 36, 30, 112, 4096 },
		{ "conn", 128, 100, 200, 65536 },
		{ "kmalloc-8", 512, 2, 8, 4096 },
		{ "zeta", 0, 0, 64, 0 },
	};

	memset(fake, 0, sizeof(fake));
	memset(&snap, 0, sizeof(snap));
	for (size_t i = 0; i < 5; i++) {
		snprintf(fake[i].name, sizeof(fake[i].name), "%s", c[i].name);
		fake[i].total_objs = c[i].objs;
		fake[i].active_objs = c[i].active;
		fake[i].object_size = c[i].size;
		fake[i].stride = c[i].size;
		fake[i].slab_bytes = c[i].bytes;
		fake[i].total_slabs = c[i].bytes / 4096;
	}
	snap.hdr.nr_caches = 5;
	snap.caches = fake;
	memset(fake_cnodes, 0, sizeof(fake_cnodes));
	memset(&fake_node, 0, sizeof(fake_node));
	snap.hdr.nr_nodes = 1;
	snap.hdr.page_size = 4096;
	snap.nodes = &fake_node;
	snap.cnodes = fake_cnodes;
	fake_node.pages_reserved = 1u << 20;		/* 4 GiB */
	fake_node.pages_committed = 1024;
	fake_node.pages_used = 27;
	fake_cnodes[2].partial_slabs = 16;		/* conn: 16 slabs */
	fake_cnodes[2].objects = 100;
	fake[2].pages_per_slab = 1;
}

/* A viewer's context on the made-up snapshot, its rows laid out. */
static void fake_ctx(struct top_ctx *ctx)
{
	fake_snapshot();
	memset(ctx, 0, sizeof(*ctx));
	ctx->cur = &snap;
	ctx->prev = &snap;
	ctx->sort = TOP_SORT_DEFAULT;
	ctx->delay = 3.0;
	assert_int_equal(top_ctx_relayout(ctx), 0);
}

/* The lines of a plain frame, in @line[] (the frame's buffer, cut up). */
static int frame_lines(struct top_screen *scr, char **line, int max)
{
	char *p, *end;
	int n = 0;

	assert_true(scr->plain);
	p = scr->buf;
	end = scr->buf + scr->len;
	while (p && p < end && n < max) {
		char *nl = memchr(p, '\n', (size_t)(end - p));

		line[n++] = p;
		if (!nl)
			break;
		*nl = '\0';
		p = nl + 1;
	}
	return n;
}

/*
 * slabtop -o's frame (procps-ng slabtop.c): five summary lines, a blank
 * line, the header, then one row per cache in its formats (a real frame:
 * "703560 518344   0%    0.10K  18040       39     72160K buffer_head"); 79
 * columns with a 23-character name.
 */
static const char *const slabtop_summary[] = {
	" Active / Total Objects (% used)    : ",
	" Active / Total Slabs (% used)      : ",
	" Active / Total Caches (% used)     : ",
	" Active / Total Size (% used)       : ",
	" Minimum / Average / Maximum Object : ",
};
#define SLABTOP_HEADER \
	"  OBJS ACTIVE  USE OBJ SIZE  SLABS OBJ/SLAB CACHE SIZE NAME"
#define SLABTOP_NAME_COL 55

static void check_slabtop_row(const char *row,
			      const struct segpool_export_cache *c)
{
	unsigned int objs, active, use, slabs, per, kib;
	float size;
	char name[64];

	if (strlen(row) > 79 && strlen(c->name) <= 23)
		fail_msg("row wider than slabtop's 79 columns: \"%s\"", row);
	/* slabtop: "%6u %6u %3u%% %7.2fK %6u %8u %9uK %-23s" */
	if (sscanf(row, "%6u %6u %3u%% %7fK %6u %8u %9uK %63s", &objs, &active,
		   &use, &size, &slabs, &per, &kib, name) != 8)
		fail_msg("not a slabtop row: \"%s\"", row);
	assert_int_equal(objs, c->total_objs);
	assert_int_equal(active, c->active_objs);
	assert_int_equal(use, c->total_objs ?
			 c->active_objs * 100 / c->total_objs : 0);
	assert_int_equal(kib, (c->slab_bytes + 1023) / 1024);
	assert_string_equal(name, c->name);
	/*
	 * the columns end where the header's do:
	 * the name at column 55 (0-based)
	 */
	if (strncmp(row + SLABTOP_NAME_COL, c->name, strlen(c->name)) ||
	    row[SLABTOP_NAME_COL - 1] != ' ')
		fail_msg("the name is not at column %d: \"%s\"",
			 SLABTOP_NAME_COL, row);
	assert_int_equal(row[17], '%');		/* USE ends at 18 */
	assert_int_equal(row[26], 'K');		/* OBJ SIZE at 27 */
	assert_int_equal(row[53], 'K');		/* CACHE SIZE at 54 */
}

static void test_once_frame(void **state)
{
	static const int widths[] = { 80, 1000 };
	struct top_ctx ctx;

	(void)state;
	for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++) {
		struct top_screen scr = { 0 };
		char *line[64];
		int n;

		fake_ctx(&ctx);
		ctx.once = true;
		top_scr_begin_plain(&scr, widths[w]);
		top_view_list(&ctx, &scr);
		n = frame_lines(&scr, line, 64);
		printf("# -o frame at %d columns:\n", widths[w]);
		for (int i = 0; i < n; i++)
			printf("#   |%s|\n", line[i]);
		/* nothing before, nothing between, one row per cache */
		assert_int_equal(n, 5 + 1 + 1 + (int)snap.hdr.nr_caches);
		for (int i = 0; i < 5; i++)
			if (strncmp(line[i], slabtop_summary[i],
				    strlen(slabtop_summary[i])))
				fail_msg(
					"line %d is \"%s\", "
					"slabtop's starts \"%s\"",
					i + 1, line[i], slabtop_summary[i]);
		assert_string_equal(line[0] + strlen(slabtop_summary[0]),
				    "133 / 679 (19.6%)");
		assert_string_equal(line[5], "");
		assert_string_equal(line[6], SLABTOP_HEADER);
		for (int i = 7; i < n; i++)
			check_slabtop_row(line[i], ctx.rows[i - 7].c);
		top_scr_free(&scr);
		free(ctx.rows);
	}
}

/* The live list at 80 columns: slabtop's columns, each name in view. */
static void test_list_width(void **state)
{
	struct top_ctx ctx;
	struct top_screen scr = { 0 };
	char *line[64];
	int n;

	(void)state;
	fake_ctx(&ctx);
	top_scr_begin_plain(&scr, 80);
	top_view_list(&ctx, &scr);
	n = frame_lines(&scr, line, 64);
	assert_int_equal(n, 10 + (int)snap.hdr.nr_caches);
	assert_string_equal(line[9], SLABTOP_HEADER);
	for (int i = 10; i < n; i++)
		check_slabtop_row(line[i], ctx.rows[i - 10].c);
	top_scr_free(&scr);
	/* wider: segpool-top's STRIDE and GROWTH come before NAME */
	top_scr_begin_plain(&scr, 120);
	top_view_list(&ctx, &scr);
	n = frame_lines(&scr, line, 64);
	assert_true(n > 9);
	assert_non_null(strstr(line[9], "CACHE SIZE  STRIDE  GROWTH NAME"));
	top_scr_free(&scr);
	free(ctx.rows);
}

/*
 * The hint of a view, "(X or Y: back ...", names keys that go back to the
 * list: each one, pressed there, does.
 */
static int key_of_name(const char *name)
{
	if (!strcmp(name, "Esc"))
		return TOP_KEY_ESC;
	if (!strcmp(name, "Enter"))
		return TOP_KEY_ENTER;
	if (strlen(name) == 1)
		return name[0];
	fail_msg("a hint names key \"%s\"", name);
	return 0;
}

static void check_back_hint(enum top_mode mode)
{
	struct top_ctx ctx;
	struct top_screen scr = { 0 };
	char *line[64], a[16], b[16];
	const char *hint = NULL;
	int n, keys[2];

	fake_ctx(&ctx);
	ctx.mode = mode;
	snprintf(ctx.selected, sizeof(ctx.selected), "conn");
	top_scr_begin_plain(&scr, 200);
	if (mode == TOP_VIEW_CACHE)
		top_view_cache(&ctx, &scr);
	else
		top_view_nodes(&ctx, &scr);
	n = frame_lines(&scr, line, 64);
	for (int i = 0; i < n && !hint; i++)
		if (strstr(line[i], ": back to the list"))
			hint = strchr(line[i], '(');
	if (!hint)
		fail_msg("view %d has no hint to go back", mode);
	if (sscanf(hint, "(%15s or %15[^:]", a, b) != 2)
		fail_msg("a hint it cannot read: %s", hint);
	keys[0] = key_of_name(a);
	keys[1] = key_of_name(b);
	for (int k = 0; k < 2; k++) {
		ctx.mode = mode;
		top_handle_key(&ctx, keys[k], 10);
		if (ctx.mode != TOP_VIEW_LIST)
			fail_msg("the hint says %s goes back; it does not",
				 k ? b : a);
	}
	top_scr_free(&scr);
	free(ctx.rows);
}

static void test_back_hints(void **state)
{
	(void)state;
	check_back_hint(TOP_VIEW_CACHE);
	check_back_hint(TOP_VIEW_NODES);
}

/* The nodes view: every memory figure in K, one unit per column. */
static void test_nodes_units(void **state)
{
	struct top_ctx ctx;
	struct top_screen scr = { 0 };
	char *line[64];
	int n, checked = 0;

	(void)state;
	fake_ctx(&ctx);
	top_scr_begin_plain(&scr, 120);
	top_view_nodes(&ctx, &scr);
	n = frame_lines(&scr, line, 64);
	for (int i = 0; i < n; i++) {
		char bound[8], res[24], com[24], used[24], mem[24];
		char dirty[24], purged[24], huge[24];
		unsigned long long slabs, objs;
		int node;

		if (sscanf(line[i], " %d %7s %23s %23s %23s %23s %23s %23s "
			   "%llu %llu %23s", &node, bound, res, com, used,
			   dirty, purged, huge, &slabs, &objs, mem) == 11) {
			assert_string_equal(res, "4194304K");
			assert_string_equal(com, "4096K");
			assert_string_equal(used, "108K");
			/* retained, purged and huge: K as well */
			assert_true(dirty[strlen(dirty) - 1] == 'K');
			assert_true(purged[strlen(purged) - 1] == 'K');
			assert_true(huge[strlen(huge) - 1] == 'K');
			assert_string_equal(mem, "64K");
			checked++;
		} else if (sscanf(line[i], " conn %23s", mem) == 1) {
			assert_string_equal(mem, "64K");
			checked++;
		}
	}
	assert_int_equal(checked, 2);
	top_scr_free(&scr);
	free(ctx.rows);
}

/* End, then e: the rows left fill the screen again, none is lost below. */
static void test_end_then_hide(void **state)
{
	struct top_ctx ctx;
	struct top_screen scr = { 0 };
	const int rows = 10 + 3;		/* room for three rows */

	(void)state;
	fake_ctx(&ctx);
	top_scr_begin(&scr, rows, 80);
	top_view_list(&ctx, &scr);
	assert_int_equal(top_handle_key(&ctx, TOP_KEY_END, 3), TOP_ACT_REDRAW);
	assert_int_equal(top_ctx_relayout(&ctx), 0);
	top_scr_begin(&scr, rows, 80);
	top_view_list(&ctx, &scr);
	assert_int_equal(scr.line, rows);
	assert_int_equal(top_handle_key(&ctx, 'e', 3), TOP_ACT_REDRAW);
	assert_int_equal(top_ctx_relayout(&ctx), 0);
	assert_int_equal(ctx.nrows, 4);
	top_scr_begin(&scr, rows, 80);
	top_view_list(&ctx, &scr);
	assert_int_equal(ctx.sel, 3);
	if (scr.line != rows)
		fail_msg("%d of %d lines drawn: rows %zu.. of %zu", scr.line,
			 rows, ctx.first, ctx.nrows);
	top_scr_free(&scr);
	free(ctx.rows);
}


static void expect_order(enum top_sort sort, bool reverse, bool hide,
			 const char *want)
{
	struct top_row *rows = NULL;
	size_t cap = 0;
	char got[256] = "";
	long n = top_rows_build(&rows, &cap, &snap, NULL, sort, reverse, hide);

	assert_true(n >= 0);
	for (long i = 0; i < n; i++) {
		strcat(got, rows[i].c->name);
		if (i + 1 < n)
			strcat(got, " ");
	}
	free(rows);
	if (strcmp(got, want))
		fail_msg("order %s%s: \"%s\", not \"%s\"", top_sort_name(sort),
			 reverse ? " reversed" : "", got, want);
}

static void test_orders(void **state)
{
	(void)state;
	fake_snapshot();
	expect_order(TOP_SORT_NAME, false, false,
		     "conn kmalloc-8 kmalloc-112 kmalloc-10k zeta");
	expect_order(TOP_SORT_NAME, true, false,
		     "zeta kmalloc-10k kmalloc-112 kmalloc-8 conn");
	expect_order(TOP_SORT_OBJS, false, false,
		     "kmalloc-8 conn kmalloc-112 kmalloc-10k zeta");
	expect_order(TOP_SORT_ACTIVE, false, false,
		     "conn kmalloc-112 kmalloc-8 kmalloc-10k zeta");
	expect_order(TOP_SORT_CACHE_SIZE, false, false,
		     "conn kmalloc-10k kmalloc-8 kmalloc-112 zeta");
	expect_order(TOP_SORT_OBJ_SIZE, false, false,
		     "kmalloc-10k conn kmalloc-112 zeta kmalloc-8");
	expect_order(TOP_SORT_USE, false, false,
		     "kmalloc-112 conn kmalloc-10k kmalloc-8 zeta");
	expect_order(TOP_SORT_NAME, false, true,
		     "conn kmalloc-8 kmalloc-112 kmalloc-10k");
}

static void test_keys(void **state)
{
	struct top_ctx ctx;
	const long page = 10;

	(void)state;
	fake_snapshot();
	memset(&ctx, 0, sizeof(ctx));
	ctx.cur = &snap;
	ctx.sort = TOP_SORT_DEFAULT;
	ctx.nrows = 5;

	/* slabtop's keys */
	assert_int_equal(top_handle_key(&ctx, 'c', page), TOP_ACT_REDRAW);
	assert_int_equal(ctx.sort, TOP_SORT_CACHE_SIZE);
	assert_int_equal(ctx.mode, TOP_VIEW_LIST);	/* c sorts, no view */
	assert_int_equal(top_handle_key(&ctx, 'S', page), TOP_ACT_REDRAW);
	assert_int_equal(ctx.sort, TOP_SORT_OBJ_SIZE);
	assert_int_equal(top_handle_key(&ctx, 'N', page), TOP_ACT_REDRAW);
	assert_int_equal(ctx.sort, TOP_SORT_NAME);	/* N is a sort too */
	assert_int_equal(ctx.mode, TOP_VIEW_LIST);
	assert_int_equal(top_handle_key(&ctx, 'o', page), TOP_ACT_REDRAW);
	assert_int_equal(ctx.sort, TOP_SORT_OBJS);
	assert_int_equal(top_handle_key(&ctx, ' ', page), TOP_ACT_REFRESH);
	assert_int_equal(top_handle_key(&ctx, 'Q', page), TOP_ACT_QUIT);

	/* r reverses the order on screen; a new order starts unreversed */
	assert_int_equal(top_handle_key(&ctx, 'r', page), TOP_ACT_REDRAW);
	assert_true(ctx.reverse);
	assert_int_equal(top_handle_key(&ctx, 'a', page), TOP_ACT_REDRAW);
	assert_int_equal(ctx.sort, TOP_SORT_ACTIVE);
	assert_false(ctx.reverse);
	assert_int_equal(top_handle_key(&ctx, 'r', page), TOP_ACT_REDRAW);
	assert_int_equal(top_handle_key(&ctx, 'r', page), TOP_ACT_REDRAW);
	assert_false(ctx.reverse);

	/* segpool-top's own keys, on letters slabtop leaves free */
	assert_int_equal(top_handle_key(&ctx, 'g', page), TOP_ACT_REDRAW);
	assert_int_equal(ctx.sort, TOP_SORT_GROWTH);
	assert_int_equal(top_handle_key(&ctx, 'e', page), TOP_ACT_REDRAW);
	assert_true(ctx.hide_empty);
	assert_int_equal(top_handle_key(&ctx, 'i', page), TOP_ACT_REDRAW);
	assert_int_equal(ctx.mode, TOP_VIEW_CACHE);
	assert_int_equal(top_handle_key(&ctx, TOP_KEY_ESC, page),
			 TOP_ACT_REDRAW);
	assert_int_equal(ctx.mode, TOP_VIEW_LIST);
	assert_int_equal(top_handle_key(&ctx, TOP_KEY_ENTER, page),
			 TOP_ACT_REDRAW);
	assert_int_equal(ctx.mode, TOP_VIEW_CACHE);
	assert_int_equal(top_handle_key(&ctx, TOP_KEY_ENTER, page),
			 TOP_ACT_REDRAW);
	assert_int_equal(ctx.mode, TOP_VIEW_LIST);
	assert_int_equal(top_handle_key(&ctx, 'm', page), TOP_ACT_REDRAW);
	assert_int_equal(ctx.mode, TOP_VIEW_NODES);
	assert_int_equal(top_handle_key(&ctx, 'm', page), TOP_ACT_REDRAW);
	assert_int_equal(ctx.mode, TOP_VIEW_LIST);
	assert_int_equal(top_handle_key(&ctx, 'h', page), TOP_ACT_REDRAW);
	assert_int_equal(ctx.mode, TOP_VIEW_HELP);
	/* in help any key goes back, and does nothing else */
	assert_int_equal(top_handle_key(&ctx, 'c', page), TOP_ACT_REDRAW);
	assert_int_equal(ctx.mode, TOP_VIEW_LIST);
	assert_int_equal(ctx.sort, TOP_SORT_GROWTH);
	/* selection */
	assert_int_equal(top_handle_key(&ctx, 'j', page), TOP_ACT_REDRAW);
	assert_int_equal(ctx.sel, 1);
	assert_int_equal(top_handle_key(&ctx, TOP_KEY_END, page),
			 TOP_ACT_REDRAW);
	assert_int_equal(ctx.sel, 4);
	assert_int_equal(top_handle_key(&ctx, TOP_KEY_PGUP, page),
			 TOP_ACT_REDRAW);
	assert_int_equal(ctx.sel, 0);
	/* a letter nobody uses does nothing */
	assert_int_equal(top_handle_key(&ctx, 'z', page), TOP_ACT_NONE);
}

/*
 * The manual's SORT CRITERIA are the program's: each ".TP" entry's tag line
 * (".BR a \", \" active") names a letter and its word, the text after it
 * starts with what the order sorts by, names its column ("no column" when
 * it has none) and says "not in slabtop" exactly for segpool-top's own.
 */
static void check_sort_entry(const char *tag, const char *desc)
{
	char key, word[32];
	const char *what, *col;
	enum top_sort s;

	if (sscanf(tag, ".BR %c \", \" %31s", &key, word) != 2)
		fail_msg("%s: a sort entry it cannot read: %s", TOP_DOC, tag);
	assert_int_equal(top_sort_of_key(key, &s), 0);
	assert_string_equal(top_sort_keys[s].word, word);
	what = top_sort_keys[s].what;
	if (!strncmp(desc, "the ", 4) && strncmp(desc, what, strlen(what)))
		desc += 4;
	if (strncmp(desc, what, strlen(what)) ||
	    !strchr(" .,;(", desc[strlen(what)]))
		fail_msg("%s: sort %c is \"%s\", the page says: %s", TOP_DOC,
			 key, what, desc);
	col = top_sort_keys[s].column;
	if (!strstr(desc, col ? col : "no column"))
		fail_msg("%s: sort %c does not name its column %s", TOP_DOC,
			 key, col ? col : "(none)");
	assert_int_equal(!strstr(desc, "not in slabtop"),
			 top_sort_keys[s].slabtop);
}

static void test_manual_tables(void **state)
{
	FILE *f = fopen(TOP_DOC, "r");
	char line[512], tag[512] = "", desc[2048] = "";
	bool in_sort = false, in_tag = false;
	int rows = 0;

	(void)state;
	if (!f)
		fail_msg("cannot open %s", TOP_DOC);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, ".SH ", 4) || !strcmp(line, ".TP")) {
			if (in_sort && tag[0]) {
				check_sort_entry(tag, desc);
				rows++;
			}
			tag[0] = desc[0] = '\0';
			in_tag = !strcmp(line, ".TP");
			if (line[1] == 'S')
				in_sort = !strcmp(line, ".SH SORT CRITERIA");
			continue;
		}
		if (!in_sort)
			continue;
		if (in_tag) {
			memcpy(tag, line, strlen(line) + 1);
			in_tag = false;
		} else if (tag[0]) {
			size_t n = strlen(desc), l = strlen(line);

			if (n + l + 2 > sizeof(desc))
				fail_msg("%s: sort entry too long: %s", TOP_DOC,
					 tag);
			if (n)
				desc[n++] = ' ';
			memcpy(desc + n, line, l + 1);
		}
	}
	fclose(f);
	assert_int_equal(rows, TOP_SORT_NR);
}

/* --- a planted segment ---------------------------------------------------- */

#define FAKE_CAP	4
#define FAKE_SIZE	65536UL

static void seg_path(char *buf, size_t len)
{
	snprintf(buf, len, "/dev/shm%s%d", SEGPOOL_EXPORT_SHM_PREFIX,
		 (int)getpid());
}

/*
 * A segment of this process that segpool-top reads as a real one (one
 * node, one cache "forged"), mode @mode; its descriptor, read-write.
 */
static int fake_segment(mode_t mode)
{
	const size_t hs = sizeof(struct segpool_export_header);
	struct segpool_export_header *h;
	struct segpool_export_cache *cr;
	char path[64];
	int fd;

	seg_path(path, sizeof(path));
	unlink(path);
	fd = open(path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(fchmod(fd, mode), 0);
	assert_int_equal(ftruncate(fd, (off_t)FAKE_SIZE), 0);
	h = mmap(NULL, FAKE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(h != MAP_FAILED);
	h->layout_version = SEGPOOL_EXPORT_LAYOUT_VERSION;
	h->header_size = (uint32_t)hs;
	h->cache_size = sizeof(struct segpool_export_cache);
	h->cache_node_size = sizeof(struct segpool_export_cache_node);
	h->node_size = sizeof(struct segpool_export_node);
	h->arena_size = sizeof(struct segpool_export_arena);
	h->pid = (int32_t)getpid();
	h->nr_nodes = 1;
	h->nr_cpus = 1;
	h->page_size = 4096;
	h->updates = 1;
	h->segment_size = FAKE_SIZE;
	h->interval_ms = 1000;
	h->capacity = FAKE_CAP;
	h->nr_caches = 1;
	h->nodes_offset = hs;
	h->caches_offset = hs + sizeof(struct segpool_export_node);
	h->cache_nodes_offset = h->caches_offset +
				FAKE_CAP * sizeof(struct segpool_export_cache);
	h->arena_capacity = FAKE_CAP;
	h->arenas_offset = h->cache_nodes_offset +
			   FAKE_CAP * sizeof(struct segpool_export_cache_node);
	assert_true(h->arenas_offset + FAKE_CAP *
		    sizeof(struct segpool_export_arena) <= FAKE_SIZE);
	cr = (struct segpool_export_cache *)((char *)h + h->caches_offset);
	snprintf(cr->name, sizeof(cr->name), "forged");
	__atomic_store_n(&h->magic, SEGPOOL_EXPORT_MAGIC, __ATOMIC_RELEASE);
	munmap(h, FAKE_SIZE);
	return fd;
}

static void drop_segment(int fd)
{
	char path[64];

	seg_path(path, sizeof(path));
	unlink(path);
	if (fd >= 0)
		close(fd);
}

static enum top_status open_own(struct top_seg *sg, char *msg, size_t len)
{
	msg[0] = '\0';
	return top_seg_open(sg, (int)getpid(), msg, len);
}

/* The fake itself is read as a segment: the checks below refuse on their
 * own grounds, not because the fake is bad. */
static void test_seg_fake_reads(void **state)
{
	struct top_snap snapshot = { 0 };
	char msg[TOP_MSG_LEN];
	struct top_seg sg;
	int fd = fake_segment(0600);

	(void)state;
	if (open_own(&sg, msg, sizeof(msg)) != TOP_OK)
		fail_msg("the fake segment is refused: %s", msg);
	assert_int_equal(top_snap_read(&sg, &snapshot, msg, sizeof(msg)),
			 TOP_OK);
	assert_int_equal(snapshot.hdr.nr_caches, 1);
	assert_string_equal(snapshot.caches[0].name, "forged");
	top_snap_free(&snapshot);
	top_seg_close(&sg);
	drop_segment(fd);
}

/* Open a planted FIFO in a child under an alarm: it must not block. */
static void test_seg_fifo(void **state)
{
	char path[64], msg[TOP_MSG_LEN];
	int status, me = (int)getpid();
	struct top_seg sg;
	pid_t pid;

	(void)state;
	seg_path(path, sizeof(path));
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		alarm(10);	/* a blocked open dies of SIGALRM */
		_exit(top_seg_open(&sg, me, msg, sizeof(msg)));
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status)) {
		unlink(path);
		fail_msg("opening a FIFO at the segment's name blocked "
			 "(status %#x)", status);
	}
	assert_int_equal(WEXITSTATUS(status), TOP_EBADSEG);
	assert_int_equal(open_own(&sg, msg, sizeof(msg)), TOP_EBADSEG);
	assert_non_null(strstr(msg, "is not a regular file (a FIFO of uid "));
	unlink(path);
	/* a symbolic link there is refused too, not followed */
	assert_int_equal(symlink("/etc/passwd", path), 0);
	assert_int_equal(open_own(&sg, msg, sizeof(msg)), TOP_EBADSEG);
	assert_non_null(strstr(msg, "is a symbolic link"));
	unlink(path);
}

/* Only mode 0600 is segpool's. */
static void test_seg_mode(void **state)
{
	char msg[TOP_MSG_LEN];
	struct top_seg sg;
	int fd = fake_segment(0644);

	(void)state;
	assert_int_equal(open_own(&sg, msg, sizeof(msg)), TOP_EBADSEG);
	assert_non_null(strstr(msg, "has mode 0644, not 0600"));
	assert_int_equal(fchmod(fd, 0400), 0);
	assert_int_equal(open_own(&sg, msg, sizeof(msg)), TOP_EBADSEG);
	assert_non_null(strstr(msg, "has mode 0400, not 0600"));
	drop_segment(fd);
}

/* Owned by another user than the process's: needs root to plant. */
static void test_seg_owner(void **state)
{
	char msg[TOP_MSG_LEN], want[160];
	struct top_seg sg;
	int fd;

	(void)state;
	if (geteuid() != 0)
		skip();
	fd = fake_segment(0600);
	assert_int_equal(fchown(fd, 65534, 65534), 0);
	assert_int_equal(open_own(&sg, msg, sizeof(msg)), TOP_EBADSEG);
	snprintf(want, sizeof(want), "is owned by uid 65534, but process %d "
		 "runs as uid 0", (int)getpid());
	if (!strstr(msg, want))
		fail_msg("expected \"%s\" in: %s", want, msg);
	drop_segment(fd);
}

/* Cut short while mapped: the next read says so, no SIGBUS. */
static void test_seg_shrinks(void **state)
{
	struct top_snap snapshot = { 0 };
	char msg[TOP_MSG_LEN];
	struct top_seg sg;
	int fd = fake_segment(0600);

	(void)state;
	assert_int_equal(open_own(&sg, msg, sizeof(msg)), TOP_OK);
	assert_int_equal(top_snap_read(&sg, &snapshot, msg, sizeof(msg)),
			 TOP_OK);
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(top_snap_read(&sg, &snapshot, msg, sizeof(msg)),
			 TOP_EBADSEG);
	assert_non_null(strstr(msg, "shrank from 65536 to 0 bytes"));
	top_snap_free(&snapshot);
	top_seg_close(&sg);
	drop_segment(fd);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_natural_sort),
	cmocka_unit_test(test_sort_keys),
	cmocka_unit_test(test_options),
	cmocka_unit_test(test_version),
	cmocka_unit_test(test_once_frame),
	cmocka_unit_test(test_list_width),
	cmocka_unit_test(test_back_hints),
	cmocka_unit_test(test_nodes_units),
	cmocka_unit_test(test_end_then_hide),
	cmocka_unit_test(test_orders),
	cmocka_unit_test(test_keys),
	cmocka_unit_test(test_manual_tables),
	cmocka_unit_test(test_seg_fake_reads),
	cmocka_unit_test(test_seg_fifo),
	cmocka_unit_test(test_seg_mode),
	cmocka_unit_test(test_seg_owner),
	cmocka_unit_test(test_seg_shrinks),
};

SP_TEST_MAIN(tests)
