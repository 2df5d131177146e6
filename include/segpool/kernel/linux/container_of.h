/* SPDX-License-Identifier: MIT */
/*
 * <linux/container_of.h> - segpool's kernel overlay: container_of().
 */
#ifndef SEGPOOL_KERNEL_LINUX_CONTAINER_OF_H
#define SEGPOOL_KERNEL_LINUX_CONTAINER_OF_H

#include <stddef.h>

#ifndef container_of
/* container_of() - the struct @type whose @member is at @ptr. */
#define container_of(ptr, type, member) ({				\
	void *__mptr = (void *)(ptr);					\
	_Static_assert(__builtin_types_compatible_p(__typeof__(*(ptr)),	\
			__typeof__(((type *)0)->member)) ||		\
		       __builtin_types_compatible_p(__typeof__(*(ptr)), void), \
		       "pointer type mismatch in container_of()");	\
	((type *)((char *)__mptr - offsetof(type, member))); })
#endif

#endif /* SEGPOOL_KERNEL_LINUX_CONTAINER_OF_H */
