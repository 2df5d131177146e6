// SPDX-License-Identifier: MIT
/*
 * selftests/unit/test_kmalloc.c - the size classes behind segpool_malloc()
 * and the classes fitted to a dominant request size (core/kmalloc.c).
 *
 * A size above 1 KiB that most of a class's slow paths ask for, and that
 * leaves at least a 32nd of the class unused, gets a class of its own:
 * the tests hold that a dominant size is fitted (the new objects' usable
 * size is the request's, rounded to 64), that the sizes between it and
 * the next smaller class follow it and the rest of the class does not,
 * that objects made before the fit keep working (free, realloc, calloc's
 * zeroing of exactly the class's bytes), that sizes with no majority, with
 * little rounding, or up to 1 KiB are never fitted, and that a process
 * makes at most SP_KMALLOC_FIT_MAX.  Each variant runs in a process of its
 * own (fitted classes are never undone); random sizes take their seed
 * from sp_test_seed(), printed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <segpool/segpool.h>

#include "core/core.h"
#include "selftests/lib/harness.h"

static const struct sp_test_variant variants[] = {
	{ "mode=rseq", sp_test_env_percpu_rseq },
	{ "mode=lock", sp_test_env_percpu_lock },
	{ "mode=off", sp_test_env_percpu_off },
};

#define MANY	3000

/* The classes made so far, table and fitted. */
static unsigned int nr_fitted(void)
{
	unsigned int n = 0;

	for (unsigned int i = SP_KMALLOC_NR_CLASSES; i < SP_KMALLOC_NR_ANY;
	     i++)
		n += sp_kmalloc_any(i) != NULL;
	return n;
}

/* Allocate @n blocks of @size into @objs, each written whole. */
static void fill(void **objs, unsigned int n, size_t size)
{
	for (unsigned int i = 0; i < n; i++) {
		objs[i] = segpool_malloc(size);
		assert_non_null(objs[i]);
		memset(objs[i], (int)(i & 0xff), size);
	}
}

static void drop(void **objs, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		segpool_free(objs[i]);
}

static void test_table_lookup(void **state)
{
	(void)state;
	/* every entry above 1 KiB names the smallest table class that fits */
	for (size_t sz = SP_KMALLOC_BY8_MAX + 1;
	     sz <= SEGPOOL_KMALLOC_MAX_CACHE_SIZE; sz += 7) {
		struct segpool_cache *c = sp_kmalloc_class(sz);

		assert_non_null(c);
		assert_int_equal(c->object_size,
				 sp_kmalloc_class_size(sp_kmalloc_index(sz)));
	}
	assert_int_equal(nr_fitted(), 0);
}

