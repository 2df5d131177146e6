/* SPDX-License-Identifier: MIT */
/*
 * numa/region.h - per-node memory regions and their page allocator (private).
 *
 * One reservation (the space) holds a region per NUMA node, side by side:
 *
 *   space.base                                                  + size
 *   | region 0 (node_id[0]) | region 1 (node_id[1]) | ... |
 *
 * Each region is a power-of-two number of bytes, so the region of an address
 * is one subtraction and one shift away.  Within a region, a buddy allocator
 * hands out blocks of 2^order pages (order 0..SP_MAX_ORDER), each aligned to
 * its size.  The pagemap has one struct sp_page per page of the space; its
 * @info says who owns the page:
 *
 *   0                       not handed out (free-block interior, or never used)
 *   (order << 1) | 1        head page of a free buddy block of that order,
 *                           | SP_PAGE_DIRTY_BIT while its memory is not
 *                           yet given back to the OS
 *   an owner token          bit 0 clear, set by whoever allocated the block
 *                           (the slab layer stores its slab descriptor)
 *   (n << 6) | SP_OWNER_RUN head page of a page run of n pages (a block
 *                           above the size classes, sp_region_alloc_pages())
 *   (k << 6) | SP_OWNER_RUN_BODY
 *                           page k (1 .. n - 1) of such a run, when its
 *                           index in the space is a multiple of
 *                           SP_RUN_ANCHOR_PAGES (an anchor); the other
 *                           pages of a run are 0
 *
 * so any address maps to its owner in O(1), no search, no hash; an address
 * inside a run past its first SP_RUN_ANCHOR_PAGES pages maps to its anchor,
 * and sp_run_head_of() finds any page's run in at most SP_RUN_ANCHOR_PAGES
 * reads.
 */
#ifndef SP_NUMA_REGION_H
#define SP_NUMA_REGION_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal/compiler.h"
#include "numa/topology.h"

/* the largest block is 4 MiB and a huge page 2 MiB, whatever the page */
#define SP_MAX_ORDER		(22 - SP_PAGE_SHIFT)
#define SP_MAX_BLOCK_PAGES	(1UL << SP_MAX_ORDER)
#define SP_MAX_BLOCK_SIZE	(SP_MAX_BLOCK_PAGES << SP_PAGE_SHIFT)
#define SP_PAGE_NONE		UINT32_MAX
#define SP_HUGE_ORDER		(21 - SP_PAGE_SHIFT)	/* SP_OS_HUGE_SIZE */

#define SP_PAGE_FREE_BIT	1UL
#define SP_PAGE_FREE_TAG(o)	(((uintptr_t)(o) << 1) | SP_PAGE_FREE_BIT)
/* On a free block's tag: its pages may still hold memory (not yet purged). */
#define SP_PAGE_DIRTY_BIT	(1UL << 5)
/* The free bit and the order: what a free tag is, stamp and dirt aside. */
#define SP_PAGE_FREE_MASK	(SP_PAGE_DIRTY_BIT - 1)
/*
 * A dirty free block's tag also holds when it became dirty, above the dirty
 * bit: the monotonic clock in units of 2^SP_PAGE_STAMP_UNIT ns (about a
 * millisecond), which the decay compares with its delay.
 */
#define SP_PAGE_STAMP_SHIFT	6
#define SP_PAGE_STAMP_UNIT	20

/* One per page of the space: 16 bytes, 0.4% of the memory it describes. */
struct sp_page {
	uintptr_t info;		/* owner token, free tag or 0 (see above) */
	uint32_t next;		/* free-list links of a free
				 * block's head page */
	uint32_t prev;
};
_Static_assert(sizeof(struct sp_page) == 16, "pagemap entry is 16 bytes");

/*
 * The side table: one line per page of the space, for the owner of the
 * block that starts on that page, as the kernel's memmap gives every page a
 * struct page.  The slab layer keeps its slab descriptors there
 * (sp_slab_desc(), slab/slab.h): a descriptor's address is then a function
 * of its slab's, which a magazine flush computes instead of loading it from
 * the pagemap, and a slab is built and released with no lock of its own.
 * Backed as it is written: a page of the table, when a block among the 64
 * pages it describes first gets a line.
 */
#define SP_PAGE_SIDE_BYTES	64

