// SPDX-License-Identifier: MIT
/*
 * core/cache_api.c - the public object-cache calls: validate, then dispatch.
 *
 * Argument checks that cost a compare (NULL, magic, unknown bits) are always
 * on; so is the object check on free (pagemap lookup, owner cache, object
 * boundary), since a wrong pointer would otherwise corrupt a freelist.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <segpool/segpool.h>

#include "core/core.h"
#include "core/decay.h"
#include "core/entry.h"
#include "core/hotpath.h"
#include "failslab/failslab.h"
#include "guard/guard.h"
#include "internal/reentry.h"
#include "internal/report.h"
#include "numa/topology.h"
#include "slab/policy.h"
#include "prof/prof.h"
#include "rcu/rcu.h"

static inline bool sp_alloc_args_ok(const struct segpool_cache *c,
				    unsigned int gfp)
{
	if (unlikely(!c || c->magic != SP_CACHE_MAGIC ||
		     (gfp & ~SEGPOOL_GFP_VALID) ||
		     ((gfp & SEGPOOL_ZERO) && c->ctor))) {
		sp_cache_check_dead(c, "alloc from", NULL);
		errno = EINVAL;
		return false;
	}
	return true;
}

struct segpool_cache *sp_cache_create_full(const char *name, size_t size,
					   size_t align, unsigned long flags,
					   void (*ctor)(void *))
{
	struct segpool_cache *c;
	struct sp_pcpu_cache *pc;

	sp_lib_enter();		/* the cache-list lock: internal/reentry.h */
	c = sp_cache_create(name, size, align, flags, ctor);
	if (sp_lib_leave())
		sp_lib_drain();

	/* its slabs are released by call_rcu(), maybe under segpool locks,
	 * where the worker cannot be started */
	if (c && (flags & SEGPOOL_TYPESAFE_BY_RCU))
		sp_rcu_worker_start();
	/*
	 * No magazines for a cache whose policy keeps objects off the local
	 * node, nor for a debug cache: it checks every object in the slab
	 * layer.
	 */
	if (c)
		c->slots = sp_pcpu_nil_slots();	/* until a layer exists */
	if (!c || sp_pcpu_mode == SP_PCPU_OFF || !sp_policy_has_pcpu(flags) ||
	    (c->flags & SP_CACHE_DEBUG))
		return c;
	pc = sp_pcpu_cache_create(c);
	if (!pc) {
		/* empty and listed: unlist, let walkers pass, free */
		if (sp_cache_unlist_unborn(c) == 0) {
			sp_rcu_cache_retire(c);
			sp_cache_free(c);
		}
		errno = ENOMEM;
		return NULL;
	}
	/*
	 * The cache is listed already: a statistics walk may look at it now.
	 * Release: a walker that sees the layer (acquire) sees it set up.
	 */
	__atomic_store_n(&c->pcpu, pc, __ATOMIC_RELEASE);
	c->slots = pc->slots;
	return c;
}

SEGPOOL_API struct segpool_cache *
segpool_cache_create(const char *name, size_t size, size_t align,
		     unsigned long flags, void (*ctor)(void *))
{
	struct segpool_cache *c = NULL;

	if ((flags & ~SEGPOOL_CACHE_FLAGS_VALID) || !sp_policy_flags_ok(flags))
		errno = EINVAL;
	else if (sp_init() == 0)
		c = sp_cache_create_full(name, size, align, flags, ctor);
	if (!c && (flags & SEGPOOL_PANIC)) {
		sp_warn("cannot create cache %s: %s", name ? name : "(null)",
			strerror(errno));
		abort();
	}
	return c;
}

SEGPOOL_API struct segpool_cache *
segpool_cache_create_tuned(const char *name, size_t size, size_t align,
			   unsigned long flags, void (*ctor)(void *),
			   const struct segpool_cache_tunables *tun)
{
	struct segpool_cache *c;

	if (tun && tun->mag_size && tun->mag_size < SEGPOOL_MAG_SIZE_MIN) {
		errno = EINVAL;
		c = NULL;
	} else {
		c = segpool_cache_create(name, size, align,
					 flags & ~SEGPOOL_PANIC, ctor);
	}
	if (c && tun && c->pcpu)
		sp_pcpu_set_tunables(c->pcpu, tun->mag_size, tun->depot_max);
	if (!c && (flags & SEGPOOL_PANIC)) {
		sp_warn("cannot create cache %s: %s", name ? name : "(null)",
			strerror(errno));
		abort();
	}
	return c;
}

