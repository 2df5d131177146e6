// SPDX-License-Identifier: MIT
/*
 * percpu/pcpu.c - the per-CPU layer's set-up, drains, fork, tunables and
 * statistics.  The slow paths and Bonwick's algorithm are in
 * percpu/magazine.c, owning a slot in percpu/slot.h, use-driven sizing in
 * percpu/sizing.c, the depot in percpu/depot.c.
 *
 * Lock order: see core/init.c, levels 4 to 7 (drain lock, slot, depot
 * mutex, node lock); the depot's spinlock of builds without cas16 is a
 * leaf (level 11).
 */
#include <errno.h>
#include <string.h>

#include "internal/debug.h"
#include "internal/report.h"
#include "internal/sanitize.h"
#include "numa/topology.h"
#include "os/cpu.h"
#include "os/os.h"
#include "percpu/alien.h"
#include "percpu/pcpu.h"
#include "percpu/slot.h"
#include "percpu/stash.h"
#include "slab/slab.h"

#define SP_DEPOT_MAX_DEFAULT	16	/* full magazines kept per node */

static unsigned int sp_nr_slots;

void (*sp_pcpu_test_hook)(enum sp_pcpu_hook_point point, unsigned long slot);


static struct sp_pcpu_slot *sp_nil_slots;

unsigned int sp_pcpu_nr_slots(void)
{
	return sp_nr_slots;
}

void *sp_pcpu_nil_slots(void)
{
	return sp_nil_slots;
}

/* The always-missing slots of caches without a layer (sp_pcpu_nil_slots). */
static int sp_nil_slots_init(void)
{
	size_t bytes = SP_ALIGN((size_t)sp_nr_slots << SP_PCPU_SHIFT,
				SP_PAGE_SIZE);
	struct sp_pcpu_slot *s;

	if (sp_nil_slots)
		return 0;
	s = sp_os_map_meta(bytes);
	if (!s)
		return -ENOMEM;
	for (unsigned long i = 0; i < sp_nr_slots; i++) {
		s[i].top = sp_mag_top_none;	/* empty and full at once */
		s[i].expect = 0;		/* no page has tag 0 as its
						 * owner */
	}
	/* never written again: a stray write faults instead of hiding */
	sp_os_protect_ro(s, bytes);
	sp_nil_slots = s;
	sp_cache_nil_slots = s;
	return 0;
}

int sp_pcpu_init(void)
{
	static bool mode_chosen;	/* init may be tried again: once */
	int ret;

	if (!mode_chosen) {
		sp_pcpu_mode_init();
		sp_depot_setup();
		sp_nr_slots = (unsigned int)sp_cpu_possible_count();
		mode_chosen = true;
	}
	ret = sp_nil_slots_init();
	if (ret)
		return ret;
	if (sp_pcpu_mode != SP_PCPU_OFF)
		ret = sp_mag_init();
	/* the hit paths open at the end of start-up (core/init.c) */
	return ret;
}
/* --- drains --------------------------------------------------------------- */

static void sp_slot_drain(struct sp_pcpu_cache *pc, unsigned long i)
{
	struct sp_pcpu_slot *slot = &pc->slots[i];
	void **top = sp_slot_own_remote(pc, i);
	struct sp_mag *m = slot->loaded;

	if (m) {
		m->count = sp_mag_count_at(m, top);
		sp_assert(m->count <= m->cap);
		sp_stat_add(slot, SP_STAT_FLUSH_OBJS, m->count);
		sp_mag_flush(pc, m);
		sp_mag_free(m);
	}
	if (slot->prev) {
		sp_stat_add(slot, SP_STAT_FLUSH_OBJS, slot->prev->count);
		sp_mag_flush(pc, slot->prev);
		sp_mag_free(slot->prev);
	}
	while ((m = sp_stash_take(slot))) {
		sp_stat_add(slot, SP_STAT_FLUSH_OBJS, m->count);
		sp_mag_flush(pc, m);
		sp_mag_free(m);
	}
	while ((m = sp_stash_take_empty(slot)))
		sp_mag_free(m);
	slot->stash_credit = 0;
	slot->loaded = NULL;
	slot->prev = NULL;
	sp_alien_flush(pc, i, SP_ALIEN_DRAIN);
	sp_slot_release(pc, slot, sp_mag_top_none);
}

