// SPDX-License-Identifier: MIT
/*
 * tools/bench/wl_shared.c - workloads whose objects cross threads or
 * share lines: xfer (5, 7), a producer passing batches of 256 through a
 * bounded queue to its consumer, and the false-sharing pair thrash and
 * scratch (6); Documentation/internals/benchmarks.md has each loop.  A
 * blocked thread sleeps, so CPU time counts work, not waiting.
 */
#include <pthread.h>

#include "tools/bench/bench.h"

#define BENCH_XFER_BATCH	256
#define BENCH_XFER_DEPTH	64
#define BENCH_SMALL		8

struct bench_xfer_queue {
	pthread_mutex_t lock;
	pthread_cond_t cond[2];		/* 0: not full, 1: not empty */
	uint64_t head, tail;		/* batches produced, consumed */
	unsigned int count[BENCH_XFER_DEPTH];
	void *obj[BENCH_XFER_DEPTH][BENCH_XFER_BATCH];
};

/* Wait for a slot to fill (producer) or to drain; @done: one is done. */
static unsigned int bench_xfer_sync(struct bench_xfer_queue *q, bool prod,
				    bool done)
{
	unsigned int slot = 0;

	pthread_mutex_lock(&q->lock);
	if (done) {
		*(prod ? &q->head : &q->tail) += 1;
		pthread_cond_signal(&q->cond[prod]);
	} else {
		while (prod ? q->head - q->tail == BENCH_XFER_DEPTH :
		       q->head == q->tail)
			pthread_cond_wait(&q->cond[!prod], &q->lock);
		slot = (prod ? q->head : q->tail) % BENCH_XFER_DEPTH;
	}
	pthread_mutex_unlock(&q->lock);
	return slot;
}

static inline __attribute__((always_inline)) void
bench_xfer_body(struct bench_worker *w, bool lat)
{
	struct bench_xfer_queue *q = w->shared;
	bool prod = w->id == 0;
	size_t size = w->cfg->size;
	uint64_t seq = 0;

	for (uint64_t done = 0; done < w->ops;) {
		unsigned int slot = bench_xfer_sync(q, prod, false);
		unsigned int n = BENCH_XFER_BATCH;
		void **obj = q->obj[slot];

		if (prod) {
			n = w->ops - done < n ? (unsigned int)(w->ops - done)
					      : n;
			for (unsigned int i = 0; i < n; i++)
				if (!(obj[i] = bench_obj_alloc(w, size, seq++,
							       lat))) {
					n = i;	/* the consumer must not wait */
					w->ops = done + i;
				}
			q->count[slot] = n;
		} else {
			n = q->count[slot];
			for (unsigned int i = 0; i < n; i++)
				bench_obj_free(w, obj[i], size, lat);
			if (n < BENCH_XFER_BATCH)
				w->ops = done + n;	/* the last batch */
		}
		done += n;
		w->done = done;
		bench_xfer_sync(q, prod, true);
	}
}

static void bench_xfer_worker(struct bench_worker *w)
{
	bench_xfer_body(w, false);
}

static void bench_xfer_lat_worker(struct bench_worker *w)
{
	bench_xfer_body(w, true);
}

static int bench_xfer_run(const struct bench_cfg *cfg, uint64_t ops,
			  struct bench_result *res, bool lat)
{
	struct bench_xfer_queue *q = bench_map(sizeof(*q));
	int ret;

	if (!q)
		return -1;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cond[0], NULL);
	pthread_cond_init(&q->cond[1], NULL);
	ret = bench_team_run(cfg, 2, lat ? bench_xfer_lat_worker :
			     bench_xfer_worker, q, ops, lat ? ops : 0, res);
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->cond[0]);
	pthread_cond_destroy(&q->cond[1]);
	bench_unmap(q, sizeof(*q));
	return ret;
}

BENCH_WL(bench_wl_xfer)
{
	return bench_xfer_run(cfg, ops, res, false);
}

BENCH_WL(bench_wl_xfer_lat)
{
	return bench_xfer_run(cfg, ops, res, true);
}

/* Increment the object's word W times, each a real store, then undo. */
static void bench_hammer(struct bench_worker *w, void *p, uint64_t tag)
{
	volatile uint64_t *v = p;

	bench_obj_fill(w, p, BENCH_SMALL, tag);
	for (unsigned int k = 0; k < w->cfg->writes; k++)
		*v += 1;
	*v -= w->cfg->writes;
	bench_obj_check(w, p, BENCH_SMALL);
	bench_heap.free(p, BENCH_SMALL);
}

static void bench_thrash_loop(struct bench_worker *w, uint64_t seq)
{
	for (uint64_t i = 0; i < w->ops; i++) {
		void *p = bench_heap.alloc(BENCH_SMALL);

		if (!p) {
			w->errors++;
			return;
		}
		bench_hammer(w, p, bench_tag(seq++));
	}
	w->done = w->ops;
}

static void bench_thrash_worker(struct bench_worker *w)
{
	bench_thrash_loop(w, bench_seq_base(w));
}

static void bench_scratch_worker(struct bench_worker *w)
{
	uint64_t seq = bench_seq_base(w);

	bench_hammer(w, ((void **)w->shared)[w->id], bench_tag(seq++));
	bench_thrash_loop(w, seq);
}

BENCH_WL(bench_wl_thrash)
{
	return bench_team_run(cfg, bench_fs_threads(), bench_thrash_worker,
			      NULL, ops, 0, res);
}

BENCH_WL(bench_wl_scratch)
{
	unsigned int nr = bench_fs_threads();
	void *given[BENCH_MAX_THREADS];

	for (unsigned int i = 0; i < nr; i++)
		if (!(given[i] = bench_heap.alloc(BENCH_SMALL))) {
			res->errors++;
			while (i--)
				bench_heap.free(given[i], BENCH_SMALL);
			return -1;
		}
	return bench_team_run(cfg, nr, bench_scratch_worker, given, ops, 0,
			      res);
}
