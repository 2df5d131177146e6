// SPDX-License-Identifier: MIT
/*
 * selftests/api/test_kmalloc.c - segpool_malloc() and friends.
 *
 * Sizes from 0 to beyond the size classes, alignment, calloc, realloc,
 * aligned_alloc, the large-allocation path and its memory going back to the
 * OS, node placement, misuse reports, and a sanity look at the stats dump.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <segpool/segpool.h>
#include "segpool_config.h"
#include "selftests/lib/harness.h"
#include "selftests/lib/stats_parse.h"

#define CHECK(cond, fmt, ...)						\
	do {								\
		if (!(cond))						\
			fail_msg("%s: " fmt, #cond, __VA_ARGS__);	\
	} while (0)

#define MiB (1024UL * 1024)

static unsigned char pat(uintptr_t seed, size_t off)
{
	return (unsigned char)((seed >> 4) * 13 + off * 7 + 3);
}

static void fill(void *p, size_t n, uintptr_t seed)
{
	unsigned char *c = p;
	size_t i;

	for (i = 0; i < n; i++)
		c[i] = pat(seed, i);
}

static bool check_fill(const void *p, size_t n, uintptr_t seed)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (c[i] != pat(seed, i))
			return false;
	return true;
}

/* The minimum alignment the contract promises for an allocation. */
static size_t min_align(size_t usable)
{
	return usable > 8 ? 16 : 8;
}

/*
 * The active_objs column of the stats dump row of cache @name, or -1 when
 * there is no such row.
 */
static long slabinfo_active(const char *name)
{
	struct sp_slabinfo_row r;

	return sp_slabinfo_find(name, &r) ? (long)r.active : -1;
}

struct blk {
	unsigned char *p;
	size_t size, usable;
};

static int blk_cmp(const void *a, const void *b)
{
	const struct blk *x = a, *y = b;

	return x->p < y->p ? -1 : x->p > y->p;
}

static void check_blocks(struct blk *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		CHECK(check_fill(b[i].p, b[i].usable, (uintptr_t)b[i].p),
		      "block %p (size %zu, usable %zu) was overwritten",
		      (void *)b[i].p, b[i].size, b[i].usable);
	qsort(b, n, sizeof(*b), blk_cmp);
	for (i = 1; i < n; i++)
		CHECK(b[i - 1].p + b[i - 1].usable <= b[i].p,
		      "blocks %p+%zu and %p overlap", (void *)b[i - 1].p,
		      b[i - 1].usable, (void *)b[i].p);
}

static void test_every_size(void **state)
{
	size_t nmax = 4097 + (70000 - 4097) / 61 + 2, n = 0, size, i;
	size_t prev_u = 0;
	struct blk *b = calloc(nmax, sizeof(*b));

	(void)state;
	assert_non_null(b);
	/*
	 * Every class made and holding a freed object on this CPU, so that
	 * the sizes below are served by the hit paths' tables, not only by
	 * the slow path's own lookup.
	 */
	for (size = 8; size <= SEGPOOL_KMALLOC_MAX_CACHE_SIZE; size += 8)
		segpool_free(segpool_malloc(size));
	for (size = 0; size <= 70000; size += size < 4096 ? 1 : 61) {
		unsigned char *p = segpool_malloc(size);
		size_t u;

		CHECK(p != NULL, "segpool_malloc(%zu) failed", size);
		u = segpool_usable_size(p);
		CHECK(u >= size && u >= 1, "usable_size %zu for size %zu", u,
		      size);
		/*
		 * The smallest class that holds it: a larger size never gets
		 * a smaller class, and a class's own size gets that class
		 * (the size-class tables of the hit paths, core/kmalloc.c).
		 */
		if (size && size <= SEGPOOL_KMALLOC_MAX_CACHE_SIZE) {
			void *q = segpool_malloc(u);

			CHECK(u >= prev_u, "segpool_malloc(%zu): usable %zu "
			      "below a smaller size's %zu", size, u, prev_u);
			CHECK(q && segpool_usable_size(q) == u,
			      "segpool_malloc(%zu) (a class size): usable %zu",
			      u, q ? segpool_usable_size(q) : 0);
			segpool_free(q);
			prev_u = u;
		}
		CHECK((uintptr_t)p % min_align(u) == 0,
		      "segpool_malloc(%zu) = %p, usable %zu, misaligned",
		      size, (void *)p, u);
		if (size >= 16)
			CHECK((uintptr_t)p % 16 == 0,
			      "segpool_malloc(%zu) = %p not 16-aligned",
			      size, (void *)p);
		fill(p, u, (uintptr_t)p);
		assert_true(n < nmax);
		b[n].p = p;
		b[n].size = size;
		b[n].usable = u;
		n++;
	}
	check_blocks(b, n);
	for (i = 0; i < n; i++)
		segpool_free(b[i].p);
	free(b);
}

