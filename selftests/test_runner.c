// SPDX-License-Identifier: MIT
/*
 * selftests/test_runner.c - scripts/run-selftests.sh, the runner of `make
 * check`, on made-up tests: a "[k/N] name" line as each starts (before its
 * output), the TAP results by exit status, and the summary of the slowest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "selftests/harness.h"

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

static void test_progress_lines(void **state)
{
	char dir[] = "/tmp/segpool-runner.XXXXXX";
	char cmd[1024], out[1 << 14];
	const char *p;
	size_t len;
	FILE *f;
	int status;

	(void)state;
	assert_non_null(mkdtemp(dir));
	write_script(dir, "t_slow", "sleep 0.3; echo slow-output");
	write_script(dir, "t_skip", "exit 4");
	write_script(dir, "t_fail", "echo fail-output; exit 1");
	snprintf(cmd, sizeof(cmd), "cd %s && SEGPOOL_TEST_EXCLUDE= "
		 "%s/scripts/run-selftests.sh ./t_slow ./t_skip ./t_fail 2>&1; "
		 "rm -f t_slow t_skip t_fail", dir, SEGPOOL_SRCTREE);
	f = popen(cmd, "r");
	assert_non_null(f);
	len = fread(out, 1, sizeof(out) - 1, f);
	out[len] = '\0';
	status = pclose(f);
	rmdir(dir);
	assert_true(WIFEXITED(status));

	/* each test announced as it starts, before its output and result */
	p = after(out, NULL, "1..3\n");
	p = after(out, p, "# [1/3] t_slow\n");
	p = after(out, p, "# slow-output\n");
	p = after(out, p, "ok 1 t_slow\n");
	p = after(out, p, "# [2/3] t_skip\n");
	p = after(out, p, "ok 2 t_skip # SKIP\n");
	p = after(out, p, "# [3/3] t_fail\n");
	p = after(out, p, "# fail-output\n");
	p = after(out, p, "not ok 3 t_fail\n");
	/* the slowest first, with its time */
	p = after(out, p, "# slowest: t_slow ");
	assert_true(strstr(p, "t_skip") && strstr(p, "t_fail"));
	after(out, p, "1 passed, 1 failed\n");
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_progress_lines),
};

SP_TEST_MAIN(tests)
