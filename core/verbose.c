// SPDX-License-Identifier: MIT
/*
 * core/verbose.c - SEGPOOL_VERBOSE=1: the settings in force at start-up.
 *
 * As MIMALLOC_VERBOSE and jemalloc's confirm_conf do, once the library is
 * up it says on standard error what it runs with: every SEGPOOL_* variable
 * (its value, or its default when unset: internal/env_table.c), then what
 * they came to (the per-CPU mode and why, the nodes, the debug options):
 *
 *   segpool: 0.1.0 starts with (SEGPOOL_VERBOSE):
 *   segpool:   SEGPOOL_PERCPU unset: default rseq where the kernel, ...
 *   segpool:   SEGPOOL_DEBUG="1"
 *   ...
 *   segpool: per-CPU mode rseq (glibc registration); 2 possible CPUs
 *   segpool: 1 node, regions bound: no; debug: debug=1 hardened
 *   segpool: guard pool: 256 slots (2052 KiB reserved), 1 in 1000 ...
 *   segpool: heap profile: off; entry points: open build
 */
#include <segpool/segpool.h>

#include "core/core.h"
#include "core/entry.h"
#include "guard/guard.h"
#include "internal/env.h"
#include "internal/report.h"
#include "prof/prof.h"
#include "stats/snap.h"

void sp_init_verbose(void)
{
	struct segpool_health h;

	sp_stats_health_read(&h);
	sp_warn("%s starts with (SEGPOOL_VERBOSE):", h.version);
	sp_env_print_settings();
	sp_warn("per-CPU mode %s; %u possible CPU%s", h.percpu_reason,
		h.cpus_possible, h.cpus_possible == 1 ? "" : "s");
	sp_warn("%u node%s, regions bound: %s; debug: %s; sanitizer: %s",
		h.nr_nodes, h.nr_nodes == 1 ? "" : "s",
		h.numa_bind ? "yes" : "no", h.debug, h.sanitizer);
	if (sp_guard_rate)
		sp_warn("guard pool: %u slots (%lu KiB reserved), 1 in %u "
			"slow-path allocations guarded",
			sp_guard_nr_slots,
			(unsigned long)(sp_guard_range.size >> 10),
			sp_guard_rate);
	else
		sp_warn("guard pool: off");
	/* which build the hit-path entry points resolved to (core/entry.h) */
	sp_warn("heap profile: %s; entry points: %s build, chosen %s",
		sp_prof_active() ? "sampling" : "off",
		sp_entry_counted() ? "counted" : "open",
		sp_entry_chosen_early() ?
		"before start-up (from /proc/self/environ)" : "at start-up");
}
