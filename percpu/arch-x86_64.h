/* SPDX-License-Identifier: MIT */
/*
 * percpu/arch-x86_64.h - the x86-64 restartable sequences of the magazine
 * fast path.
 *
 * Each sequence:
 *   - stores the address of its descriptor (struct rseq_cs: start_ip,
 *     post_commit_offset, abort_ip) in the thread's rseq area, then
 *   - reads the slot id (cpu_id, or mm_cid) from the rseq area *inside* the
 *     sequence, so the id cannot go stale: preemption, migration or a signal
 *     anywhere between start_ip and the commit makes the kernel move the
 *     thread to abort_ip instead of resuming it;
 *   - ends in exactly one store, the commit: the new magazine top.  The
 *     hit counter is added to right after it (SP_RSEQ_HIT below).
 *
 * The abort handler is preceded by the signature the thread registered
 * (RSEQ_SIG, the one glibc uses, and the one segpool registers itself), and
 * lives in its own section, off the hot path.  It counts nothing and simply
 * reports SP_RSEQ_ABORTED; the C caller retries.
 *
 * The hit paths' budgets are stated beside their sequences below; no lock
 * prefix, no atomic read-modify-write.
 *
 * The contract these sequences implement, in pseudocode, and the layout
 * constants they use (SP_SLOT_*, SP_PC_*, SP_PCPU_SHIFT): percpu/contract.h.
 */
#ifndef SP_PERCPU_ARCH_H_INSIDE
#error "include percpu/arch.h, not percpu/arch-x86_64.h"
#endif

#include <cpuid.h>
#include <stdint.h>
#if defined(__has_include)
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>	/* glibc 2.33 and later */
#endif
#endif
#include <stdbool.h>

#include "internal/compiler.h"
#include "percpu/contract.h"

#define SP_RSEQ_ARCH		1
#define SP_RSEQ_SIG		SEGPOOL_ABI_RSEQ_SIG

/* an offset of the contract as an assembly operand: "8(%%rax)" */
#define SP_AT(off, reg)		SP_STR(off) "(" reg ")"

/* Descriptor and abort handler of one critical section. */
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

/* Point the thread's rseq_cs at this section's descriptor (before start). */
#define SP_RSEQ_ENTER							\
	"movq " SP_AT(SP_PC_RSEQ_OFF, "%[pc]") ", %%rcx\n\t"		\
	"leaq 99b(%%rip), %%rax\n\t"					\
	"movq %%rax, %%fs:" SP_AT(SP_RSEQ_CS_OFF, "%%rcx") "\n\t"

#define SP_RSEQ_ABORT_HANDLER(abort, out)				\
	".pushsection __rseq_failure, \"ax\"\n\t"			\
	".byte 0x0f, 0xb9, 0x3d\n\t"					\
	".long " SP_STR(SP_RSEQ_SIG) "\n\t"				\
	#abort ":\n\t"							\
	"movl $1, %k[res]\n\t"						\
	"jmp " #out "b\n\t"						\
	".popsection\n\t"

/*
 * SP_RSEQ_INJECT(n, abort) - injection point @n inside a sequence, in the
 * manner of librseq's RSEQ_INJECT_ASM: the empty string in every build but
 * a debug one (make DEBUG=1), so the sequences of a release build are the
 * same text with or without them.  In a debug build, when this thread's
 * sp_rseq_inject.point is @n and its .aborts is not 0, the point takes one
 * from .aborts and jumps to the sequence's abort handler, as the kernel
 * moves a thread there on preemption, migration or a signal (registers
 * kept, nothing after the point done).  A selftest so makes exactly N
 * aborts at a chosen point (selftests/unit/test_debug_build.c).
 * SP_RSEQ_INJECT_OPS adds the two fields as operands of the sequence.
 */
#ifdef CONFIG_SEGPOOL_DEBUG
struct sp_rseq_inject {
	unsigned int point;	/* the point that aborts (1, 2, ...), or 0 */
	unsigned int aborts;	/* aborts still to make there */
};
extern SP_INTERNAL __thread struct sp_rseq_inject sp_rseq_inject;
#define SP_RSEQ_INJECT(n, abort)					\
	"cmpl $" #n ", %[inj_point]\n\t"				\
	"jne 88f\n\t"							\
	"cmpl $0, %[inj_aborts]\n\t"					\
	"je 88f\n\t"							\
	"decl %[inj_aborts]\n\t"					\
	"jmp " #abort "f\n\t"						\
	"88:\n\t"
