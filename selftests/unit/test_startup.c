// SPDX-License-Identifier: MIT
/*
 * selftests/unit/test_startup.c - what every process pays to start.
 *
 * A program that makes a handful of allocations and exits (a shell, a
 * compiler driver, every child of a build) pays the library's start-up in
 * full.  These tests hold the parts that keep it small to their promises:
 * the library's own caches packed on shared pages (sp_os_map_packed()),
 * random bytes drawn from a pool that one call fills (sp_os_random()), and
 * slab descriptors in a side table backed as it is written.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <segpool/segpool.h>
#include "core/core.h"
#include "internal/rculist.h"
#include "os/os.h"
#include "percpu/pcpu.h"
#include "slab/slab.h"
#include "young/young.h"
#include "selftests/lib/child.h"
#include "selftests/lib/harness.h"

#define CARVERS		2
#define CARVES		3000

struct carve {
	uintptr_t start, end;
};

static int carve_cmp(const void *a, const void *b)
{
	const struct carve *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

struct carver {
	struct carve blk[CARVES];
	int failed;
};

/* Sizes of 1 to 700 bytes, from the carver's own index (no shared rng). */
static void *carver_main(void *arg)
{
	struct carver *cv = arg;

	for (int i = 0; i < CARVES; i++) {
		size_t size = 1 + (size_t)i * 7919 % 700;
		char *p = sp_os_map_packed(size, 0);

		if (!p) {
			cv->failed++;
			continue;
		}
		cv->blk[i].start = (uintptr_t)p;
		cv->blk[i].end = (uintptr_t)p + size;
	}
	return NULL;
}

/*
 * Blocks carved at once by two threads: each aligned to a cache line,
 * zeroed, and no two overlapping (every byte written by its owner only).
 */
static void test_packed_blocks_disjoint(void **state)
{
	static struct carver cv[CARVERS];
	static struct carve all[CARVERS * CARVES];
	pthread_t t[CARVERS];
	size_t n = 0;

	(void)state;
	for (int i = 0; i < CARVERS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, carver_main,
						&cv[i]), 0);
	for (int i = 0; i < CARVERS; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(cv[i].failed, 0);
	}
	for (int i = 0; i < CARVERS; i++)
		for (int j = 0; j < CARVES; j++) {
			const unsigned char *p =
				(const unsigned char *)cv[i].blk[j].start;
			size_t len = cv[i].blk[j].end - cv[i].blk[j].start;

			assert_int_equal(cv[i].blk[j].start % SP_CACHE_LINE, 0);
			for (size_t k = 0; k < len; k++)
				assert_int_equal(p[k], 0);
			memset((void *)cv[i].blk[j].start, 0xa5, len);
			all[n++] = cv[i].blk[j];
		}
	qsort(all, n, sizeof(all[0]), carve_cmp);
	for (size_t i = 1; i < n; i++)
		if (all[i].start < all[i - 1].end)
			fail_msg("blocks %#lx-%#lx and %#lx-%#lx overlap",
				 (unsigned long)all[i - 1].start,
				 (unsigned long)all[i - 1].end,
				 (unsigned long)all[i].start,
				 (unsigned long)all[i].end);
}

/* A block too large to pack gets a mapping of its own, page-aligned. */
static void test_packed_large_is_own_mapping(void **state)
{
	char *p = sp_os_map_packed(200 << 10, 0);

	(void)state;
	assert_non_null(p);
	assert_int_equal((uintptr_t)p % SP_PAGE_SIZE, 0);
	memset(p, 1, 200 << 10);
	/* an alignment above the page cannot be packed either */
	assert_non_null(sp_os_map_packed(64, 2 * SP_PAGE_SIZE));
}

/* The library started: one allocation made (the caller frees it). */
static void *started(void)
{
	void *p = segpool_malloc(8);

	assert_non_null(p);
	return p;
}

static size_t distinct_pages(uintptr_t *pages, size_t n)
{
	size_t d = 0;

	for (size_t i = 0; i < n; i++) {
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = pages[j] == pages[i];
		d += !seen;
	}
	return d;
}

