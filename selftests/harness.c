// SPDX-License-Identifier: MIT
/*
 * selftests/harness.c - the shared main(), seed, RSS and death-test helpers,
 * load scaling, CPU pinning, cache and fault-point helpers, and the re-run
 * of a program under variants of its environment.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "segpool_config.h"
#include "os/faultpoint.h"
#include "selftests/harness.h"

#define SP_TEST_DEFAULT_SEED 0x5e69001ULL

#ifdef CONFIG_SEGPOOL_TSAN
/*
 * liburcu is not instrumented: the hand-overs between its threads (the
 * call_rcu queue, rcu_barrier()'s completion) are invisible to
 * ThreadSanitizer, which would report liburcu's own malloc and free as
 * races; and a child of a threaded parent that used call_rcu() starts a
 * new call_rcu worker (Documentation/internals/rcu.md, "ThreadSanitizer").
 * TSAN_OPTIONS from the environment still applies on top of these.
 */
__attribute__((visibility("default"))) const char *__tsan_default_options(void);
__attribute__((visibility("default"))) const char *__tsan_default_options(void)
{
	return "ignore_noninstrumented_modules=1:die_after_fork=0";
}
#endif

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

/* --- loads ---------------------------------------------------------------- */

double sp_test_load_scale(void)
{
	const char *s = getenv("SEGPOOL_TEST_SCALE");

	if (s && *s) {
		double v = strtod(s, NULL);

		if (v > 0)
			return v;
	}
	if (sp_test_under_valgrind())
		return 0.02;
#if defined(CONFIG_SEGPOOL_TSAN)
	return 0.2;
#elif defined(CONFIG_SEGPOOL_ASAN)
	return 0.5;
#else
	return 1.0;
#endif
}

unsigned long sp_test_scaled(unsigned long n, unsigned long min)
{
	double v = (double)n * sp_test_load_scale();

	return v < (double)min ? min : (unsigned long)v;
}

/* --- CPUs ----------------------------------------------------------------- */

static cpu_set_t sp_start_cpus;
static int sp_nr_start_cpus;

/* Before main(): no test has pinned anything yet. */
__attribute__((constructor)) static void sp_save_start_cpus(void)
{
	if (sched_getaffinity(0, sizeof(sp_start_cpus), &sp_start_cpus)) {
		CPU_ZERO(&sp_start_cpus);
		CPU_SET(0, &sp_start_cpus);
	}
	sp_nr_start_cpus = CPU_COUNT(&sp_start_cpus);
}

int sp_test_nr_cpus(void)
{
	return sp_nr_start_cpus;
}

int sp_test_allowed_cpu(unsigned int k)
{
	k %= (unsigned int)sp_nr_start_cpus;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &sp_start_cpus) && k-- == 0)
			return cpu;
	return 0;	/* not reached: the set has sp_nr_start_cpus CPUs */
}

int sp_test_pin(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
}

void sp_test_unpin(void)
{
	pthread_setaffinity_np(pthread_self(), sizeof(sp_start_cpus),
			       &sp_start_cpus);
}

/* --- caches --------------------------------------------------------------- */

struct segpool_cache_info sp_test_info(struct segpool_cache *c)
{
	struct segpool_cache_info info;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	assert_int_equal(segpool_cache_get_info(c, &info), 0);
	return info;
}

bool sp_test_all_bytes(const void *p, unsigned char b, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		if (c[i] != b)
			return false;
	return true;
}

/* --- patterns ------------------------------------------------------------- */

/* The word at index @i of @tag's pattern. */
static uint64_t sp_pattern_word(uint64_t tag, size_t i)
{
	uint64_t x = (tag + 0x51) * 0x9e3779b97f4a7c15ULL ^
		     (i + 1) * 0xbf58476d1ce4e5b9ULL;

	return x ^ (x >> 31);
}

/* Index of the first byte in which @a and @b (@n bytes) differ, or @n. */
static size_t sp_first_diff(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;
	size_t i = 0;

	while (i < n && x[i] == y[i])
		i++;
	return i;
}

void sp_test_pattern_fill(void *p, size_t size, uint64_t tag)
{
	unsigned char *b = p;
	size_t i, words = size / 8;
	uint64_t w;

	for (i = 0; i < words; i++) {
		w = sp_pattern_word(tag, i);
		memcpy(b + 8 * i, &w, 8);
	}
	if (size % 8) {
		w = sp_pattern_word(tag, words);
		memcpy(b + 8 * words, &w, size % 8);
	}
}

