// SPDX-License-Identifier: MIT
/*
 * tools/bench/wl_shared.c - workloads whose objects cross threads or lines.
 *
 *  xfer    (5, 7) producer/consumer pairs: the producer allocates objects
 *          and passes them in batches of 256 through a bounded queue (64
 *          batches) to its consumer, which checks and frees them: every
 *          free is a cross-thread free.  A thread that finds the queue full
 *          or empty sleeps on a condition variable, so CPU time counts work,
 *          not waiting.  One op = one allocation or one free.
 *  thrash  (6)    each thread allocates a small object, increments it W
 *          times through a volatile pointer, frees it; repeat.  Objects of
 *          different threads on one cache line make every increment a
 *          coherence miss (active false sharing).  One op = one object.
 *  scratch (6)    the main thread allocates one small object per worker,
 *          back to back, and hands them out; each worker writes its object
 *          hard and frees it, then runs as in thrash.  An allocator that
 *          reuses the freed object for the freeing thread puts the workers'
 *          objects on one line (passive false sharing).
 */
#include <pthread.h>
#include <string.h>

#include "tools/bench/bench.h"

#define BENCH_XFER_BATCH	256
#define BENCH_XFER_DEPTH	64
#define BENCH_SMALL		8

/* --- xfer ---------------------------------------------------------------------- */

struct bench_xfer_queue {
	pthread_mutex_t lock;
	pthread_cond_t not_full, not_empty;
	uint64_t head, tail;		/* batches produced, consumed */
	unsigned int count[BENCH_XFER_DEPTH];
	void *obj[BENCH_XFER_DEPTH][BENCH_XFER_BATCH];
} __attribute__((aligned(128)));

/* Wait until the queue has a slot to fill (producer) or to drain. */
static unsigned int bench_xfer_wait(struct bench_xfer_queue *q, bool producer)
{
	unsigned int slot;

	pthread_mutex_lock(&q->lock);
	if (producer) {
		while (q->head - q->tail == BENCH_XFER_DEPTH)
			pthread_cond_wait(&q->not_full, &q->lock);
		slot = q->head % BENCH_XFER_DEPTH;
	} else {
		while (q->head == q->tail)
			pthread_cond_wait(&q->not_empty, &q->lock);
		slot = q->tail % BENCH_XFER_DEPTH;
	}
	pthread_mutex_unlock(&q->lock);
	return slot;
}

static void bench_xfer_done(struct bench_xfer_queue *q, bool producer)
{
	pthread_mutex_lock(&q->lock);
	if (producer) {
		q->head++;
		pthread_cond_signal(&q->not_empty);
	} else {
		q->tail++;
		pthread_cond_signal(&q->not_full);
	}
	pthread_mutex_unlock(&q->lock);
}

