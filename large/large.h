/* SPDX-License-Identifier: MIT */
/*
 * large/large.h - allocations too large for a size class: page runs of
 * the node's region, or mappings of their own placed on a node (private).
 */
#ifndef SP_LARGE_LARGE_H
#define SP_LARGE_LARGE_H

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

/* The largest large block: 64 TiB. */
#define SP_LARGE_MAX_SIZE	((size_t)1 << 46)

/*
 * Large allocations (sizes above the largest class): page runs of the
 * node's region below SP_RUN_MAX_SIZE (numa/region.h), mappings of their
 * own from there up or when the region is full.
 */
SP_INTERNAL int sp_large_init(void);
/*
 * sp_large_alloc() - @size bytes on node index @idx at a multiple of
 * @align (a power of two; a power-of-two @size is aligned to itself too),
 * zero-filled when @zero.
 * Return: the block, or NULL with errno ENOMEM (EINVAL: @align).
 */
SP_INTERNAL void *sp_large_alloc(size_t size, size_t align, int idx,
				 bool zero);
/* Size of the large allocation at @ptr and its node index; false if none. */
SP_INTERNAL bool sp_large_lookup(const void *ptr, size_t *size, int *idx);
/* Free the large allocation at @ptr; false (nothing done) if there is none. */
SP_INTERNAL bool sp_large_free(void *ptr);
/*
 * sp_large_misuse() - how to word the report of a free of @ptr, which is no
 * allocation: "free of interior pointer" inside a run, else "free of
 * foreign pointer".
 */
SP_INTERNAL const char *sp_large_misuse(const void *ptr);
/*
 * sp_large_realloc() - make the large allocation @ptr (sp_large_lookup()
 * knows it) hold @size bytes (above the size classes): a run in place when
 * it can, else moved and copied; a mapping by mremap.
 * Return: the block (@ptr or its new place), or NULL with errno ENOMEM and
 * @ptr unchanged.
 */
SP_INTERNAL void *sp_large_realloc(void *ptr, size_t size);
/* Live large allocations and the bytes they map, read under the lock. */
SP_INTERNAL void sp_large_totals(size_t *count, size_t *bytes);
SP_INTERNAL void sp_large_lock(void);
SP_INTERNAL void sp_large_unlock(void);
SP_INTERNAL void sp_large_reinit_lock(void);

#endif /* SP_LARGE_LARGE_H */
