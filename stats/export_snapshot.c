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
 * dump reads them.  Then the key table: every key segpool_stats_json()
 * writes for a cache, a cache's node and the health section, from the same
 * field lists (stats/snap.c, stats/health.c), with their values for each
 * cache (from its snapshot, sp_stats_snap_cache(), taken again) and for
 * the health section, so a reader has everything the library knows.
 */
#include <stdio.h>
#include <string.h>

#include <segpool/segpool.h>
#include <segpool/export.h>

#include "arena/arena.h"
#include "internal/init.h"
#include "internal/rculist.h"
#include "numa/region.h"
#include "numa/topology.h"
#include "percpu/magazine.h"
#include "percpu/pcpu.h"
#include "rcu/rcu.h"
#include "slab/slab.h"
#include "stats/export.h"
#include "stats/snap.h"

static uint32_t sp_export_nr_cache_keys(void);

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
	l->caches_offset =
		SP_ALIGN(l->nodes_offset + nodes, (size_t)SP_CACHE_LINE);
	l->cache_nodes_offset = l->caches_offset + recs;
	l->arenas_offset = l->cache_nodes_offset + cnodes;
	/* the key table: the field lists of the JSON (stats/snap.c) */
	l->nr_keys[0] = sp_export_nr_cache_keys();
	l->nr_keys[1] = (uint32_t)sp_nr_node_fields;
	l->nr_keys[2] = (uint32_t)sp_nr_health_fields;
	l->nr_keys[3] = (uint32_t)sp_nr_health_node_fields;
	l->keys_offset = l->arenas_offset + arenas;
	l->keys_size = (size_t)(l->nr_keys[0] + l->nr_keys[1] + l->nr_keys[2] +
				l->nr_keys[3]) *
		       sizeof(struct segpool_export_key);
	l->values_offset = l->keys_offset + l->keys_size;
	l->node_values_offset = l->values_offset +
				sp_export_values_size(l, capacity, false);
	l->health_values_offset = l->node_values_offset +
				  sp_export_values_size(l, capacity, true);
	l->health_values_size = ((size_t)l->nr_keys[2] +
				 (size_t)nr_nodes * l->nr_keys[3]) * 8 +
				SEGPOOL_EXPORT_STRINGS;
	l->size = SP_ALIGN(l->health_values_offset + l->health_values_size,
			   SP_PAGE_SIZE);
}

/* --- the key table: what segpool_stats_json() writes, from its lists ---- */

/* A cache's keys: its fields but the flags, the node totals, the counters. */
static uint32_t sp_export_nr_cache_keys(void)
{
	uint32_t n = 0;

	for (size_t i = 0; i < sp_nr_cache_fields; i++)
		n += sp_cache_fields[i].kind != SP_FIELD_FLAGS;
	return n + (uint32_t)sp_nr_node_fields + SP_CTR_NR;
}

static struct segpool_export_key *sp_export_key(struct segpool_export_key *k,
						const char *name,
						enum sp_field_kind kind)
{
	snprintf(k->name, sizeof(k->name), "%s", name);
	k->kind = kind == SP_FIELD_BOOL ? SEGPOOL_EXPORT_KEY_BOOL :
		  kind == SP_FIELD_STR ? SEGPOOL_EXPORT_KEY_STR :
		  SEGPOOL_EXPORT_KEY_U64;
	return k + 1;
}

void sp_export_collect_keys(void *area, const struct sp_export_layout *l)
{
	struct segpool_export_key *k =
		(struct segpool_export_key *)((char *)area + l->keys_offset);
	uint64_t *v = (uint64_t *)((char *)area + l->health_values_offset);
	char *str = (char *)(v + l->nr_keys[2] + (size_t)l->nr_nodes *
			     l->nr_keys[3]);
	struct segpool_health h;
	size_t used = 0;

	for (size_t i = 0; i < sp_nr_cache_fields; i++)
		if (sp_cache_fields[i].kind != SP_FIELD_FLAGS)
			k = sp_export_key(k, sp_cache_fields[i].name,
					  sp_cache_fields[i].kind);
	for (size_t i = 0; i < sp_nr_node_fields; i++)
		k = sp_export_key(k, sp_node_fields[i].name, SP_FIELD_U64);
	for (int i = 0; i < SP_CTR_NR; i++)
		k = sp_export_key(k, sp_ctr_name[sp_ctr_order[i]],
				  SP_FIELD_U64);
	for (size_t i = 0; i < sp_nr_node_fields; i++)
		k = sp_export_key(k, sp_node_fields[i].name, SP_FIELD_U64);
	for (size_t i = 0; i < sp_nr_health_fields; i++)
		k = sp_export_key(k, sp_health_fields[i].name,
				  sp_health_fields[i].kind);
	for (size_t i = 0; i < sp_nr_health_node_fields; i++)
		k = sp_export_key(k, sp_health_node_fields[i].name,
				  sp_health_node_fields[i].kind);

	/* the health values: numbers, or the offset of a string */
	memset(v, 0, l->health_values_size);
	sp_stats_health_read(&h);
	for (size_t i = 0; i < sp_nr_health_fields; i++) {
		const struct sp_health_field *f = &sp_health_fields[i];
		int n;

		if (f->kind != SP_FIELD_STR) {
			*v++ = f->num(&h);
			continue;
		}
		n = snprintf(str + used, SEGPOOL_EXPORT_STRINGS - used, "%s",
			     f->str(&h));
		*v++ = (uint64_t)(l->health_values_offset +
				  l->health_values_size -
				  SEGPOOL_EXPORT_STRINGS + used);
		if (n >= 0 && used + (size_t)n + 1 < SEGPOOL_EXPORT_STRINGS)
			used += (size_t)n + 1;
	}
	for (uint32_t n = 0; n < l->nr_nodes; n++)
		for (size_t i = 0; i < sp_nr_health_node_fields; i++)
			*v++ = n < h.nr_nodes ?
			       sp_health_node_fields[i].get(&h.node[n]) : 0;
}

