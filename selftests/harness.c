// SPDX-License-Identifier: MIT
/*
 * selftests/harness.c - the shared main(), seed, RSS and death-test helpers,
 * and the re-run of a program under variants of its environment.
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

/* --- variants: the program run again under other settings ----------------- */

#define SP_TEST_VARIANT_ENV	"SEGPOOL_TEST_VARIANT"
#define SP_TEST_WRAP_WORDS	32

const char *sp_test_variant(void)
{
	const char *v = getenv(SP_TEST_VARIANT_ENV);

	return v && *v ? v : NULL;
}

/* Does environment entry @entry ("A=b") name the variable of @change
 * ("A=c" or "A")? */
static bool sp_env_same_name(const char *entry, const char *change)
{
	size_t len = strcspn(change, "=");

	return strncmp(entry, change, len) == 0 && entry[len] == '=';
}

static void sp_env_free(char **env, size_t kept)
{
	for (size_t i = kept; env[i]; i++)
		free(env[i]);
	free(env);
}

/*
 * environ with @changes applied: a calloc'd array holding first *@kept of
 * environ's strings, then copies of the settings of @changes (freed by
 * sp_env_free()).  NULL when out of memory.
 */
static char **sp_env_apply(const char *const *changes, size_t *kept)
{
	size_t n = 0, nc = 0, k = 0, i, j;
	char **out;

	while (environ[n])
		n++;
	while (changes && changes[nc])
		nc++;
	out = calloc(n + nc + 1, sizeof(*out));
	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		bool replaced = false;

		for (j = 0; j < nc && !replaced; j++)
			replaced = sp_env_same_name(environ[i], changes[j]);
		if (!replaced)
			out[k++] = environ[i];
	}
	*kept = k;
	for (j = 0; j < nc; j++) {
		if (!strchr(changes[j], '='))
			continue;
		out[k] = strdup(changes[j]);
		if (!out[k++]) {
			sp_env_free(out, *kept);
			return NULL;
		}
	}
	return out;
}

/*
 * The valgrind command line a child of a valgrind run starts with, split
 * into @words (pointing into @buf).  Returns the number of words; 0 when
 * valgrind follows children by itself.
 */
static size_t sp_valgrind_words(char *buf, size_t size, char **words,
				size_t max)
{
	const char *wrapper = getenv("SEGPOOL_TEST_WRAPPER");
	char *tok, *save = NULL;
	size_t n = 0;

	if (!wrapper || !strstr(wrapper, "valgrind"))
		wrapper = "valgrind -q --error-exitcode=99";
	snprintf(buf, size, "%s", wrapper);
	for (tok = strtok_r(buf, " \t\n", &save); tok && n < max;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		if (!strcmp(tok, "--trace-children=yes"))
			return 0;
		words[n++] = tok;
	}
	return n;
}

int sp_test_rerun(const char *const *env, const char *arg)
{
	char exe[4096], wrap[1024], *argcopy = NULL;
	char *args[SP_TEST_WRAP_WORDS + 3];
	size_t nargs = 0, kept;
	char **envp;
	ssize_t len;
	int status;
	pid_t pid;

	/* the program's name (valgrind shows its client's here, not itself) */
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0)
		return -1;
	exe[len] = '\0';
	if (sp_test_under_valgrind())
		nargs = sp_valgrind_words(wrap, sizeof(wrap), args,
					  SP_TEST_WRAP_WORDS);
	args[nargs++] = exe;
	if (arg) {
		argcopy = strdup(arg);
		if (!argcopy)
			return -1;
		args[nargs++] = argcopy;
	}
	args[nargs] = NULL;
	envp = sp_env_apply(env, &kept);
	if (!envp) {
		free(argcopy);
		return -1;
	}

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		sp_env_free(envp, kept);
		free(argcopy);
		return -1;
	}
	if (pid == 0) {
		/*
		 * Without a wrapper, run /proc/self/exe: the very file this
		 * process runs, even if a rebuild has replaced it meanwhile.
		 */
		execvpe(args[0] == exe ? "/proc/self/exe" : args[0], args, envp);
		fprintf(stderr, "# cannot run %s: %s\n", args[0], strerror(errno));
		_exit(127);
	}
	sp_env_free(envp, kept);
	free(argcopy);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -1;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

struct sp_variant_run {
	const struct sp_test_variant *variant;
	const char **env;		/* the variant's, and the marker */
	char *marker;			/* SEGPOOL_TEST_VARIANT=<name> */
	const char *filter;
};

static void sp_variant_test(void **state)
{
	const struct sp_variant_run *run = *state;
	int status = sp_test_rerun(run->env, run->filter);

	if (status == SP_TEST_SKIP_STATUS)
		skip();
	if (status < 0)
		fail_msg("variant %s: cannot run the program again: %s",
			 run->variant->name, strerror(errno));
	if (status != 0)
		fail_msg("variant %s: the child failed (%s %d)",
			 run->variant->name, status > 128 ? "signal" : "status",
			 status > 128 ? status - 128 : status);
}

int sp_test_run_variants(const char *group, const struct CMUnitTest *tests,
			 size_t n, const struct sp_test_variant *variants,
			 size_t nvariants, int argc, char **argv)
{
	const char *base = strrchr(group, '/');
	struct sp_variant_run *runs;
	struct CMUnitTest *units;
	size_t i, j, nenv;
	int failed = -1;

	/* in a child: the tests themselves */
	if (sp_test_variant())
		return sp_test_run(group, tests, n, argc, argv);

	base = base ? base + 1 : group;
	runs = calloc(nvariants, sizeof(*runs));
	units = calloc(nvariants, sizeof(*units));
	if (!runs || !units)
		goto out;
	for (i = 0; i < nvariants; i++) {
		const struct sp_test_variant *v = &variants[i];

		for (nenv = 0; v->env && v->env[nenv]; nenv++)
			;
		runs[i].env = calloc(nenv + 2, sizeof(char *));
		if (!runs[i].env ||
		    asprintf(&runs[i].marker, SP_TEST_VARIANT_ENV "=%s",
			     v->name) < 0) {
			runs[i].marker = NULL;
			goto out;
		}
		for (j = 0; j < nenv; j++)
			runs[i].env[j] = v->env[j];
		runs[i].env[nenv] = runs[i].marker;
		runs[i].variant = v;
		runs[i].filter = argc > 1 ? argv[1] : NULL;
		units[i].name = v->name;
		units[i].test_func = sp_variant_test;
		units[i].initial_state = &runs[i];
	}
	/* the filter is the children's: every variant runs here */
	failed = _cmocka_run_group_tests(base, units, nvariants, NULL, NULL);
out:
	for (i = 0; runs && i < nvariants; i++) {
		free(runs[i].marker);
		free(runs[i].env);
	}
	free(runs);
	free(units);
	if (failed < 0)
		fprintf(stderr, "# %s: out of memory setting up variants\n", base);
	return failed ? 1 : 0;
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
