// SPDX-License-Identifier: MIT
/*
 * core/decay.c - memory that goes back by itself, segpool_shrink_all() and
 * the soft memory limit.
 *
 * Free memory is kept resident for a while, since a program that frees
 * usually allocates again soon, and given back once it stayed unused for the
 * delay (SEGPOOL_DECAY_MS, segpool_set_decay_ms(); jemalloc's
 * dirty_decay_ms, mimalloc's purge_delay):
 *
 *   free pages      each dirty free block of a region carries the time it
 *                   was freed (numa/region.c); sp_region_decay() gives back
 *                   those older than the delay;
 *   idle caches     a cache whose per-CPU slots and slabs counted no
 *                   allocation or free for the delay, but still holds
 *                   objects in magazines or depots or empty slabs, is
 *                   shrunk as segpool_cache_shrink() does but without its
 *                   purge of the node, once per idle spell (a drain fences
 *                   every CPU in rseq mode: not something to repeat for
 *                   nothing);
 *   stashes         a busy cache's slot whose stash of magazines kept for
 *                   its own allocations (percpu/stash.h) went unused for
 *                   the delay gives it to the depot
 *                   (sp_pcpu_reap_stashes(): one slot fenced, only when
 *                   there is such a stash).
 *
 * Both are done by one background thread, "segpool-decay", every quarter
 * of the delay (10 ms to 1 s), with every signal blocked.  It starts only
 * once there is something for it to do, since most processes (a shell
 * script's short commands) end before they free anything worth giving
 * back, and a thread apiece cost them a clone, a stack and a wake-up:
 *
 *   asked for   the regions call sp_decay_ask_memory() (through
 *               sp_region_want_hook, numa/region.c) the first time they
 *               hold SP_DECAY_WANT_MB more dirty free memory than at
 *               start-up, or, when the thread ages huge pages, have
 *               committed that much past their first chunks; the limit's
 *               kick asks too; a delay of 0 asks at once (an idle cache's
 *               magazines go back within a tick, only the thread does
 *               that).  Asking only sets flags (atomic): the caller may
 *               hold any lock, or be a signal handler.
 *   wanted      asked for, and the delay is not -1 (or, for the limit's
 *               ask, a limit is set): sp_lib_wanted tells the next call
 *               that leaves the library outermost, with no lock held
 *               (sp_lib_drain(): a handler's call nested in the library
 *               never gets there), to start it (sp_decay_leave()), and so
 *               do segpool_set_decay_ms() and segpool_set_memory_limit()
 *               for a request made while the delay or the limit said no.
 *   started     never from a signal handler on the alternate stack
 *               (sp_os_in_handler_maybe(): pthread_create() is not
 *               async-signal-safe; the handler may have interrupted the C
 *               library's own thread calls); then again SP_DECAY_RETRY_MS
 *               later.  A handler on the thread's own stack is not told
 *               apart (Documentation/guide/using.md).
 *
 * A fork child has no thread: it is asked for afresh under the same rule,
 * counted from what the child inherited (not at all under ThreadSanitizer,
 * which cannot start a thread in a child of a threaded process).  At exit
 * it is stopped: left asleep when it sleeps, joined when it is in a pass
 * (within a second: a thread stuck behind a lock is left to the exit).
 * It never keeps the process alive: when the main thread has left by
 * pthread_exit() and no other thread is left, it returns at its next pass.
 * It walks the caches in an RCU walk (lock order level 2) and takes the
 * locks a shrink takes, in the order core/init.c states, holding
 * sp_decay.lock (level 11, a leaf) only to sleep.
 *
 * The soft limit: numa/region.c checks it before a region allocation; past
 * it, it purges every region at once and calls sp_decay_kick_shrink(),
 * which asks the thread to shrink every cache at its next pass (the caller
 * may hold cache locks: it cannot shrink itself).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <segpool/segpool.h>

#include "core/core.h"
#include "core/decay.h"
#include "internal/env.h"
#include "internal/reentry.h"
#include "internal/rculist.h"
#include "internal/report.h"
#include "internal/sanitize.h"
#include "numa/region.h"
#include "os/os.h"
#include "percpu/pcpu.h"
#include "rcu/rcu.h"
#include "slab/slab.h"

_Static_assert(SEGPOOL_DECAY_MS_MAX == SP_ENV_DECAY_MS_MAX,
	       "SEGPOOL_DECAY_MS: the table's bound");
_Static_assert(SP_REGION_THP_AGE_MS == 2000,
	       "SEGPOOL_THP: the option table's help and tuning.md say 2 s");
_Static_assert(SP_REGION_THP_EAGER_MB == 256 && SP_REGION_THP_RUN_MB == 16,
	       "SEGPOOL_THP: the option table's help and tuning.md say "
	       "256 MiB and 16 MiB");

#define SP_DECAY_TICK_MIN_MS	10
#define SP_DECAY_TICK_MAX_MS	1000
/*
 * Free memory a process may keep with no thread: past this much more dirty
 * free memory than at start-up (or committed memory for the huge pages'
 * aging) the thread is asked for.
 */
