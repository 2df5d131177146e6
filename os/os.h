/* SPDX-License-Identifier: MIT */
/*
 * os/os.h - the OS door: the only calls into the kernel (private).
 *
 * Every system call the library makes for memory (mmap, mprotect, madvise,
 * mbind), shared memory (shm_open, ftruncate) and the per-CPU layer (rseq,
 * membarrier) goes through here, so fault injection (os/faultpoint.h) and
 * error translation happen in one place, as in mimalloc's prim layer.
 * What the OS says about CPUs and nodes is in os/cpu.h.  Memory failures
 * return NULL or -1 with errno ENOMEM unless a function says otherwise.
 */
#ifndef SP_OS_OS_H
#define SP_OS_OS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "internal/compiler.h"

/* --- memory mappings (os/mem.c) --- */

#define SP_MAX_NODE_BITS 1024	/* node ids sp_os_bind() accepts */

/* Reserve address space: PROT_NONE, MAP_NORESERVE, aligned to @align. */
SP_INTERNAL void *sp_os_reserve(size_t size, size_t align);
/* Map zero-filled read-write memory (lazily backed), aligned to @align. */
SP_INTERNAL void *sp_os_map(size_t size, size_t align);
SP_INTERNAL void sp_os_unmap(void *addr, size_t size);
/* Make mapped pages read-only (best effort: a failure leaves them as they
 * were). */
SP_INTERNAL void sp_os_protect_ro(void *addr, size_t size);
/* Make reserved pages accessible; 0 or -1 (ENOMEM). */
SP_INTERNAL int sp_os_commit(void *addr, size_t size);
/* Undo sp_os_commit (used to roll back when a later step fails). */
SP_INTERNAL void sp_os_decommit(void *addr, size_t size);
/* Bind pages to kernel node @node (MPOL_BIND); 0 or -1 (ENOMEM). */
SP_INTERNAL int sp_os_bind(void *addr, size_t size, int node);
/* Give the pages' memory back to the OS; the range stays mapped, reads zero. */
SP_INTERNAL void sp_os_release(void *addr, size_t size);
/*
 * sp_os_move_out() - move the pages of [@addr, + @old) (within one mapping)
 * to a new mapping of @size bytes (>= @old) of their own, no copy: mremap
 * to a fresh place.  The range left behind is unmapped; sp_os_refill()
 * maps it again.  Fault point SP_FAULT_MMAP.
 * Return: the new mapping, or NULL with errno ENOMEM (nothing changed).
 */
SP_INTERNAL void *sp_os_move_out(void *addr, size_t old, size_t size);
/* sp_os_refill() - map [@addr, + @size) again, read-write, empty; 0 or -1. */
SP_INTERNAL int sp_os_refill(void *addr, size_t size);
/*
 * sp_os_map_meta() - @size bytes (a multiple of the page size) of
 * zero-filled read-write memory for the library's own bookkeeping outside
 * the arena (per-CPU blocks, their nil slots, the export's stage): backed
 * on demand but accounted at once (no MAP_NORESERVE), page-aligned.
 * Fault point SP_FAULT_META.  Return: it, or NULL with errno ENOMEM.
 */
SP_INTERNAL void *sp_os_map_meta(size_t size);

/*
 * sp_os_as_room() - bytes of address space the soft RLIMIT_AS still
 * leaves this process, or SIZE_MAX when there is no limit.
 */
SP_INTERNAL size_t sp_os_as_room(void);
/* --- transparent huge pages (os/thp.c) --- */
/* Advise huge pages for the range (MADV_HUGEPAGE), or refuse them
 * (MADV_NOHUGEPAGE); best effort. */
SP_INTERNAL void sp_os_advise_huge(void *addr, size_t size, bool huge);
enum sp_os_thp {
	SP_OS_THP_UNKNOWN,	/* no THP in this kernel, or unreadable */
	SP_OS_THP_NEVER,
	SP_OS_THP_MADVISE,
	SP_OS_THP_ALWAYS,
};
/* The kernel's mode, /sys/kernel/mm/transparent_hugepage/enabled. */
SP_INTERNAL enum sp_os_thp sp_os_thp_mode(void);
/* Bytes of [@addr, @addr + @size) backed by huge pages (AnonHugePages of
 * /proc/self/smaps); 0 when unreadable. */
