// SPDX-License-Identifier: MIT
/*
 * selftests/unit/test_harden.c - hardened free-list links and random slab
 * order.
 *
 * The program runs twice, as two variants (SP_TEST_MAIN_VARIANTS): with
 * links encoded (the default) and with SEGPOOL_FREELIST_HARDENED=0,
 * so the variable is read and both settings are checked to allocate
 * correctly.  Links are read raw from freed objects here, which is why the
 * tests open them for ASan and valgrind first (as the slab layer does).
 * The link tests make their caches with sp_test_linked_cache(): a cache of
 * small objects keeps its free objects in a map (of up to 512) and links
 * none (SP_CACHE_FREEMAP, slab/geometry.c).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <segpool/segpool.h>

#include "core/core.h"
#include "internal/sanitize.h"
#include "slab/slab.h"
#include "selftests/lib/harness.h"

static const char *const env_hardened[] = { "SEGPOOL_FREELIST_HARDENED", NULL };
static const char *const env_plain[] = { "SEGPOOL_FREELIST_HARDENED=0", NULL };

static const struct sp_test_variant variants[] = {
	{ "hardened=default", env_hardened },
	{ "hardened=0", env_plain },
};

/* Is this run the one with links encoded? */
static bool want_hardened(void)
{
	const char *v = sp_test_variant();

	return !v || strcmp(v, "hardened=0");
}

/* The raw word stored at @obj's link, opened for the tools as the slab
 * layer opens it. */
static uintptr_t raw_link(struct segpool_cache *c, void *obj)
{
	char *at = (char *)obj + c->fp_offset;
	uintptr_t v;

	sp_san_link_open(c, at);
	memcpy(&v, at, sizeof(v));
	sp_san_link_close(c, at);
	return v;
}

/*
 * Overwrite @obj's link with @v as a stray write would (unseen by the tools).
 */
static void plant_link(struct segpool_cache *c, void *obj, uintptr_t v)
{
	char *at = (char *)obj + c->fp_offset;

	sp_san_link_open(c, at);
	memcpy(at, &v, sizeof(v));
	sp_san_link_close(c, at);
}

/*
 * Put objs[1..n-1] on their slab's free list (objs[0] stays allocated, so
 * the slab is not left empty, which would drop its list).
 */
static void free_onto_slab(struct segpool_cache *c, void **objs, size_t n)
{
	for (size_t i = 1; i < n; i++)
		segpool_cache_free(c, objs[i]);
	/* a shrink drains the magazines into the slabs */
	assert_true(segpool_cache_shrink(c) >= 0);
}

static void test_env_read(void **state)
{
	(void)state;
	assert_int_equal(sp_freelist_hardened, want_hardened());
}

