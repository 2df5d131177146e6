// SPDX-License-Identifier: MIT
/*
 * selftests/stress/test_rcu_stress.c - RCU under load: statistics dumps walk
 * the cache list under RCU in one thread while another creates and destroys
 * caches (plain and SEGPOOL_TYPESAFE_BY_RCU) as fast as it can.  Each
 * destroy unlists its cache and waits for an RCU grace period, so the loop
 * is slow by nature (tens of seconds): it is the stress tier's, beside the
 * deterministic RCU tests of selftests/unit/test_rcu.c.
 *
 * Every dump must succeed and every create, allocation and destroy too;
 * the load shrinks under valgrind and the sanitizers (sp_test_scaled()).
 */
#include <pthread.h>
#include <stdio.h>

#include <segpool/segpool.h>

#include "selftests/lib/harness.h"

static void set_flag(int *flag, int v)
{
	__atomic_store_n(flag, v, __ATOMIC_RELEASE);
}

/* Dumps walk the cache list under RCU while caches come and go. */
struct dumper {
	int stop;
	unsigned long dumps;
	int failed;
};

static void *dump_thread(void *arg)
{
	struct dumper *d = arg;
	FILE *f = fopen("/dev/null", "w");

	if (!f) {
		d->failed = 1;
		return NULL;
	}
	while (!__atomic_load_n(&d->stop, __ATOMIC_ACQUIRE)) {
		if (segpool_stats_dump(f) != 0)
			d->failed = 1;
		d->dumps++;
	}
	fclose(f);
	return NULL;
}

static void test_dump_races_destroy(void **state)
{
	struct dumper d = { 0 };
	unsigned long rounds = sp_test_scaled(2000, 50);
	pthread_t th;
	char name[32];

	(void)state;
	assert_int_equal(pthread_create(&th, NULL, dump_thread, &d), 0);
	for (unsigned long i = 0; i < rounds; i++) {
		struct segpool_cache *c;
		void *o;

		snprintf(name, sizeof(name), "rcu-churn-%lu", i % 4);
		c = segpool_cache_create(name, 32 + (i % 4) * 64, 0,
					 i % 2 ? SEGPOOL_TYPESAFE_BY_RCU : 0,
					 NULL);
		assert_non_null(c);
		o = segpool_cache_alloc(c, 0);
		assert_non_null(o);
		segpool_cache_free(c, o);
		assert_int_equal(segpool_cache_destroy(c), 0);
	}
	set_flag(&d.stop, 1);
	pthread_join(th, NULL);
	assert_int_equal(d.failed, 0);
	print_message("# %lu caches destroyed during %lu dumps\n", rounds,
		      d.dumps);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_dump_races_destroy),
};

SP_TEST_MAIN(tests)
