/* SPDX-License-Identifier: MIT */
/*
 * percpu/contract.h - what an architecture's restartable sequences must do
 * (private).  Arch-neutral, in the manner of librseq's pseudocode.h: the
 * sequences themselves live in percpu/arch-<arch>.h, which percpu/arch.h
 * picks; this file states their contract, the layout they may assume, and
 * what an arch header must define.  A port is one new arch header that
 * implements the pseudocode below against these constants.
 *
 * --- Layout the sequences may bake in (percpu/pcpu.h asserts each) ---
 *
 * A CPU slot (struct sp_pcpu_slot) is 1 << SP_PCPU_SHIFT bytes; slot i of a
 * slot array starts at slots + (i << SP_PCPU_SHIFT).  In it:
 *   SP_SLOT_FREE_HITS   u64    frees served by the loaded magazine
 *   SP_SLOT_TOP         void** next free round of the loaded magazine
 *   SP_SLOT_ALLOC_HITS  u64    allocations served by it
 *   SP_SLOT_EXPECT      word   page tag of the objects the slot takes
 *   SP_SLOT_SAMPLE_LEFT i32    allocations to the slot's next sample
 *                              (the counted pop's only)
 * A magazine's rounds are object pointers, never odd; the words just below
 * its first round and just above its last are odd guards (percpu/
 * magazine.h), so "empty" is: the word at top - 8 is odd, and "full" is:
 * the word at top is odd.  Tops that hold no magazine point into static
 * arrays of guards (sp_mag_none, sp_mag_busy) and so read as both.
 *
 * A per-CPU layer (struct sp_pcpu_cache) starts with:
 *   SP_PC_SLOTS         the slot array
 *   SP_PC_NR_SLOTS      its length
 *   SP_PC_RSEQ_OFF      the thread's rseq area, from the thread pointer
 *   SP_PC_ID_OFF        the slot id field (cpu_id or mm_cid), from the
 *                       thread pointer
 *   SP_PC_LANES         the remote lanes (NULL on one node): lane i at
 *                       lanes + (i << SP_PCPU_SHIFT), with a slot's
 *                       SP_SLOT_FREE_HITS, SP_SLOT_TOP and SP_SLOT_EXPECT
 *                       (struct sp_lane, percpu/pcpu.h)
 * The rseq area is the kernel's struct rseq; its rseq_cs field is at
 * SP_RSEQ_CS_OFF (the kernel ABI).
 *
 * --- The sequences (each one restartable sequence on the calling CPU) ---
 *
 * Every sequence arms the thread's rseq_cs with its descriptor, then, inside
 * the critical section, reads the slot id and ends in exactly one store,
 * the commit.  Preemption, migration or a signal between the start and the
 * commit sends the thread to the abort handler, which is preceded by the
 * signature SP_RSEQ_SIG that the thread's area was registered with.
 *
 *   sp_rseq_pop_fast(slots, base, delta, nr, miss)   -> object
 *	id = *(u32 *)(tp + base + delta)
 *	if id >= nr: goto miss
 *	s = slots + (id << SP_PCPU_SHIFT)
 *	top = s->top
 *	obj = top[-1]
 *	if obj is odd: goto miss			(empty)
 *	s->top = top - 1				(commit)
 *	s->alloc_hits += 1				(after the commit)
 *	return obj
 *     abort: goto miss.  @base is the rseq area's offset (__rseq_offset;
 *     the library's copy in sp_pcpu_fast.rseq_off), @delta the id field's
 *     offset in the area, @nr the slot bound (sp_pcpu_fast.nr: 0 closes
 *     every hit path).  The hit count is one add instruction outside the
 *     section, or, where an add to memory would have to be atomic, part of the
 *     commit: one store of the pair top and counter (percpu/arch-arm64.h),
 *     which an abort leaves unmade.
 *
 *   sp_rseq_pop_counted(slots, base, delta, nr, s, due, miss)  -> object
 *	the pop above, but for its last line:
 *	s->sample_left -= 1				(after the commit)
 *	due = s->sample_left <= 0; the slot to @s
 *     The counted build's pop (core/hotpath.h): the hits are not counted
 *     up, the sample count is counted down (the hits are the counts
 *     spent, percpu/pcpu.h).  Its subtract is outside the section, as
 *     the pop's count, and may be a plain load and store (a count lost
 *     or taken twice by a thread that moved CPUs in between moves a
 *     sample, never an object).
 *
 *   sp_rseq_push_fast(slots, base, delta, nr, obj, tag, mark, koff, miss)
 *	id and s as above
 *	if s->expect != tag: goto miss			(other cache or node)
 *	top = s->top
 *	if *top is odd: goto miss			(full)
 *	*(word *)(obj + koff) = mark			(idempotent)
 *	*top = obj					(above top: unseen)
 *	s->top = top + 1				(commit)
 *	s->free_hits += 1				(after the commit)
 *     abort: goto miss.  Nothing before the commit is seen by anyone: the
 *     mark store is one the slow path makes again, and the word above top
 *     is not in the magazine until the commit.
 *
 *   sp_rseq_steal(pc, busy, &slot)  -> old top, 0, or SP_RSEQ_ABORTED
 *	arm (rseq area from pc's SP_PC_RSEQ_OFF word)
 *	id = *(u32 *)(tp + pc->id_off); *slot = id
 *	if id >= pc->nr_slots: return 0
 *	s = pc->slots + (id << SP_PCPU_SHIFT)
 *	old = s->top
 *	if old - busy <= SP_MARKER_REMOTE_DELTA (unsigned): return 0
 *						(busy, or the remote marker)
 *	s->top = busy					(commit)
 *	return old
 *     abort: return SP_RSEQ_ABORTED; the caller retries.
 *
 *   sp_rseq_lane_push(pc, obj, tag, mark, koff, busy)
 *					-> SP_LANE_PUSHED, 0 or SP_RSEQ_ABORTED
 *	arm (rseq area from pc's SP_PC_RSEQ_OFF word)
 *	id = *(u32 *)(tp + pc->id_off)
 *	if id >= pc->nr_slots: return 0
 *	s = pc->slots + (id << SP_PCPU_SHIFT)
 *	if s->top - busy <= SP_MARKER_REMOTE_DELTA (unsigned): return 0
 *				(the slot is owned: so is its lane; a load
 *				 with acquire order where loads may pass
 *				 loads, so that the lane's words read below
 *				 are the ones its owner published before)
 *	l = pc->lanes + (id << SP_PCPU_SHIFT)
 *	if l->expect != tag: return 0			(other node, none)
 *	top = l->top
 *	if *top is odd: return 0			(full, or no magazine)
 *	*(word *)(obj + koff) = mark			(idempotent)
 *	*top = obj					(above top: unseen)
 *	l->top = top + 1				(commit)
 *	l->free_hits += 1				(after the commit)
 *	return SP_LANE_PUSHED
 *     abort: return SP_RSEQ_ABORTED; the caller retries or takes the slow
 *     path.  A remote free's push (percpu/alien.h): a slot's lane is its
 *     owner's, written only while the slot is owned, so a lane push that
 *     found its slot free and is still running when someone owns the slot
 *     was on the slot's CPU (it is aborted) or is fenced by a remote
 *     drainer (percpu/slot.h).
 *
 * None of them may take a lock, make a call, use the stack or loop; the hit
 * paths (pop and push) state their instruction budget beside their code,
 * and tools/check/hotpath.sh checks them in the built library (x86-64, and
 * arm64 in a cross build).
 *
 * --- What an arch header defines ---
 *
 *   SP_RSEQ_ARCH 1, SP_RSEQ_SIG, the five sequences above;
 *   optionally SP_HIT_COUNT_ARCH 1 and sp_hit_count() (one add instruction
 *   on a counter: the slow path's plain hit, percpu/arch.h has a fallback),
 *   SP_CAS16_ARCH 1, sp_cas16() and sp_cas16_usable() (a 16-byte
 *   compare-and-swap, and whether this CPU has it: the depot's stacks are
 *   lock-free with it, percpu/depot.c), and SP_PREFETCH_WRITE_ARCH 1,
 *   sp_prefetch_write() and sp_prefetch_write_usable() (a hint that asks
 *   for a line in the exclusive state: a magazine's rounds, percpu/
 *   magazine.c; percpu/arch.h falls back on the compiler's hint).
 * Without an arch header the per-CPU layer runs in lock mode only.
 */
