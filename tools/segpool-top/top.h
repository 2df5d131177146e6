/* SPDX-License-Identifier: MIT */
/*
 * tools/segpool-top/top.h - segpool-top, the live viewer: how its files fit.
 *
 * segpool-top reads the statistics segment a process publishes
 * (include/segpool/export.h) and shows it.  It links nothing of libsegpool:
 * the segment's layout is the whole interface.
 *
 *   main.c        the one-shot modes, exit status
 *   options.c     the command line: slabtop's options and more
 *   segment.c     finding, mapping and watching a process's segment
 *   snapshot.c    the seqlock read of one consistent snapshot
 *   slabinfo.c    --slabinfo: the dump segpool_stats_dump() prints
 *   json.c        --json: the library's document (internal/json.c writes it)
 *   fields.c      the numeric fields of each record, for --json and views
 *   rows.c        the list's rows: slabtop's orders, natural names, growth
 *   keys.c        what each key does: slabtop's keys, then ours
 *   format.c      numbers for people
 *   screen.c      one frame, built in memory and written at once
 *   term.c        raw mode, the alternate screen, signals, keys
 *   view_list.c   the slabtop-like list
 *   view_cache.c  one cache in detail
 *   view_nodes.c  the NUMA nodes
 *   view_help.c   the keys
 *   watch.c       the full-screen loop
 *   control.c     --shrink, --validate, --heap-profile, --set: requests
 *   sites.c       --sites: the top call sites, answered in a file
 */
#ifndef SEGPOOL_TOP_H
#define SEGPOOL_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <segpool/export.h>

#define TOP_PROG		"segpool-top"
#define TOP_PRINTF(a, b)	__attribute__((format(printf, a, b)))

/* Exit status: 0 fine, 1 the target (gone, not exporting, ...), 2 usage. */
#define TOP_EXIT_OK		0
#define TOP_EXIT_TARGET		1
#define TOP_EXIT_USAGE		2

/* What went wrong with the target; the message says it in words. */
enum top_status {
	TOP_OK,
	TOP_ENOPROC,		/* no such process */
	TOP_ENOEXPORT,		/* alive, but no segment */
	TOP_EACCES,		/* the segment is another user's */
	TOP_EVERSION,		/* a layout this program does not read */
	TOP_EEXITED,		/* the process is gone */
	TOP_ESTOPPED,		/* alive, but its segment was removed */
	TOP_EBADSEG,		/* not a segment, or a damaged one */
	TOP_EBUSY,		/* no consistent snapshot in time */
	TOP_ESYS,		/* a system call failed */
};

#define TOP_MSG_LEN		320

/* --- segment.c --- */
struct top_seg {
	int pid;
	int fd;
	char shm_name[32];		/* "/segpool.<pid>" */
	char path[48];			/* "/dev/shm/segpool.<pid>" */
	void *map;			/* read-only, shared */
	size_t map_size;
	ino_t ino;			/* of the segment file */
	struct segpool_export_header head; /* constant part, copied at open */
};

/* 1: @pid runs; 0: no such process, or a zombie; -1: cannot tell. */
int top_pid_alive(int pid);
/* Open and map the segment of @pid; on failure @msg says why. */
enum top_status top_seg_open(struct top_seg *sg, int pid, char *msg,
			     size_t len);
/*
 * top_seg_check_size() - TOP_OK while the file is at least as long as our
 * mapping; TOP_EBADSEG (the message says so) once it shrank, before a read
 * of the lost pages would raise SIGBUS.
 */
enum top_status top_seg_check_size(struct top_seg *sg, char *msg, size_t len);
/* Map the segment again, @min bytes at least (it grew). */
enum top_status top_seg_remap(struct top_seg *sg, size_t min, char *msg,
			      size_t len);
/*
 * top_seg_check() - is the target still there?  TOP_OK, TOP_EEXITED or
 * TOP_ESTOPPED; when the process removed its segment and made a new one
 * (export stopped and started again) @sg follows the new one.
 */