SEGPOOL_API int
segpool_cache_set_tunables(struct segpool_cache *cache,
			   const struct segpool_cache_tunables *tun)
{
	int ret;

	if (!cache || cache->magic != SP_CACHE_MAGIC || !tun) {
		sp_cache_check_dead(cache, "tunables of", NULL);
		errno = EINVAL;
		return -EINVAL;
	}
	if (!cache->pcpu) {
		errno = ENOTSUP;
		return -ENOTSUP;
	}
	ret = sp_pcpu_set_tunables(cache->pcpu, tun->mag_size, tun->depot_max);
	if (ret)
		errno = -ret;
	return ret;
}

SEGPOOL_API int segpool_cache_destroy(struct segpool_cache *cache)
{
	struct sp_pcpu_cache *pcpu = NULL;
	bool ok;
	int ret;

	if (!cache)
		return 0;
	sp_cache_check_dead(cache, "destroy of", NULL);
	pthread_mutex_lock(&sp_cache_list_lock);
	ok = sp_cache_is_listed(cache) &&
	     !(cache->flags & (SP_CACHE_KMALLOC | SP_CACHE_INTERNAL));
	if (ok)
		pcpu = cache->pcpu;
	pthread_mutex_unlock(&sp_cache_list_lock);
	if (!ok) {
		errno = EINVAL;
		return -EINVAL;
	}
	/* the grace periods below would wait for the caller itself */
	if (sp_rcu_read_ongoing()) {
		errno = EDEADLK;
		return -EDEADLK;
	}
	/* objects freed by RCU come back first: they are not leaks */
	sp_rcu_cache_quiesce(cache);
	/* objects cached per CPU are free objects: give them back first */
	sp_lib_enter();
	if (pcpu)
		sp_pcpu_drain(pcpu);
	ret = sp_cache_unlist(cache);
	if (sp_lib_leave())
		sp_lib_drain();
	if (ret)
		return ret;
	/* no walker sees it any more, no deferred slab points to it */
	sp_rcu_cache_retire(cache);
	cache->slots = sp_pcpu_nil_slots();
	sp_pcpu_cache_free(pcpu);
	sp_cache_free(cache);
	return 0;
}

/* Everything but the magazine hit: checks, gfp flags, node choice, fallback. */
static inline void *sp_cache_alloc_locked(struct segpool_cache *cache,
					  unsigned int gfp, int node,
					  void *site)
{
	void *obj = NULL;

	if (sp_failslab_active() && sp_should_failslab(cache)) {
		errno = ENOMEM;
		return NULL;
	}
	/* one in SEGPOOL_GUARD_SAMPLE: a guarded object (guard/) */
	if (unlikely(sp_guard_rate) && node == SEGPOOL_NUMA_NO_NODE &&
	    sp_guard_sample(cache, cache->object_size)) {
		obj = sp_guard_alloc(cache, 0, gfp & SEGPOOL_ZERO);
		if (obj)
			return obj;
	}
	/* the local node's magazines serve any request they can */
	if (cache->pcpu &&
	    (node == SEGPOOL_NUMA_NO_NODE ||
	     sp_numa_node_to_idx(node) == sp_numa_current_idx())) {
		obj = sp_pcpu_alloc_slow(cache->pcpu);
		/* migrated to another node's CPU meanwhile: put it back */
		if (obj && node != SEGPOOL_NUMA_NO_NODE &&
		    sp_obj_to_slab(obj)->node != sp_numa_node_to_idx(node)) {
			sp_pcpu_free_slow(cache->pcpu, obj,
					  sp_obj_to_slab(obj)->node);
			obj = NULL;
		}
	}
	if (!obj && !sp_alloc_objs(cache, gfp, node, 1, &obj))
		return NULL;
	obj = sp_sample_swapped(cache, obj,
				sp_prof_alloc_obj(cache, obj,
						  cache->object_size, site));
	sp_obj_out(cache, obj);
	if (gfp & SEGPOOL_ZERO)
		memset(obj, 0, cache->object_size);
	return obj;
}

/*
 * A call that interrupted the library on its own thread (a signal
 * handler) takes no lock: what the hit path could not serve fails, as
 * GFP_ATOMIC may (internal/reentry.h).
 */
static __sp_cold void *sp_alloc_nested(void)
{
	errno = ENOMEM;
	return NULL;
}

