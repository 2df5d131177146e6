/* SPDX-License-Identifier: MIT */
/*
 * numa/topology.h - NUMA nodes and CPUs as segpool sees them (private).
 *
 * Nodes are named two ways: the kernel's node id (possibly sparse: 0 and 2)
 * and segpool's dense index 0..nr_nodes-1, which sizes every per-node array.
 * Only nodes with memory the process may use get an index; a CPU of a
 * memory-less node maps to the nearest node with memory.
 */
#ifndef SP_NUMA_TOPOLOGY_H
#define SP_NUMA_TOPOLOGY_H

#include <stdbool.h>
#include "internal/compiler.h"

#define SP_MAX_NODES	64		/* dense indexes */
#define SP_MAX_NODE_ID	1023		/* kernel node ids */
#define SP_MAX_CPUS	4096

enum sp_bind_mode {
	SP_BIND_AUTO,		/* bind regions when there
				 * is more than one node */
	SP_BIND_ALWAYS,		/* bind even on one node (tests,
				 * SEGPOOL_NUMA_BIND=always) */
	SP_BIND_NEVER,		/* never bind, no mbind call
				 * (SEGPOOL_NUMA_BIND=never) */
};

/* Most nodes SEGPOOL_NUMA_FAKE_NODES may emulate. */
#define SP_MAX_FAKE_NODES	8

struct sp_topology {
	int nr_nodes;				/* nodes with memory, >= 1 */
	int nr_cpus;				/* possible CPUs,
						 * sizes cpu tables */
	bool numa_available;			/* NUMA policy works here */
	bool bind;				/* regions are bound (mbind) */
	bool off;				/* SEGPOOL_NUMA=off: one node */
	bool fake;				/* SEGPOOL_NUMA_FAKE_NODES:
						 * emulated nodes on this
						 * machine's memory */
	/* getauxval(AT_RSEQ_FEATURE_SIZE) */
	unsigned long rseq_feature_size;
	int node_id[SP_MAX_NODES];		/* index -> kernel node id */
	short node_idx[SP_MAX_NODE_ID + 1];	/* node id -> index, or -1 */
	short cpu_idx[SP_MAX_CPUS];		/* cpu -> node index */
	/* For each index, all indexes by increasing distance (itself first). */
	unsigned char fallback[SP_MAX_NODES][SP_MAX_NODES];
};

extern SP_INTERNAL struct sp_topology sp_topo;

/*
 * sp_topology_init() - read the topology once.  @nr_cpus is the number of
 * possible CPU ids (the per-CPU layer counts them); it sizes cpu_idx.
 */
SP_INTERNAL void sp_topology_init(int nr_cpus);

/* sp_numa_node_to_idx() - index of kernel node @node, or -1 if unusable. */
static inline int sp_numa_node_to_idx(int node)
{
	if (node < 0 || node > SP_MAX_NODE_ID)
		return -1;
	return sp_topo.node_idx[node];
}

SP_INTERNAL int sp_numa_current_idx_slow(void);

/*
 * sp_numa_distance() - distance between node indexes @a and @b (10 local,
 * larger farther; the emulated distances with SEGPOOL_NUMA_FAKE_NODES).
 */
SP_INTERNAL int sp_numa_distance(int a, int b);

/*
 * Test hook: make the calling thread's current node index @idx (-1 undoes
 * it), whatever CPU it runs on.  With the per-CPU layer on, pair it with
 * sp_pcpu_test_inject_slot() of a CPU of that node in lock mode, since a
 * CPU's magazines serve its own node only.
 */
SP_INTERNAL void sp_numa_test_inject_node(int idx);

/*
 * sp_numa_current_idx() - index of the calling CPU's node.  One node (the
 * common case) costs a load and a predicted branch.
 */
static inline int sp_numa_current_idx(void)
{
	if (likely(sp_topo.nr_nodes == 1))
		return 0;
	return sp_numa_current_idx_slow();
}

#endif /* SP_NUMA_TOPOLOGY_H */
