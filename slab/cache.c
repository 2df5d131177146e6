// SPDX-License-Identifier: MIT
/*
 * slab/cache.c - creating, listing, checking and destroying caches.
 *
 * Every live cache is on sp_cache_list, changed under sp_cache_list_lock
 * (the outermost mutex of the library) and read by the statistics under
 * RCU (rcu/rcu.c): a cache is published with a release store once it is
 * built, and unlisted before the grace period that precedes its unmapping.
 * A program's cache's memory (struct segpool_cache and its per-node
 * structs) is one page-rounded anonymous mapping: caches are few, a mapping
 * of its own keeps a cache's control block off every other cache's lines,
 * and its first page stays behind as a tombstone when it is destroyed.  The
 * library's own caches (size classes, magazines), made at start-up and
 * never destroyed, are packed instead, each on lines of its own
 * (sp_os_map_packed()): some 50 mappings and page faults fewer in every
 * process.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal/debug.h"
#include "internal/rculist.h"
#include "internal/report.h"
#include "os/os.h"
#include "slab/slab.h"

void *sp_cache_nil_slots;

pthread_mutex_t sp_cache_list_lock = PTHREAD_MUTEX_INITIALIZER;
SP_LOCK_CLASS_STATIC(sp_cache_list_lock, SP_LOCK_CACHE_LIST)
struct sp_list_head sp_cache_list = SP_LIST_HEAD_INIT(sp_cache_list);

static bool sp_cache_name_valid(const char *name)
{
	size_t len;

	if (!name)
		return false;
	len = strnlen(name, SEGPOOL_CACHE_NAME_MAX + 1);
	if (len == 0 || len > SEGPOOL_CACHE_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isgraph((unsigned char)name[i]))
			return false;
	return true;
}

static struct segpool_cache *sp_cache_find_locked(const char *name)
{
	struct segpool_cache *c;

	sp_list_for_each_entry(c, &sp_cache_list, list)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

bool sp_cache_is_listed(const struct segpool_cache *cache)
{
	struct segpool_cache *c;

	sp_list_for_each_entry(c, &sp_cache_list, list)
		if (c == cache)
			return true;
	return false;
}

/*
 * A program's cache's control block starts a colour into its mapping
 * (sp_color_next()), in steps of SP_CACHE_CTL_ALIGN, within the slack of
 * its last page, or within the first page's room past the tombstone's
 * fields when that slack holds fewer than SP_CACHE_COLORS colours (one
 * page more at most); never so far that the tombstone's fields leave the
 * first page.
 * Line 0, which every hit reads, then lies in a different L1 set for each
 * of the next caches created.
 */
#define SP_CACHE_COLORS		16
static unsigned int sp_cache_color_next;

_Static_assert(SP_PAGE_SIZE - SP_ALIGN(SP_CACHE_TOMB_END, SP_CACHE_CTL_ALIGN) >=
	       (SP_CACHE_COLORS - 1) * SP_CACHE_CTL_ALIGN,
	       "the first page holds SP_CACHE_COLORS colours");

static size_t sp_cache_color(size_t bytes)
{
	size_t first = SP_PAGE_SIZE - SP_ALIGN(SP_CACHE_TOMB_END,
					       SP_CACHE_CTL_ALIGN);
	size_t room = SP_ALIGN(bytes, SP_PAGE_SIZE) - bytes;

	if (room < (SP_CACHE_COLORS - 1) * SP_CACHE_CTL_ALIGN)
		room = first;
	return sp_color_next(&sp_cache_color_next, SP_MIN(room, first),
			     SP_CACHE_CTL_ALIGN);
}

/* The first byte of a program's cache's mapping (its colour before it). */
static inline char *sp_cache_map_base(struct segpool_cache *c)
{
	return (char *)SP_ALIGN_DOWN((uintptr_t)c, SP_PAGE_SIZE);
}

