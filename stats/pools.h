/* SPDX-License-Identifier: MIT */
/*
 * stats/pools.h - statistics of things that live above the caches
 * (mempool reserves, outstanding sheaves: mempool/), for the detail dump
 * and the JSON (private).
 *
 * core/ cannot include from the folders after it, so those register a
 * walker here when their first object appears; the renderings call every
 * walker, which reports one record per pool (or per cache with sheaves):
 * a kind, a name and a few named counters.  A program that never makes a
 * pool has no walker and its dumps have no such section.
 */
#ifndef SP_STATS_POOLS_H
#define SP_STATS_POOLS_H

#include <stddef.h>
#include <stdint.h>

#include "internal/compiler.h"

#define SP_POOL_NAME_MAX	96
#define SP_POOL_MAX_KEYS	8

/* struct sp_pool_snap - one record: "<kind> <name>" and its counters. */
struct sp_pool_snap {
	const char *kind;			/* "mempool", "sheaves" */
	char name[SP_POOL_NAME_MAX];		/* the pool's or the cache's */
	size_t nr;				/* counters in keys[], vals[] */
	const char *keys[SP_POOL_MAX_KEYS];
	uint64_t vals[SP_POOL_MAX_KEYS];
};

typedef void (sp_pool_visit_fn)(const struct sp_pool_snap *snap, void *arg);
/* A walker: call @visit for every record, with no segpool cache lock held
 * by the caller; @visit only formats. */
typedef void (sp_pool_walk_fn)(sp_pool_visit_fn *visit, void *arg);

/* sp_stats_pools_register() - add a walker (idempotent; at most 4). */
SP_INTERNAL void sp_stats_pools_register(sp_pool_walk_fn *walk);
/* sp_stats_pools_walk() - run every registered walker. */
SP_INTERNAL void sp_stats_pools_walk(sp_pool_visit_fn *visit, void *arg);

#endif /* SP_STATS_POOLS_H */
