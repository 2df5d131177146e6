// SPDX-License-Identifier: MIT
/*
 * core/init.c - bring the layers up in order, and keep them fork-safe.
 *
 * Order: CPUs (percpu/) -> topology (numa/) -> space (numa/) -> per-CPU
 * mode and magazine caches (percpu/) -> size-class table and the
 * large-allocation registry (core/); each size class's cache is made at
 * its first allocation (core/kmalloc.c).  It runs from a library
 * constructor, or from the first call should another constructor allocate
 * before ours ran; after a failure, again from a later call.
 *
 * Lock order, outermost first.  This is the library's one statement of
 * it (every other file refers here by level).  It is stated here because
 * the fork handlers below take the locks in exactly this order, which is
 * what binds every other path: a thread that took two of these the other
 * way round could deadlock with a fork.  Per-node locks of one kind are
 * taken in node-index order.
 *
 *  1. Subsystems with fork handlers of their own, registered after the
 *     library's (so their prepare step runs before it): the live export's
 *     op_lock -> lock -> pub_lock (stats/export.c); the arena list lock ->
 *     each arena's lock (arena/list.c); a mempool's resize lock (never
 *     taken at fork) -> the mempool list lock -> each pool's lock
 *     (mempool/mempool.c); the sheaf list lock (mempool/sheaf.c).  Then
 *     the size classes' maker lock (core/kmalloc.c: held while a class is
 *     made at its first allocation), taken first by the library's own
 *     fork handler.  Each is taken with no lock of the levels below held.
 *  2. RCU: segpool's worker lock (rcu/rcu.c, never held with another
 *     segpool lock) -> liburcu's call_rcu mutex (fork holds it from
 *     call_rcu_before_fork(), which pauses the workers) -> the RCU fork
 *     lock: read side held across every call into liburcu that takes a
 *     liburcu lock or a read-side section (register, unregister,
 *     call_rcu, synchronize_rcu, segpool_synchronize_rcu() too, the
 *     cache-list walks), write side by fork.  Inside liburcu, below it:
 *     its grace-period mutex -> its registry mutex, held across a grace
 *     period; fork never takes them (urcu-memb has no fork hooks), the
 *     write side keeps every holder out instead, so the child's registry
 *     prune finds them free.  rcu_barrier() runs outside it
 *     (sp_rcu_barrier_raw()).
 *  3. The cache-list lock (slab/cache.c).
 *  4. A per-CPU layer's drain lock (percpu/pcpu.c): one drainer at a time.
 *     Not taken by fork (it guards no data); the child re-initialises it.
 *     Never held with the cache-list lock.
 *  5. A CPU slot, owned (busy marker in rseq mode, the slot's spinlock in
 *     lock mode; percpu/pcpu.h).  Not taken by fork: the child resets the
 *     slots other threads owned.  Only a drainer ever waits for one.
 *  6. A per-CPU layer's depot mutexes (percpu/depot.c): the sizing window,
 *     drains and fork, never a magazine exchange (the stacks are lock-free);
 *     fork takes them per cache, in cache-list order, each cache's before
 *     its node locks.
 *  7. A cache's node locks (slab/slab.c).
 *  8. The failslab lock (failslab/failslab.c).
 *  9. The region locks (numa/region.c).
 * 10. The large-allocation registry lock (large/large.c).
 * 11. Leaves, taken under anything, nothing under them but a try of the
 *     RCU fork lock (level 2): each CPU's RCU batch lock -> the RCU spill
 *     lock (rcu/free.c); the deferred-slab lock (rcu/typesafe.c); a depot's
 *     spinlock in builds without cas16 (percpu/depot.c); the decay
 *     thread's state lock (core/decay.c: not taken by fork, the child
 *     re-initialises it); the guard pool's lock (guard/pool.c: fork takes
 *     it with the leaves); the heap profile's table lock (prof/table.c:
 *     taken with no other segpool lock held, fork takes it last) -> the
 *     profile writer's lock is taken before it (prof/dump.c, a dump only).
 *
 * sp_init_lock is not in the order: it is never taken once the library is
 * ready.  No segpool lock is held while a grace period is waited for.
 *
 * A debug build (make DEBUG=1) checks the levels of the mutexes it knows
 * on every lock call: enum sp_lock_level of internal/debug.h, whose values
 * are the numbers above (make checkstyle compares them with this list).
 *
 * fork: sp_atfork_prepare() takes the maker lock of level 1, then levels
 * 2, 3, 6 to 11 as above, so no lock is held mid-update by a thread that
 * will not exist in the child.  The parent releases them in reverse; the
 * child re-initialises them, since its only thread is a copy of the one
 * that forked.  A process that never had a second thread
 * (sp_os_single_threaded()) takes none of them: no other thread can hold
 * one, and the thread that forks holds none (fork is never called from
 * inside segpool).  Taking them would write every page that holds a lock
 * (each cache's depot and node locks) in the parent before the fork and
 * again after it, when fork has made those pages copy-on-write: a page
 * fault and a page copy each, in the parent and in the child, some 60 a
 * fork in a shell that used two dozen size classes.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <segpool/segpool.h>

#include "segpool_config.h"
#include "core/core.h"
#include "core/entry.h"
#include "core/decay.h"
#include "young/young.h"
#include "failslab/failslab.h"
#include "guard/guard.h"
#include "internal/debug.h"
#include "internal/env.h"
#include "internal/reentry.h"
#include "internal/report.h"
#include "numa/region.h"
#include "numa/topology.h"
#include "os/cpu.h"
#include "os/os.h"
#include "percpu/pcpu.h"
#include "prof/prof.h"
#include "rcu/rcu.h"
#include "stats/export.h"
#include "stats/print.h"

bool sp_ready;

/*
 * Initialisation can fail (a reservation refused by the address-space
 * limit, a transient mmap failure): it is then tried again by the next
 * call that needs the library, under sp_init_lock, until one succeeds.
 * The settings are read once, on the first try; the steps that allocate
 * are each idempotent (what a failed try created is kept and reused).
 * The first failure is reported once on stderr; the calls that fail in
 * the meantime return ENOMEM.  sp_init_lock is never taken once sp_ready
 * is set, so the fork handlers (registered on success) need not know it.
 */
