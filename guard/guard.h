/* SPDX-License-Identifier: MIT */
/*
 * guard/guard.h - sampled guard pages, KFENCE / GWP-ASan style (private).
 *
 * SEGPOOL_GUARD_SAMPLE=N hands out one allocation in N of those that reach
 * an allocation slow path (a magazine miss, any allocation of a cache
 * without magazines) from the guard pool instead: one reservation, made
 * once at start-up, of SEGPOOL_GUARD_SLOTS one-page slots with an
 * inaccessible guard page on each side of every slot:
 *
 *   base: | guard | slot 0 | guard | slot 1 | guard | ... | slot n-1 | guard |
 *
 * The object takes one end of its slot, the end alternating from one use
 * of a slot to the next: at the right end an overflow touches the guard
 * page after it at its first byte past the object, at the left end an
 * underflow touches the guard page before it at its first byte.  A freed
 * slot is made inaccessible at once (its memory given back) and goes to
 * the tail of a FIFO: it is used again only after every other free slot,
 * so a use after free faults for at least that many guarded allocations.
 * The SIGSEGV handler (guard/fault.c) recognises the pool's range,
 * reports with the cache's name, the object, the access and both call
 * sites, then aborts or continues as SEGPOOL_DEBUG_RESPONSE says; a
 * fault elsewhere goes to the handler that was there before.
 *
 * Nothing of this is on a hit path.  The pool lies outside the space, so
 * its pages have no space tag: every free of a guarded object takes the
 * free's untagged slow path (segpool_free(): sp_free_untagged();
 * segpool_cache_free(): sp_free_slow()), where sp_guard_owns() is one
 * range check.  Which objects qualify: from a size class or a cache
 * without debug flags, of at most a page, not SEGPOOL_TYPESAFE_BY_RCU
 * (a reader may look at a freed object), not the library's own, asked for
 * no particular node.
 *
 * Lock: sp_guard.lock, a leaf (core/init.c level 11): the slot lists.
 * The fault handler takes no lock; it reads a slot's record as it is.
 */
#ifndef SP_GUARD_GUARD_H
#define SP_GUARD_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal/compiler.h"
#include "slab/debug.h"

struct segpool_cache;

/* A slot's life: never used, holding an object, freed (inaccessible). */
enum sp_guard_state {
	SP_GUARD_NEVER,
	SP_GUARD_LIVE,
	SP_GUARD_FREED,
};

/* Guard pages a continued report opened, to close again at the free. */
#define SP_GUARD_OPEN_LEFT	1U
#define SP_GUARD_OPEN_RIGHT	2U
#define SP_GUARD_OPEN_SLOT	4U

/*
 * struct sp_guard_slot - the record of one slot, outside the pool (its
 * pages are inaccessible when the slot is free).  Written under the pool's
 * lock; the fault handler reads it without.
 */
struct sp_guard_slot {
	struct segpool_cache *cache;	/* the object's cache
					 * (size class too) */
	uintptr_t obj;			/* the object's address;
					 * 0: never used */
	uint32_t size;			/* its bytes, as asked for */
	uint8_t state;			/* enum sp_guard_state */
	uint8_t left;			/* at the slot's left
					 * end (else right) */
	uint8_t opened;			/* SP_GUARD_OPEN_* */
	uint8_t pad;
	uint32_t next;			/* free FIFO link; UINT32_MAX: none */
	uint32_t pad1;
	struct sp_debug_track alloc;	/* where it was allocated */
	struct sp_debug_track free;	/* and freed (seq 0: not yet) */
};

/* The slot page of slot @i, and the slot of pool page @page (odd pages). */
#define SP_GUARD_SLOT_PAGE(i)	(2 * (uintptr_t)(i) + 1)

