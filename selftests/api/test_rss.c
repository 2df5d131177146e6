// SPDX-License-Identifier: MIT
/*
 * selftests/api/test_rss.c - memory goes back to the OS, and little is wasted.
 *
 * Fill a cache with about 256 MiB of objects, writing each, free them all and
 * shrink: the resident set must fall by at least 90% of what was allocated.
 * Hold a million 64-byte objects: the slabs and the resident set may exceed
 * the payload by 5% (plus a little slack for the allocator's own metadata).
 *
 * The array of pointers the test keeps is allocated and touched before the
 * first measurement so that it is not counted.  Under valgrind the loads are
 * 1/16 of the normal ones; the checks stay, but for the efficiency RSS limit,
 * where memcheck's own records would be counted (the slab bytes stay checked).
 *
 * Transparent huge pages are off for this process (PR_SET_THP_DISABLE): on
 * a kernel whose THP mode is "always" (the arm64 rig's) the first touch of
 * any 2 MiB-aligned range of anonymous memory may back all of it, so RSS
 * moved in steps of 2 MiB with where the metadata and the last chunk fell:
 * 72 MiB once for the 64 MiB payload that needs 67.7, in one of two CI
 * runs of the same code.  What is measured is segpool's pages.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/prctl.h>

#include <segpool/segpool.h>
#include "segpool_config.h"
#include "selftests/lib/harness.h"

#define MiB (1024UL * 1024)

#define CHECK(cond, fmt, ...)						\
	do {								\
		if (!(cond))						\
			fail_msg("%s: " fmt, #cond, __VA_ARGS__);	\
	} while (0)

/*
 * Under ThreadSanitizer every write to an object also writes its shadow
 * memory, which the process keeps when segpool gives the object's pages
 * back: RSS then says nothing about segpool, so the release tests skip.
 */
#ifdef CONFIG_SEGPOOL_TSAN
#define SP_TSAN_BUILD 1
#endif

static void skip_if_rss_is_not_segpools(void)
{
#ifdef SP_TSAN_BUILD
	print_message("# RSS includes TSan's shadow memory: skipped\n");
	skip();
#endif
}

/* Before main(): every fault the tests measure is a small page's. */
__attribute__((constructor)) static void thp_off(void)
{
	if (prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0))
		perror("test_rss: PR_SET_THP_DISABLE");
}

static size_t scale(size_t n)
{
	return sp_test_under_valgrind() ? n / 16 : n;
}

static void **pointer_array(size_t n)
{
	void **a = malloc(n * sizeof(*a));

	assert_non_null(a);
	memset(a, 0, n * sizeof(*a));	/* resident before we measure */
	return a;
}

/*
 * Allocate @total bytes in objects of @size from a new cache, write them,
 * free them, shrink, and check the resident set fell by 90% of @total.
 */
static void release_case(const char *name, size_t size, size_t total)
{
	size_t n = total / size, i, rss0, rss1, rss2, rss3;
	struct segpool_cache_info info;
	struct segpool_cache *c;
	void **objs = pointer_array(n);
	int released;

	c = segpool_cache_create(name, size, 0, 0, NULL);
	assert_non_null(c);
	rss0 = sp_test_rss();
	for (i = 0; i < n; i++) {
		objs[i] = segpool_cache_alloc(c, 0);
		if (!objs[i])
			fail_msg("%s: allocation %zu of %zu failed: %s", name,
				 i, n, strerror(errno));
		memset(objs[i], (int)(i & 0xff) | 1, size);
	}
	rss1 = sp_test_rss();
	info = sp_test_info(c);
	assert_int_equal(info.active_objs, n);
	for (i = 0; i < n; i += 4099)	/* spot check */
		CHECK(*(unsigned char *)objs[i] == ((i & 0xff) | 1),
		      "object %zu lost its contents", i);
	for (i = 0; i < n; i++)
		segpool_cache_free(c, objs[i]);
	rss2 = sp_test_rss();
	released = segpool_cache_shrink(c);
	rss3 = sp_test_rss();
	info = sp_test_info(c);
	print_message(
		"# %s: %zu objects of %zu: rss %zu MiB -> %zu MiB held -> %zu "
		"MiB freed -> %zu MiB shrunk (%d slabs released)\n",
		name, n, size, rss0 / MiB, rss1 / MiB, rss2 / MiB, rss3 / MiB,
		released);
	assert_int_equal(info.active_objs, 0);
	CHECK(released > 0, "%s: shrink released %d slabs", name, released);
	CHECK(rss1 >= rss0 + total * 9 / 10,
	      "%s: RSS grew only %zu KiB for %zu KiB of objects", name,
	      (rss1 - rss0) >> 10, total >> 10);
	CHECK(rss1 > rss3 && rss1 - rss3 >= total * 9 / 10,
	      "%s: RSS fell only %zd KiB of %zu KiB freed", name,
	      ((ssize_t)rss1 - (ssize_t)rss3) / 1024, total >> 10);
	CHECK(info.slab_bytes <= total / 10,
	      "%s: %llu bytes of slabs kept after the shrink", name,
	      (unsigned long long)info.slab_bytes);

	/* the cache is still good for the next round */
	objs[0] = segpool_cache_alloc(c, 0);
	assert_non_null(objs[0]);
	segpool_cache_free(c, objs[0]);
	assert_int_equal(segpool_cache_destroy(c), 0);
	free(objs);
}

