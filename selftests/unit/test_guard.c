// SPDX-License-Identifier: MIT
/*
 * selftests/unit/test_guard.c - sampled guard pages (guard/).
 *
 * The pool is set up at start-up from SEGPOOL_GUARD_SAMPLE, so each test
 * that needs it runs this program again with the setting (the child test
 * skips when run by itself): every slow-path allocation guarded (rate 1)
 * in a pool of a few slots.  Planted bugs run in forked children
 * (sp_test_expect_death) that must die of SIGABRT with a report naming the
 * cache and the call sites.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <segpool/debug.h>

#include "selftests/lib/harness.h"
#include "core/core.h"
#include "guard/guard.h"
#include "internal/sanitize.h"

#define NR_SLOTS	8
#define CHILD_VARIANT	"guard"

static const char *const env_guard[] = {
	"SEGPOOL_GUARD_SAMPLE=1",
	"SEGPOOL_GUARD_SLOTS=8",
	"SEGPOOL_DEBUG",
	"SEGPOOL_TEST_VARIANT=" CHILD_VARIANT,
	NULL
};

static bool in_child(void)
{
	const char *v = sp_test_variant();

	return v && !strcmp(v, CHILD_VARIANT);
}

static bool at_right_end(const void *p, size_t size)
{
	return (((uintptr_t)p + size) & (SP_PAGE_SIZE - 1)) == 0;
}

static bool at_left_end(const void *p)
{
	return ((uintptr_t)p & (SP_PAGE_SIZE - 1)) == 0;
}

/* A guarded object of @c at the wanted end (the ends alternate). */
static char *guarded(struct segpool_cache *c, bool left)
{
	for (int i = 0; i < 2; i++) {
		char *p = segpool_cache_alloc(c, 0);

		assert_non_null(p);
		assert_true(sp_guard_owns(p));
		if (left ? at_left_end(p) : at_right_end(p, 64))
			return p;
		segpool_cache_free(c, p);
	}
	fail_msg("no guarded object at the %s end", left ? "left" : "right");
	return NULL;
}

static void plant_overflow(void *arg)
{
	struct segpool_cache *c = segpool_cache_create("guard-ovf", 64, 0, 0,
						       NULL);
	volatile char *p = guarded(c, false);
	volatile size_t at = 64;

	(void)arg;
	p[at] = 1;		/* the guard page after it */
}

static void plant_underflow(void *arg)
{
	struct segpool_cache *c = segpool_cache_create("guard-unf", 64, 0, 0,
						       NULL);
	volatile char *p = guarded(c, true);
	volatile long at = -1;

	(void)arg;
	p[at] = 1;		/* the guard page before it */
}

static void plant_use_after_free(void *arg)
{
	struct segpool_cache *c = segpool_cache_create("guard-uaf", 64, 0, 0,
						       NULL);
	volatile char *p = segpool_cache_alloc(c, 0);

	(void)arg;
	assert_true(sp_guard_owns((void *)p));
	segpool_cache_free(c, (void *)p);
	(void)p[8];
}

static void plant_double_free(void *arg)
{
	char *p = segpool_malloc(40);

	(void)arg;
	assert_true(sp_guard_owns(p));
	segpool_free(p);
	segpool_free(p);
}

static void plant_slack_write(void *arg)
{
	/* 50 bytes in a cache aligned to 8: 6 bytes before the guard page */
	struct segpool_cache *c = segpool_cache_create("guard-slack", 50, 8, 0,
						       NULL);
	char *p = segpool_cache_alloc(c, 0);
	volatile size_t at = 50;

	(void)arg;
	if (at_left_end(p)) {
		segpool_cache_free(c, p);
		p = segpool_cache_alloc(c, 0);
	}
	assert_false(at_left_end(p));
	p[at] = 1;
	segpool_cache_free(c, p);
}

