// SPDX-License-Identifier: MIT
/*
 * selftests/unit/test_failslab.c - fault injection: SEGPOOL_FAILSLAB and the
 * API.
 *
 * Each test arms injection with exact settings, runs a sequence of
 * allocations and checks exactly which ones failed, that the statistics
 * count them, and that nothing leaked (the cache destroys cleanly).  The
 * environment form is checked by running this program again with
 * SEGPOOL_FAILSLAB set (test_env_*), where child_env_sequence does the work.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <segpool/segpool.h>

#include "failslab/failslab.h"
#include "selftests/lib/harness.h"

static int teardown_disable(void **state)
{
	(void)state;
	segpool_failslab_disable();
	return 0;
}

/*
 * Allocate @n objects of @c one by one; "F" for a failure (checked to be
 * ENOMEM), "." for a success, into @pattern.  Frees everything after.
 */
static void run_sequence(struct segpool_cache *c, unsigned int n, char *pattern)
{
	void **objs = calloc(n, sizeof(*objs));

	assert_non_null(objs);
	for (unsigned int i = 0; i < n; i++) {
		errno = 0;
		objs[i] = segpool_cache_alloc(c, 0);
		pattern[i] = objs[i] ? '.' : 'F';
		if (!objs[i])
			assert_int_equal(errno, ENOMEM);
	}
	pattern[n] = '\0';
	for (unsigned int i = 0; i < n; i++)
		segpool_cache_free(c, objs[i]);
	free(objs);
}

