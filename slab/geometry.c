// SPDX-License-Identifier: MIT
/*
 * slab/geometry.c - how objects are laid out in a slab, and how big a slab is.
 *
 * Layout of one object slot (stride bytes):
 *
 *   | object (object_size) | [pad] | [link, 8 bytes] [free mark, 8] | [pad] |
 *
 * The link normally overlays the first word of a free object (fp_offset 0)
 * and the free mark (slab/freemark.h) the second, costing nothing.  A cache
 * with a ctor or SEGPOOL_TYPESAFE_BY_RCU must keep a free object's bytes
 * intact, so its link and mark go after the object instead (as SLUB places
 * its link).  A cache with debug flags has a wider slot with red
 * zones and metadata around the object (slab/debug.h).
 *
 * Free objects of a slab of at most 64 are bits in its descriptor instead
 * (SP_CACHE_FREEMAP, below): no link is stored in them at all.
 *
 * Slab order: the smallest 2^order pages that hold at least SP_MIN_OBJS
 * objects (up to SP_PREF_MAX_ORDER) with at most 1/32 of the slab wasted;
 * failing that 1/16, then the kernel's 1/8; failing all, the order with the
 * least waste; a map cache's order then grows while its map holds the
 * objects, up to 32 KiB (sp_map_order()).  Slabs are aligned to their own
 * size by the buddy allocator,
 * so an object at offset i * stride is aligned to every power of two that
 * divides the stride (up to the slab size): power-of-two sizes are naturally
 * aligned.
 */
#include <errno.h>

#include "slab/slab.h"

#define SP_MIN_OBJS		16
#define SP_PREF_MAX_ORDER	5	/* 128 KiB */
/* A map cache's slabs grow to this many bytes while the map holds them. */
#define SP_MAP_SLAB_BYTES	(32UL << 10)
#define SP_EMPTY_RESERVE_BYTES	(512UL << 10)
#define SP_MAX_EMPTY		32

static unsigned int sp_waste_order(size_t stride, unsigned int fraction)
{
	for (unsigned int order = 0; order <= SP_MAX_ORDER; order++) {
		size_t slab = SP_PAGE_SIZE << order;
		size_t objs = slab / stride;

		if (!objs)
			continue;
		if (objs < SP_MIN_OBJS && order < SP_PREF_MAX_ORDER)
			continue;
		if ((slab - objs * stride) * fraction <= slab)
			return order;
	}
	return SP_MAX_ORDER + 1;
}

/*
 * The order for a cache that may take a map and reach lazily (below)
 * of @stride whose waste rule chose @order: the largest up to
 * SP_MAP_SLAB_BYTES whose objects a map holds (a wide map needs two pages)
 * and whose waste is at most a 32nd, or @order.  Four times the objects a
 * slab means a fourth of the descriptors: a heap of 10^7 small objects
 * has 2.4 MiB of them and their maps, not 9.5 MiB, and a scattered free's
 * flush finds more of them in the cache.  The pages a slab's objects never
 * reached stay untouched (SP_CACHE_REACH).
 */
static unsigned int sp_map_order(size_t stride, unsigned int order)
{
	for (unsigned int o = SP_MAX_ORDER; o > order; o--) {
		size_t slab = SP_PAGE_SIZE << o;
		size_t objs = slab / stride;

		if (slab > SP_MAP_SLAB_BYTES || objs > SP_FREEMAP_MAX_OBJS ||
		    (objs > SP_FREEMAP_WORD_OBJS && o == 0))
			continue;
		if ((slab - objs * stride) * 32 <= slab)
			return o;
	}
	return order;
}

/*
 * Which caches may take a map and lazy reach, each rule stated once:
 * a debug cache (its checks walk a list), a randomised order and the
 * tests' SP_CACHE_LINKED keep a free list linked through the objects;
 * a slab written whole at creation (a ctor, zeroed objects) has nothing
 * to reach lazily, and the library's own caches carry no free mark.
 * A map cache's slabs grow (sp_map_order()) only where both hold.
 */
#define SP_GEO_LINKED_FLAGS	(SP_CACHE_DEBUG | SEGPOOL_FREELIST_RANDOM | \
				 SP_CACHE_LINKED)
#define SP_GEO_WHOLE_FLAGS	(SP_CACHE_INTERNAL | SP_CACHE_ZEROED)

static bool sp_geo_may_map(const struct segpool_cache *c)
{
	return !(c->flags & SP_GEO_LINKED_FLAGS);
}

static bool sp_geo_may_reach(const struct segpool_cache *c)
{
	return !c->ctor && !(c->flags & SP_GEO_WHOLE_FLAGS);
}

static unsigned int sp_least_waste_order(size_t stride)
{
	unsigned int best = SP_MAX_ORDER;
	size_t best_waste = SIZE_MAX;

	for (unsigned int order = 0; order <= SP_MAX_ORDER; order++) {
		size_t slab = SP_PAGE_SIZE << order;
		size_t objs = slab / stride;

		/* compare waste as a fraction: waste / slab, scaled */
		if (objs && ((slab - objs * stride) << (SP_MAX_ORDER - order)) <
				    best_waste) {
			best_waste = (slab - objs * stride)
				     << (SP_MAX_ORDER - order);
			best = order;
		}
	}
	return best;
}

