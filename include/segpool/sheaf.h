/* SPDX-License-Identifier: MIT */
/*
 * segpool/sheaf.h - prefilled sheaves: objects of a cache taken in advance,
 * for a section that must not fail (Linux 6.18's kmem_cache_prefill_sheaf()).
 *
 * A sheaf is an array of objects owned by the caller.  segpool_sheaf_prefill()
 * fills it from the cache with one segpool_cache_alloc_bulk() (which may
 * fail, before the section); inside the section segpool_sheaf_alloc()
 * takes an object from it with no lock, no atomic instruction and no call,
 * and cannot fail while the sheaf holds one: a section that knows how many
 * objects it needs at most asks for that many.  segpool_sheaf_return()
 * gives the objects left back to the cache and frees the sheaf.
 *
 * The objects in a sheaf count as allocated in the cache's statistics; the
 * sheaves outstanding and the objects they hold are listed per cache in
 * the detail dump and the JSON.  A sheaf is used by one thread at a time
 * (the caller serialises), any thread may return it.  The cache must not
 * be destroyed while it has sheaves.
 */
#ifndef SEGPOOL_SHEAF_H
#define SEGPOOL_SHEAF_H

#include <stddef.h>
#include <segpool/compiler.h>
#include <segpool/slab.h>

SEGPOOL_BEGIN_DECLS

/**
 * struct segpool_sheaf - a caller-owned array of free objects of one cache.
 * @size:        objects held, in @objects[0 .. @size - 1]; read it, do not
 *               write it.
 * @capacity:    room in @objects.
 * @cache:       the cache the objects belong to.
 * @object_size: the cache's object size (for SEGPOOL_ZERO).
 * @zero_ok:     1 when SEGPOOL_ZERO may be used (the cache has no ctor).
 * @priv_magic:  private: marks a live sheaf.
 * @priv_next:   private: the list of outstanding sheaves.
 * @priv_prev:   private.
 * @objects:     the objects.
 */
struct segpool_sheaf {
	unsigned int size;
	unsigned int capacity;
	struct segpool_cache *cache;
	size_t object_size;
	unsigned int zero_ok;
	unsigned int priv_magic;
	struct segpool_sheaf *priv_next;
	struct segpool_sheaf *priv_prev;
	SEGPOOL_FLEX_ARRAY(void *, objects)
};

/** SEGPOOL_SHEAF_MAX - the largest sheaf capacity (objects). */
#define SEGPOOL_SHEAF_MAX		(1U << 16)

/**
 * segpool_sheaf_prefill() - a sheaf holding @size objects of @cache.
 * @cache: the cache.
 * @gfp:   SEGPOOL_THISNODE or 0 (SEGPOOL_ZERO is given per allocation).
 * @size:  objects to take now, 0 to SEGPOOL_SHEAF_MAX; also the capacity.
 *
 * Context: any thread.
 * Return: the sheaf, full; NULL with errno EINVAL (bad argument) or ENOMEM
 * (nothing is then taken).
 */
SEGPOOL_API SEGPOOL_WUR struct segpool_sheaf *
segpool_sheaf_prefill(struct segpool_cache *cache, unsigned int gfp,
		      unsigned int size);

/**
 * segpool_sheaf_refill() - make a sheaf hold at least @size objects.
 * @cache:  the sheaf's cache.
 * @gfp:    as for segpool_sheaf_prefill().
 * @sheafp: the sheaf; it may be replaced by a larger one.
 * @size:   objects it must hold, up to SEGPOOL_SHEAF_MAX.
 *
 * When the sheaf holds @size or more, nothing happens.  When @size fits
 * its capacity, it is filled to the capacity; otherwise a new sheaf of
 * capacity @size is filled, the old one's objects move into it and the
 * old one is freed.  On failure the sheaf is unchanged (unlike Linux, where
 * an oversize refill that fails leaves *@sheafp returned).
 *
 * Context: any thread.
 * Return: 0, or -EINVAL / -ENOMEM (errno set too) with the sheaf as it was.
 */
SEGPOOL_API int segpool_sheaf_refill(struct segpool_cache *cache,
				     unsigned int gfp,
				     struct segpool_sheaf **sheafp,
				     unsigned int size);

/**
 * segpool_sheaf_return() - give the objects left back and free the sheaf.
 * @cache: the sheaf's cache.
 * @sheaf: the sheaf, or NULL (a no-op).
 *
 * A sheaf of another cache, or one already returned, is reported and the
 * process aborts.
 *
 * Context: any thread.
 */
SEGPOOL_API void segpool_sheaf_return(struct segpool_cache *cache,
				      struct segpool_sheaf *sheaf);

/**
 * segpool_sheaf_alloc_slow() - segpool_sheaf_alloc() when it cannot take
 * the fast way: zeroing, an empty sheaf, a bad argument.
 * @sheaf: the sheaf.
 * @gfp:   as for segpool_sheaf_alloc().
 *
 * Return: as segpool_sheaf_alloc().
 */
SEGPOOL_API void *segpool_sheaf_alloc_slow(struct segpool_sheaf *sheaf,
					   unsigned int gfp);

/**
 * segpool_sheaf_alloc() - take an object from a sheaf.
 * @sheaf: the sheaf.
 * @gfp:   0, or SEGPOOL_ZERO (EINVAL when the cache has a ctor); other
 *         SEGPOOL_GFP_VALID bits are ignored (the object is already taken).
 *
 * A load, a decrement and a store: no lock, no atomic operation.
 *
 * Context: the thread that owns the sheaf now.
 * Return: the object; NULL only when the sheaf is empty (errno ENOMEM) or
 * for a bad argument (errno EINVAL).
 */
static inline void *segpool_sheaf_alloc(struct segpool_sheaf *sheaf,
					unsigned int gfp)
{
	if (__builtin_expect(sheaf && sheaf->size && !(gfp & SEGPOOL_ZERO), 1))
		return sheaf->objects[--sheaf->size];
	return segpool_sheaf_alloc_slow(sheaf, gfp);
}

/**
 * segpool_sheaf_size() - how many objects a sheaf holds.
 * @sheaf: the sheaf.
 *
 * Return: the count.
 */
static inline unsigned int segpool_sheaf_size(const struct segpool_sheaf *sheaf)
{
	return sheaf->size;
}

SEGPOOL_END_DECLS

#endif /* SEGPOOL_SHEAF_H */
