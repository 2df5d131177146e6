/* SPDX-License-Identifier: MIT */
/*
 * percpu/pcpu.h - per-CPU magazine caches in front of the slab layer (private).
 *
 * Each cache with a per-CPU layer has one struct sp_pcpu_slot per CPU (or
 * per mm_cid), each on its own two cache lines, and one struct sp_depot per
 * NUMA node.  The fast path (alloc hit, free hit) is one restartable sequence
 * on the calling CPU's slot (percpu/arch-*.h) or, in lock mode, a short
 * critical section under the slot's spinlock.  Everything else is the slow
 * path (percpu/magazine.c), which first takes ownership of the slot
 * (percpu/slot.h).
 *
 * Ownership of a slot: in rseq mode, whoever replaced its top with a busy
 * marker (sp_rseq_steal on the slot's CPU, or a remote drainer fenced by
 * membarrier); in lock mode, whoever holds slot->lock (taken with trylock:
 * a slow path that finds it held bypasses the slot).  Only the owner
 * touches loaded/prev and the counters of line 1; it ends ownership by
 * storing a real top (release).
 */
#ifndef SP_PERCPU_PCPU_H
#define SP_PERCPU_PCPU_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "internal/compiler.h"
#include "percpu/arch.h"
#include "percpu/depot.h"
#include "percpu/magazine.h"
#include "percpu/rseq.h"
#include <sys/rseq.h>

#include <segpool/counters.h>


/*
 * Events counted per slot; summed on read.  The list, with each counter's
 * meaning, is SEGPOOL_PCPU_COUNTERS() (segpool/counters.h): every class
 * but the fast-path hits (slot->alloc_hits, slot->free_hits) is an index
 * of slot->stat[], in list order.
 */
#define SP_STAT_ENUM_SEGPOOL_CTR_HIT(id)
#define SP_STAT_ENUM_SEGPOOL_CTR_INFO(id)	SP_STAT_##id,
#define SP_STAT_ENUM_SEGPOOL_CTR_EXPORT(id)	SP_STAT_##id,
#define SP_STAT_ENUM_SEGPOOL_CTR_LIBRARY(id)	SP_STAT_##id,
#define SP_STAT_ENUM(key, id, class, unit, doc)	SP_STAT_ENUM_##class(id)
enum sp_pcpu_stat {
	SEGPOOL_PCPU_COUNTERS(SP_STAT_ENUM)
	SP_STAT_NR,
};
#undef SP_STAT_ENUM

/*
 * struct sp_pcpu_slot - one CPU's magazines for one cache.
 * Line 0 is what the fast path reads and writes; its offsets are baked into
 * the assembly.  Line 1 is written only by the slot's owner.
 */
struct sp_pcpu_slot {
	/* --- line 0: fast path --- */
	uint64_t free_hits;		/* 0: frees served by the magazine */
	void **top;			/* 8: next free round of the loaded
					 * magazine */
	uint64_t alloc_hits;		/* 16: allocs served by the magazine */
	uintptr_t expect;		/* 24: page tag of the objects this slot
					 * takes: cache | node index of its CPU
					 * (slab/slab.h sp_slab_tag()) */
	uint32_t lock;			/* 32: lock mode: the slot's spinlock */
	int32_t sample_left;		/* 36: counted build: allocations the
					 * hit path may still hand out before
					 * the slot's next sample; 0 unarmed
					 * (sp_pcpu_sample_arm()) */
	struct sp_mag *loaded;		/* 40: owner only: magazine under top */
	struct sp_mag *prev;		/* 48: owner only: Bonwick's previous */
	uint32_t node;			/* 56: node index of this CPU */
	uint32_t stash_ops;		/* 60: owner only: the slot's
					 * operations at its stash's last use,
					 * modulo 2^32 (percpu/stash.h) */
	/* --- lines 1-3: owner-only counters --- */
	uint64_t stat[SP_STAT_NR] __sp_cacheline_aligned;
	uint32_t trip_ops;		/* operations at the last sizing event,
					 * modulo 2^32 (use-driven sizing,
					 * percpu/sizing.c) */
	int8_t trip_run;		/* sizing events in a row that came too
					 * soon (> 0) or late (< 0) */
	uint8_t stash_nr;		/* magazines in @stash, */
	uint8_t stash_empty_nr;		/* in @stash_empty, */
	uint8_t stash_credit;		/* what @stash may still take, and
					 * the run's kind (percpu/stash.h) */
	struct sp_mag *stash;		/* the slot's own full magazines */
	struct sp_mag *stash_empty;	/* and empty ones */
	uint64_t sample_armed;		/* counted build: the sample counts
					 * armed so far, less what each found
					 * left; SP_SAMPLE_ARMING while an
					 * arming writes it
					 * (sp_slot_alloc_hits()) */
	uint64_t pad1[((1UL << SP_PCPU_SHIFT) - SP_CACHE_LINE) / 8 -
		      SP_STAT_NR - 4];
};

