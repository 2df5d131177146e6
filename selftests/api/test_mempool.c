// SPDX-License-Identifier: MIT
/*
 * selftests/api/test_mempool.c - reserves that must not fail: mempools and
 * prefilled sheaves (mempool/), and the kmalloc gfp calls under them.
 *
 * The guarantee is tested where it matters: with fault injection failing
 * every cache allocation (failslab at 100%), and with the regions full (a
 * child run with SEGPOOL_REGION_SIZE=16M and a filler that takes every
 * slab).  Each element handed out is filled with a pattern of its own and
 * all are checked once all are out: an element handed out twice, or one
 * the allocator still used, would show; after the frees the reserve is
 * full again (nothing lost) and the caches destroy cleanly.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <segpool/segpool.h>

#include "selftests/lib/harness.h"

#define ELEM_SIZE	200

static void failslab_all(void)
{
	struct segpool_failslab fs = { .probability = 100, .times = -1 };

	assert_int_equal(segpool_failslab_set(&fs), 0);
}

static int teardown_failslab(void **state)
{
	(void)state;
	segpool_failslab_disable();
	return 0;
}

static struct segpool_mempool_stats pool_stats(struct segpool_mempool *p)
{
	struct segpool_mempool_stats st = { .size = sizeof(st) };

	assert_int_equal(segpool_mempool_get_stats(p, &st), 0);
	return st;
}

/*
 * Take @n elements from @pool with @gfp, all must come; fill each with its
 * own pattern, then check every one (no element twice), give them back.
 */
static void take_all(struct segpool_mempool *pool, unsigned int gfp, int n,
		     size_t size)
{
	void **e = calloc((size_t)n, sizeof(*e));

	assert_non_null(e);
	for (int i = 0; i < n; i++) {
		e[i] = segpool_mempool_alloc(pool, gfp);
		if (!e[i])
			fail_msg("reserve allocation %d of %d failed: %s", i, n,
				 strerror(errno));
		sp_test_pattern_fill(e[i], size, 1000 + (uint64_t)i);
	}
	for (int i = 0; i < n; i++)
		assert_int_equal(sp_test_pattern_check(e[i], size,
						       1000 + (uint64_t)i),
				 size);
	/* the reserve is out: without SEGPOOL_WAIT the next one fails */
	errno = 0;
	assert_null(segpool_mempool_alloc(pool, gfp & ~SEGPOOL_WAIT));
	assert_int_equal(errno, ENOMEM);
	for (int i = 0; i < n; i++)
		segpool_mempool_free(e[i], pool);
	free(e);
}