/*
 * struct sp_region - one node's region.  The lock and free lists are written
 * by every CPU that grows or shrinks a slab on this node, so each region
 * starts on its own cache line and no two regions share one.
 */
struct sp_region {
	/* --- line 0: lock and free lists, written under the lock --- */
	pthread_mutex_t lock;			/* protects everything below */
	uint32_t free_head[SP_MAX_ORDER + 1];	/* first free block per order */
	/* --- read-mostly geometry --- */
	char *base;			/* first byte of the region */
	struct sp_page *map;		/* pagemap slice of this region */
	size_t nr_pages;		/* capacity in pages */
	int node;			/* kernel node id */
	int idx;			/* dense node index */
	/* --- accounting, under the lock --- */
	size_t top;			/* pages carved so far (bump pointer) */
	size_t committed;		/* pages made accessible */
	size_t pages_used;		/* pages handed out */
	size_t nr_free[SP_MAX_ORDER + 1];/* free blocks per order */
	size_t dirty_pages;		/* free pages not yet given back */
	size_t dirty_cap;		/* ... past which all go back while
					 * the decay runs (sp_dirty_cap();
					 * 0 until first needed) */
	size_t nr_runs;			/* live page runs (large blocks) */
	size_t run_pages;		/* pages they hold */
	uint64_t purged_pages;		/* pages given back so far */
	size_t want_dirty;		/* dirty pages past which, and */
	size_t want_committed;		/* committed pages past which (aged
					 * huge pages) the decay thread is
					 * asked for (sp_region_want_arm()) */
	size_t want_share;		/* what more than their low it takes */
	uintptr_t stamp;		/* stamp bits sp_free_push() gives a
					 * dirty block (its caller sets it) */
	/*
	 * Per order, a stamp (in stamp units) no dirty free block of that
	 * order is older than, UINTPTR_MAX when it has none: a push lowers
	 * it, a decay walk of the order sets it to what it kept.  The decay
	 * walks only the orders it lets through, so a pass over a heap of
	 * many free blocks none of which is old costs nothing.
	 */
	uintptr_t oldest[SP_MAX_ORDER + 1];
	uint64_t decay_visits;		/* free blocks the decay looked at */
	unsigned long commit_failures;	/* commits or binds that failed */
	/* aged huge-page advice (sp_region_thp_age()), under the lock */
	size_t thp_done;		/* chunks below this page are advised */
	size_t thp_seen;		/* committed at the last look ... */
	uint64_t thp_seen_ns;		/* ... taken then (0: not yet) */
	bool thp_first;			/* the first chunk advised too */
	bool bound;			/* every committed chunk
					 * is bound (mbind) */
} __sp_cacheline_aligned;

_Static_assert(offsetof(struct sp_region, lock) == 0, "lock leads the region");
_Static_assert(sizeof(struct sp_region) % SP_CACHE_LINE == 0,
	       "regions never share a cache line");

/*
 * struct sp_space - the one reservation.  The first three fields are what
 * every free's hit path reads (is the address ours, and whose page is it),
 * so they share the struct's first line with nothing that is written.
 */
struct sp_space {
	char *base;			/* NULL until sp_space_init()
					 * succeeded */
	size_t size;			/* bytes: nr_regions << region_shift;
					 * 0 before: every address is outside */
	uintptr_t *tags;		/* one word per page of the space, set
					 * by the page's owner for its own
					 * lookups (the slab layer: cache | node
					 * index); 0 for a page nobody tagged */
	unsigned int region_shift;	/* log2 of one region's size */
	int nr_regions;			/* == sp_topo.nr_nodes */
	struct sp_page *map;		/* pagemap of the whole space */
	size_t map_bytes;		/* pagemap, tags and side table */
	char *side;			/* side table: SP_PAGE_SIDE_BYTES a
					 * page (sp_space_side()) */
	struct sp_region region[SP_MAX_NODES];
};

extern SP_INTERNAL struct sp_space sp_space;

/*
 * sp_space_init() - reserve the space for every node.  The region size comes
 * from SEGPOOL_REGION_SIZE (bytes; K, M, G suffixes) or defaults to 32 GiB a
 * node; when the reservation fails it is halved down to 16 MiB.
 * Return: 0, or -ENOMEM.
 */
SP_INTERNAL int sp_space_init(void);