static void test_release_64(void **state)
{
	(void)state;
	skip_if_rss_is_not_segpools();
	release_case("trss-64", 64, scale(256 * MiB));
}

static void test_release_4k(void **state)
{
	(void)state;
	skip_if_rss_is_not_segpools();
	release_case("trss-4k", 4096, scale(256 * MiB));
}

static void test_release_odd(void **state)
{
	(void)state;
	skip_if_rss_is_not_segpools();
	release_case("trss-200", 200, scale(128 * MiB));
}

/* Destroying a cache gives its memory back as well. */
static void test_release_by_destroy(void **state)
{
	size_t total = scale(128 * MiB), n = total / 512, i, rss1, rss2;
	struct segpool_cache *c;
	void **objs;

	(void)state;
	skip_if_rss_is_not_segpools();
	objs = pointer_array(n);
	c = segpool_cache_create("trss-destroy", 512, 0, 0, NULL);
	assert_non_null(c);
	for (i = 0; i < n; i++) {
		objs[i] = segpool_cache_alloc(c, 0);
		assert_non_null(objs[i]);
		memset(objs[i], 0x44, 512);
	}
	rss1 = sp_test_rss();
	for (i = 0; i < n; i++)
		segpool_cache_free(c, objs[i]);
	assert_int_equal(segpool_cache_destroy(c), 0);
	rss2 = sp_test_rss();
	print_message("# destroy: rss %zu MiB -> %zu MiB\n", rss1 / MiB,
		      rss2 / MiB);
	CHECK(rss1 > rss2 && rss1 - rss2 >= total * 9 / 10,
	      "RSS fell only %zd KiB of %zu KiB after destroy",
	      ((ssize_t)rss1 - (ssize_t)rss2) / 1024, total >> 10);
	free(objs);
}

static void efficiency_case(const char *what, struct segpool_cache *c,
			    size_t n)
{
	size_t payload = n * 64, i, rss0, rss1, limit, live;
	struct segpool_cache *ic = c ? c : segpool_cache_find(what);
	struct segpool_cache_info info;
	void **objs = pointer_array(n);

	assert_non_null(ic);
	rss0 = sp_test_rss();
	for (i = 0; i < n; i++) {
		objs[i] = c ? segpool_cache_alloc(c, 0) : segpool_malloc(64);
		if (!objs[i])
			fail_msg("%s: allocation %zu failed", what, i);
		memset(objs[i], 0x21, 64);
	}
	rss1 = sp_test_rss();
	limit = payload + payload / 20 + 2 * MiB;
	print_message(
		"# %s: %zu objects of 64 bytes (%zu KiB): "
		"rss grew %zd KiB (limit %zu KiB)\n",
		what, n, payload >> 10, ((ssize_t)rss1 - (ssize_t)rss0) / 1024,
		limit >> 10);

	/* a size class may hold a few objects of others besides ours */
	info = sp_test_info(ic);
	if (c)
		assert_int_equal(info.active_objs, n);
	else
		assert_true(info.active_objs >= n);
	live = info.active_objs * 64;
	assert_true(info.stride >= 64);
	print_message("# %s: stride %zu, %u objects in %u pages, %llu bytes\n",
		      what, info.stride, info.objs_per_slab,
		      info.pages_per_slab, (unsigned long long)info.slab_bytes);
	CHECK(info.slab_bytes <= live + live / 20 + 64 * 1024,
	      "%s: %llu bytes of slabs for %zu bytes of payload", what,
	      (unsigned long long)info.slab_bytes, live);
#ifndef SP_TSAN_BUILD	/* RSS there includes TSan's shadow memory */
	/*
	 * memcheck keeps a record of each object announced to it (one per
	 * allocation, about the object's size again) inside the process:
	 * there the slab bytes above are segpool's whole footprint.
	 */
	if (sp_test_under_valgrind())
		print_message("# %s: %s: RSS limit not checked\n", what,
			      "RSS includes memcheck's record of each object");
	else
		CHECK(rss1 <= rss0 + limit,
		      "%s: RSS grew %zu KiB for %zu KiB (limit %zu KiB)",
		      what, (rss1 - rss0) >> 10, payload >> 10, limit >> 10);
#endif
	for (i = 0; i < n; i++) {
		if (c)
			segpool_cache_free(c, objs[i]);
		else
			segpool_free(objs[i]);
	}
	free(objs);
}

static void test_efficiency_cache_64(void **state)
{
	struct segpool_cache *c = segpool_cache_create("trss-eff-64", 64, 0, 0,
						       NULL);

	(void)state;
	assert_non_null(c);
	efficiency_case("trss-eff-64", c, scale(1UL << 20));
	assert_int_equal(segpool_cache_destroy(c), 0);
}

static void test_efficiency_kmalloc_64(void **state)
{
	(void)state;
	efficiency_case("kmalloc-64", NULL, scale(1UL << 20));
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_release_64),
	cmocka_unit_test(test_release_4k),
	cmocka_unit_test(test_release_odd),
	cmocka_unit_test(test_release_by_destroy),
	cmocka_unit_test(test_efficiency_cache_64),
	cmocka_unit_test(test_efficiency_kmalloc_64),
};

SP_TEST_MAIN(tests)