#define SP_DECAY_WANT_MB	8
#define SP_DECAY_WANT_PAGES	\
	((size_t)SP_DECAY_WANT_MB << (20 - SP_PAGE_SHIFT))
/* A start put off (a signal handler may be running): tried again after. */
#define SP_DECAY_RETRY_MS	100
_Static_assert(SP_DECAY_WANT_MB == 8,
	       "Documentation/guide/tuning.md and using.md say 8 MiB");

/* What asked for the thread (sp_decay_asked). */
enum {
	SP_DECAY_ASK_MEMORY = 1,	/* free memory to give back, or 0 */
	SP_DECAY_ASK_LIMIT = 2,		/* the limit wants its shrinks */
};

static struct {
	pthread_mutex_t lock;		/* level 11: the fields below */
	pthread_cond_t wake;		/* the thread sleeps on it */
	pthread_t thread;
	bool running;			/* a thread was started */
	bool stopping;			/* exit: the thread returns */
	bool asleep;			/* the thread waits between passes */
	bool kicked;			/* the delay changed: pass at once */
	bool shrink;			/* the limit was reached: shrink all */
	uint64_t runs;
	uint64_t caches_released;
	uint64_t shrunk_at;		/* when the last limit shrink ended */
} sp_decay = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

static long sp_decay_ms = -1;		/* atomic */
static bool sp_decay_once_done;
static int sp_decay_once_ctl;		/* sp_os_once() */
/* The lazy start, all atomic (reset in a fork child): */
static unsigned int sp_decay_asked;	/* SP_DECAY_ASK_* bits */
static bool sp_decay_starting;		/* a call is starting it */
static bool sp_decay_started;		/* it was started */
static bool sp_decay_no_start;		/* it cannot be: never try again */
static uint64_t sp_decay_retry_ns;	/* no try before (clock of
					 * sp_region_now_ns()) */

static void sp_decay_cond_init(void)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&sp_decay.wake, &a);
	pthread_condattr_destroy(&a);
}

/* --- idle caches ---------------------------------------------------------- */

/*
 * What a cache counted (allocations and frees of every slot and node) and
 * whether it holds free memory a shrink would give back.
 */
static uint64_t sp_decay_cache_ops(struct segpool_cache *c, bool *holds)
{
	struct sp_pcpu_cache *pc = __atomic_load_n(&c->pcpu, __ATOMIC_ACQUIRE);
	uint64_t ops = 0;

	*holds = false;
	if (pc) {
		struct sp_pcpu_stats st;

		sp_pcpu_read_stats(pc, &st);
		ops = st.alloc_fastpath + st.free_fastpath +
		      st.stat[SP_STAT_ALLOC_SLOWPATH] +
		      st.stat[SP_STAT_FREE_SLOWPATH];
		*holds = st.objs_in_magazines || st.full_in_depot ||
			 st.empty_in_depot;
	}
	for (int i = 0; i < sp_space.nr_regions; i++) {
		struct sp_cache_node *n = &c->node[i];

		pthread_mutex_lock(&n->lock);
		ops += n->allocs + n->frees + n->slabs_created;
		*holds |= sp_node_holds_free(n);
		pthread_mutex_unlock(&n->lock);
	}
	return ops;
}

