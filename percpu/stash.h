/* SPDX-License-Identifier: MIT */
/*
 * percpu/stash.h - a slot's own full magazines, kept for its own
 * allocations (private; the slow paths of percpu/magazine.c).
 *
 * A CPU whose working set swings by more than its two magazines hold (a
 * batch of a few thousand objects allocated, used and freed, round after
 * round) gives its full magazines to the node's depot in every free phase
 * and takes full ones back in every allocation phase, whichever CPU put
 * them there.  Two such CPUs on one size class then trade objects every
 * round, and the lines both write move between them: two threads doing
 * batches of 6000 48-byte objects ran at 11.9 ns an operation against 4.0
 * for one (Documentation/reference/bench-results.md).
 *
 * So a slot keeps full magazines of its own ahead of the depot, linked by
 * their @next (and empty ones, which its allocations emptied and its
 * frees will fill again, so that neither phase asks the depot, or the
 * magazines' own slabs under their node lock, for one), but only what its
 * latest run of allocations drew beyond its two magazines.  A run of
 * allocations is the allocation slow paths between two free slow paths
 * that leave the slot's two magazines, and the other way round:
 *
 *   each full magazine an allocation's slow path loads (from the stash,
 *   the depot or the slabs) earns one credit, and each magazine a free
 *   keeps spends one: a batch round's allocations load k magazines in a
 *   row, and its frees keep k;
 *   when a run of frees starts, the full magazines its allocations left
 *   in the stash were not needed by them, and go to the depot; when a
 *   run of allocations starts, so do the empty ones the frees left, and
 *   the credit starts from nothing.
 *
 * And a stash that no run used for SP_STASH_STALE magazines' worth of the
 * slot's operations (a program that grew its live set once, in one long
 * run of allocations, then settled into swings its two magazines hold)
 * goes to the depot too, at the slot's next slow path.
 *
 * So a batch that takes its whole stash back every round keeps it all; a
 * CPU that only frees (the consumer of a producer/consumer pair) earns
 * nothing and keeps nothing, its magazines still reaching the CPUs that
 * allocate through the depot; CPUs that allocate and free by turns
 * (threads that migrate, each handing its objects to the next: the C++
 * ring of the programs benchmark, whose peak RSS went from 36 MB to 55-72
 * with a stash that only a bound limited) keep a magazine or two, and
 * nothing stays in a stash past the run that did not need it.
 *
 * Bound: SP_STASH_BYTES of objects (counted by the magazines' capacity)
 * per slot and cache, at most SP_STASH_MAGS magazines full and as many
 * empty.  What a stash holds is part of the slot's objects in every
 * statistic (objs_in_magazines); it is drained with the slot (a shrink,
 * a destroy, the decay's shrink of an idle cache).
 *
 * Only the slot's owner (percpu/slot.h) calls these; it writes the list
 * heads and @stash_ops once (SP_WRITE_ONCE) for the decay's racy look
 * (sp_pcpu_reap_stashes()).
 */
#ifndef SP_PERCPU_STASH_H
#define SP_PERCPU_STASH_H

#include <stdbool.h>
#include <stddef.h>

#include "percpu/magazine.h"
#include "percpu/pcpu.h"

/*
 * A batch of 2000 640-byte objects (the C++ log lines of bench-pmr) is
 * 1.25 MiB: 2 MiB keeps such a swing on its CPU.
 */
#define SP_STASH_BYTES		(2UL << 20)
/*
 * Objects of more than 1 KiB share few lines with their neighbours, and a
 * magazine of them pins much: a stash of them held 0.5-2 MiB a class in
 * the C++ ring (their speed with and without one was not measured).
 */
#define SP_STASH_STRIDE_MAX	1024
#define SP_STASH_MAGS		127	/* the credit's 7 bits */
#define SP_STASH_CREDIT		0x7f	/* credit: magazines it may keep, */
#define SP_STASH_FREEING	0x80	/* a run of frees is on */
/*
 * A batch round passes its stash's last keep and its first take within
 * two magazines' worth of operations (the swap between them).
 */
#define SP_STASH_STALE		16
/*
 * The fewest magazines a run of allocations must load for the frees after
 * it to keep any: CPUs that trade objects by turns load one or two.
 */
#define SP_STASH_RUN_MIN	3

/* A stash list's push and pop; the head written once for the decay's look. */
static inline void sp_stash_push(struct sp_mag **head, uint8_t *nr,
				 struct sp_mag *m)
{
	m->next = *head;
	SP_WRITE_ONCE(*head, m);
	(*nr)++;
}

static inline struct sp_mag *sp_stash_pop(struct sp_mag **head, uint8_t *nr)
{
	struct sp_mag *m = *head;

	if (m) {
		SP_WRITE_ONCE(*head, m->next);
		(*nr)--;
		m->next = NULL;
	}
	return m;
}

