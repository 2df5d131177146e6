// SPDX-License-Identifier: MIT
/*
 * large/large.c - allocations above the largest size class, and the
 * node-placed mappings they (and the space's large chunks) are made of.
 *
 * Up to SP_RUN_MAX_SIZE (64 MiB) a large block is a page run of its node's
 * region (sp_region_alloc_pages()): no system call on the common path, no
 * lock but the node's region lock, the page count and node known from the
 * address (the pagemap entry of the run's first page).  Its page tags stay
 * 0, so segpool_free() leaves its hit path for the untagged slow path,
 * which finds the run here.  realloc() grows and shrinks a run in place
 * when the pages after it are free (sp_region_resize_pages()).
 *
 * From SP_RUN_MAX_SIZE up, and when the region cannot hold a run, a block
 * is a mapping of its own on its node (sp_mapping_create() below),
 * unmapped on free so its memory goes back at once, grown and shrunk by
 * mremap.  With binding on, the mapping is bound to the node (mbind)
 * before first touch.  A registry (a chained hash table keyed by address,
 * under one leaf mutex; entries from a segpool cache of their own) records
 * every live mapping: segpool_free() of an address outside the space is
 * honoured only if the registry knows it, so a foreign pointer is
 * reported, never unmapped.
 *
 * A power-of-two size is placed at its own alignment (the kernel's
 * guarantee for kmalloc(): natural alignment for every power of two, as
 * the size classes give below SEGPOOL_KMALLOC_MAX_CACHE_SIZE), whatever
 * alignment the caller asked for beside.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "internal/init.h"
#include "slab/policy.h"
#include "internal/debug.h"
#include "large/large.h"
#include "numa/region.h"
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
	void *addr;			/* start of the mapping,
					 * returned to the user */
	size_t size;			/* bytes mapped */
	int idx;			/* node index */
	struct sp_large *next;		/* hash chain */
};

#define SP_LARGE_MIN_BUCKETS	256

static pthread_mutex_t sp_large_mutex = PTHREAD_MUTEX_INITIALIZER;
SP_LOCK_CLASS_STATIC(sp_large_mutex, SP_LOCK_LARGE)
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

/* Register @e, a live mapping. */
static void sp_large_insert(struct sp_large *e)
{
	size_t h;

	pthread_mutex_lock(&sp_large_mutex);
	if (sp_large_count >= 2 * sp_large_nr_buckets)
		sp_large_grow_locked();
	h = sp_large_hash(e->addr, sp_large_nr_buckets);
	e->next = sp_large_buckets[h];
	sp_large_buckets[h] = e;
	sp_large_count++;
	sp_large_bytes += e->size;
	pthread_mutex_unlock(&sp_large_mutex);
}

/* Take the entry of the mapping at @ptr out of the registry; NULL if none. */
static struct sp_large *sp_large_remove(const void *ptr)
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
	return e;
}

/* A registry entry, not yet filled in; NULL with errno ENOMEM. */
static struct sp_large *sp_large_entry(void)
{
	struct sp_large *e;

	if (!sp_alloc_objs(sp_large_cache, 0, SEGPOOL_NUMA_NO_NODE, 1,
			   (void **)&e)) {
		errno = ENOMEM;
		return NULL;
	}
	sp_obj_out(sp_large_cache, e);	/* as any allocation: no free mark */
	return e;
}

/* A mapping of its own: @bytes (page multiple) aligned to @align. */
static void *sp_large_map(size_t bytes, size_t align, int idx)
{
	struct sp_large *e = sp_large_entry();

	if (!e)
		return NULL;
	e->addr = sp_mapping_create(bytes, SP_MAX(align, SP_PAGE_SIZE), idx);
	if (!e->addr) {
		segpool_cache_free(sp_large_cache, e);
		errno = ENOMEM;
		return NULL;
	}
	e->size = bytes;
	e->idx = idx;
	sp_large_insert(e);
	return e->addr;
}

/*
 * The run @ptr grows past the runs' limit: its pages move to a mapping of
 * their own by mremap (no copy) when the kernel can, else they are copied.
 */
static void *sp_large_run_to_map(void *ptr, size_t bytes, int idx)
{
	struct sp_large *e = sp_large_entry();
	size_t old = sp_run_pages(ptr) << SP_PAGE_SHIFT;
	void *p;

	if (!e)
		return NULL;
	p = sp_region_move_out(ptr, bytes);
	if (p) {
		e->addr = p;
		e->size = bytes;
		e->idx = idx;
		sp_large_insert(e);
		return p;
	}
	segpool_cache_free(sp_large_cache, e);
	p = sp_large_map(bytes, SP_PAGE_SIZE, idx);
	if (!p)
		return NULL;
	memcpy(p, ptr, old);
	sp_region_free_pages(ptr);
	return p;
}

