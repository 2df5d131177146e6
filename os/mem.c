// SPDX-License-Identifier: MIT
/*
 * os/mem.c - memory mappings behind the OS door (os/os.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/mempolicy.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "os/cpu.h"
#include "os/faultpoint.h"
#include "os/os.h"

/*
 * mmap @size bytes aligned to @align by over-mapping and trimming; the
 * kernel aligns to its own page, which may be smaller than segpool's.
 */
static void *sp_os_mmap_aligned(size_t size, size_t align, int prot, int flags)
{
	size_t len = align > sp_os_kernel_page() ? size + align : size;
	char *p, *a;

	if (sp_fault_should_fail(SP_FAULT_MMAP) || len < size) {
		errno = ENOMEM;
		return NULL;
	}
	p = mmap(NULL, len, prot, flags | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		errno = ENOMEM;
		return NULL;
	}
	if (len == size)
		return p;
	a = (char *)SP_ALIGN((uintptr_t)p, align);
	if (a > p)
		munmap(p, (size_t)(a - p));
	if (p + len > a + size)
		munmap(a + size, (size_t)(p + len - (a + size)));
	return a;
}

void *sp_os_reserve(size_t size, size_t align)
{
	return sp_os_mmap_aligned(size, align, PROT_NONE, MAP_NORESERVE);
}

void *sp_os_map(size_t size, size_t align)
{
	return sp_os_mmap_aligned(size, align, PROT_READ | PROT_WRITE,
				  MAP_NORESERVE);
}

void sp_os_unmap(void *addr, size_t size)
{
	munmap(addr, size);
}

void sp_os_protect_ro(void *addr, size_t size)
{
	(void)mprotect(addr, size, PROT_READ);
}

int sp_os_commit(void *addr, size_t size)
{
	if (sp_fault_should_fail(SP_FAULT_COMMIT) ||
	    mprotect(addr, size, PROT_READ | PROT_WRITE)) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

int sp_os_guard_open(void *addr, size_t size)
{
	if (mprotect(addr, size, PROT_READ | PROT_WRITE)) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void sp_os_guard_close(void *addr, size_t size)
{
	(void)madvise(addr, size, MADV_DONTNEED);
	(void)mprotect(addr, size, PROT_NONE);
}

int sp_os_fault_handler(void (*fn)(int, void *, void *), struct sigaction *old)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = (void (*)(int, siginfo_t *, void *))fn;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGSEGV, &sa, old);
}

void sp_os_fault_restore(const struct sigaction *old)
{
	(void)sigaction(SIGSEGV, old, NULL);
}

void sp_os_fault_default(bool resend)
{
	signal(SIGSEGV, SIG_DFL);
	if (resend)
		raise(SIGSEGV);
}