static void assert_no_leak(struct segpool_cache *c)
{
	assert_int_equal(sp_test_info(c).active_objs, 0);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* interval 3, times 2: the 3rd and 6th eligible calls fail, then none. */
static void test_interval_times(void **state)
{
	struct segpool_failslab fs = {
		.probability = 100, .interval = 3, .times = 2, .cache = "fs-a",
	};
	struct segpool_cache *a = segpool_cache_create("fs-a", 64, 0, 0, NULL);
	struct segpool_cache *b = segpool_cache_create("fs-b", 64, 0, 0, NULL);
	char pat[16];

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(segpool_failslab_set(&fs), 0);
	/* another cache is not eligible and does not advance the count */
	run_sequence(b, 10, pat);
	assert_string_equal(pat, "..........");
	run_sequence(a, 10, pat);
	assert_string_equal(pat, "..F..F....");

	assert_int_equal(segpool_failslab_get(&fs), 0);	/* times ran out */
	assert_int_equal(fs.times, 0);
	assert_int_equal(sp_test_info(a).alloc_failslab, 2);
	assert_int_equal(sp_test_info(a).alloc_failures, 0);
	assert_int_equal(sp_test_info(b).alloc_failslab, 0);
	assert_no_leak(a);
	assert_no_leak(b);
}

/* space: allocations succeed while more than their size is left of it. */
static void test_space(void **state)
{
	struct segpool_failslab fs = {
		.probability = 100, .interval = 1, .times = 1,
		.space = 4 * 64, .cache = "fs-space",
	};
	struct segpool_cache *c =
		segpool_cache_create("fs-space", 64, 0, 0, NULL);
	char pat[16];

	(void)state;
	assert_non_null(c);
	assert_int_equal(segpool_failslab_set(&fs), 0);
	run_sequence(c, 8, pat);
	/* 256 -> 192 -> 128 -> 64, then 64 is not more than 64: candidate */
	assert_string_equal(pat, "...F....");
	assert_int_equal(sp_test_info(c).alloc_failslab, 1);
	assert_no_leak(c);
}

/* probability: a seeded draw; the same seed fails the same calls. */
static void test_probability_seeded(void **state)
{
	enum { N = 400 };
	struct segpool_failslab fs = {
		.probability = 30, .times = -1, .cache = "fs-prob",
	};
	struct segpool_cache *c =
		segpool_cache_create("fs-prob", 32, 0, 0, NULL);
	char first[N + 1], again[N + 1], other[N + 1];
	unsigned int fails = 0;

	(void)state;
	assert_non_null(c);
	fs.seed = sp_test_seed();
	assert_int_equal(segpool_failslab_set(&fs), 0);
	run_sequence(c, N, first);
	assert_int_equal(segpool_failslab_set(&fs), 0);	/* restarts the draw */
	run_sequence(c, N, again);
	assert_string_equal(first, again);
	fs.seed ^= 0x9e3779b97f4a7c15ULL;
	assert_int_equal(segpool_failslab_set(&fs), 0);
	run_sequence(c, N, other);
	assert_string_not_equal(first, other);

	for (unsigned int i = 0; i < N; i++)
		fails += first[i] == 'F';
	/* 30% of 400: far from 0 and from 400 for any working generator */
	assert_true(fails > 40 && fails < 200);
	assert_int_equal(segpool_failslab_get(&fs), 1);
	segpool_failslab_disable();
	assert_int_equal(segpool_failslab_get(&fs), 0);
	run_sequence(c, N, again);
	assert_null(strchr(again, 'F'));
	assert_no_leak(c);
}

/* Every allocation call is covered; a bulk call is one decision. */
static void test_all_paths(void **state)
{
	struct segpool_failslab fs = { .probability = 100, .times = -1 };
	struct segpool_cache *c =
		segpool_cache_create("fs-paths", 48, 0, 0, NULL);
	void *objs[4], *p;
	char name[SEGPOOL_CACHE_NAME_MAX + 1];

	(void)state;
	assert_non_null(c);
	strcpy(fs.cache, "fs-paths");
	assert_int_equal(segpool_failslab_set(&fs), 0);
	errno = 0;
	assert_null(segpool_cache_alloc(c, 0));
	assert_int_equal(errno, ENOMEM);
	assert_null(segpool_cache_alloc(c, SEGPOOL_ZERO));
	assert_null(segpool_cache_alloc_node(c, 0, SEGPOOL_NUMA_NO_NODE));
	errno = 0;
	assert_int_equal(segpool_cache_alloc_bulk(c, 0, 4, objs), 0);
	assert_int_equal(errno, ENOMEM);
	assert_int_equal(sp_test_info(c).alloc_failslab, 4);

	/* segpool_malloc(): filter on the size class's cache name */
	p = segpool_malloc(100);
	assert_non_null(p);
	snprintf(name, sizeof(name), "kmalloc-%zu", segpool_usable_size(p));
	segpool_free(p);
	strcpy(fs.cache, name);
	assert_int_equal(segpool_failslab_set(&fs), 0);
	assert_non_null(objs[0] = segpool_cache_alloc(c, 0));
	errno = 0;
	assert_null(segpool_malloc(100));
	assert_int_equal(errno, ENOMEM);
	assert_null(segpool_calloc(1, 100));
	assert_null(segpool_aligned_alloc(16, 100));
	segpool_failslab_disable();
	p = segpool_malloc(100);
	assert_non_null(p);
	segpool_free(p);
	segpool_cache_free(c, objs[0]);
	assert_no_leak(c);
}

static void test_bad_settings(void **state)
{
	struct segpool_failslab fs = { .probability = 101 };

	(void)state;
	errno = 0;
	assert_int_equal(segpool_failslab_set(NULL), -EINVAL);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(segpool_failslab_set(&fs), -EINVAL);
	fs.probability = 10;
	fs.times = -2;
	assert_int_equal(segpool_failslab_set(&fs), -EINVAL);
	fs.times = 1;
	memset(fs.cache, 'x', sizeof(fs.cache));
	assert_int_equal(segpool_failslab_set(&fs), -EINVAL);
	assert_int_equal(segpool_failslab_get(NULL), -EINVAL);
	assert_int_equal(segpool_failslab_get(&fs), 0);
}

static void test_parse(void **state)
{
	struct segpool_failslab fs;

	(void)state;
	assert_int_equal(
		sp_failslab_parse("probability=10,interval=100,times=5,"
				  "space=0,cache=conn_cache,verbose=1,"
				  "seed=7",
				  &fs),
		0);
	assert_int_equal(fs.probability, 10);
	assert_int_equal(fs.interval, 100);
	assert_int_equal(fs.times, 5);
	assert_int_equal(fs.space, 0);
	assert_string_equal(fs.cache, "conn_cache");
	assert_int_equal(fs.verbose, 1);
	assert_int_equal(fs.seed, 7);
	assert_int_equal(sp_failslab_parse("probability=50", &fs), 0);
	assert_int_equal(fs.times, -1);		/* no limit unless given */
	assert_int_equal(fs.interval, 1);
	assert_string_equal(fs.cache, "");
	assert_int_equal(sp_failslab_parse("2,100,64,3", &fs), 0);
	assert_int_equal(fs.interval, 2);
	assert_int_equal(fs.probability, 100);
	assert_int_equal(fs.space, 64);
	assert_int_equal(fs.times, 3);

	assert_int_equal(sp_failslab_parse("probability=101", &fs), -EINVAL);
	assert_int_equal(sp_failslab_parse("probabilty=10", &fs), -EINVAL);
	assert_int_equal(sp_failslab_parse("times=-2", &fs), -EINVAL);
	assert_int_equal(sp_failslab_parse("interval=x", &fs), -EINVAL);
	assert_int_equal(sp_failslab_parse("2,100,64", &fs), -EINVAL);
	assert_int_equal(sp_failslab_parse("2,100,64,3,1", &fs), -EINVAL);
}

/* --- the environment form, in a child started with SEGPOOL_FAILSLAB ------ */

/* Run by the children of the test_env_* tests; skips elsewhere. */
static void child_env_sequence(void **state)
{
	const char *want = getenv("FAILSLAB_TEST_EXPECT");
	struct segpool_cache *c;
	uint64_t fails = 0;
	char pat[32];

	(void)state;
	if (!want)
		skip();
	for (const char *p = want; *p; p++)
		fails += *p == 'F';
	c = segpool_cache_create("fs-env", 64, 0, 0, NULL);
	assert_non_null(c);
	run_sequence(c, (unsigned int)strlen(want), pat);
	assert_string_equal(pat, want);
	assert_int_equal(sp_test_info(c).alloc_failslab, fails);
	assert_no_leak(c);
}

static void test_env_keys(void **state)
{
	static const char *const env[] = {
		"SEGPOOL_FAILSLAB=probability=100,interval=2,"
		"times=3,cache=fs-env",
		"FAILSLAB_TEST_EXPECT=.F.F.F....",
		NULL,
	};

	(void)state;
	assert_int_equal(sp_test_rerun(env, "child_env_sequence"), 0);
}

static void test_env_boot_form(void **state)
{
	/* <interval>,<probability>,<space>,<times>: every 2nd, 3 times */
	static const char *const env[] = {
		"SEGPOOL_FAILSLAB=2,100,0,3",
		"FAILSLAB_TEST_EXPECT=.F.F.F....",
		NULL,
	};

	(void)state;
	assert_int_equal(sp_test_rerun(env, "child_env_sequence"), 0);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test_teardown(test_interval_times, teardown_disable),
	cmocka_unit_test_teardown(test_space, teardown_disable),
	cmocka_unit_test_teardown(test_probability_seeded, teardown_disable),
	cmocka_unit_test_teardown(test_all_paths, teardown_disable),
	cmocka_unit_test_teardown(test_bad_settings, teardown_disable),
	cmocka_unit_test(test_parse),
	cmocka_unit_test_teardown(child_env_sequence, teardown_disable),
	cmocka_unit_test(test_env_keys),
	cmocka_unit_test(test_env_boot_form),
};

SP_TEST_MAIN(tests)
