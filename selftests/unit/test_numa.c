// SPDX-License-Identifier: MIT
/*
 * selftests/unit/test_numa.c - node placement, checked against the kernel.
 *
 * Every test runs on any number of nodes: on a one-node machine each check
 * holds trivially for node 0 (and must), on the emulated multi-node machine
 * of tools/numa-rig it is the real proof.  Placement is read back from the
 * kernel with move_pages(2) in query mode, never from segpool alone:
 *
 *  - a thread pinned with segpool_numa_pin_thread(N) gets objects on node
 *    N, for every node N with CPUs, from a cache and from segpool_malloc();
 *  - segpool_cache_alloc_node() / segpool_malloc_node() honour the node,
 *    memory-only nodes included;
 *  - SEGPOOL_THISNODE and SEGPOOL_NODE_STRICT fail with ENOMEM when the node
 *    is full, the default falls back to the nearest node, and nothing is
 *    lost (variants region=16M: 16 MiB regions, so a node fills quickly);
 *  - remote frees go home: after one node's thread freed another node's
 *    objects, each node's thread still gets only its own node's objects;
 *  - remote frees wait in a per-node batch and go home in bulk (lock mode,
 *    the CPU slot injected);
 *  - per-node counts of the slab layer match the pages' placement;
 *  - SEGPOOL_INTERLEAVE spreads objects evenly over the nodes;
 *  - what os/cpu.c reads for the node model (the online nodes, which ones
 *    the process may allocate on, each CPU's node, the distances, the
 *    CPUs the process may run on) is what /sys, the kernel (get_mempolicy,
 *    getcpu, rseq's node_id, sched_getaffinity) and libnuma say.
 *
 * Variants: the machine's own topology with the default per-CPU mode and
 * in lock mode; three emulated nodes (SEGPOOL_NUMA_FAKE_NODES=3: sparse ids
 * 0, 2, 4, the third without CPUs on a two-CPU machine) and two, the latter
 * also without the per-CPU layer, where placement is
 * checked through segpool_obj_node() only, since emulated nodes share the
 * machine's memory; and 16 MiB regions for the full-node tests.
 */
#include <errno.h>
#include <inttypes.h>
#include <numa.h>
#include <numaif.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <segpool/segpool.h>

#include "core/core.h"
#include "os/cpu.h"
#include "numa/topology.h"
#include "percpu/alien.h"
#include "percpu/depot.h"
#include "percpu/magazine.h"
#include "percpu/pcpu.h"
#include "slab/slab.h"
#include "stats/export.h"
#include "selftests/lib/harness.h"
#include "selftests/lib/json.h"
#include "selftests/lib/stats_parse.h"

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond))						\
			fail_msg(__VA_ARGS__);				\
	} while (0)

#define SKIP_IF(cond, why)						\
	do {								\
		if (cond) {						\
			print_message("# skipped: %s\n", why);		\
			skip();						\
		}							\
	} while (0)

/* --- variants ------------------------------------------------------------ */

static const char *const env_machine[] = {
	"SEGPOOL_NUMA_FAKE_NODES", "SEGPOOL_REGION_SIZE", "SEGPOOL_NUMA", NULL,
};
static const char *const env_machine_lock[] = {
	"SEGPOOL_PERCPU=lock", "SEGPOOL_PERCPU_ID", "SEGPOOL_NUMA_FAKE_NODES",
	"SEGPOOL_REGION_SIZE", "SEGPOOL_NUMA", NULL,
};
static const char *const env_fake3_lock[] = {
	"SEGPOOL_NUMA_FAKE_NODES=3", "SEGPOOL_PERCPU=lock", "SEGPOOL_PERCPU_ID",
	"SEGPOOL_REGION_SIZE", "SEGPOOL_NUMA", NULL,
};
static const char *const env_fake2[] = {
	"SEGPOOL_NUMA_FAKE_NODES=2",
	"SEGPOOL_REGION_SIZE",
	"SEGPOOL_NUMA",
	NULL,
};
static const char *const env_fake2_off[] = {
	"SEGPOOL_NUMA_FAKE_NODES=2", "SEGPOOL_PERCPU=off", "SEGPOOL_PERCPU_ID",
	"SEGPOOL_REGION_SIZE", "SEGPOOL_NUMA", NULL,
};
static const char *const env_region16m[] = {
	"SEGPOOL_REGION_SIZE=16M", "SEGPOOL_NUMA_FAKE_NODES", "SEGPOOL_NUMA",
	NULL,
};
static const char *const env_fake3_region16m[] = {
	"SEGPOOL_REGION_SIZE=16M", "SEGPOOL_NUMA_FAKE_NODES=3", "SEGPOOL_NUMA",
	NULL,
};

static const struct sp_test_variant variants[] = {
	{ "nodes=machine", env_machine },
	{ "nodes=machine,mode=lock", env_machine_lock },
	{ "nodes=3_emulated,mode=lock", env_fake3_lock },
	{ "nodes=2_emulated", env_fake2 },
	{ "nodes=2_emulated,mode=off", env_fake2_off },
	{ "region=16M", env_region16m },
	{ "region=16M,nodes=3_emulated", env_fake3_region16m },
};

static bool small_regions(void)
{
	const char *v = sp_test_variant();

	return v && strstr(v, "region=16M");
}

/* --- placement ------------------------------------------------------------ */

/* Can the kernel's page placement be compared with segpool's node ids? */
static bool placement_checkable(void)
{
	return !sp_topo.fake;
}

/*
 * The node the kernel placed @p's page on (touched first), or -errno: the
 * kernel's page, which may be smaller than segpool's (a PAGE_SHIFT=16
 * build on a kernel of 16 KiB pages), the rest of segpool's page untouched.
 */
static int page_node(void *p)
{
	uintptr_t mask = (uintptr_t)sysconf(_SC_PAGESIZE) - 1;
	void *page = (void *)((uintptr_t)p & ~mask);
	int status = -1;

	*(volatile char *)p = *(volatile char *)p;
	if (move_pages(0, 1, &page, NULL, &status, 0))
		return -errno;
	return status;
}

/*
 * Is @p on node @node, by segpool's pagemap and (when real) by the kernel?
 * Returns 0, or 1 with a message in @why.
 */
