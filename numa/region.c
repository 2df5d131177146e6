// SPDX-License-Identifier: MIT
/*
 * numa/region.c - the space, its per-node regions and their buddy allocator.
 *
 * Memory states of a region, from the top of its address range down:
 *
 *   reserved   PROT_NONE, MAP_NORESERVE: costs address space only
 *   committed  read-write (and bound to the node, mbind, when binding is on),
 *              in chunks of SP_MAX_BLOCK_SIZE as the bump pointer @top grows
 *   carved     below @top: either handed out or on a buddy free list
 *
 * A freed block joins the free lists "dirty", stamped with the time it was
 * freed (a merge takes the newest stamp, a split keeps it): its memory is
 * given back to the OS (MADV_DONTNEED) by the decay once it stayed free for
 * the delay (sp_region_decay(), run by core/decay.c's thread), at once when
 * the delay is 0, when the region holds more dirty free pages than its
 * cap (a safety valve: 64 MiB without a decay, a sixteenth of the node's
 * share of memory with one, sp_dirty_cap()), or on sp_region_purge()
 * (cache shrink and destroy).  Returning memory one slab at a time cost a
 * system call and a TLB shootdown per slab, and returning a block the
 * moment it merged to the top order made a churning cache fault its pages
 * back every round.  The valve is wide while the decay runs: at 64 MiB it
 * purged in the middle of a heap's frees, and a program that frees a large
 * heap to build it again (a 10^7 object round of 640 MiB) faulted all of it
 * back in each time; shut entirely, a 256 MiB node of the 4-node rig ran
 * out of memory (test_pages' fork test was OOM-killed).
 *
 * A decay pass reads each order's @oldest stamp first and walks only the
 * orders with a block past the delay: on a large heap whose free blocks
 * are all recent it visits none (it walked every free block, under the
 * lock the program's flushes and refills need, each tick).
 *
 * Locking: one mutex per region, a leaf lock (nothing else is taken under
 * it).  The pagemap entries of a block are written under the region lock by
 * the allocator and read without it by address lookups: a lookup of an
 * address the caller owns always sees a stable owner.  Free tags too are
 * written with SP_WRITE_ONCE(): a lookup of a stale pointer (a large block
 * another thread freed) reads them with no lock, to report it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal/debug.h"
#include "internal/env.h"
#include "internal/report.h"
#include "internal/sanitize.h"
#include "numa/region.h"
#include "os/os.h"

struct sp_space sp_space __sp_big;

#define SP_REGION_DEFAULT_SIZE	(32UL << 30)
#define SP_REGION_MIN_SIZE	(16UL << 20)
_Static_assert(SP_REGION_MIN_SIZE == SP_ENV_REGION_MIN,
	       "SEGPOOL_REGION_SIZE: the table's bound");
/*
 * Free memory a region may keep before all of it is given back: 64 MiB when
 * there is no decay (SP_DIRTY_MAX_PAGES); while the decay runs, a sixteenth
 * of the region's share of the memory the process may fill (the machine's,
 * or its cgroup's limit, spread evenly over the nodes), and never less than
 * 64 MiB.
 */
#define SP_DIRTY_MEM_SHIFT	4

static size_t sp_dirty_cap(int nr_regions)
{
	uint64_t share = sp_os_memory_bytes() / (uint64_t)nr_regions;
	size_t cap = (size_t)(share >> SP_DIRTY_MEM_SHIFT >> SP_PAGE_SHIFT);

	return cap > SP_DIRTY_MAX_PAGES ? cap : SP_DIRTY_MAX_PAGES;
}

int64_t sp_region_delay_ns = -1;

static void sp_region_limit_check(unsigned int order);
static void sp_region_want_check(struct sp_region *r);

/* Lock held: the dirty pages fell (an allocation, a purge): a new low. */
static inline void sp_region_want_low(struct sp_region *r)
{
	if (r->want_dirty > r->dirty_pages + r->want_share)
		r->want_dirty = r->dirty_pages + r->want_share;
}
static void sp_pages_freed_locked(struct sp_region *r, uint32_t page,
				  unsigned int order);

static size_t sp_region_size_from_env(void)
{
	/* 16 MiB to 1 TiB, checked by the table; bad: the default */
	long long v = sp_env_number(SP_ENV_REGION_SIZE,
				    (long long)SP_REGION_DEFAULT_SIZE);

	return 1UL << sp_order_base_2((unsigned long)v);
}

static void sp_region_init(struct sp_region *r, int idx, char *base,
			   struct sp_page *map, size_t nr_pages)
{
	pthread_mutex_init(&r->lock, NULL);
	sp_lock_class(&r->lock, SP_LOCK_REGION);
	for (int o = 0; o <= SP_MAX_ORDER; o++) {
		r->free_head[o] = SP_PAGE_NONE;
		r->nr_free[o] = 0;
		r->oldest[o] = UINTPTR_MAX;
	}
	r->base = base;
	r->map = map;
	r->nr_pages = nr_pages;
	r->idx = idx;
	r->node = sp_topo.node_id[idx];
	r->top = 0;
	r->committed = 0;
	r->pages_used = 0;
	r->dirty_pages = 0;
	r->dirty_cap = 0;		/* sp_region_dirty_cap() */
	r->nr_runs = 0;
	r->run_pages = 0;
	r->purged_pages = 0;
	r->want_dirty = SIZE_MAX;
	r->want_committed = SIZE_MAX;
	r->want_share = 0;
	r->stamp = 0;
	r->decay_visits = 0;
	r->commit_failures = 0;
	r->bound = sp_topo.bind;
}

/*
 * The pagemap, the tag map, then the side table: 16 + 8 + 64 bytes a page of
 * @total, the table on a line of its own as the page count is a multiple of
 * 8.
 */
static size_t sp_space_map_bytes(size_t total)
{
	return (total >> SP_PAGE_SHIFT) *
	       (sizeof(struct sp_page) + sizeof(uintptr_t) +
		SP_PAGE_SIDE_BYTES);
}

/*
 * Under a soft RLIMIT_AS (ulimit -v) the reservation counts against the
 * limit although it costs no memory: a region size whose reservation and
 * maps would take more than half of what the limit leaves (or, with the
 * alignment slack mapped while it is aligned, more than all of it) is
 * halved before it is even tried, down to one largest block per node,
 * below the 16 MiB floor of SEGPOOL_REGION_SIZE.
 * The other half stays for the program, its libraries and segpool's
 * bookkeeping.  The regions are then small: the process runs with less
 * memory from segpool, but it runs, where it would otherwise not start.
 */
