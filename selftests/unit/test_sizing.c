// SPDX-License-Identifier: MIT
/*
 * selftests/unit/test_sizing.c - magazine capacity fits every steady
 * pattern: after a warm-up, batch and pool patterns of 10 to 4000 objects
 * leave the per-CPU layer (a trip: a slow path that goes to the depot or
 * the slabs, SP_STAT_TRIP) on fewer than 0.3% of their calls, and leave
 * the hit path at all (any slow path, swaps of loaded and previous
 * included: alloc_slowpath + free_slowpath) on fewer than 0.3% as well.
 *
 * Counts, never time: one thread pinned to one CPU, so all its calls land
 * on one slot, and the slot's own counters say what happened.  Patterns:
 *   batch N: allocate N objects, free all N (in allocation order), again;
 *   pool N:  hold N objects; free the older half and allocate as many, again;
 * each on a fresh cache of 64-byte objects, and again all on one cache one
 * after another (magazines grown for one size meet the next); and batches
 * whose size is drawn from 60 to 250 anew each round.  40 warm-up rounds
 * (the sizing grows the magazines meanwhile), then the measured rounds.  rseq
 * and lock modes (variants); the layer is the same code in both.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <segpool/segpool.h>

#include "core/core.h"
#include "percpu/pcpu.h"
#include "selftests/lib/harness.h"

static const struct sp_test_variant variants[] = {
	{ "mode=rseq", sp_test_env_percpu_rseq },
	{ "mode=lock", sp_test_env_percpu_lock },
};

#define WARM_ROUNDS	40
#define MAX_OBJS	4000

static const unsigned int sizes[] = {
	10, 20, 30, 50, 60, 80, 100, 124, 150, 200, 250, 300, 400, 500,
	700, 1000, 1500, 2000, 3000, 4000,
};

static uint64_t trips(struct segpool_cache *c)
{
	struct sp_pcpu_stats st;

	sp_pcpu_read_stats(c->pcpu, &st);
	return st.stat[SP_STAT_TRIP];
}

/* Slow paths of any kind: trips, and swaps of loaded and previous. */
static uint64_t slow(struct segpool_cache *c)
{
	struct sp_pcpu_stats st;

	sp_pcpu_read_stats(c->pcpu, &st);
	return st.stat[SP_STAT_ALLOC_SLOWPATH] + st.stat[SP_STAT_FREE_SLOWPATH];
}

static unsigned int mag_size(struct segpool_cache *c)
{
	struct sp_pcpu_stats st;

	sp_pcpu_read_stats(c->pcpu, &st);
	return st.mag_size;
}

/* Calls of @rounds rounds of pattern @pool over @n objects on @c. */
static uint64_t run(struct segpool_cache *c, void **objs, unsigned int n,
		    bool pool, unsigned int rounds)
{
	uint64_t calls = 0;

	for (unsigned int r = 0; r < rounds; r++) {
		if (pool) {
			unsigned int half = n / 2 ? n / 2 : 1;

			/* the older half goes, as many new ones come */
			for (unsigned int i = 0; i < half; i++)
				segpool_cache_free(c, objs[i]);
			memmove(objs, objs + half, (n - half) * sizeof(*objs));
			for (unsigned int i = n - half; i < n; i++) {
				objs[i] = segpool_cache_alloc(c, 0);
				assert_non_null(objs[i]);
			}
			calls += 2 * half;
		} else {
			for (unsigned int i = 0; i < n; i++) {
				objs[i] = segpool_cache_alloc(c, 0);
				assert_non_null(objs[i]);
			}
			for (unsigned int i = 0; i < n; i++)
				segpool_cache_free(c, objs[i]);
			calls += 2 * n;
		}
	}
	return calls;
}

