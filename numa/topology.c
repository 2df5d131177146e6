// SPDX-License-Identifier: MIT
/*
 * numa/topology.c - the node model: nodes, their CPUs and distances.
 *
 * The facts come from the OS layer (os/cpu.c, which asks the kernel); this
 * file turns them into segpool's dense node indexes and fallback orders.
 *
 * Without NUMA policy (sp_os_numa_init() false) the machine is one node,
 * index 0, id 0, and every CPU belongs to it.  SEGPOOL_NUMA_BIND chooses
 * whether regions are bound to their node (mbind): "auto" (default: only with
 * more than one node, so one node pays nothing), "always" or "never".
 *
 * Two more switches, read once:
 *   SEGPOOL_NUMA=off           one node whatever the machine has: the
 *                              baseline that measures what the NUMA layer
 *                              costs, and an escape hatch.
 *   SEGPOOL_NUMA_FAKE_NODES=N  (2..8; tests) N emulated nodes with the
 *                              sparse ids 0, 2, 4, ..., all on this
 *                              machine's memory and never bound; CPU c
 *                              belongs to node index c % N (so with fewer
 *                              CPUs than nodes the last nodes have none, as
 *                              memory-only nodes), distance 10 + 10 * |a - b|.
 *                              Node routing, remote frees, fallback order and
 *                              policies then run on a one-node machine.
 */
#include <stdlib.h>
#include <string.h>

#include "internal/env.h"
#include "numa/topology.h"
#include "os/cpu.h"

struct sp_topology sp_topo = { .nr_nodes = 1 };

_Static_assert(SP_MAX_FAKE_NODES == SP_ENV_FAKE_NODES_MAX,
	       "SEGPOOL_NUMA_FAKE_NODES: the table's bound");

/* Test hook: the injected node index of this thread, or -1. */
static __thread int sp_numa_test_idx = -1;

static enum sp_bind_mode sp_bind_mode_from_env(void)
{
	static const struct sp_env_var boolean = { .kind = SP_ENV_BOOL };
	const char *s = sp_env_get(SP_ENV_NUMA_BIND);
	long long v;
	const char *why;

	if (!s)
		return SP_BIND_AUTO;
	if (!sp_env_parse(&boolean, s, &v))	/* a boolean: always, never */
		return v ? SP_BIND_ALWAYS : SP_BIND_NEVER;
	why = sp_env_parse(&sp_env_table[SP_ENV_NUMA_BIND], s, &v);
	if (why) {
		sp_env_bad(SP_ENV_NUMA_BIND, s, why);
		return SP_BIND_AUTO;
	}
	/* the table's words: auto, always, never */
	return v == 1 ? SP_BIND_ALWAYS : v == 2 ? SP_BIND_NEVER : SP_BIND_AUTO;
}

/*
 * One node, id @node: index 0, and every CPU's.  The CPUs up to the highest
 * possible one, as sp_topology_numa() does: no CPU id reaches past them,
 * and the table's 8 KiB span pages a small process need not touch.
 */
static void sp_topology_one(int node)
{
	sp_topo.nr_nodes = 1;
	sp_topo.node_id[0] = node;
	sp_topo.node_idx[node] = 0;
	for (int c = 0; c < sp_topo.nr_cpus; c++)
		sp_topo.cpu_idx[c] = 0;
	sp_topo.fallback[0][0] = 0;
}

static void sp_topology_single(void)
{
	sp_topology_one(0);
}

int sp_numa_distance(int a, int b)
{
	int d;

	if (sp_topo.fake)
		return 10 + 10 * (a > b ? a - b : b - a);
	if (sp_topo.nr_nodes == 1)
		return 10;
	d = sp_os_numa_distance(sp_topo.node_id[a], sp_topo.node_id[b]);
	return d > 0 ? d : (a == b ? 10 : 255);
}

/* Fill fallback[i]: i itself, then every other index by (distance, index). */
static void sp_topology_fallback(void)
{
	for (int i = 0; i < sp_topo.nr_nodes; i++) {
		unsigned char *f = sp_topo.fallback[i];
		int n = 0;

		f[n++] = (unsigned char)i;
		for (int j = 0; j < sp_topo.nr_nodes; j++) {
			int k;

			if (j == i)
				continue;
			for (k = n; k > 1 && sp_numa_distance(i, f[k - 1]) >
					     sp_numa_distance(i, j); k--)
				f[k] = f[k - 1];
			f[k] = (unsigned char)j;
			n++;
		}
	}
}

