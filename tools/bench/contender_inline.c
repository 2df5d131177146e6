// SPDX-License-Identifier: MIT
/*
 * tools/bench/contender_inline.c - segpool-cache-inline's calls for the
 * workloads that make one indirect call per operation (all but the local
 * ones, which wl_local_inline.c runs with the hit in their loops):
 * segpool-cache's very calls, built with SEGPOOL_INLINE (bench.h's
 * BENCH_INLINE_LOOPS), so the magazine hit runs here and only a miss calls
 * into the library.  The caches and the size-to-cache table are
 * segpool-cache's (contenders.c).
 */
#define BENCH_INLINE_LOOPS 1
#include "tools/bench/bench.h"

void *bench_cache_alloc_inline(size_t size)
{
	return bench_heap_alloc(size);
}

void bench_cache_free_inline(void *p, size_t size)
{
	bench_heap_free(p, size);
}
