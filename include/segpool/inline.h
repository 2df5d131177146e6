/* SPDX-License-Identifier: MIT */
/*
 * segpool/inline.h - the opt-in inline hit path and the layout it bakes in.
 *
 * A program that defines SEGPOOL_INLINE before it includes
 * <segpool/segpool.h> gets segpool_cache_alloc(), segpool_cache_free(),
 * segpool_malloc() (for sizes known at compile time) and segpool_free() as
 * inline functions, in the manner of liburcu's _LGPL_SOURCE: each runs the
 * library's own restartable pop or push on the calling CPU's magazine, with
 * the same always-on checks (cache magic, page tag, object boundary, free
 * mark), in the caller; every miss is a call into the library, which then
 * does everything the called API does.  Without SEGPOOL_INLINE this header
 * declares only the layout below, and nothing changes for the program.
 *
 * The layout is versioned.  The library exports it as the one object
 * segpool_inline_abi_v<N>, whose name carries SEGPOOL_INLINE_ABI_VERSION: a
 * program built against another layout does not start ("undefined symbol:
 * segpool_inline_abi_v2", said by the dynamic linker, before main), never
 * runs on a layout it does not know.  The first word of that object is its
 * version: the library sets it only once it is started and only in builds
 * whose hit path is the one below (not in AddressSanitizer builds, whose
 * hit path holds the sanitizer's hooks, nor under valgrind, nor while
 * sampled heap profiling runs, whose page tags this layout does not
 * know); while it differs, every inline call is the library's call.
 * Inline hit paths exist on x86-64 with glibc 2.35 or later (its rseq
 * area); elsewhere the inline functions are the calls.
 *
 * Nothing here is API beyond the four functions: the structs say what the
 * inline code reads, for the library to assert (core/inline_abi.c), and
 * change with the version.  Documentation/internals/percpu.md, "The inline
 * hit path".
 */
#ifndef SEGPOOL_INLINE_H
#define SEGPOOL_INLINE_H

#include <stddef.h>
#include <stdint.h>

#include <segpool/compiler.h>

SEGPOOL_BEGIN_DECLS

#define SEGPOOL_INLINE_ABI_VERSION	1

/* The per-CPU slots' layout (the library's percpu/contract.h uses these). */
#define SEGPOOL_ABI_SLOT_SHIFT		8	/* 256-byte slots */
#define SEGPOOL_ABI_SLOT_FREE_HITS	0	/* u64 */
#define SEGPOOL_ABI_SLOT_TOP		8	/* void **: next free round */
#define SEGPOOL_ABI_SLOT_ALLOC_HITS	16	/* u64 */
#define SEGPOOL_ABI_SLOT_EXPECT		24	/* page tag the slot takes */
#define SEGPOOL_ABI_RSEQ_CS		8	/* struct rseq: rseq_cs */
#define SEGPOOL_ABI_RSEQ_SIG		0x53053053
#define SEGPOOL_ABI_PAGE_SHIFT		12	/* one space tag per page */
#define SEGPOOL_ABI_TAG_NODE_MASK	63	/* a tag: cache | node index */
#define SEGPOOL_ABI_CACHE_MAGIC		0x5e9cac4eU
#define SEGPOOL_ABI_BY8_MAX		1024	/* by8[(size + 7) >> 3] */

/**
 * struct segpool_inline_cache - what the inline hit path reads of a cache.
 * @magic: SEGPOOL_ABI_CACHE_MAGIC while the cache lives.
 * @object_size: the size asked for at creation.
 * @slots: the per-CPU slot array, or one whose every slot misses.
 * @pad0: not read.
 * @objs_per_slab: objects in a slab (the boundary check's bound).
 * @stride_inv: inverse of the stride's odd part modulo 2^32.
 * @slab_mask: slab bytes - 1.
 * @key_off: the free mark's offset in a free object.
 * @stride_shift: trailing zero bits of the stride.
 *
 * The first bytes of every struct segpool_cache, in this layout version;
 * the library asserts each offset.  Read only.
 */
