// SPDX-License-Identifier: MIT
/*
 * core/malloc_api.c - segpool_malloc() and friends.
 *
 * Up to SEGPOOL_KMALLOC_MAX_CACHE_SIZE a request goes to its size-class
 * cache; above, to a page run of the node's region, or from 64 MiB up to a
 * node-placed mapping of its own (large/large.c).  A pointer is told apart
 * on free by its page: a tagged page is a slab object's (its tag names its
 * cache), an untagged one must start a large run, and outside the space it
 * must be a registered large mapping.  Anything else is reported.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <segpool/segpool.h>

#include "core/core.h"
#include "core/entry.h"
#include "core/hotpath.h"
#include "failslab/failslab.h"
#include "guard/guard.h"
#include "internal/reentry.h"
#include "internal/report.h"
#include "numa/topology.h"
#include "prof/prof.h"
#include "young/young.h"
#include "slab/policy.h"

/* Everything but a size class's magazine hit: start-up, node, large sizes. */
static inline void *sp_malloc_node_locked(size_t size, int node, bool zero,
					  void *site)
{
	void *obj;
	int idx;

	if (unlikely(sp_init()))
		return NULL;
	if (likely(size <= SEGPOOL_KMALLOC_MAX_CACHE_SIZE)) {
		struct segpool_cache *c = sp_kmalloc_class_made(size);

		/*
		 * A class not made yet: a young block while it has its share
		 * (young/young.c), unless a layer that watches the caches'
		 * objects runs.
		 */
		bool young = !c && node == SEGPOOL_NUMA_NO_NODE &&
			     !sp_prof_active() && !sp_failslab_active() &&
			     !sp_guard_rate;
		unsigned int i = sp_kmalloc_index(size);

		if (young) {
			obj = sp_young_alloc(i, sp_kmalloc_class_size(i),
					     false);
			if (obj)
				return obj;
		}
		if (!c)
			c = sp_kmalloc_class(size);
		if (unlikely(!c)) {
			/*
			 * The class could not be made: young if it can, else
			 * NULL with errno as the class's maker set it.
			 */
			if (!young)
				return NULL;
			return sp_young_alloc(i, sp_kmalloc_class_size(i),
					      true);
		}
		if (size > SP_KMALLOC_BY8_MAX && node == SEGPOOL_NUMA_NO_NODE)
			sp_kmalloc_fit_vote(size, c);
		if (sp_failslab_active() && sp_should_failslab(c)) {
			errno = ENOMEM;
			return NULL;
		}
		/* one in SEGPOOL_GUARD_SAMPLE: a guarded object (guard/) */
		if (unlikely(sp_guard_rate) && node == SEGPOOL_NUMA_NO_NODE &&
		    sp_guard_sample(c, size)) {
			obj = sp_guard_alloc(c, SP_MAX(size, (size_t)1), zero);
			if (obj)
				return obj;
		}
		if (likely(node == SEGPOOL_NUMA_NO_NODE && c->pcpu)) {
			obj = sp_pcpu_alloc_slow(c->pcpu);
			if (likely(obj))
				goto out;
		}
		if (unlikely(!sp_alloc_objs(c, 0, node, 1, &obj))) {
			if (errno != EINVAL)
				errno = ENOMEM;
			return NULL;
		}
out:
		obj = sp_sample_swapped(c, obj,
					sp_prof_alloc_obj(c, obj, size, site));
		sp_obj_out(c, obj);
		return obj;
	}
	idx = node == SEGPOOL_NUMA_NO_NODE ? sp_numa_current_idx()
					   : sp_numa_node_to_idx(node);
	if (idx < 0) {
		errno = EINVAL;
		return NULL;
	}
	obj = sp_large_alloc(size, SP_PAGE_SIZE, idx, zero);
	sp_prof_alloc(obj, size, site);
	return obj;
}

/*
 * From a signal handler that interrupted the library on its thread: what
 * the hit path could not serve fails (internal/reentry.h).  @site: the
 * allocating call (sp_prof_site()), where a sample's stack starts.
 */
