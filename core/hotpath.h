/* SPDX-License-Identifier: MIT */
/*
 * core/hotpath.h - the one hit path of both APIs (private).
 *
 * segpool_cache_alloc()/segpool_cache_free() and segpool_malloc()/
 * segpool_free() (and realloc's fast case) all reach these two inline
 * helpers, in the manner of mimalloc's _mi_page_malloc and SLUB's
 * alloc_from_pcs: everything but the magazine hit is one jump to a
 * noinline slow path, so a hit needs no stack frame, no call and no lock
 * prefix.  tools/check/hotpath.sh disassembles the built library and fails
 * when a hit grows a frame, a call or a lock prefix, and prints the counts
 * quoted here and in Documentation/internals/percpu.md.
 *
 * The exported names are IFUNCs (core/entry.h) that resolve to the open
 * build, sp_*_open, unless the process was started to sample a heap
 * profile; the counted build, sp_*_counted, takes one off the slot's
 * sample count after an allocation's sequence (sp_hot_alloc_counted()),
 * and runs a free's as it is (a recorded object lies in a sampled slab,
 * whose tag no slot expects).
 * Budget, counted from the function's entry to its ret on a hit, ret
 * included (x86-64; gcc 12 and clang 14 -O2 both stay within it):
 *   hotpath-budget: sp_cache_alloc_open 26
 *   hotpath-budget: sp_cache_free_open 46
 *   hotpath-budget: sp_malloc_open 28
 *   hotpath-budget: sp_free_open 46
 *   hotpath-budget: sp_cache_alloc_counted 27
 *   hotpath-budget: sp_cache_free_counted 46
 *   hotpath-budget: sp_malloc_counted 29
 *   hotpath-budget: sp_free_counted 46
 * The same on arm64 (a cross build, gcc 12 -O2; percpu/arch-arm64.h), where
 * every constant and address takes an instruction of its own and the
 * sequence's commit stores the hit count with the top:
 *   hotpath-budget-arm64: sp_cache_alloc_open 33
 *   hotpath-budget-arm64: sp_cache_free_open 54
 *   hotpath-budget-arm64: sp_malloc_open 33
 *   hotpath-budget-arm64: sp_free_open 54
 *   hotpath-budget-arm64: sp_cache_alloc_counted 40
 *   hotpath-budget-arm64: sp_cache_free_counted 55
 *   hotpath-budget-arm64: sp_malloc_counted 40
 *   hotpath-budget-arm64: sp_free_counted 55
 * An allocation: cache checks (NULL, gfp, magic), the slot array from line
 * 0, the sequence (15, percpu/arch-x86_64.h), the free mark cleared.  A free:
 * the page tag (space range check and one load, sp_hot_tag(): the space's
 * words from the same line as the sequence's slot bound), NULL tests, the
 * object-boundary check (slab/slab.h), the free-mark test, the sequence.
 * segpool_malloc() takes its cache from one table load instead of checking
 * one; segpool_free() takes it from the tag.
 *
 * Dependent loads: an allocation goes cache -> slot array -> slot top ->
 * round; the rseq offset, id field and slot bound are per-process words
 * (percpu/pcpu.h, sp_pcpu_fast) loaded beside them.  A free goes object ->
 * page tag, with the cache's geometry in parallel, then the slot chain; the
 * tag holds the object's cache and node together, so the one compare with
 * the slot's expected tag is the ownership check and the remote-free check
 * at once.
 *
 * The always-on guarantees and where each is checked on a hit:
 *   - a pointer outside the space, or in a page of no slab: the tag is 0
 *     and the slot expects a cache (push's first compare);
 *   - an object of another cache (or another node: sent home): the tag
 *     differs from the slot's expected tag (same compare);
 *   - an interior pointer: sp_obj_at_boundary(), before the sequence;
 *   - a double free: the free mark, before the sequence (slab/freemark.h);
 *   - a destroyed or bogus cache handle: the magic on allocation; on free
 *     the handle's slot array must expect the object's tag, which only the
 *     live cache's does (a destroyed cache's slots are the nil ones).
 * Everything else (and every miss) goes to the slow path, which checks
 * again in full and reports misuse with the cache name and address.
 */