struct segpool_inline_cache {
	unsigned int magic;
	unsigned int object_size;
	void *slots;
	unsigned int pad0[2];
	unsigned int objs_per_slab;
	unsigned int stride_inv;
	unsigned int slab_mask;
	unsigned int key_off;
	unsigned char stride_shift;
};

/**
 * struct segpool_inline_layout - the process-wide words of the hit paths.
 * @version: SEGPOOL_INLINE_ABI_VERSION once the inline hit path may run; 0
 *	before start-up and in builds that keep it closed.  At offset 0 in
 *	every layout version.
 * @nr: slots the sequences may use; 0 closes every hit path (lock and off
 *	modes, failslab armed, an rseq area of segpool's own).
 * @id_delta: the slot id's offset in the rseq area (cpu_id or mm_cid).
 * @space_base: the space's first byte.
 * @space_size: its bytes (0: every pointer is outside).
 * @tags: one page tag per space page (cache | node index, 0 for none).
 * @mark_secret: the free mark is @mark_secret ^ the object's address.
 * @by8: segpool_malloc()'s size class of each (size + 7) >> 3.
 * @rseq_off: the library's own copy of glibc's __rseq_offset, 0 until
 *	start-up begins, then set in every per-CPU mode (0 throughout on an
 *	architecture without an rseq port).  Not read by the inline hit
 *	path, which takes __rseq_offset itself.
 *
 * The library's own hit paths read the same words (one fact, one place).
 */
struct segpool_inline_layout {
	uint32_t version;
	uint32_t nr;
	long id_delta;
	char *space_base;
	size_t space_size;
	const uintptr_t *tags;
	uintptr_t mark_secret;
	struct segpool_cache *const *by8;
	long rseq_off;
} __attribute__((aligned(64)));

/*
 * The exported object, named after its version (the library asserts that
 * the name and SEGPOOL_INLINE_ABI_VERSION change together).
 */
extern SEGPOOL_API struct segpool_inline_layout segpool_inline_abi_v1;
#define segpool_inline_abi		segpool_inline_abi_v1

SEGPOOL_END_DECLS

/* ------------------------------------------------------------------------ */
/*
 * The two sequences, x86-64 (the library's percpu/arch-x86_64.h uses these
 * same macros; its contract is percpu/contract.h, their lengths are stated
 * and checked there, in percpu/arch-x86_64.h).  No lock prefix, no call,
 * no stack.  Every failure, an abort included, jumps to @miss.  The
 * pop keeps the slot in %rcx, so the round may be returned in %rax as it
 * is; the push takes the rseq offset in %rax, where the slot id and then
 * the slot go (the library has it in a register already, having tested it).
 */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SEGPOOL_INLINE_ARCH	1

#define __SEGPOOL_S_(x)		#x
#define __SEGPOOL_S(x)		__SEGPOOL_S_(x)

/*
 * s->alloc_hits (or free_hits) += 1, after the commit, on the slot the
 * sequence computed; nothing in the library's benchmark variant without
 * hit counters (make NO_HIT_STATS=1).
 */
#ifdef CONFIG_SEGPOOL_NO_HIT_STATS
#define __SEGPOOL_RSEQ_HIT(off, r)	""
#else
#define __SEGPOOL_RSEQ_HIT(off, r)					\
	"addq $1, " __SEGPOOL_S(off) "(%%" r ")\n\t"
#endif

#define __SEGPOOL_RSEQ_DESC						\
	".pushsection __rseq_cs, \"aw\"\n\t"				\
	".balign 32\n\t"						\
	"99:\n\t"							\
	".long 0, 0\n\t"						\
	".quad 1f, (2f - 1f), 4f\n\t"					\
	".popsection\n\t"						\
	".pushsection __rseq_cs_ptr_array, \"aw\"\n\t"			\
	".quad 99b\n\t"							\
	".popsection\n\t"

