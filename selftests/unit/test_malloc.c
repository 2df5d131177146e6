// SPDX-License-Identifier: MIT
/*
 * selftests/unit/test_malloc.c - the malloc replacement (malloc/) at API level.
 *
 * This program links malloc/'s objects statically, so its malloc(), free()
 * and operator new are segpool's for the whole process: cmocka, stdio and
 * the C library's own allocations included, as in a program linked with
 * -lsegpool-malloc.  Each test checks the C library's contract (glibc's
 * where it says more than C does), the hard cases of a replacement (the
 * bootstrap area, memory from C library calls, threads, fork, exec, dlopen)
 * and misuse reports.  The last tests run real programs under LD_PRELOAD of
 * the built libsegpool-malloc.so (the heavier tier is
 * scripts/check-preload.sh, `make check-preload`).  Under valgrind (which
 * replaces this program's malloc) and in sanitizer builds (whose malloc
 * must serve every call) it skips.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <iconv.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <segpool/segpool.h>
#include "segpool_config.h"
#include "selftests/lib/harness.h"

#ifdef CONFIG_SEGPOOL_SANITIZED
/*
 * A sanitizer brings its own malloc, which every call must reach: the
 * Makefile links no malloc/ objects into a sanitized build of this test.
 */
int main(void)
{
	printf("sanitizer build: its malloc serves this program; the malloc "
	       "replacement is tested in the plain build\n");
	return SP_TEST_SKIP_STATUS;
}
#else

#include "malloc/preload.h"
#include "malloc/symbols.h"

#ifndef SEGPOOL_MALLOC_SO_PATH
#error "the Makefile passes SEGPOOL_MALLOC_SO_PATH"
#endif
#ifndef SEGPOOL_MALLOC_DOC_PATH
#error "the Makefile passes SEGPOOL_MALLOC_DOC_PATH"
#endif

#define CHILD_TIMEOUT	60	/* seconds before a stuck child is killed */

/*
 * A pointer segpool handed out: segpool_usable_size() knows it (it answers
 * 0 with EINVAL for anything else, without aborting).
 */
static bool is_segpool(const void *p)
{
	return p && segpool_usable_size(p) > 0;
}

/* Keep the compiler from folding a malloc()/free() pair away. */
static void *volatile sink;

static size_t opaque(size_t v)
{
	__asm__ volatile("" : "+r"(v));
	return v;
}

static void *opaque_ptr(void *p)
{
	__asm__ volatile("" : "+r"(p));
	return p;
}

/* --- the C contract ------------------------------------------------------ */

static void test_malloc_basics(void **state)
{
	void *a, *b, *p;

	(void)state;
	a = malloc(0);
	b = malloc(0);
	assert_non_null(a);
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	assert_true(is_segpool(a));
	/* the open build serves: no heap profile was asked for */
	if (!getenv("SEGPOOL_HEAP_PROFILE")) {
		assert_true(sp_pl_fast_on);
		assert_false(sp_pl_counting);
	}
	free(a);
	free(b);
	free(NULL);

	for (size_t n = 1; n <= (1U << 20); n = n * 3 + 1) {
		p = malloc(n);
		assert_non_null(p);
		assert_true(is_segpool(p));
		assert_true(malloc_usable_size(p) >= n);
		if (n >= 16)
			assert_int_equal((uintptr_t)p % 16, 0);
		memset(p, 0xa5, n);
		free(p);
	}

	errno = 0;
	sink = malloc(opaque(SIZE_MAX));
	assert_null(sink);
	assert_int_equal(errno, ENOMEM);
	errno = 0;
	sink = malloc(opaque(SIZE_MAX / 2));
	assert_null(sink);
	assert_int_equal(errno, ENOMEM);

	/* success leaves errno alone */
	errno = 1234;
	p = malloc(100);
	assert_non_null(p);
	assert_int_equal(errno, 1234);
	free(p);
	assert_int_equal(malloc_usable_size(NULL), 0);
}

static void test_calloc_zeroes(void **state)
{
	unsigned char *p;

	(void)state;
	/* dirty an object of the class, then calloc one again */
	for (int round = 0; round < 64; round++) {
		p = malloc(200);
		assert_non_null(p);
		memset(p, 0xff, 200);
		free(p);
		p = calloc(10, 20);
		assert_non_null(p);
		assert_true(sp_test_all_bytes(p, 0, 200));
		free(p);
	}
	p = calloc(1, 1 << 20);
	assert_non_null(p);
	assert_true(sp_test_all_bytes(p, 0, 1 << 20));
	free(p);
	errno = 0;
	sink = calloc(opaque(SIZE_MAX / 2), 3);
	assert_null(sink);
	assert_int_equal(errno, ENOMEM);
	p = calloc(0, 0);
	assert_non_null(p);
	free(p);
}