static size_t sp_space_fit_limit(size_t rsize, int n, size_t *low_min)
{
	size_t room = sp_os_as_room();

	*low_min = SP_REGION_MIN_SIZE;
	if (room == SIZE_MAX)
		return rsize;
	*low_min = SP_MAX_BLOCK_SIZE;
	while (rsize > SP_MAX_BLOCK_SIZE) {
		size_t need = rsize * (size_t)n +
			      sp_space_map_bytes(rsize * (size_t)n);

		/* the slack is mapped only while the reservation is aligned */
		if (need <= room / 2 && need + SP_MAX_BLOCK_SIZE <= room)
			break;
		rsize >>= 1;
	}
	return rsize;
}

int sp_space_init(void)
{
	size_t rsize = sp_region_size_from_env(), low_min;
	int n = sp_topo.nr_nodes;
	char *base = NULL;
	struct sp_page *map = NULL;
	size_t total = 0, map_bytes = 0;

	if (sp_space.base)
		return 0;
	rsize = sp_space_fit_limit(rsize, n, &low_min);
	for (; rsize >= low_min; rsize >>= 1) {
		total = rsize * (size_t)n;
		map_bytes = sp_space_map_bytes(total);
		base = sp_os_reserve(total, SP_MAX_BLOCK_SIZE);
		if (!base)
			continue;
		map = sp_os_map(map_bytes, SP_PAGE_SIZE);
		if (map)
			break;
		sp_os_unmap(base, total);
		base = NULL;
	}
	if (!base)
		return -ENOMEM;

	sp_space.size = total;
	sp_space.region_shift = sp_ilog2(rsize);
	sp_space.nr_regions = n;
	sp_space.map = map;
	sp_space.map_bytes = map_bytes;
	sp_space.tags = (uintptr_t *)(map + (total >> SP_PAGE_SHIFT));
	sp_space.side = (char *)(sp_space.tags + (total >> SP_PAGE_SHIFT));
	for (int i = 0; i < n; i++)
		sp_region_init(&sp_space.region[i], i, base + (size_t)i * rsize,
			       map + ((size_t)i * rsize >> SP_PAGE_SHIFT),
			       rsize >> SP_PAGE_SHIFT);
	/* base last: lookups treat a NULL base as "no space" */
	__atomic_store_n(&sp_space.base, base, __ATOMIC_RELEASE);
	return 0;
}

/* --- free lists (region lock held) ---------------------------------------- */

static void sp_free_push(struct sp_region *r, uint32_t page, unsigned int o,
			 bool dirty)
{
	struct sp_page *pg = &r->map[page];

	SP_WRITE_ONCE(pg->info, SP_PAGE_FREE_TAG(o) |
		      (dirty ? SP_PAGE_DIRTY_BIT | r->stamp : 0));
	if (dirty) {
		r->dirty_pages += 1UL << o;
		r->oldest[o] = SP_MIN(r->oldest[o],
				      r->stamp >> SP_PAGE_STAMP_SHIFT);
	}
	pg->prev = SP_PAGE_NONE;
	pg->next = r->free_head[o];
	if (pg->next != SP_PAGE_NONE)
		r->map[pg->next].prev = page;
	r->free_head[o] = page;
	r->nr_free[o]++;
}

static void sp_free_unlink(struct sp_region *r, uint32_t page, unsigned int o)
{
	struct sp_page *pg = &r->map[page];

	if (pg->prev != SP_PAGE_NONE)
		r->map[pg->prev].next = pg->next;
	else
		r->free_head[o] = pg->next;
	if (pg->next != SP_PAGE_NONE)
		r->map[pg->next].prev = pg->prev;
	if (pg->info & SP_PAGE_DIRTY_BIT)
		r->dirty_pages -= 1UL << o;
	SP_WRITE_ONCE(pg->info, 0);
	pg->next = pg->prev = SP_PAGE_NONE;
	r->nr_free[o]--;
}

_Static_assert((SP_PAGE_SIZE << SP_HUGE_ORDER) == SP_OS_HUGE_SIZE,
	       "a huge page is an order of the region");

/*
 * The huge-page advice of @r's chunk holding page @page, as
 * sp_os_advise_huge() takes it (0: none): not the first chunk, so that a
 * small program stays small (unless a run of a huge page starts in it);
 * under SP_REGION_THP_AGED only a chunk below r->thp_done (a refill reads
 * it without the lock: every change of it is made under the lock).
 */
static int sp_region_chunk_thp(const struct sp_region *r, uint32_t page)
{
	int thp = SP_READ_ONCE(sp_region_thp);

	/* NEVER is never unread: the first chunk's answer needs no mode */
	if (thp == SP_REGION_THP_NEVER)
		return -1;
	if (page < SP_MAX_BLOCK_PAGES)
		return SP_READ_ONCE(r->thp_first);
	thp = sp_region_thp_now();
	if (thp == SP_REGION_THP_COMMIT)
		return 1;
	return thp == SP_REGION_THP_AGED && page < SP_READ_ONCE(r->thp_done);
}

/* Advise huge pages for pages [@from, @to) of @r (lock held). */
static void sp_thp_advise_locked(struct sp_region *r, size_t from, size_t to)
{
	sp_os_advise_huge(r->base + (from << SP_PAGE_SHIFT),
			  (to - from) << SP_PAGE_SHIFT, true);
}

size_t sp_region_thp_age(int idx, uint64_t now_ns)
{
	struct sp_region *r = &sp_space.region[idx];
	size_t from = 0, to = 0;

	if (sp_region_thp_now() != SP_REGION_THP_AGED)
		return 0;
	pthread_mutex_lock(&r->lock);
	/* a clock behind the last look's (a pass that read it earlier and
	 * took the lock later) is too young as well */
	if (r->thp_seen_ns && (now_ns < r->thp_seen_ns ||
	    now_ns - r->thp_seen_ns < SP_REGION_THP_AGE_MS * 1000000ULL)) {
		pthread_mutex_unlock(&r->lock);
		return 0;
	}
	if (r->thp_seen_ns) {
		from = SP_MAX(r->thp_done, (size_t)SP_MAX_BLOCK_PAGES);
		to = r->thp_seen;
		if (to > r->thp_done)
			SP_WRITE_ONCE(r->thp_done, to);
	}
	r->thp_seen = r->committed;
	r->thp_seen_ns = now_ns;
	/* under the lock, as sp_thp_top_advised() reads it */
	if (to > from)
		sp_thp_advise_locked(r, from, to);
	pthread_mutex_unlock(&r->lock);
	return to > from ? (to - from) / SP_MAX_BLOCK_PAGES : 0;
}

