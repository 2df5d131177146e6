// SPDX-License-Identifier: MIT
/*
 * selftests/stress/test_stress.c - many threads, many caches, cross-thread
 * frees.
 *
 * Each thread allocates at random from several caches (with and without a
 * ctor) and from segpool_malloc(), frees its own objects, and hands objects
 * to other threads through a locked per-thread inbox, so a good share of the
 * frees happen on another thread (and, as threads move between CPUs, on
 * another CPU).  Two independent checks prove that an object is owned by
 * exactly one party at a time:
 *
 *   - an ownership map, a hash set of live pointers under striped mutexes:
 *     inserting a freshly allocated object must find it absent, and removing
 *     it before its free must find it present with the same tag;
 *   - every object is filled with a pattern derived from its tag (thread and
 *     sequence number) over its whole size (sp_test_pattern_fill()), and the
 *     whole pattern is verified before the object is freed, so no write is
 *     ever lost.
 *
 * Ctor objects are additionally checked to be in constructed state when they
 * come out of the cache, and are put back in that state before their free.
 *
 * The program runs in whatever per-CPU mode its environment asks for
 * (SEGPOOL_PERCPU; tools/arm64-rig/arm64-rig.sh runs it in each).  Loads
 * shrink under valgrind and the sanitizers, or by SEGPOOL_TEST_SCALE
 * (sp_test_scaled()).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <segpool/segpool.h>
#include "selftests/lib/harness.h"
#include "selftests/lib/stats_parse.h"

#define CTOR_BYTE	0x5a
#define NSIZES		4
#define NCACHES		(2 * NSIZES)	/* each size with and without a ctor */
#define KIND_MALLOC	NCACHES
#define NKINDS		(NCACHES + 1)

#define HELD_MAX	384
#define INBOX_MAX	256
#define BULK_MAX	16

static const size_t cache_sizes[NSIZES] = { 24, 64, 200, 1000 };

/* --- ctors: one per size, each counting its calls ------------------------- */

static atomic_ulong ctor_calls[NSIZES];

#define DEFINE_CTOR(idx, sz)						\
	static void ctor_##sz(void *obj)				\
	{								\
		memset(obj, CTOR_BYTE, sz);				\
		atomic_fetch_add_explicit(&ctor_calls[idx], 1,		\
					  memory_order_relaxed);	\
	}
DEFINE_CTOR(0, 24)
DEFINE_CTOR(1, 64)
DEFINE_CTOR(2, 200)
DEFINE_CTOR(3, 1000)

static void (*const ctors[NSIZES])(void *) = {
	ctor_24, ctor_64, ctor_200, ctor_1000,
};

/* --- failures found on worker threads ------------------------------------- */

static atomic_int errors;

static void __attribute__((format(printf, 1, 2))) report(const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&errors, 1) >= 20)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "# stress: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* --- one record per live object; it is also the ownership-map node -------- */

struct rec {
	struct rec *hnext;
	unsigned char *p;
	uint64_t tag;
	size_t size;
	int kind;
};

/* --- the ownership map ---------------------------------------------------- */

#define NSTRIPES	256
#define NBUCKETS	1024

struct stripe {
	pthread_mutex_t lock;
	struct rec *bucket[NBUCKETS];
} __attribute__((aligned(64)));

static struct stripe map[NSTRIPES];
static atomic_long map_live;