struct segpool_cache *sp_cache_create(const char *name, size_t size,
				      size_t align, unsigned long flags,
				      void (*ctor)(void *))
{
	size_t bytes = offsetof(struct segpool_cache, node) +
		(size_t)sp_space.nr_regions * sizeof(struct sp_cache_node);
	struct segpool_cache proto = {
		/* + SEGPOOL_DEBUG */
		.flags = sp_debug_cache_flags(name, flags),
		.ctor = ctor,
	};
	struct segpool_cache *c;

	if (!sp_cache_name_valid(name) || size == 0 ||
	    size > SEGPOOL_CACHE_MAX_SIZE ||
	    (align &&
	     (!SP_IS_POW2(align) || align > SEGPOOL_CACHE_MAX_ALIGN)) ||
	    (flags & ~(SEGPOOL_CACHE_FLAGS_VALID | SP_CACHE_KMALLOC |
		       SP_CACHE_INTERNAL | SP_CACHE_ZEROED |
		       SP_CACHE_LINKED)) ||
	    sp_geometry_compute(&proto, size, align)) {
		errno = EINVAL;
		return NULL;
	}

	bytes += sp_harden_extra_bytes(&proto);
	/* aligned to SP_CACHE_CTL_ALIGN: a page tag's low bits are free */
	if (sp_cache_packed(&proto)) {
		bytes = SP_ALIGN(bytes, SP_CACHE_LINE);
		c = sp_os_map_packed(bytes, SP_CACHE_CTL_ALIGN);
	} else {
		size_t color = sp_cache_color(bytes);
		char *map;

		bytes = SP_ALIGN(color + bytes, SP_PAGE_SIZE);
		map = sp_os_map(bytes, SP_PAGE_SIZE);
		c = map ? (struct segpool_cache *)(map + color) : NULL;
	}
	if (!c)
		return NULL;
	*c = proto;
	sp_harden_cache_init(c, &c->node[sp_space.nr_regions]);
	c->magic = SP_CACHE_MAGIC;
	c->slots = sp_cache_nil_slots;	/* the layer above may set its own */
	c->map_size = bytes;
	memcpy(c->name, name, strlen(name) + 1);
	for (int i = 0; i < sp_space.nr_regions; i++) {
		struct sp_cache_node *n = &c->node[i];

		pthread_mutex_init(&n->lock, NULL);
		sp_lock_class(&n->lock, SP_LOCK_NODE);
		sp_list_init(&n->partial);
		sp_list_init(&n->full);
		sp_list_init(&n->empty);
		sp_list_init(&n->sampled);
	}

	pthread_mutex_lock(&sp_cache_list_lock);
	if (sp_cache_find_locked(name)) {
		pthread_mutex_unlock(&sp_cache_list_lock);
		if (!sp_cache_packed(c))	/* a packed block stays */
			sp_os_unmap(sp_cache_map_base(c), bytes);
		errno = EEXIST;
		return NULL;
	}
	sp_list_add_tail_rcu(&c->list, &sp_cache_list);
	pthread_mutex_unlock(&sp_cache_list_lock);
	return c;
}

static int sp_cache_unlist_flags(struct segpool_cache *c, unsigned long refuse)
{
	uint64_t live;

	pthread_mutex_lock(&sp_cache_list_lock);
	if (!sp_cache_is_listed(c) || (c->flags & refuse)) {
		pthread_mutex_unlock(&sp_cache_list_lock);
		errno = EINVAL;
		return -EINVAL;
	}
	sp_slab_shrink(c, true);
	live = sp_slab_live_objects(c);
	if (live) {
		pthread_mutex_unlock(&sp_cache_list_lock);
		sp_warn("cache %s destroyed with %llu live object%s; "
			"cache kept, objects stay mapped", c->name,
			(unsigned long long)live, live == 1 ? "" : "s");
		if (c->flags & SP_CACHE_DEBUG)
			/* each, with its site */
			sp_debug_leaks(c, NULL);
		errno = EBUSY;
		return -EBUSY;
	}
	/* readers walking the list may stand on it: keep its next pointer */
	sp_list_del_rcu(&c->list);
	pthread_mutex_unlock(&sp_cache_list_lock);
	return 0;
}

int sp_cache_unlist(struct segpool_cache *c)
{
	return sp_cache_unlist_flags(c, SP_CACHE_KMALLOC | SP_CACHE_INTERNAL);
}

