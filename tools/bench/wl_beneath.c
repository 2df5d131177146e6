// SPDX-License-Identifier: MIT
/*
 * tools/bench/wl_beneath.c - the rows beneath the hit path (issue 22).
 *
 *  large    (9)  large-block churn: N blocks of 33 KiB to 2 MiB (sizes
 *                drawn from the seed), each written at both ends (8 bytes
 *                at its head, 8 at its tail) and freed again through a
 *                window of 32 live blocks: block i replaces block i - 32.
 *                One op = one block (allocation, the two writes, its free).
 *  realloc  (10) realloc growth: a block of 40 KiB grown by steps of 1.5x
 *                to --grow-max (256 MiB); after every step one byte in
 *                each 4 KiB page of the new tail is written, and the words
 *                written at the head and at the old end are checked.  One
 *                op = one growth series (allocation, the steps, the free).
 *  live-1e4 .. live-1e7 (11) live-set scaling: N objects allocated, a word
 *                written in each, then freed in the scattered order
 *                i * 7919 mod N; three rounds in one process, the best
 *                round counts.  One op = one allocation and its free.
 *  idle     (12) idle release: RSS read; a burst of 1M objects and 260 MiB
 *                of blocks of mixed sizes (every page of them written),
 *                all freed; then no call at all:
 *                RSS read every 100 ms for --idle-max seconds (30), or
 *                until it is back within 8 MiB of where it started;
 *                on the main thread, not on one of team.c's.
 *
 * The harness's arrays are mapped and populated before the clock starts
 * (bench_map) and stay mapped to the end, so RSS before and after includes
 * them alike.  The timed part of large and realloc is marked for the
 * counting pass (bench_sys_mark(), syscount.c).
 */
#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "tools/bench/bench.h"

const char *const bench_x_names[BENCH_NR_X] = {
	[BENCH_X_MINFLT] = "minflt_per_op",
	[BENCH_X_RSS_BEFORE] = "rss_before_kb",
	[BENCH_X_RSS_PEAK] = "rss_peak_kb",
	[BENCH_X_RSS_1S] = "rss_1s_kb",
	[BENCH_X_RSS_5S] = "rss_5s_kb",
	[BENCH_X_RSS_20S] = "rss_20s_kb",
	[BENCH_X_BACK_MS] = "back_ms",
	[BENCH_X_WAITED_MS] = "waited_ms",
};

#define BENCH_KIB		1024ULL
#define BENCH_MIB		(1024ULL * 1024)
#define BENCH_LARGE_MIN		(33 * BENCH_KIB)
#define BENCH_LARGE_MAX		(2 * BENCH_MIB)
#define BENCH_LARGE_WINDOW	32
#define BENCH_GROW_FROM		(40 * BENCH_KIB)
#define BENCH_PAGE		4096
#define BENCH_STRIDE		7919		/* a prime: i * 7919 mod N */
#define BENCH_IDLE_BYTES	(260 * BENCH_MIB)
#define BENCH_IDLE_SLACK_KB	(8 * 1024)	/* "back": within 8 MiB */
#define BENCH_IDLE_STEP_MS	100

static void bench_x_set(struct bench_result *res, enum bench_x k, double v)
{
	res->x[k] = v;
	res->has_x |= 1u << k;
}

static long bench_minflt(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? 0 : ru.ru_minflt;
}

/* --- large: churn of blocks from 33 KiB to 2 MiB ----------------------------- */

struct bench_large_state {
	long minflt;
};

static void bench_large_worker(struct bench_worker *w)
{
	struct bench_large_state *st = w->shared;
	void *win[BENCH_LARGE_WINDOW] = { NULL };
	size_t wsize[BENCH_LARGE_WINDOW] = { 0 };
	uint64_t rng = w->cfg->seed ^ 0x6c61726765ULL;	/* same for all */
	uint64_t seq = bench_seq_base(w);
	long f0;

	bench_sys_mark(true);
	f0 = bench_minflt();
	for (uint64_t i = 0; i < w->ops; i++) {
		unsigned int slot = (unsigned int)(i % BENCH_LARGE_WINDOW);
		size_t size = BENCH_LARGE_MIN + (size_t)(bench_rand(&rng) %
				(BENCH_LARGE_MAX - BENCH_LARGE_MIN + 1));

		if (win[slot])
			bench_obj_free(w, win[slot], wsize[slot], false);
		win[slot] = bench_obj_alloc(w, size, seq++, false);
		wsize[slot] = size;
		if (!win[slot])
			break;
		w->done++;
	}
	for (unsigned int k = 0; k < BENCH_LARGE_WINDOW; k++)
		if (win[k])
			bench_obj_free(w, win[k], wsize[k], false);
	st->minflt = bench_minflt() - f0;
	bench_sys_mark(false);
}

