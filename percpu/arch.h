/* SPDX-License-Identifier: MIT */
/*
 * percpu/arch.h - pick the restartable-sequence primitives for this CPU
 * architecture.  What each arch header must define, the pseudocode of its
 * five sequences (pop, counted pop, push, steal, lane push) and the layout
 * they may assume are in percpu/contract.h; without an arch header the
 * per-CPU layer runs in lock mode only and the build still works.
 */
#ifndef SP_PERCPU_ARCH_H
#define SP_PERCPU_ARCH_H

#include <stdbool.h>
#include <stdint.h>

#include "segpool_config.h"
#include "percpu/contract.h"

#define SP_PERCPU_ARCH_H_INSIDE
#if defined(__x86_64__)
#include "percpu/arch-x86_64.h"
#elif defined(__aarch64__)
#include "percpu/arch-arm64.h"
#else
#define SP_RSEQ_ARCH 0
#endif
#undef SP_PERCPU_ARCH_H_INSIDE

#ifndef SP_CAS16_ARCH
#define SP_CAS16_ARCH 0
#endif

#ifndef SP_HIT_COUNT_ARCH
/* One more hit on a slot's counter (the slot's owner, lock mode). */
static inline __attribute__((always_inline)) void sp_hit_count(uint64_t *ctr)
{
	__atomic_store_n(ctr, __atomic_load_n(ctr, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELAXED);
}
#endif

#ifndef SP_PREFETCH_WRITE_ARCH
/*
 * sp_prefetch_write() - the compiler's hint for a line about to be written
 * (arm64's prfm pstl1keep; elsewhere whatever the target has, or nothing).
 */
static inline bool sp_prefetch_write_usable(void)
{
	return true;
}

static inline __attribute__((always_inline)) void
sp_prefetch_write(const void *p)
{
	__builtin_prefetch(p, 1, 3);
}
#endif

#endif /* SP_PERCPU_ARCH_H */
