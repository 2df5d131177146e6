/* SPDX-License-Identifier: MIT */
/*
 * internal/sanitize.h - tell AddressSanitizer and valgrind memcheck which
 * cache objects the application owns (private).
 *
 * An object of an annotated cache (every cache but the library's own
 * SP_CACHE_INTERNAL ones and SEGPOOL_TYPESAFE_BY_RCU ones, whose readers may
 * legally read freed objects) is addressable only while the application
 * owns it.  From the moment it is freed (into a magazine, a depot or a slab
 * free list) until the moment an allocation call returns it, every access
 * to it is an error the tool reports; so is any access to the padding after
 * an object and to a slab's unused tail.
 *
 * The primitives are here; the hooks built on them, which need a cache,
 * are in slab/harden.h.  All are no-ops in a build that has neither tool:
 *   sp_san_alloc()/sp_san_free()  at every public call that hands an object
 *                                 out or takes one back.  ASan only: they sit
 *                                 on the rseq fast path, which an ASan build
 *                                 runs, and compile to nothing otherwise.
 *   sp_vg_alloc()/sp_vg_free()    the same for memcheck (malloc-like block
 *                                 annotations).  valgrind runs no rseq, so
 *                                 they live in the slow paths only, behind
 *                                 one test of sp_on_valgrind.
 *   sp_san_slab_new()/_release()  a slab's whole memory: inaccessible once
 *                                 populated (after the ctor ran), plain
 *                                 memory again before it goes back to the
 *                                 region.
 *   sp_san_link_open()/_close()   around each read or write of an in-object
 *                                 free-list link by the slab layer itself.
 *
 * Build switches (the config header, documented with the others in the
 * Makefile): CONFIG_SEGPOOL_ASAN builds the ASan hooks, and
 * CONFIG_SEGPOOL_VALGRIND the valgrind ones (<valgrind/memcheck.h> was
 * found, Debian package valgrind, and NO_VALGRIND was not asked for).
 */
#ifndef SP_INTERNAL_SANITIZE_H
#define SP_INTERNAL_SANITIZE_H

#include <stdbool.h>
#include <stddef.h>

#include "segpool_config.h"
#include "internal/compiler.h"

/* 0 or 1, for #if and for plain C conditions alike */
#ifdef CONFIG_SEGPOOL_ASAN
#define SP_ASAN 1
#include <sanitizer/asan_interface.h>
#else
#define SP_ASAN 0
#endif

/* ThreadSanitizer: lock-free code it cannot follow takes a locked path */
#ifdef CONFIG_SEGPOOL_TSAN
#define SP_TSAN 1
#else
#define SP_TSAN 0
#endif

#ifdef CONFIG_SEGPOOL_VALGRIND
#define SP_VALGRIND 1
#include <valgrind/memcheck.h>
#else
#define SP_VALGRIND 0
#endif

/* Set once at initialisation: the process runs under valgrind. */
extern SP_INTERNAL bool sp_on_valgrind;

/* --- AddressSanitizer ----------------------------------------------------- */

static __sp_always_inline void sp_asan_poison(const void *p, size_t n)
{
#if SP_ASAN
	ASAN_POISON_MEMORY_REGION(p, n);
#else
	(void)p;
	(void)n;
#endif
}

static __sp_always_inline void sp_asan_unpoison(const void *p, size_t n)
{
#if SP_ASAN
	ASAN_UNPOISON_MEMORY_REGION(p, n);
#else
	(void)p;
	(void)n;
#endif
}

/* --- valgrind memcheck (slow paths only) ---------------------------------- */

static inline void sp_vg_malloclike(const void *p, size_t n, bool defined)
{
#if SP_VALGRIND
	if (unlikely(sp_on_valgrind)) {
		VALGRIND_MALLOCLIKE_BLOCK(p, n, 0, 0);
		/* a ctor's work is defined data, not fresh heap */
		if (defined)
			VALGRIND_MAKE_MEM_DEFINED(p, n);
	}
#else
	(void)p;
	(void)n;
	(void)defined;
#endif
}

static inline void sp_vg_freelike(const void *p)
{
#if SP_VALGRIND
	if (unlikely(sp_on_valgrind))
		VALGRIND_FREELIKE_BLOCK(p, 0);
#else
	(void)p;
#endif
}

static inline void sp_vg_noaccess(const void *p, size_t n)
{
#if SP_VALGRIND
	if (unlikely(sp_on_valgrind))
		VALGRIND_MAKE_MEM_NOACCESS(p, n);
#else
	(void)p;
	(void)n;
#endif
}

static inline void sp_vg_defined(const void *p, size_t n)
{
#if SP_VALGRIND
	if (unlikely(sp_on_valgrind))
		VALGRIND_MAKE_MEM_DEFINED(p, n);
#else
	(void)p;
	(void)n;
#endif
}

/*
 * sp_vg_forget() - under valgrind, clear a word that held a pointer to an
 * object just handed out (a magazine round below the new top), so memcheck's
 * leak check finds no stale pointer there and reports a lost object as
 * "definitely lost" rather than "still reachable".
 */
static inline void sp_vg_forget(void **word)
{
	if (SP_VALGRIND && unlikely(sp_on_valgrind))
		*word = NULL;
}

#endif /* SP_INTERNAL_SANITIZE_H */