/* The values of cache @c's keys, in the table's order (its snapshot @s). */
static void sp_export_cache_values(struct segpool_cache *c,
				   struct sp_cache_snap *s, uint64_t *cv,
				   uint64_t *nv,
				   const struct sp_export_layout *l)
{
	sp_stats_snap_cache(c, s);
	for (size_t i = 0; i < sp_nr_cache_fields; i++)
		if (sp_cache_fields[i].kind != SP_FIELD_FLAGS)
			*cv++ = sp_cache_fields[i].get(s);
	for (size_t i = 0; i < sp_nr_node_fields; i++)
		*cv++ = sp_node_field_total(&sp_node_fields[i], s);
	for (int i = 0; i < SP_CTR_NR; i++)
		*cv++ = s->ctr[sp_ctr_order[i]];
	for (uint32_t n = 0; n < l->nr_nodes; n++)
		for (size_t i = 0; i < sp_nr_node_fields; i++)
			*nv++ = (int)n < s->nr_nodes ?
				sp_node_fields[i].get(s, &s->node[n]) : 0;
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
		struct sp_region *r = &sp_space.region[i];
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
	memcpy(rec->name, c->name,
	       strnlen(c->name, SEGPOOL_EXPORT_NAME_LEN - 1));
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
#define SP_EXPORT_CTR_SEGPOOL_CTR_EXPORT(key, id) \
	rec->key = st.stat[SP_STAT_##id];
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
		o->node_id = sp_space.region[i].node;
		pthread_mutex_lock(&n->lock);
		o->partial_slabs = n->nr_partial + n->nr_sampled;
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

/* The snapshot of one cache for its values: the publisher's alone (the
 * callers hold the publish lock), too large for its stack. */
static struct sp_cache_snap sp_export_snap;
static struct sp_node_snap sp_export_snap_nodes[SP_MAX_NODES] __sp_big;

uint32_t sp_export_collect(void *area, const struct sp_export_layout *l)
{
	char *base = area;
	struct segpool_export_cache *recs =
		(struct segpool_export_cache *)(base + l->caches_offset);
	struct segpool_export_cache_node *cnodes =
		(struct segpool_export_cache_node *)(base +
						     l->cache_nodes_offset);
	uint64_t *cvals = (uint64_t *)(base + l->values_offset);
	uint64_t *nvals = (uint64_t *)(base + l->node_values_offset);
	struct segpool_cache *c;
	uint32_t n = 0;

	sp_export_nodes((struct segpool_export_node *)(base + l->nodes_offset),
			l->nr_nodes);
	sp_export_collect_keys(area, l);
	sp_rcu_walk_begin();
	/*
	 * the program's caches first, the library's after, as sp_stats_walk()
	 */
	for (int pass = 0; pass < 2; pass++)
	sp_list_for_each_entry_rcu(c, &sp_cache_list, list) {
		if (!(c->flags & (SP_CACHE_KMALLOC | SP_CACHE_INTERNAL)) !=
		    !pass)
			continue;
		if (n < l->capacity) {
			sp_export_cache_sums(c, &recs[n]);
			sp_export_cache_nodes(c,
					      &cnodes[(size_t)n * l->nr_nodes],
					      l->nr_nodes);
			sp_export_snap.node = sp_export_snap_nodes;
			sp_export_snap.slot = NULL;
			sp_export_snap.nr_slots = 0;
			sp_export_cache_values(
				c, &sp_export_snap,
				cvals + (size_t)n * l->nr_keys[0],
				nvals + (size_t)n * l->nr_nodes * l->nr_keys[1],
				l);
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
		(struct segpool_export_arena *)((char *)area +
						l->arenas_offset),
		l->capacity,
		0,
	};

	sp_bump_walk(sp_export_arena, &w);
	return w.n;
}
