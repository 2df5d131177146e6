// SPDX-License-Identifier: MIT
/*
 * os/cpu.c - what the OS says about CPUs and nodes.
 *
 * Per-CPU arrays are indexed by the kernel's CPU id, which is what rseq's
 * cpu_id and sched_getcpu() return; ids run up to the highest *possible* CPU,
 * so arrays are sized from the possible list, which also covers CPUs brought
 * online later.
 *
 * Nodes come from the kernel directly, with as few files as it takes,
 * since every process that loads the library (the malloc preload above
 * all) asks at start-up: whether NUMA policy works at all is one
 * get_mempolicy() call, the nodes the process may allocate on another
 * (MPOL_F_MEMS_ALLOWED), the CPUs it may run on sched_getaffinity().
 * Files are read only for what no system call says: the online nodes
 * (/sys/devices/system/node/online) and, only when there is more than one,
 * which of them have memory (has_memory), each node's CPUs (nodeN/cpulist)
 * and distances (nodeN/distance).  A one-node machine reads the one file,
 * and a process that may allocate on one node only none
 * (sp_os_numa_only_node(), which numa/topology.c asks first).
 * Everything is read once, into static storage, with open and read into
 * stack buffers (os/file.c): this runs inside the first malloc(), before
 * the allocator can serve one.  The node model that numa/topology.c builds
 * asks here and nowhere else.
 */
#include <errno.h>
#include <linux/mempolicy.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "os/cpu.h"
#include "os/faultpoint.h"
#include "os/os.h"

#define SP_OS_NODE_DIR	"/sys/devices/system/node"
#define SP_LONG_BITS	(8 * (int)sizeof(unsigned long))
#define SP_MASK_LONGS(bits) (((bits) + SP_LONG_BITS - 1) / SP_LONG_BITS)
/* CPU ids sched_getaffinity() may report: the largest NR_CPUS of x86-64
 * and arm64; a smaller buffer would fail with EINVAL on such a kernel. */
#define SP_OS_AFFINITY_BITS 8192
/* Online nodes whose distances are kept (the rest read as unknown). */
#define SP_OS_DIST_NODES 64

static bool sp_mask_test(const unsigned long *mask, int bits, long bit)
{
	return bit >= 0 && bit < bits &&
	       (mask[bit / SP_LONG_BITS] >> (bit % SP_LONG_BITS)) & 1;
}

int sp_cpu_parse_mask(const char *list, unsigned long *mask, int bits)
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
		for (long i = a; mask && i <= b && i < bits; i++)
			mask[i / SP_LONG_BITS] |= 1UL << (i % SP_LONG_BITS);
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -1;
	}
	return max > 1L << 20 ? -1 : (int)max;
}

int sp_cpu_parse_list(const char *list)
{
	return sp_cpu_parse_mask(list, NULL, 0);
}

/*
 * Read the sysfs list or row @path into @buf (@len bytes), NUL-terminated;
 * a file longer than @buf loses its cut-off last entry, never half of it.
 * Return: false when it cannot be read.
 */
static bool sp_read_list(const char *path, char *buf, size_t len)
{
	ssize_t n = sp_os_read_text(path, buf, len);

	if (n < 0)
		return false;
	if ((size_t)n == len - 1 && buf[n - 1] != '\n') {
		char *cut = strrchr(buf, ',');
		char *sp = strrchr(buf, ' ');

		if (sp && (!cut || sp > cut))
			cut = sp;
		if (!cut)
			return false;
		*cut = '\0';
	}
	return true;
}

int sp_cpu_possible_count(void)
{
	static int cached;	/* 0 until read: fixed at boot */
	int count = __atomic_load_n(&cached, __ATOMIC_RELAXED);
	char buf[4096];
	long n;

	if (count)
		return count;
	if (sp_read_list("/sys/devices/system/cpu/possible", buf,
			 sizeof(buf)))
		count = sp_cpu_parse_list(buf) + 1;
	if (count <= 0) {
		n = sysconf(_SC_NPROCESSORS_CONF);
		count = n > 0 ? (int)n : 1;
	}
	__atomic_store_n(&cached, count, __ATOMIC_RELAXED);
	return count;
}

/* --- what the process may use: one system call each ---------------------- */

static unsigned long sp_allowed_cpus[SP_MASK_LONGS(SP_OS_AFFINITY_BITS)]
	__sp_big;
static bool sp_allowed_cpus_known;	/* read, and not empty */
static int sp_allowed_cpus_once;	/* sp_os_once() */

static void sp_allowed_cpus_read(void)
{
	if (sched_getaffinity(0, sizeof(sp_allowed_cpus),
			      (cpu_set_t *)sp_allowed_cpus))
		return;
	for (size_t i = 0; i < SP_ARRAY_SIZE(sp_allowed_cpus); i++)
		if (sp_allowed_cpus[i])
			sp_allowed_cpus_known = true;
}

