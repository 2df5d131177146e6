/* SPDX-License-Identifier: MIT */
/*
 * numa/mapping.h - mappings of their own for allocations too large for a
 * size class (private).  Each is placed on a node and unmapped on free.
 */
#ifndef SP_NUMA_MAPPING_H
#define SP_NUMA_MAPPING_H

#include <stddef.h>
#include "internal/compiler.h"

/*
 * sp_mapping_create() - map @size bytes (a multiple of the page size)
 * aligned to @align (a power of two) on node index @idx.
 * Return: the mapping, or NULL with errno ENOMEM.
 */
SP_INTERNAL void *sp_mapping_create(size_t size, size_t align, int idx);
SP_INTERNAL void sp_mapping_destroy(void *addr, size_t size);

#endif /* SP_NUMA_MAPPING_H */