/*
 * What segpool_cache_shrink() does (drain the per-CPU layer, release the
 * empty slabs) but without purging the node's region: that gave back every
 * free page of the node, the young ones of busy caches too.  An idle
 * internal cache (the magazines' own) shrunk in the middle of a program's
 * 10^7-object round purged 400 MiB it was about to reuse, split every huge
 * page under it, and the next round faulted it all back in 4 KiB pages.
 * The released slabs' pages are the region decay's like any free block;
 * segpool_shrink_all() and the limit's shrink purge every region after.
 */
static void sp_decay_shrink_cache(struct segpool_cache *c)
{
	(void)sp_cache_shrink(c, false);
}

/* Shrink the caches idle for @delay_ns (all of them with @all). */
static unsigned long sp_decay_caches(uint64_t now, uint64_t delay_ns, bool all)
{
	struct segpool_cache *c;
	unsigned long n = 0;

	sp_rcu_walk_begin();
	sp_list_for_each_entry_rcu(c, &sp_cache_list, list) {
		struct sp_pcpu_cache *pc;
		bool holds;
		uint64_t ops = sp_decay_cache_ops(c, &holds);

		/* only this thread writes the decay fields */
		if (ops != c->decay_ops || !c->decay_since) {
			c->decay_ops = ops;
			c->decay_since = now;
			/* busy: only the stashes its slots stopped using */
			pc = __atomic_load_n(&c->pcpu, __ATOMIC_ACQUIRE);
			if (pc && !all)
				sp_pcpu_reap_stashes(pc);
			if (!all)
				continue;
		}
		if (!holds || (!all && now - c->decay_since < delay_ns))
			continue;
		sp_decay_shrink_cache(c);
		n++;
	}
	sp_rcu_walk_end();
	return n;
}

/* --- the thread ----------------------------------------------------------- */

static uint64_t sp_decay_tick_ms(long ms)
{
	long t = ms / 4;

	if (ms < 0)			/* only the limit's shrinks, and exit */
		return SP_DECAY_TICK_MAX_MS;
	if (t < SP_DECAY_TICK_MIN_MS)
		t = SP_DECAY_TICK_MIN_MS;
	if (t > SP_DECAY_TICK_MAX_MS)
		t = SP_DECAY_TICK_MAX_MS;
	return (uint64_t)t;
}

static void sp_decay_pass(long ms, bool shrink_all)
{
	uint64_t now = sp_region_now_ns();
	uint64_t delay = ms < 0 ? 0 : (uint64_t)ms * 1000000ULL;
	unsigned long shrunk = 0;

	if (ms >= 0 || shrink_all)
		shrunk = sp_decay_caches(now, delay, shrink_all);
	for (int i = 0; i < sp_space.nr_regions; i++) {
		if (shrink_all)
			sp_region_purge(i);
		else if (ms >= 0)
			sp_region_decay(i, now, delay);
		sp_region_thp_age(i, now);
	}
	pthread_mutex_lock(&sp_decay.lock);
	sp_decay.runs++;
	sp_decay.caches_released += shrunk;
	if (shrink_all)
		sp_decay.shrunk_at = sp_region_now_ns();
	pthread_mutex_unlock(&sp_decay.lock);
}

static void *sp_decay_thread(void *arg)
{
	struct timespec next;

	(void)arg;
	sp_os_name_thread("segpool-decay");
	clock_gettime(CLOCK_MONOTONIC, &next);
	pthread_mutex_lock(&sp_decay.lock);
	for (;;) {
		long ms = __atomic_load_n(&sp_decay_ms, __ATOMIC_RELAXED);
		uint64_t tick = sp_decay_tick_ms(ms);
		bool shrink;

		next.tv_sec += (time_t)(tick / 1000);
		next.tv_nsec += (long)(tick % 1000) * 1000000L;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		sp_decay.asleep = true;
		while (!sp_decay.stopping && !sp_decay.kicked &&
		       !sp_decay.shrink) {
			int err = pthread_cond_timedwait(&sp_decay.wake,
							 &sp_decay.lock, &next);

			if (err == ETIMEDOUT)
				break;
		}
		sp_decay.asleep = false;
		if (sp_decay.stopping)
			break;
		/* main returned by pthread_exit() and every other thread
		 * ended: the process ends with us, not never */
		if (sp_os_alone())
			break;
		shrink = sp_decay.shrink;
		sp_decay.shrink = false;
		if (sp_decay.kicked) {
			sp_decay.kicked = false;
			clock_gettime(CLOCK_MONOTONIC, &next);
		}
		ms = __atomic_load_n(&sp_decay_ms, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&sp_decay.lock);
		if (ms >= 0 || shrink)	/* -1: nothing to do but wait */
			sp_decay_pass(ms, shrink);
		pthread_mutex_lock(&sp_decay.lock);
		/* fell behind (a stopped process): count from now */
		{
			struct timespec now;

			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec > next.tv_sec + 1)
				next = now;
		}
	}
	pthread_mutex_unlock(&sp_decay.lock);
	return NULL;
}