static void test_slab_pool_failslab(void **state)
{
	struct segpool_cache *c = segpool_cache_create("mp-slab", ELEM_SIZE, 0,
						       0, NULL);
	struct segpool_mempool *p;
	struct segpool_mempool_stats st;

	(void)state;
	assert_non_null(c);
	p = segpool_mempool_create_cache(16, c);
	assert_non_null(p);
	failslab_all();
	/* every cache allocation fails: the reserve serves, twice over */
	take_all(p, 0, 16, ELEM_SIZE);
	take_all(p, SEGPOOL_NOWARN, 16, ELEM_SIZE);
	st = pool_stats(p);
	assert_int_equal(st.min_nr, 16);
	assert_int_equal(st.curr_nr, 16);		/* nothing lost */
	assert_int_equal(st.outstanding, 0);
	assert_int_equal(st.reserve_allocs, 32);
	assert_int_equal(st.alloc_failed, 2);
	segpool_failslab_disable();
	segpool_mempool_destroy(p);
	assert_int_equal(sp_test_info(c).active_objs, 0);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

static void test_kmalloc_pool_failslab(void **state)
{
	struct segpool_mempool *p = segpool_mempool_create_kmalloc(8, 3000);

	(void)state;
	assert_non_null(p);
	failslab_all();
	take_all(p, 0, 8, 3000);
	/* resize under failslab: growing needs the allocator, shrinking not */
	assert_int_equal(segpool_mempool_resize(p, 12), -ENOMEM);
	assert_int_equal(pool_stats(p).min_nr, 8);
	assert_int_equal(segpool_mempool_resize(p, 4), 0);
	assert_int_equal(pool_stats(p).curr_nr, 4);
	take_all(p, 0, 4, 3000);
	segpool_failslab_disable();
	assert_int_equal(segpool_mempool_resize(p, 12), 0);
	assert_int_equal(pool_stats(p).curr_nr, 12);
	failslab_all();
	take_all(p, 0, 12, 3000);
	segpool_failslab_disable();
	segpool_mempool_destroy(p);
}

struct waiter {
	struct segpool_mempool *pool;
	void *got;
};

static void *waiter_fn(void *arg)
{
	struct waiter *w = arg;

	w->got = segpool_mempool_alloc(w->pool, SEGPOOL_WAIT);
	return NULL;
}

/* With SEGPOOL_WAIT and the reserve out, the caller waits for a free. */
static void test_wait_for_free(void **state)
{
	struct segpool_mempool *p = segpool_mempool_create_kmalloc(2, 64);
	struct waiter w = { .pool = p };
	void *a, *b;
	pthread_t t;

	(void)state;
	assert_non_null(p);
	failslab_all();
	a = segpool_mempool_alloc(p, 0);
	b = segpool_mempool_alloc(p, 0);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(pthread_create(&t, NULL, waiter_fn, &w), 0);
	while (pool_stats(p).waits == 0)
		usleep(1000);
	segpool_mempool_free(b, p);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_ptr_equal(w.got, b);		/* the element that came back */
	segpool_mempool_free(a, p);
	segpool_mempool_free(w.got, p);
	assert_int_equal(pool_stats(p).curr_nr, 2);
	segpool_failslab_disable();
	segpool_mempool_destroy(p);
}

static int custom_n;

static void *custom_alloc(unsigned int gfp, void *data)
{
	(void)data;
	if (gfp & SEGPOOL_WAIT)
		__atomic_fetch_add(&custom_n, 1, __ATOMIC_RELAXED);
	return segpool_kmalloc(32, gfp & SEGPOOL_KMALLOC_GFP_VALID);
}

static void custom_free(void *elem, void *data)
{
	(void)data;
	segpool_kfree(elem);
}

static void test_pool_args(void **state)
{
	struct segpool_mempool *p;

	(void)state;
	errno = 0;
	assert_null(segpool_mempool_create(0, custom_alloc, custom_free, NULL,
					   SEGPOOL_WAIT, SEGPOOL_NUMA_NO_NODE));
	assert_int_equal(errno, EINVAL);
	assert_null(segpool_mempool_create(1, NULL, custom_free, NULL, 0, -1));
	assert_null(segpool_mempool_create_kmalloc(1, 0));
	assert_null(segpool_mempool_create_kmalloc(1, 1 << 20));
	assert_null(segpool_mempool_create_cache(1, NULL));
	p = segpool_mempool_create(3, custom_alloc, custom_free, NULL,
				   SEGPOOL_WAIT, SEGPOOL_NUMA_NO_NODE);
	assert_non_null(p);
	assert_int_equal(custom_n, 3);		/* the reserve, with our gfp */
	errno = 0;
	assert_null(segpool_mempool_alloc(p, SEGPOOL_ZERO));
	assert_int_equal(errno, EINVAL);
	assert_null(segpool_mempool_alloc(NULL, 0));
	assert_int_equal(segpool_mempool_resize(NULL, 3), -EINVAL);
	/* the first try of an alloc goes without SEGPOOL_WAIT */
	segpool_mempool_free(segpool_mempool_alloc(p, SEGPOOL_WAIT), p);
	assert_int_equal(custom_n, 3);
	segpool_mempool_destroy(p);
	/* creation fails whole under failslab */
	failslab_all();
	errno = 0;
	assert_null(segpool_mempool_create_kmalloc(4, 100));
	assert_int_equal(errno, ENOMEM);
	segpool_failslab_disable();
}

/* --- sheaves -------------------------------------------------------------- */

static void test_sheaf_failslab(void **state)
{
	struct segpool_cache *c = segpool_cache_create("sh-fs", 96, 0, 0, NULL);
	struct segpool_sheaf *sh, *before;
	void *objs[24];

	(void)state;
	assert_non_null(c);
	sh = segpool_sheaf_prefill(c, 0, 24);
	assert_non_null(sh);
	assert_int_equal(segpool_sheaf_size(sh), 24);
	failslab_all();
	for (int i = 0; i < 24; i++) {
		objs[i] = segpool_sheaf_alloc(sh, i % 2 ? SEGPOOL_ZERO : 0);
		assert_non_null(objs[i]);
		if (i % 2)
			assert_true(sp_test_all_bytes(objs[i], 0, 96));
		sp_test_pattern_fill(objs[i], 96, (uint64_t)i);
	}
	for (int i = 0; i < 24; i++)
		assert_int_equal(
			sp_test_pattern_check(objs[i], 96, (uint64_t)i), 96);
	errno = 0;
	assert_null(segpool_sheaf_alloc(sh, 0));
	assert_int_equal(errno, ENOMEM);
	/* a refill that fails leaves the sheaf as it was */
	before = sh;
	assert_int_equal(segpool_sheaf_refill(c, 0, &sh, 10), -ENOMEM);
	assert_ptr_equal(sh, before);
	assert_int_equal(segpool_sheaf_refill(c, 0, &sh, 100), -ENOMEM);
	assert_ptr_equal(sh, before);
	assert_null(segpool_sheaf_prefill(c, 0, 4));
	segpool_failslab_disable();
	assert_int_equal(segpool_sheaf_refill(c, 0, &sh, 100), 0);
	assert_int_equal(segpool_sheaf_size(sh), 100);
	assert_int_equal(sp_test_info(c).active_objs, 124);
	segpool_cache_free_bulk(c, 24, objs);
	segpool_sheaf_return(c, sh);
	assert_int_equal(sp_test_info(c).active_objs, 0);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

static void test_sheaf_args(void **state)
{
	struct segpool_cache *c =
		segpool_cache_create("sh-arg", 64, 0, 0, NULL);
	struct segpool_cache *k = segpool_cache_create("sh-ctor", 64, 0, 0,
						       (void (*)(void *))abort);

	(void)state;
	assert_non_null(c);
	assert_non_null(k);
	errno = 0;
	assert_null(segpool_sheaf_prefill(NULL, 0, 1));
	assert_int_equal(errno, EINVAL);
	assert_null(segpool_sheaf_prefill(c, SEGPOOL_ZERO, 1));
	assert_null(segpool_sheaf_prefill(c, 0, SEGPOOL_SHEAF_MAX + 1));
	assert_int_equal(segpool_sheaf_refill(c, 0, NULL, 1), -EINVAL);
	segpool_sheaf_return(c, NULL);
	/* an empty sheaf of an unconstructed cache only: the ctor aborts */
	{
		struct segpool_sheaf *sh = segpool_sheaf_prefill(k, 0, 0);

		assert_non_null(sh);
		errno = 0;
		assert_null(segpool_sheaf_alloc(sh, SEGPOOL_ZERO));
		assert_int_equal(errno, EINVAL);
		segpool_sheaf_return(k, sh);
	}
	assert_int_equal(segpool_cache_destroy(c), 0);
	assert_int_equal(segpool_cache_destroy(k), 0);
}

static void child_sheaf_wrong_cache(void *arg)
{
	struct segpool_cache *a = segpool_cache_create("sh-a", 64, 0, 0, NULL);
	struct segpool_cache *b = segpool_cache_create("sh-b", 64, 0, 0, NULL);
	struct segpool_sheaf *sh = segpool_sheaf_prefill(a, 0, 2);

	(void)arg;
	segpool_sheaf_return(b, sh);
}

static void test_sheaf_wrong_cache(void **state)
{
	(void)state;
	assert_true(sp_test_expect_death(child_sheaf_wrong_cache, NULL,
					 "return of sheaf to the wrong cache"));
}

/* --- exhaustion: every region full ---------------------------------------- */

static const char *const env_small_region[] = {
	"SEGPOOL_REGION_SIZE=16M", "SEGPOOL_TEST_VARIANT=small_region", NULL,
};

static void test_reserves_when_exhausted(void **state)
{
	struct segpool_cache *c;
	struct segpool_mempool *p;
	struct segpool_sheaf *sh;
	struct sp_test_filler f = { 0 };
	static void *rest[1 << 16];
	void *objs[64], *e[32];
	size_t n_rest = 0;

	(void)state;
	if (!sp_test_variant()) {
		/* in a child whose regions are small enough to fill */
		assert_int_equal(sp_test_rerun(env_small_region,
					       "test_reserves_when_exhausted"),
				 0);
		return;
	}
	c = segpool_cache_create("ex-obj", 128, 0, 0, NULL);
	assert_non_null(c);
	p = segpool_mempool_create_cache(32, c);
	assert_non_null(p);
	sh = segpool_sheaf_prefill(c, 0, 64);
	assert_non_null(sh);
	assert_int_equal(sp_test_filler_fill(&f, "ex-filler",
					     SP_TEST_FILLER_SIZE),
			 ENOMEM);
	/* the regions are full: take what the cache itself still has */
	for (;;) {
		void *o;

		if (n_rest == sizeof(rest) / sizeof(rest[0]))
			fail_msg("cache ex-obj still allocates after %zu",
				 n_rest);
		errno = 0;
		o = segpool_cache_alloc(c, 0);
		if (!o)
			break;
		rest[n_rest++] = o;
	}
	assert_int_equal(errno, ENOMEM);
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 32; i++) {
			e[i] = segpool_mempool_alloc(p, SEGPOOL_WAIT);
			assert_non_null(e[i]);
			sp_test_pattern_fill(e[i], 128, 50 + (uint64_t)i);
		}
		for (int i = 0; i < 32; i++)
			assert_int_equal(sp_test_pattern_check(
						 e[i], 128, 50 + (uint64_t)i),
					 128);
		assert_null(segpool_mempool_alloc(p, 0));
		for (int i = 0; i < 32; i++)
			segpool_mempool_free(e[i], p);
	}
	for (int i = 0; i < 64; i++) {
		objs[i] = segpool_sheaf_alloc(sh, 0);
		assert_non_null(objs[i]);
		sp_test_pattern_fill(objs[i], 128, 500 + (uint64_t)i);
	}
	for (int i = 0; i < 64; i++)
		assert_int_equal(sp_test_pattern_check(objs[i], 128,
						       500 + (uint64_t)i), 128);
	assert_int_equal(pool_stats(p).curr_nr, 32);
	segpool_cache_free_bulk(c, 64, objs);
	segpool_cache_free_bulk(c, n_rest, rest);
	segpool_sheaf_return(c, sh);
	segpool_mempool_destroy(p);
	sp_test_filler_done(&f);
	assert_int_equal(sp_test_info(c).active_objs, 0);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* --- the statistics ------------------------------------------------------- */

static char *capture(int (*fn)(FILE *out, void *arg), void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(fn(f, arg), 0);
	fclose(f);
	return buf;
}

static int dump_detail(FILE *out, void *arg)
{
	(void)arg;
	return segpool_stats_dump_detail(out, NULL, 0);
}

static int dump_json(FILE *out, void *arg)
{
	(void)arg;
	return segpool_stats_json(out, 0);
}

static void test_stats_show_reserves(void **state)
{
	struct segpool_cache *c =
		segpool_cache_create("st-pool", 64, 0, 0, NULL);
	struct segpool_mempool *p;
	struct segpool_sheaf *s1, *s2;
	void *e;
	char *txt;

	(void)state;
	assert_non_null(c);
	p = segpool_mempool_create_cache(5, c);
	s1 = segpool_sheaf_prefill(c, 0, 7);
	s2 = segpool_sheaf_prefill(c, 0, 3);
	assert_non_null(p);
	assert_non_null(s1);
	assert_non_null(s2);
	e = segpool_mempool_alloc(p, 0);
	assert_non_null(e);

	txt = capture(dump_detail, NULL);
	assert_non_null(strstr(txt,
			       "mempool slab:st-pool\nmin_nr 5\ncurr_nr 5\n"
			       "outstanding 1\n"));
	assert_non_null(strstr(txt, "sheaves st-pool\nsheaves 2\nobjects 10\n"
				    "capacity 10\n"));
	free(txt);
	txt = capture(dump_json, NULL);
	assert_non_null(strstr(txt, "\"pools\": ["));
	assert_non_null(strstr(txt, "\"kind\": \"mempool\", \"name\": "
				    "\"slab:st-pool\", \"min_nr\": 5"));
	assert_non_null(strstr(txt,
			       "\"kind\": \"sheaves\", \"name\": "
			       "\"st-pool\", \"sheaves\": 2, \"objects\": 10"));
	free(txt);

	segpool_mempool_free(e, p);
	segpool_sheaf_return(c, s1);
	segpool_sheaf_return(c, s2);
	segpool_mempool_destroy(p);
	txt = capture(dump_detail, NULL);
	assert_null(strstr(txt, "st-pool\nsheaves"));
	assert_null(strstr(txt, "mempool slab:st-pool"));
	free(txt);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* --- kmalloc with gfp ----------------------------------------------------- */

static void test_kmalloc_gfp(void **state)
{
	unsigned char *p;

	(void)state;
	assert_ptr_equal(segpool_kmalloc(0, 0), SEGPOOL_ZERO_SIZE_PTR);
	segpool_kfree(SEGPOOL_ZERO_SIZE_PTR);
	segpool_kfree(NULL);
	errno = 0;
	assert_null(segpool_kmalloc(10, 1U << 7));
	assert_int_equal(errno, EINVAL);
	for (size_t size = 16; size <= (8UL << 20); size <<= 1) {
		p = segpool_kmalloc(size, SEGPOOL_ZERO);
		assert_non_null(p);
		assert_int_equal((uintptr_t)p % size, 0);
		assert_true(sp_test_all_bytes(p, 0, size));
		memset(p, 0xee, size);
		segpool_kfree(p);
		p = segpool_malloc(size);	/* the malloc family too */
		assert_non_null(p);
		assert_int_equal((uintptr_t)p % size, 0);
		segpool_free(p);
	}
	p = segpool_kmalloc_node(1000, SEGPOOL_THISNODE | SEGPOOL_ZERO,
				 segpool_numa_node_id(0));
	assert_non_null(p);
	assert_int_equal(segpool_obj_node(p), segpool_numa_node_id(0));
	segpool_kfree(p);
	errno = 0;
	assert_null(segpool_kmalloc_node(100, SEGPOOL_NOWARN, 4000));
	assert_int_equal(errno, EINVAL);
	p = segpool_krealloc(NULL, 100, SEGPOOL_ZERO);
	assert_true(sp_test_all_bytes(p, 0, 100));
	p = segpool_krealloc(p, 0, 0);
	assert_ptr_equal(p, SEGPOOL_ZERO_SIZE_PTR);
}

/* Under failslab, a plain failure returns NULL; __GFP_NOFAIL aborts. */
static void test_kmalloc_failures(void **state)
{
	(void)state;
	failslab_all();
	errno = 0;
	assert_null(segpool_kmalloc(100, SEGPOOL_NOWARN));
	assert_int_equal(errno, ENOMEM);
	errno = 0;
	assert_null(segpool_kmalloc(100, SEGPOOL_ZERO | SEGPOOL_NOWARN));
	assert_int_equal(errno, ENOMEM);
	segpool_failslab_disable();
}

static void child_nofail(void *arg)
{
	(void)arg;
	failslab_all();
	(void)!segpool_kmalloc(100, SEGPOOL_NOFAIL);
}

static void child_nofail_cache(void *arg)
{
	struct segpool_cache *c =
		segpool_cache_create("nofail-c", 64, 0, 0, NULL);

	(void)arg;
	failslab_all();
	if (!segpool_cache_alloc(c, 0))
		(void)!segpool_alloc_failed(c, 0, SEGPOOL_NOFAIL, -1);
}

static void test_nofail_aborts(void **state)
{
	(void)state;
	assert_true(sp_test_expect_death(child_nofail, NULL,
		"__GFP_NOFAIL allocation failed: kmalloc(100), node -1"));
	assert_true(sp_test_expect_death(child_nofail_cache, NULL,
		"__GFP_NOFAIL allocation failed: nofail-c, node -1"));
}

/* --- RCU free of any pointer ---------------------------------------------- */

static void test_free_rcu_any(void **state)
{
	struct segpool_cache *c =
		segpool_cache_create("rcu-any", 64, 0, 0, NULL);
	struct segpool_rcu_stats st = { .size = sizeof(st) };
	void *obj, *big, *small;

	(void)state;
	assert_non_null(c);
	obj = segpool_cache_alloc(c, 0);
	big = segpool_malloc(1 << 20);
	small = segpool_malloc(100);
	assert_non_null(obj);
	assert_non_null(big);
	assert_non_null(small);
	assert_int_equal(segpool_free_rcu(obj), 0);
	assert_int_equal(segpool_free_rcu(big), 0);
	assert_int_equal(segpool_free_rcu(small), 0);
	assert_int_equal(segpool_free_rcu(NULL), 0);
	assert_int_equal(segpool_free_rcu(SEGPOOL_ZERO_SIZE_PTR), 0);
	assert_int_equal(segpool_cache_rcu_stats(c, &st), 0);
	assert_int_equal(st.objs_pending + st.objs_freed, 1);
	assert_int_equal(segpool_rcu_barrier(), 0);
	assert_int_equal(segpool_cache_rcu_stats(c, &st), 0);
	assert_int_equal(st.objs_pending, 0);
	assert_int_equal(st.objs_freed, 1);
	/* the mapping is gone from the registry */
	errno = 0;
	assert_int_equal(segpool_usable_size(big), 0);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

struct spill_obj {
	long a;
	struct segpool_rcu_head h;
	char pad[40];
};

/*
 * With no memory for a batch (failslab fails the batch allocation too),
 * inside a read-side section: the head form still frees every object,
 * through its head; the head-less form has to refuse.
 */
static void test_free_rcu_head_spills(void **state)
{
	struct segpool_cache *c = segpool_cache_create("rcu-spill",
			sizeof(struct spill_obj), 0, 0, NULL);
	struct segpool_rcu_stats st = { .size = sizeof(st) };
	struct spill_obj *o[100], *x;

	(void)state;
	assert_non_null(c);
	for (int i = 0; i < 100; i++)
		assert_non_null(o[i] = segpool_cache_alloc(c, 0));
	x = segpool_cache_alloc(c, 0);
	assert_non_null(x);
	assert_int_equal(segpool_rcu_register_thread(), 0);
	assert_int_equal(segpool_rcu_barrier(), 0);	/* no partial batch */
	failslab_all();
	segpool_rcu_read_lock();
	for (int i = 0; i < 100; i++)
		segpool_free_rcu_head(o[i], &o[i]->h);
	errno = 0;
	assert_int_equal(segpool_free_rcu(x), -ENOMEM);
	assert_int_equal(errno, ENOMEM);
	assert_int_equal(segpool_cache_rcu_stats(c, &st), 0);
	assert_int_equal(st.objs_pending, 100);
	segpool_rcu_read_unlock();
	segpool_failslab_disable();
	assert_int_equal(segpool_rcu_barrier(), 0);
	assert_int_equal(segpool_cache_rcu_stats(c, &st), 0);
	assert_int_equal(st.objs_pending, 0);
	assert_int_equal(st.objs_freed, 100);
	segpool_cache_free(c, x);
	assert_int_equal(sp_test_info(c).active_objs, 0);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

static void child_head_outside(void *arg)
{
	struct segpool_rcu_head far;
	void *p = segpool_malloc(64);

	(void)arg;
	segpool_free_rcu_head(p, &far);
}

static void test_free_rcu_head_misuse(void **state)
{
	(void)state;
	assert_true(sp_test_expect_death(child_head_outside, NULL,
		"kfree_rcu() with an rcu_head outside the object"));
}

static void child_free_rcu_foreign(void *arg)
{
	static char not_ours[64];

	(void)arg;
	(void)segpool_free_rcu(not_ours);
}

static void test_free_rcu_foreign(void **state)
{
	(void)state;
	assert_true(sp_test_expect_death(child_free_rcu_foreign, NULL,
					 "free of foreign pointer"));
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test_teardown(test_slab_pool_failslab, teardown_failslab),
	cmocka_unit_test_teardown(test_kmalloc_pool_failslab,
				  teardown_failslab),
	cmocka_unit_test_teardown(test_wait_for_free, teardown_failslab),
	cmocka_unit_test_teardown(test_pool_args, teardown_failslab),
	cmocka_unit_test_teardown(test_sheaf_failslab, teardown_failslab),
	cmocka_unit_test(test_sheaf_args),
	cmocka_unit_test(test_sheaf_wrong_cache),
	cmocka_unit_test(test_reserves_when_exhausted),
	cmocka_unit_test(test_stats_show_reserves),
	cmocka_unit_test(test_kmalloc_gfp),
	cmocka_unit_test_teardown(test_kmalloc_failures, teardown_failslab),
	cmocka_unit_test(test_nofail_aborts),
	cmocka_unit_test(test_free_rcu_any),
	cmocka_unit_test(test_free_rcu_foreign),
	cmocka_unit_test_teardown(test_free_rcu_head_spills, teardown_failslab),
	cmocka_unit_test(test_free_rcu_head_misuse),
};

SP_TEST_MAIN(tests)
