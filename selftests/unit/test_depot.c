// SPDX-License-Identifier: MIT
/*
 * selftests/unit/test_depot.c - the depot's magazine stacks (percpu/depot.c).
 *
 * The tests call sp_depot_exchange() directly, each thread with a slot of
 * its own outside the cache's slot array (the depot reads only the slot's
 * node and writes its owner-only counters), so they exercise the stacks
 * in every per-CPU mode but off, where there are none:
 *
 *   - many threads trade one set of full and empty magazines through one
 *     node's depot as fast as they can, which is where a stack without an
 *     ABA guard links a stale successor: afterwards every magazine is
 *     exactly once in a thread's hands, in the depot or reaped, and the
 *     depot's counts (magazines, objects) are exact; once with reaping
 *     off (sp_depot_test_no_reap), so all magazines stay in play, once
 *     with windows reaping during the race;
 *   - the bound (depot_max) holds under the same race;
 *   - working-set reaping: full magazines nobody takes go back to the slabs
 *     after two windows; of a stack that swings by W, W stay.
 *
 * Random choices come from sp_test_seed(), printed by the harness.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "segpool_config.h"
#include "core/core.h"
#include "percpu/depot.h"
#include "percpu/magazine.h"
#include "percpu/pcpu.h"
#include "slab/slab.h"
#include "selftests/lib/harness.h"

#define NR_THREADS	4
#define NR_MAGS		64	/* in the race: half full, half empty */

/*
 * The tests trade magazines on the depots of their caches through slots of
 * their own, which the cache's counters do not see: the decay thread would
 * take such a cache for idle and drain its depot under them.
 */
static void decay_off(void)
{
	assert_int_equal(segpool_set_decay_ms(SEGPOOL_DECAY_NEVER), 0);
}

/* A cache whose class cannot change under the test, and its layer. */
static struct segpool_cache *depot_cache(const char *name, unsigned int max)
{
	struct segpool_cache *c;
	struct sp_pcpu_cache *pc;

	decay_off();
	c = segpool_cache_create(name, 64, 0, 0, NULL);
	assert_non_null(c);
	pc = c->pcpu;
	if (!pc)
		return c;
	/* the largest class allowed is the current one: no window grows it */
	assert_int_equal(sp_pcpu_set_tunables(pc, sp_mag_class_cap(pc->cls),
					      max), 0);
	return c;
}

static struct sp_mag *new_mag(struct segpool_cache *c, bool full)
{
	struct sp_mag *m = sp_mag_alloc(c->pcpu->cls);

	assert_non_null(m);
	if (full) {
		assert_int_equal(sp_slab_alloc_bulk(c, 0, m->cap,
						    sp_mag_base(m)),
				 m->cap);
		m->count = m->cap;
	}
	return m;
}

static void put_mag(struct segpool_cache *c, struct sp_mag *m)
{
	sp_mag_flush(c->pcpu, m);
	sp_mag_free(m);
}

/* Everything left in node 0's depot, popped single-threaded. */
static unsigned int empty_depot(struct sp_pcpu_cache *pc,
				struct sp_pcpu_slot *slot, struct sp_mag **out,
				unsigned int max, unsigned int *nr_full,
				uint64_t *objs)
{
	unsigned int n = 0;
	struct sp_mag *m;

	*nr_full = 0;
	*objs = 0;
	while (n < max && (m = sp_depot_exchange(pc, slot, NULL, true))) {
		(*nr_full)++;
		*objs += m->count;
		out[n++] = m;
	}
	while (n < max && (m = sp_depot_exchange(pc, slot, NULL, false)))
		out[n++] = m;
	return n;
}

/* --- the race ------------------------------------------------------------- */

struct worker {
	struct sp_pcpu_slot slot;	/* first: 256-byte aligned */
	struct sp_pcpu_cache *pc;
	struct sp_mag *held[NR_MAGS];
	unsigned int nheld;
	unsigned long ops;
	uint64_t rnd;
	pthread_t tid;
};

static pthread_barrier_t start;

static uint64_t next_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void *trader(void *arg)
{
	struct worker *w = arg;

	pthread_barrier_wait(&start);
	for (unsigned long i = 0; i < w->ops; i++) {
		uint64_t r = next_rand(&w->rnd);
		struct sp_mag *give = NULL, *got;
		bool want_full = r & 1;

		/* each thread holds a few: most magazines stay in the depot */
		if (w->nheld > 2 || (w->nheld && (r & 14))) {
			unsigned int j = (unsigned int)((r >> 8) % w->nheld);

			give = w->held[j];
			w->held[j] = w->held[--w->nheld];
		}
		got = sp_depot_exchange(w->pc, &w->slot, give, want_full);
		if (got) {
			/* what a list gives is what it holds */
			if (want_full ? got->count != got->cap :
					got->count != 0)
				abort();
			w->held[w->nheld++] = got;
		}
	}
	return NULL;
}

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

