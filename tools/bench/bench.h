/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/bench.h - what the parts of segpool-bench share.
 *
 * segpool-bench runs as two kinds of process:
 *
 *  - the driver (main.c, driver.c) parses the options, reads the machine
 *    (machine.c), and for every repetition, workload and contender in turn
 *    (A B C A B C ...) re-executes this binary as a child (spawn.c) with
 *    LD_PRELOAD set for the peer allocator under test; it gathers the
 *    children's records, reduces them to medians and min-max (stats.c) and
 *    reports them (report.c, json.c, plot.c, doc.c);
 *
 *  - a child (child.c) checks that the intended library serves malloc
 *    (verify.c), sets up one contender (contenders.c, floor.c), runs one
 *    workload (workloads.c; the loops in wl_local.c and wl_shared.c, on the
 *    threads of team.c) once to warm up and once timed, and writes one
 *    record of "key value" lines to the pipe the driver gave it.
 *
 * Harness memory (pointer arrays, latency samples, hand-off queues) comes
 * from mmap, never from the allocator under test.
 */
#ifndef SEGPOOL_BENCH_H
#define SEGPOOL_BENCH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "segpool_config.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define BENCH_HAVE_TSC 1
#else
#define BENCH_HAVE_TSC 0
#endif

#define BENCH_NAME	"segpool-bench"
#define BENCH_SCHEMA	"segpool-bench/1"

#define BENCH_MAX_THREADS	256
#define BENCH_MAX_CLASSES	16
#define BENCH_MAX_LIST		16

/* ------------------------------------------------------------------------
 * Contenders (contenders.c)
 */

/* A sanitized build: its malloc serves every call, nothing can be preloaded. */
#if defined(CONFIG_SEGPOOL_ASAN) || defined(CONFIG_SEGPOOL_TSAN)
#define BENCH_SANITIZED 1
#else
#define BENCH_SANITIZED 0
#endif

enum bench_kind {
	BENCH_SEGPOOL_CACHE,	/* segpool_cache_alloc(), a cache per size class */
	BENCH_SEGPOOL_MALLOC,	/* segpool_malloc() */
	BENCH_MALLOC,		/* malloc() of glibc or of a preloaded peer */
	BENCH_FLOOR,		/* no allocator: the harness's own cost */
};

struct bench_contender {
	const char *name;	/* short name used in options and tables */
	const char *title;	/* what it is, for the report */
	enum bench_kind kind;
	const char *soname;	/* library to preload, NULL for none */
	const char *package;	/* Debian package, for its version */
	const char *malloc_from; /* the object that must serve malloc() */
	const char *trim_sym;	/* its trim/purge entry point, or NULL */
	/*
	 * segpool's per-CPU mode the child must run in: "rseq" (the default:
	 * SEGPOOL_PERCPU unset; the lock fallback only where rseq is not
	 * available), "lock" or "off" (SEGPOOL_PERCPU set to it); NULL for
	 * the others.
	 */
	const char *percpu;
	/*
	 * A variant build of segpool: the child runs the program beside this
	 * one named with this suffix (segpool-bench-nostats, built with other
	 * CFLAGS by the make target that wants it), and segpool_percpu_mode()
	 * there must contain @mode_note.  Such a contender runs only when
	 * named with -c, and is skipped when that program was not built.
	 */
	const char *exec_suffix;
	const char *mode_note;
	/* one more "NAME=value" for the child's environment, or NULL */
	const char *env;
	bool peer;		/* a peer allocator (ratios: "best peer") */
	bool inline_api;	/* segpool-cache through SEGPOOL_INLINE */
};

#define BENCH_NR_BUILTIN	14	/* tools/bench/contenders.c */
#define BENCH_MAX_EXTRA		4

extern struct bench_contender bench_contenders[];

/* segpool-cache's caches by (size + 7) >> 3 (contenders.c), and its calls
 * built with SEGPOOL_INLINE (contender_inline.c) */
