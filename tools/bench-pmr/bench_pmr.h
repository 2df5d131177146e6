/* SPDX-License-Identifier: MIT */
/*
 * tools/bench-pmr/bench_pmr.h - the resources built with SEGPOOL_INLINE
 * (tools/bench-pmr/inline_resources.cpp), for bench_pmr.cpp, which is built
 * without it.
 */
#ifndef BENCH_PMR_H
#define BENCH_PMR_H

#include <memory_resource>

/* segpool::pmr::pool() of a SEGPOOL_INLINE program: the hit inline. */
std::pmr::memory_resource *bench_pmr_inline_pool();
/* A cache_resource(64, 16) over it, built the same way (one, shared). */
std::pmr::memory_resource *bench_pmr_inline_cache();

#endif /* BENCH_PMR_H */
