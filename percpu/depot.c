// SPDX-License-Identifier: MIT
/*
 * percpu/depot.c - the depot: lock-free magazine stacks, sizing window,
 * working-set reaping and drains.  The stacks' design and why a pop's
 * early read is safe: percpu/depot.h.
 *
 * Sizing window (Bonwick): every SP_DEPOT_WINDOW stack operations on a
 * node, the operation that completes the window looks back, under the
 * depot's mutex (trylock: a drain or another window already on it skips
 * this one).  Retried compare-and-swaps above 1/16 of the operations mean
 * CPUs meet in the depot too often: the magazine class grows (up to the
 * cache's tunable limit).  A run of SP_QUIET_WINDOWS windows without any
 * shrinks it again toward the default.  Magazines of a retired class are
 * freed as they come back empty, so sizes converge.
 *
 * Working-set reaping: the depot tracks the fewest full and empty
 * magazines it held during the window; that many were not needed, so the
 * window takes them off (full ones flushed into the slabs, empty ones
 * freed), and the slab layer then returns empty slabs to the OS.
 */
#include <stddef.h>
#include <string.h>

#include "internal/debug.h"
#include "internal/sanitize.h"
#include "percpu/depot.h"
#include "percpu/pcpu.h"
#include "slab/slab.h"

#define SP_DEPOT_WINDOW		512	/* stack operations between looks */
#define SP_QUIET_WINDOWS	8

_Static_assert((SP_DEPOT_WINDOW & (SP_DEPOT_WINDOW - 1)) == 0,
	       "a window ends where a generation crosses a multiple");

bool sp_depot_lockfree;

void sp_depot_setup(void)
{
#if SP_CAS16_ARCH && !SP_TSAN
	sp_depot_lockfree = sp_cas16_usable();
#endif
}

bool sp_depot_test_no_reap;

void sp_depot_init(struct sp_depot *d)
{
	memset(d, 0, sizeof(*d));
	pthread_mutex_init(&d->lock, NULL);
	sp_lock_class(&d->lock, SP_LOCK_DEPOT);
}

void sp_depot_fork_child(struct sp_depot *d)
{
	pthread_mutex_init(&d->lock, NULL);
	d->spin = 0;
}

/* --- the stacks ----------------------------------------------------------- */

/*
 * The link of a magazine that was on top a moment ago (lock-free pops
 * only): it may be free, or reused, by now; its page is mapped (depot.h).
 */
#if SP_ASAN
__attribute__((noinline, no_sanitize_address))
#endif
static struct sp_mag *sp_mag_peek_next(struct sp_mag *m)
{
	return __atomic_load_n(&m->next, __ATOMIC_RELAXED);
}

static inline void sp_stack_load(union sp_mag_stack *s, union sp_mag_stack *v)
{
	v->w[1] = __atomic_load_n(&s->w[1], __ATOMIC_RELAXED);
	v->w[0] = __atomic_load_n(&s->w[0], __ATOMIC_RELAXED);
}

static inline void sp_depot_retry(struct sp_depot *d)
{
	__atomic_fetch_add(&d->contended, 1, __ATOMIC_RELAXED);
}

static void sp_depot_spin_lock(struct sp_depot *d)
{
	while (__atomic_exchange_n(&d->spin, 1, __ATOMIC_ACQUIRE)) {
		sp_depot_retry(d);
		while (__atomic_load_n(&d->spin, __ATOMIC_RELAXED))
			sp_cpu_relax();
	}
}

static void sp_depot_spin_unlock(struct sp_depot *d)
{
	__atomic_store_n(&d->spin, 0, __ATOMIC_RELEASE);
}

/*
 * One stack word replaced by @nw, if it still is @old (locked builds: it
 * is).
 */