void sp_pcpu_drain(struct sp_pcpu_cache *pc)
{
	pthread_mutex_lock(&pc->drain_lock);
	for (unsigned long i = 0; i < pc->nr_slots; i++)
		sp_slot_drain(pc, i);
	for (int n = 0; n < sp_topo.nr_nodes; n++)
		sp_depot_drain(pc, n);
	pthread_mutex_unlock(&pc->drain_lock);
}

/*
 * A stash unused for this many passes of the decay (a quarter of the delay
 * each) goes to the depot: a busy cache's slot that kept a batch, then
 * settled into swings its two magazines hold (no slow path to age it,
 * sp_stash_age()), or whose thread left its CPU.
 */
#define SP_STASH_IDLE_PASSES	4

/*
 * Slot @i's alien magazines to their depots once it made no remote free
 * for a whole pass of the decay (drain lock held): a CPU that freed other
 * nodes' objects and went quiet keeps none of them out of reach.
 */
static void sp_pcpu_reap_aliens(struct sp_pcpu_cache *pc, unsigned long i)
{
	uint64_t act = sp_alien_activity(pc, i);
	void **top;

	if (!pc->alien_seen)
		return;
	if (act != pc->alien_seen[i] || !sp_alien_objects(pc, i)) {
		pc->alien_seen[i] = act;
		return;
	}
	top = sp_slot_own_remote(pc, i);
	sp_alien_flush(pc, i, SP_ALIEN_ALL);
	sp_slot_release(pc, &pc->slots[i], top);
}

unsigned int sp_pcpu_reap_stashes(struct sp_pcpu_cache *pc)
{
	unsigned int n = 0;

	if (pthread_mutex_trylock(&pc->drain_lock))
		return 0;		/* a drain is on it */
	for (unsigned long i = 0; i < pc->nr_slots; i++)
		sp_pcpu_reap_aliens(pc, i);
	for (unsigned long i = 0; i < pc->nr_slots; i++) {
		struct sp_pcpu_slot *slot = &pc->slots[i];
		uint64_t *seen = &pc->stash_seen[i];
		uint32_t used = SP_READ_ONCE(slot->stash_ops);
		void **top;

		/* racy reads: a stash seen wrongly waits for the next pass */
		if (!SP_READ_ONCE(slot->stash) &&
		    !SP_READ_ONCE(slot->stash_empty)) {
			*seen = 0;
			continue;
		}
		if ((uint32_t)(*seen >> 32) != used || !*seen) {
			*seen = (uint64_t)used << 32 | 1;
			continue;
		}
		if ((uint32_t)*seen < SP_STASH_IDLE_PASSES) {
			(*seen)++;
			continue;
		}
		top = sp_slot_own_remote(pc, i);
		sp_stash_expire(pc, slot);
		sp_slot_release(pc, slot, top);
		*seen = 0;
		n++;
	}
	pthread_mutex_unlock(&pc->drain_lock);
	return n;
}

/* --- create, destroy, tune ------------------------------------------------ */

/*
 * Magazine sizes by object size: a magazine of large objects pins a lot of
 * memory per CPU, so its class starts (and may grow) smaller.  The default
 * class is at most SP_MAG_DEFAULT_CLASS and keeps a magazine's objects
 * within SP_MAG_BYTES_MAX (percpu/magazine.h); growth stops there too.
 * Objects above 16 KiB pass the bound even in the smallest class (4
 * rounds): what Documentation/internals/percpu.md weighs.
 */

static void sp_pcpu_default_classes(size_t stride, uint32_t *cls, uint32_t *max)
{
	uint32_t c = 0, m = 0;

	while (c < SP_MAG_DEFAULT_CLASS &&
	       sp_mag_class_cap(c + 1) * stride <= SP_MAG_BYTES_MAX)
		c++;
	m = c;
	while (m + 1 < SP_MAG_CLASSES &&
	       sp_mag_class_cap(m + 1) * stride <= SP_MAG_BYTES_MAX)
		m++;
	*cls = c;
	*max = m;
}

