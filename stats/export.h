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
	size_t size;
};

/* --- stats/export.c --- */
/*
 * sp_export_init() - start the export when the environment asks for it
 * (SEGPOOL_EXPORT, SEGPOOL_EXPORT_INTERVAL_MS).  Called once, at the end of
 * library initialisation, after sp_ready is set.
 */
SP_INTERNAL void sp_export_init(void);

/* --- stats/export_snapshot.c --- */
/* sp_export_layout() - the layout for @nr_nodes nodes and @capacity caches. */
SP_INTERNAL void sp_export_layout(struct sp_export_layout *l,
				  uint32_t nr_nodes, uint32_t capacity);
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
