/* SPDX-License-Identifier: MIT */
/*
 * slab/slab.h - the slab layer's private types and entry points.
 *
 * A cache (struct segpool_cache) owns, per NUMA node index, two lists of
 * slabs: partial (some objects free) and empty (all free, kept as a small
 * reserve); full slabs (none free) are counted but on no list, except in
 * debug caches (slab/slab.c: sp_slab_relist()).  A slab is a buddy block of
 * 2^order pages from the node's region (numa/region.h), holding objs_per_slab
 * objects at a fixed stride from its first byte, and described by a struct
 * sp_slab kept outside the slab, in the side-table line of its first page
 * (sp_slab_desc()).  Every page of a slab has the descriptor as its owner
 * token in the pagemap, so object -> slab is one lookup, or, where the
 * cache's order is known, a computation on the address.
 *
 * This layer knows nothing of CPUs or rseq: callers above it (core/, and the
 * per-CPU layer) bring it objects to free and ask it for objects to hand out,
 * one at a time or in bulk.
 */
#ifndef SP_SLAB_SLAB_H
#define SP_SLAB_SLAB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <segpool/slab.h>

#include "internal/compiler.h"
#include "internal/list.h"
#include "numa/region.h"
#include "slab/debug.h"
#include "slab/freemark.h"

struct sp_pcpu_cache;

#define SP_CACHE_MAGIC		0x5e9cac4eU
#define SP_CACHE_DEAD_MAGIC	0xdeadcac4U	/* a destroyed cache's
						 * tombstone */
/* destroyed caches whose first page is kept as a tombstone (4 MiB at most) */
#define SP_CACHE_TOMBSTONES	1024
#define SP_MIN_ALIGN		8
#define SP_FREEPTR_SIZE		sizeof(void *)

/* Internal cache flags, above every public one. */
#define SP_CACHE_KMALLOC	(1UL << 31)	/* a segpool_malloc
						 * size class */
#define SP_CACHE_FREEPTR_OUT	(1UL << 30)	/* link stored after
						 * the object */
#define SP_CACHE_INTERNAL	(1UL << 29)	/* the library's own
						 * bookkeeping */
#define SP_CACHE_ZEROED		(1UL << 28)	/* a new slab's objects
						 * start zeroed */
#define SP_CACHE_FREEMAP	(1UL << 27)	/* free objects in the
						 * descriptor's bitmap, no links
						 * (slab/geometry.c) */
#define SP_CACHE_REACH		(1UL << 26)	/* a slab's pages are tagged
						 * and its objects marked as
						 * hand-outs reach them
						 * (slab/slab.c) */
#define SP_CACHE_LINKED		(1UL << 25)	/* free objects on a list
						 * linked through them, never
						 * a map: the tests of the
						 * links and their checks */

/*
 * The library's own caches live as long as the process: their control and
 * per-CPU blocks are packed (sp_os_map_packed()), never unmapped.
 */
#define SP_CACHE_PACKED		(SP_CACHE_KMALLOC | SP_CACHE_INTERNAL)

/* Owner token of pages the library keeps for itself (not objects). */
#define SP_OWNER_META		((uintptr_t)2)

enum sp_slab_list {
	SP_SLAB_NONE,		/* being built or being released */
	SP_SLAB_PARTIAL,
	SP_SLAB_FULL,
	SP_SLAB_EMPTY,
	SP_SLAB_SAMPLED,	/* a sampled slab with room (one empty,
				 * at most) */
};

/*
 * struct sp_slab - descriptor of one slab; one cache line, so descriptors
 * of slabs used by different CPUs never share a line.
 */
struct sp_slab {
	void *freelist;			/* first free object, or NULL */
	struct segpool_cache *cache;	/* owning cache */
	char *base;			/* first object (the first byte of the
					 * slab, but dbg.red_left bytes past it
					 * in a cache with red zones) */
	unsigned int inuse;		/* objects handed out */
	unsigned short node;		/* node index */
	unsigned char order;		/* slab = 2^order pages */
	unsigned char list;		/* enum sp_slab_list */
	struct sp_list_head lru;	/* on a node list; desc
					 * pool link when free */
	unsigned int fresh;		/* objects [fresh, objs_per_slab)
					 * were never handed out and are
					 * on no freelist */
	union {
		unsigned int rand_pos;	/* SEGPOOL_FREELIST_RANDOM:
					 * where the fresh tail starts
					 * in the cache's sequence */
		unsigned int reach;	/* SP_CACHE_REACH: objects
					 * [0, reach) tagged and marked
					 * or handed out */
	};
	uint64_t freemap;		/* SP_CACHE_FREEMAP, one word: bit i
					 * set, object i free (freelist NULL,
					 * fresh full); a wide map is in the
					 * next line (sp_slab_freemap()) */
} __sp_cacheline_aligned;