/*
 * A program's cache's block (a mapping of its own) puts a colour between
 * its header and its depots (sp_color_next()), in lines, within the slack
 * of its last page, or within SP_PCPU_COLORS lines when that slack holds
 * fewer (one page more at most): the slot of one CPU then lies at a
 * different page offset in each of the next caches created, so their
 * tops do not share an L1 set, and a push's store to one cache's top does
 * not alias the next pop's load from another's.  The packed blocks of the
 * library's own caches are already at scattered offsets.
 */
#define SP_PCPU_COLORS		16
static unsigned int sp_pcpu_color_next;

static size_t sp_pcpu_color(size_t bytes)
{
	size_t room = SP_ALIGN(bytes, SP_PAGE_SIZE) - bytes;

	if (room < (SP_PCPU_COLORS - 1) * SP_CACHE_LINE)
		room = (SP_PCPU_COLORS - 1) * SP_CACHE_LINE;
	return sp_color_next(&sp_pcpu_color_next, room, SP_CACHE_LINE);
}

struct sp_pcpu_cache *sp_pcpu_cache_create(struct segpool_cache *c)
{
	size_t slots_bytes = (size_t)sp_nr_slots << SP_PCPU_SHIFT;
	size_t depot_bytes = (size_t)sp_topo.nr_nodes * sizeof(struct sp_depot);
	size_t alien_bytes = sp_alien_bytes(sp_nr_slots);
	/* remote lanes: with alien magazines, where the sequences run */
	size_t lanes_bytes = alien_bytes && sp_pcpu_mode == SP_PCPU_RSEQ ?
			     (size_t)sp_nr_slots << SP_PCPU_SHIFT : 0;
	size_t seen_bytes = (size_t)sp_nr_slots * sizeof(uint64_t) *
			    (alien_bytes ? 2 : 1);
	size_t bytes = SP_ALIGN(sizeof(struct sp_pcpu_cache), SP_CACHE_LINE) +
		       depot_bytes + slots_bytes + alien_bytes + lanes_bytes +
		       seen_bytes;
	struct sp_pcpu_cache *pc;
	struct sp_pcpu_slot *slots = NULL;
	size_t color = 0;
	char *p;

	if (sp_pcpu_mode == SP_PCPU_OFF)
		return NULL;
	/*
	 * the library's own caches' blocks are packed (slab/cache.c), their
	 * slots apart from the rest, beside the other caches' slots: the
	 * pages every call writes are then as few as the slots fill
	 */
	if (sp_cache_packed(c)) {
		slots = sp_os_map_packed_hot(slots_bytes, SP_CACHE_LINE);
		if (!slots)
			return NULL;
		bytes = SP_ALIGN(bytes - slots_bytes, SP_CACHE_LINE);
		p = sp_os_map_packed(bytes, SP_CACHE_LINE);
	} else {
		color = sp_pcpu_color(bytes);
		bytes = SP_ALIGN(bytes + color, SP_PAGE_SIZE);
		p = sp_os_map_meta(bytes);
	}
	if (!p)
		return NULL;
	pc = (struct sp_pcpu_cache *)p;
	pc->map_size = bytes;
	pc->cache = c;
	pc->depot = (struct sp_depot *)(p + SP_ALIGN(sizeof(*pc),
						     SP_CACHE_LINE) + color);
	if (!slots) {
		slots = (struct sp_pcpu_slot *)((char *)pc->depot +
						depot_bytes);
		depot_bytes += slots_bytes;	/* what follows comes after */
	}
	pc->slots = slots;
	pc->nr_slots = sp_nr_slots;
	pc->alien = alien_bytes ? (struct sp_alien *)((char *)pc->depot +
						      depot_bytes) : NULL;
	pc->lanes = lanes_bytes ? (struct sp_lane *)((char *)pc->depot +
						     depot_bytes +
						     alien_bytes) : NULL;
	pc->stash_seen = (uint64_t *)((char *)pc->depot + depot_bytes +
				      alien_bytes + lanes_bytes);
	pc->alien_seen = alien_bytes ? pc->stash_seen + sp_nr_slots : NULL;
	pc->rseq_off = sp_rseq_off;
	pc->id_off = sp_rseq_id_off;
	sp_pcpu_default_classes(c->stride, &pc->cls, &pc->max_cls);
	pc->base_cls = pc->cls;
	pc->depot_max = SP_DEPOT_MAX_DEFAULT;
	pthread_mutex_init(&pc->drain_lock, NULL);
	sp_lock_class(&pc->drain_lock, SP_LOCK_DRAIN);
	for (int n = 0; n < sp_topo.nr_nodes; n++)
		sp_depot_init(&pc->depot[n]);
	for (unsigned long i = 0; i < pc->nr_slots; i++) {
		struct sp_pcpu_slot *slot = &pc->slots[i];

		slot->top = sp_mag_top_none;
		slot->node = sp_pcpu_use_mm_cid || i >= SP_MAX_CPUS ? 0 :
			(unsigned long)sp_topo.cpu_idx[i];
		slot->expect = sp_slab_tag(c, (int)slot->node);
		if (pc->lanes)		/* no magazine in the lane */
			pc->lanes[i].top = sp_mag_top_none;
	}
	return pc;
}

