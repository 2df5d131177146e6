/* SPDX-License-Identifier: MIT */
/*
 * selftests/lib/child.h - child processes of a selftest: a function run in
 * a forked child (death tests), and this program run again under other
 * settings (a fresh process reads its environment at start-up).
 *
 * A forked child and a child that expects to die run under an alarm: a
 * hang dies of SIGALRM and fails the test instead of blocking the run.
 * Included by harness.h.
 */
#ifndef SP_SELFTESTS_LIB_CHILD_H
#define SP_SELFTESTS_LIB_CHILD_H

#include <stdbool.h>
#include <stddef.h>

/*
 * sp_test_child_no_leak_search() - under valgrind, turn memcheck's leak
 * search at exit off in this process: sp_test_run() makes it the child
 * handler of every fork() of a selftest (pthread_atfork).  A forked
 * child holds every block of its parent, which the parent's own search at
 * its exit covers, and a death test's child dies on purpose halfway
 * through its work; the search reads all readable memory of the address
 * space, the library's page map among it: 12 of the 13 s a death test
 * took in CI's valgrind step.  Memory errors are still found and reported
 * in the child; a program started again (sp_test_exec_self()) keeps its
 * search.  Nothing outside valgrind.
 */
void sp_test_child_no_leak_search(void);

/*
 * sp_test_run_child() - run @fn(@arg) in a forked child with SIGABRT at its
 * default action; its stderr (cut to @size - 1 bytes) into @buf, its wait
 * status into *@status.  The child dies of SIGALRM after
 * SP_TEST_CHILD_TIMEOUT seconds.
 * Return: 0, or -1 when pipe or fork failed.
 */
#define SP_TEST_CHILD_TIMEOUT	60
int sp_test_run_child(void (*fn)(void *), void *arg, char *buf, size_t size,
		      int *status);

/*
 * sp_test_expect_death() - run @fn(@arg) in a forked child and check that it
 * aborts (SIGABRT) and that its stderr contains @needle.  Returns true when
 * both hold; prints what was seen otherwise.
 */
bool sp_test_expect_death(void (*fn)(void *), void *arg, const char *needle);

/*
 * How sp_test_exec_self() starts this program again.  Environment changes
 * are "NAME=value" (set) or "NAME" (unset) strings, NULL-terminated.
 */
struct sp_test_exec {
	const char *const *wrapper;	/* words run before the program (the
					 * first found in PATH), or NULL */
	const char *arg;		/* the child's argv[1] (a test filter),
					 * or NULL */
	const char *drop_prefix;	/* variables named so are dropped from
					 * the inherited environment, or NULL */
	const char *const *env;		/* changes applied after the drop */
	unsigned long as_limit;		/* soft RLIMIT_AS in bytes; 0: as is */
	unsigned int timeout;		/* seconds before SIGALRM; 0: none */
	bool follow_valgrind;		/* under valgrind, run the child under
					 * valgrind too (else: natively) */
};

/*
 * sp_test_exec_self() - run this program's file again as @x says and wait.
 * @buf: when not NULL, receives the child's stderr (cut to @size - 1
 *	 bytes); when NULL the child shares this process's stdout and stderr.
 * @status: the child's wait status.
 *
 * Under valgrind /proc/self/exe is valgrind's client, this program: with
 * @x->follow_valgrind (and no @x->wrapper) the child runs under the command
 * of SEGPOOL_TEST_WRAPPER when that names valgrind, else under
 * "valgrind -q --error-exitcode=99"; with --trace-children=yes in that
 * command valgrind follows the exec by itself.
 *
 * Context: only the calling thread forks and waits; others may run.
 * Return: 0, or -1 (errno set) when the child could not be started.
 */
int sp_test_exec_self(const struct sp_test_exec *x, char *buf, size_t size,
		      int *status);

/*
 * sp_test_rerun() - run this program again with environment changes @env
 * (NULL: none) and @arg as its argv[1] (NULL: none), sharing stdout and
 * stderr, under valgrind when this run is (sp_test_exec_self()).  No alarm:
 * the child is bounded by the runner's limit on the whole program.
 * Return: the child's exit status, 128 + the signal that killed it, or -1
 * (errno set) when it could not be started.
 */
int sp_test_rerun(const char *const *env, const char *arg);

#endif /* SP_SELFTESTS_LIB_CHILD_H */
