// SPDX-License-Identifier: MIT
/*
 * os/cpu.c - what the OS says about CPUs and nodes.
 *
 * Per-CPU arrays are indexed by the kernel's CPU id, which is what rseq's
 * cpu_id and sched_getcpu() return; ids run up to the highest *possible* CPU,
 * so arrays are sized from the possible list, which also covers CPUs brought
 * online later.
 *
 * Nodes come from libnuma, which reads sysfs (and the cpuset) for us: the
 * node model that numa/topology.c builds asks here and nowhere else.
 */
#include <ctype.h>
#include <numa.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "os/cpu.h"
#include "os/faultpoint.h"

/*
 * libnuma sets itself up in a constructor of its own, numa_init(), and
 * every call that sizes a node or CPU mask needs it to have run.  In a
 * shared link it has: libnuma.so is initialised before the objects that
 * depend on it.  In a static link the constructors run in link order, so
 * segpool's (libsegpool.a comes before -lnuma) runs first and the first
 * mask allocation exits the program ("request to allocate mask for invalid
 * number").  numa_init() returns at once when it has run, so calling it
 * here is always safe; it is global in libnuma.a but not exported by
 * libnuma.so, hence the weak reference: NULL in a dynamic link, where it
 * is not needed.
 */
extern void numa_init(void) __attribute__((weak));

int sp_cpu_parse_list(const char *list)
{
	const char *p = list;
	long max = -1;

	while (*p && *p != '\n') {
		char *end;
		long a = strtol(p, &end, 10), b;

		if (end == p || a < 0)
			return -1;
		b = a;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a)
				return -1;
			p = end;
		}
		if (b > max)
			max = b;
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -1;
	}
	return max > 1L << 20 ? -1 : (int)max;
}

int sp_cpu_possible_count(void)
{
	char buf[4096];
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	int max = -1;
	long n;

	if (f) {
		if (fgets(buf, sizeof(buf), f))
			max = sp_cpu_parse_list(buf);
		fclose(f);
	}
	if (max >= 0)
		return max + 1;
	n = sysconf(_SC_NPROCESSORS_CONF);
	return n > 0 ? (int)n : 1;
}

bool sp_os_numa_init(void)
{
	if (numa_init)
		numa_init();
	return numa_available() >= 0;
}

int sp_os_numa_max_node(void)
{
	return numa_max_node();
}

bool sp_os_numa_node_usable(int node)
{
	struct bitmask *mems = numa_get_mems_allowed();
	bool ok = mems && numa_bitmask_isbitset(mems, (unsigned int)node);

	if (mems)
		numa_bitmask_free(mems);
	return ok && numa_node_size64(node, NULL) > 0;
}

int sp_os_numa_node_of_cpu(int cpu)
{
	return numa_node_of_cpu(cpu);
}

int sp_os_numa_distance(int a, int b)
{
	return numa_distance(a, b);
}

bool sp_os_cpu_allowed(int cpu)
{
	struct bitmask *all = numa_all_cpus_ptr;

	if (!all || numa_bitmask_weight(all) == 0)
		return true;
	return numa_bitmask_isbitset(all, (unsigned int)cpu);
}

int sp_os_thread_set_affinity(const cpu_set_t *set, size_t size)
{
	return pthread_setaffinity_np(pthread_self(), size, set);
}

unsigned long sp_os_rseq_feature_size(void)
{
	return getauxval(AT_RSEQ_FEATURE_SIZE);
}

unsigned long sp_os_kernel_page(void)
{
	static unsigned long cached;	/* 0 until read; the same for all */
	unsigned long sz = __atomic_load_n(&cached, __ATOMIC_RELAXED);

	if (!sz) {
		sz = getauxval(AT_PAGESZ);
		if (!sz)
			sz = (unsigned long)sysconf(_SC_PAGESIZE);
		__atomic_store_n(&cached, sz, __ATOMIC_RELAXED);
	}
	return sz;
}

unsigned long sp_os_page_size(void)
{
	/* as a kernel with pages larger than segpool's would say */
	if (sp_fault_should_fail(SP_FAULT_PAGE_SIZE))
		return SP_PAGE_SIZE << 4;
	return sp_os_kernel_page();
}

unsigned long sp_os_hwcap(void)
{
	return getauxval(AT_HWCAP);
}
