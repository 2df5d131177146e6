// SPDX-License-Identifier: MIT
/*
 * percpu/alien.c - remote frees in magazines per home node (see alien.h).
 *
 * Layout: pc->alien is an array of nr_slots * nr_nodes words, slot-major,
 * each on its own line.  The word for the slot's own node stays unused
 * (its objects go to the magazines).
 *
 * Accounting: a remote free counts as the slot's (an application free put
 * in the per-CPU layer, SP_STAT_FREE_SLOWPATH, besides SP_STAT_REMOTE_FREE),
 * and a magazine going home as one going to a depot (SP_STAT_DEPOT_PUT_*,
 * counted by the depot) or, into the slabs, as a flush (SP_STAT_FLUSH_OBJS,
 * the slab layer's xfer_frees), exactly as the slot's own magazines: the
 * slot's occupancy (in minus out) then includes the objects waiting here,
 * and the statistics count each free once.
 */
#include "internal/debug.h"
#include "numa/topology.h"
#include "percpu/alien.h"
#include "percpu/depot.h"
#include "percpu/magazine.h"
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

/* --- the remote lane ------------------------------------------------------
 * Slot @slot's lane holds one of its alien magazines where a remote free's
 * push takes it (sp_pcpu_lane_push()).  An alien magazine is in the lane
 * or in its alien word, never both.  The owner of the slot owns the lane:
 * no push runs while the slot is owned (the push refuses an owned slot),
 * so the owner reads and writes the lane's words as its own, and publishes
 * them when it releases the slot.
 */

static inline struct sp_lane *sp_lane_of(struct sp_pcpu_cache *pc,
					 unsigned long slot)
{
	return pc->lanes ? &pc->lanes[slot] : NULL;
}

/* Owner: the lane's magazine back to its alien word, its count from top. */
static void sp_lane_unload(struct sp_pcpu_cache *pc, unsigned long slot)
{
	struct sp_lane *l = sp_lane_of(pc, slot);
	struct sp_alien *a;
	struct sp_mag *m;

	if (!l || !(m = l->mag))
		return;
	a = sp_alien_of(pc, slot, l->node);
	sp_assert(!a->mag);
	m->count = sp_mag_count_at(m, l->top);
	sp_assert(m->count <= m->cap);
	SP_WRITE_ONCE(l->expect, 0);
	SP_WRITE_ONCE(l->top, sp_mag_top_none);
	l->mag = NULL;
	a->mag = m;
	SP_WRITE_ONCE(a->count, m->count);
}

/* Owner: node index @node's alien magazine (there is one) into the lane. */
static void sp_lane_load(struct sp_pcpu_cache *pc, unsigned long slot,
			 unsigned int node)
{
	struct sp_lane *l = sp_lane_of(pc, slot);
	struct sp_alien *a = sp_alien_of(pc, slot, node);
	struct sp_mag *m = a->mag;

	sp_assert(l && !l->mag && m && m->count < m->cap);
	a->mag = NULL;
	SP_WRITE_ONCE(a->count, 0);
	l->mag = m;
	l->node = node;
	SP_WRITE_ONCE(l->top, sp_mag_base(m) + m->count);
	SP_WRITE_ONCE(l->expect, sp_slab_tag(pc->cache, (int)node));
}

/* Racy: the rounds in slot @slot's lane for node index @node. */
static unsigned int sp_lane_objects_to(struct sp_pcpu_cache *pc,
				       unsigned long slot, unsigned int node)
{
	struct sp_lane *l = sp_lane_of(pc, slot);
	struct sp_mag *m;
	void **top;

	if (!l || !(m = SP_READ_ONCE(l->mag)) ||
	    SP_READ_ONCE(l->node) != node)
		return 0;
	top = SP_READ_ONCE(l->top);
	/*
	 * Read while the owner changes it, and @m may be gone meanwhile:
	 * never a load from it, only a top within a magazine's reach counts.
	 */
	if (top < sp_mag_base(m) ||
	    top > sp_mag_base(m) + sp_mag_class_cap(SP_MAG_CLASSES - 1))
		return 0;
	return sp_mag_count_at(m, top);
}

/* The magazine of @a into its node's slabs, and freed (owner only). */
static void sp_alien_drain(struct sp_pcpu_cache *pc, struct sp_pcpu_slot *slot,
			   struct sp_alien *a)
{
	struct sp_mag *m = a->mag;

	if (!m)
		return;
	if (m->count) {
		sp_stat_add(slot, SP_STAT_FLUSH_OBJS, m->count);
		sp_mag_flush(pc, m);
		SP_WRITE_ONCE(a->flushes, a->flushes + 1);
	}
	sp_mag_free(m);
	a->mag = NULL;
	SP_WRITE_ONCE(a->count, 0);
}

