// SPDX-License-Identifier: MIT
/*
 * selftests/unit/test_slab_scale.c - the slab layer's flush and lists at
 * scale (issue 22).
 *
 * The flush puts objects back through a prefetch pipeline with runs per
 * slab; full slabs are on no list; a slab that empties with the reserve
 * full is itself released; a fill takes a fresh tail in one step.  These
 * tests drive the slab layer directly (sp_slab_alloc_bulk(),
 * sp_slab_free_bulk(): no magazines in between) and check the counts
 * object by object, then the whole through segpool_cache_validate(),
 * which checks every slab's list against its fill level and every node
 * count against the slabs found.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <segpool/segpool.h>

#include "slab/slab.h"
#include "selftests/lib/child.h"
#include "selftests/lib/harness.h"

#define CHECK(cond, fmt, ...)						\
	do {								\
		if (!(cond))						\
			fail_msg("%s: " fmt, #cond, __VA_ARGS__);	\
	} while (0)

static struct segpool_cache *mk(const char *name, size_t size)
{
	struct segpool_cache *c = segpool_cache_create(name, size, 0, 0, NULL);

	if (!c)
		fail_msg("create(%s, %zu): %s", name, size, strerror(errno));
	return c;
}

/* Objects straight from the slabs, in chunks the size of a magazine. */
static void take(struct segpool_cache *c, size_t n, void **objs)
{
	for (size_t i = 0; i < n; i += 1000) {
		size_t k = SP_MIN((size_t)1000, n - i);

		CHECK(sp_slab_alloc_bulk(c, 0, k, objs + i) == k,
		      "bulk alloc of %zu at %zu", k, i);
	}
}

/*
 * Batches of every length from 1 up, then of 1000: the flush's look-ahead
 * is clamped near a batch's end (slab/slab.c), so short batches and every
 * tail length must leave the same counts as long ones.
 */
static void give(struct segpool_cache *c, size_t n, void **objs)
{
	size_t i = 0;

	for (size_t k = 1; k < 100 && i + k <= n; i += k, k++)
		sp_slab_free_bulk(c, k, objs + i);
	for (; i < n; i += 1000)
		sp_slab_free_bulk(c, SP_MIN((size_t)1000, n - i), objs + i);
}

static void shuffle(void **objs, size_t n, uint64_t *rng)
{
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)(sp_test_rand(rng) % (i + 1));
		void *t = objs[i];

		objs[i] = objs[j];
		objs[j] = t;
	}
}

static int by_addr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(void *const *)a;
	uintptr_t y = (uintptr_t)*(void *const *)b;

	return x < y ? -1 : x > y;
}

/*
 * Every slab holding one of @live[0..@n) counts exactly the objects of
 * @live in it (sorted by address: one slab's objects side by side), and
 * the node's counts add up.  Return the number of slabs seen.
 */
static size_t check_inuse(struct segpool_cache *c, void **live, size_t n)
{
	struct sp_cache_node *node = &c->node[0];
	size_t slabs = 0, full = 0;

	qsort(live, n, sizeof(*live), by_addr);
	for (size_t i = 0; i < n;) {
		struct sp_slab *s = sp_obj_to_slab(live[i]);
		size_t k = 0;

		assert_non_null(s);
		while (i + k < n && sp_obj_to_slab(live[i + k]) == s)
			k++;
		CHECK(s->inuse == k, "slab %p: inuse %u, %zu objects live",
		      (void *)s->base, s->inuse, k);
		if (k == c->objs_per_slab) {
			full++;
			CHECK(s->list == SP_SLAB_FULL && s->lru.next == &s->lru,
			      "full slab %p on list %u", (void *)s->base,
			      s->list);
		} else {
			CHECK(s->list == SP_SLAB_PARTIAL, "slab %p with %zu "
			      "live on list %u", (void *)s->base, k, s->list);
		}
		slabs++;
		i += k;
	}
	pthread_mutex_lock(&node->lock);
	CHECK(node->nr_full == full, "%lu full counted, %zu found",
	      node->nr_full, full);
	CHECK(node->nr_partial == slabs - full, "%lu partial counted, %zu "
	      "found", node->nr_partial, slabs - full);
	CHECK(node->active_objs == n, "%llu active, %zu live",
	      (unsigned long long)node->active_objs, n);
	pthread_mutex_unlock(&node->lock);
	return slabs;
}