#define BENCH_CACHE_MAX_SIZE	4096
struct segpool_cache;
extern struct segpool_cache *bench_cache_of[BENCH_CACHE_MAX_SIZE / 8 + 1];
void *bench_cache_alloc_inline(size_t size);
void bench_cache_free_inline(void *p, size_t size);
extern unsigned int bench_nr_contenders;

/*
 * bench_add_peer() - one more malloc peer, "NAME=/path/to/lib.so", run by
 * LD_PRELOAD like the Debian ones and verified the same way (the library
 * named must serve malloc in the child).  Return: 0, or -EINVAL (not
 * NAME=/absolute/path), -EEXIST (the name is taken), -ENOSPC (too many).
 */
int bench_add_peer(const char *spec);

const struct bench_contender *bench_contender_find(const char *name);

/* The sizes a workload asks for; a segpool cache per class serves them. */
struct bench_sizes {
	size_t min, max;		/* smallest and largest request */
	unsigned int nr;		/* classes in cls[] */
	size_t cls[BENCH_MAX_CLASSES];	/* ascending class sizes */
};

/*
 * The allocation interface every workload calls.  Set up once per child by
 * bench_heap_setup(); the same indirect call for every contender, the
 * harness floor included.
 */
struct bench_heap {
	void *(*alloc)(size_t size);
	void (*free)(void *ptr, size_t size);
	/* NULL where the contender has none (segpool-cache, the floor) */
	void *(*realloc)(void *ptr, size_t size);
	/*
	 * Blocks of any size beside the objects of alloc: segpool-cache takes
	 * them from segpool_malloc(), every other contender from alloc/free.
	 */
	void *(*big_alloc)(size_t size);
	void (*big_free)(void *ptr);
};
extern struct bench_heap bench_heap;

int bench_heap_setup(const struct bench_contender *c,
		     const struct bench_sizes *sizes);
/* Give free memory back: the result names what was done ("malloc_trim(0)"). */
const char *bench_heap_trim(void);
void bench_heap_teardown(void);

/* floor.c: an allocator that is next to nothing (per-thread LIFO lists). */
int bench_floor_setup(size_t slot);
void *bench_floor_alloc(size_t size);
void bench_floor_free(void *ptr, size_t size);

/* ------------------------------------------------------------------------
 * verify.c: which library serves malloc
 */

/* Driver: the file to preload for @c, or NULL when it is not installed. */
const char *bench_peer_path(const struct bench_contender *c,
			    char *buf, size_t len);
/*
 * Child: check that @c's library serves malloc and no other allocator
 * library is mapped; fills @served and @mapped.  0, or -1 (reported).
 */
int bench_verify_heap(const struct bench_contender *c,
		      char *served, size_t len, char *mapped, size_t mlen);
/* Child: the version the library reports about itself, or "". */
const char *bench_self_version(const struct bench_contender *c,
			       char *buf, size_t len);
/* jemalloc's control interface, looked up at run time. */
typedef int (*bench_mallctl_fn)(const char *name, void *old, size_t *oldlen,
				void *new, size_t newlen);

/* Child: resolve a symbol that @c's own library defines, or NULL. */
void *bench_contender_sym(const struct bench_contender *c, const char *sym);
/*
 * Child: check that segpool runs in @c's per-CPU mode (c->percpu); fills
 * @mode with segpool_percpu_mode().  0, or -1 (reported).
 */
int bench_verify_percpu(const struct bench_contender *c, char *mode,
			size_t len);

/* ------------------------------------------------------------------------
 * Configuration (main.c) and workloads (workloads.c)
 */

