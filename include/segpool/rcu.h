/* SPDX-License-Identifier: MIT */
/*
 * segpool/rcu.h - RCU with segpool: objects freed after a grace period,
 * type-safe-by-RCU caches, and the read side readers must use.
 *
 * segpool uses liburcu's urcu-memb flavour (the membarrier(2) one: readers
 * need no signal and no fence, only registration).  Readers of objects that
 * are freed with segpool_cache_free_rcu(), or that live in a
 * SEGPOOL_TYPESAFE_BY_RCU cache, must use that same flavour: the inline
 * wrappers below call it, so a program that calls them links liburcu-memb
 * (`pkg-config --libs segpool` and CMake's segpool::segpool bring it).
 * Mixing in another flavour (urcu-mb, urcu-qsbr, urcu-bp, urcu-signal)
 * protects nothing.
 *
 * This header includes no liburcu header (it declares the two liburcu
 * calls it makes).  Under ThreadSanitizer the wrappers also tell it about
 * the grace period (liburcu's own barriers are invisible to it); readers
 * that call liburcu directly are not seen.  See Documentation/guide/rcu.md.
 */
#ifndef SEGPOOL_RCU_H
#define SEGPOOL_RCU_H

#include <stdint.h>
#include <stddef.h>
#include <segpool/compiler.h>

SEGPOOL_BEGIN_DECLS

struct segpool_cache;

/*
 * The two liburcu-memb calls the inline wrappers make, declared here so
 * that this header stays hermetic: including it defines none of liburcu's
 * rcu_read_lock()-style macros, which would bind a program's own liburcu
 * calls to this flavour.  They match <urcu/urcu-memb.h>.
 */
#ifndef _URCU_MEMB_H
void urcu_memb_read_lock(void);
void urcu_memb_read_unlock(void);
#endif

#if defined(__SANITIZE_THREAD__)
#define SEGPOOL_RCU_TSAN	1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SEGPOOL_RCU_TSAN	1
#endif
#endif

#ifdef SEGPOOL_RCU_TSAN
/* liburcu's grace-period state: only its address is used, as the
 * ThreadSanitizer sync object every reader releases and every waiter
 * acquires. */
#ifndef _URCU_MEMB_STATIC_H
extern struct urcu_gp urcu_memb_gp;
#endif
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define SEGPOOL_RCU_TSAN_RELEASE()	__tsan_release((void *)&urcu_memb_gp)
#define SEGPOOL_RCU_TSAN_ACQUIRE()	__tsan_acquire((void *)&urcu_memb_gp)
#else
#define SEGPOOL_RCU_TSAN_RELEASE()	do { } while (0)
#define SEGPOOL_RCU_TSAN_ACQUIRE()	do { } while (0)
#endif

/**
 * segpool_rcu_register_thread() - make the calling thread an RCU reader.
 *
 * Must come before the thread's first segpool_rcu_read_lock().  Idempotent:
 * a thread already registered (by an earlier call, by liburcu's
 * urcu_memb_register_thread(), or by segpool itself, which registers on
 * demand a thread that dumps statistics or frees by RCU) stays registered.
 * A thread that segpool registered is unregistered at its exit; so is one
 * registered here that did not call segpool_rcu_unregister_thread().
 *
 * Context: any thread.
 * Return: 0, or -ENOMEM (errno ENOMEM) when the library could not be
 * initialised.
 */
SEGPOOL_API int segpool_rcu_register_thread(void);

/**
 * segpool_rcu_unregister_thread() - stop being an RCU reader.
 *
 * A thread that is not registered gets 0 and nothing happens.
 *
 * Context: a thread outside any read-side critical section.
 * Return: 0, or -EBUSY (errno EBUSY) inside a read-side critical section.
 */
SEGPOOL_API int segpool_rcu_unregister_thread(void);

/**
 * segpool_rcu_read_lock() - enter an RCU read-side critical section.
 *
 * Objects found inside the section (in a structure published with
 * rcu_assign_pointer() or atomics with release order) stay allocated until
 * the section ends when they are freed with segpool_cache_free_rcu(), and
 * stay objects of their cache (possibly reused) when the cache is
 * SEGPOOL_TYPESAFE_BY_RCU.  Sections nest.  The calling thread must be
 * registered (segpool_rcu_register_thread()).
 *
 * Context: a registered thread; the section must not call
 * segpool_synchronize_rcu(), segpool_rcu_barrier() or
 * segpool_cache_destroy(), nor fork().
 */
static inline void segpool_rcu_read_lock(void)
{
	urcu_memb_read_lock();
}

/**
 * segpool_rcu_read_unlock() - leave an RCU read-side critical section.
 *
 * Context: the thread that entered it.
 */
static inline void segpool_rcu_read_unlock(void)
{
	SEGPOOL_RCU_TSAN_RELEASE();
	urcu_memb_read_unlock();
}

/**
 * segpool_synchronize_rcu() - wait for a grace period.
 *
 * Returns once every read-side critical section that had begun when it was
 * called has ended.  It does not wait for objects freed with
 * segpool_cache_free_rcu() to be back in their cache: that is
 * segpool_rcu_barrier().  Not inline: a fork() in another thread waits for
 * the grace period to end (liburcu holds its registry lock across one,
 * which the child could otherwise never take); a program that calls
 * liburcu's urcu_memb_synchronize_rcu() itself while another thread forks
 * has no such guard.
 *
 * Context: any thread, outside a read-side critical section (inside one it
 * waits for itself forever); it sleeps.
 */
SEGPOOL_API void segpool_synchronize_rcu(void);