static __sp_noinline __sp_libframe void *sp_malloc_node_full(size_t size,
							    int node, bool zero,
							    void *site)
{
	void *obj;

	if (unlikely(sp_lib_nested())) {
		errno = ENOMEM;
		return NULL;
	}
	if (unlikely(sp_init()))	/* it marks its own depth */
		return NULL;
	sp_lib_enter();
	obj = sp_malloc_node_locked(size, node, zero, site);
	if (sp_lib_leave())
		sp_lib_drain();
	return obj;
}

/*
 * Sampling keeps the hit paths closed: an allocation the magazine can
 * serve runs their sequence here, on the slot's sample count (prof/prof.h).
 */
static __sp_noinline __sp_libframe void *sp_malloc_sampled(size_t size,
							  int node, bool zero,
							  void *site)
{
	if (node == SEGPOOL_NUMA_NO_NODE &&
	    size <= SEGPOOL_KMALLOC_MAX_CACHE_SIZE) {
		struct segpool_cache *c =
			sp_kmalloc_load(sp_kmalloc_entry(size));
		struct sp_pcpu_slot *due;
		void *obj = sp_hot_alloc_counted(c, &due, true);

		if (likely(obj)) {
			if (unlikely(due))
				obj = sp_alloc_due(size, c, obj, due, site);
			return obj;	/* a zeroed one: its caller clears */
		}
	}
	return sp_malloc_node_full(size, node, zero, site);
}

/*
 * Every miss of segpool_malloc()'s hit path: to the sampling entry when
 * sampling runs, else the full slow path, with the return address into
 * the program (where a sample's stack starts).  No frame of its own.
 */
static __sp_noinline __sp_libframe void *sp_malloc_node(size_t size, int node,
						       bool zero)
{
	if (unlikely(sp_prof_active()))
		return sp_malloc_sampled(size, node, zero,
					 sp_prof_site());
	return sp_malloc_node_full(size, node, zero,
				   sp_prof_site());
}

/* Sizes above 1 KiB: the class from sp_kmalloc_mid[], then the same hit. */
static __sp_noinline __sp_libframe void *sp_malloc_mid(size_t size)
{
	void *obj;

	if (likely(size <= SEGPOOL_KMALLOC_MAX_CACHE_SIZE)) {
		obj = sp_hot_alloc(sp_kmalloc_load(
			sp_kmalloc_mid_entry(size)), true);
		if (likely(obj))
			return obj;
	}
	return sp_malloc_node(size, SEGPOOL_NUMA_NO_NODE, false);
}

/*
 * The hit path (core/hotpath.h): the class from one table load for sizes up
 * to 1 KiB, then the magazine pop; larger sizes are one tail call away.
 */
__sp_libframe void *sp_malloc_open(size_t size)
{
	void *obj;

	if (unlikely(size > SP_KMALLOC_BY8_MAX))
		return sp_malloc_mid(size);
	obj = sp_hot_alloc(sp_kmalloc_load(&sp_kmalloc_by8[(size + 7) >> 3]),
			   true);
	if (likely(obj))
		return obj;
	return sp_malloc_node(size, SEGPOOL_NUMA_NO_NODE, false);
}

/*
 * sp_alloc_due() for the counted entries' hit, reached by a tail call: it
 * takes the allocating call's site (one CFA with the entry), as
 * sp_cache_alloc_due() does and for its reason.
 */
static __sp_noinline __sp_libframe void *
sp_malloc_alloc_due(size_t size, struct segpool_cache *c, void *obj,
		    struct sp_pcpu_slot *slot)
{
	return sp_alloc_due(size, c, obj, slot, sp_prof_site());
}

/*
 * The counted hit on class table entry @entry for @size: the closed
 * sequence and one off the slot's sample count, sp_alloc_due() when it
 * runs out, the slow entry on a miss.  Inlined into each counted entry,
 * whose return address (into the program) a sample's stack starts at.
 */