/*
 * The magazine of @a to node index @node's depot (into its slabs when the
 * depot has no room: sp_depot_put_home()); the next remote free takes an
 * empty one from there.
 */
static void sp_alien_send(struct sp_pcpu_cache *pc, struct sp_pcpu_slot *slot,
			  struct sp_alien *a, unsigned int node)
{
	struct sp_mag *m = a->mag;

	a->mag = NULL;
	SP_WRITE_ONCE(a->count, 0);
	SP_WRITE_ONCE(a->flushes, a->flushes + 1);
	sp_depot_put_home(pc, slot, node, m);
}

/* @obj home alone, into its slabs: counted as a flush of the slot */
static void sp_alien_home_alone(struct sp_pcpu_cache *pc,
				struct sp_pcpu_slot *s, void *obj)
{
	sp_stat_inc(s, SP_STAT_FLUSH_OBJS);
	sp_slab_flush(pc->cache, 1, &obj);
}

void sp_alien_put(struct sp_pcpu_cache *pc, unsigned long slot,
		  unsigned int node, void *obj)
{
	struct sp_pcpu_slot *s = &pc->slots[slot];
	struct sp_alien *a;
	struct sp_mag *m;

	sp_stat_inc(s, SP_STAT_FREE_SLOWPATH);
	if (unlikely(!pc->alien || node >= (unsigned int)sp_topo.nr_nodes)) {
		/* no remote node on one node; stay correct anyway */
		sp_alien_home_alone(pc, s, obj);
		return;
	}
	/* the lane's magazine back to its word, whichever node's */
	sp_lane_unload(pc, slot);
	a = sp_alien_of(pc, slot, node);
	if (a->mag && a->mag->count == a->mag->cap)
		sp_alien_send(pc, s, a, node);	/* the lane filled it */
	m = a->mag;
	if (!m) {
		m = sp_depot_get_empty(pc, s, node);
		if (!m)
			m = sp_mag_alloc(SP_READ_ONCE(pc->cls));
		if (unlikely(!m)) {
			/* no memory for a magazine */
			sp_alien_home_alone(pc, s, obj);
			return;
		}
		m->count = 0;
		a->mag = m;
		/* last filled or emptied on the home's CPUs */
		sp_mag_prefetch(m, sp_mag_base(m), false);
	}
	sp_mag_base(m)[m->count++] = obj;
	SP_WRITE_ONCE(a->count, m->count);
	if (m->count == m->cap)
		sp_alien_send(pc, s, a, node);
	/* the next remote frees to this node take the lane */
	if (a->mag && pc->lanes)
		sp_lane_load(pc, slot, node);
}

void sp_alien_flush(struct sp_pcpu_cache *pc, unsigned long slot,
		    enum sp_alien_flush_mode mode)
{
	struct sp_pcpu_slot *s = &pc->slots[slot];

	if (!pc->alien)
		return;
	sp_lane_unload(pc, slot);
	for (int n = 0; n < sp_topo.nr_nodes; n++) {
		struct sp_alien *a = sp_alien_of(pc, slot, (unsigned int)n);

		if (!a->mag)
			continue;
		if (mode == SP_ALIEN_DRAIN)
			sp_alien_drain(pc, s, a);
		else if (mode == SP_ALIEN_ALL ? a->mag->count != 0 :
			 2 * a->mag->count >= a->mag->cap)
			sp_alien_send(pc, s, a, (unsigned int)n);
	}
}

unsigned int sp_alien_objects_to(struct sp_pcpu_cache *pc, unsigned long slot,
				 int node)
{
	if (!pc->alien || node < 0 || node >= sp_topo.nr_nodes)
		return 0;
	return SP_READ_ONCE(sp_alien_of(pc, slot, (unsigned int)node)->count) +
	       sp_lane_objects_to(pc, slot, (unsigned int)node);
}

unsigned int sp_alien_objects(struct sp_pcpu_cache *pc, unsigned long slot)
{
	unsigned int sum = 0;

	if (!pc->alien)
		return 0;
	for (int n = 0; n < sp_topo.nr_nodes; n++)
		sum += sp_alien_objects_to(pc, slot, n);
	return sum;
}

uint64_t sp_alien_activity(struct sp_pcpu_cache *pc, unsigned long slot)
{
	struct sp_pcpu_slot_counts c;

	sp_pcpu_slot_counts(pc, slot, &c);	/* the lane's hits folded in */
	return c.stat[SP_STAT_REMOTE_FREE];
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
	struct sp_lane *l;

	if (!pc->alien)
		return;
	if ((l = sp_lane_of(pc, slot))) {
		l->mag = NULL;
		l->expect = 0;
		l->top = sp_mag_top_none;
	}
	for (int n = 0; n < sp_topo.nr_nodes; n++) {
		struct sp_alien *a = sp_alien_of(pc, slot, (unsigned int)n);

		a->mag = NULL;
		a->count = 0;
	}
}
