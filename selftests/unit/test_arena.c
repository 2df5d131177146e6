// SPDX-License-Identifier: MIT
/*
 * selftests/unit/test_arena.c - arenas: bump, reset, marks, limits, debug.
 *
 * Each test checks what <segpool/arena.h> promises with the figures of
 * segpool_arena_get_info(): how much is in use, what is kept and given
 * back, and which calls fail with which errno.  Objects are filled with a
 * pattern of their own and checked afterwards, so overlapping objects show.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <segpool/segpool.h>
#include <segpool/arena.h>

#include "segpool_config.h"
#include "arena/arena.h"
#include "selftests/lib/harness.h"

#ifdef CONFIG_SEGPOOL_ASAN
#include <sanitizer/asan_interface.h>
#endif

static struct segpool_arena_info info_of(struct segpool_arena *a)
{
	struct segpool_arena_info i = { .size = sizeof(i) };

	assert_int_equal(segpool_arena_get_info(a, &i), 0);
	return i;
}

static struct segpool_arena *new_arena(const char *name, unsigned long flags)
{
	struct segpool_arena *a =
		segpool_arena_create(name, SEGPOOL_NUMA_NO_NODE, flags);

	assert_non_null(a);
	return a;
}

/* --- bad input --------------------------------------------------------- */

/* @v, hidden from the compiler's alloc_size checks */
static size_t opaque(size_t v)
{
	volatile size_t x = v;

	return x;
}

static void test_create_bad_args(void **state)
{
	char big[SEGPOOL_ARENA_NAME_MAX + 2], buf[512];

	(void)state;
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
#define BAD_CREATE(call)						\
	do {								\
		errno = 0;						\
		assert_null(call);					\
		assert_int_equal(errno, EINVAL);			\
	} while (0)
	BAD_CREATE(segpool_arena_create(NULL, -1, 0));
	BAD_CREATE(segpool_arena_create("", -1, 0));
	BAD_CREATE(segpool_arena_create(big, -1, 0));
	BAD_CREATE(segpool_arena_create("two words", -1, 0));
	BAD_CREATE(segpool_arena_create("tab\there", -1, 0));
	BAD_CREATE(segpool_arena_create("flags", -1, 1UL << 20));
	BAD_CREATE(segpool_arena_create("flags", -1, ~0UL));
	BAD_CREATE(segpool_arena_create("node", 5000, 0));
	BAD_CREATE(segpool_arena_create("node", -2, 0));
	BAD_CREATE(segpool_arena_create_buf("buf", -1, 0, NULL, 4096));
	BAD_CREATE(segpool_arena_create_buf("buf", -1, 0, buf,
					    SEGPOOL_ARENA_BUF_MIN - 1));
	BAD_CREATE(segpool_arena_create_buf(NULL, -1, 0, buf, sizeof(buf)));
#undef BAD_CREATE
	/* the longest name is fine */
	big[SEGPOOL_ARENA_NAME_MAX] = '\0';
	struct segpool_arena *a = segpool_arena_create(big, -1, 0);

	assert_non_null(a);
	assert_string_equal(segpool_arena_name(a), big);
	assert_int_equal(segpool_arena_destroy(a), 0);
}