static __sp_always_inline void *
sp_malloc_counted_hit(size_t size, struct segpool_cache *const *entry)
{
	struct segpool_cache *c = sp_kmalloc_load(entry);
	struct sp_pcpu_slot *due;
	void *obj = sp_hot_alloc_counted(c, &due, true);

	if (likely(obj)) {
		if (unlikely(due))
			return sp_malloc_alloc_due(size, c, obj, due);
		return obj;
	}
	return sp_malloc_node(size, SEGPOOL_NUMA_NO_NODE, false);
}

/*
 * sp_malloc_mid() of the counted build: the class from sp_kmalloc_mid[],
 * then the counted hit.  Through the slow entry instead (two calls and
 * sp_malloc_sampled()'s tests) a 2 KiB pair cost 2.2 ns more with sampling
 * on than off, a third of the pair.
 */
static __sp_noinline __sp_libframe void *sp_malloc_mid_counted(size_t size)
{
	if (likely(size <= SEGPOOL_KMALLOC_MAX_CACHE_SIZE))
		return sp_malloc_counted_hit(size,
					     sp_kmalloc_mid_entry(size));
	return sp_malloc_node(size, SEGPOOL_NUMA_NO_NODE, false);
}

/*
 * The counted build (core/entry.h): the counted hit on the class from one
 * table load; sizes above 1 KiB are one tail call away, as in the open
 * build.
 */
__sp_libframe void *sp_malloc_counted(size_t size)
{
	if (unlikely(size > SP_KMALLOC_BY8_MAX))
		return sp_malloc_mid_counted(size);
	return sp_malloc_counted_hit(size, &sp_kmalloc_by8[(size + 7) >> 3]);
}

SEGPOOL_API __sp_libframe void *segpool_malloc_node(size_t size, int node)
{
	return sp_malloc_node(size, node, false);
}

/*
 * The bytes a zeroed allocation of @size at @p clears: its class's size
 * (up to 1 KiB from the table; above, the object's own cache, since a
 * class fitted to the size may have served it), @size for a guarded
 * object, which is @size bytes at its page's end, and none for a young
 * block, whose memory was never handed out before (young/young.c).
 */
static inline size_t sp_zeroed_size(void *p, size_t size)
{
	if (sp_guard_owns(p))
		return size;
	if (sp_young_owns(p))
		return 0;	/* never handed out before: zero already */
	if (size <= SP_KMALLOC_BY8_MAX)
		return sp_kmalloc_class_size(sp_kmalloc_index(size));
	return sp_obj_to_slab(p)->cache->object_size;
}

__sp_libframe void *sp_malloc_node_zeroed(size_t size, int node)
{
	void *p;

	if (likely(size <= SEGPOOL_KMALLOC_MAX_CACHE_SIZE)) {
		/*
		 * A size class's object, from the hit path when the node is
		 * any (not the slow path on every call, as calloc() once
		 * took), then cleared: slab objects may hold old data.
		 */
		p = node == SEGPOOL_NUMA_NO_NODE ? sp_malloc_open(size)
						 : sp_malloc_node(size, node,
								  true);
		/*
		 * The whole object, as kzalloc() promises (krealloc() with
		 * __GFP_ZERO copies ksize() bytes and zeroes only past them);
		 * a guarded object is @size bytes at its page's end.
		 */
		if (likely(p))
			memset(p, 0, sp_zeroed_size(p, size));
		return p;
	}
	/* large blocks come zeroed, or are cleared where they may not */
	return sp_malloc_node(size, node, true);
}

SEGPOOL_API __sp_libframe void *segpool_calloc(size_t n, size_t size)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	return sp_malloc_node_zeroed(bytes, SEGPOOL_NUMA_NO_NODE);
}

/*
 * sp_misuse() - report @what ("free of interior pointer", as
 * sp_cache_object_check() words it) as the misuse of @op instead
 * ("realloc of interior pointer"), and abort.
 */
static __sp_cold __sp_noreturn void
sp_misuse(const char *op, const char *what, const void *ptr, const char *cache)
{
	char buf[96];

	if (!strncmp(what, "free ", 5))
		what += 5;
	snprintf(buf, sizeof(buf), "%s %s", op, what);
	sp_report_bad_free(buf, ptr, cache);
}