/* Everything but a hit; @site: the allocating call (sp_prof_site()). */
static __sp_noinline __sp_libframe void *
sp_cache_alloc_full(struct segpool_cache *cache, unsigned int gfp, int node,
		    void *site)
{
	void *obj;

	if (!sp_alloc_args_ok(cache, gfp))
		return NULL;
	if (unlikely(sp_lib_nested()))
		return sp_alloc_nested();
	sp_lib_enter();
	obj = sp_cache_alloc_locked(cache, gfp, node, site);
	if (sp_lib_leave())
		sp_lib_drain();
	return obj;
}

/*
 * Sampling keeps the hit paths closed: an allocation the magazine can
 * serve runs their sequence here, on the slot's sample count (prof/prof.h).
 */
static __sp_noinline __sp_libframe void *
sp_cache_alloc_sampled(struct segpool_cache *cache, unsigned int gfp, int node,
		       void *site)
{
	if (gfp == 0 && node == SEGPOOL_NUMA_NO_NODE && cache &&
	    cache->magic == SP_CACHE_MAGIC) {
		struct sp_pcpu_slot *due;
		void *obj = sp_hot_alloc_counted(cache, &due, false);

		if (likely(obj)) {
			if (unlikely(due))
				return sp_alloc_due(cache->object_size, cache,
						    obj, due, site);
			return obj;
		}
	}
	return sp_cache_alloc_full(cache, gfp, node, site);
}

/*
 * Every miss of the hit path: to the sampling entry when sampling runs,
 * else the full slow path, with the return address into the program
 * (where a sample's stack starts).  No frame of its own.
 */
static __sp_noinline __sp_libframe void *
sp_cache_alloc_slow(struct segpool_cache *cache, unsigned int gfp, int node)
{
	if (unlikely(sp_prof_active()))
		return sp_cache_alloc_sampled(cache, gfp, node,
					      sp_prof_site());
	/*
	 * A zeroed allocation (kmem_cache_zalloc()) is a hit and a clear
	 * when the magazine has a round: not the slow path on every call.
	 * (A cache with a constructor refuses SEGPOOL_ZERO: not here.)
	 */
	if (gfp == SEGPOOL_ZERO && node == SEGPOOL_NUMA_NO_NODE && cache &&
	    cache->magic == SP_CACHE_MAGIC && !cache->ctor) {
		void *obj = sp_hot_alloc(cache, false);

		if (likely(obj)) {
			memset(obj, 0, cache->object_size);
			return obj;
		}
	}
	return sp_cache_alloc_full(cache, gfp, node,
				   sp_prof_site());
}

SEGPOOL_API __sp_libframe void *
segpool_cache_alloc_node(struct segpool_cache *cache,
			 unsigned int gfp, int node)
{
	/* no node asked for: the hit path, as segpool_cache_alloc() */
	if (node == SEGPOOL_NUMA_NO_NODE)
		return sp_cache_alloc_open(cache, gfp);
	return sp_cache_alloc_slow(cache, gfp, node);
}

/*
 * The fast path: a valid cache, no gfp flags, no fault injection armed, a
 * magazine hit.  Everything else (and a miss) is one tail call to
 * sp_cache_alloc_slow(), so the hit path needs no stack frame.
 */
__sp_libframe void *sp_cache_alloc_open(struct segpool_cache *cache,
					unsigned int gfp)
{
	if (likely(gfp == 0 && cache && cache->magic == SP_CACHE_MAGIC)) {
		void *obj = sp_hot_alloc(cache, false);

		if (likely(obj))
			return obj;
	}
	return sp_cache_alloc_slow(cache, gfp, SEGPOOL_NUMA_NO_NODE);
}

/*
 * sp_alloc_due() (core/hotpath.h): no frame of its own.  @site: the
 * allocating call, taken by the entry (sp_prof_site(); a tail call to here
 * is the compiler's choice; a sanitizer's frame may keep it from making
 * it).
 */
__sp_noinline __sp_libframe void *sp_alloc_due(size_t size,
					       struct segpool_cache *c,
					       void *obj,
					       struct sp_pcpu_slot *slot,
					       void *site)
{
	int32_t arm;
	void *out = sp_prof_hit(c, obj, size, SP_READ_ONCE(slot->sample_left),
				&arm, site);

	sp_pcpu_sample_arm(c->pcpu, slot, arm);
	obj = sp_sample_swapped(c, obj, out);
	sp_obj_out(c, obj);
	return obj;
}

/*
 * A push, not sp_slab_free_one() at once: the node's lock and the slab's
 * list moves cost a sample some 200 instructions, the push some 30.  @obj
 * keeps its mark (the push stores the same word) and its poison, and no
 * memcheck state changes: to the layers it never left.
 */