/* No lock held: create the thread; 0 or an errno. */
static int sp_decay_spawn(void)
{
	sigset_t all, old;
	pthread_t t;
	bool stopping;
	int err;

	pthread_mutex_lock(&sp_decay.lock);
	stopping = sp_decay.stopping;
	pthread_mutex_unlock(&sp_decay.lock);
	if (stopping)			/* exit: not now */
		return ECANCELED;
	/* created with no lock of ours held: it may allocate */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&t, NULL, sp_decay_thread, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return err;
	pthread_mutex_lock(&sp_decay.lock);
	sp_decay.thread = t;
	sp_decay.running = true;
	pthread_mutex_unlock(&sp_decay.lock);
	return 0;
}

static void sp_decay_atexit(void)
{
	struct timespec deadline;
	bool running;

	/*
	 * Asleep, it never passes again: waking, it finds stopping set
	 * under the lock and returns, and the exit ends it first.  Only a
	 * thread in a pass is waited for (exit handlers after this one take
	 * the locks it holds).  Not waking a sleeping thread saves every
	 * process's exit a wake-up and a join (tenths of a millisecond on a
	 * busy machine).  Under ThreadSanitizer and valgrind it is joined
	 * all the same: both report a thread alive at exit as a leak.
	 */
	pthread_mutex_lock(&sp_decay.lock);
	running = sp_decay.running &&
		  (!sp_decay.asleep || SP_TSAN ||
		   (SP_VALGRIND && sp_on_valgrind));
	sp_decay.stopping = true;
	if (running)
		pthread_cond_signal(&sp_decay.wake);
	pthread_mutex_unlock(&sp_decay.lock);
	if (!running)
		return;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 1;
	if (pthread_timedjoin_np(sp_decay.thread, NULL, &deadline) == 0) {
		pthread_mutex_lock(&sp_decay.lock);
		sp_decay.running = false;
		pthread_mutex_unlock(&sp_decay.lock);
	}
}

static void sp_decay_once(void)
{
	sp_decay_cond_init();
	atexit(sp_decay_atexit);
	__atomic_store_n(&sp_decay_once_done, true, __ATOMIC_RELEASE);
}

/*
 * Whether the thread is wanted now: asked for, for a reason that holds, not
 * started, not refused.  What sp_lib_wanted says (only flags: from any
 * context).
 */
static void sp_decay_update_wanted(void)
{
	unsigned int asked = __atomic_load_n(&sp_decay_asked,
					     __ATOMIC_ACQUIRE);
	bool w = ((asked & SP_DECAY_ASK_MEMORY) &&
		  __atomic_load_n(&sp_decay_ms, __ATOMIC_RELAXED) >= 0) ||
		 ((asked & SP_DECAY_ASK_LIMIT) &&
		  __atomic_load_n(&sp_region_limit_pages, __ATOMIC_RELAXED));

	if (__atomic_load_n(&sp_decay_started, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&sp_decay_no_start, __ATOMIC_RELAXED))
		w = false;
	__atomic_store_n(&sp_lib_wanted, w, __ATOMIC_RELEASE);
}

/* Ask for the thread (@why: SP_DECAY_ASK_*): flags only, under any lock. */
static void sp_decay_ask(unsigned int why)
{
	__atomic_fetch_or(&sp_decay_asked, why, __ATOMIC_RELEASE);
	sp_decay_update_wanted();
}

/* sp_region_want_hook: a region holds free memory worth giving back. */
static void sp_decay_ask_memory(void)
{
	sp_decay_ask(SP_DECAY_ASK_MEMORY);
}

/*
 * Start the thread when it is wanted; no lock held, not nested.  From a
 * call leaving the library (@leaving), not while a signal handler may be
 * running.  0 or an errno (the thread cannot be started).
 */
