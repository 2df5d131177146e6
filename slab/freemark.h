/* SPDX-License-Identifier: MIT */
/*
 * slab/freemark.h - the free mark: double frees caught outside debug caches
 * (private).
 *
 * Every free stores a mark in the freed object, at the cache's key_off
 * (slab/geometry.c), and every allocation that hands the object out clears
 * it; a free that finds the mark already there is a double free, reported
 * with the cache name and address before anything changes.  glibc's tcache
 * does the same with a per-process key; segpool's mark is that key mixed
 * with the object's own address:
 *
 *   mark(obj) = sp_freemark_secret ^ obj
 *
 * so that an object copied into another (or left behind in memory that a
 * later slab reuses at another address) never reads as freed, and bit 63 of
 * the secret is set, so no mark is 0 (the cleared state) or a pointer.  A
 * live object holds its mark only if the program wrote that exact word,
 * which it cannot know: a match needs no confirming scan.
 *
 * Where it holds: every free through the public calls, on the magazine and
 * the slab paths alike, whatever happened in between (other frees, shrinks,
 * magazine trades), for every cache but these:
 *   - debug caches: their state word already does this, and their poison
 *     must stay intact (slab/debug.c);
 *   - 8-byte objects: the mark shares the free-list link's word, so it lasts
 *     while the object sits in a magazine or a depot and is overwritten once
 *     the object goes back to its slab's free list (slab/geometry.c);
 *   - a second free racing the first on another thread (both may read "not
 *     freed"), as with glibc.
 * Caches with a ctor or SEGPOOL_TYPESAFE_BY_RCU keep link and mark after the
 * object, so a free object's bytes stay as the ctor or an RCU reader left
 * them.
 *
 * Cost on the hit paths: one load and compare before the free's sequence,
 * one store inside it, one store after an allocation's (core/hotpath.h).
 */
#ifndef SP_SLAB_FREEMARK_H
#define SP_SLAB_FREEMARK_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "internal/compiler.h"

#define SP_FREEMARK_SIZE	sizeof(uintptr_t)

extern SP_INTERNAL uintptr_t sp_freemark_secret;

/* The mark @obj carries while it is free. */
static __sp_always_inline uintptr_t sp_freemark(const void *obj)
{
	return sp_freemark_secret ^ (uintptr_t)obj;
}

/* Whether @obj, of a cache with mark offset @koff, carries its mark. */
static __sp_always_inline bool sp_freemark_is_set(const void *obj,
						  unsigned int koff)
{
	uintptr_t v;

	memcpy(&v, (const char *)obj + koff, sizeof(v));
	return v == sp_freemark(obj);
}

static __sp_always_inline void sp_freemark_set(void *obj, unsigned int koff)
{
	uintptr_t v = sp_freemark(obj);

	memcpy((char *)obj + koff, &v, sizeof(v));
}

/* On the way out to the program: the object is no longer free. */
static __sp_always_inline void sp_freemark_clear(void *obj, unsigned int koff)
{
	uintptr_t v = 0;

	memcpy((char *)obj + koff, &v, sizeof(v));
}

#endif /* SP_SLAB_FREEMARK_H */