/* Links are stored encoded (or plain), and decode back to the free list. */
static void test_link_encoding(void **state)
{
	struct segpool_cache *c =
		sp_test_linked_cache("hd-enc", 48, 0, NULL);
	void *objs[8];
	struct sp_slab *s;
	unsigned int seen = 0;

	(void)state;
	assert_non_null(c);
	assert_int_equal(c->fl_secret != 0, want_hardened());
	assert_int_equal(segpool_cache_alloc_bulk(c, 0, 8, objs), 8);
	free_onto_slab(c, objs, 8);

	s = sp_obj_to_slab(objs[0]);
	assert_non_null(s);
	for (void *obj = s->freelist; obj; seen++) {
		char *at = (char *)obj + c->fp_offset;
		uintptr_t raw = raw_link(c, obj);
		void *next = sp_get_freeptr(c, obj);
		bool ours = false;

		for (size_t i = 1; i < 8; i++)
			ours |= objs[i] == obj;
		assert_true(ours);
		if (want_hardened()) {
			assert_true(raw != (uintptr_t)next);
			assert_true(raw == ((uintptr_t)next ^ c->fl_secret ^
					    __builtin_bswap64((uintptr_t)at)));
		} else {
			assert_true(raw == (uintptr_t)next);
		}
		assert_true(seen < 8);
		obj = next;
	}
	assert_int_equal(seen, 7);
	segpool_cache_free(c, objs[0]);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* Two caches never share a secret (a leaked one opens no other cache). */
static void test_secrets_differ(void **state)
{
	struct segpool_cache *a = sp_test_linked_cache("hd-sa", 32, 0, NULL);
	struct segpool_cache *b = sp_test_linked_cache("hd-sb", 32, 0, NULL);

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	if (want_hardened())
		assert_true(a->fl_secret != b->fl_secret);
	else
		assert_true(a->fl_secret == 0 && b->fl_secret == 0);
	assert_int_equal(segpool_cache_destroy(a), 0);
	assert_int_equal(segpool_cache_destroy(b), 0);
}

struct plant {
	uintptr_t value;	/* 0: a plain pointer to objs[3] */
	size_t size;
	void (*ctor)(void *);
};

static void ctor_fill(void *p)
{
	memset(p, 0x5a, 40);
}

/*
 * A child that plants a link stays on one CPU: on a machine of several
 * nodes a move to another CPU between its frees and its allocation put
 * them on different nodes (the frees sent home, the allocation served by
 * another node's slabs), and the planted link was never walked: the
 * emulated arm64 machine of two nodes saw it (the child exited 4).
 */
static void stay_on_one_cpu(void)
{
	if (sp_test_pin(sp_test_allowed_cpu(0)))
		_exit(8);
}

/* Child: corrupt the links of free objects, then allocate through them. */
static void corrupt_and_alloc(void *arg)
{
	const struct plant *p = arg;
	struct segpool_cache *c = sp_test_linked_cache("hd-bad", p->size, 0,
						       p->ctor);
	void *objs[6], *more[4];
	uintptr_t v;

	stay_on_one_cpu();

	if (!c || segpool_cache_alloc_bulk(c, 0, 6, objs) != 6)
		_exit(2);
	/* objs[1], objs[2] go to the free list; objs[3..5] stay allocated */
	segpool_cache_free(c, objs[1]);
	segpool_cache_free(c, objs[2]);
	if (segpool_cache_shrink(c) < 0)
		_exit(3);
	/* a plain pointer to a live object: what an unhardened list obeys */
	v = p->value ? p->value : (uintptr_t)objs[3];
	plant_link(c, objs[1], v);
	plant_link(c, objs[2], v);
	if (segpool_cache_alloc_bulk(c, 0, 3, more))
		_exit(4);	/* handed out: the parent sees no abort */
}

/* A link overwritten with garbage is reported, not followed. */
static void test_bad_link_reported(void **state)
{
	struct plant garbage = { .value = 0x4141414141414141UL, .size = 48 };

	(void)state;
	if (!want_hardened())
		skip();
	assert_true(sp_test_expect_death(corrupt_and_alloc, &garbage,
					 "bad free-list pointer"));
	assert_true(sp_test_expect_death(corrupt_and_alloc, &garbage,
					 "(cache hd-bad, slab "));
}

/* A forged plain pointer to a live object is reported too. */
static void test_forged_link_reported(void **state)
{
	struct plant forged = { .value = 0, .size = 48 };

	(void)state;
	if (!want_hardened())
		skip();
	assert_true(sp_test_expect_death(corrupt_and_alloc, &forged,
					 "bad free-list pointer"));
}

/*
 * With a ctor the link is after the object: a write past a freed one hits it.
 */
static void test_link_after_object(void **state)
{
	struct plant garbage = { .value = 0x10, .size = 40, .ctor = ctor_fill };

	(void)state;
	if (!want_hardened())
		skip();
	assert_true(sp_test_expect_death(corrupt_and_alloc, &garbage,
					 "link at offset 40"));
}

/*
 * The report shows the word stored in the object, never what it decodes
 * to: the decoded link with the stored word and its address gives the
 * cache's secret.  The child writes the decoded values of the two bad
 * links into a shared page before it allocates through them.
 */
static uintptr_t *decoded_seen;

static void corrupt_note_decoded(void *arg)
{
	const struct plant *p = arg;
	struct segpool_cache *c = sp_test_linked_cache("hd-raw", p->size, 0,
						       NULL);
	void *objs[6], *more[4];

	stay_on_one_cpu();

	if (!c || segpool_cache_alloc_bulk(c, 0, 6, objs) != 6)
		_exit(2);
	segpool_cache_free(c, objs[1]);
	segpool_cache_free(c, objs[2]);
	if (segpool_cache_shrink(c) < 0)
		_exit(3);
	plant_link(c, objs[1], p->value);
	plant_link(c, objs[2], p->value);
	decoded_seen[0] = (uintptr_t)sp_get_freeptr(c, objs[1]);
	decoded_seen[1] = (uintptr_t)sp_get_freeptr(c, objs[2]);
	if (segpool_cache_alloc_bulk(c, 0, 3, more))
		_exit(4);
}

static void test_report_prints_raw_word(void **state)
{
	struct plant garbage = { .value = 0x4141414141414141UL, .size = 48 };
	char buf[4096], dec[32];
	int status;

	(void)state;
	if (!want_hardened())
		skip();
	decoded_seen = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(decoded_seen != MAP_FAILED);
	assert_int_equal(sp_test_run_child(corrupt_note_decoded, &garbage, buf,
					   sizeof(buf), &status), 0);
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT)
		fail_msg("child did not abort (status %#x): %s", status, buf);
	if (!strstr(buf, "bad free-list pointer") ||
	    !strstr(buf, "holds 0x4141414141414141)"))
		fail_msg("report lacks the stored word: %s", buf);
	for (int i = 0; i < 2; i++) {
		assert_true(decoded_seen[i] != 0);
		assert_true(decoded_seen[i] != garbage.value);
		snprintf(dec, sizeof(dec), "%#lx",
			 (unsigned long)decoded_seen[i]);
		if (strstr(buf, dec))
			fail_msg("report shows the decoded link %s: %s", dec,
				 buf);
		snprintf(dec, sizeof(dec), "%lx",
			 (unsigned long)decoded_seen[i]);
		if (strstr(buf, dec))
			fail_msg("report shows the decoded link %s: %s", dec,
				 buf);
	}
	munmap(decoded_seen, 4096);
}