/* the slot id in register @r (32-bit name @r32) to the slot's address */
#define __SEGPOOL_RSEQ_SLOT(r, r32)					\
	"cmpl %[nr], %%" r32 "\n\t"	/* if id >= nr: */		\
	"jae %l[miss]\n\t"		/*	goto miss */		\
	"shlq $" __SEGPOOL_S(SEGPOOL_ABI_SLOT_SHIFT) ", %%" r "\n\t"	\
	"addq %[slots], %%" r "\n\t"	/* s = slots + (id << shift) */

#define __SEGPOOL_RSEQ_ABORT						\
	".pushsection __rseq_failure, \"ax\"\n\t"			\
	".byte 0x0f, 0xb9, 0x3d\n\t"					\
	".long " __SEGPOOL_S(SEGPOOL_ABI_RSEQ_SIG) "\n\t"		\
	"4:\n\t"							\
	"jmp %l[miss]\n\t"						\
	".popsection\n\t"

/*
 * The pop's text: the round into %[obj], the slot's address in %rcx, then
 * @after on the slot (the hit count; the library's counted build takes
 * one off its sample count there instead).
 */
#define __SEGPOOL_RSEQ_POP_THEN(after)					\
	__SEGPOOL_RSEQ_DESC						\
	/* arm: the thread's rseq_cs = this sequence's descriptor */	\
	"leaq 99b(%%rip), %%rcx\n\t"					\
	"movq %%rcx, %%fs:" __SEGPOOL_S(SEGPOOL_ABI_RSEQ_CS)		\
	"(%[base])\n\t"							\
	"1:\n\t"		/* start */				\
	"movl %%fs:(%[base],%[delta]), %%ecx\n\t" /* id */		\
	__SEGPOOL_RSEQ_SLOT("rcx", "ecx")				\
	"movq " __SEGPOOL_S(SEGPOOL_ABI_SLOT_TOP) "(%%rcx), %%rdx\n\t"	\
	"movq -8(%%rdx), %[obj]\n\t"	/* obj = top[-1] */		\
	"testb $1, %b[obj]\n\t"	/* if obj is odd: */		\
	"jnz %l[miss]\n\t"		/*	goto miss (empty) */	\
	"subq $8, %%rdx\n\t"						\
	/* commit: s->top = top - 1 */					\
	"movq %%rdx, " __SEGPOOL_S(SEGPOOL_ABI_SLOT_TOP) "(%%rcx)\n\t"	\
	"2:\n\t"		/* committed */				\
	after								\
	__SEGPOOL_RSEQ_ABORT
#define __SEGPOOL_RSEQ_POP						\
	__SEGPOOL_RSEQ_POP_THEN(					\
		__SEGPOOL_RSEQ_HIT(SEGPOOL_ABI_SLOT_ALLOC_HITS, "rcx"))

/* The top round of this CPU's loaded magazine of @slots, or goto @miss. */
#define __segpool_rseq_pop(_slots, _base, _delta, _nr, _miss) __extension__ ({ \
	void *__obj;							\
	__asm__ goto(__SEGPOOL_RSEQ_POP					\
		: [obj] "=&a"(__obj)					\
		: [slots] "r"(_slots), [base] "r"(_base),		\
		  [delta] "r"(_delta), [nr] "m"(_nr)			\
		: "rcx", "rdx", "memory", "cc"				\
		: _miss);						\
	__obj;								\
})

/*
 * Put @obj, of page tag @tag, on this CPU's loaded magazine of @slots
 * (storing the free mark @mark at @obj + @koff first), or goto @miss: the
 * slot expects another tag, the magazine is full, the id is out of range,
 * or an abort.  The mark store is idempotent and the word above top is
 * unseen until the commit, so a miss leaves nothing anyone has read.
 */
