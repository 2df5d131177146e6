// SPDX-License-Identifier: MIT
/*
 * selftests/api/test_inline.c - the inline hit path (SEGPOOL_INLINE) gives
 * what the called API gives, in every per-CPU mode.
 *
 * Built with SEGPOOL_INLINE, so segpool_cache_alloc() and friends are the
 * inline functions of segpool/inline.h; the called ones are reached by
 * their names in parentheses.  Checked:
 *   - the layout word: open (version 1) after start-up but in AddressSanitizer
 *     builds and under valgrind, the slot bound open in rseq mode only, and
 *     the library's copy of the rseq offset glibc's where the hit paths are
 *     open, 0 in lock and off modes;
 *   - the same results: one operation sequence (fixed seed) run on a thread
 *     pinned to one CPU through the inline calls on one cache and through the
 *     called ones on a twin cache hands out objects in the same order (as
 *     identities: first-seen numbers) and leaves the same counters, hits
 *     and slow paths alike;
 *   - the fallback: with the version word changed (a library of another
 *     layout), every inline call is the library's call and works;
 *   - the ownership stress: threads that mix inline and called allocations
 *     and frees of one cache and of segpool_malloc(), and hand objects to
 *     each other, never see an object twice (the ownership set) or changed
 *     under them (a pattern over the whole object);
 *   - misuse through the inline free is reported as through the call.
 * Each mode is a variant (rseq, rseq by mm_cid, lock, off).
 */
#define SEGPOOL_INLINE 1

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <segpool/segpool.h>
#include "selftests/lib/harness.h"

#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#ifndef TEST_ASAN
#define TEST_ASAN 0
#endif

static const char *const env_rseq_mm_cid[] = {
	sp_test_percpu_rseq, "SEGPOOL_PERCPU_ID=mm_cid", NULL,
};

static const struct sp_test_variant variants[] = {
	{ "mode=rseq", sp_test_env_percpu_rseq },
	{ "mode=rseq_mm_cid", env_rseq_mm_cid },
	{ "mode=lock", sp_test_env_percpu_lock },
	{ "mode=off", sp_test_env_percpu_off },
};

static bool mode_rseq(void)
{
	const char *v = sp_test_variant();

	return v && !strncmp(v, "mode=rseq", 9);
}

#define OBJ_SIZE	96

