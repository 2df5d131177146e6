// SPDX-License-Identifier: MIT
/*
 * rcu/rcu.c - RCU in segpool: the flavour, thread registration, the
 * read-side sections of the cache-list walkers, grace periods and fork.
 *
 * Flavour: liburcu's urcu-memb.  Readers pay a TLS counter update per
 * rcu_read_lock()/unlock(), no fence (the writer side fences all running
 * threads with membarrier(2)), no signal, and only threads that read need
 * to register.  Applications use the same flavour through segpool/rcu.h.
 *
 * Registration on demand: a thread that the library itself puts in a
 * read-side section (a statistics walk) or that hands work to call_rcu()
 * (segpool_cache_free_rcu(), a type-safe slab release) is registered here
 * if it was not already, and unregistered by a thread-exit destructor.  A
 * thread that never does either is never registered and pays nothing.
 *
 * The cache list: walkers (segpool_stats_dump() and friends, the live
 * export) read sp_cache_list in a read-side section, with no mutex, so a
 * dump never blocks create or destroy and never sees a cache unmapped
 * under it: destroy unlists the cache, waits for a grace period
 * (sp_rcu_cache_retire()), then frees it.  The wait is skipped while no
 * walker has ever run in the process: a Dekker pair (walker: flag, fence,
 * list load; destroy: unlist, fence, flag load) makes that safe.
 *
 * fork: liburcu's registry, its grace-period lock and its call_rcu worker
 * would be copied into the child in whatever state another thread left
 * them.  sp_rcu_fork_lock is held for reading across every call the
 * library makes into liburcu that takes one of its locks or a read-side
 * section (register, unregister, call_rcu, synchronize_rcu, the walks;
 * rcu_barrier() is the exception, see sp_rcu_barrier_raw()), and for
 * writing by the fork prepare handler, after call_rcu_before_fork() has
 * paused the call_rcu workers between two batches of callbacks (lock
 * order: see core/init.c, level 2).  The child prunes liburcu's reader registry
 * to its own thread (sp_rcu_registry_prune()) and restarts the workers
 * (call_rcu_after_fork_child()).  The write side is what keeps a grace
 * period out of the fork: urcu_memb_synchronize_rcu() holds liburcu's
 * grace-period and registry mutexes, which the child's prune needs, and
 * urcu-memb (unlike urcu-bp) has no fork hooks that would take them; so
 * every grace period segpool runs, segpool_synchronize_rcu() included,
 * runs under the read side, and the call_rcu workers' are paused first.
 * A program must not register liburcu's call_rcu fork handlers itself as
 * well, must not call urcu_memb_synchronize_rcu() directly while another
 * thread may fork, and must not fork inside a read-side critical section
 * of its own (Documentation/internals/rcu.md).
 */
#include <errno.h>
#include <pthread.h>

#include <urcu/urcu-memb.h>
#include <urcu/static/urcu-memb.h>

#include <segpool/segpool.h>

#include "segpool_config.h"
#include "internal/init.h"
#include "rcu/rcu.h"

#ifdef CONFIG_SEGPOOL_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);

void sp_rcu_tsan_release(void *addr)
{
	__tsan_release(addr);
}

void sp_rcu_tsan_acquire(void *addr)
{
	__tsan_acquire(addr);
}
#else
void sp_rcu_tsan_release(void *addr)
{
	(void)addr;
}

void sp_rcu_tsan_acquire(void *addr)
{
	(void)addr;
}
#endif

/* Every reader releases here when it unlocks (segpool/rcu.h too). */
void sp_rcu_tsan_gp_acquire(void)
{
	sp_rcu_tsan_acquire(&urcu_memb_gp);
}

static pthread_rwlock_t sp_rcu_fork_lock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_once_t sp_rcu_once = PTHREAD_ONCE_INIT;
static pthread_key_t sp_rcu_key;
static bool sp_rcu_walked;	/* a walker ever ran (sticky) */
static bool sp_rcu_called;	/* call_rcu() ever used (sticky) */

/*
 * segpool's own call_rcu worker rather than liburcu's default one, which
 * liburcu never stops: this one is stopped and joined at exit
 * (sp_rcu_exit()), so a program that freed by RCU leaves no thread behind
 * (valgrind would count its thread-local storage as lost).  Created on the
 * first call_rcu(), under the fork lock's read side.
 */