#define __segpool_rseq_push(_slots, _base, _delta, _nr, _obj, _tag,	\
			    _mark, _koff, _miss) do {			\
	long __segpool_rb = (_base);	/* in %rax: the id goes there */ \
	__asm__ __volatile__ goto(					\
		__SEGPOOL_RSEQ_DESC					\
		/* arm: the thread's rseq_cs = this sequence's descriptor */ \
		"leaq 99b(%%rip), %%rdx\n\t"				\
		"movq %%rdx, %%fs:" __SEGPOOL_S(SEGPOOL_ABI_RSEQ_CS)	\
		"(%%rax)\n\t"						\
		"1:\n\t"		/* start */			\
		"addq %[delta], %%rax\n\t"				\
		"movl %%fs:(%%rax), %%eax\n\t"	/* id */		\
		__SEGPOOL_RSEQ_SLOT("rax", "eax")			\
		/* if s->expect != tag: goto miss (other cache or node) */ \
		"cmpq %[tag], " __SEGPOOL_S(SEGPOOL_ABI_SLOT_EXPECT)	\
		"(%%rax)\n\t"						\
		"jne %l[miss]\n\t"					\
		"movq " __SEGPOOL_S(SEGPOOL_ABI_SLOT_TOP) "(%%rax), %%rdx\n\t" \
		"testb $1, (%%rdx)\n\t"		/* if *top is odd: */	\
		"jnz %l[miss]\n\t"		/*	goto miss (full) */ \
		"movq %[mark], (%[obj],%[koff])\n\t" /* obj mark */	\
		"movq %[obj], (%%rdx)\n\t"	/* *top = obj: unseen */ \
		"addq $8, %%rdx\n\t"					\
		/* commit: s->top = top + 1 */				\
		"movq %%rdx, " __SEGPOOL_S(SEGPOOL_ABI_SLOT_TOP) "(%%rax)\n\t" \
		"2:\n\t"		/* committed */			\
		__SEGPOOL_RSEQ_HIT(SEGPOOL_ABI_SLOT_FREE_HITS, "rax")	\
		__SEGPOOL_RSEQ_ABORT					\
		: "+a"(__segpool_rb)					\
		: [slots] "r"(_slots),					\
		  [delta] "m"(_delta), [nr] "m"(_nr), [obj] "r"(_obj),	\
		  [tag] "r"(_tag), [mark] "r"(_mark), [koff] "r"(_koff)	\
		: "rdx", "memory", "cc"					\
		: _miss);						\
} while (0)
#endif /* x86-64 */

/* ------------------------------------------------------------------------ */
/*
 * The inline functions.  Budget: the hit of each as it lands in a caller,
 * counted by tools/check/hotpath.sh on tools/check/inline_user.c (one
 * noinline function each, entry to ret, x86-64; gcc 12 and clang 14 -O2
 * stay within it; no call, no lock prefix, and in gcc's build no stack):
 *   hotpath-budget: user_cache_alloc 28
 *   hotpath-budget: user_cache_free 52
 *   hotpath-budget: user_malloc64 26
 *   hotpath-budget: user_free 50
 * In a loop the layout's address, __rseq_offset and the cache's words stay
 * in registers, and the compiler drops the checks it can prove (a cache
 * known non-NULL, a size known).
 */
#if defined(SEGPOOL_INLINE) && !defined(SEGPOOL_INLINE_DEFINED)
#define SEGPOOL_INLINE_DEFINED	1

