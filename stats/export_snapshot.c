// SPDX-License-Identifier: MIT
/*
 * stats/export_snapshot.c - gather one snapshot of every cache for the export.
 *
 * Runs on the publisher thread (and once in segpool_export_start()), into a
 * private staging area laid out like the segment; stats/export.c then copies
 * it into the segment under the seqlock.  The cache-list lock is held for
 * the whole walk, so no cache is created or destroyed under it.  A cache's
 * sums come from segpool_cache_get_info(), so they are what the API says;
 * its per-node figures and per-CPU event counters are read right after,
 * one node lock at a time (depots are read without one), the same way the
 * dump reads them.
 */
#include <string.h>

#include <segpool/segpool.h>
#include <segpool/export.h>

#include "arena/arena.h"
#include "core/core.h"
#include "internal/rculist.h"
#include "numa/region.h"
#include "numa/topology.h"
#include "percpu/magazine.h"
#include "percpu/pcpu.h"
#include "rcu/rcu.h"
#include "slab/slab.h"
#include "stats/export.h"

void sp_export_layout(struct sp_export_layout *l, uint32_t nr_nodes,
		      uint32_t capacity)
{
	size_t nodes = (size_t)nr_nodes * sizeof(struct segpool_export_node);
	size_t recs = (size_t)capacity * sizeof(struct segpool_export_cache);
	size_t cnodes = (size_t)capacity * nr_nodes *
			sizeof(struct segpool_export_cache_node);
	size_t arenas = (size_t)capacity * sizeof(struct segpool_export_arena);

	l->nr_nodes = nr_nodes;
	l->capacity = capacity;
	l->nodes_offset = sizeof(struct segpool_export_header);
	l->caches_offset = SP_ALIGN(l->nodes_offset + nodes, (size_t)SP_CACHE_LINE);
	l->cache_nodes_offset = l->caches_offset + recs;
	l->arenas_offset = l->cache_nodes_offset + cnodes;
	l->size = SP_ALIGN(l->arenas_offset + arenas, SP_PAGE_SIZE);
}

uint32_t sp_export_count_caches(void)
{
	struct segpool_cache *c;
	uint32_t n = 0;

	sp_rcu_walk_begin();
	sp_list_for_each_entry_rcu(c, &sp_cache_list, list)
		n++;
	sp_rcu_walk_end();
	return n;
}

/* The region of each node: what it reserved, committed and handed out. */
static void sp_export_nodes(struct segpool_export_node *out, uint32_t nr)
{
	for (uint32_t i = 0; i < nr; i++) {
		struct sp_region *r = &sp_arena.region[i];
		struct segpool_export_node *o = &out[i];

		memset(o, 0, sizeof(*o));
		o->node_id = r->node;
		pthread_mutex_lock(&r->lock);
		o->bound = r->bound;
		o->pages_reserved = r->nr_pages;
		o->pages_committed = r->committed;
		o->pages_used = r->pages_used;
		o->commit_failures = r->commit_failures;
		o->pages_dirty = r->dirty_pages;
		o->pages_purged = r->purged_pages;
		pthread_mutex_unlock(&r->lock);
		o->huge_bytes = sp_region_huge_bytes((int)i);
	}
}

/*
 * The cache's per-CPU layer: a new cache is listed before its layer is set
 * up, which is then stored with release (core/cache_api.c).
 */
static struct sp_pcpu_cache *sp_export_pcpu(struct segpool_cache *c)
{
	return __atomic_load_n(&c->pcpu, __ATOMIC_ACQUIRE);
}

static uint32_t sp_export_cache_flags(struct segpool_cache *c)
{
	uint32_t f = 0;

	if (c->flags & SP_CACHE_KMALLOC)
		f |= SEGPOOL_EXPORT_CACHE_KMALLOC;
	if (c->flags & SP_CACHE_INTERNAL)
		f |= SEGPOOL_EXPORT_CACHE_INTERNAL;
	if (c->flags & SEGPOOL_HWCACHE_ALIGN)
		f |= SEGPOOL_EXPORT_CACHE_HWCACHE_ALIGN;
	if (c->flags & SEGPOOL_TYPESAFE_BY_RCU)
		f |= SEGPOOL_EXPORT_CACHE_TYPESAFE_BY_RCU;
	if (c->ctor)
		f |= SEGPOOL_EXPORT_CACHE_CTOR;
	if (sp_export_pcpu(c))
		f |= SEGPOOL_EXPORT_CACHE_PERCPU;
	return f;
}

/* The sums, as segpool_cache_get_info() gives them, and the per-CPU events. */
static void sp_export_cache_sums(struct segpool_cache *c,
				 struct segpool_export_cache *rec)
{
	struct segpool_cache_info info = { .size = sizeof(info) };
	struct sp_pcpu_cache *pc = sp_export_pcpu(c);