/*
 * A run of SP_REGION_THP_RUN_MB or more is memory a program keeps and
 * walks: under SP_REGION_THP_AGED the chunks up to its end are advised now
 * rather than at their age, or every 4 KiB page of a growing block faults
 * (a realloc from 40 KiB to 64 MiB took twice as long).  A region's first
 * chunk, left alone so that a small program stays small, is advised too
 * once such a run starts in it, in either mode that advises: the advised
 * part of a region is then one range, one mapping, and a run that moves
 * out with mremap lies inside one (mremap refuses a range across two
 * mappings).
 * Lock held, and the advice given under it, as every change of the
 * region's advice is (sp_region_grow() reads it to advise a new chunk).
 */
static void sp_thp_promote_locked(struct sp_region *r, uint32_t page,
				  size_t pages)
{
	size_t end = SP_ALIGN(page + pages, SP_MAX_BLOCK_PAGES), from, to;
	int thp;

	if (pages < ((size_t)SP_REGION_THP_RUN_MB << (20 - SP_PAGE_SHIFT)))
		return;
	thp = sp_region_thp_now();
	if (thp != SP_REGION_THP_AGED && thp != SP_REGION_THP_COMMIT)
		return;
	from = SP_MAX(r->thp_done, (size_t)SP_MAX_BLOCK_PAGES);
	to = thp == SP_REGION_THP_AGED ? SP_MIN(end, r->committed) : 0;
	if (page < SP_MAX_BLOCK_PAGES && !r->thp_first) {
		SP_WRITE_ONCE(r->thp_first, true);
		from = 0;
		to = SP_MAX(to, (size_t)SP_MAX_BLOCK_PAGES);
	}
	if (to <= from)
		return;
	if (to > r->thp_done && thp == SP_REGION_THP_AGED)
		SP_WRITE_ONCE(r->thp_done, to);
	sp_thp_advise_locked(r, from, to);
}

/*
 * Under SP_REGION_THP_AGED, whether the region's top chunk is advised: then
 * so is the next one, at its commit.  Were it advised later, after its
 * first fault, its mapping could not merge with the advised one below (the
 * kernel gives it an anon_vma of its own), and a run across the two could
 * not move with mremap.  Lock held.
 */
static bool sp_thp_top_advised(const struct sp_region *r)
{
	if (!r->committed || sp_region_thp_now() != SP_REGION_THP_AGED)
		return false;
	if (r->committed <= SP_MAX_BLOCK_PAGES)
		return r->thp_first;
	return r->thp_done >= r->committed;
}

/*
 * Under SP_REGION_THP_AGED, a region about to commit past
 * SP_REGION_THP_EAGER_MB: its chunks up to the top (not the first, unless
 * a large run advised it) are advised now, as their age would have
 * advised them later, so that the new chunk is advised at its commit and
 * the advised part stays one range.  A heap built that fast is walked,
 * in small pages until khugepaged comes minutes later: the scattered
 * frees of a large live set paid a TLB miss each (the figures:
 * Documentation/guide/tuning.md).  Lock held.
 */
static void sp_thp_grown_locked(struct sp_region *r)
{
	size_t eager = (size_t)SP_REGION_THP_EAGER_MB << (20 - SP_PAGE_SHIFT);
	size_t from = SP_MAX(r->thp_done, (size_t)SP_MAX_BLOCK_PAGES);

	if (r->committed + SP_MAX_BLOCK_PAGES < eager ||
	    sp_region_thp_now() != SP_REGION_THP_AGED)
		return;
	if (r->committed > from)
		sp_thp_advise_locked(r, from, r->committed);
	SP_WRITE_ONCE(r->thp_done, r->committed + SP_MAX_BLOCK_PAGES);
}

/* Make room for one more top-level block; 0 or -1 with errno ENOMEM. */
static int sp_region_grow(struct sp_region *r)
{
	char *chunk;
	int thp;

	if (r->top + SP_MAX_BLOCK_PAGES > r->nr_pages) {
		errno = ENOMEM;
		return -1;
	}
	if (r->top + SP_MAX_BLOCK_PAGES <= r->committed)
		return 0;
	chunk = r->base + (r->committed << SP_PAGE_SHIFT);
	if (sp_os_commit(chunk, SP_MAX_BLOCK_SIZE))
		goto fail;
	if (r->bound && sp_os_bind(chunk, SP_MAX_BLOCK_SIZE, r->node)) {
		sp_os_decommit(chunk, SP_MAX_BLOCK_SIZE);
		goto fail;
	}
	if (sp_thp_top_advised(r))
		SP_WRITE_ONCE(r->thp_done, r->committed + SP_MAX_BLOCK_PAGES);
	else
		sp_thp_grown_locked(r);
	thp = sp_region_chunk_thp(r, (uint32_t)r->committed);
	if (thp)
		sp_os_advise_huge(chunk, SP_MAX_BLOCK_SIZE, thp > 0);
	r->committed += SP_MAX_BLOCK_PAGES;
	sp_region_want_check(r);	/* chunks for the aging */
	return 0;
fail:
	r->commit_failures++;
	errno = ENOMEM;
	return -1;
}

static void sp_set_owner(struct sp_region *r, uint32_t page, unsigned int order,
			 uintptr_t owner)
{
	char *block = r->base + ((size_t)page << SP_PAGE_SHIFT);

	if (owner == SP_OWNER_SIDE)
		owner = (uintptr_t)sp_space_side(block);
	for (uint32_t i = 0; i < (1U << order); i++)
		SP_WRITE_ONCE(r->map[page + i].info, owner);
}

void *sp_region_alloc_dirty(int idx, unsigned int order, uintptr_t owner,
			    bool *was_dirty)
{
	struct sp_region *r;
	unsigned int o;
	uint32_t page;
	bool dirty;

	if (unlikely(!sp_space.base || idx < 0 || idx >= sp_space.nr_regions ||
		     order > SP_MAX_ORDER)) {
		errno = ENOMEM;
		return NULL;
	}
	if (unlikely(SP_READ_ONCE(sp_region_limit_pages)))
		sp_region_limit_check(order);
	r = &sp_space.region[idx];
	pthread_mutex_lock(&r->lock);
	for (o = order; o <= SP_MAX_ORDER; o++)
		if (r->free_head[o] != SP_PAGE_NONE)
			break;
	if (o > SP_MAX_ORDER) {
		if (sp_region_grow(r)) {
			pthread_mutex_unlock(&r->lock);
			return NULL;
		}
		page = (uint32_t)r->top;
		r->top += SP_MAX_BLOCK_PAGES;
		o = SP_MAX_ORDER;
		dirty = false;
	} else {
		page = r->free_head[o];
		dirty = r->map[page].info & SP_PAGE_DIRTY_BIT;
		r->stamp = r->map[page].info & ~SP_PAGE_FREE_MASK &
			   ~SP_PAGE_DIRTY_BIT;
		sp_free_unlink(r, page, o);
	}
	/* split: keep the lower half, free the upper (as dirty as it was) */
	while (o > order) {
		o--;
		sp_free_push(r, page + (1U << o), o, dirty);
	}
	sp_set_owner(r, page, order, owner);
	r->pages_used += 1UL << order;
	sp_region_want_low(r);
	pthread_mutex_unlock(&r->lock);
	if (was_dirty)
		*was_dirty = dirty;
	return r->base + ((size_t)page << SP_PAGE_SHIFT);
}

