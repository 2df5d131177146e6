// SPDX-License-Identifier: MIT
/*
 * core/numa_api.c - the public NUMA queries.
 */
#include <errno.h>

#include <segpool/segpool.h>

#include "core/core.h"
#include "guard/guard.h"
#include "numa/topology.h"
#include "young/young.h"

SEGPOOL_API int segpool_numa_node_count(void)
{
	if (sp_init())
		return 1;
	return sp_topo.nr_nodes;
}

SEGPOOL_API int segpool_numa_node_id(int idx)
{
	if (sp_init() || idx < 0 || idx >= sp_topo.nr_nodes) {
		errno = EINVAL;
		return -EINVAL;
	}
	return sp_topo.node_id[idx];
}

SEGPOOL_API int segpool_numa_current_node(void)
{
	if (sp_init())
		return 0;
	return sp_topo.node_id[sp_numa_current_idx()];
}

SEGPOOL_API int segpool_obj_node(const void *ptr)
{
	size_t size;
	int idx;

	if (!ptr || sp_init()) {
		errno = EINVAL;
		return -EINVAL;
	}
	if (sp_young_owns(ptr)) {
		/* a young block (young/young.c) is not placed either */
		sp_young_size(ptr, "segpool_obj_node");
		return sp_topo.node_id[sp_numa_current_idx()];
	}
	if (sp_guard_owns(ptr)) {
		/* a guarded object's slot is not placed: say where we run */
		if (!sp_guard_usable_size(ptr)) {
			errno = EINVAL;
			return -EINVAL;
		}
		return sp_topo.node_id[sp_numa_current_idx()];
	}
	idx = sp_space_idx_of(ptr);
	if (idx >= 0) {
		/* a run's pages but its head and anchors have no token */
		if (!sp_space_owner(ptr) && !sp_run_head_of(ptr)) {
			errno = EINVAL;
			return -EINVAL;
		}
	} else if (!sp_large_lookup(ptr, &size, &idx)) {
		errno = EINVAL;
		return -EINVAL;
	}
	return sp_topo.node_id[idx];
}