void sp_pcpu_cache_free(struct sp_pcpu_cache *pc)
{
	if (pc && !sp_cache_packed(pc->cache))
		sp_os_unmap(pc, pc->map_size);
}

/*
 * The drain lock is not taken: it guards no data (a drain changes slots,
 * depots and slabs under their own ownership and locks), and the child
 * re-initialises it.
 */
void sp_pcpu_fork_lock(struct sp_pcpu_cache *pc)
{
	for (int n = 0; n < sp_topo.nr_nodes; n++)
		pthread_mutex_lock(&pc->depot[n].lock);
}

void sp_pcpu_fork_unlock(struct sp_pcpu_cache *pc)
{
	for (int n = sp_topo.nr_nodes - 1; n >= 0; n--)
		pthread_mutex_unlock(&pc->depot[n].lock);
}

/*
 * In the child only the forking thread lives on.  A slot another thread
 * owned at fork time (busy marker, or lock held) is in an unknown state: its
 * magazines are given up (their objects stay allocated in the child) and the
 * slot starts empty.  The forking thread itself owned none: fork is never
 * called from inside segpool.
 */
void sp_pcpu_fork_child(struct sp_pcpu_cache *pc)
{
	pthread_mutex_init(&pc->drain_lock, NULL);
	for (int n = 0; n < sp_topo.nr_nodes; n++)
		sp_depot_fork_child(&pc->depot[n]);
	for (unsigned long i = 0; i < pc->nr_slots; i++) {
		struct sp_pcpu_slot *slot = &pc->slots[i];

		if (sp_mag_top_is_busy(slot->top) || slot->lock) {
			/* given up: balance the occupancy counters */
			slot->stat[SP_STAT_FLUSH_OBJS] +=
				sp_pcpu_slot_objects(pc, i);
			sp_alien_forget(pc, i);
			slot->loaded = NULL;
			slot->prev = NULL;
			sp_stash_forget(slot);
			slot->top = sp_mag_top_none;
			slot->lock = 0;
		}
	}
}

int sp_pcpu_set_tunables(struct sp_pcpu_cache *pc, unsigned int mag_size,
			 unsigned int depot_max)
{
	unsigned int cls = 0;

	if (mag_size) {
		while (cls + 1 < SP_MAG_CLASSES &&
		       sp_mag_class_cap(cls + 1) <= mag_size)
			cls++;
		if (sp_mag_class_cap(cls) > mag_size)
			return -EINVAL;
		SP_WRITE_ONCE(pc->max_cls, cls);
		if (pc->base_cls > cls)
			pc->base_cls = cls;
		if (SP_READ_ONCE(pc->cls) > cls)
			SP_WRITE_ONCE(pc->cls, cls);
	}
	if (depot_max)
		SP_WRITE_ONCE(pc->depot_max, depot_max);
	return 0;
}

/* --- the counted build's sample counts ------------------------------------ */