/* Give the free block at @page back to the OS and mark it clean (lock held). */
static void sp_block_purge(struct sp_region *r, uint32_t page, unsigned int o)
{
	struct sp_page *pg = &r->map[page];

	if (!(pg->info & SP_PAGE_DIRTY_BIT))
		return;
	sp_os_release(r->base + ((size_t)page << SP_PAGE_SHIFT),
		      (size_t)SP_PAGE_SIZE << o);
	SP_WRITE_ONCE(pg->info, pg->info & SP_PAGE_FREE_MASK);
	r->dirty_pages -= 1UL << o;
	r->purged_pages += 1UL << o;
	sp_region_want_low(r);
}

static size_t sp_region_purge_locked(struct sp_region *r)
{
	uint64_t before = r->purged_pages;

	if (!r->dirty_pages)
		return 0;
	for (unsigned int o = 0; o <= SP_MAX_ORDER; o++) {
		for (uint32_t p = r->free_head[o]; p != SP_PAGE_NONE;
		     p = r->map[p].next)
			sp_block_purge(r, p, o);
		r->oldest[o] = UINTPTR_MAX;	/* none is dirty now */
	}
	return (size_t)(r->purged_pages - before);
}

void sp_region_free(void *addr, unsigned int order)
{
	int idx = sp_space_idx_of(addr);
	struct sp_region *r;
	uint32_t page;
	uint64_t now;

	SP_BUG_ON(idx < 0 || order > SP_MAX_ORDER);
	r = &sp_space.region[idx];
	page = (uint32_t)(((char *)addr - r->base) >> SP_PAGE_SHIFT);
	SP_BUG_ON(page & ((1U << order) - 1));
	now = sp_region_now_ns();

	pthread_mutex_lock(&r->lock);
	r->stamp = (uintptr_t)(now >> SP_PAGE_STAMP_UNIT)
		   << SP_PAGE_STAMP_SHIFT;
	sp_set_owner(r, page, order, 0);
	r->pages_used -= 1UL << order;
	while (order < SP_MAX_ORDER) {
		uint32_t buddy = page ^ (1U << order);

		if (buddy >= r->top ||
		    (r->map[buddy].info & SP_PAGE_FREE_MASK) !=
		    SP_PAGE_FREE_TAG(order))
			break;
		sp_free_unlink(r, buddy, order);
		page &= ~(1U << order);
		order++;
	}
	sp_free_push(r, page, order, true);
	/* the decay decides, unless the delay is 0 or the cap is passed */
	sp_pages_freed_locked(r, page, order);
	pthread_mutex_unlock(&r->lock);
}

size_t sp_region_purge(int idx)
{
	struct sp_region *r = &sp_space.region[idx];
	size_t n;

	pthread_mutex_lock(&r->lock);
	n = sp_region_purge_locked(r);
	pthread_mutex_unlock(&r->lock);
	return n;
}

void sp_region_set_owner(void *addr, unsigned int order, uintptr_t owner)
{
	int idx = sp_space_idx_of(addr);
	struct sp_region *r = &sp_space.region[idx];
	uint32_t page = (uint32_t)(((char *)addr - r->base) >> SP_PAGE_SHIFT);

	pthread_mutex_lock(&r->lock);
	sp_set_owner(r, page, order, owner);
	pthread_mutex_unlock(&r->lock);
}

void sp_space_lock_all(void)
{
	for (int i = 0; i < sp_space.nr_regions; i++)
		pthread_mutex_lock(&sp_space.region[i].lock);
}

void sp_space_unlock_all(void)
{
	for (int i = sp_space.nr_regions - 1; i >= 0; i--)
		pthread_mutex_unlock(&sp_space.region[i].lock);
}

void sp_space_reinit_locks(void)
{
	for (int i = 0; i < sp_space.nr_regions; i++)
		pthread_mutex_init(&sp_space.region[i].lock, NULL);
}

void sp_space_set_tag_pages(void *addr, size_t nr, uintptr_t tag)
{
	size_t first = (size_t)((char *)addr - sp_space.base) >> SP_PAGE_SHIFT;

	for (size_t i = 0; i < nr; i++)
		SP_WRITE_ONCE(sp_space.tags[first + i], tag);
}

void sp_space_set_tags(void *addr, unsigned int order, uintptr_t tag)
{
	sp_space_set_tag_pages(addr, 1UL << order, tag);
}

/* --- page runs ------------------------------------------------------------ */

/*
 * The order of the free block whose head entry is @info, or -1 when @info
 * is no free tag.  Every comparison of free tags by the run code goes
 * through here.
 */
static inline int sp_free_tag_order(uintptr_t info)
{
	_Static_assert(SP_MAX_ORDER < 16 && SP_PAGE_DIRTY_BIT == 1UL << 5,
		       "a free tag's order is its bits 1 to 4");
	if (!(info & SP_PAGE_FREE_BIT))
		return -1;
	return (int)((info >> 1) & 15);
}

/* The largest buddy block that starts at @page and ends at or before @end. */
static inline unsigned int sp_piece_order(uint32_t page, uint32_t end)
{
	unsigned int o = page ? (unsigned int)__builtin_ctz(page) :
				SP_MAX_ORDER;

	o = SP_MIN(o, (unsigned int)SP_MAX_ORDER);
	while ((1U << o) > end - page)
		o--;
	return o;
}

/*
 * Put [@page, @end) on the free lists as buddy blocks, with no merging:
 * the tail of a block just split, whose buddies all lie inside that block.
 */
static void sp_free_range(struct sp_region *r, uint32_t page, uint32_t end,
			  bool dirty)
{
	while (page < end) {
		unsigned int o = sp_piece_order(page, end);

		sp_free_push(r, page, o, dirty);
		page += 1U << o;
	}
}

size_t sp_region_dirty_cap(struct sp_region *r)
{
	size_t cap = SP_READ_ONCE(r->dirty_cap);

	if (!cap) {
		cap = sp_dirty_cap(sp_space.nr_regions);
		SP_WRITE_ONCE(r->dirty_cap, cap);
	}
	return cap;
}

/*
 * What sp_region_free() and the run code do once a block has merged: the
 * decay decides, unless the delay is 0 or the cap is passed (64 MiB without
 * a decay, r->dirty_cap with one).
 */
