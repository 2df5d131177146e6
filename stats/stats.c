// SPDX-License-Identifier: MIT
/*
 * stats/stats.c - cache accounting: the info struct and the slabinfo dump.
 *
 * Both are renderings of the snapshot of stats/snap.c; so are the
 * per-cache detail (stats/detail.c) and the JSON (stats/json.c),
 * which therefore always agree with these.  The slabinfo dump is formatted
 * in memory while the cache-list lock keeps caches from being destroyed, and
 * written once the lock is released.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <segpool/segpool.h>

#include "internal/init.h"
#include "slab/slab.h"
#include "stats/snap.h"

/*
 * Fill @info from snapshot @s (field by field: see
 * Documentation/reference/stats-keys.md).
 */
static void sp_info_from_snap(const struct sp_cache_snap *s,
			      struct segpool_cache_info *info)
{
	const struct sp_node_snap *n = &s->sum;

	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	info->object_size = s->object_size;
	info->stride = s->stride;
	info->align = s->align;
	info->objs_per_slab = s->objs_per_slab;
	info->pages_per_slab = 1U << s->order;
	info->active_objs = sp_node_active(n);
	info->total_slabs = sp_node_slabs(n);
	info->active_slabs = n->partial + n->full;
	info->total_objs = info->total_slabs * s->objs_per_slab;
	info->slab_bytes = info->total_slabs * (SP_PAGE_SIZE << s->order);
	/* application-level counts: the slab layer's plus the magazines' */
	info->allocs = sp_node_allocs(n);
	info->frees = sp_node_frees(n);
	info->slabs_created = n->slabs_created;
	info->slabs_released = n->slabs_released;
	info->alloc_failures = s->alloc_failures;
	info->alloc_failslab = s->alloc_failslab;
	info->alloc_fastpath = s->ctr[SP_CTR_ALLOC_FASTPATH];
	info->free_fastpath = s->ctr[SP_CTR_FREE_FASTPATH];
	info->alloc_slowpath = s->ctr[SP_STAT_ALLOC_SLOWPATH];
	info->free_slowpath = s->ctr[SP_STAT_FREE_SLOWPATH];
	info->cpu_objs = n->cpu_objs;
	info->depot_objs = n->depot_objs;
	info->mag_size = s->mag_size;
	info->depot_max = s->depot_max;
}

SEGPOOL_API int segpool_cache_get_info(struct segpool_cache *cache,
				       struct segpool_cache_info *info)
{
	struct sp_cache_snap s;

	if (!cache || cache->magic != SP_CACHE_MAGIC || !info ||
	    info->size < sizeof(*info)) {
		sp_cache_check_dead(cache, "info of", NULL);
		errno = EINVAL;
		return -EINVAL;
	}
	/* sums only: no per-node or per-slot storage */
	s.node = NULL;
	s.slot = NULL;
	s.nr_slots = 0;
	sp_stats_snap_cache(cache, &s);
	sp_info_from_snap(&s, info);
	return 0;
}

SEGPOOL_API const char *segpool_percpu_mode(void)
{
	if (sp_init())
		return "off (library not initialised)";
	return sp_pcpu_reason;
}

struct sp_slabinfo_walk {
	struct sp_sbuf *b;
	struct sp_fold fold;
};

/* One slabinfo row: the name padded to 17 columns, then the numbers. */
static void sp_slabinfo_row(const struct sp_cache_snap *s, void *arg)
{
	struct sp_slabinfo_walk *w = arg;
	struct sp_sbuf *b = w->b;
	uint64_t v[SP_SI_NR];

	if (sp_fold_take(&w->fold, s))
		return;
	sp_slabinfo_of(s, v);
	sp_sbuf_printf(b, "%-17s %6llu %6llu %6llu %4llu %4llu : tunables "
		       "%4llu %4llu %4llu : slabdata %6llu %6llu %6llu\n",
		       s->name, (unsigned long long)v[SP_SI_ACTIVE_OBJS],
		       (unsigned long long)v[SP_SI_NUM_OBJS],
		       (unsigned long long)v[SP_SI_OBJSIZE],
		       (unsigned long long)v[SP_SI_OBJPERSLAB],
		       (unsigned long long)v[SP_SI_PAGESPERSLAB],
		       (unsigned long long)v[SP_SI_LIMIT],
		       (unsigned long long)v[SP_SI_BATCHCOUNT],
		       (unsigned long long)v[SP_SI_SHAREDFACTOR],
		       (unsigned long long)v[SP_SI_ACTIVE_SLABS],
		       (unsigned long long)v[SP_SI_NUM_SLABS],
		       (unsigned long long)v[SP_SI_SHAREDAVAIL]);
}

int sp_stats_fmt_slabinfo(struct sp_sbuf *b, unsigned int flags)
{
	struct sp_slabinfo_walk w = { b, SP_FOLD_INIT(flags) };
	int ret;

	sp_sbuf_printf(b, "slabinfo - version: 2.1\n");
	sp_sbuf_printf(b,
		       "# name            <active_objs> <num_objs> <objsize> "
		       "<objperslab> <pagesperslab> : tunables <limit> "
		       "<batchcount> <sharedfactor> : slabdata <active_slabs> "
		       "<num_slabs> <sharedavail>\n");
	ret = sp_stats_walk(NULL, false, sp_slabinfo_row, &w);
	sp_fold_finish(&w.fold, b);
	return ret < 0 ? ret : 0;
}

SEGPOOL_API int segpool_stats_dump(FILE *out)
{
	struct sp_sbuf b = SP_SBUF_INIT;
	int ret;

	ret = sp_stats_check_args(out, 0);
	if (ret)
		return ret;
	ret = sp_stats_fmt_slabinfo(&b, 0);
	if (ret < 0) {
		sp_sbuf_free(&b);
		errno = -ret;
		return ret;
	}
	return sp_sbuf_finish(&b, out);
}
