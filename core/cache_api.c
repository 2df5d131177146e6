// SPDX-License-Identifier: MIT
/*
 * core/cache_api.c - the public object-cache calls: validate, then dispatch.
 *
 * Argument checks that cost a compare (NULL, magic, unknown bits) are always
 * on; so is the object check on free (pagemap lookup, owner cache, object
 * boundary), since a wrong pointer would otherwise corrupt a freelist.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <segpool/segpool.h>

#include "core/core.h"
#include "internal/report.h"
#include "numa/topology.h"

/* Node index to allocate from, or -1 for a bad @node. */
static inline int sp_node_index(int node)
{
	if (node == SEGPOOL_NUMA_NO_NODE)
		return sp_numa_current_idx();
	return sp_numa_node_to_idx(node);
}

size_t sp_alloc_objs(struct segpool_cache *c, unsigned int gfp, int node,
		     size_t n, void **objs)
{
	int idx = sp_node_index(node);

	if (unlikely(idx < 0)) {
		errno = EINVAL;
		return 0;
	}
	if (likely(sp_slab_alloc_bulk(c, idx, n, objs)))
		return n;
	if (gfp & SEGPOOL_THISNODE)
		return 0;
	for (int i = 1; i < sp_topo.nr_nodes; i++)
		if (sp_slab_alloc_bulk(c, sp_topo.fallback[idx][i], n, objs))
			return n;
	errno = ENOMEM;
	return 0;
}

static inline bool sp_alloc_args_ok(const struct segpool_cache *c,
				    unsigned int gfp)
{
	if (unlikely(!c || c->magic != SP_CACHE_MAGIC ||
		     (gfp & ~SEGPOOL_GFP_VALID) ||
		     ((gfp & SEGPOOL_ZERO) && c->ctor))) {
		errno = EINVAL;
		return false;
	}
	return true;
}

SEGPOOL_API struct segpool_cache *
segpool_cache_create(const char *name, size_t size, size_t align,
		     unsigned long flags, void (*ctor)(void *))
{
	struct segpool_cache *c = NULL;

	if (flags & ~SEGPOOL_CACHE_FLAGS_VALID)
		errno = EINVAL;
	else if (sp_init() == 0)
		c = sp_cache_create(name, size, align, flags, ctor);
	if (!c && (flags & SEGPOOL_PANIC)) {
		sp_warn("cannot create cache %s: %s", name ? name : "(null)",
			strerror(errno));
		abort();
	}
	return c;
}

SEGPOOL_API int segpool_cache_destroy(struct segpool_cache *cache)
{
	if (!cache)
		return 0;
	return sp_cache_destroy(cache);
}

SEGPOOL_API void *segpool_cache_alloc_node(struct segpool_cache *cache,
					   unsigned int gfp, int node)
{
	void *obj;

	if (!sp_alloc_args_ok(cache, gfp))
		return NULL;
	if (unlikely(!sp_alloc_objs(cache, gfp, node, 1, &obj)))
		return NULL;
	if (gfp & SEGPOOL_ZERO)
		memset(obj, 0, cache->object_size);
	return obj;
}

SEGPOOL_API void *segpool_cache_alloc(struct segpool_cache *cache,
				      unsigned int gfp)
{
	return segpool_cache_alloc_node(cache, gfp, SEGPOOL_NUMA_NO_NODE);
}

SEGPOOL_API int segpool_cache_alloc_bulk(struct segpool_cache *cache,
					 unsigned int gfp, size_t n, void **objs)
{
	if (!sp_alloc_args_ok(cache, gfp))
		return 0;
	if (n == 0)
		return 0;
	if (!objs || n > (size_t)INT32_MAX) {
		errno = EINVAL;
		return 0;
	}
	if (!sp_alloc_objs(cache, gfp, SEGPOOL_NUMA_NO_NODE, n, objs))
		return 0;
	if (gfp & SEGPOOL_ZERO)
		for (size_t i = 0; i < n; i++)
			memset(objs[i], 0, cache->object_size);
	return (int)n;
}

/* Check @obj against @cache and free it; misuse is reported and aborts. */
static inline void sp_free_checked(struct segpool_cache *cache, void *obj)
{
	struct sp_slab *s = NULL;
	const char *what;

	if (unlikely(!cache || cache->magic != SP_CACHE_MAGIC))
		sp_report_bad_free("free into invalid cache", obj, NULL);
	what = sp_cache_object_check(cache, obj, &s);
	if (unlikely(what))
		sp_report_bad_free(what, obj, cache->name);
	sp_slab_free_one(cache, s, obj);
}

SEGPOOL_API void segpool_cache_free(struct segpool_cache *cache, void *obj)
{
	if (unlikely(!obj))
		return;
	sp_free_checked(cache, obj);
}

SEGPOOL_API void segpool_cache_free_bulk(struct segpool_cache *cache, size_t n,
					 void **objs)
{
	if (!objs)
		return;
	for (size_t i = 0; i < n; i++)
		if (objs[i])
			sp_free_checked(cache, objs[i]);
}

SEGPOOL_API int segpool_cache_shrink(struct segpool_cache *cache)
{
	unsigned long n;

	if (!cache || cache->magic != SP_CACHE_MAGIC) {
		errno = EINVAL;
		return -EINVAL;
	}
	n = sp_slab_shrink(cache);
	return n > INT32_MAX ? INT32_MAX : (int)n;
}

SEGPOOL_API const char *segpool_cache_name(const struct segpool_cache *cache)
{
	if (!cache || cache->magic != SP_CACHE_MAGIC) {
		errno = EINVAL;
		return NULL;
	}
	return cache->name;
}

SEGPOOL_API size_t segpool_cache_object_size(const struct segpool_cache *cache)
{
	if (!cache || cache->magic != SP_CACHE_MAGIC) {
		errno = EINVAL;
		return 0;
	}
	return cache->object_size;
}
