/* SPDX-License-Identifier: MIT */
/*
 * selftests/harness.h - what every segpool selftest shares.
 *
 * Each test program defines its cmocka tests and ends with
 *	SP_TEST_MAIN(tests)
 * which gives it a main() that accepts an optional glob pattern
 * (argv[1], or SEGPOOL_TEST_FILTER) selecting the tests to run.
 *
 * Random tests take their seed from sp_test_seed(): SEGPOOL_TEST_SEED when
 * set, a fixed default otherwise; the seed is printed so a run can be
 * repeated exactly.
 */
#ifndef SP_SELFTESTS_HARNESS_H
#define SP_SELFTESTS_HARNESS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <cmocka.h>

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
 * sp_test_expect_death() - run @fn(@arg) in a forked child and check that it
 * aborts (SIGABRT) and that its stderr contains @needle.  Returns true when
 * both hold; prints what was seen otherwise.
 */
bool sp_test_expect_death(void (*fn)(void *), void *arg, const char *needle);

#endif /* SP_SELFTESTS_HARNESS_H */
