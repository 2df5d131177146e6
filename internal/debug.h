/* SPDX-License-Identifier: MIT */
/*
 * internal/debug.h - the checks of a debug build (make DEBUG=1), and
 * nothing at all in any other build.
 *
 * A debug build defines CONFIG_SEGPOOL_DEBUG (the Makefile's config
 * header), as mimalloc's MI_DEBUG does; then:
 *
 *   sp_assert(expr)      expr must hold: else "segpool: internal error at
 *                        file:line: assertion 'expr' failed" and abort().
 *   sp_assert_held(&m)   this thread holds the mutex m.
 *   sp_lock_class(&m, level), SP_LOCK_CLASS_STATIC(m, level)
 *                        (after pthread_mutex_init(), which drops a class)
 *                        m's level in the lock order of core/init.c's head
 *                        comment (enum sp_lock_level below).
 *
 * and every pthread_mutex_lock(), _trylock(), _unlock(), _init() and
 * _destroy() of the library's own code goes through the lock checker
 * (internal/lockdep.c), in the manner of the kernel's lockdep: each thread
 * keeps the levels it holds, and taking a classed mutex while a lock of a
 * higher level is held (an inversion of core/init.c's order) stops the
 * program with both levels and the place.  A try-lock cannot deadlock and
 * is only recorded.  The Makefile includes this header first in every
 * object of the library in a debug build (-include), so no call site names
 * it; the selftests' own mutexes are not checked.
 *
 * In any other build each macro expands to nothing that is compiled: the
 * expressions are only type-checked (sizeof), and the object code is that
 * of a build without them.
 */
#ifndef SP_INTERNAL_DEBUG_H
#define SP_INTERNAL_DEBUG_H

#include <pthread.h>
#include <stdbool.h>

#include "segpool_config.h"

/*
 * The levels of core/init.c's lock order that a debug build checks; the
 * numbers are the comment's, and each level's comment names the file the
 * comment names for it (make checkstyle compares both).  A lock of no
 * class (the outer and leaf levels, the C library's) is recorded as held
 * but not ordered.
 */
enum sp_lock_level {
	SP_LOCK_NONE		= 0,
	SP_LOCK_CACHE_LIST	= 3,	/* slab/cache.c */
	SP_LOCK_DRAIN		= 4,	/* percpu/pcpu.c */
	SP_LOCK_SLOT		= 5,	/* percpu/pcpu.h, an owned slot */
	SP_LOCK_DEPOT		= 6,	/* percpu/depot.c */
	SP_LOCK_NODE		= 7,	/* slab/slab.c, a cache's node locks */
	SP_LOCK_FAILSLAB	= 8,	/* failslab/failslab.c */
	SP_LOCK_REGION		= 9,	/* numa/region.c */
	SP_LOCK_LARGE		= 10,	/* large/large.c */
	SP_LOCK_LEVELS		= 12,
};

#ifdef CONFIG_SEGPOOL_DEBUG

#include "internal/compiler.h"
#include "internal/report.h"

#define sp_assert(expr)							\
	do {								\
		if (unlikely(!(expr)))					\
			sp_bug_at(__FILE__, __LINE__,			\
				  "assertion '%s' failed", #expr);	\
	} while (0)

SP_INTERNAL void sp_lock_class(pthread_mutex_t *m, enum sp_lock_level level);
SP_INTERNAL int sp_lockdep_lock(pthread_mutex_t *m, const char *file,
				int line);
SP_INTERNAL int sp_lockdep_trylock(pthread_mutex_t *m);
SP_INTERNAL int sp_lockdep_unlock(pthread_mutex_t *m, const char *file,
				  int line);
SP_INTERNAL int sp_lockdep_init(pthread_mutex_t *m,
				const pthread_mutexattr_t *attr);
SP_INTERNAL int sp_lockdep_destroy(pthread_mutex_t *m);
SP_INTERNAL bool sp_lockdep_held(const pthread_mutex_t *m);
/*
 * A lock with no mutex (an owned CPU slot): taken and left at @level;
 * @try: taken by a try that gives up when it is owned (not ordered).
 */
SP_INTERNAL void sp_lockdep_enter(enum sp_lock_level level, bool try,
				  const char *file, int line);
SP_INTERNAL void sp_lockdep_leave(enum sp_lock_level level, const char *file,
				  int line);
/*
 * The fork handlers take every cache's depot and node locks, cache after
 * cache (core/init.c says why that order is safe), and the child's
 * re-initialise them: between these two calls nothing of this thread's
 * is checked nor recorded.
 */
SP_INTERNAL void sp_lockdep_fork_begin(void);
SP_INTERNAL void sp_lockdep_fork_end(void);

#define sp_assert_held(m)						\
	do {								\
		if (unlikely(!sp_lockdep_held(m)))			\
			sp_bug_at(__FILE__, __LINE__,			\
				  "lock '%s' is not held", #m);		\
	} while (0)

#define SP_LOCK_CLASS_CAT_(a, b)	a##b
#define SP_LOCK_CLASS_CAT(a, b)		SP_LOCK_CLASS_CAT_(a, b)
/* a statically initialised mutex's class, set before main() */
#define SP_LOCK_CLASS_STATIC(m, level)					\
	static __attribute__((constructor)) void			\
	SP_LOCK_CLASS_CAT(sp_lock_class_, __LINE__)(void)		\
	{								\
		sp_lock_class(&(m), (level));				\
	}

#define sp_lock_enter(level)						\
	sp_lockdep_enter((level), false, __FILE__, __LINE__)
#define sp_lock_enter_try(level)					\
	sp_lockdep_enter((level), true, __FILE__, __LINE__)
#define sp_lock_leave(level)	sp_lockdep_leave((level), __FILE__, __LINE__)

/* the library's mutex calls (internal/lockdep.c undefines them) */
#define pthread_mutex_lock(m)	sp_lockdep_lock((m), __FILE__, __LINE__)
#define pthread_mutex_trylock(m) sp_lockdep_trylock(m)
#define pthread_mutex_unlock(m)	sp_lockdep_unlock((m), __FILE__, __LINE__)
#define pthread_mutex_init(m, a) sp_lockdep_init((m), (a))
#define pthread_mutex_destroy(m) sp_lockdep_destroy(m)

#else /* !CONFIG_SEGPOOL_DEBUG */

#define sp_assert(expr)		((void)sizeof(!(expr)))
#define sp_assert_held(m)	((void)sizeof(m))
#define sp_lock_class(m, level)	((void)sizeof(m), (void)(level))
#define SP_LOCK_CLASS_STATIC(m, level)	/* nothing */
#define sp_lock_enter(level)	((void)(level))
#define sp_lock_enter_try(level) ((void)(level))
#define sp_lock_leave(level)	((void)(level))
#define sp_lockdep_fork_begin()	((void)0)
#define sp_lockdep_fork_end()	((void)0)

#endif /* CONFIG_SEGPOOL_DEBUG */

#endif /* SP_INTERNAL_DEBUG_H */
