// SPDX-License-Identifier: MIT
/*
 * slab/slab.c - slabs: populate, hand out objects, take them back, release.
 *
 * States of a slab and the node list that holds it:
 *
 *   new ----> PARTIAL <----> FULL          (alloc takes from PARTIAL first;
 *               |  ^                        FULL is on no list but in
 *               v  |                        debug caches)
 *              EMPTY -----> released       (beyond the reserve, or on
 *                                           shrink; after a grace period
 *                                           for a SEGPOOL_TYPESAFE_BY_RCU
 *                                           cache)
 *
 * States of an object: constructed and free (on its slab's freelist, or
 * in the slab's never-used tail), or handed out (to the application, or to a
 * layer above that caches it).
 *
 * Lock order: see core/init.c, levels 3, 7 and 9 (cache list, node,
 * region).
 * Populating a new slab (page allocation and the ctor calls) and releasing one
 * (madvise) happen with no cache node lock held, so a slow ctor or a system
 * call never stalls other CPUs on the node, and a ctor may itself allocate
 * from segpool.
 *
 * A cache with debug flags (slab/debug.h) is checked here: its new slabs
 * get red zones and poison, and every object taken or put back goes
 * through a hook under the node lock.
 */
#include <errno.h>
#include <string.h>

#include "internal/debug.h"
#include "internal/reentry.h"
#include "internal/report.h"
#include "os/os.h"
#include "slab/slab.h"

/*
 * A new slab has an empty freelist and every object in its fresh tail;
 * populating it writes each object's free mark (slab/freemark.h) and runs
 * the ctor, which Bonwick's design runs once per object here, never on
 * allocation.
 */
static void sp_slab_populate(struct segpool_cache *c, struct sp_slab *s,
			     bool dirty)
{
	s->freelist = NULL;
	s->fresh = 0;
	s->freemap = 0;
	s->rand_pos = c->rand_seq ? sp_harden_rand_pos(c) : 0;
	if (c->flags & SP_CACHE_REACH)
		s->reach = 0;	/* nothing written yet: sp_slab_reach() */
	/* a map cache's objects are all in the map, none in a fresh tail */
	if (c->flags & SP_CACHE_FREEMAP) {
		uint64_t *map = sp_slab_freemap(c, s);

		for (unsigned int w = 0; w < sp_freemap_words(c); w++)
			map[w] = sp_freemap_full(c, w);
		s->fresh = c->objs_per_slab;
	}
	/*
	 * its pages may come from another cache's slab, with its bytes; a
	 * block nobody wrote since it was mapped or purged reads zero, and
	 * clearing it would fault in pages its first objects never reach
	 * (a zeroed cache is internal: no red zone, the slab is the block)
	 */
	if ((c->flags & SP_CACHE_ZEROED) && dirty) {
		sp_assert(c->dbg.red_left == 0);
		sp_os_clear(s->base, sp_slab_bytes(c));
	}
	if (c->ctor) {
		/*
		 * no lock held: the ctor may call segpool as the program does
		 */
		unsigned int depth = sp_lib_suspend();

		for (unsigned int i = 0; i < c->objs_per_slab; i++)
			c->ctor(s->base + (size_t)i * c->stride);
		sp_lib_resume(depth);
	}
	/*
	 * Every object starts free, so it starts with its free mark: a
	 * stale pointer into a slab carved where a released one stood (a
	 * double free after a shrink) is caught like any other double free.
	 * Debug caches keep their own state word; internal ones no mark; a
	 * lazily reached slab marks its objects as hand-outs reach them.
	 */
	if (!(c->flags &
	      (SP_CACHE_DEBUG | SP_CACHE_INTERNAL | SP_CACHE_REACH)))
		for (unsigned int i = 0; i < c->objs_per_slab; i++)
			sp_freemark_set(s->base + (size_t)i * c->stride,
					c->key_off);
	sp_san_slab_new(c, s->base, sp_slab_bytes(c));
	/*
	 * The part of a free mark past the object (all of it when the link
	 * and mark follow the object; the padding of a small object) stays
	 * addressable for memcheck, which never sees the mark's accessors
	 * as the library's own.
	 */
	if (c->key_off + SP_FREEMARK_SIZE > c->object_size &&
	    !(c->flags & SP_CACHE_DEBUG)) {
		unsigned int from = SP_MAX(c->key_off, c->object_size);
		size_t len = c->key_off + SP_FREEMARK_SIZE - from;

		for (unsigned int i = 0; i < c->objs_per_slab; i++)
			sp_san_mark_open(
				c, s->base + (size_t)i * c->stride + from, len);
	}
}

/*
 * Sampled slabs (sp_slab_take_sampled()): set once the first one is built,
 * so that a process that never samples reads no tag on the list moves.
 */
static bool sp_slab_sampling;

/* The first page of @s carries SP_TAG_SAMPLED from its build on. */
static inline bool sp_slab_is_sampled(const struct segpool_cache *c,
				      const struct sp_slab *s)
{
	return unlikely(SP_READ_ONCE(sp_slab_sampling)) &&
	       sp_tag_sampled(sp_space_tag(s->base - c->dbg.red_left));
}

/* The tag of @s's pages: its cache and node, and whether it is sampled. */
static inline uintptr_t sp_slab_own_tag(const struct segpool_cache *c,
					const struct sp_slab *s)
{
	uintptr_t tag = sp_slab_tag(c, s->node);

	return sp_slab_is_sampled(c, s) ? tag | SP_TAG_SAMPLED : tag;
}

/*
 * Lazily reached slabs (SP_CACHE_REACH, slab/geometry.c).  A new slab of
 * several pages is neither written nor tagged.  A hand-out that goes past
 * s->reach first marks every object from there up to the last one that
 * starts in the page where object @upto - 1 starts, and tags the pages
 * those objects start in.  So objects [0, reach) start in exactly the
 * tagged pages and each was handed out or carries its free mark, and the
 * objects past them start in untagged pages: a free's hit path sends a
 * pointer there to the slow path, which finds it unreached
 * (sp_slab_obj_reached()) and reports the double free that a mark stored
 * at populate would have caught.  Only map caches reach lazily (a slab of
 * several pages holds at most 64 objects in practice: slab/geometry.c),
 * and a map hands out its lowest bits first, so the reached part is
 * always a prefix.  Node lock held.
 */