int bench_wl_large(const struct bench_cfg *cfg, uint64_t ops,
		   struct bench_result *res)
{
	struct bench_large_state st = { 0 };
	int ret = bench_team_run(cfg, 1, bench_large_worker, &st, ops, 0, res);

	bench_x_set(res, BENCH_X_MINFLT, (double)st.minflt / (double)ops);
	return ret;
}

/* --- realloc: 40 KiB to 256 MiB by steps of 1.5x ------------------------------- */

struct bench_grow_state {
	long minflt;
};

/* One byte in every page of [from, to), and the last byte. */
static void bench_touch(char *p, size_t from, size_t to)
{
	for (size_t o = from; o < to; o += BENCH_PAGE)
		p[o] = (char)o;
	if (to > from)
		p[to - 1] = 1;
}

static void bench_grow_worker(struct bench_worker *w)
{
	struct bench_grow_state *st = w->shared;
	size_t max = w->cfg->grow_max;
	uint64_t seq = bench_seq_base(w);
	long f0;

	bench_sys_mark(true);
	f0 = bench_minflt();
	for (uint64_t s = 0; s < w->ops; s++) {
		size_t cur = BENCH_GROW_FROM;
		uint64_t head = bench_tag(seq++);
		char *p = bench_heap.alloc(cur);

		if (!p) {
			w->errors++;
			break;
		}
		bench_touch(p, 0, cur);
		memcpy(p, &head, sizeof(head));
		while (cur < max) {
			size_t next = cur + cur / 2;
			uint64_t tail = bench_tag(seq++), v;
			char *q;

			next = next > max ? max : next;
			memcpy(p + cur - sizeof(tail), &tail, sizeof(tail));
			q = bench_heap.realloc(p, next);
			if (!q) {
				w->errors++;
				break;
			}
			p = q;
			memcpy(&v, p + cur - sizeof(v), sizeof(v));
			w->errors += v != tail;
			bench_touch(p, cur, next);
			cur = next;
		}
		w->checksum += *(uint64_t *)p;
		w->expect += head;
		bench_heap.free(p, cur);
		w->done++;
	}
	st->minflt = bench_minflt() - f0;
	bench_sys_mark(false);
}

int bench_wl_realloc(const struct bench_cfg *cfg, uint64_t ops,
		     struct bench_result *res)
{
	struct bench_grow_state st = { 0 };
	int ret;

	if (!bench_heap.realloc) {
		bench_warn("realloc: this contender has no realloc");
		return -1;
	}
	ret = bench_team_run(cfg, 1, bench_grow_worker, &st, ops, 0, res);
	bench_x_set(res, BENCH_X_MINFLT, (double)st.minflt / (double)ops);
	return ret;
}

/* --- live-1e4 .. live-1e7: scattered frees of N live objects ---------------------- */

struct bench_live_state {
	void **ptr;
	uint64_t n;
};

static void bench_live_worker(struct bench_worker *w)
{
	struct bench_live_state *st = w->shared;
	size_t size = w->cfg->size;
	uint64_t n = st->n;

	for (uint64_t i = 0; i < n; i++) {
		uint64_t tag = bench_tag(i);
		void *p = bench_heap.alloc(size);

		if (__builtin_expect(!p, 0)) {
			w->errors++;
			n = i;		/* free what there is */
			break;
		}
		memcpy(p, &tag, sizeof(tag));	/* one word in each */
		w->expect += tag;
		st->ptr[i] = p;
	}
	for (uint64_t i = 0; i < n; i++) {
		uint64_t j = i * BENCH_STRIDE % n, v;

		memcpy(&v, st->ptr[j], sizeof(v));
		w->checksum += v;
		bench_heap.free(st->ptr[j], size);
	}
	w->done = n;
}

