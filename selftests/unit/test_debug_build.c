// SPDX-License-Identifier: MIT
/*
 * selftests/unit/test_debug_build.c - the checks of a debug build
 * (make DEBUG=1, internal/debug.h), and their absence from any other.
 *
 * In a debug build: a failed sp_assert() names file, line and expression
 * and aborts; sp_assert_held() of a mutex not held aborts; taking a lock
 * of a lower level of core/init.c's order while one of a higher level is
 * held aborts; and the rseq injection points (SP_RSEQ_INJECT,
 * percpu/arch-x86_64.h) make exactly the aborts asked for, which the slow
 * path survives and counts.  In another build, sp_assert() does not even
 * evaluate its expression, and the tests of the debug build skip.
 */
#include <pthread.h>
#include <string.h>

#include <segpool/segpool.h>

#include "selftests/lib/harness.h"
#include "segpool_config.h"
#include "core/core.h"
#include "internal/debug.h"
#include "percpu/arch.h"
#include "percpu/pcpu.h"

#ifdef CONFIG_SEGPOOL_DEBUG
#define DEBUG_BUILD 1
#else
#define DEBUG_BUILD 0
#endif

static void test_assert_cost(void **state)
{
	int evaluated = 0;

	(void)state;
	sp_assert(++evaluated == 1);
	/* a release build compiles the expression out, side effects too */
	assert_int_equal(evaluated, DEBUG_BUILD);
}

#ifdef CONFIG_SEGPOOL_DEBUG
static void assert_fails(void *arg)
{
	int two = *(int *)arg;

	sp_assert(two == 3);
}

static void test_assert_reports(void **state)
{
	int two = 2;

	(void)state;
	assert_true(sp_test_expect_death(assert_fails, &two,
					 "test_debug_build.c:"));
	assert_true(sp_test_expect_death(assert_fails, &two,
					 "assertion 'two == 3' failed"));
}

static pthread_mutex_t low = PTHREAD_MUTEX_INITIALIZER;	/* level 7 */
static pthread_mutex_t high = PTHREAD_MUTEX_INITIALIZER;	/* level 9 */

static void classes(void)
{
	sp_lock_class(&low, SP_LOCK_NODE);
	sp_lock_class(&high, SP_LOCK_REGION);
}

static void inverted(void *arg)
{
	(void)arg;
	classes();
	pthread_mutex_lock(&high);
	pthread_mutex_lock(&low);	/* a node lock under a region lock */
}

static void not_held(void *arg)
{
	(void)arg;
	sp_assert_held(&low);
}

static void test_lock_order(void **state)
{
	(void)state;
	/* the order of core/init.c, both levels named */
	assert_true(sp_test_expect_death(inverted, NULL, "lock order: taking "
					 "a level 7 lock while holding one of "
					 "level 9"));
	assert_true(sp_test_expect_death(not_held, NULL, "is not held"));

	/* the right order, a try-lock against it, and a held check pass */
	classes();
	pthread_mutex_lock(&low);
	pthread_mutex_lock(&high);
	sp_assert_held(&low);
	sp_assert_held(&high);
	pthread_mutex_unlock(&high);
	pthread_mutex_unlock(&low);
	pthread_mutex_lock(&high);
	assert_int_equal(pthread_mutex_trylock(&low), 0);
	pthread_mutex_unlock(&low);
	pthread_mutex_unlock(&high);
}

#if SP_RSEQ_ARCH
/*
 * Each injection point of sp_rseq_steal() in turn: a new cache's first
 * allocation misses its empty magazine and takes the slow path, which owns
 * the slot by that sequence; @n injected aborts are all made, the slow path
 * retries past them, counts them, and hands out a usable object.
 */
static void test_rseq_inject(void **state)
{
	const unsigned int n = 3;

	(void)state;
	assert_int_equal(sp_init(), 0);
	if (sp_pcpu_mode != SP_PCPU_RSEQ)
		skip();
	for (unsigned int point = 1; point <= 3; point++) {
		struct segpool_cache *c;
		struct sp_pcpu_stats st;
		void *obj;

		c = segpool_cache_create("inject", 64, 0, 0, NULL);
		assert_non_null(c);
		sp_rseq_inject.point = point;
		sp_rseq_inject.aborts = n;
		obj = segpool_cache_alloc(c, 0);
		sp_rseq_inject.point = 0;
		print_message("point %u: %u of %u injected aborts left\n",
			      point, sp_rseq_inject.aborts, n);
		assert_non_null(obj);
		assert_int_equal(sp_rseq_inject.aborts, 0);
		memset(obj, 0xa5, 64);
		sp_pcpu_read_stats(c->pcpu, &st);
		/* a real preemption may add one; none is lost */
		assert_true(st.stat[SP_STAT_RSEQ_ABORT] >= n);
		segpool_cache_free(c, obj);
		assert_int_equal(segpool_cache_destroy(c), 0);
	}
	/* a point no sequence has makes no abort */
	sp_rseq_inject.point = 9;
	sp_rseq_inject.aborts = 1;
	{
		struct segpool_cache *c;
		void *obj;

		c = segpool_cache_create("inject-none", 64, 0, 0, NULL);
		assert_non_null(c);
		obj = segpool_cache_alloc(c, 0);
		assert_non_null(obj);
		assert_int_equal(sp_rseq_inject.aborts, 1);
		sp_rseq_inject.point = 0;
		segpool_cache_free(c, obj);
		assert_int_equal(segpool_cache_destroy(c), 0);
	}
}
#endif
#endif /* CONFIG_SEGPOOL_DEBUG */

static void test_not_debug(void **state)
{
	(void)state;
	if (!DEBUG_BUILD)
		skip();
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_assert_cost),
#ifdef CONFIG_SEGPOOL_DEBUG
	cmocka_unit_test(test_assert_reports),
	cmocka_unit_test(test_lock_order),
#if SP_RSEQ_ARCH
	cmocka_unit_test(test_rseq_inject),
#endif
#endif
	/* skips outside a debug build: the run says so */
	cmocka_unit_test(test_not_debug),
};

SP_TEST_MAIN(tests)