static __sp_noinline void sp_slab_reach_to(struct segpool_cache *c,
					   struct sp_slab *s,
					   unsigned int upto)
{
	size_t stride = c->stride, first, last;
	unsigned int from = s->reach, to;

	/* pages [first, last) get their tags: past the reached ones, up to
	 * and with the one where object upto - 1 starts */
	first = from ? (((size_t)(from - 1) * stride) >> SP_PAGE_SHIFT) + 1 : 0;
	last = (((size_t)(upto - 1) * stride) >> SP_PAGE_SHIFT) + 1;
	/* the objects that start below page last */
	to = (unsigned int)SP_MIN(((last << SP_PAGE_SHIFT) + stride - 1) /
				  stride, (size_t)c->objs_per_slab);
	for (unsigned int i = from; i < to; i++) {
		char *obj = s->base + (size_t)i * stride;

		/* the slab is inaccessible to memcheck since populate */
		sp_san_mark_open(c, obj + c->key_off, SP_FREEMARK_SIZE);
		sp_freemark_set(obj, c->key_off);
		sp_san_mark_close(c, obj);
	}
	sp_space_set_tag_pages(s->base + (first << SP_PAGE_SHIFT),
			       last - first, sp_slab_own_tag(c, s));
	s->reach = to;
}

/* Objects [0, @upto) of @s are about to be handed out (node lock held). */
static __sp_always_inline void sp_slab_reach(struct segpool_cache *c,
					     struct sp_slab *s,
					     unsigned int upto)
{
	if ((c->flags & SP_CACHE_REACH) && unlikely(upto > s->reach))
		sp_slab_reach_to(c, s, upto);
}

/* Index of the fresh tail's next object: address order, or random order. */
static inline unsigned int sp_slab_fresh_index(const struct segpool_cache *c,
					       struct sp_slab *s)
{
	unsigned int i = s->fresh++;

	if (c->flags & SEGPOOL_FREELIST_RANDOM) {
		i += s->rand_pos;
		if (i >= c->objs_per_slab)
			i -= c->objs_per_slab;
		i = c->rand_seq[i];
	}
	return i;
}

/* The next object of @s: a freed one first, then the fresh tail; or NULL. */
static inline void *sp_slab_next(struct segpool_cache *c, struct sp_slab *s)
{
	void *obj = s->freelist;

	if (obj) {
		void *next = sp_get_freeptr(c, obj);

		/* with consistency checks, the debug hook reports it instead,
		 * with the response the cache is set to */
		if (unlikely(!sp_freeptr_valid(c, s, obj, next)) &&
		    !(c->flags & SEGPOOL_CONSISTENCY_CHECKS))
			sp_report_bad_freeptr(c, s, obj);
		s->freelist = next;
		return obj;
	}
	if (s->fresh < c->objs_per_slab)
		return s->base + (size_t)sp_slab_fresh_index(c, s) * c->stride;
	return NULL;
}

/*
 * Up to @want objects of @s's fresh tail into @objs in one step (node lock
 * held; @s has an empty freelist, a cache in address order and no debug):
 * a pointer bump per object, no link read.  How many.
 */
static inline size_t sp_slab_take_fresh(struct segpool_cache *c,
					struct sp_slab *s, size_t want,
					void **objs)
{
	size_t k = SP_MIN(want, (size_t)(c->objs_per_slab - s->fresh));
	char *p = s->base + (size_t)s->fresh * c->stride;

	for (size_t i = 0; i < k; i++, p += c->stride)
		objs[i] = p;
	s->fresh += (unsigned int)k;
	s->inuse += (unsigned int)k;
	return k;
}

/*
 * Up to @want free objects of @s, a slab of a map cache, into @objs (node
 * lock held): the lowest set bits of its map, in address order; no object
 * is read.  How many.
 */
static inline size_t sp_slab_take_map(struct segpool_cache *c,
				      struct sp_slab *s, size_t want,
				      void **objs)
{
	uint64_t *map = sp_slab_freemap(c, s);
	unsigned int i = 0, words = sp_freemap_words(c);
	size_t k = 0;

	for (unsigned int w = 0; w < words && k < want; w++) {
		uint64_t m = map[w];

		if (!m)
			continue;
		for (; k < want && m; k++, m &= m - 1) {
			i = w * 64 + (unsigned int)__builtin_ctzll(m);
			objs[k] = s->base + (size_t)i * c->stride;
		}
		map[w] = m;
	}
	s->inuse += (unsigned int)k;
	if (k)			/* the highest taken, in address order */
		sp_slab_reach(c, s, i + 1);
	return k;
}

/*
 * A fill is about to walk @s's freelist for up to @want objects (node lock
 * held).  The walk is a chain of dependent loads, each link in another
 * object, and after scattered frees every one a miss: 64 in a row for a
 * 4 KiB slab of 64-byte objects.  When most of the slab's used part is on
 * the list and the walk will take most of it, every link word of that part
 * is prefetched first, so the misses overlap and the walk runs on hits.
 */
#define SP_WALK_PREFETCH_MIN	8		/* links worth it */
#define SP_WALK_PREFETCH_BYTES	(32UL << 10)	/* most of a slab prefetched */

static inline void sp_slab_prefetch_links(const struct segpool_cache *c,
					  const struct sp_slab *s, size_t want)
{
	unsigned int on_list = s->fresh - s->inuse;
	size_t step = SP_MAX((size_t)c->stride, (size_t)SP_CACHE_LINE);
	size_t span = (size_t)s->fresh * c->stride;
	const char *p = s->base + c->fp_offset;

	if (on_list < SP_WALK_PREFETCH_MIN || 2 * (size_t)on_list < s->fresh ||
	    2 * want < on_list || span > SP_WALK_PREFETCH_BYTES)
		return;
	for (size_t off = 0; off < span; off += step)
		__builtin_prefetch(p + off, 0, 3);
}