/* Every planted bug: the kind, the cache and the call sites are named. */
static void guard_reports(void)
{
	assert_true(sp_test_expect_death(plant_overflow, NULL,
		"BUG heap-buffer-overflow in cache guard-ovf: guarded object"));
	assert_true(sp_test_expect_death(plant_overflow, NULL,
		"write of address"));
	assert_true(sp_test_expect_death(plant_overflow, NULL,
		"allocated by thread"));
	assert_true(sp_test_expect_death(plant_underflow, NULL,
		"BUG heap-buffer-underflow in cache guard-unf"));
	assert_true(sp_test_expect_death(plant_underflow, NULL,
		"1 bytes before the object"));
	assert_true(sp_test_expect_death(plant_use_after_free, NULL,
		"BUG use-after-free in cache guard-uaf"));
	assert_true(sp_test_expect_death(plant_use_after_free, NULL,
		"freed by thread"));
	assert_true(sp_test_expect_death(plant_use_after_free, NULL,
		"allocated by thread"));
	assert_true(sp_test_expect_death(plant_double_free, NULL,
		"BUG double free in cache kmalloc-48"));
	assert_true(sp_test_expect_death(plant_slack_write, NULL,
		"BUG heap-buffer-overflow in cache guard-slack"));
}

/* The report's stacks start at the caller: this file's function is there. */
static void guard_stacks(void)
{
	char buf[8192];
	int status;

	assert_int_equal(sp_test_run_child(plant_use_after_free, NULL, buf,
					   sizeof(buf), &status), 0);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	/* both call sites name this program, before libc's frames */
	assert_non_null(strstr(buf, "allocated by thread"));
	assert_non_null(strstr(strstr(buf, "allocated by thread"),
			       "test_guard"));
	assert_non_null(strstr(strstr(buf, "freed by thread"), "test_guard"));
}

/* Continue: the access goes on, the report is counted, the free works. */
static void guard_continue(void)
{
	struct segpool_cache *c = segpool_cache_create("guard-cont", 64, 0, 0,
						       NULL);
	struct sp_guard_stats before, after;
	volatile char *p;
	volatile size_t at = 64;
	int old;

	old = segpool_debug_set_response(SEGPOOL_DEBUG_CONTINUE);
	sp_guard_get_stats(&before);
	p = guarded(c, false);
	p[at] = 7;
	assert_int_equal(p[at], 7);
	segpool_cache_free(c, (void *)p);
	sp_guard_get_stats(&after);
	assert_true(after.faults > before.faults);
	segpool_debug_set_response(old);
}