/*
 * What @ptr, given to @op ("realloc", "usable_size"), is: a slab object
 * (*cache set; a named cache's only when @named_ok), a large block
 * (*cache NULL, *size set), or misuse: reported naming @op before anything
 * is read from or written to @ptr, then the process aborts.
 */
static void sp_classify(const void *ptr, const char *op, bool named_ok,
			struct segpool_cache **cache, size_t *size, int *idx)
{
	struct sp_slab *s = sp_obj_to_slab(ptr);
	const char *what;

	if (s) {
		struct segpool_cache *c = s->cache;

		if (unlikely(!named_ok && !(c->flags & SP_CACHE_KMALLOC)))
			sp_misuse(op, "of named-cache object", ptr, c->name);
		what = sp_cache_object_check(c, ptr, &s);
		if (unlikely(what))
			sp_misuse(op, what, ptr, c->name);
		*cache = c;
		*size = c->object_size;
		*idx = s->node;
		return;
	}
	if (!sp_large_lookup(ptr, size, idx))
		sp_misuse(op, sp_large_misuse(ptr), ptr, NULL);
	*cache = NULL;
}

/* Not a slab object: NULL, a large block, or misuse (reported). */
/*
 * A slab object in a page no hand-out reached yet has no tag
 * (slab/slab.c, SP_CACHE_REACH): it was never allocated, so this free is
 * the double free of a stale pointer.
 */
static void sp_free_unreached(void *ptr)
{
	struct sp_slab *s = sp_obj_to_slab(ptr);

	if (s && sp_cache_obj_slab(s->cache, ptr) &&
	    !sp_slab_obj_reached(s->cache, s, ptr))
		sp_report_bad_free("double free", ptr, s->cache->name);
}

static __sp_noinline __sp_libframe void sp_free_untagged(void *ptr)
{
	bool ok;

	if (!ptr)
		return;
	if (sp_young_owns(ptr)) {
		sp_young_free(ptr);
		return;
	}
	if (sp_guard_owns(ptr)) {
		if (unlikely(sp_lib_nested()))
			sp_lib_defer_free(ptr);	/* its lock may be taken */
		else
			sp_guard_free(NULL, ptr);
		return;
	}
	/* checked before the deferral writes its link into the block */
	sp_free_unreached(ptr);
	if (sp_obj_to_slab(ptr) || ((uintptr_t)ptr & (SP_PAGE_SIZE - 1)) ||
	    (sp_space_page(ptr) && !sp_run_pages(ptr)))
		sp_report_bad_free(sp_large_misuse(ptr), ptr, NULL);
	if (unlikely(sp_lib_nested())) {
		/* the region's or the registry's lock may be the interrupted
		 * call's */
		sp_lib_defer_free(ptr);
		return;
	}
	sp_lib_enter();
	sp_prof_free(ptr);
	ok = sp_large_free(ptr);
	if (sp_lib_leave())
		sp_lib_drain();
	if (!ok)
		sp_report_bad_free(sp_large_misuse(ptr), ptr, NULL);
}

/*
 * The hit path (core/hotpath.h): the page tag names the object's cache, a
 * size class or a named cache alike (kfree() semantics: an object of any
 * cache goes back to its cache), and its node.
 */
__sp_libframe void sp_free_open(void *ptr)
{
	uintptr_t tag = sp_hot_tag(ptr);

	if (likely(tag)) {
		sp_hot_free(sp_tag_cache(tag), ptr, tag, true);
		return;
	}
	sp_free_untagged(ptr);
}

/* The counted build (core/entry.h). */
__sp_libframe void sp_free_counted(void *ptr)
{
	uintptr_t tag = sp_hot_tag(ptr);

	if (likely(tag)) {
		sp_hot_free_counted(sp_tag_cache(tag), ptr, tag, true);
		return;
	}
	sp_free_untagged(ptr);
}