static void race(bool reap)
{
	static struct worker w[NR_THREADS] __attribute__((aligned(256)));
	static struct sp_mag *all[NR_MAGS], *seen[NR_MAGS];
	struct segpool_cache *c = depot_cache("depot-race", NR_MAGS);
	struct sp_pcpu_cache *pc = c->pcpu;
	struct sp_depot_info info;
	unsigned int nseen = 0, nr_full, in_depot;
	uint64_t objs, reaped, flushes = 0;
	unsigned long ops = sp_test_scaled(1000000, 20000);

	if (!pc) {
		segpool_cache_destroy(c);
		skip();
	}
	print_message("# %s stacks, %d threads x %lu exchanges, %d magazines, "
		      "%s\n", sp_depot_lockfree ? "lock-free" : "spinlocked",
		      NR_THREADS, ops, NR_MAGS,
		      reap ? "windows reap" : "windows reap nothing");
	sp_depot_test_no_reap = !reap;
	for (unsigned int i = 0; i < NR_MAGS; i++)
		all[i] = new_mag(c, i % 2);
	memset(w, 0, sizeof(w));
	for (int t = 0; t < NR_THREADS; t++) {
		w[t].pc = pc;
		w[t].slot.node = 0;
		w[t].ops = ops;
		w[t].rnd = sp_test_seed() * 2654435761U + (uint64_t)t + 1;
		for (unsigned int i = t; i < NR_MAGS; i += NR_THREADS)
			w[t].held[w[t].nheld++] = all[i];
	}
	assert_int_equal(pthread_barrier_init(&start, NULL, NR_THREADS), 0);
	for (int t = 0; t < NR_THREADS; t++)
		assert_int_equal(pthread_create(&w[t].tid, NULL, trader, &w[t]),
				 0);
	for (int t = 0; t < NR_THREADS; t++)
		assert_int_equal(pthread_join(w[t].tid, NULL), 0);
	pthread_barrier_destroy(&start);

	/* the inspection below must not end a window that reaps */
	sp_depot_test_no_reap = true;
	sp_depot_read(pc, 0, &info);
	for (int t = 0; t < NR_THREADS; t++) {
		flushes += w[t].slot.stat[SP_STAT_MAG_FLUSH];
		for (unsigned int i = 0; i < w[t].nheld; i++)
			seen[nseen++] = w[t].held[i];
	}
	in_depot = empty_depot(pc, &w[0].slot, seen + nseen, NR_MAGS - nseen,
			       &nr_full, &objs);
	reaped = pc->depot[0].reaped;
	sp_depot_test_no_reap = false;
	if (!reap)
		assert_int_equal(reaped, 0);
	print_message("# held %u, in the depot %u (%u full, %" PRIu64
		      " objects), reaped %" PRIu64 ", dropped %" PRIu64 "\n",
		      nseen, in_depot, nr_full, objs, reaped, flushes);
	/* the depot's counts are exact once quiet */
	assert_int_equal(info.full, nr_full);
	assert_int_equal(info.empty, in_depot - nr_full);
	assert_int_equal(info.objs, objs);
	/* no magazine lost, none twice, none from elsewhere */
	assert_int_equal(flushes, 0);	/* the bound is all magazines */
	nseen += in_depot;
	assert_int_equal(nseen + reaped, NR_MAGS);
	qsort(seen, nseen, sizeof(seen[0]), cmp_ptr);
	qsort(all, NR_MAGS, sizeof(all[0]), cmp_ptr);
	for (unsigned int i = 0, j = 0; i < nseen; i++) {
		assert_true(i == 0 || seen[i] != seen[i - 1]);
		while (j < NR_MAGS && all[j] < seen[i])
			j++;
		assert_true(j < NR_MAGS && all[j] == seen[i]);
	}
	for (unsigned int i = 0; i < nseen; i++)
		put_mag(c, seen[i]);
	/* every object of every full magazine is back in the slabs */
	assert_int_equal(sp_test_info(c).active_objs, 0);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* The stacks alone: every magazine stays in play all along. */
static void test_race_conserves_magazines(void **state)
{
	(void)state;
	race(false);
}

/* The same race with sizing windows reaping while exchanges go on. */
static void test_race_with_reaping(void **state)
{
	(void)state;
	race(true);
}

/* --- the bound ------------------------------------------------------------ */

static void *giver(void *arg)
{
	struct worker *w = arg;

	pthread_barrier_wait(&start);
	while (w->nheld) {
		struct sp_mag *m = w->held[--w->nheld];

		sp_depot_exchange(w->pc, &w->slot, m, m->count == 0);
	}
	return NULL;
}

static void test_bound_under_race(void **state)
{
	static struct worker w[NR_THREADS] __attribute__((aligned(256)));
	static struct sp_mag *left[NR_MAGS];
	const unsigned int max = 5;
	struct segpool_cache *c = depot_cache("depot-bound", max);
	struct sp_pcpu_cache *pc = c->pcpu;
	struct sp_depot_info info;
	uint64_t objs, flushes = 0;
	unsigned int nr_full, n;

	(void)state;
	if (!pc) {
		segpool_cache_destroy(c);
		skip();
	}
	memset(w, 0, sizeof(w));
	for (int t = 0; t < NR_THREADS; t++) {
		w[t].pc = pc;
		/* each gives full magazines only, taking none back */
		for (unsigned int i = 0; i < NR_MAGS / NR_THREADS; i++)
			w[t].held[w[t].nheld++] = new_mag(c, true);
	}
	assert_int_equal(pthread_barrier_init(&start, NULL, NR_THREADS), 0);
	for (int t = 0; t < NR_THREADS; t++)
		assert_int_equal(pthread_create(&w[t].tid, NULL, giver, &w[t]),
				 0);
	for (int t = 0; t < NR_THREADS; t++)
		assert_int_equal(pthread_join(w[t].tid, NULL), 0);
	pthread_barrier_destroy(&start);
	for (int t = 0; t < NR_THREADS; t++)
		flushes += w[t].slot.stat[SP_STAT_MAG_FLUSH];
	sp_depot_read(pc, 0, &info);
	print_message("# %u kept at most %u, %" PRIu64 " flushed\n",
		      (unsigned int)info.full, max, flushes);
	assert_int_equal(info.full, max);
	assert_int_equal(flushes, NR_MAGS - max);
	n = empty_depot(pc, &w[0].slot, left, NR_MAGS, &nr_full, &objs);
	assert_int_equal(n, max);
	assert_int_equal(info.objs, objs);
	for (unsigned int i = 0; i < n; i++)
		put_mag(c, left[i]);
	assert_int_equal(sp_test_info(c).active_objs, 0);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* --- working-set reaping -------------------------------------------------- */

/*
 * Node 0 holds @nfull full magazines; each cycle takes @swing of them and
 * gives them back, and trades one empty magazine once, for @cycles cycles.
 * Returns how many full magazines the depot holds at the end.
 */
static unsigned int swing_cycles(struct segpool_cache *c, unsigned int nfull,
				 unsigned int swing, unsigned int cycles,
				 uint64_t *reaped)
{
	static struct sp_pcpu_slot slot __attribute__((aligned(256)));
	struct sp_pcpu_cache *pc = c->pcpu;
	struct sp_mag *hand[NR_MAGS], *e = new_mag(c, false), *left[NR_MAGS];
	struct sp_depot_info info;
	unsigned int nr_full, n;
	uint64_t objs;

	memset(&slot, 0, sizeof(slot));
	for (unsigned int i = 0; i < nfull; i++)
		assert_null(
			sp_depot_exchange(pc, &slot, new_mag(c, true), false));
	for (unsigned int k = 0; k < cycles; k++) {
		for (unsigned int i = 0; i < swing; i++)
			assert_non_null(hand[i] = sp_depot_exchange(
						pc, &slot, NULL, true));
		for (unsigned int i = 0; i < swing; i++)
			sp_depot_exchange(pc, &slot, hand[i], false);
		e = sp_depot_exchange(pc, &slot, e, false);
		assert_non_null(e);
	}
	sp_depot_read(pc, 0, &info);
	*reaped = pc->depot[0].reaped;
	n = empty_depot(pc, &slot, left, NR_MAGS, &nr_full, &objs);
	assert_int_equal(nr_full, info.full);
	assert_int_equal(objs, info.objs);
	for (unsigned int i = 0; i < n; i++)
		put_mag(c, left[i]);
	put_mag(c, e);
	return nr_full;
}

/* @nfull full magazines, @swing of them in use: @want stay, the rest reaped. */
static void reap_case(const char *name, unsigned int nfull, unsigned int swing,
		      unsigned int cycles, unsigned int want)
{
	struct segpool_cache *c = depot_cache(name, NR_MAGS);
	unsigned int kept;
	uint64_t reaped;

	if (!c->pcpu) {
		segpool_cache_destroy(c);
		skip();
	}
	kept = swing_cycles(c, nfull, swing, cycles, &reaped);
	print_message("# swing of %u: %u of %u full magazines left, %" PRIu64
		      " reaped\n", swing, kept, nfull, reaped);
	assert_int_equal(kept, want);
	assert_int_equal(reaped, nfull - want);
	assert_int_equal(sp_test_info(c).active_objs, 0);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* Nobody takes the 8 full ones: two windows (1024 operations) reap them. */
static void test_reap_idle_magazines(void **state)
{
	(void)state;
	reap_case("depot-reap", 8, 0, 1100, 0);
}

/* A swing of 3 out of 12: the other 9 were never needed. */
static void test_reap_keeps_working_set(void **state)
{
	(void)state;
	reap_case("depot-ws", 12, 3, 400, 3);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_race_conserves_magazines),
	cmocka_unit_test(test_race_with_reaping),
	cmocka_unit_test(test_bound_under_race),
	cmocka_unit_test(test_reap_idle_magazines),
	cmocka_unit_test(test_reap_keeps_working_set),
};

SP_TEST_MAIN(tests)
