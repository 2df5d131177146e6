// SPDX-License-Identifier: MIT
/*
 * selftests/unit/test_cache_api.c - bad input and semantics of the object-cache
 * API.
 *
 * Every argument segpool_cache_create() and segpool_cache_alloc() reject,
 * alignment and non-overlap of the objects handed out, constructors,
 * SEGPOOL_ZERO, the bulk calls, shrink, the accounting of
 * segpool_cache_get_info(), destroy with and without live objects, and the
 * misuse reports (freeing what segpool never handed out) as death tests.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <segpool/segpool.h>
#include "os/faultpoint.h"
#include "slab/slab.h"
#include "selftests/lib/harness.h"

/* fail with a message that says which case broke */
#define CHECK(cond, fmt, ...)						\
	do {								\
		if (!(cond))						\
			fail_msg("%s: " fmt, #cond, __VA_ARGS__);	\
	} while (0)

static struct segpool_cache *mk(const char *name, size_t size, size_t align,
				unsigned long flags, void (*ctor)(void *))
{
	struct segpool_cache *c;

	errno = 0;
	c = segpool_cache_create(name, size, align, flags, ctor);
	if (!c)
		fail_msg(
			"segpool_cache_create(\"%s\", %zu, %zu, %#lx) failed: "
			"%s",
			name, size, align, flags, strerror(errno));
	return c;
}

static void destroy_ok(struct segpool_cache *c)
{
	int r = segpool_cache_destroy(c);

	CHECK(r == 0, "destroy returned %d", r);
}

/*
 * segpool_cache_destroy() with stderr captured into @buf (what a destroy
 * with live objects prints); *@err receives errno.
 */
static int destroy_capturing(struct segpool_cache *c, int *err, char *buf,
			     size_t size)
{
	ssize_t len;
	int fds[2], saved, r;

	assert_int_equal(pipe(fds), 0);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	dup2(fds[1], STDERR_FILENO);
	close(fds[1]);
	errno = 0;
	r = segpool_cache_destroy(c);
	*err = errno;
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	len = read(fds[0], buf, size - 1);
	close(fds[0]);
	buf[len > 0 ? len : 0] = '\0';
	return r;
}

static void expect_create_fails(const char *name, size_t size, size_t align,
				unsigned long flags, int err)
{
	struct segpool_cache *c;
	int e;

	errno = 0;
	c = segpool_cache_create(name, size, align, flags, NULL);
	e = errno;
	if (c) {
		(void)segpool_cache_destroy(c);
		fail_msg(
			"create(\"%s\", %zu, %zu, %#lx) succeeded, "
			"expected errno %d",
			name ? name : "(null)", size, align, flags, err);
	}
	CHECK(e == err, "create(\"%s\", %zu, %zu, %#lx): errno %d, expected %d",
	      name ? name : "(null)", size, align, flags, e, err);
}

static void expect_create_ok(const char *name, size_t size, size_t align,
			     unsigned long flags)
{
	struct segpool_cache *c = mk(name, size, align, flags, NULL);
	void *p = segpool_cache_alloc(c, 0);

	CHECK(p != NULL, "alloc from \"%s\" failed", name);
	memset(p, 0x5a, size);
	segpool_cache_free(c, p);
	destroy_ok(c);
}

/* --- creation ------------------------------------------------------------- */

static void test_create_bad_args(void **state)
{
	char name64[SEGPOOL_CACHE_NAME_MAX + 2];
	char name63[SEGPOOL_CACHE_NAME_MAX + 1];

	(void)state;
	memset(name64, 'n', SEGPOOL_CACHE_NAME_MAX + 1);
	name64[SEGPOOL_CACHE_NAME_MAX + 1] = '\0';
	memset(name63, 'm', SEGPOOL_CACHE_NAME_MAX);
	name63[SEGPOOL_CACHE_NAME_MAX] = '\0';
	assert_int_equal(strlen(name64), 64);
	assert_int_equal(strlen(name63), 63);

	expect_create_fails(NULL, 64, 0, 0, EINVAL);
	expect_create_fails("", 64, 0, 0, EINVAL);
	expect_create_fails(name64, 64, 0, 0, EINVAL);
	expect_create_fails("has space", 64, 0, 0, EINVAL);
	expect_create_fails(" lead", 64, 0, 0, EINVAL);
	expect_create_fails("trail ", 64, 0, 0, EINVAL);
	expect_create_fails("tab\there", 64, 0, 0, EINVAL);
	expect_create_fails("newline\n", 64, 0, 0, EINVAL);
	expect_create_fails("tca-size0", 0, 0, 0, EINVAL);
	expect_create_fails("tca-big", SEGPOOL_CACHE_MAX_SIZE + 1, 0, 0,
			    EINVAL);
	expect_create_fails("tca-huge", SIZE_MAX, 0, 0, EINVAL);
	expect_create_fails("tca-align3", 64, 3, 0, EINVAL);
	expect_create_fails("tca-align24", 64, 24, 0, EINVAL);
	expect_create_fails("tca-align8192", 64, 8192, 0, EINVAL);
	expect_create_fails("tca-alignmax", 64, SIZE_MAX, 0, EINVAL);
	expect_create_fails("tca-flag12", 64, 0, 1UL << 12, EINVAL);
	expect_create_fails("tca-flag63", 64, 0, 1UL << 63, EINVAL);
	expect_create_fails("tca-flagall", 64, 0, ~SEGPOOL_CACHE_FLAGS_VALID,
			    EINVAL);
	expect_create_fails("tca-flagmix", 64, 0,
			    SEGPOOL_HWCACHE_ALIGN | (1UL << 20), EINVAL);

	/* the limits themselves are accepted */
	expect_create_ok(name63, 64, 0, 0);
	expect_create_ok("x", 1, 0, 0);
	expect_create_ok("tca-maxsize", SEGPOOL_CACHE_MAX_SIZE, 0, 0);
	expect_create_ok("tca-maxalign", 64, SEGPOOL_CACHE_MAX_ALIGN, 0);
	expect_create_ok("tca-align1", 3, 1, 0);
	expect_create_ok("tca-align2", 3, 2, 0);
	expect_create_ok("tca-align4", 3, 4, 0);
	expect_create_ok("tca-allflags", 64, 0,
			 SEGPOOL_HWCACHE_ALIGN | SEGPOOL_PANIC |
			 SEGPOOL_TYPESAFE_BY_RCU);
}

static void test_create_copies_name(void **state)
{
	char buf[32] = "tca-copy";
	struct segpool_cache *c;
	const char *n;

	(void)state;
	c = mk(buf, 100, 0, 0, NULL);
	memcpy(buf, "XXXXXXXX", 8);
	n = segpool_cache_name(c);
	assert_non_null(n);
	assert_string_equal(n, "tca-copy");
	assert_int_equal(segpool_cache_object_size(c), 100);

	errno = 0;
	assert_null(segpool_cache_name(NULL));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(segpool_cache_object_size(NULL), 0);
	assert_int_equal(errno, EINVAL);
	destroy_ok(c);
}

static void test_duplicate_name(void **state)
{
	struct segpool_cache *a, *b;
	void *p;

	(void)state;
	a = mk("tca-dup", 64, 0, 0, NULL);
	expect_create_fails("tca-dup", 64, 0, 0, EEXIST);
	expect_create_fails("tca-dup", 128, 16, SEGPOOL_HWCACHE_ALIGN, EEXIST);
	/* the first one is unharmed */
	p = segpool_cache_alloc(a, 0);
	assert_non_null(p);
	segpool_cache_free(a, p);
	destroy_ok(a);

	/* the name is free again once the cache is gone */
	b = mk("tca-dup", 256, 0, 0, NULL);
	assert_int_equal(segpool_cache_object_size(b), 256);
	destroy_ok(b);

	/* the kmalloc size classes are live caches too (a lookup makes one) */
	p = segpool_malloc(64);
	assert_non_null(p);
	assert_non_null(segpool_cache_find("kmalloc-64"));
	expect_create_fails("kmalloc-64", 64, 0, 0, EEXIST);
	segpool_free(p);
}

/* --- allocation arguments ------------------------------------------------- */

static void nop_ctor(void *obj)
{
	memset(obj, 0x11, 8);
}

static void test_alloc_bad_args(void **state)
{
	struct segpool_cache_info info;
	struct segpool_cache *c, *cc;
	void *p, *objs[4];
	int e, nodes, i;

	(void)state;
	c = mk("tca-args", 48, 0, 0, NULL);
	cc = mk("tca-args-ctor", 48, 0, 0, nop_ctor);

	errno = 0;
	p = segpool_cache_alloc(NULL, 0);
	e = errno;
	assert_null(p);
	assert_int_equal(e, EINVAL);

	errno = 0;
	p = segpool_cache_alloc(c, 1U << 5);
	e = errno;
	assert_null(p);
	assert_int_equal(e, EINVAL);

	errno = 0;
	p = segpool_cache_alloc(c, ~0U);
	e = errno;
	assert_null(p);
	assert_int_equal(e, EINVAL);

	errno = 0;
	p = segpool_cache_alloc(cc, SEGPOOL_ZERO);
	e = errno;
	assert_null(p);
	assert_int_equal(e, EINVAL);

	errno = 0;
	p = segpool_cache_alloc_node(cc, SEGPOOL_ZERO, SEGPOOL_NUMA_NO_NODE);
	e = errno;
	assert_null(p);
	assert_int_equal(e, EINVAL);

	errno = 0;
	p = segpool_cache_alloc_node(NULL, 0, SEGPOOL_NUMA_NO_NODE);
	e = errno;
	assert_null(p);
	assert_int_equal(e, EINVAL);

	{
		static const int bogus[] = { 4096, -2, INT_MAX, INT_MIN, 1024 };

		for (i = 0; i < (int)(sizeof(bogus) / sizeof(bogus[0])); i++) {
			errno = 0;
			p = segpool_cache_alloc_node(c, 0, bogus[i]);
			e = errno;
			CHECK(p == NULL, "alloc_node(node %d) succeeded",
			      bogus[i]);
			CHECK(e == EINVAL, "alloc_node(node %d): errno %d",
			      bogus[i], e);
		}
	}

	errno = 0;
	assert_int_equal(segpool_cache_alloc_bulk(NULL, 0, 4, objs), 0);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(segpool_cache_alloc_bulk(c, 1U << 7, 4, objs), 0);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(segpool_cache_alloc_bulk(cc, SEGPOOL_ZERO, 4, objs),
			 0);
	assert_int_equal(errno, EINVAL);

	/* nothing of the above allocated anything or counted as ENOMEM */
	info = sp_test_info(c);
	assert_int_equal(info.active_objs, 0);
	assert_int_equal(info.allocs, 0);
	assert_int_equal(info.alloc_failures, 0);
	info = sp_test_info(cc);
	assert_int_equal(info.active_objs, 0);
	assert_int_equal(info.alloc_failures, 0);

	/* "any node" works */
	p = segpool_cache_alloc_node(c, 0, SEGPOOL_NUMA_NO_NODE);
	assert_non_null(p);
	memset(p, 1, 48);
	segpool_cache_free(c, p);
	p = segpool_cache_alloc_node(cc, 0, SEGPOOL_NUMA_NO_NODE);
	assert_non_null(p);
	assert_int_equal(((unsigned char *)p)[0], 0x11);
	segpool_cache_free(cc, p);

	/* every real node works, and THISNODE lands there */
	nodes = segpool_numa_node_count();
	assert_true(nodes >= 1);
	for (i = 0; i < nodes; i++) {
		int node = segpool_numa_node_id(i);

		assert_true(node >= 0);
		p = segpool_cache_alloc_node(c, SEGPOOL_THISNODE, node);
		CHECK(p != NULL, "alloc_node(THISNODE, %d) failed", node);
		CHECK(segpool_obj_node(p) == node, "object on node %d, not %d",
		      segpool_obj_node(p), node);
		segpool_cache_free(c, p);
		p = segpool_cache_alloc_node(c, 0, node);
		CHECK(p != NULL, "alloc_node(0, %d) failed", node);
		segpool_cache_free(c, p);
	}
	errno = 0;
	assert_int_equal(segpool_numa_node_id(nodes), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(segpool_numa_node_id(-1), -EINVAL);
	assert_int_equal(errno, EINVAL);

	/* NULL frees are no-ops */
	segpool_cache_free(c, NULL);
	segpool_cache_free(cc, NULL);
	objs[0] = objs[1] = objs[2] = objs[3] = NULL;
	segpool_cache_free_bulk(c, 4, objs);
	segpool_cache_free_bulk(c, 0, NULL);

	/* get_info and shrink argument checks */
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	errno = 0;
	assert_int_equal(segpool_cache_get_info(NULL, &info), -EINVAL);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(segpool_cache_get_info(c, NULL), -EINVAL);
	info.size = sizeof(info.size);
	errno = 0;
	assert_int_equal(segpool_cache_get_info(c, &info), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(segpool_cache_shrink(NULL), -EINVAL);
	assert_int_equal(errno, EINVAL);

	info = sp_test_info(c);
	assert_int_equal(info.active_objs, 0);
	destroy_ok(c);
	destroy_ok(cc);
}

/* --- alignment and placement ---------------------------------------------- */

static void byte_ctor(void *obj)
{
	*(unsigned char *)obj = 0xc7;
}

static void test_alignment(void **state)
{
	static const size_t sizes[] = { 1, 7, 8, 24, 100, 4096, 65536, 200000 };
	static const size_t aligns[] = { 0, 1, 8, 16, 64, 256, 4096 };
	void **objs = calloc(600, sizeof(void *));
	size_t si, ai;
	int variant;

	(void)state;
	assert_non_null(objs);
	for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
	for (ai = 0; ai < sizeof(aligns) / sizeof(aligns[0]); ai++)
	for (variant = 0; variant < 4; variant++) {
		size_t size = sizes[si], align = aligns[ai], want, n, k;
		unsigned long flags = 0;
		void (*ctor)(void *) = NULL;
		struct segpool_cache_info info;
		struct segpool_cache *c;
		char name[64];

		if (variant == 1)
			flags = SEGPOOL_HWCACHE_ALIGN;
		else if (variant == 2)
			ctor = byte_ctor;
		else if (variant == 3)
			flags = SEGPOOL_TYPESAFE_BY_RCU;
		want = align > 8 ? align : 8;
		if (flags & SEGPOOL_HWCACHE_ALIGN && want < SEGPOOL_CACHE_LINE)
			want = SEGPOOL_CACHE_LINE;

		snprintf(name, sizeof(name), "tca-al-%zu-%zu-%d", size, align,
			 variant);
		c = mk(name, size, align, flags, ctor);
		info = sp_test_info(c);
		CHECK(info.object_size == size, "%s: object_size %zu", name,
		      info.object_size);
		CHECK(info.align >= want &&
			      (info.align & (info.align - 1)) == 0,
		      "%s: info.align %zu, want >= %zu", name, info.align,
		      want);
		CHECK(info.stride >= size, "%s: stride %zu", name, info.stride);
		CHECK(info.objs_per_slab >= 1, "%s: objs_per_slab %u", name,
		      info.objs_per_slab);
		CHECK((uint64_t)info.pages_per_slab * SP_PAGE_SIZE >=
		      (uint64_t)info.objs_per_slab * size,
		      "%s: %u objs of %zu in %u pages", name,
		      info.objs_per_slab, size, info.pages_per_slab);

		/* two slabs and a bit, within reason */
		n = 2 * (size_t)info.objs_per_slab + 1;
		if (n > 600)
			n = 600;
		if (size >= 65536 && n > 8)
			n = 8;
		for (k = 0; k < n; k++) {
			unsigned char *p = segpool_cache_alloc(c, 0);

			CHECK(p != NULL, "%s: alloc %zu failed", name, k);
			CHECK((uintptr_t)p % want == 0,
			      "%s: object %p not aligned to %zu", name,
			      (void *)p, want);
			CHECK((uintptr_t)p % info.align == 0,
			      "%s: object %p not aligned to info.align %zu",
			      name, (void *)p, info.align);
			if (ctor)
				CHECK(p[0] == 0xc7,
				      "%s: object %p not constructed", name,
				      (void *)p);
			memset(p, 0xa5, size);
			if (ctor)
				p[0] = 0xc7;
			objs[k] = p;
		}
		info = sp_test_info(c);
		CHECK(info.active_objs == n, "%s: active %llu, held %zu", name,
		      (unsigned long long)info.active_objs, n);
		for (k = 0; k < n; k++)
			segpool_cache_free(c, objs[k]);
		destroy_ok(c);
	}
	free(objs);
}

struct range {
	uintptr_t start;
	size_t len;
	unsigned int cache, idx;
};

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static unsigned char pat_byte(unsigned int cache, unsigned int idx, size_t off)
{
	return (unsigned char)(cache * 131 + idx * 31 + off * 7 + 1);
}

static void test_no_overlap(void **state)
{
	static const size_t sizes[] = { 1, 8, 24, 100, 520, 4096, 65536 };
	enum { NCACHES = sizeof(sizes) / sizeof(sizes[0]), PER = 700 };
	struct segpool_cache *caches[NCACHES];
	struct range *r = calloc((size_t)NCACHES * PER, sizeof(*r));
	size_t nr = 0, i, off;
	unsigned int ci, k;

	(void)state;
	assert_non_null(r);
	for (ci = 0; ci < NCACHES; ci++) {
		char name[32];

		snprintf(name, sizeof(name), "tca-ov-%zu", sizes[ci]);
		caches[ci] = mk(name, sizes[ci], 0, 0, NULL);
	}
	/* interleave the caches so their slabs interleave in the region */
	for (k = 0; k < PER; k++) {
		for (ci = 0; ci < NCACHES; ci++) {
			unsigned char *p;

			if (sizes[ci] >= 65536 && k >= 40)
				continue;
			p = segpool_cache_alloc(caches[ci], 0);
			CHECK(p != NULL, "alloc %u of cache %u failed", k, ci);
			for (off = 0; off < sizes[ci]; off++)
				p[off] = pat_byte(ci, k, off);
			r[nr].start = (uintptr_t)p;
			r[nr].len = sizes[ci];
			r[nr].cache = ci;
			r[nr].idx = k;
			nr++;
		}
	}
	/* every byte written is still there */
	for (i = 0; i < nr; i++) {
		const unsigned char *p = (const unsigned char *)r[i].start;

		for (off = 0; off < r[i].len; off++)
			CHECK(p[off] == pat_byte(r[i].cache, r[i].idx, off),
			      "object %p (cache %u, #%u) byte %zu overwritten",
			      (const void *)p, r[i].cache, r[i].idx, off);
	}
	/* and no two live objects share a byte */
	qsort(r, nr, sizeof(*r), range_cmp);
	for (i = 1; i < nr; i++)
		CHECK(r[i - 1].start + r[i - 1].len <= r[i].start,
		      "objects %#lx+%zu and %#lx overlap",
		      (unsigned long)r[i - 1].start, r[i - 1].len,
		      (unsigned long)r[i].start);
	for (i = 0; i < nr; i++)
		segpool_cache_free(caches[r[i].cache], (void *)r[i].start);
	for (ci = 0; ci < NCACHES; ci++) {
		struct segpool_cache_info info;

		info = sp_test_info(caches[ci]);
		assert_int_equal(info.active_objs, 0);
		destroy_ok(caches[ci]);
	}
	free(r);
}

/* --- constructors --------------------------------------------------------- */

#define CTOR_BYTE 0xc5
#define CTOR_LOG_MAX (1 << 18)

static size_t ctor_size;
static unsigned long ctor_calls;
static uintptr_t *ctor_log;

static void fill_ctor(void *obj)
{
	memset(obj, CTOR_BYTE, ctor_size);
	if (ctor_calls < CTOR_LOG_MAX)
		ctor_log[ctor_calls] = (uintptr_t)obj;
	ctor_calls++;
}

static int uptr_cmp(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

/* Every object in @objs was passed to the ctor (sorts the log once). */
static void check_all_constructed(void **objs, size_t nobj, const char *what)
{
	size_t n = ctor_calls < CTOR_LOG_MAX ? ctor_calls : CTOR_LOG_MAX;
	size_t k;

	if (ctor_calls > CTOR_LOG_MAX)
		return;		/* log overflowed: cannot tell */
	qsort(ctor_log, n, sizeof(*ctor_log), uptr_cmp);
	for (k = 0; k < nobj; k++) {
		uintptr_t key = (uintptr_t)objs[k];

		CHECK(bsearch(&key, ctor_log, n, sizeof(*ctor_log),
			      uptr_cmp) != NULL,
		      "%s: object %p never passed to the ctor", what, objs[k]);
	}
}

static void ctor_check_counts(struct segpool_cache *c, const char *what)
{
	struct segpool_cache_info info;

	info = sp_test_info(c);
	CHECK(info.total_objs == info.total_slabs * info.objs_per_slab,
	      "%s: total_objs %llu, %llu slabs of %u", what,
	      (unsigned long long)info.total_objs,
	      (unsigned long long)info.total_slabs, info.objs_per_slab);
	CHECK(ctor_calls == info.slabs_created * info.objs_per_slab,
	      "%s: %lu ctor calls, %llu slabs created of %u objects", what,
	      ctor_calls, (unsigned long long)info.slabs_created,
	      info.objs_per_slab);
	if (info.slabs_released == 0)
		CHECK(ctor_calls == info.total_objs,
		      "%s: %lu ctor calls, total_objs %llu", what, ctor_calls,
		      (unsigned long long)info.total_objs);
}

static void test_ctor(void **state)
{
	static const size_t sizes[] = { 8, 40, 64, 100, 4096, 30000 };
	size_t si;

	(void)state;
	ctor_log = calloc(CTOR_LOG_MAX, sizeof(*ctor_log));
	assert_non_null(ctor_log);
	for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		struct segpool_cache_info info;
		struct segpool_cache *c;
		unsigned char *first;
		void **objs;
		size_t n, k;
		char name[32];
		int round;

		ctor_size = sizes[si];
		ctor_calls = 0;
		snprintf(name, sizeof(name), "tca-ctor-%zu", ctor_size);
		c = mk(name, ctor_size, 0, 0, fill_ctor);
		assert_int_equal(ctor_calls, 0);	/* no slab yet */

		first = segpool_cache_alloc(c, 0);
		assert_non_null(first);
		CHECK(ctor_calls >= 1, "%s: no ctor call", name);
		CHECK(sp_test_all_bytes(first, CTOR_BYTE, ctor_size),
		      "%s: first object not constructed", name);
		ctor_check_counts(c, name);

		info = sp_test_info(c);
		n = 2 * (size_t)info.objs_per_slab + 3;
		if (n > 20000)
			n = 20000;
		objs = calloc(n, sizeof(*objs));
		assert_non_null(objs);
		for (round = 0; round < 3; round++) {
			for (k = 0; k < n; k++) {
				objs[k] = segpool_cache_alloc(c, 0);
				CHECK(objs[k] != NULL, "%s: alloc failed",
				      name);
				CHECK(sp_test_all_bytes(objs[k], CTOR_BYTE,
							ctor_size),
				      "%s round %d: "
				      "object %zu (%p) not in constructed "
				      "state",
				      name, round, k, objs[k]);
			}
			check_all_constructed(objs, n, name);
			ctor_check_counts(c, name);
			for (k = 0; k < n; k++)
				segpool_cache_free(c, objs[k]);
		}
		/* after a shrink, new slabs are constructed again */
		segpool_cache_free(c, first);
		assert_true(segpool_cache_shrink(c) > 0);
		for (k = 0; k < n; k++) {
			objs[k] = segpool_cache_alloc(c, 0);
			CHECK(objs[k] != NULL, "%s: alloc after shrink failed",
			      name);
			CHECK(sp_test_all_bytes(objs[k], CTOR_BYTE, ctor_size),
			      "%s: object %p not constructed after shrink",
			      name, objs[k]);
		}
		ctor_check_counts(c, name);
		for (k = 0; k < n; k++)
			segpool_cache_free(c, objs[k]);
		free(objs);
		destroy_ok(c);
	}
	free(ctor_log);
	ctor_log = NULL;
}

static void test_zero(void **state)
{
	static const size_t sizes[] = { 8, 200, 4096, 65536 };
	size_t si;

	(void)state;
	for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		size_t size = sizes[si], n = size >= 65536 ? 24 : 500, k;
		struct segpool_cache *c;
		void **objs = calloc(n, sizeof(*objs));
		char name[32];
		int round;

		assert_non_null(objs);
		snprintf(name, sizeof(name), "tca-zero-%zu", size);
		c = mk(name, size, 0, 0, NULL);
		for (round = 0; round < 4; round++) {
			/* dirty everything ... */
			for (k = 0; k < n; k++) {
				objs[k] = segpool_cache_alloc(c, 0);
				assert_non_null(objs[k]);
				memset(objs[k], 0xee, size);
			}
			for (k = 0; k < n; k++)
				segpool_cache_free(c, objs[k]);
			/* ... and ask for zeroed memory, by each route */
			if (round == 0) {
				for (k = 0; k < n; k++)
					objs[k] = segpool_cache_alloc(
						c, SEGPOOL_ZERO);
			} else if (round == 1) {
				for (k = 0; k < n; k++)
					objs[k] = segpool_cache_alloc_node(
						c, SEGPOOL_ZERO,
						SEGPOOL_NUMA_NO_NODE);
			} else if (round == 2) {
				assert_int_equal(segpool_cache_alloc_bulk(
					c, SEGPOOL_ZERO, n, objs), (int)n);
			} else {
				for (k = 0; k < n; k++)
					objs[k] = segpool_cache_alloc(
						c, SEGPOOL_ZERO |
							   SEGPOOL_THISNODE);
			}
			for (k = 0; k < n; k++) {
				CHECK(objs[k] != NULL,
				      "%s round %d: alloc failed", name, round);
				CHECK(sp_test_all_bytes(objs[k], 0, size),
				      "%s round %d: object %p not zeroed", name,
				      round, objs[k]);
			}
			segpool_cache_free_bulk(c, n, objs);
		}
		destroy_ok(c);
		free(objs);
	}
}

struct tca_aligned {
	int a;
	_Alignas(64) char line[10];
	long b;
};

static void test_cache_macro(void **state)
{
	struct segpool_cache_info info;
	struct segpool_cache *c;
	struct tca_aligned *o[50];
	int i;

	(void)state;
	c = SEGPOOL_CACHE(tca_aligned, 0);
	assert_non_null(c);
	assert_string_equal(segpool_cache_name(c), "tca_aligned");
	assert_int_equal(segpool_cache_object_size(c),
			 sizeof(struct tca_aligned));
	info = sp_test_info(c);
	assert_true(info.align >= 64);
	for (i = 0; i < 50; i++) {
		o[i] = segpool_cache_alloc(c, 0);
		assert_non_null(o[i]);
		assert_int_equal((uintptr_t)o[i] % _Alignof(struct tca_aligned),
				 0);
		assert_int_equal((uintptr_t)o[i]->line % 64, 0);
		memset(o[i], i, sizeof(*o[i]));
	}
	for (i = 0; i < 50; i++) {
		assert_true(sp_test_all_bytes(o[i], (unsigned char)i,
					      sizeof(*o[i])));
		segpool_cache_free(c, o[i]);
	}
	/* a second cache of the same type is a duplicate name */
	expect_create_fails("tca_aligned", sizeof(struct tca_aligned), 64, 0,
			    EEXIST);
	destroy_ok(c);
}

/* --- bulk ----------------------------------------------------------------- */

static int ptr_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (void *const *)a,
		  y = (uintptr_t) * (void *const *)b;

	return x < y ? -1 : x > y;
}

static void check_distinct(void **objs, size_t n, size_t size)
{
	void **s = malloc(n * sizeof(*s));
	size_t i;

	assert_non_null(s);
	memcpy(s, objs, n * sizeof(*s));
	qsort(s, n, sizeof(*s), ptr_cmp);
	for (i = 0; i < n; i++) {
		CHECK(s[i] != NULL, "bulk entry %zu is NULL", i);
		if (i)
			CHECK((uintptr_t)s[i - 1] + size <= (uintptr_t)s[i],
			      "bulk objects %p and %p overlap", s[i - 1], s[i]);
	}
	free(s);
}

static void test_bulk(void **state)
{
	struct segpool_cache_info info;
	struct segpool_cache *c;
	void **objs, *keep[2];
	size_t n, k;
	int r;

	(void)state;
	c = mk("tca-bulk", 72, 0, 0, NULL);
	info = sp_test_info(c);
	n = 3 * (size_t)info.objs_per_slab + 7;
	if (n < 100)
		n = 100;
	objs = calloc(n + 1, sizeof(*objs));
	assert_non_null(objs);

	objs[0] = (void *)0x1;
	assert_int_equal(segpool_cache_alloc_bulk(c, 0, 0, objs), 0);
	assert_ptr_equal(objs[0], (void *)0x1);
	info = sp_test_info(c);
	assert_int_equal(info.active_objs, 0);

	r = segpool_cache_alloc_bulk(c, 0, 100, objs);
	assert_int_equal(r, 100);
	check_distinct(objs, 100, 72);
	for (k = 0; k < 100; k++) {
		assert_int_equal((uintptr_t)objs[k] % 8, 0);
		memset(objs[k], (int)k, 72);
	}
	info = sp_test_info(c);
	assert_int_equal(info.active_objs, 100);
	assert_int_equal(info.allocs, 100);
	for (k = 0; k < 100; k++)
		assert_true(sp_test_all_bytes(objs[k], (unsigned char)k, 72));
	/* NULL entries are skipped */
	keep[0] = objs[3];
	keep[1] = objs[50];
	objs[3] = NULL;
	objs[50] = NULL;
	segpool_cache_free_bulk(c, 100, objs);
	info = sp_test_info(c);
	assert_int_equal(info.active_objs, 2);
	assert_int_equal(info.frees, 98);
	assert_true(sp_test_all_bytes(keep[0], 3, 72));
	assert_true(sp_test_all_bytes(keep[1], 50, 72));

	/* a bulk spanning several slabs */
	r = segpool_cache_alloc_bulk(c, 0, n, objs);
	assert_int_equal(r, (int)n);
	objs[n] = keep[0];
	check_distinct(objs, n + 1, 72);
	objs[n] = keep[1];
	check_distinct(objs, n + 1, 72);
	info = sp_test_info(c);
	assert_int_equal(info.active_objs, n + 2);
	assert_true(info.total_slabs >= 3);
	segpool_cache_free_bulk(c, n, objs);
	info = sp_test_info(c);
	assert_int_equal(info.active_objs, 2);
	{
		char msg[1024];
		int e;

		assert_int_equal(destroy_capturing(c, &e, msg, sizeof(msg)),
				 -EBUSY);
		assert_int_equal(e, EBUSY);
	}
	segpool_cache_free_bulk(c, 2, keep);
	info = sp_test_info(c);
	assert_int_equal(info.active_objs, 0);
	assert_int_equal(info.allocs, info.frees);
	destroy_ok(c);
	free(objs);
}

/*
 * A filler (struct sp_test_filler) takes all the memory the region has
 * committed while the commit fault is armed, so that the next slab needs a
 * new commit.  The fault tests run with sp_test_faults_teardown().
 */
static void filler_fill(struct sp_test_filler *f, const char *name)
{
	assert_int_equal(sp_test_filler_fill(f, name, SP_TEST_FILLER_SIZE),
			 ENOMEM);
}

/*
 * Free the filler's newest objects, a slab's worth (@per) at a time, and
 * shrink after each batch, until at least @slabs slabs went back to the OS
 * (or nothing is left).  Which objects share a slab depends on how the
 * per-CPU magazines handed them out, so the count is measured, not
 * assumed.  Return: the slabs released.
 */
static int filler_give_back(struct sp_test_filler *f, int slabs, size_t per)
{
	int released = 0, r;

	while (released < slabs && f->n) {
		for (size_t k = 0; k < per && f->n; k++)
			segpool_cache_free(f->c, f->objs[--f->n]);
		r = segpool_cache_shrink(f->c);
		assert_true(r >= 0);
		released += r;
	}
	return released;
}

static void test_bulk_all_or_nothing(void **state)
{
	struct segpool_cache_info info;
	struct segpool_cache *c;
	struct sp_test_filler f;
	void *objs[64];
	void *sentinel = (void *)&objs;
	unsigned long hits;
	size_t k;
	int r, e;

	(void)state;
	c = mk("tca-bulkfail", 128, 0, 0, NULL);
	for (k = 0; k < 64; k++)
		objs[k] = sentinel;
	hits = sp_fault_hits(SP_FAULT_COMMIT);
	sp_fault_arm(SP_FAULT_COMMIT, 0, 1000000);
	filler_fill(&f, "tca-bulkfail-filler");
	errno = 0;
	r = segpool_cache_alloc_bulk(c, 0, 16, objs);
	e = errno;
	CHECK(r == 0, "bulk alloc with no memory left returned %d", r);
	assert_int_equal(e, ENOMEM);
	for (k = 0; k < 64; k++)
		CHECK(objs[k] == sentinel || objs[k] == NULL,
		      "failed bulk left an object in slot %zu", k);
	info = sp_test_info(c);
	assert_int_equal(info.active_objs, 0);
	assert_true(info.alloc_failures >= 1);

	/* single allocation fails the same way */
	errno = 0;
	objs[0] = segpool_cache_alloc(c, 0);
	e = errno;
	assert_null(objs[0]);
	assert_int_equal(e, ENOMEM);
	sp_fault_arm(SP_FAULT_COMMIT, 0, 0);
	assert_true(sp_fault_hits(SP_FAULT_COMMIT) > hits);

	/* disarmed, the cache works */
	r = segpool_cache_alloc_bulk(c, 0, 64, objs);
	assert_int_equal(r, 64);
	check_distinct(objs, 64, 128);
	info = sp_test_info(c);
	assert_int_equal(info.active_objs, 64);
	segpool_cache_free_bulk(c, 64, objs);
	info = sp_test_info(c);
	assert_int_equal(info.active_objs, 0);
	destroy_ok(c);
	sp_test_filler_done(&f);
}

/*
 * A bulk that needs more slabs than there is memory for returns nothing,
 * also when the first slabs could be had: the objects already taken are
 * put back.
 */
static void test_bulk_partial_failure(void **state)
{
	struct segpool_cache_info info;
	struct segpool_cache *c;
	struct sp_test_filler f;
	void **objs;
	size_t n, per;
	int r, e, freed_slabs;

	(void)state;
	/* the same geometry as the filler: one-page slabs */
	c = mk("tca-bulkpart", SP_TEST_FILLER_SIZE, 0, 0, NULL);
	info = sp_test_info(c);
	per = info.objs_per_slab;
	sp_fault_arm(SP_FAULT_COMMIT, 0, 1000000);
	filler_fill(&f, "tca-bulkpart-filler");
	/* room for a few slabs, no more */
	freed_slabs = filler_give_back(&f, 2, per);
	CHECK(freed_slabs >= 2, "shrink of the filler released %d slabs",
	      freed_slabs);
	n = ((size_t)freed_slabs + 3) * per;
	objs = calloc(n, sizeof(*objs));
	assert_non_null(objs);
	errno = 0;
	r = segpool_cache_alloc_bulk(c, 0, n, objs);
	e = errno;
	sp_fault_arm(SP_FAULT_COMMIT, 0, 0);
	CHECK(r == 0,
	      "bulk of %zu objects with room for about %d slabs of %zu "
	      "returned %d",
	      n, freed_slabs, per, r);
	assert_int_equal(e, ENOMEM);
	info = sp_test_info(c);
	CHECK(info.active_objs == 0,
	      "failed bulk of %zu left %llu objects allocated", n,
	      (unsigned long long)info.active_objs);
	CHECK(info.allocs == info.frees,
	      "allocs %llu, frees %llu after a failed bulk",
	      (unsigned long long)info.allocs, (unsigned long long)info.frees);
	CHECK(info.total_slabs >= 1, "%s", "the slabs the bulk got are gone");

	/* and the memory it took is usable */
	r = segpool_cache_alloc_bulk(c, 0, per, objs);
	assert_int_equal(r, (int)per);
	check_distinct(objs, per, SP_TEST_FILLER_SIZE);
	segpool_cache_free_bulk(c, per, objs);
	info = sp_test_info(c);
	assert_int_equal(info.active_objs, 0);
	destroy_ok(c);
	sp_test_filler_done(&f);
	free(objs);
}

/* --- shrink, info, destroy ------------------------------------------------ */

static void test_shrink(void **state)
{
	struct segpool_cache_info info, before;
	struct segpool_cache *c;
	void **objs;
	size_t n, k;
	int r;

	(void)state;
	c = mk("tca-shrink", 512, 0, 0, NULL);
	assert_int_equal(segpool_cache_shrink(c), 0);	/* nothing yet */
	info = sp_test_info(c);
	n = 3 * (size_t)info.objs_per_slab + 5;
	objs = calloc(n, sizeof(*objs));
	assert_non_null(objs);
	for (k = 0; k < n; k++) {
		objs[k] = segpool_cache_alloc(c, 0);
		assert_non_null(objs[k]);
		memset(objs[k], 0x77, 512);
	}
	for (k = 0; k < n; k++)
		segpool_cache_free(c, objs[k]);
	before = sp_test_info(c);
	assert_int_equal(before.active_objs, 0);
	assert_true(before.total_slabs >= 4);
	r = segpool_cache_shrink(c);
	info = sp_test_info(c);
	CHECK(r == (int)before.total_slabs,
	      "shrink released %d of %llu empty slabs", r,
	      (unsigned long long)before.total_slabs);
	assert_int_equal(info.total_slabs, 0);
	assert_int_equal(info.active_slabs, 0);
	assert_int_equal(info.total_objs, 0);
	assert_int_equal(info.slab_bytes, 0);
	assert_int_equal(info.slabs_released,
			 before.slabs_released + (unsigned)r);
	assert_int_equal(segpool_cache_shrink(c), 0);

	/* one live object keeps exactly its slab */
	for (k = 0; k < n; k++) {
		objs[k] = segpool_cache_alloc(c, 0);
		assert_non_null(objs[k]);
	}
	for (k = 1; k < n; k++)
		segpool_cache_free(c, objs[k]);
	r = segpool_cache_shrink(c);
	assert_true(r >= 3);
	info = sp_test_info(c);
	assert_int_equal(info.active_objs, 1);
	assert_int_equal(info.total_slabs, 1);
	assert_int_equal(info.active_slabs, 1);
	memset(objs[0], 0x12, 512);	/* still ours */
	segpool_cache_free(c, objs[0]);
	assert_int_equal(segpool_cache_shrink(c), 1);
	info = sp_test_info(c);
	assert_int_equal(info.total_slabs, 0);

	/* and the cache still works */
	objs[0] = segpool_cache_alloc(c, 0);
	assert_non_null(objs[0]);
	segpool_cache_free(c, objs[0]);
	destroy_ok(c);
	free(objs);
}

static void check_info_consistent(const struct segpool_cache_info *i,
				  size_t held, uint64_t allocs, uint64_t frees)
{
	CHECK(i->active_objs == held, "active_objs %llu, test holds %zu",
	      (unsigned long long)i->active_objs, held);
	CHECK(i->allocs == allocs, "allocs %llu, test made %llu",
	      (unsigned long long)i->allocs, (unsigned long long)allocs);
	CHECK(i->frees == frees, "frees %llu, test made %llu",
	      (unsigned long long)i->frees, (unsigned long long)frees);
	CHECK(i->total_objs == i->total_slabs * i->objs_per_slab,
	      "total_objs %llu != %llu slabs * %u",
	      (unsigned long long)i->total_objs,
	      (unsigned long long)i->total_slabs, i->objs_per_slab);
	CHECK(i->slab_bytes ==
		      i->total_slabs * i->pages_per_slab * SP_PAGE_SIZE,
	      "slab_bytes %llu for %llu slabs of %u pages",
	      (unsigned long long)i->slab_bytes,
	      (unsigned long long)i->total_slabs, i->pages_per_slab);
	CHECK(i->active_slabs <= i->total_slabs, "active_slabs %llu > %llu",
	      (unsigned long long)i->active_slabs,
	      (unsigned long long)i->total_slabs);
	CHECK(i->active_objs <= i->active_slabs * i->objs_per_slab,
	      "%llu objects in %llu active slabs",
	      (unsigned long long)i->active_objs,
	      (unsigned long long)i->active_slabs);
	CHECK(i->total_slabs == i->slabs_created - i->slabs_released,
	      "%llu slabs, %llu created, %llu released",
	      (unsigned long long)i->total_slabs,
	      (unsigned long long)i->slabs_created,
	      (unsigned long long)i->slabs_released);
	CHECK(i->alloc_failures == 0, "alloc_failures %llu",
	      (unsigned long long)i->alloc_failures);
}

static void test_info_counts(void **state)
{
	enum { CAP = 1500, STEPS = 6000 };
	struct segpool_cache_info info;
	struct segpool_cache *c;
	uint64_t rng = sp_test_seed() ^ 0x1f0;
	uint64_t allocs = 0, frees = 0;
	void **held = calloc(CAP, sizeof(void *));
	size_t nheld = 0;
	int step;

	(void)state;
	assert_non_null(held);
	c = mk("tca-info", 96, 32, 0, NULL);
	info = sp_test_info(c);
	assert_int_equal(info.size, sizeof(info));
	assert_int_equal(info.object_size, 96);
	assert_true(info.align >= 32);
	check_info_consistent(&info, 0, 0, 0);
	for (step = 0; step < STEPS; step++) {
		uint64_t x = sp_test_rand(&rng);
		/* drift up for the first half, down for the second */
		bool up = step < STEPS / 2 ? (x % 100) < 60 : (x % 100) < 40;

		if ((up && nheld < CAP) || nheld == 0) {
			held[nheld] = segpool_cache_alloc(c, 0);
			assert_non_null(held[nheld]);
			nheld++;
			allocs++;
		} else {
			size_t i = (size_t)(x >> 32) % nheld;

			segpool_cache_free(c, held[i]);
			held[i] = held[--nheld];
			frees++;
		}
		if (step % 7 == 0) {
			info = sp_test_info(c);
			check_info_consistent(&info, nheld, allocs, frees);
		}
	}
	while (nheld) {
		segpool_cache_free(c, held[--nheld]);
		frees++;
	}
	info = sp_test_info(c);
	check_info_consistent(&info, 0, allocs, frees);
	destroy_ok(c);
	free(held);
}

static void test_destroy(void **state)
{
	struct segpool_cache_info info;
	struct segpool_cache *c;
	unsigned char *objs[37];
	char buf[4096];
	int r, e, i;

	(void)state;
	/* NULL and empty caches */
	errno = 0;
	assert_int_equal(segpool_cache_destroy(NULL), 0);
	c = mk("tca-destroy-empty", 64, 0, 0, NULL);
	destroy_ok(c);
	c = mk("tca-destroy-used", 64, 0, 0, NULL);
	for (i = 0; i < 100; i++) {
		void *p = segpool_cache_alloc(c, 0);

		assert_non_null(p);
		segpool_cache_free(c, p);
	}
	destroy_ok(c);

	/* live objects: -EBUSY, a message, and the cache stays usable */
	c = mk("tca-destroy-busy", 300, 0, 0, NULL);
	for (i = 0; i < 37; i++) {
		objs[i] = segpool_cache_alloc(c, 0);
		assert_non_null(objs[i]);
		memset(objs[i], i, 300);
	}
	r = destroy_capturing(c, &e, buf, sizeof(buf));
	assert_int_equal(r, -EBUSY);
	assert_int_equal(e, EBUSY);
	CHECK(strstr(buf, "tca-destroy-busy") != NULL,
	      "destroy message lacks the cache name: \"%s\"", buf);
	CHECK(strstr(buf, "37") != NULL,
	      "destroy message lacks the live count 37: \"%s\"", buf);

	for (i = 0; i < 37; i++) {
		assert_true(sp_test_all_bytes(objs[i], (unsigned char)i, 300));
		memset(objs[i], 0x5a, 300);
	}
	info = sp_test_info(c);
	assert_int_equal(info.active_objs, 37);
	assert_int_equal(info.total_slabs, info.active_slabs);
	/* still a live cache: the name is taken, allocation works */
	expect_create_fails("tca-destroy-busy", 300, 0, 0, EEXIST);
	{
		void *p = segpool_cache_alloc(c, 0);

		assert_non_null(p);
		segpool_cache_free(c, p);
	}
	for (i = 0; i < 37; i++)
		segpool_cache_free(c, objs[i]);
	destroy_ok(c);
	c = mk("tca-destroy-busy", 300, 0, 0, NULL);
	destroy_ok(c);
}

/* --- misuse is reported and aborts ---------------------------------------- */

struct two_caches {
	struct segpool_cache *a, *b;
};

static void die_free_stack(void *arg)
{
	char buf[256];

	memset(buf, 1, sizeof(buf));
	segpool_cache_free(arg, buf + 64);
}

static void die_free_heap(void *arg)
{
	void *p = malloc(64);

	memset(p, 1, 64);
	segpool_cache_free(arg, p);
}

static void die_free_interior(void *arg)
{
	char *p = segpool_cache_alloc(arg, 0);

	if (!p)
		return;
	segpool_cache_free(arg, p + 8);
}

static void die_wrong_cache(void *arg)
{
	struct two_caches *t = arg;
	void *p = segpool_cache_alloc(t->a, 0);

	if (!p)
		return;
	segpool_cache_free(t->b, p);
}

static void die_double_free(void *arg)
{
	void *p = segpool_cache_alloc(arg, 0);

	if (!p)
		return;
	segpool_cache_free(arg, p);
	segpool_cache_free(arg, p);
}

static void die_double_free_later(void *arg)
{
	void *p = segpool_cache_alloc(arg, 0);
	void *q = segpool_cache_alloc(arg, 0);

	if (!p || !q)
		return;
	segpool_cache_free(arg, q);
	segpool_cache_free(arg, p);
	segpool_cache_free(arg, p);
}

/*
 * A double free after a shrink (issue 23, item 2): the freed objects' slab
 * is released and a new one carved at the same address; the old pointer
 * lies in the new slab's never-used part.  The second free must still be
 * caught, at the call.
 */
/*
 * Old objects: 200, or two one-page slabs' worth when that is more, so
 * that they span several slabs whatever the page: a shrink gives their
 * pages back, and the magazines the next allocations need may take one of
 * them (a whole 64 KiB page holds all 200 of 48 bytes).  Fresh objects:
 * 2000, or four one-page slabs of the smallest objects (8 bytes) when that
 * is more (8192 of them a slab at 64 KiB a page), so that several new
 * slabs are carved whatever the page.
 */
#define AT_LEAST(v, min)	((v) > (min) ? (v) : (min))
#define OLD_MAX			AT_LEAST(2 * SP_PAGE_SIZE / 8, 200)
#define FRESH_MAX		AT_LEAST(4 * SP_PAGE_SIZE / 8, 2000)

static void die_double_free_after_shrink(void *arg)
{
	static void *old[OLD_MAX], *fresh[FRESH_MAX];
	struct segpool_cache *c = arg;
	size_t nold = 2 * (size_t)c->objs_per_slab;
	struct sp_slab *last = NULL;
	void *victim = NULL;
	size_t n;

	nold = nold < 200 ? 200 : nold > OLD_MAX ? OLD_MAX : nold;
	/*
	 * No decay pass between the shrink and the new slabs: one that
	 * purged the released pages made other free blocks the region's
	 * first choice, and no new slab stood where the old ones were (seen
	 * once in 2048 objects of 256 bytes on the slow emulated arm64
	 * machine, whose passes fall anywhere in the test).
	 */
	if (segpool_set_decay_ms(SEGPOOL_DECAY_NEVER))
		return;
	for (size_t i = 0; i < nold; i++)
		if (!(old[i] = segpool_cache_alloc(arg, 0)))
			return;
	for (size_t i = 0; i < nold; i++)
		segpool_cache_free(arg, old[i]);
	segpool_cache_shrink(arg);
	/* allocate until a new slab stands where an old object was */
	for (n = 0; n < FRESH_MAX && !victim; n++) {
		struct sp_slab *s;

		fresh[n] = segpool_cache_alloc(arg, 0);
		if (!fresh[n])
			return;
		s = sp_obj_to_slab(fresh[n]);
		/* a slab with no victim at its first object has none later */
		if (s == last)
			continue;
		last = s;
		for (size_t i = 0; i < nold && !victim; i++) {
			bool out = false;

			if (sp_obj_to_slab(old[i]) != s)
				continue;
			for (size_t j = 0; j <= n && !out; j++)
				out = fresh[j] == old[i];
			if (!out)
				/* not handed out again */
				victim = old[i];
		}
	}
	if (!victim) {
		struct sp_slab *now = sp_obj_to_slab(old[0]);

		fprintf(stderr, "no new slab where the old ones were (%zu "
			"objects; the first old one's page now in %s)\n", n,
			now ? now->cache->name : "no slab");
		return;
	}
	segpool_cache_free(arg, victim);
	fprintf(stderr, "second free of %p accepted\n", victim);
}

static void die_panic_create(void *arg)
{
	struct segpool_cache *c;

	(void)arg;
	c = segpool_cache_create("tca-panic", 0, 0, SEGPOOL_PANIC, NULL);
	if (c)
		fprintf(stderr, "created a cache of size 0\n");
}

/* The permissions of the mapping holding @addr in /proc/self/maps. */
static void map_perms(const void *addr, char perms[5])
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long lo, hi;
	char line[512];

	assert_non_null(f);
	strcpy(perms, "none");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3 &&
		    (uintptr_t)addr >= lo && (uintptr_t)addr < hi)
			break;
		else
			strcpy(perms, "none");
	fclose(f);
}