static unsigned long sp_mems_allowed[SP_MASK_LONGS(SP_MAX_NODE_BITS)];
static int sp_mems_allowed_once;	/* sp_os_once() */

/* The cpuset's nodes; none when the kernel cannot say (as libnuma). */
static void sp_mems_allowed_read(void)
{
	if (syscall(SYS_get_mempolicy, NULL, sp_mems_allowed,
		    (unsigned long)SP_MAX_NODE_BITS + 1, NULL,
		    (unsigned long)MPOL_F_MEMS_ALLOWED))
		memset(sp_mems_allowed, 0, sizeof(sp_mems_allowed));
}

bool sp_os_numa_init(void)
{
	/*
	 * The CPUs the process may run on, as libnuma's numa_all_cpus_ptr:
	 * read once, at start-up, before a caller pins a thread.
	 */
	sp_os_once(&sp_allowed_cpus_once, sp_allowed_cpus_read);
	/* libnuma's test: a kernel without NUMA policy, or one a seccomp
	 * filter denies (libnuma 2.0.19), has none */
	if (syscall(SYS_get_mempolicy, NULL, NULL, 0UL, NULL, 0UL) &&
	    (errno == ENOSYS || errno == EPERM))
		return false;
	return true;
}

bool sp_os_cpu_allowed(int cpu)
{
	sp_os_once(&sp_allowed_cpus_once, sp_allowed_cpus_read);
	if (!sp_allowed_cpus_known)
		return true;
	return sp_mask_test(sp_allowed_cpus, SP_OS_AFFINITY_BITS, cpu);
}

/* --- the nodes: sysfs, read once ----------------------------------------- */

static struct {
	unsigned long online[SP_MASK_LONGS(SP_MAX_NODE_BITS)];
	int max;		/* highest online node id: 0 when unknown */
	int nr;			/* online nodes (1 when unknown) */
	int first;		/* the lowest online node id */
} sp_nodes;
static int sp_nodes_once;	/* sp_os_once() */

/*
 * The online nodes: those with a directory in /sys/devices/system/node,
 * which libnuma counted.  Unreadable (no NUMA in the kernel): node 0 alone.
 */
static void sp_nodes_read(void)
{
	char buf[4096];
	int max = -1, nr = 0, first = -1;

	if (sp_read_list(SP_OS_NODE_DIR "/online", buf, sizeof(buf)))
		max = sp_cpu_parse_mask(buf, sp_nodes.online,
					SP_MAX_NODE_BITS);
	if (max >= SP_MAX_NODE_BITS)
		max = SP_MAX_NODE_BITS - 1;
	for (int node = 0; node <= max; node++) {
		if (!sp_mask_test(sp_nodes.online, SP_MAX_NODE_BITS, node))
			continue;
		if (first < 0)
			first = node;
		nr++;
	}
	if (nr == 0) {
		memset(sp_nodes.online, 0, sizeof(sp_nodes.online));
		sp_nodes.online[0] = 1;
		max = first = 0;
		nr = 1;
	}
	sp_nodes.max = max;
	sp_nodes.nr = nr;
	sp_nodes.first = first;
}

static void sp_nodes_get(void)
{
	sp_os_once(&sp_nodes_once, sp_nodes_read);
}

static bool sp_node_online(int node)
{
	sp_nodes_get();
	return sp_mask_test(sp_nodes.online, SP_MAX_NODE_BITS, node);
}

int sp_os_numa_max_node(void)
{
	sp_nodes_get();
	return sp_nodes.max;
}

static unsigned long sp_mem_nodes[SP_MASK_LONGS(SP_MAX_NODE_BITS)];
static bool sp_mem_nodes_known;
static int sp_mem_nodes_once;	/* sp_os_once() */

static void sp_mem_nodes_read(void)
{
	char buf[4096];

	sp_mem_nodes_known = sp_read_list(SP_OS_NODE_DIR "/has_memory", buf,
					  sizeof(buf)) &&
			     sp_cpu_parse_mask(buf, sp_mem_nodes,
					       SP_MAX_NODE_BITS) >= 0;
}

/* Has node @node memory?  Its MemTotal, for kernels without has_memory. */
static bool sp_node_has_memory(int node)
{
	char path[64], buf[512];
	const char *p;

	if (!sp_node_online(node))
		return false;
	if (sp_nodes.nr == 1)
		return true;	/* the one node holds the kernel's memory */
	sp_os_once(&sp_mem_nodes_once, sp_mem_nodes_read);
	if (sp_mem_nodes_known)
		return sp_mask_test(sp_mem_nodes, SP_MAX_NODE_BITS, node);
	snprintf(path, sizeof(path), SP_OS_NODE_DIR "/node%d/meminfo", node);
	if (sp_os_read_text(path, buf, sizeof(buf)) < 0)
		return false;
	p = strstr(buf, "MemTotal:");
	return p && strtoull(p + strlen("MemTotal:"), NULL, 10) > 0;
}