#define SP_RSEQ_INJECT_OPS						\
	, [inj_point] "+m"(sp_rseq_inject.point),			\
	  [inj_aborts] "+m"(sp_rseq_inject.aborts)
#else
#define SP_RSEQ_INJECT(n, abort)	""
#define SP_RSEQ_INJECT_OPS
#endif

/*
 * The hit count (__SEGPOOL_RSEQ_HIT, segpool/inline.h): one added to the
 * counter at byte @off of the slot just
 * after the commit, past the sequence's end, by one add instruction on the
 * slot address the sequence computed.
 *
 * Not in the sequence: an abort between a count and the commit would count
 * an operation the retry counts again.  Not in the commit either: a 16-byte
 * store of top and counter puts a move from a general register to a vector
 * register on the path from one operation's top to the next one's (it cost
 * 1.3 ns per operation on the hot pair,
 * Documentation/internals/benchmarks.md).  After the commit the add is
 * outside the critical path and happens exactly once per operation; it
 * lands on the slot where the operation took place.  Every
 * other writer of the counter is also one add instruction (sp_hit_count()),
 * so a thread preempted between its commit and its add cannot split
 * another's update on the same CPU.  The one inexactness left: a thread
 * preempted in that one-instruction gap and moved to another CPU adds from
 * there, and should its add meet, within the same few nanoseconds, an add
 * of the thread now running on the slot's CPU, one of the two counts is
 * lost (no lock prefix on the fast path).
 *
 * Built with CONFIG_SEGPOOL_NO_HIT_STATS (make NO_HIT_STATS=1, a benchmark
 * variant only, see Documentation/internals/benchmarks.md, "What the hit
 * counters cost"), nothing is counted.
 */
#ifdef CONFIG_SEGPOOL_NO_HIT_STATS
#define SP_RSEQ_HIT_NOTE	", no hit counters"
#else
#define SP_RSEQ_HIT_NOTE	""
#endif

/*
 * sp_hit_count() - one more hit on a slot's counter, from the slot's owner
 * (the slow path's plain hit).  One add instruction, like SP_RSEQ_HIT: a
 * thread preempted between its commit and its count on this CPU adds
 * before or after it, never in the middle of a load and a store.
 */
#define SP_HIT_COUNT_ARCH	1
static inline __attribute__((always_inline)) void sp_hit_count(uint64_t *ctr)
{
	__asm__ __volatile__("addq $1, %0" : "+m"(*ctr) : : "cc");
}

/*
 * sp_prefetch_write() - ask for @p's line in the exclusive state, ahead of
 * a store: prefetchw.  A magazine another CPU filled or emptied last has its
 * lines in that CPU's cache, and a push's store to each would wait for the
 * line's transfer and the other copy's invalidation in turn (one line in
 * eight pushes); prefetcht0 brings the line shared and the store still
 * waits for the upgrade (measured on the producer/consumer workload: no
 * gain with it, a fifth of the time with prefetchw).  Not every x86-64 CPU
 * has it (the PREFETCHW bit of CPUID 0x80000001; the first Intel ones
 * without it): sp_prefetch_write_usable() asks once, and the caller skips
 * the hint where it is missing.
 */
#define SP_PREFETCH_WRITE_ARCH	1
static inline bool sp_prefetch_write_usable(void)
{
#ifdef CPU_FEATURE_ACTIVE
	return CPU_FEATURE_ACTIVE(PREFETCHW);	/* glibc's answer, as above */
#else
	unsigned int a, b, c, d;

	return __get_cpuid(0x80000001, &a, &b, &c, &d) && (c & bit_PRFCHW);
#endif
}

static inline __attribute__((always_inline)) void
sp_prefetch_write(const void *p)
{
	__asm__ __volatile__("prefetchw %0" : : "m"(*(const char *)p));
}

