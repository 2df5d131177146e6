// SPDX-License-Identifier: MIT
/*
 * tools/segpool-top/json.c - --json: the snapshot as the library's
 * statistics document.
 *
 * segpool-top writes the document segpool_stats_json() writes (schema
 * SP_JSON_SCHEMA, Documentation/reference/stats-json.md), with the same writer
 * (internal/json.c), the same key names and the same units (bytes, not
 * pages; true/false for yes/no), filled from the export segment: the keys
 * the segment carries, "source": "export", and an "export" object saying
 * which process and snapshot it was.  So one reader reads both, and the
 * schema test (selftests/api/test_json_schema.c) checks both against the one
 * documented list.  A segment with the key table (include/segpool/export.h)
 * carries every key the library writes for a cache, its nodes and the
 * health section, named from the library's own field lists: those are
 * written from the table, in its order, so the two documents have the
 * same keys at every level; a segment of before the table gets the keys
 * its records hold.
 */
#include <errno.h>
#include <string.h>

#include "internal/json.h"
#include <segpool/arena.h>
#include "tools/segpool-top/top.h"

static void top_json_sink(void *arg, const char *s, size_t n)
{
	fwrite(s, 1, n, arg);
}

/* The library's flag names; "percpu" and "ctor" are booleans of their own. */
static void top_json_flags(struct sp_json *j, uint32_t flags)
{
	sp_json_open(j, "flags", '[', true);
	for (size_t b = 0; b < top_cache_nflags; b++) {
		const char *name = top_cache_flag_names[b];

		if ((flags & (1U << b)) && strcmp(name, "percpu") &&
		    strcmp(name, "ctor"))
			sp_json_str(j, NULL, name);
	}
	sp_json_close(j);
}

static bool top_flag(uint32_t flags, const char *name)
{
	for (size_t b = 0; b < top_cache_nflags; b++)
		if (!strcmp(top_cache_flag_names[b], name))
			return flags & (1U << b);
	return false;
}

/* The slabinfo columns, as segpool_stats_dump() prints them. */
static void top_json_slabinfo(struct sp_json *j,
			      const struct segpool_export_cache *c)
{
	sp_json_open(j, "slabinfo", '{', true);
	sp_json_u64(j, "active_objs", c->active_objs);
	sp_json_u64(j, "num_objs", c->total_objs);
	sp_json_u64(j, "objsize", c->stride);
	sp_json_u64(j, "objperslab", c->objs_per_slab);
	sp_json_u64(j, "pagesperslab", c->pages_per_slab);
	sp_json_u64(j, "limit", 2ULL * c->mag_size);
	sp_json_u64(j, "batchcount", c->mag_size);
	sp_json_u64(j, "sharedfactor", c->depot_max);
	sp_json_u64(j, "active_slabs", c->active_slabs);
	sp_json_u64(j, "num_slabs", c->total_slabs);
	sp_json_u64(j, "sharedavail", c->depot_objs);
	sp_json_close(j);
}

/* The per-node slab figures of one cache node record. */
static void top_json_cnode(struct sp_json *j,
			   const struct segpool_export_cache_node *n)
{
	sp_json_open(j, NULL, '{', true);
	sp_json_int(j, "node", n->node_id);
	sp_json_u64(j, "slabs", n->partial_slabs + n->full_slabs +
		    n->empty_slabs);
	sp_json_u64(j, "partial_slabs", n->partial_slabs);
	sp_json_u64(j, "full_slabs", n->full_slabs);
	sp_json_u64(j, "empty_slabs", n->empty_slabs);
	sp_json_u64(j, "depot_objs", n->depot_objs);
	sp_json_u64(j, "depot_full_mags", n->depot_full_mags);
	sp_json_u64(j, "depot_empty_mags", n->depot_empty_mags);
	sp_json_u64(j, "alloc_direct", n->allocs);
	sp_json_u64(j, "free_direct", n->frees);
	sp_json_u64(j, "fill_objs", n->xfer_allocs);
	sp_json_u64(j, "flush_objs", n->xfer_frees);
	sp_json_u64(j, "alloc_slab", n->slabs_created);
	sp_json_u64(j, "free_slab", n->slabs_released);
	sp_json_close(j);
}

