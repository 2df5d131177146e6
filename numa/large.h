/* SPDX-License-Identifier: MIT */
/*
 * numa/large.h - allocations too large for a size class, each a mapping
 * of its own placed on a node and unmapped on free (private).
 */
#ifndef SP_NUMA_LARGE_H
#define SP_NUMA_LARGE_H

#include <stdbool.h>
#include <stddef.h>
#include "internal/compiler.h"

/*
 * sp_mapping_create() - map @size bytes (a multiple of the page size)
 * aligned to @align (a power of two) on node index @idx.
 * Return: the mapping, or NULL with errno ENOMEM.
 */
SP_INTERNAL void *sp_mapping_create(size_t size, size_t align, int idx);
SP_INTERNAL void sp_mapping_destroy(void *addr, size_t size);

/* The registry of large allocations (sizes above the largest class). */
SP_INTERNAL int sp_large_init(void);
SP_INTERNAL void *sp_large_alloc(size_t size, size_t align, int idx);
/* Size of the large allocation at @ptr and its node index; false if none. */
SP_INTERNAL bool sp_large_lookup(const void *ptr, size_t *size, int *idx);
/* Free the large allocation at @ptr; false when there is none. */
SP_INTERNAL bool sp_large_free(void *ptr);
/* Live large allocations and the bytes they map, read under the lock. */
SP_INTERNAL void sp_large_totals(size_t *count, size_t *bytes);
SP_INTERNAL void sp_large_lock(void);
SP_INTERNAL void sp_large_unlock(void);
SP_INTERNAL void sp_large_reinit_lock(void);

#endif /* SP_NUMA_LARGE_H */
