// SPDX-License-Identifier: MIT
/*
 * selftests/unit/test_runner.c - scripts/run-selftests.sh, the runner of `make
 * check`, on made-up tests: a "[k/N] name" line as each starts (before its
 * output), the TAP results by exit status, the summary of the slowest, a
 * program's variants as entries of their own, a test whose tool is
 * missing reported skipped, and entries run at once (SEGPOOL_TEST_JOBS)
 * printed in their order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "selftests/lib/harness.h"

#ifndef SEGPOOL_SRCTREE
#define SEGPOOL_SRCTREE "."
#endif

static void write_script(const char *dir, const char *name, const char *body)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\n%s\n", body);
	fclose(f);
	assert_int_equal(chmod(path, 0755), 0);
}

static const char *after(const char *text, const char *from, const char *s)
{
	const char *p = strstr(from ? from : text, s);

	if (!p)
		fail_msg("no \"%s\" in the runner's output:\n%s", s, text);
	return p + strlen(s);
}

/* after() for each string of the NULL-ended @seq in turn, in that order. */
static const char *after_each(const char *text, const char *const *seq)
{
	const char *p = NULL;

	while (*seq)
		p = after(text, p, *seq++);
	return p;
}

/*
 * Run the runner in @dir on @tests, the settings @env before it, and keep
 * its output (and, last, "status=N", its exit status); the scripts and
 * @dir go.
 */
static void run_runner(char *dir, const char *env, const char *tests,
		       char *out, size_t cap)
{
	char cmd[1024];
	FILE *f;
	size_t len;
	int status;

	/* the settings of the run this test is in (a valgrind wrapper, a
	 * timeout) stay out: they would change the made-up tests' times */
	snprintf(cmd, sizeof(cmd), "cd %s && env -u SEGPOOL_TEST_WRAPPER "
		 "-u SEGPOOL_TEST_TIMEOUT -u SEGPOOL_TEST_EXCLUDE_WHY "
		 "-u SEGPOOL_TEST_MISSING SEGPOOL_TEST_EXCLUDE= %s "
		 "%s/scripts/run-selftests.sh %s 2>&1; echo status=$?; "
		 "rm -f t_* *.started", dir, env, SEGPOOL_SRCTREE, tests);
	f = popen(cmd, "r");
	assert_non_null(f);
	len = fread(out, 1, cap - 1, f);
	out[len] = '\0';
	status = pclose(f);
	rmdir(dir);
	assert_true(WIFEXITED(status));
}

/*
 * The "# slowest:" list at @p names t_slow, t_skip and t_fail, each with
 * its time, longest first; t_slow (which sleeps 0.3 s) took at least that.
 * Which of the three came first is the machine's business, not the test's.
 */
static void check_slowest(const char *p)
{
	double t, prev = 1e9, slow = -1;
	char name[16];
	int n, seen = 0;

	while (sscanf(p, " %15[a-z_] %lfs%n", name, &t, &n) == 2) {
		assert_true(t <= prev);
		prev = t;
		if (!strcmp(name, "t_slow"))
			slow = t;
		seen++;
		p += n;
		if (*p != ',')
			break;
		p++;
	}
	assert_int_equal(seen, 3);
	assert_true(slow >= 0.3);
}

static void test_progress_lines(void **state)
{
	char dir[] = "/tmp/segpool-runner.XXXXXX";
	char out[1 << 14];
	const char *p;

	(void)state;
	assert_non_null(mkdtemp(dir));
	write_script(dir, "t_slow", "sleep 0.3; echo slow-output");
	write_script(dir, "t_skip", "exit 4");
	write_script(dir, "t_fail", "echo fail-output; exit 1");
	run_runner(dir, "SEGPOOL_TEST_JOBS=1", "./t_slow ./t_skip ./t_fail",
		   out, sizeof(out));

	/* each test announced as it starts, before its output and result */
	p = after_each(out, (const char *const[]){
		"1..3\n",
		"# [1/3] t_slow\n", "# slow-output\n", "ok 1 t_slow\n",
		"# [2/3] t_skip\n", "ok 2 t_skip # SKIP\n",
		"# [3/3] t_fail\n", "# fail-output\n", "not ok 3 t_fail\n",
		"# slowest: ", NULL });
	check_slowest(p);
	after(out, p, "1 passed, 1 failed\n");
}

/*
 * A program with variants (one that holds the marker of
 * SP_TEST_MAIN_VARIANTS): the runner lists them with --list-variants and
 * runs it once per variant, each with its environment and its own TAP line;
 * SEGPOOL_TEST_MISSING turns a test into a skip without running it.
 */
