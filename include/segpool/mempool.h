/* SPDX-License-Identifier: MIT */
/*
 * segpool/mempool.h - memory pools with a guaranteed reserve: the kernel's
 * mempool_t.
 *
 * A pool keeps @min_nr elements allocated in advance.  segpool_mempool_alloc()
 * first asks the pool's allocator (a cache, the size classes, or a function
 * of the caller's); only when that fails does it take an element from the
 * reserve, and when the reserve is empty too it waits (with SEGPOOL_WAIT)
 * until segpool_mempool_free() brings one back.  So as long as every
 * element comes back, an allocation that may wait never fails, even with
 * every region exhausted or with fault injection failing every allocation
 * (segpool/fault.h); one that may not wait fails only while all @min_nr
 * reserve elements are out.  segpool_mempool_free() refills the reserve
 * before giving memory back to the allocator.
 *
 * Every call is thread-safe.  The pools are listed in the statistics
 * (segpool_stats_dump_detail(), segpool_stats_json()).
 */
#ifndef SEGPOOL_MEMPOOL_H
#define SEGPOOL_MEMPOOL_H

#include <stddef.h>
#include <stdint.h>
#include <segpool/compiler.h>
#include <segpool/slab.h>

SEGPOOL_BEGIN_DECLS

struct segpool_mempool;

/**
 * segpool_mempool_alloc_fn - a pool's allocator.
 * @gfp:  the gfp bits of the segpool_mempool_alloc() call, with
 *        SEGPOOL_WAIT removed and SEGPOOL_NOWARN added on the first try
 *        (the reserve is the fallback); bits the library does not know
 *        are passed on unchanged (the kernel overlay's no-op flags).
 * @data: the pool's @pool_data.
 *
 * Return: an element, or NULL.
 */
typedef void *(segpool_mempool_alloc_fn)(unsigned int gfp, void *data);
/**
 * segpool_mempool_free_fn - a pool's deallocator.
 * @elem: an element the allocator returned.
 * @data: the pool's @pool_data.
 */
typedef void (segpool_mempool_free_fn)(void *elem, void *data);

/** SEGPOOL_MEMPOOL_MAX - the largest @min_nr a pool takes. */
#define SEGPOOL_MEMPOOL_MAX		(1 << 20)

/**
 * segpool_mempool_create() - create a pool over any allocator.
 * @min_nr:    elements kept in reserve, 1 to SEGPOOL_MEMPOOL_MAX.
 * @alloc_fn:  the allocator.
 * @free_fn:   its deallocator.
 * @pool_data: passed to both.
 * @gfp:       gfp bits passed to @alloc_fn while the reserve is filled
 *             (usually SEGPOOL_WAIT).
 * @node:      node of the pool's own memory, or SEGPOOL_NUMA_NO_NODE.
 *
 * The reserve is filled before the call returns.
 *
 * Context: any thread.
 * Return: the pool; NULL with errno EINVAL (@min_nr out of range, a NULL
 * function) or ENOMEM (the pool or its reserve could not be allocated:
 * nothing is left allocated).
 */
SEGPOOL_API SEGPOOL_WUR struct segpool_mempool *
segpool_mempool_create(int min_nr, segpool_mempool_alloc_fn *alloc_fn,
		       segpool_mempool_free_fn *free_fn, void *pool_data,
		       unsigned int gfp, int node);

/**
 * segpool_mempool_create_cache() - a pool of objects of @cache (the
 * kernel's mempool_create_slab_pool()).
 * @min_nr: as for segpool_mempool_create().
 * @cache:  the cache; it must outlive the pool.
 *
 * Context: any thread.
 * Return: as segpool_mempool_create(); EINVAL also for a bad @cache.
 */
SEGPOOL_API SEGPOOL_WUR struct segpool_mempool *
segpool_mempool_create_cache(int min_nr, struct segpool_cache *cache);

/**
 * segpool_mempool_create_kmalloc() - a pool of @size-byte size-class
 * allocations (the kernel's mempool_create_kmalloc_pool()).
 * @min_nr: as for segpool_mempool_create().
 * @size:   element size, 1 to SEGPOOL_KMALLOC_MAX_CACHE_SIZE.
 *
 * Context: any thread.
 * Return: as segpool_mempool_create(); EINVAL also for a bad @size.
 */
SEGPOOL_API SEGPOOL_WUR struct segpool_mempool *
segpool_mempool_create_kmalloc(int min_nr, size_t size);

