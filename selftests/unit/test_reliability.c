// SPDX-License-Identifier: MIT
/*
 * selftests/unit/test_reliability.c - what must hold when things go wrong.
 *
 * Each test is the regression test of one defect of issue 12: start-up
 * without memory (the address-space limit), a destroyed cache's handle,
 * a zeroed free link with hardening off, realloc and usable_size of an
 * interior pointer, the count of segpool_cache_shrink(), the export record,
 * and every SEGPOOL_* setting given garbage.  What must abort or could
 * hang runs in a forked child under an alarm.
 *
 * Tests named child_* do their work only in a copy of this program started
 * by another test (SP_REL_CHILD set); run directly, they skip.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <segpool/segpool.h>

#include "segpool_config.h"
#include "internal/env.h"
#include "internal/reentry.h"
#include "selftests/lib/harness.h"

#define CHILD_ENV	"SP_REL_CHILD"
#define CHILD_TIMEOUT	30	/* seconds before a stuck child is killed */

/*
 * Run this program again as @filter, with only the SEGPOOL_* settings of
 * @env ("A=b" strings, NULL-terminated) and CHILD_ENV=1, its soft
 * address-space limit set to @as_limit bytes when not 0, under an alarm
 * (natively, even under valgrind).  Its stderr into @buf.
 * Return: its wait status.
 */
static int run_self(const char *filter, const char *const *env,
		    rlim_t as_limit, char *buf, size_t size)
{
	const char *changes[64];
	struct sp_test_exec x = {
		.arg = filter, .drop_prefix = "SEGPOOL_", .env = changes,
		.as_limit = as_limit, .timeout = CHILD_TIMEOUT,
	};
	size_t n = 0;
	int status;

	changes[n++] = CHILD_ENV "=1";
	for (; env && *env && n < sizeof(changes) / sizeof(changes[0]) - 1;
	     env++)
		changes[n++] = *env;
	changes[n] = NULL;
	assert_int_equal(sp_test_exec_self(&x, buf, size, &status), 0);
	return status;
}

static bool in_child(void)
{
	return getenv(CHILD_ENV) != NULL;
}

static unsigned int count_of(const char *hay, const char *needle)
{
	unsigned int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* --- start-up without memory (defect 2) ----------------------------------- */

#define INIT_AS_LIMIT	(20UL << 20)	/* ulimit -v 20M */

/*
 * Started under a soft address-space limit of 20 MiB with eight emulated
 * nodes: even the smallest space (one 4 MiB block per node) cannot be
 * reserved, every call fails with ENOMEM; once the limit is lifted, the
 * next call initialises the library and everything works.
 */
static void child_init_retry(void **state)
{
	struct segpool_cache *c;
	struct rlimit rl;
	void *p;

	(void)state;
	if (!in_child())
		skip();
	errno = 0;
	assert_null(segpool_malloc(64));
	assert_int_equal(errno, ENOMEM);
	assert_null(segpool_cache_create("rel-init", 64, 0, 0, NULL));
	assert_int_equal(errno, ENOMEM);
	assert_null(segpool_malloc(64));	/* tried again: still no */

	assert_int_equal(getrlimit(RLIMIT_AS, &rl), 0);
	rl.rlim_cur = rl.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_AS, &rl), 0);

	p = segpool_malloc(64);
	assert_non_null(p);
	memset(p, 1, 64);
	segpool_free(p);
	c = segpool_cache_create("rel-init", 64, 0, 0, NULL);
	assert_non_null(c);
	p = segpool_cache_alloc(c, 0);
	assert_non_null(p);
	segpool_cache_free(c, p);
	assert_int_equal(segpool_cache_destroy(c), 0);
	assert_null(strstr(segpool_percpu_mode(), "not initialised"));
}

static const char *const env_eight_nodes[] = {
	"SEGPOOL_NUMA_FAKE_NODES=8", NULL,
};

static void test_init_retry_after_failure(void **state)
{
	char buf[8192];
	int status;

	(void)state;
#if defined(CONFIG_SEGPOOL_ASAN) || defined(CONFIG_SEGPOOL_TSAN)
	skip();		/* the sanitizers' shadow memory needs more than that */
#endif
	if (sp_test_under_valgrind())
		skip();	/* so does valgrind; and the child would run natively */
	status = run_self("child_init_retry", env_eight_nodes, INIT_AS_LIMIT,
			  buf, sizeof(buf));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("child status %#x; stderr: %s", status, buf);
	/* reported once, however many calls failed; and the recovery */
	assert_int_equal(count_of(buf, "segpool: cannot initialise"), 1);
	assert_non_null(strstr(buf, "try again"));
	assert_int_equal(count_of(buf, "segpool: initialised after"), 1);
}

