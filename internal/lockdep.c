// SPDX-License-Identifier: MIT
/*
 * internal/lockdep.c - the lock checker of a debug build (make DEBUG=1,
 * internal/debug.h); empty in every other build.
 *
 * A mutex's class (its level in core/init.c's lock order) is kept in one
 * open-addressed table keyed by the mutex's address, filled by
 * sp_lock_class() after the mutex is initialised and emptied by
 * pthread_mutex_destroy().  Entries are single words changed by
 * compare-and-swap, so a lookup takes no lock.  A full table leaves the
 * mutexes it cannot hold unordered (sp_lockdep_table_full counts them).
 *
 * Each thread keeps how many locks of each level it holds (by the class
 * at the time of the call), and the mutexes it took, up to
 * SP_LOCKDEP_STACK of them (sp_assert_held() looks there; past that a
 * held check passes and an unknown unlock is let through until the thread
 * holds none again).  Taking a classed mutex while a lock of a higher
 * level is held reports the inversion with both levels and the call
 * site, and aborts.  pthread_mutex_init() of a mutex this thread holds
 * forgets it, and of any other drops its class (the memory is a new
 * mutex now).  core/init.c's fork handlers, which take every cache's
 * locks cache after cache and re-initialise them in the child, run
 * between sp_lockdep_fork_begin() and _end(): nothing is checked nor
 * recorded there, so the counts before the fork stand after it.
 */
#include "segpool_config.h"

#ifdef CONFIG_SEGPOOL_DEBUG

#include <stdint.h>

#include "internal/debug.h"

/* the real calls (the Makefile includes internal/debug.h first) */
#undef pthread_mutex_lock
#undef pthread_mutex_trylock
#undef pthread_mutex_unlock
#undef pthread_mutex_init
#undef pthread_mutex_destroy

#define SP_LOCKDEP_SLOTS	(1u << 16)	/* classed mutexes at once */
#define SP_LOCKDEP_STACK	64		/* mutexes a thread remembers */
#define SP_LOCKDEP_TOMB		((uint64_t)1)
#define SP_LOCKDEP_NEXT(i)	(((i) + 1) & (SP_LOCKDEP_SLOTS - 1))

/* (address << 4) | level; 0 free, 1 a removed entry */
static uint64_t sp_lockdep_table[SP_LOCKDEP_SLOTS] __sp_big;
SP_INTERNAL unsigned long sp_lockdep_table_full;

struct sp_lockdep_thread {
	unsigned int held[SP_LOCK_LEVELS];	/* locks held, per level */
	const pthread_mutex_t *stack[SP_LOCKDEP_STACK];
	unsigned int depth;			/* entries in @stack */
	unsigned int lost;			/* taken with @stack full */
	unsigned int forking;			/* sp_lockdep_fork_begin() */
};
static __thread struct sp_lockdep_thread sp_lockdep_me;

static unsigned int sp_lockdep_hash(const void *m)
{
	uint64_t x = (uint64_t)(uintptr_t)m;

	x ^= x >> 17;
	x *= 0xed5ad4bbU;
	x ^= x >> 11;
	return (unsigned int)x & (SP_LOCKDEP_SLOTS - 1);
}

static uint64_t sp_lockdep_key(const void *m)
{
	return (uint64_t)(uintptr_t)m << 4;
}

/* the slot holding @m, or -1 */
static long sp_lockdep_find(const void *m)
{
	uint64_t key = sp_lockdep_key(m);
	unsigned int i = sp_lockdep_hash(m), n;

	for (n = 0; n < SP_LOCKDEP_SLOTS; n++, i = SP_LOCKDEP_NEXT(i)) {
		uint64_t e = __atomic_load_n(&sp_lockdep_table[i],
					     __ATOMIC_ACQUIRE);

		if (!e)
			return -1;
		if ((e & ~(uint64_t)15) == key && e != SP_LOCKDEP_TOMB)
			return (long)i;
	}
	return -1;
}

static enum sp_lock_level sp_lockdep_level(const void *m)
{
	long i = sp_lockdep_find(m);

	if (i < 0)
		return SP_LOCK_NONE;
	return (enum sp_lock_level)(__atomic_load_n(&sp_lockdep_table[i],
						    __ATOMIC_RELAXED) & 15);
}

static void sp_lockdep_forget(const void *m)
{
	long i = sp_lockdep_find(m);

	if (i >= 0)
		__atomic_store_n(&sp_lockdep_table[i], SP_LOCKDEP_TOMB,
				 __ATOMIC_RELEASE);
}

void sp_lock_class(pthread_mutex_t *m, enum sp_lock_level level)
{
	uint64_t want = sp_lockdep_key(m) | (uint64_t)level;
	unsigned int i = sp_lockdep_hash(m), n;

	sp_lockdep_forget(m);
	for (n = 0; n < SP_LOCKDEP_SLOTS; n++, i = SP_LOCKDEP_NEXT(i)) {
		uint64_t e = __atomic_load_n(&sp_lockdep_table[i],
					     __ATOMIC_RELAXED);

		if ((e == 0 || e == SP_LOCKDEP_TOMB) &&
		    __atomic_compare_exchange_n(&sp_lockdep_table[i], &e, want,
						false, __ATOMIC_RELEASE,
						__ATOMIC_RELAXED))
			return;
	}
	__atomic_fetch_add(&sp_lockdep_table_full, 1, __ATOMIC_RELAXED);
}