#ifndef SP_CORE_HOTPATH_H
#define SP_CORE_HOTPATH_H

#include "internal/compiler.h"
#include "internal/sanitize.h"
#include "percpu/pcpu.h"
#include "prof/prof.h"
#include "slab/slab.h"

/*
 * sp_hot_tag() - sp_space_tag() (numa/region.h) read from the layout line
 * (sp_pcpu_fast, by its name sp_pcpu_fast_tag; segpool/inline.h), whose
 * copy of the space's base, size and tag array is set before any object
 * exists and never changes
 * (core/inline_abi.c).  The sequences read that line anyway (slot bound,
 * id offset): a free's hit then reads one line of process-wide words, not
 * two, which is one miss fewer when its caches went cold (a context
 * switch, another program's work) and one line fewer in L1 otherwise.
 * The same code as the inline free's __segpool_inline_tag() but for the
 * version test: the library's hit path is open in every build.
 */
static __sp_always_inline uintptr_t sp_hot_tag(const void *ptr)
{
	uintptr_t off = (uintptr_t)ptr - (uintptr_t)sp_pcpu_fast_tag.space_base;

	if (unlikely(off >= sp_pcpu_fast_tag.space_size))
		return 0;
	return SP_READ_ONCE(sp_pcpu_fast_tag.tags[off >> SP_PAGE_SHIFT]);
}

/*
 * sp_hot_alloc() - a round of @c's loaded magazine on this CPU, or NULL
 * (miss: the caller tail-calls its slow path).  @c must be a live cache,
 * or, with @boot, a size class's table entry, which is the boot stand-in
 * (core/kmalloc.c) before start-up: then the sequence is never entered
 * (sp_pcpu_base_boot(), percpu/pcpu.h).  @boot: a constant.
 */
static __sp_always_inline void *sp_hot_alloc(struct segpool_cache *c,
					     const bool boot)
{
	void *obj = boot ? sp_pcpu_pop_boot(c->slots, miss) :
			   sp_pcpu_pop(c->slots, miss);

	if (!obj)			/* a round is never NULL */
		__builtin_unreachable();

	obj = sp_san_alloc(c, obj);	/* ASan builds: before the store */
	sp_freemark_clear(obj, c->key_off);
	return obj;
miss:
	return NULL;
}

/*
 * sp_hot_alloc_counted() - sp_hot_alloc() for the counted build (core/
 * entry.h) and the slow paths while sampled heap profiling keeps the hit
 * paths closed (prof/prof.h): the same sequence on the slot bound the hit
 * paths would have, then one off the slot's sample count.  While the
 * count stays above 0, *@due is NULL and the round is handed out as
 * sp_hot_alloc() hands it; when it runs out, *@due is the slot and the
 * round is returned as the layers keep a free object, for the caller to
 * hand to sp_alloc_due().  NULL: a miss.  @boot: as for sp_hot_alloc().
 */
static __sp_always_inline void *
sp_hot_alloc_counted(struct segpool_cache *c, struct sp_pcpu_slot **due,
		     const bool boot)
{
	struct sp_pcpu_slot *slot;
	bool out;			/* the slot's sample count ran out */
	void *obj = boot ?
		sp_pcpu_pop_counted_boot(c->slots, sp_pcpu_closed_nr, slot,
					 out, miss) :
		sp_pcpu_pop_counted(c->slots, sp_pcpu_closed_nr, slot, out,
				    miss);

	if (!obj || !slot)		/* a round is never NULL, nor a slot */
		__builtin_unreachable();
	if (unlikely(out)) {
		*due = slot;
		return obj;
	}
	*due = NULL;
	obj = sp_san_alloc(c, obj);
	sp_freemark_clear(obj, c->key_off);
	return obj;
miss:
	return NULL;
}

