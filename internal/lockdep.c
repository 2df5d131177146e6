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
 * Each thread keeps how many locks of each level it holds, and the last
 * few mutexes it took (sp_assert_held() looks there; the fork handlers
 * hold more, and then a held check passes for any mutex that fell off).
 * Taking a classed mutex while a lock of a higher level is held reports
 * the inversion with both levels and the call site, and aborts.
 * pthread_mutex_init() of a mutex this thread holds (the child's fork
 * handlers do that) forgets it.
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
#define SP_LOCKDEP_STACK	16		/* mutexes a thread remembers */
#define SP_LOCKDEP_TOMB		((uint64_t)1)

/* (address << 4) | level; 0 free, 1 a removed entry */
static uint64_t sp_lockdep_table[SP_LOCKDEP_SLOTS];
SP_INTERNAL unsigned long sp_lockdep_table_full;

struct sp_lockdep_thread {
	unsigned int held[SP_LOCK_LEVELS];	/* locks held, per level */
	const pthread_mutex_t *stack[SP_LOCKDEP_STACK];
	unsigned int depth;			/* entries in @stack */
	unsigned int lost;			/* taken while @stack was full */
	unsigned int unordered;			/* sp_lockdep_unordered_begin() */
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

	for (n = 0; n < SP_LOCKDEP_SLOTS; n++, i = (i + 1) & (SP_LOCKDEP_SLOTS - 1)) {
		uint64_t e = __atomic_load_n(&sp_lockdep_table[i], __ATOMIC_ACQUIRE);

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
	for (n = 0; n < SP_LOCKDEP_SLOTS; n++, i = (i + 1) & (SP_LOCKDEP_SLOTS - 1)) {
		uint64_t e = __atomic_load_n(&sp_lockdep_table[i], __ATOMIC_RELAXED);

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

	if (level == SP_LOCK_NONE || t->unordered)
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

/* drop @m from this thread's record; false when it was not there */
static bool sp_lockdep_pop(const pthread_mutex_t *m, enum sp_lock_level level)
{
	struct sp_lockdep_thread *t = &sp_lockdep_me;
	unsigned int i;

	for (i = t->depth; i-- > 0;) {
		if (t->stack[i] != m)
			continue;
		t->stack[i] = t->stack[--t->depth];
		goto found;
	}
	if (!t->lost)
		return false;
	t->lost--;
found:
	if (t->held[level])
		t->held[level]--;
	return true;
}

int sp_lockdep_lock(pthread_mutex_t *m, const char *file, int line)
{
	enum sp_lock_level level = sp_lockdep_level(m);
	int err;

	sp_lockdep_order(level, file, line);
	err = pthread_mutex_lock(m);
	if (!err)
		sp_lockdep_push(m, level);
	return err;
}

int sp_lockdep_trylock(pthread_mutex_t *m)
{
	int err = pthread_mutex_trylock(m);

	if (!err)
		sp_lockdep_push(m, sp_lockdep_level(m));
	return err;
}

int sp_lockdep_unlock(pthread_mutex_t *m, const char *file, int line)
{
	if (!sp_lockdep_pop(m, sp_lockdep_level(m)))
		sp_bug_at(file, line, "unlocking a mutex this thread does not hold");
	return pthread_mutex_unlock(m);
}

int sp_lockdep_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr)
{
	/* a fork child re-initialises what its one thread held */
	sp_lockdep_pop(m, sp_lockdep_level(m));
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
	return t->lost != 0;
}

void sp_lockdep_enter(enum sp_lock_level level, const char *file, int line)
{
	sp_lockdep_order(level, file, line);
	sp_lockdep_me.held[level]++;
}

void sp_lockdep_leave(enum sp_lock_level level, const char *file, int line)
{
	if (!sp_lockdep_me.held[level])
		sp_bug_at(file, line, "leaving a level %u lock not held",
			  (unsigned int)level);
	sp_lockdep_me.held[level]--;
}

void sp_lockdep_unordered_begin(void)
{
	sp_lockdep_me.unordered++;
}

void sp_lockdep_unordered_end(void)
{
	if (sp_lockdep_me.unordered)
		sp_lockdep_me.unordered--;
}

#endif /* CONFIG_SEGPOOL_DEBUG */