static void sp_lockdep_order(enum sp_lock_level level, const char *file,
			     int line)
{
	struct sp_lockdep_thread *t = &sp_lockdep_me;
	unsigned int l;

	if (level == SP_LOCK_NONE)
		return;
	for (l = SP_LOCK_LEVELS - 1; l > level; l--)
		if (t->held[l])
			sp_bug_at(file, line,
				  "lock order: taking a level %u lock while "
				  "holding one of level %u (core/init.c)",
				  (unsigned int)level, l);
}

static void sp_lockdep_push(const pthread_mutex_t *m, enum sp_lock_level level)
{
	struct sp_lockdep_thread *t = &sp_lockdep_me;

	t->held[level]++;
	if (t->depth < SP_LOCKDEP_STACK)
		t->stack[t->depth++] = m;
	else
		t->lost++;
}

static bool sp_lockdep_in_stack(const pthread_mutex_t *m, bool drop)
{
	struct sp_lockdep_thread *t = &sp_lockdep_me;

	for (unsigned int i = t->depth; i-- > 0;) {
		if (t->stack[i] != m)
			continue;
		if (drop)
			t->stack[i] = t->stack[--t->depth];
		return true;
	}
	return false;
}

static void sp_lockdep_held_drop(enum sp_lock_level level)
{
	struct sp_lockdep_thread *t = &sp_lockdep_me;
	unsigned int sum = 0;

	if (t->held[level])
		t->held[level]--;
	for (unsigned int l = 0; l < SP_LOCK_LEVELS; l++)
		sum += t->held[l];
	if (!sum)
		t->lost = 0;	/* exact again */
}

/* drop @m from this thread's record; false when it was not there */
static bool sp_lockdep_pop(const pthread_mutex_t *m, enum sp_lock_level level)
{
	if (!sp_lockdep_in_stack(m, true) && !sp_lockdep_me.lost)
		return false;
	sp_lockdep_held_drop(level);
	return true;
}

int sp_lockdep_lock(pthread_mutex_t *m, const char *file, int line)
{
	enum sp_lock_level level;
	int err;

	if (sp_lockdep_me.forking)
		return pthread_mutex_lock(m);
	level = sp_lockdep_level(m);
	sp_lockdep_order(level, file, line);
	err = pthread_mutex_lock(m);
	if (!err)
		sp_lockdep_push(m, level);
	return err;
}

int sp_lockdep_trylock(pthread_mutex_t *m)
{
	int err = pthread_mutex_trylock(m);

	if (!err && !sp_lockdep_me.forking)
		sp_lockdep_push(m, sp_lockdep_level(m));
	return err;
}

int sp_lockdep_unlock(pthread_mutex_t *m, const char *file, int line)
{
	if (!sp_lockdep_me.forking && !sp_lockdep_pop(m, sp_lockdep_level(m)))
		sp_bug_at(file, line,
			  "unlocking a mutex this thread does not hold");
	return pthread_mutex_unlock(m);
}

int sp_lockdep_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr)
{
	if (!sp_lockdep_me.forking) {
		if (sp_lockdep_in_stack(m, true))
			sp_lockdep_held_drop(sp_lockdep_level(m));
		else
			sp_lockdep_forget(m);	/* new memory, no class yet */
	}
	return pthread_mutex_init(m, attr);
}

int sp_lockdep_destroy(pthread_mutex_t *m)
{
	sp_lockdep_forget(m);
	return pthread_mutex_destroy(m);
}

bool sp_lockdep_held(const pthread_mutex_t *m)
{
	struct sp_lockdep_thread *t = &sp_lockdep_me;
	unsigned int i;

	for (i = 0; i < t->depth; i++)
		if (t->stack[i] == m)
			return true;
	return t->lost != 0 || t->forking;
}

void sp_lockdep_enter(enum sp_lock_level level, bool try, const char *file,
		      int line)
{
	if (sp_lockdep_me.forking)
		return;
	if (!try)
		sp_lockdep_order(level, file, line);
	sp_lockdep_me.held[level]++;
}

void sp_lockdep_leave(enum sp_lock_level level, const char *file, int line)
{
	if (sp_lockdep_me.forking)
		return;
	if (!sp_lockdep_me.held[level])
		sp_bug_at(file, line, "leaving a level %u lock not held",
			  (unsigned int)level);
	sp_lockdep_held_drop(level);
}

void sp_lockdep_fork_begin(void)
{
	sp_lockdep_me.forking++;
}

void sp_lockdep_fork_end(void)
{
	if (sp_lockdep_me.forking)
		sp_lockdep_me.forking--;
}

#endif /* CONFIG_SEGPOOL_DEBUG */
