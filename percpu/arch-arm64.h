/* SPDX-License-Identifier: MIT */
/*
 * percpu/arch-arm64.h - the AArch64 restartable sequences of the magazine
 * fast path.
 *
 * Each sequence, as on x86-64 (percpu/arch-x86_64.h):
 *   - stores the address of its descriptor (struct rseq_cs, in the
 *     __rseq_cs section: start_ip, post_commit_offset, abort_ip) in the
 *     thread's rseq area, found from the thread pointer (tpidr_el0), then
 *   - reads the slot id (cpu_id, or mm_cid) from the area *inside* the
 *     sequence, so it cannot go stale: preemption, migration or a signal
 *     between start_ip and the commit sends the thread to abort_ip;
 *   - ends in exactly one store, the commit: plain ldr/ldp and str/stp, no
 *     exclusive pair (ldxr/stxr), no LSE atomic, no barrier.
 *
 * The abort handler is preceded by the signature SP_RSEQ_SIG, 0xd428bc00:
 * the arm64 value of the kernel's selftests, librseq and glibc (an
 * instruction word, "brk #0x45e0", so that a stray jump to it traps), the
 * one glibc registers its areas with and segpool its own.  It is placed as
 * an instruction (.inst) in the __rseq_failure section, off the hot path,
 * and reports a miss (pop, push) or SP_RSEQ_ABORTED (steal).
 *
 * One difference from x86-64, in the hit count.  x86-64 adds to the slot's
 * counter right after the commit with one memory add; AArch64 has no add
 * to memory but an atomic one, which a hit path must not have.  Here the
 * counter is next to the top in the slot (SP_SLOT_ALLOC_HITS just above
 * SP_SLOT_TOP, SP_SLOT_FREE_HITS just below), so the pair is loaded with
 * one ldp and stored with one stp: the commit writes the new top and the
 * counter plus one in a single instruction.  The count is then inside the
 * sequence and exact: an abort counts nothing (the stp was not made) and a
 * commit counts once.  The pair lies in one slot, within one page, so the
 * stp cannot fault half done.  Every other writer of the counters is the
 * slot's owner (sp_hit_count(), percpu/arch.h's plain one), while the
 * slot's top is the busy marker, which no sequence commits over.
 *
 * The contract these sequences implement, in pseudocode, and the layout
 * constants they use (SP_SLOT_*, SP_PC_*, SP_PCPU_SHIFT): percpu/contract.h;
 * its lines are beside the instructions below.
 */
#ifndef SP_PERCPU_ARCH_H_INSIDE
#error "include percpu/arch.h, not percpu/arch-arm64.h"
#endif

#include <stdbool.h>
#include <stdint.h>
#include <sys/auxv.h>

#include "internal/compiler.h"
#include "os/cpu.h"
#include "percpu/contract.h"

#define SP_RSEQ_ARCH		1
#define SP_RSEQ_SIG		0xd428bc00

/* the steal's abort handler reports SP_RSEQ_ABORTED as "mov res, #1" */
_Static_assert(SP_RSEQ_ABORTED == 1, "arm64: the steal's abort value");

/* the counters beside the top: one ldp/stp each (see above) */
_Static_assert(SP_SLOT_ALLOC_HITS == SP_SLOT_TOP + 8,
	       "arm64: the pop's top and count are one pair");
_Static_assert(SP_SLOT_FREE_HITS + 8 == SP_SLOT_TOP,
	       "arm64: the push's count and top are one pair");

/* Descriptor of one critical section (in the manner of the x86 one). */
#define SP_RSEQ_CS_DESC(start, post, abort)				\
	".pushsection __rseq_cs, \"aw\"\n\t"				\
	".balign 32\n\t"						\
	"99:\n\t"							\
	".long 0, 0\n\t"						\
	".quad " #start "f, (" #post "f - " #start "f), " #abort "f\n\t" \
	".popsection\n\t"						\
	".pushsection __rseq_cs_ptr_array, \"aw\"\n\t"			\
	".quad 99b\n\t"							\
	".popsection\n\t"

/* @reg = the descriptor's address (pc-relative, this object's own) */
#define SP_RSEQ_DESC_ADDR(reg)						\
	"adrp " reg ", 99b\n\t"						\
	"add " reg ", " reg ", :lo12:99b\n\t"

/* The signature, then the abort handler: @body, in its own section. */
#define SP_RSEQ_ABORT_AT(abort, body)					\
	".pushsection __rseq_failure, \"ax\"\n\t"			\
	".inst " SP_STR(SP_RSEQ_SIG) "\n\t"				\
	#abort ":\n\t"							\
	body								\
	".popsection\n\t"