static void sweep(bool pool, bool shared)
{
	struct segpool_cache *sc = NULL;
	void **objs = calloc(MAX_OBJS, sizeof(*objs));
	int cpu = sp_test_allowed_cpu(0);
	unsigned int bad = 0;

	assert_non_null(objs);
	if (cpu < 0 || sp_test_pin(cpu)) {
		free(objs);
		skip();
	}
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		unsigned int n = sizes[k];
		struct segpool_cache *c = sc ? sc :
			segpool_cache_create("sizing", 64, 0, 0, NULL);
		/* measured calls: about 400,000 (fewer under valgrind and the
		 * sanitizers), at least 20 rounds */
		unsigned long want = sp_test_scaled(200000, 10000);
		unsigned int rounds = want / n > 20 ? (unsigned int)(want / n) :
						      20;
		uint64_t calls, t0, t, s0, sl;

		assert_non_null(c);
		assert_non_null(c->pcpu);
		if (pool)
			for (unsigned int i = 0; i < n; i++)
				objs[i] = segpool_cache_alloc(c, 0);
		run(c, objs, n, pool, WARM_ROUNDS);
		t0 = trips(c);
		s0 = slow(c);
		calls = run(c, objs, n, pool, rounds);
		t = trips(c) - t0;
		sl = slow(c) - s0;
		printf("# %s%s %4u: %6" PRIu64 " trips in %8" PRIu64
		       " calls, %.3f%% "
		       "(slow paths %.3f%%), magazines of %u\n",
		       shared ? "one cache, " : "", pool ? "pool " : "batch", n,
		       t, calls, 100.0 * t / calls, 100.0 * sl / calls,
		       mag_size(c));
		if (t * 1000 >= calls * 3 || sl * 1000 >= calls * 3)
			bad++;
		if (pool)
			for (unsigned int i = 0; i < n; i++)
				segpool_cache_free(c, objs[i]);
		if (shared)
			sc = c;
		else
			assert_int_equal(segpool_cache_destroy(c), 0);
	}
	if (sc)
		assert_int_equal(segpool_cache_destroy(sc), 0);
	sp_test_unpin();
	free(objs);
	assert_int_equal(bad, 0);
}

static void test_batch_sweep(void **state)
{
	(void)state;
	sweep(false, false);
}

static void test_batch_sweep_one_cache(void **state)
{
	(void)state;
	sweep(false, true);
}

static void test_pool_sweep_one_cache(void **state)
{
	(void)state;
	sweep(true, true);
}

static void test_pool_sweep(void **state)
{
	(void)state;
	sweep(true, false);
}

/* Batches of 60 to 250 objects, the size drawn anew each round. */
/*
 * A fresh cache of 64-byte objects named @name, with @objs an array of
 * MAX_OBJS for its objects, and this thread pinned to one CPU, so that
 * every call lands on one slot; skips (nothing left behind) where no CPU
 * can be pinned.
 */
static struct segpool_cache *pinned_cache(const char *name, void ***objs)
{
	struct segpool_cache *c = segpool_cache_create(name, 64, 0, 0, NULL);
	int cpu = sp_test_allowed_cpu(0);

	*objs = calloc(MAX_OBJS, sizeof(**objs));
	assert_true(*objs && c && c->pcpu);
	if (cpu < 0 || sp_test_pin(cpu)) {
		free(*objs);
		segpool_cache_destroy(c);
		skip();
	}
	return c;
}

static void test_swing(void **state)
{
	void **objs;
	struct segpool_cache *c = pinned_cache("sizing_swing", &objs);
	uint64_t rnd = sp_test_seed() | 1, calls = 0, t0 = 0, s0 = 0, t, sl;

	(void)state;
	unsigned int nrounds = (unsigned int)sp_test_scaled(3000, 200);

	for (unsigned int r = 0; r < nrounds; r++) {
		unsigned int n = 60 + (unsigned int)(sp_test_rand(&rnd) % 191);

		if (r == WARM_ROUNDS) {
			t0 = trips(c);
			s0 = slow(c);
		}
		for (unsigned int i = 0; i < n; i++)
			objs[i] = segpool_cache_alloc(c, 0);
		for (unsigned int i = 0; i < n; i++)
			segpool_cache_free(c, objs[i]);
		if (r >= WARM_ROUNDS)
			calls += 2 * n;
	}
	t = trips(c) - t0;
	sl = slow(c) - s0;
	printf("# swing 60..250: %" PRIu64 " trips in %" PRIu64
	       " calls, %.3f%% "
	       "(slow paths %.3f%%), magazines of %u\n",
	       t, calls, 100.0 * t / calls, 100.0 * sl / calls, mag_size(c));
	sp_test_unpin();
	free(objs);
	assert_int_equal(segpool_cache_destroy(c), 0);
	assert_true(t * 1000 < calls * 3);
	assert_true(sl * 1000 < calls * 3);
}

