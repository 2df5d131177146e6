// SPDX-License-Identifier: MIT
/*
 * percpu/pcpu.c - the magazine layer's slow paths, depot, sizing and drains.
 *
 * Bonwick's algorithm, per CPU slot, with "loaded" and "previous" magazines:
 *
 *   alloc: loaded has a round  -> take it                        (fast path)
 *          previous has rounds -> swap loaded and previous, take one
 *          depot has a full    -> return loaded (empty) to the depot,
 *                                 load the full one, take one
 *          otherwise           -> fill a magazine from the slabs in one bulk
 *                                 call, take one
 *   free:  loaded has room     -> put the object there          (fast path)
 *          previous is empty   -> swap, put
 *          otherwise           -> previous (full) to the depot, loaded
 *                                 becomes previous, load an empty magazine
 *                                 (from the depot, or a new one), put
 *
 * The slow path first owns the slot (see percpu/pcpu.h).  When it cannot
 * (another thread owns it: a preempted slow path, a drainer, or in lock mode
 * anyone holding the slot's lock) it bypasses the magazines and goes to the
 * slab layer directly; nobody ever waits for a slot on the allocation path.
 *
 * Depot: per node, a lock-free stack of full and a stack of empty
 * magazines, with its sizing window and working-set reaping
 * (percpu/depot.c).
 *
 * Cross-CPU drains (shrink, destroy): in rseq mode a drainer cannot run a
 * critical section on another CPU, so it swaps the slot's top for the remote
 * busy marker with an atomic exchange, then fences the slot's CPU with
 * membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ): every critical section
 * that was running there has then either committed or been aborted.  If one
 * committed after the exchange, the slot's top is no longer the marker; the
 * drainer repeats until a fence finds its marker still in place, and then
 * owns the slot.  A slot owned by a local slow path is waited for (that slow
 * path never blocks while owning it for long: it takes only the slab
 * locks, and the depot's mutex for a sizing window).  In lock mode the drainer takes the slot's spinlock.
 *
 * Lock order: see core/init.c, levels 4 to 7 (drain lock, slot, depot
 * mutex, node lock); the depot's spinlock of builds without cas16 is a
 * leaf (level 12).
 */
#include <errno.h>
#include <string.h>

#include "internal/debug.h"
#include "internal/report.h"
#include "internal/sanitize.h"
#include "numa/topology.h"
#include "os/cpu.h"
#include "os/os.h"
#include "percpu/alien.h"
#include "percpu/pcpu.h"
#include "slab/slab.h"

#define SP_DEPOT_MAX_DEFAULT	16	/* full magazines kept per node */

static unsigned int sp_nr_slots;

void (*sp_pcpu_test_hook)(enum sp_pcpu_hook_point point, unsigned long slot);

static inline void sp_hook(enum sp_pcpu_hook_point point, struct sp_pcpu_cache *pc,
			   struct sp_pcpu_slot *slot)
{
	void (*hook)(enum sp_pcpu_hook_point, unsigned long) =
		SP_READ_ONCE(sp_pcpu_test_hook);

	if (unlikely(hook))
		hook(point, (unsigned long)(slot - pc->slots));
}

static struct sp_pcpu_slot *sp_nil_slots;

unsigned int sp_pcpu_nr_slots(void)
{
	return sp_nr_slots;
}

void *sp_pcpu_nil_slots(void)
{
	return sp_nil_slots;
}

/* The always-missing slots of caches without a layer (sp_pcpu_nil_slots). */
static int sp_nil_slots_init(void)
{
	size_t bytes = SP_ALIGN((size_t)sp_nr_slots << SP_PCPU_SHIFT, SP_PAGE_SIZE);
	struct sp_pcpu_slot *s;

	if (sp_nil_slots)
		return 0;
	s = sp_os_map_meta(bytes);
	if (!s)
		return -ENOMEM;
	for (unsigned long i = 0; i < sp_nr_slots; i++) {
		s[i].top = sp_mag_top_none;	/* empty and full at once */
		s[i].expect = 0;		/* no page has tag 0 as its owner */
	}
	/* never written again: a stray write faults instead of hiding */
	sp_os_protect_ro(s, bytes);
	sp_nil_slots = s;
	sp_cache_nil_slots = s;
	return 0;
}