static void test_realloc_keeps(void **state)
{
	unsigned char *p, *q;
	size_t n = 1;

	(void)state;
	p = realloc(NULL, 1);
	assert_non_null(p);
	p[0] = 0;
	/* grow through every class and into large mappings, content kept */
	while (n < (3U << 20)) {
		size_t m = n * 2 + 7;

		q = realloc(p, m);
		assert_non_null(q);
		for (size_t i = 0; i < n; i++)
			if (q[i] != (unsigned char)i)
				fail_msg("byte %zu lost growing %zu -> %zu", i,
					 n, m);
		for (size_t i = n; i < m; i++)
			q[i] = (unsigned char)i;
		p = q;
		n = m;
	}
	/* and shrink back */
	while (n > 8) {
		size_t m = n / 3;

		q = realloc(p, m);
		assert_non_null(q);
		for (size_t i = 0; i < m; i++)
			if (q[i] != (unsigned char)i)
				fail_msg("byte %zu lost shrinking %zu -> %zu",
					 i, n, m);
		p = q;
		n = m;
	}
	/* a failed realloc leaves the block alone */
	errno = 0;
	q = realloc(opaque_ptr(p), opaque(SIZE_MAX));
	assert_null(q);
	assert_int_equal(errno, ENOMEM);
	assert_int_equal(p[1], 1);
	/* realloc(p, 0) frees and returns NULL, as glibc's */
	assert_null(realloc(p, 0));

	p = reallocarray(NULL, 10, 10);
	assert_non_null(p);
	errno = 0;
	assert_null(reallocarray(opaque_ptr(p), opaque(SIZE_MAX / 4), 8));
	assert_int_equal(errno, ENOMEM);
	q = reallocarray(p, 100, 10);
	assert_non_null(q);
	free(q);
}

static void test_aligned(void **state)
{
	void *p = NULL;
	int rc;

	(void)state;
	for (size_t a = sizeof(void *); a <= (1U << 21); a *= 2) {
		for (size_t n = 0; n < 70000; n = n * 5 + 3) {
			rc = posix_memalign(&p, a, n);
			assert_int_equal(rc, 0);
			assert_int_equal((uintptr_t)p % a, 0);
			assert_true(malloc_usable_size(p) >= n);
			memset(p, 1, n);
			free(p);
			p = aligned_alloc(a, n);
			assert_non_null(p);
			assert_int_equal((uintptr_t)p % a, 0);
			free(p);
			p = memalign(a, n);
			assert_non_null(p);
			assert_int_equal((uintptr_t)p % a, 0);
			free(p);
		}
	}
	/* posix_memalign: EINVAL returned, errno and *memptr untouched */
	static const size_t bad[] = { 0,  1,  2,  4,
				      12, 24, 48, (size_t)1 << 63 | 8 };
	for (size_t i = 0; i < SP_ARRAY_SIZE(bad); i++) {
		p = &rc;
		errno = 77;
		assert_int_equal(posix_memalign(&p, bad[i], 16), EINVAL);
		assert_int_equal(errno, 77);
		assert_ptr_equal(p, &rc);
	}
	errno = 77;
	assert_int_equal(posix_memalign(&p, 64, opaque(SIZE_MAX)), ENOMEM);
	assert_int_equal(errno, 77);
	/* aligned_alloc: a non-power-of-two is EINVAL (C17, glibc 2.38) */
	errno = 0;
	assert_null(aligned_alloc(opaque(24), 48));
	assert_int_equal(errno, EINVAL);
	/* memalign: rounded up to a power of two, as glibc does */
	p = memalign(opaque(24), 100);
	assert_non_null(p);
	assert_int_equal((uintptr_t)p % 32, 0);
	free(p);
	p = valloc(10);
	assert_non_null(p);
	assert_int_equal((uintptr_t)p % 4096, 0);
	free(p);
	p = pvalloc(0);
	assert_non_null(p);
	assert_int_equal((uintptr_t)p % 4096, 0);
	assert_true(malloc_usable_size(p) >= 4096);
	free(p);
	p = pvalloc(4097);
	assert_non_null(p);
	assert_true(malloc_usable_size(p) >= 8192);
	free(p);
	errno = 0;
	assert_null(pvalloc(opaque(SIZE_MAX - 10)));
	assert_int_equal(errno, ENOMEM);
	free_sized(malloc(40), 40);
	p = aligned_alloc(256, 512);
	assert_non_null(p);
	free_aligned_sized(p, 256, 512);
}