/* Page-multiple size of a @size-byte block, or 0 (errno ENOMEM) if too big. */
static size_t sp_large_bytes_of(size_t size)
{
	size_t bytes = SP_ALIGN(size, SP_PAGE_SIZE);

	if (bytes < size || bytes > SP_LARGE_MAX_SIZE) {
		errno = ENOMEM;
		return 0;
	}
	return bytes;
}

void *sp_large_alloc(size_t size, size_t align, int idx, bool zero)
{
	size_t bytes = sp_large_bytes_of(size);
	bool dirty;
	void *p;

	if (!bytes)
		return NULL;
	if (!SP_IS_POW2(align) || align > SP_LARGE_MAX_SIZE) {
		errno = align > SP_LARGE_MAX_SIZE ? ENOMEM : EINVAL;
		return NULL;
	}
	if (SP_IS_POW2(size))
		align = SP_MAX(align, size);	/* natural alignment */
	align = SP_MAX(align, SP_PAGE_SIZE);
	if (bytes < SP_RUN_MAX_SIZE && align <= SP_RUN_MAX_SIZE) {
		p = sp_region_alloc_pages(idx, bytes >> SP_PAGE_SHIFT, align,
					  &dirty);
		if (likely(p)) {
			if (zero && dirty)
				sp_os_clear(p, bytes);
			return p;
		}
		/* the region is full: a mapping of its own, same node */
	}
	return sp_large_map(bytes, align, idx);
}

bool sp_large_lookup(const void *ptr, size_t *size, int *idx)
{
	struct sp_large *e;
	bool found = false;

	if (sp_space_page(ptr)) {
		size_t pages = sp_run_pages(ptr);

		if (!pages)
			return false;
		*size = pages << SP_PAGE_SHIFT;
		*idx = sp_space_idx_of(ptr);
		return true;
	}
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
	struct sp_large *e;

	if (sp_space_page(ptr))
		return sp_region_free_pages(ptr);
	e = sp_large_remove(ptr);
	if (!e)
		return false;
	sp_mapping_destroy(e->addr, e->size);
	segpool_cache_free(sp_large_cache, e);
	return true;
}

const char *sp_large_misuse(const void *ptr)
{
	return sp_run_interior(ptr) ? "free of interior pointer"
				    : "free of foreign pointer";
}

void *sp_large_realloc(void *ptr, size_t size)
{
	size_t bytes = sp_large_bytes_of(size), old;
	struct sp_large *e;
	int idx;
	void *p;

	if (!bytes)
		return NULL;
	if (sp_space_page(ptr)) {
		old = sp_run_pages(ptr) << SP_PAGE_SHIFT;
		idx = sp_space_idx_of(ptr);
		if (bytes < SP_RUN_MAX_SIZE &&
		    sp_region_resize_pages(ptr, bytes >> SP_PAGE_SHIFT))
			return ptr;
		if (bytes >= SP_RUN_MAX_SIZE)
			return sp_large_run_to_map(ptr, bytes, idx);
		/* the pages after it are taken: move, on the same node */
		p = sp_large_alloc(bytes, SP_PAGE_SIZE, idx, false);
		if (!p)
			return NULL;
		memcpy(p, ptr, SP_MIN(old, bytes));
		sp_region_free_pages(ptr);
		return p;
	}
	/* a mapping of its own: the kernel moves its pages, no copy */
	e = sp_large_remove(ptr);
	if (!e) {
		errno = EINVAL;
		return NULL;
	}
	if (bytes != e->size) {
		/* memcheck loses the grown part of a MREMAP_FIXED move */
		p = sp_os_remap(e->addr, e->size, bytes,
				!(SP_VALGRIND && sp_on_valgrind));
		if (p) {
			e->addr = p;
			e->size = bytes;
		} else {
			errno = ENOMEM;
		}
	} else {
		p = ptr;
	}
	sp_large_insert(e);
	return p;
}

void sp_large_totals(size_t *count, size_t *bytes)
{
	size_t n = 0, pages = 0;

	/* one region lock at a time, then the registry's: none nested */
	for (int i = 0; i < sp_space.nr_regions; i++) {
		struct sp_region *r = &sp_space.region[i];

		pthread_mutex_lock(&r->lock);
		n += r->nr_runs;
		pages += r->run_pages;
		pthread_mutex_unlock(&r->lock);
	}
	pthread_mutex_lock(&sp_large_mutex);
	*count = n + sp_large_count;
	*bytes = (pages << SP_PAGE_SHIFT) + sp_large_bytes;
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
