// SPDX-License-Identifier: MIT
/*
 * os/proc.c - the process and its threads (os/os.h): who they are, what
 * /proc says about them, how they wait.  /proc is read with open() and
 * read() into a stack buffer: nothing here allocates.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define SP_HAVE_SINGLE_THREADED 1
#endif

#include "os/os.h"

void sp_os_name_thread(const char *name)
{
	(void)prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}

bool sp_os_in_handler_maybe(void)
{
	stack_t ss;

	/* on the alternate stack: in a handler, whatever its flags */
	return sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK);
}

bool sp_os_single_threaded(void)
{
#ifdef SP_HAVE_SINGLE_THREADED
	return __libc_single_threaded;
#else
	return false;
#endif
}

bool sp_os_alone(void)
{
	char buf[1024], *p;
	long threads;

	if (sp_os_read_text("/proc/self/stat", buf, sizeof(buf)) < 0)
		return false;
	/* "pid (comm) state ...": comm may hold spaces and parentheses */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return false;
	if (p[2] != 'Z')
		return false;			/* the main thread runs */
	/* field 20, num_threads: 17 fields after the state */
	p += 3;
	for (int f = 0; f < 17 && p; f++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (!p)
		return false;
	threads = strtol(p, NULL, 10);
	/* the exited main thread is still counted */
	return threads > 0 && threads <= 2;
}

int sp_os_pid(void)
{
	return (int)getpid();
}

int sp_os_tid(void)
{
	return (int)gettid();
}

unsigned int sp_os_euid(void)
{
	return (unsigned int)geteuid();
}

unsigned int sp_os_uid(void)
{
	return (unsigned int)getuid();
}

bool sp_os_pid_gone(long pid)
{
	return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

void sp_os_yield(void)
{
	sched_yield();
}

void sp_os_once(int *state, void (*fn)(void))
{
	int s = __atomic_load_n(state, __ATOMIC_ACQUIRE);

	if (likely(s == 2))
		return;
	s = 0;
	if (__atomic_compare_exchange_n(state, &s, 1, false, __ATOMIC_ACQUIRE,
					__ATOMIC_RELAXED)) {
		fn();
		__atomic_store_n(state, 2, __ATOMIC_RELEASE);
		return;
	}
	while (__atomic_load_n(state, __ATOMIC_ACQUIRE) != 2)
		sched_yield();
}

void sp_os_sleep_ms(unsigned long ms)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ms / 1000),
		.tv_nsec = (long)(ms % 1000) * 1000000L,
	};

	nanosleep(&ts, NULL);
}

uint64_t sp_os_resident_bytes(void)
{
	char buf[128];
	unsigned long long size, res;

	if (sp_os_read_text("/proc/self/statm", buf, sizeof(buf)) < 0)
		return 0;
	if (sscanf(buf, "%llu %llu", &size, &res) != 2)
		return 0;
	return (uint64_t)res * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* The unsigned number at the start of file @path, or 0. */
static uint64_t sp_read_number(const char *path)
{
	char buf[32];

	if (sp_os_read_text(path, buf, sizeof(buf)) < 0)
		return 0;
	return strtoull(buf, NULL, 10);	/* "max" reads as 0: no limit */
}

/*
 * The limit of the memory cgroup at @path below @mount (file @file), else of
 * the controller's root (a cgroup namespace shows the root only); 0 for none.
 */
static uint64_t sp_cgroup_limit(const char *mount, const char *path,
				size_t plen, const char *file)
{
	char name[512];
	uint64_t v;
	int len = snprintf(name, sizeof(name), "%s%.*s/%s", mount, (int)plen,
			   path, file);

	if (len > 0 && (size_t)len < sizeof(name) && (v = sp_read_number(name)))
		return v;
	snprintf(name, sizeof(name), "%s/%s", mount, file);
	return sp_read_number(name);
}

uint64_t sp_os_memory_bytes(void)
{
	char buf[2048], *line, *end;
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	uint64_t mem = pages > 0 && psize > 0 ? (uint64_t)pages * psize : 0;

	if (sp_os_read_text("/proc/self/cgroup", buf, sizeof(buf)) < 0)
		return mem;
	/* "0::/path" (v2) or "N:memory:/path" (v1), one line each */
	for (line = buf; *line; line = *end ? end + 1 : end) {
		const char *path;
		uint64_t lim = 0;

		end = strchr(line, '\n');
		if (!end)
			end = line + strlen(line);
		if (!strncmp(line, "0::", 3)) {
			path = line + 3;
			lim = sp_cgroup_limit("/sys/fs/cgroup", path,
					      (size_t)(end - path),
					      "memory.max");
		} else if ((path = strstr(line, ":memory:")) && path < end) {
			path += 8;
			lim = sp_cgroup_limit("/sys/fs/cgroup/memory", path,
					      (size_t)(end - path),
					      "memory.limit_in_bytes");
		}
		if (lim && (!mem || lim < mem))
			mem = lim;
	}
	return mem;
}

uint64_t sp_os_peak_resident_bytes(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (uint64_t)ru.ru_maxrss << 10;	/* in KiB on Linux */
}