static void sp_pages_freed_locked(struct sp_region *r, uint32_t page,
				  unsigned int order)
{
	int64_t delay = SP_READ_ONCE(sp_region_delay_ns);
	bool past;

	/*
	 * The cap with a decay is never below SP_DIRTY_MAX_PAGES: the memory
	 * size it comes from (the cgroup's limit: a few files) is read the
	 * first time a region holds that much, which a short process never
	 * does.
	 */
	if (delay < 0 || (!r->dirty_cap &&
			  r->dirty_pages <= SP_DIRTY_MAX_PAGES))
		past = r->dirty_pages > SP_DIRTY_MAX_PAGES;
	else
		past = r->dirty_pages > sp_region_dirty_cap(r);
	if (delay == 0)
		sp_block_purge(r, page, order);
	else if (past)
		sp_region_purge_locked(r);
	sp_region_want_check(r);
}

/* The stamp bits of a free tag: when its block became dirty. */
static inline uintptr_t sp_free_tag_stamp(uintptr_t info)
{
	return info & ~SP_PAGE_FREE_MASK & ~SP_PAGE_DIRTY_BIT;
}

/* The stamp of a block freed at @now (sp_region_now_ns()). */
static inline uintptr_t sp_stamp_of(uint64_t now)
{
	return (uintptr_t)(now >> SP_PAGE_STAMP_UNIT) << SP_PAGE_STAMP_SHIFT;
}

/*
 * Free [@page, @end), whose entries are already 0: buddy blocks that merge
 * with their free buddies, dirty unless @dirty is false and so were the
 * buddies they merged with.
 */
static void sp_free_merge_range(struct sp_region *r, uint32_t page,
				uint32_t end, bool dirty)
{
	while (page < end) {
		unsigned int o = sp_piece_order(page, end), order = o;
		bool d = dirty;
		uint32_t p = page;

		while (order < SP_MAX_ORDER) {
			uint32_t buddy = p ^ (1U << order);

			if (buddy >= r->top ||
			    sp_free_tag_order(r->map[buddy].info) != (int)order)
				break;
			d |= !!(r->map[buddy].info & SP_PAGE_DIRTY_BIT);
			sp_free_unlink(r, buddy, order);
			p &= ~(1U << order);
			order++;
		}
		sp_free_push(r, p, order, d);
		sp_pages_freed_locked(r, p, order);
		page += 1U << o;
	}
}

/*
 * Write the anchors of pages [@from, @to) of the run at @page (1 <= @from):
 * a run marks its head and every page of it whose index is a multiple of
 * SP_RUN_ANCHOR_PAGES, not every page, so a run of n pages costs n / 64
 * pagemap stores to take and to give back instead of n (a 2 MiB block
 * wrote 8 KiB of pagemap each way).  sp_run_head_of() finds the head
 * from any page all the same.
 */
static void sp_run_mark(struct sp_region *r, uint32_t page, uint32_t from,
			uint32_t to)
{
	uint32_t a = SP_ALIGN(page + from, (uint32_t)SP_RUN_ANCHOR_PAGES);

	for (; a < page + to; a += SP_RUN_ANCHOR_PAGES)
		SP_WRITE_ONCE(r->map[a].info,
			      ((uintptr_t)(a - page) << SP_RUN_SHIFT) |
				      SP_OWNER_RUN_BODY);
}

/*
 * Pages [@from, @to) of the run at @page leave it: their entries 0 (the
 * head and the anchors: no other page of a run has one), uncounted.
 */
static void sp_run_unmark(struct sp_region *r, uint32_t page, size_t from,
			  size_t to)
{
	size_t a = SP_ALIGN((size_t)page + from, (size_t)SP_RUN_ANCHOR_PAGES);

	if (from == 0)
		SP_WRITE_ONCE(r->map[page].info, 0);
	for (; a < page + to; a += SP_RUN_ANCHOR_PAGES)
		SP_WRITE_ONCE(r->map[a].info, 0);
	r->pages_used -= to - from;
	r->run_pages -= to - from;
}

const void *sp_run_head_of(const void *addr)
{
	struct sp_page *pg = sp_space_page(addr);
	size_t q, h, a;
	uintptr_t info;

	if (!pg)
		return NULL;
	q = (size_t)(pg - sp_space.map);
	a = q & ~(size_t)(SP_RUN_ANCHOR_PAGES - 1);
	for (h = q;; h--) {
		info = SP_READ_ONCE(sp_space.map[h].info);
		if ((info & SP_OWNER_KIND_MASK) == SP_OWNER_RUN)
			break;
		if (h == a) {
			/* an anchor says how far back its head is */
			if ((info & SP_OWNER_KIND_MASK) != SP_OWNER_RUN_BODY ||
			    (info >> SP_RUN_SHIFT) > h)
				return NULL;
			h -= info >> SP_RUN_SHIFT;
			info = SP_READ_ONCE(sp_space.map[h].info);
			if ((info & SP_OWNER_KIND_MASK) != SP_OWNER_RUN)
				return NULL;
			break;
		}
		if (info)	/* another owner's page, or a free block */
			return NULL;
	}
	if (q >= h + (info >> SP_RUN_SHIFT))
		return NULL;	/* past the end of the run before it */
	return sp_space.base + (h << SP_PAGE_SHIFT);
}

static void sp_run_set_head(struct sp_region *r, uint32_t page, size_t pages)
{
	SP_WRITE_ONCE(r->map[page].info,
		      ((uintptr_t)pages << SP_RUN_SHIFT) | SP_OWNER_RUN);
}

/* Carve one fresh top-level block onto the free lists, clean. */
static int sp_carve_top(struct sp_region *r)
{
	if (sp_region_grow(r))
		return -1;
	sp_free_push(r, (uint32_t)r->top, SP_MAX_ORDER, false);
	r->top += SP_MAX_BLOCK_PAGES;
	return 0;
}

/* Is every one of the @n top-level blocks from @page free? */
static bool sp_tops_free(struct sp_region *r, uint32_t page, size_t n)
{
	for (size_t j = 0; j < n; j++, page += SP_MAX_BLOCK_PAGES)
		if (page >= r->top ||
		    sp_free_tag_order(r->map[page].info) != SP_MAX_ORDER)
			return false;
	return true;
}

/*
 * @n contiguous top-level blocks whose first byte is a multiple of @align;
 * the first page, or SP_PAGE_NONE (region full or commit failed).
 */