/*
 * Control-block colouring (Documentation/internals/design.md, "Control
 * blocks"): sixteen caches made in a row put their control blocks, and
 * (with a per-CPU layer) their slot arrays, at sixteen page offsets, so
 * their hot lines do not share an L1 set; destroyed, each leaves its
 * first page behind read-only, the block where it was.
 */
static void test_control_block_colors(void **state)
{
	enum { N = 16 };
	struct segpool_cache *c[N];
	uintptr_t ctl[N], slots[N];
	char perms[5];

	(void)state;
	for (int i = 0; i < N; i++) {
		char name[32];

		snprintf(name, sizeof(name), "tca-color-%d", i);
		c[i] = mk(name, 64, 0, 0, NULL);
		ctl[i] = (uintptr_t)c[i] & (SP_PAGE_SIZE - 1);
		slots[i] = (uintptr_t)c[i]->slots & (SP_PAGE_SIZE - 1);
		CHECK(ctl[i] % SP_CACHE_CTL_ALIGN == 0,
		      "cache %d at page offset %#lx, not a multiple of %lu",
		      i, (unsigned long)ctl[i],
		      (unsigned long)SP_CACHE_CTL_ALIGN);
		/* the tombstone's fields in the first page */
		CHECK(ctl[i] + SP_CACHE_TOMB_END <= SP_PAGE_SIZE,
		      "cache %d: magic to name cross its first page", i);
	}
	for (int i = 0; i < N; i++)
		for (int j = 0; j < i; j++) {
			CHECK(ctl[i] != ctl[j],
			      "caches %d and %d share page offset %#lx", j, i,
			      (unsigned long)ctl[i]);
			if (c[i]->pcpu)
				CHECK(slots[i] != slots[j],
				      "slot arrays %d and %d share page "
				      "offset %#lx", j, i,
				      (unsigned long)slots[i]);
		}
	/* every one still works, then stands as a read-only tombstone */
	for (int i = 0; i < N; i++) {
		void *p = segpool_cache_alloc(c[i], 0);

		assert_non_null(p);
		memset(p, 0x5a, 64);
		segpool_cache_free(c[i], p);
	}
	for (int i = 0; i < N; i++) {
		char name[32];

		destroy_ok(c[i]);
		map_perms(c[i], perms);
		CHECK(!strncmp(perms, "r-", 2),
		      "destroyed cache %d's page is %s, not read-only", i,
		      perms);
		snprintf(name, sizeof(name), "tca-color-%d", i);
		CHECK(c[i]->magic == SP_CACHE_DEAD_MAGIC &&
		      !strcmp(c[i]->name, name),
		      "tombstone %d: magic %#x, name \"%s\"", i,
		      c[i]->magic, c[i]->name);
	}
}

