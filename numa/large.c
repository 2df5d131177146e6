// SPDX-License-Identifier: MIT
/*
 * numa/large.c - allocations above the largest size class, and the
 * node-placed mappings they (and the arena's large chunks) are made of.
 *
 * Each is a mapping of its own on a node (sp_mapping_create() below),
 * unmapped on free, so its memory goes back to the OS at once: outside the
 * regions on purpose, one mmap and one munmap.  With binding on, the
 * mapping is bound to the node (mbind) before first touch.
 *
 * A registry (a chained hash table keyed by address, under one leaf
 * mutex) records every live mapping:
 * segpool_free() of an address outside the arena is honoured only if the
 * registry knows it, so a foreign pointer is reported, never unmapped.
 * Registry entries come from a segpool cache of their own.
 *
 * A power-of-two size is mapped at its own alignment (the kernel's
 * guarantee for kmalloc(): natural alignment for every power of two, as
 * the size classes give below SEGPOOL_KMALLOC_MAX_CACHE_SIZE), whatever
 * alignment the caller asked for beside.
 */
#include <errno.h>
#include <pthread.h>

#include "core/core.h"
#include "core/hotpath.h"
#include "numa/large.h"
#include "numa/topology.h"
#include "os/os.h"

/* --- node-placed mappings ------------------------------------------------ */

void *sp_mapping_create(size_t size, size_t align, int idx)
{
	void *p;

	if (idx < 0 || idx >= sp_topo.nr_nodes) {
		errno = ENOMEM;
		return NULL;
	}
	p = sp_os_map(size, align);
	if (!p)
		return NULL;
	if (sp_topo.bind && sp_os_bind(p, size, sp_topo.node_id[idx])) {
		sp_os_unmap(p, size);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

void sp_mapping_destroy(void *addr, size_t size)
{
	sp_os_unmap(addr, size);
}

/* --- the registry of large allocations ------------------------------------ */

struct sp_large {
	void *addr;			/* start of the mapping, returned to the user */
	size_t size;			/* bytes mapped */
	int idx;			/* node index */
	struct sp_large *next;		/* hash chain */
};

#define SP_LARGE_MIN_BUCKETS	256

static pthread_mutex_t sp_large_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct sp_large **sp_large_buckets;	/* under sp_large_mutex */
static size_t sp_large_nr_buckets;
static size_t sp_large_count;
static size_t sp_large_bytes;			/* mapped by live entries */
static struct segpool_cache *sp_large_cache;

static size_t sp_large_hash(const void *addr, size_t nr)
{
	uint64_t h = ((uintptr_t)addr >> SP_PAGE_SHIFT) * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h >> 32) & (nr - 1);
}

int sp_large_init(void)
{
	if (!sp_large_cache)	/* else made by an earlier, failed init */
		sp_large_cache = sp_cache_create("segpool-large",
						 sizeof(struct sp_large), 0,
						 SP_CACHE_INTERNAL, NULL);
	if (!sp_large_cache)
		return -ENOMEM;
	sp_large_buckets = sp_os_map(SP_LARGE_MIN_BUCKETS * sizeof(void *),
				     SP_PAGE_SIZE);
	if (!sp_large_buckets)
		return -ENOMEM;
	sp_large_nr_buckets = SP_LARGE_MIN_BUCKETS;
	return 0;
}

/* Double the table when chains grow long; keep the old one if out of memory. */
static void sp_large_grow_locked(void)
{
	size_t nr = sp_large_nr_buckets * 2;
	struct sp_large **nb = sp_os_map(nr * sizeof(void *), SP_PAGE_SIZE);

	if (!nb)
		return;
	for (size_t i = 0; i < sp_large_nr_buckets; i++) {
		struct sp_large *e = sp_large_buckets[i], *next;

		for (; e; e = next) {
			size_t h = sp_large_hash(e->addr, nr);

			next = e->next;
			e->next = nb[h];
			nb[h] = e;
		}
	}
	sp_os_unmap(sp_large_buckets, sp_large_nr_buckets * sizeof(void *));
	sp_large_buckets = nb;
	sp_large_nr_buckets = nr;
}

void *sp_large_alloc(size_t size, size_t align, int idx)
{
	size_t bytes = SP_ALIGN(size, SP_PAGE_SIZE);
	struct sp_large *e;
	size_t h;

	if (bytes < size || bytes > ((size_t)1 << 46)) {
		errno = ENOMEM;
		return NULL;
	}
	if (SP_IS_POW2(size))
		align = SP_MAX(align, size);	/* natural alignment */
	if (!sp_alloc_objs(sp_large_cache, 0, SEGPOOL_NUMA_NO_NODE, 1,
			   (void **)&e))
		return NULL;
	sp_obj_out(sp_large_cache, e);	/* as any allocation: no free mark */
	e->addr = sp_mapping_create(bytes, SP_MAX(align, SP_PAGE_SIZE), idx);
	if (!e->addr) {
		segpool_cache_free(sp_large_cache, e);
		errno = ENOMEM;
		return NULL;
	}
	e->size = bytes;
	e->idx = idx;

	pthread_mutex_lock(&sp_large_mutex);
	if (sp_large_count >= 2 * sp_large_nr_buckets)
		sp_large_grow_locked();
	h = sp_large_hash(e->addr, sp_large_nr_buckets);
	e->next = sp_large_buckets[h];
	sp_large_buckets[h] = e;
	sp_large_count++;
	sp_large_bytes += bytes;
	pthread_mutex_unlock(&sp_large_mutex);
	return e->addr;
}

bool sp_large_lookup(const void *ptr, size_t *size, int *idx)
{
	struct sp_large *e;
	bool found = false;

	pthread_mutex_lock(&sp_large_mutex);
	for (e = sp_large_buckets[sp_large_hash(ptr, sp_large_nr_buckets)];
	     e; e = e->next) {
		if (e->addr == ptr) {
			*size = e->size;
			*idx = e->idx;
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&sp_large_mutex);
	return found;
}

bool sp_large_free(void *ptr)
{
	struct sp_large **pp, *e = NULL;

	pthread_mutex_lock(&sp_large_mutex);
	for (pp = &sp_large_buckets[sp_large_hash(ptr, sp_large_nr_buckets)];
	     *pp; pp = &(*pp)->next) {
		if ((*pp)->addr == ptr) {
			e = *pp;
			*pp = e->next;
			sp_large_count--;
			sp_large_bytes -= e->size;
			break;
		}
	}
	pthread_mutex_unlock(&sp_large_mutex);
	if (!e)
		return false;
	sp_mapping_destroy(e->addr, e->size);
	segpool_cache_free(sp_large_cache, e);
	return true;
}

void sp_large_totals(size_t *count, size_t *bytes)
{
	pthread_mutex_lock(&sp_large_mutex);
	*count = sp_large_count;
	*bytes = sp_large_bytes;
	pthread_mutex_unlock(&sp_large_mutex);
}

void sp_large_lock(void)
{
	pthread_mutex_lock(&sp_large_mutex);
}

void sp_large_unlock(void)
{
	pthread_mutex_unlock(&sp_large_mutex);
}

void sp_large_reinit_lock(void)
{
	pthread_mutex_init(&sp_large_mutex, NULL);
}