static uint32_t sp_take_tops(struct sp_region *r, size_t n, size_t align,
			     bool *dirty)
{
	uintptr_t base = (uintptr_t)r->base;
	uint32_t page;

	for (page = r->free_head[SP_MAX_ORDER]; page != SP_PAGE_NONE;
	     page = r->map[page].next)
		if (!((base + ((uintptr_t)page << SP_PAGE_SHIFT)) &
		      (align - 1)) &&
		    sp_tops_free(r, page, n))
			goto take;
	/* fresh ones at the top; blocks skipped to align stay free */
	page = (uint32_t)r->top;
	while ((base + ((uintptr_t)page << SP_PAGE_SHIFT)) & (align - 1))
		page += SP_MAX_BLOCK_PAGES;
	if ((size_t)page + n * SP_MAX_BLOCK_PAGES > r->nr_pages)
		return SP_PAGE_NONE;
	while (r->top < page + n * SP_MAX_BLOCK_PAGES)
		if (sp_carve_top(r))
			return SP_PAGE_NONE;
take:
	*dirty = false;
	r->stamp = 0;
	for (size_t j = 0; j < n; j++) {
		uint32_t p = page + (uint32_t)(j * SP_MAX_BLOCK_PAGES);
		uintptr_t st = sp_free_tag_stamp(r->map[p].info);

		*dirty |= !!(r->map[p].info & SP_PAGE_DIRTY_BIT);
		/* the tail's: the newest */
		r->stamp = SP_MAX(r->stamp, st);
		sp_free_unlink(r, p, SP_MAX_ORDER);
	}
	return page;
}

/* One buddy block of @order or larger, split down to @order; or NONE. */
static uint32_t sp_take_block(struct sp_region *r, unsigned int order,
			      bool *dirty)
{
	unsigned int o;
	uint32_t page;

	for (o = order; o <= SP_MAX_ORDER; o++)
		if (r->free_head[o] != SP_PAGE_NONE)
			break;
	if (o > SP_MAX_ORDER) {
		if (sp_carve_top(r))
			return SP_PAGE_NONE;
		o = SP_MAX_ORDER;
	}
	page = r->free_head[o];
	*dirty = r->map[page].info & SP_PAGE_DIRTY_BIT;
	/* a split keeps it */
	r->stamp = sp_free_tag_stamp(r->map[page].info);
	sp_free_unlink(r, page, o);
	while (o > order) {
		o--;
		sp_free_push(r, page + (1U << o), o, *dirty);
	}
	return page;
}

/*
 * The first runs of a size go back at their free.  A run larger than
 * every run the process freed before it was taken is given back to the OS
 * at its own free (sp_region_free_pages()), and that free raises the bar to
 * its size, as glibc's malloc maps such a block of its own and unmaps it at
 * its free (its dynamic mmap threshold, which starts at 128 KiB as this
 * bar does; glibc's stops at 32 MiB, this one at the largest run, so that
 * a churn of blocks of 32-64 MiB is not purged and faulted back every
 * time).  A program's first blocks of a size are often one-off buffers (a
 * compiler's 4 MiB table, git's first round of delta windows): kept for
 * the decay's delay, they were what a short process's peak held above
 * glibc's while blocks of the next sizes took fresh pages beside them.  A
 * churn of sizes the process freed before never pays: the bar passes each
 * size after its first free.
 */
#define SP_RUN_FIRST_MIN_PAGES	((size_t)(128UL << 10) >> SP_PAGE_SHIFT)

static size_t sp_run_first_bar = SP_RUN_FIRST_MIN_PAGES;	/* atomic */

/* A run head's @prev (no free-list link while it lives): one of the first. */
#define SP_RUN_FIRST		1U

size_t sp_region_first_bar(void)
{
	return __atomic_load_n(&sp_run_first_bar, __ATOMIC_RELAXED);
}

void sp_region_first_bar_reset(void)
{
	__atomic_store_n(&sp_run_first_bar, SP_RUN_FIRST_MIN_PAGES,
			 __ATOMIC_RELAXED);
}

/* Mark the new run of @pages at @page when it passes the bar (lock held). */
static void sp_run_set_first(struct sp_region *r, uint32_t page, size_t pages)
{
	r->map[page].prev = pages > sp_region_first_bar() ? SP_RUN_FIRST :
							    SP_PAGE_NONE;
}

/*
 * @addr, the run of @pages at @page of @r, which the caller owns and
 * frees: when it is one of the first of its size, raise the bar and give
 * its pages back now (no lock: its entries are the caller's).  True when
 * it did, its pages then reading zero.
 */
static bool sp_run_free_first(struct sp_region *r, uint32_t page, void *addr,
			      size_t pages)
{
	size_t cur = sp_region_first_bar();

	if (SP_READ_ONCE(r->map[page].prev) != SP_RUN_FIRST)
		return false;
	while (cur < pages &&
	       !__atomic_compare_exchange_n(&sp_run_first_bar, &cur, pages,
					   true, __ATOMIC_RELAXED,
					   __ATOMIC_RELAXED))
		;
	sp_os_release(addr, pages << SP_PAGE_SHIFT);
	return true;
}

void *sp_region_alloc_pages(int idx, size_t pages, size_t align, bool *dirty)
{
	size_t align_pages = align >> SP_PAGE_SHIFT, span;
	struct sp_region *r;
	uint32_t page;

	if (unlikely(!sp_space.base || idx < 0 || idx >= sp_space.nr_regions ||
		     !pages || pages > SP_RUN_MAX_PAGES ||
		     !SP_IS_POW2(align) || align < SP_PAGE_SIZE ||
		     align > SP_RUN_MAX_SIZE)) {
		errno = ENOMEM;
		return NULL;
	}
	if (unlikely(SP_READ_ONCE(sp_region_limit_pages)))
		sp_region_limit_check(sp_order_base_2(pages));
	r = &sp_space.region[idx];
	pthread_mutex_lock(&r->lock);
	if (pages <= SP_MAX_BLOCK_PAGES && align_pages <= SP_MAX_BLOCK_PAGES) {
		unsigned int order = SP_MAX(sp_order_base_2(pages),
					    sp_ilog2(align_pages));

		span = 1UL << order;
		page = sp_take_block(r, order, dirty);
	} else {
		size_t n = (pages + SP_MAX_BLOCK_PAGES - 1) >> SP_MAX_ORDER;

		span = n << SP_MAX_ORDER;
		page = sp_take_tops(r, n, align, dirty);
	}
	if (page == SP_PAGE_NONE) {
		pthread_mutex_unlock(&r->lock);
		errno = ENOMEM;
		return NULL;
	}
	/* the tail goes back at once: the run costs @pages pages */
	sp_free_range(r, page + (uint32_t)pages, page + (uint32_t)span, *dirty);
	sp_run_mark(r, page, 1, (uint32_t)pages);
	sp_run_set_head(r, page, pages);
	sp_run_set_first(r, page, pages);
	r->pages_used += pages;
	r->nr_runs++;
	r->run_pages += pages;
	sp_thp_promote_locked(r, page, pages);
	sp_region_want_low(r);
	pthread_mutex_unlock(&r->lock);
	return r->base + ((size_t)page << SP_PAGE_SHIFT);
}

