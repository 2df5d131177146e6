// SPDX-License-Identifier: MIT
/*
 * slab/policy.c - the node policies of caches: the interleave rotation of
 * SEGPOOL_INTERLEAVE caches, and objects from the slabs of a node with the
 * fallback along the distance order (slab/policy.h).
 *
 * Each thread keeps its own position in the rotation, so rotating costs no
 * shared write; threads that allocate alike spread their objects evenly
 * over the nodes.
 */
#include <errno.h>

#include "slab/policy.h"

static __thread unsigned int sp_interleave_next;

int sp_policy_interleave_idx(void)
{
	unsigned int n = (unsigned int)sp_topo.nr_nodes;

	if (n == 1)
		return 0;
	return (int)(sp_interleave_next++ % n);
}

__sp_libframe size_t sp_alloc_objs(struct segpool_cache *c, unsigned int gfp,
				   int node, size_t n, void **objs)
{
	int idx = sp_policy_node_idx(c, node);

	if (unlikely(idx < 0)) {
		errno = EINVAL;
		return 0;
	}
	if (likely(sp_slab_alloc_bulk(c, idx, n, objs)))
		return n;
	if (!sp_policy_may_fall_back(c, gfp)) {
		__atomic_fetch_add(&c->alloc_failures, 1, __ATOMIC_RELAXED);
		errno = ENOMEM;
		return 0;
	}
	for (int i = 1; i < sp_topo.nr_nodes; i++)
		if (sp_slab_alloc_bulk(c, sp_topo.fallback[idx][i], n, objs))
			return n;
	__atomic_fetch_add(&c->alloc_failures, 1, __ATOMIC_RELAXED);
	errno = ENOMEM;
	return 0;
}
