// SPDX-License-Identifier: MIT
/*
 * tools/bench/wl_local_inline.c - the local workloads (wl_local.c) once
 * more, built with the inline API in their loops (BENCH_INLINE_LOOPS,
 * bench.h) for segpool-cache-inline: its hit runs in the loop, with no
 * call, as in a program built with SEGPOOL_INLINE, where every other
 * contender makes one indirect call per operation (about what a call to
 * malloc through the PLT costs).  The other workloads reach it through
 * contender_inline.c's functions, a call each like the others.
 */
#define BENCH_INLINE_LOOPS 1
#include "tools/bench/bench.h"	/* first: it declares the called ones */

#define bench_wl_pool		bench_wl_pool_inline
#define bench_wl_pool_lat	bench_wl_pool_lat_inline
#define bench_wl_pair		bench_wl_pair_inline
#define bench_wl_batch		bench_wl_batch_inline
#define bench_wl_threads	bench_wl_threads_inline
#define bench_wl_batches	bench_wl_batches_inline
#define bench_wl_mixed		bench_wl_mixed_inline
#define bench_wl_memory		bench_wl_memory_inline

BENCH_WL(bench_wl_pool); BENCH_WL(bench_wl_pool_lat); BENCH_WL(bench_wl_pair);
BENCH_WL(bench_wl_batch); BENCH_WL(bench_wl_threads); BENCH_WL(bench_wl_mixed);
BENCH_WL(bench_wl_memory); BENCH_WL(bench_wl_batches);

#include "tools/bench/wl_local.c"

#undef bench_wl_pool
#undef bench_wl_pool_lat
#undef bench_wl_pair
#undef bench_wl_batch
#undef bench_wl_threads
#undef bench_wl_batches
#undef bench_wl_mixed
#undef bench_wl_memory

bench_wl_fn bench_wl_inline_of(bench_wl_fn run)
{
	static const struct {
		bench_wl_fn called, inlined;
	} map[] = {
		{ bench_wl_pool, bench_wl_pool_inline },
		{ bench_wl_pool_lat, bench_wl_pool_lat_inline },
		{ bench_wl_pair, bench_wl_pair_inline },
		{ bench_wl_batch, bench_wl_batch_inline },
		{ bench_wl_threads, bench_wl_threads_inline },
		{ bench_wl_batches, bench_wl_batches_inline },
		{ bench_wl_mixed, bench_wl_mixed_inline },
		{ bench_wl_memory, bench_wl_memory_inline },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (map[i].called == run)
			return map[i].inlined;
	return run;
}
