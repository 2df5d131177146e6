// SPDX-License-Identifier: MIT
/*
 * rcu/typesafe.c - SEGPOOL_TYPESAFE_BY_RCU: an empty slab's memory
 * goes back only after a grace period.
 *
 * The kernel's SLAB_TYPESAFE_BY_RCU: an object of such a cache may be freed
 * and handed out again at once (readers must re-check what they found),
 * but the memory of its slab must not become something else (go back to
 * the OS, or to a slab of another cache) while a reader that found an
 * object in it may still be in its read-side critical section.
 *
 * The slab layer calls sp_rcu_slab_defer() (its release hook) instead of
 * releasing such a slab.  The slab is already off every list, so its
 * descriptor's list link is free: deferred slabs are chained through it,
 * and no memory is needed to defer one (so deferring cannot fail).  One
 * rcu_head serves them all:
 *
 *   wait    slabs deferred while a grace period is already pending
 *   flight  slabs whose grace period is pending (sp_rcu_slab_head queued)
 *
 * When the callback runs, every slab in flight was deferred before the
 * head was queued, so a whole grace period has passed for each: they are
 * released.  If slabs are waiting, they become the next flight and the head
 * is queued again.  The hook runs under whatever lock its caller holds, so
 * it never waits for the fork lock (sp_rcu_call_try()): while a fork is
 * being prepared the slabs keep waiting for the next kick (a deferral, the
 * callback, or sp_rcu_slab_wait()).  Slabs are released in the order they were
 * deferred: "done >= ticket" means every slab deferred before the ticket was
 * taken is released (sp_rcu_slab_wait()).
 *
 * Counts: per cache rcu_slabs_pending and rcu_slabs_released (the node's
 * slabs_released counts the slab when it leaves the lists, as before).
 */
#include <pthread.h>

#include <urcu/urcu-memb.h>

#include "internal/list.h"
#include "rcu/rcu.h"

static struct {
	pthread_mutex_t lock;		/* protects all but done */
	struct sp_list_head wait;	/* deferred, head already in flight */
	struct sp_list_head flight;	/* waiting for the head's
					 * grace period */
	bool busy;			/* head queued with call_rcu() */
	uint64_t queued;		/* slabs ever deferred */
	uint64_t done;			/* slabs released (atomic) */
	struct rcu_head head;
} sp_ts = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.wait = SP_LIST_HEAD_INIT(sp_ts.wait),
	.flight = SP_LIST_HEAD_INIT(sp_ts.flight),
};

/* Move every entry of @from to the tail of @to (both lists). */
static void sp_list_splice_tail_init(struct sp_list_head *from,
				     struct sp_list_head *to)
{
	while (!sp_list_empty(from)) {
		struct sp_list_head *e = from->next;

		sp_list_del(e);
		sp_list_add_tail(e, to);
	}
}

static void sp_rcu_slab_gp_done(struct rcu_head *head);

/*
 * Start a grace period for the waiting slabs unless one is pending (lock
 * held).  The release hook runs under whatever lock its caller holds (the
 * cache list, a CPU slot), so it only tries: while a fork is prepared the
 * slabs keep waiting, for the next deferral or the next wait to start it.
 */
static void sp_rcu_slab_kick_locked(void)
{
	if (sp_ts.busy || sp_list_empty(&sp_ts.wait))
		return;
	sp_list_splice_tail_init(&sp_ts.wait, &sp_ts.flight);
	sp_ts.busy = true;
	if (!sp_rcu_call_try(&sp_ts.head, sp_rcu_slab_gp_done)) {
		sp_list_splice_tail_init(&sp_ts.flight, &sp_ts.wait);
		sp_ts.busy = false;
	}
}

static void sp_rcu_slab_gp_done(struct rcu_head *head)
{
	struct sp_list_head done;
	uint64_t n = 0;

	(void)head;
	sp_rcu_tsan_acquire(&sp_ts.head);
	sp_rcu_tsan_gp_acquire();
	sp_list_init(&done);
	pthread_mutex_lock(&sp_ts.lock);
	sp_list_splice_tail_init(&sp_ts.flight, &done);
	sp_ts.busy = false;
	pthread_mutex_unlock(&sp_ts.lock);

	while (!sp_list_empty(&done)) {
		struct sp_slab *s =
			sp_list_first_entry(&done, struct sp_slab, lru);
		struct segpool_cache *c = s->cache;

		sp_list_del(&s->lru);
		sp_slab_release_now(s);
		__atomic_fetch_add(&c->rcu_slabs_released, 1, __ATOMIC_RELAXED);
		/*
		 * the last touch of @c: destroy may go on once this reaches 0
		 */
		__atomic_fetch_sub(&c->rcu_slabs_pending, 1, __ATOMIC_RELEASE);
		n++;
	}
	__atomic_fetch_add(&sp_ts.done, n, __ATOMIC_RELEASE);
	/* the slabs deferred meanwhile get the next grace period */
	pthread_mutex_lock(&sp_ts.lock);
	sp_rcu_slab_kick_locked();
	pthread_mutex_unlock(&sp_ts.lock);
}

void sp_rcu_slab_defer(struct sp_slab *s)
{
	__atomic_fetch_add(&s->cache->rcu_slabs_pending, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&sp_ts.lock);
	sp_ts.queued++;
	sp_list_add_tail(&s->lru, &sp_ts.wait);
	sp_rcu_slab_kick_locked();
	pthread_mutex_unlock(&sp_ts.lock);
}

uint64_t sp_rcu_slab_queued(void)
{
	uint64_t q;

	pthread_mutex_lock(&sp_ts.lock);
	q = sp_ts.queued;
	pthread_mutex_unlock(&sp_ts.lock);
	return q;
}

void sp_rcu_slab_wait(uint64_t ticket)
{
	if (__atomic_load_n(&sp_ts.done, __ATOMIC_ACQUIRE) < ticket)
		sp_rcu_worker_start();
	/* each barrier lets at least the flight queued before it finish */
	while (__atomic_load_n(&sp_ts.done, __ATOMIC_ACQUIRE) < ticket) {
		pthread_mutex_lock(&sp_ts.lock);
		sp_rcu_slab_kick_locked();
		pthread_mutex_unlock(&sp_ts.lock);
		sp_rcu_barrier_raw();
	}
}

void sp_rcu_slab_lock(void)
{
	pthread_mutex_lock(&sp_ts.lock);
}

void sp_rcu_slab_unlock(void)
{
	pthread_mutex_unlock(&sp_ts.lock);
}

void sp_rcu_slab_reinit_lock(void)
{
	pthread_mutex_init(&sp_ts.lock, NULL);
}