_Static_assert(sizeof(struct sp_slab) == SP_CACHE_LINE,
	       "a slab descriptor is one cache line");
_Static_assert(offsetof(struct sp_slab, freelist) == 0,
	       "the freelist leads the descriptor");

/*
 * SP_CACHE_FREEMAP caches: up to SP_FREEMAP_WORD_OBJS objects a slab, the
 * map is one word of the descriptor; up to SP_FREEMAP_MAX_OBJS, it is the
 * words of the side line after the descriptor's, its slab's second page's
 * (a wide map: such a slab has two pages or more, and the side lines of a
 * block's pages past the first are its owner's too).  sp_slab_freemap().
 */
#define SP_FREEMAP_WORD_OBJS	64U
#define SP_FREEMAP_MAX_OBJS	(SP_FREEMAP_WORD_OBJS * SP_PAGE_SIDE_BYTES / 8)

/*
 * struct sp_cache_node - a cache's slabs on one node.  Its lock is taken by
 * every CPU allocating from or freeing to this node, so each one starts on
 * its own line (the array in struct segpool_cache is line-aligned too).
 */
struct sp_cache_node {
	/* --- line 0: lock and lists --- */
	pthread_mutex_t lock;		/* protects everything in this struct */
	struct sp_list_head partial;	/* some objects free:
					 * allocate here first */
	/* --- the other lists and the counts --- */
	struct sp_list_head full;	/* no object free: debug caches only */
	struct sp_list_head empty;	/* every object free; a small reserve */
	struct sp_list_head sampled;	/* sampled slabs with room, one of
					 * them empty at most
					 * (sp_slab_take_sampled()) */
	unsigned long nr_partial;
	unsigned long nr_sampled;
	unsigned long nr_full;
	unsigned long nr_empty;
	uint64_t active_objs;		/* objects handed out from this node */
	/* --- statistics --- */
	uint64_t allocs;		/* objects allocated to
					 * the application */
	uint64_t frees;			/* objects freed by the application */
	uint64_t xfer_allocs;		/* objects moved into
					 * per-CPU magazines */
	uint64_t xfer_frees;		/* objects flushed back from them */
	uint64_t sample_swaps;		/* objects of sampled slabs handed
					 * out in place of another
					 * (sp_slab_take_sampled()): each an
					 * allocation and a free too many in
					 * the counts above and the
					 * magazines' */
	uint64_t slabs_created;		/* slabs populated */
	uint64_t slabs_released;	/* slabs given back to the region */
	/* --- the empty-slab reserve, grown by churn (slab/slab.c) --- */
	uint64_t released_at_create;	/* slabs_released at
					 * the last creation */
	unsigned int keep_empty;	/* empty slabs kept now
					 * (>= max_empty) */
} __sp_cacheline_aligned;

/*
 * sp_node_holds_free() - whether node @n (locked) holds a slab a shrink
 * would give back: one of its empty reserve, or the sampled slab kept
 * empty for the next sample when it is the node's only sampled slab with
 * room (sp_slab_take_sampled()).  The decay's test for an idle cache.
 */
static inline bool sp_node_holds_free(struct sp_cache_node *n)
{
	return n->nr_empty ||
	       (n->nr_sampled == 1 &&
		!sp_list_first_entry(&n->sampled, struct sp_slab, lru)->inuse);
}

_Static_assert(offsetof(struct sp_cache_node, lock) == 0, "lock first");
_Static_assert(sizeof(struct sp_cache_node) % SP_CACHE_LINE == 0,
	       "nodes of a cache never share a line");

