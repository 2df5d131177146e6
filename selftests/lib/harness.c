// SPDX-License-Identifier: MIT
/*
 * selftests/lib/harness.c - the shared main(), seed, RSS, load scaling, CPU
 * pinning, cache and fault-point helpers, and the variants of a program
 * (listed for the runner, checked against the environment it was given).
 * Child processes are selftests/lib/child.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "segpool_config.h"
#include "internal/compiler.h"
#include "core/core.h"
#include "internal/init.h"
#include "os/faultpoint.h"
#include "slab/slab.h"
#include "selftests/lib/harness.h"

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

void sp_test_batches(struct segpool_cache *c, void **objs, size_t n,
		     unsigned int rounds)
{
	for (unsigned int r = 0; r < rounds; r++) {
		for (size_t i = 0; i < n; i++)
			assert_non_null(objs[i] = segpool_cache_alloc(c, 0));
		for (size_t i = 0; i < n; i++)
			segpool_cache_free(c, objs[i]);
	}
}

struct segpool_cache *sp_test_linked_cache(const char *name, size_t size,
					   unsigned long flags,
					   void (*ctor)(void *))
{
	struct segpool_cache *c;

	assert_int_equal(sp_init(), 0);
	c = sp_cache_create_full(name, size, 0, flags | SP_CACHE_LINKED, ctor);
	assert_non_null(c);
	assert_false(c->flags & SP_CACHE_FREEMAP);
	return c;
}

unsigned int sp_test_make_size_classes(void)
{
	unsigned int n = 0;

	/* every multiple of 8 up to the largest class, in both spellings */
	for (size_t sz = 8; sz <= SEGPOOL_KMALLOC_MAX_CACHE_SIZE; sz += 8) {
		char name[32];

		snprintf(name, sizeof(name), "kmalloc-%zu", sz);
		if (segpool_cache_find(name)) {
			n++;
			continue;
		}
		assert_int_equal(errno, ENOENT);
		if (sz % 1024)
			continue;
		snprintf(name, sizeof(name), "kmalloc-%zuk", sz >> 10);
		if (segpool_cache_find(name))
			n++;
		else
			assert_int_equal(errno, ENOENT);
	}
	return n;
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
			fail_msg("%s: %zu objects and the fault never bit",
				 name, f->n);
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

/* --- variants: one run per setting, each started by the runner ------------ */

#define SP_TEST_VARIANT_ENV	"SEGPOOL_TEST_VARIANT"

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

/*
 * @v's environment as env(1) arguments, each after a space, to @f: first
 * "-u A" for each variable it unsets (env takes options before settings),
 * then "A=b" for each it sets.
 */
static void sp_variant_print_env(FILE *f, const struct sp_test_variant *v)
{
	for (const char *const *e = v->env; e && *e; e++)
		if (!strchr(*e, '='))
			fprintf(f, " -u %s", *e);
	for (const char *const *e = v->env; e && *e; e++)
		if (strchr(*e, '='))
			fprintf(f, " %s", *e);
}

/*
 * Does this process run in the environment of @v?  Each "A=b" of it must be
 * set to that value and each "A" unset.
 */
static bool sp_variant_env_holds(const struct sp_test_variant *v)
{
	for (const char *const *e = v->env; e && *e; e++) {
		size_t len = strcspn(*e, "=");
		char name[128];
		const char *now;

		snprintf(name, sizeof(name), "%.*s", (int)len, *e);
		now = getenv(name);
		if ((*e)[len] == '=' ? !now || strcmp(now, *e + len + 1) :
				       !!now)
			return false;
	}
	return true;
}

/* How to run each variant of @prog, to stderr. */
static void sp_variants_usage(const char *prog,
			      const struct sp_test_variant *variants,
			      size_t nvariants)
{
	fprintf(stderr, "# %s runs once per variant, each in its own process;"
		" scripts/run-selftests.sh %s runs them all, one by one:\n",
		prog, prog);
	for (size_t i = 0; i < nvariants; i++) {
		fprintf(stderr, "#   env");
		sp_variant_print_env(stderr, &variants[i]);
		fprintf(stderr, " " SP_TEST_VARIANT_ENV "=%s %s\n",
			variants[i].name, prog);
	}
}

int sp_test_run_variants(const char *group, const struct CMUnitTest *tests,
			 size_t n, const struct sp_test_variant *variants,
			 size_t nvariants, int argc, char **argv)
{
	const char *want = sp_test_variant();
	const char *prog = argc > 0 ? argv[0] : "test";

	if (argc > 1 && !strcmp(argv[1], "--list-variants")) {
		for (size_t i = 0; i < nvariants; i++) {
			printf("%s", variants[i].name);
			sp_variant_print_env(stdout, &variants[i]);
			printf("\n");
		}
		return 0;
	}
	for (size_t i = 0; want && i < nvariants; i++) {
		if (strcmp(want, variants[i].name))
			continue;
		if (!sp_variant_env_holds(&variants[i])) {
			fprintf(stderr, "# variant %s needs:", want);
			sp_variant_print_env(stderr, &variants[i]);
			fprintf(stderr, "\n");
			sp_variants_usage(prog, variants, nvariants);
			return 2;
		}
		return sp_test_run(group, tests, n, argc, argv);
	}
	if (want)
		fprintf(stderr, "# no variant %s\n", want);
	sp_variants_usage(prog, variants, nvariants);
	return 2;
}

int sp_test_run(const char *group, const struct CMUnitTest *tests,
		size_t n, int argc, char **argv)
{
	const char *filter = argc > 1 ? argv[1] : getenv("SEGPOOL_TEST_FILTER");
	const char *skip = getenv("SEGPOOL_TEST_SKIP");
	const char *base = strrchr(group, '/');

	base = base ? base + 1 : group;
	pthread_atfork(NULL, NULL, sp_test_child_no_leak_search);
	if (filter && *filter)
		cmocka_set_test_filter(filter);
	if (skip && *skip)
		cmocka_set_skip_filter(skip);
	/*
	 * cmocka returns the number of failed tests: as an exit status, 4 of
	 * them would read as SP_TEST_SKIP_STATUS and 256 as success.
	 */
	return _cmocka_run_group_tests(base, tests, n, NULL, NULL) ? 1 : 0;
}

/* --- residency by segpool's page ------------------------------------------ */

int sp_test_mincore(void *addr, size_t len, unsigned char *vec)
{
	size_t kpage = (size_t)sysconf(_SC_PAGESIZE);
	size_t per = kpage < SP_PAGE_SIZE ? SP_PAGE_SIZE / kpage : 1;
	unsigned char kvec[256];
	size_t done = 0;

	if (per == 1)
		return mincore(addr, len, vec);
	/* a whole number of segpool pages per call, one byte a kernel page */
	while (done < len) {
		size_t n = SP_MIN(len - done,
				  sizeof(kvec) / per * SP_PAGE_SIZE);

		if (mincore((char *)addr + done, n, kvec))
			return -1;
		for (size_t i = 0; i < n / SP_PAGE_SIZE; i++) {
			unsigned char any = 0;

			for (size_t k = 0; k < per; k++)
				any |= kvec[i * per + k] & 1;
			vec[done / SP_PAGE_SIZE + i] = any;
		}
		done += n;
	}
	return 0;
}
