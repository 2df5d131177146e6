/* SPDX-License-Identifier: MIT */
/*
 * os/cpu.h - what the OS says about CPUs and nodes (private).
 *
 * Facts only, no policy: which CPU ids exist (for sizing per-CPU arrays),
 * which CPU and node the calling thread runs on, and what the kernel says
 * about nodes, their memory, their CPUs and their distances (system calls
 * first, sysfs for the rest, each read once: os/cpu.c).
 * numa/topology.c builds segpool's node model from them; percpu/ sizes
 * its slots by them.
 *
 * Which CPU and node the caller runs on: when glibc registered an rseq
 * area for the thread (__rseq_size != 0) the kernel keeps cpu_id (and,
 * with feature size >= 24, node_id) up to date in it: reading them is a
 * plain load.  Otherwise sched_getcpu() (vDSO) answers.  The per-CPU layer
 * builds its restartable sequences on the same area; this header only
 * reads it.
 */
#ifndef SP_OS_CPU_H
#define SP_OS_CPU_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <sys/rseq.h>

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
/*
 * sp_cpu_parse_mask() - the same, and the ids below @bits also set in the
 * bitmask @mask (longs, bit i of word i / BITS_PER_LONG; NULL: none).
 * A malformed list may have set some bits before its fault.
 */
SP_INTERNAL int sp_cpu_parse_mask(const char *list, unsigned long *mask,
				  int bits);

/* --- the calling thread's CPU and node --- */
#ifndef AT_RSEQ_FEATURE_SIZE
#define AT_RSEQ_FEATURE_SIZE 27
#endif

/* Offsets in struct rseq of fields newer than glibc 2.36's header. */
#define SP_RSEQ_NODE_ID_OFFSET	20
#define SP_RSEQ_MM_CID_OFFSET	24

static inline volatile struct rseq *sp_rseq_area(void)
{
	return (volatile struct rseq *)((char *)__builtin_thread_pointer() +
					__rseq_offset);
}

/* sp_thread_cpu() - the CPU the caller runs on now (may change at once). */
static inline int sp_thread_cpu(void)
{
	if (likely(__rseq_size != 0)) {
		int cpu = (int)sp_rseq_area()->cpu_id;

		if (likely(cpu >= 0))
			return cpu;
	}
	return sched_getcpu();
}

/*
 * sp_thread_node_hint() - the node the kernel reports in the rseq area, or
 * -1 when the kernel or libc does not provide it (the caller then maps the
 * CPU to its node).  @feature_size is getauxval(AT_RSEQ_FEATURE_SIZE), read
 * once by the caller.
 */
static inline int sp_thread_node_hint(unsigned long feature_size)
{
	if (__rseq_size != 0 && feature_size >= SP_RSEQ_NODE_ID_OFFSET + 4 &&
	    (int)sp_rseq_area()->cpu_id >= 0) {
		const volatile uint32_t *node = (const volatile uint32_t *)
			((const volatile char *)sp_rseq_area() +
			 SP_RSEQ_NODE_ID_OFFSET);
		return (int)*node;
	}
	return -1;
}

/* --- nodes, as the kernel tells them (os/cpu.c) --- */
/* CPU ids the node queries know (numa/topology.h's SP_MAX_CPUS fits). */
#define SP_OS_MAX_CPUS 4096
/*
 * sp_os_numa_init() - read the CPUs the process may run on (once, for
 * sp_os_cpu_allowed()) and ask whether the kernel has NUMA policy.
 * Return: true when it has (get_mempolicy() is there and allowed).
 */
SP_INTERNAL bool sp_os_numa_init(void);
/*
 * sp_os_numa_only_node() - the node id when the process may allocate on
 * one node only (its cpuset's mems, MPOL_F_MEMS_ALLOWED: a subset of the
 * nodes with memory), else -1 (several, or unknown).  No file is read.
 */
SP_INTERNAL int sp_os_numa_only_node(void);
/* sp_os_numa_max_node() - the highest node id the kernel knows (online). */
SP_INTERNAL int sp_os_numa_max_node(void);
/*
 * sp_os_numa_node_usable() - may the process allocate on node @node (its
 * cpuset's mems) and has the node memory?
 */
SP_INTERNAL bool sp_os_numa_node_usable(int node);
/*
 * sp_os_numa_node_of_cpu() - the kernel's node of CPU @cpu, or -1 (an
 * offline CPU, an id of SP_OS_MAX_CPUS or more).  On a one-node machine
 * every CPU id is that node's.
 */
SP_INTERNAL int sp_os_numa_node_of_cpu(int cpu);
/*
 * sp_os_numa_distance() - the kernel's distance of nodes @a and @b, or 0
 * when unknown (as libnuma's numa_distance()).
 */
SP_INTERNAL int sp_os_numa_distance(int a, int b);
/*
 * sp_os_cpu_allowed() - may the process run on @cpu?  Its affinity as
 * sp_os_numa_init() read it at start-up; true when that read none.
 */
SP_INTERNAL bool sp_os_cpu_allowed(int cpu);
/*
 * sp_os_thread_set_affinity() - run the calling thread on the CPUs of
 * @set (@size bytes, CPU_ALLOC_SIZE) only.  Return: 0 or a positive errno.
 */
SP_INTERNAL int sp_os_thread_set_affinity(const cpu_set_t *set, size_t size);
/* sp_os_rseq_feature_size() - getauxval(AT_RSEQ_FEATURE_SIZE): 0 if none. */
SP_INTERNAL unsigned long sp_os_rseq_feature_size(void);
/*
 * sp_os_page_size() - the kernel's page size (getauxval(AT_PAGESZ)): the
 * granularity of every mapping, protection and advice call.  segpool's own
 * page (SP_PAGE_SIZE, internal/compiler.h) must be a multiple of it.
 * Fault point SP_FAULT_PAGE_SIZE (a size larger than segpool's page).
 */
SP_INTERNAL unsigned long sp_os_page_size(void);
/*
 * sp_os_kernel_page() - the same, read once, without the fault point: for
 * the OS door's own alignment, which must stay true while a test fakes
 * the size start-up checks.
 */
SP_INTERNAL unsigned long sp_os_kernel_page(void);
/*
 * sp_os_hwcap() - the kernel's word of CPU features (getauxval(AT_HWCAP));
 * its bits are the architecture's (the arch headers of percpu/ read them).
 */
SP_INTERNAL unsigned long sp_os_hwcap(void);

#endif /* SP_OS_CPU_H */
