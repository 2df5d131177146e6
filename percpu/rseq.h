/* SPDX-License-Identifier: MIT */
/*
 * percpu/rseq.h - per-CPU mode, rseq registration and fences (private).
 *
 * Modes (SEGPOOL_PERCPU=rseq|lock|off, chosen once at start-up):
 *   rseq  magazines on restartable sequences: no lock, no atomic RMW.
 *         The thread's rseq area is glibc's when glibc registered one
 *         (__rseq_offset), otherwise segpool registers its own per thread.
 *         Needs membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ) for
 *         cross-CPU drains.
 *   lock  the same magazines, each CPU slot under a spinlock; chosen when
 *         rseq is unavailable (old kernel, valgrind, seccomp, no port for
 *         this architecture) or asked for.  ThreadSanitizer builds default
 *         to it, since TSan cannot see into the assembly.
 *   off   no per-CPU layer: every call goes to the slab layer.
 * Slots are indexed by CPU id, or by the kernel's mm_cid with
 * SEGPOOL_PERCPU_ID=mm_cid (rseq mode, kernels that fill it, one node).
 */
#ifndef SP_PERCPU_RSEQ_H
#define SP_PERCPU_RSEQ_H

#include <stdbool.h>
#include "internal/compiler.h"

enum sp_pcpu_mode_id {
	SP_PCPU_OFF,
	SP_PCPU_LOCK,
	SP_PCPU_RSEQ,
};

extern SP_INTERNAL enum sp_pcpu_mode_id sp_pcpu_mode;
extern SP_INTERNAL long sp_rseq_off;		/* struct rseq from thread
						 * pointer */
extern SP_INTERNAL long sp_rseq_id_off;		/* its cpu_id or mm_cid field */
extern SP_INTERNAL bool sp_rseq_own;		/* segpool registered the
						 * area */
extern SP_INTERNAL bool sp_pcpu_use_mm_cid;
extern SP_INTERNAL char sp_pcpu_reason[128];	/* why this mode, for stats */

/*
 * sp_pcpu_base_init() - the hit paths' copy of glibc's __rseq_offset
 * (sp_pcpu_fast.rseq_off, percpu/pcpu.h sp_pcpu_base()), set once, before
 * the space is reserved (core/init.c), whatever the mode turns out to be.
 */
SP_INTERNAL void sp_pcpu_base_init(void);
/* Choose the mode; register this thread if segpool owns registration. */
SP_INTERNAL void sp_pcpu_mode_init(void);
SP_INTERNAL const char *sp_pcpu_mode_name(void);

/*
 * sp_rseq_thread_ensure() - in own-registration mode, register the calling
 * thread's area if it is not yet.  Return: true when the thread's rseq area
 * is registered (always true with glibc's registration).
 */
SP_INTERNAL bool sp_rseq_thread_ensure(void);

/*
 * sp_rseq_fence() - restart every rseq critical section running on @cpu
 * (all CPUs when @cpu < 0 or slots are mm_cids).  Return: 0 or -errno.
 */
SP_INTERNAL int sp_rseq_fence(long cpu);

/*
 * sp_pcpu_current_slot() - the slot id of the caller: the injected one in
 * tests (sp_pcpu_test_inject_slot), else the CPU (or mm_cid in rseq mode).
 */
SP_INTERNAL unsigned long sp_pcpu_current_slot(unsigned long nr_slots);

/* Test hook: force the caller's slot id (lock mode); -1 restores. */
SP_INTERNAL void sp_pcpu_test_inject_slot(long slot);

#endif /* SP_PERCPU_RSEQ_H */