/* Inverse of odd @d modulo 2^32 (Newton's iteration doubles the bits). */
static uint32_t sp_inverse_odd(uint32_t d)
{
	uint32_t x = d;		/* correct to 3 bits: d * d == 1 mod 8 */

	for (int i = 0; i < 4; i++)
		x *= 2 - d * x;
	return x;
}

int sp_geometry_compute(struct segpool_cache *c, size_t size, size_t align)
{
	static const unsigned int fractions[] = { 32, 16, 8 };
	size_t stride, fp_offset = 0, key_off = 0;
	unsigned int order = SP_MAX_ORDER + 1;

	align = SP_MAX(align, (size_t)SP_MIN_ALIGN);
	if (c->flags & SEGPOOL_HWCACHE_ALIGN)
		align = SP_MAX(align, (size_t)SP_CACHE_LINE);

	if (c->flags & SP_CACHE_DEBUG) {
		/* red zones, state and call sites around it: slab/debug.h */
		stride = sp_debug_geometry(c, size, &align, &fp_offset);
		key_off = fp_offset;	/* debug caches keep no free mark */
	} else if (c->ctor || (c->flags & SEGPOOL_TYPESAFE_BY_RCU)) {
		/* link and free mark after the object */
		c->flags |= SP_CACHE_FREEPTR_OUT;
		fp_offset = SP_ALIGN(size, (size_t)SP_MIN_ALIGN);
		key_off = fp_offset + SP_FREEPTR_SIZE;
		stride = SP_ALIGN(key_off + SP_FREEMARK_SIZE, align);
	} else {
		stride = SP_ALIGN(SP_MAX(size, (size_t)SP_FREEPTR_SIZE), align);
		/*
		 * The mark takes the word after the link; an 8-byte object has
		 * only the link's word, so its mark lasts only while it sits in
		 * a magazine (slab/freemark.h).
		 */
		key_off = stride >= SP_FREEPTR_SIZE + SP_FREEMARK_SIZE ?
			  SP_FREEPTR_SIZE : 0;
	}
	if (stride > (SP_PAGE_SIZE << SP_MAX_ORDER))
		return -EINVAL;

	for (unsigned int i = 0; i < SP_ARRAY_SIZE(fractions) &&
	     order > SP_MAX_ORDER; i++)
		order = sp_waste_order(stride, fractions[i]);
	if (order > SP_MAX_ORDER)
		order = sp_least_waste_order(stride);
	if (sp_geo_may_map(c) && sp_geo_may_reach(c))
		order = sp_map_order(stride, order);

	c->object_size = (unsigned int)size;
	c->stride = (unsigned int)stride;
	c->fp_offset = (unsigned int)fp_offset;
	c->align = (unsigned int)align;
	c->order = (unsigned char)order;
	c->slab_mask = (unsigned int)((SP_PAGE_SIZE << order) - 1);
	c->key_off = (unsigned int)key_off;
	c->objs_per_slab = (unsigned int)((SP_PAGE_SIZE << order) / stride);
	c->stride_shift = (unsigned char)__builtin_ctzl(stride);
	c->stride_inv = sp_inverse_odd((uint32_t)(stride >> c->stride_shift));
	c->max_empty = (unsigned int)SP_MAX(
		1UL, SP_MIN((unsigned long)SP_MAX_EMPTY,
			    SP_EMPTY_RESERVE_BYTES / (SP_PAGE_SIZE << order)));
	/*
	 * Up to 64 objects a slab, the free ones are bits of one word in the
	 * descriptor instead of a list linked through them, and up to 512 of
	 * a slab of two pages or more, bits of the side line after it
	 * (slab/slab.h): a flush sets a bit in a line it reads anyway (or its
	 * neighbour), and a fill takes the lowest set bits, so neither touches
	 * a cold object (after scattered frees of a large heap, a link store a
	 * flushed object and a link load an allocated one, each a miss).
	 * Debug caches keep their list (their checks walk it), and so does a
	 * randomised order.
	 */
	if ((c->objs_per_slab <= SP_FREEMAP_WORD_OBJS ||
	     (c->objs_per_slab <= SP_FREEMAP_MAX_OBJS && order > 0)) &&
	    sp_geo_may_map(c))
		c->flags |= SP_CACHE_FREEMAP;
	/*
	 * A slab of several pages is written only as its objects are handed
	 * out, in address order (slab/slab.c, sp_slab_reach()), so that a
	 * process which takes a few objects of a large class faults in the
	 * pages those objects are on, not the whole slab.  Not where a new
	 * slab is written whole anyway (a ctor, zeroed objects), nor for a
	 * random order, debug caches (their own state word) or the library's
	 * own caches (no free mark).  Map caches only: the fewest objects
	 * that make an order worth it (SP_MIN_OBJS) fit in a map, so a slab
	 * of several pages with a list is a randomised or a debug one.
	 */
	if (order > 0 && (c->flags & SP_CACHE_FREEMAP) && sp_geo_may_reach(c))
		c->flags |= SP_CACHE_REACH;
	return 0;
}
