/* SPDX-License-Identifier: MIT */
/*
 * percpu/alien.h - per-CPU magazines of remote frees, one per home node
 * (private).
 *
 * An object freed on a CPU of another node than its slab's must not enter
 * that CPU's magazines (a magazine holds only its node's objects).  The
 * freeing CPU's slot keeps one "alien" magazine per other node instead
 * (Linux SLAB's alien caches, a magazine deep): remote frees collect there,
 * and a full one goes to its home node's depot as a full magazine, where
 * that node's CPUs take it as they take their own (percpu/depot.h), with
 * no lock and no slab touched; the empty magazine that replaces it comes
 * from the same depot, where the home's CPUs leave theirs.  So a producer
 * on one node and a consumer on another trade magazines as two CPUs of
 * one node do.  A depot with no room takes the magazine's rounds into its
 * node's slabs (one lock acquisition of the home node for the magazine).
 *
 * One of them, the one the last remote free went to, is loaded in the
 * slot's remote lane (struct sp_lane, percpu/pcpu.h), where a remote
 * free's push takes it with no slow path (sp_pcpu_lane_push(), tried by
 * the free's miss): the slow path loads the lane and sends its magazine
 * home when full; the lane is its slot owner's like the rest.
 *
 * An alien magazine also goes home when the slot's allocation path goes
 * to the depot, if it is half full or more (a bulk moment: objects do not
 * wait long where the program runs on, and the home takes no magazine of
 * a few rounds), and into its node's slabs on every drain (shrink,
 * destroy, the decay's).
 *
 * An alien magazine belongs to its slot and is touched only by the slot's
 * owner (percpu/pcpu.h); its @count is read without ownership for
 * statistics.  Alien magazines exist only on machines with more than one
 * node.
 */
#ifndef SP_PERCPU_ALIEN_H
#define SP_PERCPU_ALIEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal/compiler.h"

struct sp_mag;
struct sp_pcpu_cache;

/*
 * One slot's remote frees to one home node: one line, so that no two
 * CPUs' share one.  @count mirrors @mag's rounds for racy readers.
 */
struct sp_alien {
	struct sp_mag *mag;		/* the home node's objects, or NULL */
	uint32_t count;			/* rounds in @mag */
	uint32_t flushes;		/* magazines sent home (stats) */
} __sp_cacheline_aligned;

_Static_assert(sizeof(struct sp_alien) == SP_CACHE_LINE,
	       "an alien magazine's word is one cache line");

/* Bytes of alien words a cache's per-CPU layer needs (0 on one node). */
SP_INTERNAL size_t sp_alien_bytes(unsigned long nr_slots);

/*
 * sp_alien_put() - add @obj, whose slab is on node index @node, to slot
 * @slot's alien magazine for that node; a full one goes home.  The caller
 * owns the slot.
 */
SP_INTERNAL void sp_alien_put(struct sp_pcpu_cache *pc, unsigned long slot,
			      unsigned int node, void *obj);

/* What sp_alien_flush() sends home. */
enum sp_alien_flush_mode {
	SP_ALIEN_HALF,		/* each half full or more, to its depot */
	SP_ALIEN_ALL,		/* every one, to its depot (an idle slot's) */
	SP_ALIEN_DRAIN,		/* every one, into its node's slabs */
};

/* sp_alien_flush() - slot @slot's alien magazines home (owner only). */
SP_INTERNAL void sp_alien_flush(struct sp_pcpu_cache *pc, unsigned long slot,
				enum sp_alien_flush_mode mode);

/*
 * sp_alien_activity() - a count that moves with every remote free of slot
 * @slot (racy read): the decay's test for an idle slot's alien magazines.
 */
SP_INTERNAL uint64_t sp_alien_activity(struct sp_pcpu_cache *pc,
				       unsigned long slot);

/*
 * sp_alien_objects_to() - objects waiting in slot @slot's alien magazine
 * for node index @node (racy read).
 */
SP_INTERNAL unsigned int sp_alien_objects_to(struct sp_pcpu_cache *pc,
					     unsigned long slot, int node);
/* sp_alien_objects() - objects waiting in slot @slot's alien magazines
 * (racy read). */
SP_INTERNAL unsigned int sp_alien_objects(struct sp_pcpu_cache *pc,
					  unsigned long slot);

/* sp_alien_flushes() - alien magazines sent home so far by every slot
 * (racy read). */
SP_INTERNAL uint64_t sp_alien_flushes(struct sp_pcpu_cache *pc);

/* After fork, in the child: forget slot @slot's alien magazines (their
 * objects stay allocated, like the magazines of a slot a dead thread
 * owned). */
SP_INTERNAL void sp_alien_forget(struct sp_pcpu_cache *pc, unsigned long slot);

#endif /* SP_PERCPU_ALIEN_H */
