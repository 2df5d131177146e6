// SPDX-License-Identifier: MIT
/*
 * selftests/api/test_pmr_inline.cpp - test_pmr.cpp again, built with
 * SEGPOOL_INLINE: pool_resource and cache_resource with the magazine hit
 * inline (segpool/pmr.hpp), every container on them, and blocks that
 * cross between the inline functions and the library's calls
 * (test_inline_kind).
 */
#define SEGPOOL_INLINE 1

#include "selftests/api/test_pmr.cpp"
