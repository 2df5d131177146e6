/* SPDX-License-Identifier: MIT */
/*
 * internal/reentry.h - how deep this thread is inside the library, so that
 * a call from a signal handler that interrupted it never waits for a lock
 * the interrupted call holds (private).
 *
 * Every slow path that may take a lock (the allocation and free slow
 * paths, start-up, shrink, create, destroy, the statistics walks, the leak
 * list) runs between sp_lib_enter() and sp_lib_leave().  A call that finds
 * the depth non-zero interrupted the library on its own thread (a signal
 * handler: nothing else runs on a thread in the middle of a segpool call,
 * the few places that call out to the program, a ctor, step out with
 * sp_lib_suspend()), and then takes no lock:
 *   - an allocation is served by the per-CPU hit path or fails with NULL
 *     and ENOMEM, as the kernel's GFP_ATOMIC may (core/cache_api.c);
 *   - a free is checked as always and put on this thread's deferred list,
 *     linked through the object's free-list word, and the interrupted call
 *     frees it for real when it leaves the library (sp_lib_drain()).
 * The hit paths neither read nor write the depth: their cost is unchanged.
 *
 * Only the thread itself touches its depth and list; a handler that
 * interrupts an update leaves both as it found them, so a compiler barrier
 * (a signal fence) orders them against the locks, no atomic operation.
 * Initial-exec TLS: no allocation on first touch.
 */
#ifndef SP_INTERNAL_REENTRY_H
#define SP_INTERNAL_REENTRY_H

#include <stdbool.h>

#include "internal/compiler.h"

extern SP_INTERNAL __thread unsigned int sp_lib_depth
	__attribute__((tls_model("initial-exec")));
extern SP_INTERNAL __thread void *sp_lib_deferred
	__attribute__((tls_model("initial-exec")));
/*
 * Work for whichever call next leaves the library outermost, with no lock
 * held (atomic, non-zero: core/decay.c's thread is wanted and not yet
 * started).  A layer sets it only through core/'s hooks; sp_lib_drain()
 * does the work.  A call nested in a handler never sees depth 0 on the
 * way out, so never does it.
 */
extern SP_INTERNAL unsigned int sp_lib_wanted;

/* Whether this call interrupted the library on its own thread. */
static inline bool sp_lib_nested(void)
{
	return __atomic_load_n(&sp_lib_depth, __ATOMIC_RELAXED) != 0;
}

static inline void sp_lib_enter(void)
{
	sp_lib_depth++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/*
 * Leave; true when frees were deferred meanwhile or work is wanted (call
 * sp_lib_drain()).
 */
static inline bool sp_lib_leave(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return --sp_lib_depth == 0 &&
	       unlikely(__atomic_load_n(&sp_lib_deferred, __ATOMIC_RELAXED) ||
			__atomic_load_n(&sp_lib_wanted, __ATOMIC_RELAXED));
}

/*
 * sp_lib_exit() - sp_lib_leave() for the layers below core/, which cannot
 * call sp_lib_drain() themselves: through the hook core/ sets at start-up.
 */
extern SP_INTERNAL void (*sp_lib_drain_hook)(void);

static inline void sp_lib_exit(void)
{
	if (sp_lib_leave() && sp_lib_drain_hook)
		sp_lib_drain_hook();
}

/* Around a call out to the program with no segpool lock held (a ctor). */
static inline unsigned int sp_lib_suspend(void)
{
	unsigned int d = sp_lib_depth;

	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	sp_lib_depth = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return d;
}

static inline void sp_lib_resume(unsigned int d)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	sp_lib_depth = d;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/*
 * Defer @obj: @store_link(@obj, next) writes the list's next pointer into
 * the object (the caller knows where, and how to write freed memory);
 * a compare-and-swap, so a handler of another signal that pushes in
 * between is not lost.
 */
static inline void sp_lib_defer(void *obj, void (*store_link)(void *, void *))
{
	void *old = __atomic_load_n(&sp_lib_deferred, __ATOMIC_RELAXED);

	do {
		store_link(obj, old);
	} while (!__atomic_compare_exchange_n(&sp_lib_deferred, &old, obj,
					      false, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
}

/* Take the whole deferred list (a handler may add to the new one). */
static inline void *sp_lib_take_deferred(void)
{
	return __atomic_exchange_n(&sp_lib_deferred, NULL, __ATOMIC_RELAXED);
}

#endif /* SP_INTERNAL_REENTRY_H */