_Static_assert(offsetof(struct sp_space, tags) == 16,
	       "the hit path's three fields lead the space");

/*
 * sp_space_tag() - the tag of @addr's page, or 0 outside the space: one
 * subtraction, one compare and one load, the whole pointer check of a
 * free's hit path.
 */
static inline uintptr_t sp_space_tag(const void *addr)
{
	uintptr_t off = (uintptr_t)addr - (uintptr_t)sp_space.base;

	if (unlikely(off >= sp_space.size))
		return 0;
	return SP_READ_ONCE(sp_space.tags[off >> SP_PAGE_SHIFT]);
}

/*
 * sp_space_side() - the side line of the block that starts on @block's
 * page (the space set up, @block inside it).
 */
static inline void *sp_space_side(const void *block)
{
	uintptr_t off = (uintptr_t)block - (uintptr_t)sp_space.base;

	return sp_space.side + (off >> SP_PAGE_SHIFT) * SP_PAGE_SIDE_BYTES;
}

/*
 * sp_region_dirty_cap() - the dirty pages @r may keep while the decay runs,
 * read from the memory size the first time it is asked (region lock held,
 * or a test's single thread).
 */
SP_INTERNAL size_t sp_region_dirty_cap(struct sp_region *r);

/* sp_space_set_tags() - tag the 2^@order pages of the block at @addr. */
SP_INTERNAL void sp_space_set_tags(void *addr, unsigned int order,
				   uintptr_t tag);
/* sp_space_set_tag_pages() - tag the @nr pages from @addr's on. */
SP_INTERNAL void sp_space_set_tag_pages(void *addr, size_t nr, uintptr_t tag);

/* sp_space_page() - the pagemap entry of @addr, or NULL outside the space. */
static inline struct sp_page *sp_space_page(const void *addr)
{
	uintptr_t off = (uintptr_t)addr - (uintptr_t)sp_space.base;

	if (unlikely(off >= sp_space.size))
		return NULL;
	return &sp_space.map[off >> SP_PAGE_SHIFT];
}

/* sp_space_owner() - the owner token of @addr's page; 0 when it has none. */
static inline uintptr_t sp_space_owner(const void *addr)
{
	struct sp_page *pg = sp_space_page(addr);
	uintptr_t info;

	if (unlikely(!pg))
		return 0;
	info = SP_READ_ONCE(pg->info);
	return (info & SP_PAGE_FREE_BIT) ? 0 : info;
}

/* sp_space_idx_of() - node index of the region holding @addr, or -1. */
static inline int sp_space_idx_of(const void *addr)
{
	uintptr_t off = (uintptr_t)addr - (uintptr_t)sp_space.base;

	if (off >= sp_space.size)
		return -1;
	return (int)(off >> sp_space.region_shift);
}

/*
 * sp_region_alloc_dirty() - a block of 2^@order pages on node index @idx,
 * every page's owner set to @owner (bit 0 clear, non-zero).  The block's
 * memory reads as zero unless it was handed out before and not yet
 * released: *@was_dirty (when not NULL) says whether it may hold old
 * bytes.
 * Return: the block, or NULL with errno ENOMEM (region full, commit or bind
 * failed); nothing changes on failure.
 */
SP_INTERNAL void *sp_region_alloc_dirty(int idx, unsigned int order,
					uintptr_t owner, bool *was_dirty);

/* sp_region_alloc_dirty() for a caller that writes the block anyway. */
static inline void *sp_region_alloc(int idx, unsigned int order,
				    uintptr_t owner)
{
	return sp_region_alloc_dirty(idx, order, owner, NULL);
}

/*
 * sp_region_free() - give a block back; it merges with free buddies and
 * stays "dirty" (its memory resident) with the time it was freed.  Its
 * memory goes back to the OS (MADV_DONTNEED) at once when the decay delay
 * is 0, else when sp_region_decay() finds it older than the delay, when the
 * region's dirty free memory passes a hard cap, or at the next
 * sp_region_purge(): a workload that frees and allocates slabs in turn
 * reuses resident pages instead of paying a fault and a TLB shootdown for
 * every slab.
 */
SP_INTERNAL void sp_region_free(void *addr, unsigned int order);

/*
 * sp_region_purge() - give every free page of node index @idx back now.
 * Return: the pages given back.
 */