_Static_assert(offsetof(struct sp_pcpu_slot, free_hits) == SP_SLOT_FREE_HITS,
	       "asm: free_hits");
_Static_assert(offsetof(struct sp_pcpu_slot, top) == SP_SLOT_TOP, "asm: top");
_Static_assert(offsetof(struct sp_pcpu_slot, alloc_hits) == SP_SLOT_ALLOC_HITS,
	       "asm: alloc_hits");
_Static_assert(offsetof(struct sp_pcpu_slot, expect) == SP_SLOT_EXPECT,
	       "asm: expect");
_Static_assert(offsetof(struct sp_pcpu_slot, stash_ops) + 4 == SP_CACHE_LINE,
	       "line 0: the fast path's words, then the owner's");
_Static_assert(offsetof(struct sp_pcpu_slot, sample_left) ==
	       SP_SLOT_SAMPLE_LEFT, "asm: sample_left");
_Static_assert(offsetof(struct rseq, rseq_cs) == SP_RSEQ_CS_OFF,
	       "asm: rseq_cs");
/* sp_mag_top_remote is the word after sp_mag_top_busy (percpu/magazine.h) */
_Static_assert(sizeof(void *) == SP_MARKER_REMOTE_DELTA, "asm: remote marker");
_Static_assert(sizeof(struct sp_pcpu_slot) == (1UL << SP_PCPU_SHIFT),
	       "slots are 1 << SP_PCPU_SHIFT bytes, whole cache lines");

/*
 * struct sp_lane - a slot's remote lane: the alien magazine of one home
 * node loaded where a remote free's push takes it without the slow path
 * (percpu/alien.h).  Its first words are at a slot's offsets, so that the
 * lane push reads them as the hit path's push reads a slot's; a lane is
 * as long as a slot, so lane i is at the same stride.  Written only by the
 * owner of slot i, but for the push's top and count.
 */
struct sp_lane {
	/* --- line 0: the lane push's words, at a slot's offsets --- */
	uint64_t free_hits;		/* 0: remote frees the lane took */
	void **top;			/* 8: next free round of @mag, or a
					 * guard (no magazine) */
	uint64_t pad0;			/* 16 */
	uintptr_t expect;		/* 24: page tag of @node's objects of
					 * the cache, or 0 (no magazine) */
	/* owner only */
	struct sp_mag *mag;		/* 32: the magazine under top */
	uint32_t node;			/* 40: its home node index */
	uint32_t pad1;
	uint64_t pad2[((1UL << SP_PCPU_SHIFT) - 48) / 8];
};

_Static_assert(offsetof(struct sp_lane, free_hits) == SP_SLOT_FREE_HITS &&
	       offsetof(struct sp_lane, top) == SP_SLOT_TOP &&
	       offsetof(struct sp_lane, expect) == SP_SLOT_EXPECT,
	       "asm: a lane's words at a slot's offsets");
_Static_assert(sizeof(struct sp_lane) == (1UL << SP_PCPU_SHIFT),
	       "lanes are at the slots' stride");

/*
 * struct sp_pcpu_cache - a cache's per-CPU layer.  Read-mostly except the
 * sizing fields, written by the sizing window and trips.
 */