static uint64_t ptr_hash(const void *p)
{
	uint64_t h = (uint64_t)(uintptr_t)p;

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

static void map_init(void)
{
	int i;

	for (i = 0; i < NSTRIPES; i++) {
		pthread_mutex_init(&map[i].lock, NULL);
		memset(map[i].bucket, 0, sizeof(map[i].bucket));
	}
	atomic_store(&map_live, 0);
}

/* A fresh object must not be live anywhere else. */
static void map_insert(struct rec *r)
{
	uint64_t h = ptr_hash(r->p);
	struct stripe *s = &map[h % NSTRIPES];
	struct rec **b = &s->bucket[(h / NSTRIPES) % NBUCKETS], *it;

	pthread_mutex_lock(&s->lock);
	for (it = *b; it; it = it->hnext) {
		if (it->p == r->p) {
			pthread_mutex_unlock(&s->lock);
			report("object %p handed out while live (tag %#llx, "
			       "new tag %#llx, kind %d)",
			       (void *)r->p, (unsigned long long)it->tag,
			       (unsigned long long)r->tag, r->kind);
			return;
		}
	}
	r->hnext = *b;
	*b = r;
	pthread_mutex_unlock(&s->lock);
	atomic_fetch_add_explicit(&map_live, 1, memory_order_relaxed);
}

/* Before its free an object must be live, and owned by this record. */
static void map_remove(struct rec *r)
{
	uint64_t h = ptr_hash(r->p);
	struct stripe *s = &map[h % NSTRIPES];
	struct rec **pp = &s->bucket[(h / NSTRIPES) % NBUCKETS];

	pthread_mutex_lock(&s->lock);
	for (; *pp; pp = &(*pp)->hnext) {
		if ((*pp)->p == r->p) {
			struct rec *it = *pp;

			*pp = it->hnext;
			pthread_mutex_unlock(&s->lock);
			if (it != r)
				report("object %p owned by tag %#llx, "
				       "freed as tag %#llx",
				       (void *)r->p,
				       (unsigned long long)it->tag,
				       (unsigned long long)r->tag);
			atomic_fetch_sub_explicit(&map_live, 1,
						  memory_order_relaxed);
			return;
		}
	}
	pthread_mutex_unlock(&s->lock);
	report("object %p (tag %#llx) not live at its free", (void *)r->p,
	       (unsigned long long)r->tag);
}

/* --- checks --------------------------------------------------------------- */

static size_t first_not(const unsigned char *p, size_t n, unsigned char b)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != b)
			return i;
	return n;
}

/* --- the run -------------------------------------------------------------- */

struct stress;

struct worker {
	pthread_t th;
	struct stress *st;
	int id;
	uint64_t rng, seq;
	struct rec *held[HELD_MAX];
	size_t nheld;
	pthread_mutex_t inbox_lock;
	struct rec *inbox[INBOX_MAX];
	size_t ninbox;
	unsigned long allocs, frees, remote_frees, handoffs;
} __attribute__((aligned(64)));

struct stress {
	int nthreads;
	unsigned long ops;
	struct segpool_cache *caches[NCACHES];
	struct worker *w;
	pthread_barrier_t barrier;
	bool migrate;
};

static bool kind_has_ctor(int kind)
{
	return kind >= NSIZES && kind < NCACHES;
}

static size_t kind_size(int kind)
{
	return cache_sizes[kind % NSIZES];
}

static size_t malloc_size(uint64_t x)
{
	switch (x % 64) {
	case 0:
		return 32768 + (size_t)(x >> 20) % 70000;	/* large path */
	case 1: case 2: case 3: case 4:
		return 4096 + (size_t)(x >> 20) % 28672;
	default:
		return 1 + (size_t)(x >> 20) % 2048;
	}
}

static struct rec *new_rec(struct worker *w, unsigned char *p, int kind,
			   size_t size)
{
	struct rec *r = malloc(sizeof(*r));

	if (!r) {
		report("libc malloc failed");
		abort();
	}
	r->p = p;
	r->kind = kind;
	r->size = size;
	r->tag = ((uint64_t)(w->id + 1) << 48) | ++w->seq;
	r->hnext = NULL;
	return r;
}

/* A fresh object: check it, claim it in the map, write its pattern. */
static void adopt_new(struct worker *w, struct rec *r, bool zeroed)
{
	if (!r->p) {
		report("thread %d: allocation of kind %d (size %zu) failed: %s",
		       w->id, r->kind, r->size, strerror(errno));
		free(r);
		return;
	}
	if ((uintptr_t)r->p % (r->size > 8 ? 16 : 8) != 0 &&
	    r->kind == KIND_MALLOC)
		report("segpool_malloc(%zu) = %p misaligned", r->size,
		       (void *)r->p);
	if (r->kind != KIND_MALLOC && (uintptr_t)r->p % 8 != 0)
		report("cache object %p misaligned", (void *)r->p);
	if (r->kind == KIND_MALLOC && segpool_usable_size(r->p) < r->size)
		report("usable_size %zu < %zu", segpool_usable_size(r->p),
		       r->size);
	if (kind_has_ctor(r->kind)) {
		size_t off = first_not(r->p, r->size, CTOR_BYTE);

		if (off != r->size)
			report("ctor object %p (size %zu) not constructed at "
			       "byte %zu",
			       (void *)r->p, r->size, off);
	} else if (zeroed) {
		size_t off = first_not(r->p, r->size, 0);

		if (off != r->size)
			report("SEGPOOL_ZERO object %p not zero at byte %zu",
			       (void *)r->p, off);
	}
	map_insert(r);
	sp_test_pattern_fill(r->p, r->size, r->tag);
	w->allocs++;
	if (w->nheld < HELD_MAX)
		w->held[w->nheld++] = r;
	else
		report("held overflow");
}

