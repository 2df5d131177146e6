/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/bench.h - what the parts of segpool-bench share.
 *
 * The driver (main.c, driver.c) re-executes this program for every
 * measurement, with LD_PRELOAD set for a peer, gathers the children's
 * records, reduces them to medians (sys.c) and writes markdown tables
 * (report.c), plots (plot.c) and the results page.  A child (child.c)
 * proves who serves malloc, sets one contender up (contenders.c, floor.c),
 * runs one workload (workloads.c, wl_*.c) and writes one record to fd 3.
 * --programs runs real programs instead (programs.c, programs.sh).
 * Harness memory comes from mmap, never from the allocator under test.
 */
#ifndef SEGPOOL_BENCH_H
#define SEGPOOL_BENCH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#include "segpool_config.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define BENCH_HAVE_TSC 1
#else
#define BENCH_HAVE_TSC 0
#endif

#define BENCH_NAME		"segpool-bench"
#define BENCH_MAX_THREADS	256
#define BENCH_MAX_CLASSES	16
#define BENCH_MAX_LIST		16
#define BENCH_MAX_REPS		64
#define BENCH_SEED		20261130ULL
#define BENCH_SIZE_MIN		8	/* random sizes of workload 3 */
#define BENCH_SIZE_MAX		128
#define BENCH_BATCHES_SIZE	48	/* workload 3's batches */
#define BENCH_CACHE_MAX_SIZE	4096

/* A sanitized build: its malloc serves every call, nothing preloads. */
#if defined(CONFIG_SEGPOOL_ASAN) || defined(CONFIG_SEGPOOL_TSAN)
#define BENCH_SANITIZED 1
#else
#define BENCH_SANITIZED 0
#endif

/* --- contenders and their checks (contenders.c) --- */

enum bench_kind {
	BENCH_SEGPOOL_CACHE,	/* segpool_cache_alloc(), a cache per class */
	BENCH_SEGPOOL_MALLOC,	/* segpool_malloc() */
	BENCH_MALLOC,		/* malloc() of glibc or of a preloaded peer */
	BENCH_FLOOR,		/* no allocator: the harness's own cost */
};

struct bench_contender {
	const char *name, *title;
	enum bench_kind kind;
	const char *soname;	/* library to preload, NULL for none */
	const char *package;	/* Debian package, for its version */
	const char *malloc_from; /* the object that must serve malloc() */
	const char *trim_sym;	/* its trim/purge entry point, or NULL */
	const char *percpu;	/* segpool's per-CPU mode: rseq, lock, off */
	/* a variant build, the program beside this one with this suffix */
	const char *exec_suffix;
	const char *env;	/* one more NAME=value for the child */
	bool peer;		/* a peer allocator (ratios: "best peer") */
	bool inline_api;	/* segpool-cache through SEGPOOL_INLINE */
	/* sampled heap profiling on (SEGPOOL_HEAP_PROFILE): its cost */
	const char *sampled_of;	/* the contender it is measured against */
};

#define BENCH_NR_BUILTIN	16
#define BENCH_MAX_EXTRA		4
#define BENCH_MAX_C		(BENCH_NR_BUILTIN + BENCH_MAX_EXTRA)

extern struct bench_contender bench_contenders[BENCH_MAX_C];
extern unsigned int bench_nr_contenders;
extern struct segpool_cache *bench_cache_of[BENCH_CACHE_MAX_SIZE / 8 + 1];

/* "NAME=/absolute/lib.so": 0, -EINVAL, -EEXIST or -ENOSPC */
int bench_add_peer(const char *spec);
const struct bench_contender *bench_contender_find(const char *name);
void *bench_cache_alloc_inline(size_t size);
void bench_cache_free_inline(void *p, size_t size);


/* What every workload calls: the same indirect call for every contender. */
struct bench_heap {
	void *(*alloc)(size_t size);
	void (*free)(void *ptr, size_t size);
	void *(*realloc)(void *ptr, size_t size);	/* or NULL */
	void *(*big_alloc)(size_t size);	/* any size, or NULL */
	void (*big_free)(void *ptr);
};
extern struct bench_heap bench_heap;

/* @nr sizes, ascending: segpool-cache makes a cache for each */
int bench_heap_setup(const struct bench_contender *c, const size_t *cls,
		     unsigned int nr);
const char *bench_heap_trim(void);	/* what it did: "malloc_trim(0)" */
void bench_heap_teardown(void);
/* floor.c: slots of @slot bytes, into bench_heap */
int bench_floor_setup(size_t slot);

