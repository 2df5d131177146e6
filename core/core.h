/* SPDX-License-Identifier: MIT */
/*
 * core/core.h - glue between the public API and the layers below (private).
 */
#ifndef SP_CORE_CORE_H
#define SP_CORE_CORE_H

#include <stdbool.h>
#include <stddef.h>

#include "internal/compiler.h"
#include "internal/init.h"
#include "internal/sanitize.h"
#include "large/large.h"
#include "percpu/pcpu.h"
#include "slab/slab.h"

/* --- core/init.c (sp_init() and its words: internal/init.h) --- */
/*
 * sp_lib_drain() - free what signal handlers deferred on this thread while
 * it was inside the library (internal/reentry.h), then do the work wanted
 * of a leaving call (sp_lib_wanted: start the decay thread,
 * sp_decay_leave()); called by a slow path as it leaves, outermost and
 * with no lock held, when sp_lib_leave() says so.
 */
SP_INTERNAL __sp_cold void sp_lib_drain(void);
/* sp_lib_defer_free() - put @obj (checked) on this thread's deferred list. */
SP_INTERNAL void sp_lib_defer_free(void *obj);

/* --- core/verbose.c --- */
/* The settings in force, on stderr (SEGPOOL_VERBOSE; once, at start-up). */
SP_INTERNAL void sp_init_verbose(void);

/* --- core/cache_api.c --- */
/*
 * sp_cache_shrink() - segpool_cache_shrink() of a cache known to be live:
 * drain its per-CPU layer, release its empty slabs, and with @purge give
 * the nodes' free pages back at once.  Return: the slabs released.
 */
SP_INTERNAL int sp_cache_shrink(struct segpool_cache *cache, bool purge);
/*
 * sp_cache_create_full() - a slab cache with its per-CPU layer in front
 * (none in SEGPOOL_PERCPU=off mode).  Return: it, or NULL with errno set.
 */
SP_INTERNAL struct segpool_cache *
sp_cache_create_full(const char *name, size_t size, size_t align,
		     unsigned long flags, void (*ctor)(void *));
/* --- core/kmalloc.c --- */
#define SP_KMALLOC_NR_CLASSES	53
#define SP_KMALLOC_BY8_MAX	1024
/*
 * Above SP_KMALLOC_BY8_MAX sp_kmalloc_mid[] has an entry every 64 bytes,
 * the first for 1025-1088 bytes: 496 entries, within a page.
 */
#define SP_KMALLOC_MID_SHIFT	6
#define SP_KMALLOC_MID_STEP	(1U << SP_KMALLOC_MID_SHIFT)
#define SP_KMALLOC_MID_FIRST	((SP_KMALLOC_BY8_MAX >> \
				  SP_KMALLOC_MID_SHIFT) + 1)
#define SP_KMALLOC_MID_NR	((SEGPOOL_KMALLOC_MAX_CACHE_SIZE >> \
				  SP_KMALLOC_MID_SHIFT) + 1 - \
				 SP_KMALLOC_MID_FIRST)
/* classes fitted to a dominant request size (core/kmalloc.c), at most */
#define SP_KMALLOC_FIT_MAX	16
/* every class, the fitted ones after the table's: sp_kmalloc_any() */
#define SP_KMALLOC_NR_ANY	(SP_KMALLOC_NR_CLASSES + SP_KMALLOC_FIT_MAX)

/*
 * The size classes for the hit path: sp_kmalloc_by8[(size + 7) >> 3] is the
 * cache of any size up to SP_KMALLOC_BY8_MAX (one load, no arithmetic but
 * the shift), sp_kmalloc_mid[((size + 63) >> 6) - 17] of any size above it
 * up to SEGPOOL_KMALLOC_MAX_CACHE_SIZE (one load where sp_kmalloc_index()
 * takes a bit scan and a dozen dependent steps: a loop of 2 KiB
 * segpool_malloc() and segpool_free() pairs went from 9.4-10.1 to 8.7-8.8
 * ns a pair; the 17 folds into the load's displacement),
 * sp_kmalloc_caches[] every class of the table.  The 64-byte steps above
 * 1 KiB let a class fitted to one request size take that size's entries
 * (core/kmalloc.c; steps of 16 took a table of four pages, and a process
 * that made classes there wrote all four: the git case's 184 processes
 * took 940 page faults more); by8[] is the inline layout's and keeps the
 * table's classes.
 * Until its class is made
 * (its first allocation, sp_kmalloc_get()) an entry is a stand-in whose
 * allocations always miss (nil slots; before start-up the hit paths are
 * closed: percpu/pcpu.h), so segpool_malloc() needs no test of its own.
 */
extern SP_INTERNAL struct segpool_cache
	*sp_kmalloc_by8[(SP_KMALLOC_BY8_MAX >> 3) + 1];
extern SP_INTERNAL struct segpool_cache *sp_kmalloc_mid[SP_KMALLOC_MID_NR];
extern SP_INTERNAL struct segpool_cache
	*sp_kmalloc_caches[SP_KMALLOC_NR_CLASSES];

SP_INTERNAL int sp_kmalloc_init(void);

/*
 * sp_kmalloc_load() - a class table entry as the hit paths read it.  Made
 * classes are published with release stores (sp_kmalloc_get()); a reader
 * orders the cache's fields after the entry by their address dependency,
 * as the kernel's rcu_dereference() does, so the load is a plain one: a
 * volatile load of an aligned word, which the compiler neither tears nor
 * repeats, and which keeps arm64's scaled-index load (an atomic load there
 * takes an address computed apart, one instruction more on the hit path).
 * ThreadSanitizer does not follow dependencies: its builds load with
 * acquire (the same instruction on x86-64).
 */