enum top_status top_seg_check(struct top_seg *sg, char *msg, size_t len);
void top_seg_close(struct top_seg *sg);

/* --- snapshot.c --- */
struct top_snap {
	struct segpool_export_header hdr;	/* constant and
						 * seqlocked parts */
	struct segpool_export_node *nodes;	/* [hdr.nr_nodes] */
	struct segpool_export_cache *caches;	/* [hdr.nr_caches] */
	struct segpool_export_cache_node *cnodes; /* [nr_caches][nr_nodes] */
	size_t cap_caches;			/* room in caches and cnodes */
	struct segpool_export_arena *arenas;	/* [hdr.nr_arenas] */
	size_t cap_arenas;
	char *raw;				/* what the copy loop fills */
	size_t raw_cap;
	/*
	 * The key table: every figure the library's JSON has, with the
	 * values of this snapshot (none from a writer of before it:
	 * nkeys all 0).  keys[] holds the cache, node, health and health
	 * node keys in that order; vals [nr_caches][nkeys[0]], nvals
	 * [nr_caches][nr_nodes][nkeys[1]], hvals [nkeys[2]] then
	 * [nr_nodes][nkeys[3]]; a string value is strings[value -
	 * strings_base].
	 */
	uint32_t nkeys[4];
	const struct segpool_export_key *keys;
	const uint64_t *vals, *nvals, *hvals;
	const char *strings;			/* SEGPOOL_EXPORT_STRINGS
						 * bytes */
	uint64_t strings_base;
	char *kraw;				/* their copy */
	size_t kraw_cap;
};

/* Read one consistent snapshot of @sg into @s (which keeps its buffers). */
enum top_status top_snap_read(struct top_seg *sg, struct top_snap *s,
			      char *msg, size_t len);
void top_snap_free(struct top_snap *s);
/* The node records of cache @i. */
const struct segpool_export_cache_node *
top_snap_cache_nodes(const struct top_snap *s, size_t i);
/* The cache named @name, or NULL. */
const struct segpool_export_cache *top_snap_find(const struct top_snap *s,
						 const char *name);
/* The string a key of kind SEGPOOL_EXPORT_KEY_STR has @v for ("" if bad). */
const char *top_snap_string(const struct top_snap *s, uint64_t v);

/* --- slabinfo.c --- */
int top_print_slabinfo(FILE *out, const struct top_snap *s);

/* --- json.c --- */
int top_print_json(FILE *out, const struct top_snap *s);

/* --- fields.c --- */
struct top_field {
	const char *name;		/* as in the record and in the JSON */
	size_t off;			/* in the record */
	unsigned char size;		/* 4 or 8 bytes */
	unsigned char counter;		/* counts events since creation */
};

extern const struct top_field top_cache_fields[];
extern const size_t top_cache_nfields;
extern const struct top_field top_cnode_fields[];
extern const size_t top_cnode_nfields;
extern const struct top_field top_node_fields[];
extern const size_t top_node_nfields;
/* An arena's numbers after its name, node and flags (segpool_arena_info's). */
extern const struct top_field top_arena_fields[];
extern const size_t top_arena_nfields;
extern const char *const top_cache_flag_names[];
extern const size_t top_cache_nflags;
uint64_t top_field_get(const void *rec, const struct top_field *f);

/* --- format.c --- */
/* "12K": bytes in KiB, rounded up, as slabtop's CACHE SIZE column. */
const char *top_fmt_kib(char *buf, size_t len, uint64_t bytes);
/* "+12K", "-4K", "0K": a signed byte difference in KiB. */
const char *top_fmt_delta_kib(char *buf, size_t len, int64_t delta);
/* "0.19K": bytes in KiB with two decimals, as slabtop's header. */
const char *top_fmt_kib2(char *buf, size_t len, double bytes);
/* "123", "1.5K", "12.0M": a byte count in at most 7 characters. */
const char *top_fmt_bytes(char *buf, size_t len, uint64_t bytes);
/* "+1.5K", "-64", "0": a signed byte difference. */
const char *top_fmt_delta(char *buf, size_t len, int64_t delta);
/* "12", "1234k", "12M": a count in at most @width characters. */
const char *top_fmt_count(char *buf, size_t len, uint64_t v, int width);
/* The flag names of a cache, space-separated ("kmalloc percpu"). */
const char *top_fmt_flags(char *buf, size_t len, uint32_t flags);
/* Seconds as "0.3 s", "12 s", "5 min". */
const char *top_fmt_age(char *buf, size_t len, double seconds);

