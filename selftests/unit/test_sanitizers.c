// SPDX-License-Identifier: MIT
/*
 * selftests/unit/test_sanitizers.c - AddressSanitizer and valgrind see cache
 * objects.
 *
 * A planted bug (use after free, write after free, overflow into the next
 * object, a leak) runs in a fresh process: this program started again with
 * SP_SAN_PLANT=<bug>, which a constructor below acts on before main().
 * The test then checks the tool's report on that process's stderr: in an
 * ASan build, ASan's own report; in any other build, valgrind memcheck's,
 * when valgrind is installed.  A tool that cannot run here (not an ASan
 * build, no valgrind, a ThreadSanitizer build) makes its tests skip, with
 * the reason printed.  Under valgrind itself (the CI's valgrind step) the
 * child cannot run valgrind again: test_memcheck_state checks the same
 * annotations from inside instead.  Last, the harness's own use of
 * valgrind: a forked child of a selftest runs no leak search.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <segpool/segpool.h>

#include "segpool_config.h"
#include "internal/sanitize.h"
#include "selftests/lib/harness.h"

/* --- the planted bugs (child side) ---------------------------------------- */

static void plant_report(const char *what, const volatile void *p)
{
	fprintf(stderr, "planted %s at %p\n", what, (const void *)p);
	fflush(stderr);
}

static __attribute__((noinline)) void plant(const char *bug)
{
	struct segpool_cache *c = segpool_cache_create("san-plant", 40, 0, 0,
						       NULL);
	volatile char *obj;

	if (!c)
		_exit(2);
	obj = segpool_cache_alloc(c, 0);
	if (!obj)
		_exit(2);
	memset((void *)obj, 7, 40);
	if (!strcmp(bug, "uaf-read")) {
		segpool_cache_free(c, (void *)obj);
		plant_report("read", obj + 8);
		if (obj[8] == 42)
			fputs("unlikely\n", stderr);
	} else if (!strcmp(bug, "uaf-write")) {
		segpool_cache_free(c, (void *)obj);
		plant_report("write", obj + 16);
		obj[16] = 1;
	} else if (!strcmp(bug, "overflow")) {
		/* one byte past the object: the next, never-allocated one */
		plant_report("overflow", obj + 40);
		obj[40] = 1;
	} else if (!strcmp(bug, "malloc-uaf")) {
		volatile char *p = segpool_malloc(100);

		if (!p)
			_exit(2);
		p[0] = 1;
		segpool_free((void *)p);
		plant_report("read", p + 24);
		if (p[24] == 42)
			fputs("unlikely\n", stderr);
	} else if (!strcmp(bug, "leak")) {
		obj = NULL;	/* the only pointer to the object: gone */
		plant_report("leak", NULL);
	}
}

__attribute__((constructor)) static void plant_if_asked(void)
{
	const char *bug = getenv("SP_SAN_PLANT");

	if (!bug)
		return;
	plant(bug);
	exit(0);
}

/* --- the parent side ----------------------------------------------------- */

/*
 * Run this program with SP_SAN_PLANT=@bug, under @wrapper (argv words, NULL
 * for none), stderr into @buf.  Return: the exit status (or 128 + signal).
 */
static int run_planted(const char *bug, const char *const *wrapper,
		       char *buf, size_t size)
{
	char plant[64];
	/* the child is not run under the test wrapper's valgrind */
	const char *env[] = { plant, "LD_PRELOAD", NULL };
	const struct sp_test_exec x = { .wrapper = wrapper, .env = env };
	int status;

	snprintf(plant, sizeof(plant), "SP_SAN_PLANT=%s", bug);
	assert_int_equal(sp_test_exec_self(&x, buf, size, &status), 0);
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) :
				     WEXITSTATUS(status);
}

/* The address the child printed after "planted <what> at ". */
static const char *planted_addr(const char *buf, char *addr, size_t size)
{
	const char *p = strstr(buf, "planted ");

	assert_non_null(p);
	p = strstr(p, " at ");
	assert_non_null(p);
	p += 4;
	snprintf(addr, size, "%.*s", (int)strcspn(p, "\n"), p);
	return addr;
}

/* Case apart (valgrind prints 0x4A..., %p 0x4a...), is @needle in @buf? */
static bool expect(const char *buf, const char *needle)
{
	if (strcasestr(buf, needle))
		return true;
	printf("# the report lacks \"%s\":\n%s\n", needle, buf);
	return false;
}

/* --- AddressSanitizer ----------------------------------------------------- */

static void need_asan(void)
{
	if (!SP_ASAN) {
		printf("# skip: not an AddressSanitizer build "
		       "(make O=dir SANITIZE=address,undefined check)\n");
		skip();
	}
}

static char report[65536];