struct bench_cfg {
	uint64_t ops;			/* per thread (0: the workload's default) */
	double scale;			/* multiplies every default count */
	unsigned int threads;		/* this run's threads (workload 3) */
	unsigned int thread_list[BENCH_MAX_LIST];
	unsigned int nr_thread_list;
	size_t size;			/* fixed object size */
	size_t size_min, size_max;	/* random sizes of workload 3 */
	unsigned int pairs;		/* producer/consumer pairs */
	unsigned int fs_threads;	/* false-sharing threads (0: CPUs) */
	unsigned int writes;		/* writes per object in workload 6 */
	uint64_t live;			/* live objects of workload 8 */
	uint64_t seed;
	double warmup;			/* warm-up run, fraction of ops */
	double tsc_hz;			/* ticks per second (driver measures) */
	bool pin;			/* pin threads to CPUs */
	/* the rows beneath the hit path (wl_beneath.c) */
	double rows_scale;		/* their counts' --scale (0: --scale) */
	size_t grow_max;		/* realloc: the size a series grows to */
	unsigned int idle_max_s;	/* idle: seconds of RSS sampling at most */
};

/*
 * Named figures beyond time and peak RSS, sent as "x_NAME value" in the
 * record (wl_beneath.c fills them; the names are in bench_x_names[]).
 */
enum bench_x {
	BENCH_X_MINFLT,		/* minor page faults per op, timed part */
	BENCH_X_RSS_BEFORE,	/* idle: KiB before the burst */
	BENCH_X_RSS_PEAK,	/* idle: KiB with the burst live */
	BENCH_X_RSS_1S,		/* idle: KiB 1 s, 5 s and 20 s after the frees */
	BENCH_X_RSS_5S,
	BENCH_X_RSS_20S,
	BENCH_X_BACK_MS,	/* idle: ms until back within 8 MiB; -1 never */
	BENCH_X_WAITED_MS,	/* idle: ms sampled */
	BENCH_NR_X,
};
extern const char *const bench_x_names[BENCH_NR_X];

/* System calls a counting pass counts (syscount.c). */
enum { BENCH_SYS_MMAP, BENCH_SYS_MUNMAP, BENCH_SYS_MREMAP, BENCH_NR_SYS };
extern const char *const bench_sys_names[BENCH_NR_SYS];

/* One run's measurements: what a child sends back. */
enum { BENCH_LAT_ALLOC, BENCH_LAT_FREE, BENCH_NR_LAT };
enum { BENCH_P50, BENCH_P99, BENCH_P999, BENCH_NR_PCT };

struct bench_result {
	uint64_t ops;			/* operations timed, all threads */
	double cpu_ns;			/* thread CPU time, summed */
	double wall_ns;			/* wall time of the timed part */
	uint64_t checksum, expect;	/* folded tags, and what they must be */
	long peak_rss_kb;		/* getrusage ru_maxrss */
	/* workload 8 */
	long rss_base_kb, rss_live_kb, rss_freed_kb, rss_trim_kb;
	uint64_t live;
	char trim[48];			/* how memory was given back */
	/* workload 7: percentiles in ns, empty measurement subtracted */
	bool has_lat;
	double lat[BENCH_NR_LAT][BENCH_NR_PCT];
	double empty_ns;		/* median empty measurement */
	double tick_ns;			/* resolution: one tick step */
	uint64_t samples;
	int errors;
	/*
	 * segpool-cache contenders, after the timed run: free objects held
	 * in per-CPU magazines and in the depots, over the run's caches.
	 */
	bool has_cached;
	uint64_t cpu_objs, depot_objs;
	uint64_t cached_bytes;		/* (cpu_objs + depot_objs) x size */
	uint64_t cpu_bytes;		/* cpu_objs x size: magazines alone */
	unsigned int mag_size;		/* largest magazine size of the caches */
	unsigned int depot_max;		/* largest depot limit, in magazines */
	unsigned int caches;		/* how many caches were summed */
	/* calls served by a magazine hit, and those that missed (warm-up too) */
	uint64_t fast_allocs, slow_allocs, fast_frees, slow_frees;
	double x[BENCH_NR_X];		/* named figures, bit k of has_x */
	unsigned int has_x;
};

