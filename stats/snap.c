// SPDX-License-Identifier: MIT
/*
 * stats/snap.c - snapshots of the caches, and the field lists every
 * rendering (slabinfo, detail, JSON, the info struct) is made from.
 *
 * A snapshot reads a cache in three passes, each consistent in itself:
 *
 *   1. each node of the slab layer, under its node lock: slab lists,
 *      objects taken out, the slab layer's counters;
 *   2. each CPU slot, without a lock: its counters (single words written by
 *      the slot's owner only: SLUB's summed-on-read per-CPU statistics),
 *      and the objects in its two magazines as those counters give them
 *      (objects in minus objects out: sp_pcpu_slot_objects()), never read
 *      from the magazines the owner is changing;
 *   3. each node's depot, without a lock (sp_depot_read(): the counts
 *      beside its stack words): its full and empty magazines and the
 *      objects in the full ones.
 *
 * No pass writes anything the allocation paths read: a reader costs them
 * at most a cache miss on a line it shared.  Between the passes the caches
 * go on working, so while threads allocate the figures of different passes
 * disagree a little (a magazine filled between pass 1 and pass 2 counts as
 * cached but not yet as taken out of the slabs, so sp_node_active() reads
 * low, never below zero); when the cache is quiet they are exact.
 *
 * Locks: the caller walks the cache list under RCU (no mutex, see
 * rcu/rcu.c) and takes one node lock at a time, never two at once; depots
 * are read without a lock (sp_depot_read()).  Lock order: see
 * core/init.c, levels 2 and 7.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "internal/flags.h"
#include "internal/init.h"
#include "internal/reentry.h"
#include "internal/rculist.h"
#include "numa/region.h"
#include "os/os.h"
#include "percpu/alien.h"
#include "rcu/rcu.h"
#include "slab/slab.h"
#include "stats/snap.h"

/* --- counter names ------------------------------------------------------ */

#define SP_CTR_NAME(key, id, class, unit, doc) [SP_CTR_INDEX(class, id)] = #key,
const char *const sp_ctr_name[SP_CTR_NR] = {
	SEGPOOL_PCPU_COUNTERS(SP_CTR_NAME)
};
#undef SP_CTR_NAME

/* SLUB's order: the four path counters first (the list's order). */
#define SP_CTR_ORDER(key, id, class, unit, doc)	SP_CTR_INDEX(class, id),
const unsigned char sp_ctr_order[SP_CTR_NR] = {
	SEGPOOL_PCPU_COUNTERS(SP_CTR_ORDER)
};
#undef SP_CTR_ORDER

#define SP_CTR_ONE(key, id, class, unit, doc)	+ 1
_Static_assert(0 SEGPOOL_PCPU_COUNTERS(SP_CTR_ONE) == SP_CTR_NR,
	       "every slot counter is listed once");
#undef SP_CTR_ONE

/* --- flag names --------------------------------------------------------- */

static const struct sp_flag_name sp_cache_flag_table[] = {
	{ SEGPOOL_HWCACHE_ALIGN,	"hwcache_align" },
	{ SEGPOOL_PANIC,		"panic" },
	{ SEGPOOL_TYPESAFE_BY_RCU,	"typesafe_by_rcu" },
	{ SEGPOOL_CONSISTENCY_CHECKS,	"consistency_checks" },
	{ SEGPOOL_RED_ZONE,		"red_zone" },
	{ SEGPOOL_POISON,		"poison" },
	{ SEGPOOL_STORE_USER,		"store_user" },
	{ SEGPOOL_FREELIST_RANDOM,	"freelist_random" },
	{ SP_CACHE_INTERNAL,		"internal" },
	{ SP_CACHE_FREEPTR_OUT,		"freeptr_outside" },
	{ SP_CACHE_KMALLOC,		"kmalloc" },
};

size_t sp_cache_flag_names(unsigned long flags, const char **names, size_t max)
{
	return sp_flag_names(sp_cache_flag_table,
			     SP_ARRAY_SIZE(sp_cache_flag_table), flags, names,
			     max);
}

/* --- field lists -------------------------------------------------------- */