/*
 * The same limit on one node (issue 23, item 14): the space is sized to
 * what the limit leaves, so start-up succeeds at once, with nothing said,
 * and a few MiB of objects of every size class are served.
 */
static void child_small_limit(void **state)
{
	static void *objs[4096];
	size_t bytes = 0;
	int n = 0;

	(void)state;
	if (!in_child())
		skip();
	for (size_t sz = 8; n < 4096 && bytes < (3UL << 20); n++) {
		objs[n] = segpool_malloc(sz);
		assert_non_null(objs[n]);
		memset(objs[n], 0x5a, sz);
		bytes += sz;
		sz = sz >= 32768 ? 8 : sz * 2;
	}
	while (n--)
		segpool_free(objs[n]);
}

static void test_small_as_limit(void **state)
{
	static const char *const env[] = { "SEGPOOL_NUMA=off", NULL };
	char buf[8192];
	int status;

	(void)state;
#if defined(CONFIG_SEGPOOL_ASAN) || defined(CONFIG_SEGPOOL_TSAN)
	skip();		/* the sanitizers' shadow memory needs more than that */
#endif
	if (sp_test_under_valgrind())
		skip();
	status = run_self("child_small_limit", env, INIT_AS_LIMIT, buf,
			  sizeof(buf));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("child status %#x; stderr: %s", status, buf);
	assert_null(strstr(buf, "segpool:"));
}

/* --- a zeroed free link with hardening off (defect 5) --------------------- */

/*
 * SEGPOOL_FREELIST_HARDENED=0, no per-CPU layer (frees go straight to the
 * slab): a slab fully carved, two objects freed, the second one zeroed
 * after its free as a use-after-free would.  The next allocation takes it
 * and its NULL link ends the free list early; the one after that used to
 * spin forever under the node lock on a partial slab with no free object.
 * A linked cache (sp_test_linked_cache()): a map cache links none (its free
 * objects are bits of a map, SP_CACHE_FREEMAP), so there a zeroed object
 * breaks nothing.
 */
static void child_zeroed_link(void **state)
{
	struct segpool_cache *c;
	unsigned int n, i;
	void **objs;

	(void)state;
	if (!in_child())
		skip();
	c = sp_test_linked_cache("rel-zeroed-link", 48, 0, NULL);
	assert_non_null(c);
	n = sp_test_info(c).objs_per_slab;
	objs = calloc(n, sizeof(*objs));
	assert_non_null(objs);
	for (i = 0; i < n; i++)
		assert_non_null(objs[i] = segpool_cache_alloc(c, 0));
	segpool_cache_free(c, objs[3]);
	segpool_cache_free(c, objs[7]);
	memset(objs[7], 0, 48);		/* written after free */
	assert_ptr_equal(segpool_cache_alloc(c, 0), objs[7]);
	(void)!segpool_cache_alloc(c, 0);	/* must report, never loop */
	fail_msg("the broken free list went unseen");
}

static void test_zeroed_link_unhardened(void **state)
{
	static const char *const env[] = {
		"SEGPOOL_FREELIST_HARDENED=0", "SEGPOOL_PERCPU=off", NULL,
	};
	char buf[8192];
	int status;

	(void)state;
#ifdef CONFIG_SEGPOOL_ASAN
	skip();		/* ASan stops the planted write after free itself */
#endif
	status = run_self("child_zeroed_link", env, 0, buf, sizeof(buf));
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT)
		fail_msg("child status %#x%s; stderr: %s", status,
			 WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM ?
			 " (hung)" : "", buf);
	assert_non_null(strstr(buf, "segpool: free list of slab"));
	assert_non_null(strstr(buf, "cache rel-zeroed-link"));
}

/* --- realloc and usable_size of an interior pointer (defects 6, 7) ------- */

static void do_realloc_interior(void *arg)
{
	char *p = segpool_malloc(48);

	(void)arg;
	memset(p, 0x5a, 48);
	/* would copy 5000 bytes from 5 bytes in, past the object */
	(void)!segpool_realloc(p + 5, 5000);
}

