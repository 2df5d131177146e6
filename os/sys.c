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
#include <string.h>
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
			    MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ,
			    0, 0);
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

/*
 * Random bytes come from a pool that one getrandom() call fills: start-up
 * asks for a word per cache (its hardening keys, slab/harden.c), some 50
 * calls of a few microseconds each in every process otherwise.  Bytes are
 * handed out once and wiped from the pool as they go.  The pool is taken
 * with a try-lock, never waited for: a caller that finds it busy (another
 * thread, or a signal handler that interrupted the holder) and every
 * request too large for it go to the kernel directly.  A fork child
 * forgets what is left (sp_os_random_fork_child()), so that parent and
 * child never draw the same bytes.
 */
#define SP_RANDOM_POOL	256

static struct {
	unsigned char bytes[SP_RANDOM_POOL];
	size_t left;			/* unused bytes, at the start */
	bool busy;			/* the try-lock */
} sp_random_pool;

static bool sp_os_random_direct(void *buf, size_t len)
{
	return getrandom(buf, len, GRND_NONBLOCK) == (ssize_t)len;
}

bool sp_os_random(void *buf, size_t len)
{
	bool ok = false;

	if (len > SP_RANDOM_POOL / 4 ||
	    __atomic_exchange_n(&sp_random_pool.busy, true, __ATOMIC_ACQUIRE))
		return sp_os_random_direct(buf, len);
	if (sp_random_pool.left < len &&
	    sp_os_random_direct(sp_random_pool.bytes, SP_RANDOM_POOL))
		sp_random_pool.left = SP_RANDOM_POOL;
	if (sp_random_pool.left >= len) {
		unsigned char *p = sp_random_pool.bytes +
				   (sp_random_pool.left -= len);

		memcpy(buf, p, len);
		explicit_bzero(p, len);
		ok = true;
	}
	__atomic_store_n(&sp_random_pool.busy, false, __ATOMIC_RELEASE);
	return ok || sp_os_random_direct(buf, len);
}

void sp_os_random_fork_child(void)
{
	explicit_bzero(sp_random_pool.bytes, sizeof(sp_random_pool.bytes));
	sp_random_pool.left = 0;
	sp_random_pool.busy = false;
}
