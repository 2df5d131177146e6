/* SPDX-License-Identifier: MIT */
/*
 * os/faultpoint.h - the OS fault points: fault injection at the OS door.
 *
 * Tests arm a point so that its next N calls fail as the OS would (mmap,
 * mprotect, mbind, shm_open, the rseq and membarrier system calls), to
 * prove that every failure turns into NULL/ENOMEM (or the documented
 * fallback) with nothing leaked and the cache still usable.  Not the
 * public failslab (segpool/fault.h, failslab/), which fails allocations
 * of chosen caches; these fail the OS under the library.
 * Not exported; the selftests reach it through the static library.
 */
#ifndef SP_OS_FAULTPOINT_H
#define SP_OS_FAULTPOINT_H

#include <stdbool.h>
#include "internal/compiler.h"

enum sp_fault_point {
	SP_FAULT_MMAP,		/* reservations and large mappings */
	SP_FAULT_COMMIT,	/* making reserved pages accessible */
	SP_FAULT_MBIND,		/* binding committed pages to their node */
	SP_FAULT_META,		/* bookkeeping mappings (sp_os_map_meta):
				 * per-CPU blocks, nil slots, export stage */
	SP_FAULT_SHM,		/* creating a shared-memory segment */
	SP_FAULT_MAP_SHARED,	/* mapping a shared-memory segment */
	SP_FAULT_RSEQ,		/* registering an rseq area */
	SP_FAULT_MEMBARRIER,	/* membarrier registration and fences */
	SP_FAULT_PAGE_SIZE,	/* the kernel's page size: reported larger
				 * than segpool's page */
	SP_FAULT_NR,
};

/*
 * sp_fault_arm() - make the next @count calls at @point fail, after letting
 * @skip calls succeed.  @count == 0 disarms.
 */
SP_INTERNAL void sp_fault_arm(enum sp_fault_point point, unsigned int skip,
			      unsigned int count);

/* sp_fault_hits() - how many calls at @point were failed on purpose. */
SP_INTERNAL unsigned long sp_fault_hits(enum sp_fault_point point);

/* sp_fault_should_fail() - consulted by the OS layer before each call. */
SP_INTERNAL bool sp_fault_should_fail(enum sp_fault_point point);

#endif /* SP_OS_FAULTPOINT_H */