/**
 * segpool_cache_free_rcu() - free an object after an RCU grace period.
 * @cache: the cache the object was allocated from.
 * @obj:   the object, or NULL (a no-op returning 0).
 *
 * Like segpool_cache_free(), but the object goes back to @cache only once
 * every read-side critical section that might have found it has ended; the
 * object needs no rcu_head.  Until then its bytes are untouched.  Objects
 * wait in batches of 60, one batch per CPU, and a full batch is handed to
 * liburcu's call_rcu(); its worker thread frees them.  @obj is checked as
 * by segpool_cache_free() (a pointer not of @cache is reported and the
 * process aborts).  Objects waiting count as allocated in the cache's
 * statistics and in segpool_cache_rcu_stats() as pending.
 *
 * What waits is bounded: with 2^20 objects of every cache pending (one
 * more per thread racing), a call first hands the partial batches over,
 * then waits for a grace period itself and frees @obj at once instead of
 * queuing it, so a flood of frees slows to the pace at which the backlog
 * is freed.  Not inside a read-side critical section, where it cannot
 * wait: there it queues past the bound.
 *
 * Context: any thread, inside a read-side critical section too; the thread
 * is registered with liburcu on demand.
 * Return: 0; -ENOMEM (errno ENOMEM) when no memory is left for a batch and
 * the caller is inside a read-side critical section, so it could not wait
 * for the grace period itself: the object is then still the caller's.
 * Outside one, that case waits for a grace period and frees at once.
 */
SEGPOOL_API int segpool_cache_free_rcu(struct segpool_cache *cache, void *obj);

/**
 * segpool_free_rcu() - free any segpool memory after an RCU grace period:
 * the kernel's kvfree_rcu() without an rcu_head.
 * @ptr: memory from segpool_malloc() and friends (a size class or a large
 *       block), an object of a named cache, NULL or SEGPOOL_ZERO_SIZE_PTR
 *       (no-ops returning 0).
 *
 * A slab object is handled as by segpool_cache_free_rcu() on its own
 * cache (counted there); a large block waits in the same batches and is
 * freed after the grace period.  segpool_rcu_barrier() waits for both.
 * A pointer segpool never handed out is reported and the process aborts.
 *
 * Context: as segpool_cache_free_rcu().
 * Return: as segpool_cache_free_rcu().
 */
SEGPOOL_API int segpool_free_rcu(void *ptr);

/**
 * struct segpool_rcu_head - two words inside an object for
 * segpool_free_rcu_head(), the size of the kernel's struct rcu_head.
 * @priv: private; untouched unless no memory is left for a batch.
 */
struct segpool_rcu_head {
	void *priv[2];
};

/**
 * segpool_free_rcu_head() - segpool_free_rcu() that never fails and never
 * waits: the kernel's two-argument kfree_rcu().
 * @ptr:  as for segpool_free_rcu().
 * @head: a struct segpool_rcu_head inside @ptr's object, within its first
 *        4096 bytes and pointer-aligned.
 *
 * Like segpool_free_rcu(); when no memory is left for a batch, the object
 * waits for its grace period through @head (which the library then
 * writes) instead of failing or waiting, inside a read-side critical
 * section too.  A @head outside the object is reported and the process
 * aborts, as are the misuses segpool_free_rcu() reports.
 *
 * Context: any thread, inside a read-side critical section too.
 */
SEGPOOL_API void segpool_free_rcu_head(void *ptr,
				       struct segpool_rcu_head *head);

/**
 * segpool_rcu_barrier() - wait for the RCU work queued so far.
 *
 * When it returns, every object freed with segpool_cache_free_rcu(),
 * segpool_free_rcu() or segpool_free_rcu_head() before the call is back in its
 * cache (or unmapped), and every empty slab of a SEGPOOL_TYPESAFE_BY_RCU cache
 * whose release was waiting for a grace period when the call began has been
 * released.
 *
 * Context: any thread outside a read-side critical section and outside
 * liburcu's call_rcu worker threads; it sleeps.
 * Return: 0; -EDEADLK (errno EDEADLK) inside a read-side critical section;
 * -ENOMEM when the library could not be initialised.
 */
SEGPOOL_API int segpool_rcu_barrier(void);

/**
 * struct segpool_rcu_stats - the RCU accounting of one cache.
 * @size:           sizeof(struct segpool_rcu_stats), set by the caller.
 * @objs_pending:   objects freed with segpool_cache_free_rcu() whose grace
 *                  period has not ended (or whose batch is still filling).
 * @objs_freed:     objects freed with segpool_cache_free_rcu() and back in
 *                  the cache since its creation.
 * @slabs_pending:  empty slabs of a SEGPOOL_TYPESAFE_BY_RCU cache that left
 *                  the cache and wait for a grace period before their
 *                  memory goes back.
 * @slabs_released: such slabs released after their grace period.
 */
struct segpool_rcu_stats {
	size_t size;
	uint64_t objs_pending;
	uint64_t objs_freed;
	uint64_t slabs_pending;
	uint64_t slabs_released;
};

/**
 * segpool_cache_rcu_stats() - read a cache's RCU counters.
 * @cache: the cache.
 * @st:    receives them; @st->size must be set first.
 *
 * Context: any thread.
 * Return: 0, or -EINVAL (errno EINVAL) for a bad cache, a NULL @st or a
 * @st->size below sizeof(struct segpool_rcu_stats).
 */
SEGPOOL_API int segpool_cache_rcu_stats(struct segpool_cache *cache,
					struct segpool_rcu_stats *st);

SEGPOOL_END_DECLS

#endif /* SEGPOOL_RCU_H */
