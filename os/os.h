/* SPDX-License-Identifier: MIT */
/*
 * os/os.h - the OS door: the only calls into the kernel (private).
 *
 * Every system call the library makes goes through here: for memory
 * (mmap, mprotect, madvise, mbind), shared memory (shm_open, ftruncate,
 * the /dev/shm walk of the live export), files (the statistics file,
 * write, close), the process (its ids, kill, sched_yield, nanosleep,
 * /proc, getrusage), random bytes (getrandom) and the per-CPU layer
 * (rseq, membarrier), so fault injection (os/faultpoint.h) and error
 * translation happen in one place, as in mimalloc's prim layer.  What the
 * OS says about CPUs and nodes is in os/cpu.h.  Memory failures return
 * NULL or -1 with errno ENOMEM unless a function says otherwise.
 *
 * What the door does not cover, exactly:
 *   - internal/report.c's write(2) to fd 2: internal/ comes before os/
 *     (os/ itself reports through it);
 *   - clock_gettime and sched_getcpu: vDSO reads, called where needed;
 *   - the C library's own layers: threads and their locks, condition
 *     variables and signal masks (pthread_*), stdio on a stream the caller
 *     gave (segpool_stats_print() and friends);
 *   - liburcu, called from rcu/.
 * tools/check/layout.sh checks it in the built objects (nm -u against the
 * C library's system call wrappers).
 */
#ifndef SP_OS_OS_H
#define SP_OS_OS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include "internal/compiler.h"

/* A transparent huge page of x86-64 (a PMD mapping): the one segpool's
 * regions are built for (sp_os_thp_size() says the kernel's). */
#define SP_OS_HUGE_SIZE		(2UL << 20)

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
/*
 * Guard pages (guard/pool.c): open makes reserved pages read-write (0 or
 * -1, ENOMEM); close gives their memory back and makes them inaccessible.
 * Both are one system call each (mprotect, madvise): safe in a signal
 * handler, and no fault point fails them.
 */
SP_INTERNAL int sp_os_guard_open(void *addr, size_t size);
SP_INTERNAL void sp_os_guard_close(void *addr, size_t size);
/*
 * sp_os_fault_handler() - install @fn as the SA_SIGINFO handler of SIGSEGV
 * (on the alternate stack when there is one), the previous action into
 * *@old; 0 or -1 (errno).  sp_os_fault_restore() puts @old back.
 */
struct sigaction;
SP_INTERNAL int sp_os_fault_handler(void (*fn)(int, void *, void *),
				    struct sigaction *old);
SP_INTERNAL void sp_os_fault_restore(const struct sigaction *old);
/* sp_os_fault_default() - SIGSEGV back to its default action, and sent to
 * the caller again when @resend (a fault the kernel would not repeat). */
SP_INTERNAL void sp_os_fault_default(bool resend);
/* Bind pages to kernel node @node (MPOL_BIND); 0 or -1 (ENOMEM). */
SP_INTERNAL int sp_os_bind(void *addr, size_t size, int node);
/* Give the pages' memory back to the OS; the range stays mapped, reads zero. */
SP_INTERNAL void sp_os_release(void *addr, size_t size);
/*
 * sp_os_zero() - make the private anonymous range of whole pages at
 * @addr (page-aligned, @size a multiple of the page) read zero while
 * touching only the pages that are resident: those are cleared,
 * the others (never touched, or swapped out) are discarded and read zero
 * when first touched.  A large block that comes back from a dirty free
 * block is often mostly pages nobody touched; clearing it whole would
 * fault every one of them in.
 */
SP_INTERNAL void sp_os_zero(void *addr, size_t size);
/*
 * sp_os_clear() - make the range of whole pages at @addr read zero at the
 * least cost, the one rule for memory that may hold old bytes (a large
 * calloc() block, a zeroed cache's slab on a dirty block): below
 * SP_OS_ZERO_PROBE memset(), from it sp_os_zero().  Its mincore() call
 * costs about 0.5 us, a tenth at most of clearing a 128 KiB range whose
 * pages are all resident, while a range mostly untouched is cleared
 * several times faster and stays out of memory.
 */
#define SP_OS_ZERO_PROBE	(128UL << 10)

static inline void sp_os_clear(void *addr, size_t size)
{
	if (size < SP_OS_ZERO_PROBE)
		memset(addr, 0, size);
	else
		sp_os_zero(addr, size);
}
/*
 * sp_os_move_out() - move the pages of [@addr, + @old) (within one mapping)
 * to a new mapping of @size bytes (>= @old) of their own, no copy: mremap
 * to a fresh place.  The range left behind is unmapped; sp_os_refill()
 * maps it again.  Fault point SP_FAULT_MMAP.
 * Return: the new mapping, or NULL with errno ENOMEM (nothing changed).
 */