/*
 * SP_RSEQ_INJECT(n, abort, tmp) - injection point @n of a sequence, as on
 * x86-64 (percpu/arch-x86_64.h says what it does; the empty string in any
 * build but a debug one): when this thread's sp_rseq_inject.point is @n
 * and its .aborts is not 0, take one from .aborts and jump to the abort
 * handler.  @tmp is a register the sequence has free at that point.
 */
#ifdef CONFIG_SEGPOOL_DEBUG
struct sp_rseq_inject {
	unsigned int point;	/* the point that aborts (1, 2, ...), or 0 */
	unsigned int aborts;	/* aborts still to make there */
};
extern SP_INTERNAL __thread struct sp_rseq_inject sp_rseq_inject;
#define SP_RSEQ_INJECT(n, abort, tmp)					\
	"ldr %w[" tmp "], %[inj_point]\n\t"				\
	"cmp %w[" tmp "], #" #n "\n\t"					\
	"b.ne 88f\n\t"							\
	"ldr %w[" tmp "], %[inj_aborts]\n\t"				\
	"cbz %w[" tmp "], 88f\n\t"					\
	"sub %w[" tmp "], %w[" tmp "], #1\n\t"				\
	"str %w[" tmp "], %[inj_aborts]\n\t"				\
	"b " #abort "f\n\t"						\
	"88:\n\t"
#define SP_RSEQ_INJECT_OPS						\
	, [inj_point] "+m"(sp_rseq_inject.point),			\
	  [inj_aborts] "+m"(sp_rseq_inject.aborts)
#else
#define SP_RSEQ_INJECT(n, abort, tmp)	""
#define SP_RSEQ_INJECT_OPS
#endif

/*
 * The commit with or without the count: a benchmark variant built with
 * CONFIG_SEGPOOL_NO_HIT_STATS (make NO_HIT_STATS=1) counts nothing and
 * loads and stores the top alone.
 */
#ifdef CONFIG_SEGPOOL_NO_HIT_STATS
#define SP_RSEQ_HIT_NOTE	", no hit counters"
#define SP_A64_TOP		"[%[s], #" SP_STR(SP_SLOT_TOP) "]"
#define SP_A64_POP_LOAD		"ldr %[top], " SP_A64_TOP "\n\t"
#define SP_A64_POP_COUNT	""
#define SP_A64_POP_COMMIT	"str %[top], " SP_A64_TOP "\n\t"
#define SP_A64_PUSH_LOAD	"ldr %[top], " SP_A64_TOP "\n\t"
#define SP_A64_PUSH_COUNT	""
#define SP_A64_PUSH_COMMIT	"str %[top], " SP_A64_TOP "\n\t"
#else
#define SP_RSEQ_HIT_NOTE	""
/* top = s->top, with s->alloc_hits beside it */
#define SP_A64_POP_LOAD							\
	"ldp %[top], %[cnt], [%[s], #" SP_STR(SP_SLOT_TOP) "]\n\t"
#define SP_A64_POP_COUNT	"add %[cnt], %[cnt], #1\n\t"
/* s->top = top - 1, s->alloc_hits += 1	(commit: one stp) */
#define SP_A64_POP_COMMIT						\
	"stp %[top], %[cnt], [%[s], #" SP_STR(SP_SLOT_TOP) "]\n\t"
/* top = s->top, with s->free_hits beside it */
#define SP_A64_PUSH_LOAD						\
	"ldp %[cnt], %[top], [%[s], #" SP_STR(SP_SLOT_FREE_HITS) "]\n\t"
#define SP_A64_PUSH_COUNT	"add %[cnt], %[cnt], #1\n\t"
/* s->top = top + 1, s->free_hits += 1	(commit: one stp) */
#define SP_A64_PUSH_COMMIT						\
	"stp %[cnt], %[top], [%[s], #" SP_STR(SP_SLOT_FREE_HITS) "]\n\t"
#endif

/*
 * The pop's and the push's common start, with percpu/contract.h's
 * pseudocode beside each step: arm the thread's rseq_cs with the
 * sequence's descriptor, read the slot id, check it against the bound and
 * find the slot.  Its operands are the sequences' own: s, top, cnt, slots,
 * base, delta, nr and the label miss.
 */