SP_INTERNAL size_t sp_region_purge(int idx);

/*
 * sp_region_delay_ns - how long a freed block stays resident: -1 for ever
 * (until a purge or the cap), 0 not at all.  Set by core/decay.c.
 */
extern SP_INTERNAL int64_t sp_region_delay_ns;
/* The hard cap of a region's dirty free memory with no decay (a delay of
 * -1): past it every dirty free page goes back at the next free. */
#define SP_DIRTY_MAX_PAGES	((64UL << 20) >> SP_PAGE_SHIFT)

/*
 * sp_region_decay() - give back the dirty free blocks of node index @idx
 * that became dirty more than @delay_ns before @now_ns (CLOCK_MONOTONIC
 * nanoseconds, sp_region_now_ns()).  Only the orders whose oldest stamp is
 * past the delay are walked, and the region lock is dropped and taken
 * again every SP_DECAY_BATCH blocks visited.
 * Return: the pages given back.
 */
#define SP_DECAY_BATCH		1024	/* a few microseconds of walk */
/*
 * Under advised huge pages a free block smaller than a huge page goes back
 * only after this many delays: purging it splits the huge page around it
 * for good (the kernel does not put it together again), and every object
 * of a churning heap then costs a TLB miss of its own.
 */
#define SP_DECAY_SPLIT_DELAYS	10
SP_INTERNAL size_t sp_region_decay(int idx, uint64_t now_ns, uint64_t delay_ns);

/* sp_region_now_ns() - the clock of the stamps (coarse monotonic), in ns. */
SP_INTERNAL uint64_t sp_region_now_ns(void);

/*
 * The soft limit (core/decay.c sets it): when an allocation would take the
 * pages in use and dirty, all regions together, past @sp_region_limit_pages
 * (0: no limit), every region is purged at once and @sp_region_limit_hook
 * is called (it must not take a lock above level 11: it asks the decay
 * thread to shrink the caches); the allocation goes on whatever came of it.
 */
extern SP_INTERNAL uint64_t sp_region_limit_pages;
extern SP_INTERNAL void (*sp_region_limit_hook)(void);
/*
 * Asking for the decay thread (core/decay.c starts it lazily): armed by
 * sp_region_want_arm(), a region calls @sp_region_want_hook once, the first
 * time it holds its share of @pages more dirty free pages than the fewest
 * it held since the arming (what an allocation or a purge left: so a fork
 * child that reuses what it inherited and frees it again counts it), or,
 * under SP_REGION_THP_AGED (whose aging the thread does), has committed its
 * share more past its first chunk; then all are disarmed until the next
 * arming (a fork child's).  The hook is called
 * with a region lock held, maybe under cache locks: it may only set flags
 * (atomic), no lock.  Set by core/ at start-up.
 */
extern SP_INTERNAL void (*sp_region_want_hook)(void);
SP_INTERNAL void sp_region_want_arm(size_t pages);
/* limit reached (atomic) */
extern SP_INTERNAL uint64_t sp_region_limit_hits;
/* and passed (atomic) */
extern SP_INTERNAL uint64_t sp_region_limit_exceeded;

/*
 * Transparent huge pages for committed chunks (every chunk of a region but
 * its first, so a small program stays small): SP_REGION_THP_COMMIT advises
 * them as they are committed, SP_REGION_THP_AGED once they stayed
 * committed SP_REGION_THP_AGE_MS (sp_region_thp_age(), from the decay
 * thread) or at once under a run of SP_REGION_THP_RUN_MB or more or once
 * the region reaches SP_REGION_THP_EAGER_MB, and then as they are committed
 * once the
 * top chunk is (the advised part stays one range,
 * one mapping: numa/region.c), SP_REGION_THP_NEVER refuses them, 0 leaves
 * the kernel's default
 * (core/decay.c sets it from SEGPOOL_THP before the first chunk).  With
 * huge pages advised the decay gives back blocks smaller than a huge page
 * only after SP_DECAY_SPLIT_DELAYS delays, since a purge of part of a huge
 * page splits it.
 */
