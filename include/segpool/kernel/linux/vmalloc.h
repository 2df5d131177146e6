/* SPDX-License-Identifier: MIT */
/*
 * <linux/vmalloc.h> - segpool's kernel overlay: vmalloc() and friends.
 * There is no separate vmalloc area: sizes above the size classes are
 * mappings of their own already, so these are kmalloc() with GFP_KERNEL.
 */
#ifndef SEGPOOL_KERNEL_LINUX_VMALLOC_H
#define SEGPOOL_KERNEL_LINUX_VMALLOC_H

#include <linux/slab.h>

/*
 * is_vmalloc_addr() - false: there is no vmalloc area, vmalloc() memory
 * is kmalloc() memory (kvfree() and vfree() take either).
 */
static inline bool is_vmalloc_addr(const void *x)
{
	(void)x;
	return false;
}

static inline void *vmalloc(unsigned long size)
{
	return kvmalloc(size, GFP_KERNEL);
}

static inline void *vzalloc(unsigned long size)
{
	return kvzalloc(size, GFP_KERNEL);
}

static inline void *vmalloc_node(unsigned long size, int node)
{
	return kvmalloc_node(size, GFP_KERNEL, node);
}

static inline void *vzalloc_node(unsigned long size, int node)
{
	return kvzalloc_node(size, GFP_KERNEL, node);
}

static inline void *vmalloc_array(size_t n, size_t size)
{
	return kvmalloc_array(n, size, GFP_KERNEL);
}

static inline void *vcalloc(size_t n, size_t size)
{
	return kvcalloc(n, size, GFP_KERNEL);
}

static inline void vfree(const void *addr)
{
	kvfree(addr);
}

#endif /* SEGPOOL_KERNEL_LINUX_VMALLOC_H */