SP_INTERNAL void *sp_os_move_out(void *addr, size_t old, size_t size);
/*
 * sp_os_refill() - map [@addr, + @size) again, read-write, empty, and when
 * @huge is not 0 advise it as sp_os_advise_huge(@huge > 0) does; 0 or -1.
 */
SP_INTERNAL int sp_os_refill(void *addr, size_t size, int huge);
/*
 * sp_os_reserve_like() - @size bytes of inaccessible address space at the
 * same offset as @like within a huge page (SP_OS_HUGE_SIZE), so that pages
 * mremap moves there keep their huge mappings.
 * Return: its address, or NULL with errno ENOMEM.
 */
SP_INTERNAL void *sp_os_reserve_like(const void *like, size_t size);
/*
 * sp_os_remap() - grow or shrink the mapping @addr of @old bytes to @size,
 * moving it if need be; with @keep_offset a move keeps the mapping's offset
 * within a huge page (sp_os_reserve_like()), so its huge pages stay whole.
 * Return: its new address, or NULL with errno set.
 */
SP_INTERNAL void *sp_os_remap(void *addr, size_t old, size_t size,
			      bool keep_offset);
/*
 * sp_os_map_meta() - @size bytes (a multiple of the page size) of
 * zero-filled read-write memory for the library's own bookkeeping outside
 * the space (per-CPU blocks, their nil slots, the export's stage): backed
 * on demand but accounted at once (no MAP_NORESERVE), page-aligned.
 * Fault point SP_FAULT_META.  Return: it, or NULL with errno ENOMEM.
 */
SP_INTERNAL void *sp_os_map_meta(size_t size);
/*
 * sp_os_prefault() - fault in the pages holding [@addr, @addr + @size) of
 * private read-write memory now, writable, so that the stores to come
 * take no page fault: MADV_POPULATE_WRITE (Linux 5.14), which leaves the
 * contents as they are, else an atomic add of 0 to a byte of each page.
 * The pages at either end are taken whole.  Best effort.
 */
SP_INTERNAL void sp_os_prefault(void *addr, size_t size);

/*
 * sp_os_map_packed() - @size bytes of zero-filled read-write bookkeeping
 * that is never given back, aligned to @align (a power of two up to the
 * page size; at least a cache line) and padded to whole cache lines,
 * carved with others from a shared chunk (accounted as sp_os_map_meta()'s):
 * for blocks of the library's own caches, which live as long as the
 * process.  Larger blocks get a mapping of their own.  Never unmap or
 * protect one.  Fault point SP_FAULT_META.  Return: it, or NULL with errno
 * ENOMEM.
 */
SP_INTERNAL void *sp_os_map_packed(size_t size, size_t align);
/*
 * sp_os_map_packed_hot() - as sp_os_map_packed(), from chunks of their own:
 * for the blocks every allocation and free writes (the per-CPU slots of
 * the library's own caches), so that they share as few pages as they fit
 * in rather than one page with each cache's other bookkeeping.  After a
 * fork() a process pays a page fault (and a copy) for each page it writes
 * again; a program's calls through two dozen size classes write their
 * slots' pages and no other page of their bookkeeping.
 */
SP_INTERNAL void *sp_os_map_packed_hot(size_t size, size_t align);

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
/*
 * The kernel's huge page in bytes, what transparent_hugepage/hpage_pmd_size
 * says: 2 MiB on x86-64 and 4 KiB-page arm64, 32 MiB with 16 KiB pages,
 * 512 MiB with 64 KiB ones.  Computed, not read (os/thp.c).
 */
SP_INTERNAL size_t sp_os_thp_size(void);
/* Bytes of [@addr, @addr + @size) backed by huge pages (AnonHugePages of
 * /proc/self/smaps); 0 when unreadable. */
SP_INTERNAL uint64_t sp_os_huge_bytes(const void *addr, size_t size);

/* --- the process (os/proc.c) --- */
/* Whether the main thread has exited (pthread_exit()) and the caller is the
 * only thread left: a helper thread that must not keep the process alive
 * then returns. */
SP_INTERNAL bool sp_os_alone(void);
/*
 * Whether the process has never had a second thread (glibc's
 * __libc_single_threaded, 2.32 and later, which the first pthread_create()
 * clears for good; false where the C library does not say).  A fork
 * handler that reads true knows that no lock can be held by a thread the
 * child will not have.
 */
SP_INTERNAL bool sp_os_single_threaded(void);
/*
 * Whether the calling thread is running a signal handler on its alternate
 * signal stack (SS_ONSTACK).  A handler on the thread's own stack is not
 * told apart: a blocked signal that has a handler would say "maybe", but
 * a thread may block such a signal for good (a worker leaving SIGINT to
 * the main thread), and treating that as a handler put the decay
 * thread's start off for ever.  A system call: for a step taken once.
 */