__sp_noinline void sp_sample_put_back(struct segpool_cache *c, void *obj)
{
	sp_pcpu_push_nr(c->slots, sp_pcpu_closed_nr, obj, sp_space_tag(obj),
			sp_freemark(obj), c->key_off, miss);
	return;
miss:
	sp_slab_free_one(c, sp_obj_to_slab(obj), obj);
}

/*
 * sp_alloc_due() for the cache entry: a hop on the cold path, so that the
 * hit keeps @cache in place of the object size's register.  Reached by a
 * tail call, it takes the allocating call's site (one CFA with the entry):
 * an entry that named its own CFA would get a frame from clang on its
 * hit.  Made a call instead (a sanitizer's frame), the site's return
 * address is into the entry, which the stack leaves out as the library's.
 */
static __sp_noinline __sp_libframe void *
sp_cache_alloc_due(struct segpool_cache *cache, void *obj,
		   struct sp_pcpu_slot *slot)
{
	return sp_alloc_due(cache->object_size, cache, obj, slot,
			    sp_prof_site());
}

/*
 * The counted build (core/entry.h): the closed sequence, and one off the
 * slot's sample count.
 */
__sp_libframe void *sp_cache_alloc_counted(struct segpool_cache *cache,
					   unsigned int gfp)
{
	if (likely(gfp == 0 && cache && cache->magic == SP_CACHE_MAGIC)) {
		struct sp_pcpu_slot *due;
		void *obj = sp_hot_alloc_counted(cache, &due, false);

		if (likely(obj)) {
			if (unlikely(due))
				return sp_cache_alloc_due(cache, obj, due);
			return obj;
		}
	}
	return sp_cache_alloc_slow(cache, gfp, SEGPOOL_NUMA_NO_NODE);
}

SEGPOOL_API __sp_libframe int
segpool_cache_alloc_bulk(struct segpool_cache *cache,
			 unsigned int gfp, size_t n, void **objs)
{
	if (!sp_alloc_args_ok(cache, gfp))
		return 0;
	if (n == 0)
		return 0;
	if (!objs || n > (size_t)INT32_MAX) {
		errno = EINVAL;
		return 0;
	}
	if (unlikely(sp_lib_nested())) {	/* internal/reentry.h */
		errno = ENOMEM;
		return 0;
	}
	if (sp_failslab_active() && sp_should_failslab(cache)) {
		errno = ENOMEM;
		return 0;
	}
	sp_lib_enter();
	n = sp_alloc_objs(cache, gfp, SEGPOOL_NUMA_NO_NODE, n, objs);
	if (sp_lib_leave())
		sp_lib_drain();
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		objs[i] = sp_sample_swapped(cache, objs[i],
				sp_prof_alloc_obj(cache, objs[i],
						  cache->object_size,
						  sp_prof_site()));
		sp_obj_out(cache, objs[i]);
		if (gfp & SEGPOOL_ZERO)
			memset(objs[i], 0, cache->object_size);
	}
	return (int)n;
}

/* Report why @obj cannot be freed into @cache; never returns. */
static __sp_cold __sp_noreturn void
sp_cache_bad_free(struct segpool_cache *cache, void *obj)
{
	struct sp_slab *s;
	const char *what;

	sp_cache_check_dead(cache, "free into", obj);
	if (!cache || cache->magic != SP_CACHE_MAGIC)
		sp_report_bad_free("free into invalid cache", obj, NULL);
	what = sp_cache_object_check(cache, obj, &s);
	sp_report_bad_free(what ? what : "free of unknown object", obj,
			   cache->name);
}

/*
 * @obj is no object of @cache: report and abort, unless a debug cache's
 * report says to continue (then the free is ignored).
 */
static __sp_cold void sp_cache_bad_obj(struct segpool_cache *cache, void *obj)
{
	if (!sp_debug_bad_free(cache, obj))
		sp_cache_bad_free(cache, obj);
}

/*
 * Give a checked and marked object back: the per-CPU layer's slow path, or
 * the slab of a cache without one (lock, off and debug caches end here).
 */
static __sp_libframe void sp_free_to_layers(struct segpool_cache *cache,
					    void *obj, unsigned int node)
{
	sp_prof_free(obj);
	sp_vg_free(cache, obj);		/* valgrind runs no rseq: always here */
	/*
	 * An object of a sampled slab goes back to it, never to a magazine:
	 * handed out again from there, it would take the slow path at every
	 * free, and its slab would never go back.
	 */
	if (likely(cache->pcpu) &&
	    likely(!sp_prof_active() || !sp_tag_sampled(sp_space_tag(obj))))
		sp_pcpu_free_slow(cache->pcpu, obj, node);
	else
		sp_slab_free_one(cache, sp_obj_to_slab(obj), obj);
}