/*
 * struct segpool_cache - a named object cache.  Line 0 holds what every
 * allocation and free reads, hit paths included (core/hotpath.h); it is
 * written only at creation and destruction, so it stays shared-clean in
 * every CPU's cache.  The per-node structs follow, each on lines of its own.
 */
struct segpool_cache {
	/* --- line 0: read-mostly, hot --- */
	unsigned int magic;		/* SP_CACHE_MAGIC while alive */
	unsigned int object_size;	/* size asked for at creation */
	void *slots;			/* the per-CPU layer's slot array, for
					 * the hit paths; one that always misses
					 * when the cache has no layer.  Opaque
					 * here: slab/ never looks in */
	unsigned int stride;		/* bytes from one object to the next */
	unsigned int fp_offset;		/* free-list link's offset
					 * in a free object */
	unsigned int objs_per_slab;	/* objects in a slab */
	unsigned int stride_inv;	/* inverse of stride's
					 * odd part mod 2^32 */
	unsigned int slab_mask;		/* slab bytes - 1 (slabs are aligned to
					 * their size) */
	unsigned int key_off;		/* free-mark word's offset in a free
					 * object (slab/freemark.h) */
	unsigned char stride_shift;	/* trailing zero bits of stride */
	unsigned char order;		/* slab = 2^order pages */
	unsigned short pad0;
	unsigned int align;		/* alignment of every object */
	unsigned long flags;		/* SEGPOOL_* | SP_CACHE_* */
	struct sp_pcpu_cache *pcpu;	/* the per-CPU layer above, or NULL;
					 * opaque here: slab/ never looks in */
	/* --- line 1: cold --- */
	struct sp_list_head list __sp_cacheline_aligned; /* on sp_cache_list */
	void (*ctor)(void *);		/* constructor, or NULL */
	unsigned int max_empty;		/* empty slabs kept per node */
	size_t map_size;		/* bytes holding this struct (its
					 * mapping, or its packed lines) */
	uint64_t alloc_failures;	/* allocations that returned
					 * ENOMEM (atomic) */
	uint64_t alloc_failslab;	/* allocations failed by
					 * failslab (atomic) */
	uintptr_t fl_secret;		/* free-list link key; 0: links plain */
	unsigned int *rand_seq;		/* SEGPOOL_FREELIST_RANDOM:
					 * a permutation of [0,
					 * objs_per_slab), or NULL */
	uint64_t rand_state;		/* its per-slab start picker (atomic) */
	/* RCU accounting (rcu/), all atomic */
	uint64_t rcu_objs_pending;	/* freed by RCU, grace
					 * period not over */
	uint64_t rcu_objs_freed;	/* freed by RCU and back in the cache */
	uint64_t rcu_slabs_pending;	/* empty slabs waiting
					 * for a grace period */
	uint64_t rcu_slabs_released;	/* slabs released after one */
	/* the decay thread's, written by it alone (core/decay.c) */
	uint64_t decay_ops;		/* operations counted
					 * at its last look */
	uint64_t decay_since;		/* when they last changed (ns) */
	char name[SEGPOOL_CACHE_NAME_MAX + 1];
	struct sp_debug_layout dbg;	/* debug caches' slot (slab/debug.h) */
	/* --- per node, each line-aligned --- */
	struct sp_cache_node node[];
};

_Static_assert(offsetof(struct segpool_cache, list) == SP_CACHE_LINE,
	       "hot fields fill exactly line 0");
_Static_assert(offsetof(struct segpool_cache, pcpu) + sizeof(void *) <=
	       SP_CACHE_LINE, "the hit paths read line 0 only");
_Static_assert(offsetof(struct segpool_cache, node) % SP_CACHE_LINE == 0,
	       "per-node structs start on a line");
/* What a tombstone keeps of the struct: magic to name (slab/cache.c). */
#define SP_CACHE_TOMB_END	(offsetof(struct segpool_cache, name) +	\
				 sizeof(((struct segpool_cache *)0)->name))
_Static_assert(SP_CACHE_TOMB_END <= SP_PAGE_SIZE / 2,
	       "magic and name in the first page, a colour before them "
	       "(slab/cache.c): the tombstone keeps only it");

