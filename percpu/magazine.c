// SPDX-License-Identifier: MIT
/*
 * percpu/magazine.c - the magazine layer: Bonwick's algorithm on the slow
 * paths, and the magazines' memory.
 *
 * Bonwick's algorithm, per CPU slot, with "loaded" and "previous" magazines:
 *
 *   alloc: loaded has a round  -> take it                        (fast path)
 *          previous has rounds -> swap loaded and previous, take one
 *          the slot kept one   -> load the slot's own full magazine
 *                                 (percpu/stash.h), take one
 *          depot has a full    -> return loaded (empty) to the depot,
 *                                 load the full one, take one
 *          otherwise           -> fill a magazine from the slabs in one bulk
 *                                 call (all but a quarter: room for the
 *                                 frees that follow), take one
 *   free:  loaded has room     -> put the object there          (fast path)
 *          previous is empty   -> swap, put
 *          otherwise           -> previous (full) kept by the slot while
 *                                 its allocations earned the room, else
 *                                 to the depot; loaded becomes previous,
 *                                 load an empty magazine (the slot's own
 *                                 first, then the depot's, or a new one),
 *                                 put
 *
 * The slow path first owns the slot (percpu/slot.h).  When it cannot
 * (another thread owns it: a preempted slow path, a drainer, or in lock mode
 * anyone holding the slot's lock) it bypasses the magazines and goes to the
 * slab layer directly; nobody ever waits for a slot on the allocation path.
 *
 * Depot: per node, a lock-free stack of full and a stack of empty
 * magazines, with its sizing window and working-set reaping
 * (percpu/depot.c).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "internal/debug.h"
#include "internal/report.h"
#include "internal/sanitize.h"
#include "numa/topology.h"
#include "percpu/alien.h"
#include "percpu/magazine.h"
#include "percpu/pcpu.h"
#include "percpu/sizing.h"
#include "percpu/slot.h"
#include "percpu/stash.h"
#include "slab/slab.h"

void *sp_mag_none[2] __sp_cacheline_aligned = { SP_MAG_GUARD, SP_MAG_GUARD };
void *sp_mag_busy[3] __sp_cacheline_aligned = {
	SP_MAG_GUARD, SP_MAG_GUARD, SP_MAG_GUARD,
};

static struct segpool_cache *sp_mag_caches[SP_MAG_CLASSES];
static bool sp_mag_prefetch_w;	/* sp_prefetch_write() usable: at init */

int sp_mag_init(void)
{
	sp_mag_prefetch_w = sp_prefetch_write_usable();
	for (unsigned int cls = 0; cls < SP_MAG_CLASSES; cls++) {
		char name[32];

		if (sp_mag_caches[cls])
			continue;	/* made by an earlier, failed init */
		snprintf(name, sizeof(name), "segpool-magazine-%u",
			 sp_mag_class_cap(cls));
		sp_mag_caches[cls] = sp_cache_create(name, 64U << cls, 0,
						     SP_CACHE_INTERNAL |
						     SP_CACHE_ZEROED, NULL);
		if (!sp_mag_caches[cls])
			return -ENOMEM;
		/* link and free mark stay out of the rounds (sp_mag_alloc()) */
		SP_BUG_ON(sp_mag_caches[cls]->fp_offset != 0 ||
			  sp_mag_caches[cls]->key_off + SP_FREEMARK_SIZE >
			  offsetof(struct sp_mag, slot));
	}
	return 0;
}

struct sp_mag *sp_mag_alloc(unsigned int cls)
{
	struct sp_mag *m;

