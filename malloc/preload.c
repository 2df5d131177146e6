// SPDX-License-Identifier: MIT
/*
 * malloc/preload.c - the C allocator on segpool: malloc() and its family.
 *
 * Each entry point goes straight to segpool's public call once the library
 * is ready (one load of sp_ready, then a direct call: the shared object is
 * linked -Bsymbolic-functions, so segpool_malloc() is reached without a
 * PLT hop and inlines its own hit path).  What the C library promises and
 * segpool's calls do not say, is said here:
 *
 *   - malloc(0) is a unique pointer (segpool's smallest class);
 *   - failures are NULL with errno ENOMEM, malloc(SIZE_MAX) included;
 *   - realloc(p, 0) frees p and returns NULL, as glibc does;
 *   - memalign() rounds a non-power-of-two alignment up, as glibc does;
 *     aligned_alloc() rejects one with EINVAL (C17, glibc 2.38);
 *     posix_memalign() returns EINVAL for an alignment that is not a power
 *     of two multiple of sizeof(void *), and leaves errno alone;
 *   - free() of a pointer segpool never handed out is reported with its
 *     address and aborts (segpool_free() does that), except memory of the
 *     bootstrap area (malloc/bootstrap.c), which is never reused.
 *
 * Before the library is ready the cold paths bring it up (sp_pl_bring_up())
 * or, before this object's constructor ran and on the thread that is
 * running segpool's initialisation, use the bootstrap area.
 */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <segpool/segpool.h>

#include "core/entry.h"
#include "internal/report.h"
#include "malloc/preload.h"
#include "malloc/symbols.h"

/* Initial-exec: no allocation on first touch, unlike a dynamic TLS block. */
static __thread bool sp_pl_init_running
	__attribute__((tls_model("initial-exec")));
/*
 * Set by this object's constructor.  Until then the libraries segpool uses
 * may not be constructed yet (the C library allocates from its own
 * constructors, before ours): allocations until then come from the
 * bootstrap area, and the library comes up in our constructor.
 */
static bool sp_pl_constructed;

bool sp_pl_in_init(void)
{
	return sp_pl_init_running;
}

void sp_pl_set_in_init(bool on)
{
	sp_pl_init_running = on;
}

bool sp_pl_fast_on;
bool sp_pl_counting;

/* The library is ready: which build malloc() and free() serve from. */
static void sp_pl_serve(void)
{
	if (sp_entry_counted())
		__atomic_store_n(&sp_pl_counting, true, __ATOMIC_RELEASE);
	else
		__atomic_store_n(&sp_pl_fast_on, true, __ATOMIC_RELEASE);
}

bool sp_pl_bring_up(void)
{
	int saved = errno;
	int err;

	if (sp_pl_ready()) {
		sp_pl_serve();
		return true;
	}
	if (sp_pl_init_running || !__atomic_load_n(&sp_pl_constructed,
						   __ATOMIC_ACQUIRE))
		return false;
	sp_pl_init_running = true;
	err = sp_init();
	sp_pl_init_running = false;
	if (err) {
		errno = saved;
		return false;
	}
	sp_pl_serve();
	errno = saved;
	return true;
}

/* The library and the bootstrap area before the first segpool call. */
__attribute__((constructor(101))) static void sp_pl_constructor(void)
{
	/* a failed start-up is said once, by the library, in these words;
	 * a later call tries again */
	sp_init_meanwhile = "malloc() serves from the " SP_BOOT_SIZE_TEXT
			    " bootstrap area meanwhile and tries again";
	__atomic_store_n(&sp_pl_constructed, true, __ATOMIC_RELEASE);
	sp_pl_bring_up();
	sp_pl_conf_init();
}

static __sp_noinline __sp_libframe void *sp_pl_malloc_cold(size_t size)
{
	if (likely(sp_pl_counting))
		return sp_malloc_counted(size);
	if (sp_pl_bring_up())
		return sp_pl_counting ? sp_malloc_counted(size)
				      : sp_malloc_open(size);
	return sp_boot_alloc(size, SP_BOOT_ALIGN);
}

static __sp_noinline __sp_libframe void sp_pl_free_cold(void *ptr)
{
	if (!ptr || sp_boot_owns(ptr))
		return;
	if (likely(sp_pl_counting)) {
		sp_free_counted(ptr);
		return;
	}
	if (!sp_pl_bring_up())
		sp_report_bad_free(
			"free(): invalid pointer (library not ready)", ptr,
			NULL);
	if (sp_pl_counting)
		sp_free_counted(ptr);
	else
		sp_free_open(ptr);
}

/*
 * malloc() and free() are not IFUNCs (a program that links this object in
 * would make the C library's references to them circular): their one
 * test, sp_pl_fast(), is false while sampling may run, and the cold path
 * goes straight to the counted build (core/entry.h).
 */