static void test_death_foreign(void **state)
{
	struct segpool_cache *c = mk("tca-victim", 64, 0, 0, NULL);

	(void)state;
	assert_true(sp_test_expect_death(die_free_stack, c, "foreign"));
	assert_true(sp_test_expect_death(die_free_stack, c, "segpool:"));
	assert_true(sp_test_expect_death(die_free_stack, c, "tca-victim"));
	assert_true(sp_test_expect_death(die_free_heap, c, "foreign"));
	assert_true(sp_test_expect_death(die_free_heap, c, "tca-victim"));
	destroy_ok(c);
}

static void test_death_interior(void **state)
{
	struct segpool_cache *c = mk("tca-interior", 64, 0, 0, NULL);

	(void)state;
	assert_true(sp_test_expect_death(die_free_interior, c, "interior"));
	assert_true(sp_test_expect_death(die_free_interior, c, "tca-interior"));
	destroy_ok(c);
}

static void test_death_wrong_cache(void **state)
{
	struct two_caches t;

	(void)state;
	t.a = mk("tca-wrong-a", 64, 0, 0, NULL);
	t.b = mk("tca-wrong-b", 64, 0, 0, NULL);
	assert_true(sp_test_expect_death(die_wrong_cache, &t, "wrong cache"));
	destroy_ok(t.b);
	t.b = mk("tca-wrong-c", 256, 0, SEGPOOL_HWCACHE_ALIGN, NULL);
	assert_true(sp_test_expect_death(die_wrong_cache, &t, "wrong cache"));
	destroy_ok(t.a);
	destroy_ok(t.b);
}

