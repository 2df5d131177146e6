// SPDX-License-Identifier: MIT
/*
 * selftests/unit/test_percpu.c - the per-CPU magazine layer, deterministically.
 *
 * The per-CPU mode is fixed per process at start-up (SEGPOOL_PERCPU), so the
 * program runs once per mode (SP_TEST_MAIN_VARIANTS): each variant mode=*
 * is one process, its own TAP line, running every test below in that mode.
 * A test that does not apply to the mode it finds skips.  The "rseq"
 * runs accept the fallback to lock mode only where rseq cannot work:
 * under valgrind (which does not implement rseq), in ThreadSanitizer builds
 * (whose default is lock mode, as TSan cannot see into the assembly: they
 * leave SEGPOOL_PERCPU unset there), or on a kernel without rseq or
 * membarrier's rseq fence; the test says so in its output.
 *
 * In lock mode sp_pcpu_test_inject_slot() chooses the CPU slot, so the
 * Bonwick transitions (swap, depot exchange, fill) are checked counter by
 * counter; in rseq mode threads are pinned to CPUs instead.
 *
 * Loads shrink under valgrind and the sanitizers, or by SEGPOOL_TEST_SCALE
 * (sp_test_scaled()).  Random choices come from sp_test_seed().
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <segpool/segpool.h>

#include "segpool_config.h"
#include "core/core.h"
#include "numa/region.h"
#include "numa/topology.h"
#include "os/cpu.h"
#include "percpu/pcpu.h"
#include "percpu/stash.h"
#include "selftests/lib/harness.h"
#include "selftests/lib/stats_parse.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond))						\
			fail_msg(__VA_ARGS__);				\
	} while (0)

/* --- variants: one run per mode ------------------------------------------- */

/* glibc registers no rseq area: segpool registers its own per thread */
static const char *const env_rseq_own[] = {
	sp_test_percpu_rseq, "SEGPOOL_PERCPU_ID",
	"GLIBC_TUNABLES=glibc.pthread.rseq=0", NULL,
};

static const struct sp_test_variant variants[] = {
	{ "mode=rseq", sp_test_env_percpu_rseq },
	{ "mode=rseq_own_registration", env_rseq_own },
	{ "mode=lock", sp_test_env_percpu_lock },
	{ "mode=off", sp_test_env_percpu_off },
};

enum want { WANT_RSEQ, WANT_RSEQ_OWN, WANT_LOCK, WANT_OFF };

/* The mode this child was started to test. */
static enum want wanted(void)
{
	const char *v = sp_test_variant();

	for (size_t i = 0; v && i < SP_ARRAY_SIZE(variants); i++)
		if (!strcmp(v, variants[i].name))
			return (enum want)i;
	fail_msg("unknown SEGPOOL_TEST_VARIANT %s", v ? v : "(unset)");
	return WANT_OFF;
}

/*
 * Can rseq mode work in this process?  When not, *why says why and the
 * library must have fallen back to lock mode.
 */
static bool rseq_possible(const char **why)
{
	long q;

#if !SP_RSEQ_ARCH
	*why = "no rseq port for this architecture";
	return false;
#endif
#ifdef CONFIG_SEGPOOL_TSAN
	*why = "ThreadSanitizer build";
	return false;
#endif
	/* registered or not, a kernel with rseq rejects this with EINVAL */
	errno = 0;
	if (syscall(__NR_rseq, NULL, 0, 0, 0) == 0 || errno != EINVAL) {
		*why = errno == ENOSYS ? "no rseq system call (valgrind?)" :
					 "rseq system call refused";
		return false;
	}
	q = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	if (q < 0 || !(q & MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ)) {
		*why = "no membarrier rseq fence";
		return false;
	}
	*why = NULL;
	return true;
}

/* --- CPUs ----------------------------------------------------------------- */

static void pin_self(int cpu)
{
	CHECK(sp_test_pin(cpu) == 0, "cannot pin to CPU %d", cpu);
}

static int teardown(void **state)
{
	(void)state;
	sp_test_unpin();
	sp_pcpu_test_inject_slot(-1);
	return 0;
}

/* --- small helpers -------------------------------------------------------- */

static struct sp_pcpu_stats pcpu_stats(struct segpool_cache *c)
{
	struct sp_pcpu_stats st;

	sp_pcpu_read_stats(c->pcpu, &st);
	return st;
}

/* Objects the slab layer handed out directly (not into magazines). */
static uint64_t slab_direct_allocs(struct segpool_cache *c)
{
	uint64_t n = 0;

	for (int r = 0; r < sp_space.nr_regions; r++)
		n += c->node[r].allocs;
	return n;
}

static bool mode_has_pcpu(void)
{
	return sp_pcpu_mode == SP_PCPU_RSEQ || sp_pcpu_mode == SP_PCPU_LOCK;
}

#define SKIP_UNLESS(cond, why)						\
	do {								\
		if (!(cond)) {						\
			print_message("# skipped in %s: %s\n",		\
				      sp_pcpu_mode_name(), why);	\
			skip();						\
		}							\
	} while (0)

/*
 * A set of pointers for one thread: open addressing, linear probing,
 * deletion by backward shift.  Insert fails on a pointer already there,
 * remove on one that is not.
 */
struct ptrset {
	uintptr_t *slot;
	size_t mask;
};

static void set_init(struct ptrset *s, size_t cap)
{
	s->slot = calloc(cap, sizeof(*s->slot));
	assert_non_null(s->slot);
	s->mask = cap - 1;
}

static void set_free(struct ptrset *s)
{
	free(s->slot);
	s->slot = NULL;
}

static size_t set_home(const struct ptrset *s, uintptr_t k)
{
	uint64_t h = k;

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (size_t)h & s->mask;
}

static bool set_insert(struct ptrset *s, const void *p)
{
	uintptr_t k = (uintptr_t)p;
	size_t i = set_home(s, k);

	while (s->slot[i]) {
		if (s->slot[i] == k)
			return false;
		i = (i + 1) & s->mask;
	}
	s->slot[i] = k;
	return true;
}

static bool set_remove(struct ptrset *s, const void *p)
{
	uintptr_t k = (uintptr_t)p;
	size_t i = set_home(s, k), j;

	while (s->slot[i] != k) {
		if (!s->slot[i])
			return false;
		i = (i + 1) & s->mask;
	}
	s->slot[i] = 0;
	for (j = (i + 1) & s->mask; s->slot[j]; j = (j + 1) & s->mask) {
		size_t h = set_home(s, s->slot[j]);
		bool stays = i <= j ? (h > i && h <= j) : (h > i || h <= j);

		if (!stays) {
			s->slot[i] = s->slot[j];
			s->slot[j] = 0;
			i = j;
		}
	}
	return true;
}

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

/* Do @a and @b (n each) hold the same pointers? */
static bool same_set(void **a, void **b, size_t n)
{
	void **x = malloc(n * sizeof(*x)), **y = malloc(n * sizeof(*y));
	bool same;

	assert_non_null(x);
	assert_non_null(y);
	memcpy(x, a, n * sizeof(*x));
	memcpy(y, b, n * sizeof(*y));
	qsort(x, n, sizeof(*x), cmp_ptr);
	qsort(y, n, sizeof(*y), cmp_ptr);
	same = memcmp(x, y, n * sizeof(*x)) == 0;
	free(x);
	free(y);
	return same;
}

static bool contains(void **a, size_t n, const void *p)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] == p)
			return true;
	return false;
}

static void alloc_n(struct segpool_cache *c, void **objs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		objs[i] = segpool_cache_alloc(c, 0);
		assert_non_null(objs[i]);
	}
}

static void free_n(struct segpool_cache *c, void **objs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		segpool_cache_free(c, objs[i]);
}

/* --- mode reporting ------------------------------------------------------- */

