/* SPDX-License-Identifier: MIT */
/*
 * os/faultpoint.h - fault-injection points for the OS primitives.
 *
 * Tests arm a point so that its next N calls fail as the OS would (mmap and
 * mprotect and mbind), to prove that every failure turns
 * into NULL/ENOMEM with nothing leaked and the cache still usable.
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