/*
 * Objects of many slabs flushed in random order leave each slab's count
 * exact and every slab on the list its level calls for; in two caches, a
 * 4 KiB slab of 64-byte objects and a larger slab of 3000-byte ones.
 */
static void scattered(const char *name, size_t size, size_t n, uint64_t seed)
{
	struct segpool_cache *c = mk(name, size);
	void **objs = calloc(n, sizeof(void *));
	uint64_t rng = seed;
	size_t slabs;

	assert_non_null(objs);
	take(c, n, objs);
	/* full slabs on no list, found by validation all the same */
	check_inuse(c, objs, n);
	assert_int_equal(segpool_cache_validate(c), 0);
	shuffle(objs, n, &rng);
	give(c, n * 3 / 4, objs);
	slabs = check_inuse(c, objs + n * 3 / 4, n - n * 3 / 4);
	print_message("# %s: %zu of %zu objects live in %zu slabs of %u\n",
		      name, n - n * 3 / 4, n, slabs, c->objs_per_slab);
	assert_int_equal(segpool_cache_validate(c), 0);
	/* and back: what was freed comes out of the partial slabs again */
	take(c, n * 3 / 4, objs);
	check_inuse(c, objs, n);
	assert_int_equal(segpool_cache_validate(c), 0);
	shuffle(objs, n, &rng);
	give(c, n, objs);
	assert_int_equal(segpool_cache_validate(c), 0);
	assert_int_equal(c->node[0].active_objs, 0);
	assert_int_equal(c->node[0].nr_partial, 0);
	assert_int_equal(c->node[0].nr_full, 0);
	assert_true(segpool_cache_shrink(c) >= 0);
	assert_int_equal(segpool_cache_destroy(c), 0);
	free(objs);
}

static void test_flush_scattered(void **state)
{
	uint64_t seed = sp_test_seed();

	(void)state;
	scattered("tss-64", 64, 20000, seed);		/* wide map, 512 */
	scattered("tss-1024", 1024, 5000, seed ^ 0x1024); /* a word, 32 */
	scattered("tss-3000", 3000, 3000, seed ^ 0x5eed);
	scattered("tss-8", 8, 20000, seed ^ 0x32);	/* linked, 512 a slab */
}

/*
 * A full slab is on no list, and the free that makes it partial again
 * finds it: one object of each full slab freed, highest slab first, puts
 * every slab on the partial list.  segpool_cache_leaks() still reports
 * the objects of full slabs.
 */
static void test_full_offlist(void **state)
{
	struct segpool_cache *c = mk("tss-full", 256);
	struct sp_cache_node *n = &c->node[0];
	unsigned int per = c->objs_per_slab;
	enum { SLABS = 12 };
	void **objs = calloc((size_t)SLABS * per, sizeof(void *));
	void *one[SLABS];
	size_t on_list = 0;
	struct sp_slab *s;
	FILE *null = fopen("/dev/null", "w");

	(void)state;
	assert_non_null(objs);
	assert_non_null(null);
	take(c, (size_t)SLABS * per, objs);
	assert_int_equal(n->nr_full, SLABS);
	assert_true(sp_list_empty(&n->partial));
	assert_true(sp_list_empty(&n->full));	/* not kept outside debug */
	assert_int_equal(segpool_cache_validate(c), 0);
	assert_int_equal(segpool_cache_leaks(c, null), (long)SLABS * per);

	for (int i = 0; i < SLABS; i++)
		one[i] = objs[(size_t)(SLABS - 1 - i) * per];
	sp_slab_free_bulk(c, SLABS, one);
	assert_int_equal(n->nr_full, 0);
	assert_int_equal(n->nr_partial, SLABS);
	sp_list_for_each_entry(s, &n->partial, lru) {
		assert_int_equal(s->inuse, per - 1);
		on_list++;
	}
	assert_int_equal(on_list, SLABS);
	assert_int_equal(segpool_cache_validate(c), 0);
	assert_int_equal(segpool_cache_leaks(c, null),
			 (long)SLABS * (per - 1));

	/* full again: off the list again */
	take(c, SLABS, one);
	assert_int_equal(n->nr_full, SLABS);
	assert_true(sp_list_empty(&n->partial));
	assert_int_equal(segpool_cache_validate(c), 0);
	for (size_t i = 0; i < (size_t)SLABS * per; i++)
		if (i % per)
			sp_slab_free_bulk(c, 1, &objs[i]);
	give(c, SLABS, one);
	assert_int_equal(n->active_objs, 0);
	assert_int_equal(segpool_cache_validate(c), 0);
	fclose(null);
	assert_int_equal(segpool_cache_destroy(c), 0);
	free(objs);
}