static void test_death_double_free(void **state)
{
	struct segpool_cache *c = mk("tca-double", 64, 0, 0, NULL);

	(void)state;
	assert_true(sp_test_expect_death(die_double_free, c, "double free"));
	assert_true(sp_test_expect_death(die_double_free, c, "tca-double"));
	destroy_ok(c);
}

static void test_death_double_free_later(void **state)
{
	struct segpool_cache *c = mk("tca-double2", 4096, 0, 0, NULL);

	(void)state;
	assert_true(sp_test_expect_death(die_double_free_later, c,
					 "double free"));
	destroy_ok(c);
}

static void test_death_double_free_after_shrink(void **state)
{
	/* the last three: slabs of several pages, reached lazily (16
	 * objects; objects across page ends; 33 objects) */
	static const struct { size_t size; unsigned long flags; } kinds[] = {
		{ 48, 0 }, { 8, 0 }, { 48, SEGPOOL_FREELIST_RANDOM },
		{ 256, SEGPOOL_HWCACHE_ALIGN }, { 1024, 0 }, { 3000, 0 },
		{ 1928, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		struct segpool_cache *c = mk("tca-double-shrink", kinds[i].size,
					     0, kinds[i].flags, NULL);

		print_message("# %zu B, flags %#lx\n", kinds[i].size,
			      kinds[i].flags);
		assert_true(sp_test_expect_death(die_double_free_after_shrink,
						 c, "double free"));
		destroy_ok(c);
	}
}

/*
 * Lazily reached slabs (slab/slab.c, SP_CACHE_REACH): a slab of several
 * pages writes only the pages its hand-outs reach.  Objects a little
 * under half a page (1928 bytes with 4 KiB pages) make a slab of 16 pages
 * or more (slab/geometry.c: 33 in 64 KiB), the first fill takes two: of
 * the slab's pages, the first is written (the objects and the free marks
 * of the objects that start there) and the rest stay untouched.
 */
#define REACH_SIZE	(SP_PAGE_SIZE / 2 - 120)

static bool thp_always(void)
{
	char buf[128] = "";
	int fd = open("/sys/kernel/mm/transparent_hugepage/enabled",
		      O_RDONLY);

	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);

		buf[n > 0 ? n : 0] = 0;
		close(fd);
	}
	return strstr(buf, "[always]") != NULL;
}