#define SP_A64_SLOT_ENTER						\
	/* arm: the thread's rseq_cs = this sequence's descriptor */	\
	SP_RSEQ_DESC_ADDR("%[s]")					\
	"mrs %[top], tpidr_el0\n\t"					\
	"add %[top], %[top], %[base]\n\t"				\
	"str %[s], [%[top], #" SP_STR(SP_RSEQ_CS_OFF) "]\n\t"		\
	"1:\n\t"							\
	/* id = *(u32 *)(tp + base + delta) */				\
	"ldr %w[s], [%[top], %[delta]]\n\t"				\
	"ldr %w[cnt], %[nr]\n\t"					\
	/* if id >= nr: goto miss */					\
	"cmp %w[s], %w[cnt]\n\t"					\
	"b.hs %l[miss]\n\t"						\
	/* s = slots + (id << SP_PCPU_SHIFT) */				\
	"add %[s], %[slots], %[s], lsl #" SP_STR(SP_PCPU_SHIFT) "\n\t"

/*
 * The hit paths' sequences (core/hotpath.h reaches them through
 * percpu/pcpu.h).  On arm64 they are the library's only: the opt-in inline
 * hit path of segpool/inline.h is x86-64's, and a SEGPOOL_INLINE program
 * built for arm64 makes the library's calls.  The rseq area is glibc's, at
 * @base (sp_pcpu_fast.rseq_off, glibc's __rseq_offset, set before any
 * cache exists: percpu/pcpu.h sp_pcpu_base()) from the thread pointer;
 * the slot id is read at
 * @delta in it and checked against the slot bound @nr, read from memory
 * inside the sequence, as on x86-64 (0 before start-up, in lock and off
 * modes and while failslab is armed: every sequence then leaves for the
 * slow path at its first compare).
 *
 * Length, from the adrp of the descriptor to the commit (the stp), both
 * included, as gcc builds them into the library's hit paths
 * (tools/check/hotpath.sh counts them in an arm64 build and fails when a
 * line below is not the count):
 *   rseq-insns-arm64: sp_cache_alloc_open 16 (the pop)
 *   rseq-insns-arm64: sp_cache_free_open 20 (the push)
 * The pop makes 3 dependent loads from @slots (slot pair, the round, then
 * the commit), as on x86-64.
 *
 * sp_rseq_pop_fast(): the top round of the calling CPU's loaded magazine
 * of @slots, or a jump to @miss (empty: the word below top is an odd
 * guard; id out of range; abort).  sp_rseq_pop_counted(): the same with
 * no hit count (the top loaded and stored alone), the slot popped from
 * into @_s, and then one off its sample count outside the section, @_due
 * whether the count is at or below 0 (percpu/contract.h).  Its commit is
 * a str where the pop's is an stp, so the counted pop's sequence is the
 * open one's less the add.
 */
#define sp_a64_pop(_slots, _base, _delta, _nr, _sp, _miss, _load, _count, \
		   _commit)						\
__extension__ ({							\
	void *__obj;							\
	uintptr_t __s, __top, __cnt __sp_unused;			\
	__asm__ __volatile__ goto(					\
		SP_RSEQ_CS_DESC(1, 2, 4)				\
		SP_A64_SLOT_ENTER					\
		/* top = s->top */					\
		_load							\
		/* obj = top[-1] */					\
		"ldur %[obj], [%[top], #-8]\n\t"			\
		/* if obj is odd: goto miss		(empty) */	\
		"tbnz %[obj], #0, %l[miss]\n\t"				\
		"sub %[top], %[top], #8\n\t"				\
		_count							\
		/* s->top = top - 1			(commit) */	\
		_commit							\
		"2:\n\t"						\
		/* abort: goto miss */					\
		SP_RSEQ_ABORT_AT(4, "b %l[miss]\n\t")			\
		: [obj] "=&r"(__obj), [s] "=&r"(__s), [top] "=&r"(__top), \
		  [cnt] "=&r"(__cnt)					\
		: [slots] "r"(_slots), [base] "r"((long)(_base)),	\
		  [delta] "r"((long)(_delta)), [nr] "m"(_nr)		\
		: "memory", "cc"					\
		: _miss);						\
	(_sp) = (__typeof__(_sp))__s;					\
	__obj;								\
})

#define sp_rseq_pop_fast(_slots, _base, _delta, _nr, _miss) __extension__ ({ \
	uintptr_t __sp_s __sp_unused;					\
	sp_a64_pop(_slots, _base, _delta, _nr, __sp_s, _miss,		\
		   SP_A64_POP_LOAD, SP_A64_POP_COUNT, SP_A64_POP_COMMIT); \
})