static struct call_rcu_data *sp_rcu_crdp;
static pthread_mutex_t sp_rcu_crdp_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * Start the worker if it is not running.  Never under the fork lock nor
 * another segpool lock: creating it takes liburcu's call_rcu mutex, which
 * the fork prepare handler holds while it waits for the fork lock.
 */
void sp_rcu_worker_start(void)
{
	if (likely(__atomic_load_n(&sp_rcu_crdp, __ATOMIC_ACQUIRE)))
		return;
	pthread_mutex_lock(&sp_rcu_crdp_lock);
	if (!sp_rcu_crdp) {
		/* fork handlers pause and restart it from now on */
		__atomic_store_n(&sp_rcu_called, true, __ATOMIC_SEQ_CST);
		__atomic_store_n(&sp_rcu_crdp,
				 urcu_memb_create_call_rcu_data(0, -1),
				 __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&sp_rcu_crdp_lock);
}

/* call_rcu() onto segpool's worker @c (fork lock held for reading). */
static void sp_rcu_call_locked(struct call_rcu_data *c, struct rcu_head *head,
			       void (*func)(struct rcu_head *head))
{
	struct call_rcu_data *prev = urcu_memb_get_thread_call_rcu_data();

	/* what the caller wrote before is seen by the callback */
	sp_rcu_tsan_release(head);
	urcu_memb_set_thread_call_rcu_data(c);
	urcu_memb_call_rcu(head, func);
	/* the thread's own choice, if it made one, stays */
	urcu_memb_set_thread_call_rcu_data(prev);
}

/*
 * Readers first (glibc's default kind): a thread inside an RCU read-side
 * section that hands a batch to call_rcu() must get the read side while
 * another holds it across synchronize_rcu() waiting for that very section,
 * even with a fork waiting for the write side.
 */
static void sp_rcu_fork_lock_init(void)
{
	pthread_rwlock_init(&sp_rcu_fork_lock, NULL);
}

static void sp_rcu_thread_exit(void *arg)
{
	(void)arg;
	if (URCU_TLS(urcu_memb_reader).registered &&
	    !urcu_memb_read_ongoing()) {
		pthread_rwlock_rdlock(&sp_rcu_fork_lock);
		urcu_memb_unregister_thread();
		pthread_rwlock_unlock(&sp_rcu_fork_lock);
	}
}

static void sp_rcu_once_init(void)
{
	pthread_key_create(&sp_rcu_key, sp_rcu_thread_exit);
}

void sp_rcu_init(void)
{
	sp_rcu_fork_lock_init();
	__atomic_store_n(&sp_slab_release_hook, sp_rcu_slab_defer,
			 __ATOMIC_RELEASE);
}

void sp_rcu_thread_online(void)
{
	if (likely(URCU_TLS(urcu_memb_reader).registered))
		return;
	pthread_once(&sp_rcu_once, sp_rcu_once_init);
	pthread_rwlock_rdlock(&sp_rcu_fork_lock);
	urcu_memb_register_thread();
	pthread_rwlock_unlock(&sp_rcu_fork_lock);
	/* unregistered at thread exit, unless the thread did it first */
	pthread_setspecific(sp_rcu_key, (void *)1);
}

bool sp_rcu_read_ongoing(void)
{
	return URCU_TLS(urcu_memb_reader).registered &&
	       urcu_memb_read_ongoing();
}

void sp_rcu_walk_begin(void)
{
	sp_rcu_thread_online();
	if (!__atomic_load_n(&sp_rcu_walked, __ATOMIC_RELAXED))
		__atomic_store_n(&sp_rcu_walked, true, __ATOMIC_SEQ_CST);
	/* pairs with the fence of sp_rcu_cache_retire() */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	pthread_rwlock_rdlock(&sp_rcu_fork_lock);
	urcu_memb_read_lock();
}

void sp_rcu_walk_end(void)
{
	sp_rcu_tsan_release(&urcu_memb_gp);
	urcu_memb_read_unlock();
	pthread_rwlock_unlock(&sp_rcu_fork_lock);
}

void sp_rcu_synchronize(void)
{
	pthread_rwlock_rdlock(&sp_rcu_fork_lock);
	urcu_memb_synchronize_rcu();
	pthread_rwlock_unlock(&sp_rcu_fork_lock);
	sp_rcu_tsan_gp_acquire();
}

void sp_rcu_call(struct rcu_head *head, void (*func)(struct rcu_head *head))
{
	struct call_rcu_data *c;

	sp_rcu_thread_online();
	for (;;) {
		sp_rcu_worker_start();
		pthread_rwlock_rdlock(&sp_rcu_fork_lock);
		c = __atomic_load_n(&sp_rcu_crdp, __ATOMIC_ACQUIRE);
		if (likely(c))
			break;
		/* a fork child, or the exit handler, took it: start anew */
		pthread_rwlock_unlock(&sp_rcu_fork_lock);
	}
	sp_rcu_call_locked(c, head, func);
	pthread_rwlock_unlock(&sp_rcu_fork_lock);
}

/*
 * As sp_rcu_call(), but never waits for the fork lock: false (nothing done)
 * while a fork is being prepared.  For callers that may hold segpool locks
 * the fork prepare handler takes after the fork lock.
 */
bool sp_rcu_call_try(struct rcu_head *head, void (*func)(struct rcu_head *head))
{
	struct call_rcu_data *c;

	if (pthread_rwlock_tryrdlock(&sp_rcu_fork_lock))
		return false;
	c = __atomic_load_n(&sp_rcu_crdp, __ATOMIC_ACQUIRE);
	if (!c) {
		/* no worker, and none may be started here: later */
		pthread_rwlock_unlock(&sp_rcu_fork_lock);
		return false;
	}
	if (unlikely(!URCU_TLS(urcu_memb_reader).registered)) {
		pthread_once(&sp_rcu_once, sp_rcu_once_init);
		urcu_memb_register_thread();
		pthread_setspecific(sp_rcu_key, (void *)1);
	}
	sp_rcu_call_locked(c, head, func);
	pthread_rwlock_unlock(&sp_rcu_fork_lock);
	return true;
}

/*
 * Not under the fork lock: rcu_barrier() waits for the workers, which the
 * prepare handler pauses before it takes that lock for writing; liburcu's
 * own call_rcu mutex keeps a barrier and a fork apart.
 */
void sp_rcu_barrier_raw(void)
{
	urcu_memb_barrier();
	sp_rcu_tsan_gp_acquire();
}

void sp_rcu_cache_retire(struct segpool_cache *c)
{
	/* pairs with the fence of sp_rcu_walk_begin(): the unlisting came
	 * first, so a walker that starts now cannot find @c */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&sp_rcu_walked, __ATOMIC_RELAXED))
		sp_rcu_synchronize();
	if (__atomic_load_n(&c->rcu_slabs_pending, __ATOMIC_ACQUIRE))
		sp_rcu_slab_wait(sp_rcu_slab_queued());
}

