// SPDX-License-Identifier: MIT
/*
 * percpu/alien.c - remote frees batched per home node (see alien.h).
 *
 * Layout: pc->alien is an array of nr_slots * nr_nodes batches, slot-major,
 * so one CPU's batches are contiguous and no two CPUs share a line.  The
 * batch for the slot's own node stays unused (its objects go to the
 * magazines).  Sending a batch home is one sp_slab_free_bulk() call, which
 * takes the home node's lock once for the whole batch.
 */
#include "numa/topology.h"
#include "percpu/alien.h"
#include "percpu/pcpu.h"
#include "slab/slab.h"

size_t sp_alien_bytes(unsigned long nr_slots)
{
	if (sp_topo.nr_nodes < 2)
		return 0;
	return nr_slots * (size_t)sp_topo.nr_nodes * sizeof(struct sp_alien);
}

static inline struct sp_alien *sp_alien_of(struct sp_pcpu_cache *pc,
					   unsigned long slot,
					   unsigned int node)
{
	return &pc->alien[slot * (unsigned long)sp_topo.nr_nodes + node];
}

static inline void sp_alien_stat(struct sp_pcpu_slot *slot, enum sp_pcpu_stat s,
				 uint64_t n)
{
	SP_WRITE_ONCE(slot->stat[s], slot->stat[s] + n);
}

/*
 * Accounting: a remote free counts as the slot's (an application free put
 * in the per-CPU layer, SP_STAT_FREE_SLOWPATH, besides SP_STAT_REMOTE_FREE),
 * and a batch going home as a flush (SP_STAT_FLUSH_OBJS, the slab layer's
 * xfer_frees), exactly as a magazine's rounds: the slot's occupancy (in
 * minus out) then includes the objects waiting here, and the statistics
 * count each free once.
 */
static void sp_alien_send(struct sp_pcpu_cache *pc, struct sp_pcpu_slot *slot,
			  struct sp_alien *a)
{
	if (!a->count)
		return;
	sp_slab_flush(pc->cache, a->count, a->objs);
	sp_alien_stat(slot, SP_STAT_FLUSH_OBJS, a->count);
	SP_WRITE_ONCE(a->count, 0);
	SP_WRITE_ONCE(a->flushes, a->flushes + 1);
}

void sp_alien_put(struct sp_pcpu_cache *pc, unsigned long slot,
		  unsigned int node, void *obj)
{
	struct sp_alien *a;

	if (unlikely(!pc->alien || node >= (unsigned int)sp_topo.nr_nodes)) {
		/* no remote node on one node; stay correct anyway */
		sp_slab_free_bulk(pc->cache, 1, &obj);
		return;
	}
	a = sp_alien_of(pc, slot, node);
	if (a->count == SP_ALIEN_BATCH)
		sp_alien_send(pc, &pc->slots[slot], a);
	a->objs[a->count] = obj;
	SP_WRITE_ONCE(a->count, a->count + 1);
	sp_alien_stat(&pc->slots[slot], SP_STAT_FREE_SLOWPATH, 1);
}

void sp_alien_flush(struct sp_pcpu_cache *pc, unsigned long slot)
{
	if (!pc->alien)
		return;
	for (int n = 0; n < sp_topo.nr_nodes; n++)
		sp_alien_send(pc, &pc->slots[slot],
			      sp_alien_of(pc, slot, (unsigned int)n));
}

unsigned int sp_alien_objects_to(struct sp_pcpu_cache *pc, unsigned long slot,
				 int node)
{
	if (!pc->alien || node < 0 || node >= sp_topo.nr_nodes)
		return 0;
	return SP_READ_ONCE(sp_alien_of(pc, slot, (unsigned int)node)->count);
}

unsigned int sp_alien_objects(struct sp_pcpu_cache *pc, unsigned long slot)
{
	unsigned int sum = 0;

	if (!pc->alien)
		return 0;
	for (int n = 0; n < sp_topo.nr_nodes; n++)
		sum += SP_READ_ONCE(sp_alien_of(pc, slot,
						 (unsigned int)n)->count);
	return sum;
}

uint64_t sp_alien_flushes(struct sp_pcpu_cache *pc)
{
	uint64_t sum = 0;

	if (!pc->alien)
		return 0;
	for (unsigned long i = 0; i < pc->nr_slots; i++)
		for (int n = 0; n < sp_topo.nr_nodes; n++)
			sum += SP_READ_ONCE(sp_alien_of(pc, i,
					(unsigned int)n)->flushes);
	return sum;
}

void sp_alien_forget(struct sp_pcpu_cache *pc, unsigned long slot)
{
	if (!pc->alien)
		return;
	for (int n = 0; n < sp_topo.nr_nodes; n++)
		sp_alien_of(pc, slot, (unsigned int)n)->count = 0;
}