static inline __attribute__((always_inline)) void
bench_xfer_body(struct bench_worker *w, bool lat)
{
	struct bench_xfer_queue *q =
		(struct bench_xfer_queue *)w->shared + w->id / 2;
	bool producer = w->id % 2 == 0;
	size_t size = w->cfg->size;
	uint64_t seq = bench_seq_base(w);

	for (uint64_t done = 0; done < w->ops;) {
		unsigned int slot = bench_xfer_wait(q, producer);
		unsigned int n = BENCH_XFER_BATCH;
		void **obj = q->obj[slot];

		if (producer) {
			if (w->ops - done < n)
				n = (unsigned int)(w->ops - done);
			for (unsigned int i = 0; i < n; i++) {
				obj[i] = bench_obj_alloc(w, size, seq++, lat);
				if (!obj[i]) {
					n = i;	/* the consumer must not wait */
					w->ops = done + i;
					break;
				}
			}
			q->count[slot] = n;
		} else {
			n = q->count[slot];
			for (unsigned int i = 0; i < n; i++)
				bench_obj_free(w, obj[i], size, lat);
			if (n < BENCH_XFER_BATCH)
				w->ops = done + n;	/* the producer's last */
		}
		done += n;
		w->done = done;
		bench_xfer_done(q, producer);
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
	unsigned int pairs = cfg->pairs ? cfg->pairs : 1;
	size_t bytes = pairs * sizeof(struct bench_xfer_queue);
	struct bench_xfer_queue *qs = bench_map(bytes);
	int ret;

	if (!qs)
		return -1;
	for (unsigned int i = 0; i < pairs; i++) {
		pthread_mutex_init(&qs[i].lock, NULL);
		pthread_cond_init(&qs[i].not_full, NULL);
		pthread_cond_init(&qs[i].not_empty, NULL);
	}
	ret = bench_team_run(cfg, 2 * pairs, lat ? bench_xfer_lat_worker :
						   bench_xfer_worker,
			     qs, ops, lat ? ops : 0, res);
	for (unsigned int i = 0; i < pairs; i++) {
		pthread_mutex_destroy(&qs[i].lock);
		pthread_cond_destroy(&qs[i].not_full);
		pthread_cond_destroy(&qs[i].not_empty);
	}
	bench_unmap(qs, bytes);
	return ret;
}

int bench_wl_xfer(const struct bench_cfg *cfg, uint64_t ops,
		  struct bench_result *res)
{
	return bench_xfer_run(cfg, ops, res, false);
}

int bench_wl_xfer_lat(const struct bench_cfg *cfg, uint64_t ops,
		      struct bench_result *res)
{
	return bench_xfer_run(cfg, ops, res, true);
}

/* --- thrash and scratch ------------------------------------------------------ */

/* Increment the object's word @writes times, each a real store, and undo. */
static void bench_hammer(struct bench_worker *w, void *p)
{
	volatile uint64_t *v = p;

	for (unsigned int k = 0; k < w->cfg->writes; k++)
		*v += 1;
	*v -= w->cfg->writes;
	bench_obj_check(w, p, BENCH_SMALL);
}

static void bench_thrash_loop(struct bench_worker *w, uint64_t seq)
{
	for (uint64_t i = 0; i < w->ops; i++) {
		void *p = bench_heap.alloc(BENCH_SMALL);

		if (!p) {
			w->errors++;
			return;
		}
		bench_obj_fill(w, p, BENCH_SMALL, bench_tag(seq++));
		bench_hammer(w, p);
		bench_heap.free(p, BENCH_SMALL);
	}
	w->done = w->ops;
}

static void bench_thrash_worker(struct bench_worker *w)
{
	bench_thrash_loop(w, bench_seq_base(w));
}

static void bench_scratch_worker(struct bench_worker *w)
{
	void **given = w->shared;
	void *p = given[w->id];
	uint64_t seq = bench_seq_base(w);

	bench_obj_fill(w, p, BENCH_SMALL, bench_tag(seq++));
	bench_hammer(w, p);
	bench_heap.free(p, BENCH_SMALL);
	bench_thrash_loop(w, seq);
}

int bench_wl_thrash(const struct bench_cfg *cfg, uint64_t ops,
		    struct bench_result *res)
{
	return bench_team_run(cfg, bench_fs_threads(cfg), bench_thrash_worker,
			      NULL, ops, 0, res);
}

int bench_wl_scratch(const struct bench_cfg *cfg, uint64_t ops,
		     struct bench_result *res)
{
	unsigned int nr = bench_fs_threads(cfg);
	void *given[BENCH_MAX_THREADS];

	for (unsigned int i = 0; i < nr; i++) {
		given[i] = bench_heap.alloc(BENCH_SMALL);
		if (!given[i]) {
			res->errors++;
			while (i--)
				bench_heap.free(given[i], BENCH_SMALL);
			return -1;
		}
	}
	return bench_team_run(cfg, nr, bench_scratch_worker, given, ops, 0,
			      res);
}