struct sp_pcpu_cache {
	/* --- read by the critical sections: offsets baked into the asm --- */
	struct sp_pcpu_slot *slots;	/* 0: [nr_slots] */
	unsigned long nr_slots;		/* 8 */
	long rseq_off;			/* 16: struct rseq from the thread
					 * pointer */
	long id_off;			/* 24: its cpu_id or mm_cid field */
	struct sp_lane *lanes;		/* 32: [nr_slots] remote lanes
					 * (percpu/alien.h); NULL on one node
					 * and without rseq */
	/* --- the rest --- */
	struct segpool_cache *cache;	/* the slab cache behind it */
	struct sp_depot *depot;		/* [nr_nodes] */
	size_t map_size;		/* bytes mapped for slots and depots */
	uint32_t cls;			/* magazine class new magazines get */
	uint32_t max_cls;		/* tunable: largest class allowed */
	uint32_t base_cls;		/* class sizing shrinks back to */
	uint32_t depot_max;		/* tunable: full magazines kept per
					 * node */
	uint64_t bypass;		/* slow paths that found the slot
					 * owned */
	pthread_mutex_t drain_lock;	/* one remote drainer at a time */
	struct sp_alien *alien;		/* [nr_slots][nr_nodes] remote-free
					 * magazines (percpu/alien.h); NULL on
					 * one node */
	uint64_t *alien_seen;		/* [nr_slots] the decay's view of each
					 * slot's remote frees (under
					 * @drain_lock); NULL on one node */
	uint64_t *stash_seen;		/* [nr_slots] the decay's view of each
					 * slot's stash (under @drain_lock):
					 * its last use, passes unchanged */
};

_Static_assert(offsetof(struct sp_pcpu_cache, slots) == SP_PC_SLOTS,
	       "asm: slots");
_Static_assert(offsetof(struct sp_pcpu_cache, nr_slots) == SP_PC_NR_SLOTS,
	       "asm: nr_slots");
_Static_assert(offsetof(struct sp_pcpu_cache, rseq_off) == SP_PC_RSEQ_OFF,
	       "asm: rseq_off");
_Static_assert(offsetof(struct sp_pcpu_cache, id_off) == SP_PC_ID_OFF,
	       "asm: id_off");
_Static_assert(offsetof(struct sp_pcpu_cache, lanes) == SP_PC_LANES,
	       "asm: lanes");

/* --- percpu/pcpu.c, and the slow paths of percpu/magazine.c --- */
SP_INTERNAL int sp_pcpu_init(void);
SP_INTERNAL struct sp_pcpu_cache *sp_pcpu_cache_create(struct segpool_cache *c);
/* Drain every slot and the depot into the slabs (shrink, destroy). */
SP_INTERNAL void sp_pcpu_drain(struct sp_pcpu_cache *pc);
/*
 * sp_pcpu_reap_stashes() - the decay's pass over a cache: each slot's
 * stash (percpu/stash.h) not used for SP_STASH_IDLE_PASSES passes goes to
 * the depot, and the alien magazines of a slot that made no remote free
 * since the last pass go to their nodes' depots (percpu/alien.h).
 * Return: the stashes taken.
 */
SP_INTERNAL unsigned int sp_pcpu_reap_stashes(struct sp_pcpu_cache *pc);
/* Free the layer's memory; the caller drained it first. */
SP_INTERNAL void sp_pcpu_cache_free(struct sp_pcpu_cache *pc);
/* fork: take / release the depot locks (lock order: see core/init.c,
 * level 6); in the child, reset them, the drain lock and every slot a
 * thread that did not survive the fork owned. */
SP_INTERNAL void sp_pcpu_fork_lock(struct sp_pcpu_cache *pc);
SP_INTERNAL void sp_pcpu_fork_unlock(struct sp_pcpu_cache *pc);
SP_INTERNAL void sp_pcpu_fork_child(struct sp_pcpu_cache *pc);
SP_INTERNAL void *sp_pcpu_alloc_slow(struct sp_pcpu_cache *pc);
SP_INTERNAL void sp_pcpu_free_slow(struct sp_pcpu_cache *pc, void *obj,
				   unsigned int node);
SP_INTERNAL int sp_pcpu_set_tunables(struct sp_pcpu_cache *pc,
				     unsigned int mag_size,
				     unsigned int depot_max);