static void test_variant_lines(void **state)
{
	char dir[] = "/tmp/segpool-runner.XXXXXX";
	char body[1024], out[1 << 14];
	const char *p;

	(void)state;
	assert_non_null(mkdtemp(dir));
	/* the marker pieced together, so this program does not hold it */
	snprintf(body, sizeof(body),
		 "# %s%s\n"
		 "if [ \"$1\" = --list-variants ]; then\n"
		 "  echo 'a=1 V=one'; echo 'b -u GONE V=two'; exit 0\n"
		 "fi\n"
		 "echo \"in $SEGPOOL_TEST_VARIANT V=$V GONE=${GONE-unset}\"\n"
		 "[ \"$SEGPOOL_TEST_VARIANT\" = a=1 ]",
		 "SEGPOOL_SELFTEST_", "HAS_VARIANTS");
	write_script(dir, "t_var", body);
	write_script(dir, "t_none", "echo must-not-run; exit 1");
	run_runner(dir, "GONE=here SEGPOOL_TEST_JOBS=1 "
		   "SEGPOOL_TEST_MISSING='t_none=sometool'", "./t_var ./t_none",
		   out, sizeof(out));
	p = after_each(out, (const char *const[]){
		"1..3\n",
		"# [1/3] t_var [a=1]\n", "# in a=1 V=one GONE=here\n",
		"ok 1 t_var [a=1]\n",
		"# [2/3] t_var [b]\n", "# in b V=two GONE=unset\n",
		"not ok 2 t_var [b]\n",
		"ok 3 t_none # SKIP sometool not installed\n", NULL });
	assert_null(strstr(out, "must-not-run"));
	after(out, p, "1 passed, 1 failed\n");
}

/*
 * A test @name that marks itself started (@me.started), waits up to 10 s
 * for @other to be, fails if it never is, and then runs @then.
 */
static void write_meeting(const char *dir, const char *name, const char *me,
			  const char *other, const char *then)
{
	char body[512];

	snprintf(body, sizeof(body),
		 "touch %s.started; i=0\n"
		 "while [ ! -e %s.started ] && [ $i -lt 200 ]; do\n"
		 "  sleep 0.05; i=$((i + 1))\n"
		 "done\n"
		 "[ -e %s.started ] || exit 1\n%s", me, other, other, then);
	write_script(dir, name, body);
}

/*
 * SEGPOOL_TEST_JOBS=2: two tests that each wait for the other to have
 * started (a file each; they give up after 10 s) both pass, so they ran at
 * once; the first ends last, yet every block comes whole and in the
 * entries' order, the failed ones named in that order too.
 */
static void test_parallel_entries(void **state)
{
	char dir[] = "/tmp/segpool-runner.XXXXXX";
	char out[1 << 14];

	(void)state;
	assert_non_null(mkdtemp(dir));
	write_meeting(dir, "t_a", "a", "b", "sleep 0.3; echo a-output; exit 1");
	write_meeting(dir, "t_b", "b", "a", "echo b-output");
	write_script(dir, "t_c", "echo c-output; exit 1");
	run_runner(dir, "SEGPOOL_TEST_JOBS=2", "./t_a ./t_b ./t_c", out,
		   sizeof(out));
	after_each(out, (const char *const[]){
		"1..3\n", "# 2 entries at a time (SEGPOOL_TEST_JOBS)\n",
		"# [1/3] t_a\n", "# a-output\n", "not ok 1 t_a\n",
		"# [2/3] t_b\n", "# b-output\n", "ok 2 t_b\n",
		"# [3/3] t_c\n", "# c-output\n", "not ok 3 t_c\n",
		"# failed: t_a t_c\n", "1 passed, 2 failed\n", NULL });
}

/* A number of jobs that is not one: a usage error, nothing run. */
static void test_jobs_setting(void **state)
{
	char dir[] = "/tmp/segpool-runner.XXXXXX";
	char out[1 << 12];

	(void)state;
	assert_non_null(mkdtemp(dir));
	write_script(dir, "t_x", "echo must-not-run");
	run_runner(dir, "SEGPOOL_TEST_JOBS=0", "./t_x", out, sizeof(out));
	after(out, NULL, "SEGPOOL_TEST_JOBS must be a number of entries of "
		  "at least 1, not '0'");
	after(out, NULL, "status=2\n");
	assert_null(strstr(out, "must-not-run"));
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_progress_lines),
	cmocka_unit_test(test_variant_lines),
	cmocka_unit_test(test_parallel_entries),
	cmocka_unit_test(test_jobs_setting),
};

SP_TEST_MAIN(tests)
