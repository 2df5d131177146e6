/* SPDX-License-Identifier: MIT */
/*
 * rcu/rcu.h - RCU inside the library (private): liburcu's urcu-memb
 * flavour behind a few calls, so that only the files of rcu/ include liburcu.
 *
 *   rcu/rcu.c           thread registration on demand, the read-side
 *                        sections of the cache-list walkers, grace periods,
 *                        fork, the RCU side of cache destroy
 *   rcu/free.c      segpool_cache_free_rcu(): per-CPU batches handed
 *                        whole to call_rcu(), segpool_rcu_barrier()
 *   rcu/typesafe.c  SEGPOOL_TYPESAFE_BY_RCU: empty slabs wait for a
 *                        grace period before their memory goes back
 *
 * Lock order: see core/init.c, level 2 (the worker lock, liburcu's
 * call_rcu mutex, the fork lock) and level 11 (the batch, spill and
 * deferred-slab locks, leaves).
 */
#ifndef SP_RCU_RCU_H
#define SP_RCU_RCU_H

#include <stdbool.h>
#include <stdint.h>

#include "internal/compiler.h"
#include "slab/slab.h"

struct rcu_head;

/* --- rcu/rcu.c --- */
/* sp_rcu_init() - hook the grace-period release into the slab layer. */
SP_INTERNAL void sp_rcu_init(void);
/* sp_rcu_thread_online() - register the calling thread with liburcu if it
 * is not yet (undone at thread exit); needed before a read-side section or
 * call_rcu(). */
SP_INTERNAL void sp_rcu_thread_online(void);
/*
 * The bound on objects waiting in segpool_cache_free_rcu() and
 * segpool_free_rcu() (rcu/free.c, "Back-pressure"): 2^20 objects, 8 MiB
 * of batches and whatever the objects hold.  Tests lower it.
 */
#define SP_RCU_PENDING_MAX	(1UL << 20)
extern SP_INTERNAL uint64_t sp_rcu_pending_max;

/* sp_rcu_read_ongoing() - the caller is inside a read-side section. */
SP_INTERNAL bool sp_rcu_read_ongoing(void);
/*
 * sp_rcu_walk_begin() / sp_rcu_walk_end() - bracket a walk of sp_cache_list
 * with sp_list_for_each_entry_rcu(): a read-side critical section (the
 * thread is registered on demand).  A cache seen in it stays mapped until
 * sp_rcu_walk_end().
 */
SP_INTERNAL void sp_rcu_walk_begin(void);
SP_INTERNAL void sp_rcu_walk_end(void);
/* sp_rcu_synchronize() - wait for a grace period (never in a read-side
 * section). */
SP_INTERNAL void sp_rcu_synchronize(void);
/* sp_rcu_worker_start() - start segpool's call_rcu worker if it is not
 * running (with no segpool lock held). */
SP_INTERNAL void sp_rcu_worker_start(void);
/* sp_rcu_call() - call_rcu() from any thread, fork-safe. */
SP_INTERNAL void sp_rcu_call(struct rcu_head *head,
			     void (*func)(struct rcu_head *head));
/* sp_rcu_call_try() - sp_rcu_call(), or false while a fork is prepared
 * or before the worker was started (never waits: for callers that may
 * hold other segpool locks). */
SP_INTERNAL bool sp_rcu_call_try(struct rcu_head *head,
				 void (*func)(struct rcu_head *head));
/* sp_rcu_barrier_raw() - liburcu's rcu_barrier(), fork-safe. */
SP_INTERNAL void sp_rcu_barrier_raw(void);
/*
 * sp_rcu_cache_retire() - @c is off the cache list: wait until no walker
 * can see it and its deferred slabs are released, so it may be freed.
 */
SP_INTERNAL void sp_rcu_cache_retire(struct segpool_cache *c);
/* ThreadSanitizer cannot see liburcu's barriers: the grace period is
 * told to it as a release by every reader and an acquire after it. */
SP_INTERNAL void sp_rcu_tsan_gp_acquire(void);
SP_INTERNAL void sp_rcu_tsan_release(void *addr);
SP_INTERNAL void sp_rcu_tsan_acquire(void *addr);
/*
 * fork, from core/init.c's handlers: sp_rcu_fork_prepare() before every
 * other lock (pauses the call_rcu workers, takes the fork lock), the
 * _leaves() after every other lock (batch and deferred-slab locks); the
 * parent and child calls in the reverse order.
 */
SP_INTERNAL void sp_rcu_fork_prepare(void);
SP_INTERNAL void sp_rcu_fork_prepare_leaves(void);
SP_INTERNAL void sp_rcu_fork_parent_leaves(void);
SP_INTERNAL void sp_rcu_fork_parent(void);
SP_INTERNAL void sp_rcu_fork_child_leaves(void);
SP_INTERNAL void sp_rcu_fork_child(void);

/* --- rcu/free.c --- */
/* sp_rcu_free_flush() - hand every CPU's partial batch to call_rcu(). */
SP_INTERNAL void sp_rcu_free_flush(void);
/* sp_rcu_cache_quiesce() - wait until no object of @c waits for a grace
 * period (for destroy); free when none is pending. */
SP_INTERNAL void sp_rcu_cache_quiesce(struct segpool_cache *c);
SP_INTERNAL void sp_rcu_free_lock_all(void);
SP_INTERNAL void sp_rcu_free_unlock_all(void);
SP_INTERNAL void sp_rcu_free_reinit_locks(void);

/* --- rcu/typesafe.c --- */
/* sp_rcu_slab_defer() - the slab layer's release hook: release @s after a
 * grace period. */
SP_INTERNAL void sp_rcu_slab_defer(struct sp_slab *s);
/* sp_rcu_slab_queued() - slabs deferred so far (a ticket for the wait). */
SP_INTERNAL uint64_t sp_rcu_slab_queued(void);
/* sp_rcu_slab_wait() - wait until the first @ticket deferred slabs are
 * released. */
SP_INTERNAL void sp_rcu_slab_wait(uint64_t ticket);
SP_INTERNAL void sp_rcu_slab_lock(void);
SP_INTERNAL void sp_rcu_slab_unlock(void);
SP_INTERNAL void sp_rcu_slab_reinit_lock(void);

#endif /* SP_RCU_RCU_H */
