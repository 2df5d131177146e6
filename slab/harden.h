/* SPDX-License-Identifier: MIT */
/*
 * slab/harden.h - free-list link encoding, random slab order, and the
 * sanitizer hooks that need a cache (private; included by slab/slab.h).
 *
 * Hardened links (on by default; SEGPOOL_FREELIST_HARDENED=0 turns them off
 * for caches created afterwards): the link a free object on a slab's free
 * list holds is stored as
 *
 *     next ^ secret ^ bswap64(address of the link)
 *
 * with a random per-cache secret (SLAB_FREELIST_HARDENED's scheme).  A link
 * overwritten by a stray write or a use after free then decodes to an
 * address outside the slab (or off an object boundary) and is reported as a
 * bad free-list pointer before anything is handed out; and reading the
 * links out of leaked or freed memory tells an attacker neither heap
 * addresses nor how to forge a link that decodes to one of his choosing.
 */
#ifndef SP_SLAB_HARDEN_H
#define SP_SLAB_HARDEN_H

#ifndef SP_SLAB_SLAB_H
#error "include slab/slab.h, not slab/harden.h"
#endif

#include "internal/sanitize.h"

/* --- slab/harden.c --- */
/* SEGPOOL_FREELIST_HARDENED: new caches encode their links (default on). */
extern SP_INTERNAL bool sp_freelist_hardened;
/* Read SEGPOOL_FREELIST_HARDENED and detect valgrind; once, at init. */
SP_INTERNAL void sp_harden_init(void);
/* Bytes sp_harden_cache_init() needs after the cache's node array. */
SP_INTERNAL size_t sp_harden_extra_bytes(const struct segpool_cache *c);
/* Secret and random sequence of a new cache; @extra: the bytes above. */
SP_INTERNAL void sp_harden_cache_init(struct segpool_cache *c, void *extra);
/* A fresh random start in the cache's random sequence, for a slab. */
SP_INTERNAL unsigned int sp_harden_rand_pos(struct segpool_cache *c);
/*
 * Report the link of @obj (a free object of @s) that sp_freeptr_valid()
 * refused.  It prints the word stored in the object, never the decoded
 * link: the decoded value, the stored word and the link's address together
 * give the cache's secret.
 */
SP_INTERNAL __sp_cold __sp_noreturn void
sp_report_bad_freeptr(const struct segpool_cache *c, const struct sp_slab *s,
		      void *obj);
/*
 * Report slab @s of @c whose free list ran out while its counters say
 * objects are free in it (a link overwritten with NULL: with hardening
 * off, nothing caught it on the way).
 */
SP_INTERNAL __sp_cold __sp_noreturn void
sp_report_short_freelist(const struct segpool_cache *c,
			 const struct sp_slab *s);

/* --- link encoding -------------------------------------------------------- */

static inline uintptr_t sp_freeptr_mix(const struct segpool_cache *c,
				       const void *at, uintptr_t v)
{
	if (c->fl_secret)
		v ^= c->fl_secret ^ __builtin_bswap64((uintptr_t)at);
	return v;
}

/*
 * sp_freeptr_valid() - @next, decoded from the link of free object @obj of
 * slab @s, is NULL or another object of @s.  A link to its own object
 * (SLUB's naive check) is refused in every cache: followed, it would hand
 * that object out on every allocation.  With hardened links, a link outside
 * the slab or off an object boundary is refused too.  Not a proof that
 * @next is free: a cycle made by a double free through other objects
 * decodes to valid ones (see Documentation/internals/hardening.md).
 */
static inline bool sp_freeptr_valid(const struct segpool_cache *c,
				    const struct sp_slab *s, const void *obj,
				    const void *next)
{
	uintptr_t off = (uintptr_t)next - (uintptr_t)s->base;

	if (unlikely(next == obj))
		return false;
	return !next || !c->fl_secret ||
	       (off < ((size_t)c->objs_per_slab * c->stride) &&
		sp_obj_index(c, s, next) < c->objs_per_slab);
}

/* --- which caches the tools see ------------------------------------------- */

/*
 * Slab memory poisoned by ASan: every cache the application allocates from,
 * except debug caches (SEGPOOL_DEBUG_FLAGS): their slab layer writes red
 * zones, poison and call sites around and into free objects, and checks
 * them itself (Documentation/guide/debugging.md).
 */
static inline bool sp_asan_cache(const struct segpool_cache *c)
{
	return !(c->flags & (SP_CACHE_INTERNAL | SEGPOOL_DEBUG_FLAGS));
}

/* Objects poisoned when freed, and everything memcheck is told: not the
 * library's own caches, nor debug caches, nor type-safe-by-RCU ones (readers
 * may read a freed object there by design). */
static inline bool sp_san_obj_cache(const struct segpool_cache *c)
{
	return !(c->flags & (SP_CACHE_INTERNAL | SEGPOOL_DEBUG_FLAGS |
			     SEGPOOL_TYPESAFE_BY_RCU));
}