/* Kernel pages of [@at, @at + @bytes) resident, or -1 if not all mapped. */
static long resident_pages(const void *at, size_t bytes)
{
	size_t kpage = (size_t)sysconf(_SC_PAGESIZE), nk = bytes / kpage;
	unsigned char *vec = calloc(nk, 1);
	long res = 0;

	assert_non_null(vec);
	if (mincore((void *)at, bytes, vec))
		res = -1;
	for (size_t i = 0; res >= 0 && i < nk; i++)
		res += vec[i] & 1;
	free(vec);
	return res;
}

/*
 * Whether @p's 2 MiB lies in a huge page: every kernel page of it is
 * resident, which page by page faults after a purge (this test's
 * segpool_shrink_all()) would not make of a region's free memory.
 */
static bool in_huge_page(const void *p)
{
	size_t huge = 2UL << 20;
	const void *at = (const void *)((uintptr_t)p & ~(uintptr_t)(huge - 1));
	bool all = resident_pages(at, huge) ==
		   (long)(huge / (size_t)sysconf(_SC_PAGESIZE));

	if (all)
		print_message("# its 2 MiB all resident: a huge page\n");
	return all;
}

static void test_reach_lazy_pages(void **state)
{
	/* free pages the earlier tests left go back first: the slab's
	 * pages are then untouched ones, whatever block it gets */
	struct segpool_cache *c = (segpool_shrink_all(),
				   mk("tca-reach", REACH_SIZE, 0, 0, NULL));
	/* mincore() counts the kernel's pages, maybe smaller than ours */
	size_t kpage = (size_t)sysconf(_SC_PAGESIZE);
	size_t bytes = (size_t)c->slab_mask + 1;
	char *p = segpool_cache_alloc(c, 0), *base;
	long res;

	(void)state;
	assert_true(c->flags & SP_CACHE_REACH);
	assert_true(bytes >= 8 * SP_PAGE_SIZE);
	assert_non_null(p);
	/* the cache's first object is one of its first slab's first two */
	base = (char *)((uintptr_t)p & ~(uintptr_t)c->slab_mask);
	assert_true(p - base < 2 * (ptrdiff_t)c->stride);
	memset(p, 0x5a, REACH_SIZE);
	res = resident_pages(base, bytes);
	assert_true(res >= 0);
	print_message("# %zu KiB of the slab's %zu KiB resident\n",
		      (size_t)res * kpage >> 10, bytes >> 10);
	/*
	 * With every page backed by one huge page, all are resident: where
	 * the kernel's mode is always, or where the region advised its
	 * memory (SEGPOOL_THP=auto does once memory stayed committed 2 s,
	 * which a slow run of this program, under TSan say, passes before
	 * this test) and khugepaged collapsed the 2 MiB around the slab
	 * (it takes a range with a single page present; a TSan run of CI
	 * met it once).  Under valgrind this program finds the whole slab
	 * resident (a program of its own under valgrind finds one page, as
	 * here without it; the cause is not known): the bound is checked in
	 * every other run.
	 */
	if (!thp_always() && !(SP_VALGRIND && sp_on_valgrind) &&
	    !in_huge_page(base))
		assert_true((size_t)res * kpage <= 2 * SP_PAGE_SIZE);
	segpool_cache_free(c, p);
	destroy_ok(c);
}

