// SPDX-License-Identifier: MIT
/*
 * selftests/unit/test_debug.c - the debug caches: each detector with its bug
 * planted on purpose, the report it prints and the response.
 *
 * The aborting cases run in a forked child (run_child()) whose stderr is
 * captured and whose signal must be SIGABRT; the log-and-continue cases
 * run in this process with stderr captured in a memfd (capture_begin() /
 * capture_end()), and then check that the cache is still whole.  The
 * planted writes land in red zones and free objects inside segpool's own
 * mapped memory, which neither ASan nor valgrind watches: the reports here
 * are segpool's own.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "selftests/lib/harness.h"
#include "core/core.h"
#include "slab/debug.h"
#include "slab/harden.h"

#define DBG_ALL		SEGPOOL_DEBUG_FLAGS

/* --- helpers -------------------------------------------------------------- */

struct child {
	int status;			/* waitpid status */
	char err[32768];		/* its stderr */
};

/* Run @fn(@arg) in a forked child; collect its stderr and status. */
static void run_child(void (*fn)(void *), void *arg, struct child *r)
{
	assert_int_equal(sp_test_run_child(fn, arg, r->err, sizeof(r->err),
					   &r->status), 0);
	printf("# child stderr (status %#x):\n%s", r->status, r->err);
}

static void expect_abort(const struct child *r)
{
	if (!WIFSIGNALED(r->status) || WTERMSIG(r->status) != SIGABRT)
		fail_msg("child did not abort (status %#x); stderr:\n%s",
			 r->status, r->err);
}

