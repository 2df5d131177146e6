// SPDX-License-Identifier: MIT
/*
 * tools/bench/wl_beneath.c - the rows beneath the hit path (issue 22):
 * large (9), realloc (10), live-1e4 .. live-1e7 (11) and idle (12), as
 * Documentation/internals/benchmarks.md describes them.
 *
 * Harness arrays are mapped before the clock starts and stay to the end.
 * large and realloc mark their timed part for the counting pass.
 */
#include <errno.h>
#include <math.h>
#include <sys/resource.h>

#include "tools/bench/bench.h"

#define BENCH_KIB		1024ULL
#define BENCH_MIB		(1024ULL * 1024)
#define BENCH_LARGE_MIN		(33 * BENCH_KIB)
#define BENCH_LARGE_MAX		(2 * BENCH_MIB)
#define BENCH_LARGE_WINDOW	32
#define BENCH_PAGE		4096
#define BENCH_STRIDE		7919		/* a prime */

static long bench_minflt(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? 0 : ru.ru_minflt;
}

static void bench_large_worker(struct bench_worker *w)
{
	void *win[BENCH_LARGE_WINDOW] = { NULL };
	size_t wsize[BENCH_LARGE_WINDOW] = { 0 };
	uint64_t rng = BENCH_SEED ^ 0x6c61726765ULL;
	long f0;

	bench_sys_mark(true);
	f0 = bench_minflt();
	for (uint64_t i = 0; i < w->ops; i++) {
		unsigned int k = (unsigned int)(i % BENCH_LARGE_WINDOW);

		if (win[k])
			bench_obj_free(w, win[k], wsize[k], false);
		wsize[k] = BENCH_LARGE_MIN + (size_t)(bench_rand(&rng) %
			   (BENCH_LARGE_MAX - BENCH_LARGE_MIN + 1));
		if (!(win[k] = bench_obj_alloc(w, wsize[k], i, false)))
			break;
		w->done++;
	}
	for (unsigned int k = 0; k < BENCH_LARGE_WINDOW; k++)
		if (win[k])
			bench_obj_free(w, win[k], wsize[k], false);
	*(long *)w->shared = bench_minflt() - f0;
	bench_sys_mark(false);
}

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
	uint64_t seq = 0;
	long f0;

	bench_sys_mark(true);
	f0 = bench_minflt();
	for (uint64_t s = 0; s < w->ops; s++) {
		size_t cur = 40 * BENCH_KIB;
		uint64_t head = bench_tag(seq++), v;
		char *p = bench_heap.alloc(cur), *q;

		if (!p)
			break;
		bench_touch(p, 0, cur);
		memcpy(p, &head, sizeof(head));
		while (cur < w->cfg->grow_max) {
			size_t next = cur + cur / 2;
			uint64_t tail = bench_tag(seq++);

			if (next > w->cfg->grow_max)
				next = w->cfg->grow_max;
			memcpy(p + cur - 8, &tail, sizeof(tail));
			if (!(q = bench_heap.realloc(p, next))) {
				w->errors++;
				break;
			}
			p = q;
			memcpy(&v, p + cur - 8, sizeof(v));
			w->errors += v != tail;
			bench_touch(p, cur, next);
			cur = next;
		}
		memcpy(&v, p, sizeof(v));
		w->checksum += v;
		w->expect += head;
		bench_heap.free(p, cur);
		w->done++;
	}
	w->errors += w->done < w->ops;
	*(long *)w->shared = bench_minflt() - f0;
	bench_sys_mark(false);
}

/* @fn's part timed, then its minor faults per op (large, realloc) */
static int bench_faults(const struct bench_cfg *cfg, bench_work_fn fn,
			uint64_t ops, struct bench_result *res)
{
	long minflt = 0;
	int ret = bench_team_run(cfg, 1, fn, &minflt, ops, 0, res);

	bench_x_set(res, BENCH_X_MINFLT, (double)minflt / (double)ops);
	return ret;
}