static __sp_always_inline struct segpool_cache *
sp_kmalloc_load(struct segpool_cache *const *entry)
{
#if SP_TSAN
	return __atomic_load_n(entry, __ATOMIC_ACQUIRE);
#else
	return *(struct segpool_cache *const volatile *)entry;
#endif
}

/* The entry of sp_kmalloc_mid[] for @size (SP_KMALLOC_BY8_MAX < @size <=
 * SEGPOOL_KMALLOC_MAX_CACHE_SIZE). */
static __sp_always_inline struct segpool_cache *const *
sp_kmalloc_mid_entry(size_t size)
{
	return &sp_kmalloc_mid[((size + SP_KMALLOC_MID_STEP - 1) >>
				SP_KMALLOC_MID_SHIFT) - SP_KMALLOC_MID_FIRST];
}

/* The entry of either table for @size (@size <= the largest class). */
static inline struct segpool_cache *const *sp_kmalloc_entry(size_t size)
{
	return size <= SP_KMALLOC_BY8_MAX ? &sp_kmalloc_by8[(size + 7) >> 3]
					  : sp_kmalloc_mid_entry(size);
}

/* The inline ABI's words, set before the hit paths open (core/inline_abi.c). */
SP_INTERNAL void sp_inline_abi_publish(void);
/*
 * Close the inline hit path for good (its version word back to 0): while
 * sampling runs, a page tag may carry SP_TAG_SAMPLED, which layout
 * version 1 does not know; every inline call is then the library's.
 */
SP_INTERNAL void sp_inline_abi_close(void);
/* Copy the space's words to the layout line (core/hotpath.h sp_hot_tag()). */
SP_INTERNAL void sp_inline_abi_space(void);
/*
 * sp_kmalloc_index() - index of the smallest class holding @size (@size <=
 * 32 KiB).  Up to 128 bytes by steps of 16 (8 apart); up to 4 KiB four
 * classes per power of two, 2^p * (4 + k) / 4, k = 1..4; above, eight,
 * 2^p * (8 + k) / 8, k = 1..8 (core/kmalloc.c checks it against the table).
 */
#define SP_KMALLOC_FINE_FROM	4096	/* eight classes a power above */
#define SP_KMALLOC_FINE_IDX	28	/* the index of 4096 */

static inline unsigned int sp_kmalloc_index(size_t size)
{
	unsigned int p, k;

	if (size <= 8)
		return 0;
	if (size <= 128)
		return (unsigned int)((size + 15) >> 4);
	p = sp_ilog2(size - 1);
	if (size <= SP_KMALLOC_FINE_FROM) {
		k = (unsigned int)(((size - (1UL << p)) * 4 + (1UL << p) -
				    1) >> p);
		return 8 + (p - 7) * 4 + k;
	}
	k = (unsigned int)(((size - (1UL << p)) * 8 + (1UL << p) - 1) >> p);
	return SP_KMALLOC_FINE_IDX + (p - 12) * 8 + k;
}
SP_INTERNAL size_t sp_kmalloc_class_size(unsigned int idx);
/* The class's cache, or NULL while it is not made (no allocation yet). */
SP_INTERNAL struct segpool_cache *sp_kmalloc_cache(unsigned int idx);
/*
 * sp_kmalloc_get() - the class's cache, made now if it was not: for the
 * slow paths of an allocation.  Return: it, or NULL with errno set.
 */
SP_INTERNAL struct segpool_cache *sp_kmalloc_get(unsigned int idx);
/*
 * sp_kmalloc_class() - the cache segpool_malloc() takes @size from now:
 * its table entry's (a fitted class, where one took the size), made now
 * if it was not.  For the slow paths.  Return: it, or NULL with errno set.
 */
SP_INTERNAL struct segpool_cache *sp_kmalloc_class(size_t size);
/* The class's cache, NULL while the entry still points at the stand-in. */
SP_INTERNAL struct segpool_cache *sp_kmalloc_class_made(size_t size);
/*
 * sp_kmalloc_any() - class @i of every class made: the table's (@i below
 * SP_KMALLOC_NR_CLASSES), then the fitted ones; NULL for one not made.
 */
SP_INTERNAL struct segpool_cache *sp_kmalloc_any(unsigned int i);
/*
 * sp_kmalloc_fit_vote() - an allocation of @size above SP_KMALLOC_BY8_MAX
 * left the hit path of @c, the table's class its entry points at: the
 * vote that may fit a class to @size (core/kmalloc.c).
 */
SP_INTERNAL void sp_kmalloc_fit_vote(size_t size, struct segpool_cache *c);
/* "kmalloc-64", "kmalloc-1k": the name of class @idx. */
SP_INTERNAL void sp_kmalloc_name(unsigned int idx, char *buf, size_t size);
/* fork: the makers' lock, taken before every other (core/init.c). */
SP_INTERNAL void sp_kmalloc_fork_lock(void);
SP_INTERNAL void sp_kmalloc_fork_unlock(void);
SP_INTERNAL void sp_kmalloc_fork_child(void);

/* --- core/malloc_api.c --- */
/*
 * sp_malloc_node_zeroed() - segpool_malloc_node() of zero-filled memory
 * (calloc, kzalloc); a large block is cleared only when its pages may
 * hold old data.
 */
SP_INTERNAL void *sp_malloc_node_zeroed(size_t size, int node);

#endif /* SP_CORE_CORE_H */
