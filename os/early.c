// SPDX-License-Identifier: MIT
/*
 * os/early.c - what the process's environment held at exec, read before
 * anything else is ready (os/os.h: sp_os_early_env()).
 *
 * An IFUNC resolver runs while the dynamic linker relocates, in an order
 * that is the linker's (this object's GOT may not be filled yet), and
 * before the C library is initialised.  So nothing here may touch the
 * GOT, call the C library, read the stack protector's canary, or be
 * instrumented by a sanitizer: the system calls are made with inline
 * assembly, and every datum is on the stack or reached PC-relative.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <sys/syscall.h>

#include "os/os.h"

#define SP_EARLY_ATTRS							\
	__attribute__((no_stack_protector, no_sanitize_address,	\
		       no_sanitize("undefined", "thread"), noinline))

#if defined(__x86_64__)
SP_EARLY_ATTRS static long sp_early_syscall3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return ret;
}
#elif defined(__aarch64__)
SP_EARLY_ATTRS static long sp_early_syscall3(long nr, long a, long b, long c)
{
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;

	__asm__ volatile("svc #0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2)
			 : "memory");
	return x0;
}
#else
SP_EARLY_ATTRS static long sp_early_syscall3(long nr, long a, long b, long c)
{
	(void)nr, (void)a, (void)b, (void)c;
	return -38;	/* -ENOSYS: the caller takes "not set" */
}
#endif

SP_EARLY_ATTRS bool sp_os_early_env(const char *prefix)
{
	static const char path[] = "/proc/self/environ";
	char buf[1024];
	unsigned long pos = 0;	/* bytes of the current entry seen */
	bool match = true;	/* the entry so far equals @prefix */
	bool found = false;
	long fd, n;

	fd = sp_early_syscall3(SYS_openat, AT_FDCWD, (long)path,
			       O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	while (!found && (n = sp_early_syscall3(SYS_read, fd, (long)buf,
						(long)sizeof(buf))) > 0) {
		for (long i = 0; i < n; i++) {
			char ch = buf[i];

			if (ch == '\0') {
				pos = 0;
				match = true;
				continue;
			}
			if (match && prefix[pos] == '\0') {
				/* the prefix, then a value that is not empty */
				found = true;
				break;
			}
			if (match && prefix[pos] != ch)
				match = false;
			pos++;
		}
	}
	(void)sp_early_syscall3(SYS_close, fd, 0, 0);
	return found;
}