/* --- C++ operator new and delete, by their mangled names ------------------ */

static void die_new_huge(void *arg)
{
	(void)arg;
	sink = _Znwm(opaque(SIZE_MAX));
}

static void test_cxx_new_delete(void **state)
{
	const struct sp_cxx_nothrow *nt = NULL;
	void *p;

	(void)state;
	p = _Znwm(0);
	assert_non_null(p);
	assert_true(is_segpool(p));
	_ZdlPv(p);
	p = _Znam(100);
	assert_true(is_segpool(p));
	_ZdaPvm(p, 100);
	p = _ZnwmRKSt9nothrow_t(48, nt);
	assert_true(is_segpool(p));
	_ZdlPvm(p, 48);
	p = _ZnamRKSt9nothrow_t(48, nt);
	_ZdaPvRKSt9nothrow_t(p, nt);
	for (size_t a = 16; a <= 8192; a *= 4) {
		p = _ZnwmSt11align_val_t(a + 1, a);
		assert_int_equal((uintptr_t)p % a, 0);
		_ZdlPvmSt11align_val_t(p, a + 1, a);
		p = _ZnamSt11align_val_t(3 * a, a);
		assert_int_equal((uintptr_t)p % a, 0);
		_ZdaPvSt11align_val_t(p, a);
		p = _ZnwmSt11align_val_tRKSt9nothrow_t(a, a, nt);
		assert_int_equal((uintptr_t)p % a, 0);
		_ZdlPvSt11align_val_tRKSt9nothrow_t(p, a, nt);
		p = _ZnamSt11align_val_tRKSt9nothrow_t(a, a, nt);
		_ZdaPvSt11align_val_tRKSt9nothrow_t(p, a, nt);
	}
	p = _ZnwmSt11align_val_t(10, 64);
	_ZdlPvSt11align_val_t(p, 64);
	p = _Znam(10);
	_ZdaPvmSt11align_val_t(p, 10, 16);
	p = _Znwm(10);
	_ZdlPvRKSt9nothrow_t(p, nt);
	/* nothrow forms answer NULL; with no new_handler and no libstdc++
	 * in this C program, the plain form has nothing to throw: it aborts */
	assert_null(_ZnwmRKSt9nothrow_t(opaque(SIZE_MAX), nt));
	assert_null(
		_ZnamSt11align_val_tRKSt9nothrow_t(opaque(SIZE_MAX), 64, nt));
	assert_true(sp_test_expect_death(die_new_huge, NULL, "out of memory"));
}

/* --- the bootstrap area --------------------------------------------------- */

static void die_realloc_boot_interior(void *arg)
{
	sink = realloc((char *)arg + 16, 100);
}

/*
 * A block allocated before any constructor ran (.preinit_array comes
 * before the libraries' constructors and ours), as a library's
 * constructor allocates in a real program: the area serves it.
 */
static void *early_block;

static void early_alloc(int argc, char **argv, char **envp)
{
	(void)argc;
	(void)argv;
	(void)envp;
	early_block = malloc(24);
}

__attribute__((section(".preinit_array"), used))
static void (*const early_alloc_entry)(int, char **, char **) = early_alloc;

static void test_bootstrap(void **state)
{
	size_t used = sp_boot_used(), blocks = sp_boot_blocks(), n;
	unsigned char *b, *c, *p;

	(void)state;
	print_message("bootstrap area: %zu bytes in %zu blocks at start\n",
		      used, blocks);
	/* what was allocated before our constructor ran came from the
	 * area, and the program lives on */
	assert_true(blocks > 0);
	assert_non_null(early_block);
	assert_true(sp_boot_owns(early_block));
	assert_true(sp_boot_block(early_block, &n));
	assert_int_equal(n, 24);
	b = sp_boot_alloc(100, 16);
	assert_non_null(b);
	assert_true(sp_boot_owns(b));
	assert_int_equal((uintptr_t)b % 16, 0);
	assert_true(sp_test_all_bytes(b, 0, 100));
	assert_true(sp_boot_block(b, &n));
	assert_int_equal(n, 100);
	assert_false(sp_boot_block(b + 16, &n));
	assert_int_equal(sp_boot_blocks(), blocks + 1);
	c = sp_boot_alloc(10, 4096);
	assert_int_equal((uintptr_t)c % 4096, 0);
	assert_true(sp_boot_block(c, &n));
	assert_int_equal(n, 10);
	/* more than the area: ENOMEM, nothing taken */
	errno = 0;
	assert_null(sp_boot_alloc(SP_BOOT_SIZE, 16));
	assert_int_equal(errno, ENOMEM);

	/* the entry points take bootstrap memory as theirs */
	memset(b, 0x3c, 100);
	assert_int_equal(malloc_usable_size(b), 100);
	p = realloc(b, 300);		/* moved into segpool, content kept */
	assert_non_null(p);
	assert_false(sp_boot_owns(p));
	assert_true(is_segpool(p));
	assert_true(sp_test_all_bytes(p, 0x3c, 100));
	free(p);
	free(b);			/* a no-op, twice: never reused */
	free(b);
	free(c);
	assert_null(realloc(c, 0));
	assert_true(sp_test_expect_death(die_realloc_boot_interior, c,
					 "invalid pointer"));

	/* a thread inside segpool's initialisation, once the library is up,
	 * is served by segpool itself */
	sp_pl_set_in_init(true);
	p = malloc(32);
	sp_pl_set_in_init(false);
	assert_true(is_segpool(p));
	free(p);
	assert_true(sp_pl_bring_up());
}