/* The last object of @p's slab. */
static void *sp_last_obj(const struct segpool_cache *c, void *p)
{
	char *base = (char *)((uintptr_t)p & ~(uintptr_t)c->slab_mask);

	return base + (size_t)(c->objs_per_slab - 1) * c->stride;
}

/* free an object of the first slab's never reached part: caught */
static void die_free_unreached(void *arg)
{
	struct segpool_cache *c = arg;
	char *p = segpool_cache_alloc(c, 0);

	if (!p)
		return;
	segpool_cache_free(c, sp_last_obj(c, p));
	fprintf(stderr, "free of a never allocated object accepted\n");
}

/* the same through segpool_free(), which finds the page untagged */
static void die_kfree_unreached(void *arg)
{
	struct segpool_cache *c = arg;
	char *p = segpool_cache_alloc(c, 0);

	if (!p)
		return;
	segpool_free(sp_last_obj(c, p));
	fprintf(stderr, "free of a never allocated object accepted\n");
}

static void test_death_reach_unreached(void **state)
{
	struct segpool_cache *c = mk("tca-reach-die", REACH_SIZE, 0, 0, NULL);

	static void (*const die[])(void *) = {
		die_free_unreached, die_kfree_unreached,
	};
	static const char *const says[] = { "double free", "tca-reach-die" };

	(void)state;
	assert_true(c->flags & SP_CACHE_REACH);
	/* each way in, reported as what it is, with the cache's name */
	for (size_t i = 0; i < 4; i++)
		assert_true(sp_test_expect_death(die[i / 2], c, says[i % 2]));
	destroy_ok(c);
}