#define SP_CACHE_FIELDS(X)						\
	X(object_size,	  SP_FIELD_U64,   s->object_size)		\
	X(slab_size,	  SP_FIELD_U64,   s->stride)			\
	X(align,	  SP_FIELD_U64,   s->align)			\
	X(objs_per_slab,  SP_FIELD_U64,   s->objs_per_slab)		\
	X(order,	  SP_FIELD_U64,   s->order)			\
	X(pages_per_slab, SP_FIELD_U64,   1UL << s->order)		\
	X(ctor,		  SP_FIELD_BOOL,  s->ctor)			\
	X(flags,	  SP_FIELD_FLAGS, s->flags)			\
	X(max_empty,	  SP_FIELD_U64,   s->max_empty)			\
	X(percpu,	  SP_FIELD_BOOL,  s->pcpu)			\
	X(mag_size,	  SP_FIELD_U64,   s->mag_size)			\
	X(mag_size_max,	  SP_FIELD_U64,   s->mag_size_max)		\
	X(depot_max,	  SP_FIELD_U64,   s->depot_max)			\
	X(meta_bytes,	  SP_FIELD_U64,   s->meta_bytes)		\
	X(alloc_failures, SP_FIELD_U64,   s->alloc_failures)		\
	X(alloc_failslab, SP_FIELD_U64,   s->alloc_failslab)

#define SP_NODE_FIELDS(X)						\
	X(active_objs,	  sp_node_active(n))				\
	X(total_objs,	  sp_node_slabs(n) * s->objs_per_slab)		\
	X(active_slabs,	  n->partial + n->full)				\
	X(slabs,	  sp_node_slabs(n))				\
	X(partial_slabs,  n->partial)					\
	X(full_slabs,	  n->full)					\
	X(empty_slabs,	  n->empty)					\
	X(cpu_objs,	  n->cpu_objs)					\
	X(depot_objs,	  n->depot_objs)				\
	X(depot_full_mags, n->depot_full)				\
	X(depot_empty_mags, n->depot_empty)				\
	X(slab_bytes,	  sp_node_slabs(n) * (SP_PAGE_SIZE << s->order)) \
	X(active_bytes,	  sp_node_active(n) * s->stride)		\
	X(cpu_bytes,	  n->cpu_objs * s->stride)			\
	X(depot_bytes,	  n->depot_objs * s->stride)			\
	X(allocs,	  sp_node_allocs(n))				\
	X(frees,	  sp_node_frees(n))				\
	X(alloc_direct,	  n->direct_allocs)				\
	X(free_direct,	  n->direct_frees)				\
	X(fill_objs,	  n->fill_objs)					\
	X(flush_objs,	  n->flush_objs)				\
	X(alloc_slab,	  n->slabs_created)				\
	X(free_slab,	  n->slabs_released)

#define SP_CACHE_GETTER(name, kind, expr)				\
	static uint64_t sp_cf_##name(const struct sp_cache_snap *s)	\
	{								\
		return (uint64_t)(expr);				\
	}
SP_CACHE_FIELDS(SP_CACHE_GETTER)
#undef SP_CACHE_GETTER

#define SP_NODE_GETTER(name, expr)					\
	static uint64_t sp_nf_##name(const struct sp_cache_snap *s,	\
				     const struct sp_node_snap *n)	\
	{								\
		(void)s;						\
		return (uint64_t)(expr);				\
	}
SP_NODE_FIELDS(SP_NODE_GETTER)
#undef SP_NODE_GETTER

const struct sp_cache_field sp_cache_fields[] = {
#define SP_CACHE_ENTRY(name, kind, expr) { #name, kind, sp_cf_##name },
	SP_CACHE_FIELDS(SP_CACHE_ENTRY)
#undef SP_CACHE_ENTRY
};
const size_t sp_nr_cache_fields = SP_ARRAY_SIZE(sp_cache_fields);

const struct sp_node_field sp_node_fields[] = {
#define SP_NODE_ENTRY(name, expr) { #name, sp_nf_##name },
	SP_NODE_FIELDS(SP_NODE_ENTRY)
#undef SP_NODE_ENTRY
};
const size_t sp_nr_node_fields = SP_ARRAY_SIZE(sp_node_fields);

uint64_t sp_node_field_total(const struct sp_node_field *f,
			     const struct sp_cache_snap *s)
{
	/* from the sums, as the info struct: one value in every rendering */
	return f->get(s, &s->sum);
}

/* --- slabinfo columns --------------------------------------------------- */