static void test_malloc_zero_unique(void **state)
{
	void *a, *b, *c;

	(void)state;
	a = segpool_malloc(0);
	b = segpool_malloc(0);
	c = segpool_malloc(0);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_ptr_not_equal(a, b);
	assert_ptr_not_equal(b, c);
	assert_ptr_not_equal(a, c);
	assert_true(segpool_usable_size(a) >= 1);
	segpool_free(a);
	segpool_free(b);
	segpool_free(c);
}

static void test_huge_fails(void **state)
{
	static const size_t sizes[] = {
		SIZE_MAX, SIZE_MAX - 4095, SIZE_MAX / 2 + 1, (size_t)1 << 62,
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		void *p;
		int e;

		errno = 0;
		p = segpool_malloc(sizes[i]);
		e = errno;
		CHECK(p == NULL, "segpool_malloc(%#zx) succeeded", sizes[i]);
		CHECK(e == ENOMEM, "segpool_malloc(%#zx): errno %d", sizes[i],
		      e);
		errno = 0;
		p = segpool_aligned_alloc(4096, sizes[i]);
		e = errno;
		CHECK(p == NULL, "aligned_alloc(4096, %#zx) succeeded",
		      sizes[i]);
		CHECK(e == ENOMEM, "aligned_alloc(4096, %#zx): errno %d",
		      sizes[i], e);
	}
}

static void test_pow2_natural_alignment(void **state)
{
	size_t size;

	(void)state;
	for (size = 8; size <= 32768; size *= 2) {
		void *p[40];
		int i;

		for (i = 0; i < 40; i++) {
			p[i] = segpool_malloc(size);
			CHECK(p[i] != NULL, "segpool_malloc(%zu) failed", size);
			CHECK((uintptr_t)p[i] % size == 0,
			      "segpool_malloc(%zu) = %p not naturally aligned",
			      size, p[i]);
			CHECK(segpool_usable_size(p[i]) == size,
			      "usable_size of a %zu-byte class object is %zu",
			      size, segpool_usable_size(p[i]));
			memset(p[i], i, size);
		}
		for (i = 0; i < 40; i++) {
			assert_true(sp_test_all_bytes(p[i], (unsigned char)i,
						      size));
			segpool_free(p[i]);
		}
	}
}

static void test_calloc_zeroes(void **state)
{
	static const size_t sizes[] = { 1, 8, 24, 100, 256, 1000, 4096, 20000,
					100000, 3 * MiB };
	size_t si;

	(void)state;
	for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		size_t size = sizes[si], n = size > 32768 ? 4 : 200, k;
		void *p[200];

		for (k = 0; k < n; k++) {
			p[k] = segpool_malloc(size);
			assert_non_null(p[k]);
			memset(p[k], 0xdd, segpool_usable_size(p[k]));
		}
		for (k = 0; k < n; k++)
			segpool_free(p[k]);
		for (k = 0; k < n; k++) {
			/* the same byte count, split into elements */
			if (size % 4 == 0)
				p[k] = segpool_calloc(size / 4, 4);
			else
				p[k] = segpool_calloc(1, size);
			CHECK(p[k] != NULL, "calloc of %zu bytes failed", size);
			CHECK(sp_test_all_bytes(p[k], 0, size),
			      "calloc of %zu bytes: %p not zeroed", size, p[k]);
			CHECK(segpool_usable_size(p[k]) >= size,
			      "calloc usable %zu < %zu",
			      segpool_usable_size(p[k]), size);
		}
		for (k = 0; k < n; k++)
			segpool_free(p[k]);
	}
}

