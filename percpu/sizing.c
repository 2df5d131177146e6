// SPDX-License-Identifier: MIT
/*
 * percpu/sizing.c - magazine capacity that follows use: trips, swaps and
 * the class a cache's new magazines take (percpu/sizing.h).
 */
#include <string.h>

#include "internal/debug.h"
#include "percpu/pcpu.h"
#include "percpu/sizing.h"

/*
 * Magazine capacity follows use, not only depot contention (Bonwick grows
 * on contention, sp_depot_window() in percpu/depot.c; tcmalloc resizes on
 * overflow and underflow).  A trip is a slow path that leaves the slot's
 * two magazines for the depot or the slabs.  With two magazines of
 * capacity C loaded, a CPU whose working set swings by more than 2C trips
 * about once every C operations (the batch of 1000, the pool pattern); one
 * whose swings fit trips hardly ever.  So:
 *
 *   a trip within SP_TRIP_HOT x C operations of the slot's previous one is
 *   hot; SP_TRIP_GROW hot trips in a row grow the cache's class by one (up
 *   to max_cls, which bounds the bytes a magazine pins: SP_MAG_BYTES_MAX);
 *
 *   a trip more than SP_TRIP_COLD x C operations after the previous one is
 *   cold; SP_TRIP_SHRINK cold trips in a row shrink the class by one,
 *   toward base_cls.
 *
 * A swap of loaded and previous is a sizing event too (not a trip: it stays
 * in the slot, but it is a slow path): a batch or pool pattern that swings
 * by more than what one magazine holds swaps twice a round, about once
 * every C operations, which is hot in the same measure, so the class grows
 * until one magazine holds the whole swing and the swaps stop (issue 24:
 * below 0.3% of calls on the slow path for steady swings up to a few
 * thousand objects, selftests/unit/test_sizing.c).  Memory stays bounded:
 * growth stops at max_cls, two magazines a slot.
 *
 * New magazines take the new class; magazines of an old class are freed as
 * they come back empty (the depot, and a swap: sp_swap_resize()), so the
 * two magazines of a slot are of one size soon after a change and a swing
 * that fits one of them needs no swap at all.  Operations are the slot's
 * own counters (owner-only), so a trip costs a few adds and no shared write
 * unless the class changes.
 */
#define SP_TRIP_HOT		4
#define SP_TRIP_COLD		256
#define SP_TRIP_GROW		2
#define SP_TRIP_SHRINK		4

/*
 * A sizing event: a trip (@trip) or a swap of loaded and previous.
 * Return: the slot's operations since its previous event.
 */
uint64_t sp_size_event(struct sp_pcpu_cache *pc, struct sp_pcpu_slot *slot,
		       bool trip)
{
	uint32_t cls = SP_READ_ONCE(pc->cls);
	uint64_t cap = sp_mag_class_cap(cls);
	uint32_t ops = (uint32_t)sp_slot_ops(slot);
	uint64_t since = (uint32_t)(ops - slot->trip_ops);

	slot->trip_ops = ops;
	if (trip)
		sp_stat_inc(slot, SP_STAT_TRIP);
	if (since < SP_TRIP_HOT * cap) {
		if (slot->trip_run < 0)
			slot->trip_run = 0;
		if (++slot->trip_run >= SP_TRIP_GROW) {
			slot->trip_run = 0;
			if (cls < SP_READ_ONCE(pc->max_cls)) {
				SP_WRITE_ONCE(pc->cls, cls + 1);
				sp_stat_inc(slot, SP_STAT_MAG_GROW);
			}
		}
	} else if (since > SP_TRIP_COLD * cap) {
		if (slot->trip_run > 0)
			slot->trip_run = 0;
		if (--slot->trip_run <= -SP_TRIP_SHRINK) {
			slot->trip_run = 0;
			if (cls > SP_READ_ONCE(pc->base_cls)) {
				SP_WRITE_ONCE(pc->cls, cls - 1);
				sp_stat_inc(slot, SP_STAT_MAG_SHRINK);
			}
		}
	} else {
		slot->trip_run = 0;
	}
	return since;
}