enum {
	SP_REGION_THP_NEVER = -1,
	SP_REGION_THP_AGED = 1,
	SP_REGION_THP_COMMIT = 2,
	/*
	 * SEGPOOL_THP=auto before the kernel's mode was read: the choice is
	 * sp_region_thp_madvise in "madvise" mode, 0 in any other.  Read
	 * by sp_region_thp_now() at the first question that needs it, which
	 * a process that never grows a region past its first chunk never
	 * asks: the mode's sysfs file is one that every process under the
	 * preload read at start-up for nothing.
	 */
	SP_REGION_THP_UNREAD = 3,
};
#define SP_REGION_THP_AGE_MS	2000
/*
 * Under SP_REGION_THP_AGED, a region whose committed memory reaches this
 * many MiB is advised whole at once, and its later chunks as they are
 * committed: a heap that size is far beyond what the TLB reaches in small
 * pages, and a program does not build it to leave it at once.  Below it,
 * the age decides.
 */
#define SP_REGION_THP_EAGER_MB	256
/*
 * A run this many MiB long or more has its chunks advised at once (and the
 * region's later chunks at their commit).  A huge page's first fault pays
 * the kernel's defrag=madvise compaction when no free 2 MiB page is
 * ready, far more than its 512 small faults on a virtual machine: with a
 * huge page as the bound, the hash arrays of perl and python advised
 * every later chunk of theirs, and their system time grew to several
 * times glibc's (Documentation/guide/tuning.md).
 */
#define SP_REGION_THP_RUN_MB	16
extern SP_INTERNAL int sp_region_thp;
/* The choice under SP_REGION_THP_UNREAD when the mode reads "madvise". */
extern SP_INTERNAL int sp_region_thp_madvise;
/* sp_region_thp, the kernel's mode read first if it was not yet. */
SP_INTERNAL int sp_region_thp_now(void);

/*
 * sp_region_thp_age() - under SP_REGION_THP_AGED, advise huge pages for the
 * chunks of node index @idx that were committed at the last look, when that
 * was SP_REGION_THP_AGE_MS or more before @now_ns, and look again.  A chunk
 * a short program fills and leaves is never advised: on a virtual machine a
 * huge page's first touch costs far more than its 512 small pages', and a
 * huge page makes resident what a program touched only in part.  Memory a
 * program keeps gets them (new faults at once, what is there already when
 * khugepaged collapses it).  Return: the chunks advised.
 */
SP_INTERNAL size_t sp_region_thp_age(int idx, uint64_t now_ns);

/* sp_region_huge_bytes() - bytes of node index @idx backed by huge pages
 * (reads /proc/self/smaps: for the statistics only). */
SP_INTERNAL uint64_t sp_region_huge_bytes(int idx);

/* sp_region_set_owner() - change the owner token of a block's pages. */
SP_INTERNAL void sp_region_set_owner(void *addr, unsigned int order,
				     uintptr_t owner);

/* --- page runs: blocks above the size classes --------------------------- */

/*
 * SP_OWNER_SIDE - an owner that sp_region_alloc() and sp_region_set_owner()
 * record as the address of the block's side line (sp_space_side()), never
 * as itself: the slab layer's descriptor is that line.
 */
#define SP_OWNER_SIDE		((uintptr_t)32)

/*
 * Owner tokens of page runs.  Their low six bits are a kind, never zero, so
 * sp_obj_to_slab() (which wants a cache-line-aligned descriptor) never takes
 * one for a slab, and bit 0 is clear, so no free tag is one.  2 and 4 are
 * SP_OWNER_META and SP_OWNER_ARENA.
 */
#define SP_OWNER_KIND_MASK	((uintptr_t)SP_CACHE_LINE - 1)
#define SP_OWNER_RUN		((uintptr_t)8)	/* head: (pages << 6) | 8 */
#define SP_OWNER_RUN_BODY	((uintptr_t)16)	/* page k: (k << 6) | 16 */
#define SP_OWNER_RUN_LOST	((uintptr_t)24)	/* moved out, not
						 * mapped again */
#define SP_RUN_SHIFT		6
/* One body page in this many is marked (a power of two, in pages). */
#define SP_RUN_ANCHOR_PAGES	64
/* The largest run: sizes from here up are mappings of their own. */
#define SP_RUN_MAX_SIZE		(64UL << 20)
#define SP_RUN_MAX_PAGES	(SP_RUN_MAX_SIZE >> SP_PAGE_SHIFT)
_Static_assert((SP_OWNER_RUN & SP_PAGE_FREE_BIT) == 0 &&
	       (SP_OWNER_RUN_BODY & SP_PAGE_FREE_BIT) == 0 &&
	       SP_OWNER_RUN_BODY <= SP_OWNER_KIND_MASK &&
	       (1UL << SP_RUN_SHIFT) == SP_CACHE_LINE,
	       "run tokens: a kind in the low bits, never a free tag");