static pthread_mutex_t sp_init_lock = PTHREAD_MUTEX_INITIALIZER;
/* what happens until a try succeeds: the malloc layer has its own words */
const char *sp_init_meanwhile = "calls fail with ENOMEM and try again";
static bool sp_init_settings_read;
static bool sp_init_reported;
static unsigned long sp_init_failures;

static void sp_fork_lock_pcpu(struct segpool_cache *c)
{
	if (c->pcpu)
		sp_pcpu_fork_lock(c->pcpu);
}

static void sp_fork_unlock_pcpu(struct segpool_cache *c)
{
	if (c->pcpu)
		sp_pcpu_fork_unlock(c->pcpu);
}

static void sp_fork_child_pcpu(struct segpool_cache *c)
{
	if (c->pcpu)
		sp_pcpu_fork_child(c->pcpu);
}

/* Set by sp_atfork_prepare(): no lock taken (the child inherits it). */
static bool sp_fork_alone;

static void sp_atfork_prepare(void)
{
	sp_fork_alone = sp_os_single_threaded();
	if (sp_fork_alone)
		return;
	/* cache after cache, each one's depot then node locks: unchecked */
	sp_lockdep_fork_begin();
	sp_kmalloc_fork_lock();
	sp_rcu_fork_prepare();
	sp_cache_lock_all(sp_fork_lock_pcpu);
	sp_failslab_fork_lock();
	sp_space_lock_all();
	sp_large_lock();
	sp_rcu_fork_prepare_leaves();
	sp_guard_fork_lock();
	sp_prof_fork_lock();
	sp_lockdep_fork_end();
}

static void sp_atfork_parent(void)
{
	if (sp_fork_alone)
		return;
	sp_lockdep_fork_begin();
	sp_prof_fork_unlock();
	sp_guard_fork_unlock();
	sp_rcu_fork_parent_leaves();
	sp_large_unlock();
	sp_space_unlock_all();
	sp_failslab_fork_unlock();
	sp_cache_unlock_all(sp_fork_unlock_pcpu);
	sp_rcu_fork_parent();
	sp_kmalloc_fork_unlock();
	sp_lockdep_fork_end();
}

static void sp_atfork_child(void)
{
	sp_os_random_fork_child();	/* never the parent's random bytes */
	if (sp_fork_alone) {
		sp_decay_fork_child();
		return;
	}
	sp_lockdep_fork_begin();
	sp_prof_fork_child();
	sp_guard_fork_child();
	sp_rcu_fork_child_leaves();
	sp_large_reinit_lock();
	sp_space_reinit_locks();
	sp_failslab_fork_child();
	sp_cache_reinit_locks(sp_fork_child_pcpu);
	sp_rcu_fork_child();
	sp_kmalloc_fork_child();
	sp_lockdep_fork_end();
	sp_decay_fork_child();	/* last: it arms the regions' ask */
}

static void sp_init_settings(void)
{
	sp_lib_drain_hook = sp_lib_drain;	/* for the layers below core/ */
	sp_harden_init();	/* before any cache, internal ones too */
	sp_failslab_init();
	sp_topology_init(sp_cpu_possible_count());
	sp_rcu_init();
	sp_decay_settings();	/* before the first chunk is committed */
	sp_young_init(sp_kmalloc_name);	/* after harden's valgrind test */
}