BENCH_WL(bench_wl_large)
{
	return bench_faults(cfg, bench_large_worker, ops, res);
}

BENCH_WL(bench_wl_realloc)
{
	if (!bench_heap.realloc)
		return -1;
	return bench_faults(cfg, bench_grow_worker, ops, res);
}

static void bench_live_worker(struct bench_worker *w)
{
	void **ptr = w->shared;
	size_t size = w->cfg->size;
	uint64_t n = w->ops, v;

	for (uint64_t i = 0; i < n; i++) {
		uint64_t tag = bench_tag(i);

		if (!(ptr[i] = bench_heap.alloc(size))) {
			w->errors++;
			n = i;		/* free what there is */
			break;
		}
		memcpy(ptr[i], &tag, sizeof(tag));
		w->expect += tag;
	}
	for (uint64_t i = 0; i < n; i++) {
		uint64_t j = i * BENCH_STRIDE % n;

		memcpy(&v, ptr[j], sizeof(v));
		w->checksum += v;
		bench_heap.free(ptr[j], size);
	}
	w->done = n;
}

BENCH_WL(bench_wl_live)
{
	struct bench_result best = { 0 };
	void **ptr;
	int ret = 0;

	/* i * 7919 mod N visits every object when 7919 does not divide N */
	ops -= ops % BENCH_STRIDE == 0;
	if (!(ptr = bench_map(ops * sizeof(void *))))
		return -1;
	for (int round = 0; round < 3 && !ret; round++) {
		struct bench_result r = { 0 };

		ret = bench_team_run(cfg, 1, bench_live_worker, ptr, ops, 0,
				     &r);
		res->checksum += r.checksum;
		res->expect += r.expect;
		res->errors += r.errors;
		if (round == 0 || r.cpu_ns < best.cpu_ns)
			best = r;
	}
	res->ops = best.ops;
	res->cpu_ns = best.cpu_ns;
	res->wall_ns = best.wall_ns;
	bench_unmap(ptr, ops * sizeof(void *));
	return ret;
}

struct bench_idle {
	void **obj, **blk;
	size_t *bsize;
	uint64_t nobj, nblk, max_blk, bytes;
};

/*
 * The burst: the objects, then blocks, a third of the bytes each in
 * 256 B-4 KiB, 4-32 KiB and 33 KiB-1 MiB, taken in turn; all freed, the
 * objects scattered.  Return: RSS at the peak.
 */
static long bench_idle_burst(struct bench_worker *w, struct bench_idle *st)
{
	static const size_t lo[3] = { 256, 4 * BENCH_KIB, BENCH_LARGE_MIN };
	static const size_t hi[3] = { 4 * BENCH_KIB, 32 * BENCH_KIB,
				      BENCH_MIB };
	uint64_t rng = BENCH_SEED ^ 0x69646c65ULL, left[3], stride;
	size_t size = w->cfg->size;
	long peak;

	for (uint64_t i = 0; i < st->nobj; i++)
		if (!(st->obj[i] = bench_obj_alloc(w, size, i, false)))
			return -1;
	left[0] = left[1] = left[2] = st->bytes / 3;
	for (unsigned int c = 0; st->nblk < st->max_blk &&
	     (left[0] || left[1] || left[2]); c = (c + 1) % 3) {
		size_t bs;
		void *p;

		if (!left[c])
			continue;
		bs = lo[c] + (size_t)(bench_rand(&rng) % (hi[c] - lo[c]));
		bs = bs > left[c] ? (size_t)left[c] : bs;
		bs = bs < 16 ? 16 : bs;
		if (!(p = bench_heap.big_alloc(bs)))
			return -1;
		for (size_t o = 0; o < bs; o += BENCH_PAGE)
			((char *)p)[o] = 1;
		bench_obj_fill(w, p, bs, bench_tag(st->nobj + st->nblk));
		st->blk[st->nblk] = p;
		st->bsize[st->nblk++] = bs;
		left[c] -= bs < left[c] ? bs : left[c];
	}
	peak = bench_rss_kb();
	for (stride = BENCH_STRIDE; st->nobj > 1 && st->nobj % stride == 0;)
		stride += 2;
	for (uint64_t i = 0; i < st->nobj; i++)
		bench_obj_free(w, st->obj[i * stride % st->nobj], size, false);
	for (uint64_t i = 0; i < st->nblk; i++) {
		bench_obj_check(w, st->blk[i], st->bsize[i]);
		bench_heap.big_free(st->blk[i]);
	}
	w->done = st->nobj + st->nblk;
	return peak;
}

