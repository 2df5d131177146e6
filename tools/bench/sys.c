// SPDX-License-Identifier: MIT
/*
 * tools/bench/sys.c - clocks, memory and CPUs, straight from the kernel.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "tools/bench/bench.h"

void bench_warn(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, BENCH_NAME ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void bench_die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, BENCH_NAME ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/*
 * bench_tick_hz() - how fast bench_tick_*() count: ticks against
 * CLOCK_MONOTONIC_RAW over 100 ms, best of three.
 */
double bench_tick_hz(void)
{
#if BENCH_HAVE_TSC
	double best = 0;

	for (int i = 0; i < 3; i++) {
		uint64_t n0 = bench_ns(CLOCK_MONOTONIC_RAW);
		uint64_t t0 = bench_tick_begin();
		uint64_t n1, t1;

		do {
			n1 = bench_ns(CLOCK_MONOTONIC_RAW);
		} while (n1 - n0 < 100000000ULL);
		t1 = bench_tick_end();
		/* the slowest apparent rate is the least disturbed one */
		double hz = (double)(t1 - t0) * 1e9 / (double)(n1 - n0);

		if (best == 0 || hz < best)
			best = hz;
	}
	return best;
#else
	return 1e9;
#endif
}

/* Harness memory: anonymous, populated, never from the allocator under test. */
void *bench_map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void bench_unmap(void *p, size_t bytes)
{
	if (p)
		munmap(p, bytes);
}

/*
 * Resident set size now, from /proc/self/statm: open() and read(), no stdio,
 * so that reading it never calls the allocator under test (the idle row
 * samples it while the program makes no call).
 */
long bench_rss_kb(void)
{
	char buf[128];
	long pages = 0, resident = 0;
	ssize_t n;
	char *p;
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	pages = strtol(buf, &p, 10);
	resident = strtol(p, NULL, 10);
	(void)pages;
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

void bench_sys_mark(bool begin)
{
	static const char b[] = "segpool-bench:begin", e[] = "segpool-bench:end";

	/* fd -1: EBADF, nothing written; strace shows the call and its text */
	if (syscall(SYS_write, -1, begin ? b : e,
		    begin ? sizeof(b) - 1 : sizeof(e) - 1) >= 0)
		bench_warn("a write to fd -1 succeeded");
}

long bench_peak_rss_kb(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return -1;
	return ru.ru_maxrss;
}

/* The CPUs this process may run on, in order; how many were stored. */
unsigned int bench_cpus(int *cpus, unsigned int max)
{
	cpu_set_t set;
	unsigned int n = 0;

	if (sched_getaffinity(0, sizeof(set), &set)) {
		cpus[0] = 0;
		return 1;
	}
	for (int cpu = 0; cpu < CPU_SETSIZE && n < max; cpu++)
		if (CPU_ISSET(cpu, &set))
			cpus[n++] = cpu;
	return n ? n : 1;
}

int bench_pin(int cpu)
{
	cpu_set_t set;
	int err;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (err)
		bench_warn("cannot pin to CPU %d: %s", cpu, strerror(err));
	return err ? -1 : 0;
}
