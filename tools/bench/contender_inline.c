// SPDX-License-Identifier: MIT
/*
 * tools/bench/contender_inline.c - segpool-cache-inline: segpool-cache's
 * very calls, built with SEGPOOL_INLINE, so the magazine hit runs here
 * (segpool/inline.h) and only a miss calls into the library.  The caches
 * and the size-to-cache table are segpool-cache's (contenders.c).
 */
#define SEGPOOL_INLINE 1
#include <segpool/segpool.h>

#include "tools/bench/bench.h"

void *bench_cache_alloc_inline(size_t size)
{
	return segpool_cache_alloc(bench_cache_of[(size + 7) >> 3], 0);
}

void bench_cache_free_inline(void *p, size_t size)
{
	segpool_cache_free(bench_cache_of[(size + 7) >> 3], p);
}