static void test_layout_word(void **state)
{
	struct segpool_cache *c =
		segpool_cache_create("inl_word", OBJ_SIZE, 0, 0, NULL);
	bool open = !TEST_ASAN && !sp_test_under_valgrind();

	(void)state;
	assert_non_null(c);
	assert_int_equal(segpool_inline_abi.version,
			 open ? SEGPOOL_INLINE_ABI_VERSION : 0);
	/* outside rseq mode every sequence leaves at its id compare */
	if (!mode_rseq())
		assert_int_equal(segpool_inline_abi.nr, 0);
#if SEGPOOL_INLINE_HIT
	/*
	 * The library's copy of glibc's offset, set in every mode before any
	 * cache exists: its hit paths store their descriptor there without
	 * testing it (percpu/pcpu.h sp_pcpu_base()).
	 */
	assert_int_equal(segpool_inline_abi.rseq_off, (long)__rseq_offset);
#elif defined(__aarch64__)
	assert_int_not_equal(segpool_inline_abi.rseq_off, 0);
#endif
	if (open)
		assert_non_null(segpool_inline_abi.by8);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* --- the same sequence both ways ------------------------------------------ */

#define SEQ_OPS		20000
#define SEQ_LIVE	700

struct seq_run {
	uint32_t order[SEQ_OPS];	/* identity of each allocation */
	struct segpool_cache_info info;
};

/* First-seen number of @p among @seen (linear: small sets). */
static uint32_t identity(void **seen, uint32_t *nseen, void *p)
{
	for (uint32_t i = 0; i < *nseen; i++)
		if (seen[i] == p)
			return i;
	seen[*nseen] = p;
	return (*nseen)++;
}

static void run_seq(struct seq_run *r, bool inl, const char *name)
{
	static void *seen[SEQ_OPS];
	void *live[SEQ_LIVE];
	uint32_t nseen = 0, nlive = 0, nallocs = 0;
	uint64_t rnd = 0x9e3779b97f4a7c15ULL;	/* fixed: both runs alike */
	struct segpool_cache *c =
		segpool_cache_create(name, OBJ_SIZE, 0, 0, NULL);

	assert_non_null(c);
	for (int op = 0; op < SEQ_OPS; op++) {
		uint64_t x = sp_test_rand(&rnd);
		/* swings: runs of allocations, then runs of frees */
		bool grow = (op / 300) & 1, likely_alloc = (x & 7) < 6;
		bool alloc = nlive == 0 ||
			     (nlive < SEQ_LIVE && grow == likely_alloc);
		void *p;

		if (alloc) {
			p = inl ? segpool_cache_alloc(c, 0)
				: (segpool_cache_alloc)(c, 0);
			assert_non_null(p);
			memset(p, 0x5a, OBJ_SIZE);
			r->order[nallocs++] = identity(seen, &nseen, p);
			live[nlive++] = p;
		} else {
			uint32_t k = (uint32_t)(x >> 32) % nlive;

			p = live[k];
			live[k] = live[--nlive];
			if (inl)
				segpool_cache_free(c, p);
			else
				(segpool_cache_free)(c, p);
		}
	}
	while (nlive)
		(segpool_cache_free)(c, live[--nlive]);
	for (uint32_t i = nallocs; i < SEQ_OPS; i++)
		r->order[i] = UINT32_MAX;
	r->info = sp_test_info(c);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

static void test_same_results(void **state)
{
	struct seq_run *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	int cpu = sp_test_allowed_cpu(0);

	(void)state;
	assert_true(a && b);
	if (cpu < 0 || sp_test_pin(cpu)) {
		free(a);
		free(b);
		skip();
	}
	run_seq(a, true, "inl_seq_inline");
	run_seq(b, false, "inl_seq_called");
	sp_test_unpin();
	assert_memory_equal(a->order, b->order, sizeof(a->order));
	assert_int_equal(a->info.alloc_fastpath, b->info.alloc_fastpath);
	assert_int_equal(a->info.free_fastpath, b->info.free_fastpath);
	assert_int_equal(a->info.alloc_slowpath, b->info.alloc_slowpath);
	assert_int_equal(a->info.free_slowpath, b->info.free_slowpath);
	if (mode_rseq() && !TEST_ASAN && !sp_test_under_valgrind())
		assert_true(a->info.alloc_fastpath > SEQ_OPS / 4);
	printf("# %s: %llu alloc hits, %llu alloc slow paths, "
	       "the same both ways\n",
	       sp_test_variant() ? sp_test_variant() : "default",
	       (unsigned long long)a->info.alloc_fastpath,
	       (unsigned long long)a->info.alloc_slowpath);
	free(a);
	free(b);
}

/* A library of another layout: the version word differs, every call works. */
static void test_fallback(void **state)
{
	struct segpool_cache *c =
		segpool_cache_create("inl_fallback", OBJ_SIZE, 0, 0, NULL);
	uint32_t v = segpool_inline_abi.version;
	void *p[64];

	(void)state;
	assert_non_null(c);
	__atomic_store_n(&segpool_inline_abi.version, v + 7, __ATOMIC_RELEASE);
	for (int i = 0; i < 64; i++) {
		p[i] = segpool_cache_alloc(c, 0);
		assert_non_null(p[i]);
	}
	for (int i = 0; i < 64; i++)
		segpool_cache_free(c, p[i]);
	p[0] = segpool_malloc(40);
	assert_non_null(p[0]);
	segpool_free(p[0]);
	__atomic_store_n(&segpool_inline_abi.version, v, __ATOMIC_RELEASE);
	{
		struct segpool_cache_info info = sp_test_info(c);

		assert_int_equal(info.allocs, info.frees);
		assert_int_equal(info.allocs, 64);
	}
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* --- ownership stress ----------------------------------------------------- */

#define NTHREADS	4
#define SET_BITS	14
#define INBOX		64

static struct {
	pthread_mutex_t lock;
	void *slot[1 << SET_BITS];
	uint64_t tag[1 << SET_BITS];
} own = { .lock = PTHREAD_MUTEX_INITIALIZER };

static struct {
	pthread_mutex_t lock;
	void *p[INBOX];
	size_t size[INBOX];
	int n;
} inbox = { .lock = PTHREAD_MUTEX_INITIALIZER };

static struct segpool_cache *stress_cache;
static int stress_errors;
static unsigned long stress_ops;

static size_t hslot(void *p)
{
	return (size_t)(((uintptr_t)p * 0x9e3779b97f4a7c15ULL) >>
			(64 - SET_BITS));
}

/* Take @p into the set; false when it is there already (handed out twice). */
static bool own_take(void *p, uint64_t tag)
{
	bool ok = true;
	size_t h = hslot(p);

	pthread_mutex_lock(&own.lock);
	for (;; h = (h + 1) & ((1 << SET_BITS) - 1)) {
		if (own.slot[h] == p) {
			ok = false;
			break;
		}
		if (!own.slot[h]) {
			own.slot[h] = p;
			own.tag[h] = tag;
			break;
		}
	}
	pthread_mutex_unlock(&own.lock);
	return ok;
}

/* Drop @p from the set (linear probing: re-insert the cluster after it). */
static bool own_drop(void *p, uint64_t *tag)
{
	size_t mask = (1 << SET_BITS) - 1, h = hslot(p);
	bool ok = false;

	pthread_mutex_lock(&own.lock);
	for (; own.slot[h]; h = (h + 1) & mask)
		if (own.slot[h] == p) {
			ok = true;
			break;
		}
	if (ok) {
		*tag = own.tag[h];
		own.slot[h] = NULL;
		for (h = (h + 1) & mask; own.slot[h]; h = (h + 1) & mask) {
			void *q = own.slot[h];
			uint64_t t = own.tag[h];
			size_t k = hslot(q);

			own.slot[h] = NULL;
			while (own.slot[k])
				k = (k + 1) & mask;
			own.slot[k] = q;
			own.tag[k] = t;
		}
	}
	pthread_mutex_unlock(&own.lock);
	return ok;
}

static void *stress_alloc(uint64_t *rnd, size_t *size)
{
	uint64_t x = sp_test_rand(rnd);
	bool inl = x & 1;
	void *p;

	switch ((x >> 1) % 4) {
	case 0:
		*size = OBJ_SIZE;
		p = inl ? segpool_cache_alloc(stress_cache, 0)
			: (segpool_cache_alloc)(stress_cache, 0);
		break;
	case 1:
		*size = 24;
		p = inl ? segpool_malloc(24) : (segpool_malloc)(24);
		break;
	case 2:
		*size = 200;
		p = inl ? segpool_malloc(200) : (segpool_malloc)(200);
		break;
	default:
		*size = 1000;
		p = inl ? segpool_malloc(1000) : (segpool_malloc)(1000);
		break;
	}
	return p;
}

static void stress_free(uint64_t *rnd, void *p, size_t size)
{
	bool inl = sp_test_rand(rnd) & 1;

	if (size == OBJ_SIZE) {
		if (inl)
			segpool_cache_free(stress_cache, p);
		else
			(segpool_cache_free)(stress_cache, p);
	} else if (inl) {
		segpool_free(p);
	} else {
		(segpool_free)(p);
	}
}

static void stress_error(const char *what, void *p)
{
	__atomic_fetch_add(&stress_errors, 1, __ATOMIC_RELAXED);
	fprintf(stderr, "# %s: %p\n", what, p);
}

/* Check and give back @p: its tag from the set, its pattern intact. */
static void stress_release(uint64_t *rnd, void *p, size_t size)
{
	uint64_t tag;

	if (!own_drop(p, &tag)) {
		stress_error("freed object missing from the ownership set", p);
		return;
	}
	if (sp_test_pattern_check(p, size, tag) != size)
		stress_error("object changed while held", p);
	stress_free(rnd, p, size);
}

static void *stress_thread(void *arg)
{
	uint64_t rnd = sp_test_seed() + (uintptr_t)arg * 7919 + 1;
	unsigned long ops = sp_test_scaled(100000, 2000);
	void *held[256];
	size_t sizes[256];
	int n = 0;

	for (unsigned long i = 0; i < ops; i++) {
		uint64_t x = sp_test_rand(&rnd);

		if (n < 256 && (n == 0 || x % 8 < 4)) {
			size_t size;
			void *p = stress_alloc(&rnd, &size);
			uint64_t tag = x | 1;

			if (!p) {
				stress_error("allocation failed", NULL);
				break;
			}
			if (!own_take(p, tag))
				stress_error("object handed out twice", p);
			sp_test_pattern_fill(p, size, tag);
			held[n] = p;
			sizes[n++] = size;
		} else if (x % 8 < 7) {
			int k = (int)((x >> 8) % (uint64_t)n);

			stress_release(&rnd, held[k], sizes[k]);
			held[k] = held[--n];
			sizes[k] = sizes[n];
		} else {
			/* hand one over, take one handed over */
			int k = (int)((x >> 8) % (uint64_t)n);

			pthread_mutex_lock(&inbox.lock);
			if (inbox.n < INBOX) {
				inbox.p[inbox.n] = held[k];
				inbox.size[inbox.n++] = sizes[k];
				held[k] = held[--n];
				sizes[k] = sizes[n];
			}
			if (inbox.n && n < 256) {
				int j = (int)((x >> 20) % (uint64_t)inbox.n);

				held[n] = inbox.p[j];
				sizes[n++] = inbox.size[j];
				inbox.p[j] = inbox.p[--inbox.n];
				inbox.size[j] = inbox.size[inbox.n];
			}
			pthread_mutex_unlock(&inbox.lock);
		}
		if ((i & 1023) == 0)
			/* preemption inside the sequences, too */
			sched_yield();
	}
	while (n) {
		n--;
		stress_release(&rnd, held[n], sizes[n]);
	}
	__atomic_fetch_add(&stress_ops, ops, __ATOMIC_RELAXED);
	return NULL;
}

static void test_ownership_stress(void **state)
{
	pthread_t t[NTHREADS];
	uint64_t rnd = sp_test_seed() | 1;
	struct segpool_cache_info info;

	(void)state;
	stress_cache = segpool_cache_create("inl_stress", OBJ_SIZE, 0, 0, NULL);
	assert_non_null(stress_cache);
	for (long i = 0; i < NTHREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, stress_thread,
						(void *)i), 0);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	while (inbox.n) {
		inbox.n--;
		stress_release(&rnd, inbox.p[inbox.n], inbox.size[inbox.n]);
	}
	assert_int_equal(stress_errors, 0);
	info = sp_test_info(stress_cache);
	assert_int_equal(info.allocs, info.frees);
	printf("# %lu operations on %d threads, inline and called mixed; "
	       "cache hits %llu of %llu allocations\n", stress_ops, NTHREADS,
	       (unsigned long long)info.alloc_fastpath,
	       (unsigned long long)(info.alloc_fastpath + info.alloc_slowpath));
	assert_int_equal(segpool_cache_destroy(stress_cache), 0);
}

/* --- misuse through the inline free --------------------------------------- */

static void double_free(void *arg)
{
	struct segpool_cache *c =
		segpool_cache_create("inl_df", OBJ_SIZE, 0, 0, NULL);
	char *p = segpool_cache_alloc(c, 0);

	(void)arg;
	segpool_cache_free(c, p);
	segpool_cache_free(c, p);
}

static void interior(void *arg)
{
	struct segpool_cache *c =
		segpool_cache_create("inl_in", OBJ_SIZE, 0, 0, NULL);
	char *p = segpool_cache_alloc(c, 0);

	(void)arg;
	segpool_cache_free(c, p + 8);
}

static void wrong_cache(void *arg)
{
	struct segpool_cache *a =
		segpool_cache_create("inl_a", OBJ_SIZE, 0, 0, NULL);
	struct segpool_cache *b =
		segpool_cache_create("inl_b", OBJ_SIZE, 0, 0, NULL);
	char *p = segpool_cache_alloc(a, 0);

	(void)arg;
	segpool_cache_free(b, p);
}

static void malloc_double_free(void *arg)
{
	char *p = segpool_malloc(64);

	(void)arg;
	segpool_free(p);
	segpool_free(p);
}

static void test_misuse(void **state)
{
	(void)state;
	assert_true(sp_test_expect_death(double_free, NULL, "double free"));
	assert_true(sp_test_expect_death(interior, NULL, "interior pointer"));
	assert_true(sp_test_expect_death(wrong_cache, NULL, "wrong cache"));
	assert_true(
		sp_test_expect_death(malloc_double_free, NULL, "double free"));
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_layout_word),
	cmocka_unit_test(test_same_results),
	cmocka_unit_test(test_fallback),
	cmocka_unit_test(test_ownership_stress),
	cmocka_unit_test(test_misuse),
};

SP_TEST_MAIN_VARIANTS(tests, variants)