/* @n keys from @k with values @v, as their kind says. */
static void top_json_keys(struct sp_json *j, const struct top_snap *s,
			  const struct segpool_export_key *k, const uint64_t *v,
			  uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if (k[i].kind == SEGPOOL_EXPORT_KEY_BOOL)
			sp_json_bool(j, k[i].name, v[i] != 0);
		else if (k[i].kind == SEGPOOL_EXPORT_KEY_STR)
			sp_json_str(j, k[i].name, top_snap_string(s, v[i]));
		else
			sp_json_u64(j, k[i].name, v[i]);
	}
}

/*
 * A cache from the key table: the keys and order of segpool_stats_json(),
 * the name, slabinfo and flags from the record.
 */
static void top_json_cache_keys(struct sp_json *j, const struct top_snap *s,
				size_t i)
{
	const struct segpool_export_cache *c = &s->caches[i];
	const struct segpool_export_cache_node *cn = top_snap_cache_nodes(s, i);
	uint32_t nn = s->hdr.nr_nodes;

	sp_json_open(j, NULL, '{', false);
	sp_json_str(j, "name", c->name);
	top_json_slabinfo(j, c);
	top_json_flags(j, c->flags);
	top_json_keys(j, s, s->keys, s->vals + i * s->nkeys[0], s->nkeys[0]);
	sp_json_open(j, "nodes", '[', false);
	for (uint32_t n = 0; n < nn; n++) {
		sp_json_open(j, NULL, '{', true);
		sp_json_int(j, "node", cn[n].node_id);
		top_json_keys(j, s, s->keys + s->nkeys[0],
			      s->nvals + (i * nn + n) * s->nkeys[1],
			      s->nkeys[1]);
		sp_json_close(j);
	}
	sp_json_close(j);
	sp_json_close(j);
}

static void top_json_cache(struct sp_json *j, const struct top_snap *s,
			   size_t i)
{
	const struct segpool_export_cache *c = &s->caches[i];
	const struct segpool_export_cache_node *cn = top_snap_cache_nodes(s, i);
	uint64_t part = 0, full = 0, empty = 0, direct_a = 0, direct_f = 0;
	uint64_t fill = 0, flush = 0;

	for (uint32_t n = 0; n < s->hdr.nr_nodes; n++) {
		part += cn[n].partial_slabs;
		full += cn[n].full_slabs;
		empty += cn[n].empty_slabs;
		direct_a += cn[n].allocs;
		direct_f += cn[n].frees;
		fill += cn[n].xfer_allocs;
		flush += cn[n].xfer_frees;
	}
	if (s->nkeys[0]) {
		top_json_cache_keys(j, s, i);
		return;
	}
	sp_json_open(j, NULL, '{', false);
	sp_json_str(j, "name", c->name);
	top_json_slabinfo(j, c);
	sp_json_u64(j, "object_size", c->object_size);
	sp_json_u64(j, "slab_size", c->stride);
	sp_json_u64(j, "align", c->align);
	sp_json_u64(j, "objs_per_slab", c->objs_per_slab);
	sp_json_u64(j, "pages_per_slab", c->pages_per_slab);
	sp_json_bool(j, "ctor", top_flag(c->flags, "ctor"));
	top_json_flags(j, c->flags);
	sp_json_bool(j, "percpu", top_flag(c->flags, "percpu"));
	sp_json_u64(j, "mag_size", c->mag_size);
	sp_json_u64(j, "depot_max", c->depot_max);
	sp_json_u64(j, "alloc_failures", c->alloc_failures);
	sp_json_u64(j, "active_objs", c->active_objs);
	sp_json_u64(j, "total_objs", c->total_objs);
	sp_json_u64(j, "active_slabs", c->active_slabs);
	sp_json_u64(j, "slabs", c->total_slabs);
	sp_json_u64(j, "partial_slabs", part);
	sp_json_u64(j, "full_slabs", full);
	sp_json_u64(j, "empty_slabs", empty);
	sp_json_u64(j, "cpu_objs", c->cpu_objs);
	sp_json_u64(j, "depot_objs", c->depot_objs);
	sp_json_u64(j, "depot_full_mags", c->depot_full_mags);
	sp_json_u64(j, "depot_empty_mags", c->depot_empty_mags);
	sp_json_u64(j, "slab_bytes", c->slab_bytes);
	sp_json_u64(j, "active_bytes", c->active_objs * c->stride);
	sp_json_u64(j, "cpu_bytes", c->cpu_objs * c->stride);
	sp_json_u64(j, "depot_bytes", c->depot_objs * c->stride);
	sp_json_u64(j, "allocs", c->allocs);
	sp_json_u64(j, "frees", c->frees);
	sp_json_u64(j, "alloc_direct", direct_a);
	sp_json_u64(j, "free_direct", direct_f);
	sp_json_u64(j, "fill_objs", fill);
	sp_json_u64(j, "flush_objs", flush);
	sp_json_u64(j, "alloc_slab", c->slabs_created);
	sp_json_u64(j, "free_slab", c->slabs_released);
	/* the per-CPU counters the record has, in the library's order */
#define TOP_JSON_CTR_SEGPOOL_CTR_HIT(key)	sp_json_u64(j, #key, c->key);
#define TOP_JSON_CTR_SEGPOOL_CTR_INFO(key)	sp_json_u64(j, #key, c->key);
#define TOP_JSON_CTR_SEGPOOL_CTR_EXPORT(key)	sp_json_u64(j, #key, c->key);
#define TOP_JSON_CTR_SEGPOOL_CTR_LIBRARY(key)
#define TOP_JSON_CTR(key, id, class, unit, doc)	TOP_JSON_CTR_##class(key)
	SEGPOOL_PCPU_COUNTERS(TOP_JSON_CTR)
#undef TOP_JSON_CTR
	sp_json_open(j, "nodes", '[', false);
	for (uint32_t n = 0; n < s->hdr.nr_nodes; n++)
		top_json_cnode(j, &cn[n]);
	sp_json_close(j);
	sp_json_close(j);
}

