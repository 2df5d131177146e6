/* SPDX-License-Identifier: MIT */
/*
 * mempool/mempool.h - reserves above the caches (private).
 *
 *   mempool/mempool.c  segpool_mempool_*: a reserve of @min_nr elements
 *                      behind an allocator (segpool/mempool.h)
 *   mempool/sheaf.c    segpool_sheaf_*: caller-owned arrays of objects
 *                      taken in advance (segpool/sheaf.h)
 *
 * Both use only the public cache and kmalloc calls; what they add to the
 * statistics they report through stats/pools.h.
 *
 * Locks: a pool's lock (its reserve), the pool-list lock and the
 * sheaf-list lock are leaves: nothing else of the library is taken under
 * them except the allocations of the size classes and the frees the pool's
 * functions make, which take only slab and per-CPU locks below them.  The
 * pool-list lock is never taken under a pool's lock.
 */
#ifndef SP_MEMPOOL_MEMPOOL_H
#define SP_MEMPOOL_MEMPOOL_H

#include "stats/pools.h"

#define SP_MEMPOOL_MAGIC	0x3e3b001fU
#define SP_SHEAF_MAGIC		0x5eaf0b1eU

/* --- mempool/mempool.c --- */
/* The stats walker: one "mempool" record per pool. */
SP_INTERNAL void sp_mempool_walk(sp_pool_visit_fn *visit, void *arg);

/* --- mempool/sheaf.c --- */
/* The stats walker: one "sheaves" record per cache with sheaves out. */
SP_INTERNAL void sp_sheaf_walk(sp_pool_visit_fn *visit, void *arg);

#endif /* SP_MEMPOOL_MEMPOOL_H */