static void test_dominant_size_fitted(void **state)
{
	void **before = calloc(MANY, sizeof(void *));
	void **after = calloc(MANY, sizeof(void *));
	struct segpool_cache *fit;
	unsigned char *z;
	void *p, *q;

	(void)state;
	assert_non_null(before);
	assert_non_null(after);
	assert_null(segpool_cache_find("kmalloc-4416"));
	/* sqlite3's page-cache entry: 4368 bytes, in the 4608 class */
	fill(before, MANY, 4368);
	fit = segpool_cache_find("kmalloc-4416");
	assert_non_null(fit);
	assert_int_equal(fit->object_size, 4416);
	assert_int_equal(nr_fitted(), 1);
	assert_int_equal(segpool_usable_size(before[0]), 4608);
	fill(after, MANY, 4368);
	assert_int_equal(segpool_usable_size(after[MANY - 1]), 4416);
	/* its entries: from 4416 down to the next smaller class, no more */
	for (size_t sz = 4097; sz <= 4608; sz++) {
		p = segpool_malloc(sz);
		assert_non_null(p);
		assert_int_equal(segpool_usable_size(p),
				 sz <= 4416 ? 4416 : 4608);
		assert_int_equal((uintptr_t)p % 16, 0);
		segpool_free(p);
	}
	p = segpool_malloc(4096);
	assert_int_equal(segpool_usable_size(p), 4096);
	segpool_free(p);
	/* objects of both classes keep their bytes and move when they must */
	for (unsigned int i = 0; i < MANY; i += 97) {
		unsigned char *b = before[i];

		assert_int_equal(b[0], i & 0xff);
		assert_int_equal(b[4367], i & 0xff);
		q = segpool_realloc(before[i], 4360);	/* to the fitted one */
		assert_non_null(q);
		assert_int_equal(segpool_usable_size(q), 4416);
		assert_int_equal(((unsigned char *)q)[4359], i & 0xff);
		before[i] = q;
		q = segpool_realloc(after[i], 4200);	/* stays where it is */
		assert_ptr_equal(q, after[i]);
	}
	/* calloc clears the fitted class's bytes: all of them, no more */
	drop(after, MANY);
	z = segpool_calloc(1, 4416);	/* read whole: UBSan's object size */
	assert_non_null(z);
	assert_int_equal(segpool_usable_size(z), 4416);
	for (unsigned int i = 0; i < 4416; i++)
		if (z[i])
			fail_msg("byte %u of a zeroed block is %#x", i, z[i]);
	segpool_free(z);
	drop(before, MANY);
	free(before);
	free(after);
}

static void test_no_majority_no_fit(void **state)
{
	void **objs = calloc(MANY, sizeof(void *));
	unsigned int n0 = nr_fitted();
	uint64_t x = sp_test_seed();

	(void)state;
	assert_non_null(objs);
	/* sizes spread over the 2560 class (2049..2560): none dominates */
	for (unsigned int i = 0; i < MANY; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		objs[i] = segpool_malloc(2049 + (size_t)(x >> 33) % 512);
		assert_non_null(objs[i]);
	}
	drop(objs, MANY);
	/* a dominant size with little rounding: 4600 in the 4608 class */
	fill(objs, MANY, 4600);
	drop(objs, MANY);
	/* up to 1 KiB the table's classes stay: 1000 in the 1024 class */
	fill(objs, MANY, 1000);
	assert_int_equal(segpool_usable_size(objs[MANY - 1]), 1024);
	drop(objs, MANY);
	assert_int_equal(nr_fitted(), n0);
	free(objs);
}

static void test_fitted_at_most(void **state)
{
	void **objs = calloc(MANY, sizeof(void *));
	unsigned int made = 0;

	(void)state;
	assert_non_null(objs);
	/*
	 * One dominant size in each class from 1280 up: 40 bytes under the
	 * class's size, each a 32nd or more of it up to 1280; ten steps of
	 * 16 more in the classes above, until every slot is taken.
	 */
	for (unsigned int i = sp_kmalloc_index(1280);
	     i < SP_KMALLOC_NR_CLASSES; i++) {
		size_t cls = sp_kmalloc_class_size(i);
		size_t sz = cls - SP_MAX((size_t)48, cls / 16);
		unsigned int n = (unsigned int)SP_MIN((size_t)MANY,
						      (8UL << 20) / cls);

		fill(objs, n, sz);
		drop(objs, n);
		made = nr_fitted();
		if (made == SP_KMALLOC_FIT_MAX)
			break;
	}
	assert_int_equal(made, SP_KMALLOC_FIT_MAX);
	/* one more dominant size, in a class never fitted: no class for it */
	fill(objs, MANY / 4, 30800);
	assert_int_equal(nr_fitted(), SP_KMALLOC_FIT_MAX);
	assert_int_equal(segpool_usable_size(objs[MANY / 4 - 1]), 32768);
	drop(objs, MANY / 4);
	free(objs);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_table_lookup),
	cmocka_unit_test(test_dominant_size_fitted),
	cmocka_unit_test(test_no_majority_no_fit),
	cmocka_unit_test(test_fitted_at_most),
};

SP_TEST_MAIN_VARIANTS(tests, variants)