/* segpool-cache: what the caches hold in magazines and depots, into @res. */
void bench_heap_cached(struct bench_result *res);

enum bench_wl_flags {
	BENCH_WL_LATENCY = 1 << 0,	/* reports percentiles */
	BENCH_WL_MEMORY  = 1 << 1,	/* reports RSS, not speed */
	/*
	 * A row beneath the hit path (wl_beneath.c): its count is its default
	 * x --scale (--ops does not apply), it runs for the plain contenders
	 * only (segpool-cache, segpool-malloc and the mallocs: not the per-CPU
	 * mode and hardening variants, not the floor), and report_beneath.c
	 * gives it a table of its own.
	 */
	BENCH_WL_BENEATH = 1 << 2,
	BENCH_WL_NO_CACHE = 1 << 3,	/* segpool-cache does not apply */
	BENCH_WL_SYSCOUNT = 1 << 4,	/* one more run under strace counts mmaps */
	BENCH_WL_NO_WARMUP = 1 << 5,	/* no warm-up run */
};

/* How many threads a workload runs on. */
enum bench_wl_threads {
	BENCH_ON_ONE,			/* one */
	BENCH_ON_LIST,			/* each --threads value in turn */
	BENCH_ON_PAIRS,			/* --pairs producer/consumer pairs */
	BENCH_ON_CPUS,			/* --fs-threads, default every CPU */
};

struct bench_workload {
	const char *name;		/* option and table name */
	unsigned int number;		/* the numbering, 1 to 8 */
	const char *title;
	const char *op;			/* what one "op" is */
	const char *count;		/* what the count counts */
	uint64_t default_ops;		/* per thread */
	enum bench_wl_threads on;
	unsigned int flags;
	void (*sizes)(const struct bench_cfg *cfg, struct bench_sizes *s);
	int (*run)(const struct bench_cfg *cfg, uint64_t ops,
		   struct bench_result *res);
	unsigned int max_reps;		/* at most this many repetitions (0: -r) */
	uint64_t min_ops;		/* the count's floor under --scale */
};

extern const struct bench_workload bench_workloads[];
extern const unsigned int bench_nr_workloads;

const struct bench_workload *bench_workload_find(const char *name);

/* The loops, as bench_workload.run: in wl_local.c ... */
int bench_wl_pool(const struct bench_cfg *cfg, uint64_t ops,
		  struct bench_result *res);
int bench_wl_pool_lat(const struct bench_cfg *cfg, uint64_t ops,
		      struct bench_result *res);
int bench_wl_pair(const struct bench_cfg *cfg, uint64_t ops,
		  struct bench_result *res);
int bench_wl_batch(const struct bench_cfg *cfg, uint64_t ops,
		   struct bench_result *res);
int bench_wl_threads(const struct bench_cfg *cfg, uint64_t ops,
		     struct bench_result *res);
int bench_wl_mixed(const struct bench_cfg *cfg, uint64_t ops,
		   struct bench_result *res);
int bench_wl_memory(const struct bench_cfg *cfg, uint64_t ops,
		    struct bench_result *res);
/* ... in wl_beneath.c ... */
int bench_wl_large(const struct bench_cfg *cfg, uint64_t ops,
		   struct bench_result *res);
int bench_wl_realloc(const struct bench_cfg *cfg, uint64_t ops,
		     struct bench_result *res);
int bench_wl_live(const struct bench_cfg *cfg, uint64_t ops,
		  struct bench_result *res);
int bench_wl_idle(const struct bench_cfg *cfg, uint64_t ops,
		  struct bench_result *res);
/* ... and in wl_shared.c */
int bench_wl_xfer(const struct bench_cfg *cfg, uint64_t ops,
		  struct bench_result *res);