/* Driver: the file to preload for @c, or NULL when not installed. */
const char *bench_peer_path(const struct bench_contender *c, char *buf,
			    size_t len);
/* Child: @c's library serves malloc, no other is mapped; 0 or -1. */
int bench_verify_heap(const struct bench_contender *c, char *served,
		      size_t len, char *mapped, size_t mlen);
/* Child: segpool runs in @c's per-CPU mode; 0 or -1. */
int bench_verify_percpu(const struct bench_contender *c, char *mode,
			size_t len);

/* --- configuration and workloads (workloads.c) --- */

struct bench_cfg {
	uint64_t ops;			/* per thread (0: the default) */
	double scale;			/* multiplies every default count */
	unsigned int threads;		/* this child's threads */
	unsigned int thread_list[BENCH_MAX_LIST], nr_thread_list;
	size_t size;			/* fixed object size */
	uint64_t live;			/* live objects of workload 8 */
	unsigned int writes;		/* writes per object, workload 6 */
	double warmup;			/* warm-up run, fraction of ops */
	double tsc_hz;			/* ticks per second */
	size_t grow_max;		/* realloc: a series grows to this */
	unsigned int idle_max_s;	/* idle: seconds of RSS sampling */
};

/*
 * Figures beyond time and peak RSS (bit k of has_x when there), with the
 * heading of their column and what divides them there: latency in ns, an
 * empty measurement and the clock's step; memory's bytes per live object,
 * their overhead (% of the size) and RSS KiB at each step; KiB in
 * magazines and depots, in magazines, and the objects there; minor faults
 * per op; idle's RSS KiB and the ms until it is back (inf: never).
 */
#define BENCH_FIGURES(F)						\
	F(AP50, "alloc p50", 1) F(AP99, "alloc p99", 1)			\
	F(AP999, "alloc p99.9", 1) F(FP50, "free p50", 1)		\
	F(FP99, "free p99", 1) F(FP999, "free p99.9", 1)		\
	F(EMPTY, "empty ns", 1) F(TICK, "step ns", 1)			\
	F(BYTES, "bytes/object", 1) F(OVER, "overhead %", 1)		\
	F(BASE, "before MiB", 1024) F(LIVE, "live MiB", 1024)		\
	F(FREED, "after free MiB", 1024)				\
	F(TRIM, "after trim MiB", 1024)					\
	F(CACHED, "cached KiB", 1) F(MAGS, "magazines KiB", 1)		\
	F(CPU_OBJS, "cpu objs", 1) F(DEPOT_OBJS, "depot objs", 1)	\
	F(MINFLT, "faults/op", 1) F(BEFORE, "RSS before MiB", 1024)	\
	F(PEAK, "peak MiB", 1024) F(1S, "at 1 s", 1024)			\
	F(5S, "at 5 s", 1024) F(20S, "at 20 s", 1024)			\
	F(BACK, "back within 8 MiB, s", 1000)

#define BENCH_X_ENUM(name, head, div) BENCH_X_##name,
enum bench_x { BENCH_FIGURES(BENCH_X_ENUM) BENCH_NR_X };

/* mmap, munmap, mremap in the timed part (the counting pass) */
#define BENCH_NR_SYS 3

struct bench_result {
	uint64_t ops, checksum, expect;	/* folded tags, what they must be */
	double cpu_ns, wall_ns;
	long peak_rss_kb;
	int errors;
	char trim[48];			/* how memory was given back */
	double x[BENCH_NR_X];
	unsigned int has_x;
};

static inline void bench_x_set(struct bench_result *r, enum bench_x k,
			       double v)
{
	r->x[k] = v;
	r->has_x |= 1u << k;
}

/* After the timed run: what segpool-cache's caches hold, into @res. */
void bench_heap_cached(struct bench_result *res);

enum {
	BENCH_WL_LATENCY = 1 << 0,	/* percentiles */
	BENCH_WL_MEMORY  = 1 << 1,	/* RSS, not speed; no floor */
	BENCH_WL_BENEATH = 1 << 2,	/* plain contenders only, -S counts */
	BENCH_WL_NO_CACHE = 1 << 3,	/* segpool-cache does not apply */
	BENCH_WL_SYSCOUNT = 1 << 4,	/* a counting pass under strace */
	BENCH_WL_NO_WARMUP = 1 << 5,
};

