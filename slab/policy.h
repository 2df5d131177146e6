/* SPDX-License-Identifier: MIT */
/*
 * slab/policy.h - which node an allocation goes to, and where it may
 * fall back (private).
 *
 *   default              the node asked for, else the calling CPU's; when it
 *                        is full, the other nodes by increasing distance
 *   SEGPOOL_THISNODE     (gfp) that node only: ENOMEM when it is full
 *   SEGPOOL_NODE_STRICT  (cache) as SEGPOOL_THISNODE on every allocation
 *   SEGPOOL_INTERLEAVE   (cache) no node asked for: the next node of the
 *                        calling thread's rotation, then fallback as default
 */
#ifndef SP_SLAB_POLICY_H
#define SP_SLAB_POLICY_H

#include <stdbool.h>

#include <segpool/slab.h>

#include "internal/compiler.h"
#include "numa/topology.h"
#include "slab/slab.h"

/* sp_policy_flags_ok() - false for cache flags naming two policies. */
static inline bool sp_policy_flags_ok(unsigned long flags)
{
	return (flags & (SEGPOOL_NODE_STRICT | SEGPOOL_INTERLEAVE)) !=
	       (SEGPOOL_NODE_STRICT | SEGPOOL_INTERLEAVE);
}

/* sp_policy_has_pcpu() - may cache flags @flags have per-CPU magazines? */
static inline bool sp_policy_has_pcpu(unsigned long flags)
{
	return !(flags & SEGPOOL_INTERLEAVE);
}

SP_INTERNAL int sp_policy_interleave_idx(void);

/*
 * sp_policy_node_idx() - the node index to try first for @c and @node
 * (a node id or SEGPOOL_NUMA_NO_NODE); -1 for a node id without memory.
 */
static inline int sp_policy_node_idx(const struct segpool_cache *c, int node)
{
	if (node != SEGPOOL_NUMA_NO_NODE)
		return sp_numa_node_to_idx(node);
	if (unlikely(c->flags & SEGPOOL_INTERLEAVE))
		return sp_policy_interleave_idx();
	return sp_numa_current_idx();
}

/* sp_policy_may_fall_back() - may this allocation use another node? */
static inline bool sp_policy_may_fall_back(const struct segpool_cache *c,
					   unsigned int gfp)
{
	return !(gfp & SEGPOOL_THISNODE) && !(c->flags & SEGPOOL_NODE_STRICT);
}

/*
 * sp_alloc_objs() - @n objects of @c for gfp @gfp from kernel node @node
 * (or the current node), falling back along the distance order unless
 * SEGPOOL_THISNODE.  All or nothing.  Return: @n, or 0 with errno set.
 */
SP_INTERNAL size_t sp_alloc_objs(struct segpool_cache *c, unsigned int gfp,
				 int node, size_t n, void **objs);

#endif /* SP_SLAB_POLICY_H */