/*
 * sp_slab_tag() - the space tag of every page of a slab of @c on node index
 * @idx: the cache's address with the node index in its low bits (a cache's
 * control block is aligned to SP_CACHE_CTL_ALIGN, and there are fewer
 * nodes than SP_TAG_SAMPLED).  A free's hit path reads the tag of the
 * object's page and needs nothing else to know the object's cache and
 * node.
 *
 * A sampled slab's pages (sampled heap profiling, prof/: the objects a
 * profile records live there and nowhere else) carry SP_TAG_SAMPLED as
 * well.  No per-CPU slot expects such a tag, so every free of a recorded
 * object misses its hit path and reaches the slow path that drops the
 * record: the hit paths test nothing of their own for it.
 */
#define SP_TAG_SAMPLED		((uintptr_t)SP_CACHE_LINE)
#define SP_TAG_NODE_MASK	((uintptr_t)SP_CACHE_LINE - 1)
#define SP_CACHE_CTL_ALIGN	(2 * SP_CACHE_LINE)

static inline uintptr_t sp_slab_tag(const struct segpool_cache *c, int idx)
{
	return (uintptr_t)c | (uintptr_t)idx;
}

_Static_assert(SP_MAX_NODES <= SP_TAG_SAMPLED,
	       "node index fits a tag's low bits, below the sampled bit");
_Static_assert(SP_TAG_SAMPLED < SP_CACHE_CTL_ALIGN,
	       "the sampled bit lies below a cache's alignment");

/* Whether @c's control block is packed (SP_CACHE_PACKED). */
static inline bool sp_cache_packed(const struct segpool_cache *c)
{
	return c->flags & SP_CACHE_PACKED;
}

/* The cache of a page tag (0: the page belongs to no slab). */
static inline struct segpool_cache *sp_tag_cache(uintptr_t tag)
{
	return (struct segpool_cache *)(tag &
					~(uintptr_t)(SP_CACHE_CTL_ALIGN - 1));
}

/* The node index of a page tag. */
static inline unsigned int sp_tag_node(uintptr_t tag)
{
	return (unsigned int)(tag & SP_TAG_NODE_MASK);
}

/* Whether a page tag is a sampled slab's. */
static inline bool sp_tag_sampled(uintptr_t tag)
{
	return tag & SP_TAG_SAMPLED;
}

/*
 * sp_obj_at_boundary() - whether @obj, in a slab of @c, is at an object
 * boundary: the hit paths' interior-pointer check.  Slabs are aligned to
 * their size, so the offset is @obj's low bits; for a stride d = o * 2^k
 * (o odd), rotating offset * o^-1 right by k gives offset / d exactly when
 * d divides offset, and a number of at least 2^32 / d (more than a slab
 * holds) otherwise.  Four instructions and the compare.  Not for debug
 * caches, whose objects start past a red zone (their hit paths miss anyway
 * and the slow path checks with sp_obj_index()).
 */
static __sp_always_inline bool sp_obj_at_boundary(const struct segpool_cache *c,
						  const void *obj)
{
	uint32_t off = (uint32_t)(uintptr_t)obj & c->slab_mask;
	uint32_t q = off * c->stride_inv;

	q = (q >> c->stride_shift) | (q << ((32 - c->stride_shift) & 31));
	return likely(q < c->objs_per_slab);
}

/* The slab holding @obj, or NULL when @obj is not in any slab. */
static inline struct sp_slab *sp_obj_to_slab(const void *obj)
{
	uintptr_t off = (uintptr_t)obj - (uintptr_t)sp_space.base;
	uintptr_t owner;

	if (unlikely(off >= sp_space.size))
		return NULL;
	owner = SP_READ_ONCE(sp_space.map[off >> SP_PAGE_SHIFT].info);
	/* free-block tags and metadata tokens have low bits set */
	if (unlikely(!owner || (owner & (SP_CACHE_LINE - 1))))
		return NULL;
	return (struct sp_slab *)owner;
}

/*
 * sp_obj_index() - index of @obj in slab @s, or >= objs_per_slab when @obj is
 * not at an object boundary.  No division: the stride's power-of-two part
 * must divide the offset, and the offset's odd part times the odd part's
 * modular inverse is then the exact quotient (a non-multiple gives a huge
 * one).  One mask test, one multiply, one compare.
 */
