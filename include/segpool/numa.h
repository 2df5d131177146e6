/* SPDX-License-Identifier: MIT */
/*
 * segpool/numa.h - the NUMA topology segpool sees.
 */
#ifndef SEGPOOL_NUMA_H
#define SEGPOOL_NUMA_H

#include <segpool/compiler.h>

SEGPOOL_BEGIN_DECLS

/**
 * segpool_numa_node_count() - how many NUMA nodes with memory segpool uses.
 *
 * Return: at least 1 (a machine without NUMA support counts as one node 0).
 */
SEGPOOL_API int segpool_numa_node_count(void);

/**
 * segpool_numa_node_id() - the id of the @idx-th node with memory.
 * @idx: 0 to segpool_numa_node_count() - 1.
 *
 * Node ids may be sparse (for example 0 and 2).
 * Return: the node id, or -EINVAL (errno EINVAL) for @idx out of range.
 */
SEGPOOL_API int segpool_numa_node_id(int idx);

/**
 * segpool_numa_current_node() - the NUMA node of the CPU the caller runs on.
 *
 * Return: a node id (the answer may be stale as soon as it is returned if the
 * thread is not pinned).
 */
SEGPOOL_API int segpool_numa_current_node(void);

/**
 * segpool_obj_node() - the NUMA node whose memory holds @ptr.
 * @ptr: an object from a cache or from segpool_malloc().
 *
 * Return: the node id, or -EINVAL (errno EINVAL) when @ptr is not segpool
 * memory.
 */
SEGPOOL_API int segpool_obj_node(const void *ptr);

SEGPOOL_END_DECLS

#endif /* SEGPOOL_NUMA_H */
