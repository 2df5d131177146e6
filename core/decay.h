/* SPDX-License-Identifier: MIT */
/*
 * core/decay.h - memory that goes back by itself (private).
 */
#ifndef SP_CORE_DECAY_H
#define SP_CORE_DECAY_H

#include <stddef.h>
#include <stdint.h>

#include "internal/compiler.h"
#include "stats/snap.h"

/* SEGPOOL_THP, in the order of the option table's words */
enum sp_thp_mode { SP_THP_AUTO, SP_THP_ALWAYS, SP_THP_NEVER };

/*
 * sp_decay_thp_choice() - sp_region_thp for SEGPOOL_THP @thp (enum
 * sp_thp_mode), the kernel's mode @mode (enum sp_os_thp), its huge page
 * @huge (bytes, 0 unknown) and a decay delay of @ms: what
 * sp_decay_settings() sets.  A kernel whose huge page is not the one the
 * regions are built for (SP_OS_HUGE_SIZE) has them refused.
 */
SP_INTERNAL int sp_decay_thp_choice(int thp, int mode, size_t huge, long ms);
/* Settings, before the space exists (core/init.c). */
SP_INTERNAL void sp_decay_settings(void);
/*
 * After sp_ready: arm the regions' ask for the thread, which starts lazily
 * (core/decay.c); at once for a delay of 0.
 */
SP_INTERNAL void sp_decay_start(void);
/* fork: no thread in the child, the lazy start armed afresh (after the
 * library's child handler). */
SP_INTERNAL void sp_decay_fork_child(void);
/*
 * sp_decay_leave() - start the thread, which sp_lib_wanted says is wanted:
 * from sp_lib_drain(), a call leaving the library outermost with no lock
 * held; not when a signal handler may be running (then a moment later).
 */
SP_INTERNAL void sp_decay_leave(void);

/*
 * sp_decay_read() - the decay's settings and counters, for the health read
 * (stats/health.c, through sp_health_decay_fn, which sp_decay_settings()
 * sets).
 */
SP_INTERNAL void sp_decay_read(struct sp_decay_stats *st);

/*
 * sp_decay_wait_idle() - wait until the decay thread runs no pass and will
 * start none before the next tick or kick: it was never started, or it is
 * asleep with no kick pending.  After segpool_set_decay_ms(-1) (which
 * kicks it) that holds until the delay changes again: what the selftests
 * that compare a region's exact counts wait for.  Gives up after @ms.
 * Return: true when idle.
 */
SP_INTERNAL bool sp_decay_wait_idle(unsigned int ms);

#endif /* SP_CORE_DECAY_H */