static void asan_case(const char *bug, const char *kind, const char *where)
{
	char addr[64];
	int status;

	need_asan();
	status = run_planted(bug, NULL, report, sizeof(report));
	assert_true(status != 0);
	assert_true(
		expect(report, "ERROR: AddressSanitizer: use-after-poison"));
	assert_true(expect(report, kind));
	assert_true(expect(report, planted_addr(report, addr, sizeof(addr))));
	/* segpool's own line after ASan's report: the object and its cache */
	assert_true(expect(report, where));
}

static void test_asan_uaf_read(void **state)
{
	(void)state;
	asan_case("uaf-read", "READ of size 1",
		  "is 8 bytes inside object 0x");
	assert_true(expect(report,
			   "of cache san-plant (size 40): the object is free"));
}

static void test_asan_uaf_write(void **state)
{
	(void)state;
	asan_case("uaf-write", "WRITE of size 1",
		  "is 16 bytes inside object 0x");
}

static void test_asan_overflow(void **state)
{
	(void)state;
	/* the next object, never allocated: inside it, at offset 0 */
	asan_case("overflow", "WRITE of size 1",
		  "is 0 bytes inside object 0x");
}

static void test_asan_malloc_uaf(void **state)
{
	(void)state;
	asan_case("malloc-uaf", "READ of size 1", "of cache kmalloc-");
}

/* Poisoning is exact: an allocated object is all accessible, no more. */
static void test_asan_object_bounds(void **state)
{
	struct segpool_cache *c;
	char *obj;

	(void)state;
	need_asan();
#if SP_ASAN
	c = segpool_cache_create("san-bounds", 20, 0, 0, NULL);
	assert_non_null(c);
	obj = segpool_cache_alloc(c, 0);
	assert_non_null(obj);
	assert_null(__asan_region_is_poisoned(obj, 20));
	assert_ptr_equal(__asan_region_is_poisoned(obj, 21), obj + 20);
	segpool_cache_free(c, obj);
	assert_ptr_equal(__asan_region_is_poisoned(obj, 20), obj);
	assert_int_equal(segpool_cache_destroy(c), 0);
#else
	(void)c;
	(void)obj;
#endif
}

/* --- valgrind memcheck ---------------------------------------------------- */

static bool valgrind_installed(void)
{
	const char *path = getenv("PATH");
	char file[4096];

	while (path && *path) {
		size_t len = strcspn(path, ":");

		snprintf(file, sizeof(file), "%.*s/valgrind", (int)len, path);
		if (access(file, X_OK) == 0)
			return true;
		path += len + (path[len] == ':');
	}
	return false;
}

static void need_valgrind(void)
{
	const char *why = NULL;

	if (SP_ASAN)
		why = "an AddressSanitizer build cannot run under valgrind";
#ifdef CONFIG_SEGPOOL_TSAN
	why = "a ThreadSanitizer build cannot run under valgrind";
#endif
	if (!why && !SP_VALGRIND)
		why = "built without <valgrind/memcheck.h> (Debian package "
		      "valgrind)";
	if (!why && sp_test_under_valgrind())
		why = "already under valgrind (test_memcheck_state checks from "
		      "inside)";
	if (!why && !valgrind_installed())
		why = "valgrind is not installed";
	if (why) {
		printf("# skip: %s\n", why);
		skip();
	}
}

static const char *const vg_cmd[] = {
	"valgrind", "--error-exitcode=99", NULL,
};

static void valgrind_case(const char *bug, const char *kind)
{
	char addr[64];

	need_valgrind();
	assert_int_equal(run_planted(bug, vg_cmd, report, sizeof(report)), 99);
	assert_true(expect(report, kind));
	assert_true(expect(report, planted_addr(report, addr, sizeof(addr))));
	/* memcheck's view of the block: freed by segpool, with the frame */
	assert_true(expect(report, "free'd"));
}

static void test_valgrind_uaf_read(void **state)
{
	(void)state;
	valgrind_case("uaf-read", "Invalid read of size 1");
	/* segpool's own frames in the free stack */
	assert_true(expect(report, "cache_api.c"));
}

static void test_valgrind_uaf_write(void **state)
{
	(void)state;
	valgrind_case("uaf-write", "Invalid write of size 1");
}

static void test_valgrind_malloc_uaf(void **state)
{
	(void)state;
	valgrind_case("malloc-uaf", "Invalid read of size 1");
	/* the free's stack: its hit path tail-calls the slow path, so the
	 * frame memcheck sees is the slow path's or segpool_free's own */
	assert_true(expect(report, "segpool_free (malloc_api.c") ||
		    expect(report, "sp_free_to_layers (cache_api.c"));
}

static void test_valgrind_overflow(void **state)
{
	char addr[64];
	static const char *const cmd[] = {
		"valgrind", "--error-exitcode=99", NULL,
	};

	(void)state;
	need_valgrind();
	assert_int_equal(run_planted("overflow", cmd, report, sizeof(report)),
			 99);
	assert_true(expect(report, "Invalid write of size 1"));
	assert_true(expect(report, planted_addr(report, addr, sizeof(addr))));
}

