/* SPDX-License-Identifier: MIT */
/*
 * <linux/overflow.h> - segpool's kernel overlay: checked size arithmetic
 * for allocation sizes (struct_size() and friends saturate at SIZE_MAX,
 * which no allocation satisfies).
 */
#ifndef SEGPOOL_KERNEL_LINUX_OVERFLOW_H
#define SEGPOOL_KERNEL_LINUX_OVERFLOW_H

#include <stddef.h>
#include <stdint.h>

#define check_add_overflow(a, b, d)	__builtin_add_overflow(a, b, d)
#define check_sub_overflow(a, b, d)	__builtin_sub_overflow(a, b, d)
#define check_mul_overflow(a, b, d)	__builtin_mul_overflow(a, b, d)

/* size_mul() - @a * @b, or SIZE_MAX when it overflows. */
static inline size_t size_mul(size_t a, size_t b)
{
	size_t r;

	return __builtin_mul_overflow(a, b, &r) ? SIZE_MAX : r;
}

/* size_add() - @a + @b, or SIZE_MAX when it overflows. */
static inline size_t size_add(size_t a, size_t b)
{
	size_t r;

	return __builtin_add_overflow(a, b, &r) ? SIZE_MAX : r;
}

#define array_size(a, b)		size_mul(a, b)
#define array3_size(a, b, c)		size_mul(size_mul(a, b), c)
/* struct_size() - bytes of *@p with @count elements in flexible @member. */
#define struct_size(p, member, count)					\
	size_add(sizeof(*(p)), size_mul(sizeof(*(p)->member), count))
#define struct_size_t(type, member, count)				\
	struct_size((type *)NULL, member, count)
#define flex_array_size(p, member, count)				\
	size_mul(count, sizeof(*(p)->member))

#endif /* SEGPOOL_KERNEL_LINUX_OVERFLOW_H */