int bench_wl_xfer_lat(const struct bench_cfg *cfg, uint64_t ops,
		      struct bench_result *res);
int bench_wl_thrash(const struct bench_cfg *cfg, uint64_t ops,
		    struct bench_result *res);
int bench_wl_scratch(const struct bench_cfg *cfg, uint64_t ops,
		     struct bench_result *res);

uint64_t bench_workload_ops(const struct bench_workload *wl,
			    const struct bench_cfg *cfg);
/* The scale of @wl's count: --rows-scale for the rows beneath, else -S. */
double bench_wl_scale(const struct bench_workload *wl,
		      const struct bench_cfg *cfg);
unsigned int bench_fs_threads(const struct bench_cfg *cfg);
/* Threads of a run; @listed is the --threads value for BENCH_ON_LIST. */
unsigned int bench_workload_threads(const struct bench_workload *wl,
				    const struct bench_cfg *cfg,
				    unsigned int listed);
void bench_describe(const struct bench_workload *wl,
		    const struct bench_cfg *cfg, char *buf, size_t len);

/* ------------------------------------------------------------------------
 * Running threads (team.c)
 */

struct bench_lat_buf {
	uint32_t *v;			/* samples, in ticks */
	uint64_t n, cap;
};

struct bench_worker {
	unsigned int id, nr;		/* this worker, and how many */
	const struct bench_cfg *cfg;
	uint64_t ops;			/* this worker's share */
	void *shared;			/* the workload's common state */
	uint64_t rng;
	uint64_t checksum, expect;
	uint64_t done;			/* operations actually performed */
	int errors;
	struct bench_lat_buf lat[BENCH_NR_LAT];
	double cpu_ns;			/* thread CPU time of this worker */
	uint64_t wall_start, wall_end;	/* CLOCK_MONOTONIC around its part */
} __attribute__((aligned(128)));	/* workers share no cache line */

typedef void (*bench_work_fn)(struct bench_worker *w);

/*
 * bench_team_run() - run @fn on @nr pinned threads, started together.
 * Sums CPU time, checksums, errors and operations into @res; wall time runs
 * from the common start to the last thread's end.  @lat_cap > 0 gives each
 * worker buffers for that many latency samples of each kind.
 */
int bench_team_run(const struct bench_cfg *cfg, unsigned int nr,
		   bench_work_fn fn, void *shared, uint64_t ops_each,
		   uint64_t lat_cap, struct bench_result *res);

/* ------------------------------------------------------------------------
 * Objects: tag, write, check (inline: the harness's whole per-op cost)
 */

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

/*
 * Write @tag into the first and the last 8 bytes of @p and count it as
 * expected; bench_obj_check() reads both back, folds the tag into the
 * checksum and counts an error when the two halves disagree (another
 * object overlapped this one).
 */
static inline void bench_obj_fill(struct bench_worker *w, void *p,
				  size_t size, uint64_t tag)
{
	/* memcpy: the tail of an odd-sized object need not be aligned */
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
		memcpy(&tail, (const char *)p + size - sizeof(tail),
		       sizeof(tail));
		if (head != tail)
			w->errors++;
	}
	w->checksum += head;
}

/* ------------------------------------------------------------------------
 * Clocks and the system (sys.c)
 */

static inline uint64_t bench_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Ticks for one-operation latency: TSC reads fenced on both sides, so that
 * the timed call neither starts before the first read nor is still running
 * at the second (lfence waits for every earlier instruction; Linux makes it
 * dispatch-serialising on AMD too).  Plain rdtsc rather than rdtscp: some
 * virtual machines and valgrind do not offer rdtscp.
 */
static inline uint64_t bench_tick_begin(void)
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

static inline uint64_t bench_tick_end(void)
{
	return bench_tick_begin();
}

/* An unserialised read, for finding the clock's step. */
static inline uint64_t bench_tick_raw(void)
{
#if BENCH_HAVE_TSC
	return __rdtsc();
#else
	return bench_ns(CLOCK_MONOTONIC_RAW);
#endif
}