static void test_mode_reporting(void **state)
{
	const char *mode = segpool_percpu_mode();
	const char *why = NULL;
	struct segpool_cache *c;
	enum want w = wanted();
	bool possible = rseq_possible(&why);

	(void)state;
	print_message("# variant %s: mode \"%s\"\n", sp_test_variant(), mode);
	assert_non_null(mode);
	CHECK(!strncmp(mode, sp_pcpu_mode_name(), strlen(sp_pcpu_mode_name())),
	      "mode string \"%s\" does not start with the mode in force (%s)",
	      mode, sp_pcpu_mode_name());

	c = segpool_cache_create("pcpu-mode", 64, 0, 0, NULL);
	assert_non_null(c);
	switch (w) {
	case WANT_OFF:
		CHECK(!strncmp(mode, "off (", 5), "off asked, \"%s\" given",
		      mode);
		assert_int_equal(sp_pcpu_mode, SP_PCPU_OFF);
		CHECK(c->pcpu == NULL,
		      "off mode, yet the cache has a per-CPU layer");
		break;
	case WANT_LOCK:
		assert_string_equal(mode, "lock (SEGPOOL_PERCPU=lock)");
		assert_int_equal(sp_pcpu_mode, SP_PCPU_LOCK);
		assert_non_null(c->pcpu);
		break;
	case WANT_RSEQ:
	case WANT_RSEQ_OWN:
		assert_non_null(c->pcpu);
		if (!possible) {
			CHECK(!strncmp(mode, "lock (", 6),
			      "rseq cannot work here (%s), "
			      "yet the mode is \"%s\"",
			      why, mode);
			assert_int_equal(sp_pcpu_mode, SP_PCPU_LOCK);
			print_message("# rseq unavailable here (%s): fell back "
				      "to \"%s\", as it should\n", why, mode);
			break;
		}
		assert_int_equal(sp_pcpu_mode, SP_PCPU_RSEQ);
		if (w == WANT_RSEQ_OWN) {
			/* the tunable reached us: glibc registered nothing */
			assert_int_equal(__rseq_size, 0);
			assert_string_equal(
				mode,
				"rseq (own registration, glibc's is off)");
			assert_true(sp_rseq_own);
		} else if (__rseq_size) {
			assert_string_equal(mode, "rseq (glibc registration)");
			assert_false(sp_rseq_own);
			assert_int_equal(sp_rseq_off, (long)__rseq_offset);
		} else {
			CHECK(!strncmp(mode, "rseq (own registration", 22),
			      "glibc has no rseq area, mode \"%s\"", mode);
		}
		break;
	}
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* --- use-driven magazine sizing ------------------------------------------ */

/* Pin the caller to the CPU it runs on: one slot sees every operation. */
static cpu_set_t pin_here(void)
{
	cpu_set_t old, one;
	int cpu = sched_getcpu();

	assert_int_equal(sched_getaffinity(0, sizeof(old), &old), 0);
	CPU_ZERO(&one);
	CPU_SET(cpu >= 0 ? cpu : 0, &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	return old;
}

/*
 * A CPU that keeps trading magazines (a batch of 1000, three magazines of
 * the default 60 rounds and more) grows the class until two magazines hold
 * the batch; afterwards fewer than 0.3% of its calls leave the slot.
 */
static void test_mag_growth(void **state)
{
	static void *objs[1000];
	struct segpool_cache *c;
	struct sp_pcpu_stats a, b;
	cpu_set_t old;
	uint64_t trips, calls;

	(void)state;
	SKIP_UNLESS(mode_has_pcpu(), "no magazines");
	old = pin_here();
	c = segpool_cache_create("pcpu-grow", 64, 0, 0, NULL);
	assert_non_null(c);
	a = pcpu_stats(c);
	assert_int_equal(a.mag_size, 60);
	sp_test_batches(c, objs, 1000, 50);
	a = pcpu_stats(c);
	print_message("# after 50 batches: magazines of %u, %" PRIu64
		      " grown, %" PRIu64 " trips\n", a.mag_size,
		      a.stat[SP_STAT_MAG_GROW], a.stat[SP_STAT_TRIP]);
	assert_true(a.stat[SP_STAT_MAG_GROW] >= 1);
	assert_true(a.mag_size >= 508);
	sp_test_batches(c, objs, 1000, 50);
	b = pcpu_stats(c);
	trips = b.stat[SP_STAT_TRIP] - a.stat[SP_STAT_TRIP];
	calls = 50 * 2000;
	print_message("# next 50 batches: %" PRIu64 " trips in %" PRIu64
		      " calls\n", trips, calls);
	CHECK(trips * 1000 < calls * 3, "%" PRIu64 " trips: 0.3%% is %" PRIu64,
	      trips, calls * 3 / 1000);
	/* growth stops at the class whose magazine pins 64 KiB */
	assert_true(b.mag_size <= 1020);
	assert_int_equal(segpool_cache_destroy(c), 0);
	assert_int_equal(sched_setaffinity(0, sizeof(old), &old), 0);
}

/*
 * Large objects: the class stops where a magazine would pin 64 KiB
 * (SP_MAG_BYTES_MAX); objects of 8 KiB start and stay in the smallest
 * class, whose 4 rounds hold 32 KiB, and keep no stash.
 */
static void test_mag_growth_bound(void **state)
{
	static void *objs[1000];
	struct segpool_cache *c;
	struct sp_pcpu_stats st;
	cpu_set_t old;

	(void)state;
	SKIP_UNLESS(mode_has_pcpu(), "no magazines");
	old = pin_here();
	c = segpool_cache_create("pcpu-grow-big", 512, 0, 0, NULL);
	assert_non_null(c);
	sp_test_batches(c, objs, 1000, 30);
	st = pcpu_stats(c);
	print_message("# 512-byte objects: magazines of %u, %" PRIu64
		      " objects on CPUs\n", st.mag_size, st.objs_in_magazines);
	assert_true(st.mag_size * c->stride <= SP_MAG_BYTES_MAX);
	assert_true(st.mag_size > 60);
	/*
	 * two magazines per slot and what its stash may keep
	 * (percpu/stash.h), remote batches aside
	 */
	assert_true(st.objs_in_magazines <=
		    (2UL * st.mag_size + SP_STASH_BYTES / c->stride) *
		    c->pcpu->nr_slots);
	assert_int_equal(segpool_cache_destroy(c), 0);

	c = segpool_cache_create("pcpu-grow-8k", 8192, 0, 0, NULL);
	assert_non_null(c);
	assert_int_equal(pcpu_stats(c).mag_size, SEGPOOL_MAG_SIZE_MIN);
	sp_test_batches(c, objs, 200, 30);
	st = pcpu_stats(c);
	print_message("# 8 KiB objects: magazines of %u, %" PRIu64
		      " objects on CPUs, %" PRIu64 " trips\n", st.mag_size,
		      st.objs_in_magazines, st.stat[SP_STAT_TRIP]);
	assert_int_equal(st.mag_size, SEGPOOL_MAG_SIZE_MIN);
	assert_true(st.mag_size * c->stride <= SP_MAG_BYTES_MAX);
	assert_true(st.objs_in_magazines <=
		    2UL * st.mag_size * c->pcpu->nr_slots);
	assert_int_equal(segpool_cache_destroy(c), 0);
	assert_int_equal(sched_setaffinity(0, sizeof(old), &old), 0);
}

/*
 * Disuse shrinks it again: after the class grew, each cycle drains the
 * magazines (one trip to refill them) and then runs long on hot pairs, so
 * every trip comes long after the previous one.
 */
static void test_mag_shrink(void **state)
{
	static void *objs[1000];
	struct segpool_cache *c;
	struct sp_pcpu_stats a, b;
	cpu_set_t old;

	(void)state;
	SKIP_UNLESS(mode_has_pcpu(), "no magazines");
	old = pin_here();
	c = segpool_cache_create("pcpu-shrink", 64, 0, 0, NULL);
	assert_non_null(c);
	sp_test_batches(c, objs, 1000, 50);
	a = pcpu_stats(c);
	assert_true(a.mag_size >= 508);
	for (int cycle = 0; cycle < 6; cycle++) {
		assert_true(segpool_cache_shrink(c) >= 0);
		for (unsigned long i = 0; i < 300000; i++) {
			void *p = segpool_cache_alloc(c, 0);

			assert_non_null(p);
			segpool_cache_free(c, p);
		}
	}
	b = pcpu_stats(c);
	print_message("# magazines of %u after growth, %u after 6 quiet cycles "
		      "(%" PRIu64 " shrinks)\n", a.mag_size, b.mag_size,
		      b.stat[SP_STAT_MAG_SHRINK]);
	assert_true(b.stat[SP_STAT_MAG_SHRINK] >= 1);
	assert_true(b.mag_size < a.mag_size);
	assert_true(b.mag_size >= 60);	/* never below the default */
	assert_int_equal(segpool_cache_destroy(c), 0);
	assert_int_equal(sched_setaffinity(0, sizeof(old), &old), 0);
}

/*
 * A new magazine's round slots read even whatever its memory held before:
 * the full test reads the word at top.  Regression: magazines from a
 * reused slab kept the program's old bytes, an odd one read as "full", and
 * the free path then counted a partly filled magazine as full (a C++
 * program with cross-thread frees handed out 0x1c as an object).
 *
 * The defence (percpu/magazine.c): a magazine cache's new slabs start
 * zeroed (SP_CACHE_ZEROED), and the slab's link and free mark stay outside
 * the rounds, so afterwards rounds only ever hold objects.  Checked here:
 * a slab built on pages another owner left odd bytes in starts zeroed; the
 * magazine caches have the flag and the layout; a magazine that went
 * through real use and came back reads even.
 */
static void test_mag_fresh_rounds_even(void **state)
{
	static void *objs[600];
	struct segpool_cache *z, *c;

	(void)state;
	SKIP_UNLESS(mode_has_pcpu(), "no magazines");

	/* dirty pages: the region hands a freed block of an order out again */
	z = sp_cache_create("pcpu-zeroed", 128, 0,
			    SP_CACHE_INTERNAL | SP_CACHE_ZEROED, NULL);
	assert_non_null(z);
	{
		size_t bytes = (size_t)SP_PAGE_SIZE << z->order;
		char *p = sp_region_alloc(0, z->order, SP_OWNER_META);
		void *obj;

		assert_non_null(p);
		memset(p, 0x1b, bytes);		/* odd words, as stale data */
		sp_region_free(p, z->order);
		assert_int_equal(sp_slab_alloc_bulk(z, 0, 1, &obj), 1);
		/* the test means something only on the dirty block */
		CHECK(sp_obj_to_slab(obj)->base == p,
		      "new slab at %p, not on the block freed at %p",
		      (void *)sp_obj_to_slab(obj)->base, (void *)p);
		for (unsigned int i = 0; i < z->objs_per_slab; i++) {
			const uint64_t *w =
				(const uint64_t *)(sp_obj_to_slab(obj)->base +
						   (size_t)i * z->stride);

			for (unsigned int k = 0; k < z->object_size / 8; k++)
				CHECK(w[k] == 0,
				      "object %u word %u of a zeroed cache's "
				      "new "
				      "slab reads %#" PRIx64,
				      i, k, w[k]);
		}
		sp_slab_free_bulk(z, 1, &obj);
	}
	/* z stays: an internal cache has no destroy of its own (one per run) */

	/*
	 * every class: a magazine used for real, flushed, freed and made again
	 */
	c = segpool_cache_create("pcpu-rounds", 64, 0, 0, NULL);
	assert_non_null(c);
	for (unsigned int cls = 0; cls < SP_MAG_CLASSES; cls++) {
		struct sp_mag *m = sp_mag_alloc(cls), *again;
		unsigned int n =
			SP_MIN(m->cap, (unsigned int)SP_ARRAY_SIZE(objs));

		assert_true(sp_mag_class_of(m) == cls);
		assert_int_equal(sp_slab_alloc_bulk(c, 0, n, sp_mag_base(m)),
				 n);
		m->count = n;
		sp_mag_flush(c->pcpu, m);
		sp_mag_free(m);
		again = sp_mag_alloc(cls);
		assert_non_null(again);
		for (unsigned int i = 0; i < again->cap; i++)
			CHECK(((uintptr_t)sp_mag_base(again)[i] & 1) == 0,
			      "class %u: round slot %u of a new magazine reads "
			      "%p",
			      cls, i, sp_mag_base(again)[i]);
		assert_true(again->slot[0] == SP_MAG_GUARD);
		assert_true(again->slot[again->cap + 1] == SP_MAG_GUARD);
		sp_mag_free(again);
	}
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/*
 * The cost side of that defence: a zeroed cache's new slab on a block
 * nobody wrote since the region purged it is not cleared (the block reads
 * zero already), so none of its pages is faulted in until objects are
 * used: a program's first magazine of a class costs the pages it fills,
 * not the whole slab.
 */
static void test_zeroed_slab_clean_block(void **state)
{
	static unsigned char vec[1U << SP_MAX_ORDER];
	struct segpool_cache *z;
	size_t bytes, out = 0;
	char *p;
	void *obj;

	(void)state;
	/* 3000 bytes: the waste rule gives a slab of several pages */
	z = sp_cache_create("pcpu-zeroed-clean", 3000, 0,
			    SP_CACHE_INTERNAL | SP_CACHE_ZEROED, NULL);
	assert_non_null(z);
	assert_true(z->order >= 1);
	bytes = (size_t)SP_PAGE_SIZE << z->order;
	p = sp_region_alloc(0, z->order, SP_OWNER_META);
	assert_non_null(p);
	memset(p, 0x1b, bytes);
	sp_region_free(p, z->order);
	/* the block, and every other dirty one, given back: now clean */
	for (int i = 0; i < sp_space.nr_regions; i++)
		sp_region_purge(i);
	assert_int_equal(sp_slab_alloc_bulk(z, 0, 1, &obj), 1);
	CHECK(sp_obj_to_slab(obj)->base == p,
	      "new slab at %p, not on the block purged at %p",
	      (void *)sp_obj_to_slab(obj)->base, (void *)p);
	assert_int_equal(mincore(p, bytes, vec), 0);
	for (size_t i = 0; i < ((size_t)1 << z->order); i++)
		out += !(vec[i] & 1);
	assert_int_equal(out, (size_t)1 << z->order);
	/* and what the program reads is zero all the same */
	assert_true(sp_test_all_bytes(p, 0, bytes));
	sp_slab_free_bulk(z, 1, &obj);
	/* z stays: an internal cache has no destroy of its own (one per run) */
}

/* --- layout --------------------------------------------------------------- */

static void test_layout(void **state)
{
	struct segpool_cache *c;
	struct sp_pcpu_cache *pc;

	(void)state;
	/* the offsets the assembly has baked in */
	assert_int_equal(offsetof(struct sp_pcpu_slot, free_hits), 0);
	assert_int_equal(offsetof(struct sp_pcpu_slot, top), 8);
	assert_int_equal(offsetof(struct sp_pcpu_slot, alloc_hits), 16);
	assert_int_equal(offsetof(struct sp_pcpu_slot, expect), 24);
	/* line 0 holds every field of the fast path and of the owner */
	assert_true(offsetof(struct sp_pcpu_slot, prev) + sizeof(void *) <=
		    SP_CACHE_LINE);
	/* the owner-only counters start a line of their own */
	assert_int_equal(offsetof(struct sp_pcpu_slot, stat) % SP_CACHE_LINE,
			 0);
	assert_true(offsetof(struct sp_pcpu_slot, stat) >= SP_CACHE_LINE);
	assert_int_equal(sizeof(struct sp_pcpu_slot), 1UL << SP_PCPU_SHIFT);
	assert_int_equal(sizeof(struct sp_pcpu_slot) % SP_CACHE_LINE, 0);
	assert_true(_Alignof(struct sp_pcpu_slot) >= SP_CACHE_LINE);
	assert_int_equal(sizeof(struct sp_depot) % SP_CACHE_LINE, 0);
	assert_true(_Alignof(struct sp_depot) >= SP_CACHE_LINE);

	SKIP_UNLESS(mode_has_pcpu(), "no per-CPU blocks to look at");
	c = segpool_cache_create("pcpu-layout", 64, 0, 0, NULL);
	assert_non_null(c);
	pc = c->pcpu;
	assert_non_null(pc);
	/* a slot for every possible CPU id */
	assert_int_equal(pc->nr_slots, (unsigned long)sp_cpu_possible_count());
	assert_int_equal((uintptr_t)pc % SP_CACHE_LINE, 0);
	for (int n = 0; n < sp_topo.nr_nodes; n++) {
		assert_int_equal((uintptr_t)&pc->depot[n] % SP_CACHE_LINE, 0);
		/* no depot shares a line with the control block */
		assert_true((uintptr_t)&pc->depot[n] >=
			    SP_ALIGN((uintptr_t)(pc + 1), SP_CACHE_LINE));
	}
	/* nor does any slot with a depot */
	assert_true((uintptr_t)pc->slots >=
		    (uintptr_t)&pc->depot[sp_topo.nr_nodes]);
	for (unsigned long i = 0; i < pc->nr_slots; i++) {
		uintptr_t a = (uintptr_t)&pc->slots[i];

		assert_int_equal(a % SP_CACHE_LINE, 0);
		assert_int_equal((uintptr_t)pc->slots[i].stat % SP_CACHE_LINE,
				 0);
		for (unsigned long j = 0; j < i; j++) {
			uintptr_t b = (uintptr_t)&pc->slots[j];

			CHECK(a - b >= SP_CACHE_LINE,
			      "line 0 of slots %lu and %lu share a cache line",
			      i, j);
		}
		/* a new slot is empty and knows its node */
		assert_ptr_equal(pc->slots[i].top, sp_mag_top_none);
		assert_true(pc->slots[i].node <
			    (unsigned long)sp_topo.nr_nodes);
	}
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* --- a slot's own stash (percpu/stash.h) ---------------------------------- */

/* The slot holding a stash, or NULL; the totals of every slot's stashes. */
static struct sp_pcpu_slot *stash_slot(struct segpool_cache *c,
				       unsigned int *full, unsigned int *empty,
				       size_t *bytes)
{
	struct sp_pcpu_slot *found = NULL;

	*full = *empty = 0;
	*bytes = 0;
	for (unsigned long i = 0; i < c->pcpu->nr_slots; i++) {
		struct sp_pcpu_slot *slot = &c->pcpu->slots[i];
		unsigned int n = 0;

		for (struct sp_mag *m = slot->stash; m; m = m->next) {
			*bytes += (size_t)m->cap * c->stride;
			n++;
		}
		assert_int_equal(n, slot->stash_nr);
		*full += n;
		n = 0;
		for (struct sp_mag *m = slot->stash_empty; m; m = m->next) {
			assert_int_equal(m->count, 0);
			n++;
		}
		assert_int_equal(n, slot->stash_empty_nr);
		*empty += n;
		if (slot->stash || slot->stash_empty)
			found = slot;
	}
	return found;
}

/*
 * A CPU whose batches pass its two magazines keeps what its own
 * allocations drew in its stash: after a warm-up no full magazine goes
 * through the depot and none is filled from the slabs; what a short run
 * left goes to the depot at the next free run; a stash left by swings
 * that fit the two magazines ages out; a CPU that only frees keeps none;
 * the stash stays within its bound and goes with a shrink.
 */
static void test_stash(void **state)
{
	struct sp_pcpu_stats a, b;
	unsigned int full, empty;
	struct segpool_cache *c;
	size_t k, k2, bytes;
	void **objs;

	(void)state;
	SKIP_UNLESS(mode_has_pcpu(), "no magazines");
	pin_self(sp_test_allowed_cpu(0));
	c = segpool_cache_create("pcpu-stash", 48, 0, 0, NULL);
	assert_non_null(c);
	k = 6000;
	objs = calloc(k, sizeof(*objs));
	assert_non_null(objs);

	/* batches of 6000: after three rounds, nothing leaves the slot */
	sp_test_batches(c, objs, k, 3);
	a = pcpu_stats(c);
	sp_test_batches(c, objs, k, 20);
	b = pcpu_stats(c);
	print_message("# 20 batches of %zu: %" PRIu64 " magazines from the "
		      "stash, %" PRIu64 " full to the depot, %" PRIu64
		      " from it, %" PRIu64 " fills\n", k,
		      b.stat[SP_STAT_STASH_TAKE] - a.stat[SP_STAT_STASH_TAKE],
		      b.stat[SP_STAT_DEPOT_PUT_FULL] -
		      a.stat[SP_STAT_DEPOT_PUT_FULL],
		      b.stat[SP_STAT_DEPOT_GET_FULL] -
		      a.stat[SP_STAT_DEPOT_GET_FULL],
		      b.stat[SP_STAT_MAG_FILL] - a.stat[SP_STAT_MAG_FILL]);
	assert_true(b.stat[SP_STAT_STASH_TAKE] - a.stat[SP_STAT_STASH_TAKE] >=
		    20);
	assert_int_equal(b.stat[SP_STAT_DEPOT_PUT_FULL],
			 a.stat[SP_STAT_DEPOT_PUT_FULL]);
	assert_int_equal(b.stat[SP_STAT_DEPOT_GET_FULL],
			 a.stat[SP_STAT_DEPOT_GET_FULL]);
	assert_int_equal(b.stat[SP_STAT_MAG_FILL], a.stat[SP_STAT_MAG_FILL]);
	assert_int_equal(b.stat[SP_STAT_MAG_FLUSH], a.stat[SP_STAT_MAG_FLUSH]);
	assert_non_null(stash_slot(c, &full, &empty, &bytes));
	assert_true(full > 0);
	assert_true(bytes <= SP_STASH_BYTES);
	/* the stash is the slot's: counted among the objects on CPUs */
	assert_true(b.objs_in_magazines >= k);
	assert_int_equal(b.objs_in_depot, a.objs_in_depot);

	/*
	 * a run of allocations one magazine past the slot's two: the frees
	 * after it give what it left in the stash to the depot, and keep
	 * nothing (a run of fewer than SP_STASH_RUN_MIN loads)
	 */
	k2 = 2UL * b.mag_size + 1;
	assert_true(k2 <= k);
	a = b;
	alloc_n(c, objs, k2);
	free_n(c, objs, k2);
	b = pcpu_stats(c);
	print_message("# a run of %zu: %" PRIu64 " magazines to the depot, "
		      "%u kept before\n", k2, b.stat[SP_STAT_DEPOT_PUT_FULL] -
		      a.stat[SP_STAT_DEPOT_PUT_FULL], full);
	stash_slot(c, &full, &empty, &bytes);
	assert_int_equal(full, 0);
	assert_true(b.stat[SP_STAT_DEPOT_PUT_FULL] >
		    a.stat[SP_STAT_DEPOT_PUT_FULL]);

	/*
	 * kept again, then swings the two magazines hold (swaps, no trip):
	 * the stash ages out at a swap, SP_STASH_STALE magazines' worth of
	 * operations after its last use
	 */
	sp_test_batches(c, objs, k, 2);
	assert_non_null(stash_slot(c, &full, &empty, &bytes));
	a = pcpu_stats(c);
	k2 = b.mag_size;
	sp_test_batches(c, objs, k2, 2 * SP_STASH_STALE);
	b = pcpu_stats(c);
	print_message("# %d swings of %zu: %" PRIu64 " swaps, %" PRIu64
		      " trips; stash of %u gone\n", 2 * SP_STASH_STALE, k2,
		      b.stat[SP_STAT_MAG_SWAP] - a.stat[SP_STAT_MAG_SWAP],
		      b.stat[SP_STAT_TRIP] - a.stat[SP_STAT_TRIP], full);
	assert_null(stash_slot(c, &full, &empty, &bytes));
	assert_true(b.stat[SP_STAT_MAG_SWAP] > a.stat[SP_STAT_MAG_SWAP]);
	assert_int_equal(b.stat[SP_STAT_TRIP], a.stat[SP_STAT_TRIP]);

	/* a shrink takes the stash with the slot's magazines */
	sp_test_batches(c, objs, k, 2);
	assert_non_null(stash_slot(c, &full, &empty, &bytes));
	assert_true(segpool_cache_shrink(c) > 0);
	assert_null(stash_slot(c, &full, &empty, &bytes));
	assert_int_equal(full + empty, 0);
	assert_int_equal(pcpu_stats(c).objs_in_magazines, 0);

	/* frees with no allocations of the slot's own before: no stash */
	alloc_n(c, objs, k);
	segpool_cache_shrink(c);	/* as if another CPU allocated them */
	free_n(c, objs, k);
	b = pcpu_stats(c);
	assert_null(stash_slot(c, &full, &empty, &bytes));
	print_message("# %zu freed with no credit: %" PRIu64 " on the CPU, %"
		      PRIu64 " in the depot\n", k, b.objs_in_magazines,
		      b.objs_in_depot);
	assert_true(b.objs_in_depot > 0);
	assert_true(b.objs_in_magazines <= 2UL * b.mag_size);
	segpool_cache_shrink(c);

	/* a swing past the bound: the stash keeps SP_STASH_BYTES at most */
	free(objs);
	k = 3 * SP_STASH_BYTES / c->stride;
	objs = calloc(k, sizeof(*objs));
	assert_non_null(objs);
	sp_test_batches(c, objs, k, 3);
	assert_non_null(stash_slot(c, &full, &empty, &bytes));
	b = pcpu_stats(c);
	print_message("# batches of %zu: %u magazines kept (%zu bytes), %u "
		      "empty; %" PRIu64 " objects in the depot\n", k, full,
		      bytes, empty, b.objs_in_depot);
	assert_true(bytes <= SP_STASH_BYTES);
	assert_true(bytes >= SP_STASH_BYTES / 2);
	assert_true(empty <= SP_STASH_MAGS);
	assert_true(b.objs_in_depot > 0 || b.stat[SP_STAT_MAG_FLUSH] > 0);
	free(objs);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* --- fast-path accounting ------------------------------------------------- */

static void test_fastpath_accounting(void **state)
{
	unsigned long n = sp_test_scaled(200000, 2000), k;
	struct segpool_cache_info info;
	struct segpool_cache *c;
	uint64_t direct;
	void **objs;

	(void)state;
	SKIP_UNLESS(mode_has_pcpu(), "no magazines");
	pin_self(sp_test_allowed_cpu(0));
	c = segpool_cache_create("pcpu-fast", 64, 0, 0, NULL);
	assert_non_null(c);

	for (unsigned long i = 0; i < n; i++) {
		uint64_t *p = segpool_cache_alloc(c, 0);

		assert_non_null(p);
		p[0] = i;
		segpool_cache_free(c, p);
	}
	info = sp_test_info(c);
	direct = slab_direct_allocs(c);
	print_message("# %lu pairs: %" PRIu64 " fast, %" PRIu64
		      " slow, %" PRIu64 " direct; magazine of %u\n",
		      n, info.alloc_fastpath, info.alloc_slowpath, direct,
		      info.mag_size);
	assert_int_equal(info.allocs, n);
	assert_int_equal(info.frees, n);
	assert_int_equal(info.alloc_fastpath + info.alloc_slowpath + direct,
			 info.allocs);
	CHECK(info.alloc_fastpath >= n - info.mag_size,
	      "%" PRIu64 " fast-path allocs of %lu (magazine %u)",
	      info.alloc_fastpath, n, info.mag_size);
	CHECK(info.free_fastpath >= n - info.mag_size,
	      "%" PRIu64 " fast-path frees of %lu", info.free_fastpath, n);
	assert_int_equal(info.active_objs, 0);
	assert_true(info.cpu_objs > 0);

	/*
	 * four magazines' worth, freed after a shrink (which leaves the slot
	 * no stash credit, percpu/stash.h): two stay on the CPU, the rest go
	 * to the depot
	 */
	k = 4UL * info.mag_size;
	objs = calloc(k, sizeof(*objs));
	assert_non_null(objs);
	alloc_n(c, objs, k);
	info = sp_test_info(c);
	assert_int_equal(info.active_objs, k);
	segpool_cache_shrink(c);
	free_n(c, objs, k);
	info = sp_test_info(c);
	print_message("# after %lu frees: %" PRIu64
		      " objects on the CPU, %" PRIu64 " in the depot "
		      "(magazines of %u)\n",
		      k, info.cpu_objs, info.depot_objs, info.mag_size);
	assert_int_equal(info.active_objs, 0);
	assert_true(info.cpu_objs > 0);
	/* the class may have grown with the allocations' trips */
	assert_true(info.cpu_objs <= 2UL * info.mag_size);
	if (k > 2UL * info.mag_size)
		assert_true(info.depot_objs > 0);
	assert_int_equal(info.cpu_objs + info.depot_objs, k);
	assert_int_equal(info.allocs, n + k);
	assert_int_equal(info.frees, n + k);

	assert_true(segpool_cache_shrink(c) > 0);
	info = sp_test_info(c);
	assert_int_equal(info.cpu_objs, 0);
	assert_int_equal(info.depot_objs, 0);
	assert_int_equal(info.active_objs, 0);
	assert_int_equal(info.total_slabs, 0);
	assert_int_equal(info.allocs, info.frees);
	free(objs);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* --- Bonwick's transitions, slot by slot (lock mode) ---------------------- */

#define EXPECT_STAT(slot, s, want)					\
	CHECK((slot)->stat[s] == (uint64_t)(want),			\
	      "%s: %s is %" PRIu64 ", expected %lu", phase, #s,		\
	      (slot)->stat[s], (unsigned long)(want))
#define EXPECT_EQ(what, want)						\
	CHECK((uint64_t)(what) == (uint64_t)(want),			\
	      "%s: %s is %" PRIu64 ", expected %" PRIu64, phase, #what,	\
	      (uint64_t)(what), (uint64_t)(want))

static void test_bonwick_transitions(void **state)
{
	struct sp_pcpu_slot *s0, *s1;
	struct segpool_cache *c;
	struct sp_pcpu_cache *pc;
	struct sp_pcpu_stats st;
	void **objs, **again, **got, *x;
	const char *phase;
	unsigned long m, f;

	(void)state;
	SKIP_UNLESS(sp_pcpu_mode == SP_PCPU_LOCK,
		    "slot injection needs lock mode");
	/* a fixed magazine size: use-driven growth would move the counts */
	c = segpool_cache_create_tuned("pcpu-bonwick", 64, 0, 0, NULL,
				       &(struct segpool_cache_tunables){
					       .mag_size = 60 });
	assert_non_null(c);
	pc = c->pcpu;
	m = sp_test_info(c).mag_size;
	assert_int_equal(m, sp_mag_class_cap(pc->cls));
	/* a fill from the slabs: all but a quarter of a magazine */
	f = sp_fill_size((unsigned int)m);
	assert_true(f < m && 3 * f > 2 * m);
	objs = calloc(3 * m, sizeof(void *));
	again = calloc(3 * m, sizeof(void *));
	got = calloc(m, sizeof(void *));
	assert_true(objs && again && got);
	s0 = &pc->slots[0];
	sp_pcpu_test_inject_slot(0);

	phase = "one fill's worth allocated";
	alloc_n(c, objs, f);
	EXPECT_STAT(s0, SP_STAT_MAG_FILL, 1);
	EXPECT_STAT(s0, SP_STAT_ALLOC_SLOWPATH, 1);
	EXPECT_EQ(s0->alloc_hits, f - 1);
	EXPECT_EQ(sp_pcpu_slot_objects(pc, 0), 0);
	EXPECT_EQ(sp_test_info(c).active_objs, f);

	phase = "three fills' worth allocated";
	alloc_n(c, objs + f, 2 * f);
	EXPECT_STAT(s0, SP_STAT_MAG_FILL, 3);
	EXPECT_STAT(s0, SP_STAT_ALLOC_SLOWPATH, 3);
	EXPECT_STAT(s0, SP_STAT_DEPOT_GET_FULL, 0);
	EXPECT_EQ(s0->alloc_hits, 3 * f - 3);

	/*
	 * loaded fills, becomes previous, the next one fills, the previous
	 * (full) goes to the depot; the rest stays loaded.  Bonwick's moves
	 * alone: the slot's stash (percpu/stash.h, test_stash) would keep the
	 * full one for the slot's own allocations, as the fills earned it.
	 */
	phase = "three fills' worth freed";
	s0->stash_credit = 0;
	free_n(c, objs, 3 * f);
	EXPECT_STAT(s0, SP_STAT_FREE_SLOWPATH, 2);
	EXPECT_EQ(s0->free_hits, 3 * f - 2);
	EXPECT_STAT(s0, SP_STAT_DEPOT_PUT_FULL, 1);
	EXPECT_STAT(s0, SP_STAT_MAG_SWAP, 0);
	st = pcpu_stats(c);
	EXPECT_EQ(st.full_in_depot, 1);
	EXPECT_EQ(st.objs_in_depot, m);
	EXPECT_EQ(st.objs_in_magazines, 3 * f - m);
	EXPECT_EQ(sp_test_info(c).active_objs, 0);

	/* loaded empties, the full previous swaps in, then the depot's full
	 * magazine replaces the two empty ones: no slab is touched */
	phase = "three fills' worth allocated again";
	alloc_n(c, again, 3 * f);
	EXPECT_STAT(s0, SP_STAT_MAG_SWAP, 1);
	EXPECT_STAT(s0, SP_STAT_DEPOT_GET_FULL, 1);
	EXPECT_STAT(s0, SP_STAT_DEPOT_PUT_EMPTY, 1);
	EXPECT_STAT(s0, SP_STAT_MAG_FILL, 3);
	st = pcpu_stats(c);
	EXPECT_EQ(st.full_in_depot, 0);
	EXPECT_EQ(st.empty_in_depot, 1);
	EXPECT_EQ(st.objs_in_depot, 0);
	EXPECT_EQ(st.objs_in_magazines, 0);
	CHECK(same_set(objs, again, 3 * f),
	      "%s: not the objects the magazines held", phase);

	/* again[0..m) fill the loaded magazine, which swaps out and later
	 * goes to the depot, full */
	phase = "freed again";
	s0->stash_credit = 0;		/* as above */
	free_n(c, again, 3 * f);
	EXPECT_STAT(s0, SP_STAT_MAG_SWAP, 2);
	EXPECT_STAT(s0, SP_STAT_DEPOT_PUT_FULL, 2);
	EXPECT_STAT(s0, SP_STAT_DEPOT_GET_EMPTY, 1);
	EXPECT_STAT(s0, SP_STAT_MAG_FILL, 3);
	st = pcpu_stats(c);
	EXPECT_EQ(st.full_in_depot, 1);
	EXPECT_EQ(st.objs_in_depot, m);

	if (pc->nr_slots < 2 || pc->slots[1].node != s0->node) {
		print_message("# slot 1 missing or on another node: "
			      "cross-slot part skipped\n");
		goto out;
	}
	/* slot 1 gets slot 0's objects only through the depot */
	phase = "slot 1";
	s1 = &pc->slots[1];
	sp_pcpu_test_inject_slot(1);
	alloc_n(c, got, m);
	EXPECT_STAT(s1, SP_STAT_DEPOT_GET_FULL, 1);
	EXPECT_STAT(s1, SP_STAT_MAG_FILL, 0);
	CHECK(same_set(got, again, m),
	      "%s: the depot's magazine held the first %lu objects freed on "
	      "slot 0",
	      phase, m);
	/* the depot is out of full magazines: slot 0's stay where they are */
	x = segpool_cache_alloc(c, 0);
	assert_non_null(x);
	EXPECT_STAT(s1, SP_STAT_MAG_FILL, 1);
	CHECK(!contains(again, 3 * f, x),
	      "slot 1 got %p from slot 0's magazines without the depot", x);
	EXPECT_EQ(sp_pcpu_slot_objects(pc, 0), 3 * f - m);
	segpool_cache_free(c, x);
	free_n(c, got, m);
out:
	sp_pcpu_test_inject_slot(-1);
	segpool_cache_shrink(c);
	phase = "shrunk";
	EXPECT_EQ(sp_test_info(c).total_slabs, 0);
	EXPECT_EQ(sp_test_info(c).active_objs, 0);
	free(objs);
	free(again);
	free(got);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* --- remote frees --------------------------------------------------------- */

static bool in_magazines(struct sp_pcpu_slot *slot, const void *obj)
{
	struct sp_mag *m = slot->loaded;

	if (m && !sp_mag_top_is_busy(slot->top) && slot->top != sp_mag_top_none)
		for (void **q = sp_mag_base(m); q < slot->top; q++)
			if (*q == obj)
				return true;
	m = slot->prev;
	if (m)
		for (unsigned int i = 0; i < m->count; i++)
			if (sp_mag_base(m)[i] == obj)
				return true;
	return false;
}

static void test_remote_free(void **state)
{
	struct sp_pcpu_stats before, after;
	struct segpool_cache_info info0, info1;
	struct sp_pcpu_slot *slot;
	struct segpool_cache *c;
	void *a, *b, *x;
	int cpu = sp_test_allowed_cpu(0);

	(void)state;
	SKIP_UNLESS(mode_has_pcpu(), "no magazines");
	pin_self(cpu);
	c = segpool_cache_create("pcpu-remote", 128, 0, 0, NULL);
	assert_non_null(c);
	if (sp_pcpu_mode == SP_PCPU_LOCK) {
		sp_pcpu_test_inject_slot(0);
		slot = &c->pcpu->slots[0];
	} else {
		slot = &c->pcpu->slots[cpu];
	}
	a = segpool_cache_alloc(c, 0);
	b = segpool_cache_alloc(c, 0);
	assert_non_null(a);
	assert_non_null(b);
	before = pcpu_stats(c);
	info0 = sp_test_info(c);
	assert_true(before.objs_in_magazines > 0);

	/*
	 * an object of another node (by index) goes home to its slabs; as
	 * the library's own free path does, it is freed for memcheck first
	 * (else valgrind counts it allocated, and lost once no word points
	 * at it)
	 */
	sp_vg_free(c, a);
	sp_pcpu_free_slow(c->pcpu, a, (unsigned int)slot->node + 1);
	after = pcpu_stats(c);
	info1 = sp_test_info(c);
	assert_int_equal(after.stat[SP_STAT_REMOTE_FREE],
			 before.stat[SP_STAT_REMOTE_FREE] + 1);
	assert_int_equal(slot->stat[SP_STAT_REMOTE_FREE], 1);
	/* with several nodes it waits in the slot's alien magazine */
	assert_int_equal(after.objs_in_magazines - after.objs_in_alien,
			 before.objs_in_magazines);
	CHECK(!in_magazines(slot, a), "remote-freed %p sits in the magazine",
	      a);
	assert_int_equal(info1.active_objs, info0.active_objs - 1);
	assert_int_equal(info1.frees, info0.frees + 1);

	x = segpool_cache_alloc(c, 0);
	assert_non_null(x);
	CHECK(x != a, "the slot handed out the remote-freed object %p", a);
	after = pcpu_stats(c);
	assert_int_equal(after.objs_in_magazines - after.objs_in_alien,
			 before.objs_in_magazines - 1);
	segpool_cache_free(c, x);
	segpool_cache_free(c, b);
	assert_int_equal(sp_test_info(c).active_objs, 0);
	segpool_cache_shrink(c);
	assert_int_equal(sp_test_info(c).total_slabs, 0);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* --- double free into a magazine ------------------------------------------ */

struct dfree {
	struct segpool_cache *c;
	void *obj;
	int cpu;
};

static void free_twice(void *arg)
{
	struct dfree *d = arg;

	/* both frees must reach the same CPU's magazine */
	sp_test_pin(d->cpu);
	segpool_cache_free(d->c, d->obj);
	segpool_cache_free(d->c, d->obj);
}

static void test_double_free_reported(void **state)
{
	struct dfree d;
	char needle[128];

	(void)state;
	SKIP_UNLESS(
		mode_has_pcpu(),
		"no magazines (the slab layer's check is tested elsewhere)");
	d.c = segpool_cache_create("pcpu-dfree", 48, 0, 0, NULL);
	assert_non_null(d.c);
	d.cpu = sp_test_allowed_cpu(0);
	d.obj = segpool_cache_alloc(d.c, 0);
	assert_non_null(d.obj);
	snprintf(needle, sizeof(needle), "double free %p (cache pcpu-dfree)",
		 d.obj);
	assert_true(sp_test_expect_death(free_twice, &d, needle));
	/* the parent still owns it */
	segpool_cache_free(d.c, d.obj);
	assert_int_equal(sp_test_info(d.c).active_objs, 0);
	assert_int_equal(segpool_cache_destroy(d.c), 0);
}

/* --- tunables ------------------------------------------------------------- */

/* The tunables columns of @name's slabinfo row; false when it has none. */
static bool slabinfo_tunables(const char *name, unsigned int t[3])
{
	struct sp_slabinfo_row r;

	if (!sp_slabinfo_find(name, &r))
		return false;
	t[0] = (unsigned int)r.limit;
	t[1] = (unsigned int)r.batch;
	t[2] = (unsigned int)r.shared;
	return true;
}

static void expect_row(const char *name, unsigned int mag, unsigned int depot)
{
	unsigned int t[3];

	CHECK(slabinfo_tunables(name, t), "no slabinfo row for %s", name);
	CHECK(t[0] == 2 * mag && t[1] == mag && t[2] == depot,
	      "%s: tunables %u %u %u, expected %u %u %u", name, t[0], t[1],
	      t[2], 2 * mag, mag, depot);
}

static void test_tunables(void **state)
{
	struct segpool_cache_tunables tun = { .mag_size = 28, .depot_max = 7 };
	struct segpool_cache_tunables bad = { .mag_size = 3 };
	struct segpool_cache_info info;
	struct segpool_cache *c;
	unsigned long k;
	void **objs;

	(void)state;
	errno = 0;
	assert_null(
		segpool_cache_create_tuned("pcpu-tiny", 64, 0, 0, NULL, &bad));
	assert_int_equal(errno, EINVAL);
	bad.mag_size = SEGPOOL_MAG_SIZE_MIN - 1;
	assert_null(
		segpool_cache_create_tuned("pcpu-tiny", 64, 0, 0, NULL, &bad));
	assert_int_equal(errno, EINVAL);

	c = segpool_cache_create_tuned("pcpu-tuned", 64, 0, 0, NULL, &tun);
	assert_non_null(c);
	assert_int_equal(segpool_cache_set_tunables(NULL, &tun), -EINVAL);
	assert_int_equal(segpool_cache_set_tunables(c, NULL), -EINVAL);
	if (sp_pcpu_mode == SP_PCPU_OFF) {
		assert_null(c->pcpu);
		assert_int_equal(sp_test_info(c).mag_size, 0);
		errno = 0;
		assert_int_equal(segpool_cache_set_tunables(c, &tun), -ENOTSUP);
		assert_int_equal(errno, ENOTSUP);
		assert_int_equal(segpool_cache_destroy(c), 0);
		return;
	}
	info = sp_test_info(c);
	print_message("# mag_size limit 28: magazines of %u, depot_max %u\n",
		      info.mag_size, info.depot_max);
	assert_true(info.mag_size <= 28 &&
		    info.mag_size >= SEGPOOL_MAG_SIZE_MIN);
	assert_int_equal(info.depot_max, 7);
	expect_row("pcpu-tuned", info.mag_size, 7);

	errno = 0;
	bad.mag_size = 3;
	assert_int_equal(segpool_cache_set_tunables(c, &bad), -EINVAL);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(sp_test_info(c).mag_size, info.mag_size);
	assert_int_equal(sp_test_info(c).depot_max, 7);

	tun.mag_size = SEGPOOL_MAG_SIZE_MIN;
	tun.depot_max = 0;		/* keeps 7 */
	assert_int_equal(segpool_cache_set_tunables(c, &tun), 0);
	assert_int_equal(sp_test_info(c).mag_size, SEGPOOL_MAG_SIZE_MIN);
	expect_row("pcpu-tuned", SEGPOOL_MAG_SIZE_MIN, 7);
	tun.mag_size = 0;		/* keeps 4 */
	tun.depot_max = 3;
	assert_int_equal(segpool_cache_set_tunables(c, &tun), 0);
	expect_row("pcpu-tuned", SEGPOOL_MAG_SIZE_MIN, 3);

	/* the limits bind: magazines of 4, at most 3 full ones per depot */
	pin_self(sp_test_allowed_cpu(0));
	segpool_cache_shrink(c);
	k = 10UL * SEGPOOL_MAG_SIZE_MIN;
	objs = calloc(k, sizeof(*objs));
	assert_non_null(objs);
	objs[0] = segpool_cache_alloc(c, 0);
	assert_non_null(objs[0]);
	assert_int_equal(sp_test_info(c).cpu_objs,
			 sp_fill_size(SEGPOOL_MAG_SIZE_MIN) - 1);
	alloc_n(c, objs + 1, k - 1);
	segpool_cache_shrink(c);	/* no stash credit: to the depot */
	free_n(c, objs, k);
	info = sp_test_info(c);
	print_message("# %lu freed: %" PRIu64 " on the CPU, %" PRIu64
		      " in the depot\n",
		      k, info.cpu_objs, info.depot_objs);
	assert_true(info.cpu_objs <= 2 * SEGPOOL_MAG_SIZE_MIN);
	assert_true(info.depot_objs <= 3 * SEGPOOL_MAG_SIZE_MIN);
	assert_true(pcpu_stats(c).full_in_depot <= 3);
	assert_int_equal(info.active_objs, 0);

	/* a limit above the largest class is accepted (capped) */
	tun.mag_size = 100000;
	tun.depot_max = 0;
	assert_int_equal(segpool_cache_set_tunables(c, &tun), 0);
	assert_true(sp_test_info(c).mag_size <=
		    sp_mag_class_cap(SP_MAG_CLASSES - 1));
	free(objs);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* --- shrink and destroy reach every slot ---------------------------------- */

struct loader {
	struct segpool_cache *c;
	int cpu;
	void *keep[2];
};

/* On @cpu: leave rounds in that CPU's magazines, keep two objects. */
static void *load_slot(void *arg)
{
	struct loader *l = arg;
	void *objs[40];

	if (sp_test_pin(l->cpu))
		return NULL;
	for (int i = 0; i < 40; i++)
		if (!(objs[i] = segpool_cache_alloc(l->c, 0)))
			return NULL;
	for (int i = 2; i < 40; i++)
		segpool_cache_free(l->c, objs[i]);
	l->keep[0] = objs[0];
	l->keep[1] = objs[1];
	return l;
}

/* Put rounds in the magazines of two slots (and the depot); fills @live. */
static void load_two_slots(struct segpool_cache *c, unsigned long ids[2],
			   void **live)
{
	if (sp_pcpu_mode == SP_PCPU_LOCK) {
		void *objs[200];

		for (int s = 0; s < 2; s++) {
			ids[s] = (unsigned long)s;
			sp_pcpu_test_inject_slot(s);
			alloc_n(c, objs, 200);
			live[2 * s] = objs[0];
			live[2 * s + 1] = objs[1];
			free_n(c, objs + 2, 198);
		}
		sp_pcpu_test_inject_slot(-1);
	} else {
		for (int s = 0; s < 2; s++) {
			struct loader l = {
				.c = c,
				.cpu = sp_test_allowed_cpu((unsigned int)s),
			};
			pthread_t th;
			void *ret;

			ids[s] = (unsigned long)l.cpu;
			assert_int_equal(
				pthread_create(&th, NULL, load_slot, &l), 0);
			assert_int_equal(pthread_join(th, &ret), 0);
			assert_non_null(ret);
			live[2 * s] = l.keep[0];
			live[2 * s + 1] = l.keep[1];
		}
	}
	for (int s = 0; s < 2; s++)
		CHECK(sp_pcpu_slot_objects(c->pcpu, ids[s]) > 0,
		      "slot %lu holds no rounds after loading", ids[s]);
}

static void test_drain_every_slot(void **state)
{
	struct segpool_cache_info info;
	struct segpool_cache *c;
	unsigned long ids[2];
	void *live[4];

	(void)state;
	SKIP_UNLESS(mode_has_pcpu(), "no magazines");
	SKIP_UNLESS(sp_pcpu_mode == SP_PCPU_LOCK || sp_test_nr_cpus() > 1,
		    "fewer than 2 CPUs to pin threads to");
	c = segpool_cache_create("pcpu-drain-all", 64, 0, 0, NULL);
	assert_non_null(c);
	if (c->pcpu->nr_slots < 2) {
		assert_int_equal(segpool_cache_destroy(c), 0);
		SKIP_UNLESS(false, "a single CPU slot");
	}

	load_two_slots(c, ids, live);
	info = sp_test_info(c);
	print_message("# loaded slots %lu and %lu: %" PRIu64
		      " on CPUs, %" PRIu64 " in the depot\n",
		      ids[0], ids[1], info.cpu_objs, info.depot_objs);
	assert_int_equal(info.active_objs, 4);
	assert_true(info.cpu_objs > 0);

	assert_true(segpool_cache_shrink(c) >= 0);
	info = sp_test_info(c);
	assert_int_equal(info.cpu_objs, 0);
	assert_int_equal(info.depot_objs, 0);
	assert_int_equal(info.active_objs, 4);
	for (unsigned long i = 0; i < c->pcpu->nr_slots; i++) {
		struct sp_pcpu_slot *slot = &c->pcpu->slots[i];

		CHECK(!slot->loaded && !slot->prev &&
			      slot->top == sp_mag_top_none,
		      "slot %lu not drained", i);
	}
	free_n(c, live, 4);
	segpool_cache_shrink(c);
	info = sp_test_info(c);
	assert_int_equal(info.active_objs, 0);
	assert_int_equal(info.cpu_objs, 0);
	assert_int_equal(info.total_slabs, 0);
	assert_int_equal(info.allocs, info.frees);

	/*
	 * destroy drains by itself: it fails with -EBUSY if a round is missed
	 */
	load_two_slots(c, ids, live);
	free_n(c, live, 4);
	assert_true(sp_test_info(c).cpu_objs > 0);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* --- rseq aborts under a storm of signals --------------------------------- */

static atomic_ulong storm_signals;

static void storm_handler(int sig)
{
	(void)sig;
	atomic_fetch_add_explicit(&storm_signals, 1, memory_order_relaxed);
}

#define STORM_LIVE	512
#define STORM_SIZE	64

struct held {
	void *p;
	uint64_t tag;
};

static void test_rseq_abort_storm(void **state)
{
	struct sigaction sa, old;
	struct sigevent sev;
	struct itimerspec its;
	struct held *live;
	struct segpool_cache_info info0, info;
	struct segpool_cache *c;
	struct ptrset set;
	timer_t timer;
	uint64_t rng = sp_test_seed() | 1, seq = 0, aborts;
	unsigned long ops = sp_test_scaled(2000000, 20000), op;
	unsigned long allocs = 0, frees = 0;
	size_t nlive = 0;

	(void)state;
	SKIP_UNLESS(sp_pcpu_mode == SP_PCPU_RSEQ, "no restartable sequences");
	c = segpool_cache_create("pcpu-storm", STORM_SIZE, 0, 0, NULL);
	assert_non_null(c);
	live = calloc(STORM_LIVE, sizeof(*live));
	assert_non_null(live);
	set_init(&set, 4 * STORM_LIVE);
	info0 = sp_test_info(c);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = storm_handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGALRM;
	sev.sigev_notify_thread_id = gettid();
	assert_int_equal(timer_create(CLOCK_MONOTONIC, &sev, &timer), 0);
	its.it_value.tv_sec = 0;
	its.it_value.tv_nsec = 20000;
	its.it_interval = its.it_value;
	atomic_store(&storm_signals, 0);
	assert_int_equal(timer_settime(timer, 0, &its, NULL), 0);

	/* a fixed number of operations, and on until a few signals came */
	for (op = 0; op < ops || (atomic_load(&storm_signals) < 4 &&
				  op < 64 * ops); op++) {
		uint64_t r = sp_test_rand(&rng);

		if (nlive == 0 || (nlive < STORM_LIVE && (r & 1))) {
			void *got[8];
			size_t n = 1;

			if ((r >> 8) % 64 == 0 && nlive + 8 <= STORM_LIVE) {
				n = 8;
				CHECK(segpool_cache_alloc_bulk(c, 0, n, got) ==
					      8,
				      "bulk allocation failed");
			} else {
				got[0] = segpool_cache_alloc(c, 0);
				CHECK(got[0], "allocation %lu failed", op);
			}
			for (size_t i = 0; i < n; i++) {
				CHECK(set_insert(&set, got[i]),
				      "object %p handed out twice (op %lu)",
				      got[i], op);
				live[nlive].p = got[i];
				live[nlive].tag = ++seq;
				sp_test_pattern_fill(got[i], STORM_SIZE, seq);
				nlive++;
				allocs++;
			}
		} else {
			size_t i = (size_t)(r >> 16) % nlive;
			struct held h = live[i];

			live[i] = live[--nlive];
			CHECK(sp_test_pattern_check(h.p, STORM_SIZE, h.tag) ==
			      STORM_SIZE,
			      "object %p lost its contents (op %lu)", h.p, op);
			CHECK(set_remove(&set, h.p), "object %p not live", h.p);
			segpool_cache_free(c, h.p);
			frees++;
		}
	}

	memset(&its, 0, sizeof(its));
	timer_settime(timer, 0, &its, NULL);
	timer_delete(timer);
	/* SIG_IGN discards a signal still pending, then the old action */
	sa.sa_handler = SIG_IGN;
	sigaction(SIGALRM, &sa, NULL);
	sigaction(SIGALRM, &old, NULL);

	info = sp_test_info(c);
	aborts = pcpu_stats(c).stat[SP_STAT_RSEQ_ABORT];
	print_message("# %lu ops, %lu signals, %" PRIu64
		      " rseq aborts counted, %" PRIu64 " fast-path allocs\n",
		      op, atomic_load(&storm_signals), aborts,
		      info.alloc_fastpath);
	assert_true(atomic_load(&storm_signals) > 0);
	assert_int_equal(allocs - frees, nlive);
	assert_int_equal(info.allocs - info0.allocs, allocs);
	assert_int_equal(info.frees - info0.frees, frees);
	assert_int_equal(info.active_objs, nlive);
	assert_true(info.alloc_fastpath > 0);

	while (nlive) {
		nlive--;
		assert_true(sp_test_pattern_check(live[nlive].p, STORM_SIZE,
						  live[nlive].tag) ==
			    STORM_SIZE);
		assert_true(set_remove(&set, live[nlive].p));
		segpool_cache_free(c, live[nlive].p);
	}
	assert_int_equal(sp_test_info(c).active_objs, 0);
	set_free(&set);
	free(live);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* --- segpool's own rseq registration -------------------------------------- */

struct own_run {
	struct segpool_cache *c;
	unsigned long pairs;
	bool alone;			/* no other thread runs: count hits */
	uint32_t id_before, id_after;
	uint64_t hits;
	int bad;
};

static uint32_t rseq_id_now(void)
{
	/* the area is 32-byte aligned: so is its id field's word */
	return *(volatile uint32_t *)(void *)
		((char *)__builtin_thread_pointer() + sp_rseq_id_off);
}

static uint64_t slot_alloc_hits(struct segpool_cache *c)
{
	return pcpu_stats(c).alloc_fastpath;
}

static void *own_thread(void *arg)
{
	struct own_run *r = arg;
	uint64_t before;

	if (sp_rseq_own)
		r->id_before = rseq_id_now();
	/*
	 * the internal counter reader is exact (and race-free) only when quiet
	 */
	before = r->alone ? slot_alloc_hits(r->c) : 0;
	for (unsigned long i = 0; i < r->pairs; i++) {
		uint64_t *p = segpool_cache_alloc(r->c, 0);

		if (!p) {
			r->bad++;
			break;
		}
		sp_test_pattern_fill(p, 64, i);
		if (sp_test_pattern_check(p, 64, i) != 64)
			r->bad++;
		segpool_cache_free(r->c, p);
	}
	r->hits = r->alone ? slot_alloc_hits(r->c) - before : 0;
	if (sp_rseq_own)
		r->id_after = rseq_id_now();
	return NULL;
}

static void test_own_registration(void **state)
{
	/* static: threads outlive the frame if an assertion fails */
	static struct own_run runs[4];
	static pthread_t th[4];
	struct segpool_cache *c;
	const char *why;

	(void)state;
	SKIP_UNLESS(wanted() == WANT_RSEQ_OWN,
		    "glibc's registration is on in this run");
	if (!rseq_possible(&why))
		print_message("# rseq unavailable (%s): \"%s\"; new threads "
			      "checked in that mode\n", why,
			      segpool_percpu_mode());
	else
		assert_true(sp_rseq_own);
	assert_int_equal(__rseq_size, 0);
	c = segpool_cache_create("pcpu-own", 64, 0, 0, NULL);
	assert_non_null(c);

	/* one new thread at a time: each registers on its first slow path */
	for (int t = 0; t < 3; t++) {
		memset(&runs[0], 0, sizeof(runs[0]));
		runs[0].c = c;
		runs[0].pairs = sp_test_scaled(20000, 500);
		runs[0].alone = true;
		assert_int_equal(
			pthread_create(&th[0], NULL, own_thread, &runs[0]), 0);
		assert_int_equal(pthread_join(th[0], NULL), 0);
		print_message("# thread %d: %" PRIu64
			      " fast-path allocs, rseq id %#x -> %u\n",
			      t, runs[0].hits, runs[0].id_before,
			      runs[0].id_after);
		assert_int_equal(runs[0].bad, 0);
		assert_true(runs[0].hits > 0);
		if (sp_pcpu_mode == SP_PCPU_RSEQ) {
			/*
			 * unregistered until segpool's
			 * first slow path, then a CPU
			 */
			assert_int_equal(runs[0].id_before, UINT32_MAX);
			assert_true(runs[0].id_after < c->pcpu->nr_slots);
		}
	}
	/* and several at once */
	for (int t = 0; t < 4; t++) {
		memset(&runs[t], 0, sizeof(runs[t]));
		runs[t].c = c;
		runs[t].pairs = sp_test_scaled(20000, 500);
		assert_int_equal(
			pthread_create(&th[t], NULL, own_thread, &runs[t]), 0);
	}
	for (int t = 0; t < 4; t++) {
		assert_int_equal(pthread_join(th[t], NULL), 0);
		assert_int_equal(runs[t].bad, 0);
	}
	assert_int_equal(sp_test_info(c).active_objs, 0);
	assert_int_equal(sp_test_info(c).allocs, sp_test_info(c).frees);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* --- drains while a thread runs on the slot ------------------------------- */

#define DRAIN_HELD	64
#define DRAIN_SIZE	96

struct drain_run {
	struct segpool_cache *c;
	int cpu;
	atomic_bool stop;
	atomic_ulong ops;
	unsigned long allocs, frees;
	atomic_int errors;
	uint64_t rng;
};

static void drain_error(struct drain_run *d, const char *what, const void *p)
{
	if (atomic_fetch_add(&d->errors, 1) < 10)
		fprintf(stderr, "# drain worker: %s %p\n", what, p);
}

static void *drain_worker(void *arg)
{
	struct drain_run *d = arg;
	struct held held[DRAIN_HELD];
	struct ptrset set;
	uint64_t seq = 0;
	size_t n = 0;

	sp_test_pin(d->cpu);
	set.slot = calloc(4 * DRAIN_HELD, sizeof(*set.slot));
	set.mask = 4 * DRAIN_HELD - 1;
	if (!set.slot) {
		drain_error(d, "out of memory", NULL);
		return NULL;
	}
	while (!atomic_load_explicit(&d->stop, memory_order_relaxed)) {
		uint64_t r = sp_test_rand(&d->rng);

		if (n == 0 || (n < DRAIN_HELD && (r & 1))) {
			void *p = segpool_cache_alloc(d->c, 0);

			if (!p) {
				drain_error(d, "allocation failed", NULL);
				break;
			}
			if (!set_insert(&set, p))
				drain_error(d, "object handed out twice:", p);
			held[n].p = p;
			held[n].tag = ++seq;
			sp_test_pattern_fill(p, DRAIN_SIZE, seq);
			n++;
			d->allocs++;
		} else {
			size_t i = (size_t)(r >> 8) % n;
			struct held h = held[i];

			held[i] = held[--n];
			if (sp_test_pattern_check(h.p, DRAIN_SIZE, h.tag) !=
			    DRAIN_SIZE)
				drain_error(d, "held object lost its contents:",
					    h.p);
			if (!set_remove(&set, h.p))
				drain_error(d,
					    "held object not in the set:", h.p);
			segpool_cache_free(d->c, h.p);
			d->frees++;
		}
		/* lets the drainer in where threads take turns (valgrind) */
		if (atomic_fetch_add_explicit(&d->ops, 1,
					      memory_order_relaxed) % 64 == 63)
			sched_yield();
	}
	while (n) {
		n--;
		if (sp_test_pattern_check(held[n].p, DRAIN_SIZE,
					  held[n].tag) != DRAIN_SIZE)
			drain_error(
				d, "held object lost its contents:", held[n].p);
		segpool_cache_free(d->c, held[n].p);
		d->frees++;
	}
	free(set.slot);
	return NULL;
}

static void test_drain_while_running(void **state)
{
	static struct drain_run d;	/* static: see test_own_registration */
	struct segpool_cache_info info;
	unsigned long shrinks = sp_test_scaled(5000, 100), ops_seen, i;
	pthread_t th;

	(void)state;
	SKIP_UNLESS(mode_has_pcpu(), "no magazines to drain");
	memset(&d, 0, sizeof(d));
	d.c = segpool_cache_create("pcpu-drain-live", DRAIN_SIZE, 0, 0, NULL);
	assert_non_null(d.c);
	d.cpu = sp_test_allowed_cpu(0);
	d.rng = sp_test_seed() ^ 0xd1a1;
	if (sp_test_nr_cpus() > 1)
		pin_self(sp_test_allowed_cpu(1));
	assert_int_equal(pthread_create(&th, NULL, drain_worker, &d), 0);
	while (atomic_load(&d.ops) < 100 && !atomic_load(&d.errors))
		sched_yield();
	ops_seen = atomic_load(&d.ops);
	/* at least @shrinks, and on until the worker did as many operations
	 * meanwhile, yielding so that it gets the CPU even where threads
	 * take turns (valgrind); bounded, in case it makes no progress */
	for (i = 0; i < shrinks || (atomic_load(&d.ops) - ops_seen < shrinks &&
				    i < 100 * shrinks); i++) {
		CHECK(segpool_cache_shrink(d.c) >= 0, "shrink %lu failed", i);
		if (i % 64 == 0)
			/* stats read while it runs */
			info = sp_test_info(d.c);
		if (i >= shrinks)
			sched_yield();
	}
	ops_seen = atomic_load(&d.ops) - ops_seen;
	atomic_store(&d.stop, true);
	assert_int_equal(pthread_join(th, NULL), 0);
	print_message(
		"# %lu shrinks while the worker on CPU %d did %lu operations\n",
		i, d.cpu, ops_seen);
	CHECK(ops_seen >= shrinks,
	      "the worker made no progress during the shrinks");
	assert_int_equal(atomic_load(&d.errors), 0);
	info = sp_test_info(d.c);
	assert_int_equal(info.allocs, d.allocs);
	assert_int_equal(info.frees, d.frees);
	assert_int_equal(info.active_objs, 0);
	assert_int_equal(segpool_cache_destroy(d.c), 0);
}

/* --- statistics read while a thread cycles magazines ---------------------- */

struct cycler {
	struct segpool_cache *c;
	int cpu;
	size_t k;			/* objects per cycle:
					 * several magazines */
	atomic_bool stop;
	atomic_ulong cycles;
	int failed;
};

static void *cycle_magazines(void *arg)
{
	struct cycler *y = arg;
	void **objs = calloc(y->k, sizeof(*objs));

	sp_test_pin(y->cpu);
	if (!objs) {
		y->failed = 1;
		return NULL;
	}
	while (!atomic_load_explicit(&y->stop, memory_order_relaxed)) {
		for (size_t i = 0; i < y->k; i++)
			if (!(objs[i] = segpool_cache_alloc(y->c, 0)))
				y->failed = 1;
		for (size_t i = 0; i < y->k; i++)
			segpool_cache_free(y->c, objs[i]);
		atomic_fetch_add(&y->cycles, 1);
		if (y->failed)
			break;
		/* lets the reader in where threads take turns */
		sched_yield();
	}
	free(objs);
	return NULL;
}

/*
 * segpool_cache_get_info() from another CPU while the owner of a slot swaps
 * magazines and exchanges them with the depot: figures within bounds, no
 * crash, and (under ThreadSanitizer) no data race.
 */
static void test_stats_while_running(void **state)
{
	unsigned long reads = sp_test_scaled(20000, 500), i, seen;
	struct segpool_cache_info info;
	static struct cycler y;	/* static: see test_own_registration */
	uint64_t cpu_max, depot_max;
	pthread_t th;

	(void)state;
	SKIP_UNLESS(mode_has_pcpu(), "no magazines");
	memset(&y, 0, sizeof(y));
	y.c = segpool_cache_create("pcpu-stats-live", 64, 0, 0, NULL);
	assert_non_null(y.c);
	info = sp_test_info(y.c);
	y.k = 5UL * info.mag_size;
	y.cpu = sp_test_allowed_cpu(0);
	cpu_max = 2ULL * sp_mag_class_cap(SP_MAG_CLASSES - 1) *
		  y.c->pcpu->nr_slots;
	depot_max = (uint64_t)info.depot_max *
		    sp_mag_class_cap(SP_MAG_CLASSES - 1) *
		    (uint64_t)sp_topo.nr_nodes;
	if (sp_test_nr_cpus() > 1)
		pin_self(sp_test_allowed_cpu(1));
	assert_int_equal(pthread_create(&th, NULL, cycle_magazines, &y), 0);
	while (atomic_load(&y.cycles) < 1 && !y.failed)
		sched_yield();
	seen = atomic_load(&y.cycles);
	for (i = 0; i < reads || (atomic_load(&y.cycles) - seen < 100 &&
				  i < 100 * reads); i++) {
		info = sp_test_info(y.c);
		if (i >= reads)
			sched_yield();	/* see test_drain_while_running */
		CHECK(info.cpu_objs <= cpu_max && info.depot_objs <= depot_max,
		      "read %lu: %" PRIu64 " objects on CPUs, %" PRIu64
		      " in depots: beyond what magazines can hold", i,
		      info.cpu_objs, info.depot_objs);
	}
	seen = atomic_load(&y.cycles) - seen;
	atomic_store(&y.stop, true);
	assert_int_equal(pthread_join(th, NULL), 0);
	print_message("# %lu reads during %lu cycles of %zu allocs and frees\n",
		      i, seen, y.k);
	assert_int_equal(y.failed, 0);
	CHECK(seen > 0, "the thread made no progress during the reads");
	info = sp_test_info(y.c);
	assert_int_equal(info.active_objs, 0);
	assert_int_equal(info.allocs, info.frees);
	assert_int_equal(info.allocs, atomic_load(&y.cycles) * y.k);
	assert_int_equal(segpool_cache_destroy(y.c), 0);
}

static unsigned long zeroed_slow;

static void count_owned(enum sp_pcpu_hook_point point, unsigned long slot)
{
	(void)slot;
	if (point == SP_HOOK_SLOT_OWNED)
		zeroed_slow++;
}

/*
 * Zeroed allocations take the hit path too: segpool_calloc() and
 * segpool_kmalloc(SEGPOOL_ZERO) of a size class are its magazine pop and
 * a clear, not a slow path (a slot owned, the hook called) on every call.
 * Each object handed out is dirtied before it goes back, and must come
 * out zeroed again.
 */
static void test_zeroed_allocs_hit(void **state)
{
	unsigned long n = sp_test_scaled(20000, 1000);
	struct segpool_cache *c;

	(void)state;
	SKIP_UNLESS(__atomic_load_n(&sp_pcpu_fast.nr, __ATOMIC_RELAXED),
		    "no hit path in this mode");
	pin_self(sp_test_allowed_cpu(0));
	zeroed_slow = 0;
	sp_pcpu_test_hook = count_owned;
	for (unsigned long i = 0; i < n; i++) {
		unsigned char *p = i & 1 ? segpool_calloc(3, 30) :
			segpool_kmalloc(90, SEGPOOL_ZERO);

		assert_non_null(p);
		assert_true(sp_test_all_bytes(p, 0, 90));
		memset(p, 0xa5, 90);
		segpool_free(p);
	}
	sp_pcpu_test_hook = NULL;
	print_message("# %lu zeroed allocations and frees: %lu slow paths\n",
		      n, zeroed_slow);
	/* the first fill and its refills at most, never one per call */
	assert_true(zeroed_slow <= 8);

	/* a cache's zeroed allocations, and by node with no node asked */
	c = segpool_cache_create("pcpu-zeroed", 72, 0, 0, NULL);
	assert_non_null(c);
	zeroed_slow = 0;
	sp_pcpu_test_hook = count_owned;
	for (unsigned long i = 0; i < n; i++) {
		unsigned char *p = i & 1 ?
			segpool_cache_alloc(c, SEGPOOL_ZERO) :
			segpool_cache_alloc_node(c, SEGPOOL_ZERO,
						 SEGPOOL_NUMA_NO_NODE);

		assert_non_null(p);
		assert_true(sp_test_all_bytes(p, 0, 72));
		memset(p, 0x5a, 72);
		segpool_cache_free(c, p);
	}
	sp_pcpu_test_hook = NULL;
	print_message("# %lu zeroed cache allocations: %lu slow paths\n", n,
		      zeroed_slow);
	assert_true(zeroed_slow <= 8);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/*
 * Aligned allocations of the size classes take the hit path too:
 * segpool_aligned_alloc() of a class's own size is segpool_malloc() of
 * it, not an allocation straight from the slabs under the node lock on
 * every call.  Every object comes out aligned.
 */
static void test_aligned_allocs_hit(void **state)
{
	unsigned long n = sp_test_scaled(20000, 1000);
	struct segpool_cache *c;
	uint64_t direct;

	(void)state;
	SKIP_UNLESS(mode_has_pcpu(), "no magazines");
	pin_self(sp_test_allowed_cpu(0));
	c = segpool_cache_find("kmalloc-384");
	assert_non_null(c);
	direct = slab_direct_allocs(c);
	for (unsigned long i = 0; i < n; i++) {
		/* 384 is the smallest class holding 300 that 128 divides */
		void *p = segpool_aligned_alloc(128, 300);

		assert_non_null(p);
		assert_int_equal((uintptr_t)p % 128, 0);
		assert_ptr_equal(sp_obj_to_slab(p)->cache, c);
		memset(p, 0x33, 300);
		segpool_free(p);
	}
	print_message("# %lu aligned allocations: %" PRIu64
		      " straight from the slabs\n", n,
		      slab_direct_allocs(c) - direct);
	assert_true(slab_direct_allocs(c) - direct <= 8);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test_teardown(test_mode_reporting, teardown),
	cmocka_unit_test_teardown(test_layout, teardown),
	cmocka_unit_test_teardown(test_fastpath_accounting, teardown),
	cmocka_unit_test_teardown(test_stash, teardown),
	cmocka_unit_test_teardown(test_zeroed_allocs_hit, teardown),
	cmocka_unit_test_teardown(test_aligned_allocs_hit, teardown),
	cmocka_unit_test_teardown(test_bonwick_transitions, teardown),
	cmocka_unit_test_teardown(test_remote_free, teardown),
	cmocka_unit_test_teardown(test_double_free_reported, teardown),
	cmocka_unit_test_teardown(test_tunables, teardown),
	cmocka_unit_test_teardown(test_drain_every_slot, teardown),
	cmocka_unit_test_teardown(test_rseq_abort_storm, teardown),
	cmocka_unit_test(test_mag_fresh_rounds_even),
	cmocka_unit_test(test_zeroed_slab_clean_block),
	cmocka_unit_test(test_mag_growth),
	cmocka_unit_test(test_mag_growth_bound),
	cmocka_unit_test(test_mag_shrink),
	cmocka_unit_test_teardown(test_own_registration, teardown),
	cmocka_unit_test_teardown(test_drain_while_running, teardown),
	cmocka_unit_test_teardown(test_stats_while_running, teardown),
};

SP_TEST_MAIN_VARIANTS(tests, variants)
