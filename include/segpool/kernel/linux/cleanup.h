/* SPDX-License-Identifier: MIT */
/*
 * <linux/cleanup.h> - segpool's kernel overlay: scope-based cleanup, as
 * Linux 6.5+ has it.  A pointer declared __free(name) is given to the
 * cleanup DEFINE_FREE(name, ...) states when it goes out of scope, unless
 * no_free_ptr() or return_ptr() took it out first:
 *
 *	struct conn *c __free(kfree) = kzalloc(sizeof(*c), GFP_KERNEL);
 *
 *	if (!c)
 *		return NULL;
 *	if (setup(c))
 *		return NULL;		// freed here
 *	return_ptr(c);			// handed over, not freed
 *
 * <linux/slab.h> defines the kfree and kvfree cleanups.  The compiler's
 * cleanup attribute does the work (gcc and clang).  The guard() and
 * class forms of the kernel's header, which wrap its locks, are not here:
 * the overlay has no kernel locks.  See Documentation/guide/kernel-api.md.
 */
#ifndef SEGPOOL_KERNEL_LINUX_CLEANUP_H
#define SEGPOOL_KERNEL_LINUX_CLEANUP_H

#include <linux/compiler.h>

#ifndef __cleanup
#define __cleanup(func)		__attribute__((__cleanup__(func)))
#endif

/*
 * DEFINE_FREE(name, type, free) - the cleanup __free(name) runs: @free,
 * a statement that frees _T, a @type.
 */
#define DEFINE_FREE(_name, _type, _free)				\
	static __always_inline void __free_##_name(void *p)		\
	{								\
		_type _T = *(_type *)p;					\
		_free;							\
	}

#define __free(_name)		__cleanup(__free_##_name)

/* no_free_ptr(p) - @p's value, leaving NULL behind: no cleanup frees it. */
#define __get_and_null(p, nullvalue)					\
	({								\
		__auto_type __ptr = &(p);				\
		__auto_type __val = *__ptr;				\
		*__ptr = nullvalue;					\
		__val;							\
	})
#define no_free_ptr(p)		((typeof(p))__get_and_null(p, NULL))

/* return_ptr(p) - return @p from the function without freeing it. */
#define return_ptr(p)		return no_free_ptr(p)

/* retain_and_null_ptr(p) - keep what @p points to, forget @p (6.16). */
#define retain_and_null_ptr(p)	((void)__get_and_null(p, NULL))

#endif /* SEGPOOL_KERNEL_LINUX_CLEANUP_H */