static void alloc_one(struct worker *w)
{
	uint64_t x = sp_test_rand(&w->rng);
	int kind = (int)(x % NKINDS);
	unsigned char *p;
	bool zero = false;
	size_t size;

	if (kind == KIND_MALLOC) {
		size = malloc_size(x >> 8);
		switch ((x >> 4) % 8) {
		case 0:
			p = segpool_calloc(1, size);
			zero = true;
			break;
		case 1:
			p = segpool_aligned_alloc(64, size);
			if (p && (uintptr_t)p % 64)
				report("aligned_alloc(64, %zu) = %p", size,
				       (void *)p);
			break;
		default:
			p = segpool_malloc(size);
			break;
		}
	} else {
		struct segpool_cache *c = w->st->caches[kind];

		size = kind_size(kind);
		if (!kind_has_ctor(kind) && (x >> 4) % 4 == 0)
			zero = true;
		p = segpool_cache_alloc(c, zero ? SEGPOOL_ZERO : 0);
	}
	adopt_new(w, new_rec(w, p, kind, size), zero);
}

static void alloc_bulk(struct worker *w)
{
	uint64_t x = sp_test_rand(&w->rng);
	int kind = (int)(x % NCACHES), got, i;
	size_t n = 1 + (size_t)(x >> 8) % BULK_MAX;
	void *objs[BULK_MAX];

	if (w->nheld + n > HELD_MAX)
		return;
	got = segpool_cache_alloc_bulk(w->st->caches[kind], 0, n, objs);
	if (got != (int)n) {
		report("alloc_bulk(%zu) of kind %d returned %d: %s", n, kind,
		       got, strerror(errno));
		return;
	}
	for (i = 0; i < got; i++)
		adopt_new(w, new_rec(w, objs[i], kind, kind_size(kind)), false);
}

/* The last owner checks its record and gives the object up. */
static void release(struct rec *r)
{
	size_t off = sp_test_pattern_check(r->p, r->size, r->tag);

	if (off != r->size)
		report("object %p (kind %d, size %zu, tag %#llx): "
		       "byte %zu lost its pattern",
		       (void *)r->p, r->kind, r->size,
		       (unsigned long long)r->tag, off);
	if (r->kind == KIND_MALLOC && segpool_usable_size(r->p) < r->size)
		report("usable_size of %p shrank below %zu", (void *)r->p,
		       r->size);
	map_remove(r);
	if (kind_has_ctor(r->kind))
		/* back to constructed */
		memset(r->p, CTOR_BYTE, r->size);
}

static void free_rec(struct worker *w, struct rec *r)
{
	release(r);
	if (r->kind == KIND_MALLOC)
		segpool_free(r->p);
	else
		segpool_cache_free(w->st->caches[r->kind], r->p);
	w->frees++;
	free(r);
}

static struct rec *take_held(struct worker *w, size_t i)
{
	struct rec *r = w->held[i];

	w->held[i] = w->held[--w->nheld];
	return r;
}

static void free_one(struct worker *w)
{
	uint64_t x = sp_test_rand(&w->rng);

	if (w->nheld)
		free_rec(w, take_held(w, (size_t)(x % w->nheld)));
}

/* Free up to BULK_MAX held objects of one cache with one call. */
static void free_bulk(struct worker *w)
{
	uint64_t x = sp_test_rand(&w->rng);
	int kind = (int)(x % NCACHES);
	struct rec *rs[BULK_MAX];
	void *objs[BULK_MAX];
	size_t n = 0, i = w->nheld;

	while (i-- > 0 && n < BULK_MAX) {
		if (w->held[i]->kind == kind) {
			rs[n] = take_held(w, i);
			release(rs[n]);
			objs[n] = rs[n]->p;
			n++;
		}
	}
	if (n > 1)
		objs[n / 2] = NULL;	/* NULL entries are skipped */
	segpool_cache_free_bulk(w->st->caches[kind], n, objs);
	if (n > 1)
		segpool_cache_free(w->st->caches[kind], rs[n / 2]->p);
	for (i = 0; i < n; i++)
		free(rs[i]);
	w->frees += n;
}