static inline bool sp_stack_cas(union sp_mag_stack *s, union sp_mag_stack *old,
				const union sp_mag_stack *nw)
{
#if SP_CAS16_ARCH && !SP_TSAN
	if (likely(sp_depot_lockfree))
		return sp_cas16(s->w, old->w, nw->w);
#endif
	/* under the depot's spinlock: the word is ours */
	(void)old;
	__atomic_store_n(&s->w[0], nw->w[0], __ATOMIC_RELAXED);
	__atomic_store_n(&s->w[1], nw->w[1], __ATOMIC_RELAXED);
	return true;
}

/*
 * Push @m on @s unless it holds @max magazines already; the generation
 * after the push in *@gen.  The caller owns @m.
 */
static bool sp_stack_push(struct sp_depot *d, union sp_mag_stack *s,
			  struct sp_mag *m, uint32_t max, uint32_t *gen)
{
	union sp_mag_stack old, nw;
	bool ok = false;

	if (!sp_depot_lockfree)
		sp_depot_spin_lock(d);
	sp_stack_load(s, &old);
	for (;;) {
		if (old.nr >= max)
			break;
		__atomic_store_n(&m->next, old.head, __ATOMIC_RELAXED);
		nw.head = m;
		nw.gen = old.gen + 1;
		nw.nr = old.nr + 1;
		if (sp_stack_cas(s, &old, &nw)) {
			*gen = nw.gen;
			ok = true;
			break;
		}
		sp_depot_retry(d);
	}
	if (!sp_depot_lockfree)
		sp_depot_spin_unlock(d);
	return ok;
}

/*
 * Pop the top magazine of @s, or NULL; the generation and count after the
 * pop in *@gen and *@nr.
 */
static struct sp_mag *sp_stack_pop(struct sp_depot *d, union sp_mag_stack *s,
				   uint32_t *gen, uint32_t *nr)
{
	union sp_mag_stack old, nw;
	struct sp_mag *m = NULL;

	if (!sp_depot_lockfree)
		sp_depot_spin_lock(d);
	sp_stack_load(s, &old);
	for (;;) {
		if (!old.head)
			break;
		nw.head = sp_mag_peek_next(old.head);
		nw.gen = old.gen + 1;
		nw.nr = old.nr - 1;
		if (sp_stack_cas(s, &old, &nw)) {
			m = old.head;
			*gen = nw.gen;
			*nr = nw.nr;
			break;
		}
		sp_depot_retry(d);
	}
	if (!sp_depot_lockfree)
		sp_depot_spin_unlock(d);
	if (m)
		m->next = NULL;		/* ours now */
	return m;
}

/* The low-water mark @min follows @nr down (a heuristic: racy by design). */
static inline void sp_low_water(uint32_t *min, uint32_t nr)
{
	if (nr < __atomic_load_n(min, __ATOMIC_RELAXED))
		__atomic_store_n(min, nr, __ATOMIC_RELAXED);
}

/* --- magazines out of the depot ------------------------------------------- */

void sp_mag_flush(struct sp_pcpu_cache *pc, struct sp_mag *m)
{
	if (m->count) {
		sp_slab_flush(pc->cache, m->count, sp_mag_base(m));
		m->count = 0;
	}
}

static void sp_mag_push_local(struct sp_mag **head, struct sp_mag *m)
{
	m->next = *head;
	*head = m;
}

static void sp_release_list(struct sp_pcpu_cache *pc, struct sp_mag *full,
			    struct sp_mag *empty)
{
	struct sp_mag *m;

	while ((m = full)) {
		full = m->next;
		sp_mag_flush(pc, m);
		sp_mag_free(m);
	}
	while ((m = empty)) {
		empty = m->next;
		sp_mag_free(m);
	}
}

/* Take up to @want magazines off @s onto the private list *@out; how many. */
static uint32_t sp_stack_take(struct sp_depot *d, union sp_mag_stack *s,
			      uint32_t want, struct sp_mag **out, bool full)
{
	uint32_t got = 0, gen, nr;
	struct sp_mag *m;

	while (got < want && (m = sp_stack_pop(d, s, &gen, &nr))) {
		if (full)
			__atomic_fetch_sub(&d->objs, (int64_t)m->count,
					   __ATOMIC_RELAXED);
		sp_mag_push_local(out, m);
		got++;
	}
	return got;
}