static void test_calloc_overflow(void **state)
{
	static const size_t pairs[][2] = {
		{ SIZE_MAX / 2, 3 },	{ 3, SIZE_MAX / 2 },
		{ SIZE_MAX, SIZE_MAX }, { (size_t)1 << 33, (size_t)1 << 33 },
		{ SIZE_MAX, 2 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		void *p;
		int e;

		errno = 0;
		p = segpool_calloc(pairs[i][0], pairs[i][1]);
		e = errno;
		CHECK(p == NULL, "calloc(%#zx, %#zx) succeeded", pairs[i][0],
		      pairs[i][1]);
		CHECK(e == ENOMEM, "calloc(%#zx, %#zx): errno %d", pairs[i][0],
		      pairs[i][1], e);
	}
}

static void test_realloc_contents(void **state)
{
	static const size_t steps[] = {
		10, 16, 17, 100, 1000, 5000, 32768, 40000, 200000, 3 * MiB,
		50000, 20000, 700, 50, 3, 1,
	};
	unsigned char *p = NULL;
	size_t prev = 0, i;

	(void)state;
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		size_t n = steps[i], keep = prev < n ? prev : n, u;
		unsigned char *q = segpool_realloc(p, n);

		CHECK(q != NULL, "realloc to %zu failed", n);
		CHECK(check_fill(q, keep, 0x1234),
		      "realloc %zu -> %zu lost contents", prev, n);
		u = segpool_usable_size(q);
		CHECK(u >= n, "usable %zu after realloc to %zu", u, n);
		CHECK((uintptr_t)q % min_align(u) == 0,
		      "realloc to %zu: %p misaligned", n, (void *)q);
		fill(q, n, 0x1234);
		p = q;
		prev = n;
	}
	segpool_free(p);
}

static void test_realloc_edges(void **state)
{
	static const size_t sizes[] = { 1, 24, 40, 100, 1000, 3000, 30000 };
	char name[64];
	long before, after;
	void *p, *q;
	size_t i, u;

	(void)state;
	/* realloc(NULL, n) is malloc */
	p = segpool_realloc(NULL, 300);
	assert_non_null(p);
	assert_true(segpool_usable_size(p) >= 300);
	memset(p, 1, 300);
	segpool_free(p);
	p = segpool_realloc(NULL, 200000);
	assert_non_null(p);
	assert_true(segpool_usable_size(p) >= 200000);
	segpool_free(p);

	/* the same size class gives the same pointer back */
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		p = segpool_malloc(sizes[i]);
		assert_non_null(p);
		u = segpool_usable_size(p);
		fill(p, sizes[i], 77);
		q = segpool_realloc(p, u);
		CHECK(q == p, "realloc(%zu-byte object, usable %zu) moved it",
		      sizes[i], u);
		q = segpool_realloc(p, sizes[i]);
		CHECK(q == p, "realloc(%zu-byte object, %zu) moved it",
		      sizes[i], sizes[i]);
		assert_true(check_fill(q, sizes[i], 77));
		segpool_free(q);
	}

	/* realloc(p, 0) frees p and returns NULL */
	p = segpool_malloc(64);
	assert_non_null(p);
	snprintf(name, sizeof(name), "kmalloc-%zu", segpool_usable_size(p));
	before = slabinfo_active(name);
	CHECK(before >= 1, "no active objects in the \"%s\" row", name);
	q = segpool_realloc(p, 0);
	assert_null(q);
	after = slabinfo_active(name);
	CHECK(after == before - 1, "%s active %ld -> %ld after realloc(p, 0)",
	      name, before, after);
	/* same for a large allocation: its pages go back (at once with a
	 * decay delay of 0; after the delay otherwise, test_decay) */
	p = segpool_malloc(4 * MiB);
	assert_non_null(p);
	memset(p, 1, 4 * MiB);
	{
		long delay = segpool_get_decay_ms();
		size_t rss1 = sp_test_rss(), rss2;

		assert_int_equal(segpool_set_decay_ms(0), 0);
		q = segpool_realloc(p, 0);
		assert_null(q);
		rss2 = sp_test_rss();
		assert_int_equal(segpool_set_decay_ms(delay), 0);
#ifndef CONFIG_SEGPOOL_TSAN	/* TSan keeps the pages' shadow resident */
		CHECK(rss1 >= rss2 + 3 * MiB,
		      "RSS %zu -> %zu after realloc(4 MiB, 0)", rss1, rss2);
#else
		(void)rss1;
		(void)rss2;
#endif
	}
}