static int wrong_node(void *p, int node, char *why, size_t len)
{
	int n = segpool_obj_node(p);

	if (n != node) {
		snprintf(why, len, "%p: segpool_obj_node %d, want %d", p, n,
			 node);
		return 1;
	}
	if (placement_checkable()) {
		n = page_node(p);
		if (n != node) {
			snprintf(why, len,
				 "%p: kernel placed it on %d, want %d", p, n,
				 node);
			return 1;
		}
	}
	return 0;
}

/* Node ids with CPUs (segpool_numa_node_cpus() > 0); how many. */
static int nodes_with_cpus(int *ids)
{
	int n = 0;

	for (int i = 0; i < segpool_numa_node_count(); i++) {
		int id = segpool_numa_node_id(i);

		if (segpool_numa_node_cpus(id, NULL, 0) > 0)
			ids[n++] = id;
	}
	return n;
}

/* --- workers pinned to a node --------------------------------------------- */

struct worker {
	int node;			/* where it runs */
	int pin_err;			/* segpool_numa_pin_thread() result */
	void (*fn)(struct worker *);
	struct segpool_cache *cache;
	void **objs;
	size_t n;
	unsigned long bad;		/* objects on the wrong node */
	unsigned long failed;		/* allocations that returned NULL */
	char why[160];			/* the first bad one */
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	w->pin_err = segpool_numa_pin_thread(w->node);
	if (w->pin_err == 0)
		w->fn(w);
	return NULL;
}

static void run_on_node(struct worker *w)
{
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, worker_main, w), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	CHECK(w->pin_err == 0, "pinning to node %d: %d", w->node, w->pin_err);
	CHECK(w->bad == 0, "node %d: %lu objects elsewhere; first: %s",
	      w->node, w->bad, w->why);
	CHECK(w->failed == 0, "node %d: %lu allocations failed", w->node,
	      w->failed);
}

static void note(struct worker *w, void *p)
{
	char why[160];

	if (!p) {
		w->failed++;
		return;
	}
	if (wrong_node(p, w->node, why, sizeof(why)) && w->bad++ == 0)
		memcpy(w->why, why, sizeof(why));
}

static void alloc_cache_objs(struct worker *w)
{
	for (size_t i = 0; i < w->n; i++) {
		w->objs[i] = segpool_cache_alloc(w->cache, 0);
		note(w, w->objs[i]);
	}
}

static void free_cache_objs(struct worker *w)
{
	for (size_t i = 0; i < w->n; i++)
		segpool_cache_free(w->cache, w->objs[i]);
}

/* a mix of size classes and two large (own mapping) allocations */
static size_t malloc_size(size_t i)
{
	static const size_t sizes[] = { 8, 24, 100, 500, 2000, 8192, 30000 };

	if (i == 0)
		return 64 << 10;
	if (i == 1)
		return 1 << 20;
	return sizes[i % SP_ARRAY_SIZE(sizes)];
}

static void malloc_objs(struct worker *w)
{
	for (size_t i = 0; i < w->n; i++) {
		w->objs[i] = segpool_malloc(malloc_size(i));
		note(w, w->objs[i]);
	}
	for (size_t i = 0; i < w->n; i++)
		segpool_free(w->objs[i]);
}

/* --- the OS layer's node facts ------------------------------------------- */

#define NODE_DIR "/sys/devices/system/node"
#define TEST_NODE_BITS 1024		/* as os/os.h's SP_MAX_NODE_BITS */

/* The small file @path into @buf, NUL-terminated; false when unreadable. */
static bool read_sys(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	return n > 0;
}

/*
 * Set @set[i] for each id i of the kernel list @list ("0-3,8"), ids below
 * @max only; the highest id, or -1.  Parsed here, apart from os/cpu.c.
 */
static int parse_ids(const char *list, bool *set, int max)
{
	int hi = -1;
	char *end;

	for (const char *p = list; *p && *p != '\n'; p = end) {
		long a = strtol(p, &end, 10), b = a;

		assert_true(end != p);
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (long i = a; i <= b && i < max; i++)
			set[i] = true;
		hi = (int)(b > hi ? b : hi);
		if (*end == ',')
			end++;
	}
	return hi;
}

static bool node_has_memory(int node, const bool *has_memory, bool known)
{
	char path[96], buf[4096];
	const char *p;

	if (known)
		return has_memory[node];
	snprintf(path, sizeof(path), NODE_DIR "/node%d/meminfo", node);
	if (!read_sys(path, buf, sizeof(buf)))
		return false;
	p = strstr(buf, "MemTotal:");
	return p && strtoull(p + strlen("MemTotal:"), NULL, 10) > 0;
}