/*
 * A size class is made when first needed, not at start-up: a process that
 * never asked for 20 KiB has no kmalloc-20k, no control block, no per-CPU
 * block.  Until then the class table holds a stand-in whose hit paths
 * always miss; the slow path makes the class at its first allocation
 * above 4 KiB (up to 4 KiB, past the young blocks: test_young_blocks) and
 * publishes it, and later ones hit its magazines.  A lookup by name makes
 * a class too.  First in the list: no test made them before.
 */
static void test_size_classes_on_first_use(void **state)
{
	unsigned int i20 = sp_kmalloc_index(20 << 10);
	unsigned int i24 = sp_kmalloc_index(24 << 10);
	struct segpool_cache *c;
	void *p, *q;

	(void)state;
	segpool_free(started());
	/* one 8-byte block: young when young blocks are served */
	assert_true(!sp_kmalloc_cache(sp_kmalloc_index(8)) ==
		    sp_young_enabled());
	assert_null(sp_kmalloc_cache(i20));
	assert_null(sp_kmalloc_cache(i24));
	errno = 0;
	assert_null(segpool_cache_find("kmalloc-20000"));
	assert_int_equal(errno, ENOENT);

	p = segpool_malloc(20000);
	assert_non_null(p);
	c = sp_kmalloc_cache(i20);
	assert_non_null(c);
	assert_string_equal(c->name, "kmalloc-20k");
	assert_ptr_equal(sp_obj_to_slab(p)->cache, c);
	assert_ptr_equal(segpool_cache_find("kmalloc-20k"), c);
	/* the same cache again, whichever entry reaches it */
	q = segpool_malloc(20 << 10);
	assert_non_null(q);
	assert_ptr_equal(sp_obj_to_slab(q)->cache, c);
	segpool_free(q);
	segpool_free(p);

	c = segpool_cache_find("kmalloc-24k");
	assert_non_null(c);
	assert_ptr_equal(sp_kmalloc_cache(i24), c);
	assert_int_equal(sp_test_info(c).active_objs, 0);
}

/*
 * A process's first small blocks come from the young area (young/young.c)
 * while their class has its share: no class is made for them, and they
 * behave as the class's objects would (size, alignment, zeroed memory,
 * realloc, free, obj_node); the class is made at the block past its
 * share, and a misused young block is reported with the class's name.
 * The 448 and 96..224 classes: no other test of this file touches them.
 */
#define YOUNG_SIZE	448	/* 64-byte aligned */
/* the class's share: blocks, and bytes */
#define YOUNG_SHARE	SP_MIN(SP_YOUNG_CLASS_BLOCKS, \
			       SP_YOUNG_CLASS_BYTES / YOUNG_SIZE)

static void young_double_free(void *arg)
{
	void *p = segpool_malloc(200);

	(void)arg;
	segpool_free(p);
	segpool_free(p);
}

static void young_interior_free(void *arg)
{
	char *p = segpool_malloc(200);

	(void)arg;
	segpool_free(p + 16);
}

