// SPDX-License-Identifier: MIT
/*
 * tools/bench-pmr/inline_resources.cpp - sp-pool-inline and sp-cache-inline:
 * segpool::pmr::pool_resource and cache_resource as a program that defines
 * SEGPOOL_INLINE gets them (segpool/pmr.hpp), the magazine hit inline in
 * their do_allocate() and do_deallocate().  A translation unit of its own:
 * the rest of bench-pmr measures the called resources.
 */
#define SEGPOOL_INLINE 1

#include <segpool/segpool.h>
#include <segpool/pmr.hpp>

#include "tools/bench-pmr/bench_pmr.h"

std::pmr::memory_resource *bench_pmr_inline_pool()
{
	return &segpool::pmr::pool();
}

std::pmr::memory_resource *bench_pmr_inline_cache()
{
	static segpool::pmr::cache_resource r(64, 16, &segpool::pmr::pool());

	return &r;
}