static void test_aligned_alloc(void **state)
{
	static const size_t sizes[] = { 1, 8, 24, 100, 1000, 4096, 5000, 10000,
					40000, 100000 };
	size_t align, si;

	(void)state;
	for (align = 1; align <= 65536; align *= 2) {
		for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
			size_t size = sizes[si], u, k;
			void *p[6];

			for (k = 0; k < 6; k++) {
				p[k] = segpool_aligned_alloc(align, size);
				CHECK(p[k] != NULL,
				      "aligned_alloc(%zu, %zu) failed", align,
				      size);
				CHECK((uintptr_t)p[k] % align == 0,
				      "aligned_alloc(%zu, %zu) = %p", align,
				      size, p[k]);
				u = segpool_usable_size(p[k]);
				CHECK(u >= size,
				      "aligned_alloc(%zu, %zu): usable %zu",
				      align, size, u);
				fill(p[k], u, (uintptr_t)p[k]);
			}
			for (k = 0; k < 6; k++) {
				assert_true(check_fill(
					p[k], segpool_usable_size(p[k]),
					(uintptr_t)p[k]));
				segpool_free(p[k]);
			}
		}
	}
	{
		static const size_t bad[] = { 3, 24, 100, 4095, 12288,
					      (SIZE_MAX >> 1) + 2 };

		for (si = 0; si < sizeof(bad) / sizeof(bad[0]); si++) {
			void *p;
			int e;

			errno = 0;
			p = segpool_aligned_alloc(bad[si], 64);
			e = errno;
			CHECK(p == NULL, "aligned_alloc(%zu, 64) succeeded",
			      bad[si]);
			CHECK(e == EINVAL, "aligned_alloc(%zu, 64): errno %d",
			      bad[si], e);
		}
	}
}

static void test_large(void **state)
{
	static const size_t sizes[] = { 32769, 40000, 100 * 1024, MiB,
					5 * MiB };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		unsigned char *p = segpool_malloc(sizes[i]), *q;
		size_t u;

		CHECK(p != NULL, "segpool_malloc(%zu) failed", sizes[i]);
		u = segpool_usable_size(p);
		CHECK(u >= sizes[i], "usable %zu < %zu", u, sizes[i]);
		CHECK((uintptr_t)p % 16 == 0, "large %p misaligned", (void *)p);
		q = segpool_malloc(sizes[i]);
		assert_non_null(q);
		memset(p, 0xab, u);
		memset(q, 0xcd, segpool_usable_size(q));
		assert_true(sp_test_all_bytes(p, 0xab, u));
		segpool_free(p);
		assert_true(sp_test_all_bytes(q, 0xcd, sizes[i]));
		segpool_free(q);
	}
}

static void test_large_rss(void **state)
{
	enum { N = 64 };
	void *p[N];
	size_t rss0, rss1, rss2, total = N * MiB;
	long delay = segpool_get_decay_ms();
	int i;

	(void)state;
	/* what earlier tests left resident goes first, and frees go back at
	 * once (the decay's own tests are test_decay's) */
	segpool_shrink_all();
	assert_int_equal(segpool_set_decay_ms(0), 0);
	rss0 = sp_test_rss();
	for (i = 0; i < N; i++) {
		p[i] = segpool_malloc(MiB);
		assert_non_null(p[i]);
		memset(p[i], i + 1, MiB);
	}
	rss1 = sp_test_rss();
	for (i = 0; i < N; i++) {
		assert_true(sp_test_all_bytes(p[i], (unsigned char)(i + 1),
					      MiB));
		segpool_free(p[i]);
	}
	rss2 = sp_test_rss();
	assert_int_equal(segpool_set_decay_ms(delay), 0);
	print_message(
		"# rss: %zu KiB before, %zu KiB holding 64 MiB, "
		"%zu KiB after free\n",
		rss0 >> 10, rss1 >> 10, rss2 >> 10);
	CHECK(rss1 >= rss0 + total * 9 / 10, "RSS grew only %zu KiB for 64 MiB",
	      (rss1 - rss0) >> 10);
#ifndef CONFIG_SEGPOOL_TSAN
	/* freed pages go back (madvise); TSan keeps their shadow resident */
	CHECK(rss1 - rss2 >= total * 9 / 10,
	      "RSS fell only %zu KiB after freeing 64 MiB",
	      (rss1 - rss2) >> 10);
#endif
}