static void hand_off(struct worker *w)
{
	uint64_t x = sp_test_rand(&w->rng);
	struct worker *to;
	struct rec *r;
	size_t i;

	if (!w->nheld || w->st->nthreads < 2)
		return;
	to = &w->st->w[(w->id + 1 +
			(int)(x % (uint64_t)(w->st->nthreads - 1))) %
		       w->st->nthreads];
	i = (size_t)(x >> 32) % w->nheld;
	r = w->held[i];
	pthread_mutex_lock(&to->inbox_lock);
	if (to->ninbox < INBOX_MAX) {
		to->inbox[to->ninbox++] = r;
		pthread_mutex_unlock(&to->inbox_lock);
		take_held(w, i);
		w->handoffs++;
	} else {
		pthread_mutex_unlock(&to->inbox_lock);
	}
}

/* Objects handed to us: free most at once (a cross-thread free), keep some. */
static void drain_inbox(struct worker *w, bool keep_some)
{
	struct rec *got[INBOX_MAX];
	size_t n, i;

	pthread_mutex_lock(&w->inbox_lock);
	n = w->ninbox;
	memcpy(got, w->inbox, n * sizeof(got[0]));
	w->ninbox = 0;
	pthread_mutex_unlock(&w->inbox_lock);
	for (i = 0; i < n; i++) {
		uint64_t x = sp_test_rand(&w->rng);

		if (keep_some && x % 4 == 0 && w->nheld < HELD_MAX) {
			/* verify now, keep it as ours */
			size_t off = sp_test_pattern_check(got[i]->p,
							   got[i]->size,
							   got[i]->tag);

			if (off != got[i]->size)
				report("handed-off object %p lost its pattern "
				       "at byte %zu",
				       (void *)got[i]->p, off);
			w->held[w->nheld++] = got[i];
		} else {
			free_rec(w, got[i]);
			w->remote_frees++;
		}
	}
}

/* To one of the CPUs the program started on, at random. */
static void maybe_migrate(struct worker *w)
{
	uint64_t ncpus = (uint64_t)sp_test_nr_cpus();

	if (!w->st->migrate || ncpus < 2)
		return;
	sp_test_pin(sp_test_allowed_cpu((unsigned int)(sp_test_rand(&w->rng) %
						       ncpus)));
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned long op;

	pthread_barrier_wait(&w->st->barrier);
	for (op = 0; op < w->st->ops; op++) {
		uint64_t x = sp_test_rand(&w->rng) % 100;

		if (op % 16 == 0)
			drain_inbox(w, true);
		if (op % 1024 == 512)
			maybe_migrate(w);
		if (w->nheld < 8 || x < 40) {
			if (w->nheld < HELD_MAX)
				alloc_one(w);
			else
				free_one(w);
		} else if (x < 72) {
			free_one(w);
		} else if (x < 86) {
			hand_off(w);
		} else if (x < 93) {
			alloc_bulk(w);
		} else if (x < 98) {
			free_bulk(w);
		} else {
			sched_yield();
		}
	}
	/* nobody hands anything over after this barrier */
	pthread_barrier_wait(&w->st->barrier);
	drain_inbox(w, false);
	while (w->nheld)
		free_rec(w, take_held(w, w->nheld - 1));
	if (w->st->migrate)
		sp_test_unpin();
	return NULL;
}

/* Sum of active_objs over the kmalloc rows of the stats dump. */
static long kmalloc_active(void)
{
	return (long)sp_slabinfo_sum_active("kmalloc-");
}

