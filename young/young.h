/* SPDX-License-Identifier: MIT */
/*
 * young/young.h - the first small blocks of a process, before their size
 * classes are made (young/young.c).
 *
 * segpool_malloc() serves a size up to 4 KiB whose class is not made yet,
 * for the class's first SP_YOUNG_CLASS_BLOCKS blocks (and
 * SP_YOUNG_CLASS_BYTES), from one static area by a bump pointer: a
 * short program's two dozen classes would each fault in a slab page, a
 * slot block and its magazines for a handful of blocks.  A young block's
 * memory is never reused; a map beside the area keeps its class and its
 * state, so free, realloc, usable_size and kfree_rcu know it and a double
 * free is reported.  Like guard/'s sampled objects, a young block lies
 * outside the space: its page tag is 0, every hit path misses on it, and
 * the slow paths ask sp_young_owns() (one compare) before the large-block
 * lookup.
 */
#ifndef SP_YOUNG_YOUNG_H
#define SP_YOUNG_YOUNG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal/compiler.h"

/*
 * Bytes of the area (.bss: the pages never reached cost nothing).  The git
 * case's 184 processes (tools/bench/programs.sh): 128 KiB took 7.0
 * thousand page faults fewer than no area and 0.36 MB more peak RSS (the
 * peak process spends the whole area, freed blocks are not reused), 64
 * KiB 5.5 thousand fewer and 0.10 MB more.
 */
#define SP_YOUNG_SIZE		(64UL << 10)
/*
 * A class is made at its 65th block, or past 8 KiB of young blocks, or
 * when the area is used up.
 */
#define SP_YOUNG_CLASS_BLOCKS	64
#define SP_YOUNG_CLASS_BYTES	(8UL << 10)
/* Sizes served young, up to a page (any class when its cache fails). */
#define SP_YOUNG_MAX		4096
/* The size classes (core/kmalloc.c checks it). */
#define SP_YOUNG_CLASSES	53

extern SP_INTERNAL char sp_young_area[SP_YOUNG_SIZE];

/* sp_young_owns() - is @p inside the young area? */
static inline bool sp_young_owns(const void *p)
{
	return (uintptr_t)p - (uintptr_t)sp_young_area < SP_YOUNG_SIZE;
}

/*
 * sp_young_init() - decide once whether young blocks are served: not under
 * AddressSanitizer or valgrind (they watch the caches' objects), not with
 * SEGPOOL_DEBUG set (its checks are the caches'); @name_fn names class
 * @idx in reports ("kmalloc-64").  Start-up, with the settings.  The
 * caller leaves them alone while fault injection, guard sampling or heap
 * profiling runs (each works on the caches' objects).
 */
SP_INTERNAL void sp_young_init(void (*name_fn)(unsigned int idx, char *buf,
					       size_t size));
/* sp_young_enabled() - whether young blocks are served in this process. */
SP_INTERNAL bool sp_young_enabled(void);
/*
 * sp_young_alloc() - a young block of class @idx (below SP_YOUNG_CLASSES),
 * whose cache is not made, of the class's @size bytes (up to SP_YOUNG_MAX);
 * @any: past the class's share, and of any size (the class could not be
 * made).  Return: the block
 * (aligned as the class's objects, @size bytes usable, zeroed), or NULL
 * when the class has had its share, the area is used up, or young blocks
 * are off: make the class.
 */
SP_INTERNAL void *sp_young_alloc(unsigned int idx, size_t size, bool any);
/*
 * sp_young_size() - the usable size of the live young block @p; misuse
 * (not a block's start, or freed) is reported as @op's with the class's
 * name, and does not return.
 */
SP_INTERNAL size_t sp_young_size(const void *p, const char *op);
/*
 * sp_young_free() - free the young block @p; a double free or a pointer
 * that is no block's start is reported, and does not return.
 */
SP_INTERNAL void sp_young_free(void *p);
/* Blocks handed out, the area's bytes they took, the live ones' bytes. */
SP_INTERNAL void sp_young_counts(uint64_t *blocks, uint64_t *area,
				 uint64_t *live);

#endif /* SP_YOUNG_YOUNG_H */
