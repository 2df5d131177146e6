// SPDX-License-Identifier: MIT
/*
 * numa/policy.c - the interleave rotation of SEGPOOL_INTERLEAVE caches.
 *
 * Each thread keeps its own position, so rotating costs no shared write;
 * threads that allocate alike spread their objects evenly over the nodes.
 */
#include "numa/policy.h"

static __thread unsigned int sp_interleave_next;

int sp_policy_interleave_idx(void)
{
	unsigned int n = (unsigned int)sp_topo.nr_nodes;

	if (n == 1)
		return 0;
	return (int)(sp_interleave_next++ % n);
}
