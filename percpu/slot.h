/* SPDX-License-Identifier: MIT */
/*
 * percpu/slot.h - owning a CPU slot before its magazines are touched
 * (private): the slow paths' own slot (percpu/magazine.c) and a drain's
 * slot of any CPU (percpu/pcpu.c).
 *
 * A slow path first owns its slot (sp_slot_own()).  When it cannot
 * (another thread owns it: a preempted slow path, a drainer, or in lock mode
 * anyone holding the slot's lock) it bypasses the magazines and goes to the
 * slab layer directly; nobody ever waits for a slot on the allocation path.
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
 * locks, and the depot's mutex for a sizing window).  In lock mode the
 * drainer takes the slot's spinlock.
 *
 */
#ifndef SP_PERCPU_SLOT_H
#define SP_PERCPU_SLOT_H

#include "internal/debug.h"
#include "os/cpu.h"
#include "os/os.h"
#include "percpu/pcpu.h"

/* The test hook at @point, with @slot's index (sp_pcpu_test_hook). */
static inline void sp_hook(enum sp_pcpu_hook_point point,
			   struct sp_pcpu_cache *pc, struct sp_pcpu_slot *slot)
{
	void (*hook)(enum sp_pcpu_hook_point, unsigned long) =
		SP_READ_ONCE(sp_pcpu_test_hook);

	if (unlikely(hook))
		hook(point, (unsigned long)(slot - pc->slots));
}

/* --- slot spinlock (lock mode) --- */

static inline void sp_spin_lock(uint32_t *lock)
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

static inline bool sp_spin_trylock(uint32_t *lock)
{
	return !__atomic_load_n(lock, __ATOMIC_RELAXED) &&
	       !__atomic_exchange_n(lock, 1, __ATOMIC_ACQUIRE);
}

static inline void sp_spin_unlock(uint32_t *lock)
{
	__atomic_store_n(lock, 0, __ATOMIC_RELEASE);
}

/* --- owning a slot --- */

/*
 * Own the caller's slot.  Return it, with *topp the top it had; NULL when
 * another owns it (the caller bypasses).  *aborts counts rseq restarts.
 */
static inline struct sp_pcpu_slot *
sp_slot_own(struct sp_pcpu_cache *pc, void ***topp, unsigned int *aborts)
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

static inline void sp_slot_release(struct sp_pcpu_cache *pc,
				   struct sp_pcpu_slot *slot, void **top)
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
static inline void **sp_slot_own_remote(struct sp_pcpu_cache *pc,
					  unsigned long i)
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

#endif /* SP_PERCPU_SLOT_H */