SEGPOOL_API size_t segpool_usable_size(const void *ptr)
{
	struct segpool_cache *c;
	size_t size;
	int idx;

	if (!ptr)
		return 0;
	if (sp_young_owns(ptr))
		return sp_young_size(ptr, "usable_size");
	if (sp_guard_owns(ptr)) {
		size = sp_guard_usable_size(ptr);
		if (!size)
			errno = EINVAL;	/* no live guarded object there */
		return size;
	}
	if (!sp_obj_to_slab(ptr)) {
		if (sp_large_lookup(ptr, &size, &idx))
			/* a large block: the bytes of its pages */
			return size;
		errno = EINVAL;	/* no allocation of segpool's: nothing to say */
		return 0;
	}
	/* a slab object: at an object boundary, as free checks it (any
	 * cache's, as ksize()); the size of a slot is no answer for a pointer
	 * into the middle of one */
	sp_classify(ptr, "usable_size", true, &c, &size, &idx);
	return size;
}

/* realloc()'s move: @size bytes anew, @old of @ptr's copied, @ptr freed. */
static __sp_libframe void *sp_realloc_move(void *ptr, size_t old, size_t size)
{
	void *p = sp_malloc_open(size);

	if (!p)
		return NULL;
	memcpy(p, ptr, SP_MIN(old, size));
	sp_free_open(ptr);
	return p;
}

SEGPOOL_API __sp_libframe void *segpool_realloc(void *ptr, size_t size)
{
	struct segpool_cache *c;
	size_t old;
	int idx;

	if (!ptr)
		return sp_malloc_open(size);
	if (size == 0) {
		sp_free_open(ptr);
		return NULL;
	}
	if (sp_young_owns(ptr)) {
		/* a young block stays while the size keeps its class */
		old = sp_young_size(ptr, "realloc");
		if (size <= old && sp_kmalloc_index(size) ==
				   sp_kmalloc_index(old))
			return ptr;
		return sp_realloc_move(ptr, old, size);
	}
	if (sp_guard_owns(ptr)) {
		/* a guarded object moves: its slot keeps its own size */
		old = sp_guard_usable_size(ptr);
		if (!old)
			sp_report_bad_free("realloc of a pointer that is no "
					   "live guarded object", ptr, NULL);
		return sp_realloc_move(ptr, old, size);
	}
	/* validated before a byte is copied */
	sp_classify(ptr, "realloc", false, &c, &old, &idx);
	if (c && size <= SEGPOOL_KMALLOC_MAX_CACHE_SIZE &&
	    sp_kmalloc_class_made(size) == c)
		return ptr;
	/* large to large: in place, by mremap, or moved (large/large.c) */
	if (!c && size > SEGPOOL_KMALLOC_MAX_CACHE_SIZE) {
		if (unlikely(sp_prof_active())) {
			/* a new block as far as the profile goes */
			void *q;

			sp_prof_free(ptr);	/* its address may be reused */
			q = sp_large_realloc(ptr, size);
			if (q) {
				sp_prof_alloc(q, size,
					      sp_prof_site());
			}
			return q;
		}
		return sp_large_realloc(ptr, size);
	}
	/* small to large, large to small, class to class: a copy */
	return sp_realloc_move(ptr, old, size);
}

SEGPOOL_API __sp_libframe void *segpool_aligned_alloc(size_t align, size_t size)
{
	void *p;

	if (!SP_IS_POW2(align)) {
		errno = EINVAL;
		return NULL;
	}
	if (unlikely(sp_init()))
		return NULL;
	if (size <= SEGPOOL_KMALLOC_MAX_CACHE_SIZE && align <= SP_PAGE_SIZE) {
		/*
		 * The smallest class that holds @size and whose stride @align
		 * divides, through its hit path: a request of the class's own
		 * size takes no other class (every object of a class is at a
		 * multiple of its stride from an aligned slab, a guarded one
		 * at either end of its page).
		 */
		for (unsigned int i = sp_kmalloc_index(size);
		     i < SP_KMALLOC_NR_CLASSES; i++)
			if (sp_kmalloc_class_size(i) % align == 0)
				return sp_malloc_open(sp_kmalloc_class_size(i));
	}
	p = sp_large_alloc(SP_MAX(size, (size_t)1), align,
			   sp_numa_current_idx(), false);
	sp_prof_alloc(p, size, sp_prof_site());
	return p;
}
