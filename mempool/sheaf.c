// SPDX-License-Identifier: MIT
/*
 * mempool/sheaf.c - prefilled sheaves (Linux 6.18's kmem_cache_prefill_sheaf()
 * and friends) on top of the cache API.
 *
 * A sheaf is one size-class allocation: struct segpool_sheaf and its
 * @capacity object pointers.  Prefill and refill take objects with one
 * segpool_cache_alloc_bulk() (all or nothing), so a failure leaves nothing
 * behind; return gives the ones left with one segpool_cache_free_bulk().
 * Taking an object (segpool_sheaf_alloc(), inline in the header) touches
 * only the sheaf, which the caller owns: no lock, no atomic.
 *
 * Outstanding sheaves are on one list, under a mutex (lock order: see
 * core/init.c, level 1; nothing is taken under it) taken only by
 * prefill, oversize refill, return and the statistics walk, so that the
 * detail dump and the JSON can show per cache how many sheaves are out
 * and how many objects they hold.  Fork: the list lock is taken by the
 * prepare handler and re-initialised in the child.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <segpool/segpool.h>
#include <segpool/sheaf.h>

#include "internal/compiler.h"
#include "internal/report.h"
#include "mempool/mempool.h"
#include "slab/slab.h"

/* Distinct caches the statistics walk tells apart (more: "(other)"). */
#define SP_SHEAF_WALK_CACHES	64

static pthread_mutex_t sp_sheaves_lock = PTHREAD_MUTEX_INITIALIZER;
static struct segpool_sheaf sp_sheaves = {	/* list head, never a sheaf */
	.priv_next = &sp_sheaves, .priv_prev = &sp_sheaves,
};
static pthread_once_t sp_sheaf_once = PTHREAD_ONCE_INIT;

static void sp_sheaf_fork_prepare(void)
{
	pthread_mutex_lock(&sp_sheaves_lock);
}

static void sp_sheaf_fork_parent(void)
{
	pthread_mutex_unlock(&sp_sheaves_lock);
}

static void sp_sheaf_fork_child(void)
{
	pthread_mutex_init(&sp_sheaves_lock, NULL);
}

static void sp_sheaf_setup(void)
{
	pthread_atfork(sp_sheaf_fork_prepare, sp_sheaf_fork_parent,
		       sp_sheaf_fork_child);
	sp_stats_pools_register(sp_sheaf_walk);
}

static void sp_sheaf_link(struct segpool_sheaf *sh)
{
	pthread_mutex_lock(&sp_sheaves_lock);
	sh->priv_next = &sp_sheaves;
	sh->priv_prev = sp_sheaves.priv_prev;
	sp_sheaves.priv_prev->priv_next = sh;
	sp_sheaves.priv_prev = sh;
	pthread_mutex_unlock(&sp_sheaves_lock);
}

static void sp_sheaf_unlink(struct segpool_sheaf *sh)
{
	pthread_mutex_lock(&sp_sheaves_lock);
	sh->priv_prev->priv_next = sh->priv_next;
	sh->priv_next->priv_prev = sh->priv_prev;
	pthread_mutex_unlock(&sp_sheaves_lock);
	sh->priv_next = sh->priv_prev = NULL;
}

/* An empty, unlisted sheaf of @capacity for @cache; NULL with errno. */
static struct segpool_sheaf *sp_sheaf_new(struct segpool_cache *cache,
					  size_t object_size, bool zero_ok,
					  unsigned int capacity)
{
	struct segpool_sheaf *sh;

	sh = segpool_kmalloc(sizeof(*sh) + (size_t)capacity * sizeof(void *),
			     SEGPOOL_NOWARN);
	if (!sh)
		return NULL;
	sh->size = 0;
	sh->capacity = capacity;
	sh->cache = cache;
	sh->object_size = object_size;
	sh->zero_ok = zero_ok;
	sh->priv_magic = SP_SHEAF_MAGIC;
	return sh;
}

static bool sp_sheaf_args_ok(struct segpool_cache *cache, unsigned int gfp,
			     unsigned int size)
{
	if (!segpool_cache_name(cache) || (gfp & ~SEGPOOL_THISNODE) ||
	    size > SEGPOOL_SHEAF_MAX) {
		errno = EINVAL;
		return false;
	}
	return true;
}

/* Take @n objects into @sh->objects[@sh->size ..]; false with errno. */
static bool sp_sheaf_take(struct segpool_sheaf *sh, unsigned int gfp,
			  unsigned int n)
{
	if (n && segpool_cache_alloc_bulk(sh->cache, gfp, n,
					  sh->objects + sh->size) != (int)n)
		return false;
	sh->size += n;
	return true;
}

SEGPOOL_API struct segpool_sheaf *
segpool_sheaf_prefill(struct segpool_cache *cache, unsigned int gfp,
		      unsigned int size)
{
	struct segpool_sheaf *sh;

	if (!sp_sheaf_args_ok(cache, gfp, size))
		return NULL;
	pthread_once(&sp_sheaf_once, sp_sheaf_setup);
	/* a cache with a ctor refuses SEGPOOL_ZERO */
	sh = sp_sheaf_new(cache, cache->object_size, !cache->ctor, size);
	if (!sh)
		return NULL;
	if (!sp_sheaf_take(sh, gfp, size)) {
		segpool_kfree(sh);
		return NULL;
	}
	sp_sheaf_link(sh);
	return sh;
}