static inline unsigned int sp_obj_index(const struct segpool_cache *c,
					const struct sp_slab *s,
					const void *obj)
{
	uintptr_t off = (uintptr_t)obj - (uintptr_t)s->base;

	if (unlikely(off & ((1UL << c->stride_shift) - 1)))
		return UINT32_MAX;
	return (unsigned int)(off >> c->stride_shift) * c->stride_inv;
}

/* Whether the slabs of map cache @c have a wide map (SP_FREEMAP_MAX_OBJS). */
static inline bool sp_freemap_wide(const struct segpool_cache *c)
{
	return c->objs_per_slab > SP_FREEMAP_WORD_OBJS;
}

/* The words of @s's free map (a map cache's slab): bit i, object i free. */
static inline uint64_t *sp_slab_freemap(const struct segpool_cache *c,
					struct sp_slab *s)
{
	return sp_freemap_wide(c) ? (uint64_t *)(s + 1) : &s->freemap;
}

/* How many words a free map of @c has. */
static inline unsigned int sp_freemap_words(const struct segpool_cache *c)
{
	return (c->objs_per_slab + 63) / 64;
}

/* Word @w of the map of a slab of @c with every object free. */
static inline uint64_t sp_freemap_full(const struct segpool_cache *c,
				       unsigned int w)
{
	unsigned int left = c->objs_per_slab - w * 64;

	return left >= 64 ? ~0ULL : (1ULL << left) - 1;
}

/* sp_slab_bytes() - bytes of one slab of @c. */
static inline size_t sp_slab_bytes(const struct segpool_cache *c)
{
	return SP_PAGE_SIZE << c->order;
}

#include "slab/harden.h"

/* --- free-list link accessors --------------------------------------------
 * The link of a free object is read and written only through these two, with
 * memcpy, so the library needs no -fno-strict-aliasing.  The stored word is
 * encoded (slab/harden.h: freelist hardening) and, under ASan or valgrind,
 * opened for the one access: a free object is off limits to everyone else.
 */
static inline void *sp_get_freeptr(const struct segpool_cache *c, void *obj)
{
	char *at = (char *)obj + c->fp_offset;
	uintptr_t v;

	sp_san_link_open(c, at);
	memcpy(&v, at, sizeof(v));
	sp_san_link_close(c, at);
	return (void *)sp_freeptr_mix(c, at, v);
}

static inline void sp_set_freeptr(const struct segpool_cache *c, void *obj,
				  void *next)
{
	char *at = (char *)obj + c->fp_offset;
	uintptr_t v = sp_freeptr_mix(c, at, (uintptr_t)next);

	sp_san_link_open(c, at);
	memcpy(at, &v, sizeof(v));
	sp_san_link_close(c, at);
}

/* --- slab/geometry.c --- */
/*
 * sp_geometry_compute() - stride, link offset, alignment and slab order for
 * an object of @size bytes.  Fills the line-0 fields of @c from @size,
 * @align and @c->flags.  Return: 0, or -EINVAL when no slab can hold it.
 */
SP_INTERNAL int sp_geometry_compute(struct segpool_cache *c, size_t size,
				    size_t align);

/*
 * sp_slab_desc() - the descriptor of the slab whose block starts on
 * @block's page: that page's line of the space's side table
 * (numa/region.h), as the kernel keeps struct slab in the slab's struct
 * page.  Nothing allocates or frees a descriptor, so a slab is built and
 * released with no lock of its own, and a flush computes where an object's
 * descriptor is (sp_slab_put_fast()) instead of loading its address.
 */
static inline struct sp_slab *sp_slab_desc(const void *block)
{
	return (struct sp_slab *)sp_space_side(block);
}

_Static_assert(sizeof(struct sp_slab) == SP_PAGE_SIDE_BYTES,
	       "a slab descriptor is its first page's side line");

/* --- slab/slab.c --- */
/*
 * sp_slab_alloc_bulk() - take @n objects of @c from node index @idx into
 * @objs.  All or nothing.  Return: @n, or 0 with errno ENOMEM.
 */
SP_INTERNAL size_t sp_slab_alloc_bulk(struct segpool_cache *c, int idx,
				      size_t n, void **objs);
