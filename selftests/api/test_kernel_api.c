// SPDX-License-Identifier: MIT
/*
 * selftests/api/test_kernel_api.c - kernel code on segpool's overlay.
 *
 * Written as kernel code is: it includes <linux/...> headers and nothing of
 * <segpool/...>, and uses every name the overlay provides (slab, kmalloc,
 * kvmalloc, kfree_rcu, mempool, prefilled sheaves, GFP and SLAB flags).
 * The build makes it twice: against the tree (-Iinclude/segpool/kernel)
 * and, as selftests/api/test_kernel_api_installed, against a `make install
 * DESTDIR=` image through `pkg-config --cflags --libs segpool-kernel`.
 * Only cmocka and libc come from elsewhere.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/cleanup.h>
#include <linux/compiler.h>
#include <linux/container_of.h>
#include <linux/gfp.h>
#include <linux/mempool.h>
#include <linux/numa.h>
#include <linux/overflow.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/types.h>
#include <linux/vmalloc.h>

#include <cmocka.h>

#if defined(__SANITIZE_THREAD__)
/*
 * As selftests/lib/harness.c does: liburcu is not instrumented, so its own
 * hand-overs (call_rcu, rcu_barrier) would show as races.
 */
__attribute__((visibility("default"))) const char *__tsan_default_options(void);
__attribute__((visibility("default"))) const char *__tsan_default_options(void)
{
	return "ignore_noninstrumented_modules=1:die_after_fork=0";
}
#endif

struct conn {
	int fd;
	u32 state;
	struct rcu_head rcu;
	char peer[48];
	u8 secret[16];
};

struct blob {
	size_t n;
	u64 data[];
};

/* Every flag of the overlay, one by one (they must all be accepted). */
static const gfp_t all_gfp[] = {
	GFP_KERNEL, GFP_ATOMIC, GFP_NOWAIT, GFP_NOIO, GFP_NOFS, GFP_USER,
	GFP_KERNEL_ACCOUNT, GFP_DMA, GFP_DMA32, GFP_HIGHUSER,
	GFP_HIGHUSER_MOVABLE, GFP_TRANSHUGE_LIGHT, GFP_TRANSHUGE,
	__GFP_DMA, __GFP_HIGHMEM, __GFP_DMA32, __GFP_MOVABLE,
	__GFP_RECLAIMABLE, __GFP_HIGH, __GFP_IO, __GFP_FS,
	__GFP_KSWAPD_RECLAIM, __GFP_DIRECT_RECLAIM, __GFP_RECLAIM,
	__GFP_WRITE, __GFP_HARDWALL, __GFP_ACCOUNT, __GFP_MEMALLOC,
	__GFP_NOMEMALLOC, __GFP_NORETRY, __GFP_RETRY_MAYFAIL, __GFP_COMP,
	__GFP_NOLOCKDEP, __GFP_NO_OBJ_EXT, __GFP_ZEROTAGS, __GFP_SKIP_ZERO,
	__GFP_SKIP_KASAN, __GFP_NOWARN, __GFP_NOFAIL, __GFP_THISNODE,
	__GFP_ZERO,
};

static const slab_flags_t all_slab_flags[] = {
	SLAB_HWCACHE_ALIGN, SLAB_PANIC, SLAB_TYPESAFE_BY_RCU, SLAB_RED_ZONE,
	SLAB_POISON, SLAB_STORE_USER, SLAB_CONSISTENCY_CHECKS,
	SLAB_CACHE_DMA, SLAB_CACHE_DMA32, SLAB_ACCOUNT, SLAB_RECLAIM_ACCOUNT,
	SLAB_TEMPORARY, SLAB_NO_MERGE, SLAB_MEM_SPREAD, SLAB_NOLEAKTRACE,
	SLAB_NO_USER_FLAGS, SLAB_DEBUG_OBJECTS, SLAB_TRACE, SLAB_FAILSLAB,
	SLAB_KASAN, SLAB_SKIP_KFENCE, SLAB_NO_OBJ_EXT, SLAB_NOFAILSLAB,
};