/**
 * segpool_mempool_alloc() - take an element.
 * @pool: the pool.
 * @gfp:  SEGPOOL_WAIT to wait for an element rather than fail; other bits
 *        go to the pool's allocator (SEGPOOL_ZERO is refused: reserve
 *        elements are not zeroed; SEGPOOL_NOFAIL is dropped, the reserve
 *        is what makes the call not fail).
 *
 * Tries the allocator; when it fails, takes a reserve element; when the
 * reserve is empty, tries the allocator again with the full @gfp and
 * then, with SEGPOOL_WAIT, waits for segpool_mempool_free() (checking the
 * allocator again every second), else fails.
 *
 * Context: any thread; sleeps only with SEGPOOL_WAIT.
 * Return: an element; NULL with errno EINVAL (NULL @pool, SEGPOOL_ZERO)
 * or, without SEGPOOL_WAIT, ENOMEM when the allocator failed and the
 * reserve was empty.
 */
SEGPOOL_API SEGPOOL_WUR void *
segpool_mempool_alloc(struct segpool_mempool *pool, unsigned int gfp);

/**
 * segpool_mempool_free() - give an element back.
 * @elem: an element of @pool (from segpool_mempool_alloc() or its
 *        allocator), or NULL (a no-op).
 * @pool: the pool.
 *
 * The element refills the reserve when it is short (and wakes a waiter),
 * else goes back to the allocator.
 *
 * Context: any thread.
 */
SEGPOOL_API void segpool_mempool_free(void *elem, struct segpool_mempool *pool);

/**
 * segpool_mempool_resize() - change the reserve's size.
 * @pool:      the pool.
 * @new_min_nr: the new @min_nr, 1 to SEGPOOL_MEMPOOL_MAX.
 *
 * Shrinking frees the reserve elements above @new_min_nr at once;
 * growing allocates the missing ones (with SEGPOOL_WAIT) before the call
 * returns, all or nothing.
 *
 * Context: any thread; it may sleep.
 * Return: 0; -EINVAL (errno EINVAL) for a bad argument; -ENOMEM when the
 * new elements could not be allocated (the pool is unchanged).
 */
SEGPOOL_API int segpool_mempool_resize(struct segpool_mempool *pool,
				       int new_min_nr);

/**
 * segpool_mempool_destroy() - free the reserve and the pool.
 * @pool: the pool, or NULL (a no-op).
 *
 * Frees the reserve's elements with the pool's free function.  Elements
 * still out are not the pool's any more: free them with the allocator's
 * own call (segpool_cache_free(), segpool_kfree(), ...), as an element may
 * always be (the kernel's kfree_rcu() of a slab pool's element, say).
 *
 * Context: any thread; nobody may use @pool during or after the call.
 */
SEGPOOL_API void segpool_mempool_destroy(struct segpool_mempool *pool);

/**
 * struct segpool_mempool_stats - the state of a pool.
 * @size:          sizeof(struct segpool_mempool_stats), set by the caller.
 * @min_nr:        elements the reserve holds when full.
 * @curr_nr:       elements in the reserve now.
 * @outstanding:   elements handed out by segpool_mempool_alloc() and not
 *                 given back with segpool_mempool_free().
 * @reserve_allocs: allocations served from the reserve.
 * @alloc_failed:  allocations that failed (empty reserve, no SEGPOOL_WAIT).
 * @waits:         times a caller waited for an element.
 */
struct segpool_mempool_stats {
	size_t size;
	uint64_t min_nr;
	uint64_t curr_nr;
	uint64_t outstanding;
	uint64_t reserve_allocs;
	uint64_t alloc_failed;
	uint64_t waits;
};

/**
 * segpool_mempool_get_stats() - read a pool's state.
 * @pool: the pool.
 * @st:   receives it; @st->size must be set first.
 *
 * Context: any thread.
 * Return: 0, or -EINVAL (errno EINVAL) for a NULL argument or a @st->size
 * below sizeof(struct segpool_mempool_stats).
 */
SEGPOOL_API int segpool_mempool_get_stats(struct segpool_mempool *pool,
					  struct segpool_mempool_stats *st);

/*
 * The allocators of the two built-in pool kinds, for pools made with
 * segpool_mempool_create() that want them (the kernel's mempool_alloc_slab()
 * and friends): @data is the cache, or the size cast to a pointer.
 */
/** segpool_mempool_alloc_cache() - allocate from the cache in @data. */
SEGPOOL_API void *segpool_mempool_alloc_cache(unsigned int gfp, void *data);
/** segpool_mempool_free_cache() - free @elem into the cache in @data. */
SEGPOOL_API void segpool_mempool_free_cache(void *elem, void *data);
/** segpool_mempool_alloc_kmalloc() - segpool_kmalloc() of (size_t)@data. */
SEGPOOL_API void *segpool_mempool_alloc_kmalloc(unsigned int gfp, void *data);
/** segpool_mempool_free_kmalloc() - segpool_kfree() of @elem. */
SEGPOOL_API void segpool_mempool_free_kmalloc(void *elem, void *data);

SEGPOOL_END_DECLS

#endif /* SEGPOOL_MEMPOOL_H */