/* --- misuse --------------------------------------------------------------- */

static void die_free_stack(void *arg)
{
	char buf[64];

	(void)arg;
	sink = buf;
	free(sink);
}

static void die_free_interior(void *arg)
{
	(void)arg;
	char *p = malloc(4096);

	free(p + 8);
}

static void die_double_free_large(void *arg)
{
	(void)arg;
	void *p = malloc(1 << 20);

	free(p);
	free(p);
}

static void die_realloc_foreign(void *arg)
{
	char buf[64];

	(void)arg;
	sink = buf;
	sink = realloc(sink, 10);
}

static void test_misuse(void **state)
{
	char addr[32];

	(void)state;
	assert_true(
		sp_test_expect_death(die_free_stack, NULL, "foreign pointer"));
	assert_true(sp_test_expect_death(die_free_interior, NULL, "segpool:"));
	assert_true(sp_test_expect_death(die_double_free_large, NULL,
					 "foreign pointer"));
	assert_true(sp_test_expect_death(die_realloc_foreign, NULL,
					 "realloc of foreign pointer"));
	/* the report names the address */
	snprintf(addr, sizeof(addr), "%p", (void *)(sp_boot_area + 4096 + 16));
	assert_true(sp_test_expect_death(die_realloc_boot_interior,
					 sp_boot_area + 4096, addr));
}

/* --- glibc's controls ----------------------------------------------------- */

static void test_glibc_controls(void **state)
{
	enum { N = 20000 };
	struct mallinfo2 before, held, after;
	void **v = malloc(N * sizeof(*v));
	void *big;
	char *xml = NULL;
	size_t xml_len = 0;
	FILE *f;

	(void)state;
	assert_int_equal(mallopt(M_TRIM_THRESHOLD, 1 << 20), 1);
	assert_int_equal(mallopt(M_ARENA_MAX, 2), 1);
	assert_int_equal(mallopt(M_MMAP_THRESHOLD, 1 << 16), 1);
	assert_int_equal(mallopt(12345, 1), 0);

	before = mallinfo2();
	for (int i = 0; i < N; i++)
		v[i] = malloc(512);
	big = malloc(8 << 20);
	held = mallinfo2();
	assert_true(held.uordblks >= before.uordblks + (size_t)N * 512 / 2);
	assert_true(held.arena >= held.uordblks);
	assert_true(held.hblks >= before.hblks + 1);
	assert_true(held.hblkhd >= before.hblkhd + (8 << 20));
	assert_int_equal(held.fordblks, held.arena - held.uordblks);
	{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
		struct mallinfo old = mallinfo();
#pragma GCC diagnostic pop

		assert_true(old.hblks >= 1);
		assert_true(old.uordblks > 0);
	}
	for (int i = 0; i < N; i++)
		free(v[i]);
	free(big);
	/* everything freed: malloc_trim has slabs to give back */
	assert_int_equal(malloc_trim(0), 1);
	after = mallinfo2();
	assert_true(after.arena < held.arena);
	assert_true(after.hblkhd + (8 << 20) <= held.hblkhd);
	free(v);

	f = open_memstream(&xml, &xml_len);
	assert_non_null(f);
	assert_int_equal(malloc_info(0, f), 0);
	fclose(f);
	assert_non_null(strstr(xml, "<malloc version=\"segpool-"));
	assert_non_null(strstr(xml, "</malloc>"));
	free(xml);
	errno = 0;
	assert_int_equal(malloc_info(1, stderr), -1);
	assert_int_equal(errno, EINVAL);
}

/* --- memory the C library hands out --------------------------------------- */