/* The pool's slot records and their number (guard/pool.c). */
extern SP_INTERNAL struct sp_guard_slot *sp_guard_slots;
extern SP_INTERNAL unsigned int sp_guard_nr_slots;
/* The byte a slot's unused part holds: checked at the free. */
#define SP_GUARD_FILL		0xaa

/* The pool's range; both 0 while the pool is off (the default). */
struct sp_guard_range {
	uintptr_t base;			/* first byte of the reservation */
	uintptr_t size;			/* its bytes */
};
extern SP_INTERNAL struct sp_guard_range sp_guard_range;
/* N of SEGPOOL_GUARD_SAMPLE, 0 when off: read by the slow paths only. */
extern SP_INTERNAL unsigned int sp_guard_rate;

/* sp_guard_owns() - whether @p lies in the guard pool (off: never). */
static inline bool sp_guard_owns(const void *p)
{
	return unlikely((uintptr_t)p - sp_guard_range.base <
			sp_guard_range.size);
}

/* --- guard/pool.c --- */
/*
 * sp_guard_init() - read SEGPOOL_GUARD_SAMPLE and SEGPOOL_GUARD_SLOTS;
 * when sampling is asked for, reserve the pool, install the fault handler
 * and prime backtrace().  Called once, at the end of initialisation.
 */
SP_INTERNAL void sp_guard_init(void);
/*
 * sp_guard_sample() - whether this slow-path allocation of @size bytes
 * from @c should be a guarded one (counts the call).
 */
SP_INTERNAL bool sp_guard_sample(const struct segpool_cache *c, size_t size);
/*
 * sp_guard_alloc() - a guarded object of @size bytes (@size 0: the
 * cache's object size) for @c, zeroed when @zero, constructed when @c has
 * a constructor.  Return: the object, or NULL when every slot is in use
 * (counted: the caller serves a normal object).
 */
SP_INTERNAL void *sp_guard_alloc(struct segpool_cache *c, size_t size,
				 bool zero);
/*
 * sp_guard_free() - free the guarded object @p; @c is the cache the caller
 * names (segpool_cache_free()), NULL for segpool_free().  A pointer that
 * is no live guarded object (interior, double free, another cache's) is
 * reported with both call sites; then the response decides.
 */
SP_INTERNAL void sp_guard_free(struct segpool_cache *c, void *p);
/* sp_guard_usable_size() - the bytes of the guarded object @p (0: none). */
SP_INTERNAL size_t sp_guard_usable_size(const void *p);
/* Fork: the lock is taken around fork(), the child gets it afresh. */
SP_INTERNAL void sp_guard_fork_lock(void);
SP_INTERNAL void sp_guard_fork_unlock(void);
SP_INTERNAL void sp_guard_fork_child(void);

/* What the statistics and the tests see of the pool. */
struct sp_guard_stats {
	uint64_t allocs;		/* guarded objects handed out */
	uint64_t frees;			/* and freed */
	uint64_t exhausted;		/* samples served normally:
					 * no free slot */
	uint64_t faults;		/* faults reported */
	unsigned int slots;		/* slots in the pool */
	unsigned int in_use;		/* slots holding an object now */
};
SP_INTERNAL void sp_guard_get_stats(struct sp_guard_stats *st);

/* --- guard/fault.c --- */
/* sp_guard_fault_install() - the SIGSEGV handler; 0 or -1 (errno). */
SP_INTERNAL int sp_guard_fault_install(void);
/*
 * sp_guard_report() - report @kind ("use-after-free", "double free", ...)
 * about slot @s at @addr (a write when @write; @access false: found by a
 * free, not an access), @what the line saying what was seen.
 * Return: true when the response is to continue.
 */
SP_INTERNAL bool sp_guard_report(const char *kind,
				 const struct sp_guard_slot *s, uintptr_t addr,
				 bool access, bool write, const char *what);
/* sp_guard_count_fault() - one more report (the statistics). */
SP_INTERNAL void sp_guard_count_fault(void);

#endif /* SP_GUARD_GUARD_H */