	if (!sp_slab_alloc_bulk(sp_mag_caches[cls], sp_numa_current_idx(), 1,
				(void **)&m))
		return NULL;
	m->next = NULL;
	m->cap = sp_mag_class_cap(cls);
	m->count = 0;
	m->slot[0] = SP_MAG_GUARD;
	/*
	 * The full test reads the word at top: above top every word must be
	 * even.  The memory may come from a slab another cache gave back, with
	 * the program's bytes in it: an odd word there read as "full" and
	 * made the free path count a third-full magazine as full, handing out
	 * whatever the stale words held.  So a magazine cache's new slabs
	 * start zeroed (SP_CACHE_ZEROED), and afterwards its rounds only ever
	 * hold objects, which are even: the slab's link and free mark sit in
	 * @next and @cap/@count, outside the rounds (fp_offset 0, key_off 8),
	 * and no debug option reaches an internal cache.  No 8 KiB memset on
	 * every magazine made, which was the free path's p99.9 on the pool
	 * pattern.
	 */
	m->slot[m->cap + 1] = SP_MAG_GUARD;
	return m;
}

unsigned int sp_mag_class_of(const struct sp_mag *m)
{
	return sp_ilog2((m->cap + 4) * 8 / 64);
}

void sp_mag_free(struct sp_mag *m)
{
	struct segpool_cache *c = sp_mag_caches[sp_mag_class_of(m)];
	struct sp_slab *s = sp_obj_to_slab(m);

	sp_slab_free_one(c, s, m);
}

/* --- the slow paths ------------------------------------------------------- */

/*
 * The lines of a magazine's rounds the hit paths will use next, asked for
 * by the slow path that loaded it: down from @top for the pops after an
 * allocation's (@alloc), up from it to the guard for the pushes after a
 * free's, those for writing.  A magazine from the depot was filled or
 * emptied last on another CPU, whose cache holds its lines: without the
 * hint each line in turn stalled the hit that reached it (one pop or push
 * in eight), with it the lines travel together.  On the producer/consumer
 * workload, where every magazine changes CPU, 15.3 to 12.5 ns an
 * operation; a magazine this CPU used last costs the hints' hits in its
 * cache, a few nanoseconds a slow path.  At most SP_MAG_PREFETCH_LINES:
 * past them the hardware's own prefetcher has the stride.
 */
#define SP_MAG_PREFETCH_LINES	32	/* 2 KiB: a 252-round magazine whole */

void sp_mag_prefetch(struct sp_mag *m, void **top, bool alloc)
{
	uintptr_t lo = (uintptr_t)&m->slot[0];
	uintptr_t hi = (uintptr_t)&m->slot[m->cap + 1];
	uintptr_t line = (uintptr_t)(alloc ? top - 1 : top) &
			 ~(uintptr_t)(SP_CACHE_LINE - 1);
	unsigned int n;

	if (alloc) {
		for (n = 0; n < SP_MAG_PREFETCH_LINES &&
			    line + SP_CACHE_LINE > lo; n++) {
			__builtin_prefetch((const void *)line, 0, 3);
			line -= SP_CACHE_LINE;
		}
		return;
	}
	if (!sp_mag_prefetch_w)
		return;
	for (n = 0; n < SP_MAG_PREFETCH_LINES && line <= hi; n++) {
		sp_prefetch_write((const void *)line);
		line += SP_CACHE_LINE;
	}
}

static void sp_bypass_count(struct sp_pcpu_cache *pc)
{
	/* rare (another thread owns the slot): a shared counter will do */
	__atomic_fetch_add(&pc->bypass, 1, __ATOMIC_RELAXED);
}

/*
 * A slot's fills ramp up from SP_FILL_FIRST_BYTES, and once grown leave
 * room for frees (sp_fill_ramp(), sp_fill_size(); percpu/pcpu.h).
 */
static unsigned int sp_fill_want(const struct segpool_cache *c,
				 const struct sp_pcpu_slot *slot,
				 unsigned int cap)
{
	return sp_fill_ramp(c->stride,
			    SP_READ_ONCE(slot->stat[SP_STAT_MAG_FILL]), cap);
}

