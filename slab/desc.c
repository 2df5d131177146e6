// SPDX-License-Identifier: MIT
/*
 * slab/desc.c - where slab descriptors live.
 *
 * Descriptors are kept off-slab (as the kernel keeps struct page), so a slab
 * holds objects only and needs no per-object header.  Each node index has a
 * pool: blocks of SP_DESC_BLOCK_ORDER pages taken from that node's region
 * (owner token SP_OWNER_META, so no object lookup ever mistakes them for a
 * slab), cut into line-sized descriptors as they are needed (a block's
 * pages are touched one by one, not all when it comes: a short program
 * faults in one page, not 16); freed ones go on a free list, taken first.
 * Pools never shrink; a descriptor is 64 bytes against a slab of at least
 * 4 KiB.
 *
 * Locking: one mutex per pool, taken with no other slab lock held except by
 * fork's prepare handler.
 */
#include <errno.h>

#include "internal/debug.h"
#include "slab/slab.h"

#define SP_DESC_BLOCK_ORDER	(16 - SP_PAGE_SHIFT)	/* 64 KiB a block */

struct sp_desc_pool {
	pthread_mutex_t lock;
	struct sp_list_head free;	/* freed descriptors, linked by lru */
	struct sp_slab *next, *end;	/* the newest block's uncut rest */
	unsigned long nr_free;		/* on the list and uncut */
	unsigned long nr_blocks;
} __sp_cacheline_aligned;

static struct sp_desc_pool sp_desc_pools[SP_MAX_NODES] = {
	[0 ... SP_MAX_NODES - 1] = { .lock = PTHREAD_MUTEX_INITIALIZER },
};

#ifdef CONFIG_SEGPOOL_DEBUG
static __attribute__((constructor)) void sp_desc_lock_classes(void)
{
	for (int i = 0; i < SP_MAX_NODES; i++)
		sp_lock_class(&sp_desc_pools[i].lock, SP_LOCK_DESC);
}
#endif

static int sp_desc_pool_grow(struct sp_desc_pool *p, int idx)
{
	struct sp_slab *block = sp_region_alloc(idx, SP_DESC_BLOCK_ORDER,
						SP_OWNER_META);
	size_t n = (SP_PAGE_SIZE << SP_DESC_BLOCK_ORDER) / sizeof(*block);

	if (!block)
		return -ENOMEM;
	p->next = block;
	p->end = block + n;
	p->nr_free += n;
	p->nr_blocks++;
	return 0;
}

/*
 * The pool of node index @idx, locked, its free list set up on first use
 * (by an allocation or a free: a node's first descriptor may go back
 * before the pool ever handed out another).
 */
static struct sp_desc_pool *sp_desc_pool_lock(int idx)
{
	struct sp_desc_pool *p = &sp_desc_pools[idx];

	pthread_mutex_lock(&p->lock);
	if (!p->free.next)
		sp_list_init(&p->free);
	return p;
}

struct sp_slab *sp_desc_alloc(int idx)
{
	struct sp_desc_pool *p = sp_desc_pool_lock(idx);
	struct sp_slab *s = NULL;

	if (!sp_list_empty(&p->free)) {
		s = sp_list_first_entry(&p->free, struct sp_slab, lru);
		sp_list_del(&s->lru);
		p->nr_free--;
	} else if (p->next != p->end || sp_desc_pool_grow(p, idx) == 0) {
		s = p->next++;
		p->nr_free--;
	}
	pthread_mutex_unlock(&p->lock);
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	/* the pool it goes back to, whatever fails before the slab is built */
	s->node = (unsigned short)idx;
	return s;
}

void sp_desc_free(struct sp_slab *s)
{
	struct sp_desc_pool *p;

	s->cache = NULL;
	s->freelist = NULL;
	s->freemap = 0;
	s->base = NULL;
	s->inuse = 0;
	s->list = SP_SLAB_NONE;
	p = sp_desc_pool_lock(s->node);
	sp_list_add(&s->lru, &p->free);
	p->nr_free++;
	pthread_mutex_unlock(&p->lock);
}

void sp_desc_lock_all(void)
{
	for (int i = 0; i < sp_space.nr_regions; i++)
		pthread_mutex_lock(&sp_desc_pools[i].lock);
}

void sp_desc_unlock_all(void)
{
	for (int i = sp_space.nr_regions - 1; i >= 0; i--)
		pthread_mutex_unlock(&sp_desc_pools[i].lock);
}

void sp_desc_reinit_locks(void)
{
	for (int i = 0; i < sp_space.nr_regions; i++)
		pthread_mutex_init(&sp_desc_pools[i].lock, NULL);
}