static int sp_nearest_idx(int node)
{
	int best = 0, bestd = 1 << 30;

	for (int i = 0; i < sp_topo.nr_nodes; i++) {
		int d = sp_os_numa_distance(node, sp_topo.node_id[i]);

		if (d <= 0)
			d = 1 << 20;
		if (d < bestd) {
			bestd = d;
			best = i;
		}
	}
	return best;
}

static void sp_topology_numa(void)
{
	int only = sp_os_numa_only_node();
	int maxnode, n = 0;

	/*
	 * Memory on one node only (a one-node machine, or a cpuset's one
	 * node): the model below would find that node alone usable, and
	 * every CPU's nearest; it needs no file to say so.
	 */
	if (only >= 0 && only <= SP_MAX_NODE_ID) {
		sp_topology_one(only);
		return;
	}
	maxnode = sp_os_numa_max_node();

	for (int node = 0; node <= maxnode && node <= SP_MAX_NODE_ID; node++) {
		if (!sp_os_numa_node_usable(node))
			continue;
		if (n == SP_MAX_NODES)
			break;
		sp_topo.node_id[n] = node;
		sp_topo.node_idx[node] = (short)n;
		n++;
	}
	if (n == 0) {
		sp_topology_single();
		return;
	}
	sp_topo.nr_nodes = n;
	for (int c = 0; c < sp_topo.nr_cpus && c < SP_MAX_CPUS; c++) {
		int node = sp_os_numa_node_of_cpu(c);
		int idx = sp_numa_node_to_idx(node);

		if (idx < 0)
			idx = node >= 0 ? sp_nearest_idx(node) : 0;
		sp_topo.cpu_idx[c] = (short)idx;
	}
	sp_topology_fallback();
}

/* SEGPOOL_NUMA_FAKE_NODES=N: N emulated nodes, ids 0, 2, 4, ... */
static void sp_topology_fake(int n)
{
	sp_topo.fake = true;
	sp_topo.nr_nodes = n;
	for (int i = 0; i < n; i++) {
		sp_topo.node_id[i] = 2 * i;
		sp_topo.node_idx[2 * i] = (short)i;
	}
	for (int c = 0; c < SP_MAX_CPUS; c++)
		sp_topo.cpu_idx[c] = (short)(c % n);
	sp_topology_fallback();
}

static int sp_fake_nodes_from_env(void)
{
	/* 2 to SP_MAX_FAKE_NODES, checked by the table; 0: none */
	return (int)sp_env_number(SP_ENV_NUMA_FAKE_NODES, 0);
}

void sp_topology_init(int nr_cpus)
{
	enum sp_bind_mode mode = sp_bind_mode_from_env();
	int fake = sp_fake_nodes_from_env();
	long ncpu = nr_cpus;

	for (int i = 0; i <= SP_MAX_NODE_ID; i++)
		sp_topo.node_idx[i] = -1;
	sp_topo.rseq_feature_size = sp_os_rseq_feature_size();
	sp_topo.numa_available = sp_os_numa_init();
	sp_topo.nr_cpus = (int)SP_MIN(SP_MAX(ncpu, 1L), (long)SP_MAX_CPUS);
	sp_topo.off = !sp_env_bool(SP_ENV_NUMA, true);

	if (sp_topo.off)
		sp_topology_single();
	else if (fake)
		sp_topology_fake(fake);
	else if (sp_topo.numa_available)
		sp_topology_numa();
	else
		sp_topology_single();

	/* emulated node ids are not the kernel's: never bind to them */
	sp_topo.bind = !sp_topo.fake && (mode == SP_BIND_ALWAYS ||
		(mode == SP_BIND_AUTO && sp_topo.nr_nodes > 1));
}

void sp_numa_test_inject_node(int idx)
{
	sp_numa_test_idx = idx >= 0 && idx < sp_topo.nr_nodes ? idx : -1;
}

int sp_numa_current_idx_slow(void)
{
	int node, cpu;

	if (unlikely(sp_numa_test_idx >= 0))
		return sp_numa_test_idx;
	/* the kernel's node_id names real nodes, not emulated ones */
	node = sp_topo.fake ? -1 :
			      sp_thread_node_hint(sp_topo.rseq_feature_size);
	if (node >= 0) {
		int idx = sp_numa_node_to_idx(node);

		if (idx >= 0)
			return idx;
	}
	cpu = sp_thread_cpu();
	if (cpu < 0 || cpu >= SP_MAX_CPUS)
		return 0;
	return sp_topo.cpu_idx[cpu];
}