static inline void bench_lat_add(struct bench_lat_buf *b, uint64_t ticks)
{
	if (b->n < b->cap)
		b->v[b->n++] = ticks > UINT32_MAX ? UINT32_MAX : (uint32_t)ticks;
}

/*
 * bench_obj_alloc() / bench_obj_free() - one operation on the heap under
 * test, with the object written (alloc) or checked (free).  With @lat the
 * call alone is timed in ticks and recorded; callers pass a constant, so
 * the compiler builds a timed and an untimed copy of each loop.
 */
static inline __attribute__((always_inline)) void *
bench_obj_alloc(struct bench_worker *w, size_t size, uint64_t seq, bool lat)
{
	void *p;

	if (lat) {
		uint64_t t0 = bench_tick_begin();

		p = bench_heap.alloc(size);
		bench_lat_add(&w->lat[BENCH_LAT_ALLOC], bench_tick_end() - t0);
	} else {
		p = bench_heap.alloc(size);
	}
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
	bench_obj_check(w, p, size);
	if (lat) {
		uint64_t t0 = bench_tick_begin();

		bench_heap.free(p, size);
		bench_lat_add(&w->lat[BENCH_LAT_FREE], bench_tick_end() - t0);
	} else {
		bench_heap.free(p, size);
	}
}

/* A distinct sequence number space per worker, for bench_tag(). */
static inline uint64_t bench_seq_base(const struct bench_worker *w)
{
	return (uint64_t)w->id << 40;
}

double bench_tick_hz(void);
void *bench_map(size_t bytes);
void bench_unmap(void *p, size_t bytes);
long bench_rss_kb(void);
/*
 * Mark the start and the end of a timed part for a counting pass
 * (syscount.c): a write() to fd -1 that strace shows; no allocation.
 */
void bench_sys_mark(bool begin);
long bench_peak_rss_kb(void);
unsigned int bench_cpus(int *cpus, unsigned int max);
int bench_pin(int cpu);
void bench_die(const char *fmt, ...) __attribute__((format(printf, 1, 2),
						      noreturn));
void bench_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ------------------------------------------------------------------------
 * Statistics (stats.c)
 */

struct bench_summary {
	double median, min, max;
	unsigned int n;
};

void bench_summarize(const double *v, unsigned int n, struct bench_summary *s);
int bench_cmp_u32(const void *a, const void *b);
/* Percentile @p (0..1) of sorted ticks, nearest rank. */
uint32_t bench_percentile(const uint32_t *sorted, uint64_t n, double p);

/* ------------------------------------------------------------------------
 * Child (child.c) and driver (driver.c)
 */

struct bench_job {
	const struct bench_workload *wl;
	const struct bench_contender *c;
	unsigned int threads;
};

int bench_child_main(const struct bench_cfg *cfg, const char *contender,
		     const char *workload, int result_fd);

/* A cell: one workload, thread count and contender over all repetitions. */
struct bench_cell {
	struct bench_job job;
	unsigned int nr;			/* samples so far */
	struct bench_result *samples;		/* one per repetition */
	char served[256];			/* verified library */
	int failed;				/* runs that failed */
	double first_s;				/* how long its first run took */
	/* reduced by the driver */
	struct bench_summary cpu, wall;		/* ns per op */
	struct bench_summary rss;		/* peak RSS, KiB */
	struct bench_summary cached;		/* KiB in magazines and depots */
	struct bench_summary cached_cpu;	/* KiB in magazines alone */
	bool has_cached;			/* every sample recorded it */
	struct bench_summary x[BENCH_NR_X];	/* named figures (has_x) */
	unsigned int has_x;			/* recorded by every sample */
	/* the counting pass (BENCH_WL_SYSCOUNT): calls in the timed part */
	bool counted;
	long sys[BENCH_NR_SYS];
	double ratio_glibc, ratio_peer;		/* CPU time, median / median */
	const char *best_peer;
};

