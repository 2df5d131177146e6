// SPDX-License-Identifier: MIT
/*
 * os/faultpoint.c - the OS fault points (os/faultpoint.h).
 *
 * Each point has a "skip" count (calls let through first) and a "fail"
 * count (calls failed after that).  Both are consumed with atomic
 * decrements, so the points may be armed while other threads allocate.
 * Unarmed points cost one relaxed load on paths that already make a system
 * call.
 */
#include "os/faultpoint.h"

struct sp_fault_state {
	unsigned int skip;
	unsigned int fail;
	unsigned long hits;
};

static struct sp_fault_state sp_faults[SP_FAULT_NR];

void sp_fault_arm(enum sp_fault_point point, unsigned int skip,
		  unsigned int count)
{
	if ((unsigned int)point >= SP_FAULT_NR)
		return;
	__atomic_store_n(&sp_faults[point].fail, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&sp_faults[point].skip, count ? skip : 0,
			 __ATOMIC_SEQ_CST);
	__atomic_store_n(&sp_faults[point].fail, count, __ATOMIC_SEQ_CST);
}

unsigned long sp_fault_hits(enum sp_fault_point point)
{
	if ((unsigned int)point >= SP_FAULT_NR)
		return 0;
	return __atomic_load_n(&sp_faults[point].hits, __ATOMIC_RELAXED);
}

/* Take one unit from *ctr if it is non-zero; true if one was taken. */
static bool sp_fault_take(unsigned int *ctr)
{
	unsigned int v = __atomic_load_n(ctr, __ATOMIC_RELAXED);

	while (v) {
		if (__atomic_compare_exchange_n(ctr, &v, v - 1, false,
						__ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			return true;
	}
	return false;
}

bool sp_fault_should_fail(enum sp_fault_point point)
{
	struct sp_fault_state *f = &sp_faults[point];

	if (likely(!__atomic_load_n(&f->fail, __ATOMIC_RELAXED)))
		return false;
	if (sp_fault_take(&f->skip))
		return false;
	if (!sp_fault_take(&f->fail))
		return false;
	__atomic_fetch_add(&f->hits, 1, __ATOMIC_RELAXED);
	return true;
}