const char *const sp_slabinfo_name[SP_SI_NR] = {
	"active_objs", "num_objs", "objsize", "objperslab", "pagesperslab",
	"limit", "batchcount", "sharedfactor",
	"active_slabs", "num_slabs", "sharedavail",
};

/*
 * tunables: limit = objects a CPU slot holds at most (loaded and previous
 * magazines), batchcount = objects moved per depot exchange (one
 * magazine), sharedfactor = full magazines a depot keeps; sharedavail =
 * objects in the depots.
 */
void sp_slabinfo_of(const struct sp_cache_snap *s, uint64_t v[SP_SI_NR])
{
	/* from the sums, as the info struct: one value in every rendering */
	uint64_t active = sp_node_active(&s->sum);
	uint64_t slabs = sp_node_slabs(&s->sum);
	uint64_t used = s->sum.partial + s->sum.full;

	v[SP_SI_ACTIVE_OBJS] = active;
	v[SP_SI_NUM_OBJS] = slabs * s->objs_per_slab;
	v[SP_SI_OBJSIZE] = s->stride;
	v[SP_SI_OBJPERSLAB] = s->objs_per_slab;
	v[SP_SI_PAGESPERSLAB] = 1UL << s->order;
	v[SP_SI_LIMIT] = 2ULL * s->mag_size;
	v[SP_SI_BATCHCOUNT] = s->mag_size;
	v[SP_SI_SHAREDFACTOR] = s->depot_max;
	v[SP_SI_ACTIVE_SLABS] = used;
	v[SP_SI_NUM_SLABS] = slabs;
	v[SP_SI_SHAREDAVAIL] = s->sum.depot_objs;
}

/* --- the snapshot ------------------------------------------------------- */

static void sp_snap_add(struct sp_node_snap *to, const struct sp_node_snap *n)
{
	to->partial += n->partial;
	to->full += n->full;
	to->empty += n->empty;
	to->slab_objs += n->slab_objs;
	to->direct_allocs += n->direct_allocs;
	to->direct_frees += n->direct_frees;
	to->sample_swaps += n->sample_swaps;
	to->fill_objs += n->fill_objs;
	to->flush_objs += n->flush_objs;
	to->slabs_created += n->slabs_created;
	to->slabs_released += n->slabs_released;
	to->cpu_objs += n->cpu_objs;
	to->mag_allocs += n->mag_allocs;
	to->mag_frees += n->mag_frees;
	to->depot_objs += n->depot_objs;
	to->depot_full += n->depot_full;
	to->depot_empty += n->depot_empty;
}

/* Pass 1: the slab layer's figures of node index @i. */
static void sp_snap_node(struct segpool_cache *c, int i, struct sp_node_snap *n)
{
	struct sp_cache_node *cn = &c->node[i];

	sp_lib_enter();		/* a node lock: internal/reentry.h */
	pthread_mutex_lock(&cn->lock);
	n->partial = cn->nr_partial + cn->nr_sampled;	/* sampled: prof/ */
	n->full = cn->nr_full;
	n->empty = cn->nr_empty;
	n->slab_objs = cn->active_objs;
	n->direct_allocs = cn->allocs;
	n->direct_frees = cn->frees;
	n->sample_swaps = cn->sample_swaps;
	n->fill_objs = cn->xfer_allocs;
	n->flush_objs = cn->xfer_frees;
	n->slabs_created = cn->slabs_created;
	n->slabs_released = cn->slabs_released;
	pthread_mutex_unlock(&cn->lock);
	sp_lib_exit();
}

/* Pass 2: CPU slot @i of @pc into @sl. */
static void sp_snap_slot(struct sp_pcpu_cache *pc, unsigned long i,
			 struct sp_slot_snap *sl)
{
	struct sp_pcpu_slot_counts c;

	memset(sl, 0, sizeof(*sl));
	/* written once, before the layer was published */
	sl->node = (unsigned int)pc->slots[i].node;
	sp_pcpu_slot_counts(pc, i, &c);
	sl->ctr[SP_CTR_ALLOC_FASTPATH] = c.alloc_fastpath;
	sl->ctr[SP_CTR_FREE_FASTPATH] = c.free_fastpath;
	for (int k = 0; k < SP_STAT_NR; k++)
		sl->ctr[k] = c.stat[k];
	/* from the slot's counters: never the magazines the owner changes */
	sl->objs = sp_pcpu_slot_objects(pc, i);
}