static void test_realloc_interior(void **state)
{
	(void)state;
	assert_true(sp_test_expect_death(do_realloc_interior, NULL,
		"segpool: realloc of interior pointer"));
	assert_true(sp_test_expect_death(do_realloc_interior, NULL,
		"(cache kmalloc-48)"));
}

static void do_usable_interior(void *arg)
{
	char *p = segpool_malloc(48);

	(void)arg;
	printf("# usable_size(p + 5) = %zu\n", segpool_usable_size(p + 5));
}

static void test_usable_size_interior(void **state)
{
	char *p = segpool_malloc(48);
	int dummy;

	(void)state;
	assert_non_null(p);
	assert_int_equal(segpool_usable_size(p), 48);
	errno = 0;
	assert_int_equal(segpool_usable_size(&dummy), 0);	/* not ours */
	assert_int_equal(errno, EINVAL);
	segpool_free(p);
	assert_true(sp_test_expect_death(do_usable_interior, NULL,
		"segpool: usable_size of interior pointer"));
}

/* --- the count of segpool_cache_shrink() (defect 8) ----------------------- */

/*
 * Objects freed into the per-CPU layer sit in magazines and the depot; the
 * shrink drains them into their slabs, and the slabs that leaves empty
 * beyond what a node keeps are released by the drain itself.  They used to
 * be missing from the count (51 released, 32 returned).
 */