void sp_trip(struct sp_pcpu_cache *pc, struct sp_pcpu_slot *slot)
{
	sp_size_event(pc, slot, true);
}

/*
 * sp_swap_resize() - @m, a magazine of a swap that is not loaded (its
 * count set), or one of the cache's current class holding the same rounds
 * in its place: a magazine of an old class is replaced as a swap meets it,
 * empty or not, so the slot's two magazines end up of one size and a
 * swing that fits one of them needs no swap.  Keeps @m when it is of the
 * current class, when its rounds would not fit (a shrink), or when no new
 * magazine can be had.  A copy of at most one magazine's pointers, once
 * per magazine of an old class.
 */
struct sp_mag *sp_swap_resize(struct sp_pcpu_cache *pc, struct sp_mag *m)
{
	uint32_t cls = SP_READ_ONCE(pc->cls);
	struct sp_mag *n;

	if (!m || sp_mag_class_of(m) == cls || m->count > sp_mag_class_cap(cls))
		return m;
	n = sp_mag_alloc(cls);
	if (!n)
		return m;
	memcpy(sp_mag_base(n), sp_mag_base(m), m->count * sizeof(void *));
	n->count = m->count;
	sp_assert(n->count <= n->cap);
	sp_mag_free(m);
	return n;
}

/*
 * sp_swap_center() - after a swap, share the rounds of the magazine that
 * holds them between the two, so that the loaded one is half full: the
 * swing that crossed a magazine's edge must now cover half a magazine in
 * either direction before the next swap.  Bonwick's plain swap leaves the
 * loaded magazine full or empty, at an edge, and a steady swing that
 * crossed once crosses every round (the pool pattern freeing first, 2
 * swaps a round whatever the capacity).  The loaded magazine keeps the
 * most recently freed rounds (the top).  At most half a magazine of
 * pointers copied, once per swap.
 *
 * Only for a swing shorter than half a magazine (@since, the operations
 * since the slot's previous swap or trip, is below half the capacity):
 * a longer swing crosses half a magazine anyway, and centred it would swap
 * twice as often as plain.
 *
 * @alloc: an allocation's swap (the loaded magazine holds the rounds, the
 * previous one is empty); else a free's (the previous one holds them).
 */
void sp_swap_center(struct sp_pcpu_slot *slot, bool alloc, uint64_t since)
{
	struct sp_mag *from = alloc ? slot->loaded : slot->prev;
	struct sp_mag *to = alloc ? slot->prev : slot->loaded;
	uint32_t k;

	if (!from || !to || to->count || since >= from->cap / 2)
		return;
	k = from->count / 2;
	/*
	 * A free's loaded magazine keeps a round free for the free that
	 * swapped: @from may be of a larger class than @to (the class shrank
	 * since it was filled), and a full @to made that free write over its
	 * end guard and leave top past the magazine (test_sizing's
	 * test_class_changes).  An allocation's loaded magazine keeps at
	 * least one round: half of its count, rounded down, leaves it one.
	 */
	if (k > to->cap - !alloc)
		k = to->cap - !alloc;
	if (!k)
		return;
	if (alloc) {
		/* the oldest half to the previous one */
		memcpy(sp_mag_base(to), sp_mag_base(from), k * sizeof(void *));
		memmove(sp_mag_base(from), sp_mag_base(from) + k,
			(from->count - k) * sizeof(void *));
	} else {
		/* the newest half to the loaded one */
		memcpy(sp_mag_base(to), sp_mag_base(from) + from->count - k,
		       k * sizeof(void *));
	}
	from->count -= k;
	to->count = k;
	sp_assert(from->count <= from->cap && to->count <= to->cap);
	sp_assert(alloc ? slot->loaded->count > 0 :
			  slot->loaded->count < slot->loaded->cap);
}