/* "rseq (glibc registration)" -> "rseq" */
static void top_json_mode(struct sp_json *j, const char *reason)
{
	char mode[16];
	size_t n = strcspn(reason, " (");

	if (n >= sizeof(mode))
		n = sizeof(mode) - 1;
	memcpy(mode, reason, n);
	mode[n] = '\0';
	sp_json_str(j, "percpu_mode", mode);
	sp_json_str(j, "percpu_reason", reason);
}

/* The health section from the key table: segpool_stats_json()'s. */
static void top_json_health_keys(struct sp_json *j, const struct top_snap *s)
{
	const struct segpool_export_key *hk =
		s->keys + s->nkeys[0] + s->nkeys[1];
	uint32_t nn = s->hdr.nr_nodes;

	sp_json_open(j, "health", '{', false);
	top_json_keys(j, s, hk, s->hvals, s->nkeys[2]);
	sp_json_open(j, "node_ids", '[', true);
	for (uint32_t n = 0; n < nn; n++)
		sp_json_int(j, NULL, s->nodes[n].node_id);
	sp_json_close(j);
	sp_json_open(j, "nodes", '[', false);
	for (uint32_t n = 0; n < nn; n++) {
		sp_json_open(j, NULL, '{', true);
		sp_json_int(j, "node", s->nodes[n].node_id);
		top_json_keys(j, s, hk + s->nkeys[2],
			      s->hvals + s->nkeys[2] + (size_t)n * s->nkeys[3],
			      s->nkeys[3]);
		sp_json_close(j);
	}
	sp_json_close(j);
	sp_json_close(j);
}