void *sp_pcpu_alloc_slow(struct sp_pcpu_cache *pc)
{
	struct segpool_cache *c = pc->cache;
	unsigned int aborts = 0;
	struct sp_pcpu_slot *slot;
	struct sp_mag *m;
	void **top;
	void *obj;

	slot = sp_slot_own(pc, &top, &aborts);
	if (unlikely(!slot)) {
		sp_bypass_count(pc);
		if (!sp_slab_alloc_bulk(c, sp_numa_current_idx(), 1, &obj))
			return NULL;
		return obj;
	}
	if (aborts)
		SP_WRITE_ONCE(slot->stat[SP_STAT_RSEQ_ABORT],
			      slot->stat[SP_STAT_RSEQ_ABORT] + aborts);
	sp_hook(SP_HOOK_SLOT_OWNED, pc, slot);

	/* lock mode's fast path, and an rseq hit lost to an abort */
	if (top[-1] != SP_MAG_GUARD) {
		obj = *--top;
		sp_vg_forget(top);
		sp_hit_count(&slot->alloc_hits);
		sp_slot_release(pc, slot, top);
		return obj;
	}
	m = slot->loaded;		/* empty, or NULL */
	sp_stash_age(pc, slot);
	if (slot->prev && slot->prev->count) {
		/* Bonwick: previous has rounds, swap */
		if (m)
			m->count = 0;
		slot->loaded = sp_swap_resize(pc, slot->prev);
		slot->prev = sp_swap_resize(pc, m);
		sp_swap_center(slot, true, sp_size_event(pc, slot, false));
		m = slot->loaded;
		sp_stat_inc(slot, SP_STAT_MAG_SWAP);
	} else if (slot->stash) {
		/* the slot's own full magazine (percpu/stash.h) */
		struct sp_mag *full;

		sp_stash_turn(pc, slot, false);
		full = sp_stash_take(slot);

		if (m) {
			m->count = 0;
			if (!slot->prev)
				slot->prev = m;
			else if (sp_mag_class_of(m) != SP_READ_ONCE(pc->cls) ||
				 !sp_stash_keep_empty(slot, m, c->stride))
				sp_depot_put(pc, slot, m);
		}
		sp_stash_earn(slot, full, c->stride);
		slot->loaded = full;
		m = full;
		sp_size_event(pc, slot, false);
		sp_stat_inc(slot, SP_STAT_STASH_TAKE);
	} else {
		struct sp_mag *full = NULL;
		unsigned int want;

		sp_trip(pc, slot);
		sp_stash_turn(pc, slot, false);
		/* a bulk moment: remote frees waiting here go home too */
		sp_alien_flush(pc, (unsigned long)(slot - pc->slots),
			       SP_ALIEN_HALF);
		if (m && slot->prev) {
			/* both empty: one goes back to the depot */
			m->count = 0;
			full = sp_depot_exchange(pc, slot, m, true);
			m = NULL;
		} else {
			full = sp_depot_exchange(pc, slot, NULL, true);
			if (m) {
				m->count = 0;
				slot->prev = m;	/* the empty one: previous */
			}
			m = NULL;
		}
		if (!full) {
			/* fill a magazine from the slabs */
			unsigned int cls = SP_READ_ONCE(pc->cls);

			full = slot->prev &&
			       sp_mag_class_of(slot->prev) == cls &&
			       slot->prev->count == 0 ? slot->prev : NULL;
			if (full)
				slot->prev = NULL;
			else
				full = sp_mag_alloc(cls);
			want = full ? sp_fill_want(c, slot, full->cap) : 0;
			if (!full ||
			    !sp_slab_fill(c, (int)slot->node, want,
					  sp_mag_base(full))) {
				/* no memory for a whole magazine: one object */
				if (full) {
					full->count = 0;
					if (!slot->prev)
						slot->prev = full;
					else
						sp_mag_free(full);
				}
				slot->loaded = NULL;
				sp_slot_release(pc, slot, sp_mag_top_none);
				if (!sp_slab_alloc_bulk(c, (int)slot->node, 1,
							&obj))
					return NULL;
				return obj;
			}
			full->count = want;
			sp_stat_inc(slot, SP_STAT_MAG_FILL);
			sp_stat_add(slot, SP_STAT_FILL_OBJS, want);
		}
		sp_stash_earn(slot, full, c->stride);
		slot->loaded = full;
		m = full;
	}
	top = sp_mag_base(m) + m->count;
	obj = *--top;
	sp_vg_forget(top);
	sp_mag_prefetch(m, top, true);
	sp_stat_inc(slot, SP_STAT_ALLOC_SLOWPATH);
	sp_slot_release(pc, slot, top);
	return obj;
}