#define sp_rseq_pop_counted(_slots, _base, _delta, _nr, _s, _due, _miss) \
__extension__ ({							\
	void *__o = sp_a64_pop(_slots, _base, _delta, _nr, _s, _miss,	\
		"ldr %[top], [%[s], #" SP_STR(SP_SLOT_TOP) "]\n\t", "",	\
		"str %[top], [%[s], #" SP_STR(SP_SLOT_TOP) "]\n\t");	\
	int32_t *__left = (int32_t *)((char *)(_s) + SP_SLOT_SAMPLE_LEFT); \
	int32_t __v = __atomic_load_n(__left, __ATOMIC_RELAXED) - 1;	\
									\
	__atomic_store_n(__left, __v, __ATOMIC_RELAXED);		\
	(_due) = __v <= 0;						\
	__o;								\
})

/*
 * sp_rseq_push_fast(): put @obj on the calling CPU's loaded magazine of
 * @slots, or jump to @miss: the slot expects another tag than @tag, the
 * magazine is full (the word at top is the odd guard), the id is out of
 * range, or an abort.  Before the commit it stores @mark at @obj + @koff,
 * the free mark (slab/freemark.h): idempotent, as on x86-64.
 */
#define sp_rseq_push_fast(_slots, _base, _delta, _nr, _obj, _tag,	\
			  _mark, _koff, _miss) do {			\
	uintptr_t __s, __top, __cnt, __w;				\
	__asm__ __volatile__ goto(					\
		SP_RSEQ_CS_DESC(1, 2, 4)				\
		SP_A64_SLOT_ENTER					\
		/* if s->expect != tag: goto miss (other cache or node) */ \
		"ldr %[w], [%[s], #" SP_STR(SP_SLOT_EXPECT) "]\n\t"	\
		"cmp %[w], %[tag]\n\t"					\
		"b.ne %l[miss]\n\t"					\
		/* top = s->top */					\
		SP_A64_PUSH_LOAD					\
		/* if *top is odd: goto miss		(full) */	\
		"ldr %[w], [%[top]]\n\t"				\
		"tbnz %[w], #0, %l[miss]\n\t"				\
		/* *(word *)(obj + koff) = mark	(idempotent) */	\
		"str %[mark], [%[obj], %[koff]]\n\t"			\
		/* *top = obj			(above top: unseen) */	\
		"str %[obj], [%[top]], #8\n\t"				\
		SP_A64_PUSH_COUNT					\
		/* s->top = top + 1			(commit) */	\
		SP_A64_PUSH_COMMIT					\
		"2:\n\t"						\
		/* abort: goto miss */					\
		SP_RSEQ_ABORT_AT(4, "b %l[miss]\n\t")			\
		: [s] "=&r"(__s), [top] "=&r"(__top), [cnt] "=&r"(__cnt), \
		  [w] "=&r"(__w)					\
		: [slots] "r"(_slots), [base] "r"((long)(_base)),	\
		  [delta] "r"((long)(_delta)), [nr] "m"(_nr),		\
		  [obj] "r"(_obj), [tag] "r"(_tag), [mark] "r"(_mark),	\
		  [koff] "r"(_koff)					\
		: "memory", "cc"					\
		: _miss);						\
	(void)__cnt;							\
} while (0)

/*
 * Point the thread's rseq_cs at this section's descriptor (before start),
 * the rseq area's offset read from the per-CPU layer @pc's word; leaves
 * the thread pointer in %[t1] (the library's sequences: operands pc, t0,
 * t1, t2).
 */
#define SP_RSEQ_ENTER_PC						\
	"ldr %[t0], [%[pc], #" SP_STR(SP_PC_RSEQ_OFF) "]\n\t"		\
	"mrs %[t1], tpidr_el0\n\t"					\
	"add %[t0], %[t1], %[t0]\n\t"					\
	SP_RSEQ_DESC_ADDR("%[t2]")					\
	"str %[t2], [%[t0], #" SP_STR(SP_RSEQ_CS_OFF) "]\n\t"

/*
 * sp_rseq_steal() - take ownership of the calling CPU's slot: replace its
 * top with @busy and return the old top (which may be the "no magazine"
 * top).  A slot whose top is @busy or @busy + 8 (the marker a remote drainer
 * uses) already belongs to someone: refused.
 *
 * Return: the old top; 0 when refused or the id is out of range;
 * SP_RSEQ_ABORTED when aborted.  *@slotp receives the slot id.
 */
