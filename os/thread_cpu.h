/* SPDX-License-Identifier: MIT */
/*
 * os/thread_cpu.h - which CPU and node the calling thread runs on.
 *
 * When glibc registered an rseq area for the thread (__rseq_size != 0) the
 * kernel keeps cpu_id (and, with feature size >= 24, node_id) up to date in
 * it: reading them is a plain load.  Otherwise sched_getcpu() (vDSO) answers.
 * The per-CPU layer builds its restartable sequences on the same area; this
 * header only reads it.
 */
#ifndef SP_OS_THREAD_CPU_H
#define SP_OS_THREAD_CPU_H

#include <sched.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <sys/rseq.h>

#include "internal/compiler.h"

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

#endif /* SP_OS_THREAD_CPU_H */
