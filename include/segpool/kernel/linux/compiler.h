/* SPDX-License-Identifier: MIT */
/*
 * <linux/compiler.h> - segpool's kernel overlay: the compiler helpers
 * kernel code takes for granted.  Each is defined only when the program
 * has not defined it already.  See Documentation/guide/kernel-api.md.
 */
#ifndef SEGPOOL_KERNEL_LINUX_COMPILER_H
#define SEGPOOL_KERNEL_LINUX_COMPILER_H

#include <stddef.h>

#ifndef likely
#define likely(x)		__builtin_expect(!!(x), 1)
#endif
#ifndef unlikely
#define unlikely(x)		__builtin_expect(!!(x), 0)
#endif
#ifndef __always_inline
#define __always_inline		inline __attribute__((__always_inline__))
#endif
#ifndef noinline
#define noinline		__attribute__((__noinline__))
#endif
#ifndef __must_check
#define __must_check		__attribute__((__warn_unused_result__))
#endif
#ifndef __maybe_unused
#define __maybe_unused		__attribute__((__unused__))
#endif
#ifndef __aligned
#define __aligned(x)		__attribute__((__aligned__(x)))
#endif
#ifndef __packed
#define __packed		__attribute__((__packed__))
#endif
#ifndef __cold
#define __cold			__attribute__((__cold__))
#endif
#ifndef __malloc
#define __malloc		__attribute__((__malloc__))
#endif
#ifndef __read_mostly
#define __read_mostly
#endif
/* sparse annotations: nothing to the compiler */
#ifndef __bitwise
#define __bitwise
#endif
#ifndef __force
#define __force
#endif
#ifndef __rcu
#define __rcu
#endif
#ifndef __user
#define __user
#endif
#ifndef __iomem
#define __iomem
#endif

#ifndef barrier
#define barrier()		__asm__ __volatile__("" : : : "memory")
#endif
#ifndef READ_ONCE
#define READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#endif
#ifndef WRITE_ONCE
#define WRITE_ONCE(x, val)	__atomic_store_n(&(x), (val), __ATOMIC_RELAXED)
#endif
#ifndef __same_type
#define __same_type(a, b) \
	__builtin_types_compatible_p(__typeof__(a), __typeof__(b))
#endif
#ifndef BUILD_BUG_ON_MSG
#define BUILD_BUG_ON_MSG(cond, msg)	_Static_assert(!(cond), msg)
#endif
#ifndef BUILD_BUG_ON
#define BUILD_BUG_ON(cond) BUILD_BUG_ON_MSG(cond, "BUILD_BUG_ON(" #cond ")")
#endif

#endif /* SEGPOOL_KERNEL_LINUX_COMPILER_H */