static bool all_zero(const void *p, size_t n)
{
	const u8 *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

static int ctor_calls;

static void conn_ctor(void *obj)
{
	struct conn *c = obj;

	c->fd = -1;
	c->state = 7;
	__atomic_fetch_add(&ctor_calls, 1, __ATOMIC_RELAXED);
}

/* --- caches ------------------------------------------------------------- */

static void test_kmem_cache_forms(void **state)
{
	struct kmem_cache_args args = { .align = 128, .sheaf_capacity = 30 };
	struct kmem_cache *a, *b, *c, *d, *e, *u;
	struct conn *x;

	(void)state;
	a = KMEM_CACHE(conn, SLAB_HWCACHE_ALIGN | SLAB_ACCOUNT);
	b = kmem_cache_create("kapi_classic", 100, 32, SLAB_RECLAIM_ACCOUNT,
			      NULL);
	c = kmem_cache_create("kapi_args", 100, &args, SLAB_NO_MERGE);
	d = kmem_cache_create("kapi_null", 24, NULL, 0);
	e = kmem_cache_create_usercopy("kapi_usercopy", sizeof(struct conn), 0,
				       0, offsetof(struct conn, peer),
				       sizeof(((struct conn *)0)->peer), NULL);
	u = KMEM_CACHE_USERCOPY(blob, 0, n);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_non_null(d);
	assert_non_null(e);
	assert_non_null(u);

	assert_int_equal(kmem_cache_size(a), sizeof(struct conn));
	assert_int_equal(kmem_cache_size(b), 100);
	assert_int_equal(kmem_cache_size(d), 24);
	x = kmem_cache_alloc(a, GFP_KERNEL);
	assert_non_null(x);
	assert_int_equal((uintptr_t)x % 64, 0);		/* SLAB_HWCACHE_ALIGN */
	kmem_cache_free(a, x);
	for (int i = 0; i < 8; i++) {
		void *p = kmem_cache_alloc(b, GFP_KERNEL);
		void *q = kmem_cache_alloc(c, GFP_KERNEL);

		assert_int_equal((uintptr_t)p % 32, 0);
		assert_int_equal((uintptr_t)q % 128, 0);
		kmem_cache_free(b, p);
		kmem_cache_free(c, q);
	}
	assert_int_equal(kmem_cache_shrink(b), 0);
	kmem_cache_destroy(a);
	kmem_cache_destroy(b);
	kmem_cache_destroy(c);
	kmem_cache_destroy(d);
	kmem_cache_destroy(e);
	kmem_cache_destroy(u);
	kmem_cache_destroy(NULL);
}

/* The checks of struct kmem_cache_args that the kernel makes too. */
static void test_kmem_cache_args_checks(void **state)
{
	struct kmem_cache_args bad_off = {
		.use_freeptr_offset = true, .freeptr_offset = 4,
	};
	struct kmem_cache_args rcu_off = {
		.use_freeptr_offset = true,
		.freeptr_offset = offsetof(struct conn, peer),
	};
	struct kmem_cache *s;

	(void)state;
	/* a free pointer offset needs SLAB_TYPESAFE_BY_RCU or a ctor */
	errno = 0;
	assert_null(kmem_cache_create("kapi_bad_off", 64, &bad_off, 0));
	assert_int_equal(errno, EINVAL);
	s = kmem_cache_create("kapi_rcu_off", sizeof(struct conn), &rcu_off,
			      SLAB_TYPESAFE_BY_RCU);
	assert_non_null(s);
	kmem_cache_destroy(s);
	/* bad names fail as they do in segpool */
	assert_null(kmem_cache_create("has space", 64, 0, 0, NULL));
}

static void test_kmem_cache_alloc_calls(void **state)
{
	struct kmem_cache *s = kmem_cache_create("kapi_calls", 200, 0, 0, NULL);
	struct kmem_cache *k = kmem_cache_create("kapi_ctor",
						 sizeof(struct conn), 0,
						 SLAB_HWCACHE_ALIGN, conn_ctor);
	void *objs[33];
	u8 *p;

	(void)state;
	assert_non_null(s);
	assert_non_null(k);
	p = kmem_cache_alloc(s, GFP_KERNEL);
	assert_non_null(p);
	memset(p, 0xab, 200);
	kmem_cache_free(s, p);
	p = kmem_cache_zalloc(s, GFP_KERNEL);
	assert_non_null(p);
	assert_true(all_zero(p, 200));
	kmem_cache_free(s, p);
	p = kmem_cache_alloc_node(s, GFP_KERNEL, NUMA_NO_NODE);
	assert_non_null(p);
	kmem_cache_free(s, p);
	p = kmem_cache_alloc_node(s, GFP_KERNEL | __GFP_THISNODE | __GFP_ZERO,
				  numa_node_id());
	assert_non_null(p);
	assert_true(all_zero(p, 200));
	kmem_cache_free(s, p);
	p = kmem_cache_alloc(s, GFP_ATOMIC | __GFP_NOFAIL);
	assert_non_null(p);
	kmem_cache_free(s, p);

	assert_int_equal(kmem_cache_alloc_bulk(s, GFP_KERNEL | __GFP_ZERO, 33,
					       objs), 33);
	for (int i = 0; i < 33; i++) {
		assert_true(all_zero(objs[i], 200));
		for (int j = 0; j < i; j++)
			assert_ptr_not_equal(objs[i], objs[j]);
	}
	kmem_cache_free(s, objs[5]);
	objs[5] = NULL;		/* NULL entries are skipped */
	kmem_cache_free_bulk(s, 33, objs);

	/* a ctor runs once per object, not per allocation */
	for (int i = 0; i < 4; i++) {
		struct conn *c = kmem_cache_alloc(k, GFP_KERNEL);

		assert_non_null(c);
		assert_int_equal(c->fd, -1);
		assert_int_equal(c->state, 7);
		kmem_cache_free(k, c);
	}
	assert_true(__atomic_load_n(&ctor_calls, __ATOMIC_RELAXED) > 0);
	/*
	 * no zeroing of constructed objects: NULL with EINVAL (and a warning)
	 */
	errno = 0;
	assert_null(kmem_cache_zalloc(k, GFP_KERNEL | __GFP_NOWARN));
	assert_int_equal(errno, EINVAL);
	kmem_cache_destroy(s);
	kmem_cache_destroy(k);
}

/* Every GFP and SLAB flag is accepted; the no-op ones change nothing. */
static void test_flags_accepted(void **state)
{
	struct kmem_cache *s;

	(void)state;
	for (size_t i = 0; i < sizeof(all_gfp) / sizeof(all_gfp[0]); i++) {
		gfp_t g = all_gfp[i];
		u8 *p = kmalloc(64, g);
		u8 *q;

		assert_non_null(p);
		if (g & __GFP_ZERO)
			assert_true(all_zero(p, 64));
		kfree(p);
		s = kmem_cache_create("kapi_gfp", 64, 0, 0, NULL);
		assert_non_null(s);
		q = kmem_cache_alloc(s, g);
		assert_non_null(q);
		if (g & __GFP_ZERO)
			assert_true(all_zero(q, 64));
		kmem_cache_free(s, q);
		kmem_cache_destroy(s);
	}
	for (size_t i = 0;
	     i < sizeof(all_slab_flags) / sizeof(all_slab_flags[0]); i++) {
		slab_flags_t f = all_slab_flags[i];
		void *p;

		if (f == SLAB_PANIC)
			continue;	/* below, on its own */
		s = kmem_cache_create("kapi_flag", 96, 0, f, NULL);
		assert_non_null(s);
		p = kmem_cache_alloc(s, GFP_KERNEL);
		assert_non_null(p);
		kmem_cache_free(s, p);
		kmem_cache_destroy(s);
	}
	s = kmem_cache_create("kapi_panic", 96, 0, SLAB_PANIC, NULL);
	assert_non_null(s);
	kmem_cache_destroy(s);
	assert_true(gfpflags_allow_blocking(GFP_KERNEL));
	assert_false(gfpflags_allow_blocking(GFP_ATOMIC));
	assert_false(gfpflags_allow_blocking(GFP_NOWAIT));
	assert_true(gfp_has_io_fs(GFP_KERNEL));
	assert_false(gfp_has_io_fs(GFP_NOIO));
}

/* Run @fn in a child; its exit status, or 128 + the signal. */
static int run_child(void (*fn)(void))
{
	int st;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* no core file, no noise: only the status matters */
		signal(SIGABRT, SIG_DFL);
		if (!freopen("/dev/null", "w", stderr))
			_exit(97);
		fn();
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void child_panic(void)
{
	/* a bad name with SLAB_PANIC: the message, then an abort */
	(void)kmem_cache_create("bad name", 64, 0, SLAB_PANIC, NULL);
	_exit(0);
}

static void child_kfree_cache_obj(void)
{
	struct kmem_cache *s = kmem_cache_create("kapi_kfree", 64, 0, 0, NULL);
	void *p[64];

	if (!s)
		_exit(2);
	for (int i = 0; i < 64; i++)
		if (!(p[i] = kmem_cache_alloc(s, GFP_KERNEL)))
			_exit(3);
	for (int i = 0; i < 64; i++)
		kfree(p[i]);		/* allowed since SLOB went away */
	kmem_cache_destroy(s);
	_exit(0);
}

static void test_slab_panic_aborts(void **state)
{
	(void)state;
	assert_int_equal(run_child(child_panic), 128 + SIGABRT);
}

/* kfree() of a kmem_cache_alloc() object goes back to its cache. */
static void test_kfree_of_cache_object(void **state)
{
	(void)state;
	assert_int_equal(run_child(child_kfree_cache_obj), 0);
}

/* --- kmalloc and friends -------------------------------------------------- */

static void test_kmalloc_family(void **state)
{
	struct blob *bl;
	char *s, *t;
	u8 *p, *q;

	(void)state;
	/* kmalloc(0) and the zero-size pointer */
	p = kmalloc(0, GFP_KERNEL);
	assert_ptr_equal(p, ZERO_SIZE_PTR);
	assert_true(ZERO_OR_NULL_PTR(p));
	assert_true(ZERO_OR_NULL_PTR(NULL));
	assert_int_equal(ksize(p), 0);
	kfree(p);
	kfree(NULL);
	assert_ptr_equal(kcalloc(0, 8, GFP_KERNEL), ZERO_SIZE_PTR);

	p = kmalloc(100, GFP_KERNEL);
	assert_non_null(p);
	assert_false(ZERO_OR_NULL_PTR(p));
	assert_true(ksize(p) >= 100);
	memset(p, 0x5a, 100);
	kfree(p);
	p = kzalloc(300, GFP_KERNEL);
	assert_non_null(p);
	assert_true(all_zero(p, 300));
	kfree(p);
	p = kmalloc_node(500, GFP_KERNEL, numa_node_id());
	assert_non_null(p);
	kfree(p);
	p = kzalloc_node(700, GFP_KERNEL | __GFP_THISNODE, numa_node_id());
	assert_non_null(p);
	assert_true(all_zero(p, 700));
	kfree(p);

	/* arrays, with the overflow checks */
	p = kmalloc_array(10, 30, GFP_KERNEL);
	assert_non_null(p);
	kfree(p);
	p = kcalloc(10, 30, GFP_KERNEL);
	assert_non_null(p);
	assert_true(all_zero(p, 300));
	kfree(p);
	assert_null(kmalloc_array(SIZE_MAX / 2, 3, GFP_KERNEL | __GFP_NOWARN));
	assert_null(kcalloc(SIZE_MAX / 2, 3, GFP_KERNEL | __GFP_NOWARN));
	bl = kzalloc(struct_size(bl, data, 20), GFP_KERNEL);
	assert_non_null(bl);
	assert_true(ksize(bl) >= sizeof(*bl) + 20 * sizeof(u64));
	kfree(bl);
	assert_int_equal(struct_size(bl, data, SIZE_MAX), SIZE_MAX);
	assert_int_equal(size_mul(SIZE_MAX, 2), SIZE_MAX);

	/* krealloc keeps the contents; with __GFP_ZERO the growth is zero */
	p = kmalloc(40, GFP_KERNEL | __GFP_ZERO);
	assert_non_null(p);
	memset(p, 0x11, 40);
	q = krealloc(p, 5000, GFP_KERNEL | __GFP_ZERO);
	assert_non_null(q);
	for (int i = 0; i < 40; i++)
		assert_int_equal(q[i], 0x11);
	assert_true(all_zero(q + 40, 5000 - 40));
	p = krealloc(q, 20, GFP_KERNEL | __GFP_ZERO);	/* shrinks in place */
	assert_ptr_equal(p, q);
	/* the tail was zeroed: growing back within ksize() shows it */
	q = krealloc(p, ksize(p), GFP_KERNEL | __GFP_ZERO);
	assert_ptr_equal(q, p);
	assert_true(all_zero(q + 20, ksize(q) - 20));
	p = q;
	q = krealloc_array(p, 100, 100, GFP_KERNEL);
	assert_non_null(q);
	assert_null(krealloc_array(q, SIZE_MAX, 2, GFP_KERNEL | __GFP_NOWARN));
	p = krealloc(q, 0, GFP_KERNEL);			/* frees */
	assert_ptr_equal(p, ZERO_SIZE_PTR);
	p = krealloc(NULL, 64, GFP_KERNEL);
	assert_non_null(p);
	kfree_sensitive(p);
	kfree_sensitive(NULL);

	/* copies */
	p = kmemdup("abcdef", 6, GFP_KERNEL);
	assert_non_null(p);
	assert_memory_equal(p, "abcdef", 6);
	kfree(p);
	s = kstrdup("segpool", GFP_KERNEL);
	assert_string_equal(s, "segpool");
	t = kstrndup(s, 3, GFP_KERNEL);
	assert_string_equal(t, "seg");
	kfree(t);
	t = kmemdup_nul(s + 3, 2, GFP_KERNEL);
	assert_string_equal(t, "po");
	kfree(t);
	assert_null(kstrdup(NULL, GFP_KERNEL));
	assert_null(kstrndup(NULL, 3, GFP_KERNEL));
	kfree_const(kstrdup_const(s, GFP_KERNEL));
	kfree(s);

	/* kfree_bulk */
	{
		void *v[4] = { kmalloc(10, GFP_KERNEL), NULL,
			       kmalloc(20000, GFP_KERNEL), ZERO_SIZE_PTR };

		assert_non_null(v[0]);
		assert_non_null(v[2]);
		kfree_bulk(4, v);
	}
}

/* Every power of two is naturally aligned, above the size classes too. */
static void test_kmalloc_natural_alignment(void **state)
{
	(void)state;
	for (size_t size = 8; size <= ((size_t)4 << 20); size <<= 1) {
		void *p = kmalloc(size, GFP_KERNEL);

		assert_non_null(p);
		if ((uintptr_t)p % size)
			fail_msg("kmalloc(%zu) = %p is not aligned to its size",
				 size, p);
		kfree(p);
	}
}

static void test_kvmalloc_family(void **state)
{
	u8 *p;

	(void)state;
	p = kvmalloc(1 << 20, GFP_KERNEL);
	assert_non_null(p);
	memset(p, 1, 1 << 20);
	p = kvrealloc(p, 2 << 20, GFP_KERNEL);
	assert_non_null(p);
	assert_int_equal(p[(1 << 20) - 1], 1);
	kvfree(p);
	p = kvzalloc(100000, GFP_KERNEL);
	assert_non_null(p);
	assert_true(all_zero(p, 100000));
	kvfree_sensitive(p, 100000);
	p = kvmalloc_node(3000, GFP_KERNEL, NUMA_NO_NODE);
	assert_non_null(p);
	kvfree(p);
	p = kvzalloc_node(3000, GFP_KERNEL, numa_node_id());
	assert_true(all_zero(p, 3000));
	kvfree(p);
	p = kvmalloc_array(100, 100, GFP_KERNEL);
	assert_non_null(p);
	kvfree(p);
	p = kvcalloc(100, 100, GFP_KERNEL);
	assert_true(all_zero(p, 10000));
	kvfree(p);
	assert_null(kvmalloc_array(SIZE_MAX, 16, GFP_KERNEL | __GFP_NOWARN));

	p = vmalloc(70000);
	assert_non_null(p);
	vfree(p);
	p = vzalloc(70000);
	assert_true(all_zero(p, 70000));
	vfree(p);
	p = vmalloc_node(5000, numa_node_id());
	vfree(p);
	p = vzalloc_node(5000, NUMA_NO_NODE);
	assert_true(all_zero(p, 5000));
	vfree(p);
	p = vmalloc_array(10, 10);
	vfree(p);
	p = vcalloc(10, 10);
	assert_true(all_zero(p, 100));
	vfree(p);
}

/* --- RCU ------------------------------------------------------------------ */

struct table {
	struct conn __rcu *slot;
};

static struct table tab;
static int reader_phase;		/* 1: inside, 2: saw the
					 * old one, 3: go */

static void *reader(void *arg)
{
	struct conn *c;

	(void)arg;
	rcu_register_thread();
	rcu_read_lock();
	c = rcu_dereference(tab.slot);
	__atomic_store_n(&reader_phase, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&reader_phase, __ATOMIC_ACQUIRE) != 3)
		usleep(100);
	/* freed by kfree_rcu() meanwhile, but not before we leave */
	if (c->fd != 42 || strcmp(c->peer, "old"))
		__atomic_store_n(&reader_phase, 4, __ATOMIC_RELEASE);
	rcu_read_unlock();
	rcu_unregister_thread();
	return NULL;
}

static void test_rcu_free(void **state)
{
	struct kmem_cache *s = KMEM_CACHE(conn, 0);
	struct conn *old, *nc, *big;
	pthread_t t;

	(void)state;
	assert_non_null(s);
	old = kmem_cache_zalloc(s, GFP_KERNEL);
	assert_non_null(old);
	old->fd = 42;
	strcpy(old->peer, "old");
	rcu_assign_pointer(tab.slot, old);
	assert_int_equal(pthread_create(&t, NULL, reader, NULL), 0);
	while (__atomic_load_n(&reader_phase, __ATOMIC_ACQUIRE) != 1)
		usleep(100);

	nc = kmalloc(sizeof(*nc), GFP_KERNEL | __GFP_ZERO);
	assert_non_null(nc);
	nc->fd = 43;
	old = rcu_replace_pointer(tab.slot, nc, true);
	kfree_rcu(old, rcu);		/* a cache object */
	usleep(20000);
	__atomic_store_n(&reader_phase, 3, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(reader_phase, 3);

	rcu_read_lock();
	assert_int_equal(rcu_dereference(tab.slot)->fd, 43);
	assert_int_equal(rcu_dereference_check(tab.slot, true)->fd, 43);
	assert_int_equal(rcu_dereference_raw(tab.slot)->fd, 43);
	rcu_read_unlock();
	assert_ptr_equal(rcu_access_pointer(tab.slot), nc);
	assert_ptr_equal(rcu_dereference_protected(tab.slot, true), nc);
	RCU_INIT_POINTER(tab.slot, NULL);
	synchronize_rcu();
	kvfree_rcu(nc, rcu);		/* kmalloc memory */
	big = kvmalloc(1 << 20, GFP_KERNEL);	/* a large mapping */
	assert_non_null(big);
	kvfree_rcu(big, rcu);
	kfree_rcu_mightsleep(kmalloc(64, GFP_KERNEL));
	kvfree_rcu_mightsleep(kmem_cache_alloc(s, GFP_KERNEL));
	nc = NULL;
	kfree_rcu(nc, rcu);		/* NULL: nothing */
	rcu_barrier();
	/* every object of the cache is back: a plain destroy succeeds */
	kmem_cache_destroy(s);
}

/* --- mempool -------------------------------------------------------------- */

static int custom_allocs, custom_frees;

static void *custom_alloc(gfp_t gfp, void *data)
{
	__atomic_fetch_add(&custom_allocs, 1, __ATOMIC_RELAXED);
	return kmalloc((size_t)(uintptr_t)data, gfp);
}

static void custom_free(void *elem, void *data)
{
	(void)data;
	__atomic_fetch_add(&custom_frees, 1, __ATOMIC_RELAXED);
	kfree(elem);
}

static void test_mempool(void **state)
{
	struct kmem_cache *s = kmem_cache_create("kapi_pool", 256, 0, 0, NULL);
	mempool_t *ps, *pk, *pc, *pn, *pg;
	void *e[16];

	(void)state;
	assert_non_null(s);
	ps = mempool_create_slab_pool(4, s);
	pk = mempool_create_kmalloc_pool(4, 1000);
	pc = mempool_create(3, custom_alloc, custom_free,
			    (void *)(uintptr_t)77);
	pn = mempool_create_node(2, mempool_alloc_slab, mempool_free_slab, s,
				 GFP_KERNEL, NUMA_NO_NODE);
	pg = mempool_create(2, mempool_kmalloc, mempool_kfree,
			    (void *)(uintptr_t)64);
	assert_non_null(ps);
	assert_non_null(pk);
	assert_non_null(pc);
	assert_non_null(pn);
	assert_non_null(pg);
	assert_int_equal(custom_allocs, 3);

	for (int i = 0; i < 16; i++) {
		e[i] = mempool_alloc(ps, GFP_KERNEL);
		assert_non_null(e[i]);
		memset(e[i], i, 256);
	}
	for (int i = 0; i < 16; i++)
		mempool_free(e[i], ps);
	for (int i = 0; i < 8; i++) {
		e[i] = mempool_alloc(pk, GFP_NOIO);
		assert_non_null(e[i]);
		memset(e[i], i, 1000);
	}
	for (int i = 0; i < 8; i++)
		mempool_free(e[i], pk);
	e[0] = mempool_alloc(pc, GFP_ATOMIC);
	assert_non_null(e[0]);
	mempool_free(e[0], pc);
	e[0] = mempool_alloc(pn, GFP_NOFS);
	e[1] = mempool_alloc(pg, GFP_KERNEL);
	assert_non_null(e[0]);
	assert_non_null(e[1]);
	mempool_free(e[0], pn);
	mempool_free(e[1], pg);
	mempool_free(NULL, pg);

	assert_int_equal(mempool_resize(pk, 10), 0);
	assert_int_equal(mempool_resize(pk, 1), 0);
	assert_int_equal(mempool_resize(pc, 6), 0);
	assert_int_equal(mempool_resize(pk, 0), -EINVAL);
	mempool_destroy(ps);
	mempool_destroy(pk);
	mempool_destroy(pc);
	mempool_destroy(pn);
	mempool_destroy(pg);
	mempool_destroy(NULL);
	assert_int_equal(custom_allocs, custom_frees);
	assert_null(mempool_create_kmalloc_pool(0, 10));
	kmem_cache_destroy(s);
}

/* --- prefilled sheaves ---------------------------------------------------- */

static void test_sheaves(void **state)
{
	struct kmem_cache_args args = { .sheaf_capacity = 32 };
	struct kmem_cache *s = kmem_cache_create("kapi_sheaf", 128, &args, 0);
	struct slab_sheaf *sh;
	void *objs[40];

	(void)state;
	assert_non_null(s);
	sh = kmem_cache_prefill_sheaf(s, GFP_KERNEL, 8);
	assert_non_null(sh);
	assert_int_equal(kmem_cache_sheaf_size(sh), 8);
	for (int i = 0; i < 3; i++) {
		objs[i] = kmem_cache_alloc_from_sheaf(s, GFP_NOWAIT, sh);
		assert_non_null(objs[i]);
	}
	objs[3] = kmem_cache_alloc_from_sheaf(s, GFP_NOWAIT | __GFP_ZERO, sh);
	assert_non_null(objs[3]);
	assert_true(all_zero(objs[3], 128));
	assert_int_equal(kmem_cache_sheaf_size(sh), 4);
	/* within the capacity: filled to it */
	assert_int_equal(kmem_cache_refill_sheaf(s, GFP_KERNEL, &sh, 6), 0);
	assert_int_equal(kmem_cache_sheaf_size(sh), 8);
	/* above: a larger sheaf, the objects kept */
	assert_int_equal(kmem_cache_refill_sheaf(s, GFP_KERNEL, &sh, 36), 0);
	assert_int_equal(kmem_cache_sheaf_size(sh), 36);
	for (int i = 4; i < 40; i++) {
		objs[i] = kmem_cache_alloc_from_sheaf(s, GFP_NOWAIT, sh);
		assert_non_null(objs[i]);
		for (int j = 0; j < i; j++)
			assert_ptr_not_equal(objs[i], objs[j]);
	}
	assert_int_equal(kmem_cache_sheaf_size(sh), 0);
	assert_null(kmem_cache_alloc_from_sheaf(s, GFP_NOWAIT, sh));
	assert_int_equal(kmem_cache_refill_sheaf(s, GFP_KERNEL, NULL, 1),
			 -EINVAL);
	kmem_cache_return_sheaf(s, GFP_KERNEL, sh);
	kmem_cache_free_bulk(s, 40, objs);
	sh = kmem_cache_prefill_sheaf(s, GFP_KERNEL, 20);
	assert_non_null(sh);
	kmem_cache_return_sheaf(s, GFP_KERNEL, sh);	/* with its objects */
	kmem_cache_destroy(s);
}

/* --- odds and ends -------------------------------------------------------- */

/* --- Linux 6.x idioms ----------------------------------------------------- */

static int conns_freed;

/* 6.x-style: a scope-freed allocation, handed over on success only */
static struct conn *conn_new(int fd, bool fail)
{
	struct conn *c __free(kfree) = kzalloc(sizeof(*c), GFP_KERNEL);
	char *scratch __free(kvfree) = kvmalloc(4096, GFP_KERNEL);

	if (!c || !scratch)
		return NULL;
	c->fd = fd;
	if (fail) {
		conns_freed++;
		return NULL;		/* both freed at the brace */
	}
	return_ptr(c);			/* c handed over; scratch freed */
}

static void test_kernel_6x_idioms(void **state)
{
	struct kmem_cache *s = KMEM_CACHE(conn, 0);
	struct conn *c;
	void *p;

	(void)state;
	assert_non_null(s);
	/* <linux/cleanup.h>: freed on the early return, kept on return_ptr */
	assert_null(conn_new(3, true));
	assert_int_equal(conns_freed, 1);
	c = conn_new(4, false);
	assert_non_null(c);
	assert_int_equal(c->fd, 4);
	{
		struct conn *tmp __free(kfree) = c;	/* freed at the brace */

		assert_int_equal(tmp->fd, 4);
	}
	{
		void *keep __free(kfree) = kmalloc(8, GFP_KERNEL);

		p = no_free_ptr(keep);			/* keep is NULL now */
		assert_null(keep);
	}
	kfree(p);
	/* kmalloc_size_roundup(): what kmalloc() really gives */
	assert_int_equal(kmalloc_size_roundup(100), 112);
	assert_int_equal(kmalloc_size_roundup(8), 8);
	p = kmalloc(kmalloc_size_roundup(1000), GFP_KERNEL);
	assert_non_null(p);
	assert_int_equal(ksize(p), kmalloc_size_roundup(1000));
	kfree(p);
	assert_int_equal(kmalloc_size_roundup(40000), 40960);
	assert_true(kmalloc_size_roundup(KMALLOC_MAX_SIZE + 1) == SIZE_MAX);
	/* kmem_cache_alloc_lru(): no list_lru, the cache's object */
	c = kmem_cache_alloc_lru(s, NULL, GFP_KERNEL);
	assert_non_null(c);
	kmem_cache_free(s, c);
	/* the _noprof forms are the calls themselves */
	c = kmem_cache_alloc_noprof(s, GFP_KERNEL);
	assert_non_null(c);
	kmem_cache_free(s, c);
	p = kzalloc_noprof(64, GFP_KERNEL);
	assert_non_null(p);
	assert_int_equal(((char *)p)[63], 0);
	kfree(p);
	p = kvmalloc_node_noprof(1 << 20, GFP_KERNEL, NUMA_NO_NODE);
	assert_non_null(p);
	/* no vmalloc area: vmalloc() memory is kmalloc() memory */
	assert_false(is_vmalloc_addr(p));
	kvfree(p);
	p = vmalloc(1 << 16);
	assert_false(is_vmalloc_addr(p));
	vfree(p);
	kmem_cache_destroy(s);
}

static void test_helpers(void **state)
{
	struct conn c;
	struct rcu_head *h = &c.rcu;

	(void)state;
	assert_ptr_equal(container_of(h, struct conn, rcu), &c);
	assert_true(numa_node_id() >= 0);
	assert_int_equal(NUMA_NO_NODE, -1);
	assert_int_equal(sizeof(struct rcu_head), 2 * sizeof(void *));
	BUILD_BUG_ON(sizeof(u64) != 8);
	assert_true(likely(1) && !unlikely(0));
	WRITE_ONCE(c.fd, 5);
	assert_int_equal(READ_ONCE(c.fd), 5);
	barrier();
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_kmem_cache_forms),
	cmocka_unit_test(test_kmem_cache_args_checks),
	cmocka_unit_test(test_kmem_cache_alloc_calls),
	cmocka_unit_test(test_flags_accepted),
	cmocka_unit_test(test_slab_panic_aborts),
	cmocka_unit_test(test_kfree_of_cache_object),
	cmocka_unit_test(test_kmalloc_family),
	cmocka_unit_test(test_kmalloc_natural_alignment),
	cmocka_unit_test(test_kvmalloc_family),
	cmocka_unit_test(test_rcu_free),
	cmocka_unit_test(test_mempool),
	cmocka_unit_test(test_sheaves),
	cmocka_unit_test(test_helpers),
	cmocka_unit_test(test_kernel_6x_idioms),
};

int main(void)
{
#ifdef KAPI_INSTALLED
	const char *group = "kernel API (installed image)";
#else
	const char *group = "kernel API (tree)";
#endif

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name(group, tests, NULL, NULL) ? 1 : 0;
}