enum bench_wl_threads { BENCH_ON_ONE, BENCH_ON_LIST, BENCH_ON_PAIR,
			BENCH_ON_CPUS };

/* A table column (report.c): a figure, or one of the BENCH_COL_* */
enum {
	BENCH_COL_CPU = BENCH_NR_X, BENCH_COL_RANGE, BENCH_COL_WALL,
	BENCH_COL_MOPS, BENCH_COL_GLIBC, BENCH_COL_PEER, BENCH_COL_RSS,
	BENCH_COL_SYS, BENCH_COL_TRIM, BENCH_COL_OBJS,
};

struct bench_workload {
	const char *name;
	unsigned int number;		/* the issues' numbering */
	const char *title;
	const char *op;			/* what one op is */
	uint64_t default_ops;		/* per thread */
	enum bench_wl_threads on;
	unsigned int flags;
	const size_t *cls;		/* the sizes asked for (NULL: -s) */
	unsigned int nr_cls;
	int (*run)(const struct bench_cfg *cfg, uint64_t ops,
		   struct bench_result *res);
	unsigned int max_reps;		/* 0: -r */
	uint64_t min_ops;		/* the count's floor under -S */
	const signed char *cols;	/* the table's columns, -1 ends */
	double unit;			/* ns per shown unit of the time */
};

extern const struct bench_workload bench_workloads[];
extern const unsigned int bench_nr_workloads;
const struct bench_workload *bench_workload_find(const char *name);
uint64_t bench_workload_ops(const struct bench_workload *wl,
			    const struct bench_cfg *cfg);
unsigned int bench_fs_threads(void);
unsigned int bench_workload_threads(const struct bench_workload *wl,
				    unsigned int listed);
void bench_describe(const struct bench_workload *wl,
		    const struct bench_cfg *cfg, char *buf, size_t len);

#define BENCH_WL(fn) int fn(const struct bench_cfg *cfg, uint64_t ops, \
			    struct bench_result *res)
BENCH_WL(bench_wl_pool); BENCH_WL(bench_wl_pool_lat); BENCH_WL(bench_wl_pair);
BENCH_WL(bench_wl_batch); BENCH_WL(bench_wl_threads); BENCH_WL(bench_wl_mixed);
BENCH_WL(bench_wl_batches);
BENCH_WL(bench_wl_memory); BENCH_WL(bench_wl_xfer); BENCH_WL(bench_wl_xfer_lat);
BENCH_WL(bench_wl_thrash); BENCH_WL(bench_wl_scratch); BENCH_WL(bench_wl_large);
BENCH_WL(bench_wl_realloc); BENCH_WL(bench_wl_live); BENCH_WL(bench_wl_idle);

typedef int (*bench_wl_fn)(const struct bench_cfg *cfg, uint64_t ops,
			   struct bench_result *res);
/* wl_local_inline.c: @run's copy built with the inline API, or @run */
bench_wl_fn bench_wl_inline_of(bench_wl_fn run);

/* --- threads (workloads.c) --- */

struct bench_lat_buf {
	uint32_t *v;			/* samples, in ticks */
	uint64_t n, cap;
};

enum { BENCH_LAT_ALLOC, BENCH_LAT_FREE };

struct bench_worker {
	unsigned int id;
	const struct bench_cfg *cfg;
	uint64_t ops;			/* this worker's share */
	void *shared;			/* the workload's common state */
	struct bench_team *team;	/* workloads.c's */
	uint64_t rng, checksum, expect;
	uint64_t done;			/* operations performed */
	int errors;
	struct bench_lat_buf lat[2];
	double cpu_ns;
	uint64_t wall_start, wall_end;
} __attribute__((aligned(128)));

typedef void (*bench_work_fn)(struct bench_worker *w);

/*
 * Run @fn on @nr pinned threads started together; sums CPU time, checksums,
 * errors and operations into @res.  @lat_cap > 0: latency samples, as
 * percentiles less res->x[BENCH_X_EMPTY].
 */
int bench_team_run(const struct bench_cfg *cfg, unsigned int nr,
		   bench_work_fn fn, void *shared, uint64_t ops_each,
		   uint64_t lat_cap, struct bench_result *res);
void bench_worker_init(struct bench_worker *w, const struct bench_cfg *cfg,
		       unsigned int id);

/* --- objects: tag, write, check (the harness's whole per-op cost) --- */

