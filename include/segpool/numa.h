/* SPDX-License-Identifier: MIT */
/*
 * segpool/numa.h - the NUMA topology segpool sees.
 */
#ifndef SEGPOOL_NUMA_H
#define SEGPOOL_NUMA_H

#include <stddef.h>
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
 * @ptr: an object from a cache or from segpool_malloc(), a size class or a
 *       large block (any address inside a page run; the start of a mapping
 *       of its own).
 *
 * Return: the node id, or -EINVAL (errno EINVAL) when @ptr is not segpool
 * memory.
 */
SEGPOOL_API int segpool_obj_node(const void *ptr);

/**
 * segpool_numa_node_cpus() - the CPUs whose allocations @node serves first.
 * @node: a node id with memory (segpool_numa_node_id()).
 * @cpus: array receiving up to @max CPU ids in increasing order; may be
 *        NULL when @max is 0 (to ask for the count).
 * @max:  entries @cpus has room for.
 *
 * These are the kernel's CPUs of @node and those of memory-less nodes whose
 * nearest node with memory is @node, limited to the CPUs the process may run
 * on.  A node with memory but no such CPU (a memory-only node) has none.
 *
 * Context: any thread.
 * Return: the number of such CPUs (may exceed @max: only @max are stored),
 * or -EINVAL (errno EINVAL) when @node is not a node with memory or @cpus is
 * NULL with @max > 0.
 */
SEGPOOL_API int segpool_numa_node_cpus(int node, int *cpus, size_t max);

/**
 * segpool_numa_pin_thread() - run the calling thread on @node's CPUs only.
 * @node: a node id with memory.
 *
 * Sets the thread's CPU affinity to segpool_numa_node_cpus(@node), so every
 * object it allocates without naming a node comes from @node.  The helper of
 * NUMA-pinned worker pools: start one pool of threads per node and call
 * this first in each.
 *
 * Context: any thread; affects the calling thread only.
 * Return: 0; -EINVAL (errno EINVAL) when @node is not a node with memory;
 * -ENODEV when @node has no CPU the process may run on (a memory-only node:
 * allocate from it with segpool_cache_alloc_node() instead); -ENOMEM; or
 * the negated error of pthread_setaffinity_np().
 */
SEGPOOL_API int segpool_numa_pin_thread(int node);

SEGPOOL_END_DECLS

#endif /* SEGPOOL_NUMA_H */