	memset(rec, 0, sizeof(*rec));
	memcpy(rec->name, c->name, strnlen(c->name, SEGPOOL_EXPORT_NAME_LEN - 1));
	rec->flags = sp_export_cache_flags(c);
	if (segpool_cache_get_info(c, &info))
		return;
	rec->objs_per_slab = info.objs_per_slab;
	rec->pages_per_slab = info.pages_per_slab;
	rec->mag_size = info.mag_size;
	rec->depot_max = info.depot_max;
	rec->object_size = info.object_size;
	rec->stride = info.stride;
	rec->align = info.align;
	rec->active_objs = info.active_objs;
	rec->total_objs = info.total_objs;
	rec->active_slabs = info.active_slabs;
	rec->total_slabs = info.total_slabs;
	rec->slab_bytes = info.slab_bytes;
	rec->allocs = info.allocs;
	rec->frees = info.frees;
	rec->slabs_created = info.slabs_created;
	rec->slabs_released = info.slabs_released;
	rec->alloc_failures = info.alloc_failures;
	rec->alloc_failslab = info.alloc_failslab;
	rec->alloc_fastpath = info.alloc_fastpath;
	rec->free_fastpath = info.free_fastpath;
	rec->alloc_slowpath = info.alloc_slowpath;
	rec->free_slowpath = info.free_slowpath;
	rec->cpu_objs = info.cpu_objs;
	rec->depot_objs = info.depot_objs;
	if (pc) {
		struct sp_pcpu_stats st;

		sp_pcpu_read_stats(pc, &st);
#define SP_EXPORT_CTR_SEGPOOL_CTR_HIT(key, id)
#define SP_EXPORT_CTR_SEGPOOL_CTR_INFO(key, id)
#define SP_EXPORT_CTR_SEGPOOL_CTR_EXPORT(key, id) rec->key = st.stat[SP_STAT_##id];
#define SP_EXPORT_CTR_SEGPOOL_CTR_LIBRARY(key, id)
#define SP_EXPORT_CTR(key, id, class, unit, doc) SP_EXPORT_CTR_##class(key, id)
		SEGPOOL_PCPU_COUNTERS(SP_EXPORT_CTR)
#undef SP_EXPORT_CTR
		rec->depot_full_mags = st.full_in_depot;
		rec->depot_empty_mags = st.empty_in_depot;
	}
}

/* Each node's lists and counters under its lock, then its depot's. */
static void sp_export_cache_nodes(struct segpool_cache *c,
				  struct segpool_export_cache_node *out,
				  uint32_t nr)
{
	struct sp_pcpu_cache *pc = sp_export_pcpu(c);

	for (uint32_t i = 0; i < nr; i++) {
		struct sp_cache_node *n = &c->node[i];
		struct segpool_export_cache_node *o = &out[i];

		memset(o, 0, sizeof(*o));
		o->node_id = sp_arena.region[i].node;
		pthread_mutex_lock(&n->lock);
		o->partial_slabs = n->nr_partial;
		o->full_slabs = n->nr_full;
		o->empty_slabs = n->nr_empty;
		o->objects = n->active_objs;
		o->allocs = n->allocs;
		o->frees = n->frees;
		o->xfer_allocs = n->xfer_allocs;
		o->xfer_frees = n->xfer_frees;
		o->slabs_created = n->slabs_created;
		o->slabs_released = n->slabs_released;
		pthread_mutex_unlock(&n->lock);
		if (pc) {
			struct sp_depot_info di;

			sp_depot_read(pc, (int)i, &di);
			o->depot_objs = di.objs;
			o->depot_full_mags = di.full;
			o->depot_empty_mags = di.empty;
		}
	}
}

uint32_t sp_export_collect(void *area, const struct sp_export_layout *l)
{
	char *base = area;
	struct segpool_export_cache *recs =
		(struct segpool_export_cache *)(base + l->caches_offset);
	struct segpool_export_cache_node *cnodes =
		(struct segpool_export_cache_node *)(base + l->cache_nodes_offset);
	struct segpool_cache *c;
	uint32_t n = 0;

	sp_export_nodes((struct segpool_export_node *)(base + l->nodes_offset),
			l->nr_nodes);
	sp_rcu_walk_begin();
	sp_list_for_each_entry_rcu(c, &sp_cache_list, list) {
		if (n < l->capacity) {
			sp_export_cache_sums(c, &recs[n]);
			sp_export_cache_nodes(c, &cnodes[(size_t)n * l->nr_nodes],
					      l->nr_nodes);
		}
		n++;
	}
	sp_rcu_walk_end();
	return n;
}

/* --- arenas -------------------------------------------------------------- */

struct sp_export_arena_walk {
	struct segpool_export_arena *recs;
	uint32_t capacity, n;
};

static void sp_export_arena(const struct sp_bump_snap *s, void *arg)
{
	struct sp_export_arena_walk *w = arg;
	struct segpool_export_arena *r;

	if (w->n >= w->capacity) {
		w->n++;
		return;
	}
	r = &w->recs[w->n++];
	memset(r, 0, sizeof(*r));
	memcpy(r->name, s->name, strnlen(s->name, SEGPOOL_EXPORT_NAME_LEN - 1));
	r->node = s->info.node;
	r->flags = (uint32_t)s->info.flags;
	r->in_use = s->info.in_use;
	r->peak = s->info.peak;
	r->held = s->info.held;
	r->chunks = s->info.chunks;
	r->kept_chunks = s->info.kept_chunks;
	r->kept_bytes = s->info.kept_bytes;
	r->chunks_created = s->info.chunks_created;
	r->chunks_released = s->info.chunks_released;
	r->resets = s->info.resets;
	r->rewinds = s->info.rewinds;
	r->alloc_failures = s->info.alloc_failures;
	r->limit = s->info.limit;
	r->keep = s->info.keep;
}

uint32_t sp_export_collect_arenas(void *area, const struct sp_export_layout *l)
{
	struct sp_export_arena_walk w = {
		(struct segpool_export_arena *)((char *)area + l->arenas_offset),
		l->capacity, 0,
	};

	sp_bump_walk(sp_export_arena, &w);
	return w.n;
}