static void test_os_nodes(void **state)
{
	static bool online[TEST_NODE_BITS], has_memory[TEST_NODE_BITS];
	static int cpu_node[SP_MAX_CPUS];
	unsigned long mems[TEST_NODE_BITS / 64] = { 0 };
	char buf[8192], path[96];
	int max = 0, nr_online = 0, first = -1, ncpus;
	bool memory_known, avail;
	struct bitmask *lmems;
	cpu_set_t start;

	(void)state;
	/* the allowed CPUs, first: sp_os_cpu_allowed() read them at start */
	assert_int_equal(sched_getaffinity(0, sizeof(start), &start), 0);
	for (int c = 0; c < CPU_SETSIZE && c < SP_MAX_CPUS; c++) {
		CHECK(sp_os_cpu_allowed(c) == !!CPU_ISSET(c, &start),
		      "CPU %d: allowed %d, sched_getaffinity says %d", c,
		      sp_os_cpu_allowed(c), !!CPU_ISSET(c, &start));
		CHECK(sp_os_cpu_allowed(c) ==
			      !!numa_bitmask_isbitset(numa_all_cpus_ptr,
						      (unsigned int)c),
		      "CPU %d: allowed %d, libnuma says otherwise", c,
		      sp_os_cpu_allowed(c));
	}

	/* available: get_mempolicy() works, as libnuma decides */
	errno = 0;
	avail = syscall(SYS_get_mempolicy, NULL, NULL, 0UL, NULL, 0UL) == 0 ||
		(errno != ENOSYS && errno != EPERM);
	assert_int_equal(sp_os_numa_init(), avail);
	if (avail)
		assert_true(numa_available() >= 0);
	SKIP_IF(!avail, "the kernel has no NUMA policy here");

	/* the online nodes: their highest id */
	if (read_sys(NODE_DIR "/online", buf, sizeof(buf)))
		max = parse_ids(buf, online, TEST_NODE_BITS);
	else
		online[0] = true;
	for (int n = 0; n < TEST_NODE_BITS; n++) {
		if (!online[n])
			continue;
		nr_online++;
		if (first < 0)
			first = n;
	}
	print_message("# os: %d online node(s), highest %d\n", nr_online, max);
	assert_int_equal(sp_os_numa_max_node(), max);
	assert_int_equal(sp_os_numa_max_node(), numa_max_node());

	/* usable: in the cpuset's mems and with memory */
	assert_int_equal(syscall(SYS_get_mempolicy, NULL, mems,
				 (unsigned long)TEST_NODE_BITS + 1, NULL,
				 (unsigned long)MPOL_F_MEMS_ALLOWED), 0);
	memory_known = read_sys(NODE_DIR "/has_memory", buf, sizeof(buf)) &&
		       parse_ids(buf, has_memory, TEST_NODE_BITS) >= 0;
	lmems = numa_get_mems_allowed();
	assert_non_null(lmems);
	for (int n = 0; n <= max + 2 && n < TEST_NODE_BITS; n++) {
		bool allowed = (mems[n / 64] >> (n % 64)) & 1;
		bool want = allowed &&
			    node_has_memory(n, has_memory, memory_known);

		CHECK(allowed == !!numa_bitmask_isbitset(lmems, (unsigned)n),
		      "node %d: get_mempolicy and libnuma disagree", n);
		CHECK(sp_os_numa_node_usable(n) == want,
		      "node %d: usable %d, the kernel says %d", n,
		      sp_os_numa_node_usable(n), want);
		CHECK(want == (allowed && numa_node_size64(n, NULL) > 0),
		      "node %d: usable %d, libnuma says otherwise", n, want);
	}
	numa_bitmask_free(lmems);

	/* each CPU's node, from the nodes' cpulist and from libnuma */
	ncpus = SP_MIN(sp_cpu_possible_count(), SP_MAX_CPUS);
	for (int c = 0; c < ncpus; c++)
		cpu_node[c] = -1;
	for (int n = 0; n <= max; n++) {
		static bool cpus[SP_MAX_CPUS];

		if (!online[n])
			continue;
		snprintf(path, sizeof(path), NODE_DIR "/node%d/cpulist", n);
		memset(cpus, 0, sizeof(cpus));
		if (!read_sys(path, buf, sizeof(buf)))
			continue;
		parse_ids(buf, cpus, SP_MAX_CPUS);
		for (int c = 0; c < ncpus; c++)
			if (cpus[c])
				cpu_node[c] = n;
	}
	for (int c = 0; c < ncpus; c++) {
		/* one node: an offline CPU is that node's too (os/cpu.h) */
		int want = cpu_node[c] < 0 && nr_online == 1 ? first :
							       cpu_node[c];

		CHECK(sp_os_numa_node_of_cpu(c) == want,
		      "CPU %d: node %d, /sys says %d", c,
		      sp_os_numa_node_of_cpu(c), want);
		if (cpu_node[c] >= 0)
			CHECK(numa_node_of_cpu(c) == cpu_node[c],
			      "CPU %d: libnuma says node %d, /sys %d", c,
			      numa_node_of_cpu(c), cpu_node[c]);
	}
	assert_int_equal(sp_os_numa_node_of_cpu(-1), -1);
	assert_int_equal(sp_os_numa_node_of_cpu(SP_OS_MAX_CPUS), -1);

	/* the kernel's own answer on every CPU the process may use */
	for (int k = 0; k < sp_test_nr_cpus(); k++) {
		int cpu = sp_test_allowed_cpu((unsigned int)k), hint;
		unsigned int cur, node;

		assert_int_equal(sp_test_pin(cpu), 0);
		assert_int_equal(syscall(SYS_getcpu, &cur, &node, NULL), 0);
		CHECK(sp_os_numa_node_of_cpu((int)cur) == (int)node,
		      "CPU %u: node %d, getcpu() says %u", cur,
		      sp_os_numa_node_of_cpu((int)cur), node);
		hint = sp_thread_node_hint(sp_os_rseq_feature_size());
		if (hint >= 0 && (int)sp_thread_cpu() == (int)cur)
			CHECK(sp_os_numa_node_of_cpu((int)cur) == hint,
			      "CPU %u: node %d, rseq node_id %d", cur,
			      sp_os_numa_node_of_cpu((int)cur), hint);
	}
	sp_test_unpin();

	/* distances: the k-th number of nodeN/distance is to the k-th node */
	for (int a = 0; a <= max; a++) {
		const char *p = buf;

		if (!online[a])
			continue;
		snprintf(path, sizeof(path), NODE_DIR "/node%d/distance", a);
		if (!read_sys(path, buf, sizeof(buf)))
			continue;
		for (int b = 0; b <= max; b++) {
			char *end;
			long d;

			if (!online[b])
				continue;
			d = strtol(p, &end, 10);
			assert_true(end != p);
			p = end;
			CHECK(sp_os_numa_distance(a, b) == d,
			      "distance %d-%d: %d, /sys says %ld", a, b,
			      sp_os_numa_distance(a, b), d);
			CHECK(numa_distance(a, b) == d,
			      "distance %d-%d: libnuma says %d, /sys %ld", a,
			      b, numa_distance(a, b), d);
		}
	}
	assert_int_equal(sp_os_numa_distance(first, max + 1), 0);
	assert_int_equal(sp_os_numa_distance(-1, first), 0);
}

/* --- tests ---------------------------------------------------------------- */

