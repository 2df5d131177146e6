// SPDX-License-Identifier: MIT
/*
 * arena/chunk.c - where an arena's chunks come from and where they go.
 *
 * A chunk up to SEGPOOL_ARENA_CHUNK_MAX (the largest buddy block, 4 MiB) is
 * a block of the node's region, owned by SP_OWNER_ARENA in the pagemap, so
 * it is placed and bound on its node as slabs are and its memory goes back
 * to the OS the way freed slabs' does (numa/region.c).  A larger chunk, for
 * an allocation that does not fit a region block, is a mapping of its own
 * on the node (large/large.c), unmapped when released.  New chunks double
 * from SEGPOOL_ARENA_CHUNK_MIN up to CHUNK_MAX; under a limit a chunk may
 * come out smaller than the next size, never smaller than the allocation
 * that asked for it.
 *
 * The tools see a chunk's free part as not addressable: AddressSanitizer
 * as poisoned, valgrind memcheck as no-access.  The library's own accesses
 * to it (poison fill, red zones) open it first and close it after.
 */
#include <errno.h>
#include <string.h>

#include "arena/arena.h"
#include "internal/sanitize.h"
#include "large/large.h"
#include "numa/region.h"
#include "numa/topology.h"
#include "slab/slab.h"

_Static_assert(SP_OWNER_ARENA != SP_OWNER_META &&
	       (SP_OWNER_ARENA & (SP_CACHE_LINE - 1)) != 0 &&
	       (SP_OWNER_ARENA & SP_PAGE_FREE_BIT) == 0,
	       "arena owner token: not a slab, not a free tag, not META");
_Static_assert(SEGPOOL_ARENA_CHUNK_MAX == SP_MAX_BLOCK_SIZE,
	       "the largest chunk is the largest region block");
_Static_assert(SEGPOOL_ARENA_MAX_ALIGN <= SP_PAGE_SIZE,
	       "chunks are page aligned, alignment up to a page is free");

void sp_bump_chunk_clear(struct segpool_arena *a, struct sp_bump_chunk *c,
			 size_t from)
{
	size_t top = SP_READ_ONCE(c->top);

	if (top > from) {
		if (a->flags & SEGPOOL_ARENA_POISON) {
			sp_bump_open(c, from, top - from);
			memset((char *)c + from, SP_BUMP_POISON, top - from);
		}
		sp_bump_close(c, from, top - from);
	}
	SP_WRITE_ONCE(c->top, from);
	if (from == SP_BUMP_HDR)
		c->last_rec = 0;
}

static void sp_bump_chunk_setup(struct segpool_arena *a,
				struct sp_bump_chunk *c, size_t size,
				enum sp_bump_kind kind, unsigned int order)
{
	memset(c, 0, SP_BUMP_HDR);
	c->top = SP_BUMP_HDR;
	c->end = size;
	c->kind = (unsigned char)kind;
	c->order = (unsigned char)order;
	if (a->flags & SEGPOOL_ARENA_POISON)
		memset((char *)c + SP_BUMP_HDR, SP_BUMP_POISON,
		       size - SP_BUMP_HDR);
	sp_bump_close(c, SP_BUMP_HDR, size - SP_BUMP_HDR);
}

struct sp_bump_chunk *sp_bump_chunk_init_buf(struct segpool_arena *a,
					     void *buf, size_t size)
{
	uintptr_t start = SP_ALIGN((uintptr_t)buf, (uintptr_t)SP_CACHE_LINE);
	struct sp_bump_chunk *c = (struct sp_bump_chunk *)start;

	/* the caller checked size >= SEGPOOL_ARENA_BUF_MIN */
	size -= start - (uintptr_t)buf;
	sp_bump_chunk_setup(a, c, size, SP_BUMP_BUFFER, 0);
	return c;
}

