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

/*
 * Variants: a setting fixed for the life of a process (an environment
 * variable the library reads once at start-up, a glibc tunable) is tested by
 * running the program again under it.  A program ends with
 *	SP_TEST_MAIN_VARIANTS(tests, variants)
 * instead of SP_TEST_MAIN.  Run by hand, it runs one cmocka test per
 * variant, named after it, and nothing else: that test runs the program
 * again (sp_test_rerun()) with the variant's environment changes,
 * SEGPOOL_TEST_VARIANT=<name> and the same filter, and passes when the child
 * exits 0 (skips when it exits SP_TEST_SKIP_STATUS).  In the child,
 * SEGPOOL_TEST_VARIANT is set and @tests run as under SP_TEST_MAIN;
 * sp_test_variant() tells them where they are.  One variant can be run
 * directly by setting what its entry sets; in selftests/test_percpu:
 *	SEGPOOL_TEST_VARIANT=runs_in_mode_lock SEGPOOL_PERCPU=lock ./test_percpu
 */
struct sp_test_variant {
	const char *name;		/* the parent's test name */
	const char *const *env;		/* "NAME=value" sets, "NAME" unsets;
					 * NULL-terminated (or NULL) */
};

int sp_test_run_variants(const char *group, const struct CMUnitTest *tests,
			 size_t n, const struct sp_test_variant *variants,
			 size_t nvariants, int argc, char **argv);

#define SP_TEST_MAIN_VARIANTS(tests, variants)				\
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
 * sp_test_rerun() - run this program again in a child process and wait.
 * @env: environment changes as in struct sp_test_variant (may be NULL).
 * @arg: the child's argv[1] (a test filter), or NULL for none.
 *
 * The child runs the same executable file (/proc/self/exe: a rebuild in the
 * meantime does not matter) and inherits stdout and stderr.  Under valgrind
 * it runs under valgrind too (a child of valgrind would run natively):
 * with the command in SEGPOOL_TEST_WRAPPER when that names valgrind (the
 * variable run-selftests.sh reads, when exported), else with
 * "valgrind -q --error-exitcode=99"; with --trace-children=yes in that
 * command valgrind follows the exec by itself.
 *
 * Context: only the calling thread forks and waits; others may run.
 * Return: the child's exit status, 128 + the signal that killed it, or -1
 * (errno set) when it could not be started.
 */
int sp_test_rerun(const char *const *env, const char *arg);

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