/*
 * sp_rseq_lane_push() - a remote free's push on the calling CPU's lane
 * (percpu/contract.h): @obj, of page tag @tag, onto the lane's magazine,
 * its free mark @mark stored at @obj + @koff first.  Refused while the
 * CPU's slot is owned (its top is @busy or the remote marker), when the
 * lane takes another tag or its magazine is full or absent.
 *
 * Return: SP_LANE_PUSHED; 0 when refused or the id is out of range;
 * SP_RSEQ_ABORTED when aborted.  Not a hit path: the free's miss
 * (core/cache_api.c) tries it before the slow path.
 */
static inline __attribute__((always_inline)) uintptr_t
sp_rseq_lane_push(const void *pc, void *obj, uintptr_t tag, uintptr_t mark,
		  unsigned long koff, void *busy)
{
	uintptr_t res;

	/* beside each step, its line of percpu/contract.h's pseudocode */
	__asm__ __volatile__(
		SP_RSEQ_CS_DESC(1, 2, 4)
		/* arm (rseq area from pc's SP_PC_RSEQ_OFF word) */
		SP_RSEQ_ENTER
		"1:\n\t"
		/* id = *(u32 *)(tp + pc->id_off) */
		"movq " SP_AT(SP_PC_ID_OFF, "%[pc]") ", %%rcx\n\t"
		"movl %%fs:(%%rcx), %%ecx\n\t"
		/* if id >= pc->nr_slots: return 0 */
		"cmpq " SP_AT(SP_PC_NR_SLOTS, "%[pc]") ", %%rcx\n\t"
		"jae 5f\n\t"
		/* s = pc->slots + (id << SP_PCPU_SHIFT) */
		"shlq $" SP_STR(SP_PCPU_SHIFT) ", %%rcx\n\t"
		"movq " SP_AT(SP_PC_SLOTS, "%[pc]") ", %%rax\n\t"
		/* if s->top - busy <= SP_MARKER_REMOTE_DELTA: return 0 */
		"movq " SP_AT(SP_SLOT_TOP, "%%rax,%%rcx") ", %%rax\n\t"
		"subq %[busy], %%rax\n\t"
		"cmpq $" SP_STR(SP_MARKER_REMOTE_DELTA) ", %%rax\n\t"
		"jbe 5f\n\t"
		/* l = pc->lanes + (id << SP_PCPU_SHIFT) */
		"addq " SP_AT(SP_PC_LANES, "%[pc]") ", %%rcx\n\t"
		/* if l->expect != tag: return 0 */
		"cmpq %[tag], " SP_AT(SP_SLOT_EXPECT, "%%rcx") "\n\t"
		"jne 5f\n\t"
		/* top = l->top; if *top is odd: return 0 */
		"movq " SP_AT(SP_SLOT_TOP, "%%rcx") ", %%rdx\n\t"
		"testb $1, (%%rdx)\n\t"
		"jnz 5f\n\t"
		/* *(obj + koff) = mark; *top = obj */
		"movq %[mark], (%[obj],%[koff])\n\t"
		"movq %[obj], (%%rdx)\n\t"
		"addq $8, %%rdx\n\t"
		/* l->top = top + 1				(commit) */
		"movq %%rdx, " SP_AT(SP_SLOT_TOP, "%%rcx") "\n\t"
		"2:\n\t"
		/* l->free_hits += 1; return SP_LANE_PUSHED */
		"addq $1, " SP_AT(SP_SLOT_FREE_HITS, "%%rcx") "\n\t"
		"movl $" SP_STR(SP_LANE_PUSHED_NR) ", %k[res]\n\t"
		"jmp 6f\n\t"
		"5:\n\t"
		"xorl %k[res], %k[res]\n\t"
		"6:\n\t"
		/* abort: return SP_RSEQ_ABORTED */
		SP_RSEQ_ABORT_HANDLER(4, 6)
		: [res] "=&r"(res)
		: [pc] "r"(pc), [obj] "r"(obj), [tag] "r"(tag),
		  [mark] "r"(mark), [koff] "r"(koff), [busy] "r"(busy)
		: "rax", "rcx", "rdx", "memory", "cc");
	return res;
}