static void top_json_health(struct sp_json *j, const struct top_snap *s)
{
	const struct segpool_export_header *h = &s->hdr;
	uint64_t page = h->page_size;

	if (s->nkeys[2]) {
		top_json_health_keys(j, s);
		return;
	}
	sp_json_open(j, "health", '{', false);
	sp_json_str(j, "version", h->version);
	top_json_mode(j, h->percpu_mode);
	sp_json_u64(j, "nr_nodes", h->nr_nodes);
	sp_json_open(j, "node_ids", '[', true);
	for (uint32_t n = 0; n < h->nr_nodes; n++)
		sp_json_int(j, NULL, s->nodes[n].node_id);
	sp_json_close(j);
	sp_json_open(j, "nodes", '[', false);
	for (uint32_t n = 0; n < h->nr_nodes; n++) {
		const struct segpool_export_node *nd = &s->nodes[n];

		sp_json_open(j, NULL, '{', true);
		sp_json_int(j, "node", nd->node_id);
		sp_json_bool(j, "bound", nd->bound);
		sp_json_u64(j, "commit_failures", nd->commit_failures);
		sp_json_u64(j, "region_bytes", nd->pages_reserved * page);
		sp_json_u64(j, "committed_bytes", nd->pages_committed * page);
		sp_json_u64(j, "used_bytes", nd->pages_used * page);
		sp_json_u64(j, "dirty_bytes", nd->pages_dirty * page);
		sp_json_u64(j, "purged_bytes", nd->pages_purged * page);
		sp_json_u64(j, "huge_bytes", nd->huge_bytes);
		sp_json_close(j);
	}
	sp_json_close(j);
	sp_json_close(j);
}

static void top_json_arena(struct sp_json *j,
			   const struct segpool_export_arena *a)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} flags[] = {
		{ SEGPOOL_ARENA_THREADSAFE, "threadsafe" },
		{ SEGPOOL_ARENA_THISNODE, "thisnode" },
		{ SEGPOOL_ARENA_RED_ZONE, "red_zone" },
		{ SEGPOOL_ARENA_POISON, "poison" },
	};

	sp_json_open(j, NULL, '{', true);
	sp_json_str(j, "name", a->name);
	sp_json_int(j, "node", a->node);
	sp_json_open(j, "flags", '[', true);
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (a->flags & flags[i].bit)
			sp_json_str(j, NULL, flags[i].name);
	sp_json_close(j);
	for (size_t f = 0; f < top_arena_nfields; f++)
		sp_json_u64(j, top_arena_fields[f].name,
			    top_field_get(a, &top_arena_fields[f]));
	sp_json_close(j);
}

int top_print_json(FILE *out, const struct top_snap *s)
{
	const struct segpool_export_header *h = &s->hdr;
	struct sp_json j;

	sp_json_init(&j, top_json_sink, out);
	sp_json_open(&j, NULL, '{', false);
	sp_json_int(&j, "schema", SP_JSON_SCHEMA);
	sp_json_str(&j, "source", "export");
	sp_json_str(&j, "version", h->version);
	sp_json_open(&j, "export", '{', false);
	sp_json_int(&j, "pid", h->pid);
	sp_json_str(&j, "comm", h->comm);
	sp_json_u64(&j, "layout_version", h->layout_version);
	sp_json_u64(&j, "nr_cpus", h->nr_cpus);
	sp_json_u64(&j, "interval_ms", h->interval_ms);
	sp_json_u64(&j, "updates", h->updates);
	sp_json_u64(&j, "start_realtime_ns", h->start_realtime_ns);
	sp_json_u64(&j, "monotonic_ns", h->monotonic_ns);
	sp_json_u64(&j, "realtime_ns", h->realtime_ns);
	sp_json_u64(&j, "collect_ns", h->collect_ns);
	sp_json_bool(&j, "truncated", h->flags & SEGPOOL_EXPORT_F_TRUNCATED);
	sp_json_close(&j);
	top_json_health(&j, s);
	sp_json_open(&j, "caches", '[', false);
	for (size_t i = 0; i < h->nr_caches; i++)
		top_json_cache(&j, s, i);
	sp_json_close(&j);
	sp_json_open(&j, "arenas", '[', false);
	for (uint32_t i = 0; i < h->nr_arenas; i++)
		top_json_arena(&j, &s->arenas[i]);
	sp_json_end(&j);
	if (fflush(out) || ferror(out)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}