/*
 * The empty reserve: a cache cycling through one slab's worth never
 * releases its first empty slab (nor builds a second one); a slab that
 * empties with the reserve full is itself released (its descriptor is in
 * the cache; the reserve's coldest is not), and the reserve stays at its
 * bound.
 */
static void test_reserve(void **state)
{
	struct segpool_cache *c = mk("tss-reserve", 512);
	struct sp_cache_node *n = &c->node[0];
	unsigned int per = c->objs_per_slab;
	size_t many = (size_t)per * (c->max_empty + 8);
	void **objs = calloc(many, sizeof(void *));

	(void)state;
	assert_non_null(objs);
	for (int cyc = 0; cyc < 100; cyc++) {
		take(c, per, objs);
		give(c, per, objs);
	}
	assert_int_equal(n->slabs_created, 1);
	assert_int_equal(n->slabs_released, 0);
	assert_int_equal(n->nr_empty, 1);

	take(c, many, objs);
	give(c, many, objs);
	/* the reserve filled first, then each slab emptied went at once */
	assert_true(sp_space_tag(objs[0]) != 0);
	assert_int_equal(sp_space_tag(objs[many - 1]), 0);
	CHECK(n->nr_empty <= SP_MAX(n->keep_empty, c->max_empty),
	      "%lu empty slabs kept, reserve %u", n->nr_empty,
	      SP_MAX(n->keep_empty, c->max_empty));
	CHECK(n->slabs_released + n->nr_empty == n->slabs_created,
	      "%llu built, %llu released, %lu kept",
	      (unsigned long long)n->slabs_created,
	      (unsigned long long)n->slabs_released, n->nr_empty);
	assert_int_equal(segpool_cache_validate(c), 0);
	assert_int_equal(segpool_cache_destroy(c), 0);
	free(objs);
}

/* A fill from fresh slabs hands out every object once, in address order. */
static void test_fresh_run(void **state)
{
	struct segpool_cache *c = mk("tss-fresh", 96);
	unsigned int per = c->objs_per_slab;
	size_t n = (size_t)per * 5 + 7;
	void **objs = calloc(n, sizeof(void *));

	(void)state;
	assert_non_null(objs);
	assert_int_equal(sp_slab_alloc_bulk(c, 0, n, objs), n);
	for (size_t i = 1; i < n; i++) {
		if (sp_obj_to_slab(objs[i]) != sp_obj_to_slab(objs[i - 1]))
			continue;
		CHECK((char *)objs[i] == (char *)objs[i - 1] + c->stride,
		      "object %zu at %p after %p", i, objs[i], objs[i - 1]);
	}
	check_inuse(c, objs, n);
	give(c, n, objs);
	assert_int_equal(segpool_cache_validate(c), 0);
	assert_int_equal(segpool_cache_destroy(c), 0);
	free(objs);
}