/*
 * sp_slab_take_sampled() - one object of @c on node index @idx, from a
 * sampled slab (a slab whose pages carry SP_TAG_SAMPLED: sampled heap
 * profiling's, prof/), made if none has a free object.  Sampled slabs are
 * on their own list: no fill ever takes from them, and one that empties
 * goes back to the region unless it is the only one with room (kept for
 * the next sample; a shrink releases it, the decay's of an idle cache
 * too: sp_node_holds_free()).  Return: the object (free: marked,
 * poisoned as a free object is), or NULL with errno ENOMEM.
 */
SP_INTERNAL void *sp_slab_take_sampled(struct segpool_cache *c, int idx);
/* sp_slab_fill() - as sp_slab_alloc_bulk(), for objects that go into a
 * per-CPU magazine rather than to the application (counted apart). */
SP_INTERNAL size_t sp_slab_fill(struct segpool_cache *c, int idx, size_t n,
				void **objs);
/* sp_slab_flush() - as sp_slab_free_bulk(), for magazine rounds. */
SP_INTERNAL void sp_slab_flush(struct segpool_cache *c, size_t n, void **objs);
/*
 * sp_slab_free_one() - give @obj back to @s, which the caller found with
 * sp_obj_to_slab() and checked belongs to @c at an object boundary.
 */
SP_INTERNAL void sp_slab_free_one(struct segpool_cache *c, struct sp_slab *s,
				  void *obj);
/*
 * sp_slab_free_bulk() - give @n objects of @c back to their slabs, taking
 * each node lock once per run of objects of that node.  The objects were
 * checked when they were freed into the layer above.
 */
SP_INTERNAL void sp_slab_free_bulk(struct segpool_cache *c, size_t n,
				   void **objs);
/*
 * sp_slab_release_hook - set once by the layer above: takes an empty slab of
 * a SEGPOOL_TYPESAFE_BY_RCU cache, already off every list, and calls
 * sp_slab_release_now() on it after a grace period.  NULL: released at once.
 * The slab layer knows nothing of RCU; it only never gives such a slab's
 * memory back by itself.
 */
extern SP_INTERNAL void (*sp_slab_release_hook)(struct sp_slab *s);
/* sp_slab_release_now() - give an empty slab's pages and descriptor back. */
SP_INTERNAL void sp_slab_release_now(struct sp_slab *s);
/*
 * sp_slab_tally_begin() / _end() - count the slabs of @c the calling thread
 * releases in between, by any path (flushes, frees, shrink); _end() returns
 * the count and stops counting.
 */
SP_INTERNAL void sp_slab_tally_begin(const struct segpool_cache *c);
SP_INTERNAL unsigned long sp_slab_tally_end(void);
/*
 * sp_slab_shrink() - release the empty slabs of every node; the count.
 * With @purge each node's region then gives every free page back at once
 * (segpool_cache_shrink(), destroy); without it the released slabs' pages
 * are left to the region's decay like any other free block.
 */
SP_INTERNAL unsigned long sp_slab_shrink(struct segpool_cache *c, bool purge);
/*
 * sp_slab_walk_full() - call @fn on each full slab of @c on node index
 * @idx; the caller holds that node's lock.  Full slabs are on no list
 * (slab/slab.c) but in debug caches: found from the node's page tags, a
 * walk over every page the region has carved, for validation and leak
 * reports only.
 */
SP_INTERNAL void sp_slab_walk_full(struct segpool_cache *c, int idx,
				   void (*fn)(struct segpool_cache *c,
					      struct sp_slab *s, void *arg),
				   void *arg);
/* sp_slab_live_objects() - objects handed out, over all nodes. */
SP_INTERNAL uint64_t sp_slab_live_objects(struct segpool_cache *c);

/* --- slab/cache.c --- */
/*
 * Tombstones: destroy keeps the first page of a cache's control block
 * mapped, read-only, with SP_CACHE_DEAD_MAGIC and the name, and never hands
 * that address out again while it stands (the last SP_CACHE_TOMBSTONES
 * destroyed caches), so a stale handle is recognised instead of reading
 * unmapped memory or driving a new cache created at the same address.
 */
SP_INTERNAL __sp_cold __sp_noreturn void
sp_cache_report_dead(const struct segpool_cache *c, const char *op,
		     const void *addr);