static inline uint64_t bench_rand(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static inline uint64_t bench_tag(uint64_t seq)
{
	return (seq + 1) * 0x9E3779B97F4A7C15ULL;
}

/* The tag in the first and last 8 bytes; the check counts a mismatch. */
static inline void bench_obj_fill(struct bench_worker *w, void *p,
				  size_t size, uint64_t tag)
{
	memcpy(p, &tag, sizeof(tag));
	if (size >= 16)
		memcpy((char *)p + size - sizeof(tag), &tag, sizeof(tag));
	w->expect += tag;
}

static inline void bench_obj_check(struct bench_worker *w, const void *p,
				   size_t size)
{
	uint64_t head, tail;

	memcpy(&head, p, sizeof(head));
	if (size >= 16) {
		memcpy(&tail, (const char *)p + size - 8, sizeof(tail));
		w->errors += head != tail;
	}
	w->checksum += head;
}

static inline uint64_t bench_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* TSC reads fenced on both sides (plain rdtsc: valgrind lacks rdtscp). */
static inline uint64_t bench_tick(void)
{
#if BENCH_HAVE_TSC
	uint64_t t;

	_mm_lfence();
	t = __rdtsc();
	_mm_lfence();
	return t;
#else
	return bench_ns(CLOCK_MONOTONIC_RAW);
#endif
}

static inline void bench_lat_add(struct bench_lat_buf *b, uint64_t ticks)
{
	if (b->n < b->cap)
		b->v[b->n++] = ticks > UINT32_MAX ? UINT32_MAX
						  : (uint32_t)ticks;
}

/*
 * The heap's calls in a workload's loop: one indirect call each, the same
 * for every contender; but in the copy of the local workloads built for
 * segpool-cache-inline (wl_local_inline.c defines BENCH_INLINE_LOOPS), the
 * inline API itself, so that its hit runs in the loop as in a program
 * built with SEGPOOL_INLINE.
 */
#ifdef BENCH_INLINE_LOOPS
#define SEGPOOL_INLINE 1
#include <segpool/segpool.h>

static inline __attribute__((always_inline)) void *bench_heap_alloc(size_t size)
{
	return segpool_cache_alloc(bench_cache_of[(size + 7) >> 3], 0);
}

static inline __attribute__((always_inline)) void
bench_heap_free(void *p, size_t size)
{
	segpool_cache_free(bench_cache_of[(size + 7) >> 3], p);
}
#else
#define bench_heap_alloc(size)		bench_heap.alloc(size)
#define bench_heap_free(p, size)	bench_heap.free(p, size)
#endif

/* One call, the object written or checked; @lat (a constant) times it. */
static inline __attribute__((always_inline)) void *
bench_obj_alloc(struct bench_worker *w, size_t size, uint64_t seq, bool lat)
{
	uint64_t t0 = lat ? bench_tick() : 0;
	void *p = bench_heap_alloc(size);

	if (lat)
		bench_lat_add(&w->lat[BENCH_LAT_ALLOC], bench_tick() - t0);
	if (__builtin_expect(p == NULL, 0)) {
		w->errors++;
		return NULL;
	}
	bench_obj_fill(w, p, size, bench_tag(seq));
	return p;
}

static inline __attribute__((always_inline)) void
bench_obj_free(struct bench_worker *w, void *p, size_t size, bool lat)
{
	uint64_t t0;

	bench_obj_check(w, p, size);
	t0 = lat ? bench_tick() : 0;
	bench_heap_free(p, size);
	if (lat)
		bench_lat_add(&w->lat[BENCH_LAT_FREE], bench_tick() - t0);
}

/* A sequence number space per worker, for bench_tag(). */
static inline uint64_t bench_seq_base(const struct bench_worker *w)
{
	return (uint64_t)w->id << 40;
}

/* --- the system and statistics (sys.c) --- */

double bench_tick_hz(void);
void *bench_map(size_t bytes);
void bench_unmap(void *p, size_t bytes);
long bench_rss_kb(void);		/* no stdio, no allocation */
long bench_peak_rss_kb(void);
void bench_sys_mark(bool begin);	/* for the counting pass */
unsigned int bench_cpus(int *cpus, unsigned int max);
void bench_pin(int cpu);
void bench_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define bench_die(...) do { bench_warn(__VA_ARGS__); exit(1); } while (0)

struct bench_summary {
	double median, min, max;
};

void bench_summarize(const double *v, unsigned int n, struct bench_summary *s);
int bench_cmp_u32(const void *a, const void *b);
uint32_t bench_percentile(const uint32_t *sorted, uint64_t n, double p);
/* Run @argv, stdout to @out or /dev/null: its exit status; @ru its usage */
int bench_cmd(char *const argv[], const char *out, const char *preload,
	      struct rusage *ru);

/* --- child (child.c) and driver (driver.c) --- */

int bench_child_main(const struct bench_cfg *cfg, const char *contender,
		     const char *workload);

/* What a child writes to fd 3, as it is: the same build reads it. */
struct bench_record {
	char status[16];		/* ok, failed, error, refused */
	char served[256], mapped[256], mode[128];
	struct bench_result r;
};

struct bench_cell {
	const struct bench_workload *wl;
	const struct bench_contender *c;
	unsigned int threads, nr, failed;
	struct bench_result *samples;		/* one per repetition */
	struct bench_summary cpu, wall, rss;	/* ns per op; KiB */
	struct bench_summary x[BENCH_NR_X];	/* has_x: every sample's */
	unsigned int has_x;
	bool counted;				/* the counting pass's */
	long sys[BENCH_NR_SYS];
	double ratio_glibc, ratio_peer;		/* CPU, median over median */
	const char *best_peer;
};

struct bench_cstate {
	const struct bench_contender *c;
	bool selected, skipped, refused;
	char reason[128];
	char path[256];			/* preloaded file */
	char exec[PATH_MAX];		/* variant program, or "" */
	char version[64];		/* package version */
	char served[256];		/* what a child found serving malloc */
	char mapped[256];		/* allocator libraries mapped */
	char mode[128];			/* segpool's per-CPU mode */
};

struct bench_run {
	struct bench_cfg cfg;
	unsigned int reps, runs_done;
	int smoke, quiet, no_plots, no_count;	/* options' flags */
	char strace[PATH_MAX];		/* for the counting pass, or "" */
	const char *out_dir, *doc, *srctree;
	char **argv;			/* the command line, for the children */
	int argc;
	char exec[PATH_MAX];		/* this very build, for the children */
	bool wl_selected[32];
	struct bench_cstate cs[BENCH_MAX_C];
	unsigned int nr_cs;
	struct bench_cell *cells;
	unsigned int nr_cells;
	char machine[5][256];		/* report.c's lines on it */
	unsigned int usable;		/* CPUs */
	unsigned int plotted;		/* bit i: plot i made */
	double elapsed_s;
	int errors;
};

int bench_driver_main(struct bench_run *run);
const struct bench_cell *bench_cell_get(const struct bench_run *run,
					const struct bench_workload *wl,
					unsigned int threads,
					const struct bench_contender *c);
bool bench_cell_summary(const struct bench_run *run, unsigned int i);

void bench_machine_read(struct bench_run *run);

/* --- output: markdown (report.c), plots (plot.c), the page --- */

#define BENCH_TCOLS	20
#define BENCH_TROWS	200
#define BENCH_TCELL	64
#define BENCH_TEXT_COLS	120	/* every line of the output fits */

struct bench_table {
	unsigned int ncol, nrow, nkey;	/* nkey: columns heading each part */
	const char *head[BENCH_TCOLS];
	char cell[BENCH_TROWS][BENCH_TCOLS][BENCH_TCELL];
};

struct bench_table *bench_table_new(const char *const *head,
				    unsigned int ncol);
unsigned int bench_table_row(struct bench_table *t);
void bench_table_set(struct bench_table *t, unsigned int row, unsigned int col,
		     const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Print @t in parts of at most BENCH_TEXT_COLS, then free it. */
void bench_table_print(FILE *f, struct bench_table *t);
/*
 * The heading "### @title" of a section whose table is @t: true when @t
 * has rows; an empty @t is freed instead, and nothing printed.
 */
bool bench_table_section(FILE *f, struct bench_table *t, const char *title);
/* A paragraph (or a "- " item), wrapped, then an empty line. */
void bench_para(FILE *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void bench_report(FILE *f, const struct bench_run *run, const char *img);
int bench_plot(struct bench_run *run);
/* Replace what lies between @doc's "generated:bench-@part" marks. */
int bench_doc_update(const char *doc, const char *part, const char *md_path);

/* --- programs.c: real programs under each malloc (--programs) --- */
struct bench_prog_opts {
	const char *out_dir, *doc, *only, *srctree;
	unsigned int reps;
	double scale;
	bool smoke;
};
int bench_programs_main(const struct bench_prog_opts *o);

#endif /* SEGPOOL_BENCH_H */