/*
 * Every published top lies within its loaded magazine: at most cap rounds
 * below it.  A top one past the end guard reads (and then writes) the word
 * after the magazine, which is another magazine's or another slab's.
 */
static void check_tops(struct sp_pcpu_cache *pc, unsigned long step)
{
	for (unsigned long i = 0; i < pc->nr_slots; i++) {
		struct sp_pcpu_slot *slot = &pc->slots[i];
		void **top = SP_READ_ONCE(slot->top);
		struct sp_mag *m = slot->loaded;

		if (!m || top == sp_mag_top_none || sp_mag_top_is_busy(top))
			continue;
		if (top < sp_mag_base(m) || sp_mag_count_at(m, top) > m->cap)
			fail_msg("step %lu, slot %lu: top %p is %td rounds "
				 "into a magazine of %u",
				 step, i, (void *)top, top - sp_mag_base(m),
				 m->cap);
	}
}

/*
 * The class changes under full and empty magazines (sizing grows it on hot
 * trips and shrinks it on cold ones; a tunable lowers it): swaps then meet
 * magazines of two sizes, and the swap's centring must leave the loaded
 * magazine room for the free that caused it.  Random bursts of allocations
 * and frees, the class set anew now and then; after every call each slot's
 * top is within its magazine, and each object held keeps the words written
 * into it (an object handed out twice shows).
 */
static void test_class_changes(void **state)
{
	void **objs;
	struct segpool_cache *c = pinned_cache("sizing_classes", &objs);
	uint64_t rnd = sp_test_seed() | 1;
	unsigned long steps = sp_test_scaled(300000, 30000), step = 0;
	unsigned int held = 0, lo, hi;
	struct sp_pcpu_cache *pc;

	(void)state;
	pc = c->pcpu;
	lo = SP_READ_ONCE(pc->base_cls);
	hi = SP_READ_ONCE(pc->max_cls);
	assert_true(hi > lo);
	while (step < steps) {
		unsigned int burst =
			1 + (unsigned int)(sp_test_rand(&rnd) % 300);
		bool alloc = held == 0 ||
			     (held < MAX_OBJS && sp_test_rand(&rnd) % 2);

		if (sp_test_rand(&rnd) % 4 == 0)
			SP_WRITE_ONCE(pc->cls,
				      lo + (unsigned int)(sp_test_rand(&rnd) %
							  (hi - lo + 1)));
		for (unsigned int k = 0; k < burst; k++, step++) {
			uint64_t *o;

			if (alloc) {
				if (held == MAX_OBJS)
					break;
				o = segpool_cache_alloc(c, 0);
				assert_non_null(o);
				for (int w = 0; w < 8; w++)
					o[w] = (uintptr_t)o ^ held;
				objs[held++] = o;
			} else {
				if (held == 0)
					break;
				o = objs[--held];
				for (int w = 0; w < 8; w++)
					if (o[w] != ((uintptr_t)o ^ held))
						fail_msg("step %lu: object %p "
							 "was handed out twice",
							 step, (void *)o);
				segpool_cache_free(c, o);
			}
			check_tops(pc, step);
		}
	}
	while (held)
		segpool_cache_free(c, objs[--held]);
	printf("# %lu calls, classes %u..%u\n", step, lo, hi);
	sp_test_unpin();
	free(objs);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_batch_sweep),
	cmocka_unit_test(test_pool_sweep),
	cmocka_unit_test(test_batch_sweep_one_cache),
	cmocka_unit_test(test_pool_sweep_one_cache),
	cmocka_unit_test(test_swing),
	cmocka_unit_test(test_class_changes),
};

SP_TEST_MAIN_VARIANTS(tests, variants)