/* A region block of 2^@order pages on @a's node, or the nearest one. */
static void *sp_bump_region_block(struct segpool_arena *a, unsigned int order)
{
	int idx = a->idx >= 0 ? a->idx : sp_numa_current_idx();
	int tries = (a->flags & SEGPOOL_ARENA_THISNODE) ? 1 : sp_topo.nr_nodes;

	for (int k = 0; k < tries; k++) {
		void *p = sp_region_alloc(sp_topo.fallback[idx][k], order,
					  SP_OWNER_ARENA);

		if (p)
			return p;
	}
	return NULL;
}

/* Take a kept chunk with room for @need bytes off the kept list. */
static struct sp_bump_chunk *sp_bump_take_kept(struct segpool_arena *a,
					       size_t need)
{
	struct sp_bump_chunk **pp, *c;

	for (pp = &a->kept; (c = *pp) != NULL; pp = &c->prev) {
		if (c->end >= need) {
			*pp = c->prev;
			c->prev = NULL;
			a->nr_kept--;
			a->kept_bytes -= c->end;
			return c;
		}
	}
	return NULL;
}

struct sp_bump_chunk *sp_bump_chunk_new(struct segpool_arena *a, size_t need)
{
	struct sp_bump_chunk *c = sp_bump_take_kept(a, need);
	size_t size = SP_MAX(a->next_size, need);
	unsigned int order = 0;
	void *p;

	if (c)
		return c;
	if (size <= SEGPOOL_ARENA_CHUNK_MAX) {
		order = sp_order_base_2((size + SP_PAGE_SIZE - 1) >>
					SP_PAGE_SHIFT);
		size = SP_PAGE_SIZE << order;
		/* under a limit, a smaller block that still fits @need */
		while (a->limit && a->held + size > a->limit && order &&
		       (size >> 1) >= need) {
			order--;
			size >>= 1;
		}
	} else {
		size = SP_ALIGN(need, SP_PAGE_SIZE);
	}
	if (a->limit && (size > a->limit || a->held > a->limit - size)) {
		errno = ENOMEM;
		return NULL;
	}
	if (size <= SEGPOOL_ARENA_CHUNK_MAX) {
		p = sp_bump_region_block(a, order);
	} else {
		int idx = a->idx >= 0 ? a->idx : sp_numa_current_idx();

		p = sp_mapping_create(size, SP_PAGE_SIZE, idx);
	}
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	c = p;
	sp_bump_chunk_setup(a, c, size,
			    size <= SEGPOOL_ARENA_CHUNK_MAX ? SP_BUMP_REGION
							    : SP_BUMP_MAPPING,
			    order);
	a->held += size;
	a->created++;
	/* geometric growth, up to the largest region block */
	if (size <= SEGPOOL_ARENA_CHUNK_MAX && size >= a->next_size)
		a->next_size =
			SP_MIN(size * 2, (size_t)SEGPOOL_ARENA_CHUNK_MAX);
	return c;
}

void sp_bump_chunk_release(struct segpool_arena *a, struct sp_bump_chunk *c)
{
	size_t size = c->end;

	if (c->kind == SP_BUMP_BUFFER) {
		/* the caller's memory: plain again, and left alone */
		sp_bump_open(c, 0, size);
		return;
	}
	a->held -= size;
	a->released++;
	/* plain memory again before it goes back to the layer below */
	sp_bump_open(c, 0, size);
	if (c->kind == SP_BUMP_REGION)
		sp_region_free(c, c->order);
	else
		sp_mapping_destroy(c, size);
}

void sp_bump_chunk_recycle(struct segpool_arena *a, struct sp_bump_chunk *c)
{
	if (a->kept_bytes + c->end > a->keep) {
		sp_bump_chunk_release(a, c);
		return;
	}
	sp_bump_chunk_clear(a, c, SP_BUMP_HDR);
	c->prev = a->kept;
	a->kept = c;
	a->nr_kept++;
	a->kept_bytes += c->end;
}
