// SPDX-License-Identifier: MIT
/*
 * stats/pools.c - the walkers of stats/pools.h.
 *
 * A fixed table filled at most once per walker; a walker is published
 * with a release store and read with acquire loads, so a rendering that
 * races a registration sees it whole or not at all.
 */
#include <stdbool.h>

#include "stats/pools.h"

#define SP_POOL_WALKERS		4

static sp_pool_walk_fn *sp_pool_walkers[SP_POOL_WALKERS];

void sp_stats_pools_register(sp_pool_walk_fn *walk)
{
	for (int i = 0; i < SP_POOL_WALKERS; i++) {
		sp_pool_walk_fn *expect = NULL;

		if (__atomic_load_n(&sp_pool_walkers[i], __ATOMIC_ACQUIRE) ==
		    walk)
			return;
		if (__atomic_compare_exchange_n(&sp_pool_walkers[i], &expect,
						walk, false, __ATOMIC_RELEASE,
						__ATOMIC_ACQUIRE) ||
		    expect == walk)
			return;
	}
}

void sp_stats_pools_walk(sp_pool_visit_fn *visit, void *arg)
{
	for (int i = 0; i < SP_POOL_WALKERS; i++) {
		sp_pool_walk_fn *w = __atomic_load_n(&sp_pool_walkers[i],
						     __ATOMIC_ACQUIRE);

		if (w)
			w(visit, arg);
	}
}