bool sp_os_numa_node_usable(int node)
{
	sp_os_once(&sp_mems_allowed_once, sp_mems_allowed_read);
	return sp_mask_test(sp_mems_allowed, SP_MAX_NODE_BITS, node) &&
	       sp_node_has_memory(node);
}

int sp_os_numa_only_node(void)
{
	int only = -1;

	sp_os_once(&sp_mems_allowed_once, sp_mems_allowed_read);
	for (size_t i = 0; i < SP_MASK_LONGS(SP_MAX_NODE_BITS); i++) {
		unsigned long w = sp_mems_allowed[i];

		if (!w)
			continue;
		if (only >= 0 || (w & (w - 1)))
			return -1;	/* a second node */
		only = (int)i * SP_LONG_BITS + __builtin_ctzl(w);
	}
	return only;
}

static short sp_cpu_node[SP_OS_MAX_CPUS] __sp_big;
static int sp_cpu_node_once;	/* sp_os_once() */

/* Each online node's CPUs (nodeN/cpulist): the CPUs online now. */
static void sp_cpu_node_read(void)
{
	char path[64], buf[4096];
	unsigned long cpus[SP_MASK_LONGS(SP_OS_MAX_CPUS)];

	for (int c = 0; c < SP_OS_MAX_CPUS; c++)
		sp_cpu_node[c] = -1;
	for (int node = 0; node <= sp_nodes.max; node++) {
		if (!sp_node_online(node))
			continue;
		snprintf(path, sizeof(path), SP_OS_NODE_DIR "/node%d/cpulist",
			 node);
		memset(cpus, 0, sizeof(cpus));
		if (!sp_read_list(path, buf, sizeof(buf)) ||
		    sp_cpu_parse_mask(buf, cpus, SP_OS_MAX_CPUS) < 0)
			continue;
		for (int c = 0; c < SP_OS_MAX_CPUS; c++)
			if (sp_mask_test(cpus, SP_OS_MAX_CPUS, c))
				sp_cpu_node[c] = (short)node;
	}
}

int sp_os_numa_node_of_cpu(int cpu)
{
	if (cpu < 0 || cpu >= SP_OS_MAX_CPUS)
		return -1;
	sp_nodes_get();
	if (sp_nodes.nr == 1)
		return sp_nodes.first;	/* every CPU is the one node's */
	sp_os_once(&sp_cpu_node_once, sp_cpu_node_read);
	return sp_cpu_node[cpu];
}

/*
 * Distances between the first SP_OS_DIST_NODES online nodes: the k-th
 * number of nodeN/distance is N's distance to the k-th online node.
 */
static struct {
	short id[SP_OS_DIST_NODES];		/* online node ids, rising */
	int nr;
	unsigned char d[SP_OS_DIST_NODES][SP_OS_DIST_NODES];	/* 0: unknown */
} sp_dist __sp_big;
static int sp_dist_once;	/* sp_os_once() */

static void sp_dist_read(void)
{
	char path[64], buf[4096];

	for (int node = 0; node <= sp_nodes.max; node++)
		if (sp_node_online(node) && sp_dist.nr < SP_OS_DIST_NODES)
			sp_dist.id[sp_dist.nr++] = (short)node;
	for (int i = 0; i < sp_dist.nr; i++) {
		const char *p = buf;

		snprintf(path, sizeof(path), SP_OS_NODE_DIR "/node%d/distance",
			 sp_dist.id[i]);
		if (!sp_read_list(path, buf, sizeof(buf)))
			continue;
		for (int k = 0; k < sp_dist.nr; k++) {
			char *end;
			long d = strtol(p, &end, 10);

			if (end == p)
				break;
			p = end;
			if (d > 0 && d < 256)
				sp_dist.d[i][k] = (unsigned char)d;
		}
	}
}

static int sp_dist_pos(int node)
{
	for (int i = 0; i < sp_dist.nr; i++)
		if (sp_dist.id[i] == node)
			return i;
	return -1;
}

int sp_os_numa_distance(int a, int b)
{
	int i, k;

	if (!sp_node_online(a) || !sp_node_online(b))
		return 0;
	if (sp_nodes.nr == 1)	/* a node to itself: LOCAL_DISTANCE */
		return 10;
	sp_os_once(&sp_dist_once, sp_dist_read);
	i = sp_dist_pos(a);
	k = sp_dist_pos(b);
	return i < 0 || k < 0 ? 0 : sp_dist.d[i][k];
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