/* --- hooks ---------------------------------------------------------------- */

/*
 * sp_san_alloc() / sp_san_free() - an object of @c goes to / comes back from
 * the application.  ASan builds only; nothing at all otherwise, so they may
 * sit on the rseq fast path.  sp_san_free() must run before the object is
 * published anywhere another thread could take it from.
 */
static __sp_always_inline void *sp_san_alloc(const struct segpool_cache *c,
					     void *obj)
{
	sp_asan_unpoison(obj, c->object_size);
	(void)c;
	return obj;
}

static __sp_always_inline void sp_san_free(const struct segpool_cache *c,
					   void *obj)
{
#if SP_ASAN
	if (sp_san_obj_cache(c))
		sp_asan_poison(obj, c->object_size);
#else
	(void)c;
	(void)obj;
#endif
}

/* sp_vg_alloc() / sp_vg_free() - the same for memcheck: slow paths only. */
static inline void sp_vg_alloc(const struct segpool_cache *c, void *obj)
{
	if (SP_VALGRIND && unlikely(sp_on_valgrind) && sp_san_obj_cache(c))
		sp_vg_malloclike(obj, c->object_size, c->ctor != NULL);
}

static inline void sp_vg_free(const struct segpool_cache *c, void *obj)
{
	if (SP_VALGRIND && unlikely(sp_on_valgrind) && sp_san_obj_cache(c))
		sp_vg_freelike(obj);
}

/* A populated slab: nothing in it is the application's yet. */
static inline void sp_san_slab_new(const struct segpool_cache *c, void *base,
				   size_t bytes)
{
	if (SP_ASAN && sp_asan_cache(c))
		sp_asan_poison(base, bytes);
	if (SP_VALGRIND && unlikely(sp_on_valgrind) && sp_san_obj_cache(c))
		sp_vg_noaccess(base, bytes);
}

/* A slab going back to the region: plain memory again. */
static inline void sp_san_slab_release(const struct segpool_cache *c,
				       void *base, size_t bytes)
{
	if (SP_ASAN && sp_asan_cache(c))
		sp_asan_unpoison(base, bytes);
	if (SP_VALGRIND && unlikely(sp_on_valgrind) && sp_san_obj_cache(c))
		sp_vg_defined(base, bytes);
}

/* Free-mark bytes past an object, kept addressable (slab/freemark.h). */
static inline void sp_san_mark_open(const struct segpool_cache *c,
				    const void *at, size_t len)
{
	if (SP_VALGRIND && unlikely(sp_on_valgrind) && sp_san_obj_cache(c))
		sp_vg_defined(at, len);
	(void)c;
	(void)at;
	(void)len;
}

/*
 * After the slab layer stored the free mark of @obj, an object of a slab
 * already made inaccessible (sp_slab_reach()): the mark's part inside the
 * object is inaccessible again; its part past the object stays open, as
 * populate left it (sp_san_mark_open()).  Before the store, the word is
 * opened with sp_san_mark_open().
 */
static inline void sp_san_mark_close(const struct segpool_cache *c,
				     const void *obj)
{
	if (SP_VALGRIND && unlikely(sp_on_valgrind) && sp_san_obj_cache(c) &&
	    c->key_off < c->object_size)
		sp_vg_noaccess((const char *)obj + c->key_off,
			       SP_MIN((size_t)SP_FREEMARK_SIZE,
				      (size_t)(c->object_size - c->key_off)));
	(void)c;
	(void)obj;
}

/* The slab layer reads or writes the link at @at of a free object. */
static __sp_always_inline void sp_san_link_open(const struct segpool_cache *c,
						const void *at)
{
	if (SP_ASAN && sp_asan_cache(c))
		sp_asan_unpoison(at, SP_FREEPTR_SIZE);
	if (SP_VALGRIND && unlikely(sp_on_valgrind) && sp_san_obj_cache(c))
		sp_vg_defined(at, SP_FREEPTR_SIZE);
}

static __sp_always_inline void sp_san_link_close(const struct segpool_cache *c,
						 const void *at)
{
	if (SP_ASAN && sp_asan_cache(c))
		sp_asan_poison(at, SP_FREEPTR_SIZE);
	if (SP_VALGRIND && unlikely(sp_on_valgrind) && sp_san_obj_cache(c))
		sp_vg_noaccess(at, SP_FREEPTR_SIZE);
}

/*
 * sp_obj_out() - an object of @c leaves a slow path for the program: the
 * tools learn it is in use, and its free mark goes (not in debug caches,
 * which keep none).
 */
static __sp_always_inline void sp_obj_out(struct segpool_cache *c, void *obj)
{
	sp_vg_alloc(c, obj);
	sp_san_alloc(c, obj);
	if (likely(!(c->flags & SP_CACHE_DEBUG)))
		sp_freemark_clear(obj, c->key_off);
}

#endif /* SP_SLAB_HARDEN_H */