/* Set in sample_armed while an arming rewrites it and sample_left. */
#define SP_SAMPLE_ARMING	(1ULL << 63)

/*
 * sp_slot_alloc_hits() - the allocations a slot's magazine served (racy
 * read; its owner's is exact): the hits the open pop and the slow path's
 * plain hit counted, and the counted pop's (the counted build), which
 * count its sample count down instead: each arming adds what it arms less
 * what the count it replaces had left (sp_pcpu_sample_arm()), so the
 * counted hits are sample_armed - sample_left.  Open builds leave both 0.
 * The two are read as a pair: sample_armed marked SP_SAMPLE_ARMING, or
 * changed across the read, is read again (a few times: an arming's
 * owner may be preempted, and a racy count is all a reader gets anyway).
 */
static inline uint64_t sp_slot_alloc_hits(const struct sp_pcpu_slot *slot)
{
	uint64_t armed;
	int32_t left;

	for (int tries = 0;; tries++) {
		armed = __atomic_load_n(&slot->sample_armed, __ATOMIC_ACQUIRE);
		left = SP_READ_ONCE(slot->sample_left);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if ((!(armed & SP_SAMPLE_ARMING) &&
		     armed == __atomic_load_n(&slot->sample_armed,
					      __ATOMIC_RELAXED)) || tries == 8)
			break;
	}
	armed &= ~SP_SAMPLE_ARMING;
	return SP_READ_ONCE(slot->alloc_hits) + armed - (uint64_t)(int64_t)left;
}

/* The operations of a slot so far (owner only). */
static inline uint64_t sp_slot_ops(const struct sp_pcpu_slot *slot)
{
	return sp_slot_alloc_hits(slot) + slot->free_hits +
	       slot->stat[SP_STAT_ALLOC_SLOWPATH] +
	       slot->stat[SP_STAT_FREE_SLOWPATH];
}

/* A slot's own counters (owner only: plain adds, read racily by stats). */
static inline void sp_stat_add(struct sp_pcpu_slot *slot, enum sp_pcpu_stat s,
			       uint64_t n)
{
	SP_WRITE_ONCE(slot->stat[s], slot->stat[s] + n);
}

static inline void sp_stat_inc(struct sp_pcpu_slot *slot, enum sp_pcpu_stat s)
{
	sp_stat_add(slot, s, 1);
}

struct sp_pcpu_stats {
	uint64_t alloc_fastpath;
	uint64_t free_fastpath;
	uint64_t stat[SP_STAT_NR];
	uint64_t objs_in_magazines;	/* held by all slots: loaded, previous
					 * and remote frees (alien magazines) */
	uint64_t objs_in_alien;		/* of which in alien magazines */
	uint64_t alien_flushes;		/* alien magazines sent home */
	uint64_t objs_in_depot;
	uint64_t full_in_depot;
	uint64_t empty_in_depot;
	unsigned int mag_size;		/* current capacity */
	unsigned int depot_max;
};
SP_INTERNAL void sp_pcpu_read_stats(struct sp_pcpu_cache *pc,
				    struct sp_pcpu_stats *st);

/*
 * A slot's counters as the statistics read them: its own hits and slow-path
 * counters, with the remote frees its lane took folded in once (fast-path
 * frees of the slot, and remote frees).  Racy reads, as the counters'.
 */
struct sp_pcpu_slot_counts {
	uint64_t alloc_fastpath;
	uint64_t free_fastpath;
	uint64_t stat[SP_STAT_NR];
};
SP_INTERNAL void sp_pcpu_slot_counts(struct sp_pcpu_cache *pc, unsigned long i,
				     struct sp_pcpu_slot_counts *c);

/*
 * sp_pcpu_sample_arm() - arm slot @due's sample count with @left (the
 * counted build: allocations its pop may hand out before the next one is
 * due, core/hotpath.h), if @due is the calling CPU's slot and free to own;
 * else nothing changes, and the count, at or below 0, sends the slot's
 * next pop here again (from a thread on its CPU).  Keeps the slot's hit
 * count (sp_slot_alloc_hits()) as it was.
 */