/* The region and first page of the run at @addr; NULL outside the space. */
static struct sp_region *sp_run_region(const void *addr, uint32_t *page)
{
	int idx = sp_space_idx_of(addr);
	struct sp_region *r;

	if (idx < 0 || ((uintptr_t)addr & (SP_PAGE_SIZE - 1)))
		return NULL;
	r = &sp_space.region[idx];
	*page = (uint32_t)(((const char *)addr - r->base) >> SP_PAGE_SHIFT);
	return r;
}

/* The length of the run at @page, or 0 when it is none (lock held). */
static size_t sp_run_len_locked(struct sp_region *r, uint32_t page)
{
	uintptr_t info = r->map[page].info;

	if (page >= r->top || (info & SP_OWNER_KIND_MASK) != SP_OWNER_RUN)
		return 0;
	return info >> SP_RUN_SHIFT;
}

bool sp_region_free_pages(void *addr)
{
	uint64_t now = sp_region_now_ns();
	struct sp_region *r;
	uint32_t page;
	size_t pages;
	bool clean;

	r = sp_run_region(addr, &page);
	if (!r)
		return false;
	/* the caller's run, or no run: then the check below refuses it */
	pages = sp_run_pages(addr);
	clean = pages && sp_run_free_first(r, page, addr, pages);
	pthread_mutex_lock(&r->lock);
	r->stamp = sp_stamp_of(now);
	pages = sp_run_len_locked(r, page);
	if (!pages) {
		pthread_mutex_unlock(&r->lock);
		return false;
	}
	sp_run_unmark(r, page, 0, pages);
	r->nr_runs--;
	if (clean)
		r->purged_pages += pages;
	sp_free_merge_range(r, page, page + (uint32_t)pages, !clean);
	pthread_mutex_unlock(&r->lock);
	return true;
}

void *sp_region_move_out(void *addr, size_t size)
{
	struct sp_region *r;
	uint32_t page;
	size_t pages, bytes;
	bool refilled;
	void *p;

	r = sp_run_region(addr, &page);
	pages = r ? sp_run_pages(addr) : 0;	/* the caller's: stable */
	bytes = pages << SP_PAGE_SHIFT;
	/*
	 * memcheck takes the grown part of a mapping moved with
	 * MREMAP_FIXED for unaddressable: under valgrind the caller copies.
	 */
	if (!pages || size < bytes || (SP_VALGRIND && sp_on_valgrind)) {
		errno = ENOMEM;
		return NULL;
	}
	/* the system calls outside the lock: nobody else touches the run */
	p = sp_os_move_out(addr, bytes, size);
	if (!p)
		return NULL;
	refilled = !sp_os_refill(addr, bytes, sp_region_chunk_thp(r, page)) &&
		   (!r->bound || !sp_os_bind(addr, bytes, r->node));

	pthread_mutex_lock(&r->lock);
	r->stamp = sp_stamp_of(sp_region_now_ns());
	r->nr_runs--;
	if (unlikely(!refilled)) {
		/* a hole in the region: its pages are never handed out again */
		for (size_t k = 0; k < pages; k++)
			SP_WRITE_ONCE(r->map[page + k].info, SP_OWNER_RUN_LOST);
		r->run_pages -= pages;
		r->commit_failures++;
	} else {
		sp_run_unmark(r, page, 0, pages);
		sp_free_merge_range(r, page, page + (uint32_t)pages, false);
	}
	pthread_mutex_unlock(&r->lock);
	return p;
}

/* Can the run ending before @from grow to @end in place? (lock held) */
static bool sp_run_can_grow(struct sp_region *r, uint32_t from, uint32_t end)
{
	uint32_t q = from;

	while (q < end && q < r->top) {
		int o = sp_free_tag_order(r->map[q].info);

		if (o < 0)
			return false;
		q += 1U << o;
	}
	return q >= end || end <= r->nr_pages;
}

static bool sp_run_grow_locked(struct sp_region *r, uint32_t page,
			       size_t old, size_t pages)
{
	uint32_t q = page + (uint32_t)old, end = page + (uint32_t)pages;

	if (!sp_run_can_grow(r, q, end))
		return false;
	while (r->top < end)
		if (sp_carve_top(r))
			return false;	/* what was carved stays free */
	while (q < end) {
		int o = sp_free_tag_order(r->map[q].info);
		bool dirty = r->map[q].info & SP_PAGE_DIRTY_BIT;
		uint32_t next = q + (1U << o);

		r->stamp = sp_free_tag_stamp(r->map[q].info);

		sp_free_unlink(r, q, (unsigned int)o);
		if (next > end)
			sp_free_range(r, end, next, dirty);
		q = next;
	}
	sp_run_mark(r, page, (uint32_t)old, (uint32_t)pages);
	return true;
}

bool sp_region_resize_pages(void *addr, size_t pages)
{
	struct sp_region *r;
	uint64_t now = sp_region_now_ns();
	uint32_t page;
	size_t old;
	bool ok = true;

	if (!pages || pages > SP_RUN_MAX_PAGES)
		return false;
	r = sp_run_region(addr, &page);
	if (!r)
		return false;
	pthread_mutex_lock(&r->lock);
	r->stamp = sp_stamp_of(now);
	old = sp_run_len_locked(r, page);
	if (!old) {
		ok = false;
	} else if (pages < old) {
		sp_run_unmark(r, page, pages, old);
		sp_run_set_head(r, page, pages);
		sp_free_merge_range(r, page + (uint32_t)pages,
				    page + (uint32_t)old, true);
	} else if (pages > old) {
		ok = sp_run_grow_locked(r, page, old, pages);
		if (ok) {
			sp_run_set_head(r, page, pages);
			r->pages_used += pages - old;
			r->run_pages += pages - old;
			sp_thp_promote_locked(r, page, pages);
			sp_region_want_low(r);
		}
	}
	pthread_mutex_unlock(&r->lock);
	return ok;
}

/* --- decay: dirty free blocks go back once they stayed free for the delay - */

uint64_t sp_region_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Is @p still the head page of a free block of order @o, so on that free
 * list, once the lock was dropped and taken again?  (lock held)
 */
static inline bool sp_still_free(struct sp_region *r, uint32_t p,
				 unsigned int o)
{
	return sp_free_tag_order(r->map[p].info) == (int)o;
}

/*
 * Walk the free list of order @o, giving back the dirty blocks stamped at
 * or before @cut; return the oldest stamp of those it kept dirty.  Every
 * SP_DECAY_BATCH blocks the lock is dropped, the CPU yielded and the lock
 * taken again, so the flushes and refills of the program's threads wait
 * for one batch at most.  When the block the walk stood on left the list
 * meanwhile, the walk starts over from the head (what it gave back is
 * clean: it skips it); after two such restarts it keeps the lock to the
 * end.
 */