struct bench_contender_state {
	const struct bench_contender *c;
	bool selected;
	bool skipped;			/* not installed or not usable here */
	bool refused;			/* a child found the wrong malloc */
	char reason[128];
	char path[256];			/* preloaded file */
	char exec[PATH_MAX];		/* variant program, or "" (exec_suffix) */
	char version[64];		/* package version */
	char served[256];		/* library a child found serving malloc */
	char mapped[256];		/* allocator libraries it found mapped */
	char mode[128];			/* segpool's per-CPU mode in a child */
};

struct bench_machine {
	char cpu[128];
	unsigned int online, usable;
	char kernel[200];
	char glibc[32];
	char compiler[64];
	char segpool[32];
	char revision[64];		/* git describe of the sources, or "" */
	char date[40];
	long mem_mb;
	int numa_nodes;
	double tsc_ghz;
};

struct bench_run {
	struct bench_cfg cfg;
	unsigned int reps;
	unsigned int runs_done;		/* for the progress lines */
	uint64_t start_ns;		/* CLOCK_MONOTONIC at the first run */
	bool smoke, quiet, plots;
	bool no_count;			/* --no-count: no strace passes */
	char strace[PATH_MAX];		/* strace for counting passes, or "" */
	const char *out_dir;
	const char *format;		/* text, json, md */
	const char *doc;		/* bench-results.md to update */
	const char *srctree;		/* the sources, for their git revision */
	const char *gp_dir;		/* where the gnuplot scripts are */
	char *self;			/* this program, to re-execute */
	const char *exec;		/* the file children run (driver.c) */
	bool wl_selected[32];
	struct bench_contender_state cs[BENCH_NR_BUILTIN + BENCH_MAX_EXTRA];
	unsigned int nr_cs;
	struct bench_cell *cells;
	unsigned int nr_cells;
	struct bench_machine machine;
	unsigned int plotted;		/* BENCH_PLOT_* made */
	double elapsed_s;
	int errors;
};

int bench_driver_main(struct bench_run *run);

/* spawn.c: what a child sent back. */
struct bench_record {
	char status[16];		/* ok, failed, error, refused */
	char served[256];		/* the file that serves malloc */
	char mapped[256];		/* allocator libraries mapped */
	char version[64];		/* the library's own version */
	char mode[128];			/* segpool_percpu_mode(), or "" */
	struct bench_result r;
};

/*
 * Run @job in a child with @preload (or none); with @trace, under strace
 * (run->strace) writing its trace there.  0, or -1 (reported).
 */
int bench_spawn(const struct bench_run *run, const struct bench_job *job,
		const char *preload, struct bench_record *rec,
		const char *trace);

/* syscount.c: counting mmap, munmap and mremap with strace */
/* An executable strace into @buf, or false. */
bool bench_strace_find(char *buf, size_t len);
/*
 * The calls between the begin and end marks of a trace written with
 * "strace -f -o FILE -e trace=mmap,munmap,mremap,write".  0, or -1 (no
 * marks, or no file).
 */
int bench_syscount_marked(const char *path, long sys[BENCH_NR_SYS]);
/* The calls of a summary written with "strace -f -c -o FILE".  0, or -1. */
int bench_syscount_summary(const char *path, long sys[BENCH_NR_SYS]);
/* machine.c: also fills each contender's package version. */
void bench_machine_read(struct bench_machine *m, struct bench_run *run);
const struct bench_cell *bench_cell_get(const struct bench_run *run,
					const struct bench_workload *wl,
					unsigned int threads,
					const struct bench_contender *c);

/* ------------------------------------------------------------------------
 * Tables as aligned text or markdown (table.c)
 */

#define BENCH_TCOLS	16
#define BENCH_TROWS	160
#define BENCH_TCELL	80