SP_INTERNAL void sp_pcpu_sample_arm(struct sp_pcpu_cache *pc,
				    struct sp_pcpu_slot *due, int32_t left);

/*
 * Objects held in slot @i's magazines, from its counters alone (objects in
 * minus objects out), never from the magazines the owner is changing: a
 * lock-free read that is exact whenever the slot is quiet.
 */
SP_INTERNAL unsigned int sp_pcpu_slot_objects(struct sp_pcpu_cache *pc,
					      unsigned long i);

/*
 * Test hooks: when set, called at chosen points of the slow paths (never on
 * the fast path), so tests can act at exactly that moment: migrate the
 * thread, run another operation on the same slot, or start a drain.  In
 * lock mode the hook runs with the slot's spinlock held, so it must not use
 * the same slot itself.
 */
enum sp_pcpu_hook_point {
	SP_HOOK_SLOT_OWNED,	/* a slow path owns its slot, before any
				 * change */
	SP_HOOK_SLOT_RELEASE,	/* it is about to publish the slot's new top */
	SP_HOOK_DRAIN_XCHG,	/* a drainer swapped a slot's top, before
				 * fencing */
};
extern SP_INTERNAL void (*sp_pcpu_test_hook)(enum sp_pcpu_hook_point point,
					     unsigned long slot);

/* --- fast path ---------------------------------------------------------- */

/*
 * What the hit paths read besides the cache's line 0 (percpu/rseq.c):
 *   sp_pcpu_fast_nr   slots the sequences may use: the slot count in rseq
 *                     mode, 0 before start-up, in lock and off modes and
 *                     while failslab is armed (every id is then out of
 *                     range: the sequences miss at their first compare);
 *   sp_pcpu_id_delta  offset of the slot id in the rseq area: cpu_id (4),
 *                     or mm_cid (24).
 * Both live in the inline ABI's struct (segpool/inline.h), exported so a
 * program built with SEGPOOL_INLINE reads the same words; its line is
 * written only when the mode changes.
 */
/*
 * The inline ABI's words (segpool/inline.h): version, nr, id_delta lead.
 * The library reads them through this hidden name (no GOT load on its hit
 * paths); the exported segpool_inline_abi_v<N> is an alias of it
 * (percpu/rseq.c).
 */
extern SP_INTERNAL struct segpool_inline_layout sp_pcpu_fast;
/*
 * The same line again, read only, for the space words of the frees' tag
 * lookup (core/hotpath.h sp_hot_tag()): under a name of its own, the
 * compiler does not keep the line's address in a register across the
 * sequence (one register more, and a saved one, on the free's hit).
 */
extern SP_INTERNAL const struct segpool_inline_layout sp_pcpu_fast_tag;

/* Slots of every per-CPU layer: possible CPUs (or mm_cids). */
SP_INTERNAL unsigned int sp_pcpu_nr_slots(void);
/* Open or close the hit paths (mode chosen, failslab armed or disarmed). */
SP_INTERNAL void sp_pcpu_fast_update(bool forced_slow);
/*
 * Set for good before sp_pcpu_fast_update() when every operation must
 * reach a slow path whatever else happens (sampled heap profiling, prof/).
 */
extern SP_INTERNAL bool sp_pcpu_fast_closed;
/*
 * The slot bound the hit paths would have if sp_pcpu_fast_closed were not
 * set (0 when they would be closed anyway), kept whether or not it is: the
 * counted entry points (core/entry.h) and the sampling slow paths run
 * their sequences on it (core/hotpath.h, sp_hot_alloc_counted()).
 */
extern SP_INTERNAL uint32_t sp_pcpu_closed_nr;

/*
 * sp_pcpu_nil_slots() - the slot array of a cache without a per-CPU layer:
 * one slot per id, each always empty, always full and expecting no tag, so
 * every hit path through it misses.  Never written.
 */
SP_INTERNAL void *sp_pcpu_nil_slots(void);

/*
 * sp_pcpu_pop() - the top round of the caller's loaded magazine in @slots,
 * or a jump to the caller's label @miss.  See percpu/arch-*.h for the
 * sequence and its budget.
 */