static void test_young_blocks(void **state)
{
	unsigned int idx = sp_kmalloc_index(YOUNG_SIZE);
	void *blk[SP_YOUNG_CLASS_BLOCKS + 1], *p, *q;
	unsigned int n = YOUNG_SHARE;
	unsigned char *z;

	(void)state;
	if (!sp_young_enabled()) {
		print_message("# young blocks are off here (ASan, valgrind "
			      "or SEGPOOL_DEBUG)\n");
		skip();
	}
	/* a short program's pattern: blocks of several classes, no class */
	for (size_t sz = 96; sz <= 224; sz += 32) {
		for (int i = 0; i < 10; i++) {
			p = segpool_malloc(sz);
			assert_true(sp_young_owns(p));
			segpool_free(p);
		}
		assert_null(sp_kmalloc_cache(sp_kmalloc_index(sz)));
	}
	for (unsigned int i = 0; i < n; i++) {
		blk[i] = segpool_malloc(YOUNG_SIZE);
		assert_true(sp_young_owns(blk[i]));
		assert_int_equal(segpool_usable_size(blk[i]), 448);
		assert_int_equal((uintptr_t)blk[i] % 64, 0);
		assert_true(segpool_obj_node(blk[i]) >= 0);
		memset(blk[i], (int)i, 448);
	}
	assert_null(sp_kmalloc_cache(idx));
	/* past the share: the class is made, its block from a slab */
	blk[n] = segpool_malloc(YOUNG_SIZE);
	assert_non_null(sp_kmalloc_cache(idx));
	assert_ptr_equal(sp_obj_to_slab(blk[n])->cache, sp_kmalloc_cache(idx));
	/* within its class a young block stays; past it, it moves */
	assert_ptr_equal(segpool_realloc(blk[0], 440), blk[0]);
	q = segpool_realloc(blk[1], 1000);
	assert_non_null(q);
	assert_ptr_not_equal(q, blk[1]);
	assert_int_equal(segpool_usable_size(q), 1024);
	for (int i = 0; i < 448; i++)
		assert_int_equal(((unsigned char *)q)[i], 1);
	blk[1] = q;
	/* zeroed: a young block's memory never held anything */
	z = segpool_calloc(1, 300);
	assert_true(sp_young_owns(z));
	for (int i = 0; i < 320; i++)
		assert_int_equal(z[i], 0);
	segpool_free(z);
	for (unsigned int i = 0; i <= n; i++)
		segpool_free(blk[i]);
	assert_true(sp_test_expect_death(young_double_free, NULL,
					 "segpool: double free"));
	assert_true(sp_test_expect_death(young_double_free, NULL,
					 "(cache kmalloc-224)"));
	assert_true(sp_test_expect_death(young_interior_free, NULL,
					 "segpool: free of interior pointer"));
}

