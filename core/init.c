// SPDX-License-Identifier: MIT
/*
 * core/init.c - bring the layers up in order, and keep them fork-safe.
 *
 * Order: CPUs (percpu/) -> topology (numa/) -> arena (numa/) -> per-CPU
 * mode and magazine caches (percpu/) -> size-class caches and the
 * large-allocation registry (core/).  It runs from a library
 * constructor, and again (once) from the first call should another
 * constructor allocate before ours ran.
 *
 * fork: the prepare handler takes every lock of the library in lock order
 * (RCU first: core/rcu.c; then the cache list, each cache's drain and depot locks and node locks, descriptor
 * pools, regions, the large registry), so no lock is held mid-update by a thread that will not exist in
 * the child.  The parent releases them; the child re-initialises them, since
 * its only thread is a copy of the one that forked.
 */
#include <errno.h>
#include <pthread.h>

#include <segpool/segpool.h>

#include "segpool_config.h"
#include "core/core.h"
#include "core/stats_print.h"
#include "core/export.h"
#include "core/failslab.h"
#include "core/rcu.h"
#include "numa/region.h"
#include "numa/topology.h"
#include "percpu/cpu.h"
#include "percpu/pcpu.h"

bool sp_ready;
static int sp_init_status;
static pthread_once_t sp_init_once_ctl = PTHREAD_ONCE_INIT;

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

static void sp_atfork_prepare(void)
{
	sp_rcu_fork_prepare();
	sp_cache_lock_all(sp_fork_lock_pcpu);
	sp_failslab_fork_lock();
	sp_desc_lock_all();
	sp_arena_lock_all();
	sp_large_lock();
	sp_rcu_fork_prepare_leaves();
}

static void sp_atfork_parent(void)
{
	sp_rcu_fork_parent_leaves();
	sp_large_unlock();
	sp_arena_unlock_all();
	sp_desc_unlock_all();
	sp_failslab_fork_unlock();
	sp_cache_unlock_all(sp_fork_unlock_pcpu);
	sp_rcu_fork_parent();
}

static void sp_atfork_child(void)
{
	sp_rcu_fork_child_leaves();
	sp_large_reinit_lock();
	sp_arena_reinit_locks();
	sp_desc_reinit_locks();
	sp_failslab_fork_child();
	sp_cache_reinit_locks(sp_fork_child_pcpu);
	sp_rcu_fork_child();
}

static void sp_init_once(void)
{
	sp_harden_init();	/* before any cache, internal ones too */
	sp_failslab_init();
	sp_topology_init(sp_cpu_possible_count());
	sp_rcu_init();
	if (sp_arena_init() || sp_pcpu_init() || sp_kmalloc_init() ||
	    sp_large_init()) {
		sp_init_status = -ENOMEM;
		return;
	}
	pthread_atfork(sp_atfork_prepare, sp_atfork_parent, sp_atfork_child);
	__atomic_store_n(&sp_ready, true, __ATOMIC_RELEASE);
	/* after sp_ready: starting the export calls back into sp_init() */
	sp_export_init();
	sp_stats_print_init();
}

int sp_init_slow(void)
{
	pthread_once(&sp_init_once_ctl, sp_init_once);
	if (sp_init_status)
		errno = ENOMEM;
	return sp_init_status;
}

__attribute__((constructor)) static void sp_constructor(void)
{
	sp_init();
}

SEGPOOL_API const char *segpool_version(void)
{
	return CONFIG_SEGPOOL_VERSION;
}