SEGPOOL_API void *malloc(size_t size)
{
	if (unlikely(!sp_pl_fast()))
		return sp_pl_malloc_cold(size);
	return sp_malloc_open(size);
}

SEGPOOL_API void free(void *ptr)
{
	if (unlikely(sp_boot_owns(ptr) || !sp_pl_fast())) {
		sp_pl_free_cold(ptr);
		return;
	}
	sp_free_open(ptr);
}

SEGPOOL_API void free_sized(void *ptr, size_t size)
{
	(void)size;
	free(ptr);
}

SEGPOOL_API void free_aligned_sized(void *ptr, size_t align, size_t size)
{
	(void)align;
	(void)size;
	free(ptr);
}

SEGPOOL_API void *calloc(size_t n, size_t size)
{
	size_t bytes;

	if (unlikely(!sp_pl_ready()) && !sp_pl_bring_up()) {
		if (__builtin_mul_overflow(n, size, &bytes)) {
			errno = ENOMEM;
			return NULL;
		}
		/* reads as zero */
		return sp_boot_alloc(bytes, SP_BOOT_ALIGN);
	}
	return segpool_calloc(n, size);
}

/* realloc() of a bootstrap block, or before the library is ready. */
static __sp_noinline void *sp_pl_realloc_cold(void *ptr, size_t size)
{
	size_t old;
	void *p;

	if (!ptr)
		return malloc(size);
	if (!sp_boot_owns(ptr)) {
		if (!sp_pl_ready())
			sp_report_bad_free("realloc(): invalid pointer "
					   "(library not ready)", ptr, NULL);
		return segpool_realloc(ptr, size);
	}
	if (size == 0)
		/* freed: a no-op for the bootstrap area */
		return NULL;
	if (!sp_boot_block(ptr, &old))
		sp_report_bad_free("realloc(): invalid pointer", ptr, NULL);
	p = malloc(size);
	if (p)
		memcpy(p, ptr, SP_MIN(old, size));
	return p;
}

SEGPOOL_API void *realloc(void *ptr, size_t size)
{
	if (unlikely(sp_boot_owns(ptr) || !sp_pl_ready()))
		return sp_pl_realloc_cold(ptr, size);
	return segpool_realloc(ptr, size);
}

SEGPOOL_API void *reallocarray(void *ptr, size_t n, size_t size)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(ptr, bytes);
}

void *sp_pl_aligned(size_t align, size_t size)
{
	if (unlikely(!sp_pl_ready()) && !sp_pl_bring_up())
		return sp_boot_alloc(size, align);
	/* every class from 16 bytes up is 16-byte aligned */
	if (align <= 8)
		return sp_malloc_open(size);
	if (align == 16)
		return sp_malloc_open(SP_MAX(size, (size_t)16));
	return segpool_aligned_alloc(align, size);
}

SEGPOOL_API void *memalign(size_t align, size_t size)
{
	if (align > SIZE_MAX / 2 + 1) {
		errno = EINVAL;
		return NULL;
	}
	if (!SP_IS_POW2(align))
		align = align ? (size_t)1 << (64 - __builtin_clzl(align)) : 1;
	return sp_pl_aligned(align, size);
}

SEGPOOL_API void *aligned_alloc(size_t align, size_t size)
{
	if (!SP_IS_POW2(align)) {
		errno = EINVAL;
		return NULL;
	}
	return sp_pl_aligned(align, size);
}

SEGPOOL_API int posix_memalign(void **memptr, size_t align, size_t size)
{
	int saved = errno;
	void *p;

	if (!SP_IS_POW2(align) || align % sizeof(void *))
		return EINVAL;
	p = sp_pl_aligned(align, size);
	if (!p) {
		errno = saved;
		return ENOMEM;
	}
	*memptr = p;
	return 0;
}

SEGPOOL_API void *valloc(size_t size)
{
	return sp_pl_aligned(SP_PAGE_SIZE, size);
}

SEGPOOL_API void *pvalloc(size_t size)
{
	size_t bytes = SP_ALIGN(size, SP_PAGE_SIZE);

	if (bytes < size) {
		errno = ENOMEM;
		return NULL;
	}
	return sp_pl_aligned(SP_PAGE_SIZE, bytes ? bytes : SP_PAGE_SIZE);
}

SEGPOOL_API size_t malloc_usable_size(void *ptr)
{
	if (!ptr)
		return 0;
	if (sp_boot_owns(ptr)) {
		size_t size;

		return sp_boot_block(ptr, &size) ? size : 0;
	}
	if (!sp_pl_ready())
		return 0;
	return segpool_usable_size(ptr);
}