/* --- rows.c --- */
/* The orders of the list, slabtop's first (top_sort_keys[] describes each). */
enum top_sort {
	TOP_SORT_ACTIVE,	/* a: active objects */
	TOP_SORT_OBJ_PER_SLAB,	/* b: objects per slab */
	TOP_SORT_CACHE_SIZE,	/* c: slab memory */
	TOP_SORT_SLABS,		/* l: slabs */
	TOP_SORT_ACTIVE_SLABS,	/* v: slabs in use */
	TOP_SORT_NAME,		/* n: name, natural order */
	TOP_SORT_OBJS,		/* o: object slots (slabtop's default) */
	TOP_SORT_PAGES,		/* p: pages per slab */
	TOP_SORT_OBJ_SIZE,	/* s: object size */
	TOP_SORT_USE,		/* u: active share of the slots */
	TOP_SORT_GROWTH,	/* g: growth of the slab
				 * memory (not slabtop's) */
	TOP_SORT_NR,
};

#define TOP_SORT_DEFAULT	TOP_SORT_OBJS

struct top_sort_key {
	char key;			/* the letter: -s and the key */
	const char *word;		/* -s also takes this word */
	const char *what;		/* "number of active objects" */
	const char *column;		/* the column it sorts, or NULL */
	bool slabtop;			/* slabtop has it (then both cases) */
};

extern const struct top_sort_key top_sort_keys[TOP_SORT_NR];

struct top_row {
	const struct segpool_export_cache *c;
	size_t idx;			/* in the snapshot */
	int64_t growth;			/* slab_bytes since the
					 * previous refresh */
	bool is_new;			/* not in the previous snapshot */
};

/* The previous snapshot's record of @name, or NULL. */
const struct segpool_export_cache *top_prev_find(const struct top_snap *prev,
						 const char *name);
/*
 * top_rows_build() - the rows of @cur in order @sort (@reverse: the other
 * way), growth against @prev (may be NULL), without empty caches when
 * @hide_empty.  Return: how many rows (*@rows is reallocated), or -1.
 */
long top_rows_build(struct top_row **rows, size_t *cap,
		    const struct top_snap *cur, const struct top_snap *prev,
		    enum top_sort sort, bool reverse, bool hide_empty);
/* Rows @a and @b in order @sort: < 0, 0 (the same cache) or > 0. */
int top_row_order(const struct top_row *a, const struct top_row *b,
		  enum top_sort sort);
/* Natural order of names: digit runs by value, "10k" as 10240. */
int top_natcmp(const char *a, const char *b);
const char *top_sort_name(enum top_sort sort);
/* The order of key @key (a slabtop letter in either case, or g); 0 or -1. */
int top_sort_of_key(int key, enum top_sort *sort);
/* Parse -s: one letter of top_sort_keys[] or its word; 0 or -1. */
int top_sort_parse(const char *s, enum top_sort *sort);

/* --- screen.c --- */
enum top_attr {
	TOP_A_NONE,
	TOP_A_BOLD,
	TOP_A_REVERSE,		/* padded to the full width */
};

struct top_screen {
	char *buf;
	size_t len, cap;
	int rows, cols;
	int line;			/* lines of this frame so far */
	bool oom;
	bool plain;			/* text for a file: no escapes */
};

void top_scr_begin(struct top_screen *scr, int rows, int cols);
/* A frame of plain text lines (batch mode, -o): no escapes, no row limit. */
void top_scr_begin_plain(struct top_screen *scr, int cols);
/* One line of text, cut at the screen's width; nothing once it is full. */
void top_scr_line(struct top_screen *scr, enum top_attr attr,
		  const char *fmt, ...) TOP_PRINTF(3, 4);
