/* SPDX-License-Identifier: MIT */
/*
 * os/os.h - the thin layer over mmap, mprotect, madvise and mbind (private).
 *
 * Every call into the OS for memory goes through here, so fault injection
 * (os/faultpoint.h) and error translation happen in one place.  Failures
 * return NULL or -1 with errno ENOMEM.
 */
#ifndef SP_OS_OS_H
#define SP_OS_OS_H

#include <stddef.h>
#include "internal/compiler.h"

#define SP_MAX_NODE_BITS 1024	/* node ids sp_os_bind() accepts */

/* Reserve address space: PROT_NONE, MAP_NORESERVE, aligned to @align. */
SP_INTERNAL void *sp_os_reserve(size_t size, size_t align);
/* Map zero-filled read-write memory (lazily backed), aligned to @align. */
SP_INTERNAL void *sp_os_map(size_t size, size_t align);
SP_INTERNAL void sp_os_unmap(void *addr, size_t size);
/* Make mapped pages read-only (best effort: a failure leaves them as they
 * were). */
SP_INTERNAL void sp_os_protect_ro(void *addr, size_t size);
/* Make reserved pages accessible; 0 or -1 (ENOMEM). */
SP_INTERNAL int sp_os_commit(void *addr, size_t size);
/* Undo sp_os_commit (used to roll back when a later step fails). */
SP_INTERNAL void sp_os_decommit(void *addr, size_t size);
/* Bind pages to kernel node @node (MPOL_BIND); 0 or -1 (ENOMEM). */
SP_INTERNAL int sp_os_bind(void *addr, size_t size, int node);
/* Give the pages' memory back to the OS; the range stays mapped, reads zero. */
SP_INTERNAL void sp_os_release(void *addr, size_t size);

#endif /* SP_OS_OS_H */