#ifndef SP_PERCPU_CONTRACT_H
#define SP_PERCPU_CONTRACT_H

#include <stdint.h>

/* the slot layout is the inline ABI's (segpool/inline.h): stated there once */
#include <segpool/inline.h>

#define SP_PCPU_SHIFT		SEGPOOL_ABI_SLOT_SHIFT	/* 256-byte slots */

#define SP_SLOT_FREE_HITS	SEGPOOL_ABI_SLOT_FREE_HITS
#define SP_SLOT_TOP		SEGPOOL_ABI_SLOT_TOP
#define SP_SLOT_ALLOC_HITS	SEGPOOL_ABI_SLOT_ALLOC_HITS
#define SP_SLOT_EXPECT		SEGPOOL_ABI_SLOT_EXPECT
/* the library's own: the counted pop's count (not the inline ABI's) */
#define SP_SLOT_SAMPLE_LEFT	36

#define SP_PC_SLOTS		0
#define SP_PC_NR_SLOTS		8
#define SP_PC_RSEQ_OFF		16
#define SP_PC_ID_OFF		24
#define SP_PC_LANES		32

/* offsetof(struct rseq, rseq_cs) */
#define SP_RSEQ_CS_OFF		SEGPOOL_ABI_RSEQ_CS

/* The remote drainer's marker is the word after the local busy marker. */
#define SP_MARKER_REMOTE_DELTA	8

/* sp_rseq_steal()'s report of an abort (never a top: tops are even). */
#define SP_RSEQ_ABORTED		((uintptr_t)1)
/* sp_rseq_lane_push()'s report of a push (the number, for the asm). */
#define SP_LANE_PUSHED_NR	2
#define SP_LANE_PUSHED		((uintptr_t)SP_LANE_PUSHED_NR)

/* A constant's value as a string, for the sequences' assembly text. */
#define SP_STR_(x)		#x
#define SP_STR(x)		SP_STR_(x)

#endif /* SP_PERCPU_CONTRACT_H */
