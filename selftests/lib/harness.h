/* SPDX-License-Identifier: MIT */
/*
 * selftests/lib/harness.h - what every segpool selftest shares.
 *
 * Each test program defines its cmocka tests and ends with
 *	SP_TEST_MAIN(tests)
 * which gives it a main() that accepts an optional glob pattern
 * (argv[1], or SEGPOOL_TEST_FILTER) selecting the tests to run, and
 * leaves out those SEGPOOL_TEST_SKIP's glob matches.
 *
 * Random tests take their seed from sp_test_seed(): SEGPOOL_TEST_SEED when
 * set, a fixed default otherwise; the seed is printed so a run can be
 * repeated exactly.
 *
 * Loads shrink by sp_test_load_scale() (valgrind, the sanitizers,
 * SEGPOOL_TEST_SCALE); tests that pin threads pick their CPUs with
 * sp_test_allowed_cpu() among those the program started with.
 */
#ifndef SP_SELFTESTS_LIB_HARNESS_H
#define SP_SELFTESTS_LIB_HARNESS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <cmocka.h>

#include <segpool/segpool.h>

/* Exit status a test program uses when it cannot run here (kselftest's). */
#define SP_TEST_SKIP_STATUS 4

int sp_test_run(const char *group, const struct CMUnitTest *tests,
		size_t n, int argc, char **argv);

#define SP_TEST_MAIN(tests)						\
	int main(int argc, char **argv)					\
	{								\
		return sp_test_run(__FILE__, tests,			\
				   sizeof(tests) / sizeof(tests[0]),	\
				   argc, argv);				\
	}

/*
 * Variants: a setting fixed for the life of a process (an environment
 * variable the library reads once at start-up, a glibc tunable) is tested by
 * running the program once per setting.  A program ends with
 *	SP_TEST_MAIN_VARIANTS(tests, variants)
 * instead of SP_TEST_MAIN.  The runner (scripts/run-selftests.sh) finds
 * such a program by the marker the macro puts into it, asks it for its
 * variants (`PROG --list-variants`: one line each, the name, then the
 * changes as env(1) arguments, "-u A" first, then "A=b") and runs it once per
 * variant, each as its own TAP line "PROG [NAME]", with the changes made
 * and SEGPOOL_TEST_VARIANT=NAME; @tests then run as under SP_TEST_MAIN and
 * sp_test_variant() tells them where they are.  The program never starts
 * itself again: run by hand without SEGPOOL_TEST_VARIANT, or with an
 * environment that does not match the variant's, it prints the command of
 * each variant and exits with status 2.  In selftests/unit/test_percpu:
 *	env -u SEGPOOL_PERCPU_ID SEGPOOL_PERCPU=lock \
 *		SEGPOOL_TEST_VARIANT=mode=lock ./test_percpu
 * Variant names and values hold no white space.
 */
struct sp_test_variant {
	const char *name;		/* the TAP line's "[NAME]" */
	const char *const *env;		/* "NAME=value" sets, "NAME" unsets;
					 * NULL-terminated (or NULL) */
};

int sp_test_run_variants(const char *group, const struct CMUnitTest *tests,
			 size_t n, const struct sp_test_variant *variants,
			 size_t nvariants, int argc, char **argv);

/* The string scripts/run-selftests.sh looks for; only the macro holds it. */
#define SP_TEST_VARIANTS_MARKER	"SEGPOOL_SELFTEST_" "HAS_VARIANTS"

#define SP_TEST_MAIN_VARIANTS(tests, variants)				\
	__attribute__((used)) static const char				\
		sp_test_variants_marker[] = SP_TEST_VARIANTS_MARKER;	\
	int main(int argc, char **argv)					\
	{								\
		return sp_test_run_variants(__FILE__, tests,		\
				sizeof(tests) / sizeof(tests[0]),	\
				variants,				\
				sizeof(variants) / sizeof(variants[0]), \
				argc, argv);				\
	}

/* The variant this process runs in (SEGPOOL_TEST_VARIANT), or NULL. */
const char *sp_test_variant(void);

/*
 * Per-CPU modes as variants: the environment changes of a run in rseq
 * mode, in lock mode, or with the per-CPU layer off (each unsets
 * SEGPOOL_PERCPU_ID too).  sp_test_percpu_rseq, the setting that asks for
 * rseq mode, starts variants of it: "SEGPOOL_PERCPU=rseq", except in a
 * ThreadSanitizer build (TSan cannot see into the rseq assembly), where it
 * unsets SEGPOOL_PERCPU: the default there, lock mode, is what such a run
 * checks.
 */
extern const char sp_test_percpu_rseq[];
extern const char *const sp_test_env_percpu_rseq[];
extern const char *const sp_test_env_percpu_lock[];
extern const char *const sp_test_env_percpu_off[];

/* The seed for this run (printed once, on first use). */
uint64_t sp_test_seed(void);

