/* SPDX-License-Identifier: MIT */
/*
 * <linux/numa.h> - segpool's kernel overlay: NUMA_NO_NODE and the node of
 * the calling CPU.
 */
#ifndef SEGPOOL_KERNEL_LINUX_NUMA_H
#define SEGPOOL_KERNEL_LINUX_NUMA_H

#include <segpool/numa.h>
#include <segpool/slab.h>

/* NUMA_NO_NODE - "any node": the calling CPU's first, as in the kernel. */
#define NUMA_NO_NODE		SEGPOOL_NUMA_NO_NODE

/* numa_node_id() - the node of the CPU the caller runs on (may be stale). */
static inline int numa_node_id(void)
{
	return segpool_numa_current_node();
}

#endif /* SEGPOOL_KERNEL_LINUX_NUMA_H */