/*
 * Every object of a lazily reached cache, handed out and freed in turn
 * over many slabs and orders of hand-out (fresh, after frees, after a
 * shrink), keeps its bytes and is caught on a second free.
 */
static void test_reach_cycles(void **state)
{
	static const size_t sizes[] = {
		1024, 3000, 8192, 20000, REACH_SIZE, SP_PAGE_SIZE + 8,
	};
	enum { N = 300 };
	static char *obj[N];
	unsigned int seed = 20261205, reached = 0;

	(void)state;
	print_message("# seed %u\n", seed);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct segpool_cache *c = mk("tca-reach-cycle", sizes[k], 0,
					     0, NULL);

		/* lazily reached where the slab has several pages */
		reached += !!(c->flags & SP_CACHE_REACH);
		for (int round = 0; round < 3; round++) {
			for (int i = 0; i < N; i++) {
				obj[i] = segpool_cache_alloc(c, 0);
				assert_non_null(obj[i]);
				memset(obj[i], i & 0xff, sizes[k]);
			}
			for (int i = 0; i < N; i++) {
				int j = (int)(rand_r(&seed) % N);
				char *t = obj[i];

				obj[i] = obj[j];
				obj[j] = t;
			}
			for (int i = 0; i < N; i++) {
				char want = obj[i][sizes[k] - 1];

				for (size_t b = 0; b < sizes[k]; b += 97)
					assert_int_equal(obj[i][b], want);
				segpool_cache_free(c, obj[i]);
			}
			if (round == 1)
				assert_true(segpool_cache_shrink(c) >= 0);
		}
		destroy_ok(c);
	}
	print_message("# %u of the sizes lazily reached\n", reached);
	assert_true(reached >= 2);
}

