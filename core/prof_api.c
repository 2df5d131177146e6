// SPDX-License-Identifier: MIT
/*
 * core/prof_api.c - the public calls of sampled heap profiling (prof/).
 */
#include <errno.h>

#include <segpool/segpool.h>

#include "core/core.h"
#include "internal/reentry.h"
#include "prof/prof.h"

SEGPOOL_API int segpool_heap_profile_dump(const char *path)
{
	int ret;

	if (!path || !*path) {
		errno = EINVAL;
		return -1;
	}
	if (unlikely(sp_init()))
		return -1;
	if (sp_lib_nested()) {		/* the table's lock may be held */
		errno = EDEADLK;
		return -1;
	}
	ret = sp_prof_dump(path);
	return ret;
}

SEGPOOL_API int segpool_heap_profile_enabled(void)
{
	if (unlikely(sp_init()))
		return 0;
	return __atomic_load_n(&sp_prof_on, __ATOMIC_ACQUIRE);
}
