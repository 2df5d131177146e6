// SPDX-License-Identifier: MIT
/*
 * os/sys.c - the per-CPU layer's system calls behind the OS door (os/os.h).
 *
 * rseq(2) registers a thread's restartable-sequence area (only when glibc
 * did not: percpu/rseq.c decides); membarrier(2) registers the process for
 * expedited rseq fences and runs them.  glibc wraps neither, hence
 * syscall(2).
 */
#include <errno.h>
#include <linux/membarrier.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "os/faultpoint.h"
#include "os/os.h"

#define SP_RSEQ_FLAG_UNREGISTER	1

int sp_os_rseq_register(void *area, unsigned int len, unsigned int sig)
{
	if (sp_fault_should_fail(SP_FAULT_RSEQ)) {
		errno = EPERM;
		return -1;
	}
	return (int)syscall(__NR_rseq, area, len, 0, sig);
}

int sp_os_rseq_unregister(void *area, unsigned int len, unsigned int sig)
{
	return (int)syscall(__NR_rseq, area, len, SP_RSEQ_FLAG_UNREGISTER, sig);
}

int sp_os_membarrier_register(void)
{
	if (sp_fault_should_fail(SP_FAULT_MEMBARRIER)) {
		errno = EINVAL;
		return -1;
	}
	return (int)syscall(__NR_membarrier,
			    MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ, 0, 0);
}

int sp_os_membarrier_fence(int cpu)
{
	if (cpu >= 0)
		return (int)syscall(__NR_membarrier,
				    MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ,
				    MEMBARRIER_CMD_FLAG_CPU, cpu);
	return (int)syscall(__NR_membarrier,
			    MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, 0, 0);
}

bool sp_os_random(void *buf, size_t len)
{
	return getrandom(buf, len, GRND_NONBLOCK) == (ssize_t)len;
}