/* sp_cache_check_dead() - report and abort when @c is a destroyed cache's
 * handle; @op says what was tried ("alloc from"), @addr the object or NULL. */
static inline void sp_cache_check_dead(const struct segpool_cache *c,
				       const char *op, const void *addr)
{
	if (unlikely(c && c->magic == SP_CACHE_DEAD_MAGIC))
		sp_cache_report_dead(c, op, addr);
}

/*
 * sp_cache_list: every live cache.  Writers (create, destroy, fork) hold
 * sp_cache_list_lock; readers (statistics, export) walk it with
 * sp_list_for_each_entry_rcu() in a read-side critical section of core/.
 */
extern SP_INTERNAL pthread_mutex_t sp_cache_list_lock;
extern SP_INTERNAL struct sp_list_head sp_cache_list;

/*
 * sp_cache_nil_slots - the slot array every new cache starts with, set once
 * by the layer above before any cache exists (one whose hit paths always
 * miss: core/hotpath.h).
 */
extern SP_INTERNAL void *sp_cache_nil_slots;

/*
 * sp_cache_create() - validate, build and list a cache (@flags may carry
 * internal bits).  Return: the cache, or NULL with errno set.
 */
SP_INTERNAL struct segpool_cache *
sp_cache_create(const char *name, size_t size, size_t align,
		unsigned long flags, void (*ctor)(void *));
/*
 * Destroy in two steps, so that the layer above can wait for a grace period
 * between them (walkers of sp_cache_list may still be looking at the cache):
 * sp_cache_unlist() releases the empty slabs and, when no object is live,
 * takes the cache off the list (0; -EBUSY or -EINVAL otherwise), refusing
 * the size classes and internal caches; sp_cache_unlist_unborn() does it
 * for any cache, the rollback of a creation whose later step failed (a
 * half-built size class must not stay listed, or every retry of start-up
 * meets its name); sp_cache_free() then gives its memory back.
 */
SP_INTERNAL int sp_cache_unlist(struct segpool_cache *c);
SP_INTERNAL int sp_cache_unlist_unborn(struct segpool_cache *c);
SP_INTERNAL void sp_cache_free(struct segpool_cache *c);
/* Caller holds sp_cache_list_lock. */
SP_INTERNAL bool sp_cache_is_listed(const struct segpool_cache *c);
/*
 * For fork: take (release, re-initialise) the cache-list lock and every
 * cache's node locks; @outer runs for each cache before its node locks are
 * taken (after they are released), so the layer above can fit its own locks
 * into the lock order.
 */
SP_INTERNAL void sp_cache_lock_all(void (*outer)(struct segpool_cache *));
SP_INTERNAL void sp_cache_unlock_all(void (*outer)(struct segpool_cache *));
SP_INTERNAL void sp_cache_reinit_locks(void (*outer)(struct segpool_cache *));

/*
 * sp_cache_obj_slab() - the slab of @obj when @obj is an object of @c at an
 * object boundary; NULL otherwise (sp_cache_object_check() then says why).
 * The always-on check of every free: a pagemap load, a compare of the
 * owner cache, and sp_obj_index().
 */
static __sp_always_inline struct sp_slab *
sp_cache_obj_slab(const struct segpool_cache *c, const void *obj)
{
	struct sp_slab *s = sp_obj_to_slab(obj);

	if (likely(s && s->cache == c &&
		   sp_obj_index(c, s, obj) < c->objs_per_slab))
		return s;
	return NULL;
}

/*
 * sp_slab_obj_reached() - whether @obj, an object of @s, was ever reached
 * by a hand-out (slab/slab.c, SP_CACHE_REACH): one that was not was never
 * allocated, so freeing it is freeing a free object.
 */
static inline bool sp_slab_obj_reached(const struct segpool_cache *c,
				       const struct sp_slab *s, const void *obj)
{
	return !(c->flags & SP_CACHE_REACH) ||
	       sp_obj_index(c, s, obj) < s->reach;
}

/* sp_cache_object_check() - the "free of ..." misuse for @obj in @c, or
 * NULL when @obj is a proper object of @c; @slab receives its slab. */
SP_INTERNAL const char *sp_cache_object_check(const struct segpool_cache *c,
					      const void *obj,
					      struct sp_slab **slab);

#endif /* SP_SLAB_SLAB_H */