void sp_rcu_fork_prepare(void)
{
	/* callbacks take segpool locks: let the workers finish theirs first */
	if (__atomic_load_n(&sp_rcu_called, __ATOMIC_RELAXED))
		urcu_memb_call_rcu_before_fork();
	pthread_rwlock_wrlock(&sp_rcu_fork_lock);
}

/* The batch and deferred-slab locks are leaves: taken after all others. */
void sp_rcu_fork_prepare_leaves(void)
{
	sp_rcu_free_lock_all();
	sp_rcu_slab_lock();
}

void sp_rcu_fork_parent_leaves(void)
{
	sp_rcu_slab_unlock();
	sp_rcu_free_unlock_all();
}

void sp_rcu_fork_parent(void)
{
	pthread_rwlock_unlock(&sp_rcu_fork_lock);
	if (__atomic_load_n(&sp_rcu_called, __ATOMIC_RELAXED))
		urcu_memb_call_rcu_after_fork_parent();
}

void sp_rcu_fork_child_leaves(void)
{
	sp_rcu_slab_reinit_lock();
	sp_rcu_free_reinit_locks();
}

/*
 * The child's copy of liburcu's reader registry still lists every thread
 * of the parent that was registered at fork time, though only the forking
 * thread exists here.  Left there, they break the child in two ways: a
 * grace period waits for a stale reader that was inside a read-side
 * section forever, and, worse, glibc hands the stack (and static TLS) of
 * a vanished thread to the next thread the child creates (its call_rcu
 * worker first), whose registration links the same urcu_reader node into
 * the list a second time: the registry becomes a cycle that
 * synchronize_rcu() walks at 100% CPU, or a pointer into a stack glibc
 * unmapped later.  urcu-memb has no fork hooks for its registry (only
 * urcu-bp has), so the child prunes it: it registers itself anew, which
 * links its node right after the registry head (liburcu's
 * rcu_register_thread() inserts at the head, in every release), takes the
 * head from its node's prev link, and unlinks every other node.  Nothing
 * else runs in the child yet, and the fork lock kept every registration,
 * unregistration and grace period of the parent out of the fork, so the
 * list is whole and no liburcu lock is held.  The thread's own
 * registration is left as it was.
 */