#if SP_RSEQ_ARCH
/*
 * sp_pcpu_base() - the rseq area's offset from the thread pointer for a
 * hit path's sequence: sp_pcpu_fast.rseq_off, glibc's __rseq_offset,
 * copied into the layout line the sequences read anyway (percpu/rseq.c):
 * one load where __rseq_offset takes two (its GOT entry, then the value),
 * and one step less in the chain every hit waits on (rseq offset, id,
 * slot, top, round); what it saved is measured in
 * Documentation/internals/percpu.md, "The hit path's loads".
 * The copy is set before the space is reserved (sp_pcpu_base_init()), so
 * before any cache or tagged object exists, and in every mode: glibc
 * reserves the area in every thread whether it registered it or not, so
 * the descriptor's store is harmless where the slot bound (0 outside rseq
 * mode on glibc's registration) sends the sequence to @miss.  A path that
 * reaches a sequence only through a live cache (its magic) or a page tag
 * reads it as it is; segpool_malloc()'s allocation, whose class table
 * points at the boot stand-in before start-up, takes sp_pcpu_base_boot().
 */
#define sp_pcpu_base(miss) (sp_pcpu_fast.rseq_off)
/*
 * sp_pcpu_base_boot() - sp_pcpu_base(), or a jump to @miss while the copy
 * is 0 (before start-up): then the sequence never touches the thread's
 * control block.
 */
#define sp_pcpu_base_boot(miss) __extension__ ({			\
	long __sp_b = sp_pcpu_fast.rseq_off;				\
									\
	if (unlikely(!__sp_b))						\
		goto miss;						\
	__sp_b;								\
})
#define sp_pcpu_pop(slots, miss)					\
	sp_rseq_pop_fast(slots, sp_pcpu_base(miss),			\
			 sp_pcpu_fast.id_delta, sp_pcpu_fast.nr, miss)
/* sp_pcpu_pop() for segpool_malloc()'s classes (the boot stand-in). */
#define sp_pcpu_pop_boot(slots, miss)					\
	sp_rseq_pop_fast(slots, sp_pcpu_base_boot(miss),		\
			 sp_pcpu_fast.id_delta, sp_pcpu_fast.nr, miss)
#define sp_pcpu_push(slots, obj, tag, mark, koff, miss)			\
	sp_rseq_push_fast(slots, sp_pcpu_base(miss),			\
			  sp_pcpu_fast.id_delta, sp_pcpu_fast.nr, obj,	\
			  tag, mark, (unsigned long)(koff), miss)
/* The same sequences with the slot bound @nr instead of the open one. */
#define sp_pcpu_pop_nr(slots, nr, miss)					\
	sp_rseq_pop_fast(slots, sp_pcpu_base(miss),			\
			 sp_pcpu_fast.id_delta, nr, miss)
/*
 * The counted build's pop on the slot bound @nr: the slot it popped from
 * into @slot (a pointer), and whether its sample count ran out into the
 * bool @due (sp_rseq_pop_counted(), percpu/contract.h).
 */
#define sp_pcpu_pop_counted(slots, nr, slot, due, miss)			\
	sp_rseq_pop_counted(slots, sp_pcpu_base(miss),			\
			    sp_pcpu_fast.id_delta, nr, slot, due, miss)
#define sp_pcpu_pop_counted_boot(slots, nr, slot, due, miss)		\
	sp_rseq_pop_counted(slots, sp_pcpu_base_boot(miss),		\
			    sp_pcpu_fast.id_delta, nr, slot, due, miss)
#define sp_pcpu_push_nr(slots, nr, obj, tag, mark, koff, miss)		\
	sp_rseq_push_fast(slots, sp_pcpu_base(miss),			\
			  sp_pcpu_fast.id_delta, nr, obj, tag, mark,	\
			  (unsigned long)(koff), miss)
#else
#define sp_pcpu_pop(slots, miss)					\
	({ (void)(slots); goto miss; (void *)0; })
#define sp_pcpu_pop_boot(slots, miss)	sp_pcpu_pop(slots, miss)
#define sp_pcpu_pop_nr(slots, nr, miss)					\
	({ (void)(slots); (void)(nr); goto miss; (void *)0; })