static void test_valgrind_leak(void **state)
{
	static const char *const cmd[] = {
		"valgrind", "--leak-check=full", "--error-exitcode=99", NULL,
	};

	(void)state;
	need_valgrind();
	assert_int_equal(run_planted("leak", cmd, report, sizeof(report)), 99);
	assert_true(expect(report, "40 bytes in 1 blocks are definitely lost"));
	/* the allocation stack starts in segpool */
	assert_true(expect(report, "(cache_api.c:"));
}

/*
 * A forked child under memcheck runs no leak search at its end (sp_test_run()
 * makes sp_test_child_no_leak_search() every fork's child handler): run
 * again under "valgrind --leak-check=full --error-exitcode=99" with
 * SP_SAN_CHILD_LEAK=1, this test forks a child that leaks a block and
 * exits 0, which must end with status 0; then a control, a child that
 * turns the search back on before the same leak, which must end with 99
 * (the leak is one memcheck finds).  The search in the control reads the
 * whole address space: some seconds.
 */
static __attribute__((noinline)) void leak_a_block(void)
{
	volatile char *p = malloc(40);

	if (p)
		p[0] = 1;
	p = NULL;
}

/* A forked child's body: leak a block, its leak search on when *@arg. */
static void leaker(void *arg)
{
	char scrub[4096];

#if SP_VALGRIND
	if (*(const bool *)arg)
		VALGRIND_CLO_CHANGE("--leak-check=full");
#else
	(void)arg;
#endif
	leak_a_block();
	/* no copy of the pointer left on the stack below */
	memset(scrub, 0, sizeof(scrub));
	__asm__ volatile("" : : "r"(scrub) : "memory");
}

/* Fork a child that leaks a block, its leak search on when @search. */
static int fork_leaker(bool search)
{
	char err[256];
	int status = -1;

	assert_int_equal(sp_test_run_child(leaker, &search, err, sizeof(err),
					   &status), 0);
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) :
				     WEXITSTATUS(status);
}

static void test_valgrind_child_leak_search(void **state)
{
	static const char *const cmd[] = {
		"valgrind", "-q", "--leak-check=full", "--error-exitcode=99",
		NULL,
	};
	static const char *const env[] = { "SP_SAN_CHILD_LEAK=1",
					   "LD_PRELOAD", NULL };
	const struct sp_test_exec x = {
		.wrapper = cmd, .env = env,
		.arg = "test_valgrind_child_leak_search",
	};
	int status;

	(void)state;
	if (getenv("SP_SAN_CHILD_LEAK")) {	/* the run under valgrind */
		if (!sp_test_under_valgrind())
			fail_msg("SP_SAN_CHILD_LEAK=1 but not under valgrind");
		status = fork_leaker(false);
		printf("# a leaking child: exit status %d\n", status);
		assert_int_equal(status, 0);
		status = fork_leaker(true);
		printf("# a leaking child with the search on: exit status "
		       "%d\n", status);
		assert_int_equal(status, 99);
		return;
	}
	need_valgrind();
	assert_int_equal(sp_test_exec_self(&x, report, sizeof(report),
					   &status), 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("the run under valgrind: status %#x; its stderr:\n%s",
			 status, report);
}

/* Under valgrind: a free object is inaccessible, an allocated one is not. */
static void test_memcheck_state(void **state)
{
	struct segpool_cache *c;
	char *obj, vbits[40];

	(void)state;
	if (!SP_VALGRIND || !sp_test_under_valgrind()) {
		printf("# skip: runs under valgrind only (the CI's valgrind "
		       "step)\n");
		skip();
	}
#if SP_VALGRIND
	c = segpool_cache_create("san-vbits", 40, 0, 0, NULL);
	assert_non_null(c);
	obj = segpool_cache_alloc(c, 0);
	assert_non_null(obj);
	/* 1: addressable (contents undefined, as after malloc) */
	assert_int_equal(VALGRIND_GET_VBITS(obj, vbits, 40), 1);
	segpool_cache_free(c, obj);
	/* 3: not addressable; GET_VBITS says so without reporting an error */
	assert_int_equal(VALGRIND_GET_VBITS(obj, vbits, 40), 3);
	assert_int_equal(segpool_cache_destroy(c), 0);
#else
	(void)c;
	(void)obj;
	(void)vbits;
#endif
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_asan_uaf_read),
	cmocka_unit_test(test_asan_uaf_write),
	cmocka_unit_test(test_asan_overflow),
	cmocka_unit_test(test_asan_malloc_uaf),
	cmocka_unit_test(test_asan_object_bounds),
	cmocka_unit_test(test_valgrind_uaf_read),
	cmocka_unit_test(test_valgrind_uaf_write),
	cmocka_unit_test(test_valgrind_malloc_uaf),
	cmocka_unit_test(test_valgrind_overflow),
	cmocka_unit_test(test_valgrind_leak),
	cmocka_unit_test(test_valgrind_child_leak_search),
	cmocka_unit_test(test_memcheck_state),
};

SP_TEST_MAIN(tests)