static void sp_rcu_registry_prune(void)
{
	struct urcu_reader *self = &URCU_TLS(urcu_memb_reader);
	struct cds_list_head *head, *n, *next;
	bool was = self->registered;

	if (was) {
		if (urcu_memb_read_ongoing())
			return;	/* forked inside a read-side section */
		urcu_memb_unregister_thread();
	}
	urcu_memb_register_thread();
	head = self->node.prev;
	for (n = head->next; n != head; n = next) {
		next = n->next;
		if (n != &self->node)
			cds_list_del(n);
	}
	if (!was)
		urcu_memb_unregister_thread();
}

void sp_rcu_fork_child(void)
{
	sp_rcu_fork_lock_init();
	pthread_mutex_init(&sp_rcu_crdp_lock, NULL);
	/* before call_rcu_after_fork_child() starts a thread */
	sp_rcu_registry_prune();
	if (__atomic_load_n(&sp_rcu_called, __ATOMIC_RELAXED)) {
		/* frees every worker but liburcu's default one, which it
		 * restarts and gives the callbacks left in the others */
		urcu_memb_call_rcu_after_fork_child();
		__atomic_store_n(&sp_rcu_crdp, NULL, __ATOMIC_RELEASE);
	}
}

/*
 * At exit: let the callbacks queued so far run (segpool is still whole),
 * then stop segpool's worker and join it.  Skipped inside a read-side
 * section, where waiting would never end.
 */
__attribute__((destructor)) static void sp_rcu_exit(void)
{
	struct call_rcu_data *c =
		__atomic_load_n(&sp_rcu_crdp, __ATOMIC_ACQUIRE);
	pthread_t tid;

	if (!c || sp_rcu_read_ongoing())
		return;
	urcu_memb_barrier();
	sp_rcu_slab_wait(sp_rcu_slab_queued());
	/* for writing: no call_rcu() onto it is half-way (they read-lock) */
	pthread_rwlock_wrlock(&sp_rcu_fork_lock);
	c = sp_rcu_crdp;
	__atomic_store_n(&sp_rcu_crdp, NULL, __ATOMIC_RELEASE);
	pthread_rwlock_unlock(&sp_rcu_fork_lock);
	if (!c)
		return;
	tid = urcu_memb_get_call_rcu_thread(c);
	urcu_memb_call_rcu_data_free(c);
	pthread_join(tid, NULL);
}

/* --- the public calls that are not inline in segpool/rcu.h --------------- */

/* Under the fork lock's read side, as the library's own grace periods. */
SEGPOOL_API void segpool_synchronize_rcu(void)
{
	(void)sp_init();
	sp_rcu_synchronize();
}

SEGPOOL_API int segpool_rcu_register_thread(void)
{
	if (sp_init())
		return -ENOMEM;
	sp_rcu_thread_online();
	return 0;
}

SEGPOOL_API int segpool_rcu_unregister_thread(void)
{
	if (!URCU_TLS(urcu_memb_reader).registered)
		return 0;
	if (urcu_memb_read_ongoing()) {
		errno = EBUSY;
		return -EBUSY;
	}
	pthread_rwlock_rdlock(&sp_rcu_fork_lock);
	urcu_memb_unregister_thread();
	pthread_rwlock_unlock(&sp_rcu_fork_lock);
	return 0;
}