int sp_pcpu_init(void)
{
	static bool mode_chosen;	/* init may be tried again: once */
	int ret;

	if (!mode_chosen) {
		sp_pcpu_mode_init();
		sp_depot_setup();
		sp_nr_slots = (unsigned int)sp_cpu_possible_count();
		mode_chosen = true;
	}
	ret = sp_nil_slots_init();
	if (ret)
		return ret;
	if (sp_pcpu_mode != SP_PCPU_OFF)
		ret = sp_mag_init();
	/* the hit paths open at the end of start-up (core/init.c) */
	return ret;
}

/* --- slot spinlock (lock mode) ------------------------------------------- */

static void sp_spin_lock(uint32_t *lock)
{
	unsigned int spins = 0;

	while (__atomic_exchange_n(lock, 1, __ATOMIC_ACQUIRE)) {
		while (__atomic_load_n(lock, __ATOMIC_RELAXED)) {
			if (++spins > 64) {
				sp_os_yield();
				spins = 0;
			} else {
				sp_cpu_relax();
			}
		}
	}
}

static bool sp_spin_trylock(uint32_t *lock)
{
	return !__atomic_load_n(lock, __ATOMIC_RELAXED) &&
	       !__atomic_exchange_n(lock, 1, __ATOMIC_ACQUIRE);
}

static void sp_spin_unlock(uint32_t *lock)
{
	__atomic_store_n(lock, 0, __ATOMIC_RELEASE);
}

/* --- owning a slot ------------------------------------------------------------ */

/*
 * Own the caller's slot.  Return it, with *topp the top it had; NULL when
 * another owns it (the caller bypasses).  *aborts counts rseq restarts.
 */
static struct sp_pcpu_slot *sp_slot_own(struct sp_pcpu_cache *pc, void ***topp,
					unsigned int *aborts)
{
	struct sp_pcpu_slot *slot;
	unsigned long id;

#if SP_RSEQ_ARCH
	if (sp_pcpu_mode == SP_PCPU_RSEQ) {
		bool retried = false;

		for (;;) {
			uintptr_t old = sp_rseq_steal(pc, sp_mag_top_busy, &id);

			if (old == SP_RSEQ_ABORTED) {
				(*aborts)++;
				continue;
			}
			if (old) {
				*topp = (void **)old;
				slot = &pc->slots[id];
				sp_assert(sp_mag_top_is_busy(
					SP_READ_ONCE(slot->top)));
				sp_lock_enter_try(SP_LOCK_SLOT);
				return slot;
			}
			/* an unregistered thread reads an id out of range */
			if (id >= pc->nr_slots && !retried && sp_rseq_own &&
			    sp_rseq_thread_ensure()) {
				retried = true;
				continue;
			}
			return NULL;
		}
	}
#endif
	(void)aborts;
	/*
	 * Lock mode: a held lock means the slot is owned, as a busy marker
	 * does in rseq mode, and the caller bypasses it rather than wait (the
	 * owner may be preempted, or be this very thread in a ctor that
	 * allocates from its own cache during a magazine fill).
	 */
	id = sp_pcpu_current_slot(pc->nr_slots);
	slot = &pc->slots[id];
	if (!sp_spin_trylock(&slot->lock))
		return NULL;
	*topp = slot->top;
	sp_lock_enter_try(SP_LOCK_SLOT);
	return slot;
}

