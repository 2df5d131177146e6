/* SPDX-License-Identifier: MIT */
/*
 * percpu/depot.h - a node's magazines that no CPU has loaded (private).
 *
 * Two stacks per node, full and empty magazines, each one 16-byte word:
 * the top magazine, a generation that every push and pop bumps, and the
 * number of magazines on it.  An exchange (give one, take one) is two
 * compare-and-swaps of such words, with no lock: the generation makes a
 * pop that raced a pop and a push of the same magazine fail instead of
 * linking a stale successor (ABA), and the count, changed in the same
 * word, makes the depot's bound exact.
 *
 * A pop reads the top magazine's link before its compare-and-swap, and
 * that magazine may meanwhile have been taken and freed.  The read is
 * still safe: magazines live in the library's slabs, whose pages stay
 * mapped once committed (numa/region.c never gives committed address
 * space back), so a stale read returns some word, and the generation has
 * moved on, so the compare-and-swap fails and the pop starts again.  The
 * read is not instrumented by ASan (it may land in a freed object).
 *
 * Without a 16-byte compare-and-swap (percpu/arch.h; on x86-64 CPUID says,
 * qemu's default CPU model lacks it), and in ThreadSanitizer builds, whose
 * checker cannot follow it, each push and pop takes the depot's spinlock
 * instead: the same stacks, the same counts.
 *
 * The depot's mutex is never taken by an exchange.  It serialises the
 * rare whole-depot work: the sizing window (every SP_DEPOT_WINDOW stack
 * operations), drains and fork.  Lock order: see core/init.c, levels 6
 * and 12.
 */
#ifndef SP_PERCPU_DEPOT_H
#define SP_PERCPU_DEPOT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "internal/compiler.h"

struct sp_mag;
struct sp_pcpu_cache;
struct sp_pcpu_slot;

/* One stack: exactly one 16-byte compare-and-swap word. */
union sp_mag_stack {
	struct {
		struct sp_mag *head;	/* top magazine, or NULL */
		uint32_t gen;		/* bumped by every push and pop */
		uint32_t nr;		/* magazines on the stack */
	};
	uint64_t w[2];
} __attribute__((aligned(16)));

_Static_assert(sizeof(union sp_mag_stack) == 16, "one cmpxchg16b word");

/*
 * struct sp_depot - one node's depot.  Line 0 holds what every exchange
 * touches (the two stack words, the object count, the contention count);
 * the rest is for the sizing window and drains.  Line-aligned, so two
 * nodes' depots never share a line.
 */
struct sp_depot {
	/* --- line 0: exchanges --- */
	union sp_mag_stack full;	/* 0: full magazines */
	union sp_mag_stack empty;	/* 16: empty magazines */
	int64_t objs;			/* 32: rounds in the full ones (atomic
					 * adds; may dip below 0 for a
					 * moment) */
	uint64_t contended;		/* 40: retried compare-and-swaps
					 * (atomic) */
	uint32_t min_full;		/* 48: low-water marks since the last */
	uint32_t min_empty;		/* 52:   window: Bonwick's working
					 *       set */
	uint32_t spin;			/* 56: the stacks' lock without cas16 */
	uint32_t pad0;			/* 60 */
	/* --- line 1: the window, drains (under @lock) --- */
	pthread_mutex_t lock __sp_cacheline_aligned;
	uint64_t reaped;		/* magazines reaped back to slabs */
	uint64_t win_contended;		/* @contended at the window's start */
	uint32_t win_ops;		/* both generations at the window's
					 * start */
	uint32_t quiet;			/* windows without contention since the
					 * last contended one (>1/16) */
} __sp_cacheline_aligned;

_Static_assert(offsetof(struct sp_depot, full) == 0 &&
	       offsetof(struct sp_depot, empty) == 16,
	       "stack words are 16-byte aligned, in line 0");
_Static_assert(sizeof(struct sp_depot) % SP_CACHE_LINE == 0,
	       "depots never share a line");

/*
 * Whether the stacks are lock-free: a build with cas16 (not TSan) on a CPU
 * that has it.  Set once by sp_depot_setup() at start-up, before any depot.
 */
SP_INTERNAL extern bool sp_depot_lockfree;
SP_INTERNAL void sp_depot_setup(void);

/* Tests: windows size but reap nothing (a race keeps all its magazines). */
SP_INTERNAL extern bool sp_depot_test_no_reap;

SP_INTERNAL void sp_depot_init(struct sp_depot *d);
/* fork: the child starts the depot's locks afresh. */
SP_INTERNAL void sp_depot_fork_child(struct sp_depot *d);

/*
 * sp_depot_exchange() - give @give (may be NULL) to the list its count puts
 * it on, and take a full (@want_full) or empty magazine from @slot's node's
 * depot.  Returns the magazine taken, or NULL.  A magazine the depot has no
 * room for, or an empty one of a retired class, is flushed and freed here.
 * The caller owns @slot.
 */
SP_INTERNAL struct sp_mag *sp_depot_exchange(struct sp_pcpu_cache *pc,
					     struct sp_pcpu_slot *slot,
					     struct sp_mag *give,
					     bool want_full);

/* sp_depot_exchange() with nothing to take: give @give alone. */
SP_INTERNAL void sp_depot_put(struct sp_pcpu_cache *pc,
			      struct sp_pcpu_slot *slot, struct sp_mag *give);

/*
 * sp_depot_put_home() - sp_depot_put() into node index @node's depot
 * instead of @slot's own: a full magazine of that node's objects (remote
 * frees, percpu/alien.h).  The caller owns @slot and @give.
 */
SP_INTERNAL void sp_depot_put_home(struct sp_pcpu_cache *pc,
				   struct sp_pcpu_slot *slot, unsigned int node,
				   struct sp_mag *give);

/*
 * sp_depot_get_empty() - an empty magazine from node index @node's depot,
 * or NULL; counted on @slot, which the caller owns.
 */
SP_INTERNAL struct sp_mag *sp_depot_get_empty(struct sp_pcpu_cache *pc,
					      struct sp_pcpu_slot *slot,
					      unsigned int node);

/* Empty every magazine of node @n's depot into the slabs and free them. */
SP_INTERNAL void sp_depot_drain(struct sp_pcpu_cache *pc, int n);

struct sp_depot_info {
	uint64_t objs;			/* rounds in full magazines */
	uint64_t full;			/* full magazines */
	uint64_t empty;			/* empty magazines */
};
/* Node @n's depot, read without stopping its exchanges. */
SP_INTERNAL void sp_depot_read(struct sp_pcpu_cache *pc, int n,
			       struct sp_depot_info *info);

/* A magazine's rounds into the slabs (the caller owns it). */
SP_INTERNAL void sp_mag_flush(struct sp_pcpu_cache *pc, struct sp_mag *m);

#endif /* SP_PERCPU_DEPOT_H */