static void test_libc_memory(void **state)
{
	char *s, *line = NULL, *buf = NULL;
	size_t cap = 0, len = 0;
	FILE *f;
	int n;

	(void)state;
	s = strdup("segpool");
	assert_true(is_segpool(s));
	free(s);
	s = strndup("segpool-malloc", 7);
	assert_string_equal(s, "segpool");
	free(s);
	n = asprintf(&s, "%s-%d", "abc", 42);
	assert_int_equal(n, 6);
	assert_true(is_segpool(s));
	free(s);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	for (int i = 0; i < 5000; i++)
		fprintf(f, "line %d of the memstream\n", i);
	fclose(f);
	assert_true(is_segpool(buf));
	f = fmemopen(buf, len, "r");
	assert_non_null(f);
	n = 0;
	while (getline(&line, &cap, f) > 0)
		n++;
	fclose(f);
	assert_int_equal(n, 5000);
	assert_true(is_segpool(line));
	free(line);
	free(buf);
	s = realpath(".", NULL);
	assert_true(is_segpool(s));
	free(s);
	s = getcwd(NULL, 0);
	assert_true(is_segpool(s));
	free(s);
}

/* dlopen/dlclose of libraries that allocate: the C library's converter
 * modules (gconv) and libm; dlerror()'s message is malloc()ed too */
static void test_dlopen(void **state)
{
	static const char text[] = "segpool: malloc replacement";
	(void)state;

	for (int round = 0; round < 20; round++) {
		iconv_t cd = iconv_open("UTF-16LE", "UTF-8");
		char in[sizeof(text)], out[256];
		char *ip = in, *op = out;
		size_t il = sizeof(text) - 1, ol = sizeof(out);
		void *h;

		if (cd == (iconv_t)-1) {
			print_message("no UTF-16 converter here: %s\n",
				      strerror(errno));
		} else {
			memcpy(in, text, sizeof(text));
			assert_int_not_equal(iconv(cd, &ip, &il, &op, &ol),
					     (size_t)-1);
			assert_int_equal(sizeof(out) - ol,
					 2 * (sizeof(text) - 1));
			assert_int_equal(out[2], 'e');
			assert_int_equal(iconv_close(cd), 0);
		}
		h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
		assert_non_null(h);
		assert_non_null(dlsym(h, "cos"));
		assert_int_equal(dlclose(h), 0);
		assert_null(dlopen("libsegpool-no-such-library.so", RTLD_NOW));
		assert_non_null(dlerror());
	}
}

/* --- threads -------------------------------------------------------------- */

#define XT_THREADS	4
#define XT_SLOTS	256

/* objects allocated on one thread and freed on another, through slots */
struct xt {
	_Atomic(unsigned char *) slot[XT_SLOTS];
	atomic_ulong freed, made;
	unsigned long per_thread;
	uint64_t seed;
};

struct xt_arg {
	struct xt *x;
	int id;
};

/* each object carries its size at both ends, checked by whoever frees it */
static void xt_mark(unsigned char *p, size_t n)
{
	size_t inv = ~n;

	memcpy(p, &n, sizeof(n));
	memcpy(p + n - sizeof(inv), &inv, sizeof(inv));
}

static bool xt_intact(const unsigned char *p)
{
	size_t n, inv;

	memcpy(&n, p, sizeof(n));
	if (n < 16 || n > 16 + 3000)
		return false;
	memcpy(&inv, p + n - sizeof(inv), sizeof(inv));
	return inv == ~n;
}

static void *xt_worker(void *arg)
{
	struct xt_arg *a = arg;
	uint64_t r = (a->x->seed ^ ((uint64_t)a->id * 0x9e3779b97f4a7c15ULL)) |
		     1;

	for (unsigned long i = 0; i < a->x->per_thread; i++) {
		size_t n = 16 + sp_test_rand(&r) % 3000;
		unsigned char *p = malloc(n), *old;

		if (!p)
			return (void *)1;
		xt_mark(p, n);
		old = atomic_exchange(&a->x->slot[sp_test_rand(&r) % XT_SLOTS],
				      p);
		if (old) {
			if (!xt_intact(old))
				return (void *)2;
			free(old);
			atomic_fetch_add(&a->x->freed, 1);
		}
		atomic_fetch_add(&a->x->made, 1);
	}
	return NULL;	/* exits holding whatever its CPU's magazines hold */
}