static void sp_slot_release(struct sp_pcpu_cache *pc, struct sp_pcpu_slot *slot,
			    void **top)
{
	/* an owner publishes a magazine's top, within its bounds */
	sp_assert(!sp_mag_top_is_busy(top));
	sp_assert(top == sp_mag_top_none || !slot->loaded ||
		  sp_mag_count_at(slot->loaded, top) <= slot->loaded->cap);
	sp_assert(sp_pcpu_mode == SP_PCPU_RSEQ ?
		  sp_mag_top_is_busy(SP_READ_ONCE(slot->top)) :
		  SP_READ_ONCE(slot->lock) != 0);
	sp_lock_leave(SP_LOCK_SLOT);
	sp_hook(SP_HOOK_SLOT_RELEASE, pc, slot);
	if (sp_pcpu_mode == SP_PCPU_RSEQ) {
		__atomic_store_n(&slot->top, top, __ATOMIC_RELEASE);
	} else {
		SP_WRITE_ONCE(slot->top, top);
		sp_spin_unlock(&slot->lock);
	}
}

/* Take a slot of any CPU for a drain; waits for a local owner to finish. */
static void **sp_slot_own_remote(struct sp_pcpu_cache *pc, unsigned long i)
{
	struct sp_pcpu_slot *slot = &pc->slots[i];
	void **old;

	sp_assert_held(&pc->drain_lock);
	if (sp_pcpu_mode != SP_PCPU_RSEQ) {
		sp_spin_lock(&slot->lock);
		sp_lock_enter(SP_LOCK_SLOT);
		return slot->top;
	}
	for (;;) {
		old = __atomic_exchange_n(&slot->top, sp_mag_top_remote,
					  __ATOMIC_SEQ_CST);
		if (sp_mag_top_is_busy(old)) {
			/* a local slow path owns it: let it publish */
			sp_os_yield();
			continue;
		}
		sp_hook(SP_HOOK_DRAIN_XCHG, pc, slot);
		if (sp_rseq_fence((long)i))
			sp_bug("membarrier fence failed on slot %lu", i);
		if (__atomic_load_n(&slot->top, __ATOMIC_SEQ_CST) ==
		    sp_mag_top_remote) {
			sp_lock_enter(SP_LOCK_SLOT);
			return old;
		}
		/* a critical section committed after the exchange: again */
	}
}

/* --- use-driven sizing ------------------------------------------------------------------ */

/*
 * Magazine capacity follows use, not only depot contention (Bonwick grows
 * on contention, sp_depot_window() in percpu/depot.c; tcmalloc resizes on overflow and
 * underflow).  A trip is a slow path that leaves the slot's two magazines
 * for the depot or the slabs.  With two magazines of capacity C loaded, a
 * CPU whose working set swings by more than 2C trips about once every C
 * operations (the batch of 1000, the pool pattern); one whose swings fit
 * trips hardly ever.  So:
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

static uint64_t sp_slot_ops(const struct sp_pcpu_slot *slot)
{
	return slot->alloc_hits + slot->free_hits +
	       slot->stat[SP_STAT_ALLOC_SLOWPATH] +
	       slot->stat[SP_STAT_FREE_SLOWPATH];
}

/*
 * A sizing event: a trip (@trip) or a swap of loaded and previous.
 * Return: the slot's operations since its previous event.
 */
static uint64_t sp_size_event(struct sp_pcpu_cache *pc, struct sp_pcpu_slot *slot,
			      bool trip)
{
	uint32_t cls = SP_READ_ONCE(pc->cls);
	uint64_t cap = sp_mag_class_cap(cls);
	uint64_t ops = sp_slot_ops(slot);
	uint64_t since = ops - slot->trip_ops;

	slot->trip_ops = ops;
	if (trip)
		sp_stat_inc(slot, SP_STAT_TRIP);
	if (since < SP_TRIP_HOT * cap) {
		slot->cold_trips = 0;
		if (++slot->hot_trips >= SP_TRIP_GROW) {
			slot->hot_trips = 0;
			if (cls < SP_READ_ONCE(pc->max_cls)) {
				SP_WRITE_ONCE(pc->cls, cls + 1);
				sp_stat_inc(slot, SP_STAT_MAG_GROW);
			}
		}
	} else if (since > SP_TRIP_COLD * cap) {
		slot->hot_trips = 0;
		if (++slot->cold_trips >= SP_TRIP_SHRINK) {
			slot->cold_trips = 0;
			if (cls > SP_READ_ONCE(pc->base_cls)) {
				SP_WRITE_ONCE(pc->cls, cls - 1);
				sp_stat_inc(slot, SP_STAT_MAG_SHRINK);
			}
		}
	} else {
		slot->hot_trips = 0;
		slot->cold_trips = 0;
	}
	return since;
}

