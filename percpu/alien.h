/* SPDX-License-Identifier: MIT */
/*
 * percpu/alien.h - per-CPU batches of remote frees, one per home node
 * (private).
 *
 * An object freed on a CPU of another node than its slab's must not enter
 * that CPU's magazines (a magazine holds only its node's objects).  Instead
 * of locking the home node's slab lists for every such object, the freeing
 * CPU's slot keeps one "alien" batch per node (Linux SLAB's alien caches):
 * remote frees collect there and go home in bulk, under one lock
 * acquisition of the home node, when the batch is full, when the slot's
 * allocation path goes to the depot, and on every drain (shrink, destroy).
 *
 * A batch belongs to its slot and is touched only by the slot's owner
 * (percpu/pcpu.h); its @count is read without ownership for statistics.
 * Batches exist only on machines with more than one node.
 */
#ifndef SP_PERCPU_ALIEN_H
#define SP_PERCPU_ALIEN_H

#include <stddef.h>
#include <stdint.h>

#include "internal/compiler.h"

/* Objects one batch holds: the batch is two cache lines. */
#define SP_ALIEN_BATCH	15

struct sp_pcpu_cache;

struct sp_alien {
	uint32_t count;			/* objects in @objs */
	uint32_t flushes;		/* times this batch went home (stats) */
	void *objs[SP_ALIEN_BATCH];	/* objects of one home node */
} __sp_cacheline_aligned;

_Static_assert(sizeof(struct sp_alien) == 2 * SP_CACHE_LINE,
	       "an alien batch is two cache lines");

/* Bytes of alien batches a cache's per-CPU layer needs (0 on one node). */
SP_INTERNAL size_t sp_alien_bytes(unsigned long nr_slots);

/*
 * sp_alien_put() - add @obj, whose slab is on node index @node, to slot
 * @slot's batch for that node; a full batch goes home first.  The caller
 * owns the slot.
 */
SP_INTERNAL void sp_alien_put(struct sp_pcpu_cache *pc, unsigned long slot,
			      unsigned int node, void *obj);

/* sp_alien_flush() - send every batch of slot @slot home (owner only). */
SP_INTERNAL void sp_alien_flush(struct sp_pcpu_cache *pc, unsigned long slot);

/*
 * sp_alien_objects_to() - objects waiting in slot @slot's batch for node
 * index @node (racy read).
 */
SP_INTERNAL unsigned int sp_alien_objects_to(struct sp_pcpu_cache *pc,
					     unsigned long slot, int node);
/* sp_alien_objects() - objects waiting in slot @slot's batches (racy read). */
SP_INTERNAL unsigned int sp_alien_objects(struct sp_pcpu_cache *pc,
					  unsigned long slot);

/* sp_alien_flushes() - batches sent home so far by every slot (racy read). */
SP_INTERNAL uint64_t sp_alien_flushes(struct sp_pcpu_cache *pc);

/* After fork, in the child: forget slot @slot's batches (their objects stay
 * allocated, like the magazines of a slot a dead thread owned). */
SP_INTERNAL void sp_alien_forget(struct sp_pcpu_cache *pc, unsigned long slot);

#endif /* SP_PERCPU_ALIEN_H */
