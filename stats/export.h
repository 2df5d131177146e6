/* SPDX-License-Identifier: MIT */
/*
 * stats/export.h - the statistics export, between its two files (private).
 *
 * stats/export.c owns the segment, the publisher thread and the seqlock;
 * stats/export_snapshot.c fills a staging area laid out like the segment
 * (include/segpool/export.h) with the figures of every node and cache.
 */
#ifndef SP_STATS_EXPORT_H
#define SP_STATS_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal/compiler.h"

/*
 * struct sp_export_layout - where the parts of a segment of @capacity cache
 * records and @nr_nodes nodes lie; @size is page-rounded.
 */
struct sp_export_layout {
	uint32_t nr_nodes;
	uint32_t capacity;
	size_t nodes_offset;
	size_t caches_offset;
	size_t cache_nodes_offset;
	size_t arenas_offset;		/* @capacity arena records too */
	/* the key table (include/segpool/export.h) and its values: */
	size_t keys_offset;		/* every key, fixed for the build */
	size_t keys_size;
	size_t values_offset;		/* u64 [capacity][cache keys] */
	size_t node_values_offset;	/* u64 [capacity][nr_nodes][node
					 * keys] */
	size_t health_values_offset;	/* health, its nodes, the strings */
	size_t health_values_size;
	uint32_t nr_keys[4];		/* cache, node, health, health node */
	size_t size;
};

/* Bytes of the key values of @n caches (@node: their node values). */
static inline size_t sp_export_values_size(const struct sp_export_layout *l,
					   uint32_t n, bool node)
{
	return node ? (size_t)n * l->nr_nodes * l->nr_keys[1] * 8 :
		      (size_t)n * l->nr_keys[0] * 8;
}

/* --- stats/export.c --- */
/*
 * sp_export_init() - start the export when the environment asks for it
 * (SEGPOOL_EXPORT, SEGPOOL_EXPORT_INTERVAL_MS).  Called once, at the end of
 * library initialisation, after sp_ready is set.
 */
SP_INTERNAL void sp_export_init(void);

/* --- stats/export_ctl.c: requests from outside --- */
/*
 * sp_export_ctl_create() - create and map the control segment of the
 * statistics segment @seg_name ("/segpool.<pid>" + ".ctl").  op_lock and
 * pub_lock held.  Return: 0, or a negative errno (said on stderr: the
 * export goes on without it).
 */
SP_INTERNAL int sp_export_ctl_create(const char *seg_name);
/* sp_export_ctl_destroy() - unmap it, and remove it when @unlink. */
SP_INTERNAL void sp_export_ctl_destroy(bool unlink);
/* sp_export_ctl_pending() - whether a request waits (one atomic load). */
SP_INTERNAL bool sp_export_ctl_pending(void);
/* sp_export_ctl_serve() - serve the waiting request, if any: the publisher
 * only, with none of the export's locks held. */
SP_INTERNAL void sp_export_ctl_serve(void);
/*
 * sp_export_sites_fn - what answers SEGPOOL_CTL_OP_TOP_SITES: set by prof/
 * (sp_prof_sites(), prof/sites.c) when heap sampling may start, NULL
 * while it is off; a hook, as prof/ comes after stats/ in the layers.
 */
extern SP_INTERNAL int (*sp_export_sites_fn)(const char *path, unsigned int n);

/* --- stats/export_snapshot.c --- */
/* sp_export_layout() - the layout for @nr_nodes nodes and @capacity caches. */
SP_INTERNAL void sp_export_layout(struct sp_export_layout *l,
				  uint32_t nr_nodes, uint32_t capacity);
/*
 * sp_export_collect_keys() - the key table into @area, and the values of
 * the health keys (read now).  The cache keys' values are written by
 * sp_export_collect().
 */
SP_INTERNAL void sp_export_collect_keys(void *area,
					const struct sp_export_layout *l);
/* sp_export_count_caches() - how many caches are listed now. */
SP_INTERNAL uint32_t sp_export_count_caches(void);
/*
 * sp_export_collect() - write the node records and the records of the first
 * @l->capacity caches (and their node records) into @area, laid out as @l.
 * Takes the cache-list lock, then each node, depot and region lock in turn.
 * Return: the number of caches listed, which may exceed @l->capacity (then
 * only that many were written and the caller may grow the area).
 */
SP_INTERNAL uint32_t sp_export_collect(void *area,
				       const struct sp_export_layout *l);
/*
 * sp_export_collect_arenas() - the records of the first @l->capacity
 * arenas into @area.  Takes the arena-list lock, then each arena's.
 * Return: the number of arenas, which may exceed @l->capacity.
 */
SP_INTERNAL uint32_t sp_export_collect_arenas(void *area,
					      const struct sp_export_layout *l);

#endif /* SP_STATS_EXPORT_H */