int bench_wl_live(const struct bench_cfg *cfg, uint64_t ops,
		  struct bench_result *res)
{
	struct bench_live_state st = { .n = ops };
	struct bench_result best = { 0 };
	int ret = 0;

	/* i * 7919 mod N visits every object only when 7919 does not divide N */
	if (ops % BENCH_STRIDE == 0)
		st.n = --ops;
	st.ptr = bench_map(ops * sizeof(void *));
	if (!st.ptr)
		return -1;
	for (int round = 0; round < 3 && !ret; round++) {
		struct bench_result r = { 0 };

		ret = bench_team_run(cfg, 1, bench_live_worker, &st, ops, 0, &r);
		res->checksum += r.checksum;
		res->expect += r.expect;
		res->errors += r.errors;
		if (round == 0 || r.cpu_ns < best.cpu_ns)
			best = r;
	}
	res->ops = best.ops;
	res->cpu_ns = best.cpu_ns;
	res->wall_ns = best.wall_ns;
	bench_unmap(st.ptr, ops * sizeof(void *));
	return ret;
}

/* --- idle: a burst, all freed, then no call ------------------------------------- */

struct bench_idle_state {
	void **obj, **blk;
	size_t *blk_size;
	uint64_t nobj, nblk, max_blk;
	uint64_t bytes;
	struct bench_result *res;
};

/*
 * Block sizes of the burst: a third of the bytes each in small (256 B to
 * 4 KiB), medium (4 to 32 KiB) and large blocks (33 KiB to 1 MiB), taken
 * in turn, sizes from the seed.
 */
static size_t bench_idle_size(uint64_t *rng, unsigned int cls)
{
	static const size_t lo[3] = { 256, 4 * BENCH_KIB, BENCH_LARGE_MIN };
	static const size_t hi[3] = { 4 * BENCH_KIB, 32 * BENCH_KIB, BENCH_MIB };

	return lo[cls] + (size_t)(bench_rand(rng) % (hi[cls] - lo[cls]));
}

static uint64_t bench_idle_max_blocks(uint64_t bytes)
{
	return bytes / 3 / 256 + bytes / 3 / (4 * BENCH_KIB) +
	       bytes / 3 / BENCH_LARGE_MIN + 8;
}