/* What must handle a guarded object: usable size, realloc, node, bulk. */
static void guard_calls(void)
{
	struct segpool_cache *c = segpool_cache_create("guard-calls", 100, 0,
						       0, NULL);
	char *p = segpool_malloc(33), *q, *o;

	assert_true(sp_guard_owns(p));
	assert_int_equal(segpool_usable_size(p), 33);
	assert_true(segpool_obj_node(p) >= 0);
	memset(p, 'x', 33);
	q = segpool_realloc(p, 200);
	assert_non_null(q);
	assert_int_equal(q[32], 'x');
	segpool_free(q);
	o = segpool_calloc(1, 48);
	assert_true(sp_guard_owns(o));
	for (int i = 0; i < 48; i++)
		assert_int_equal(o[i], 0);
	segpool_free(o);
	o = segpool_cache_alloc(c, SEGPOOL_ZERO);
	assert_true(sp_guard_owns(o));
	assert_int_equal(o[99], 0);
	assert_int_equal(segpool_usable_size(o), 100);
	segpool_cache_free(c, o);
	/* a freed one is no object any more */
	errno = 0;
	assert_int_equal(segpool_usable_size(o), 0);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* Freed by RCU: the slot goes back after the grace period. */
static void guard_rcu(void)
{
	struct segpool_cache *c = segpool_cache_create("guard-rcu", 64, 0, 0,
						       NULL);
	struct sp_guard_stats a, b;
	void *p = segpool_cache_alloc(c, 0), *q = segpool_malloc(24);

	assert_true(sp_guard_owns(p));
	assert_true(sp_guard_owns(q));
	sp_guard_get_stats(&a);
	assert_int_equal(segpool_cache_free_rcu(c, p), 0);
	assert_int_equal(segpool_free_rcu(q), 0);
	assert_int_equal(segpool_rcu_barrier(), 0);
	sp_guard_get_stats(&b);
	/* the RCU batches come from size classes: guarded ones too */
	assert_true(b.frees >= a.frees + 2);
	assert_int_equal(sp_guard_usable_size(p), 0);
	assert_int_equal(sp_guard_usable_size(q), 0);
	assert_int_equal(b.in_use, a.in_use - 2);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* A full pool: the sampled allocation is served normally. */
static void guard_exhaustion(void)
{
	struct segpool_cache *c = segpool_cache_create("guard-full", 64, 0, 0,
						       NULL);
	struct sp_guard_stats st, st2;
	void *p[NR_SLOTS + 4];
	unsigned int guarded_n = 0;

	sp_guard_get_stats(&st);
	assert_int_equal(st.slots, NR_SLOTS);
	for (int i = 0; i < NR_SLOTS + 4; i++) {
		p[i] = segpool_cache_alloc(c, 0);
		assert_non_null(p[i]);
		memset(p[i], i, 64);
		guarded_n += sp_guard_owns(p[i]);
	}
	sp_guard_get_stats(&st2);
	assert_int_equal(guarded_n, NR_SLOTS - st.in_use);
	assert_int_equal(st2.in_use, NR_SLOTS);
	assert_true(st2.exhausted > st.exhausted);
	for (int i = 0; i < NR_SLOTS + 4; i++)
		segpool_cache_free(c, p[i]);
	sp_guard_get_stats(&st2);
	assert_int_equal(st2.in_use, st.in_use);
	assert_int_equal(segpool_cache_destroy(c), 0);
	/* a freed slot waits at the FIFO's tail: the next one is another
	 * (a fresh cache: the first one's magazines hold normal objects) */
	c = segpool_cache_create("guard-fifo", 64, 0, 0, NULL);
	{
		void *a = segpool_cache_alloc(c, 0), *b;

		assert_true(sp_guard_owns(a));
		segpool_cache_free(c, a);
		b = segpool_cache_alloc(c, 0);
		assert_true(sp_guard_owns(b));
		assert_ptr_not_equal(a, b);
		segpool_cache_free(c, b);
	}
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* A fault outside the pool is the previous action's: the default kills. */
static void plant_null_write(void *arg)
{
	signal(SIGSEGV, SIG_DFL);
	assert_int_equal(sp_guard_fault_install(), 0);	/* in front of it */
	*(volatile int *)(uintptr_t)arg = 1;
}

static void on_segv_exit(int sig)
{
	(void)sig;
	_exit(42);
}

/* ... and a handler that was there before ours is called. */
static void plant_null_write_handled(void *arg)
{
	signal(SIGSEGV, on_segv_exit);
	assert_int_equal(sp_guard_fault_install(), 0);
	*(volatile int *)(uintptr_t)arg = 1;
}

static void guard_chain(void)
{
	char buf[1024];
	int status;

	assert_int_equal(sp_test_run_child(plant_null_write, NULL, buf,
					   sizeof(buf), &status), 0);
	if (SP_ASAN) {
		/* ASan keeps SIGSEGV for its own handler: it reports, exits */
		assert_true(WIFSIGNALED(status) ||
			    (WIFEXITED(status) && WEXITSTATUS(status)));
	} else {
		assert_true(WIFSIGNALED(status));
		assert_int_equal(WTERMSIG(status), SIGSEGV);
	}
	assert_null(strstr(buf, "BUG"));
	/* ASan: the program's handler never gets in front; memcheck: the
	 * write is an error of the child, whose exit status it takes */
	if (SP_ASAN || sp_test_under_valgrind())
		return;
	assert_int_equal(sp_test_run_child(plant_null_write_handled, NULL, buf,
					   sizeof(buf), &status), 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 42);
	assert_null(strstr(buf, "BUG"));
}

static void test_guard_child(void **state)
{
	(void)state;
	if (!in_child())
		skip();
	assert_true(sp_guard_rate == 1);
	/*
	 * cmocka installs a SIGSEGV handler of its own around each test,
	 * after ours: put ours in front again (it chains to cmocka's), as a
	 * program that takes SIGSEGV after start-up must chain to ours.
	 */
	assert_int_equal(sp_guard_fault_install(), 0);
	guard_calls();
	guard_rcu();
	guard_exhaustion();
	/* memcheck reports the access itself, as an error of this run */
	if (!sp_test_under_valgrind())
		guard_continue();
	guard_reports();
	guard_stacks();
	guard_chain();
}

/* The parent: the pool is off by default, and the child passes. */
static void test_guard(void **state)
{
	(void)state;
	if (sp_test_variant())
		skip();
	if (SP_TSAN)
		skip();	/* ThreadSanitizer takes SIGSEGV for its own */
	assert_int_equal(sp_guard_rate, 0);
	{
		void *p = segpool_malloc(64);

		assert_false(sp_guard_owns(p));
		segpool_free(p);
	}
	assert_int_equal(sp_test_rerun(env_guard, "test_guard_child"), 0);
}

static void test_guard_bad_child(void **state)
{
	void *p;

	(void)state;
	if (!sp_test_variant() || strcmp(sp_test_variant(), "guard_bad"))
		skip();
	/* nothing changes: no pool, normal objects */
	assert_int_equal(sp_guard_rate, 0);
	assert_int_equal(sp_guard_range.size, 0);
	p = segpool_malloc(64);
	assert_false(sp_guard_owns(p));
	segpool_free(p);
}

/* Bad rates and slot counts: one message naming the setting, no pool. */
static void test_guard_bad_values(void **state)
{
	static const char *const bad[] = {
		"SEGPOOL_GUARD_SAMPLE=0", "SEGPOOL_GUARD_SAMPLE=lots",
		"SEGPOOL_GUARD_SAMPLE=-5", "SEGPOOL_GUARD_SAMPLE=2000000000",
	};
	char buf[4096];

	(void)state;
	if (sp_test_variant())
		skip();
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *env[] = { bad[i],
				      "SEGPOOL_TEST_VARIANT=guard_bad", NULL };
		struct sp_test_exec x = {
			.arg = "test_guard_bad_child",
			.drop_prefix = "SEGPOOL_", .env = env, .timeout = 60,
		};
		int status;

		assert_int_equal(sp_test_exec_self(&x, buf, sizeof(buf),
						   &status), 0);
		print_message("%s: %s", bad[i], buf);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		assert_non_null(strstr(buf, "SEGPOOL_GUARD_SAMPLE"));
		assert_non_null(strstr(buf, "no guarded objects"));
	}
	{
		const char *env[] = { "SEGPOOL_GUARD_SLOTS=0",
				      "SEGPOOL_TEST_VARIANT=guard_bad", NULL };
		struct sp_test_exec x = {
			.arg = "test_guard_bad_child",
			.drop_prefix = "SEGPOOL_", .env = env, .timeout = 60,
		};
		int status;

		assert_int_equal(sp_test_exec_self(&x, buf, sizeof(buf),
						   &status), 0);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		assert_non_null(strstr(buf, "SEGPOOL_GUARD_SLOTS"));
	}
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_guard),
	cmocka_unit_test(test_guard_child),
	cmocka_unit_test(test_guard_bad_values),
	cmocka_unit_test(test_guard_bad_child),
};

SP_TEST_MAIN(tests)