void sp_pcpu_free_slow(struct sp_pcpu_cache *pc, void *obj, unsigned int node)
{
	struct segpool_cache *c = pc->cache;
	unsigned int aborts = 0;
	struct sp_pcpu_slot *slot;
	struct sp_mag *m;
	void **top;

	slot = sp_slot_own(pc, &top, &aborts);
	if (unlikely(!slot)) {
		sp_bypass_count(pc);
		sp_slab_free_bulk(c, 1, &obj);
		return;
	}
	if (aborts)
		SP_WRITE_ONCE(slot->stat[SP_STAT_RSEQ_ABORT],
			      slot->stat[SP_STAT_RSEQ_ABORT] + aborts);
	sp_hook(SP_HOOK_SLOT_OWNED, pc, slot);
	if (unlikely(top[-1] == obj)) {
		sp_slot_release(pc, slot, top);
		sp_report_bad_free("double free", obj, c->name);
	}
	if (node != slot->node) {
		/* a remote free: home in a batch, never this magazine */
		sp_stat_inc(slot, SP_STAT_REMOTE_FREE);
		sp_alien_put(pc, (unsigned long)(slot - pc->slots), node, obj);
		sp_slot_release(pc, slot, top);
		return;
	}
	if (top[0] != SP_MAG_GUARD) {
		/* lock mode's fast path, and an rseq hit lost to an abort */
		*top++ = obj;
		sp_hit_count(&slot->free_hits);
		sp_slot_release(pc, slot, top);
		return;
	}
	m = slot->loaded;		/* full, or NULL */
	if (m)
		m->count = m->cap;
	sp_stash_age(pc, slot);
	if (slot->prev && slot->prev->count == 0) {
		slot->loaded = sp_swap_resize(pc, slot->prev);
		slot->prev = sp_swap_resize(pc, m);
		sp_swap_center(slot, false, sp_size_event(pc, slot, false));
		sp_stat_inc(slot, SP_STAT_MAG_SWAP);
	} else {
		struct sp_mag *empty;

		sp_stash_turn(pc, slot, true);
		if (sp_stash_keep(slot, slot->prev, c->stride)) {
			/* previous (full) kept by the slot (percpu/stash.h) */
			slot->prev = NULL;
			sp_size_event(pc, slot, false);
			empty = sp_stash_take_empty(slot);
			if (!empty)
				empty = sp_depot_exchange(pc, slot, NULL,
							  false);
		} else {
			sp_trip(pc, slot);
			/* previous (full) goes to the depot */
			empty = sp_depot_exchange(pc, slot, slot->prev, false);
		}
		/* loaded becomes previous */
		slot->prev = m;
		if (!empty)
			empty = sp_mag_alloc(SP_READ_ONCE(pc->cls));
		if (!empty) {
			/* no memory for a magazine: flush the previous one */
			empty = slot->prev;
			slot->prev = NULL;
			if (empty) {
				sp_stat_add(slot, SP_STAT_FLUSH_OBJS,
					    empty->count);
				sp_mag_flush(pc, empty);
				sp_stat_inc(slot, SP_STAT_MAG_FLUSH);
			}
		}
		slot->loaded = empty;
	}
	m = slot->loaded;
	if (!m) {
		sp_slot_release(pc, slot, sp_mag_top_none);
		sp_slab_free_bulk(c, 1, &obj);
		return;
	}
	top = sp_mag_base(m) + m->count;
	*top++ = obj;
	sp_mag_prefetch(m, top, false);
	sp_stat_inc(slot, SP_STAT_FREE_SLOWPATH);
	sp_slot_release(pc, slot, top);
}