static bool is_node(int node)
{
	int i, n = segpool_numa_node_count();

	for (i = 0; i < n; i++)
		if (segpool_numa_node_id(i) == node)
			return true;
	return false;
}

static void test_nodes(void **state)
{
	static const size_t sizes[] = { 1, 64, 3000, 32768, 40000, 2 * MiB };
	static const int bogus[] = { 4096, -2, INT_MAX, INT_MIN };
	int nodes = segpool_numa_node_count(), i;
	size_t si;
	char local = 0;

	(void)state;
	assert_true(nodes >= 1);
	for (i = 0; i < nodes; i++) {
		int node = segpool_numa_node_id(i);

		for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
			void *p = segpool_malloc_node(sizes[si], node);

			CHECK(p != NULL, "malloc_node(%zu, %d) failed",
			      sizes[si], node);
			CHECK(segpool_usable_size(p) >= sizes[si],
			      "malloc_node(%zu): usable %zu", sizes[si],
			      segpool_usable_size(p));
			memset(p, 3, sizes[si]);
			CHECK(segpool_obj_node(p) == node,
			      "malloc_node(%zu, %d) landed on node %d",
			      sizes[si], node, segpool_obj_node(p));
			segpool_free(p);
		}
	}
	for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		void *p = segpool_malloc_node(sizes[si], SEGPOOL_NUMA_NO_NODE);
		void *q = segpool_malloc(sizes[si]);

		assert_non_null(p);
		assert_non_null(q);
		CHECK(is_node(segpool_obj_node(p)),
		      "obj_node %d of a %zu-byte block", segpool_obj_node(p),
		      sizes[si]);
		CHECK(is_node(segpool_obj_node(q)),
		      "obj_node %d of a %zu-byte block", segpool_obj_node(q),
		      sizes[si]);
		segpool_free(p);
		segpool_free(q);
	}
	for (si = 0; si < sizeof(bogus) / sizeof(bogus[0]); si++) {
		void *p;
		int e;

		errno = 0;
		p = segpool_malloc_node(64, bogus[si]);
		e = errno;
		CHECK(p == NULL, "malloc_node(64, %d) succeeded", bogus[si]);
		CHECK(e == EINVAL, "malloc_node(64, %d): errno %d", bogus[si],
		      e);
		errno = 0;
		p = segpool_malloc_node(MiB, bogus[si]);
		e = errno;
		CHECK(p == NULL, "malloc_node(1 MiB, %d) succeeded", bogus[si]);
		CHECK(e == EINVAL, "malloc_node(1 MiB, %d): errno %d",
		      bogus[si], e);
	}
	/* what is not segpool memory has no node */
	errno = 0;
	assert_int_equal(segpool_obj_node(&local), -EINVAL);
	assert_int_equal(errno, EINVAL);
	{
		void *m = malloc(100);

		assert_non_null(m);
		errno = 0;
		assert_int_equal(segpool_obj_node(m), -EINVAL);
		assert_int_equal(errno, EINVAL);
		free(m);
	}
	i = segpool_numa_current_node();
	assert_true(is_node(i));
}

static void test_null_args(void **state)
{
	(void)state;
	assert_int_equal(segpool_usable_size(NULL), 0);
	segpool_free(NULL);
	errno = 0;
	assert_int_equal(segpool_stats_dump(NULL), -EINVAL);
	assert_int_equal(errno, EINVAL);
}

/* --- misuse --------------------------------------------------------------- */

static void die_free_stack(void *arg)
{
	char buf[128];

	(void)arg;
	memset(buf, 1, sizeof(buf));
	segpool_free(buf + 16);
}