/*
 * segpool_free() of a named cache's object gives it back to that cache, as
 * the kernel's kfree() does: the cache can be destroyed empty afterwards,
 * and the freed objects serve its next allocations.
 */
static void test_kfree_named(void **state)
{
	struct segpool_cache *c = mk("tca-named", 64, 0, 0, NULL);
	void *p[100];

	(void)state;
	for (int i = 0; i < 100; i++) {
		p[i] = segpool_cache_alloc(c, 0);
		assert_non_null(p[i]);
	}
	for (int i = 0; i < 100; i++)
		segpool_free(p[i]);
	destroy_ok(c);
}

static void test_death_panic(void **state)
{
	(void)state;
	assert_true(sp_test_expect_death(die_panic_create, NULL, ""));
}

/*
 * A mid-size cache cycling through a working set larger than its empty-
 * slab reserve keeps the slabs it needs: once warm, a cycle of 1000
 * allocations and 1000 frees of 3000 bytes builds (almost) no slab.  0.1
 * built and released about 20 slabs every cycle (max_empty is 4 at that
 * order).  The reserve is bounded (8 MiB of slabs) and shrink releases it.
 */
static void test_no_slab_churn(void **state)
{
	/* small magazines and depot: the cycle reaches the slabs (grown
	 * magazines would hold the whole working set and hide the slabs) */
	struct segpool_cache *c = segpool_cache_create_tuned("tca-churn", 3000,
			0, 0, NULL, &(struct segpool_cache_tunables){
				.mag_size = 12, .depot_max = 1 });
	static void *objs[1000];
	uint64_t created = 0, released = 0;
	struct segpool_cache_info info;
	cpu_set_t one, all;

	(void)state;
	assert_non_null(c);
	/*
	 * On one CPU: a thread that moves to a CPU of another node (the
	 * 4-node rig has one CPU a node) takes that node's slabs and sends
	 * its frees home, which builds slabs for a reason of its own.
	 */
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu() >= 0 ? sched_getcpu() : 0, &one);
	assert_int_equal(sched_getaffinity(0, sizeof(all), &all), 0);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	for (int cyc = 0; cyc < 60; cyc++) {
		if (cyc == 20) {
			info = sp_test_info(c);
			created = info.slabs_created;
			released = info.slabs_released;
		}
		for (int i = 0; i < 1000; i++)
			assert_non_null(objs[i] = segpool_cache_alloc(c, 0));
		for (int i = 0; i < 1000; i++)
			segpool_cache_free(c, objs[i]);
	}
	assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
	info = sp_test_info(c);
	print_message("# 40 warm cycles: %llu slabs built, %llu released "
		      "(%llu slabs, %llu of them in use)\n",
		      (unsigned long long)(info.slabs_created - created),
		      (unsigned long long)(info.slabs_released - released),
		      (unsigned long long)info.total_slabs,
		      (unsigned long long)info.active_slabs);
	CHECK(info.slabs_created - created <= 2,
	      "%llu slabs built in 40 warm cycles",
	      (unsigned long long)(info.slabs_created - created));
	/* the reserve is bounded: slab_bytes covers every slab held */
	CHECK(info.slab_bytes <= (8ULL << 20) + 3000ULL * 1000 * 2,
	      "%llu bytes of slabs held", (unsigned long long)info.slab_bytes);
	assert_true(segpool_cache_shrink(c) >= 0);
	assert_int_equal(sp_test_info(c).total_slabs,
			 sp_test_info(c).active_slabs);
	destroy_ok(c);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_create_bad_args),
	cmocka_unit_test(test_create_copies_name),
	cmocka_unit_test(test_duplicate_name),
	cmocka_unit_test(test_alloc_bad_args),
	cmocka_unit_test(test_alignment),
	cmocka_unit_test(test_no_overlap),
	cmocka_unit_test(test_ctor),
	cmocka_unit_test(test_zero),
	cmocka_unit_test(test_cache_macro),
	cmocka_unit_test(test_bulk),
	cmocka_unit_test_teardown(test_bulk_all_or_nothing,
				  sp_test_faults_teardown),
	cmocka_unit_test_teardown(test_bulk_partial_failure,
				  sp_test_faults_teardown),
	cmocka_unit_test(test_shrink),
	cmocka_unit_test(test_info_counts),
	cmocka_unit_test(test_destroy),
	cmocka_unit_test(test_control_block_colors),
	cmocka_unit_test(test_death_foreign),
	cmocka_unit_test(test_death_interior),
	cmocka_unit_test(test_death_wrong_cache),
	cmocka_unit_test(test_death_double_free),
	cmocka_unit_test(test_death_double_free_later),
	cmocka_unit_test(test_death_double_free_after_shrink),
	cmocka_unit_test(test_reach_lazy_pages),
	cmocka_unit_test(test_death_reach_unreached),
	cmocka_unit_test(test_reach_cycles),
	cmocka_unit_test(test_kfree_named),
	cmocka_unit_test(test_no_slab_churn),
	cmocka_unit_test(test_death_panic),
};

SP_TEST_MAIN(tests)
