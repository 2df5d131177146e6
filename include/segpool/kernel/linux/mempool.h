/* SPDX-License-Identifier: MIT */
/*
 * <linux/mempool.h> - segpool's kernel overlay: memory pools with a
 * guaranteed reserve, on segpool/mempool.h.
 *
 * mempool_alloc() with a gfp mask that may sleep (__GFP_DIRECT_RECLAIM,
 * part of GFP_KERNEL, GFP_NOIO, GFP_NOFS) never fails: it waits for an
 * element to come back.  Without it (GFP_ATOMIC, GFP_NOWAIT) it fails
 * only while the whole reserve is out.
 */
#ifndef SEGPOOL_KERNEL_LINUX_MEMPOOL_H
#define SEGPOOL_KERNEL_LINUX_MEMPOOL_H

#include <linux/gfp.h>
#include <linux/slab.h>
#include <linux/types.h>

#include <segpool/mempool.h>

typedef struct segpool_mempool mempool_t;
typedef void *(mempool_alloc_t)(gfp_t gfp_mask, void *pool_data);
typedef void (mempool_free_t)(void *element, void *pool_data);

static inline mempool_t *mempool_create_node(int min_nr,
					     mempool_alloc_t *alloc_fn,
					     mempool_free_t *free_fn,
					     void *pool_data, gfp_t gfp_mask,
					     int node_id)
{
	return segpool_mempool_create(min_nr, alloc_fn, free_fn, pool_data,
				      gfp_mask, node_id);
}

static inline mempool_t *mempool_create(int min_nr, mempool_alloc_t *alloc_fn,
					mempool_free_t *free_fn,
					void *pool_data)
{
	return mempool_create_node(min_nr, alloc_fn, free_fn, pool_data,
				   GFP_KERNEL, NUMA_NO_NODE);
}

static inline void *mempool_alloc(mempool_t *pool, gfp_t gfp_mask)
{
	return segpool_mempool_alloc(pool, gfp_mask);
}

static inline void mempool_free(void *element, mempool_t *pool)
{
	segpool_mempool_free(element, pool);
}

static inline int mempool_resize(mempool_t *pool, int new_min_nr)
{
	return segpool_mempool_resize(pool, new_min_nr);
}

static inline void mempool_destroy(mempool_t *pool)
{
	segpool_mempool_destroy(pool);
}

/* The allocators of slab pools: @pool_data is the struct kmem_cache *. */
static inline void *mempool_alloc_slab(gfp_t gfp_mask, void *pool_data)
{
	return segpool_mempool_alloc_cache(gfp_mask, pool_data);
}

static inline void mempool_free_slab(void *element, void *pool_data)
{
	segpool_mempool_free_cache(element, pool_data);
}

static inline mempool_t *mempool_create_slab_pool(int min_nr,
						  struct kmem_cache *kc)
{
	return segpool_mempool_create_cache(min_nr, __segpool_kc(kc));
}

/* The allocators of kmalloc pools: @pool_data is the size. */
static inline void *mempool_kmalloc(gfp_t gfp_mask, void *pool_data)
{
	return segpool_mempool_alloc_kmalloc(gfp_mask, pool_data);
}

static inline void mempool_kfree(void *element, void *pool_data)
{
	segpool_mempool_free_kmalloc(element, pool_data);
}

static inline mempool_t *mempool_create_kmalloc_pool(int min_nr, size_t size)
{
	return segpool_mempool_create_kmalloc(min_nr, size);
}

#endif /* SEGPOOL_KERNEL_LINUX_MEMPOOL_H */