#define sp_pcpu_pop_counted(slots, nr, slot, due, miss)			\
	({ (void)(slots); (void)(nr); (slot) = NULL; (due) = false;	\
	   goto miss; (void *)0; })
#define sp_pcpu_pop_counted_boot	sp_pcpu_pop_counted
#define sp_pcpu_push_nr(slots, nr, obj, tag, mark, koff, miss)		\
	do { (void)(slots); (void)(nr); goto miss; } while (0)
#define sp_pcpu_push(slots, obj, tag, mark, koff, miss)			\
	do { (void)(slots); goto miss; } while (0)
#endif

/*
 * sp_pcpu_lane_hits() - remote frees slot @i's lane took (racy read): frees
 * into the slot's per-CPU layer besides its own hits, and remote frees.
 */
static inline uint64_t sp_pcpu_lane_hits(struct sp_pcpu_cache *pc,
					 unsigned long i)
{
	return pc->lanes ? SP_READ_ONCE(pc->lanes[i].free_hits) : 0;
}

/*
 * sp_pcpu_lane_push() - a remote free's push on the calling CPU's remote
 * lane (percpu/alien.h), its free mark @mark stored at @obj + @koff: true
 * when the lane took @obj, false when the slow path must (no lane, the
 * lane holds another node's magazine or a full one, the slot is owned, or
 * two aborts in a row).  @obj passed the hit path's checks.
 */
static inline bool sp_pcpu_lane_push(struct sp_pcpu_cache *pc, void *obj,
				     uintptr_t tag, uintptr_t mark,
				     unsigned int koff)
{
#if SP_RSEQ_ARCH
	if (!pc || !pc->lanes)
		return false;
	for (int tries = 0; tries < 2; tries++) {
		uintptr_t r = sp_rseq_lane_push(pc, obj, tag, mark, koff,
						sp_mag_top_busy);

		if (r != SP_RSEQ_ABORTED)
			return r == SP_LANE_PUSHED;
	}
#else
	(void)pc; (void)obj; (void)tag; (void)mark; (void)koff;
#endif
	return false;
}

/*
 * A slot's fills from the slabs ramp up (sp_fill_ramp() below): the first
 * takes SP_FILL_FIRST_BYTES of objects (at least SP_FILL_FIRST_MIN), each
 * next one twice the bytes of the one before, up to sp_fill_size().  A
 * program that allocates a few objects of a size class (most classes of
 * most programs) would otherwise have a magazine's worth (up to 64 KiB)
 * taken off its slabs, written to as it is handed out and kept per class
 * and CPU, at its second fill.  A slot that keeps allocating pays a few
 * slow paths more in its life: at most five for the largest objects.
 */
#define SP_FILL_FIRST_BYTES	4096U
#define SP_FILL_FIRST_MIN	2U

/*
 * sp_fill_size() - the rounds a fill from the slabs puts in a magazine of
 * @cap: all but a quarter.  The filled magazine is loaded, and the frees
 * that follow an allocation burst (the pool pattern: allocate a batch,
 * free part of it) would find a full one overflow at once: a free slow
 * path (and a depot exchange) at every fill, the free's p99.9 on such a
 * pattern.  The room costs a fill a quarter fewer objects.
 */
#define SP_FILL_ROOM_DIV	4U

static inline unsigned int sp_fill_size(unsigned int cap)
{
	return cap - cap / SP_FILL_ROOM_DIV;
}

/*
 * sp_fill_ramp() - the rounds of a fill from the slabs into a magazine of
 * @cap of objects of @stride bytes, for a slot that filled @fills times
 * before.  A shift of 5 already passes every magazine's bytes
 * (SP_MAG_BYTES_MAX).
 */
static inline unsigned int sp_fill_ramp(size_t stride, uint64_t fills,
					unsigned int cap)
{
	size_t n = ((size_t)SP_FILL_FIRST_BYTES << (fills < 5 ? fills : 5)) /
		   stride;
	unsigned int full = sp_fill_size(cap);

	if (n < SP_FILL_FIRST_MIN)
		n = SP_FILL_FIRST_MIN;
	return n < full ? (unsigned int)n : full;
}

#endif /* SP_PERCPU_PCPU_H */