/*
 * A new slab for @c on node index @idx, not yet on any list; @sampled: a
 * sampled slab (sp_slab_take_sampled()).
 */
static struct sp_slab *sp_slab_new(struct segpool_cache *c, int idx,
				   bool sampled)
{
	bool dirty;
	char *block = sp_region_alloc_dirty(idx, c->order, SP_OWNER_SIDE,
					    &dirty);
	uintptr_t tag = sp_slab_tag(c, idx);
	struct sp_slab *s;

	if (!block) {
		errno = ENOMEM;
		return NULL;
	}
	s = sp_slab_desc(block);
	/*
	 * whose page: a free's hit path needs only this word (a lazily
	 * reached slab's pages get it as hand-outs reach them; a sampled
	 * one's first page has it at once, which is where
	 * sp_slab_is_sampled() looks: no slot expects that tag, so a free
	 * into an object not reached yet still reaches the slow path)
	 */
	if (sampled) {
		tag |= SP_TAG_SAMPLED;
		SP_WRITE_ONCE(sp_slab_sampling, true);
		if (c->flags & SP_CACHE_REACH)
			sp_space_set_tag_pages(block, 1, tag);
	}
	if (!(c->flags & SP_CACHE_REACH))
		sp_space_set_tags(block, c->order, tag);
	s->base = block + c->dbg.red_left;	/* past the left red zone */
	s->cache = c;
	s->inuse = 0;
	s->node = (unsigned short)idx;
	s->order = (unsigned char)c->order;
	s->list = SP_SLAB_NONE;
	sp_list_init(&s->lru);
	sp_slab_populate(c, s, dirty);
	if (unlikely(c->flags & SP_CACHE_DEBUG))
		sp_debug_slab_init(c, s);
	return s;
}

void (*sp_slab_release_hook)(struct sp_slab *s);

void sp_slab_release_now(struct sp_slab *s)
{
	char *block = s->base - s->cache->dbg.red_left;

	sp_space_set_tags(block, s->order, 0);
	sp_san_slab_release(s->cache, block, SP_PAGE_SIZE << s->order);
	/* the side line is the next block's there, or nobody's */
	s->cache = NULL;
	s->list = SP_SLAB_NONE;
	sp_region_free(block, s->order);
}

/*
 * An empty slab leaves the cache.  A SEGPOOL_TYPESAFE_BY_RCU cache's readers
 * may still be reading its objects: its pages go back (to the region, thus
 * the OS or another cache) only after a grace period, through the hook.
 */
/*
 * The slabs of one cache this thread released between
 * sp_slab_tally_begin() and _end(): segpool_cache_shrink() counts with it
 * the slabs freed by its own drain of the per-CPU layer (a flushed magazine
 * can leave a slab empty beyond the node's keep) as well as its own.
 */
static __thread struct {
	const struct segpool_cache *cache;
	unsigned long released;
} sp_slab_tally;

void sp_slab_tally_begin(const struct segpool_cache *c)
{
	sp_slab_tally.cache = c;
	sp_slab_tally.released = 0;
}

unsigned long sp_slab_tally_end(void)
{
	sp_slab_tally.cache = NULL;
	return sp_slab_tally.released;
}

static void sp_slab_release(struct sp_slab *s)
{
	void (*hook)(struct sp_slab *) = SP_READ_ONCE(sp_slab_release_hook);

	/* no hit path takes its objects any more: a late free goes to the
	 * slow path, which finds the slab empty and reports it */
	sp_space_set_tags(s->base - s->cache->dbg.red_left, s->order, 0);
	if (unlikely(sp_slab_tally.cache == s->cache))
		sp_slab_tally.released++;

	if (unlikely(s->cache->flags & SEGPOOL_TYPESAFE_BY_RCU) && hook) {
		hook(s);
		return;
	}
	sp_slab_release_now(s);
}

/*
 * The empty-slab reserve follows churn (node lock held).  A node keeps
 * max_empty empty slabs (slab/geometry.c: 512 KiB worth); a cache whose
 * working set swings by more than that, a 3000-byte cache cycling through
 * 1000 objects say, would release slabs on the way down and build them
 * again on the way up, each time (0.1 built and released ~40 slabs a
 * second at such a cycle).  So: a slab built after a release since the
 * previous build is churn, and doubles the reserve, up to
 * SP_KEEP_EMPTY_BYTES of slabs; releasing more than twice that many slabs
 * with no build in between (the working set shrank for good) halves it,
 * down to max_empty.  Shrink and destroy release every empty slab whatever
 * the reserve, and start it again from max_empty.
 */
#define SP_KEEP_EMPTY_BYTES	(8UL << 20)

static inline unsigned int sp_keep_empty(const struct segpool_cache *c,
					 const struct sp_cache_node *n)
{
	return n->keep_empty > c->max_empty ? n->keep_empty : c->max_empty;
}

static inline unsigned int sp_keep_cap(const struct segpool_cache *c)
{
	return (unsigned int)SP_MAX((size_t)c->max_empty,
				    SP_KEEP_EMPTY_BYTES / sp_slab_bytes(c));
}

static void sp_slab_created(struct segpool_cache *c, struct sp_cache_node *n)
{
	unsigned int keep = sp_keep_empty(c, n), cap = sp_keep_cap(c);

	n->slabs_created++;
	if (n->slabs_released != n->released_at_create && keep < cap)
		n->keep_empty = SP_MIN(keep * 2, cap);
	n->released_at_create = n->slabs_released;
}

static void sp_slab_released(struct segpool_cache *c, struct sp_cache_node *n)
{
	n->slabs_released++;
	/* far more released than the cap since the last build: it shrank */
	if (n->keep_empty > c->max_empty &&
	    n->slabs_released - n->released_at_create > 2 * sp_keep_cap(c)) {
		n->keep_empty /= 2;
		n->released_at_create = n->slabs_released;
	}
}

