// SPDX-License-Identifier: MIT
/*
 * core/debug_api.c - the public debugging calls: validate a cache, list its
 * leaks, find a cache by name, set the response to a bug.  The work is in
 * slab/debug.c; here are the argument checks and the per-CPU drain.
 */
#include <errno.h>
#include <string.h>

#include <segpool/segpool.h>

#include "core/core.h"
#include "internal/reentry.h"

static inline bool sp_cache_ok(const struct segpool_cache *c)
{
	sp_cache_check_dead(c, "debug call on", NULL);
	return c && c->magic == SP_CACHE_MAGIC;
}

SEGPOOL_API int segpool_debug_set_response(int response)
{
	if (response != SEGPOOL_DEBUG_ABORT &&
	    response != SEGPOOL_DEBUG_CONTINUE) {
		errno = EINVAL;
		return -EINVAL;
	}
	/* after the environment, which the first cache creation reads */
	if (sp_init())
		return -ENOMEM;
	return __atomic_exchange_n(&sp_debug_response, response,
				   __ATOMIC_RELAXED);
}

SEGPOOL_API int segpool_cache_validate(struct segpool_cache *cache)
{
	if (!sp_cache_ok(cache)) {
		errno = EINVAL;
		return -EINVAL;
	}
	return sp_debug_validate(cache);
}

SEGPOOL_API long segpool_cache_leaks(struct segpool_cache *cache, FILE *f)
{
	long n;

	if (!sp_cache_ok(cache)) {
		errno = EINVAL;
		return -EINVAL;
	}
	/* objects cached per CPU are free: only the slabs' count is live */
	sp_lib_enter();
	if (cache->pcpu)
		sp_pcpu_drain(cache->pcpu);
	n = sp_debug_leaks(cache, f);
	if (sp_lib_leave())
		sp_lib_drain();
	if (n < 0)
		errno = (int)-n;
	return n;
}

SEGPOOL_API struct segpool_cache *segpool_cache_find(const char *name)
{
	struct segpool_cache *c, *found = NULL;

	if (!name) {
		errno = EINVAL;
		return NULL;
	}
	if (sp_init())
		return NULL;
	pthread_mutex_lock(&sp_cache_list_lock);
	sp_list_for_each_entry(c, &sp_cache_list, list) {
		if (!(c->flags & SP_CACHE_INTERNAL) && !strcmp(c->name, name)) {
			found = c;
			break;
		}
	}
	pthread_mutex_unlock(&sp_cache_list_lock);
	if (!found && !strncmp(name, "kmalloc-", 8)) {
		/* a size class is made at its first allocation: now */
		for (unsigned int i = 0; i < SP_KMALLOC_NR_CLASSES; i++) {
			char cname[32];

			sp_kmalloc_name(i, cname, sizeof(cname));
			if (!strcmp(cname, name))
				return sp_kmalloc_get(i);
		}
	}
	if (!found)
		errno = ENOENT;
	return found;
}