/*
 * sp_alloc_due() - the round @obj of @c, for a request of @size bytes,
 * whose slot's sample count ran out (sp_hot_alloc_counted(): @slot):
 * sampled or not (sp_prof_hit()), then handed out (sp_obj_out()).  @site:
 * the allocating call (prof/prof.h, sp_prof_site()).  @size first, @slot
 * fourth: the registers segpool_malloc()'s size and the pop's slot are in.
 */
SP_INTERNAL __sp_noinline void *sp_alloc_due(size_t size,
					     struct segpool_cache *c,
					     void *obj,
					     struct sp_pcpu_slot *slot,
					     void *site);

/*
 * sp_sample_put_back() - @obj, a round of @c as the layers keep a free
 * object (marked, poisoned), that a sample's swap replaced: onto this
 * CPU's magazine by the closed push, as a free of the program's would go,
 * or, on a miss, back to its slab under the node's lock (core/cache_api.c).
 */
SP_INTERNAL __sp_noinline void sp_sample_put_back(struct segpool_cache *c,
						  void *obj);

/*
 * sp_sample_swapped() - @out, what the sampler made of @obj of @c (prof/
 * prof.h): when a sample swapped it for an object of a sampled slab, @obj
 * goes back (sp_sample_put_back()).  Return: @out.
 */
static __sp_always_inline void *sp_sample_swapped(struct segpool_cache *c,
						  void *obj, void *out)
{
	if (unlikely(out != obj))
		sp_sample_put_back(c, obj);
	return out;
}

/* Slow paths behind sp_hot_free() (core/cache_api.c). */
/* @obj failed a check before any change: analyse it in full and free it. */
SP_INTERNAL __sp_noinline void sp_free_slow(struct segpool_cache *c, void *obj);
/* @obj passed boundary and mark checks and is poisoned; the sequence missed. */
/* @kfree: the cache came from the tag (segpool_free()), not the caller. */
SP_INTERNAL __sp_noinline void sp_free_miss(struct segpool_cache *c, void *obj,
					    uintptr_t tag, bool kfree);

/*
 * sp_hot_free_checks() - the checks a free's hit makes before its
 * sequence, reading only: false when one failed and sp_free_slow(), given
 * @obj untouched, judged it.
 */
static __sp_always_inline bool sp_hot_free_checks(struct segpool_cache *c,
						  void *obj, unsigned int koff)
{
	if (unlikely(!sp_obj_at_boundary(c, obj) ||
		     sp_freemark_is_set(obj, koff))) {
		sp_free_slow(c, obj);
		return false;
	}
	sp_san_free(c, obj);		/* before anyone else may take it */
	return true;
}

/*
 * sp_hot_free() - free @obj, whose page tag is @tag, into @c (found from
 * the tag itself when @kfree), after sp_hot_free_checks().
 */
static __sp_always_inline void sp_hot_free(struct segpool_cache *c, void *obj,
					   uintptr_t tag, bool kfree)
{
	unsigned int koff = c->key_off;

	if (!sp_hot_free_checks(c, obj, koff))
		return;
	sp_pcpu_push(c->slots, obj, tag, sp_freemark(obj), koff, miss);
	return;
miss:
	sp_free_miss(c, obj, tag, kfree);
}

/*
 * sp_hot_free_counted() - sp_hot_free() of the counted build: the closed
 * sequence.  A recorded object lies in a sampled slab, whose page tag no
 * slot expects (slab/slab.h, SP_TAG_SAMPLED): its push misses, and the
 * slow path drops the record.  Nothing else to test.
 */
static __sp_always_inline void sp_hot_free_counted(struct segpool_cache *c,
						   void *obj, uintptr_t tag,
						   bool kfree)
{
	unsigned int koff = c->key_off;

	if (!sp_hot_free_checks(c, obj, koff))
		return;
	sp_pcpu_push_nr(c->slots, sp_pcpu_closed_nr, obj, tag,
			sp_freemark(obj), koff, miss);
	return;
miss:
	sp_free_miss(c, obj, tag, kfree);
}

#endif /* SP_CORE_HOTPATH_H */
