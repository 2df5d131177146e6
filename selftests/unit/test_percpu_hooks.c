// SPDX-License-Identifier: MIT
/*
 * selftests/unit/test_percpu_hooks.c - the per-CPU slow paths at chosen
 * moments.
 *
 * The test hook (percpu/pcpu.h) runs code at an exact point of a slow path:
 * while a thread owns its CPU slot, just before it publishes it, and while a
 * drainer holds a slot it swapped out but has not fenced yet.  Each test
 * uses it to do what a preemption, a migration or a concurrent drain would
 * do there, and checks that no object is lost or handed out twice.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <segpool/segpool.h>

#include "selftests/lib/harness.h"
#include "core/core.h"
#include "internal/reentry.h"
#include "percpu/pcpu.h"

#define NOBJ 4096

static struct segpool_cache *hook_cache;
static void *nested[8];
static int nested_n;
static int hook_armed;
static int hook_target_cpu = -1;

static bool rseq_mode(void)
{
	return sp_pcpu_mode == SP_PCPU_RSEQ;
}

/* All pointers distinct and each object's tag intact. */
static void check_distinct(void **v, int n)
{
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			assert_ptr_not_equal(v[i], v[j]);
}

/* Re-enter the allocator on the slot the outer slow path owns. */
static void hook_reenter(enum sp_pcpu_hook_point point, unsigned long slot)
{
	(void)slot;
	if (point != SP_HOOK_SLOT_OWNED || !hook_armed || nested_n >= 8)
		return;
	hook_armed = 0;
	{
		/* as another thread preempting this one would: not nested */
		unsigned int depth = sp_lib_suspend();

		nested[nested_n] = segpool_cache_alloc(hook_cache, 0);
		sp_lib_resume(depth);
	}
	assert_non_null(nested[nested_n]);
	nested_n++;
}

/*
 * rseq mode: an allocation that finds its slot owned by a slow path that is
 * "preempted" at that point bypasses the magazines instead of waiting, and
 * gets an object nobody else holds.
 */
static void test_owned_slot_is_bypassed(void **state)
{
	static void *objs[NOBJ];
	struct segpool_cache_info info;
	uint64_t bypass_before;
	int n = 0;

	(void)state;
	if (!rseq_mode())
		skip();
	hook_cache = segpool_cache_create("hook-bypass", 64, 0, 0, NULL);
	assert_non_null(hook_cache);
	bypass_before = hook_cache->pcpu->bypass;
	nested_n = 0;
	sp_pcpu_test_hook = hook_reenter;
	/* the first allocation misses (empty slot) and takes the slow path */
	hook_armed = 1;
	objs[n++] = segpool_cache_alloc(hook_cache, 0);
	sp_pcpu_test_hook = NULL;
	assert_non_null(objs[0]);
	assert_int_equal(nested_n, 1);
	assert_true(hook_cache->pcpu->bypass > bypass_before);
	objs[n++] = nested[0];
	while (n < 200)
		objs[n++] = segpool_cache_alloc(hook_cache, 0);
	check_distinct(objs, n);
	segpool_cache_free_bulk(hook_cache, (size_t)n, objs);
	info = sp_test_info(hook_cache);
	assert_int_equal(info.active_objs, 0);
	assert_int_equal(info.allocs, info.frees);
	assert_int_equal(segpool_cache_destroy(hook_cache), 0);
}

/* Move the thread to another CPU while it owns its slot. */
static void hook_migrate(enum sp_pcpu_hook_point point, unsigned long slot)
{
	(void)slot;
	if (point != SP_HOOK_SLOT_OWNED || !hook_armed)
		return;
	hook_armed = 0;
	assert_int_equal(sp_test_pin(hook_target_cpu), 0);
}

/*
 * A slow path that migrates mid-way still finishes on the slot it owned and
 * publishes it from the other CPU; fast paths on both CPUs stay exact.
 */