/*
 * sp_run_pages() - the page count of the run whose first byte is @addr, or
 * 0 when @addr is not the start of a live run.  No lock: a run the caller
 * owns cannot change under it.
 */
static inline size_t sp_run_pages(const void *addr)
{
	uintptr_t info;

	if ((uintptr_t)addr & (SP_PAGE_SIZE - 1))
		return 0;
	info = sp_space_owner(addr);
	if ((info & SP_OWNER_KIND_MASK) != SP_OWNER_RUN)
		return 0;
	return info >> SP_RUN_SHIFT;
}

/*
 * sp_run_head_of() - the first byte of the live run holding @addr (its head
 * page's address), or NULL when @addr lies in none.  No lock: for reports
 * and segpool_obj_node(), on an address the caller says is live.  At most
 * SP_RUN_ANCHOR_PAGES pagemap reads.
 */
SP_INTERNAL const void *sp_run_head_of(const void *addr);

/* sp_run_interior() - does @addr lie inside a live run, past its start? */
static inline bool sp_run_interior(const void *addr)
{
	const void *head = sp_run_head_of(addr);

	return head && head != addr;
}

/*
 * sp_region_alloc_pages() - a run of @pages pages (1 .. SP_RUN_MAX_PAGES)
 * on node index @idx, its address a multiple of @align (a power of two, at
 * least a page, at most SP_RUN_MAX_SIZE).  A run takes the smallest buddy
 * block that holds it (several whole top-level blocks above 4 MiB) and
 * gives the block's tail back at once, so it costs @pages pages.
 * *@dirty is set when the memory may not read as zero.
 * Return: the run, or NULL with errno ENOMEM; nothing changes on failure.
 */
SP_INTERNAL void *sp_region_alloc_pages(int idx, size_t pages, size_t align,
					bool *dirty);
/*
 * sp_region_free_pages() - give the run at @addr back: it is cut into buddy
 * blocks that merge with their free buddies, under the same purge policy
 * as sp_region_free(), except that a run larger than every run freed
 * before it was taken (sp_region_first_bar()) goes back to the OS at once.
 * Checked under the region lock.
 * Return: false (nothing changed) when @addr is not the start of a run.
 */
SP_INTERNAL bool sp_region_free_pages(void *addr);

/*
 * sp_region_first_bar() - the pages a run must pass to go back to the OS at
 * its free: SP_RUN_FIRST_MIN_PAGES at start-up, raised by each such free
 * to the run's size (numa/region.c).
 */
SP_INTERNAL size_t sp_region_first_bar(void);
/* sp_region_first_bar_reset() - back to start-up's bar (tests). */
SP_INTERNAL void sp_region_first_bar_reset(void);
/*
 * sp_region_resize_pages() - make the run at @addr @pages pages long
 * (1 .. SP_RUN_MAX_PAGES) where it lies: a shrink gives the tail back, a
 * growth takes the free pages that follow it (carving fresh ones when the
 * run ends at the region's carved top).
 * Return: true when done; false, nothing changed, when the pages after it
 * are not free (or cannot be committed), or @addr is not a run.
 */
SP_INTERNAL bool sp_region_resize_pages(void *addr, size_t pages);

/*
 * sp_region_move_out() - turn the run at @addr into a mapping of its own
 * of @size bytes (above the run's length) holding its bytes: its pages are
 * moved by mremap, no copy, and its range of the region, mapped again
 * empty, goes back to the free lists clean.
 * Return: the mapping, or NULL with errno ENOMEM and the run unchanged.
 */
SP_INTERNAL void *sp_region_move_out(void *addr, size_t size);

/* Locks of every region, for fork: taken in index order. */
SP_INTERNAL void sp_space_lock_all(void);
SP_INTERNAL void sp_space_unlock_all(void);
SP_INTERNAL void sp_space_reinit_locks(void);

#endif /* SP_NUMA_REGION_H */