/*
 * Move @s to the list its fill level calls for (node lock held).  A full
 * slab is on no list (as in SLUB): nothing allocates from it, and the free
 * that makes it partial again finds it by the object's pagemap entry, so
 * going full and coming back touch the slab and the partial list's head
 * only, never the cold descriptors around it on a full list.  Debug caches
 * keep a full list, for validation and leak reports.
 */
static void sp_slab_relist(struct segpool_cache *c, struct sp_cache_node *n,
			   struct sp_slab *s)
{
	enum sp_slab_list want;

	sp_assert_held(&n->lock);
	sp_assert(s->inuse <= c->objs_per_slab);
	if (s->inuse == 0)
		want = SP_SLAB_EMPTY;
	else if (s->inuse == c->objs_per_slab)
		want = SP_SLAB_FULL;
	else
		want = SP_SLAB_PARTIAL;
	/* a sampled slab with a free object: on its own list, whatever
	 * its level (one that goes empty by a free leaves the cache) */
	if (want != SP_SLAB_FULL && sp_slab_is_sampled(c, s))
		want = SP_SLAB_SAMPLED;
	if (s->list == want)
		return;

	switch (s->list) {
	case SP_SLAB_PARTIAL: n->nr_partial--; break;
	case SP_SLAB_FULL:    n->nr_full--;    break;
	case SP_SLAB_EMPTY:   n->nr_empty--;   break;
	case SP_SLAB_SAMPLED: n->nr_sampled--; break;
	default: break;
	}
	/* a full slab's link points at itself: the moves touch it alone */
	switch (want) {
	case SP_SLAB_PARTIAL:
		n->nr_partial++;
		sp_list_move(&s->lru, &n->partial);
		break;
	case SP_SLAB_FULL:
		n->nr_full++;
		if (unlikely(c->flags & SP_CACHE_DEBUG))
			sp_list_move(&s->lru, &n->full);
		else
			sp_list_del(&s->lru);
		break;
	case SP_SLAB_SAMPLED:
		n->nr_sampled++;
		sp_list_move(&s->lru, &n->sampled);
		break;
	default:
		n->nr_empty++;
		sp_list_move(&s->lru, &n->empty);
		break;
	}
	s->list = (unsigned char)want;
}

/* Pop objects from the node's slabs into @objs (node lock held); how many. */
static __sp_libframe size_t sp_node_take(struct segpool_cache *c,
					 struct sp_cache_node *n,
			   size_t want, void **objs, bool xfer)
{
	struct sp_slab *ahead = NULL;	/* links prefetched a slab ago */
	size_t got = 0;

	sp_assert_held(&n->lock);
	while (got < want) {
		struct sp_slab *s;

		if (!sp_list_empty(&n->partial))
			s = sp_list_first_entry(&n->partial, struct sp_slab,
						lru);
		else if (!sp_list_empty(&n->empty))
			s = sp_list_first_entry(&n->empty, struct sp_slab, lru);
		else
			break;
		if (c->flags & SP_CACHE_FREEMAP) {
			size_t k = sp_slab_take_map(c, s, want - got,
						    objs + got);

			/* on a list with no bit set: the counts are wrong,
			 * and taking it again would loop forever */
			if (unlikely(!k))
				sp_report_short_freelist(c, s);
			got += k;
			sp_slab_relist(c, n, s);
			continue;
		}
		if (!s->freelist && !(c->flags & (SEGPOOL_FREELIST_RANDOM |
						  SP_CACHE_DEBUG))) {
			got += sp_slab_take_fresh(c, s, want - got, objs + got);
		} else if (s->freelist && s->list == SP_SLAB_PARTIAL) {
			/*
			 * One slab ahead: the next partial slab's links are
			 * prefetched while this one is walked, and the
			 * descriptor after it, read when its turn comes.
			 */
			struct sp_slab *t =
				s->lru.next != &n->partial ?
					sp_list_entry(s->lru.next,
						      struct sp_slab, lru) :
					NULL;

			if (ahead != s)
				sp_slab_prefetch_links(c, s, want - got);
			if (t && t->freelist) {
				sp_slab_prefetch_links(c, t, want - got);
				__builtin_prefetch(t->lru.next, 0, 3);
			}
			ahead = t;
		}
		while (got < want) {
			void *obj = sp_slab_next(c, s);

			if (!obj) {
				/*
				 * A slab on the partial or empty list has a
				 * free object by its count: none means a link
				 * was overwritten with NULL.  Taking this slab
				 * again would loop forever.
				 */
				if (unlikely(s->inuse < c->objs_per_slab))
					sp_report_short_freelist(c, s);
				break;
			}
			if (unlikely(c->flags & SP_CACHE_DEBUG))
				sp_debug_on_alloc(c, s, obj);
			s->inuse++;
			objs[got++] = obj;
		}
		sp_slab_relist(c, n, s);
	}
	n->active_objs += got;
	if (xfer)
		n->xfer_allocs += got;
	else
		n->allocs += got;
	return got;
}

/* Put objects back on their slabs (node lock held); for bulk rollback. */
static void sp_node_untake(struct segpool_cache *c, struct sp_cache_node *n,
			   size_t cnt, void **objs, bool xfer)
{
	for (size_t i = 0; i < cnt; i++) {
		struct sp_slab *s = sp_obj_to_slab(objs[i]);

		if (unlikely(c->flags & SP_CACHE_DEBUG))
			sp_debug_on_untake(c, objs[i]);
		if (c->flags & SP_CACHE_FREEMAP) {
			unsigned int k = sp_obj_index(c, s, objs[i]);

			sp_slab_freemap(c, s)[k / 64] |= 1ULL << (k % 64);
		} else {
			sp_set_freeptr(c, objs[i], s->freelist);
			s->freelist = objs[i];
		}
		s->inuse--;
		sp_slab_relist(c, n, s);
	}
	n->active_objs -= cnt;
	if (xfer)
		n->xfer_allocs -= cnt;
	else
		n->allocs -= cnt;
}