static void test_topology(void **state)
{
	int nr = segpool_numa_node_count(), prev = -1, cpus_seen = 0;
	int ncpu = sp_test_nr_cpus();

	(void)state;
	print_message("# %d node(s), %s, per-CPU %s, rseq feature size %lu\n",
		      nr, sp_topo.fake ? "emulated" : "this machine's",
		      segpool_percpu_mode(), sp_topo.rseq_feature_size);
	assert_true(nr >= 1);
	for (int i = 0; i < nr; i++) {
		int id = segpool_numa_node_id(i), n, cpus[SP_MAX_CPUS];

		CHECK(id > prev, "node ids not increasing: %d after %d", id,
		      prev);
		prev = id;
		n = segpool_numa_node_cpus(id, cpus, SP_ARRAY_SIZE(cpus));
		assert_true(n >= 0);
		print_message("# node %d: %d CPU(s)\n", id, n);
		cpus_seen += n;
		for (int k = 0; k < n; k++) {
			assert_true(cpus[k] >= 0 && cpus[k] < sp_topo.nr_cpus);
			assert_int_equal(
				sp_topo.node_id[sp_topo.cpu_idx[cpus[k]]], id);
			if (k)
				assert_true(cpus[k] > cpus[k - 1]);
		}
		if (n == 0) {
			/* a memory-only node: nothing to pin to */
			errno = 0;
			assert_int_equal(segpool_numa_pin_thread(id), -ENODEV);
			assert_int_equal(errno, ENODEV);
			continue;
		}
		assert_int_equal(segpool_numa_pin_thread(id), 0);
		CHECK(segpool_numa_current_node() == id,
		      "pinned to node %d, current node says %d", id,
		      segpool_numa_current_node());
		/*
		 * the kernel's rseq node_id,
		 * where it fills it, is the CPU's node
		 */
		if (!sp_topo.fake &&
		    sp_thread_node_hint(sp_topo.rseq_feature_size) >= 0) {
			int cpu = sched_getcpu();

			CHECK(sp_thread_node_hint(sp_topo.rseq_feature_size) ==
				      numa_node_of_cpu(cpu),
			      "rseq node_id %d, CPU %d is on %d",
			      sp_thread_node_hint(sp_topo.rseq_feature_size),
			      cpu, numa_node_of_cpu(cpu));
			print_message(
				"# node %d: rseq node_id read and right\n", id);
		}
		sp_test_unpin();
	}
	/* every CPU the program may use is some node's */
	CHECK(cpus_seen >= ncpu, "%d CPUs over all nodes, the process has %d",
	      cpus_seen, ncpu);

	errno = 0;
	assert_int_equal(segpool_numa_node_cpus(-2, NULL, 0), -EINVAL);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(segpool_numa_node_cpus(SP_MAX_NODE_ID + 1, NULL, 0),
			 -EINVAL);
	assert_int_equal(segpool_numa_node_cpus(segpool_numa_node_id(0), NULL,
						1),
			 -EINVAL);
	errno = 0;
	assert_int_equal(segpool_numa_pin_thread(-1), -EINVAL);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(segpool_numa_pin_thread(4096), -EINVAL);
	if (sp_topo.fake)
		/* sparse */
		assert_int_equal(segpool_numa_pin_thread(1), -EINVAL);
}