/* A double free caught by the free mark: never returns. */
static __sp_cold __sp_noreturn void
sp_report_double_free(struct segpool_cache *c, void *obj)
{
	sp_report_bad_free("double free", obj, c->name);
}

/*
 * The deferred list's link (internal/reentry.h): the free-list word of a
 * slab object, the first word of a large mapping.  The object may be
 * poisoned for ASan already (a missed push): the library's own access.
 */
static inline size_t sp_defer_link_off(const void *obj)
{
	struct sp_slab *s = sp_obj_to_slab(obj);

	return s ? s->cache->fp_offset : 0;
}

#if SP_ASAN
__attribute__((no_sanitize_address))
#endif
static void sp_defer_link_store(void *obj, void *next)
{
	SP_MARK_STORE((char *)obj + sp_defer_link_off(obj), (uintptr_t)next);
}

#if SP_ASAN
__attribute__((no_sanitize_address))
#endif
static void *sp_defer_link_load(const void *obj)
{
	return (void *)SP_MARK_LOAD((const char *)obj + sp_defer_link_off(obj));
}

void sp_lib_defer_free(void *obj)
{
	sp_lib_defer(obj, sp_defer_link_store);
}

void sp_lib_drain(void)
{
	void *obj;

	do {
		sp_lib_enter();
		while ((obj = sp_lib_take_deferred())) {
			while (obj) {
				struct sp_slab *s = sp_obj_to_slab(obj);
				void *next = sp_defer_link_load(obj);

				if (sp_guard_owns(obj)) {
					sp_guard_free(NULL, obj);
				} else if (s) {
					struct segpool_cache *c = s->cache;

					/*
					 * the link may have
					 * taken the mark's word
					 */
					if (!(c->flags & SP_CACHE_DEBUG))
						sp_freemark_set(obj,
								c->key_off);
					sp_san_free(c, obj);
					sp_free_to_layers(c, obj, s->node);
				} else if (sp_prof_free(obj),
					   !sp_large_free(obj)) {
					sp_report_bad_free(
						"free of foreign pointer", obj,
						NULL);
				}
				obj = next;
			}
		}
	} while (sp_lib_leave() &&
		 __atomic_load_n(&sp_lib_deferred, __ATOMIC_RELAXED));
	/* outermost, no lock held: where the decay thread may start */
	if (unlikely(__atomic_load_n(&sp_lib_wanted, __ATOMIC_RELAXED)))
		sp_decay_leave();
}

__sp_libframe void sp_free_slow(struct segpool_cache *cache, void *obj)
{
	struct sp_slab *s;

	if (unlikely(!obj))
		return;
	if (unlikely(!cache || cache->magic != SP_CACHE_MAGIC))
		sp_cache_bad_free(cache, obj);
	if (sp_guard_owns(obj)) {
		if (unlikely(sp_lib_nested()))
			sp_lib_defer_free(obj);	/* its lock may be taken */
		else
			sp_guard_free(cache, obj);
		return;
	}
	s = sp_cache_obj_slab(cache, obj);
	if (unlikely(!s)) {
		if (unlikely(sp_lib_nested()))	/* no debug response: no lock */
			sp_cache_bad_free(cache, obj);
		sp_cache_bad_obj(cache, obj);
		return;
	}
	if (likely(!(cache->flags & SP_CACHE_DEBUG))) {
		/* never handed out (its page untagged, no mark): free */
		if (unlikely(!sp_slab_obj_reached(cache, s, obj)))
			sp_report_double_free(cache, obj);
		/* the object is still the program's: plain accesses */
		if (unlikely(sp_freemark_is_set(obj, cache->key_off)))
			sp_report_double_free(cache, obj);
		sp_freemark_set(obj, cache->key_off);
	}
	if (unlikely(sp_lib_nested())) {
		/* checked and marked: freed when the interrupted call leaves */
		sp_lib_defer_free(obj);
		return;
	}
	sp_san_free(cache, obj);	/* before anyone else may take it */
	sp_lib_enter();
	sp_free_to_layers(cache, obj, s->node);
	if (sp_lib_leave())
		sp_lib_drain();
}