static __sp_libframe size_t sp_slab_take(struct segpool_cache *c, int idx,
					 size_t want, void **objs, bool xfer)
{
	struct sp_cache_node *n = &c->node[idx];
	size_t got;

	pthread_mutex_lock(&n->lock);
	got = sp_node_take(c, n, want, objs, xfer);
	pthread_mutex_unlock(&n->lock);

	while (got < want) {
		struct sp_slab *s = sp_slab_new(c, idx, false);

		pthread_mutex_lock(&n->lock);
		if (!s) {
			sp_node_untake(c, n, got, objs, xfer);
			pthread_mutex_unlock(&n->lock);
			errno = ENOMEM;
			return 0;
		}
		sp_slab_created(c, n);
		sp_slab_relist(c, n, s);
		got += sp_node_take(c, n, want - got, objs + got, xfer);
		pthread_mutex_unlock(&n->lock);
	}
	return got;
}

__sp_libframe size_t sp_slab_alloc_bulk(struct segpool_cache *c, int idx,
					size_t want, void **objs)
{
	return sp_slab_take(c, idx, want, objs, false);
}

__sp_libframe size_t sp_slab_fill(struct segpool_cache *c, int idx,
				  size_t want, void **objs)
{
	return sp_slab_take(c, idx, want, objs, true);
}

/*
 * One object of @s, a sampled slab with a free one (node lock held): the
 * same taking as a fill's, one object, no debug cache.
 */
static void *sp_slab_take_one(struct segpool_cache *c, struct sp_slab *s)
{
	void *obj = NULL;

	if (c->flags & SP_CACHE_FREEMAP) {
		if (unlikely(!sp_slab_take_map(c, s, 1, &obj)))
			sp_report_short_freelist(c, s);
		return obj;
	}
	obj = sp_slab_next(c, s);
	if (unlikely(!obj))
		sp_report_short_freelist(c, s);
	s->inuse++;
	return obj;
}

void *sp_slab_take_sampled(struct segpool_cache *c, int idx)
{
	struct sp_cache_node *n = &c->node[idx];
	struct sp_slab *s;
	void *obj;

	sp_assert(!(c->flags & SP_CACHE_DEBUG));
	pthread_mutex_lock(&n->lock);
	if (sp_list_empty(&n->sampled)) {
		pthread_mutex_unlock(&n->lock);
		s = sp_slab_new(c, idx, true);
		if (!s)
			return NULL;
		pthread_mutex_lock(&n->lock);
		/* not churn: the empty reserve's growth (sp_slab_created())
		 * follows the fills alone */
		n->slabs_created++;
		sp_slab_relist(c, n, s);
	}
	s = sp_list_first_entry(&n->sampled, struct sp_slab, lru);
	obj = sp_slab_take_one(c, s);
	n->active_objs++;
	n->allocs++;
	n->sample_swaps++;
	sp_slab_relist(c, n, s);
	pthread_mutex_unlock(&n->lock);
	return obj;
}

/*
 * A free left @s empty (node lock held): when the node already keeps its
 * reserve of empty slabs, @s itself leaves its list and is returned for
 * the caller to release once the node lock is dropped; otherwise NULL, and
 * the caller puts it in the reserve.  The slab at hand goes rather than
 * the reserve's coldest: its descriptor and list neighbours are in the
 * cache already, where the coldest one's are misses (two or three a
 * released slab, at a scattered free of millions of objects).
 */
static struct sp_slab *sp_node_victim(struct segpool_cache *c,
				      struct sp_cache_node *n,
				      struct sp_slab *s)
{
	bool sampled;

	if (s->inuse != 0)
		return NULL;
	/*
	 * A sampled slab is kept only while no other has room: nothing but
	 * a sample takes from it, and a program whose samples are freed soon
	 * (most are) would otherwise build and release one a sample.
	 */
	sampled = sp_slab_is_sampled(c, s);
	if (sampled ? n->nr_sampled == (s->list == SP_SLAB_SAMPLED)
		    : n->nr_empty < sp_keep_empty(c, n))
		return NULL;
	switch (s->list) {
	case SP_SLAB_PARTIAL: n->nr_partial--; break;
	case SP_SLAB_FULL:    n->nr_full--;    break;
	case SP_SLAB_EMPTY:   n->nr_empty--;   break;
	case SP_SLAB_SAMPLED: n->nr_sampled--; break;
	default: break;
	}
	sp_list_del(&s->lru);
	s->list = SP_SLAB_NONE;
	if (sampled)
		n->slabs_released++;	/* not churn: the reserve stays */
	else
		sp_slab_released(c, n);
	return s;
}

/*
 * @s became empty: hand out in address order again, links unneeded (a map
 * cache's full map does that already).
 */
static inline void sp_slab_reset(struct segpool_cache *c, struct sp_slab *s)
{
	if (c->flags & SP_CACHE_FREEMAP)
		return;
	s->freelist = NULL;
	s->fresh = 0;
	if (c->rand_seq)
		s->rand_pos = sp_harden_rand_pos(c);
}

/*
 * A slab's fill level changed by a free (node lock held): it moves to the
 * list that level calls for, or leaves the cache.  Return the slab to
 * release, if it went empty with the node's reserve already full.
 */
static inline struct sp_slab *sp_slab_after_free(struct segpool_cache *c,
						 struct sp_cache_node *n,
						 struct sp_slab *s)
{
	struct sp_slab *victim;

	if (s->inuse == 0)
		sp_slab_reset(c, s);
	victim = sp_node_victim(c, n, s);
	if (!victim)
		sp_slab_relist(c, n, s);
	return victim;
}