void sp_os_decommit(void *addr, size_t size)
{
	mmap(addr, size, PROT_NONE,
	     MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
}

int sp_os_bind(void *addr, size_t size, int node)
{
	unsigned long mask[(SP_MAX_NODE_BITS + 63) / 64] = { 0 };

	if (node < 0 || node >= SP_MAX_NODE_BITS) {
		errno = EINVAL;
		return -1;
	}
	mask[node / 64] = 1UL << (node % 64);
	if (sp_fault_should_fail(SP_FAULT_MBIND) ||
	    syscall(SYS_mbind, addr, (unsigned long)size,
		    (unsigned long)MPOL_BIND, mask,
		    (unsigned long)SP_MAX_NODE_BITS + 1, 0UL)) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void sp_os_release(void *addr, size_t size)
{
	madvise(addr, size, MADV_DONTNEED);
}

/* Pages whose residency one mincore() call reads (a stack vector). */
#define SP_OS_ZERO_BATCH	256U

/* Clear or discard pages [@from, @to) of @p, all resident or all not. */
static void sp_os_zero_run(char *p, size_t from, size_t to, bool resident)
{
	char *q = p + (from << SP_PAGE_SHIFT);
	size_t len = (to - from) << SP_PAGE_SHIFT;

	if (from == to)
		return;
	/* a discard the kernel refuses (locked pages): cleared instead */
	if (resident || madvise(q, len, MADV_DONTNEED))
		memset(q, 0, len);
}

void sp_os_zero(void *addr, size_t size)
{
	unsigned char vec[SP_OS_ZERO_BATCH];
	size_t pages = size >> SP_PAGE_SHIFT;
	char *p = addr;

	for (size_t done = 0; done < pages;) {
		size_t n = SP_MIN(pages - done, (size_t)SP_OS_ZERO_BATCH);
		char *q = p + (done << SP_PAGE_SHIFT);
		size_t start = 0;

		/* residency unknown (mincore() failed): clear it all */
		if (mincore(q, n << SP_PAGE_SHIFT, vec)) {
			memset(q, 0, n << SP_PAGE_SHIFT);
			done += n;
			continue;
		}
		for (size_t i = 1; i <= n; i++)
			if (i == n || (vec[i] & 1) != (vec[start] & 1)) {
				sp_os_zero_run(q, start, i, vec[start] & 1);
				start = i;
			}
		done += n;
	}
}

/*
 * A place of @size bytes that nothing else can take meanwhile (PROT_NONE),
 * at the same offset as @like within a transparent huge page: pages that
 * mremap moves there keep their huge mappings whole, where a place at any
 * other offset would split every one of them (and the 4 KiB pages they
 * leave behind are no huge page again once freed).
 */
void *sp_os_reserve_like(const void *like, size_t size)
{
	size_t len = size + SP_OS_HUGE_SIZE;
	uintptr_t off = (uintptr_t)like & (SP_OS_HUGE_SIZE - 1);
	char *p, *a;

	if (len < size) {
		errno = ENOMEM;
		return NULL;
	}
	p = mmap(NULL, len, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		errno = ENOMEM;
		return NULL;
	}
	a = (char *)(SP_ALIGN((uintptr_t)p, SP_OS_HUGE_SIZE) + off);
	if (a - SP_OS_HUGE_SIZE >= p)
		a -= SP_OS_HUGE_SIZE;
	if (a > p)
		munmap(p, (size_t)(a - p));
	if (p + len > a + size)
		munmap(a + size, (size_t)(p + len - (a + size)));
	return a;
}

/* Move [@addr, + @old) to @size bytes at its own huge-page offset. */
static void *sp_os_move_like(void *addr, size_t old, size_t size)
{
	void *dst = sp_os_reserve_like(addr, size), *p;

	if (!dst)
		return NULL;
	p = mremap(addr, old, size, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	if (p == MAP_FAILED) {
		munmap(dst, size);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

void *sp_os_move_out(void *addr, size_t old, size_t size)
{
	if (sp_fault_should_fail(SP_FAULT_MMAP)) {
		errno = ENOMEM;
		return NULL;
	}
	return sp_os_move_like(addr, old, size);
}

void *sp_os_remap(void *addr, size_t old, size_t size, bool keep_offset)
{
	void *p;

	if (!keep_offset || size <= old) {
		p = mremap(addr, old, size, MREMAP_MAYMOVE);
		return p == MAP_FAILED ? NULL : p;
	}
	/* in place if the pages after it are free, else at the same offset */
	p = mremap(addr, old, size, 0);
	return p != MAP_FAILED ? p : sp_os_move_like(addr, old, size);
}

int sp_os_refill(void *addr, size_t size, int huge)
{
	void *p = mmap(addr, size, PROT_READ | PROT_WRITE,
		       MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);

	if (p == MAP_FAILED)
		return -1;
	if (huge)
		sp_os_advise_huge(addr, size, huge > 0);
	return 0;
}

void *sp_os_map_meta(size_t size)
{
	void *p;

	if (sp_fault_should_fail(SP_FAULT_META)) {
		errno = ENOMEM;
		return NULL;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23	/* Linux 5.14 */
#endif

void sp_os_prefault(void *addr, size_t size)
{
	uintptr_t lo = SP_ALIGN_DOWN((uintptr_t)addr, SP_PAGE_SIZE);
	uintptr_t hi = SP_ALIGN((uintptr_t)addr + size, SP_PAGE_SIZE);

	if (!size || !madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE))
		return;
	/* an older kernel: a write to each page that changes nothing */
	for (uintptr_t p = lo; p < hi; p += SP_PAGE_SIZE)
		__atomic_fetch_add((char *)(p > (uintptr_t)addr ? p :
				   (uintptr_t)addr), 0, __ATOMIC_RELAXED);
}

/*
 * Packed bookkeeping: blocks that live as long as the process (the control
 * blocks of the library's own caches and their per-CPU blocks: some 90 of
 * them at start-up, each well under a page) are carved from shared chunks
 * rather than mapped a page each, so that start-up makes a few mappings and
 * touches a few pages instead of 90 of each.  A bump pointer in one word,
 * moved by compare-and-swap: no lock, so a signal handler or a second
 * thread may carve at any time.  The chunk is aligned to its size, so the
 * word alone says which chunk it is in; a chunk that cannot hold the next
 * block is left with its tail unused (never touched, never backed).
 */
#define SP_PACKED_CHUNK		(256UL << 10)

/* next free byte of each kind's chunk; 0: no chunk yet */
static uintptr_t sp_packed_cur;		/* sp_os_map_packed() */
static uintptr_t sp_packed_hot_cur;	/* sp_os_map_packed_hot() */

/*
 * A chunk aligned to its size: twice its size mapped, the aligned half
 * kept.  The rest stays mapped, never touched (so never backed), rather
 * than trimmed: chunks live as long as the process, and the two munmap()
 * calls were two of the few dozen system calls every process under the
 * preload makes at start-up.
 */
static uintptr_t sp_packed_map(void)
{
	char *p;

	if (sp_fault_should_fail(SP_FAULT_MMAP)) {
		errno = ENOMEM;
		return 0;
	}
	p = mmap(NULL, 2 * SP_PACKED_CHUNK, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		errno = ENOMEM;
		return 0;
	}
	return SP_ALIGN((uintptr_t)p, SP_PACKED_CHUNK);
}

/* A block of @size carved from the chunks that *@curp walks. */
static void *sp_packed_carve(uintptr_t *curp, size_t size, size_t align)
{
	uintptr_t cur, start, end, chunk;

	if (align < SP_CACHE_LINE)
		align = SP_CACHE_LINE;
	size = SP_ALIGN(size, SP_CACHE_LINE);
	if (!SP_IS_POW2(align) || align > SP_PAGE_SIZE ||
	    size > SP_PACKED_CHUNK / 4)
		return sp_os_map_meta(SP_ALIGN(size, SP_PAGE_SIZE));
	if (sp_fault_should_fail(SP_FAULT_META)) {
		errno = ENOMEM;
		return NULL;
	}
	cur = __atomic_load_n(curp, __ATOMIC_ACQUIRE);
	for (;;) {
		start = SP_ALIGN(cur, align);
		end = start + size;
		if (cur && end <= SP_ALIGN(cur, SP_PACKED_CHUNK) &&
		    (cur & (SP_PACKED_CHUNK - 1))) {
			if (__atomic_compare_exchange_n(curp, &cur,
							end, false,
							__ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE))
				return (void *)start;
			continue;	/* another carver moved it: again */
		}
		/* a fresh chunk; the block at its start */
		chunk = sp_packed_map();
		if (!chunk)
			return NULL;
		if (__atomic_compare_exchange_n(curp, &cur,
						chunk + size, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return (void *)chunk;
		/* another chunk came first: use it, give this one back */
		munmap((void *)chunk, SP_PACKED_CHUNK);
	}
}

void *sp_os_map_packed(size_t size, size_t align)
{
	return sp_packed_carve(&sp_packed_cur, size, align);
}

void *sp_os_map_packed_hot(size_t size, size_t align)
{
	return sp_packed_carve(&sp_packed_hot_cur, size, align);
}

size_t sp_os_as_room(void)
{
	struct rlimit rl;
	char buf[64];
	unsigned long long pages;
	ssize_t n;
	int fd;

	if (getrlimit(RLIMIT_AS, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return SIZE_MAX;
	/* the first field of statm: the address space in use, in pages */
	fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return (size_t)rl.rlim_cur / 2;	/* a guess on the safe side */
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return (size_t)rl.rlim_cur / 2;
	buf[n] = '\0';
	pages = strtoull(buf, NULL, 10);
	if (pages * SP_PAGE_SIZE >= rl.rlim_cur)
		return 0;
	return (size_t)(rl.rlim_cur - pages * SP_PAGE_SIZE);
}