static int addr_cmp(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

/* Threads that allocate from one class not made yet, all at once. */
#define MAKERS		4
#define MAKER_OBJS	64

struct maker {
	pthread_barrier_t *go;
	size_t size;
	void *obj[MAKER_OBJS];
};

static void *maker_main(void *arg)
{
	struct maker *mk = arg;

	pthread_barrier_wait(mk->go);
	for (int i = 0; i < MAKER_OBJS; i++)
		mk->obj[i] = segpool_malloc(mk->size);
	return NULL;
}

/*
 * The first allocations of a class, from several threads at once: one of
 * them makes it, the others wait for it and take from it (no second
 * "kmalloc-13k" listed, every object of the one cache, none twice).
 */
static void test_size_class_made_once(void **state)
{
	static struct maker mk[MAKERS];
	static uintptr_t all[MAKERS * MAKER_OBJS];
	unsigned int idx = sp_kmalloc_index(13000);
	size_t n = 0;
	pthread_barrier_t go;
	pthread_t t[MAKERS];
	struct segpool_cache *c, *k;
	int listed = 0;

	(void)state;
	segpool_free(started());
	assert_null(sp_kmalloc_cache(idx));
	assert_int_equal(pthread_barrier_init(&go, NULL, MAKERS), 0);
	for (int i = 0; i < MAKERS; i++) {
		mk[i].go = &go;
		mk[i].size = 13000 + (size_t)i;
		assert_int_equal(pthread_create(&t[i], NULL, maker_main,
						&mk[i]), 0);
	}
	for (int i = 0; i < MAKERS; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	pthread_barrier_destroy(&go);
	k = sp_kmalloc_cache(idx);
	assert_non_null(k);
	assert_string_equal(k->name, "kmalloc-13k");
	pthread_mutex_lock(&sp_cache_list_lock);
	sp_list_for_each_entry(c, &sp_cache_list, list)
		listed += !strcmp(c->name, "kmalloc-13k");
	pthread_mutex_unlock(&sp_cache_list_lock);
	assert_int_equal(listed, 1);
	assert_int_equal(sp_test_info(k).active_objs, MAKERS * MAKER_OBJS);
	for (int i = 0; i < MAKERS; i++)
		for (int j = 0; j < MAKER_OBJS; j++) {
			assert_non_null(mk[i].obj[j]);
			assert_ptr_equal(sp_obj_to_slab(mk[i].obj[j])->cache,
					 k);
			all[n++] = (uintptr_t)mk[i].obj[j];
		}
	/* no object handed out twice */
	qsort(all, n, sizeof(all[0]), addr_cmp);
	for (size_t i = 1; i < n; i++)
		assert_true(all[i] - all[i - 1] >= 13000);
	for (int i = 0; i < MAKERS; i++)
		for (int j = 0; j < MAKER_OBJS; j++)
			segpool_free(mk[i].obj[j]);
	assert_int_equal(sp_test_info(k).active_objs, 0);
}

/*
 * The size classes' control blocks and per-CPU blocks are packed: the
 * pages either kind starts on are no more than all packed blocks' bytes
 * fill (they are carved in turn), plus the page they began in and one a
 * block may straddle into (os/mem.c), however many nodes make a block
 * long; on one node that is at least two control blocks to a page.  A
 * program's cache has a page of its own (its tombstone, slab/cache.c).
 */
static void test_internal_caches_packed(void **state)
{
	uintptr_t cpage[256], ppage[256];
	size_t nc = 0, np = 0, cbytes = 0, pbytes = 0, obytes = 0;
	struct segpool_cache *c, *mine;
	size_t all;

	(void)state;
	segpool_free(started());
	/* every class: each is made at its first use */
	assert_int_equal(sp_test_make_size_classes(),
			 SP_KMALLOC_NR_CLASSES);
	pthread_mutex_lock(&sp_cache_list_lock);
	sp_list_for_each_entry(c, &sp_cache_list, list) {
		if (sp_cache_packed(c) && !(c->flags & SP_CACHE_KMALLOC)) {
			/* internal caches are carved between them */
			obytes += c->map_size +
				  (c->pcpu ? c->pcpu->map_size : 0);
			continue;
		}
		if (!(c->flags & SP_CACHE_KMALLOC) || nc == 256)
			continue;
		assert_true(sp_cache_packed(c));
		assert_int_equal((uintptr_t)c % SP_CACHE_LINE, 0);
		cpage[nc++] = (uintptr_t)c / SP_PAGE_SIZE;
		cbytes += c->map_size;
		if (c->pcpu) {
			ppage[np++] = (uintptr_t)c->pcpu / SP_PAGE_SIZE;
			pbytes += c->pcpu->map_size;
		}
	}
	pthread_mutex_unlock(&sp_cache_list_lock);
	print_message("%zu size classes on %d node(s): control blocks "
		      "(%zu bytes) on %zu pages, per-CPU blocks (%zu, %zu "
		      "bytes) on %zu\n", nc, sp_space.nr_regions, cbytes,
		      distinct_pages(cpage, nc), np, pbytes,
		      distinct_pages(ppage, np));
	assert_true(nc >= 8);
	/* all kinds are carved in turn: their sum is the bound */
	all = cbytes + pbytes + obytes;
	assert_true(distinct_pages(cpage, nc) <= all / SP_PAGE_SIZE + 2);
	assert_true(distinct_pages(ppage, np) <= all / SP_PAGE_SIZE + 2);
	if (sp_space.nr_regions == 1)
		assert_true(distinct_pages(cpage, nc) * 2 <= nc);

	mine = segpool_cache_create("startup-own", 64, 0, 0, NULL);
	assert_non_null(mine);
	assert_false(sp_cache_packed(mine));
	assert_int_equal((uintptr_t)mine % SP_PAGE_SIZE, 0);
	assert_int_equal(segpool_cache_destroy(mine), 0);
}

/* 300 draws of a word: no two alike (a pool handed out twice would). */
static void test_random_draws_differ(void **state)
{
	static uint64_t v[300];
	unsigned char big[200];

	(void)state;
	for (int i = 0; i < 300; i++) {
		assert_true(sp_os_random(&v[i], sizeof(v[i])));
		for (int j = 0; j < i; j++)
			assert_false(v[i] == v[j]);
	}
	/* larger than a pool's share: straight from the kernel */
	assert_true(sp_os_random(big, sizeof(big)));
}

/* A fork child never draws the bytes its parent draws next. */
static void test_random_fork_child_differs(void **state)
{
	uint64_t mine, theirs = 0, warm;
	int fd[2], status;
	pid_t pid;

	(void)state;
	assert_true(sp_os_random(&warm, sizeof(warm)));	/* pool filled */
	assert_int_equal(pipe(fd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		uint64_t v = 0;

		alarm(SP_TEST_CHILD_TIMEOUT);
		if (!sp_os_random(&v, sizeof(v)) ||
		    write(fd[1], &v, sizeof(v)) != (ssize_t)sizeof(v))
			_exit(1);
		_exit(0);
	}
	assert_true(sp_os_random(&mine, sizeof(mine)));
	assert_int_equal(read(fd[0], &theirs, sizeof(theirs)), sizeof(theirs));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(fd[0]);
	close(fd[1]);
	assert_false(mine == theirs);
}

/*
 * Descriptors: each slab's is the side line of its first page, which the
 * pagemap names as its owner; blocks of every order get distinct lines,
 * and the side table is backed only where blocks were given one (a short
 * program faults in a page of it, not the table).
 */
#define DESCS	2500

static void test_desc_side_lines(void **state)
{
	static char *blk[DESCS];
	unsigned char vec[64];
	size_t span = (size_t)1 << 20, resident = 0;
	uintptr_t hi = 0, end;

	(void)state;
	segpool_free(started());
	for (int i = 0; i < DESCS; i++) {
		unsigned int order = (unsigned int)i % 3;
		struct sp_slab *s;

		blk[i] = sp_region_alloc(0, order, SP_OWNER_SIDE);
		assert_non_null(blk[i]);
		s = sp_obj_to_slab(blk[i] + (SP_PAGE_SIZE << order) - 1);
		if (s != sp_slab_desc(blk[i]))
			fail_msg("block %p of order %u: the pagemap names %p, "
				 "its side line is %p", (void *)blk[i], order,
				 (void *)s, (void *)sp_slab_desc(blk[i]));
		assert_int_equal((uintptr_t)s % SP_CACHE_LINE, 0);
		s->inuse = (unsigned int)i;	/* writable, each its own */
		hi = SP_MAX(hi, (uintptr_t)s);
	}
	for (int i = 0; i < DESCS; i++)
		assert_int_equal(sp_slab_desc(blk[i])->inuse, i);
	/*
	 * The 1 MiB of the table past the last line written: not backed.
	 * From the next huge-page boundary on, as under THP "always" (the
	 * arm64 rig's kernel) the first touch of a line backs the huge page
	 * around it; within the table's mapping.
	 */
	end = (uintptr_t)sp_space.side +
	      (sp_space.size >> SP_PAGE_SHIFT) * SP_PAGE_SIDE_BYTES;
	hi = SP_ALIGN(hi + 1, (uintptr_t)SP_MAX(sp_os_thp_size(),
						(size_t)SP_PAGE_SIZE));
	span = hi < end ? SP_MIN(span, (size_t)(end - hi)) : 0;
	span = SP_ALIGN_DOWN(span, sizeof(vec) * SP_PAGE_SIZE);
	for (size_t off = 0; off < span; off += sizeof(vec) * SP_PAGE_SIZE) {
		assert_int_equal(mincore((void *)(hi + off),
					 sizeof(vec) * SP_PAGE_SIZE, vec), 0);
		for (size_t k = 0; k < sizeof(vec); k++)
			resident += vec[k] & 1;
	}
	if (!span)
		print_message("# side table: no room past the last line "
			      "written to look at\n");
	if (resident > 8)
		fail_msg("%zu of the %zu side-table pages past the last line "
			 "written are resident", resident,
			 span >> SP_PAGE_SHIFT);
	for (int i = 0; i < DESCS; i++)
		sp_region_free(blk[i], (unsigned int)i % 3);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_size_classes_on_first_use),
	cmocka_unit_test(test_size_class_made_once),
	cmocka_unit_test(test_young_blocks),
	cmocka_unit_test(test_packed_blocks_disjoint),
	cmocka_unit_test(test_packed_large_is_own_mapping),
	cmocka_unit_test(test_internal_caches_packed),
	cmocka_unit_test(test_random_draws_differ),
	cmocka_unit_test(test_random_fork_child_differs),
	cmocka_unit_test(test_desc_side_lines),
};

SP_TEST_MAIN(tests)
