/* SPDX-License-Identifier: MIT */
/*
 * os/cpu.h - which CPUs exist, for sizing per-CPU arrays (private).
 */
#ifndef SP_OS_CPU_H
#define SP_OS_CPU_H

#include "internal/compiler.h"

/*
 * sp_cpu_possible_count() - number of possible CPU ids (highest possible id
 * plus one), from /sys/devices/system/cpu/possible, falling back to
 * sysconf(_SC_NPROCESSORS_CONF).  CPUs may be offline or sparse: arrays
 * indexed by CPU id must have this many slots, not the online count.
 */
SP_INTERNAL int sp_cpu_possible_count(void);

/* sp_cpu_parse_list() - highest id in a kernel CPU list ("0-3,8,10-11"),
 * or -1 when the list is malformed. */
SP_INTERNAL int sp_cpu_parse_list(const char *list);

#endif /* SP_OS_CPU_H */