/* Magazines like @m that fit the bound (none for large objects). */
static inline unsigned int sp_stash_room(const struct sp_mag *m, size_t stride)
{
	size_t n = SP_STASH_BYTES / ((size_t)m->cap * stride);

	if (stride > SP_STASH_STRIDE_MAX)
		return 0;
	return n > SP_STASH_MAGS ? SP_STASH_MAGS : (unsigned int)n;
}

/*
 * sp_stash_turn() - a run of allocations (@freeing false) or frees starts
 * (percpu/stash.c); the caller calls it at each slow path that leaves the
 * slot's two magazines, and it acts only at a turn.
 */
SP_INTERNAL void sp_stash_turn_slow(struct sp_pcpu_cache *pc,
				    struct sp_pcpu_slot *slot, bool freeing);

static inline void sp_stash_turn(struct sp_pcpu_cache *pc,
				 struct sp_pcpu_slot *slot, bool freeing)
{
	if (!(slot->stash_credit & SP_STASH_FREEING) != !freeing)
		sp_stash_turn_slow(pc, slot, freeing);
}

/*
 * sp_stash_age() - at a slow path of the slot: a stash not used for
 * SP_STASH_STALE magazines' worth of the slot's operations goes to the
 * depot, with the credit (percpu/stash.c).
 */
SP_INTERNAL void sp_stash_expire(struct sp_pcpu_cache *pc,
				 struct sp_pcpu_slot *slot);

static inline void sp_stash_age(struct sp_pcpu_cache *pc,
				struct sp_pcpu_slot *slot)
{
	uint32_t idle = (uint32_t)sp_slot_ops(slot) - slot->stash_ops;

	if ((slot->stash || slot->stash_empty) &&
	    idle > SP_STASH_STALE * sp_mag_class_cap(SP_READ_ONCE(pc->cls)))
		sp_stash_expire(pc, slot);
}

/* An allocation's slow path loaded @m, a full magazine: one credit. */
static inline void sp_stash_earn(struct sp_pcpu_slot *slot,
				 const struct sp_mag *m, size_t stride)
{
	unsigned int credit = slot->stash_credit & SP_STASH_CREDIT;

	if (credit + slot->stash_nr < sp_stash_room(m, stride))
		slot->stash_credit++;
}

/*
 * sp_stash_keep() - keep @m (full, or part full, its count set; or NULL)
 * in the slot's stash.  Return: false when there is no @m, no credit or no
 * room, and @m is the caller's still.
 */
static inline bool sp_stash_keep(struct sp_pcpu_slot *slot, struct sp_mag *m,
				 size_t stride)
{
	/* what this run of frees kept is fresh while the run goes on */
	if (slot->stash)
		SP_WRITE_ONCE(slot->stash_ops, (uint32_t)sp_slot_ops(slot));
	if (!m || !(slot->stash_credit & SP_STASH_CREDIT) ||
	    slot->stash_nr >= sp_stash_room(m, stride))
		return false;
	slot->stash_credit--;
	sp_stash_push(&slot->stash, &slot->stash_nr, m);
	SP_WRITE_ONCE(slot->stash_ops, (uint32_t)sp_slot_ops(slot));
	return true;
}

/* The magazine kept last (its lines the warmest), or NULL. */
static inline struct sp_mag *sp_stash_take(struct sp_pcpu_slot *slot)
{
	struct sp_mag *m = sp_stash_pop(&slot->stash, &slot->stash_nr);

	if (m)
		SP_WRITE_ONCE(slot->stash_ops, (uint32_t)sp_slot_ops(slot));
	return m;
}

/*
 * sp_stash_keep_empty() - keep @m (empty) for the frees to come, within
 * the bound.  Return: false when there is no room.
 */
static inline bool sp_stash_keep_empty(struct sp_pcpu_slot *slot,
				       struct sp_mag *m, size_t stride)
{
	if (slot->stash_empty_nr >= sp_stash_room(m, stride))
		return false;
	sp_stash_push(&slot->stash_empty, &slot->stash_empty_nr, m);
	return true;
}

/* An empty magazine kept before, or NULL. */
static inline struct sp_mag *sp_stash_take_empty(struct sp_pcpu_slot *slot)
{
	return sp_stash_pop(&slot->stash_empty, &slot->stash_empty_nr);
}

/* Forget the stash (a fork child's slot given up; its objects are lost). */
static inline void sp_stash_forget(struct sp_pcpu_slot *slot)
{
	SP_WRITE_ONCE(slot->stash, NULL);
	SP_WRITE_ONCE(slot->stash_empty, NULL);
	slot->stash_nr = 0;
	slot->stash_empty_nr = 0;
	slot->stash_credit = 0;
}

#endif /* SP_PERCPU_STASH_H */