/*
 * A link that decodes to its own object (forged with the secret, or a
 * plain self-pointer without hardening) is refused: followed, the object
 * would come back on every allocation.
 */
static void self_link_and_alloc(void *arg)
{
	struct segpool_cache *c = sp_test_linked_cache("hd-self", 48, 0,
						       NULL);
	void *objs[6], *more[4], *head;
	struct sp_slab *s;

	stay_on_one_cpu();

	(void)arg;
	if (!c || segpool_cache_alloc_bulk(c, 0, 6, objs) != 6)
		_exit(2);
	segpool_cache_free(c, objs[1]);
	segpool_cache_free(c, objs[2]);
	if (segpool_cache_shrink(c) < 0)
		_exit(3);
	s = sp_obj_to_slab(objs[3]);
	head = s ? s->freelist : NULL;
	if (!head)
		_exit(5);
	/* the encoding the cache itself would store for a link to @head */
	sp_set_freeptr(c, head, head);
	if (sp_get_freeptr(c, head) != head)
		_exit(6);
	if (segpool_cache_alloc_bulk(c, 0, 3, more))
		_exit(more[0] == more[1] ? 7 : 4);	/* handed out */
}

static void test_self_link_reported(void **state)
{
	(void)state;
	assert_true(
		sp_test_expect_death(self_link_and_alloc, NULL,
				     "bad free-list pointer in free object"));
	assert_true(sp_test_expect_death(self_link_and_alloc, NULL,
					 "(cache hd-self, slab "));
}

