// SPDX-License-Identifier: MIT
/*
 * core/arena_api.c - the public calls of <segpool/arena.h>.
 *
 * Each validates its arguments and sets errno, then calls the bump layer
 * (arena/).  Control blocks come from an internal cache of their own,
 * "segpool-arena", one cache line apart, so two threads' arenas never
 * share the line their bumps read.
 */
#include <errno.h>
#include <ctype.h>
#include <string.h>

#include <segpool/arena.h>
#include <segpool/segpool.h>

#include "arena/arena.h"
#include "core/core.h"
#include "numa/region.h"
#include "numa/topology.h"
#include "slab/debug.h"
#include "slab/policy.h"

static struct segpool_cache *sp_arena_cache;
static pthread_once_t sp_arena_cache_once = PTHREAD_ONCE_INIT;

static void sp_arena_cache_init(void)
{
	sp_arena_cache =
		sp_cache_create("segpool-arena", sizeof(struct segpool_arena),
				SP_CACHE_LINE, SP_CACHE_INTERNAL, NULL);
}

static bool sp_arena_ok(const struct segpool_arena *a)
{
	return a && a->magic == SP_BUMP_MAGIC;
}

static bool sp_arena_name_ok(const char *name)
{
	size_t n;

	if (!name)
		return false;
	n = strnlen(name, SEGPOOL_ARENA_NAME_MAX + 1);
	if (n == 0 || n > SEGPOOL_ARENA_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (isspace((unsigned char)name[i]))
			return false;
	return true;
}

/* SEGPOOL_DEBUG's letters Z and P for arena @name, as arena flags. */
static unsigned long sp_arena_env_flags(const char *name)
{
	unsigned long env = sp_debug_cache_flags(name, 0), f = 0;

	if (env & SEGPOOL_RED_ZONE)
		f |= SEGPOOL_ARENA_RED_ZONE;
	if (env & SEGPOOL_POISON)
		f |= SEGPOOL_ARENA_POISON;
	return f;
}

static struct segpool_arena *sp_arena_new(const char *name, int node,
					  unsigned long flags, void *buf,
					  size_t size)
{
	struct segpool_arena *a;
	int idx = -1;

	if (!sp_arena_name_ok(name) || (flags & ~SEGPOOL_ARENA_FLAGS_VALID)) {
		errno = EINVAL;
		return NULL;
	}
	if (sp_init())
		return NULL;
	if (node != SEGPOOL_NUMA_NO_NODE) {
		idx = sp_numa_node_to_idx(node);
		if (idx < 0) {
			errno = EINVAL;
			return NULL;
		}
	}
	pthread_once(&sp_arena_cache_once, sp_arena_cache_init);
	if (!sp_arena_cache ||
	    !sp_alloc_objs(sp_arena_cache, 0, node, 1, (void **)&a)) {
		errno = ENOMEM;
		return NULL;
	}
	sp_bump_init(a, name, node, idx, flags | sp_arena_env_flags(name), buf,
		     size);
	sp_bump_list_add(a);
	return a;
}

SEGPOOL_API struct segpool_arena *
segpool_arena_create(const char *name, int node, unsigned long flags)
{
	return sp_arena_new(name, node, flags, NULL, 0);
}

SEGPOOL_API struct segpool_arena *
segpool_arena_create_buf(const char *name, int node, unsigned long flags,
			 void *buf, size_t size)
{
	if (!buf || size < SEGPOOL_ARENA_BUF_MIN) {
		errno = EINVAL;
		return NULL;
	}
	return sp_arena_new(name, node, flags, buf, size);
}

/* The chunks an arena gave back go to the OS now. */
static void sp_space_regions_purge(void)
{
	for (int i = 0; i < sp_space.nr_regions; i++)
		sp_region_purge(i);
}

SEGPOOL_API int segpool_arena_destroy(struct segpool_arena *a)
{
	if (!sp_arena_ok(a)) {
		errno = EINVAL;
		return -EINVAL;
	}
	sp_bump_list_del(a);
	sp_bump_fini(a);
	segpool_cache_free(sp_arena_cache, a);
	/* "give everything back": not at the decay's leisure */
	sp_space_regions_purge();
	return 0;
}

SEGPOOL_API void *segpool_arena_alloc(struct segpool_arena *a, size_t size,
				      size_t align)
{
	if (unlikely(!sp_arena_ok(a) || (align & (align - 1)) ||
		     align > SEGPOOL_ARENA_MAX_ALIGN)) {
		errno = EINVAL;
		return NULL;
	}
	if (unlikely(size > SEGPOOL_ARENA_MAX_SIZE)) {
		errno = EOVERFLOW;
		return NULL;
	}
	return sp_bump_alloc(a, size ? size : 1,
			     align ? align : SEGPOOL_ARENA_DEFAULT_ALIGN);
}

SEGPOOL_API void *segpool_arena_calloc(struct segpool_arena *a, size_t n,
				       size_t size, size_t align)
{
	size_t bytes;
	void *p;

	if (__builtin_mul_overflow(n, size, &bytes)) {
		errno = sp_arena_ok(a) ? EOVERFLOW : EINVAL;
		return NULL;
	}
	p = segpool_arena_alloc(a, bytes, align);
	if (p)
		memset(p, 0, bytes);
	return p;
}

SEGPOOL_API void segpool_arena_reset(struct segpool_arena *a)
{
	if (!sp_arena_ok(a)) {
		errno = EINVAL;
		return;
	}
	sp_bump_reset(a);
}

SEGPOOL_API long segpool_arena_trim(struct segpool_arena *a)
{
	if (!sp_arena_ok(a)) {
		errno = EINVAL;
		return -EINVAL;
	}
	long n;

	n = (long)sp_bump_trim(a);
	if (n > 0)
		sp_space_regions_purge();
	return n;
}

SEGPOOL_API int segpool_arena_mark(struct segpool_arena *a,
				   struct segpool_arena_pos *m)
{
	if (!sp_arena_ok(a) || !m) {
		errno = EINVAL;
		return -EINVAL;
	}
	sp_bump_mark(a, m);
	return 0;
}

SEGPOOL_API int segpool_arena_rewind(struct segpool_arena *a,
				     const struct segpool_arena_pos *m)
{
	int ret;

	if (!sp_arena_ok(a) || !m) {
		errno = EINVAL;
		return -EINVAL;
	}
	ret = sp_bump_rewind(a, m);
	if (ret)
		errno = -ret;
	return ret;
}

SEGPOOL_API int segpool_arena_set_limit(struct segpool_arena *a, size_t bytes)
{
	if (!sp_arena_ok(a)) {
		errno = EINVAL;
		return -EINVAL;
	}
	pthread_mutex_lock(&a->lock);
	a->limit = bytes;
	pthread_mutex_unlock(&a->lock);
	return 0;
}

SEGPOOL_API int segpool_arena_set_keep(struct segpool_arena *a, size_t bytes)
{
	if (!sp_arena_ok(a)) {
		errno = EINVAL;
		return -EINVAL;
	}
	pthread_mutex_lock(&a->lock);
	a->keep = bytes;
	pthread_mutex_unlock(&a->lock);
	return 0;
}

SEGPOOL_API int segpool_arena_get_info(struct segpool_arena *a,
				       struct segpool_arena_info *info)
{
	if (!sp_arena_ok(a) || !info || info->size < sizeof(*info)) {
		errno = EINVAL;
		return -EINVAL;
	}
	sp_bump_info(a, info);
	return 0;
}

SEGPOOL_API const char *segpool_arena_name(const struct segpool_arena *a)
{
	if (!sp_arena_ok(a)) {
		errno = EINVAL;
		return NULL;
	}
	return a->name;
}
