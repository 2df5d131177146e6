// SPDX-License-Identifier: MIT
/*
 * tools/segpool-top/fields.c - the numeric fields of each record, once.
 *
 * One table per record type: the field's name (as in
 * include/segpool/export.h and struct segpool_cache_info), where it lies
 * and whether it counts events since creation (a counter, shown with its
 * rate) or says how things are now.  --json and the detail view both walk
 * these tables, so a field added here shows up in both.
 */
#include <string.h>

#include "tools/segpool-top/top.h"

#define F(type, field, counter)						\
	{ #field, offsetof(type, field),				\
	  (unsigned char)sizeof(((type *)0)->field), (counter) }

#define C(field, counter)	F(struct segpool_export_cache, field, counter)
/*
 * The per-CPU counters the record has (segpool/counters.h): those it
 * copies from struct segpool_cache_info, then its per-CPU events.
 */
#define TOP_INFO_SEGPOOL_CTR_HIT(key)		C(key, 1),
#define TOP_INFO_SEGPOOL_CTR_INFO(key)		C(key, 1),
#define TOP_INFO_SEGPOOL_CTR_EXPORT(key)
#define TOP_INFO_SEGPOOL_CTR_LIBRARY(key)
#define TOP_CTR_INFO(key, id, class, unit, doc)	TOP_INFO_##class(key)
#define TOP_EXPORT_SEGPOOL_CTR_HIT(key)
#define TOP_EXPORT_SEGPOOL_CTR_INFO(key)
#define TOP_EXPORT_SEGPOOL_CTR_EXPORT(key)	C(key, 1),
#define TOP_EXPORT_SEGPOOL_CTR_LIBRARY(key)
#define TOP_CTR_EXPORT(key, id, class, unit, doc) TOP_EXPORT_##class(key)
const struct top_field top_cache_fields[] = {
	C(object_size, 0),
	C(stride, 0),
	C(align, 0),
	C(objs_per_slab, 0),
	C(pages_per_slab, 0),
	C(active_objs, 0),
	C(total_objs, 0),
	C(active_slabs, 0),
	C(total_slabs, 0),
	C(slab_bytes, 0),
	C(cpu_objs, 0),
	C(depot_objs, 0),
	C(depot_full_mags, 0),
	C(depot_empty_mags, 0),
	C(mag_size, 0),
	C(depot_max, 0),
	C(allocs, 1),
	C(frees, 1),
	SEGPOOL_PCPU_COUNTERS(TOP_CTR_INFO)
	C(slabs_created, 1),
	C(slabs_released, 1),
	C(alloc_failures, 1),
	C(alloc_failslab, 1),
	SEGPOOL_PCPU_COUNTERS(TOP_CTR_EXPORT)
};
const size_t top_cache_nfields = sizeof(top_cache_fields) /
				 sizeof(top_cache_fields[0]);
#undef C

#define CN(field, counter) F(struct segpool_export_cache_node, field, counter)
const struct top_field top_cnode_fields[] = {
	CN(partial_slabs, 0),
	CN(full_slabs, 0),
	CN(empty_slabs, 0),
	CN(objects, 0),
	CN(depot_full_mags, 0),
	CN(depot_empty_mags, 0),
	CN(depot_objs, 0),
	CN(allocs, 1),
	CN(frees, 1),
	CN(xfer_allocs, 1),
	CN(xfer_frees, 1),
	CN(slabs_created, 1),
	CN(slabs_released, 1),
};
const size_t top_cnode_nfields = sizeof(top_cnode_fields) /
				 sizeof(top_cnode_fields[0]);
#undef CN

#define N(field, counter)	F(struct segpool_export_node, field, counter)
const struct top_field top_node_fields[] = {
	N(bound, 0),
	N(pages_reserved, 0),
	N(pages_committed, 0),
	N(pages_used, 0),
	N(commit_failures, 1),
};
const size_t top_node_nfields = sizeof(top_node_fields) /
				sizeof(top_node_fields[0]);
#undef N

/* Bit b of SEGPOOL_EXPORT_CACHE_* is named top_cache_flag_names[b]. */
const char *const top_cache_flag_names[] = {
	"kmalloc", "internal", "percpu", "hwcache_align", "typesafe_by_rcu",
	"ctor",
};
const size_t top_cache_nflags = sizeof(top_cache_flag_names) /
				sizeof(top_cache_flag_names[0]);

uint64_t top_field_get(const void *rec, const struct top_field *f)
{
	const char *p = (const char *)rec + f->off;

	if (f->size == sizeof(uint32_t)) {
		uint32_t v;

		memcpy(&v, p, sizeof(v));
		return v;
	}
	{
		uint64_t v;

		memcpy(&v, p, sizeof(v));
		return v;
	}
}

#define A(field, counter)	F(struct segpool_export_arena, field, counter)
const struct top_field top_arena_fields[] = {
	A(in_use, 0),
	A(peak, 0),
	A(held, 0),
	A(chunks, 0),
	A(kept_chunks, 0),
	A(kept_bytes, 0),
	A(chunks_created, 1),
	A(chunks_released, 1),
	A(resets, 1),
	A(rewinds, 1),
	A(alloc_failures, 1),
	A(limit, 0),
	A(keep, 0),
};
const size_t top_arena_nfields = sizeof(top_arena_fields) /
				 sizeof(top_arena_fields[0]);
#undef A