static void run_stress(int nthreads, unsigned long total_ops, bool migrate)
{
	struct stress st;
	unsigned long allocs = 0, frees = 0, remote = 0, handoffs = 0;
	unsigned long ctor_before[NSIZES];
	uint64_t seed = sp_test_seed();
	long km_before, km_after;
	int i;

	memset(&st, 0, sizeof(st));
	st.nthreads = nthreads;
	total_ops = sp_test_scaled(total_ops, 1000UL * (unsigned long)nthreads);
	st.ops = total_ops / (unsigned long)nthreads;
	st.migrate = migrate;
	atomic_store(&errors, 0);
	map_init();
	for (i = 0; i < NSIZES; i++)
		ctor_before[i] = atomic_load(&ctor_calls[i]);

	for (i = 0; i < NCACHES; i++) {
		char name[48];

		snprintf(name, sizeof(name), "tst-%d-%zu%s", nthreads,
			 kind_size(i), kind_has_ctor(i) ? "-ctor" : "");
		st.caches[i] = segpool_cache_create(
			name, kind_size(i), 0,
			i == 1 ? SEGPOOL_HWCACHE_ALIGN : 0,
			kind_has_ctor(i) ? ctors[i % NSIZES] : NULL);
		assert_non_null(st.caches[i]);
	}
	km_before = kmalloc_active();

	st.w = aligned_alloc(64, sizeof(*st.w) * (size_t)nthreads);
	assert_non_null(st.w);
	memset(st.w, 0, sizeof(*st.w) * (size_t)nthreads);
	assert_int_equal(pthread_barrier_init(&st.barrier, NULL,
					      (unsigned)nthreads), 0);
	for (i = 0; i < nthreads; i++) {
		struct worker *w = &st.w[i];

		w->st = &st;
		w->id = i;
		w->rng = seed ^ ((uint64_t)(i + 1) * 0x9e3779b97f4a7c15ULL) ^
			 ((uint64_t)nthreads << 56);
		if (!w->rng)
			w->rng = 1;
		pthread_mutex_init(&w->inbox_lock, NULL);
	}
	for (i = 0; i < nthreads; i++)
		assert_int_equal(pthread_create(&st.w[i].th, NULL, worker_main,
						&st.w[i]), 0);
	for (i = 0; i < nthreads; i++) {
		pthread_join(st.w[i].th, NULL);
		allocs += st.w[i].allocs;
		frees += st.w[i].frees;
		remote += st.w[i].remote_frees;
		handoffs += st.w[i].handoffs;
		pthread_mutex_destroy(&st.w[i].inbox_lock);
	}
	pthread_barrier_destroy(&st.barrier);
	print_message(
		"# %d threads: %lu allocs, %lu frees, %lu handed off, "
		"%lu freed remotely\n",
		nthreads, allocs, frees, handoffs, remote);

	assert_int_equal(atomic_load(&errors), 0);
	assert_int_equal(allocs, frees);
	assert_int_equal(atomic_load(&map_live), 0);
	assert_true(remote > 0 || nthreads < 2);

	for (i = 0; i < NCACHES; i++) {
		struct segpool_cache_info info = sp_test_info(st.caches[i]);

		if (info.active_objs != 0 || info.allocs != info.frees)
			fail_msg("%s: %llu active, %llu allocs, %llu frees",
				 segpool_cache_name(st.caches[i]),
				 (unsigned long long)info.active_objs,
				 (unsigned long long)info.allocs,
				 (unsigned long long)info.frees);
		if (kind_has_ctor(i)) {
			unsigned long calls =
				atomic_load(&ctor_calls[i % NSIZES]) -
				ctor_before[i % NSIZES];

			if (calls != info.slabs_created * info.objs_per_slab)
				fail_msg(
					"%s: %lu ctor calls for %llu slabs of "
					"%u",
					segpool_cache_name(st.caches[i]), calls,
					(unsigned long long)info.slabs_created,
					info.objs_per_slab);
		}
		assert_int_equal(segpool_cache_destroy(st.caches[i]), 0);
	}
	km_after = kmalloc_active();
	if (km_after != km_before)
		fail_msg("kmalloc active objects %ld before, %ld after",
			 km_before, km_after);
	free(st.w);
}

static void test_stress_4(void **state)
{
	(void)state;
	run_stress(4, 1500000, false);
}

static void test_stress_8_migrate(void **state)
{
	(void)state;
	run_stress(8, 1500000, true);
}

static void test_stress_16(void **state)
{
	(void)state;
	run_stress(16, 1500000, true);
}

static void test_stress_2(void **state)
{
	(void)state;
	run_stress(2, 800000, false);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_stress_2),
	cmocka_unit_test(test_stress_4),
	cmocka_unit_test(test_stress_8_migrate),
	cmocka_unit_test(test_stress_16),
};

SP_TEST_MAIN(tests)