static void test_threads_cross_free(void **state)
{
	struct xt *x = calloc(1, sizeof(*x));
	struct xt_arg args[XT_THREADS];
	pthread_t th[XT_THREADS];
	struct mallinfo2 before, after;
	unsigned long left = 0;

	(void)state;
	x->seed = sp_test_seed();
	x->per_thread = sp_test_scaled(200000, 2000);
	before = mallinfo2();
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < XT_THREADS; i++) {
			args[i] = (struct xt_arg){ x, i + round * XT_THREADS };
			assert_int_equal(pthread_create(&th[i], NULL, xt_worker,
							&args[i]), 0);
		}
		for (int i = 0; i < XT_THREADS; i++) {
			void *ret;

			assert_int_equal(pthread_join(th[i], &ret), 0);
			assert_null(ret);
		}
	}
	/* what the exited threads left in the slots is freed here */
	for (int i = 0; i < XT_SLOTS; i++) {
		unsigned char *p = atomic_exchange(&x->slot[i], NULL);

		if (p) {
			assert_true(xt_intact(p));
			free(p);
			left++;
		}
	}
	assert_int_equal(atomic_load(&x->freed) + left, atomic_load(&x->made));
	after = mallinfo2();
	/* nothing is lost with the threads: what is in use is what was */
	print_message("in use before %zu, after %zu bytes\n", before.uordblks,
		      after.uordblks);
	assert_true(after.uordblks <= before.uordblks + 64 * 1024);
	free(x);
}

/* --- fork and exec -------------------------------------------------------- */

struct fk {
	atomic_bool stop;
	uint64_t seed;
};

static void *fk_worker(void *arg)
{
	struct fk *f = arg;
	uint64_t r = f->seed | 1;
	void *held[64] = { 0 };

	while (!atomic_load_explicit(&f->stop, memory_order_relaxed)) {
		unsigned int k = (unsigned int)(sp_test_rand(&r) % 64);

		free(held[k]);
		held[k] =
			malloc(1 + sp_test_rand(&r) % (k < 4 ? 200000 : 2000));
	}
	for (int k = 0; k < 64; k++)
		free(held[k]);
	return NULL;
}

/* the child uses malloc at once (a lock left held would hang it), execs */
static int fk_child(int round)
{
	char *v[100];

	alarm(CHILD_TIMEOUT);
	for (int i = 0; i < 100; i++) {
		v[i] = malloc((size_t)(i * 97 + 1) << (i % 12));
		if (!v[i])
			return 10;
		memset(v[i], i, 1);
	}
	for (int i = 0; i < 100; i++)
		free(v[i]);
	if (round % 4 == 3) {
		execl("/bin/sh", "sh", "-c", "exit 7", (char *)NULL);
		return 11;
	}
	return 0;
}

static void test_fork_exec(void **state)
{
	struct fk f = { .seed = sp_test_seed() };
	pthread_t th[3];
	int forks = (int)sp_test_scaled(40, 8);

	(void)state;
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&th[i], NULL, fk_worker, &f),
				 0);
	for (int round = 0; round < forks; round++) {
		int status;
		pid_t pid = fork();

		assert_true(pid >= 0);
		if (pid == 0)
			_exit(fk_child(round));
		assert_int_equal(waitpid(pid, &status, 0), pid);
		if (!WIFEXITED(status))
			fail_msg("child %d killed by signal %d", round,
				 WTERMSIG(status));
		assert_int_equal(WEXITSTATUS(status), round % 4 == 3 ? 7 : 0);
	}
	atomic_store(&f.stop, true);
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
}

/* --- the shared object, under LD_PRELOAD ---------------------------------- */

/*
 * Run "sh -c @cmd" with the preload; its output (the first @size - 1 bytes) in
 * @buf.
 */
static int run_preloaded(const char *cmd, const char *extra_env, char *buf,
			 size_t size)
{
	char full[4096];
	FILE *p;
	size_t n;

	snprintf(full, sizeof(full), "LD_PRELOAD=%s %s /bin/sh -c '%s' 2>&1",
		 SEGPOOL_MALLOC_SO_PATH, extra_env ? extra_env : "", cmd);
	p = popen(full, "r");
	if (!p)
		return -1;
	n = fread(buf, 1, size - 1, p);
	buf[n] = '\0';
	/* read the rest too: a writer must not die of SIGPIPE */
	while (fread(full, 1, sizeof(full), p) > 0)
		;
	return pclose(p);
}

static int count_of(const char *text, const char *s)
{
	int n = 0;

	for (const char *p = strstr(text, s); p; p = strstr(p + 1, s))
		n++;
	return n;
}

static bool preload_usable(void)
{
	return access(SEGPOOL_MALLOC_SO_PATH, R_OK) == 0;
}