/* text tables fit this many columns (bench_table_print cuts wider ones) */
#define BENCH_TEXT_COLS	120

struct bench_table {
	unsigned int ncol, nrow;
	unsigned int nkey;	/* columns repeated in each part; 0 means 1 */
	const char *head[BENCH_TCOLS];
	char cell[BENCH_TROWS][BENCH_TCOLS][BENCH_TCELL];
};

struct bench_table *bench_table_new(const char *const *head);
unsigned int bench_table_row(struct bench_table *t);
void bench_table_set(struct bench_table *t, unsigned int row, unsigned int col,
		     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Print @t (first column left, numbers right) and free it. */
void bench_table_print(FILE *f, struct bench_table *t, bool md);
/*
 * Text for the terminal: bench_text_begin() gives a stream that gathers it,
 * bench_text_end() prints it to @out with the lines wrapped to
 * BENCH_TEXT_COLS.
 */
struct bench_text_buf {
	char *buf;
	size_t len;
	FILE *f;
};
FILE *bench_text_begin(struct bench_text_buf *b);
void bench_text_end(struct bench_text_buf *b, FILE *out);
void bench_heading(FILE *f, bool md, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* report.c: tables as text or markdown; image links get @img_prefix. */
void bench_report(FILE *f, const struct bench_run *run, bool markdown,
		  const char *img_prefix);
/* report_beneath.c: the table of a BENCH_WL_BENEATH row (or rows). */
void bench_report_beneath(FILE *f, const struct bench_run *run,
			  const struct bench_workload *wl, bool md);
/* report.c: machine, contenders and one ok/FAILED line per workload. */
void bench_report_smoke(FILE *f, const struct bench_run *run);
/* json.c */
void bench_json(FILE *f, const struct bench_run *run);
/*
 * plot.c: data files and PNGs in @dir; @made gets the BENCH_PLOT_* bits of
 * the pictures made.  0, or -1 when gnuplot failed.
 */
enum {
	BENCH_PLOT_SUMMARY = 1 << 0,
	BENCH_PLOT_THREADS = 1 << 1,
	BENCH_PLOT_LATENCY = 1 << 2,
	BENCH_PLOT_PERCPU  = 1 << 3,
};
int bench_plot(const struct bench_run *run, const char *dir,
	       unsigned int *made);
/* doc.c: replace the results section of @doc with @md_path's text. */
int bench_doc_update(const char *doc, const char *md_path);
/*
 * doc.c: replace the "generated:bench-@part" block inside the results
 * section of @doc with @md_path's text (put it at the section's end when
 * there is none yet).
 */
int bench_doc_update_part(const char *doc, const char *part,
			  const char *md_path);

/* --- programs.c: real programs under each malloc (--programs) --- */
#define BENCH_NPROGS	10
struct bench_prog_opts {
	const char *out_dir;		/* programs.md there, or NULL */
	const char *doc;		/* bench-results.md to put it in, or NULL */
	const char *self;		/* this program: the C++ one is beside it */
	const char *only;		/* comma-separated program names, or NULL */
	int reps;
	double scale;			/* the inputs' sizes */
	bool smoke;			/* tiny inputs */
	bool no_count;			/* no strace pass */
};
/*
 * bench_programs_main() - run the real programs under every installed
 * malloc contender, @o->reps times each, then once more each under strace
 * counting mmap, munmap and mremap; table on stdout, programs.md in
 * @o->out_dir.  Return: 0, or 1 when a program failed under some
 * contender.
 */
int bench_programs_main(const struct bench_prog_opts *o);
/* prog_inputs.c: the programs' inputs in @tmp, sized by @scale; 0 or -1 */
int bench_prog_inputs(const char *tmp, double scale);
/* prog_inputs.c: remove @tmp and everything in it */
void bench_prog_cleanup(const char *tmp);

#endif /* SEGPOOL_BENCH_H */