/* A double free within one flush batch: X, Y (another slab), X. */
static void die_batch_double_free(void *arg)
{
	struct segpool_cache *c = arg;
	void *objs[3], *other[64];

	if (sp_slab_alloc_bulk(c, 0, 1, &objs[0]) != 1 ||
	    sp_slab_alloc_bulk(c, 0, c->objs_per_slab, other) !=
	    c->objs_per_slab)
		return;
	objs[1] = other[c->objs_per_slab - 1];	/* the next slab's */
	objs[2] = objs[0];
	sp_slab_free_bulk(c, 3, objs);
}

/* The same through the public calls: all three go into one magazine. */
static void die_magazine_double_free(void *arg)
{
	struct segpool_cache *c = arg;
	void *x = segpool_cache_alloc(c, 0), *y = segpool_cache_alloc(c, 0);

	if (!x || !y)
		return;
	segpool_cache_free(c, x);
	segpool_cache_free(c, y);
	segpool_cache_free(c, x);
}

static void test_double_free_in_batch(void **state)
{
	struct segpool_cache *c = mk("tss-double", 1024);

	(void)state;
	assert_true(c->objs_per_slab <= 64);
	assert_true(sp_test_expect_death(die_batch_double_free, c,
					 "double free"));
	assert_true(sp_test_expect_death(die_magazine_double_free, c,
					 "double free"));
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* --- the free map (SP_CACHE_FREEMAP) -------------------------------------- */

/* How many bits of @s's map are set. */
static unsigned int map_count(struct segpool_cache *c, struct sp_slab *s)
{
	const uint64_t *map = sp_slab_freemap(c, s);
	unsigned int n = 0;

	for (unsigned int w = 0; w < sp_freemap_words(c); w++)
		n += (unsigned int)__builtin_popcountll(map[w]);
	return n;
}

/* Whether object @i's bit of @s's map is set. */
static bool map_bit(struct segpool_cache *c, struct sp_slab *s, unsigned int i)
{
	return (sp_slab_freemap(c, s)[i / 64] >> (i % 64)) & 1;
}

/* The bits of @s's map, recounted: every free object's bit, no other. */
static void check_map(struct segpool_cache *c, struct sp_slab *s)
{
	const uint64_t *map = sp_slab_freemap(c, s);

	CHECK(!s->freelist && s->fresh == c->objs_per_slab,
	      "map slab %p: list %p, fresh %u", (void *)s->base, s->freelist,
	      s->fresh);
	for (unsigned int w = 0; w < sp_freemap_words(c); w++)
		CHECK(!(map[w] & ~sp_freemap_full(c, w)), "map word %u %#llx "
		      "past %u objects", w, (unsigned long long)map[w],
		      c->objs_per_slab);
	CHECK(map_count(c, s) == c->objs_per_slab - s->inuse,
	      "map of %u set, %u in use of %u", map_count(c, s), s->inuse,
	      c->objs_per_slab);
}

/*
 * The word at @obj's link offset, free or not: opened for ASan and memcheck
 * for the one access, as the slab layer opens a link (objects taken from
 * the slab layer directly are still off limits to the tools).
 */
static uint64_t link_word(struct segpool_cache *c, void *obj)
{
	char *at = (char *)obj + c->fp_offset;
	uint64_t w;

	sp_san_link_open(c, at);
	memcpy(&w, at, sizeof(w));
	sp_san_link_close(c, at);
	return w;
}

static void plant(struct segpool_cache *c, void *obj)
{
	char *at = (char *)obj + c->fp_offset;

	sp_san_link_open(c, at);
	memset(at, 0xa5, 8);
	sp_san_link_close(c, at);
}

/*
 * Which caches keep a map: up to 64 objects a slab in one word of the
 * descriptor, up to 512 of a slab of two pages or more in the side line
 * after it; not debug, not random order.  A map slab hands its free
 * objects out lowest first (address order), its bits follow every take
 * and put, and a flush writes nothing into the objects: the bytes where a
 * link would go stay as the program left them.
 */
static void run_freemap(const char *name, size_t size, bool wide)
{
	struct segpool_cache *c = mk(name, size);
	unsigned int per = c->objs_per_slab;
	static void *objs[SP_FREEMAP_MAX_OBJS], *again[SP_FREEMAP_MAX_OBJS];
	struct sp_slab *s;

	assert_true(c->flags & SP_CACHE_FREEMAP);
	CHECK(sp_freemap_wide(c) == wide && per <= SP_FREEMAP_MAX_OBJS &&
	      (!wide || c->order > 0), "%s: %u objects a slab of order %u, "
	      "wide %d", name, per, c->order, sp_freemap_wide(c));
	assert_int_equal(sp_slab_alloc_bulk(c, 0, per, objs), per);
	s = sp_obj_to_slab(objs[0]);
	assert_non_null(s);
	for (unsigned int i = 0; i < per; i++) {
		CHECK(objs[i] == s->base + (size_t)i * c->stride,
		      "object %u at %p", i, objs[i]);
		plant(c, objs[i]);		/* where a link would go */
	}
	assert_int_equal(map_count(c, s), 0);
	check_map(c, s);
	/* every third back, in a scattered order */
	for (unsigned int i = 0; i < per; i += 3) {
		void *o = objs[(i * 7) % per];

		if (((i * 7) % per) % 3 == 0)
			sp_slab_free_bulk(c, 1, &o);
	}
	check_map(c, s);
	for (unsigned int i = 0; i < per; i++) {
		uint64_t w;

		w = link_word(c, objs[i]);
		CHECK(w == 0xa5a5a5a5a5a5a5a5ULL, "object %u: %#llx", i,
		      (unsigned long long)w);
	}
	assert_int_equal(segpool_cache_validate(c), 0);
	/* the lowest free ones come back first */
	{
		static bool was_free[SP_FREEMAP_MAX_OBJS];
		unsigned int k = map_count(c, s), j = 0;

		for (unsigned int i = 0; i < per; i++)
			was_free[i] = map_bit(c, s, i);
		assert_true(k > 0);
		assert_int_equal(sp_slab_alloc_bulk(c, 0, k, again), k);
		for (unsigned int i = 0; i < per; i++) {
			if (!was_free[i])
				continue;
			CHECK(j < k && again[j] == objs[i], "refill %u: %p, "
			      "not %p", j, j < k ? again[j] : NULL, objs[i]);
			j++;
		}
		assert_int_equal(j, k);
	}
	assert_int_equal(map_count(c, s), 0);
	check_map(c, s);
	give(c, per, objs);
	check_map(c, s);
	for (unsigned int i = 0; i < per; i++)
		assert_true(map_bit(c, s, i));
	assert_int_equal(segpool_cache_validate(c), 0);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

static void test_freemap(void **state)
{
	struct segpool_cache *l = mk("tss-list", 8);
	struct segpool_cache *r = segpool_cache_create("tss-map-rand", 64, 0,
						       SEGPOOL_FREELIST_RANDOM,
						       NULL);

	(void)state;
	assert_non_null(r);
	/* 512 a page, 1024 in two: more than a map holds */
	assert_false(l->flags & SP_CACHE_FREEMAP);
	assert_false(r->flags & SP_CACHE_FREEMAP);
	assert_int_equal(segpool_cache_destroy(r), 0);
	assert_int_equal(segpool_cache_destroy(l), 0);
	run_freemap("tss-map-word", 1024, false);
	run_freemap("tss-map-wide", 64, true);
	run_freemap("tss-map-wide96", 96, true);	/* last word partial */
}

/* A map past the slab's objects is found by segpool_cache_validate(). */
static void run_freemap_validate(size_t size)
{
	struct segpool_cache *c = mk("tss-map-bad", size);
	unsigned int last = sp_freemap_words(c) - 1;
	void *objs[4];
	uint64_t *word;
	FILE *null = fopen("/dev/null", "w");
	int fd, saved;

	assert_non_null(null);
	assert_true(c->flags & SP_CACHE_FREEMAP);
	assert_true(c->objs_per_slab % 64);	/* room past the last object */
	assert_int_equal(sp_slab_alloc_bulk(c, 0, 4, objs), 4);
	word = sp_slab_freemap(c, sp_obj_to_slab(objs[0])) + last;
	assert_int_equal(segpool_cache_validate(c), 0);
	*word |= 1ULL << (c->objs_per_slab % 64);
	fflush(stderr);
	saved = dup(2);
	fd = fileno(null);
	dup2(fd, 2);
	assert_true(segpool_cache_validate(c) >= 1);
	dup2(saved, 2);
	close(saved);
	*word &= sp_freemap_full(c, last);
	assert_int_equal(segpool_cache_validate(c), 0);
	sp_slab_free_bulk(c, 4, objs);
	fclose(null);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

static void test_freemap_validate(void **state)
{
	(void)state;
	run_freemap_validate(1024);	/* 32 objects: the descriptor's word */
	run_freemap_validate(96);	/* 341: a wide map's sixth word */
}

/*
 * Double frees of a map cache, reported with the cache name and address
 * in every per-CPU mode (the program runs once per mode): of an object
 * already back on its slab (by a shrink, so its bit is set), through the
 * public call and through the slab layer's own put (no free mark looked
 * at: the map alone); of an object of a shrunk and rebuilt slab.
 */
static void die_free_after_shrink(void *arg)
{
	struct segpool_cache *c = arg;
	void *x = segpool_cache_alloc(c, 0), *y = segpool_cache_alloc(c, 0);

	if (!x || !y)
		return;
	segpool_cache_free(c, x);
	/* x onto its slab: y keeps it */
	if (segpool_cache_shrink(c) < 0)
		return;
	segpool_cache_free(c, x);
}

static void die_slab_put_twice(void *arg)
{
	struct segpool_cache *c = arg;
	void *x;

	if (sp_slab_alloc_bulk(c, 0, 1, &x) != 1)
		return;
	sp_slab_free_bulk(c, 1, &x);
	sp_slab_free_bulk(c, 1, &x);
}

static void die_free_of_rebuilt(void *arg)
{
	struct segpool_cache *c = arg;
	void *x = segpool_cache_alloc(c, 0);

	if (!x)
		return;
	segpool_cache_free(c, x);
	if (segpool_cache_shrink(c) < 0)	/* the slab goes */
		return;
	x = segpool_cache_alloc(c, 0);		/* a slab again, maybe there */
	if (!x)
		return;
	segpool_cache_free(c, x);
	segpool_cache_free(c, x);
}

static void test_freemap_double_free(void **state)
{
	struct segpool_cache *c = mk("tss-map-df", 64);

	(void)state;
	print_message("# per-CPU mode %s\n", sp_test_variant() ?
		      sp_test_variant() : "default");
	assert_true(c->flags & SP_CACHE_FREEMAP);
	assert_true(sp_test_expect_death(die_free_after_shrink, c,
					 "double free"));
	assert_true(sp_test_expect_death(die_free_after_shrink, c,
					 "(cache tss-map-df)"));
	assert_true(sp_test_expect_death(die_slab_put_twice, c,
					 "double free"));
	assert_true(sp_test_expect_death(die_slab_put_twice, c,
					 "(cache tss-map-df)"));
	assert_true(sp_test_expect_death(die_free_of_rebuilt, c,
					 "double free"));
	assert_int_equal(segpool_cache_destroy(c), 0);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_flush_scattered),
	cmocka_unit_test(test_full_offlist),
	cmocka_unit_test(test_reserve),
	cmocka_unit_test(test_fresh_run),
	cmocka_unit_test(test_double_free_in_batch),
	cmocka_unit_test(test_freemap),
	cmocka_unit_test(test_freemap_validate),
	cmocka_unit_test(test_freemap_double_free),
};

static const struct sp_test_variant variants[] = {
	{ "mode=rseq", sp_test_env_percpu_rseq },
	{ "mode=lock", sp_test_env_percpu_lock },
	{ "mode=off", sp_test_env_percpu_off },
};

SP_TEST_MAIN_VARIANTS(tests, variants)