static void die_free_interior(void *arg)
{
	char *p = segpool_malloc(64);

	(void)arg;
	if (p)
		segpool_free(p + 16);
}

static void die_free_large_interior(void *arg)
{
	char *p = segpool_malloc(MiB);

	(void)arg;
	if (p)
		segpool_free(p + 8);
}

static void die_free_libc(void *arg)
{
	char *p = malloc(64);

	(void)arg;
	memset(p, 0, 64);
	segpool_free(p);
}

static void test_death(void **state)
{
	(void)state;
	assert_true(sp_test_expect_death(die_free_stack, NULL, "foreign"));
	assert_true(sp_test_expect_death(die_free_libc, NULL, "foreign"));
	assert_true(sp_test_expect_death(die_free_interior, NULL, "interior"));
	assert_true(sp_test_expect_death(die_free_large_interior, NULL,
					 "segpool:"));
}

/* --- the stats dump ------------------------------------------------------- */

static void test_stats_dump_sanity(void **state)
{
	struct segpool_cache *c;
	char line[512];
	void *held[10], *obj;
	bool seen64 = false, seen_named = false;
	FILE *f;
	int i, lineno = 0;

	(void)state;
	for (i = 0; i < 10; i++) {
		held[i] = segpool_malloc(64);
		assert_non_null(held[i]);
	}
	c = segpool_cache_create("tkm-dumpme", 200, 0, 0, NULL);
	assert_non_null(c);
	obj = segpool_cache_alloc(c, 0);
	assert_non_null(obj);

	f = tmpfile();
	assert_non_null(f);
	assert_int_equal(segpool_stats_dump(f), 0);
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (lineno == 1) {
			assert_string_equal(line, "slabinfo - version: 2.1\n");
			continue;
		}
		if (lineno == 2) {
			CHECK(strncmp(line, "# name", 6) == 0,
			      "second line is \"%s\"", line);
			CHECK(strstr(line, "<active_objs>") != NULL,
			      "header lacks <active_objs>: \"%s\"", line);
			continue;
		}
		CHECK(line[0] != '#' && line[0] != ' ',
		      "odd row %d: \"%s\"", lineno, line);
		if (strncmp(line, "kmalloc-64 ", 11) == 0) {
			long active = 0, total = 0, objsize = 0;

			seen64 = true;
			CHECK(sscanf(line + 11, "%ld %ld %ld", &active, &total,
				     &objsize) == 3, "row \"%s\"", line);
			CHECK(active >= 10 && total >= active && objsize == 64,
			      "kmalloc-64 row \"%s\"", line);
		}
		if (strncmp(line, "tkm-dumpme ", 11) == 0) {
			long active = 0, total = 0, objsize = 0;

			seen_named = true;
			CHECK(sscanf(line + 11, "%ld %ld %ld", &active, &total,
				     &objsize) == 3, "row \"%s\"", line);
			CHECK(active == 1 && total >= 1 && objsize == 200,
			      "tkm-dumpme row \"%s\"", line);
		}
	}
	fclose(f);
	assert_true(lineno >= 3);
	assert_true(seen64);
	assert_true(seen_named);

	segpool_cache_free(c, obj);
	assert_int_equal(segpool_cache_destroy(c), 0);
	assert_int_equal(slabinfo_active("tkm-dumpme"), -1);
	for (i = 0; i < 10; i++)
		segpool_free(held[i]);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_every_size),
	cmocka_unit_test(test_malloc_zero_unique),
	cmocka_unit_test(test_huge_fails),
	cmocka_unit_test(test_pow2_natural_alignment),
	cmocka_unit_test(test_calloc_zeroes),
	cmocka_unit_test(test_calloc_overflow),
	cmocka_unit_test(test_realloc_contents),
	cmocka_unit_test(test_realloc_edges),
	cmocka_unit_test(test_aligned_alloc),
	cmocka_unit_test(test_large),
	cmocka_unit_test(test_large_rss),
	cmocka_unit_test(test_nodes),
	cmocka_unit_test(test_null_args),
	cmocka_unit_test(test_death),
	cmocka_unit_test(test_stats_dump_sanity),
};

SP_TEST_MAIN(tests)