/* A map cache's bad put of @obj (node @n locked): report it, no return. */
static __sp_cold __sp_noreturn void sp_freemap_bad(struct segpool_cache *c,
						   struct sp_cache_node *n,
						   void *obj, uint64_t bit)
{
	pthread_mutex_unlock(&n->lock);
	sp_report_bad_free(bit ? "double free" : "invalid free", obj, c->name);
}

/*
 * Put @obj back on @s (node lock held).  Return the slab to release, if
 * freeing @obj left one empty slab too many on the node.
 */
static __sp_libframe struct sp_slab *sp_node_put(struct segpool_cache *c,
				   struct sp_cache_node *n, struct sp_slab *s,
				   void *obj, bool xfer)
{
	sp_assert_held(&n->lock);
	if (unlikely(c->flags & SP_CACHE_DEBUG) && !sp_debug_on_free(c, s, obj))
		return NULL;	/* a bad free, reported: ignored */
	if (c->flags & SP_CACHE_FREEMAP) {
		/* past the callers' boundary checks: a bad index is misuse */
		unsigned int i = sp_obj_index(c, s, obj);
		uint64_t *word, bit;

		if (unlikely(i >= c->objs_per_slab))
			sp_freemap_bad(c, n, obj, 0);
		word = sp_slab_freemap(c, s) + i / 64;
		bit = 1ULL << (i % 64);
		if (unlikely(s->inuse == 0 || (*word & bit)))
			sp_freemap_bad(c, n, obj, bit);
		*word |= bit;
	} else {
		if (unlikely(s->inuse == 0 || obj == s->freelist)) {
			pthread_mutex_unlock(&n->lock);
			sp_report_bad_free("double free", obj, c->name);
		}
		sp_set_freeptr(c, obj, s->freelist);
		s->freelist = obj;
	}
	s->inuse--;
	n->active_objs--;
	if (xfer)
		n->xfer_frees++;
	else
		n->frees++;
	return sp_slab_after_free(c, n, s);
}

__sp_libframe void sp_slab_free_one(struct segpool_cache *c, struct sp_slab *s,
				    void *obj)
{
	struct sp_cache_node *n = &c->node[s->node];
	struct sp_slab *victim;

	pthread_mutex_lock(&n->lock);
	victim = sp_node_put(c, n, s, obj, false);
	pthread_mutex_unlock(&n->lock);
	if (victim)
		sp_slab_release(victim);
}

/*
 * The flush pipeline.  A magazine flushed after scattered frees holds
 * objects of as many slabs as it has rounds, each slab's descriptor a
 * cache miss when the heap is large; put back one after the other, the
 * flush would wait on each in turn.  A descriptor's address is computed
 * from the object's (the side line of its slab's first page,
 * sp_slab_desc(): slabs are aligned to their size), so nothing is loaded
 * to find it, and the flush looks ahead:
 *
 *   object i + SP_FLUSH_DESC: its descriptor is prefetched for writing;
 *   object i + SP_FLUSH_NBR:  when its slab is about to go empty, its
 *                             partial-list neighbours, which the unlink
 *                             writes, are prefetched;
 *   object i:                 put on its slab, everything it touches in
 *                             the cache.
 *
 * In the last SP_FLUSH_DESC objects the look-ahead index is clamped to the
 * last object (each stage repeats the last object's work, which is
 * harmless); before them it needs no test at all.
 *
 * Every object is put on its slab in memory, one at a time: a scattered
 * flush (the case that costs) has a slab per object, so caching a run's
 * freelist in registers saved nothing there and cost a run test per
 * object.  The node's counters move once per flush, and a slab goes
 * through the list code only when it changes list: when it leaves the
 * full state (its first object back) or goes empty.  A slab whose count
 * lands anywhere else was on the partial list and stays there.  Every
 * object a program frees passes this loop once when its heap is larger
 * than the magazines and depot, so its instructions per object are a
 * share of every free: the geometry is loaded once (struct
 * sp_flush_geo), and the object's index comes from one multiply and one
 * rotate.
 * The node lock is taken once per run of one node's objects (a magazine
 * holds one node's: once per flush).  Not sorted: a sort of 1000 rounds
 * would cost some 10^4 compares, more than the list work it would merge.
 * The object lines are not prefetched: a map cache's flush writes none of
 * them, and a list cache's would compete with the descriptors' for the
 * core's miss buffers.
 */
#define SP_FLUSH_DESC	24
#define SP_FLUSH_NBR	8
/* a slab with this few objects out may go empty within one batch */
#define SP_FLUSH_NEAR_EMPTY 2

_Static_assert(SP_FLUSH_DESC > SP_FLUSH_NBR,
	       "each stage runs behind the one that feeds it");

/*
 * Stage NBR: the list neighbours @s unlinks from if this batch empties it.
 * The count is read ahead of the node lock, a guess for a prefetch only:
 * a ThreadSanitizer build leaves the guess out (it would be a race report).
 */
static __sp_always_inline void sp_flush_near_empty(struct sp_slab *s)
{
	if (SP_TSAN)
		return;
	if (s->inuse <= SP_FLUSH_NEAR_EMPTY) {
		__builtin_prefetch(s->lru.next, 1, 3);
		__builtin_prefetch(s->lru.prev, 1, 3);
	}
}

/*
 * What the flush loop reads for every object, loaded once: the compiler
 * cannot keep the cache's and the space's fields in registers across the
 * loop's stores (they might alias), and reloaded they are a third of it.
 */
struct sp_flush_geo {
	const char *base;		/* sp_space.base */
	char *side;			/* sp_space.side */
	unsigned int slab_shift;	/* SP_PAGE_SHIFT + the cache's order */
	unsigned int side_shift;	/* log2 of the side bytes of a slab */
	unsigned int stride_shift;
	unsigned int stride_inv;
	unsigned int per_slab;		/* objs_per_slab */
};

/* The descriptor of @obj, an object of a live slab: sp_slab_desc(). */
static __sp_always_inline struct sp_slab *
sp_flush_desc(const struct sp_flush_geo *g, const void *obj)
{
	uintptr_t slab = ((uintptr_t)obj - (uintptr_t)g->base) >>
			 g->slab_shift;

	return (struct sp_slab *)(g->side + (slab << g->side_shift));
}