static bool sp_sheaf_ok(const struct segpool_cache *cache,
			const struct segpool_sheaf *sh)
{
	return sh && sh->priv_magic == SP_SHEAF_MAGIC && sh->cache == cache;
}

SEGPOOL_API int segpool_sheaf_refill(struct segpool_cache *cache,
				     unsigned int gfp,
				     struct segpool_sheaf **sheafp,
				     unsigned int size)
{
	struct segpool_sheaf *sh, *nsh;

	if (!sp_sheaf_args_ok(cache, gfp, size) || !sheafp ||
	    !sp_sheaf_ok(cache, *sheafp)) {
		errno = EINVAL;
		return -EINVAL;
	}
	sh = *sheafp;
	if (sh->size >= size)
		return 0;
	if (size <= sh->capacity) {
		if (!sp_sheaf_take(sh, gfp, sh->capacity - sh->size))
			return -errno;
		return 0;
	}
	/* oversize: a new sheaf takes the missing objects, then the old ones */
	nsh = sp_sheaf_new(cache, sh->object_size, sh->zero_ok, size);
	if (!nsh)
		return -errno;
	nsh->size = sh->size;
	if (!sp_sheaf_take(nsh, gfp, size - sh->size)) {
		segpool_kfree(nsh);
		return -errno;
	}
	memcpy(nsh->objects, sh->objects, sh->size * sizeof(void *));
	sp_sheaf_unlink(sh);
	sh->priv_magic = 0;
	segpool_kfree(sh);
	sp_sheaf_link(nsh);
	*sheafp = nsh;
	return 0;
}

SEGPOOL_API void segpool_sheaf_return(struct segpool_cache *cache,
				      struct segpool_sheaf *sheaf)
{
	if (!sheaf)
		return;
	if (!sp_sheaf_ok(cache, sheaf))
		sp_report_bad_free(sheaf->priv_magic == SP_SHEAF_MAGIC ?
				   "return of sheaf to the wrong cache" :
				   "return of invalid sheaf", sheaf,
				   segpool_cache_name(cache));
	sp_sheaf_unlink(sheaf);
	sheaf->priv_magic = 0;
	segpool_cache_free_bulk(cache, sheaf->size, sheaf->objects);
	segpool_kfree(sheaf);
}

SEGPOOL_API void *segpool_sheaf_alloc_slow(struct segpool_sheaf *sheaf,
					   unsigned int gfp)
{
	void *obj;

	if (!sheaf || sheaf->priv_magic != SP_SHEAF_MAGIC ||
	    ((gfp & SEGPOOL_ZERO) && !sheaf->zero_ok)) {
		errno = EINVAL;
		return NULL;
	}
	if (!sheaf->size) {
		errno = ENOMEM;
		return NULL;
	}
	obj = sheaf->objects[--sheaf->size];
	if (gfp & SEGPOOL_ZERO)
		memset(obj, 0, sheaf->object_size);
	return obj;
}

void sp_sheaf_walk(sp_pool_visit_fn *visit, void *arg)
{
	struct {
		struct segpool_cache *cache;	/* NULL: the "(other)" row */
		uint64_t sheaves, objects, capacity;
	} agg[SP_SHEAF_WALK_CACHES + 1];
	unsigned int n = 0;
	bool other = false;

	memset(&agg[SP_SHEAF_WALK_CACHES], 0, sizeof(agg[0]));
	pthread_mutex_lock(&sp_sheaves_lock);
	for (struct segpool_sheaf *sh = sp_sheaves.priv_next; sh != &sp_sheaves;
	     sh = sh->priv_next) {
		unsigned int i;

		for (i = 0; i < n && agg[i].cache != sh->cache; i++)
			;
		if (i == n && n < SP_SHEAF_WALK_CACHES) {
			memset(&agg[n], 0, sizeof(agg[n]));
			agg[n++].cache = sh->cache;
		} else if (i == n) {
			i = SP_SHEAF_WALK_CACHES;
			other = true;
		}
		agg[i].sheaves++;
		agg[i].objects += sh->size;
		agg[i].capacity += sh->capacity;
	}
	if (other)
		agg[n++] = agg[SP_SHEAF_WALK_CACHES];
	/* a cache cannot go away while it has sheaves: its name stays */
	for (unsigned int i = 0; i < n; i++) {
		struct sp_pool_snap s = {
			.kind = "sheaves",
			.nr = 3,
			.keys = { "sheaves", "objects", "capacity" },
			.vals = { agg[i].sheaves, agg[i].objects,
				  agg[i].capacity },
		};

		snprintf(s.name, sizeof(s.name), "%s", agg[i].cache ?
			 agg[i].cache->name : "(other)");
		visit(&s, arg);
	}
	pthread_mutex_unlock(&sp_sheaves_lock);
}