#include <string.h>
#include <segpool/slab.h>
#if defined(SEGPOOL_INLINE_ARCH) && defined(__GLIBC__) &&		\
	(__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
#include <sys/rseq.h>
#define SEGPOOL_INLINE_HIT	1
#else
#define SEGPOOL_INLINE_HIT	0
#endif

#define __segpool_inline						\
	static __inline__ __attribute__((always_inline, unused))
#define __segpool_likely(x)	__builtin_expect(!!(x), 1)
#define __segpool_unlikely(x)	__builtin_expect(!!(x), 0)

#if SEGPOOL_INLINE_HIT
/*
 * The library's words, through the GOT: a program's direct reference would
 * make the linker copy the object into the program at load time (a copy
 * relocation), a snapshot the library never writes.  The load is of a
 * constant, so the compiler keeps the address in a register across a loop.
 */
__segpool_inline struct segpool_inline_layout *__segpool_abi(void)
{
	struct segpool_inline_layout *abi;

	__asm__("movq " __SEGPOOL_S(segpool_inline_abi) "@GOTPCREL(%%rip), %0"
		: "=r"(abi));
	return abi;
}
#endif

/* The free-mark word of @obj (it overlays data of any type: memcpy). */
__segpool_inline uintptr_t __segpool_mark_get(const void *p)
{
	uintptr_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

__segpool_inline void __segpool_mark_put(void *p, uintptr_t v)
{
	memcpy(p, &v, sizeof(v));
}

/**
 * segpool_inline_cache_alloc() - segpool_cache_alloc(), its hit inline.
 * @cache: the cache.
 * @gfp: flags; anything but 0 is the library's call.
 *
 * What SEGPOOL_INLINE makes of segpool_cache_alloc(): the magazine pop in
 * the caller, after the same checks (@gfp 0, a live cache); everything
 * else is segpool_cache_alloc() itself.
 *
 * Context: as segpool_cache_alloc().
 * Return: as segpool_cache_alloc().
 */
__segpool_inline void *segpool_inline_cache_alloc(struct segpool_cache *cache,
						  unsigned int gfp)
{
#if SEGPOOL_INLINE_HIT
	const struct segpool_inline_cache *ic =
		(const struct segpool_inline_cache *)(const void *)cache;

	if (__segpool_likely(__segpool_abi()->version ==
			     SEGPOOL_INLINE_ABI_VERSION && gfp == 0 && ic &&
			     ic->magic == SEGPOOL_ABI_CACHE_MAGIC)) {
		void *obj = __segpool_rseq_pop(ic->slots, __rseq_offset,
					       __segpool_abi()->id_delta,
					       __segpool_abi()->nr, miss);

		__segpool_mark_put((char *)obj + ic->key_off, 0);
		return obj;
	}
miss:
#endif
	return (segpool_cache_alloc)(cache, gfp);
}

#if SEGPOOL_INLINE_HIT
/* The free's hit on @ic with @obj of page tag @tag; 0 when it missed. */
__segpool_inline int
__segpool_inline_push(const struct segpool_inline_cache *ic, void *obj,
		      uintptr_t tag)
{
	uint32_t off = (uint32_t)(uintptr_t)obj & ic->slab_mask;
	uint32_t q = off * ic->stride_inv;
	unsigned int koff = ic->key_off;
	uintptr_t mark = __segpool_abi()->mark_secret ^ (uintptr_t)obj;

	/* interior pointer, double free: the library judges */
	q = (q >> ic->stride_shift) | (q << ((32 - ic->stride_shift) & 31));
	if (__segpool_unlikely(q >= ic->objs_per_slab ||
			       __segpool_mark_get((char *)obj + koff) == mark))
		return 0;
	__segpool_rseq_push(ic->slots, __rseq_offset,
			    __segpool_abi()->id_delta, __segpool_abi()->nr,
			    obj, tag, mark, (unsigned long)koff, miss);
	return 1;
miss:
	/*
	 * The sequence may have stored the mark (it was not there before):
	 * the object is still ours; any other object is left untouched.
	 * Loaded again, not kept: nothing but @obj and @ic stays live across
	 * the sequence (fewer registers on the hit).
	 */
	koff = ic->key_off;
	mark = __segpool_abi()->mark_secret ^ (uintptr_t)obj;
	if (__segpool_mark_get((char *)obj + koff) == mark)
		__segpool_mark_put((char *)obj + koff, 0);
	return 0;
}

/* @ptr's page tag, or 0 outside the space (or before start-up). */
__segpool_inline uintptr_t __segpool_inline_tag(const void *ptr)
{
	uintptr_t off = (uintptr_t)ptr - (uintptr_t)__segpool_abi()->space_base;

	if (__segpool_unlikely(off >= __segpool_abi()->space_size ||
			       __segpool_abi()->version !=
			       SEGPOOL_INLINE_ABI_VERSION))
		return 0;
	return __segpool_abi()->tags[off >> SEGPOOL_ABI_PAGE_SHIFT];
}
#endif

/**
 * segpool_inline_cache_free() - segpool_cache_free(), its hit inline.
 * @cache: the cache @obj came from.
 * @obj: the object, or NULL.
 *
 * The page tag, boundary and free-mark checks and the magazine push in the
 * caller; any failing check and any miss is segpool_cache_free() itself,
 * which judges and reports as it always does.
 *
 * Context: as segpool_cache_free().
 */
__segpool_inline void segpool_inline_cache_free(struct segpool_cache *cache,
						void *obj)
{
#if SEGPOOL_INLINE_HIT
	uintptr_t tag = __segpool_inline_tag(obj);

	if (__segpool_likely(cache && tag) &&
	    __segpool_likely(__segpool_inline_push(
		    (const struct segpool_inline_cache *)(const void *)cache,
		    obj, tag)))
		return;
#endif
	(segpool_cache_free)(cache, obj);
}

#if SEGPOOL_INLINE_HIT
/*
 * segpool_malloc() of @size, at most SEGPOOL_ABI_BY8_MAX: its size class
 * from the library's table, the pop inline, the library's call on a miss.
 * For a size known at compile time, or at the one call site of a wrapper
 * (segpool/pmr.hpp), where the table's index is all the size costs.
 */
__segpool_inline void *__segpool_inline_malloc_by8(size_t size)
{
	if (__segpool_likely(__segpool_abi()->version ==
			     SEGPOOL_INLINE_ABI_VERSION)) {
		/* acquire: the library makes a class at its first use and
		 * publishes it with release (a plain load on x86-64) */
		const struct segpool_inline_cache *ic =
			(const struct segpool_inline_cache *)(const void *)
			__atomic_load_n(&__segpool_abi()->by8[(size + 7) >> 3],
					__ATOMIC_ACQUIRE);
		void *obj = __segpool_rseq_pop(ic->slots, __rseq_offset,
					       __segpool_abi()->id_delta,
					       __segpool_abi()->nr, miss);

		__segpool_mark_put((char *)obj + ic->key_off, 0);
		return obj;
	}
miss:
	return (segpool_malloc)(size);
}
#endif

/**
 * segpool_inline_malloc() - segpool_malloc(), its hit inline for a size
 * known at compile time.
 * @size: bytes.
 *
 * A constant @size up to SEGPOOL_ABI_BY8_MAX takes its size class from the
 * library's table and pops inline; any other size is segpool_malloc().
 *
 * Context: as segpool_malloc().
 * Return: as segpool_malloc().
 */
__segpool_inline void *segpool_inline_malloc(size_t size)
{
#if SEGPOOL_INLINE_HIT
	if (__builtin_constant_p(size) && size <= SEGPOOL_ABI_BY8_MAX)
		return __segpool_inline_malloc_by8(size);
#endif
	return (segpool_malloc)(size);
}

/**
 * segpool_inline_free() - segpool_free(), its hit inline.
 * @ptr: memory from segpool_malloc() and friends, or NULL.
 *
 * The cache comes from the page tag, as in segpool_free(); the checks and
 * the push are those of segpool_inline_cache_free().
 *
 * Context: as segpool_free().
 */
__segpool_inline void segpool_inline_free(void *ptr)
{
#if SEGPOOL_INLINE_HIT
	uintptr_t tag = __segpool_inline_tag(ptr);

	if (__segpool_likely(tag) &&
	    __segpool_likely(__segpool_inline_push(
		    (const struct segpool_inline_cache *)(const void *)
		    (tag & ~(uintptr_t)SEGPOOL_ABI_TAG_NODE_MASK), ptr, tag)))
		return;
#endif
	(segpool_free)(ptr);
}

#define segpool_cache_alloc(cache, gfp)	segpool_inline_cache_alloc(cache, gfp)
#define segpool_cache_free(cache, obj)	segpool_inline_cache_free(cache, obj)
#define segpool_malloc(size)		segpool_inline_malloc(size)
#define segpool_free(ptr)		segpool_inline_free(ptr)

#endif /* SEGPOOL_INLINE */

#endif /* SEGPOOL_INLINE_H */
