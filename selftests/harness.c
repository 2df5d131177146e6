// SPDX-License-Identifier: MIT
/*
 * selftests/harness.c - the shared main(), seed, RSS and death-test helpers.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "selftests/harness.h"

#define SP_TEST_DEFAULT_SEED 0x5e69001ULL

static uint64_t sp_seed;
static pthread_once_t sp_seed_once = PTHREAD_ONCE_INIT;

static void sp_seed_init(void)
{
	const char *s = getenv("SEGPOOL_TEST_SEED");

	sp_seed = s ? strtoull(s, NULL, 0) : SP_TEST_DEFAULT_SEED;
	if (!sp_seed)
		sp_seed = SP_TEST_DEFAULT_SEED;
	printf("# seed: %#" PRIx64 " (set SEGPOOL_TEST_SEED to repeat)\n",
	       sp_seed);
	fflush(stdout);
}

/* Worker threads of a test may be the first to ask: initialise once. */
uint64_t sp_test_seed(void)
{
	pthread_once(&sp_seed_once, sp_seed_init);
	return sp_seed;
}

size_t sp_test_rss(void)
{
	unsigned long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &resident) != 2)
		resident = 0;
	fclose(f);
	return resident * (size_t)sysconf(_SC_PAGESIZE);
}

bool sp_test_under_valgrind(void)
{
	const char *p = getenv("LD_PRELOAD");

	return p && (strstr(p, "vgpreload") || strstr(p, "valgrind"));
}

bool sp_test_expect_death(void (*fn)(void *), void *arg, const char *needle)
{
	char buf[4096];
	size_t len = 0;
	int fds[2], status;
	pid_t pid;
	ssize_t r;

	fflush(stdout);
	fflush(stderr);
	if (pipe(fds))
		return false;
	pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		struct sigaction sa = { .sa_handler = SIG_DFL };

		sigaction(SIGABRT, &sa, NULL);
		dup2(fds[1], STDERR_FILENO);
		close(fds[0]);
		close(fds[1]);
		fn(arg);
		_exit(0);	/* did not die: the parent reports it */
	}
	close(fds[1]);
	while (len < sizeof(buf) - 1 &&
	       (r = read(fds[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)r;
	buf[len] = '\0';
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT) {
		printf("# child did not abort (status %#x); stderr: %s\n",
		       status, buf);
		return false;
	}
	if (!strstr(buf, needle)) {
		printf("# child aborted but stderr lacks \"%s\": %s\n",
		       needle, buf);
		return false;
	}
	return true;
}

int sp_test_run(const char *group, const struct CMUnitTest *tests,
		size_t n, int argc, char **argv)
{
	const char *filter = argc > 1 ? argv[1] : getenv("SEGPOOL_TEST_FILTER");
	const char *base = strrchr(group, '/');

	base = base ? base + 1 : group;
	if (filter && *filter)
		cmocka_set_test_filter(filter);
	/*
	 * cmocka returns the number of failed tests: as an exit status, 4 of
	 * them would read as SP_TEST_SKIP_STATUS and 256 as success.
	 */
	return _cmocka_run_group_tests(base, tests, n, NULL, NULL) ? 1 : 0;
}