static void test_preload_programs(void **state)
{
	static char out[1 << 16];
	const char *young;
	int rc;

	(void)state;
	if (!preload_usable()) {
		print_message("%s not built\n", SEGPOOL_MALLOC_SO_PATH);
		skip();
	}
	rc = run_preloaded("seq 1 20000 | sort -rn | head -n 2; "
			   "printf \"%s\\n\" b a c | sort | tr -d \"\\n\"",
			   NULL, out, sizeof(out));
	assert_int_equal(rc, 0);
	assert_string_equal(out, "20000\n19999\nabc");
	/* the stats dump at exit, on a copy of stderr */
	rc = run_preloaded("exec ls / >/dev/null",
			   "SEGPOOL_MALLOC_CONF=stats_print:true", out,
			   sizeof(out));
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "slabinfo - version: 2.1"));
	/* ls's blocks: in size classes, or all young (a small root) */
	young = strstr(out, "\nyoung_bytes ");
	assert_non_null(young);
	assert_true(strstr(out, "kmalloc-") ||
		    strtoull(young + strlen("\nyoung_bytes "), NULL, 10) > 0);
	rc = run_preloaded(
		"exec /bin/true",
		"SEGPOOL_MALLOC_CONF=stats_print:true,stats_format:json", out,
		sizeof(out));
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "\"schema\""));
	/* one knob: both set print once, as SEGPOOL_STATS_PRINT says */
	rc = run_preloaded("exec ls / >/dev/null",
			   "SEGPOOL_STATS_PRINT=health "
			   "SEGPOOL_MALLOC_CONF=stats_print:true",
			   out, sizeof(out));
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "\nhealth\n"));
	assert_null(strstr(out, "slabinfo - version"));
	assert_int_equal(
		count_of(out, "\ntotals\n") + !strncmp(out, "totals\n", 7), 1);
	rc = run_preloaded("exec ls / >/dev/null",
			   "SEGPOOL_STATS_PRINT=slabinfo "
			   "SEGPOOL_MALLOC_CONF=stats_print:true",
			   out, sizeof(out));
	assert_int_equal(rc, 0);
	assert_int_equal(count_of(out, "slabinfo - version: 2.1"), 1);
	rc = run_preloaded("exec /bin/true",
			   "SEGPOOL_MALLOC_CONF=stats_print:maybe", out,
			   sizeof(out));
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "stats_print:maybe"));
	/* the library's own knobs reach a preloaded program */
	rc = run_preloaded("exec /bin/true",
			   "SEGPOOL_PERCPU=lock SEGPOOL_MALLOC_CONF="
			   "stats_print:true,stats_format:health",
			   out, sizeof(out));
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "percpu_mode lock"));
}

/*
 * Sampled heap profiling under the preload: malloc() and free() serve from
 * the counted build (core/entry.h), whose resolvers read the environment
 * while the dynamic linker relocates, lazily or, with LD_BIND_NOW, all at
 * load time.  Every process of the pipeline writes its profile at exit,
 * and the sorting one has samples.
 */
static void check_profiles(const char *dir, const char *what)
{
	static char text[1 << 16];
	unsigned int files = 0, sampled = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((de = readdir(d))) {
		char path[600];
		FILE *f;
		size_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "r");
		assert_non_null(f);
		n = fread(text, 1, sizeof(text) - 1, f);
		text[n] = '\0';
		fclose(f);
		assert_int_equal(unlink(path), 0);
		files++;
		if (strncmp(text, "heap profile: ", 14))
			fail_msg("%s: %s is no heap profile:\n%.200s", what,
				 de->d_name, text);
		if (strstr(text, "\n# segpool heap profile: 1 sample per "
				 "4096") && strstr(text, " @ 0x"))
			sampled++;
	}
	closedir(d);
	print_message("# %s: %u profiles, %u with samples\n", what, files,
		      sampled);
	assert_true(files >= 2);
	assert_true(sampled >= 1);
}