static inline __attribute__((always_inline)) uintptr_t
sp_rseq_steal(const void *pc, void *busy, unsigned long *slotp)
{
	uintptr_t res, t0, t1, t2;
	unsigned long slot;

	/* beside each step, its line of percpu/contract.h's pseudocode */
	__asm__ __volatile__(
		SP_RSEQ_CS_DESC(1, 2, 4)
		/* arm (rseq area from pc's SP_PC_RSEQ_OFF word) */
		SP_RSEQ_ENTER_PC
		"1:\n\t"
		SP_RSEQ_INJECT(1, 4, "t2")
		/* id = *(u32 *)(tp + pc->id_off); *slot = id */
		"ldr %[t0], [%[pc], #" SP_STR(SP_PC_ID_OFF) "]\n\t"
		"ldr %w[slot], [%[t1], %[t0]]\n\t"
		/* if id >= pc->nr_slots: return 0 */
		"ldr %[t2], [%[pc], #" SP_STR(SP_PC_NR_SLOTS) "]\n\t"
		"cmp %[slot], %[t2]\n\t"
		"b.hs 5f\n\t"
		SP_RSEQ_INJECT(2, 4, "t2")
		/* s = pc->slots + (id << SP_PCPU_SHIFT) */
		"ldr %[t2], [%[pc], #" SP_STR(SP_PC_SLOTS) "]\n\t"
		"add %[t0], %[t2], %[slot], lsl #" SP_STR(SP_PCPU_SHIFT) "\n\t"
		/* old = s->top */
		"ldr %[res], [%[t0], #" SP_STR(SP_SLOT_TOP) "]\n\t"
		/*
		 * if old - busy <= SP_MARKER_REMOTE_DELTA (unsigned): return 0
		 *				(busy, or the remote marker)
		 */
		"sub %[t2], %[res], %[busy]\n\t"
		"cmp %[t2], #" SP_STR(SP_MARKER_REMOTE_DELTA) "\n\t"
		"b.ls 5f\n\t"
		SP_RSEQ_INJECT(3, 4, "t2")
		/* s->top = busy				(commit) */
		"str %[busy], [%[t0], #" SP_STR(SP_SLOT_TOP) "]\n\t"
		"2:\n\t"
		/* return old */
		"b 6f\n\t"
		"5:\n\t"
		"mov %[res], #0\n\t"
		"6:\n\t"
		/* abort: return SP_RSEQ_ABORTED; the caller retries */
		SP_RSEQ_ABORT_AT(4, "mov %[res], #1\n\t" "b 6b\n\t")
		: [res] "=&r"(res), [slot] "=&r"(slot), [t0] "=&r"(t0),
		  [t1] "=&r"(t1), [t2] "=&r"(t2) SP_RSEQ_INJECT_OPS
		: [pc] "r"(pc), [busy] "r"(busy)
		: "memory", "cc");
	*slotp = slot;
	return res;
}

/*
 * sp_rseq_lane_push() - a remote free's push on the calling CPU's lane
 * (percpu/contract.h): as the x86-64 one.  The slot's top is read with
 * acquire order (ldar): the lane's words its owner wrote before releasing
 * the slot are then the ones read after it.  The commit is the pair store
 * of count and top, as the hit path's push.
 *
 * Return: SP_LANE_PUSHED; 0 when refused or the id is out of range;
 * SP_RSEQ_ABORTED when aborted.
 */
