/* SPDX-License-Identifier: MIT */
/*
 * slab/freemark.h - the free mark: double frees caught outside debug caches
 * (private).
 *
 * A new slab stores a mark in each of its objects and every free stores one
 * in the freed object, at the cache's key_off (slab/geometry.c), and every
 * allocation that hands the object out clears it (so a free object carries
 * it from its slab's creation on, and a stale pointer into a slab carved
 * where a released one stood is caught too); a free that finds the mark already
 * there is a double free, reported with the cache name and address before
 * anything changes.  A slab of several pages marks its objects page by page
 * as hand-outs reach them, and tags a page only then (slab/slab.c,
 * sp_slab_reach()): a free into a page not reached yet fails the hit
 * path's tag test, and the slow path reports it (sp_slab_obj_reached()).
 * glibc's tcache marks its free chunks with a per-process key;
 * segpool's mark is that key mixed with the object's own address:
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
 * one store inside it, one store after an allocation's (core/hotpath.h);
 * one store per object when a slab is populated or reached (slab/slab.c).
 */
#ifndef SP_SLAB_FREEMARK_H
#define SP_SLAB_FREEMARK_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "internal/compiler.h"
#include "internal/sanitize.h"

#define SP_FREEMARK_SIZE	sizeof(uintptr_t)

/*
 * Under ASan the mark is read and written beside the sanitizer: its word
 * may lie partly past a small object (an object of 1 to 15 bytes has it at
 * 0, in its padding) or in a freed, poisoned object (the second free of a
 * double free must read it to report it).  Those accesses are the
 * library's own, like a free-list link's, so they are not instrumented;
 * the program's accesses to the same bytes still are.
 */
#if SP_ASAN
#define __sp_mark_access __attribute__((noinline, unused, no_sanitize_address))
#else
#define __sp_mark_access	__sp_always_inline
#endif

extern SP_INTERNAL uintptr_t sp_freemark_secret;

/* The mark @obj carries while it is free. */
static __sp_always_inline uintptr_t sp_freemark(const void *obj)
{
	return sp_freemark_secret ^ (uintptr_t)obj;
}

/* Whether @obj, of a cache with mark offset @koff, carries its mark. */
#if SP_ASAN
/* uninstrumented: plain accesses (ASan would check memcpy) */
#define SP_MARK_LOAD(p)		(*(const volatile uintptr_t *)(const void *)(p))
#define SP_MARK_STORE(p, v)	(*(volatile uintptr_t *)(void *)(p) = (v))
#else
/* memcpy: the word overlays the program's data of any type */
static __sp_always_inline uintptr_t SP_MARK_LOAD(const void *p)
{
	uintptr_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}
#define SP_MARK_STORE(p, v)	do { uintptr_t __v = (v);		\
				     memcpy((p), &__v, sizeof(__v)); } while (0)
#endif

static __sp_mark_access bool sp_freemark_is_set(const void *obj,
						unsigned int koff)
{
	return SP_MARK_LOAD((const char *)obj + koff) == sp_freemark(obj);
}

static __sp_mark_access void sp_freemark_set(void *obj, unsigned int koff)
{
	SP_MARK_STORE((char *)obj + koff, sp_freemark(obj));
}

/* On the way out to the program: the object is no longer free. */
static __sp_mark_access void sp_freemark_clear(void *obj, unsigned int koff)
{
	SP_MARK_STORE((char *)obj + koff, 0);
}

#endif /* SP_SLAB_FREEMARK_H */