/* Pass 3: node index @i's depot, added to @n. */
static void sp_snap_depot(struct sp_pcpu_cache *pc, int i,
			  struct sp_node_snap *n)
{
	struct sp_depot_info di;

	sp_depot_read(pc, i, &di);
	n->depot_objs += di.objs;
	n->depot_full += di.full;
	n->depot_empty += di.empty;
}

/*
 * Passes 2 and 3 for the per-CPU layer @pc: into @nodes[node index], or
 * with @fold all into @nodes[0].
 */
static void sp_snap_pcpu(struct sp_pcpu_cache *pc, struct sp_cache_snap *s,
			 struct sp_node_snap *nodes, bool fold)
{
	struct sp_slot_snap one;

	for (unsigned long i = 0; i < pc->nr_slots; i++) {
		struct sp_slot_snap *sl = s->slot ? &s->slot[i] : &one;
		struct sp_node_snap *n = nodes;

		sp_snap_slot(pc, i, sl);
		for (int k = 0; k < SP_CTR_NR; k++)
			s->ctr[k] += sl->ctr[k];
		if (!fold && sl->node < (unsigned int)s->nr_nodes)
			n = &nodes[sl->node];
		/*
		 * Objects in the slot's alien magazines were taken out of their
		 * home node's slabs: they are cached on that node, not on the
		 * slot's, or the slot's node would read more cached than taken
		 * out and the home node more active than the program holds.
		 */
		if (!fold && pc->alien) {
			unsigned int left = sl->objs;

			for (int k = 0; k < s->nr_nodes && left; k++) {
				unsigned int a = sp_alien_objects_to(pc, i, k);

				a = a < left ? a : left;
				nodes[k].cpu_objs += a;
				left -= a;
			}
			n->cpu_objs += left;
		} else {
			n->cpu_objs += sl->objs;
		}
		n->mag_allocs += sl->ctr[SP_CTR_ALLOC_FASTPATH] +
				 sl->ctr[SP_STAT_ALLOC_SLOWPATH];
		n->mag_frees += sl->ctr[SP_CTR_FREE_FASTPATH] +
				sl->ctr[SP_STAT_FREE_SLOWPATH];
	}
	/* slow paths that found their slot owned count in one shared word */
	s->ctr[SP_STAT_BYPASS] += SP_READ_ONCE(pc->bypass);
	for (int i = 0; i < s->nr_nodes && i < sp_topo.nr_nodes; i++)
		sp_snap_depot(pc, i, fold ? nodes : &nodes[i]);
	s->mag_size = sp_mag_class_cap(SP_READ_ONCE(pc->cls));
	s->mag_size_max = sp_mag_class_cap(SP_READ_ONCE(pc->max_cls));
	s->depot_max = SP_READ_ONCE(pc->depot_max);
	s->meta_bytes += pc->map_size;
}

void sp_stats_snap_cache(struct segpool_cache *c, struct sp_cache_snap *s)
{
	struct sp_node_snap *nodes = s->node;
	struct sp_slot_snap *slots = s->slot;
	unsigned long nr_slots = s->nr_slots;
	/* published with a release store once the layer is set up */
	struct sp_pcpu_cache *pc = __atomic_load_n(&c->pcpu, __ATOMIC_ACQUIRE);

	memset(s, 0, sizeof(*s));
	memcpy(s->name, c->name, sizeof(s->name));
	s->name[sizeof(s->name) - 1] = '\0';
	s->flags = c->flags;
	s->object_size = c->object_size;
	s->stride = c->stride;
	s->align = c->align;
	s->order = c->order;
	s->objs_per_slab = c->objs_per_slab;
	s->max_empty = c->max_empty;
	s->ctor = c->ctor != NULL;
	s->pcpu = pc != NULL;
	s->meta_bytes = c->map_size;
	s->alloc_failures =
		__atomic_load_n(&c->alloc_failures, __ATOMIC_RELAXED);
	s->alloc_failslab =
		__atomic_load_n(&c->alloc_failslab, __ATOMIC_RELAXED);
	s->nr_nodes = sp_space.nr_regions;
	s->node = nodes;
	if (pc && slots && pc->nr_slots <= nr_slots) {
		s->slot = slots;
		s->nr_slots = pc->nr_slots;
	}

	if (!nodes) {
		/* sums only: every node folded into s->sum */
		for (int i = 0; i < s->nr_nodes; i++) {
			struct sp_node_snap n;

			memset(&n, 0, sizeof(n));
			sp_snap_node(c, i, &n);
			sp_snap_add(&s->sum, &n);
		}
		if (pc)
			sp_snap_pcpu(pc, s, &s->sum, true);
		return;
	}
	memset(nodes, 0, (size_t)s->nr_nodes * sizeof(*nodes));
	for (int i = 0; i < s->nr_nodes; i++)
		sp_snap_node(c, i, &nodes[i]);
	if (pc)
		sp_snap_pcpu(pc, s, nodes, false);
	for (int i = 0; i < s->nr_nodes; i++)
		sp_snap_add(&s->sum, &nodes[i]);
}