bool top_scr_full(const struct top_screen *scr);
/* Lines still free on this frame. */
int top_scr_left(const struct top_screen *scr);
/* Write the frame to @fd; Return: 0 or -1 (errno). */
int top_scr_flush(struct top_screen *scr, int fd);
void top_scr_free(struct top_screen *scr);

/* --- term.c --- */
enum top_key {
	TOP_KEY_NONE = 0,
	/* printable keys are their character */
	TOP_KEY_UP = 0x100,
	TOP_KEY_DOWN,
	TOP_KEY_LEFT,
	TOP_KEY_RIGHT,
	TOP_KEY_PGUP,
	TOP_KEY_PGDN,
	TOP_KEY_HOME,
	TOP_KEY_END,
	TOP_KEY_ESC,
	TOP_KEY_ENTER,
	TOP_KEY_BACKSPACE,
};

/* Enter raw mode and the alternate screen; install the signal handlers. */
int top_term_enter(void);
/* Restore the terminal as it was; safe to call twice. */
void top_term_leave(void);
/* The terminal's size (24x80 when it cannot be asked). */
void top_term_size(int *rows, int *cols);
/*
 * top_term_wait() - wait up to @timeout_ms for a key or a signal.
 * Return: 1 when keys may be read, 0 on timeout or signal.
 */
int top_term_wait(int timeout_ms);
/* Next key of what was typed, TOP_KEY_NONE when there is none. */
int top_term_key(void);
/* A terminating signal that arrived (and is cleared), or 0. */
int top_term_fatal_signal(void);
/* True once after SIGWINCH. */
bool top_term_resized(void);
/* Handle a pending SIGTSTP: restore the terminal, stop, come back. */
void top_term_suspend_if_asked(void);

/* --- views --- */
enum top_mode {
	TOP_VIEW_LIST,
	TOP_VIEW_CACHE,
	TOP_VIEW_NODES,
	TOP_VIEW_HELP,
};

struct top_ctx {
	struct top_seg seg;
	struct top_snap snap[3];	/* on screen, previous, spare */
	struct top_snap *cur, *prev;	/* prev: the last one with other data */
	bool have_prev;
	struct top_row *rows;
	size_t nrows, rows_cap;
	enum top_mode mode, back;	/* back: where help returns to */
	enum top_sort sort;
	bool reverse;			/* of this order; a new
					 * order clears it */
	bool hide_empty;
	bool once;			/* -o: slabtop -o's
					 * frame, nothing more */
	char selected[SEGPOOL_EXPORT_NAME_LEN];	/* cache under the cursor */
	size_t sel;			/* its row */
	size_t first;			/* first row on screen */
	double delay;			/* seconds between refreshes */
	double stale;			/* seconds since the
					 * data last changed */
	char note[TOP_MSG_LEN];		/* a passing message */
};

void top_view_list(struct top_ctx *ctx, struct top_screen *scr);
void top_view_cache(struct top_ctx *ctx, struct top_screen *scr);
void top_view_nodes(struct top_ctx *ctx, struct top_screen *scr);
void top_view_help(struct top_ctx *ctx, struct top_screen *scr);
/* The first line of every view. */
void top_view_title(struct top_ctx *ctx, struct top_screen *scr,
		    const char *what);
/* Rows the list shows below its header lines. */
int top_view_list_height(const struct top_screen *scr);

/* --- keys.c --- */
enum top_action {
	TOP_ACT_NONE,
	TOP_ACT_REDRAW,
	TOP_ACT_REFRESH,
	TOP_ACT_QUIT,
};

/*
 * top_handle_key() - what key @key does to @ctx (@page: rows a page key
 * moves).  slabtop's keys mean what they mean in slabtop; the rest are on
 * letters slabtop leaves free (top_keys[] lists them all).
 */
enum top_action top_handle_key(struct top_ctx *ctx, int key, long page);