static int sp_decay_start_wanted(bool leaving)
{
	bool idle = false;
	int err;

	if (!__atomic_compare_exchange_n(&sp_decay_starting, &idle, true,
					 false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return 0;	/* another call's, or the interrupted one's */
	if (__atomic_load_n(&sp_decay_started, __ATOMIC_ACQUIRE) ||
	    !__atomic_load_n(&sp_lib_wanted, __ATOMIC_ACQUIRE)) {
		err = 0;
	} else if (leaving && sp_os_in_handler_maybe()) {
		__atomic_store_n(&sp_decay_retry_ns, sp_region_now_ns() +
				 SP_DECAY_RETRY_MS * 1000000ULL,
				 __ATOMIC_RELAXED);
		err = 0;
	} else {
		err = sp_decay_spawn();
		if (!err)
			__atomic_store_n(&sp_decay_started, true,
					 __ATOMIC_RELEASE);
		else
			__atomic_store_n(&sp_decay_no_start, true,
					 __ATOMIC_RELAXED);
		if (err && err != ECANCELED)
			sp_warn("cannot start the decay thread: free memory "
				"stays resident until a shrink");
	}
	__atomic_store_n(&sp_decay_starting, false, __ATOMIC_RELEASE);
	sp_decay_update_wanted();
	return err == ECANCELED ? 0 : err;
}

void sp_decay_leave(void)
{
	if (sp_region_now_ns() <
	    __atomic_load_n(&sp_decay_retry_ns, __ATOMIC_RELAXED))
		return;			/* put off a moment ago */
	(void)sp_decay_start_wanted(true);
}

/*
 * The limit was reached: the thread shrinks every cache (a leaf lock).  At
 * most once per SP_DECAY_SHRINK_GAP_MS: a live set above the limit would
 * otherwise drain every cache without end.
 */
#define SP_DECAY_SHRINK_GAP_MS	100

static void sp_decay_kick_shrink(void)
{
	uint64_t now = sp_region_now_ns();

	if (!__atomic_load_n(&sp_decay_once_done, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&sp_decay.lock);
	if (!sp_decay.shrink && (!sp_decay.shrunk_at ||
	    now - sp_decay.shrunk_at >= SP_DECAY_SHRINK_GAP_MS * 1000000ULL)) {
		/* a thread not yet started finds it set */
		sp_decay.shrink = true;
		pthread_cond_signal(&sp_decay.wake);
	}
	pthread_mutex_unlock(&sp_decay.lock);
	sp_decay_ask(SP_DECAY_ASK_LIMIT);
}

/* --- settings, start, fork ----------------------------------------------- */

static void sp_decay_set_delay(long ms)
{
	__atomic_store_n(&sp_decay_ms, ms, __ATOMIC_RELAXED);
	__atomic_store_n(&sp_region_delay_ns,
			 ms < 0 ? (int64_t)-1 : (int64_t)ms * 1000000,
			 __ATOMIC_RELAXED);
}

/*
 * Huge pages of another size than SP_OS_HUGE_SIZE (32 MiB with 16 KiB
 * pages, 512 MiB with 64 KiB ones) are refused whatever SEGPOOL_THP says:
 * the regions' blocks are at most 4 MiB and the decay keeps only blocks of
 * a 2 MiB huge page whole, so every purge would split such a page; in the
 * kernel's always mode the next touch of a range purged whole faults a
 * whole one back in, or khugepaged collapses it again.
 */
int sp_decay_thp_choice(int thp, int mode, size_t huge, long ms)
{
	if (huge && huge != SP_OS_HUGE_SIZE)
		return SP_REGION_THP_NEVER;
	if (thp == SP_THP_ALWAYS)
		return SP_REGION_THP_COMMIT;
	if (thp == SP_THP_NEVER)
		return SP_REGION_THP_NEVER;
	if (mode != SP_OS_THP_MADVISE)
		return 0;
	/* auto: the chunks a program keeps, aged by the decay thread; with
	 * no thread to age them (a delay of -1), as they are committed */
	return ms < 0 ? SP_REGION_THP_COMMIT : SP_REGION_THP_AGED;
}

void sp_decay_settings(void)
{
	int thp = sp_env_word(SP_ENV_THP);
	long long limit = sp_env_number(SP_ENV_MEMORY_LIMIT, 0);
	size_t huge = sp_os_thp_size();
	long ms;

	if (thp < 0)			/* unset: the table's default */
		thp = SP_THP_AUTO;

	/*
	 * Not by default under ThreadSanitizer: a fork child of a process
	 * with a second thread cannot start threads there ("starting new
	 * threads after multi-threaded fork is not supported").
	 */
	sp_decay_set_delay((long)sp_env_number(SP_ENV_DECAY_MS,
			   SP_TSAN ? -1 : SP_ENV_DECAY_MS_DEFAULT));
	__atomic_store_n(&sp_region_limit_pages,
			 (uint64_t)limit >> SP_PAGE_SHIFT, __ATOMIC_RELAXED);
	__atomic_store_n(&sp_region_limit_hook, sp_decay_kick_shrink,
			 __ATOMIC_RELEASE);
	__atomic_store_n(&sp_region_want_hook, sp_decay_ask_memory,
			 __ATOMIC_RELEASE);
	__atomic_store_n(&sp_health_decay_fn, sp_decay_read, __ATOMIC_RELEASE);
	ms = __atomic_load_n(&sp_decay_ms, __ATOMIC_RELAXED);
	if (thp != SP_THP_AUTO) {
		sp_region_thp = sp_decay_thp_choice(thp, 0, huge, ms);
		return;
	}
	/* auto: what the kernel's mode would make of it, read when needed */
	sp_region_thp_madvise = sp_decay_thp_choice(thp, SP_OS_THP_MADVISE,
						    huge, ms);
	sp_region_thp = sp_region_thp_madvise > 0 ? SP_REGION_THP_UNREAD :
						    sp_region_thp_madvise;
}

void sp_decay_start(void)
{
	sp_os_once(&sp_decay_once_ctl, sp_decay_once);
	sp_region_want_arm(SP_DECAY_WANT_PAGES);
	if (__atomic_load_n(&sp_decay_ms, __ATOMIC_RELAXED) == 0)
		sp_decay_ask(SP_DECAY_ASK_MEMORY);
	if (__atomic_load_n(&sp_lib_wanted, __ATOMIC_ACQUIRE))
		sp_decay_leave();	/* start-up leaves the library here */
}

/*
 * The child's only thread is the one that forked, after the library's
 * child handler: the parent's decay thread was not copied.  Its lock and
 * condvar start afresh (the thread that held them is gone), and so does
 * the lazy start: asked for again once the child holds SP_DECAY_WANT_MB
 * more free memory than it inherited (at once for a delay of 0), started
 * by the child's own call that then leaves the library.  Most children
 * exec before that.
 */
void sp_decay_fork_child(void)
{
	pthread_mutex_init(&sp_decay.lock, NULL);
	if (__atomic_load_n(&sp_decay_once_done, __ATOMIC_ACQUIRE))
		sp_decay_cond_init();
	sp_decay.running = false;
	sp_decay.kicked = false;
	sp_decay.shrink = false;
	__atomic_store_n(&sp_decay_asked, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&sp_decay_starting, false, __ATOMIC_RELAXED);
	__atomic_store_n(&sp_decay_started, false, __ATOMIC_RELAXED);
	__atomic_store_n(&sp_decay_retry_ns, 0, __ATOMIC_RELAXED);
	/* under TSan a child of a threaded parent cannot start a thread
	 * ("dup thread with used id"): its memory waits for a shrink */
	if (SP_TSAN)
		__atomic_store_n(&sp_decay_no_start, true, __ATOMIC_RELAXED);
	if (__atomic_load_n(&sp_decay_once_done, __ATOMIC_ACQUIRE)) {
		sp_region_want_arm(SP_DECAY_WANT_PAGES);
		if (__atomic_load_n(&sp_decay_ms, __ATOMIC_RELAXED) == 0)
			__atomic_store_n(&sp_decay_asked, SP_DECAY_ASK_MEMORY,
					 __ATOMIC_RELAXED);
	}
	sp_decay_update_wanted();
}

void sp_decay_read(struct sp_decay_stats *st)
{
	st->decay_ms = __atomic_load_n(&sp_decay_ms, __ATOMIC_RELAXED);
	st->memory_limit = __atomic_load_n(&sp_region_limit_pages,
					   __ATOMIC_RELAXED) << SP_PAGE_SHIFT;
	st->limit_hits = __atomic_load_n(&sp_region_limit_hits,
					 __ATOMIC_RELAXED);
	st->limit_exceeded = __atomic_load_n(&sp_region_limit_exceeded,
					     __ATOMIC_RELAXED);
	st->thp = sp_region_thp_now() > 0;
	pthread_mutex_lock(&sp_decay.lock);
	st->runs = sp_decay.runs;
	st->caches_released = sp_decay.caches_released;
	st->thread = sp_decay.running;
	pthread_mutex_unlock(&sp_decay.lock);
}

bool sp_decay_wait_idle(unsigned int ms)
{
	for (unsigned int waited = 0;; waited++) {
		bool idle;

		pthread_mutex_lock(&sp_decay.lock);
		idle = !sp_decay.running ||
		       (sp_decay.asleep && !sp_decay.kicked &&
			!sp_decay.shrink);
		pthread_mutex_unlock(&sp_decay.lock);
		if (idle)
			return true;
		if (waited >= ms)
			return false;
		sp_os_sleep_ms(1);
	}
}

/* --- the public calls ----------------------------------------------------- */

/* Pages given back so far, all regions (a shrink purges on its own too). */
static uint64_t sp_decay_purged(void)
{
	uint64_t n = 0;

	for (int i = 0; i < sp_space.nr_regions; i++) {
		struct sp_region *r = &sp_space.region[i];

		pthread_mutex_lock(&r->lock);
		n += r->purged_pages;
		pthread_mutex_unlock(&r->lock);
	}
	return n;
}

SEGPOOL_API long long segpool_shrink_all(void)
{
	struct segpool_cache *c;
	uint64_t before;

	if (sp_init()) {
		errno = ENOMEM;
		return -ENOMEM;
	}
	before = sp_decay_purged();
	sp_rcu_walk_begin();
	sp_list_for_each_entry_rcu(c, &sp_cache_list, list)
		sp_decay_shrink_cache(c);
	sp_rcu_walk_end();
	for (int i = 0; i < sp_space.nr_regions; i++)
		sp_region_purge(i);
	/* other threads' purges meanwhile count too: the figure is a hint */
	return (long long)((sp_decay_purged() - before) << SP_PAGE_SHIFT);
}

SEGPOOL_API int segpool_set_decay_ms(long ms)
{
	int err;

	if (ms < -1 || ms > SEGPOOL_DECAY_MS_MAX) {
		errno = EINVAL;
		return -EINVAL;
	}
	if (sp_init()) {
		errno = ENOMEM;
		return -ENOMEM;
	}
	sp_decay_set_delay(ms);
	/* 0: an idle cache's magazines go back within a tick */
	if (ms == 0)
		sp_decay_ask(SP_DECAY_ASK_MEMORY);
	else
		sp_decay_update_wanted();	/* asked while it was -1 */
	err = sp_decay_start_wanted(false);
	if (err) {
		errno = EAGAIN;
		return -EAGAIN;
	}
	if (__atomic_load_n(&sp_decay_once_done, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&sp_decay.lock);
		sp_decay.kicked = true;
		pthread_cond_signal(&sp_decay.wake);
		pthread_mutex_unlock(&sp_decay.lock);
	}
	return 0;
}

SEGPOOL_API long segpool_get_decay_ms(void)
{
	return __atomic_load_n(&sp_decay_ms, __ATOMIC_RELAXED);
}

SEGPOOL_API int segpool_set_memory_limit(uint64_t bytes)
{
	if (sp_init()) {
		errno = ENOMEM;
		return -ENOMEM;
	}
	__atomic_store_n(&sp_region_limit_pages, bytes >> SP_PAGE_SHIFT,
			 __ATOMIC_RELAXED);
	/* the shrinks the limit asks for need the thread: once it is hit
	 * (sp_decay_kick_shrink()), or now when it was hit meanwhile */
	sp_decay_update_wanted();
	(void)sp_decay_start_wanted(false);
	return 0;
}

SEGPOOL_API uint64_t segpool_get_memory_limit(void)
{
	return __atomic_load_n(&sp_region_limit_pages, __ATOMIC_RELAXED)
	       << SP_PAGE_SHIFT;
}