static void test_preload_profile(void **state)
{
	static char out[1 << 14];
	char dir[] = "/tmp/segpool-pl-prof.XXXXXX", env[400];
	int rc;

	(void)state;
	if (!preload_usable()) {
		print_message("%s not built\n", SEGPOOL_MALLOC_SO_PATH);
		skip();
	}
	assert_non_null(mkdtemp(dir));
	for (int bind_now = 0; bind_now < 2; bind_now++) {
		/* SEGPOOL_VERBOSE says which build served, on stderr */
		snprintf(env, sizeof(env),
			 "%sSEGPOOL_HEAP_PROFILE=%s/heap.%%p "
			 "SEGPOOL_HEAP_SAMPLE=4096 SEGPOOL_VERBOSE=1",
			 bind_now ? "LD_BIND_NOW=1 " : "", dir);
		rc = run_preloaded("seq 1 20000 | sort -rn | head -n 2", env,
				   out, sizeof(out));
		/*
		 * bound at load, the resolvers choose before start-up; a
		 * lazily bound process may say either: a library linked
		 * with -z now (Debian's hardening flags) binds its own
		 * references at load too
		 */
		if (rc != 0 || !strstr(out, "20000\n19999\n") ||
		    !strstr(out, "segpool: heap profile: sampling; "
				 "entry points: counted build, chosen ") ||
		    (bind_now && !strstr(out, "chosen before start-up")))
			fail_msg("%s: status %#x, output:\n%s", env, rc, out);
		check_profiles(dir, bind_now ? "LD_BIND_NOW=1" : "lazy");
	}
	assert_int_equal(rmdir(dir), 0);
}

/*
 * Under a small address-space limit (issue 23, items 1 and 14): python3
 * runs under the preload where glibc runs it (the space is sized to the
 * limit), and where even that cannot start one line says what happens,
 * the library's, not two that contradict each other.
 */
static unsigned int count_lines_with(const char *text, const char *needle)
{
	unsigned int n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void test_preload_small_limit(void **state)
{
	static char out[1 << 14];
	int rc;

	(void)state;
	if (!preload_usable()) {
		print_message("%s not built\n", SEGPOOL_MALLOC_SO_PATH);
		skip();
	}
	rc = run_preloaded("ulimit -v 6000; exec /bin/true", NULL, out,
			   sizeof(out));
	assert_int_equal(rc, 0);
	print_message("# ulimit -v 6000: %s", out);
	assert_int_equal(count_lines_with(out, "segpool:"), 1);
	assert_non_null(
		strstr(out, "bootstrap area meanwhile and tries again"));
	if (access("/usr/bin/python3", X_OK)) {
		print_message(
			"# no /usr/bin/python3: the program part skipped\n");
		return;
	}
	rc = run_preloaded("ulimit -v 30000; exec /usr/bin/python3 -c "
			   "\"print(sum(range(10**5)))\"",
			   NULL, out, sizeof(out));
	if (rc != 0 || strcmp(out, "4999950000\n"))
		fail_msg(
			"python3 under ulimit -v 30000: status %#x, "
			"output:\n%s",
			rc, out);
}

/* --- the documentation lists SEGPOOL_MALLOC_CONF's options ---------------- */

static void test_conf_doc(void **state)
{
	static char doc[1 << 17];
	FILE *f = fopen(SEGPOOL_MALLOC_DOC_PATH, "r");
	size_t n;

	(void)state;
	assert_non_null(f);
	n = fread(doc, 1, sizeof(doc) - 1, f);
	fclose(f);
	doc[n] = '\0';
	for (size_t i = 0; i < sp_pl_conf_nr_opts; i++) {
		const struct sp_pl_conf_opt *o = &sp_pl_conf_opts[i];
		char row[1024];

		snprintf(row, sizeof(row), "| `%s` | %s | %s | %s |", o->name,
			 o->values, o->def, o->what);
		if (!strstr(doc, row))
			fail_msg("%s lacks the row (malloc/conf.c has it):\n%s",
				 SEGPOOL_MALLOC_DOC_PATH, row);
	}
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_malloc_basics),
	cmocka_unit_test(test_calloc_zeroes),
	cmocka_unit_test(test_realloc_keeps),
	cmocka_unit_test(test_aligned),
	cmocka_unit_test(test_cxx_new_delete),
	cmocka_unit_test(test_bootstrap),
	cmocka_unit_test(test_misuse),
	cmocka_unit_test(test_glibc_controls),
	cmocka_unit_test(test_libc_memory),
	cmocka_unit_test(test_dlopen),
	cmocka_unit_test(test_threads_cross_free),
	cmocka_unit_test(test_fork_exec),
	cmocka_unit_test(test_preload_programs),
	cmocka_unit_test(test_preload_small_limit),
	cmocka_unit_test(test_preload_profile),
	cmocka_unit_test(test_conf_doc),
};

int main(int argc, char **argv)
{
	/* valgrind replaces the malloc of the main program with its own */
	if (sp_test_under_valgrind()) {
		printf("under valgrind: its malloc serves this program\n");
		return SP_TEST_SKIP_STATUS;
	}
	return sp_test_run(__FILE__, tests, sizeof(tests) / sizeof(tests[0]),
			   argc, argv);
}

#endif /* CONFIG_SEGPOOL_SANITIZED */