/* Seeded churn with object contents checked: correct either way. */
static void test_churn_correct(void **state)
{
	enum { N = 512 };
	struct segpool_cache *c = segpool_cache_create("hd-churn", 96, 0,
						       SEGPOOL_FREELIST_RANDOM,
						       NULL);
	static void *objs[N];
	static uint64_t tags[N];
	uint64_t rng = sp_test_seed() | 1;
	unsigned long ops = sp_test_scaled(200000, 4000);
	size_t live = 0;

	(void)state;
	assert_non_null(c);
	memset(objs, 0, sizeof(objs));
	for (unsigned long op = 0; op < ops; op++) {
		size_t i = sp_test_rand(&rng) % N;

		if (objs[i]) {
			assert_int_equal(sp_test_pattern_check(objs[i], 96,
							       tags[i]),
					 96);
			segpool_cache_free(c, objs[i]);
			objs[i] = NULL;
			live--;
		} else {
			objs[i] = segpool_cache_alloc(c, 0);
			assert_non_null(objs[i]);
			tags[i] = op;
			sp_test_pattern_fill(objs[i], 96, tags[i]);
			live++;
		}
		if (op % 10000 == 0)
			/* links through the slabs */
			segpool_cache_shrink(c);
	}
	assert_int_equal(sp_test_info(c).active_objs, live);
	for (size_t i = 0; i < N; i++) {
		if (!objs[i])
			continue;
		assert_int_equal(sp_test_pattern_check(objs[i], 96, tags[i]),
				 96);
		segpool_cache_free(c, objs[i]);
	}
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* Indices of @n objects of one slab, from its first byte. */
static void slab_indices(struct segpool_cache *c, void **objs, unsigned int n,
			 unsigned int *idx)
{
	struct sp_slab *s = sp_obj_to_slab(objs[0]);

	assert_non_null(s);
	for (unsigned int i = 0; i < n; i++) {
		assert_ptr_equal(sp_obj_to_slab(objs[i]), s);
		idx[i] =
			(unsigned int)(((char *)objs[i] - s->base) / c->stride);
	}
}

static bool is_permutation(const unsigned int *idx, unsigned int n)
{
	unsigned char *seen = calloc(n, 1);
	bool ok = seen != NULL;

	for (unsigned int i = 0; ok && i < n; i++) {
		ok = idx[i] < n && !seen[idx[i]];
		if (ok)
			seen[idx[i]] = 1;
	}
	free(seen);
	return ok;
}

static bool is_sequential(const unsigned int *idx, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (idx[i] != i)
			return false;
	return true;
}

/* A whole slab, taken at once: random order with the flag, address order
 * without; and random again once the slab was emptied and refilled. */
static void test_random_order(void **state)
{
	struct segpool_cache *r = segpool_cache_create("hd-rand", 128, 0,
						       SEGPOOL_FREELIST_RANDOM,
						       NULL);
	struct segpool_cache *q =
		sp_test_linked_cache("hd-seq", 128, 0, NULL);
	unsigned int n, *idx, runs_sorted = 0;
	void **objs;

	(void)state;
	assert_non_null(r);
	assert_non_null(q);
	n = r->objs_per_slab;
	assert_int_equal(q->objs_per_slab, n);
	assert_true(n >= 16);
	objs = calloc(n, sizeof(*objs));
	idx = calloc(n, sizeof(*idx));
	assert_non_null(objs);
	assert_non_null(idx);

	assert_int_equal(segpool_cache_alloc_bulk(q, 0, n, objs), (int)n);
	slab_indices(q, objs, n, idx);
	assert_true(is_sequential(idx, n));
	segpool_cache_free_bulk(q, n, objs);

	for (int round = 0; round < 3; round++) {
		assert_int_equal(segpool_cache_alloc_bulk(r, 0, n, objs),
				 (int)n);
		slab_indices(r, objs, n, idx);
		assert_true(is_permutation(idx, n));
		runs_sorted += is_sequential(idx, n);
		segpool_cache_free_bulk(r, n, objs);
		/* back to the slab, empty: its next use draws a new order */
		assert_true(segpool_cache_shrink(r) >= 0);
	}
	/* 1 in n! per round for a working shuffle */
	assert_int_equal(runs_sorted, 0);
	free(objs);
	free(idx);
	assert_int_equal(segpool_cache_destroy(r), 0);
	assert_int_equal(segpool_cache_destroy(q), 0);
}

/* The flag is public: accepted, and named in the statistics. */
static void test_random_flag(void **state)
{
	struct segpool_cache *c;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_true(SEGPOOL_CACHE_FLAGS_VALID & SEGPOOL_FREELIST_RANDOM);
	c = segpool_cache_create("hd-flag", 24, 0, SEGPOOL_FREELIST_RANDOM |
				 SEGPOOL_HWCACHE_ALIGN, NULL);
	assert_non_null(c);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(segpool_stats_dump_detail(f, "hd-flag", 0), 0);
	fclose(f);
	assert_non_null(strstr(buf, "freelist_random"));
	free(buf);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_env_read),
	cmocka_unit_test(test_link_encoding),
	cmocka_unit_test(test_secrets_differ),
	cmocka_unit_test(test_bad_link_reported),
	cmocka_unit_test(test_forged_link_reported),
	cmocka_unit_test(test_link_after_object),
	cmocka_unit_test(test_report_prints_raw_word),
	cmocka_unit_test(test_self_link_reported),
	cmocka_unit_test(test_churn_correct),
	cmocka_unit_test(test_random_order),
	cmocka_unit_test(test_random_flag),
};

SP_TEST_MAIN_VARIANTS(tests, variants)