static void bench_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void bench_idle_worker(struct bench_worker *w)
{
	struct bench_idle_state *st = w->shared;
	struct bench_result *res = st->res;
	uint64_t rng = w->cfg->seed ^ 0x69646c65ULL;
	uint64_t seq = bench_seq_base(w), left[3], stride = BENCH_STRIDE;
	size_t size = w->cfg->size;
	long before = bench_rss_kb(), peak, rss = 0, slack = BENCH_IDLE_SLACK_KB;
	uint64_t t0, waited = 0, max_ms = w->cfg->idle_max_s * 1000ULL;
	double at[3] = { -1, -1, -1 };
	double back = -1;

	/* the burst: the objects, then the blocks */
	for (uint64_t i = 0; i < st->nobj; i++) {
		st->obj[i] = bench_obj_alloc(w, size, seq++, false);
		if (!st->obj[i])
			return;
	}
	for (int k = 0; k < 3; k++)
		left[k] = st->bytes / 3;
	for (unsigned int cls = 0; st->nblk < st->max_blk &&
	     (left[0] || left[1] || left[2]); cls = (cls + 1) % 3) {
		size_t bs;
		void *p;

		if (!left[cls])
			continue;
		bs = bench_idle_size(&rng, cls);
		bs = bs > left[cls] ? (size_t)left[cls] : bs;
		bs = bs < 16 ? 16 : bs;
		p = bench_heap.big_alloc(bs);
		if (!p) {
			w->errors++;
			break;
		}
		/* resident: a byte in every page, then the tags at the ends */
		for (size_t o = 0; o < bs; o += BENCH_PAGE)
			((char *)p)[o] = 1;
		bench_obj_fill(w, p, bs, bench_tag(seq++));
		st->blk[st->nblk] = p;
		st->blk_size[st->nblk++] = bs;
		left[cls] -= bs < left[cls] ? bs : left[cls];
	}
	peak = bench_rss_kb();

	/* all freed: the objects scattered, the blocks in order */
	while (st->nobj > 1 && st->nobj % stride == 0)
		stride += 2;
	for (uint64_t i = 0; i < st->nobj; i++) {
		uint64_t j = i * stride % st->nobj;

		bench_obj_free(w, st->obj[j], size, false);
	}
	for (uint64_t i = 0; i < st->nblk; i++) {
		bench_obj_check(w, st->blk[i], st->blk_size[i]);
		bench_heap.big_free(st->blk[i]);
	}
	w->done = st->nobj + st->nblk;

	/*
	 * No call from here on: RSS every 100 ms.  It cannot grow without a
	 * call, so sampling ends once it is back, and the later marks take
	 * the last sample.
	 */
	t0 = bench_ns(CLOCK_MONOTONIC);
	for (;;) {
		static const unsigned int mark_ms[3] = { 1000, 5000, 20000 };

		rss = bench_rss_kb();
		waited = (bench_ns(CLOCK_MONOTONIC) - t0) / 1000000;
		for (int k = 0; k < 3; k++)
			if (at[k] < 0 && waited >= mark_ms[k])
				at[k] = (double)rss;
		if (back < 0 && rss <= before + slack)
			back = (double)waited;
		if (back >= 0 || waited >= max_ms)
			break;
		bench_sleep_ms(BENCH_IDLE_STEP_MS);
	}
	for (int k = 0; k < 3; k++)
		if (at[k] < 0 && back >= 0)
			at[k] = (double)rss;
	bench_x_set(res, BENCH_X_RSS_BEFORE, (double)before);
	bench_x_set(res, BENCH_X_RSS_PEAK, (double)peak);
	/* a mark past the sampling (a short --idle-max) is left out */
	if (at[0] >= 0)
		bench_x_set(res, BENCH_X_RSS_1S, at[0]);
	if (at[1] >= 0)
		bench_x_set(res, BENCH_X_RSS_5S, at[1]);
	if (at[2] >= 0)
		bench_x_set(res, BENCH_X_RSS_20S, at[2]);
	bench_x_set(res, BENCH_X_BACK_MS, back);
	bench_x_set(res, BENCH_X_WAITED_MS, (double)waited);
}

int bench_wl_idle(const struct bench_cfg *cfg, uint64_t ops,
		  struct bench_result *res)
{
	struct bench_idle_state st = { .nobj = ops, .res = res };
	double bytes = (double)BENCH_IDLE_BYTES *
		       bench_wl_scale(bench_workload_find("idle"), cfg);
	int ret;

	if (!bench_heap.big_alloc) {
		bench_warn("idle: this contender has no blocks of any size");
		return -1;
	}
	st.bytes = bytes < 3 * 4096 ? 3 * 4096 : (uint64_t)bytes;
	st.max_blk = bench_idle_max_blocks(st.bytes);
	st.obj = bench_map(st.nobj * sizeof(void *));
	st.blk = bench_map(st.max_blk * sizeof(void *));
	st.blk_size = bench_map(st.max_blk * sizeof(size_t));
	if (!st.obj || !st.blk || !st.blk_size)
		return -1;
	/*
	 * On the calling (main) thread, as a program that frees a burst and
	 * waits would: glibc then serves it from its main arena.
	 */
	{
		static struct bench_worker w;
		uint64_t c0 = bench_ns(CLOCK_THREAD_CPUTIME_ID);
		uint64_t t0 = bench_ns(CLOCK_MONOTONIC);

		memset(&w, 0, sizeof(w));
		w.nr = 1;
		w.cfg = cfg;
		w.ops = ops;
		w.shared = &st;
		w.rng = cfg->seed * 0x100000001B3ULL + 1;
		bench_idle_worker(&w);
		res->cpu_ns += (double)(bench_ns(CLOCK_THREAD_CPUTIME_ID) - c0);
		res->wall_ns += (double)(bench_ns(CLOCK_MONOTONIC) - t0);
		res->ops += w.done;
		res->checksum += w.checksum;
		res->expect += w.expect;
		res->errors += w.errors;
		ret = w.done ? 0 : -1;
	}
	bench_unmap(st.obj, st.nobj * sizeof(void *));
	bench_unmap(st.blk, st.max_blk * sizeof(void *));
	bench_unmap(st.blk_size, st.max_blk * sizeof(size_t));
	return ret;
}
