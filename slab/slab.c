// SPDX-License-Identifier: MIT
/*
 * slab/slab.c - slabs: populate, hand out objects, take them back, release.
 *
 * States of a slab and the node list that holds it:
 *
 *   new ----> PARTIAL <----> FULL          (alloc takes from PARTIAL first)
 *               |  ^
 *               v  |
 *              EMPTY -----> released       (beyond max_empty, or on shrink;
 *                                           after a grace period for a
 *                                           SEGPOOL_TYPESAFE_BY_RCU cache)
 *
 * States of an object: constructed and free (on its slab's freelist, or
 * in the slab's never-used tail), or handed out (to the application, or to a layer above that caches it).
 *
 * Lock order: see core/init.c, levels 3, 7, 9 and 10 (cache list, node,
 * descriptor pool, region).
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

#include "internal/report.h"
#include "slab/slab.h"

/*
 * A new slab has an empty freelist and every object in its fresh tail, so
 * populating it writes nothing into the slab unless there is a ctor, which
 * Bonwick's design runs once per object here, never on allocation.
 */
static void sp_slab_populate(struct segpool_cache *c, struct sp_slab *s)
{
	s->freelist = NULL;
	s->fresh = 0;
	s->rand_pos = c->rand_seq ? sp_harden_rand_pos(c) : 0;
	/* its pages may come from another cache's slab, with its bytes */
	if (c->flags & SP_CACHE_ZEROED)
		memset(s->base, 0, (size_t)c->objs_per_slab * c->stride);
	if (c->ctor)
		for (unsigned int i = 0; i < c->objs_per_slab; i++)
			c->ctor(s->base + (size_t)i * c->stride);
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
			sp_san_mark_open(c, s->base + (size_t)i * c->stride + from,
					 len);
	}
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
		if (unlikely(!sp_freeptr_valid(c, s, next)) &&
		    !(c->flags & SEGPOOL_CONSISTENCY_CHECKS))
			sp_report_bad_freeptr(c, s, obj, next);
		s->freelist = next;
		return obj;
	}
	if (s->fresh < c->objs_per_slab)
		return s->base + (size_t)sp_slab_fresh_index(c, s) * c->stride;
	return NULL;
}

/* A new slab for @c on node index @idx, not yet on any list. */
static struct sp_slab *sp_slab_new(struct segpool_cache *c, int idx)
{
	struct sp_slab *s = sp_desc_alloc(idx);

	if (!s)
		return NULL;
	s->base = sp_region_alloc(idx, c->order, (uintptr_t)s);
	if (!s->base) {
		sp_desc_free(s);
		errno = ENOMEM;
		return NULL;
	}
	/* whose page: a free's hit path needs only this word */
	sp_arena_set_tags(s->base, c->order, sp_slab_tag(c, idx));
	s->base += c->dbg.red_left;	/* the first object's left red zone */
	s->cache = c;
	s->inuse = 0;
	s->node = (unsigned short)idx;
	s->order = (unsigned char)c->order;
	s->list = SP_SLAB_NONE;
	sp_list_init(&s->lru);
	sp_slab_populate(c, s);
	if (unlikely(c->flags & SP_CACHE_DEBUG))
		sp_debug_slab_init(c, s);
	return s;
}

void (*sp_slab_release_hook)(struct sp_slab *s);

