/* SPDX-License-Identifier: MIT */
/*
 * internal/compiler.h - attributes, branch hints and alignment helpers used
 * by every subsystem.  Never installed.
 */
#ifndef SP_INTERNAL_COMPILER_H
#define SP_INTERNAL_COMPILER_H

#include <stddef.h>
#include <stdint.h>

#include "segpool_config.h"

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

#define __sp_cold	__attribute__((cold, noinline))
/*
 * __sp_big - a zeroed static array of a kilobyte or more: placed apart,
 * after the library's other data (scripts/segpool.lds gathers the
 * .bss.sp_big sections of both shared objects), so that the small
 * variables every process writes at start-up share a few pages instead of
 * lying between the arrays (a process touched 16 pages of the library's
 * .bss for 4.4 KiB of them, each a page fault).
 */
#define __sp_big	__attribute__((section(".bss.sp_big")))
#define __sp_noinline	__attribute__((noinline))
/*
 * __sp_libframe - a function on the way from a public call to a debug
 * hook (allocation, free, their slow paths).  Its frames are left out of
 * the call sites a debug cache records (slab/debug.c), so a trace starts
 * at the program's caller, as KASAN's and glibc's do.  Such functions sit
 * together inside .text: the linker sorts the .text.sorted.* input
 * sections by name and keeps them in one run, which two markers of
 * slab/debug.c (.text.sorted.segpool_0 and _2) bound.  Inside .text, so
 * debuggers and valgrind read their line tables as any function's.
 */
#define __sp_libframe	__attribute__((section(".text.sorted.segpool_1")))
#define __sp_always_inline inline __attribute__((always_inline))
#define __sp_noreturn	__attribute__((noreturn))
#define __sp_printf(a, b) __attribute__((format(printf, a, b)))
#define __sp_unused	__attribute__((unused))
#define sp_fallthrough	__attribute__((__fallthrough__))

/* SP_CACHE_LINE - the line size every control block is padded to. */
#define SP_CACHE_LINE		64
#define __sp_cacheline_aligned	__attribute__((aligned(SP_CACHE_LINE)))

/*
 * SP_PAGE_SIZE - segpool's page: the unit of the space's page map, of slabs
 * and of every mapping call it makes; the build's (make PAGE_SHIFT=).  The
 * kernel's page must divide it: start-up refuses a kernel with larger
 * pages (core/init.c).
 */
#ifdef CONFIG_SEGPOOL_PAGE_SHIFT
#define SP_PAGE_SHIFT		CONFIG_SEGPOOL_PAGE_SHIFT
#else
#define SP_PAGE_SHIFT		12
#endif
#define SP_PAGE_SIZE		(1UL << SP_PAGE_SHIFT)
#define SP_PAGE_SHIFT_MAX	16	/* the Makefile's largest PAGE_SHIFT */

#define SP_ALIGN(x, a)		(((x) + ((a) - 1)) & ~((__typeof__(x))(a) - 1))
#define SP_ALIGN_DOWN(x, a)	((x) & ~((__typeof__(x))(a) - 1))
#define SP_IS_POW2(x)		((x) != 0 && ((x) & ((x) - 1)) == 0)
#define SP_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define SP_MIN(a, b)		((a) < (b) ? (a) : (b))
#define SP_MAX(a, b)		((a) > (b) ? (a) : (b))

/*
 * sp_color_next() - where the next of a series of like blocks starts in its
 * page-aligned mapping: 0, @step, 2 * @step, ... up to @room bytes in, then
 * 0 again (@next: the series' counter, atomic).  Bonwick's slab colouring
 * applied to control blocks: mappings of their own put the same field of
 * every block at the same page offset, so a program that uses a dozen of
 * them in turn has their hot lines compete for one set of the L1 cache
 * (eight ways) and every store to one alias every load from the next
 * (Documentation/internals/design.md, "Control blocks").
 */
static inline size_t sp_color_next(unsigned int *next, size_t room,
				   size_t step)
{
	size_t colors = room / step + 1;

	return (size_t)(__atomic_fetch_add(next, 1, __ATOMIC_RELAXED) %
			colors) * step;
}

#define sp_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/* READ_ONCE/WRITE_ONCE for fields read without the lock that guards them. */
#define SP_READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define SP_WRITE_ONCE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/* Busy-wait hint. */
#if defined(__x86_64__) || defined(__i386__)
#define sp_cpu_relax()		__builtin_ia32_pause()
#elif defined(__aarch64__)
#define sp_cpu_relax()		__asm__ __volatile__("yield" ::: "memory")
#else
#define sp_cpu_relax()		__asm__ __volatile__("" ::: "memory")
#endif

/* Symbols reachable from the selftests (static link) but not exported. */
#define SP_INTERNAL		__attribute__((visibility("hidden")))

static inline unsigned int sp_ilog2(unsigned long x)
{
	return (unsigned int)(8 * sizeof(long) - 1 -
			      (unsigned int)__builtin_clzl(x));
}

/* Smallest order such that (1 << order) >= x, for x >= 1. */
static inline unsigned int sp_order_base_2(unsigned long x)
{
	return x <= 1 ? 0 : sp_ilog2(x - 1) + 1;
}

#endif /* SP_INTERNAL_COMPILER_H */
