// SPDX-License-Identifier: MIT
/*
 * numa/topology.c - discover nodes, CPUs and distances with libnuma.
 *
 * Without libnuma support (numa_available() < 0) the machine is one node,
 * index 0, id 0, and every CPU belongs to it.  SEGPOOL_NUMA_BIND chooses
 * whether regions are bound with mbind(): "auto" (default: only with more
 * than one node, so one node pays nothing), "always" or "never".
 */
#include <numa.h>
#include <stdlib.h>
#include <string.h>

#include "internal/thread_cpu.h"
#include "numa/topology.h"

struct sp_topology sp_topo = { .nr_nodes = 1 };

static enum sp_bind_mode sp_bind_mode_from_env(void)
{
	const char *s = getenv("SEGPOOL_NUMA_BIND");

	if (!s || !strcmp(s, "auto"))
		return SP_BIND_AUTO;
	if (!strcmp(s, "always") || !strcmp(s, "1"))
		return SP_BIND_ALWAYS;
	return SP_BIND_NEVER;
}

static void sp_topology_single(void)
{
	sp_topo.nr_nodes = 1;
	sp_topo.node_id[0] = 0;
	sp_topo.node_idx[0] = 0;
	for (int c = 0; c < SP_MAX_CPUS; c++)
		sp_topo.cpu_idx[c] = 0;
	sp_topo.fallback[0][0] = 0;
}

static int sp_distance(int a, int b)
{
	int d = numa_distance(sp_topo.node_id[a], sp_topo.node_id[b]);

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
			for (k = n; k > 1 && sp_distance(i, f[k - 1]) > sp_distance(i, j); k--)
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
		int d = numa_distance(node, sp_topo.node_id[i]);

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
	struct bitmask *mems = numa_get_mems_allowed();
	int maxnode = numa_max_node();
	int n = 0;

	for (int node = 0; node <= maxnode && node <= SP_MAX_NODE_ID; node++) {
		if (!mems || !numa_bitmask_isbitset(mems, (unsigned int)node))
			continue;
		if (numa_node_size64(node, NULL) <= 0)
			continue;
		if (n == SP_MAX_NODES)
			break;
		sp_topo.node_id[n] = node;
		sp_topo.node_idx[node] = (short)n;
		n++;
	}
	if (mems)
		numa_bitmask_free(mems);
	if (n == 0) {
		sp_topology_single();
		return;
	}
	sp_topo.nr_nodes = n;
	for (int c = 0; c < sp_topo.nr_cpus && c < SP_MAX_CPUS; c++) {
		int node = numa_node_of_cpu(c);
		int idx = sp_numa_node_to_idx(node);

		if (idx < 0)
			idx = node >= 0 ? sp_nearest_idx(node) : 0;
		sp_topo.cpu_idx[c] = (short)idx;
	}
	sp_topology_fallback();
}

void sp_topology_init(int nr_cpus)
{
	enum sp_bind_mode mode = sp_bind_mode_from_env();
	long ncpu = nr_cpus;

	for (int i = 0; i <= SP_MAX_NODE_ID; i++)
		sp_topo.node_idx[i] = -1;
	sp_topo.rseq_feature_size = getauxval(AT_RSEQ_FEATURE_SIZE);
	sp_topo.numa_available = numa_available() >= 0;
	sp_topo.nr_cpus = (int)SP_MIN(SP_MAX(ncpu, 1L), (long)SP_MAX_CPUS);

	if (sp_topo.numa_available)
		sp_topology_numa();
	else
		sp_topology_single();

	sp_topo.bind = mode == SP_BIND_ALWAYS ||
		(mode == SP_BIND_AUTO && sp_topo.nr_nodes > 1);
}

int sp_numa_current_idx_slow(void)
{
	int node = sp_thread_node_hint(sp_topo.rseq_feature_size);
	int cpu;

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