/* --- the sizing window ---------------------------------------------------- */

static inline uint32_t sp_depot_ops(struct sp_depot *d)
{
	return __atomic_load_n(&d->full.gen, __ATOMIC_RELAXED) +
	       __atomic_load_n(&d->empty.gen, __ATOMIC_RELAXED);
}

/* The operation whose generation @gen ended a window runs it. */
static void sp_depot_window(struct sp_pcpu_cache *pc, struct sp_depot *d)
{
	struct sp_mag *full = NULL, *empty = NULL;
	uint32_t ops, cls, min_full, min_empty;
	uint64_t contended;

	if (pthread_mutex_trylock(&d->lock))
		return;			/* a drain or a window is on it */
	ops = sp_depot_ops(d) - d->win_ops;
	contended = __atomic_load_n(&d->contended, __ATOMIC_RELAXED) -
		    d->win_contended;
	d->win_ops += ops;
	d->win_contended += contended;

	cls = SP_READ_ONCE(pc->cls);
	if (contended * 16 > ops) {
		if (cls < SP_READ_ONCE(pc->max_cls))
			SP_WRITE_ONCE(pc->cls, cls + 1);
		d->quiet = 0;
	} else if (contended == 0 && ++d->quiet >= SP_QUIET_WINDOWS) {
		if (cls > SP_READ_ONCE(pc->base_cls))
			SP_WRITE_ONCE(pc->cls, cls - 1);
		d->quiet = 0;
	}

	min_full = __atomic_load_n(&d->min_full, __ATOMIC_RELAXED);
	min_empty = __atomic_load_n(&d->min_empty, __ATOMIC_RELAXED);
	if (unlikely(SP_READ_ONCE(sp_depot_test_no_reap)))
		min_full = min_empty = 0;
	d->reaped += sp_stack_take(d, &d->full, min_full, &full, true);
	d->reaped += sp_stack_take(d, &d->empty, min_empty, &empty, false);
	__atomic_store_n(&d->min_full,
			 __atomic_load_n(&d->full.nr, __ATOMIC_RELAXED),
			 __ATOMIC_RELAXED);
	__atomic_store_n(&d->min_empty,
			 __atomic_load_n(&d->empty.nr, __ATOMIC_RELAXED),
			 __ATOMIC_RELAXED);
	pthread_mutex_unlock(&d->lock);
	sp_release_list(pc, full, empty);
}

static inline void sp_depot_after(struct sp_pcpu_cache *pc, struct sp_depot *d,
				  uint32_t gen)
{
	if (unlikely((gen & (SP_DEPOT_WINDOW - 1)) == 0))
		sp_depot_window(pc, d);
}

/* --- exchange ------------------------------------------------------------- */

/*
 * Give @give to the list its count puts it on; a magazine the depot has no
 * room for, or an empty one of a retired class, is flushed and freed.
 */
static void sp_depot_give(struct sp_pcpu_cache *pc, struct sp_pcpu_slot *slot,
			  struct sp_depot *d, struct sp_mag *give)
{
	uint32_t max = SP_READ_ONCE(pc->depot_max), cnt = give->count, gen = 1;

	if (cnt == 0) {
		if (sp_mag_class_of(give) == SP_READ_ONCE(pc->cls) &&
		    sp_stack_push(d, &d->empty, give, max, &gen)) {
			sp_stat_inc(slot, SP_STAT_DEPOT_PUT_EMPTY);
			sp_depot_after(pc, d, gen);
			return;
		}
	} else {
		/* counted first: a pop may take it at once */
		__atomic_fetch_add(&d->objs, (int64_t)cnt, __ATOMIC_RELAXED);
		if (sp_stack_push(d, &d->full, give, max, &gen)) {
			sp_stat_inc(slot, SP_STAT_DEPOT_PUT_FULL);
			sp_stat_add(slot, SP_STAT_DEPOT_PUT_OBJS, cnt);
			sp_depot_after(pc, d, gen);
			return;
		}
		__atomic_fetch_sub(&d->objs, (int64_t)cnt, __ATOMIC_RELAXED);
	}
	sp_stat_add(slot, SP_STAT_FLUSH_OBJS, cnt);
	sp_mag_flush(pc, give);
	sp_stat_inc(slot, SP_STAT_MAG_FLUSH);
	sp_mag_free(give);
}

