/* SPDX-License-Identifier: MIT */
/*
 * segpool/debug.h - checking caches: validation, leak lists, the response
 * to a detected bug.
 *
 * The debug flags themselves (SEGPOOL_RED_ZONE, SEGPOOL_POISON,
 * SEGPOOL_STORE_USER, SEGPOOL_CONSISTENCY_CHECKS) are cache flags of
 * segpool/slab.h; the environment variable SEGPOOL_DEBUG sets them without a
 * rebuild, like the kernel's slub_debug.  Every problem found is reported on
 * stderr as one block whose first line reads
 * "segpool: BUG <kind> in cache <name>: object <address> offset <n>"
 * (Documentation/guide/debugging.md lists the kinds).
 */
#ifndef SEGPOOL_DEBUG_H
#define SEGPOOL_DEBUG_H

#include <stdio.h>
#include <segpool/compiler.h>

SEGPOOL_BEGIN_DECLS

struct segpool_cache;

/* --- response to a detected bug ------------------------------------------ */

/** SEGPOOL_DEBUG_ABORT - print the report, then abort() (the default). */
#define SEGPOOL_DEBUG_ABORT		0
/**
 * SEGPOOL_DEBUG_CONTINUE - print the report and go on: a bad free is
 * ignored, an overwritten red zone or poison is restored.
 */
#define SEGPOOL_DEBUG_CONTINUE		1

/**
 * segpool_debug_set_response() - what a debug cache does after a report.
 * @response: SEGPOOL_DEBUG_ABORT or SEGPOOL_DEBUG_CONTINUE.
 *
 * Process-wide; the environment variable SEGPOOL_DEBUG_RESPONSE
 * (abort or continue) sets it at start-up.  It applies to the reports of
 * caches with debug flags; the misuse every cache checks still aborts
 * when no debug cache is involved (a pointer in no slab, a free between
 * two caches without debug flags).
 *
 * Context: any thread.
 * Return: the previous response, or -EINVAL (errno EINVAL) for an unknown
 * @response.
 */
SEGPOOL_API int segpool_debug_set_response(int response);

/* --- checking a cache --------------------------------------------------- */

/**
 * segpool_cache_validate() - check every slab and object of a cache now.
 * @cache: the cache.
 *
 * Walks every slab of every node under the node's lock.  In any cache:
 * each free-list link points to an object of its slab and the free-list
 * length agrees with the slab's count of objects in use.  In a cache with
 * debug flags also: every object's state word, its red zones
 * (SEGPOOL_RED_ZONE) and, for free objects, the poison
 * (SEGPOOL_POISON).  Each problem is reported as a block on stderr; a
 * damaged red zone or poison is restored, so it is reported once.  This
 * call never aborts, whatever the response.
 *
 * Context: any thread, while others use the cache.
 * Return: the number of problems found (0: all good), or -EINVAL (errno
 * EINVAL) when @cache is not a live cache.
 */
SEGPOOL_API int segpool_cache_validate(struct segpool_cache *cache);

/**
 * segpool_cache_leaks() - list the objects of a cache still allocated.
 * @cache: the cache (a size-class cache too, see segpool_cache_find()).
 * @f:     where to write the list, or NULL for stderr.
 *
 * First gives the per-CPU magazines back to the slabs (their objects are
 * free), then writes one entry per object in use, starting with a line
 * "segpool: LEAK in cache <name>: object <address> size <n>"; with
 * SEGPOOL_STORE_USER the entry also shows where and by which thread the
 * object was allocated.  segpool_cache_destroy() of a cache with debug
 * flags prints the same list when objects are left.
 *
 * Context: any thread.  Writes to @f while holding the cache's node
 * locks: a write to @f must not allocate from @cache.
 * Return: the number of objects in use, or -EINVAL (errno EINVAL) when
 * @cache is not a live cache; -ENOMEM when no memory was left for the scan.
 */
SEGPOOL_API long segpool_cache_leaks(struct segpool_cache *cache, FILE *f);

/**
 * segpool_cache_find() - a live cache by name.
 * @name: the cache name, for example "kmalloc-64" for a size class.
 *
 * Meant for the debugging calls above and for tests: the size classes
 * behind segpool_malloc() have no handle otherwise.  A size class is made
 * at its first allocation; finding it by name makes it too.
 *
 * Context: any thread; the cache may be destroyed by another thread
 * afterwards, as with any handle.
 * Return: the cache, or NULL with errno EINVAL (NULL @name), ENOENT, or
 * ENOMEM (a size class that could not be made).
 */
SEGPOOL_API struct segpool_cache *segpool_cache_find(const char *name);

SEGPOOL_END_DECLS

#endif /* SEGPOOL_DEBUG_H */
