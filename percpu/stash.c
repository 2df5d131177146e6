// SPDX-License-Identifier: MIT
/*
 * percpu/stash.c - a turn between a slot's runs of allocations and of
 * frees, and a stash gone stale: what no run needed goes to the depot
 * (percpu/stash.h says why).
 */
#include "percpu/depot.h"
#include "percpu/pcpu.h"
#include "percpu/stash.h"

static void sp_stash_give(struct sp_pcpu_cache *pc, struct sp_pcpu_slot *slot,
			  struct sp_mag *list)
{
	struct sp_mag *m;

	/* what the depot has no room for it flushes into the slabs */
	while ((m = list)) {
		list = m->next;
		m->next = NULL;
		sp_depot_put(pc, slot, m);
	}
}

void sp_stash_expire(struct sp_pcpu_cache *pc, struct sp_pcpu_slot *slot)
{
	struct sp_mag *full = slot->stash, *empty = slot->stash_empty;

	SP_WRITE_ONCE(slot->stash, NULL);
	SP_WRITE_ONCE(slot->stash_empty, NULL);
	slot->stash_nr = 0;
	slot->stash_empty_nr = 0;
	slot->stash_credit &= SP_STASH_FREEING;
	sp_stash_give(pc, slot, full);
	sp_stash_give(pc, slot, empty);
}

void sp_stash_turn_slow(struct sp_pcpu_cache *pc, struct sp_pcpu_slot *slot,
			bool freeing)
{
	struct sp_mag *list;

	if (freeing) {
		/* full ones the allocations did not need */
		list = slot->stash;
		SP_WRITE_ONCE(slot->stash, NULL);
		slot->stash_nr = 0;
		/* a run too short to be a batch's keeps nothing */
		if ((slot->stash_credit & SP_STASH_CREDIT) < SP_STASH_RUN_MIN)
			slot->stash_credit = 0;
		slot->stash_credit |= SP_STASH_FREEING;
	} else {
		/* empty ones the frees did not need; credit afresh */
		list = slot->stash_empty;
		SP_WRITE_ONCE(slot->stash_empty, NULL);
		slot->stash_empty_nr = 0;
		slot->stash_credit = 0;
	}
	sp_stash_give(pc, slot, list);
}