SP_INTERNAL bool sp_os_in_handler_maybe(void);
/*
 * Name the calling thread (up to 15 bytes) with prctl(), which touches no
 * file: pthread_setname_np() on another thread writes /proc/self/task/TID/
 * comm, and the /proc entries that leaves behind make the parent's wait4()
 * walk them when the process is reaped (a third of a short process's
 * exit, measured under the preload).
 */
SP_INTERNAL void sp_os_name_thread(const char *name);
/* This process's id, the calling thread's, and the effective user id. */
SP_INTERNAL int sp_os_pid(void);
SP_INTERNAL int sp_os_tid(void);
SP_INTERNAL unsigned int sp_os_euid(void);
SP_INTERNAL unsigned int sp_os_uid(void);
/* Whether no process @pid exists (kill(@pid, 0) fails with ESRCH). */
SP_INTERNAL bool sp_os_pid_gone(long pid);
/* Let another thread run (sched_yield), or sleep @ms milliseconds. */
SP_INTERNAL void sp_os_yield(void);
/*
 * sp_os_once() - run @fn once, whoever calls first; the others wait for it
 * (yielding).  @state starts 0 and is 2 once @fn returned.  For what runs
 * at start-up: pthread_once() would do, but wakes its futex after every
 * first call, a system call each (about 1.3 us here) in every process.
 */
SP_INTERNAL void sp_os_once(int *state, void (*fn)(void));
SP_INTERNAL void sp_os_sleep_ms(unsigned long ms);
/* Resident bytes now (/proc/self/statm), and the peak (getrusage); 0 when
 * unreadable. */
SP_INTERNAL uint64_t sp_os_resident_bytes(void);
SP_INTERNAL uint64_t sp_os_peak_resident_bytes(void);
/*
 * sp_os_memory_bytes() - the memory this process may fill: the machine's
 * physical memory, or its memory cgroup's limit when that is lower (v2
 * memory.max, v1 memory.limit_in_bytes); 0 when unreadable.  Reads into
 * stack buffers: nothing allocates.
 */
SP_INTERNAL uint64_t sp_os_memory_bytes(void);
/* sp_os_random() - fill @buf with @len random bytes (getrandom(2), never
 * blocking, through a pool that one call fills); false when the kernel had
 * none to give (os/sys.c). */
SP_INTERNAL bool sp_os_random(void *buf, size_t len);
/* sp_os_random_fork_child() - a fork child forgets the pool's bytes. */
SP_INTERNAL void sp_os_random_fork_child(void);

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
 * sp_os_shm_each() - call @fn(name, @arg) for each shared-memory object of
 * the system (the entries of /dev/shm, names without the leading '/').
 */
SP_INTERNAL void sp_os_shm_each(void (*fn)(const char *name, void *arg),
				void *arg);
/*
 * sp_os_shm_open_own() - open the shared-memory object @name (an entry of
 * sp_os_shm_each()) read-only, never through a link nor blocking, and
 * fstat() it into *@st.  Return: its descriptor, or -1 (errno EPERM when
 * it is not a regular file of this user).
 */
SP_INTERNAL int sp_os_shm_open_own(const char *name, struct stat *st);

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
/* sp_os_write_all() - all @len bytes of @buf to @fd (EINTR retried);
 * 0 or -1. */
SP_INTERNAL int sp_os_write_all(int fd, const void *buf, size_t len);
/* sp_os_dup_stderr() - a close-on-exec copy of fd 2 (>= 3), or -1. */
SP_INTERNAL int sp_os_dup_stderr(void);
SP_INTERNAL void sp_os_close(int fd);
/* sp_os_open_read() - open @path read-only, close-on-exec; fd or -1. */
SP_INTERNAL int sp_os_open_read(const char *path);
/* sp_os_read() - read(2) with EINTR retried: bytes read, 0 at the end, or
 * -1 with errno. */
SP_INTERNAL ssize_t sp_os_read(int fd, void *buf, size_t len);
/*
 * sp_os_early_env() - whether the environment the process was started
 * with holds an entry that begins with @prefix ("NAME=") and goes on
 * past it (os/early.c).  Read from /proc/self/environ by system calls
 * made without the C library, so that an IFUNC resolver may call it while
 * the dynamic linker is still relocating.  False when /proc cannot be
 * read.  @prefix must be a string literal (reached PC-relative).
 */
SP_INTERNAL bool sp_os_early_env(const char *prefix);

/*
 * sp_os_read_text() - read the start of the small file @path (/proc, /sys)
 * into @buf of @len bytes, NUL-terminated: the bytes read (at least 1), or
 * -1 when it cannot be opened or is empty.  Nothing allocates.
 */
SP_INTERNAL ssize_t sp_os_read_text(const char *path, char *buf, size_t len);
/* sp_os_fstat() - fstat(2) of @fd into *@st; 0 or -1 with errno. */
SP_INTERNAL int sp_os_fstat(int fd, struct stat *st);
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