static uintptr_t sp_decay_order(struct sp_region *r, unsigned int o,
				uintptr_t cut)
{
	uintptr_t kept = UINTPTR_MAX, st;
	unsigned int batch = 0, restarts = 0;
	uint32_t p = r->free_head[o];

	while (p != SP_PAGE_NONE) {
		uintptr_t info = r->map[p].info;

		r->decay_visits++;
		st = info >> SP_PAGE_STAMP_SHIFT;
		if ((info & SP_PAGE_DIRTY_BIT) && st <= cut)
			sp_block_purge(r, p, o);
		else if (info & SP_PAGE_DIRTY_BIT)
			kept = SP_MIN(kept, st);
		if (++batch >= SP_DECAY_BATCH && restarts < 2 &&
		    r->map[p].next != SP_PAGE_NONE) {
			batch = 0;
			pthread_mutex_unlock(&r->lock);
			sp_os_yield();	/* a waiter gets the lock in between */
			pthread_mutex_lock(&r->lock);
			if (!sp_still_free(r, p, o)) {
				restarts++;
				p = r->free_head[o];
				continue;
			}
		}
		p = r->map[p].next;
	}
	return kept;
}

size_t sp_region_decay(int idx, uint64_t now_ns, uint64_t delay_ns)
{
	struct sp_region *r = &sp_space.region[idx];
	uint64_t before, limit, small, split;
	size_t n;

	if (now_ns < delay_ns)
		return 0;
	/* stamps at or below this one are older than the delay */
	limit = (now_ns - delay_ns) >> SP_PAGE_STAMP_UNIT;
	/* blocks smaller than a huge page, under advised huge pages: later */
	split = SP_DECAY_SPLIT_DELAYS * delay_ns;
	small = now_ns < split ? 0 : (now_ns - split) >> SP_PAGE_STAMP_UNIT;
	if (sp_region_thp_now() <= 0)
		small = limit;
	pthread_mutex_lock(&r->lock);
	before = r->purged_pages;
	for (unsigned int o = 0; o <= SP_MAX_ORDER && r->dirty_pages; o++) {
		uintptr_t cut = o < SP_HUGE_ORDER ? small : limit, kept;

		if (r->oldest[o] > cut)		/* none of this order is old */
			continue;
		/*
		 * Pushes while the lock is dropped lower it again; so does a
		 * second pass (core/decay.c's and a direct call) that ends
		 * later: each keeps what it saw, the least of them stays.
		 */
		r->oldest[o] = UINTPTR_MAX;
		kept = sp_decay_order(r, o, cut);
		r->oldest[o] = SP_MIN(r->oldest[o], kept);
	}
	n = (size_t)(r->purged_pages - before);
	pthread_mutex_unlock(&r->lock);
	return n;
}

/* --- asking for the decay thread ----------------------------------------- */

void (*sp_region_want_hook)(void);
static bool sp_region_want_armed;	/* atomic: not asked since armed */

/* Lock held: ask for the thread once @r holds what it would give back. */
static void sp_region_want_check(struct sp_region *r)
{
	void (*hook)(void);

	if (likely(!SP_READ_ONCE(sp_region_want_armed)))
		return;
	if (r->dirty_pages <= r->want_dirty &&
	    (r->committed <= r->want_committed ||
	     sp_region_thp_now() != SP_REGION_THP_AGED))
		return;
	if (!__atomic_exchange_n(&sp_region_want_armed, false,
				 __ATOMIC_RELAXED))
		return;			/* another region asked first */
	hook = __atomic_load_n(&sp_region_want_hook, __ATOMIC_ACQUIRE);
	if (hook)
		hook();
}

void sp_region_want_arm(size_t pages)
{
	/* each region its share: asked for at the latest when all of them
	 * together hold @pages more */
	size_t share = SP_MAX(pages / (size_t)SP_MAX(sp_space.nr_regions, 1),
			      (size_t)1);

	for (int i = 0; i < sp_space.nr_regions; i++) {
		struct sp_region *r = &sp_space.region[i];

		pthread_mutex_lock(&r->lock);
		r->want_share = share;
		r->want_dirty = r->dirty_pages + share;
		r->want_committed = SP_MAX(r->committed,
					   (size_t)SP_MAX_BLOCK_PAGES) + share;
		pthread_mutex_unlock(&r->lock);
	}
	__atomic_store_n(&sp_region_want_armed, true, __ATOMIC_RELAXED);
}

/* --- the soft limit, huge pages ------------------------------------------- */

uint64_t sp_region_limit_pages;
void (*sp_region_limit_hook)(void);
uint64_t sp_region_limit_hits;
uint64_t sp_region_limit_exceeded;
int sp_region_thp;
int sp_region_thp_madvise;

int sp_region_thp_now(void)
{
	int thp = SP_READ_ONCE(sp_region_thp);

	if (likely(thp != SP_REGION_THP_UNREAD))
		return thp;
	/* racing first readers read the same file and store the same */
	thp = sp_os_thp_mode() == SP_OS_THP_MADVISE ?
		SP_READ_ONCE(sp_region_thp_madvise) : 0;
	SP_WRITE_ONCE(sp_region_thp, thp);
	return thp;
}

/* Pages in use and dirty, all regions (each read under its lock). */
static uint64_t sp_region_resident(void)
{
	uint64_t sum = 0;

	for (int i = 0; i < sp_space.nr_regions; i++) {
		struct sp_region *r = &sp_space.region[i];

		pthread_mutex_lock(&r->lock);
		sum += r->pages_used + r->dirty_pages;
		pthread_mutex_unlock(&r->lock);
	}
	return sum;
}

/* No region lock held: purge them all, ask for a shrink, and go on. */
static void sp_region_limit_check(unsigned int order)
{
	uint64_t limit = SP_READ_ONCE(sp_region_limit_pages);
	void (*hook)(void);

	if (!limit || sp_region_resident() + (1UL << order) <= limit)
		return;
	__atomic_fetch_add(&sp_region_limit_hits, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < sp_space.nr_regions; i++)
		sp_region_purge(i);
	hook = __atomic_load_n(&sp_region_limit_hook, __ATOMIC_ACQUIRE);
	if (hook)
		hook();
	if (sp_region_resident() + (1UL << order) > limit)
		__atomic_fetch_add(&sp_region_limit_exceeded, 1,
				   __ATOMIC_RELAXED);
}

uint64_t sp_region_huge_bytes(int idx)
{
	struct sp_region *r = &sp_space.region[idx];
	size_t committed;

	pthread_mutex_lock(&r->lock);
	committed = r->committed;
	pthread_mutex_unlock(&r->lock);
	if (!committed)
		return 0;
	return sp_os_huge_bytes(r->base, committed << SP_PAGE_SHIFT);
}
