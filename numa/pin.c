// SPDX-License-Identifier: MIT
/*
 * numa/pin.c - the worker-pool helpers: a node's CPUs, and pinning the
 * calling thread to them.
 *
 * A node's CPUs, as segpool means it, are the CPUs whose allocations are
 * served from that node first: the kernel's CPUs of the node, plus the CPUs
 * of memory-less nodes for which it is the nearest node with memory, and
 * only those the process may run on (its affinity, as os/cpu.c read it at
 * start-up).  A thread pinned to them allocates node-local objects.
 */
#include <errno.h>
#include <sched.h>

#include <segpool/segpool.h>

#include "internal/init.h"
#include "numa/topology.h"
#include "os/cpu.h"

/* Node index of @node for the calls below; -1 when unknown or no library. */
static int sp_numa_pin_idx(int node)
{
	return sp_init() ? -1 : sp_numa_node_to_idx(node);
}

SEGPOOL_API int segpool_numa_node_cpus(int node, int *cpus, size_t max)
{
	int idx = max && !cpus ? -1 : sp_numa_pin_idx(node), n = 0;

	if (idx < 0) {
		errno = EINVAL;
		return -EINVAL;
	}
	for (int c = 0; c < sp_topo.nr_cpus; c++) {
		if (sp_topo.cpu_idx[c] != idx || !sp_os_cpu_allowed(c))
			continue;
		if ((size_t)n < max)
			cpus[n] = c;
		n++;
	}
	return n;
}

SEGPOOL_API int segpool_numa_pin_thread(int node)
{
	cpu_set_t *set;
	size_t size;
	int idx = sp_numa_pin_idx(node), n = 0, ret;

	if (idx < 0) {
		errno = EINVAL;
		return -EINVAL;
	}
	set = CPU_ALLOC((size_t)sp_topo.nr_cpus);
	if (!set) {
		errno = ENOMEM;
		return -ENOMEM;
	}
	size = CPU_ALLOC_SIZE((size_t)sp_topo.nr_cpus);
	CPU_ZERO_S(size, set);
	for (int c = 0; c < sp_topo.nr_cpus; c++) {
		if (sp_topo.cpu_idx[c] == idx && sp_os_cpu_allowed(c)) {
			CPU_SET_S((size_t)c, size, set);
			n++;
		}
	}
	if (n == 0)
		ret = -ENODEV;
	else
		ret = -sp_os_thread_set_affinity(set, size);
	CPU_FREE(set);
	if (ret)
		errno = -ret;
	return ret;
}