int sp_cache_unlist_unborn(struct segpool_cache *c)
{
	return sp_cache_unlist_flags(c, 0);
}

/*
 * The tombstones standing, oldest first from sp_tomb_next: a ring under
 * sp_cache_list_lock (which the fork handlers take).  A full ring unmaps
 * its oldest to make room, so they cost at most SP_CACHE_TOMBSTONES pages
 * (4 MiB of 4 KiB pages), and a handle older than the last
 * SP_CACHE_TOMBSTONES destroys is no longer recognised.
 */
static struct segpool_cache *sp_tombs[SP_CACHE_TOMBSTONES] __sp_big;
static unsigned int sp_tomb_next;

void sp_cache_report_dead(const struct segpool_cache *c, const char *op,
			  const void *addr)
{
	char what[64];

	snprintf(what, sizeof(what), "%s destroyed cache", op);
	sp_report_bad_free(what, addr ? addr : (const void *)c, c->name);
}

void sp_cache_free(struct segpool_cache *c)
{
	struct segpool_cache *old;

	for (int i = 0; i < sp_space.nr_regions; i++)
		pthread_mutex_destroy(&c->node[i].lock);
	/* the tombstone: magic, name and the rest of the first page */
	__atomic_store_n(&c->magic, SP_CACHE_DEAD_MAGIC, __ATOMIC_RELEASE);
	c->pcpu = NULL;
	if (sp_cache_packed(c))
		return;		/* a failed start-up's: its lines stay */
	if (c->map_size > SP_PAGE_SIZE)
		sp_os_unmap(sp_cache_map_base(c) + SP_PAGE_SIZE,
			    c->map_size - SP_PAGE_SIZE);
	/* a write through the stale handle faults rather than lands */
	sp_os_protect_ro(sp_cache_map_base(c), SP_PAGE_SIZE);

	pthread_mutex_lock(&sp_cache_list_lock);
	old = sp_tombs[sp_tomb_next];
	sp_tombs[sp_tomb_next] = c;
	sp_tomb_next = (sp_tomb_next + 1) % SP_CACHE_TOMBSTONES;
	pthread_mutex_unlock(&sp_cache_list_lock);
	if (old)
		sp_os_unmap(sp_cache_map_base(old), SP_PAGE_SIZE);
}

const char *sp_cache_object_check(const struct segpool_cache *c,
				  const void *obj, struct sp_slab **slab)
{
	struct sp_slab *s = sp_obj_to_slab(obj);
	if (unlikely(!s))
		return "free of foreign pointer";
	if (unlikely(s->cache != c))
		return "free into wrong cache";
	if (unlikely(sp_obj_index(c, s, obj) >= c->objs_per_slab))
		return "free of interior pointer";
	*slab = s;
	return NULL;
}

void sp_cache_lock_all(void (*outer)(struct segpool_cache *))
{
	struct segpool_cache *c;

	pthread_mutex_lock(&sp_cache_list_lock);
	sp_list_for_each_entry(c, &sp_cache_list, list) {
		if (outer)
			outer(c);
		for (int i = 0; i < sp_space.nr_regions; i++)
			pthread_mutex_lock(&c->node[i].lock);
	}
}

void sp_cache_unlock_all(void (*outer)(struct segpool_cache *))
{
	struct segpool_cache *c;

	sp_list_for_each_entry(c, &sp_cache_list, list) {
		for (int i = sp_space.nr_regions - 1; i >= 0; i--)
			pthread_mutex_unlock(&c->node[i].lock);
		if (outer)
			outer(c);
	}
	pthread_mutex_unlock(&sp_cache_list_lock);
}

void sp_cache_reinit_locks(void (*outer)(struct segpool_cache *))
{
	struct segpool_cache *c;

	pthread_mutex_init(&sp_cache_list_lock, NULL);
	sp_list_for_each_entry(c, &sp_cache_list, list) {
		if (outer)
			outer(c);
		for (int i = 0; i < sp_space.nr_regions; i++)
			pthread_mutex_init(&c->node[i].lock, NULL);
	}
}