void sp_depot_put(struct sp_pcpu_cache *pc, struct sp_pcpu_slot *slot,
		  struct sp_mag *give)
{
	sp_depot_give(pc, slot, &pc->depot[slot->node], give);
}

void sp_depot_put_home(struct sp_pcpu_cache *pc, struct sp_pcpu_slot *slot,
		       unsigned int node, struct sp_mag *give)
{
	sp_depot_give(pc, slot, &pc->depot[node], give);
}

struct sp_mag *sp_depot_get_empty(struct sp_pcpu_cache *pc,
				  struct sp_pcpu_slot *slot, unsigned int node)
{
	struct sp_depot *d = &pc->depot[node];
	uint32_t gen = 1, nr;
	struct sp_mag *got = sp_stack_pop(d, &d->empty, &gen, &nr);

	if (got) {
		sp_low_water(&d->min_empty, nr);
		sp_stat_inc(slot, SP_STAT_DEPOT_GET_EMPTY);
		sp_depot_after(pc, d, gen);
	}
	return got;
}

struct sp_mag *sp_depot_exchange(struct sp_pcpu_cache *pc,
				 struct sp_pcpu_slot *slot,
				 struct sp_mag *give, bool want_full)
{
	struct sp_depot *d = &pc->depot[slot->node];
	uint32_t gen = 1, nr;
	struct sp_mag *got;

	if (give)
		sp_depot_give(pc, slot, d, give);
	if (want_full) {
		got = sp_stack_pop(d, &d->full, &gen, &nr);
		if (got) {
			__atomic_fetch_sub(&d->objs, (int64_t)got->count,
					   __ATOMIC_RELAXED);
			sp_low_water(&d->min_full, nr);
			sp_stat_inc(slot, SP_STAT_DEPOT_GET_FULL);
			sp_stat_add(slot, SP_STAT_DEPOT_GET_OBJS, got->count);
			sp_depot_after(pc, d, gen);
		}
	} else {
		got = sp_stack_pop(d, &d->empty, &gen, &nr);
		if (got) {
			sp_low_water(&d->min_empty, nr);
			sp_stat_inc(slot, SP_STAT_DEPOT_GET_EMPTY);
			sp_depot_after(pc, d, gen);
		}
	}
	return got;
}

/* --- drains and statistics ------------------------------------------------ */

void sp_depot_drain(struct sp_pcpu_cache *pc, int n)
{
	struct sp_depot *d = &pc->depot[n];
	struct sp_mag *full = NULL, *empty = NULL;

	pthread_mutex_lock(&d->lock);
	d->reaped += sp_stack_take(d, &d->full, UINT32_MAX, &full, true);
	d->reaped += sp_stack_take(d, &d->empty, UINT32_MAX, &empty, false);
	__atomic_store_n(&d->min_full, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&d->min_empty, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&d->lock);
	sp_release_list(pc, full, empty);
}

void sp_depot_read(struct sp_pcpu_cache *pc, int n, struct sp_depot_info *info)
{
	struct sp_depot *d = &pc->depot[n];
	int64_t objs = __atomic_load_n(&d->objs, __ATOMIC_RELAXED);

	info->objs = objs > 0 ? (uint64_t)objs : 0;
	info->full = __atomic_load_n(&d->full.nr, __ATOMIC_RELAXED);
	info->empty = __atomic_load_n(&d->empty.nr, __ATOMIC_RELAXED);
}
