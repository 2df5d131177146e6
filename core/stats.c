// SPDX-License-Identifier: MIT
/*
 * core/stats.c - cache accounting: the info struct and the slabinfo dump.
 *
 * Figures are read under each node lock in turn, so each node's numbers are
 * consistent with each other; the cache-list lock keeps caches from being
 * destroyed while they are read.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <segpool/segpool.h>

#include "core/core.h"

/* Sum a cache's node figures into @info (cache-list lock held or cache pinned). */
static void sp_cache_collect(struct segpool_cache *c,
			     struct segpool_cache_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	info->object_size = c->object_size;
	info->stride = c->stride;
	info->align = c->align;
	info->objs_per_slab = c->objs_per_slab;
	info->pages_per_slab = 1U << c->order;
	for (int i = 0; i < sp_arena.nr_regions; i++) {
		struct sp_cache_node *n = &c->node[i];
		uint64_t slabs;

		pthread_mutex_lock(&n->lock);
		slabs = n->nr_partial + n->nr_full + n->nr_empty;
		info->active_objs += n->active_objs;
		info->total_slabs += slabs;
		info->active_slabs += n->nr_partial + n->nr_full;
		info->allocs += n->allocs;
		info->frees += n->frees;
		info->slabs_created += n->slabs_created;
		info->slabs_released += n->slabs_released;
		pthread_mutex_unlock(&n->lock);
	}
	info->alloc_failures = __atomic_load_n(&c->alloc_failures, __ATOMIC_RELAXED);
	info->total_objs = info->total_slabs * c->objs_per_slab;
	info->slab_bytes = info->total_slabs * sp_slab_bytes(c);
	if (c->pcpu) {
		struct sp_pcpu_stats st;
		uint64_t cached;

		sp_pcpu_read_stats(c->pcpu, &st);
		info->alloc_fastpath = st.alloc_fastpath;
		info->free_fastpath = st.free_fastpath;
		info->alloc_slowpath = st.stat[SP_STAT_ALLOC_SLOWPATH];
		info->free_slowpath = st.stat[SP_STAT_FREE_SLOWPATH];
		info->cpu_objs = st.objs_in_magazines;
		info->depot_objs = st.objs_in_depot;
		info->mag_size = st.mag_size;
		info->depot_max = st.depot_max;
		/*
		 * Application-level counts: the slab layer counted only what
		 * bypassed the magazines; add what the magazines served.
		 */
		info->allocs += st.alloc_fastpath + st.stat[SP_STAT_ALLOC_SLOWPATH];
		info->frees += st.free_fastpath + st.stat[SP_STAT_FREE_SLOWPATH];
		/* objects in magazines are free, though slabs count them used */
		cached = st.objs_in_magazines + st.objs_in_depot;
		info->active_objs = info->active_objs > cached ?
				    info->active_objs - cached : 0;
	}
}

SEGPOOL_API int segpool_cache_get_info(struct segpool_cache *cache,
				       struct segpool_cache_info *info)
{
	if (!cache || cache->magic != SP_CACHE_MAGIC || !info ||
	    info->size < sizeof(*info)) {
		errno = EINVAL;
		return -EINVAL;
	}
	sp_cache_collect(cache, info);
	return 0;
}

SEGPOOL_API const char *segpool_percpu_mode(void)
{
	if (sp_init())
		return "off (library not initialised)";
	return sp_pcpu_reason;
}

SEGPOOL_API int segpool_stats_dump(FILE *out)
{
	struct segpool_cache_info info;
	struct segpool_cache *c;
	int bad = 0;

	if (!out) {
		errno = EINVAL;
		return -EINVAL;
	}
	if (sp_init())
		return -ENOMEM;
	bad |= fprintf(out, "slabinfo - version: 2.1\n") < 0;
	bad |= fprintf(out, "# name            <active_objs> <num_objs> <objsize> "
		       "<objperslab> <pagesperslab> : tunables <limit> "
		       "<batchcount> <sharedfactor> : slabdata <active_slabs> "
		       "<num_slabs> <sharedavail>\n") < 0;
	pthread_mutex_lock(&sp_cache_list_lock);
	sp_list_for_each_entry(c, &sp_cache_list, list) {
		sp_cache_collect(c, &info);
		/*
		 * tunables: limit = objects a CPU slot holds at most (loaded
		 * and previous magazines), batchcount = objects moved per depot
		 * exchange (one magazine), sharedfactor = full magazines a
		 * depot keeps; sharedavail = objects in the depots.
		 */
		bad |= fprintf(out, "%-17s %6llu %6llu %6zu %4u %4u : tunables "
			       "%4u %4u %4u : slabdata %6llu %6llu %6llu\n",
			       c->name,
			       (unsigned long long)info.active_objs,
			       (unsigned long long)info.total_objs,
			       info.stride, info.objs_per_slab,
			       info.pages_per_slab, 2 * info.mag_size,
			       info.mag_size, info.depot_max,
			       (unsigned long long)info.active_slabs,
			       (unsigned long long)info.total_slabs,
			       (unsigned long long)info.depot_objs) < 0;
	}
	pthread_mutex_unlock(&sp_cache_list_lock);
	if (fflush(out) || bad) {
		errno = EIO;
		return -EIO;
	}
	return 0;
}
