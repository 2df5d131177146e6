/* SPDX-License-Identifier: MIT */
/*
 * segpool/stats.h - what the caches hold, for programs and for people.
 */
#ifndef SEGPOOL_STATS_H
#define SEGPOOL_STATS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <segpool/compiler.h>

SEGPOOL_BEGIN_DECLS

struct segpool_cache;

/**
 * struct segpool_cache_info - a snapshot of one cache's accounting.
 * @size:           sizeof(struct segpool_cache_info), set by the caller
 *                  before the call (lets the struct grow compatibly).
 * @object_size:    the size the cache was created with.
 * @stride:         bytes between two objects in a slab (object, alignment
 *                  padding and the out-of-object free-list link, if any).
 * @align:          the alignment every object has.
 * @objs_per_slab:  objects in one slab.
 * @pages_per_slab: pages (of 4 KiB) in one slab.
 * @active_objs:    objects currently allocated.
 * @total_objs:     object slots in all slabs of the cache.
 * @active_slabs:   slabs holding at least one allocated object.
 * @total_slabs:    all slabs, empty ones included.
 * @slab_bytes:     bytes of memory in all slabs (total_slabs * slab size).
 * @allocs:         objects allocated since creation.
 * @frees:          objects freed since creation.
 * @slabs_created:  slabs populated since creation.
 * @slabs_released: slabs given back to the OS since creation.
 * @alloc_failures: allocations that failed with ENOMEM.
 * @alloc_fastpath: allocations served by a per-CPU magazine hit.
 * @free_fastpath:  frees absorbed by a per-CPU magazine.
 * @alloc_slowpath: allocations that missed the CPU's loaded magazine.
 * @free_slowpath:  frees that found it full (or could not use it).
 * @cpu_objs:       free objects held in per-CPU magazines (not counted in
 *                  @active_objs).
 * @depot_objs:     free objects held in full magazines in the depots.
 * @mag_size:       objects one magazine holds now (0 without a per-CPU layer).
 * @depot_max:      full magazines a node's depot keeps at most.
 *
 * Objects cached in magazines are free: @active_objs counts only objects the
 * application holds, and @active_objs + @cpu_objs + @depot_objs objects are
 * allocated from the slabs.
 */
struct segpool_cache_info {
	size_t size;
	size_t object_size;
	size_t stride;
	size_t align;
	unsigned int objs_per_slab;
	unsigned int pages_per_slab;
	uint64_t active_objs;
	uint64_t total_objs;
	uint64_t active_slabs;
	uint64_t total_slabs;
	uint64_t slab_bytes;
	uint64_t allocs;
	uint64_t frees;
	uint64_t slabs_created;
	uint64_t slabs_released;
	uint64_t alloc_failures;
	uint64_t alloc_fastpath;
	uint64_t free_fastpath;
	uint64_t alloc_slowpath;
	uint64_t free_slowpath;
	uint64_t cpu_objs;
	uint64_t depot_objs;
	unsigned int mag_size;
	unsigned int depot_max;
};

/**
 * segpool_cache_get_info() - read a cache's accounting.
 * @cache: the cache.
 * @info:  where to store it; @info->size must be set by the caller.
 *
 * The figures are a consistent snapshot per NUMA node, summed over nodes.
 *
 * Context: any thread.
 * Return: 0, or -EINVAL (NULL argument or @info->size too small).
 */
SEGPOOL_API int segpool_cache_get_info(struct segpool_cache *cache,
				       struct segpool_cache_info *info);

/**
 * segpool_percpu_mode() - which per-CPU mode is in force, and why.
 *
 * Return: a constant string starting with "rseq", "lock" or "off", then the
 * reason in parentheses, for example "rseq (glibc registration)" or
 * "lock (rseq registration failed: Function not implemented)".
 */
SEGPOOL_API const char *segpool_percpu_mode(void);

/**
 * segpool_stats_dump() - print every cache in /proc/slabinfo 2.1 format.
 * @out: the stream to write to.
 *
 * One "slabinfo - version: 2.1" line, the "# name ..." header and one row per
 * cache (named caches and the kmalloc size classes), so existing slabinfo
 * parsers and tools read it unchanged.  See Documentation/stats.md.
 *
 * Context: any thread; takes the cache-list lock and each cache's node locks
 * one at a time.
 * Return: 0, -EINVAL for a NULL stream, or -EIO when writing failed.
 */
SEGPOOL_API int segpool_stats_dump(FILE *out);

SEGPOOL_END_DECLS

#endif /* SEGPOOL_STATS_H */