/* Fail unless @text holds the printf-formatted needle. */
static __attribute__((format(printf, 2, 3)))
void expect_text(const char *text, const char *fmt, ...)
{
	char needle[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(needle, sizeof(needle), fmt, ap);
	va_end(ap);
	if (!strstr(text, needle))
		fail_msg("report lacks \"%s\":\n%s", needle, text);
}

static size_t count_text(const char *text, const char *needle)
{
	size_t n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* stderr of this process into a memfd, for log-and-continue cases */
static int capture_fd = -1, saved_stderr = -1;
static char captured[32768];

static void capture_begin(void)
{
	fflush(stderr);
	capture_fd = memfd_create("test_debug-stderr", 0);
	assert_true(capture_fd >= 0);
	saved_stderr = dup(STDERR_FILENO);
	assert_true(saved_stderr >= 0);
	assert_int_equal(dup2(capture_fd, STDERR_FILENO), STDERR_FILENO);
}

static const char *capture_end(void)
{
	ssize_t n;

	fflush(stderr);
	dup2(saved_stderr, STDERR_FILENO);
	close(saved_stderr);
	n = pread(capture_fd, captured, sizeof(captured) - 1, 0);
	close(capture_fd);
	captured[n > 0 ? n : 0] = '\0';
	/* show it in the test log too */
	printf("# captured stderr:\n%s", captured);
	return captured;
}

static struct segpool_cache *mk(const char *name, size_t size,
				unsigned long flags)
{
	struct segpool_cache *c = segpool_cache_create(name, size, 0, flags,
						       NULL);

	if (!c)
		fail_msg("create %s: %s", name, strerror(errno));
	return c;
}

static int teardown_response(void **state)
{
	(void)state;
	segpool_debug_set_response(SEGPOOL_DEBUG_ABORT);
	return 0;
}

static int setup_continue(void **state)
{
	(void)state;
	return segpool_debug_set_response(SEGPOOL_DEBUG_CONTINUE) ==
	       SEGPOOL_DEBUG_ABORT ? 0 : -1;
}

/* --- the debug path and the layout ---------------------------------------- */

static void test_debug_cache_layout(void **state)
{
	struct segpool_cache *c = mk("dbg-layout", 60, DBG_ALL);
	struct segpool_cache *h = segpool_cache_create("dbg-layout-hw", 100, 0,
				SEGPOOL_HWCACHE_ALIGN | SEGPOOL_RED_ZONE, NULL);
	unsigned char *objs[40];

	(void)state;
	assert_non_null(h);
	/* no magazines: every allocation and free reaches the checks */
	assert_null(c->pcpu);
	assert_null(h->pcpu);
	for (int i = 0; i < 40; i++) {
		objs[i] = segpool_cache_alloc(c, 0);
		assert_non_null(objs[i]);
		/* handed out with the poison of a free object */
		assert_true(sp_test_all_bytes(objs[i], SP_DEBUG_POISON, 59));
		assert_int_equal(objs[i][59], SP_DEBUG_POISON_END);
		/* the red zones around it */
		assert_true(sp_test_all_bytes(objs[i] - c->dbg.red_left,
					      SP_DEBUG_RED, c->dbg.red_left));
		assert_true(sp_test_all_bytes(objs[i] + 60, SP_DEBUG_RED,
					      c->dbg.red_end - 60));
		memset(objs[i], 0x11 * (i + 1), 60);
		for (int j = 0; j < i; j++)
			assert_true(objs[j] + 60 + c->dbg.red_left <= objs[i] ||
				    objs[i] + 60 + c->dbg.red_left <= objs[j]);
	}
	for (int i = 0; i < 40; i++) {
		void *x = segpool_cache_alloc(h, SEGPOOL_ZERO);

		assert_non_null(x);
		assert_int_equal((uintptr_t)x % 64, 0);
		assert_true(sp_test_all_bytes(x, 0, 100));
		segpool_cache_free(h, x);
	}
	for (int i = 0; i < 40; i++) {
		/* the neighbours' writes did not reach this one */
		assert_true(sp_test_all_bytes(
			objs[i], (unsigned char)(0x11 * (i + 1)), 60));
		segpool_cache_free(c, objs[i]);
	}
	assert_int_equal(segpool_cache_validate(c), 0);
	assert_int_equal(segpool_cache_validate(h), 0);
	assert_int_equal(segpool_cache_destroy(c), 0);
	assert_int_equal(segpool_cache_destroy(h), 0);
}

/* Bulk calls take the same checks, object by object. */
static void test_debug_bulk(void **state)
{
	struct segpool_cache *c = mk("dbg-bulk", 24, DBG_ALL);
	void *objs[300];

	(void)state;
	assert_int_equal(segpool_cache_alloc_bulk(c, SEGPOOL_ZERO, 300, objs),
			 300);
	for (int i = 0; i < 300; i++) {
		uint64_t st;

		assert_true(sp_test_all_bytes(objs[i], 0, 24));
		memcpy(&st, (char *)objs[i] + c->dbg.state, sizeof(st));
		assert_true(st == SP_DEBUG_STATE_ALLOC);
	}
	{
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		assert_non_null(f);
		assert_int_equal(segpool_cache_leaks(c, f), 300);
		fclose(f);
		assert_int_equal(count_text(text, "LEAK in cache dbg-bulk"),
				 300);
		assert_int_equal(count_text(text, "allocated by thread"), 300);
		free(text);
	}
	segpool_cache_free_bulk(c, 300, objs);
	/* every state word says free, every object holds its poison */
	assert_int_equal(segpool_cache_validate(c), 0);
	assert_int_equal(segpool_cache_leaks(c, NULL), 0);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

static int ctor_calls;

static void ctor_fill(void *p)
{
	memset(p, 0x5a, 32);
	ctor_calls++;
}

/* Poison is off for a cache with a ctor: objects keep constructed state. */
static void test_debug_ctor_keeps_state(void **state)
{
	struct segpool_cache *c = segpool_cache_create("dbg-ctor", 32, 0,
						       DBG_ALL, ctor_fill);
	unsigned char *p, *q;

	(void)state;
	assert_non_null(c);
	assert_int_equal(c->dbg.poison, 0);
	p = segpool_cache_alloc(c, 0);
	assert_non_null(p);
	assert_true(ctor_calls > 0);
	assert_true(sp_test_all_bytes(p, 0x5a, 32));
	segpool_cache_free(c, p);
	q = segpool_cache_alloc(c, 0);
	assert_ptr_equal(p, q);
	assert_true(sp_test_all_bytes(q, 0x5a, 32));
	segpool_cache_free(c, q);
	assert_int_equal(segpool_cache_validate(c), 0);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* --- overflow and underflow ----------------------------------------------- */

struct plant {
	struct segpool_cache *c, *other;
	unsigned char *obj, *obj2;
};

static void die_overflow(void *arg)
{
	struct plant *p = arg;

	p->obj[60] = 0x41;		/* one byte past the 60-byte object */
	segpool_cache_free(p->c, p->obj);
}

static void test_overflow_aborts(void **state)
{
	struct plant p = { .c = mk("dbg-over", 60, DBG_ALL) };
	static struct child r;

	(void)state;
	p.obj = segpool_cache_alloc(p.c, 0);
	assert_non_null(p.obj);
	run_child(die_overflow, &p, &r);
	expect_abort(&r);
	expect_text(r.err, "segpool: BUG right-redzone in cache dbg-over: "
		    "object %p offset 60\n", (void *)p.obj);
	expect_text(r.err, "bytes 60..60 of the object (size 60)");
	expect_text(r.err, "expected: bb\n");
	expect_text(r.err, "found:    41\n");
	expect_text(r.err, "allocated by thread %d, seq ", (int)gettid());
	expect_text(r.err, "response: abort");
	assert_int_equal(count_text(r.err, "BUG "), 1);
	segpool_cache_free(p.c, p.obj);
	assert_int_equal(segpool_cache_destroy(p.c), 0);
}

static void die_underflow(void *arg)
{
	struct plant *p = arg;

	p->obj[-1] = 0;			/* one byte before the object */
	segpool_cache_free(p->c, p->obj);
}

static void test_underflow_aborts(void **state)
{
	struct plant p = { .c = mk("dbg-under", 48, SEGPOOL_RED_ZONE) };
	static struct child r;

	(void)state;
	p.obj = segpool_cache_alloc(p.c, 0);
	assert_non_null(p.obj);
	run_child(die_underflow, &p, &r);
	expect_abort(&r);
	expect_text(r.err, "segpool: BUG left-redzone in cache dbg-under: "
		    "object %p offset -1\n", (void *)p.obj);
	expect_text(r.err, "found:    00\n");
	/* no U: the report says the sites were not recorded */
	expect_text(r.err, "call sites: not recorded");
	segpool_cache_free(p.c, p.obj);
	assert_int_equal(segpool_cache_destroy(p.c), 0);
}

static void test_overflow_continues(void **state)
{
	struct segpool_cache *c = mk("dbg-over-cont", 60, DBG_ALL);
	unsigned char *p = segpool_cache_alloc(c, 0);
	const char *err;

	(void)state;
	assert_non_null(p);
	memset(p, 1, 60);
	p[60] = 0x41;
	p[62] = 0x42;
	p[-2] = 0x43;
	capture_begin();
	segpool_cache_free(c, p);
	err = capture_end();
	expect_text(err, "segpool: BUG right-redzone in cache dbg-over-cont: "
		    "object %p offset 60\n", (void *)p);
	expect_text(err, "bytes 60..62 of the object");
	expect_text(err, "found:    41 bb 42\n");
	expect_text(err, "segpool: BUG left-redzone in cache dbg-over-cont: "
		    "object %p offset -2\n", (void *)p);
	expect_text(err, "response: continue (red zone restored)");
	expect_text(err, "allocated by thread");
	assert_int_equal(count_text(err, "BUG "), 2);
	/* freed all the same, red zones restored: the cache is whole */
	assert_int_equal(segpool_cache_validate(c), 0);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* --- write after free ----------------------------------------------------- */

static void die_use_after_free(void *arg)
{
	struct plant *p = arg;

	p->obj[5] = 0x01;		/* the object is free */
	(void)!segpool_cache_alloc(p->c, 0);
}

static void test_use_after_free_aborts(void **state)
{
	struct plant p = { .c = mk("dbg-uaf", 64, DBG_ALL) };
	static struct child r;

	(void)state;
	p.obj = segpool_cache_alloc(p.c, 0);
	assert_non_null(p.obj);
	segpool_cache_free(p.c, p.obj);
	run_child(die_use_after_free, &p, &r);
	expect_abort(&r);
	expect_text(r.err, "segpool: BUG use-after-free in cache dbg-uaf: "
		    "object %p offset 5\n", (void *)p.obj);
	expect_text(r.err, "expected: 6b\n");
	expect_text(r.err, "found:    01\n");
	expect_text(r.err, "allocated by thread");
	expect_text(r.err, "freed by thread %d, seq ", (int)gettid());
	assert_int_equal(segpool_cache_destroy(p.c), 0);
}

static void test_use_after_free_continues(void **state)
{
	struct segpool_cache *c = mk("dbg-uaf-cont", 64, SEGPOOL_POISON);
	unsigned char *p = segpool_cache_alloc(c, 0), *q;
	const char *err;

	(void)state;
	assert_non_null(p);
	segpool_cache_free(c, p);
	p[10] = 0;
	p[11] = 0;
	p[63] = 0x6b;			/* the last byte should be 0xa5 */
	capture_begin();
	q = segpool_cache_alloc(c, 0);
	err = capture_end();
	assert_ptr_equal(q, p);
	expect_text(err, "segpool: BUG use-after-free in cache dbg-uaf-cont: "
		    "object %p offset 10\n", (void *)p);
	expect_text(err, "bytes 10..63 of the object (size 64)");
	expect_text(err, "expected: 6b 6b 6b");
	expect_text(err, "found:    00 00 6b");
	expect_text(err, "response: continue (poison restored)");
	/* handed out with its poison back in place */
	assert_true(sp_test_all_bytes(q, SP_DEBUG_POISON, 63));
	assert_int_equal(q[63], SP_DEBUG_POISON_END);
	segpool_cache_free(c, q);
	assert_int_equal(segpool_cache_validate(c), 0);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* --- double free ---------------------------------------------------------- */

static void die_double_free(void *arg)
{
	struct plant *p = arg;

	/* another free in between: in a magazine, @obj would lie below */
	segpool_cache_free(p->c, p->obj);
	segpool_cache_free(p->c, p->obj2);
	segpool_cache_free(p->c, p->obj);
}

static void test_double_free_aborts(void **state)
{
	struct plant p = { .c = mk("dbg-dfree", 40, SEGPOOL_STORE_USER) };
	static struct child r;

	(void)state;
	p.obj = segpool_cache_alloc(p.c, 0);
	p.obj2 = segpool_cache_alloc(p.c, 0);
	assert_non_null(p.obj);
	assert_non_null(p.obj2);
	run_child(die_double_free, &p, &r);
	expect_abort(&r);
	expect_text(r.err, "segpool: BUG double-free in cache dbg-dfree: "
		    "object %p offset 0\n", (void *)p.obj);
	expect_text(r.err, "object freed again: it is free already");
	expect_text(r.err, "freed by thread ");	/* the child's */
	/* the first free's site, then the abort */
	assert_int_equal(count_text(r.err, "#0 "), 2);
	segpool_cache_free(p.c, p.obj);
	segpool_cache_free(p.c, p.obj2);
	assert_int_equal(segpool_cache_destroy(p.c), 0);
}

/*
 * A call site starts at the program's caller: the library's frames on the
 * way to the hook (sp_cache_alloc_slow, sp_alloc_objs, sp_slab_take,
 * sp_node_take, ...) are left out, as KASAN leaves its own.
 */
static __attribute__((noinline)) void *alloc_site(struct segpool_cache *c)
{
	void *p = segpool_cache_alloc(c, 0);

	__asm__ volatile("" ::: "memory");	/* not a tail call */
	return p;
}

static __attribute__((noinline)) void free_site(void *arg)
{
	struct plant *p = arg;

	segpool_cache_free(p->c, p->obj);
	__asm__ volatile("" ::: "memory");
	segpool_cache_free(p->c, p->obj);	/* the double free */
	__asm__ volatile("" ::: "memory");
}

/* The address of frame #0 after @label in @err, or 0. */
static uintptr_t first_frame(const char *err, const char *label)
{
	const char *p = strstr(err, label);
	unsigned long a;

	if (!p || !(p = strstr(p, "#0 ")) || sscanf(p + 3, "%lx", &a) != 1)
		return 0;
	return (uintptr_t)a;
}

static void expect_in(uintptr_t a, void *fn, const char *what,
		      const char *err)
{
	uintptr_t f = (uintptr_t)fn;

	/* a return address within the first bytes of the function */
	if (a <= f || a > f + 512)
		fail_msg("%s: frame #0 %#lx is not in its caller %#lx; "
			 "stderr:\n%s", what, (unsigned long)a,
			 (unsigned long)f, err);
}

static void test_trace_starts_at_caller(void **state)
{
	struct plant p = { .c = mk("dbg-trace", 40, SEGPOOL_STORE_USER) };
	static struct child r;

	(void)state;
	p.obj = alloc_site(p.c);
	assert_non_null(p.obj);
	run_child(free_site, &p, &r);
	expect_abort(&r);
	expect_in(first_frame(r.err, "allocated by"), (void *)alloc_site,
		  "allocation", r.err);
	expect_in(first_frame(r.err, "freed by"), (void *)free_site, "free",
		  r.err);
	segpool_cache_free(p.c, p.obj);
	assert_int_equal(segpool_cache_destroy(p.c), 0);
}

static void test_double_free_continues(void **state)
{
	struct segpool_cache *c = mk("dbg-dfree-cont", 40, SEGPOOL_RED_ZONE);
	void *a = segpool_cache_alloc(c, 0), *b = segpool_cache_alloc(c, 0);
	void *x, *y;
	const char *err;

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	segpool_cache_free(c, a);
	capture_begin();
	segpool_cache_free(c, a);	/* immediate repeat */
	err = capture_end();
	expect_text(err, "segpool: BUG double-free in cache dbg-dfree-cont: "
		    "object %p offset 0\n", a);
	expect_text(err, "response: continue (free ignored)");
	segpool_cache_free(c, b);
	capture_begin();
	segpool_cache_free(c, a);	/* with another free in between */
	err = capture_end();
	expect_text(err, "segpool: BUG double-free in cache dbg-dfree-cont: "
		    "object %p offset 0\n", a);
	/* ignored: each object comes back once */
	assert_int_equal(segpool_cache_validate(c), 0);
	x = segpool_cache_alloc(c, 0);
	y = segpool_cache_alloc(c, 0);
	assert_ptr_not_equal(x, y);
	assert_true((x == a && y == b) || (x == b && y == a));
	segpool_cache_free(c, x);
	segpool_cache_free(c, y);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* --- free into another cache ---------------------------------------------- */

static void die_wrong_cache(void *arg)
{
	struct plant *p = arg;

	segpool_cache_free(p->other, p->obj);
}

static void test_wrong_cache_aborts(void **state)
{
	struct plant p = { .c = mk("dbg-owner", 64, DBG_ALL),
			   .other = mk("dbg-other", 64, DBG_ALL) };
	static struct child r;

	(void)state;
	p.obj = segpool_cache_alloc(p.c, 0);
	assert_non_null(p.obj);
	run_child(die_wrong_cache, &p, &r);
	expect_abort(&r);
	expect_text(r.err, "segpool: BUG wrong-cache in cache dbg-other: "
		    "object %p offset 0\n", (void *)p.obj);
	expect_text(r.err, "object belongs to cache dbg-owner");
	expect_text(r.err, "allocated by thread %d, seq ", (int)gettid());
	segpool_cache_free(p.c, p.obj);
	assert_int_equal(segpool_cache_destroy(p.c), 0);
	assert_int_equal(segpool_cache_destroy(p.other), 0);
}

static void test_wrong_cache_continues(void **state)
{
	struct segpool_cache *a = mk("dbg-wc-a", 64, SEGPOOL_STORE_USER);
	/* a cache without debug flags still gets the debug report */
	struct segpool_cache *b = mk("dbg-wc-b", 64, 0);
	char *p = segpool_cache_alloc(a, 0);
	const char *err;

	(void)state;
	assert_non_null(p);
	capture_begin();
	segpool_cache_free(b, p);
	segpool_cache_free(a, p + 8);	/* and an interior pointer */
	err = capture_end();
	expect_text(err, "segpool: BUG wrong-cache in cache dbg-wc-b: "
		    "object %p offset 0\n", (void *)p);
	expect_text(err, "segpool: BUG interior-free in cache dbg-wc-a: "
		    "object %p offset 8\n", (void *)p);
	expect_text(err, "response: continue (free ignored)");
	/* neither free happened: the object is still allocated */
	assert_int_equal(segpool_cache_leaks(a, NULL), 1);
	segpool_cache_free(a, p);
	assert_int_equal(segpool_cache_validate(a), 0);
	assert_int_equal(segpool_cache_destroy(a), 0);
	assert_int_equal(segpool_cache_destroy(b), 0);
}

/* --- free-list links (F) -------------------------------------------------- */

static void test_freelist_corrupt_continues(void **state)
{
	struct segpool_cache *c = mk("dbg-flist", 64,
				     SEGPOOL_CONSISTENCY_CHECKS);
	void *keep = segpool_cache_alloc(c, 0);	/* the slab stays in use */
	void *a = segpool_cache_alloc(c, 0), *b = segpool_cache_alloc(c, 0);
	void *x, *bad = (void *)0x1234, *saved;
	uintptr_t raw;
	const char *err;

	(void)state;
	assert_non_null(keep);
	segpool_cache_free(c, a);
	segpool_cache_free(c, b);	/* b heads the list, its link is a */
	memcpy(&saved, (char *)b + c->fp_offset, sizeof(saved));
	sp_set_freeptr(c, b, bad);
	memcpy(&raw, (char *)b + c->fp_offset, sizeof(raw));
	capture_begin();
	assert_int_equal(segpool_cache_validate(c), 1);
	err = capture_end();
	/* the stored word, not what it decodes to */
	expect_text(err, "the link of free object %p (offset %u holds %#018lx) "
		    "leads to no other free object of the slab (after 1 links)",
		    b, c->fp_offset, (unsigned long)raw);
	capture_begin();
	x = segpool_cache_alloc(c, 0);
	err = capture_end();
	assert_ptr_equal(x, b);
	expect_text(err, "segpool: BUG freelist-corrupt in cache dbg-flist: "
		    "object %p offset 0\n", b);
	expect_text(err, "response: continue (rest of the free list dropped)");
	/* a is lost with the rest of the list: the counts say so */
	capture_begin();
	assert_int_equal(segpool_cache_validate(c), 1);
	err = capture_end();
	expect_text(err, "segpool: BUG slab-corrupt in cache dbg-flist");
	/* put the slab right for the teardown */
	sp_set_freeptr(c, b, saved);
	{
		struct sp_slab *s = sp_obj_to_slab(b);

		pthread_mutex_lock(&c->node[s->node].lock);
		s->freelist = a;
		pthread_mutex_unlock(&c->node[s->node].lock);
	}
	assert_int_equal(segpool_cache_validate(c), 0);
	segpool_cache_free(c, x);
	segpool_cache_free(c, keep);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* --- segpool_cache_validate() --------------------------------------------- */

static void test_validate_finds_planted(void **state)
{
	struct segpool_cache *c = mk("dbg-validate", 100, DBG_ALL);
	unsigned char *live = segpool_cache_alloc(c, 0);
	unsigned char *dead = segpool_cache_alloc(c, 0);
	const char *err;

	(void)state;
	assert_non_null(live);
	assert_non_null(dead);
	segpool_cache_free(c, dead);
	assert_int_equal(segpool_cache_validate(c), 0);
	live[103] = 7;			/* overflow of a live object */
	dead[50] = 7;			/* write into a free one */
	capture_begin();
	assert_int_equal(segpool_cache_validate(c), 2);
	err = capture_end();
	expect_text(err, "segpool: BUG right-redzone in cache dbg-validate: "
		    "object %p offset 103\n", (void *)live);
	expect_text(err, "segpool: BUG use-after-free in cache dbg-validate: "
		    "object %p offset 50\n", (void *)dead);
	expect_text(err,
		    "found by segpool_cache_validate(): red zone restored");
	/* validate never aborts, whatever the response */
	assert_int_equal(segpool_cache_validate(c), 0);

	/* an overwritten state word (metadata past the red zone) */
	{
		uint64_t st, junk = 0x4141414141414141ULL;

		memcpy(&st, live + c->dbg.state, sizeof(st));
		assert_true(st == SP_DEBUG_STATE_ALLOC);
		memcpy(live + c->dbg.state, &junk, sizeof(junk));
		capture_begin();
		/*
		 * the state word, and the count of
		 * objects it no longer adds up to
		 */
		assert_int_equal(segpool_cache_validate(c), 2);
		err = capture_end();
		expect_text(err,
			    "segpool: BUG bad-state in cache dbg-validate: "
			    "object %p offset 0\n",
			    (void *)live);
		expect_text(err,
			    "segpool: BUG slab-corrupt in cache dbg-validate");
		memcpy(live + c->dbg.state, &st, sizeof(st));
		assert_int_equal(segpool_cache_validate(c), 0);
	}
	segpool_cache_free(c, live);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* A cache without debug flags: the free-list walk and the counts. */
static void test_validate_plain_cache(void **state)
{
	/* linked: a cache of small objects is a map otherwise */
	struct segpool_cache *c = sp_test_linked_cache("dbg-validate-plain", 48,
						       0, NULL);
	void *objs[64], *saved[64];
	const char *err;

	(void)state;
	assert_int_equal(segpool_cache_alloc_bulk(c, 0, 64, objs), 64);
	for (int i = 0; i < 64; i += 2)
		segpool_cache_free(c, objs[i]);
	segpool_cache_shrink(c);	/* magazines back to the slab lists */
	assert_int_equal(segpool_cache_validate(c), 0);
	for (int i = 0; i < 64; i += 2) {
		char *link = (char *)objs[i] + c->fp_offset;

		/* free memory to ASan and memcheck: open it as the slab does */
		sp_san_link_open(c, link);
		memcpy(&saved[i], link, sizeof(void *));
		memset(link, 0x77, sizeof(void *));	/* the links */
		sp_san_link_close(c, link);
	}
	capture_begin();
	assert_true(segpool_cache_validate(c) >= 1);
	err = capture_end();
	expect_text(err, "segpool: BUG freelist-corrupt in cache "
		    "dbg-validate-plain: object ");
	/* the planted bytes, hardened or not: never what they decode to */
	expect_text(err, "holds 0x7777777777777777) leads to no other free "
		    "object");
	for (int i = 0; i < 64; i += 2) {
		char *link = (char *)objs[i] + c->fp_offset;

		sp_san_link_open(c, link);
		memcpy(link, &saved[i], sizeof(void *));
		sp_san_link_close(c, link);
	}
	assert_int_equal(segpool_cache_validate(c), 0);
	for (int i = 1; i < 64; i += 2)
		segpool_cache_free(c, objs[i]);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* --- leaks ---------------------------------------------------------------- */

static void test_leak_report(void **state)
{
	struct segpool_cache *c = mk("dbg-leak", 48, SEGPOOL_STORE_USER);
	void *a = segpool_cache_alloc(c, 0), *b = segpool_cache_alloc(c, 0);
	void *d = segpool_cache_alloc(c, 0);
	char *text = NULL;
	size_t len = 0;
	const char *err;
	FILE *f;

	(void)state;
	segpool_cache_free(c, d);
	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(segpool_cache_leaks(c, f), 2);
	fclose(f);
	printf("# leaks:\n%s", text);
	expect_text(text,
		    "segpool: LEAK in cache dbg-leak: object %p size 48\n", a);
	expect_text(text,
		    "segpool: LEAK in cache dbg-leak: object %p size 48\n", b);
	assert_int_equal(count_text(text, "allocated by thread"), 2);
	assert_int_equal(count_text(text, "LEAK"), 2);
	free(text);

	/* destroy lists them too, and keeps the cache */
	capture_begin();
	assert_int_equal(segpool_cache_destroy(c), -EBUSY);
	err = capture_end();
	expect_text(err, "cache dbg-leak destroyed with 2 live objects");
	expect_text(err, "segpool: LEAK in cache dbg-leak: object %p size 48\n",
		    a);
	expect_text(err, "segpool: LEAK in cache dbg-leak: object %p size 48\n",
		    b);
	expect_text(err, "allocated by thread %d, seq ", (int)gettid());
	segpool_cache_free(c, a);
	segpool_cache_free(c, b);
	assert_int_equal(segpool_cache_leaks(c, NULL), 0);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/*
 * The leak list is written with no node lock held (issue 23, item 4): a
 * FILE whose writer allocates from the very cache being listed (a logging
 * thread's stream) must not deadlock.  In a child whose alarm fires after
 * SP_TEST_CHILD_TIMEOUT seconds should the writer hang.
 */
struct leak_writer {
	struct segpool_cache *c;
	unsigned long writes;
};

static ssize_t leak_writer_write(void *cookie, const char *buf, size_t size)
{
	struct leak_writer *w = cookie;
	static void *objs[1000];

	(void)buf;
	/* enough to run past any magazine into the slab layer */
	for (int i = 0; i < 1000; i++)
		objs[i] = segpool_cache_alloc(w->c, 0);
	for (int i = 0; i < 1000; i++)
		segpool_cache_free(w->c, objs[i]);
	w->writes++;
	return (ssize_t)size;
}

static void child_leaks_to_allocating_writer(void *arg)
{
	const char *name = arg;
	struct leak_writer w = { .c = mk(name, 48, name[0] == 'd' ?
					 SEGPOOL_STORE_USER : 0) };
	cookie_io_functions_t io = { .write = leak_writer_write };
	void *held[3];
	FILE *f;

	for (int i = 0; i < 3; i++)
		held[i] = segpool_cache_alloc(w.c, 0);
	f = fopencookie(&w, "w", io);
	if (!f)
		exit(2);
	setvbuf(f, NULL, _IONBF, 0);	/* every write reaches the writer */
	if (segpool_cache_leaks(w.c, f) != 3 || !w.writes)
		exit(3);
	fclose(f);
	for (int i = 0; i < 3; i++)
		segpool_cache_free(w.c, held[i]);
	exit(segpool_cache_destroy(w.c) == 0 ? 0 : 4);
}

static void test_leaks_writer_allocates(void **state)
{
	static char buf[1 << 14];
	const char *names[] = { "dbg-leak-writer", "plain-leak-writer" };
	int status;

	(void)state;
	for (size_t i = 0; i < SP_ARRAY_SIZE(names); i++) {
		assert_int_equal(
			sp_test_run_child(child_leaks_to_allocating_writer,
					  (void *)names[i], buf, sizeof(buf),
					  &status),
			0);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			fail_msg("%s: child status %#x (a hang dies of "
				 "SIGALRM); stderr: %s", names[i], status, buf);
	}
}

/* Any cache: the objects in use, by address, magazines drained first. */
static void test_leaks_plain_cache(void **state)
{
	struct segpool_cache *c = mk("dbg-leak-plain", 32, 0);
	void *objs[100];
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	for (int i = 0; i < 100; i++)
		assert_non_null(objs[i] = segpool_cache_alloc(c, 0));
	for (int i = 0; i < 100; i++)
		if (i % 10)
			/* most into magazines */
			segpool_cache_free(c, objs[i]);
	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(segpool_cache_leaks(c, f), 10);
	fclose(f);
	for (int i = 0; i < 100; i += 10)
		expect_text(text, "LEAK in cache dbg-leak-plain: object %p "
			    "size 32\n", objs[i]);
	assert_int_equal(count_text(text, "LEAK"), 10);
	free(text);
	for (int i = 0; i < 100; i += 10)
		segpool_cache_free(c, objs[i]);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* --- API arguments -------------------------------------------------------- */

static void test_api_args(void **state)
{
	struct segpool_cache *k;

	(void)state;
	errno = 0;
	assert_int_equal(segpool_cache_validate(NULL), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(segpool_cache_leaks(NULL, stderr), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(segpool_debug_set_response(7), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(segpool_cache_find(NULL));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(segpool_cache_find("dbg-no-such-cache"));
	assert_int_equal(errno, ENOENT);
	k = segpool_cache_find("kmalloc-64");
	assert_non_null(k);
	assert_string_equal(segpool_cache_name(k), "kmalloc-64");
	assert_int_equal(segpool_cache_validate(k), 0);
	assert_int_equal(segpool_debug_set_response(SEGPOOL_DEBUG_CONTINUE),
			 SEGPOOL_DEBUG_ABORT);
	assert_int_equal(segpool_debug_set_response(SEGPOOL_DEBUG_ABORT),
			 SEGPOOL_DEBUG_CONTINUE);
}

/* --- threads -------------------------------------------------------------- */

struct worker {
	struct segpool_cache *c;
	void **slots;			/* shared hand-over slots */
	unsigned int nslots, id, rounds;
	uint64_t seed;
	unsigned int failed;		/* allocations that failed: the test
					 * thread asserts (cmocka's asserts
					 * belong to it) */
};

static void *dbg_worker(void *arg)
{
	struct worker *w = arg;
	uint64_t st = w->seed;

	for (unsigned int i = 0; i < w->rounds; i++) {
		unsigned int k = (unsigned int)(sp_test_rand(&st) % w->nslots);
		void *mine = segpool_cache_alloc(w->c, 0), *theirs;

		if (!mine) {
			w->failed++;
			continue;
		}
		memset(mine, (int)w->id, 40);
		/* swap into a slot: frees what another thread left there */
		theirs = __atomic_exchange_n(&w->slots[k], mine,
					     __ATOMIC_ACQ_REL);
		if (theirs)
			segpool_cache_free(w->c, theirs);
	}
	return NULL;
}

/* Cross-thread frees in a debug cache: no report, all consistent. */
static void test_debug_threads(void **state)
{
	struct segpool_cache *c = mk("dbg-threads", 40, DBG_ALL);
	unsigned int rounds = (unsigned int)sp_test_scaled(20000, 500);
	uint64_t seed = sp_test_seed();
	void *slots[16] = { NULL };
	struct worker w[4];
	pthread_t t[4];

	(void)state;
	for (unsigned int i = 0; i < 4; i++) {
		w[i] = (struct worker){ c, slots, 16, i + 1, rounds,
					seed + i + 1 };
		assert_int_equal(pthread_create(&t[i], NULL, dbg_worker, &w[i]),
				 0);
	}
	for (unsigned int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	for (unsigned int i = 0; i < 4; i++)
		assert_int_equal(w[i].failed, 0);
	assert_int_equal(segpool_cache_validate(c), 0);
	for (unsigned int i = 0; i < 16; i++)
		segpool_cache_free(c, slots[i]);
	assert_int_equal(segpool_cache_leaks(c, NULL), 0);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* --- SEGPOOL_DEBUG -------------------------------------------------------- */

static void test_env_parse(void **state)
{
	static struct sp_debug_env env;

	(void)state;
	assert_int_equal(sp_debug_env_parse(&env, "FZPU"), 0);
	assert_int_equal(sp_debug_env_flags(&env, "anything"), DBG_ALL);
	assert_int_equal(sp_debug_env_flags(&env, "kmalloc-64"), DBG_ALL);

	assert_int_equal(sp_debug_env_parse(&env, "ZP,conn_cache"), 0);
	assert_int_equal(sp_debug_env_flags(&env, "conn_cache"),
			 SEGPOOL_RED_ZONE | SEGPOOL_POISON);
	assert_int_equal(sp_debug_env_flags(&env, "conn_cache2"), 0);
	assert_int_equal(sp_debug_env_flags(&env, "kmalloc-64"), 0);

	/* several caches, several blocks, prefixes, lower case */
	assert_int_equal(sp_debug_env_parse(&env,
			 "fz,conn,req;P,kmalloc-*;U"), 0);
	assert_int_equal(sp_debug_env_flags(&env, "conn"),
			 SEGPOOL_CONSISTENCY_CHECKS | SEGPOOL_RED_ZONE);
	assert_int_equal(sp_debug_env_flags(&env, "req"),
			 SEGPOOL_CONSISTENCY_CHECKS | SEGPOOL_RED_ZONE);
	assert_int_equal(sp_debug_env_flags(&env, "kmalloc-64"),
			 SEGPOOL_POISON);
	assert_int_equal(sp_debug_env_flags(&env, "kmalloc-1k"),
			 SEGPOOL_POISON);
	assert_int_equal(sp_debug_env_flags(&env, "other"), SEGPOOL_STORE_USER);

	/* no letter: all four; "-": none (every cache but the size classes) */
	assert_int_equal(sp_debug_env_parse(&env, ",x"), 0);
	assert_int_equal(sp_debug_env_flags(&env, "x"), DBG_ALL);
	assert_int_equal(sp_debug_env_flags(&env, "y"), 0);
	assert_int_equal(sp_debug_env_parse(&env, "FZPU;-,kmalloc-*"), 0);
	assert_int_equal(sp_debug_env_flags(&env, "kmalloc-8"), 0);
	assert_int_equal(sp_debug_env_flags(&env, "conn"), DBG_ALL);

	/* the first block naming a cache wins */
	assert_int_equal(sp_debug_env_parse(&env, "Z,a*;P,abc"), 0);
	assert_int_equal(sp_debug_env_flags(&env, "abc"), SEGPOOL_RED_ZONE);

	/* junk is skipped, and said (by the caller, which reports) */
	assert_int_equal(sp_debug_env_parse(&env, "ZQ,conn"), -EINVAL);
	assert_string_equal(env.why, "unknown flag letter 'Q'");
	assert_int_equal(sp_debug_env_flags(&env, "conn"), SEGPOOL_RED_ZONE);
	assert_int_equal(sp_debug_env_parse(&env, "F-z9,conn;Y"), -EINVAL);
	/* the first */
	assert_string_equal(env.why, "unknown flag letter '9'");
	assert_int_equal(sp_debug_env_parse(&env, ""), 0);
	assert_int_equal(sp_debug_env_flags(&env, "conn"), 0);
	assert_int_equal(sp_debug_env_parse(&env, NULL), 0);

	/* as a bare slub_debug: 1 is every check on every cache; 0 none */
	static const char *const on[] = { "1", "yes", "On", "TRUE" };
	static const char *const off[] = { "0", "no", "OFF", "false" };

	for (size_t i = 0; i < sizeof(on) / sizeof(on[0]); i++) {
		assert_int_equal(sp_debug_env_parse(&env, on[i]), 0);
		assert_int_equal(sp_debug_env_flags(&env, "conn"), DBG_ALL);
		assert_int_equal(sp_debug_env_flags(&env, "kmalloc-64"),
				 DBG_ALL);
		assert_int_equal(sp_debug_env_parse(&env, off[i]), 0);
		assert_int_equal(sp_debug_env_flags(&env, "conn"), 0);
	}
	assert_int_equal(sp_debug_env_flags(&env, "conn"), 0);
}

static const char *const env_child[] = {
	"SEGPOOL_DEBUG=ZPU,kmalloc-64,dbg-env-*;F,dbg-envf",
	"SEGPOOL_DEBUG_RESPONSE=continue",
	"SEGPOOL_TEST_VARIANT=debug_env",
	NULL
};

/* The child of test_env: SEGPOOL_DEBUG as env_child sets it. */
static void test_env_child(void **state)
{
	struct segpool_cache *k64, *k128, *named, *f, *plain;
	const unsigned long zpu = SEGPOOL_RED_ZONE | SEGPOOL_POISON |
				  SEGPOOL_STORE_USER;
	const char *v = sp_test_variant();
	volatile size_t at = 64;
	unsigned char *p, *q;
	const char *err;

	(void)state;
	if (!v || strcmp(v, "debug_env"))
		skip();
	k64 = segpool_cache_find("kmalloc-64");
	k128 = segpool_cache_find("kmalloc-128");
	assert_non_null(k64);
	assert_non_null(k128);
	assert_int_equal(k64->flags & SP_CACHE_DEBUG, zpu);
	assert_null(k64->pcpu);
	assert_int_equal(k128->flags & SP_CACHE_DEBUG, 0);
	named = mk("dbg-env-conn", 64, 0);
	f = mk("dbg-envf", 64, 0);
	plain = mk("dbg-plain", 64, SEGPOOL_POISON);
	assert_int_equal(named->flags & SP_CACHE_DEBUG, zpu);
	assert_int_equal(f->flags & SP_CACHE_DEBUG, SEGPOOL_CONSISTENCY_CHECKS);
	assert_int_equal(plain->flags & SP_CACHE_DEBUG, SEGPOOL_POISON);

	/* segpool_malloc() goes through the debug size class */
	p = segpool_malloc(64);
	q = segpool_malloc(50);
	assert_non_null(p);
	assert_non_null(q);
	assert_int_equal((uintptr_t)p % 64, 0);	/* natural alignment kept */
	assert_int_equal((uintptr_t)q % 64, 0);
	assert_int_equal(segpool_usable_size(p), 64);
	assert_int_equal(segpool_cache_leaks(k64, NULL) >= 2, 1);
	{
		/* p[64]: hidden from the compiler, which knows the size
		 * segpool_malloc() was given (and UBSan with it) */
		unsigned char *raw = p;

		__asm__("" : "+r"(raw));
		raw[at] = 0x99;
	}
	capture_begin();
	/* response continue, from the variable */
	segpool_free(p);
	err = capture_end();
	expect_text(err, "segpool: BUG right-redzone in cache kmalloc-64: "
		    "object %p offset 64\n", (void *)p);
	expect_text(err, "response: continue (red zone restored)");
	capture_begin();
	segpool_free(p);
	err = capture_end();
	expect_text(err, "segpool: BUG double-free in cache kmalloc-64: "
		    "object %p offset 0\n", (void *)p);
	segpool_free(q);
	assert_int_equal(segpool_cache_validate(k64), 0);
	assert_int_equal(segpool_cache_destroy(named), 0);
	assert_int_equal(segpool_cache_destroy(f), 0);
	assert_int_equal(segpool_cache_destroy(plain), 0);
}

static void test_env(void **state)
{
	int status;

	(void)state;
	if (sp_test_variant())
		skip();
	status = sp_test_rerun(env_child, "test_env_child");
	assert_int_equal(status, 0);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_debug_cache_layout),
	cmocka_unit_test(test_debug_ctor_keeps_state),
	cmocka_unit_test(test_debug_bulk),
	cmocka_unit_test(test_overflow_aborts),
	cmocka_unit_test(test_underflow_aborts),
	cmocka_unit_test_setup_teardown(test_overflow_continues,
					setup_continue, teardown_response),
	cmocka_unit_test(test_use_after_free_aborts),
	cmocka_unit_test_setup_teardown(test_use_after_free_continues,
					setup_continue, teardown_response),
	cmocka_unit_test(test_double_free_aborts),
	cmocka_unit_test(test_trace_starts_at_caller),
	cmocka_unit_test_setup_teardown(test_double_free_continues,
					setup_continue, teardown_response),
	cmocka_unit_test(test_wrong_cache_aborts),
	cmocka_unit_test_setup_teardown(test_wrong_cache_continues,
					setup_continue, teardown_response),
	cmocka_unit_test_setup_teardown(test_freelist_corrupt_continues,
					setup_continue, teardown_response),
	cmocka_unit_test(test_validate_finds_planted),
	cmocka_unit_test(test_validate_plain_cache),
	cmocka_unit_test(test_leak_report),
	cmocka_unit_test(test_leaks_plain_cache),
	cmocka_unit_test(test_leaks_writer_allocates),
	cmocka_unit_test(test_api_args),
	cmocka_unit_test(test_debug_threads),
	cmocka_unit_test(test_env_parse),
	cmocka_unit_test(test_env),
	cmocka_unit_test(test_env_child),
};

SP_TEST_MAIN(tests)