/* No call from here on: RSS cannot grow, so sampling ends once back. */
static void bench_idle_watch(const struct bench_cfg *cfg, long before,
			     struct bench_result *res)
{
	static const unsigned int mark_ms[3] = { 1000, 5000, 20000 };
	uint64_t t0 = bench_ns(CLOCK_MONOTONIC), waited;
	double at[3] = { -1, -1, -1 }, back = INFINITY;
	long rss;

	for (;;) {
		struct timespec ts = { 0, 100000000 };

		rss = bench_rss_kb();
		waited = (bench_ns(CLOCK_MONOTONIC) - t0) / 1000000;
		for (int k = 0; k < 3; k++)
			if (at[k] < 0 && waited >= mark_ms[k])
				at[k] = (double)rss;
		if (rss <= before + 8 * 1024)
			back = (double)waited;
		if (isfinite(back) || waited >= cfg->idle_max_s * 1000ULL)
			break;
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	for (int k = 0; k < 3; k++) {
		at[k] = at[k] < 0 && isfinite(back) ? (double)rss : at[k];
		if (at[k] >= 0)		/* a mark past a short sampling: none */
			bench_x_set(res, BENCH_X_1S + k, at[k]);
	}
	bench_x_set(res, BENCH_X_BACK, back);
}

/* On the main thread, as a program that frees a burst and waits would. */
BENCH_WL(bench_wl_idle)
{
	struct bench_idle st = { .nobj = ops };
	struct bench_worker w;
	double bytes = 260.0 * BENCH_MIB * cfg->scale;
	uint64_t c0, t0;
	long before, peak;

	if (!bench_heap.big_alloc)
		return -1;
	st.bytes = bytes < 3 * 4096 ? 3 * 4096 : (uint64_t)bytes;
	st.max_blk = st.bytes / 768 + st.bytes / 12288 +
		     st.bytes / (3 * BENCH_LARGE_MIN) + 8;
	st.obj = bench_map(st.nobj * sizeof(void *));
	st.blk = bench_map(st.max_blk * sizeof(void *));
	st.bsize = bench_map(st.max_blk * sizeof(size_t));
	if (!st.obj || !st.blk || !st.bsize)
		return -1;
	bench_worker_init(&w, cfg, 0);
	c0 = bench_ns(CLOCK_THREAD_CPUTIME_ID);
	t0 = bench_ns(CLOCK_MONOTONIC);
	before = bench_rss_kb();
	peak = bench_idle_burst(&w, &st);
	if (peak >= 0)
		bench_idle_watch(cfg, before, res);
	bench_x_set(res, BENCH_X_BEFORE, (double)before);
	bench_x_set(res, BENCH_X_PEAK, (double)peak);
	res->cpu_ns += (double)(bench_ns(CLOCK_THREAD_CPUTIME_ID) - c0);
	res->wall_ns += (double)(bench_ns(CLOCK_MONOTONIC) - t0);
	res->ops += w.done;
	res->checksum += w.checksum;
	res->expect += w.expect;
	res->errors += w.errors;
	bench_unmap(st.obj, st.nobj * sizeof(void *));
	bench_unmap(st.blk, st.max_blk * sizeof(void *));
	bench_unmap(st.bsize, st.max_blk * sizeof(size_t));
	return peak >= 0 ? 0 : -1;
}