size_t sp_test_pattern_check(const void *p, size_t size, uint64_t tag)
{
	const unsigned char *b = p;
	size_t i, words = size / 8;
	uint64_t w, v;

	for (i = 0; i < words; i++) {
		w = sp_pattern_word(tag, i);
		memcpy(&v, b + 8 * i, 8);
		if (v != w)
			return 8 * i + sp_first_diff(&v, &w, 8);
	}
	w = sp_pattern_word(tag, words);
	return 8 * words + sp_first_diff(b + 8 * words, &w, size % 8);
}

/* --- fault points --------------------------------------------------------- */

void sp_test_disarm_faults(void)
{
	for (int p = 0; p < SP_FAULT_NR; p++)
		sp_fault_arm((enum sp_fault_point)p, 0, 0);
}

int sp_test_faults_teardown(void **state)
{
	(void)state;
	sp_test_disarm_faults();
	return 0;
}

int sp_test_filler_fill(struct sp_test_filler *f, const char *name,
			size_t size)
{
	memset(f, 0, sizeof(*f));
	f->c = segpool_cache_create(name, size, 0, 0, NULL);
	assert_non_null(f->c);
	for (;;) {
		void *p;

		if (f->n == f->cap) {
			f->cap = f->cap ? 2 * f->cap : 4096;
			f->objs = realloc(f->objs, f->cap * sizeof(*f->objs));
			assert_non_null(f->objs);
		}
		errno = 0;
		p = segpool_cache_alloc(f->c, 0);
		if (!p)
			return errno;
		f->objs[f->n++] = p;
		if (f->n * size > SP_TEST_FILLER_LIMIT) {
			sp_test_disarm_faults();
			fail_msg("%s: %zu objects and the fault never bit", name,
				 f->n);
		}
	}
}

void sp_test_filler_done(struct sp_test_filler *f)
{
	segpool_cache_free_bulk(f->c, f->n, f->objs);
	assert_int_equal(segpool_cache_destroy(f->c), 0);
	free(f->objs);
	memset(f, 0, sizeof(*f));
}

/* --- death tests ---------------------------------------------------------- */

int sp_test_run_child(void (*fn)(void *), void *arg, char *buf, size_t size,
		      int *status)
{
	size_t len = 0;
	int fds[2];
	pid_t pid;
	ssize_t r;

	fflush(stdout);
	fflush(stderr);
	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		struct sigaction sa = { .sa_handler = SIG_DFL };

		sigaction(SIGABRT, &sa, NULL);
		sigaction(SIGALRM, &sa, NULL);
		alarm(SP_TEST_CHILD_TIMEOUT);	/* a hang dies of SIGALRM */
		dup2(fds[1], STDERR_FILENO);
		close(fds[0]);
		close(fds[1]);
		fn(arg);
		_exit(0);	/* did not die: the parent reports it */
	}
	close(fds[1]);
	while (len < size - 1 &&
	       (r = read(fds[0], buf + len, size - 1 - len)) > 0)
		len += (size_t)r;
	buf[len] = '\0';
	close(fds[0]);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	return 0;
}

bool sp_test_expect_death(void (*fn)(void *), void *arg, const char *needle)
{
	char buf[4096];
	int status;

	if (sp_test_run_child(fn, arg, buf, sizeof(buf), &status))
		return false;
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

#ifdef CONFIG_SEGPOOL_TSAN
const char sp_test_percpu_rseq[] = "SEGPOOL_PERCPU";	/* unset: lock mode */
#else
const char sp_test_percpu_rseq[] = "SEGPOOL_PERCPU=rseq";
#endif

const char *const sp_test_env_percpu_rseq[] = {
	sp_test_percpu_rseq, "SEGPOOL_PERCPU_ID", NULL,
};
const char *const sp_test_env_percpu_lock[] = {
	"SEGPOOL_PERCPU=lock", "SEGPOOL_PERCPU_ID", NULL,
};
const char *const sp_test_env_percpu_off[] = {
	"SEGPOOL_PERCPU=off", "SEGPOOL_PERCPU_ID", NULL,
};

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