SP_INTERNAL uint64_t sp_os_huge_bytes(const void *addr, size_t size);

/* --- the process (os/proc.c) --- */
/* Whether the main thread has exited (pthread_exit()) and the caller is the
 * only thread left: a helper thread that must not keep the process alive
 * then returns. */
SP_INTERNAL bool sp_os_alone(void);

/* --- shared memory (os/shm.c) --- */
/*
 * sp_os_shm_create() - create the shared-memory object @name (mode 0600
 * whatever the umask, close-on-exec), replacing one of the same name (a
 * crashed process of our pid left it).  When what is in the way cannot be
 * removed (another user's, in the sticky /dev/shm), *@in_way is its
 * lstat() (st_mode 0 if even that failed) and the call fails with EEXIST.
 * Fault point SP_FAULT_SHM (fails with EMFILE).
 * Return: its descriptor, or -1 with errno set by shm_open().
 */
struct stat;
SP_INTERNAL int sp_os_shm_create(const char *name, struct stat *in_way);
/* sp_os_shm_unlink() - remove the shared-memory object @name (best effort). */
SP_INTERNAL void sp_os_shm_unlink(const char *name);
/* sp_os_shm_resize() - set @fd's length to @size; 0, or -1 with errno. */
SP_INTERNAL int sp_os_shm_resize(int fd, size_t size);
/*
 * sp_os_map_shared() - map @size bytes of the object @fd from its start,
 * read-write when @writable, else read-only.  Fault point
 * SP_FAULT_MAP_SHARED.  Return: the mapping, or NULL with errno set.
 */
SP_INTERNAL void *sp_os_map_shared(int fd, size_t size, bool writable);
/*
 * sp_os_remap() - grow or shrink the mapping @addr of @old bytes to @size,
 * moving it if need be.  Return: its new address, or NULL with errno set.
 */
SP_INTERNAL void *sp_os_remap(void *addr, size_t old, size_t size);

/* --- a file written for the user (os/file.c) --- */
/*
 * sp_os_user_file_begin() - start writing the file @path safely: refused
 * (-1, errno ELOOP, EINVAL or EPERM) when what stands at @path is a
 * symbolic link, not a regular file, or another user's; else a new file
 * beside it, made with O_EXCL under the name written into @tmp (@size
 * bytes).  Return: its descriptor, or -1 with errno set.
 */
SP_INTERNAL int sp_os_user_file_begin(const char *path, char *tmp,
				      size_t size);
/*
 * sp_os_user_file_commit() - close @fd and rename @tmp over @path (the
 * temporary file is removed if that fails).  Return: 0, or -1 with errno.
 */
SP_INTERNAL int sp_os_user_file_commit(int fd, const char *tmp,
				       const char *path);
/* sp_os_user_file_abort() - close @fd and remove @tmp: nothing written. */
SP_INTERNAL void sp_os_user_file_abort(int fd, const char *tmp);

/* --- the per-CPU layer's system calls (os/sys.c) --- */
/*
 * sp_os_rseq_register() - register @area (@len bytes, signature @sig) as
 * the calling thread's rseq area.  Fault point SP_FAULT_RSEQ (EPERM).
 * Return: 0, or -1 with errno set.
 */
SP_INTERNAL int sp_os_rseq_register(void *area, unsigned int len,
				    unsigned int sig);
/* sp_os_rseq_unregister() - undo sp_os_rseq_register() for this thread. */
SP_INTERNAL int sp_os_rseq_unregister(void *area, unsigned int len,
				      unsigned int sig);
/*
 * sp_os_membarrier_register() - register the process for expedited rseq
 * fences.  Fault point SP_FAULT_MEMBARRIER (EINVAL, as a kernel without
 * the command).  Return: 0, or -1 with errno set.
 */
SP_INTERNAL int sp_os_membarrier_register(void);
/*
 * sp_os_membarrier_fence() - restart every rseq critical section running
 * on CPU @cpu (>= 0, MEMBARRIER_CMD_FLAG_CPU), or on every CPU (-1).  No
 * fault point: a registered fence that fails is a bug the caller reports.
 * Return: 0, or -1 with errno set.
 */
SP_INTERNAL int sp_os_membarrier_fence(int cpu);

#endif /* SP_OS_OS_H */
