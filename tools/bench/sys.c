// SPDX-License-Identifier: MIT
/*
 * tools/bench/sys.c - clocks, memory, CPUs and processes, and medians.
 *
 * Repetitions are few, so a figure is its median and min-max range, never
 * a mean and a deviation that assume a shape.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "tools/bench/bench.h"

void bench_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, BENCH_NAME ": ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* Ticks against CLOCK_MONOTONIC_RAW over 100 ms: the slowest of three. */
double bench_tick_hz(void)
{
	double best = 0;

	for (int i = 0; BENCH_HAVE_TSC && i < 3; i++) {
		uint64_t n0 = bench_ns(CLOCK_MONOTONIC_RAW), n1;
		uint64_t t0 = bench_tick();
		double hz;

		while ((n1 = bench_ns(CLOCK_MONOTONIC_RAW)) - n0 < 100000000)
			;
		hz = (double)(bench_tick() - t0) * 1e9 / (double)(n1 - n0);
		if (best == 0 || hz < best)
			best = hz;
	}
	return best ? best : 1e9;
}

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

/* /proc/self/statm by open() and read(): the idle row reads it callless */
long bench_rss_kb(void)
{
	char buf[128], *p;
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	strtol(buf, &p, 10);
	return strtol(p, NULL, 10) * (sysconf(_SC_PAGESIZE) / 1024);
}

long bench_peak_rss_kb(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) ? -1 : ru.ru_maxrss;
}

/* A write to fd -1 that strace shows: the counting pass's marks. */
void bench_sys_mark(bool begin)
{
	const char *m = begin ? "segpool-bench:begin" : "segpool-bench:end";

	if (syscall(SYS_write, -1, m, strlen(m)) >= 0)
		bench_warn("a write to fd -1 succeeded");
}

unsigned int bench_cpus(int *cpus, unsigned int max)
{
	cpu_set_t set;
	unsigned int n = 0;

	cpus[0] = 0;
	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	for (int cpu = 0; cpu < CPU_SETSIZE && n < max; cpu++)
		if (CPU_ISSET(cpu, &set))
			cpus[n++] = cpu;
	return n ? n : 1;
}

void bench_pin(int cpu)
{
	cpu_set_t set;
	int err;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (err)
		bench_warn("cannot pin to CPU %d: %s", cpu, strerror(err));
}

int bench_cmd(char *const argv[], const char *out, const char *preload,
	      struct rusage *ru)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int fd = open(out ? out : "/dev/null",
			      O_WRONLY | O_CREAT | O_TRUNC, 0666);

		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
			_exit(126);
		if (preload)
			setenv("LD_PRELOAD", preload, 1);
		else
			unsetenv("LD_PRELOAD");
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid < 0)
		return -1;
	while (wait4(pid, &status, 0, ru) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int bench_cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* The median of an even count is the mean of the two middle values. */
void bench_summarize(const double *v, unsigned int n, struct bench_summary *s)
{
	double sorted[BENCH_MAX_REPS];

	if (n == 0) {
		s->median = s->min = s->max = NAN;
		return;
	}
	memcpy(sorted, v, n * sizeof(*v));
	qsort(sorted, n, sizeof(*sorted), bench_cmp_double);
	s->min = sorted[0];
	s->max = sorted[n - 1];
	s->median = (sorted[(n - 1) / 2] + sorted[n / 2]) / 2;
}

/* Nearest rank: the smallest sample with p * n samples at or below it. */
uint32_t bench_percentile(const uint32_t *sorted, uint64_t n, double p)
{
	uint64_t rank = (uint64_t)ceil(p * (double)n);

	if (n == 0)
		return 0;
	return sorted[(rank < 1 ? 1 : rank > n ? n : rank) - 1];
}