static void test_local_objects_on_every_node(void **state)
{
	int ids[SP_MAX_NODES], n = nodes_with_cpus(ids);
	struct segpool_cache *c;
	void **objs;
	size_t count = 3000;

	(void)state;
	c = segpool_cache_create("numa-local", 96, 0, 0, NULL);
	assert_non_null(c);
	objs = calloc(count, sizeof(*objs));
	assert_non_null(objs);
	for (int k = 0; k < n; k++) {
		struct worker w = { .node = ids[k], .fn = alloc_cache_objs,
				    .cache = c, .objs = objs, .n = count };

		run_on_node(&w);
		print_message("# node %d: %zu cache objects, all local\n",
			      ids[k], count);
		free_cache_objs(&w);

		memset(&w, 0, sizeof(w));
		w = (struct worker){ .node = ids[k], .fn = malloc_objs,
				     .objs = objs, .n = 500 };
		run_on_node(&w);
	}
	free(objs);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

static void test_alloc_node_honours_the_node(void **state)
{
	struct segpool_cache *c;
	char why[160];
	void *objs[400];

	(void)state;
	c = segpool_cache_create("numa-alloc-node", 200, 0, 0, NULL);
	assert_non_null(c);
	for (int i = 0; i < segpool_numa_node_count(); i++) {
		int id = segpool_numa_node_id(i);

		for (size_t k = 0; k < SP_ARRAY_SIZE(objs); k++) {
			objs[k] = segpool_cache_alloc_node(
				c, k & 1 ? SEGPOOL_THISNODE : 0, id);
			assert_non_null(objs[k]);
			CHECK(!wrong_node(objs[k], id, why, sizeof(why)), "%s",
			      why);
		}
		for (size_t k = 0; k < SP_ARRAY_SIZE(objs); k++)
			segpool_cache_free(c, objs[k]);
		for (size_t k = 0; k < 60; k++) {
			objs[k] = segpool_malloc_node(malloc_size(k), id);
			assert_non_null(objs[k]);
			CHECK(!wrong_node(objs[k], id, why, sizeof(why)), "%s",
			      why);
		}
		for (size_t k = 0; k < 60; k++)
			segpool_free(objs[k]);
	}
	/* a node id with no memory behind it */
	errno = 0;
	assert_null(segpool_cache_alloc_node(c, 0, SP_MAX_NODE_ID));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(segpool_malloc_node(64, -7));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* Live objects per node index, from the slab layer (magazines drained). */
static void node_counts(struct segpool_cache *c, uint64_t *live)
{
	assert_true(segpool_cache_shrink(c) >= 0);
	for (int i = 0; i < sp_topo.nr_nodes; i++) {
		pthread_mutex_lock(&c->node[i].lock);
		live[i] = c->node[i].active_objs;
		pthread_mutex_unlock(&c->node[i].lock);
	}
}

static void test_remote_frees_go_home(void **state)
{
	int ids[SP_MAX_NODES], n = nodes_with_cpus(ids);
	struct segpool_cache *c;
	struct sp_pcpu_stats st;
	size_t count = 2000;
	void **a, **b;
	uint64_t live[SP_MAX_NODES];

	(void)state;
	c = segpool_cache_create("numa-remote", 64, 0, 0, NULL);
	assert_non_null(c);
	a = calloc(count, sizeof(*a));
	b = calloc(count, sizeof(*b));
	assert_non_null(a);
	assert_non_null(b);
	for (int k = 0; k < n; k++) {
		int home = ids[k], away = ids[(k + 1) % n];
		struct worker wa = { .node = home, .fn = alloc_cache_objs,
				     .cache = c, .objs = a, .n = count };
		struct worker wf = { .node = away, .fn = free_cache_objs,
				     .cache = c, .objs = a, .n = count };
		struct worker wb = { .node = away, .fn = alloc_cache_objs,
				     .cache = c, .objs = b, .n = count };
		struct worker wh = { .node = home, .fn = alloc_cache_objs,
				     .cache = c, .objs = a, .n = count };

		run_on_node(&wa);	/* home allocates */
		run_on_node(&wf);	/* away frees them: remote frees */
		/* away allocates: only its own node's */
		run_on_node(&wb);
		/* home allocates: only its own node's */
		run_on_node(&wh);
		for (size_t i = 0; i < count; i++) {
			segpool_cache_free(c, a[i]);
			segpool_cache_free(c, b[i]);
		}
	}
	if (c->pcpu) {
		sp_pcpu_read_stats(c->pcpu, &st);
		print_message("# %d node(s) with CPUs: %" PRIu64
			      " remote frees, "
			      "%" PRIu64 " alien magazines sent home\n",
			      n, st.stat[SP_STAT_REMOTE_FREE],
			      st.alien_flushes);
		if (n > 1) {
			/* the away thread's frees at least; the main thread's
			 * frees of other nodes' objects may add to them */
			assert_true(st.stat[SP_STAT_REMOTE_FREE] >=
				    count * (uint64_t)n);
			assert_true(st.alien_flushes > 0);
		} else if (sp_topo.nr_nodes == 1) {
			assert_int_equal(st.stat[SP_STAT_REMOTE_FREE], 0);
		}
	}
	/* nothing lost: every object is back on its slab */
	node_counts(c, live);
	for (int i = 0; i < sp_topo.nr_nodes; i++)
		CHECK(live[i] == 0,
		      "node index %d: %" PRIu64 " objects still live", i,
		      live[i]);
	free(a);
	free(b);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/*
 * Every rendering of a cache's active objects gives @want (issue 23, item
 * 13): the info struct, the slabinfo dump, the detail and the JSON (the
 * per-node splits adding up to the total) and the export's record.  Objects
 * in an alien magazine count on their home node, not the freeing CPU's.
 */
static void renderings_agree(struct segpool_cache *c, uint64_t want)
{
	const char *name = segpool_cache_name(c);
	unsigned long long at;
	struct jdoc d;
	char *text;
	int count, me, nodes;
	uint64_t sum = 0;

	assert_int_equal(sp_test_info(c).active_objs, want);
	assert_int_equal(sp_slabinfo_row(name).active, want);
	text = sp_stats_capture(SP_STATS_DETAIL, name);
	assert_int_equal(sp_detail_num(text, name, "active_objs"), want);
	assert_int_equal(sp_detail_split(text, name, "active_objs", 'N', 0,
					 &at, &count), want);
	free(text);
	text = sp_stats_capture(SP_STATS_JSON, NULL);
	jparse(&d, text);
	me = jfind(&d, jget(&d, 0, "caches"), "name", name, 0);
	assert_true(me >= 0);
	assert_int_equal(jnum(&d, me, "active_objs"), want);
	nodes = jget(&d, me, "nodes");
	for (int m = d.v[nodes].child; m >= 0; m = d.v[m].next)
		sum += jnum(&d, m, "active_objs");
	assert_int_equal(sum, want);
	jfree(&d);
	free(text);
	/* the export's record, collected as the publisher does */
	{
		struct sp_export_layout l;
		const struct segpool_export_cache *recs;
		uint32_t n;
		void *area;
		bool found = false;

		sp_export_layout(&l, (uint32_t)sp_space.nr_regions,
				 sp_export_count_caches() + 8);
		area = calloc(1, l.size);
		assert_non_null(area);
		n = sp_export_collect(area, &l);
		recs = (const struct segpool_export_cache *)
			((const char *)area + l.caches_offset);
		for (uint32_t i = 0; i < n && i < l.capacity; i++) {
			if (strcmp(recs[i].name, name))
				continue;
			assert_int_equal(recs[i].active_objs, want);
			found = true;
		}
		assert_true(found);
		free(area);
	}
}

/* The depot objects of node index @n of @c's per-CPU layer. */
static uint64_t depot_objs(struct segpool_cache *c, int n)
{
	struct sp_depot_info di;

	sp_depot_read(c->pcpu, n, &di);
	return di.objs;
}

/* A CPU slot of node index @n, or -1 (a node without CPUs). */
static long slot_of_node(int n)
{
	for (int cpu = 0; cpu < sp_topo.nr_cpus; cpu++)
		if (sp_topo.cpu_idx[cpu] == n)
			return cpu;
	return -1;
}

/*
 * Remote frees wait in the freeing CPU's alien magazine for their node; a
 * full one goes to the home node's depot whole, no slab touched, and the
 * home's CPUs take it from there; half full or more it goes home on the
 * slot's bulk moments, whole after a decay pass with no remote free, and
 * into the slabs on a drain.  Watched on the home
 * node's slab and depot counters, with the CPU slot and the node injected
 * (lock mode).
 */
static void test_alien_magazines(void **state)
{
	struct sp_pcpu_cache *pc;
	struct segpool_cache *c;
	struct sp_cache_node *home;
	struct sp_alien *a;
	size_t total, cap, k = 0, half;
	void **objs, *got;
	uint64_t frees0, in_depot;
	long home_slot, decay_ms;
	int far;

	(void)state;
	SKIP_IF(sp_topo.nr_nodes < 2, "one node: no remote frees");
	SKIP_IF(sp_pcpu_mode != SP_PCPU_LOCK, "slot injection needs lock mode");
	/* no decay pass sends the waiting magazines home behind the test */
	decay_ms = segpool_get_decay_ms();
	assert_int_equal(segpool_set_decay_ms(SEGPOOL_DECAY_NEVER), 0);
	c = segpool_cache_create("numa-alien", 48, 0, 0, NULL);
	assert_non_null(c);
	pc = c->pcpu;
	assert_non_null(pc);
	assert_non_null(pc->alien);
	/* slot 0 is CPU 0's, of node index cpu_idx[0]; objects of another */
	sp_pcpu_test_inject_slot(0);
	sp_numa_test_inject_node(sp_topo.cpu_idx[0]);
	far = sp_topo.fallback[sp_topo.cpu_idx[0]][1];
	home = &c->node[far];
	a = &pc->alien[far];		/* slot 0's, for node index far */
	total = 2 * sp_mag_class_cap(SP_MAG_CLASSES - 1) + 8;
	objs = calloc(total, sizeof(*objs));
	assert_non_null(objs);
	for (size_t i = 0; i < total; i++) {
		objs[i] = segpool_cache_alloc_node(c, SEGPOOL_THISNODE,
						   sp_topo.node_id[far]);
		assert_non_null(objs[i]);
	}
	frees0 = home->xfer_frees;
	assert_int_equal(depot_objs(c, far), 0);

	/* the first remote free makes the magazine; all but one wait */
	segpool_cache_free(c, objs[k++]);
	assert_non_null(a->mag);
	cap = a->mag->cap;
	assert_true(cap >= 4 && 2 * cap + 8 <= total);
	while (k < cap - 1)
		segpool_cache_free(c, objs[k++]);
	assert_int_equal(sp_alien_objects(pc, 0), cap - 1);
	assert_int_equal(sp_pcpu_slot_objects(pc, 0), cap - 1);
	assert_int_equal(home->xfer_frees, frees0);
	assert_int_equal(sp_test_info(c).active_objs, total - k);
	renderings_agree(c, total - k);

	/* the one that fills it: the magazine goes to the home's depot */
	segpool_cache_free(c, objs[k++]);
	assert_null(a->mag);
	assert_int_equal(sp_alien_objects(pc, 0), 0);
	assert_int_equal(depot_objs(c, far), cap);
	assert_int_equal(home->xfer_frees, frees0);	/* no slab touched */
	assert_int_equal(pc->slots[0].stat[SP_STAT_DEPOT_PUT_FULL], 1);
	renderings_agree(c, total - k);

	/* a CPU of the home node takes it as its own: the last one in first */
	home_slot = slot_of_node(far);
	if (home_slot >= 0) {
		sp_pcpu_test_inject_slot(home_slot);
		sp_numa_test_inject_node(far);
		got = segpool_cache_alloc(c, 0);
		assert_ptr_equal(got, objs[k - 1]);
		assert_int_equal(depot_objs(c, far), 0);
		segpool_cache_free(c, got);	/* home: its own magazine */
		sp_pcpu_test_inject_slot(0);
		sp_numa_test_inject_node(sp_topo.cpu_idx[0]);
	} else {
		print_message("# node index %d has no CPU: no taker\n", far);
	}

	/* a bulk moment sends it home from half full on, not below */
	half = (cap + 1) / 2;
	for (size_t i = 0; i + 1 < half; i++)
		segpool_cache_free(c, objs[k++]);
	sp_alien_flush(pc, 0, false);	/* this thread owns slot 0 here */
	assert_int_equal(sp_alien_objects(pc, 0), half - 1);
	segpool_cache_free(c, objs[k++]);
	sp_alien_flush(pc, 0, false);
	assert_int_equal(sp_alien_objects(pc, 0), 0);
	assert_true(depot_objs(c, far) >= half);

	/* a slot idle for a pass of the decay sends them all home */
	for (int i = 0; i < 2; i++)
		segpool_cache_free(c, objs[k++]);
	in_depot = depot_objs(c, far);
	sp_pcpu_reap_stashes(pc);	/* the pass that sees them come */
	assert_int_equal(sp_alien_objects(pc, 0), 2);
	sp_pcpu_reap_stashes(pc);	/* no remote free since */
	assert_int_equal(sp_alien_objects(pc, 0), 0);
	assert_int_equal(depot_objs(c, far), in_depot + 2);

	/* a drain: the alien magazine's rounds into the home's slabs */
	for (int i = 0; i < 3; i++)
		segpool_cache_free(c, objs[k++]);
	assert_int_equal(sp_alien_objects(pc, 0), 3);
	frees0 = home->xfer_frees;
	segpool_cache_shrink(c);
	assert_int_equal(sp_alien_objects(pc, 0), 0);
	assert_null(a->mag);
	assert_true(home->xfer_frees >= frees0 + 3);
	assert_int_equal(sp_test_info(c).active_objs, total - k);
	renderings_agree(c, total - k);

	while (k < total)
		segpool_cache_free(c, objs[k++]);
	sp_pcpu_test_inject_slot(-1);
	sp_numa_test_inject_node(-1);
	assert_int_equal(segpool_cache_destroy(c), 0);
	free(objs);
	assert_int_equal(segpool_set_decay_ms(decay_ms), 0);
}

/*
 * In rseq mode a remote free takes the CPU's remote lane, no slow path:
 * every free of another node's object is a lane hit or a slow path, the
 * slow paths a few (one to load the lane, one each time its magazine
 * fills), and the full magazines reach the home node's depot.  Pinned to
 * one CPU, so that the lane is that CPU's slot's.
 */
static void test_remote_lane(void **state)
{
	const size_t count = 3000;
	struct sp_pcpu_cache *pc;
	struct segpool_cache *c;
	uint64_t hits0, slow0, hits, slow;
	int cpu, here, far;
	void **objs;

	(void)state;
	SKIP_IF(sp_topo.nr_nodes < 2, "one node: no remote frees");
	SKIP_IF(sp_pcpu_mode != SP_PCPU_RSEQ, "the lane is rseq mode's");
	cpu = sp_test_allowed_cpu(0);
	assert_int_equal(sp_test_pin(cpu), 0);
	here = sp_topo.cpu_idx[cpu];
	far = sp_topo.fallback[here][1];
	c = segpool_cache_create("numa-lane", 64, 0, 0, NULL);
	assert_non_null(c);
	pc = c->pcpu;
	assert_non_null(pc);
	assert_non_null(pc->lanes);
	objs = calloc(count, sizeof(*objs));
	assert_non_null(objs);
	for (size_t i = 0; i < count; i++) {
		objs[i] = segpool_cache_alloc_node(c, SEGPOOL_THISNODE,
						   sp_topo.node_id[far]);
		assert_non_null(objs[i]);
	}
	hits0 = sp_pcpu_lane_hits(pc, (unsigned long)cpu);
	slow0 = pc->slots[cpu].stat[SP_STAT_FREE_SLOWPATH];
	for (size_t i = 0; i < count; i++)
		segpool_cache_free(c, objs[i]);
	hits = sp_pcpu_lane_hits(pc, (unsigned long)cpu) - hits0;
	slow = pc->slots[cpu].stat[SP_STAT_FREE_SLOWPATH] - slow0;
	print_message("# %zu remote frees: %" PRIu64 " lane hits, %" PRIu64
		      " slow paths\n", count, hits, slow);
	assert_int_equal(hits + slow, count);
	/* a few slow paths per magazine (aborts on preemption add some) */
	CHECK(slow * 8 < count, "%" PRIu64 " of %zu remote frees slow", slow,
	      count);
	CHECK(depot_objs(c, far) > 0, "no magazine reached node index %d",
	      far);
	/* nothing lost or counted twice: all cached, none active */
	assert_int_equal(sp_test_info(c).active_objs, 0);
	renderings_agree(c, 0);
	segpool_cache_shrink(c);
	assert_int_equal(sp_test_info(c).total_slabs, 0);
	assert_int_equal(segpool_cache_destroy(c), 0);
	free(objs);
	sp_test_unpin();
}

static void test_stats_match_placement(void **state)
{
	struct segpool_cache *c;
	uint64_t live[SP_MAX_NODES], placed[SP_MAX_NODES] = { 0 };
	struct segpool_cache_info info;
	size_t total = 0, k = 0;
	void **objs;

	(void)state;
	for (int i = 0; i < sp_topo.nr_nodes; i++)
		total += 150 * (size_t)(i + 1);
	objs = calloc(total, sizeof(*objs));
	assert_non_null(objs);
	c = segpool_cache_create("numa-stats", 256, 0, 0, NULL);
	assert_non_null(c);
	for (int i = 0; i < sp_topo.nr_nodes; i++)
		for (size_t j = 0; j < 150 * (size_t)(i + 1); j++) {
			objs[k] = segpool_cache_alloc_node(c, 0,
							   sp_topo.node_id[i]);
			assert_non_null(objs[k]);
			k++;
		}
	for (k = 0; k < total; k++) {
		int node = placement_checkable() ? page_node(objs[k]) :
						   segpool_obj_node(objs[k]);
		int idx = sp_numa_node_to_idx(node);

		CHECK(idx >= 0, "object %p on node %d, not one of segpool's",
		      objs[k], node);
		placed[idx]++;
	}
	node_counts(c, live);
	for (int i = 0; i < sp_topo.nr_nodes; i++) {
		print_message("# node %d: %" PRIu64
			      " live by the stats, %" PRIu64
			      " by page placement\n",
			      sp_topo.node_id[i], live[i], placed[i]);
		CHECK(live[i] == placed[i], "node %d: stats say %" PRIu64
		      ", pages say %" PRIu64, sp_topo.node_id[i], live[i],
		      placed[i]);
		assert_int_equal(placed[i], 150 * (uint64_t)(i + 1));
	}
	info = sp_test_info(c);
	assert_int_equal(info.active_objs, total);
	for (k = 0; k < total; k++)
		segpool_cache_free(c, objs[k]);
	free(objs);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

static void test_interleave(void **state)
{
	struct segpool_cache *c;
	uint64_t per[SP_MAX_NODES] = { 0 };
	int nr = sp_topo.nr_nodes;
	size_t count = 64 * (size_t)nr;
	void **objs;
	char why[160];

	(void)state;
	errno = 0;
	assert_null(segpool_cache_create(
		"numa-both", 64, 0, SEGPOOL_INTERLEAVE | SEGPOOL_NODE_STRICT,
		NULL));
	assert_int_equal(errno, EINVAL);
	c = segpool_cache_create("numa-interleave", 512, 0, SEGPOOL_INTERLEAVE,
				 NULL);
	assert_non_null(c);
	CHECK(c->pcpu == NULL, "an interleaved cache has per-CPU magazines");
	objs = calloc(count, sizeof(*objs));
	assert_non_null(objs);
	for (size_t k = 0; k < count; k++) {
		int node;

		objs[k] = segpool_cache_alloc(c, 0);
		assert_non_null(objs[k]);
		node = placement_checkable() ? page_node(objs[k]) :
					       segpool_obj_node(objs[k]);
		assert_int_equal(node, segpool_obj_node(objs[k]));
		assert_true(sp_numa_node_to_idx(node) >= 0);
		per[sp_numa_node_to_idx(node)]++;
	}
	for (int i = 0; i < nr; i++)
		CHECK(per[i] == 64, "node %d got %" PRIu64 " of %zu objects",
		      sp_topo.node_id[i], per[i], count);
	/* a node asked for is honoured */
	for (int i = 0; i < nr; i++) {
		void *p = segpool_cache_alloc_node(c, 0, sp_topo.node_id[i]);

		assert_non_null(p);
		CHECK(!wrong_node(p, sp_topo.node_id[i], why, sizeof(why)),
		      "%s", why);
		segpool_cache_free(c, p);
	}
	for (size_t k = 0; k < count; k++)
		segpool_cache_free(c, objs[k]);
	free(objs);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* Allocate from node @id with @gfp until it fails; how many, errno saved. */
static size_t fill_node(struct segpool_cache *c, unsigned int gfp, int id,
			void **objs, size_t max, int *err)
{
	size_t n = 0;
	char why[160];

	*err = 0;
	while (n < max) {
		void *p = segpool_cache_alloc_node(c, gfp, id);

		if (!p) {
			*err = errno;
			break;
		}
		CHECK(!wrong_node(p, id, why, sizeof(why)), "%s", why);
		objs[n++] = p;
	}
	return n;
}

/*
 * A full node (its 16 MiB region used up): THISNODE and a strict cache fail
 * cleanly with ENOMEM, the default falls back to the nearest node, and once
 * everything is freed the node holds as many objects again.
 */
static void test_full_node(void **state)
{
	const size_t osize = 60 << 10, max = (32UL << 20) / osize;
	struct segpool_cache *c, *strict;
	void **objs;

	(void)state;
	SKIP_IF(!small_regions(), "needs SEGPOOL_REGION_SIZE=16M (variant)");
	c = segpool_cache_create("numa-full", osize, 0, 0, NULL);
	strict = segpool_cache_create("numa-full-strict", osize, 0,
				      SEGPOOL_NODE_STRICT, NULL);
	assert_non_null(c);
	assert_non_null(strict);
	objs = calloc(max, sizeof(*objs));
	assert_non_null(objs);
	for (int i = 0; i < sp_topo.nr_nodes; i++) {
		int id = sp_topo.node_id[i], err, err2;
		size_t n, again;
		void *p;

		n = fill_node(c, SEGPOOL_THISNODE, id, objs, max, &err);
		CHECK(err == ENOMEM, "node %d: THISNODE stopped with errno %d "
		      "after %zu objects", id, err, n);
		CHECK(n > 0 && n * osize <= (16UL << 20),
		      "node %d: %zu objects of %zu bytes in a 16 MiB region",
		      id, n, osize);
		/* strict caches never fall back either */
		errno = 0;
		assert_null(segpool_cache_alloc_node(strict, 0, id));
		assert_int_equal(errno, ENOMEM);
		/* the default falls back to the nearest node */
		p = segpool_cache_alloc_node(c, 0, id);
		if (sp_topo.nr_nodes == 1) {
			assert_null(p);
			assert_int_equal(errno, ENOMEM);
		} else {
			int near = sp_topo.node_id[sp_topo.fallback[i][1]];

			assert_non_null(p);
			CHECK(segpool_obj_node(p) == near,
			      "node %d full: fell back to %d, nearest is %d",
			      id, segpool_obj_node(p), near);
			segpool_cache_free(c, p);
		}
		/*
		 * Nothing lost: everything back, and room for as many again.
		 * Every cache is shrunk, not only this one: the frees filled
		 * magazines, made on this node (CPU 1's nearest in the sparse
		 * rig), and the magazine caches' empty slabs would keep part
		 * of the region until the decay shrinks them.
		 */
		for (size_t k = 0; k < n; k++)
			segpool_cache_free(c, objs[k]);
		assert_true(segpool_shrink_all() >= 0);
		again = fill_node(c, SEGPOOL_THISNODE, id, objs, max, &err2);
		print_message("# node %d: full after %zu objects of %zu KiB, "
			      "%zu again after freeing\n", id, n, osize >> 10,
			      again);
		CHECK(again >= n, "node %d: %zu objects, then only %zu", id, n,
		      again);
		for (size_t k = 0; k < again; k++)
			segpool_cache_free(c, objs[k]);
		assert_true(segpool_cache_shrink(c) >= 0);
	}
	free(objs);
	assert_int_equal(segpool_cache_destroy(strict), 0);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/*
 * A slab's descriptor is the side line of its first page, so it lies in
 * the part of the side table that describes the slab's own region: a slab
 * on node index 2 has its descriptor beside node 2's pages, and says so.
 * Objects of caches of one, two and eight pages a slab, on every node,
 * taken from the slab layer directly and put back through a flush (which
 * computes the descriptor rather than reading the pagemap: it must agree).
 */
static void test_desc_on_its_node(void **state)
{
	enum { N = 300 };
	static const size_t sizes[] = { 64, 2000, 9000 };
	void *objs[N];

	(void)state;
	for (size_t k = 0; k < SP_ARRAY_SIZE(sizes); k++) {
		struct segpool_cache *c = segpool_cache_create("desc-home",
							       sizes[k], 0, 0,
							       NULL);

		assert_non_null(c);
		for (int idx = 0; idx < sp_space.nr_regions; idx++) {
			const struct sp_region *r = &sp_space.region[idx];
			char *lo = sp_space_side(r->base);
			char *hi = lo + r->nr_pages * SP_PAGE_SIDE_BYTES;
			uint64_t before = c->node[idx].active_objs;

			assert_int_equal(sp_slab_alloc_bulk(c, idx, N, objs),
					 N);
			for (int i = 0; i < N; i++) {
				struct sp_slab *s = sp_obj_to_slab(objs[i]);
				uintptr_t off = (uintptr_t)objs[i] -
						(uintptr_t)sp_space.base;
				uintptr_t size = (uintptr_t)SP_PAGE_SIZE <<
						 c->order;
				char *block = sp_space.base +
					      SP_ALIGN_DOWN(off, size);

				CHECK(s == sp_slab_desc(block), "%s, node "
				      "index %d: object %p: the pagemap names "
				      "%p, its slab's side line is %p",
				      c->name, idx, objs[i], (void *)s,
				      (void *)sp_slab_desc(block));
				CHECK((char *)s >= lo && (char *)s < hi &&
				      s->node == idx && s->cache == c,
				      "%s: descriptor %p of node index %d "
				      "says node %u, cache %p", c->name,
				      (void *)s, idx, s->node,
				      (void *)s->cache);
			}
			sp_slab_free_bulk(c, N, objs);
			CHECK(c->node[idx].active_objs == before, "%s, node "
			      "index %d: %llu objects out after the flush, "
			      "%llu before", c->name, idx,
			      (unsigned long long)c->node[idx].active_objs,
			      (unsigned long long)before);
		}
		assert_int_equal(segpool_cache_destroy(c), 0);
	}
}

/*
 * The node injection hook steers everything that asks for "the current node".
 */
static void test_injected_node(void **state)
{
	char why[160];

	(void)state;
	SKIP_IF(sp_topo.nr_nodes < 2, "one node: nothing to inject");
	for (int i = 0; i < sp_topo.nr_nodes; i++) {
		int id = sp_topo.node_id[i];
		void *big;

		sp_numa_test_inject_node(i);
		assert_int_equal(segpool_numa_current_node(), id);
		/* large allocations follow the current node */
		big = segpool_malloc(256 << 10);
		assert_non_null(big);
		CHECK(!wrong_node(big, id, why, sizeof(why)), "%s", why);
		segpool_free(big);
	}
	sp_numa_test_inject_node(-1);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_topology),
	cmocka_unit_test(test_local_objects_on_every_node),
	cmocka_unit_test(test_alloc_node_honours_the_node),
	cmocka_unit_test(test_remote_frees_go_home),
	cmocka_unit_test(test_alien_magazines),
	cmocka_unit_test(test_remote_lane),
	cmocka_unit_test(test_stats_match_placement),
	cmocka_unit_test(test_interleave),
	cmocka_unit_test(test_full_node),
	cmocka_unit_test(test_desc_on_its_node),
	cmocka_unit_test(test_injected_node),
	cmocka_unit_test(test_os_nodes),
};

SP_TEST_MAIN_VARIANTS(tests, variants)