static void test_migrate_while_owning(void **state)
{
	static void *objs[NOBJ];
	struct segpool_cache_info info;
	int n = 0;

	(void)state;
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || sp_pcpu_mode == SP_PCPU_OFF)
		skip();
	hook_cache = segpool_cache_create("hook-migrate", 48, 0, 0, NULL);
	assert_non_null(hook_cache);
	for (int round = 0; round < 20; round++) {
		int from = round & 1, to = !from;

		if (sp_test_pin(from))
			skip();
		hook_target_cpu = to;
		hook_armed = 1;
		sp_pcpu_test_hook = hook_migrate;
		/* allocate until a slow path ran (and migrated us) */
		while (hook_armed && n < NOBJ)
			objs[n++] = segpool_cache_alloc(hook_cache, 0);
		sp_pcpu_test_hook = NULL;
		assert_int_equal(hook_armed, 0);
		/*
		 * now on the other CPU: more fast paths, and frees of half
		 * (a quarter let n reach NOBJ on two nodes, where the frees
		 * of the other node's objects leave the magazines alone)
		 */
		for (int i = 0; i < 30 && n < NOBJ; i++)
			objs[n++] = segpool_cache_alloc(hook_cache, 0);
		for (int i = 0, half = n / 2; i < half; i++) {
			segpool_cache_free(hook_cache, objs[n - 1]);
			n--;
		}
	}
	sp_test_unpin();
	for (int i = 0; i < n; i++)
		assert_non_null(objs[i]);
	check_distinct(objs, n);
	info = sp_test_info(hook_cache);
	assert_int_equal(info.active_objs, (uint64_t)n);
	segpool_cache_free_bulk(hook_cache, (size_t)n, objs);
	info = sp_test_info(hook_cache);
	assert_int_equal(info.active_objs, 0);
	assert_int_equal(info.allocs, info.frees);
	assert_int_equal(segpool_cache_destroy(hook_cache), 0);
}

/* During a drain, between the swap and the fence: use the slot. */
static void hook_use_during_drain(enum sp_pcpu_hook_point point,
				  unsigned long slot)
{
	/* only the slot being drained is of interest: the one we run on */
	if (point != SP_HOOK_DRAIN_XCHG || !hook_armed || nested_n >= 8 ||
	    slot != (unsigned long)sched_getcpu())
		return;
	{
		/* as another thread on this CPU would: not nested */
		unsigned int depth = sp_lib_suspend();

		nested[nested_n] = segpool_cache_alloc(hook_cache, 0);
		assert_non_null(nested[nested_n]);
		segpool_cache_free(hook_cache, nested[nested_n]);
		sp_lib_resume(depth);
	}
	nested_n++;
}

/*
 * rseq mode: allocations and frees that run while a drainer holds a slot
 * swapped out (before its fence) go around the slot, and the drain still
 * returns every cached object to the slabs.
 */
static void test_use_slot_during_drain(void **state)
{
	static void *objs[NOBJ];
	struct segpool_cache_info info;

	(void)state;
	if (!rseq_mode())
		skip();
	hook_cache = segpool_cache_create("hook-drain", 128, 0, 0, NULL);
	assert_non_null(hook_cache);
	for (int i = 0; i < 300; i++)
		objs[i] = segpool_cache_alloc(hook_cache, 0);
	segpool_cache_free_bulk(hook_cache, 300, objs);
	info = sp_test_info(hook_cache);
	assert_true(info.cpu_objs + info.depot_objs > 0);
	nested_n = 0;
	hook_armed = 1;
	if (sp_test_pin(sched_getcpu()))
		skip();
	sp_pcpu_test_hook = hook_use_during_drain;
	assert_true(segpool_cache_shrink(hook_cache) >= 0);
	sp_pcpu_test_hook = NULL;
	hook_armed = 0;
	sp_test_unpin();
	assert_true(nested_n > 0);
	info = sp_test_info(hook_cache);
	assert_int_equal(info.active_objs, 0);
	assert_int_equal(info.cpu_objs, 0);
	assert_int_equal(info.depot_objs, 0);
	assert_int_equal(info.total_slabs, 0);
	assert_int_equal(segpool_cache_destroy(hook_cache), 0);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_owned_slot_is_bypassed),
	cmocka_unit_test(test_migrate_while_owning),
	cmocka_unit_test(test_use_slot_during_drain),
};

SP_TEST_MAIN(tests)