static inline __attribute__((always_inline)) uintptr_t
sp_rseq_lane_push(const void *pc, void *obj, uintptr_t tag, uintptr_t mark,
		  unsigned long koff, void *busy)
{
	uintptr_t res, t0, t1, t2;

	/* beside each step, its line of percpu/contract.h's pseudocode */
	__asm__ __volatile__(
		SP_RSEQ_CS_DESC(1, 2, 4)
		/* arm (rseq area from pc's SP_PC_RSEQ_OFF word) */
		SP_RSEQ_ENTER_PC
		"1:\n\t"
		/* id = *(u32 *)(tp + pc->id_off) */
		"ldr %[t0], [%[pc], #" SP_STR(SP_PC_ID_OFF) "]\n\t"
		"ldr %w[t0], [%[t1], %[t0]]\n\t"
		/* if id >= pc->nr_slots: return 0 */
		"ldr %[t2], [%[pc], #" SP_STR(SP_PC_NR_SLOTS) "]\n\t"
		"cmp %[t0], %[t2]\n\t"
		"b.hs 5f\n\t"
		/* s = pc->slots + (id << SP_PCPU_SHIFT) */
		"lsl %[t0], %[t0], #" SP_STR(SP_PCPU_SHIFT) "\n\t"
		"ldr %[t2], [%[pc], #" SP_STR(SP_PC_SLOTS) "]\n\t"
		"add %[t2], %[t2], %[t0]\n\t"
		/* if s->top - busy <= SP_MARKER_REMOTE_DELTA: return 0 */
		"add %[t2], %[t2], #" SP_STR(SP_SLOT_TOP) "\n\t"
		"ldar %[t2], [%[t2]]\n\t"
		"sub %[t2], %[t2], %[busy]\n\t"
		"cmp %[t2], #" SP_STR(SP_MARKER_REMOTE_DELTA) "\n\t"
		"b.ls 5f\n\t"
		/* l = pc->lanes + (id << SP_PCPU_SHIFT) */
		"ldr %[t2], [%[pc], #" SP_STR(SP_PC_LANES) "]\n\t"
		"add %[t0], %[t2], %[t0]\n\t"
		/* if l->expect != tag: return 0 */
		"ldr %[t2], [%[t0], #" SP_STR(SP_SLOT_EXPECT) "]\n\t"
		"cmp %[t2], %[tag]\n\t"
		"b.ne 5f\n\t"
		/* top = l->top (and its count); if *top is odd: return 0 */
		"ldp %[t1], %[t2], [%[t0], #" SP_STR(SP_SLOT_FREE_HITS) "]\n\t"
		"ldr %[res], [%[t2]]\n\t"
		"tbnz %[res], #0, 5f\n\t"
		/* *(obj + koff) = mark; *top = obj */
		"str %[mark], [%[obj], %[koff]]\n\t"
		"str %[obj], [%[t2]], #8\n\t"
		"add %[t1], %[t1], #1\n\t"
		/* l->free_hits + 1, l->top = top + 1		(commit) */
		"stp %[t1], %[t2], [%[t0], #" SP_STR(SP_SLOT_FREE_HITS) "]\n\t"
		"2:\n\t"
		"mov %[res], #" SP_STR(SP_LANE_PUSHED_NR) "\n\t"
		"b 6f\n\t"
		"5:\n\t"
		"mov %[res], #0\n\t"
		"6:\n\t"
		/* abort: return SP_RSEQ_ABORTED */
		SP_RSEQ_ABORT_AT(4, "mov %[res], #1\n\t" "b 6b\n\t")
		: [res] "=&r"(res), [t0] "=&r"(t0), [t1] "=&r"(t1),
		  [t2] "=&r"(t2)
		: [pc] "r"(pc), [obj] "r"(obj), [tag] "r"(tag),
		  [mark] "r"(mark), [koff] "r"(koff), [busy] "r"(busy)
		: "memory", "cc");
	return res;
}

/*
 * sp_cas16() - compare-and-swap of the 16-byte, 16-byte aligned @word: when
 * it holds @old, store @nw and return true; otherwise load what it holds
 * into @old and return false.  caspal, the LSE pair compare-and-swap with
 * acquire and release semantics.  The depot's lock-free magazine stacks
 * (percpu/depot.c) are built on it; never on a hit path.  Not every arm64
 * CPU has LSE (ARMv8.0 cores such as the Cortex-A53 and A72 lack it):
 * sp_cas16_usable() asks the kernel's hwcap word once, at start-up, and
 * the depot takes its lock without it.
 */
static inline bool sp_cas16_usable(void)
{
	return (sp_os_hwcap() & HWCAP_ATOMICS) != 0;
}

#define SP_CAS16_ARCH		1
static inline bool sp_cas16(uint64_t *word, uint64_t old[2],
			    const uint64_t nw[2])
{
	/* casp takes each pair in an even-odd register pair */
	register uint64_t o0 __asm__("x4") = old[0];
	register uint64_t o1 __asm__("x5") = old[1];
	register uint64_t n0 __asm__("x6") = nw[0];
	register uint64_t n1 __asm__("x7") = nw[1];
	bool ok;

	__asm__ __volatile__(".arch_extension lse\n\t"
			     "caspal %[o0], %[o1], %[n0], %[n1], [%[p]]"
			     : [o0] "+r"(o0), [o1] "+r"(o1),
			       "+m"(*(volatile __int128 *)word)
			     : [n0] "r"(n0), [n1] "r"(n1), [p] "r"(word)
			     : "memory");
	ok = o0 == old[0] && o1 == old[1];
	old[0] = o0;
	old[1] = o1;
	return ok;
}
