// SPDX-License-Identifier: MIT
/*
 * numa/mapping.c - node-placed mappings for large allocations.
 *
 * Outside the arena on purpose: a large allocation is one mmap and one
 * munmap, and its memory goes back to the OS the moment it is freed.  With
 * binding on, the mapping is mbind()ed to the node before first touch.
 */
#include <errno.h>

#include "numa/mapping.h"
#include "numa/topology.h"
#include "os/os.h"

void *sp_mapping_create(size_t size, size_t align, int idx)
{
	void *p;

	if (idx < 0 || idx >= sp_topo.nr_nodes) {
		errno = ENOMEM;
		return NULL;
	}
	p = sp_os_map(size, align);
	if (!p)
		return NULL;
	if (sp_topo.bind && sp_os_bind(p, size, sp_topo.node_id[idx])) {
		sp_os_unmap(p, size);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

void sp_mapping_destroy(void *addr, size_t size)
{
	sp_os_unmap(addr, size);
}
