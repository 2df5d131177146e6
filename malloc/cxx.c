// SPDX-License-Identifier: MIT
/*
 * malloc/cxx.c - C++'s operator new and delete on segpool, written in C.
 *
 * The replaceable global allocation functions ([new.delete]) under their
 * mangled names (malloc/symbols.h), so a C++ program needs nothing of C++
 * from this library and a C program loads no libstdc++.  operator new
 * follows the standard's loop: allocate; on failure call the installed
 * new_handler and try again; with none, throw std::bad_alloc (the plain
 * forms) or return NULL (the nothrow forms).  The two libstdc++ functions
 * this needs are weak references: a program that calls operator new has
 * libstdc++ loaded, so they resolve; should they not (a C program calling
 * _Znwm by hand), an allocation failure aborts with a message instead of
 * throwing.
 *
 * Deletes ignore the size and alignment they are told: segpool finds both
 * from the pointer.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal/report.h"
#include "malloc/preload.h"
#include "malloc/symbols.h"

typedef void (*sp_new_handler)(void);

/* std::get_new_handler() and std::__throw_bad_alloc(), from libstdc++ */
extern sp_new_handler _ZSt15get_new_handlerv(void) __attribute__((weak));
extern void _ZSt17__throw_bad_allocv(void) __attribute__((weak, noreturn));

/*
 * One try of operator new: @align 0 for the plain forms.  Aligned forms get
 * a power of two at least __STDCPP_DEFAULT_NEW_ALIGNMENT__ (16) from the
 * compiler.
 */
static inline void *sp_cxx_try(size_t size, size_t align)
{
	return align ? sp_pl_aligned(align, size) : malloc(size);
}

/* The handler loop; NULL means "out of memory, no handler left". */
static __sp_noinline void *sp_cxx_retry(size_t size, size_t align)
{
	for (;;) {
		sp_new_handler h = _ZSt15get_new_handlerv ?
				   _ZSt15get_new_handlerv() : NULL;
		void *p;

		if (!h)
			return NULL;
		h();	/* frees memory, throws, or ends the program */
		p = sp_cxx_try(size, align);
		if (p)
			return p;
	}
}

static __sp_noinline __sp_noreturn void sp_cxx_bad_alloc(size_t size)
{
	if (_ZSt17__throw_bad_allocv)
		_ZSt17__throw_bad_allocv();
	sp_warn("operator new(%zu): out of memory and no std::bad_alloc to "
		"throw (libstdc++ not loaded)", size);
	abort();
}

static inline void *sp_cxx_new(size_t size, size_t align)
{
	void *p = sp_cxx_try(size, align);

	if (likely(p))
		return p;
	p = sp_cxx_retry(size, align);
	if (!p)
		sp_cxx_bad_alloc(size);
	return p;
}

static inline void *sp_cxx_new_nothrow(size_t size, size_t align)
{
	void *p = sp_cxx_try(size, align);

	if (likely(p))
		return p;
	return sp_cxx_retry(size, align);
}

SEGPOOL_API void *_Znwm(size_t size)
{
	return sp_cxx_new(size, 0);
}

SEGPOOL_API void *_Znam(size_t size)
{
	return sp_cxx_new(size, 0);
}

SEGPOOL_API void *_ZnwmRKSt9nothrow_t(size_t size,
				      const struct sp_cxx_nothrow *nt)
{
	(void)nt;
	return sp_cxx_new_nothrow(size, 0);
}

SEGPOOL_API void *_ZnamRKSt9nothrow_t(size_t size,
				      const struct sp_cxx_nothrow *nt)
{
	(void)nt;
	return sp_cxx_new_nothrow(size, 0);
}

SEGPOOL_API void *_ZnwmSt11align_val_t(size_t size, size_t align)
{
	return sp_cxx_new(size, align);
}

SEGPOOL_API void *_ZnamSt11align_val_t(size_t size, size_t align)
{
	return sp_cxx_new(size, align);
}

SEGPOOL_API void *
_ZnwmSt11align_val_tRKSt9nothrow_t(size_t size, size_t align,
				   const struct sp_cxx_nothrow *nt)
{
	(void)nt;
	return sp_cxx_new_nothrow(size, align);
}

SEGPOOL_API void *
_ZnamSt11align_val_tRKSt9nothrow_t(size_t size, size_t align,
				   const struct sp_cxx_nothrow *nt)
{
	(void)nt;
	return sp_cxx_new_nothrow(size, align);
}

SEGPOOL_API void _ZdlPv(void *ptr)
{
	free(ptr);
}

SEGPOOL_API void _ZdaPv(void *ptr)
{
	free(ptr);
}

SEGPOOL_API void _ZdlPvm(void *ptr, size_t size)
{
	(void)size;
	free(ptr);
}

SEGPOOL_API void _ZdaPvm(void *ptr, size_t size)
{
	(void)size;
	free(ptr);
}

SEGPOOL_API void _ZdlPvRKSt9nothrow_t(void *ptr,
				      const struct sp_cxx_nothrow *nt)
{
	(void)nt;
	free(ptr);
}

SEGPOOL_API void _ZdaPvRKSt9nothrow_t(void *ptr,
				      const struct sp_cxx_nothrow *nt)
{
	(void)nt;
	free(ptr);
}

SEGPOOL_API void _ZdlPvSt11align_val_t(void *ptr, size_t align)
{
	(void)align;
	free(ptr);
}

SEGPOOL_API void _ZdaPvSt11align_val_t(void *ptr, size_t align)
{
	(void)align;
	free(ptr);
}

SEGPOOL_API void _ZdlPvmSt11align_val_t(void *ptr, size_t size, size_t align)
{
	(void)size;
	(void)align;
	free(ptr);
}

SEGPOOL_API void _ZdaPvmSt11align_val_t(void *ptr, size_t size, size_t align)
{
	(void)size;
	(void)align;
	free(ptr);
}

SEGPOOL_API void
_ZdlPvSt11align_val_tRKSt9nothrow_t(void *ptr, size_t align,
				    const struct sp_cxx_nothrow *nt)
{
	(void)align;
	(void)nt;
	free(ptr);
}

SEGPOOL_API void
_ZdaPvSt11align_val_tRKSt9nothrow_t(void *ptr, size_t align,
				    const struct sp_cxx_nothrow *nt)
{
	(void)align;
	(void)nt;
	free(ptr);
}