/*
 * The stages for object @i of @cnt; @tail: near the end, where the
 * look-ahead indices are clamped to the last object (each stage repeats
 * its work on it, which is harmless).  Out of the tail the loop has no
 * test per stage.
 */
static __sp_always_inline void sp_flush_stages(const struct sp_flush_geo *g,
					       void **objs, size_t i,
					       size_t cnt, bool wide, bool tail)
{
	size_t d = i + SP_FLUSH_DESC, b = i + SP_FLUSH_NBR;
	struct sp_slab *s;

	if (tail) {
		d = d < cnt ? d : cnt - 1;
		b = b < cnt ? b : cnt - 1;
	}
	s = sp_flush_desc(g, objs[d]);
	__builtin_prefetch(s, 1, 3);
	if (wide)		/* the map's line */
		__builtin_prefetch(s + 1, 1, 3);
	sp_flush_near_empty(sp_flush_desc(g, objs[b]));
}

/*
 * Put @obj on @s (node @n locked).  Return true when @s changes list: it
 * was full, or it is empty now.  @bitmap is constant in each caller.
 */
static __sp_always_inline bool sp_flush_put(struct segpool_cache *c,
					    const struct sp_flush_geo *g,
					    struct sp_cache_node *n,
					    struct sp_slab *s, void *obj,
					    bool bitmap, bool wide)
{
	unsigned int inuse = s->inuse;

	if (bitmap) {
		/*
		 * The bit is in the descriptor or the line after it: no
		 * object line touched.  The index as sp_obj_at_boundary()
		 * finds it: a multiply by the stride's odd part's inverse,
		 * rotated by its power of two, is below the count only at an
		 * object boundary.
		 */
		uint32_t off = (uint32_t)((uintptr_t)obj - (uintptr_t)s->base);
		uint32_t idx = off * g->stride_inv;
		uint64_t *word = &s->freemap, map, bit;

		idx = (idx >> g->stride_shift) |
		      (idx << ((32 - g->stride_shift) & 31));
		if (unlikely(idx >= g->per_slab))
			sp_freemap_bad(c, n, obj, 0);
		if (wide)
			word = (uint64_t *)(s + 1) + idx / 64;
		map = *word;
		bit = 1ULL << (idx % 64);
		if (unlikely(inuse == 0 || (map & bit)))
			sp_freemap_bad(c, n, obj, bit);
		*word = map | bit;
	} else {
		void *head = s->freelist;

		if (unlikely(inuse == 0 || obj == head)) {
			pthread_mutex_unlock(&n->lock);
			sp_report_bad_free("double free", obj, c->name);
		}
		sp_set_freeptr(c, obj, head);
		s->freelist = obj;
	}
	s->inuse = --inuse;
	return unlikely(inuse == 0 || inuse + 1 == g->per_slab);
}

/* The node's counters for @k objects back (node lock held). */
static inline void sp_flush_count(struct sp_cache_node *n, size_t k,
				  bool xfer)
{
	n->active_objs -= k;
	if (xfer)
		n->xfer_frees += k;
	else
		n->frees += k;
}

/*
 * @s changed list (node @n locked): an empty slab past the node's reserve
 * goes on @victims, to be released once the lock is dropped.
 */
static __sp_noinline void sp_flush_relist(struct segpool_cache *c,
					  struct sp_cache_node *n,
					  struct sp_slab *s,
					  struct sp_list_head *victims)
{
	struct sp_slab *v = sp_slab_after_free(c, n, s);

	if (v)
		sp_list_add(&v->lru, victims);
}

/* Objects [@i, @end) of the flush; the node run so far in *@n, *@from. */
static __sp_always_inline size_t
sp_flush_span(struct segpool_cache *c, const struct sp_flush_geo *g,
	      void **objs, size_t i, size_t end, size_t cnt,
	      struct sp_cache_node **np, size_t *from, bool xfer,
	      struct sp_list_head *victims, bool bitmap, bool wide,
	      bool tail)
{
	struct sp_cache_node *n = *np;
	unsigned int node = n ? (unsigned int)(n - c->node) : ~0U;

	for (; i < end; i++) {
		struct sp_slab *s = sp_flush_desc(g, objs[i]);

		sp_flush_stages(g, objs, i, cnt, wide, tail);
		if (unlikely(s->node != node)) {
			if (n) {
				sp_flush_count(n, i - *from, xfer);
				pthread_mutex_unlock(&n->lock);
			}
			node = s->node;
			n = &c->node[node];
			pthread_mutex_lock(&n->lock);
			*from = i;
		}
		if (sp_flush_put(c, g, n, s, objs[i], bitmap, wide))
			sp_flush_relist(c, n, s, victims);
	}
	*np = n;
	return i;
}

static __sp_always_inline void
sp_slab_put_loop(struct segpool_cache *c, size_t cnt, void **objs, bool xfer,
		 struct sp_list_head *victims, bool bitmap, bool wide)
{
	struct sp_flush_geo g = {
		.base = sp_space.base,
		.side = sp_space.side,
		.slab_shift = SP_PAGE_SHIFT + c->order,
		.side_shift = sp_ilog2(SP_PAGE_SIDE_BYTES) + c->order,
		.stride_shift = c->stride_shift,
		.stride_inv = c->stride_inv,
		.per_slab = c->objs_per_slab,
	};
	struct sp_cache_node *n = NULL;
	size_t i, from = 0;
	size_t body = cnt > SP_FLUSH_DESC ? cnt - SP_FLUSH_DESC : 0;

	for (i = 0; i < SP_FLUSH_DESC; i++) {
		struct sp_slab *s =
			sp_flush_desc(&g, objs[i < cnt ? i : cnt - 1]);

		__builtin_prefetch(s, 1, 3);
		if (wide)
			__builtin_prefetch(s + 1, 1, 3);
	}

