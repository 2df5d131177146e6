/* SPDX-License-Identifier: MIT */
/*
 * segpool/fault.h - fault injection for the application's own tests.
 *
 * The kernel's failslab, in userspace: make chosen cache allocations fail
 * with ENOMEM so that a program's out-of-memory paths run in its tests.
 * Set from the environment before the program starts,
 *
 *   SEGPOOL_FAILSLAB=probability=10,interval=100,times=5,cache=conn_cache
 *
 * (any subset of the keys, in any order; or the kernel's boot form
 * "<interval>,<probability>,<space>,<times>"), or at run time with
 * segpool_failslab_set().  The attributes mean what they mean in the
 * kernel's Documentation/fault-injection: an allocation is eligible when
 * its cache matches the filter; while more than its object size is left
 * of @space, an eligible allocation succeeds and uses its size up; after
 * that every @interval-th one is a candidate, and a candidate fails with
 * @probability percent, until @times failures have been injected.  The random
 * choice uses its own generator, seeded from @seed: the same settings and the
 * same sequence of calls fail the same calls, every run.
 *
 * Covered: segpool_cache_alloc(), segpool_cache_alloc_node(),
 * segpool_cache_alloc_bulk() (one decision per call, as the kernel does)
 * and the size-class allocations of segpool_malloc() and friends (caches
 * named "kmalloc-<size>"); not the large blocks above
 * SEGPOOL_KMALLOC_MAX_CACHE_SIZE.  Each injected failure is counted in the
 * cache's alloc_failslab statistic (struct segpool_cache_info, the detail
 * dump and the JSON), not in alloc_failures.
 */
#ifndef SEGPOOL_FAULT_H
#define SEGPOOL_FAULT_H

#include <segpool/compiler.h>
#include <segpool/slab.h>

SEGPOOL_BEGIN_DECLS

/**
 * struct segpool_failslab - when allocations fail on purpose.
 * @probability: percent of candidate allocations that fail, 0 to 100
 *               (0 disables injection).
 * @verbose:     0: silent; 1: one line on stderr per injected failure.
 * @interval:    only every @interval-th eligible allocation (after @space)
 *               is a candidate; 0 and 1 mean every one.
 * @times:       failures still to inject; -1 for no limit.  Counts down.
 * @space:       budget in bytes: while more than its object size is left,
 *               an eligible allocation succeeds and subtracts its size.
 * @seed:        seed of the generator behind @probability; 0 picks a fixed
 *               default.
 * @cache:       only allocations from the cache of this name are eligible;
 *               empty: every cache.
 */
struct segpool_failslab {
	unsigned int probability;
	unsigned int verbose;
	unsigned long interval;
	long times;
	unsigned long space;
	unsigned long long seed;
	char cache[SEGPOOL_CACHE_NAME_MAX + 1];
};

/**
 * segpool_failslab_set() - start (or change) fault injection.
 * @fs: the settings; copied.  The eligible-call count and the generator
 *      restart from them.
 *
 * Context: any thread; allocations racing the change see the old or the
 * new settings.
 * Return: 0, or -EINVAL (errno EINVAL) for a NULL @fs, a @probability above
 * 100, @times below -1, or a @cache name that is not NUL-terminated.
 */
SEGPOOL_API int segpool_failslab_set(const struct segpool_failslab *fs);

/**
 * segpool_failslab_get() - the settings in force, with @times and @space as
 * they have counted down.
 * @fs: where to store them.
 *
 * Context: any thread.
 * Return: 1 when injection is active, 0 when it is not (@fs then holds the
 * last settings, or zeros), -EINVAL (errno EINVAL) for a NULL @fs.
 */
SEGPOOL_API int segpool_failslab_get(struct segpool_failslab *fs);

/**
 * segpool_failslab_disable() - stop fault injection.
 *
 * Context: any thread.
 */
SEGPOOL_API void segpool_failslab_disable(void);

SEGPOOL_END_DECLS

#endif /* SEGPOOL_FAULT_H */
