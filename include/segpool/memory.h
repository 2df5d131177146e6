/* SPDX-License-Identifier: MIT */
/*
 * segpool/memory.h - giving memory back: decay, shrinking, a soft limit.
 *
 * Free pages, idle per-CPU magazines and empty slabs go back to the OS by
 * themselves once they stayed unused for the decay delay (SEGPOOL_DECAY_MS,
 * 1000 ms by default), through a background thread, "segpool-decay", which
 * starts only once the process holds enough free memory to give back.  The
 * calls below change the delay, give everything back at once, and set a
 * soft limit on the memory the node regions hold.  See
 * Documentation/guide/tuning.md.
 */
#ifndef SEGPOOL_MEMORY_H
#define SEGPOOL_MEMORY_H

#include <stddef.h>
#include <stdint.h>
#include <segpool/compiler.h>

SEGPOOL_BEGIN_DECLS

/** SEGPOOL_DECAY_NEVER - segpool_set_decay_ms(): keep free memory. */
#define SEGPOOL_DECAY_NEVER	(-1L)
/** SEGPOOL_DECAY_MS_MAX - the longest delay accepted (an hour). */
#define SEGPOOL_DECAY_MS_MAX	3600000L

/**
 * segpool_shrink_all() - give every free byte segpool can back to the OS.
 *
 * Every cache is shrunk as segpool_cache_shrink() does (its per-CPU
 * magazines and depots drained, its empty slabs released), then every free
 * page of every node's region is given back (MADV_DONTNEED), whatever the
 * decay delay.  What malloc_trim() does in libsegpool-malloc.so.
 *
 * Context: any thread, not inside an RCU read-side critical section of the
 * caller's own (a drain may wait for the CPUs it drains); takes every
 * cache's locks and every region lock in turn.
 * Return: the bytes given back to the OS by this call (0 when nothing was
 * free), or -ENOMEM (errno ENOMEM) when the library could not initialise.
 */
SEGPOOL_API long long segpool_shrink_all(void);

/**
 * segpool_set_decay_ms() - how long free memory stays resident.
 * @ms: milliseconds from 0 to SEGPOOL_DECAY_MS_MAX; 0 gives free pages back
 *      at once (and idle magazines within about 10 ms),
 *      SEGPOOL_DECAY_NEVER (-1) keeps them until a shrink.
 *
 * Overrides SEGPOOL_DECAY_MS.  Free pages and caches idle for @ms are given
 * back by the background thread, which wakes every quarter of the delay
 * (between 10 ms and 1 s) and is started by the first call that needs it.
 *
 * Context: any thread.
 * Return: 0; -EINVAL (errno EINVAL) for @ms out of range; -EAGAIN (errno
 * EAGAIN) when the thread could not be started (the delay is set and the
 * start is tried again by the next call); -ENOMEM when the library could
 * not initialise.
 */
SEGPOOL_API int segpool_set_decay_ms(long ms);

/**
 * segpool_get_decay_ms() - the decay delay in force.
 *
 * Context: any thread.
 * Return: milliseconds, 0, or SEGPOOL_DECAY_NEVER (-1).
 */
SEGPOOL_API long segpool_get_decay_ms(void);

/**
 * segpool_set_memory_limit() - a soft limit on the memory segpool holds.
 * @bytes: the limit on the node regions' memory in use or kept free but
 *         resident, all nodes together; 0 for no limit.
 *
 * Overrides SEGPOOL_MEMORY_LIMIT.  When taking more region memory would
 * pass the limit, segpool first gives back every free page at once and
 * asks the background thread to shrink every cache (as
 * segpool_shrink_all()); the allocation succeeds even when that did not
 * bring it under (the limit is soft), and is counted (limit_exceeded in
 * the health statistics).  Large blocks that are mappings of their own are
 * not counted.
 *
 * Context: any thread.
 * Return: 0, or -ENOMEM when the library could not initialise.
 */
SEGPOOL_API int segpool_set_memory_limit(uint64_t bytes);

/**
 * segpool_get_memory_limit() - the soft memory limit in force.
 *
 * Context: any thread.
 * Return: the limit in bytes, 0 for none.
 */
SEGPOOL_API uint64_t segpool_get_memory_limit(void);

SEGPOOL_END_DECLS

#endif /* SEGPOOL_MEMORY_H */