/* --- walking the cache list --------------------------------------------- */

/* The library's own caches (size classes, magazines) come after the rest. */
static bool sp_cache_builtin(unsigned long flags)
{
	return flags & (SP_CACHE_KMALLOC | SP_CACHE_INTERNAL);
}

/* What a walk needs besides the stack: mapped once per statistics call. */
struct sp_walk_space {
	struct sp_cache_snap snap;
	struct sp_node_snap node[SP_MAX_NODES];
};

int sp_stats_walk(const char *name, bool slots, sp_stats_fn fn, void *arg)
{
	struct sp_slot_snap *slot = NULL;
	size_t slot_bytes = 0;
	struct sp_walk_space *w;
	struct segpool_cache *c;
	int n = 0;

	w = sp_os_map(SP_ALIGN(sizeof(*w), SP_PAGE_SIZE), SP_PAGE_SIZE);
	if (!w)
		return -ENOMEM;
	sp_rcu_walk_begin();
	/* the program's own caches first, then the library's (two passes) */
	for (int pass = 0; pass < 2 && n >= 0; pass++)
	sp_list_for_each_entry_rcu(c, &sp_cache_list, list) {
		struct sp_pcpu_cache *pc;

		if (name && strcmp(c->name, name))
			continue;
		if (sp_cache_builtin(c->flags) != (pass == 1))
			continue;
		pc = __atomic_load_n(&c->pcpu, __ATOMIC_ACQUIRE);
		if (slots && pc && pc->nr_slots * sizeof(*slot) > slot_bytes) {
			/* every cache has as many slots: mapped once */
			if (slot)
				sp_os_unmap(slot, slot_bytes);
			slot_bytes = SP_ALIGN(pc->nr_slots * sizeof(*slot),
					      SP_PAGE_SIZE);
			slot = sp_os_map(slot_bytes, SP_PAGE_SIZE);
			if (!slot) {
				n = -ENOMEM;
				break;
			}
		}
		w->snap.node = w->node;
		w->snap.slot = slots ? slot : NULL;
		w->snap.nr_slots = slot_bytes / sizeof(*slot);
		sp_stats_snap_cache(c, &w->snap);
		fn(&w->snap, arg);
		n++;
	}
	sp_rcu_walk_end();
	if (slot)
		sp_os_unmap(slot, slot_bytes);
	sp_os_unmap(w, SP_ALIGN(sizeof(*w), SP_PAGE_SIZE));
	return n;
}

/* --- folding the caches that never held an object ---------------------- */

bool sp_fold_take(struct sp_fold *f, const struct sp_cache_snap *s)
{
	if (!f->on || s->sum.slabs_created)
		return false;
	sp_sbuf_printf(&f->names, "%s%s", f->n ? " " : "", s->name);
	f->n++;
	return true;
}

void sp_fold_finish(struct sp_fold *f, struct sp_sbuf *b)
{
	if (f->n) {
		sp_sbuf_printf(b,
			       "# %u cache%s never held an object (%s): ", f->n,
			       f->n == 1 ? "" : "s",
			       "SEGPOOL_STATS_PRINT=...,unused lists them");
		sp_sbuf_write(b, f->names.buf, f->names.len);
		sp_sbuf_putc(b, '\n');
	}
	if (f->names.err)
		b->err = f->names.err;
	sp_sbuf_free(&f->names);
	f->n = 0;
}

/* --- arguments ---------------------------------------------------------- */

int sp_stats_check_args(FILE *out, unsigned int flags)
{
	if (!out || (flags & ~SEGPOOL_STATS_FLAGS_VALID)) {
		errno = EINVAL;
		return -EINVAL;
	}
	if (sp_init())
		return -ENOMEM;
	return 0;
}