void sp_slab_release_now(struct sp_slab *s)
{
	sp_arena_set_tags(s->base - s->cache->dbg.red_left, s->order, 0);
	sp_san_slab_release(s->cache, s->base - s->cache->dbg.red_left,
			    SP_PAGE_SIZE << s->order);
	sp_region_free(s->base - s->cache->dbg.red_left, s->order);
	sp_desc_free(s);
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
	sp_arena_set_tags(s->base - s->cache->dbg.red_left, s->order, 0);
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

/* Move @s to the list its fill level calls for (node lock held). */
static void sp_slab_relist(struct segpool_cache *c, struct sp_cache_node *n,
			   struct sp_slab *s)
{
	enum sp_slab_list want;

	if (s->inuse == 0)
		want = SP_SLAB_EMPTY;
	else if (s->inuse == c->objs_per_slab)
		want = SP_SLAB_FULL;
	else
		want = SP_SLAB_PARTIAL;
	if (s->list == want)
		return;

	switch (s->list) {
	case SP_SLAB_PARTIAL: n->nr_partial--; break;
	case SP_SLAB_FULL:    n->nr_full--;    break;
	case SP_SLAB_EMPTY:   n->nr_empty--;   break;
	default: break;
	}
	switch (want) {
	case SP_SLAB_PARTIAL:
		n->nr_partial++;
		sp_list_move(&s->lru, &n->partial);
		break;
	case SP_SLAB_FULL:
		n->nr_full++;
		sp_list_move(&s->lru, &n->full);
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
	size_t got = 0;

	while (got < want) {
		struct sp_slab *s;

		if (!sp_list_empty(&n->partial))
			s = sp_list_first_entry(&n->partial, struct sp_slab, lru);
		else if (!sp_list_empty(&n->empty))
			s = sp_list_first_entry(&n->empty, struct sp_slab, lru);
		else
			break;
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
		sp_set_freeptr(c, objs[i], s->freelist);
		s->freelist = objs[i];
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
		struct sp_slab *s = sp_slab_new(c, idx);

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
 * After a free made @s empty: when the node keeps more empty slabs than its
 * reserve, take the coldest off its list and return it for the caller to
 * release once the node lock is dropped (the one just used stays).
 */
static struct sp_slab *sp_node_victim(struct segpool_cache *c,
				      struct sp_cache_node *n,
				      struct sp_slab *s)
{
	struct sp_slab *victim;

	if (s->list != SP_SLAB_EMPTY || n->nr_empty <= sp_keep_empty(c, n))
		return NULL;
	victim = sp_list_entry(n->empty.prev, struct sp_slab, lru);
	sp_list_del(&victim->lru);
	victim->list = SP_SLAB_NONE;
	n->nr_empty--;
	sp_slab_released(c, n);
	return victim;
}

/*
 * Put @obj back on @s (node lock held).  Return the slab to release, if
 * freeing @obj left one empty slab too many on the node.
 */
static __sp_libframe struct sp_slab *sp_node_put(struct segpool_cache *c,
				   struct sp_cache_node *n, struct sp_slab *s,
				   void *obj, bool xfer)
{
	if (unlikely(c->flags & SP_CACHE_DEBUG) && !sp_debug_on_free(c, s, obj))
		return NULL;	/* a bad free, reported: ignored */
	if (unlikely(s->inuse == 0 || obj == s->freelist)) {
		pthread_mutex_unlock(&n->lock);
		sp_report_bad_free("double free", obj, c->name);
	}
	sp_set_freeptr(c, obj, s->freelist);
	s->freelist = obj;
	if (--s->inuse == 0) {
		/* all free: hand out in address order again, links unneeded */
		s->freelist = NULL;
		s->fresh = 0;
		if (c->rand_seq)
			s->rand_pos = sp_harden_rand_pos(c);
	}
	n->active_objs--;
	if (xfer)
		n->xfer_frees++;
	else
		n->frees++;
	sp_slab_relist(c, n, s);
	return sp_node_victim(c, n, s);
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
 * A run of @k objects of slab @s back on it (node lock held): the per-object
 * part is the link store and the double-free test; counters, the list move
 * and the reserve's victim are paid once per run.  A magazine flushed in
 * the order it was filled holds long runs of one slab.  Debug caches take
 * sp_node_put() per object, for its checks.
 */
static struct sp_slab *sp_node_put_run(struct segpool_cache *c,
				       struct sp_cache_node *n,
				       struct sp_slab *s, void **objs,
				       size_t k, bool xfer)
{
	void *head = s->freelist;

	for (size_t i = 0; i < k; i++) {
		void *obj = objs[i];

		if (unlikely(s->inuse == 0 || obj == head)) {
			s->freelist = head;
			pthread_mutex_unlock(&n->lock);
			sp_report_bad_free("double free", obj, c->name);
		}
		sp_set_freeptr(c, obj, head);
		head = obj;
		s->inuse--;
	}
	s->freelist = head;
	if (s->inuse == 0) {
		/* all free: hand out in address order again, links unneeded */
		s->freelist = NULL;
		s->fresh = 0;
		if (c->rand_seq)
			s->rand_pos = sp_harden_rand_pos(c);
	}
	n->active_objs -= k;
	if (xfer)
		n->xfer_frees += k;
	else
		n->frees += k;
	sp_slab_relist(c, n, s);
	return sp_node_victim(c, n, s);
}

/* How many of @objs[0..@cnt) from the first on lie in slab @s. */
static inline size_t sp_slab_run(const struct segpool_cache *c,
				 const struct sp_slab *s, void **objs,
				 size_t cnt)
{
	uintptr_t base = (uintptr_t)s->base;
	uintptr_t span = (uintptr_t)c->objs_per_slab * c->stride;
	size_t k = 1;

	while (k < cnt && (uintptr_t)objs[k] - base < span)
		k++;
	return k;
}

static __sp_libframe void sp_slab_put(struct segpool_cache *c, size_t cnt,
				      void **objs, bool xfer)
{
	bool debug = c->flags & SP_CACHE_DEBUG;
	struct sp_list_head victims;
	struct sp_cache_node *n = NULL;
	struct sp_slab *v;

	sp_list_init(&victims);
	for (size_t i = 0; i < cnt;) {
		struct sp_slab *s = sp_obj_to_slab(objs[i]);
		size_t k = debug ? 1 : sp_slab_run(c, s, objs + i, cnt - i);

		if (n != &c->node[s->node]) {
			if (n)
				pthread_mutex_unlock(&n->lock);
			n = &c->node[s->node];
			pthread_mutex_lock(&n->lock);
		}
		if (debug)
			v = sp_node_put(c, n, s, objs[i], xfer);
		else
			v = sp_node_put_run(c, n, s, objs + i, k, xfer);
		if (v)
			sp_list_add(&v->lru, &victims);
		i += k;
	}
	if (n)
		pthread_mutex_unlock(&n->lock);
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

unsigned long sp_slab_shrink(struct segpool_cache *c)
{
	unsigned long released = 0;

	for (int i = 0; i < sp_arena.nr_regions; i++) {
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
		sp_region_purge(i);
	}
	return released;
}

uint64_t sp_slab_live_objects(struct segpool_cache *c)
{
	uint64_t live = 0;

	for (int i = 0; i < sp_arena.nr_regions; i++) {
		pthread_mutex_lock(&c->node[i].lock);
		live += c->node[i].active_objs;
		pthread_mutex_unlock(&c->node[i].lock);
	}
	return live;
}