static void test_shrink_counts_drained_slabs(void **state)
{
	struct segpool_cache *c;
	uint64_t before, after;
	unsigned int per, n, i;
	void **objs;
	int ret;

	(void)state;
	c = segpool_cache_create("rel-shrink", 256, 0, 0, NULL);
	assert_non_null(c);
	per = sp_test_info(c).objs_per_slab;
	n = per * 64;
	objs = calloc(n, sizeof(*objs));
	assert_non_null(objs);
	for (i = 0; i < n; i++)
		assert_non_null(objs[i] = segpool_cache_alloc(c, 0));
	for (i = 0; i < n; i++)
		segpool_cache_free(c, objs[i]);
	free(objs);
	before = sp_test_info(c).slabs_released;
	ret = segpool_cache_shrink(c);
	after = sp_test_info(c).slabs_released;
	printf("# shrink returned %d, slabs released %llu\n", ret,
	       (unsigned long long)(after - before));
	assert_true(ret > 0);
	assert_int_equal((uint64_t)ret, after - before);
	assert_int_equal(sp_test_info(c).total_slabs, 0);
	assert_int_equal(segpool_cache_shrink(c), 0);	/* nothing left */
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* --- a destroyed cache's handle (defect 4) -------------------------------- */

enum stale_op { STALE_ALLOC, STALE_FREE, STALE_SHRINK, STALE_DESTROY,
		STALE_FREE_RCU, STALE_INFO };

struct stale {
	enum stale_op op;
	const char *needle;
};

/*
 * Destroy a cache, then create caches of the same size until one lands at
 * its address or 64 were tried (with the tombstone none does), then use
 * the old handle.  It used to crash, or drive the new cache: destroy the
 * new one, free its objects.
 */
static void do_stale(void *arg)
{
	const struct stale *st = arg;
	struct segpool_cache *old, *fresh[64];
	void *obj, *new_obj;
	int i, nfresh = 0;

	old = segpool_cache_create("rel-stale-old", 200, 0, 0, NULL);
	obj = segpool_cache_alloc(old, 0);
	segpool_cache_free(old, obj);
	if (segpool_cache_destroy(old))
		_exit(3);
	for (i = 0; i < 64; i++) {
		char name[32];

		snprintf(name, sizeof(name), "rel-stale-new-%d", i);
		fresh[nfresh] = segpool_cache_create(name, 200, 0, 0, NULL);
		if (fresh[nfresh++] == old)
			break;
	}
	new_obj = segpool_cache_alloc(fresh[nfresh - 1], 0);
	switch (st->op) {
	case STALE_ALLOC:
		(void)!segpool_cache_alloc(old, 0);
		break;
	case STALE_FREE:
		segpool_cache_free(old, new_obj);
		break;
	case STALE_SHRINK:
		segpool_cache_shrink(old);
		break;
	case STALE_DESTROY:
		segpool_cache_destroy(old);
		break;
	case STALE_FREE_RCU:
		segpool_cache_free_rcu(old, new_obj);
		break;
	case STALE_INFO: {
		struct segpool_cache_info info = { .size = sizeof(info) };

		segpool_cache_get_info(old, &info);
		break;
	}
	}
	fprintf(stderr, "stale handle used without a report\n");
}

static void test_destroyed_handle(void **state)
{
	static const struct stale cases[] = {
		{ STALE_ALLOC, "segpool: alloc from destroyed cache" },
		{ STALE_FREE, "segpool: free into destroyed cache" },
		{ STALE_SHRINK, "segpool: shrink of destroyed cache" },
		{ STALE_DESTROY, "segpool: destroy of destroyed cache" },
		{ STALE_FREE_RCU, "segpool: free by RCU into destroyed cache" },
		{ STALE_INFO, "segpool: info of destroyed cache" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_true(sp_test_expect_death(do_stale, (void *)&cases[i],
						 cases[i].needle));
		/* the report names the destroyed cache, not a new one */
		assert_true(sp_test_expect_death(do_stale, (void *)&cases[i],
						 "(cache rel-stale-old)"));
	}
}

/* Tombstones are bounded: many create/destroy cycles keep working. */
static void test_tombstones_bounded(void **state)
{
	unsigned int n = (unsigned int)sp_test_scaled(3000, 1100);

	(void)state;
	for (unsigned int i = 0; i < n; i++) {
		struct segpool_cache *c =
			segpool_cache_create("rel-tomb", 64, 0, 0, NULL);
		void *o;

		assert_non_null(c);
		o = segpool_cache_alloc(c, 0);
		assert_non_null(o);
		segpool_cache_free(c, o);
		assert_int_equal(segpool_cache_destroy(c), 0);
	}
}

/* --- every setting given garbage ------------------------------------------ */

/*
 * What a child started with one bad setting does: the library works, and
 * the text dumps (where SEGPOOL_DEBUG is shown) stay whole.
 */
static void child_env_garbage(void **state)
{
	struct segpool_cache *c;
	FILE *f;
	void *p;

	(void)state;
	if (!in_child())
		skip();
	p = segpool_malloc(100);
	assert_non_null(p);
	segpool_free(p);
	c = segpool_cache_create("rel-env", 64, 0, 0, NULL);
	assert_non_null(c);
	p = segpool_cache_alloc(c, 0);
	assert_non_null(p);
	segpool_cache_free(c, p);
	assert_int_equal(segpool_cache_destroy(c), 0);
	f = fopen("/dev/null", "w");
	assert_non_null(f);
	assert_int_equal(segpool_stats_dump(f), 0);
	assert_int_equal(segpool_stats_health(f), 0);
	fclose(f);
	assert_null(strstr(segpool_percpu_mode(), "not initialised"));
}

/* Garbage for a variable of @v's kind, @k-th; NULL past the last. */
static const char *garbage(const struct sp_env_var *v, int k)
{
	static const char *const any[] = { "bad\nline", "x\x01y" };
	static const char *const boolean[] = { "maybe", "off ", "2" };
	static const char *const word[] = { "bogus", "off ", " lock", "" };
	static const char *const integer[] = { "abc", "4x", "1.5",
					       "99999999999999999999",
					       NULL, NULL };
	static char above[32], below[32];	/* just out of range */
	static const char *const size[] = { "abc", "0", "-1", "1T1",
					    "99999999999999999999G", "2T" };
	const char *const *list;
	size_t n;

	if (k < 2)
		return any[k];
	k -= 2;
	switch (v->kind) {
	case SP_ENV_BOOL: list = boolean; n = 3; break;
	case SP_ENV_WORD: list = word; n = 3; break;
	case SP_ENV_INT:
		snprintf(above, sizeof(above), "%lld", v->max + 1);
		snprintf(below, sizeof(below), "%lld", v->min - 1);
		if (k == 4)
			return above;
		if (k == 5)
			return below;
		list = integer;
		n = 4;
		break;
	case SP_ENV_SIZE: list = size; n = 6; break;
	default: return k == 0 ? v->bad_example : NULL;
	}
	return (size_t)k < n ? list[k] : NULL;
}

static void test_env_every_variable_garbage(void **state)
{
	unsigned int runs = 0;

	(void)state;
	for (int i = 0; i < SP_ENV_NR; i++) {
		const struct sp_env_var *v = &sp_env_table[i];
		const char *bad;

		assert_non_null(v->name);	/* every entry filled in */
		assert_non_null(v->accepted);
		assert_non_null(v->on_bad);
		assert_non_null(v->help);
		assert_non_null(v->def);
		assert_true(v->kind != SP_ENV_WORD || v->words);
		assert_true(v->kind != SP_ENV_TEXT || v->bad_example);
		for (int k = 0; (bad = garbage(v, k)); k++) {
			char setting[160], esc[160], want[256], buf[16384];
			char instead[256];
			const char *line;
			const char *env[] = { setting, NULL };
			int status;

			snprintf(setting, sizeof(setting), "%s=%s", v->name,
				 bad);
			sp_env_escape(bad, esc, sizeof(esc));
			snprintf(want, sizeof(want), "segpool: %s=\"%s\": ",
				 v->name, esc);
			status = run_self("child_env_garbage", env, 0, buf,
					  sizeof(buf));
			runs++;
			if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
				fail_msg(
					"%s=\"%s\": child status %#x; stderr: "
					"%s",
					v->name, esc, status, buf);
			/* one short line, naming the variable and the value,
			 * saying what happens instead (the stated behaviour's
			 * first clause) and citing the installed manual, not a
			 * source file */
			snprintf(instead, sizeof(instead), "; instead: %.*s",
				 (int)strcspn(v->on_bad, "("), v->on_bad);
			while (instead[strlen(instead) - 1] == ' ')
				instead[strlen(instead) - 1] = '\0';
			line = strstr(buf, want);
			if (count_of(buf, want) != 1 ||
			    count_of(buf, "segpool: ") != 1 ||
			    !strstr(buf, instead) ||
			    !strstr(buf, "see segpool(7)") ||
			    strstr(buf, ".md") || strstr(buf, ".c:") ||
			    strcspn(line, "\n") - strlen(esc) > 160)
				fail_msg("%s=\"%s\": expected one short report "
					 "\"%s...%s...\"; stderr: %s", v->name,
					 esc, want, instead, buf);
		}
	}
	printf("# %u bad settings over %d variables\n", runs, SP_ENV_NR);
}

/* The same words everywhere, in any case; a good value says nothing. */
static void test_env_good_values_silent(void **state)
{
	static const char *const good[] = {
		"SEGPOOL_FREELIST_HARDENED=NO", "SEGPOOL_NUMA=TRUE",
		"SEGPOOL_PERCPU=LOCK", "SEGPOOL_NUMA_BIND=off",
		"SEGPOOL_REGION_SIZE=64m", "SEGPOOL_DEBUG_RESPONSE=Continue",
		"SEGPOOL_EXPORT=0", "SEGPOOL_NUMA_FAKE_NODES=2",
		"SEGPOOL_PERCPU_ID=cpu", NULL,
	};
	char buf[8192];
	int status;

	(void)state;
	status = run_self("child_env_garbage", good, 0, buf, sizeof(buf));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("child status %#x; stderr: %s", status, buf);
	if (strstr(buf, "segpool: "))
		fail_msg("a good value was reported: %s", buf);
}

/*
 * SEGPOOL_VERBOSE=1: the settings in force at start-up, every variable's
 * value or default, then what they came to; SEGPOOL_DEBUG=1 is every
 * check on every cache.
 */
static void test_env_verbose(void **state)
{
	static const char *const env[] = {
		"SEGPOOL_VERBOSE=1",
		"SEGPOOL_DEBUG=1",
		"SEGPOOL_PERCPU=lock",
		NULL,
	};
	char buf[16384], want[128];
	int status;

	(void)state;
	status = run_self("child_env_garbage", env, 0, buf, sizeof(buf));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("child status %#x; stderr: %s", status, buf);
	printf("# %s", buf);
	assert_int_equal(count_of(buf, "starts with (SEGPOOL_VERBOSE):"), 1);
	for (int i = 0; i < SP_ENV_NR; i++) {
		snprintf(want, sizeof(want), "segpool:   %s",
			 sp_env_table[i].name);
		if (count_of(buf, want) < 1)
			fail_msg("%s is not in the settings printed: %s",
				 sp_env_table[i].name, buf);
	}
	assert_non_null(strstr(buf, "segpool:   SEGPOOL_DEBUG=\"1\"\n"));
	assert_non_null(strstr(buf, "segpool:   SEGPOOL_REGION_SIZE unset: "
			       "default 32G\n"));
	assert_non_null(strstr(buf, "segpool: per-CPU mode lock"));
	assert_non_null(strstr(buf, "debug: debug=1 "));
	assert_non_null(strstr(buf, "segpool: guard pool: off\n"));
	/* linked in: the executable's IFUNC relocations ran first */
	assert_non_null(strstr(buf, "segpool: heap profile: off; "
				    "entry points: open build, chosen before "
				    "start-up (from /proc/self/environ)\n"));
	/* said once, at start-up: nothing else reported */
	assert_int_equal(count_of(buf, "segpool: "),
			 count_of(buf, "segpool:   ") + 5);
}

/* The parser, value by value. */
static void test_env_parse(void **state)
{
	const struct sp_env_var *rs = &sp_env_table[SP_ENV_REGION_SIZE];
	const struct sp_env_var *pc = &sp_env_table[SP_ENV_PERCPU];
	const struct sp_env_var *fk = &sp_env_table[SP_ENV_NUMA_FAKE_NODES];
	long long v;

	(void)state;
	assert_null(sp_env_parse(rs, "64M", &v));
	assert_int_equal(v, 64LL << 20);
	assert_null(sp_env_parse(rs, "0x1000000", &v));
	assert_int_equal(v, 16LL << 20);
	assert_null(sp_env_parse(rs, "1T", &v));
	assert_non_null(sp_env_parse(rs, "0", &v));		/* was 16 MiB */
	assert_non_null(sp_env_parse(rs, "abc", &v));		/* was 16 MiB */
	assert_non_null(sp_env_parse(rs, "-1", &v));		/* was 1 TiB */
	assert_null(sp_env_parse(rs, "16777216K", &v));	/* 16 GiB */
	assert_non_null(sp_env_parse(rs, "99999999999999999999", &v));
	assert_null(sp_env_parse(pc, "LOCK", &v));
	assert_int_equal(v, 1);
	assert_non_null(sp_env_parse(pc, "off ", &v));
	assert_non_null(sp_env_parse(pc, "bogus", &v));
	assert_null(sp_env_parse(fk, "4", &v));
	assert_int_equal(v, 4);
	assert_non_null(sp_env_parse(fk, "4x", &v));
	assert_non_null(sp_env_parse(fk, "-3", &v));
	assert_non_null(sp_env_parse(fk, "1000", &v));
	assert_non_null(sp_env_parse(fk, "a\nb", &v));
}

/* --- allocation and free from a signal handler (issue 23, item 3) -------- */

/*
 * The main thread churns a cache and the size classes through their slow
 * paths (a thousand objects at a time: magazines run dry and overflow, the
 * node locks are taken) while another thread signals it without pause.
 * The handler allocates and frees from the same cache and size class, and
 * frees objects the main thread allocated before (a stash): it must never
 * deadlock, an allocation either succeeds or fails with ENOMEM, and no free
 * is lost (the cache is destroyed empty at the end).
 */
#define SIG_STASH	4096
#define SIG_SIGNALS	3000	/* signals handled before the churn stops */
#define SIG_ROUNDS	20000	/* or rounds of the churn */

static struct segpool_cache *sig_cache;
static void *sig_stash[SIG_STASH];
static volatile unsigned int sig_stash_next;
static volatile unsigned long sig_allocs, sig_enomem, sig_other, sig_count;
static volatile unsigned long sig_nested;	/* handlers inside
						 * the library */
static bool sig_stop;		/* atomic: the sender reads it */

static void sig_handler(int sig)
{
	int saved = errno;
	void *p, *q;

	(void)sig;
	sig_count++;
	if (sp_lib_nested())
		sig_nested++;
	p = segpool_cache_alloc(sig_cache, 0);
	q = segpool_malloc(200);
	if (p)
		sig_allocs++;
	else if (errno == ENOMEM)
		sig_enomem++;
	else
		sig_other++;
	segpool_cache_free(sig_cache, p);
	segpool_free(q);
	if (sig_stash_next < SIG_STASH)
		segpool_cache_free(sig_cache, sig_stash[sig_stash_next++]);
	errno = saved;
}

static void *sig_sender(void *arg)
{
	pthread_t target = *(pthread_t *)arg;

	while (!__atomic_load_n(&sig_stop, __ATOMIC_ACQUIRE)) {
		pthread_kill(target, SIGUSR1);
		sched_yield();
	}
	return NULL;
}

static void child_signal_alloc(void **state)
{
	static void *objs[1000], *big[1000];
	struct sigaction sa = { .sa_handler = sig_handler };
	pthread_t self = pthread_self(), sender;

	(void)state;
	if (!in_child())
		skip();
	sig_cache = segpool_cache_create("rel-signal", 64, 0, 0, NULL);
	assert_non_null(sig_cache);
	for (int i = 0; i < SIG_STASH; i++)
		assert_non_null(sig_stash[i] =
					segpool_cache_alloc(sig_cache, 0));
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
	assert_int_equal(pthread_create(&sender, NULL, sig_sender, &self), 0);
	for (int r = 0; r < SIG_ROUNDS && sig_count < SIG_SIGNALS; r++) {
		for (int i = 0; i < 1000; i++) {
			objs[i] = segpool_cache_alloc(sig_cache, 0);
			big[i] = segpool_malloc(200);
			assert_non_null(objs[i]);
			assert_non_null(big[i]);
		}
		for (int i = 0; i < 1000; i++) {
			segpool_cache_free(sig_cache, objs[i]);
			segpool_free(big[i]);
		}
		if (r % 50 == 0)
			segpool_cache_shrink(sig_cache);
	}
	__atomic_store_n(&sig_stop, true, __ATOMIC_RELEASE);
	pthread_join(sender, NULL);
	signal(SIGUSR1, SIG_IGN);
	/* the handler's frees, deferred or not, all reached the cache */
	for (unsigned int i = sig_stash_next; i < SIG_STASH; i++)
		segpool_cache_free(sig_cache, sig_stash[i]);
	/* one more call on this thread drains what a handler deferred */
	segpool_cache_free(sig_cache, segpool_cache_alloc(sig_cache, 0));
	fprintf(stderr, "# %lu signals (%lu inside the library): %lu "
		"allocations, %lu ENOMEM, %lu other; %u stash frees\n",
		sig_count, sig_nested, sig_allocs, sig_enomem, sig_other,
		sig_stash_next);
	assert_int_equal(sig_other, 0);
	assert_true(sig_count > 0);
	assert_int_equal(segpool_cache_destroy(sig_cache), 0);
}

static void test_signal_alloc(void **state)
{
	static const char *const modes[] = {
		NULL, "SEGPOOL_PERCPU=lock", "SEGPOOL_PERCPU=off",
	};
	static char buf[1 << 14];

	(void)state;
	if (sp_test_under_valgrind())
		skip();		/* far too slow to mean anything there */
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		const char *env[] = { modes[i], NULL };
		int status = run_self("child_signal_alloc", env, 0, buf,
				      sizeof(buf));

		print_message("# %s: %s", modes[i] ? modes[i] : "default mode",
			      strstr(buf, "# ") ? strstr(buf, "# ") + 2 : "\n");
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			fail_msg("%s: child status %#x%s; stderr: %s",
				 modes[i] ? modes[i] : "default mode", status,
				 WIFSIGNALED(status) && WTERMSIG(status) ==
				 SIGALRM ? " (deadlocked)" : "", buf);
	}
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(child_signal_alloc),
	cmocka_unit_test(test_signal_alloc),
	cmocka_unit_test(child_init_retry),
	cmocka_unit_test(test_init_retry_after_failure),
	cmocka_unit_test(child_small_limit),
	cmocka_unit_test(test_small_as_limit),
	cmocka_unit_test(child_zeroed_link),
	cmocka_unit_test(test_zeroed_link_unhardened),
	cmocka_unit_test(test_realloc_interior),
	cmocka_unit_test(test_usable_size_interior),
	cmocka_unit_test(test_shrink_counts_drained_slabs),
	cmocka_unit_test(test_destroyed_handle),
	cmocka_unit_test(test_tombstones_bounded),
	cmocka_unit_test(child_env_garbage),
	cmocka_unit_test(test_env_parse),
	cmocka_unit_test(test_env_every_variable_garbage),
	cmocka_unit_test(test_env_good_values_silent),
	cmocka_unit_test(test_env_verbose),
};

SP_TEST_MAIN(tests)