static void sp_trip(struct sp_pcpu_cache *pc, struct sp_pcpu_slot *slot)
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
static struct sp_mag *sp_swap_resize(struct sp_pcpu_cache *pc, struct sp_mag *m)
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
static void sp_swap_center(struct sp_pcpu_slot *slot, bool alloc, uint64_t since)
{
	struct sp_mag *from = alloc ? slot->loaded : slot->prev;
	struct sp_mag *to = alloc ? slot->prev : slot->loaded;
	uint32_t k;

	if (!from || !to || to->count || since >= from->cap / 2)
		return;
	k = from->count / 2;
	if (k > to->cap)
		k = to->cap;
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
}

/* --- slow paths ---------------------------------------------------------------------- */

static void sp_bypass_count(struct sp_pcpu_cache *pc)
{
	/* rare (the slot is owned by another thread): a shared counter is fine */
	__atomic_fetch_add(&pc->bypass, 1, __ATOMIC_RELAXED);
}

/* A slot's first fill is short (SP_FILL_FIRST_BYTES, percpu/pcpu.h). */
static unsigned int sp_fill_want(const struct segpool_cache *c,
				 const struct sp_pcpu_slot *slot,
				 unsigned int cap)
{
	unsigned int first = SP_MAX(SP_FILL_FIRST_MIN,
				    SP_FILL_FIRST_BYTES / c->stride);

	if (SP_READ_ONCE(slot->stat[SP_STAT_MAG_FILL]) == 0 && first < cap)
		return first;
	return cap;
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
	if (slot->prev && slot->prev->count) {
		/* Bonwick: previous has rounds, swap */
		if (m)
			m->count = 0;
		slot->loaded = sp_swap_resize(pc, slot->prev);
		slot->prev = sp_swap_resize(pc, m);
		sp_swap_center(slot, true, sp_size_event(pc, slot, false));
		m = slot->loaded;
		sp_stat_inc(slot, SP_STAT_MAG_SWAP);
	} else {
		struct sp_mag *full = NULL;
		unsigned int want;

		sp_trip(pc, slot);
		/* a bulk moment: remote frees waiting here go home too */
		sp_alien_flush(pc, (unsigned long)(slot - pc->slots));
		if (m && slot->prev) {
			/* both empty: one goes back to the depot */
			m->count = 0;
			full = sp_depot_exchange(pc, slot, m, true);
			m = NULL;
		} else {
			full = sp_depot_exchange(pc, slot, NULL, true);
			if (m) {
				m->count = 0;
				slot->prev = m;	/* keep the empty one as previous */
			}
			m = NULL;
		}
		if (!full) {
			/* fill a magazine from the slabs */
			unsigned int cls = SP_READ_ONCE(pc->cls);

			full = slot->prev && sp_mag_class_of(slot->prev) == cls &&
			       slot->prev->count == 0 ? slot->prev : NULL;
			if (full)
				slot->prev = NULL;
			else
				full = sp_mag_alloc(cls);
			want = full ? sp_fill_want(c, slot, full->cap) : 0;
			if (!full ||
			    !sp_slab_fill(c, (int)slot->node, want,
					  sp_mag_base(full))) {
				/* out of memory for a whole magazine: one object */
				if (full) {
					full->count = 0;
					if (!slot->prev)
						slot->prev = full;
					else
						sp_mag_free(full);
				}
				slot->loaded = NULL;
				sp_slot_release(pc, slot, sp_mag_top_none);
				if (!sp_slab_alloc_bulk(c, (int)slot->node, 1, &obj))
					return NULL;
				return obj;
			}
			full->count = want;
			sp_stat_inc(slot, SP_STAT_MAG_FILL);
			sp_stat_add(slot, SP_STAT_FILL_OBJS, want);
		}
		slot->loaded = full;
		m = full;
	}
	top = sp_mag_base(m) + m->count;
	obj = *--top;
	sp_vg_forget(top);
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
		/* remote free: home to its node in a batch, never this magazine */
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
	if (slot->prev && slot->prev->count == 0) {
		slot->loaded = sp_swap_resize(pc, slot->prev);
		slot->prev = sp_swap_resize(pc, m);
		sp_swap_center(slot, false, sp_size_event(pc, slot, false));
		sp_stat_inc(slot, SP_STAT_MAG_SWAP);
	} else {
		struct sp_mag *empty;

		sp_trip(pc, slot);
		/* previous (full) goes to the depot; loaded becomes previous */
		empty = sp_depot_exchange(pc, slot, slot->prev, false);
		slot->prev = m;
		if (!empty)
			empty = sp_mag_alloc(SP_READ_ONCE(pc->cls));
		if (!empty) {
			/* no memory for a magazine: flush the previous one */
			empty = slot->prev;
			slot->prev = NULL;
			if (empty) {
				sp_stat_add(slot, SP_STAT_FLUSH_OBJS, empty->count);
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
	sp_stat_inc(slot, SP_STAT_FREE_SLOWPATH);
	sp_slot_release(pc, slot, top);
}

/* --- drains ---------------------------------------------------------------------------------- */

static void sp_slot_drain(struct sp_pcpu_cache *pc, unsigned long i)
{
	struct sp_pcpu_slot *slot = &pc->slots[i];
	void **top = sp_slot_own_remote(pc, i);
	struct sp_mag *m = slot->loaded;

	if (m) {
		m->count = sp_mag_count_at(m, top);
		sp_assert(m->count <= m->cap);
		sp_stat_add(slot, SP_STAT_FLUSH_OBJS, m->count);
		sp_mag_flush(pc, m);
		sp_mag_free(m);
	}
	if (slot->prev) {
		sp_stat_add(slot, SP_STAT_FLUSH_OBJS, slot->prev->count);
		sp_mag_flush(pc, slot->prev);
		sp_mag_free(slot->prev);
	}
	slot->loaded = NULL;
	slot->prev = NULL;
	sp_alien_flush(pc, i);
	sp_slot_release(pc, slot, sp_mag_top_none);
}

void sp_pcpu_drain(struct sp_pcpu_cache *pc)
{
	pthread_mutex_lock(&pc->drain_lock);
	for (unsigned long i = 0; i < pc->nr_slots; i++)
		sp_slot_drain(pc, i);
	for (int n = 0; n < sp_topo.nr_nodes; n++)
		sp_depot_drain(pc, n);
	pthread_mutex_unlock(&pc->drain_lock);
}

/* --- create, destroy, tune ----------------------------------------------------------- */

/*
 * Magazine sizes by object size: a magazine of large objects pins a lot of
 * memory per CPU, so its class starts (and may grow) smaller.  The default
 * class keeps a magazine's objects within SP_MAG_BYTES_DEFAULT, growth stops
 * at SP_MAG_BYTES_MAX.
 */
#define SP_MAG_BYTES_DEFAULT	(64UL << 10)
#define SP_MAG_BYTES_MAX	(256UL << 10)

static void sp_pcpu_default_classes(size_t stride, uint32_t *cls, uint32_t *max)
{
	uint32_t c = 0, m = 0;

	while (c < SP_MAG_DEFAULT_CLASS &&
	       sp_mag_class_cap(c + 1) * stride <= SP_MAG_BYTES_DEFAULT)
		c++;
	m = c;
	while (m + 1 < SP_MAG_CLASSES &&
	       sp_mag_class_cap(m + 1) * stride <= SP_MAG_BYTES_MAX)
		m++;
	*cls = c;
	*max = m;
}

struct sp_pcpu_cache *sp_pcpu_cache_create(struct segpool_cache *c)
{
	size_t slots_bytes = (size_t)sp_nr_slots << SP_PCPU_SHIFT;
	size_t depot_bytes = (size_t)sp_topo.nr_nodes * sizeof(struct sp_depot);
	size_t alien_bytes = sp_alien_bytes(sp_nr_slots);
	size_t bytes = SP_ALIGN(sizeof(struct sp_pcpu_cache), SP_CACHE_LINE) +
		       depot_bytes + slots_bytes + alien_bytes;
	struct sp_pcpu_cache *pc;
	char *p;

	if (sp_pcpu_mode == SP_PCPU_OFF)
		return NULL;
	/* the library's own caches' blocks are packed (slab/cache.c) */
	if (sp_cache_packed(c)) {
		bytes = SP_ALIGN(bytes, SP_CACHE_LINE);
		p = sp_os_map_packed(bytes, SP_CACHE_LINE);
	} else {
		bytes = SP_ALIGN(bytes, SP_PAGE_SIZE);
		p = sp_os_map_meta(bytes);
	}
	if (!p)
		return NULL;
	pc = (struct sp_pcpu_cache *)p;
	pc->map_size = bytes;
	pc->cache = c;
	pc->depot = (struct sp_depot *)(p + SP_ALIGN(sizeof(*pc), SP_CACHE_LINE));
	pc->slots = (struct sp_pcpu_slot *)((char *)pc->depot + depot_bytes);
	pc->nr_slots = sp_nr_slots;
	pc->alien = alien_bytes ? (struct sp_alien *)((char *)pc->slots +
						      slots_bytes) : NULL;
	pc->rseq_off = sp_rseq_off;
	pc->id_off = sp_rseq_id_off;
	sp_pcpu_default_classes(c->stride, &pc->cls, &pc->max_cls);
	pc->base_cls = pc->cls;
	pc->depot_max = SP_DEPOT_MAX_DEFAULT;
	pthread_mutex_init(&pc->drain_lock, NULL);
	sp_lock_class(&pc->drain_lock, SP_LOCK_DRAIN);
	for (int n = 0; n < sp_topo.nr_nodes; n++)
		sp_depot_init(&pc->depot[n]);
	for (unsigned long i = 0; i < pc->nr_slots; i++) {
		struct sp_pcpu_slot *slot = &pc->slots[i];

		slot->top = sp_mag_top_none;
		slot->node = sp_pcpu_use_mm_cid || i >= SP_MAX_CPUS ? 0 :
			(unsigned long)sp_topo.cpu_idx[i];
		slot->expect = sp_slab_tag(c, (int)slot->node);
	}
	return pc;
}

void sp_pcpu_cache_free(struct sp_pcpu_cache *pc)
{
	if (pc && !sp_cache_packed(pc->cache))
		sp_os_unmap(pc, pc->map_size);
}

/*
 * The drain lock is not taken: it guards no data (a drain changes slots,
 * depots and slabs under their own ownership and locks), and the child
 * re-initialises it.
 */
void sp_pcpu_fork_lock(struct sp_pcpu_cache *pc)
{
	for (int n = 0; n < sp_topo.nr_nodes; n++)
		pthread_mutex_lock(&pc->depot[n].lock);
}

void sp_pcpu_fork_unlock(struct sp_pcpu_cache *pc)
{
	for (int n = sp_topo.nr_nodes - 1; n >= 0; n--)
		pthread_mutex_unlock(&pc->depot[n].lock);
}

/*
 * In the child only the forking thread lives on.  A slot another thread
 * owned at fork time (busy marker, or lock held) is in an unknown state: its
 * magazines are given up (their objects stay allocated in the child) and the
 * slot starts empty.  The forking thread itself owned none: fork is never
 * called from inside segpool.
 */
void sp_pcpu_fork_child(struct sp_pcpu_cache *pc)
{
	pthread_mutex_init(&pc->drain_lock, NULL);
	for (int n = 0; n < sp_topo.nr_nodes; n++)
		sp_depot_fork_child(&pc->depot[n]);
	for (unsigned long i = 0; i < pc->nr_slots; i++) {
		struct sp_pcpu_slot *slot = &pc->slots[i];

		if (sp_mag_top_is_busy(slot->top) || slot->lock) {
			/* given up: balance the occupancy counters */
			slot->stat[SP_STAT_FLUSH_OBJS] += sp_pcpu_slot_objects(pc, i);
			sp_alien_forget(pc, i);
			slot->loaded = NULL;
			slot->prev = NULL;
			slot->top = sp_mag_top_none;
			slot->lock = 0;
		}
	}
}

int sp_pcpu_set_tunables(struct sp_pcpu_cache *pc, unsigned int mag_size,
			 unsigned int depot_max)
{
	unsigned int cls = 0;

	if (mag_size) {
		while (cls + 1 < SP_MAG_CLASSES &&
		       sp_mag_class_cap(cls + 1) <= mag_size)
			cls++;
		if (sp_mag_class_cap(cls) > mag_size)
			return -EINVAL;
		SP_WRITE_ONCE(pc->max_cls, cls);
		if (pc->base_cls > cls)
			pc->base_cls = cls;
		if (SP_READ_ONCE(pc->cls) > cls)
			SP_WRITE_ONCE(pc->cls, cls);
	}
	if (depot_max)
		SP_WRITE_ONCE(pc->depot_max, depot_max);
	return 0;
}

/* --- statistics ------------------------------------------------------------------------------ */

/*
 * Objects in minus objects out of a slot, as counted (signed: read while
 * the owner moves objects, out may run ahead of in).
 */
static int64_t sp_pcpu_slot_balance(const struct sp_pcpu_slot *slot)
{
	uint64_t in, out;

	in = SP_READ_ONCE(slot->free_hits) +
	     SP_READ_ONCE(slot->stat[SP_STAT_FREE_SLOWPATH]) +
	     SP_READ_ONCE(slot->stat[SP_STAT_FILL_OBJS]) +
	     SP_READ_ONCE(slot->stat[SP_STAT_DEPOT_GET_OBJS]);
	out = SP_READ_ONCE(slot->alloc_hits) +
	      SP_READ_ONCE(slot->stat[SP_STAT_ALLOC_SLOWPATH]) +
	      SP_READ_ONCE(slot->stat[SP_STAT_FLUSH_OBJS]) +
	      SP_READ_ONCE(slot->stat[SP_STAT_DEPOT_PUT_OBJS]);
	return (int64_t)(in - out);
}

unsigned int sp_pcpu_slot_objects(struct sp_pcpu_cache *pc, unsigned long i)
{
	int64_t n = sp_pcpu_slot_balance(&pc->slots[i]);

	/* read while the owner moves objects, out may run ahead of in */
	return n > 0 ? (unsigned int)n : 0;
}

void sp_pcpu_read_stats(struct sp_pcpu_cache *pc, struct sp_pcpu_stats *st)
{
	int64_t in_mags = 0;

	memset(st, 0, sizeof(*st));
	for (unsigned long i = 0; i < pc->nr_slots; i++) {
		struct sp_pcpu_slot *slot = &pc->slots[i];

		st->alloc_fastpath += SP_READ_ONCE(slot->alloc_hits);
		st->free_fastpath += SP_READ_ONCE(slot->free_hits);
		for (int s = 0; s < SP_STAT_NR; s++)
			st->stat[s] += SP_READ_ONCE(slot->stat[s]);
		in_mags += sp_pcpu_slot_balance(slot);
		st->objs_in_alien += sp_alien_objects(pc, i);
	}
	/* summed first: a read racing an owner cannot round a slot up */
	st->objs_in_magazines = in_mags > 0 ? (uint64_t)in_mags : 0;
	st->alien_flushes = sp_alien_flushes(pc);
	st->stat[SP_STAT_BYPASS] += SP_READ_ONCE(pc->bypass);
	for (int n = 0; n < sp_topo.nr_nodes; n++) {
		struct sp_depot_info di;

		sp_depot_read(pc, n, &di);
		st->objs_in_depot += di.objs;
		st->full_in_depot += di.full;
		st->empty_in_depot += di.empty;
	}
	st->mag_size = sp_mag_class_cap(SP_READ_ONCE(pc->cls));
	st->depot_max = SP_READ_ONCE(pc->depot_max);
}