__sp_libframe void sp_free_miss(struct segpool_cache *cache, void *obj,
				uintptr_t tag, bool kfree)
{
	if (unlikely(sp_tag_cache(tag) != cache)) {
		/* not this cache's: untouched but for ASan's poison */
		sp_cache_bad_obj(cache, obj);
		return;
	}
	if (unlikely(kfree && (cache->flags & SP_CACHE_INTERNAL)))
		sp_report_bad_free("free of the library's own object", obj,
				   cache->name);
	if (unlikely(cache->flags & SP_CACHE_DEBUG)) {
		/*
		 * never poisoned, never marked: the debug checks see it whole
		 */
		sp_free_slow(cache, obj);
		return;
	}
	/*
	 * Sampling keeps the hit paths closed: an object that is not in a
	 * sampled slab (none that a record names is elsewhere) takes their
	 * sequence here.
	 */
	if (unlikely(sp_prof_active()) && likely(!sp_tag_sampled(tag))) {
		sp_pcpu_push_nr(cache->slots, sp_pcpu_closed_nr, obj, tag,
				sp_freemark(obj), cache->key_off, miss);
		return;
	}
miss:
	/* another node's object: its push on this CPU's remote lane */
	if (sp_pcpu_lane_push(cache->pcpu, obj, tag, sp_freemark(obj),
			      cache->key_off))
		return;
	/*
	 * The sequence may have stored it already: the same word again.  The
	 * object may be ASan-poisoned by now; the mark's accessors are not
	 * instrumented (slab/freemark.h).
	 */
	sp_freemark_set(obj, cache->key_off);
	if (unlikely(sp_lib_nested())) {
		sp_lib_defer_free(obj);		/* poisoned: drained as is */
		return;
	}
	sp_lib_enter();
	sp_free_to_layers(cache, obj, sp_tag_node(tag));
	if (sp_lib_leave())
		sp_lib_drain();
}

/*
 * The hit path (core/hotpath.h): a tag of 0 is an address outside every
 * slab (NULL included); both it and a NULL cache go to the full check.
 */
__sp_libframe void sp_cache_free_open(struct segpool_cache *cache, void *obj)
{
	uintptr_t tag = sp_hot_tag(obj);

	if (unlikely(!cache || !tag)) {
		sp_free_slow(cache, obj);
		return;
	}
	sp_hot_free(cache, obj, tag, false);
}

/* The counted build (core/entry.h). */
__sp_libframe void sp_cache_free_counted(struct segpool_cache *cache,
					 void *obj)
{
	uintptr_t tag = sp_hot_tag(obj);

	if (unlikely(!cache || !tag)) {
		sp_free_slow(cache, obj);
		return;
	}
	sp_hot_free_counted(cache, obj, tag, false);
}

SEGPOOL_API __sp_libframe void
segpool_cache_free_bulk(struct segpool_cache *cache, size_t n,
			void **objs)
{
	if (!objs)
		return;
	for (size_t i = 0; i < n; i++)
		if (objs[i])
			sp_cache_free_open(cache, objs[i]);
}

int sp_cache_shrink(struct segpool_cache *cache, bool purge)
{
	unsigned long n;

	/* the slabs the drain released count too, not only the shrink's */
	sp_lib_enter();
	sp_slab_tally_begin(cache);
	if (cache->pcpu)
		sp_pcpu_drain(cache->pcpu);
	sp_slab_shrink(cache, purge);
	n = sp_slab_tally_end();
	if (sp_lib_leave())
		sp_lib_drain();
	return n > INT32_MAX ? INT32_MAX : (int)n;
}

SEGPOOL_API int segpool_cache_shrink(struct segpool_cache *cache)
{
	if (!cache || cache->magic != SP_CACHE_MAGIC) {
		sp_cache_check_dead(cache, "shrink of", NULL);
		errno = EINVAL;
		return -EINVAL;
	}
	return sp_cache_shrink(cache, true);
}

SEGPOOL_API const char *segpool_cache_name(const struct segpool_cache *cache)
{
	if (!cache || cache->magic != SP_CACHE_MAGIC) {
		sp_cache_check_dead(cache, "name of", NULL);
		errno = EINVAL;
		return NULL;
	}
	return cache->name;
}

SEGPOOL_API size_t segpool_cache_object_size(const struct segpool_cache *cache)
{
	if (!cache || cache->magic != SP_CACHE_MAGIC) {
		sp_cache_check_dead(cache, "object size of", NULL);
		errno = EINVAL;
		return 0;
	}
	return cache->object_size;
}
