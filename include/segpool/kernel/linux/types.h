/* SPDX-License-Identifier: MIT */
/*
 * <linux/types.h> - segpool's kernel overlay: the kernel's basic types.
 *
 * The system's UAPI <linux/types.h> (__u8 ... __u64, __le32, ...) comes
 * first when it is installed; then the kernel-internal names: u8 ... s64,
 * bool, gfp_t, slab_flags_t and struct callback_head (struct rcu_head).
 */
#ifndef SEGPOOL_KERNEL_LINUX_TYPES_H
#define SEGPOOL_KERNEL_LINUX_TYPES_H

#if defined(__has_include_next)
#if __has_include_next(<linux/types.h>)
#include_next <linux/types.h>
#endif
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/compiler.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

/* Allocation flags (<linux/gfp_types.h>): the low bits are segpool's. */
typedef unsigned int __bitwise gfp_t;
/* Cache flags (<linux/slab.h>): wide enough for segpool's own too. */
typedef unsigned long __bitwise slab_flags_t;

/*
 * struct callback_head - the kernel's RCU callback head (struct rcu_head):
 * two words, as in the kernel.  kfree_rcu() takes it to name the object;
 * segpool's batches do not use its bytes.
 */
struct callback_head {
	struct callback_head *next;
	void (*func)(struct callback_head *head);
} __attribute__((aligned(sizeof(void *))));
#define rcu_head callback_head

#endif /* SEGPOOL_KERNEL_LINUX_TYPES_H */