/*
 * sp_cas16() - compare-and-swap of the 16-byte, 16-byte aligned @word: when
 * it holds @old, store @nw and return true; otherwise load what it holds
 * into @old and return false.  lock cmpxchg16b: a full barrier either way.
 * The depot's lock-free magazine stacks (percpu/depot.c) are built on it;
 * never on a hit path.  Not every x86-64 CPU has it (the first AMD64 ones
 * and qemu's default model lack it): sp_cas16_usable() asks CPUID once.
 */
static inline bool sp_cas16_usable(void)
{
#ifdef CPU_FEATURE_ACTIVE
	/*
	 * glibc asked CPUID at its own start-up and keeps the answers: under
	 * a hypervisor every CPUID is a trap to it, tens of microseconds
	 * that every process would pay again here.
	 */
	return CPU_FEATURE_ACTIVE(CMPXCHG16B);
#else
	unsigned int a, b, c, d;

	return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_CMPXCHG16B);
#endif
}

#define SP_CAS16_ARCH		1
static inline bool sp_cas16(uint64_t *word, uint64_t old[2],
			    const uint64_t nw[2])
{
	bool ok;

	__asm__ __volatile__("lock cmpxchg16b %[w]"
			     : "=@ccz"(ok),
			       [w] "+m"(*(volatile __int128 *)word),
			       "+a"(old[0]), "+d"(old[1])
			     : "b"(nw[0]), "c"(nw[1])
			     : "memory");
	return ok;
}

/*
 * The hit paths' sequences (core/hotpath.h) are the inline ABI's own
 * (segpool/inline.h, __segpool_rseq_pop and __segpool_rseq_push), so that a
 * program built with SEGPOOL_INLINE runs the very text the library runs.
 * They take nothing through the cache but its slot array: the rseq area is
 * glibc's, at __rseq_offset from the thread pointer (glibc 2.35 and later
 * reserve it in every thread, and register it unless told not to).  The
 * library's hit paths take that offset from the layout line
 * (sp_pcpu_fast.rseq_off, percpu/pcpu.h sp_pcpu_base()), copied there
 * before any cache exists; an inline caller takes __rseq_offset itself.
 * The store cannot harm that area before start-up, in lock mode or when
 * segpool registers an area of its own (then the hit paths are closed and
 * the slow paths' sequences serve every operation); only segpool_malloc()'s
 * allocation, which reaches the boot stand-in before start-up, tests the
 * copy for 0 first.  The slot id is read at
 * %fs:(offset + id_delta) (cpu_id,
 * or mm_cid) and checked against the slot bound nr (segpool_inline_abi),
 * which is 0 before start-up, in lock and off modes and while failslab is
 * armed: then every id is out of range and each sequence leaves for the
 * slow path at its first compare.
 *
 * Length, from the lea of the descriptor to the count, as gcc builds them
 * into the library's hit paths (tools/check/hotpath.sh counts them there
 * and fails when a line below is not the count):
 *   rseq-insns: sp_cache_alloc_open 14 (the pop)
 *   rseq-insns: sp_cache_free_open 18 (the push)
 * The pop makes 3 dependent loads from @slots (slot top, the round, then
 * the commit); the push adds the tag and free-mark compares.  No lock
 * prefix, no call, no stack.
 *
 * sp_rseq_pop_fast(): the top round of the calling CPU's loaded magazine
 * of the slot array @slots, or a jump to @miss (empty magazine: its guard
 * slot is odd; id out of range; abort).  sp_rseq_pop_counted() (below):
 * the same, counting the sample count down instead of the hits up.
 *
 * sp_rseq_push_fast(): put @obj on the calling CPU's loaded magazine of
 * @slots, or jump to @miss: the slot's expected tag is not @tag (@obj's
 * page tag: cache | node index; a slot of another node, or the always-
 * missing slots of a cache without magazines), the magazine is full (the
 * slot at top is the odd guard), the id is out of range, or an abort.
 * Before the commit it stores @mark at @obj + @koff, the free mark
 * (slab/freemark.h): idempotent, so an abort before the commit leaves
 * nothing the slow path would not write again.
 */