struct top_key_help {
	const char *keys;		/* "a, A" */
	const char *what;
	bool slabtop;			/* slabtop has this key, same meaning */
};

/* Every key, for the help screen and the usage text. */
extern const struct top_key_help top_keys[];
extern const size_t top_nkeys;

/* --- options.c --- */
enum top_run {
	TOP_RUN_WATCH,			/* full screen, or batch
					 * without a terminal */
	TOP_RUN_ONCE,			/* -o: one frame of the table */
	TOP_RUN_SLABINFO,		/* --slabinfo */
	TOP_RUN_JSON,			/* --json */
	TOP_RUN_HELP,			/* -h */
	TOP_RUN_VERSION,		/* -V */
	TOP_RUN_CTL,			/* a request: --shrink, --set, ... */
};

struct top_opts {
	int pid;
	double delay;			/* seconds */
	bool delay_given;
	unsigned long iterations;	/* 0: no end */
	enum top_sort sort;
	enum top_run mode;
	bool batch;			/* -b: plain text even on a terminal */
	unsigned int ctl_op;		/* TOP_RUN_CTL: SEGPOOL_CTL_OP_* */
	long long ctl_arg;		/* its number (--set, --sites) */
	char ctl_path[SEGPOOL_CTL_PATH_MAX]; /* its path (--heap-profile) */
};

#define TOP_DEFAULT_DELAY	3.0	/* slabtop's */
#define TOP_MIN_DELAY		0.1

/*
 * top_parse_args() - the command line into @o.  Return: 0, or
 * TOP_EXIT_USAGE with the reason in @msg.
 */
int top_parse_args(int argc, char **argv, struct top_opts *o, char *msg,
		   size_t len);
void top_usage(FILE *out);
/* -V: "segpool-top (segpool) 0.1.0", then the layout it reads. */
void top_version(FILE *out);
/* Print "segpool-top: <msg>" on stderr. */
void top_error(const char *fmt, ...) TOP_PRINTF(1, 2);

/* --- watch.c --- */
/*
 * top_watch() - show @o->pid: full screen on a terminal, else (or with -b)
 * a plain frame every @o->delay seconds; -o: one plain frame.  Until q, a
 * signal, the process's exit or @o->iterations frames.
 */
int top_watch(const struct top_opts *o);
/*
 * top_ctx_relayout() - the rows of @ctx->cur in its order, the selection
 * following its cache by name.  Return: 0, or -1 out of memory.
 */
int top_ctx_relayout(struct top_ctx *ctx);

/* --- control.c --- */
/* A request, as segpool-top names it. */
struct top_ctl_op {
	unsigned int op;		/* SEGPOOL_CTL_OP_* */
	const char *word;		/* in the answer line */
	const char *what;
};
extern const struct top_ctl_op top_ctl_ops[];
extern const size_t top_nctl_ops;
const struct top_ctl_op *top_ctl_find(unsigned int op);
/*
 * top_ctl_parse_set() - "decay-ms=250", "memory-limit=512M" into *@op and
 * *@arg.  Return: 0, or -1 with the reason in @msg.
 */
int top_ctl_parse_set(const char *s, unsigned int *op, long long *arg,
		      char *msg, size_t len);
/*
 * top_ctl_request() - ask process @pid to do @op (@arg, @path as it
 * wants) and print its answer.  Return: TOP_EXIT_OK when it did,
 * TOP_EXIT_TARGET when it refused, failed, does not export, is gone or
 * did not answer (each said on stderr).
 */
int top_ctl_request(int pid, unsigned int op, long long arg, const char *path);

/* --- sites.c --- */
/* Sites shown by --sites without a count. */
#define TOP_SITES_DEFAULT	10
/*
 * top_sites_request() - ask @pid for its top @n call sites into a private
 * directory, print them.  Return: as top_ctl_request().
 */
int top_sites_request(int pid, long long n);
/* top_sites_show() - print the answer at @path.  Return: TOP_EXIT_*. */
int top_sites_show(int pid, const char *path);

#endif /* SEGPOOL_TOP_H */