/* xorshift64* generator; state must not be 0. */
static inline uint64_t sp_test_rand(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* Resident set size of this process in bytes, from /proc/self/statm. */
size_t sp_test_rss(void);

/* True when running under valgrind (slow: tests scale their loads down). */
bool sp_test_under_valgrind(void);

/*
 * sp_test_load_scale() - the factor a test multiplies its loads by.
 *
 * SEGPOOL_TEST_SCALE when it holds a positive number (0.1 runs a tenth of
 * the operations); otherwise 0.02 under valgrind, 0.2 in a ThreadSanitizer
 * build, 0.5 in an AddressSanitizer build (CONFIG_SEGPOOL_TSAN and
 * CONFIG_SEGPOOL_ASAN of segpool_config.h) and 1 elsewhere.
 */
double sp_test_load_scale(void);

/* sp_test_scaled() - @n times sp_test_load_scale(), but at least @min. */
unsigned long sp_test_scaled(unsigned long n, unsigned long min);

/*
 * CPUs.  The set of CPUs the process may run on is saved before main(), so
 * it is the set the program was started with even after a test pinned its
 * thread; sp_test_unpin() goes back to it.
 */

/* How many CPUs the process was started on (at least 1). */
int sp_test_nr_cpus(void);

/*
 * sp_test_allowed_cpu() - the CPU at position @k (counted modulo
 * sp_test_nr_cpus()) of the set the process was started on: 0 gives the
 * first, 1 the second if there is one; any @k gives a CPU.
 */
int sp_test_allowed_cpu(unsigned int k);

/*
 * sp_test_pin() - bind the calling thread to @cpu.
 *
 * It reports and fails nothing itself (a worker thread may call it): a
 * test that needs the pin checks the result.
 * Return: 0, or the error number of pthread_setaffinity_np().
 */
int sp_test_pin(int cpu);

/* sp_test_unpin() - let the calling thread run on every start-up CPU again. */
void sp_test_unpin(void);

/*
 * sp_test_info() - segpool_cache_get_info() of @c into a zeroed record of
 * the current size; fails the test when the call does not return 0.
 * Context: the thread running the cmocka test (it asserts).
 */
struct segpool_cache_info sp_test_info(struct segpool_cache *c);

/*
 * sp_test_batches() - @rounds rounds of: allocate @n objects of @c into
 * @objs, then free them in the same order (a batch pattern).
 * Context: the thread running the cmocka test (it asserts).
 */
void sp_test_batches(struct segpool_cache *c, void **objs, size_t n,
		     unsigned int rounds);

/*
 * sp_test_make_size_classes() - make every size class's cache, through
 * segpool_cache_find() (a class is made at its first allocation or lookup):
 * for a test that reads all classes' rows without allocating from each.
 * Returns how many classes there are.
 */
unsigned int sp_test_make_size_classes(void);

/*
 * sp_test_linked_cache() - a cache as segpool_cache_create(@name, @size, 0,
 * @flags, @ctor) makes it, but whose free objects are linked through them
 * (SP_CACHE_LINKED), never bits of a map: for the tests of the links and
 * their checks, which the caches of small objects no longer have.
 */
struct segpool_cache *sp_test_linked_cache(const char *name, size_t size,
					   unsigned long flags,
					   void (*ctor)(void *));

/* Are all @n bytes at @p equal to @b? */
bool sp_test_all_bytes(const void *p, unsigned char b, size_t n);

/*
 * sp_test_pattern_fill() - fill the @size bytes at @p (any alignment) with
 * the pattern of @tag: 64-bit words derived from @tag and their index.
 * Objects filled under different tags hold different bytes, so an object
 * that two owners share, or that the allocator overwrote, shows.
 */
void sp_test_pattern_fill(void *p, size_t size, uint64_t tag);

/*
 * sp_test_pattern_check() - where the @size bytes at @p first differ from
 * @tag's pattern.
 * Return: the offset of the first wrong byte, or @size when all are right.
 */
size_t sp_test_pattern_check(const void *p, size_t size, uint64_t tag);

/*
 * Fault points (os/faultpoint.h).  A test that arms one runs with
 * sp_test_faults_teardown() as its cmocka teardown, so that a failed
 * assertion does not leave it armed for the tests after it.
 */

/* sp_test_disarm_faults() - disarm every fault point. */
void sp_test_disarm_faults(void);

/* A cmocka teardown: sp_test_disarm_faults(); returns 0. */
int sp_test_faults_teardown(void **state);

/*
 * A filler takes all the memory the regions have committed (or bound) while
 * a commit or mbind fault point is armed: the region reuses freed blocks
 * without a new commit, so such a fault bites only once the committed memory
 * is used up.  SP_TEST_FILLER_SIZE gives one-page slabs, which fit in any
 * free block.
 */
#define SP_TEST_FILLER_SIZE	256
#define SP_TEST_FILLER_LIMIT	(2048UL << 20)	/* gives up after 2 GiB */

struct sp_test_filler {
	struct segpool_cache *c;	/* cache @name of the
					 * filler's objects */
	void **objs;			/* what it holds: @n of @cap */
	size_t n, cap;
};

/*
 * sp_test_filler_fill() - create cache @name of @size-byte objects in @f
 * and allocate from it until an allocation fails.
 *
 * When SP_TEST_FILLER_LIMIT bytes came and none failed (the fault never bit),
 * disarms every fault point and fails the test.
 * Return: errno of the allocation that failed (ENOMEM is expected).
 */
int sp_test_filler_fill(struct sp_test_filler *f, const char *name,
			size_t size);

/*
 * sp_test_filler_done() - free what @f holds and destroy its cache (fails
 * the test when the destroy does); @f is zeroed.
 */
void sp_test_filler_done(struct sp_test_filler *f);

/*
 * sp_test_mincore() - mincore(2) by segpool's page (SP_PAGE_SIZE): bit 0 of
 * @vec[i] is set when any of the kernel's pages in the i-th segpool page
 * of [@addr, + @len) is resident.  The kernel's page may be smaller than
 * segpool's (make PAGE_SHIFT=), and mincore() writes one byte for each of
 * its own pages.  @addr and @len are multiples of segpool's page.
 * Return: mincore()'s (0, or -1 with errno set).
 */
int sp_test_mincore(void *addr, size_t len, unsigned char *vec);

#include "selftests/lib/child.h"

#endif /* SP_SELFTESTS_LIB_HARNESS_H */