	i = sp_flush_span(c, &g, objs, 0, body, cnt, &n, &from, xfer,
			  victims, bitmap, wide, false);
	sp_flush_span(c, &g, objs, i, cnt, cnt, &n, &from, xfer,
		      victims, bitmap, wide, true);
	if (n) {
		sp_flush_count(n, cnt - from, xfer);
		pthread_mutex_unlock(&n->lock);
	}
}

static __sp_libframe void sp_slab_put_fast(struct segpool_cache *c, size_t cnt,
					   void **objs, bool xfer,
					   struct sp_list_head *victims)
{
	if (!cnt)
		return;
	if (!(c->flags & SP_CACHE_FREEMAP))
		sp_slab_put_loop(c, cnt, objs, xfer, victims, false, false);
	else if (sp_freemap_wide(c))
		sp_slab_put_loop(c, cnt, objs, xfer, victims, true, true);
	else
		sp_slab_put_loop(c, cnt, objs, xfer, victims, true, false);
}

/* Debug caches: one object at a time, each through the debug hook. */
static __sp_libframe void sp_slab_put_debug(struct segpool_cache *c,
					    size_t cnt, void **objs, bool xfer,
					    struct sp_list_head *victims)
{
	struct sp_cache_node *n = NULL;

	for (size_t i = 0; i < cnt; i++) {
		struct sp_slab *s = sp_obj_to_slab(objs[i]), *v;

		if (n != &c->node[s->node]) {
			if (n)
				pthread_mutex_unlock(&n->lock);
			n = &c->node[s->node];
			pthread_mutex_lock(&n->lock);
		}
		v = sp_node_put(c, n, s, objs[i], xfer);
		if (v)
			sp_list_add(&v->lru, victims);
	}
	if (n)
		pthread_mutex_unlock(&n->lock);
}

static __sp_libframe void sp_slab_put(struct segpool_cache *c, size_t cnt,
				      void **objs, bool xfer)
{
	struct sp_list_head victims;
	struct sp_slab *v;

	sp_list_init(&victims);
	if (unlikely(c->flags & SP_CACHE_DEBUG))
		sp_slab_put_debug(c, cnt, objs, xfer, &victims);
	else
		sp_slab_put_fast(c, cnt, objs, xfer, &victims);
	/* released with no node lock held: the region lock */
	while (!sp_list_empty(&victims)) {
		v = sp_list_first_entry(&victims, struct sp_slab, lru);
		sp_list_del(&v->lru);
		sp_slab_release(v);
	}
}

__sp_libframe void sp_slab_free_bulk(struct segpool_cache *c, size_t cnt,
				     void **objs)
{
	sp_slab_put(c, cnt, objs, false);
}

void sp_slab_flush(struct segpool_cache *c, size_t cnt, void **objs)
{
	sp_slab_put(c, cnt, objs, true);
}

unsigned long sp_slab_shrink(struct segpool_cache *c, bool purge)
{
	unsigned long released = 0;

	for (int i = 0; i < sp_space.nr_regions; i++) {
		struct sp_cache_node *n = &c->node[i];
		struct sp_list_head list;
		struct sp_slab *s;

		sp_list_init(&list);
		pthread_mutex_lock(&n->lock);
		while (!sp_list_empty(&n->empty)) {
			s = sp_list_first_entry(&n->empty, struct sp_slab, lru);
			sp_list_move(&s->lru, &list);
			s->list = SP_SLAB_NONE;
			n->nr_empty--;
			n->slabs_released++;
		}
		/* an empty sampled slab: the one kept for the next sample,
		 * or one built while another thread built one too
		 * (sp_slab_take_sampled()), left unused */
		sp_list_for_each_entry_safe(s, &n->sampled, lru) {
			if (s->inuse)
				continue;
			sp_list_move(&s->lru, &list);
			s->list = SP_SLAB_NONE;
			n->nr_sampled--;
			n->slabs_released++;
		}
		/* the reserve starts again from max_empty */
		n->keep_empty = 0;
		n->released_at_create = n->slabs_released;
		pthread_mutex_unlock(&n->lock);
		sp_list_for_each_entry_safe(s, &list, lru) {
			sp_list_del(&s->lru);
			sp_slab_release(s);
			released++;
		}
		/* shrink means now: the node's free memory goes back at once */
		if (purge)
			sp_region_purge(i);
	}
	return released;
}

void sp_slab_walk_full(struct segpool_cache *c, int idx,
		       void (*fn)(struct segpool_cache *c, struct sp_slab *s,
				  void *arg),
		       void *arg)
{
	struct sp_region *r = &sp_space.region[idx];
	size_t first = (size_t)(r->base - sp_space.base) >> SP_PAGE_SHIFT;
	size_t top = SP_READ_ONCE(r->top);	/* only grows */
	uintptr_t tag = sp_slab_tag(c, idx);
	struct sp_slab *s;

	if (c->flags & SP_CACHE_DEBUG) {
		sp_list_for_each_entry(s, &c->node[idx].full, lru)
			fn(c, s, arg);
		return;
	}
	/* a slab's pages carry the tag from its build (a lazily reached
	 * one's first page: from its first hand-out, before it can be full)
	 * to its release */
	for (size_t p = 0; p < top; p += 1UL << c->order) {
		/* a sampled slab's too */
		if ((SP_READ_ONCE(sp_space.tags[first + p]) &
		     ~SP_TAG_SAMPLED) != tag)
			continue;
		s = (struct sp_slab *)SP_READ_ONCE(r->map[p].info);
		if (s->cache == c && s->list == SP_SLAB_FULL)
			fn(c, s, arg);
	}
}

uint64_t sp_slab_live_objects(struct segpool_cache *c)
{
	uint64_t live = 0;

	for (int i = 0; i < sp_space.nr_regions; i++) {
		pthread_mutex_lock(&c->node[i].lock);
		live += c->node[i].active_objs;
		pthread_mutex_unlock(&c->node[i].lock);
	}
	return live;
}