#define sp_rseq_pop_fast	__segpool_rseq_pop
#define sp_rseq_push_fast	__segpool_rseq_push

/*
 * sp_rseq_pop_counted(): the counted build's pop (core/hotpath.h): the
 * pop's text with no hit count, then one off the slot's sample count (the
 * count of hits is then the sample counts spent, percpu/pcpu.h
 * sp_slot_alloc_hits()).  The slot popped from goes to @_s, and @_due is
 * whether the count is now at or below 0 (the subtract's flags), which is
 * where the sample count ran out or, after an arming went astray, runs on
 * below.  The subtract is an asm of its own: clang 14 tests a flag output
 * of an asm goto with a setcc and a test, where it branches on a plain
 * asm's flags as gcc does.  One instruction more than the open pop (the
 * branch), and as many writes to the slot's line.
 */
#define sp_rseq_pop_counted(_slots, _base, _delta, _nr, _s, _due, _miss) \
__extension__ ({							\
	void *__obj;							\
	__asm__ goto(__SEGPOOL_RSEQ_POP_THEN("")			\
		: [obj] "=&a"(__obj), "=&c"(_s)				\
		: [slots] "r"(_slots), [base] "r"(_base),		\
		  [delta] "r"(_delta), [nr] "m"(_nr)			\
		: "rdx", "memory", "cc"					\
		: _miss);						\
	__asm__ __volatile__("subl $1, %[left]"				\
		: [left] "+m"(*(int32_t *)((char *)(_s) +		\
					   SP_SLOT_SAMPLE_LEFT)),	\
		  "=@ccle"(_due));					\
	__obj;								\
})

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
	uintptr_t res;
	unsigned long slot;

	/* beside each step, its line of percpu/contract.h's pseudocode */
	__asm__ __volatile__(
		SP_RSEQ_CS_DESC(1, 2, 4)
		/* arm (rseq area from pc's SP_PC_RSEQ_OFF word) */
		SP_RSEQ_ENTER
		"1:\n\t"
		SP_RSEQ_INJECT(1, 4)
		/* id = *(u32 *)(tp + pc->id_off); *slot = id */
		"movq " SP_AT(SP_PC_ID_OFF, "%[pc]") ", %%rcx\n\t"
		"movl %%fs:(%%rcx), %k[slot]\n\t"
		/* if id >= pc->nr_slots: return 0 */
		"cmpq " SP_AT(SP_PC_NR_SLOTS, "%[pc]") ", %[slot]\n\t"
		"jae 5f\n\t"
		SP_RSEQ_INJECT(2, 4)
		/* s = pc->slots + (id << SP_PCPU_SHIFT) */
		"movq %[slot], %%rax\n\t"
		"shlq $" SP_STR(SP_PCPU_SHIFT) ", %%rax\n\t"
		"addq " SP_AT(SP_PC_SLOTS, "%[pc]") ", %%rax\n\t"
		/* old = s->top */
		"movq " SP_AT(SP_SLOT_TOP, "%%rax") ", %[res]\n\t"
		/*
		 * if old - busy <= SP_MARKER_REMOTE_DELTA (unsigned): return 0
		 *				(busy, or the remote marker)
		 */
		"movq %[res], %%rcx\n\t"
		"subq %[busy], %%rcx\n\t"
		"cmpq $" SP_STR(SP_MARKER_REMOTE_DELTA) ", %%rcx\n\t"
		"jbe 5f\n\t"
		SP_RSEQ_INJECT(3, 4)
		/* s->top = busy				(commit) */
		"movq %[busy], " SP_AT(SP_SLOT_TOP, "%%rax") "\n\t"
		"2:\n\t"
		/* return old */
		"jmp 6f\n\t"
		"5:\n\t"
		"xorl %k[res], %k[res]\n\t"
		"6:\n\t"
		/* abort: return SP_RSEQ_ABORTED; the caller retries */
		SP_RSEQ_ABORT_HANDLER(4, 6)
		: [res] "=&r"(res), [slot] "=&r"(slot) SP_RSEQ_INJECT_OPS
		: [pc] "r"(pc), [busy] "r"(busy)
		: "rax", "rcx", "memory", "cc");
	*slotp = slot;
	return res;
}