static void test_calls_bad_args(void **state)
{
	struct segpool_arena *a = new_arena("bad-args", 0);
	struct segpool_arena_info info = { .size = sizeof(info) - 1 };
	struct segpool_arena_pos m;
	/* zeroed memory is not an arena: its magic is wrong */
	static struct { char bytes[4096]; } fake __attribute__((aligned(64)));
	struct segpool_arena *f = (struct segpool_arena *)&fake;

	(void)state;
#define BAD_PTR(call, err)						\
	do {								\
		errno = 0;						\
		assert_null(call);					\
		assert_int_equal(errno, err);				\
	} while (0)
#define BAD_INT(call)							\
	do {								\
		errno = 0;						\
		assert_int_equal(call, -EINVAL);			\
		assert_int_equal(errno, EINVAL);			\
	} while (0)
	BAD_PTR(segpool_arena_alloc(NULL, 8, 8), EINVAL);
	BAD_PTR(segpool_arena_alloc(f, 8, 8), EINVAL);
	BAD_PTR(segpool_arena_alloc(a, 8, 3), EINVAL);
	BAD_PTR(segpool_arena_alloc(a, 8, 24), EINVAL);
	BAD_PTR(segpool_arena_alloc(a, 8, SEGPOOL_ARENA_MAX_ALIGN * 2), EINVAL);
	BAD_PTR(segpool_arena_alloc(a, opaque(SEGPOOL_ARENA_MAX_SIZE + 1), 8),
		EOVERFLOW);
	BAD_PTR(segpool_arena_alloc(a, opaque(SIZE_MAX), 8), EOVERFLOW);
	BAD_PTR(segpool_arena_alloc(a, opaque(SIZE_MAX - 4096), 4096),
		EOVERFLOW);
	BAD_PTR(segpool_arena_calloc(a, opaque(SIZE_MAX / 2), 3, 8), EOVERFLOW);
	BAD_PTR(segpool_arena_calloc(a, opaque((size_t)1 << 40),
				     (size_t)1 << 10, 8),
		EOVERFLOW);
	BAD_PTR(segpool_arena_calloc(NULL, 2, 2, 8), EINVAL);
	BAD_PTR(segpool_arena_calloc(NULL, opaque(SIZE_MAX), 2, 8), EINVAL);
	BAD_PTR(segpool_arena_calloc(a, 2, 2, 5), EINVAL);
	BAD_PTR(segpool_arena_name(NULL), EINVAL);
	BAD_PTR(segpool_arena_name(f), EINVAL);
	BAD_INT(segpool_arena_get_info(a, &info));
	BAD_INT(segpool_arena_get_info(a, NULL));
	info.size = sizeof(info);
	BAD_INT(segpool_arena_get_info(NULL, &info));
	BAD_INT(segpool_arena_mark(NULL, &m));
	BAD_INT(segpool_arena_mark(a, NULL));
	BAD_INT(segpool_arena_mark(f, &m));
	BAD_INT(segpool_arena_rewind(NULL, &m));
	BAD_INT(segpool_arena_rewind(a, NULL));
	BAD_INT(segpool_arena_set_limit(NULL, 1));
	BAD_INT(segpool_arena_set_keep(f, 1));
	BAD_INT(segpool_arena_destroy(NULL));
	BAD_INT(segpool_arena_destroy(f));
	errno = 0;
	assert_int_equal(segpool_arena_trim(NULL), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	segpool_arena_reset(NULL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	segpool_arena_reset(f);
	assert_int_equal(errno, EINVAL);
#undef BAD_PTR
#undef BAD_INT
	/* nothing was taken by the failed calls */
	assert_int_equal(info_of(a).held, 0);
	assert_int_equal(info_of(a).alloc_failures, 0);
	assert_int_equal(segpool_arena_destroy(a), 0);
}

/* --- the bump ---------------------------------------------------------- */

static void test_alloc_align_and_disjoint(void **state)
{
	struct segpool_arena *a = new_arena("align", 0);
	uint64_t seed = sp_test_seed(), rng = seed | 1;
	enum { N = 4000 };
	void **p = calloc(N, sizeof(*p));
	size_t *sz = calloc(N, sizeof(*sz));

	(void)state;
	assert_non_null(p);
	assert_non_null(sz);
	for (int i = 0; i < N; i++) {
		size_t align = (size_t)1 << (sp_test_rand(&rng) % 13);
		size_t size = sp_test_rand(&rng) % 700;

		if (i % 7 == 0)
			align = 0;
		p[i] = segpool_arena_alloc(a, size, align);
		assert_non_null(p[i]);
		assert_int_equal((uintptr_t)p[i] %
					 (align ? align :
						  SEGPOOL_ARENA_DEFAULT_ALIGN),
				 0);
		sz[i] = size;
		sp_test_pattern_fill(p[i], size, (uint64_t)i);
	}
	for (int i = 0; i < N; i++)
		assert_int_equal(
			sp_test_pattern_check(p[i], sz[i], (uint64_t)i), sz[i]);
	/* 0 bytes give distinct pointers */
	assert_ptr_not_equal(segpool_arena_alloc(a, 0, 1),
			     segpool_arena_alloc(a, 0, 1));
	/* arena memory sits in the node regions, on a node */
	assert_true(segpool_obj_node(p[0]) >= 0);
	free(p);
	free(sz);
	assert_int_equal(segpool_arena_destroy(a), 0);
}

static void test_chunks_grow_geometrically(void **state)
{
	struct segpool_arena *a = new_arena("grow", 0);
	struct segpool_arena_info i;
	size_t total = 0;

	(void)state;
	assert_int_equal(segpool_arena_set_keep(a, 0), 0);
	/* 64K + 128K + ... + 4M = 8M - 64K, then 4 MiB chunks */
	while (total < (12UL << 20)) {
		assert_non_null(segpool_arena_alloc(a, 1000, 8));
		total += 1000;
	}
	i = info_of(a);
	/* 7 doubling chunks (64K..4M), then 4M ones: 8M-64K+4M+... */
	assert_true(i.chunks >= 8 && i.chunks <= 9);
	assert_int_equal(i.chunks, i.chunks_created);
	assert_true(i.held >= total && i.held < total + (4UL << 20));
	assert_true(i.in_use >= total);
	segpool_arena_reset(a);
	i = info_of(a);
	assert_int_equal(i.held, 0);
	assert_int_equal(i.in_use, 0);
	assert_true(i.peak >= total);
	assert_int_equal(i.chunks_released, i.chunks_created);
	assert_int_equal(i.resets, 1);
	assert_int_equal(segpool_arena_destroy(a), 0);
}

static void test_reset_keeps_and_reuses(void **state)
{
	struct segpool_arena *a = new_arena("keep", 0);
	struct segpool_arena_info i;
	void *first[2];

	(void)state;
	for (int round = 0; round < 2; round++) {
		first[round] = segpool_arena_alloc(a, 100, 8);
		assert_non_null(first[round]);
		for (int k = 0; k < 150; k++)
			assert_non_null(segpool_arena_alloc(a, 1000, 8));
		i = info_of(a);
		assert_int_equal(i.chunks, 2);		/* 64K + 128K */
		assert_int_equal(i.chunks_created, 2);	/* round 2 reused */
		assert_int_equal(i.kept_chunks, 0);
		segpool_arena_reset(a);
		i = info_of(a);
		assert_int_equal(i.in_use, 0);
		assert_int_equal(i.kept_chunks, 2);
		assert_int_equal(i.kept_bytes, 192 << 10);
		assert_int_equal(i.held, 192 << 10);
		assert_int_equal(i.resets, (uint64_t)round + 1);
	}
	/* the first chunk is taken again, its first object where it was */
	assert_ptr_equal(first[0], first[1]);
	/* a small round uses one chunk; the other, idle, goes back next */
	assert_non_null(segpool_arena_alloc(a, 10, 8));
	segpool_arena_reset(a);
	i = info_of(a);
	assert_int_equal(i.kept_chunks, 1);
	assert_int_equal(i.chunks_released, 1);
	/* trim gives back what is kept */
	assert_int_equal(segpool_arena_trim(a), (long)i.kept_bytes);
	assert_int_equal(info_of(a).held, 0);
	assert_int_equal(segpool_arena_destroy(a), 0);
}

static void test_keep_is_bounded(void **state)
{
	struct segpool_arena *a = new_arena("keep-bound", 0);
	struct segpool_arena_info i;

	(void)state;
	assert_int_equal(segpool_arena_set_keep(a, 200 << 10), 0);
	for (int k = 0; k < 2000; k++)
		assert_non_null(segpool_arena_alloc(a, 1000, 8));
	segpool_arena_reset(a);
	i = info_of(a);
	assert_true(i.kept_bytes <= 200 << 10);
	assert_true(i.kept_chunks >= 1);
	assert_int_equal(i.held, i.kept_bytes);
	assert_int_equal(info_of(a).keep, 200 << 10);
	assert_int_equal(segpool_arena_destroy(a), 0);
}

static void test_memory_goes_back(void **state)
{
	const size_t bytes = 96UL << 20;
	struct segpool_arena *a = new_arena("rss", 0);
	size_t before, full, after;

	(void)state;
	before = sp_test_rss();
	for (size_t n = 0; n < bytes; n += 64 << 10) {
		char *p = segpool_arena_alloc(a, 64 << 10, 64);

		assert_non_null(p);
		memset(p, 0x5a, 64 << 10);
	}
	full = sp_test_rss();
	assert_true(full >= before + bytes / 2);
	assert_int_equal(segpool_arena_destroy(a), 0);
	after = sp_test_rss();
	printf("# rss: before %zu KiB, full %zu KiB, after destroy %zu KiB\n",
	       before >> 10, full >> 10, after >> 10);
	/* all but the largest kept region run went back */
	assert_true(after < before + (16UL << 20));
}

static void test_large_allocation(void **state)
{
	struct segpool_arena *a = new_arena("large", 0);
	char *x, *big, *y;

	(void)state;
	x = segpool_arena_alloc(a, 32, 8);
	big = segpool_arena_alloc(a, 10UL << 20, 4096);
	y = segpool_arena_alloc(a, 32, 8);
	assert_non_null(x);
	assert_non_null(big);
	assert_non_null(y);
	assert_int_equal((uintptr_t)big % 4096, 0);
	memset(big, 1, 10UL << 20);
	/* the big one has a chunk of its own; the small ones go on */
	assert_true(y > x && y - x < 4096);
	assert_int_equal(info_of(a).chunks, 2);
	assert_true(info_of(a).held >= (10UL << 20) + (64 << 10));
	segpool_arena_reset(a);
	/* a chunk above the keep is given back */
	assert_true(info_of(a).held <= SEGPOOL_ARENA_KEEP_DEFAULT);
	assert_int_equal(segpool_arena_destroy(a), 0);
}

static void test_caller_buffer(void **state)
{
	static char buf[8192] __attribute__((aligned(64)));
	struct segpool_arena *a;
	struct segpool_arena_info i;
	char *p, *q;

	(void)state;
	a = segpool_arena_create_buf("buffer", -1, 0, buf, sizeof(buf));
	assert_non_null(a);
	p = segpool_arena_alloc(a, 100, 8);
	assert_true(p >= buf && p + 100 <= buf + sizeof(buf));
	assert_int_equal(info_of(a).held, 0);
	assert_int_equal(info_of(a).chunks, 1);
	/* past the buffer: chunks of the arena's own */
	q = segpool_arena_alloc(a, 10000, 8);
	assert_true(q < buf || q >= buf + sizeof(buf));
	i = info_of(a);
	assert_int_equal(i.chunks, 2);
	assert_int_equal(i.held, SEGPOOL_ARENA_CHUNK_MIN);
	segpool_arena_reset(a);
	/* back in the buffer, at the same place */
	assert_ptr_equal(segpool_arena_alloc(a, 100, 8), p);
	assert_int_equal(segpool_arena_set_keep(a, 0), 0);
	segpool_arena_reset(a);
	assert_int_equal(info_of(a).held, 0);
	assert_int_equal(segpool_arena_destroy(a), 0);
	/* the buffer is the caller's again */
	memset(buf, 0, sizeof(buf));
}

/* --- marks ------------------------------------------------------------- */

static void test_mark_rewind(void **state)
{
	struct segpool_arena *a = new_arena("marks", 0);
	struct segpool_arena *b = new_arena("marks-other", 0);
	struct segpool_arena_pos m0, m1, m2, mb, bad;
	struct segpool_arena_info i;
	char *p, *q, *r;
	uint64_t at_m1;

	(void)state;
	assert_int_equal(segpool_arena_mark(a, &m0), 0);	/* empty */
	p = segpool_arena_alloc(a, 100, 8);
	sp_test_pattern_fill(p, 100, 1);
	assert_int_equal(segpool_arena_mark(a, &m1), 0);
	at_m1 = info_of(a).in_use;
	q = segpool_arena_alloc(a, 200, 8);
	assert_int_equal(segpool_arena_mark(a, &m2), 0);
	/* across several chunks */
	for (int k = 0; k < 1000; k++)
		assert_non_null(segpool_arena_alloc(a, 1000, 8));
	assert_true(info_of(a).chunks >= 4);
	assert_int_equal(segpool_arena_rewind(a, &m2), 0);
	i = info_of(a);
	assert_int_equal(i.chunks, 1);
	assert_int_equal(i.rewinds, 1);
	/* q's successor comes where the first one after m2 came */
	r = segpool_arena_alloc(a, 200, 8);
	/* still valid */
	assert_int_equal(segpool_arena_rewind(a, &m2), 0);
	assert_ptr_equal(segpool_arena_alloc(a, 200, 8), r);
	assert_int_equal(segpool_arena_rewind(a, &m1), 0);
	assert_int_equal(info_of(a).in_use, at_m1);
	assert_ptr_equal(segpool_arena_alloc(a, 200, 8), q);
	assert_int_equal(sp_test_pattern_check(p, 100, 1), 100);
	/* m2 lies above where the arena now is, but not yet past: after a
	 * rewind to m0 its chunk is gone and it is refused */
	assert_int_equal(segpool_arena_rewind(a, &m0), 0);
	assert_int_equal(info_of(a).in_use, 0);
	errno = 0;
	assert_int_equal(segpool_arena_rewind(a, &m2), -EINVAL);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(segpool_arena_rewind(a, &m1), -EINVAL);
	/* another arena's mark */
	assert_int_equal(segpool_arena_mark(b, &mb), 0);
	assert_int_equal(segpool_arena_rewind(a, &mb), -EINVAL);
	/* a made-up mark */
	assert_int_equal(segpool_arena_mark(a, &bad), 0);
	bad.next += 100;
	assert_int_equal(segpool_arena_rewind(a, &bad), -EINVAL);
	/* a mark from before a reset */
	assert_non_null(segpool_arena_alloc(a, 10, 8));
	assert_int_equal(segpool_arena_mark(a, &m1), 0);
	segpool_arena_reset(a);
	assert_non_null(segpool_arena_alloc(a, 10, 8));
	assert_int_equal(segpool_arena_rewind(a, &m1), -EINVAL);
	assert_int_equal(info_of(a).rewinds, 4);
	assert_int_equal(segpool_arena_destroy(b), 0);
	assert_int_equal(segpool_arena_destroy(a), 0);
}

/* --- the limit --------------------------------------------------------- */

static void test_limit(void **state)
{
	struct segpool_arena *a = new_arena("limit", 0);
	struct segpool_arena_info i;
	size_t got = 0;
	void *p;

	(void)state;
	assert_int_equal(segpool_arena_set_limit(a, 256 << 10), 0);
	errno = 0;
	while ((p = segpool_arena_alloc(a, 16 << 10, 8)) != NULL)
		got += 16 << 10;
	assert_int_equal(errno, ENOMEM);
	i = info_of(a);
	assert_true(i.held <= 256 << 10);
	assert_true(got >= 192 << 10);
	assert_int_equal(i.alloc_failures, 1);
	assert_int_equal(i.limit, 256 << 10);
	/* larger than the limit: ENOMEM at once */
	errno = 0;
	assert_null(segpool_arena_alloc(a, 1 << 20, 8));
	assert_int_equal(errno, ENOMEM);
	/* a reset makes room again; so does lifting the limit */
	segpool_arena_reset(a);
	assert_non_null(segpool_arena_alloc(a, 16 << 10, 8));
	assert_int_equal(segpool_arena_set_limit(a, 0), 0);
	assert_non_null(segpool_arena_alloc(a, 1 << 20, 8));
	assert_int_equal(segpool_arena_destroy(a), 0);
}

/* --- threads ----------------------------------------------------------- */

struct ts_arg {
	struct segpool_arena *a;
	unsigned int id;
	unsigned long n;
	void **objs;
	int failed;
};

#define TS_SIZE(k)	(8 + (k) % 57)

static void *ts_worker(void *p)
{
	struct ts_arg *t = p;

	for (unsigned long k = 0; k < t->n; k++) {
		void *o = segpool_arena_alloc(t->a, TS_SIZE(k), 8);

		if (!o) {
			t->failed = 1;
			return NULL;
		}
		sp_test_pattern_fill(o, TS_SIZE(k),
				     ((uint64_t)t->id << 32) | k);
		t->objs[k] = o;
	}
	return NULL;
}

static void run_threads(unsigned long flags, unsigned int nthreads)
{
	struct segpool_arena *a = new_arena("threads", flags);
	unsigned long n = sp_test_scaled(50000, 2000);
	struct ts_arg t[8];
	pthread_t th[8];
	uint64_t sum = 0;

	for (unsigned int i = 0; i < nthreads; i++) {
		t[i] = (struct ts_arg){ a, i, n, calloc(n, sizeof(void *)), 0 };
		assert_non_null(t[i].objs);
		assert_int_equal(pthread_create(&th[i], NULL, ts_worker, &t[i]),
				 0);
	}
	for (unsigned int i = 0; i < nthreads; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(t[i].failed, 0);
	}
	for (unsigned int i = 0; i < nthreads; i++) {
		for (unsigned long k = 0; k < n; k++) {
			assert_int_equal(sp_test_pattern_check(t[i].objs[k],
					 TS_SIZE(k), ((uint64_t)i << 32) | k),
					 TS_SIZE(k));
			sum += TS_SIZE(k);
		}
		free(t[i].objs);
	}
	assert_true(info_of(a).in_use >= sum);
	segpool_arena_reset(a);
	assert_int_equal(info_of(a).in_use, 0);
	assert_int_equal(segpool_arena_destroy(a), 0);
}

static void test_threadsafe_shared(void **state)
{
	(void)state;
	run_threads(SEGPOOL_ARENA_THREADSAFE, 4);
}

static void test_threadsafe_debug_shared(void **state)
{
	(void)state;
	run_threads(SEGPOOL_ARENA_THREADSAFE | SEGPOOL_ARENA_DEBUG, 3);
}

/* --- debug ------------------------------------------------------------- */

static bool debug_tests_run(void)
{
#ifdef CONFIG_SEGPOOL_ASAN
	/* the tool sees the red zones and freed memory first */
	return false;
#else
	return !sp_test_under_valgrind();
#endif
}

/* A write at @p + @off the compiler cannot see through (nor drop). */
static __attribute__((noinline)) void poke(char *p, ptrdiff_t off)
{
	volatile ptrdiff_t o = off;

	*(volatile char *)(p + o) = 0x11;
}

static void child_right_red_zone(void *arg)
{
	struct segpool_arena *a = new_arena("rz", SEGPOOL_ARENA_RED_ZONE);
	char *p = segpool_arena_alloc(a, 32, 8);

	(void)arg;
	poke(p, 32);			/* one past the end */
	segpool_arena_reset(a);
}

static void child_left_red_zone(void *arg)
{
	struct segpool_arena *a = new_arena("rz", SEGPOOL_ARENA_RED_ZONE);
	char *p = segpool_arena_alloc(a, 32, 8);

	(void)arg;
	assert_non_null(segpool_arena_alloc(a, 32, 8));
	poke(p, -1);
	assert_int_equal(segpool_arena_destroy(a), 0);
}

static void child_use_after_reset(void *arg)
{
	struct segpool_arena *a = new_arena("ps", SEGPOOL_ARENA_POISON);
	char *p = segpool_arena_alloc(a, 64, 8);

	(void)arg;
	segpool_arena_reset(a);
	poke(p, 10);			/* kept across the reset */
	assert_non_null(segpool_arena_alloc(a, 64, 8));
}

static void test_debug_reports(void **state)
{
	struct segpool_arena *a;
	unsigned char *p;

	(void)state;
	/* clean use reports nothing, and poison is what is handed out */
	a = new_arena("debug-clean", SEGPOOL_ARENA_DEBUG);
	for (int k = 0; k < 3000; k++)
		assert_non_null(segpool_arena_alloc(a, 100, 16));
	segpool_arena_reset(a);
	p = segpool_arena_alloc(a, 64, 8);
	if (debug_tests_run())
		assert_true(sp_test_all_bytes(p, 0x6b, 64));
	assert_int_equal(segpool_arena_destroy(a), 0);
	if (!debug_tests_run())
		skip();
	assert_true(sp_test_expect_death(child_right_red_zone, NULL,
					 "right red zone"));
	assert_true(sp_test_expect_death(child_left_red_zone, NULL,
					 "BUG red-zone in arena rz"));
	assert_true(sp_test_expect_death(child_use_after_reset, NULL,
					 "BUG use-after-reset in arena ps"));
}

/* SEGPOOL_DEBUG names an arena: this program again, under it. */
static void test_env_debug_flags(void **state)
{
	static const char *const env[] = { "SEGPOOL_DEBUG=ZP,env-arena", NULL };
	struct segpool_arena *a, *b;

	(void)state;
	if (!getenv("SEGPOOL_DEBUG")) {
		assert_int_equal(sp_test_rerun(env, "test_env_debug_flags"), 0);
		return;
	}
	a = new_arena("env-arena", 0);
	b = new_arena("env-other", 0);
	assert_int_equal(info_of(a).flags, SEGPOOL_ARENA_DEBUG);
	assert_int_equal(info_of(b).flags, 0);
	assert_int_equal(segpool_arena_destroy(a), 0);
	assert_int_equal(segpool_arena_destroy(b), 0);
}

static void test_asan_poisons_reset_memory(void **state)
{
#ifdef CONFIG_SEGPOOL_ASAN
	struct segpool_arena *a = new_arena("asan", 0);
	char *p = segpool_arena_alloc(a, 40, 8);
	struct segpool_arena_pos m;

	(void)state;
	assert_false(__asan_region_is_poisoned(p, 40));
	/* the gap after an object is poisoned: overruns are caught */
	assert_true(__asan_address_is_poisoned(p + 40));
	assert_int_equal(segpool_arena_mark(a, &m), 0);
	char *q = segpool_arena_alloc(a, 100, 8);

	assert_false(__asan_region_is_poisoned(q, 100));
	assert_int_equal(segpool_arena_rewind(a, &m), 0);
	assert_true(__asan_address_is_poisoned(q));
	assert_false(__asan_region_is_poisoned(p, 40));
	segpool_arena_reset(a);
	assert_true(__asan_address_is_poisoned(p));
	assert_int_equal(segpool_arena_destroy(a), 0);
#else
	(void)state;
	skip();
#endif
}

/* --- statistics -------------------------------------------------------- */

static char *capture(int (*fn)(FILE *, unsigned int), unsigned int flags)
{
	FILE *f = tmpfile();
	long len;
	char *s;

	assert_non_null(f);
	assert_int_equal(fn(f, flags), 0);
	len = ftell(f);
	assert_true(len > 0);
	s = calloc(1, (size_t)len + 1);
	assert_non_null(s);
	rewind(f);
	assert_int_equal(fread(s, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	return s;
}

static int dump_detail_all(FILE *f, unsigned int flags)
{
	return segpool_stats_dump_detail(f, NULL, flags);
}

static void test_stats_list_arenas(void **state)
{
	struct segpool_arena *a =
		new_arena("listed-arena", SEGPOOL_ARENA_THREADSAFE);
	char *text, *json, *blk;

	(void)state;
	assert_non_null(segpool_arena_alloc(a, 1000, 8));
	segpool_arena_reset(a);
	assert_non_null(segpool_arena_alloc(a, 1000, 8));
	text = capture(dump_detail_all, 0);
	blk = strstr(text, "arena listed-arena\nnode -1\nflags threadsafe\n"
			   "in_use ");
	assert_non_null(blk);
	assert_non_null(strstr(blk, "\nresets 1\n"));
	assert_non_null(strstr(blk, "\nchunks 1\n"));
	json = capture(segpool_stats_json, 0);
	assert_non_null(strstr(json, "\"arenas\": ["));
	assert_non_null(strstr(json,
			       "{ \"name\": \"listed-arena\", \"node\": -1, "
			       "\"flags\": [ \"threadsafe\" ], \"in_use\": "));
	free(text);
	free(json);
	assert_int_equal(segpool_arena_destroy(a), 0);
	/* gone from the list */
	text = capture(dump_detail_all, 0);
	assert_null(strstr(text, "arena listed-arena"));
	free(text);
}

/* segpool-top shows the arenas of an exporting process: this one. */
static void test_segpool_top_shows_arenas(void **state)
{
	struct segpool_arena *a =
		new_arena("top-arena", SEGPOOL_ARENA_THREADSAFE);
	static char out[1 << 20], drain[4096];
	char cmd[512];
	bool seen = false;

	(void)state;
	if (access(SEGPOOL_TOP_PATH, X_OK))
		skip();
	assert_non_null(segpool_arena_alloc(a, 1000, 8));
	segpool_arena_reset(a);
	assert_non_null(segpool_arena_alloc(a, 3000, 8));
	assert_int_equal(segpool_export_start(10), 0);
	snprintf(cmd, sizeof(cmd), "%s -p %d --json", SEGPOOL_TOP_PATH,
		 (int)getpid());
	/* the first snapshot came before segpool_export_start() returned */
	for (int tries = 0; tries < 50 && !seen; tries++) {
		FILE *p = popen(cmd, "r");
		size_t n;

		assert_non_null(p);
		/* the whole document (the arenas come last): read to the end,
		 * so the viewer never meets a closed pipe */
		n = fread(out, 1, sizeof(out) - 1, p);
		out[n] = '\0';
		while (fread(drain, 1, sizeof(drain), p) > 0)
			;
		assert_int_equal(pclose(p), 0);
		seen = strstr(out,
			      "{ \"name\": \"top-arena\", \"node\": -1, "
			      "\"flags\": [ \"threadsafe\" ], \"in_use\": ") &&
		       strstr(out, "\"resets\": 1, ");
		if (!seen)
			usleep(20000);
	}
	if (!seen)
		fail_msg("segpool-top --json did not show the arena:\n%s", out);
	assert_non_null(strstr(out, "\"arenas\": ["));
	assert_int_equal(segpool_export_stop(), 0);
	assert_int_equal(segpool_arena_destroy(a), 0);
}

/* Documentation/guide/arenas.md names every key of an arena's block. */
static void test_doc_names_every_field(void **state)
{
	static const char *const keys[] = {
		"node", "flags",
#define KEY(name, expr) #name,
		SP_ARENA_FIELDS(KEY)
#undef KEY
	};
	FILE *f = fopen(SEGPOOL_ARENA_DOC, "r");
	char *doc;
	long len;

	(void)state;
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	doc = calloc(1, (size_t)len + 1);
	assert_non_null(doc);
	assert_int_equal(fread(doc, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char want[64];

		snprintf(want, sizeof(want), "| `%s` ", keys[i]);
		if (!strstr(doc, want))
			fail_msg("%s has no row for key %s", SEGPOOL_ARENA_DOC,
				 keys[i]);
	}
	free(doc);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_create_bad_args),
	cmocka_unit_test(test_calls_bad_args),
	cmocka_unit_test(test_alloc_align_and_disjoint),
	cmocka_unit_test(test_chunks_grow_geometrically),
	cmocka_unit_test(test_reset_keeps_and_reuses),
	cmocka_unit_test(test_keep_is_bounded),
	cmocka_unit_test(test_memory_goes_back),
	cmocka_unit_test(test_large_allocation),
	cmocka_unit_test(test_caller_buffer),
	cmocka_unit_test(test_mark_rewind),
	cmocka_unit_test(test_limit),
	cmocka_unit_test(test_threadsafe_shared),
	cmocka_unit_test(test_threadsafe_debug_shared),
	cmocka_unit_test(test_debug_reports),
	cmocka_unit_test(test_env_debug_flags),
	cmocka_unit_test(test_asan_poisons_reset_memory),
	cmocka_unit_test(test_stats_list_arenas),
	cmocka_unit_test(test_segpool_top_shows_arenas),
	cmocka_unit_test(test_doc_names_every_field),
};

SP_TEST_MAIN(tests)