/* One try; the name of the step that failed, or NULL. */
static const char *sp_init_try(void)
{
	/*
	 * segpool's page (SP_PAGE_SIZE) is the unit of every mapping call it
	 * makes: a kernel with larger pages (arm64 with 16 or 64 KiB pages,
	 * under a build for 4 KiB) would refuse them one by one, deep inside.
	 * Refused here, clearly, with the build that would serve.
	 */
	static char page_msg[160];
	unsigned long kpage = sp_os_page_size();
	int kshift = __builtin_ctzl(kpage);
	int n;

	if (kpage > SP_PAGE_SIZE) {
		n = snprintf(page_msg, sizeof(page_msg),
			     "checking the page size: the kernel's pages are "
			     "%lu KiB, larger than this build's %lu KiB",
			     kpage >> 10, SP_PAGE_SIZE >> 10);
		if (n > 0 && (size_t)n < sizeof(page_msg) &&
		    kshift <= SP_PAGE_SHIFT_MAX)
			snprintf(page_msg + n, sizeof(page_msg) - (size_t)n,
				 " (a build with make PAGE_SHIFT=%d serves "
				 "them)", kshift);
		errno = EOPNOTSUPP;
		return page_msg;
	}
	sp_pcpu_base_init();	/* before any cache: the hit paths' store */
	if (sp_space_init())
		return "reserving the space";
	sp_inline_abi_space();	/* before any object: the frees' tag lookup */
	if (sp_pcpu_init())
		return "creating the magazine caches";
	if (sp_kmalloc_init())
		return "checking the size-class table";
	if (sp_large_init())
		return "setting up the large-allocation registry";
	return NULL;
}

int sp_init_slow(void)
{
	const char *failed;
	int err;

	/* a signal handler that interrupted start-up must not wait for it */
	if (sp_lib_nested()) {
		errno = ENOMEM;
		return -ENOMEM;
	}
	sp_lib_enter();
	pthread_mutex_lock(&sp_init_lock);
	if (__atomic_load_n(&sp_ready, __ATOMIC_ACQUIRE)) {
		pthread_mutex_unlock(&sp_init_lock);
		if (sp_lib_leave())
			sp_lib_drain();
		return 0;
	}
	if (!sp_init_settings_read) {
		sp_init_settings();
		sp_init_settings_read = true;
	}
	errno = 0;
	failed = sp_init_try();
	if (failed) {
		err = errno ? errno : ENOMEM;
		sp_init_failures++;
		if (!sp_init_reported) {
			sp_init_reported = true;
			sp_warn("cannot initialise (%s: %s); %s", failed,
				strerror(err), sp_init_meanwhile);
		}
		pthread_mutex_unlock(&sp_init_lock);
		if (sp_lib_leave())
			sp_lib_drain();
		errno = ENOMEM;
		return -ENOMEM;
	}
	pthread_atfork(sp_atfork_prepare, sp_atfork_parent, sp_atfork_child);
	__atomic_store_n(&sp_ready, true, __ATOMIC_RELEASE);
	/* every size class exists: the hit paths may open, inline ones too */
	sp_inline_abi_publish();
	sp_pcpu_fast_update(sp_failslab_active());
	pthread_mutex_unlock(&sp_init_lock);
	if (sp_lib_leave())
		sp_lib_drain();
	if (sp_init_failures)
		sp_warn("initialised after %lu failed attempt%s",
			sp_init_failures, sp_init_failures == 1 ? "" : "s");
	/* after sp_ready: backtrace() may allocate on its first call */
	sp_guard_init();
	/* after sp_ready: starting the export calls back into sp_init() */
	sp_export_init();
	sp_stats_print_init();
	sp_entry_decide(sp_env_get(SP_ENV_HEAP_PROFILE) != NULL);
	/* sampling sees every operation: the hit paths close for good */
	if (sp_prof_init()) {
		__atomic_store_n(&sp_pcpu_fast_closed, true, __ATOMIC_RELAXED);
		sp_pcpu_fast_update(sp_failslab_active());
		sp_inline_abi_close();	/* before any sampled slab exists */
		/* only then: no sampled object's free may take a hit path */
		__atomic_store_n(&sp_prof_on, true, __ATOMIC_RELEASE);
	} else if (sp_entry_counted()) {
		/* SEGPOOL_HEAP_PROFILE was refused: the counts never run out */
		__atomic_store_n(&sp_prof_idle, true, __ATOMIC_RELEASE);
	}
	if (sp_env_bool(SP_ENV_VERBOSE, false))
		sp_init_verbose();
	sp_decay_start();
	return 0;
}

__attribute__((constructor)) static void sp_constructor(void)
{
	sp_init();
}

SEGPOOL_API const char *segpool_version(void)
{
	return CONFIG_SEGPOOL_VERSION;
}
