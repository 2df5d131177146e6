/* SPDX-License-Identifier: MIT */
/*
 * core/entry.h - the two builds of the hit-path entry points (private).
 *
 * segpool_cache_alloc(), segpool_cache_free(), segpool_malloc() and
 * segpool_free() are IFUNC symbols (core/entry.c).  At load time each
 * resolves, once, to one of two functions:
 *
 *   - the open build (sp_*_open): the hit path of core/hotpath.h, whose
 *     instructions tools/check/hotpath.sh counts.  What every process
 *     runs unless it was started with SEGPOOL_HEAP_PROFILE set.
 *   - the counted build (sp_*_counted): the same sequence on the slot
 *     bound sp_pcpu_closed_nr, with sampled heap profiling's byte count
 *     on the allocation; the free is the open one's on that bound, since
 *     a recorded object's page tag makes its push miss
 *     (Documentation/internals/profile.md), so that a profiled process
 *     keeps its hit paths.
 *
 * The library's own callers in core/ (kmalloc(), realloc) call the open
 * build by name: a direct call, no PLT hop.  While sampling runs the open
 * build's sequences are closed (slot bound 0): those calls then take the
 * slow paths, which count and sample as before.  The preload's malloc()
 * and free() choose between the two by a readiness test of their own
 * (malloc/preload.h, sp_pl_fast()).
 */
#ifndef SP_CORE_ENTRY_H
#define SP_CORE_ENTRY_H

#include <stdbool.h>
#include <stddef.h>

#include "internal/compiler.h"

struct segpool_cache;

SP_INTERNAL void *sp_cache_alloc_open(struct segpool_cache *cache,
				      unsigned int gfp);
SP_INTERNAL void *sp_cache_alloc_counted(struct segpool_cache *cache,
					 unsigned int gfp);
SP_INTERNAL void sp_cache_free_open(struct segpool_cache *cache, void *obj);
SP_INTERNAL void sp_cache_free_counted(struct segpool_cache *cache,
				       void *obj);
SP_INTERNAL void *sp_malloc_open(size_t size);
SP_INTERNAL void *sp_malloc_counted(size_t size);
SP_INTERNAL void sp_free_open(void *ptr);
SP_INTERNAL void sp_free_counted(void *ptr);

/*
 * sp_entry_counted() - whether the entry points resolve to the counted
 * build: the process was started with SEGPOOL_HEAP_PROFILE set and not
 * empty (decided once, by the first resolver or start-up, whichever runs
 * first; safe while the dynamic linker is still relocating).
 */
SP_INTERNAL bool sp_entry_counted(void);

/*
 * sp_entry_decide() - start-up's answer, from getenv(), for the resolvers
 * that have not run yet: a lazily bound process (the usual case) then
 * never reads /proc/self/environ, a file whose first lookup in a new
 * process costs tens of microseconds.  No change once a resolver decided.
 */
SP_INTERNAL void sp_entry_decide(bool counted);
/* Whether a resolver chose before start-up did (SEGPOOL_VERBOSE says). */
SP_INTERNAL bool sp_entry_chosen_early(void);

#endif /* SP_CORE_ENTRY_H */