void sp_pcpu_sample_arm(struct sp_pcpu_cache *pc, struct sp_pcpu_slot *due,
			int32_t left)
{
	unsigned int aborts = 0;
	struct sp_pcpu_slot *slot;
	void **top;
	int32_t was;

	slot = sp_slot_own(pc, &top, &aborts);
	if (!slot)
		return;
	if (aborts)
		sp_stat_add(slot, SP_STAT_RSEQ_ABORT, aborts);
	if (slot == due) {
		/*
		 * Owned, no pop commits on it; a pop's subtract after its
		 * commit (a thread preempted there) may still land, and is
		 * a hit like any other.
		 */
		uint64_t armed = slot->sample_armed;

		__atomic_store_n(&slot->sample_armed, armed | SP_SAMPLE_ARMING,
				 __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		was = SP_READ_ONCE(slot->sample_left);
		SP_WRITE_ONCE(slot->sample_left, left);
		__atomic_store_n(&slot->sample_armed,
				 armed + (uint64_t)((int64_t)left - was),
				 __ATOMIC_RELEASE);
	}
	sp_slot_release(pc, slot, top);
}

/* --- statistics ----------------------------------------------------------- */

void sp_pcpu_slot_counts(struct sp_pcpu_cache *pc, unsigned long i,
			 struct sp_pcpu_slot_counts *c)
{
	const struct sp_pcpu_slot *slot = &pc->slots[i];
	uint64_t lane = sp_pcpu_lane_hits(pc, i);

	c->alloc_fastpath = sp_slot_alloc_hits(slot);
	c->free_fastpath = SP_READ_ONCE(slot->free_hits) + lane;
	for (int s = 0; s < SP_STAT_NR; s++)
		c->stat[s] = SP_READ_ONCE(slot->stat[s]);
	c->stat[SP_STAT_REMOTE_FREE] += lane;
}

/*
 * Objects in minus objects out of a slot, as counted (signed: read while
 * the owner moves objects, out may run ahead of in).
 */
static int64_t sp_pcpu_slot_balance(struct sp_pcpu_cache *pc,
				    unsigned long i)
{
	struct sp_pcpu_slot_counts c;
	uint64_t in, out;

	sp_pcpu_slot_counts(pc, i, &c);
	in = c.free_fastpath + c.stat[SP_STAT_FREE_SLOWPATH] +
	     c.stat[SP_STAT_FILL_OBJS] + c.stat[SP_STAT_DEPOT_GET_OBJS];
	out = c.alloc_fastpath + c.stat[SP_STAT_ALLOC_SLOWPATH] +
	      c.stat[SP_STAT_FLUSH_OBJS] + c.stat[SP_STAT_DEPOT_PUT_OBJS];
	return (int64_t)(in - out);
}

unsigned int sp_pcpu_slot_objects(struct sp_pcpu_cache *pc, unsigned long i)
{
	int64_t n = sp_pcpu_slot_balance(pc, i);

	/* read while the owner moves objects, out may run ahead of in */
	return n > 0 ? (unsigned int)n : 0;
}

void sp_pcpu_read_stats(struct sp_pcpu_cache *pc, struct sp_pcpu_stats *st)
{
	int64_t in_mags = 0;

	memset(st, 0, sizeof(*st));
	for (unsigned long i = 0; i < pc->nr_slots; i++) {
		struct sp_pcpu_slot_counts c;

		sp_pcpu_slot_counts(pc, i, &c);
		st->alloc_fastpath += c.alloc_fastpath;
		st->free_fastpath += c.free_fastpath;
		for (int s = 0; s < SP_STAT_NR; s++)
			st->stat[s] += c.stat[s];
		in_mags += sp_pcpu_slot_balance(pc, i);
		st->objs_in_alien += sp_alien_objects(pc, i);
	}
	/* summed first: a read racing an owner cannot round a slot up */
	st->objs_in_magazines = in_mags > 0 ? (uint64_t)in_mags : 0;
	st->alien_flushes = sp_alien_flushes(pc);
	st->stat[SP_STAT_BYPASS] += SP_READ_ONCE(pc->bypass);
	for (int n = 0; n < sp_topo.nr_nodes; n++) {
		struct sp_depot_info di;

		sp_depot_read(pc, n, &di);
		st->objs_in_depot += di.objs;
		st->full_in_depot += di.full;
		st->empty_in_depot += di.empty;
	}
	st->mag_size = sp_mag_class_cap(SP_READ_ONCE(pc->cls));
	st->depot_max = SP_READ_ONCE(pc->depot_max);
}
