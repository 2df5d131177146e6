// SPDX-License-Identifier: MIT
/*
 * selftests/unit/test_pages.c - the page layer under the blocks above the
 * size classes: page runs of the node regions (split, merge, exact page
 * counts, natural alignment, node placement), the first runs of a size
 * given back at their free, realloc in place, moved and by mremap, misuse
 * reported, and fork.
 */
#include <errno.h>
#include <numaif.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <segpool/segpool.h>

#include "selftests/lib/harness.h"
#include "core/core.h"
#include "core/decay.h"
#include "large/large.h"
#include "numa/region.h"
#include "numa/topology.h"
#include "internal/sanitize.h"
#include "os/os.h"

#define KiB	((size_t)1 << 10)
#define MiB	((size_t)1 << 20)

static void *volatile sink;

#define CHECK(cond, fmt, ...)						\
	do {								\
		if (!(cond))						\
			fail_msg("%s: " fmt, #cond, ##__VA_ARGS__);	\
	} while (0)

/* A size the compiler cannot see (no -Walloc-size-larger-than). */
static size_t opaque(size_t v)
{
	__asm__ volatile("" : "+r"(v));
	return v;
}

static int setup(void **state)
{
	(void)state;
	return sp_init();
}

/* The free lists of region @idx, uncarved top blocks counted as free. */
static void snapshot(int idx, size_t *nr_free, size_t *used, size_t *runs)
{
	struct sp_region *r = &sp_space.region[idx];

	pthread_mutex_lock(&r->lock);
	memcpy(nr_free, r->nr_free, sizeof(r->nr_free));
	nr_free[SP_MAX_ORDER] += (r->nr_pages - r->top) / SP_MAX_BLOCK_PAGES;
	*used = r->pages_used;
	*runs = r->nr_runs;
	pthread_mutex_unlock(&r->lock);
}

static size_t pages_used(int idx)
{
	size_t nr[SP_MAX_ORDER + 1], used, runs;

	snapshot(idx, nr, &used, &runs);
	return used;
}

/*
 * Runs of many sizes (one page to 12 MiB, so several top-level blocks
 * too), freed in a shuffled order: every split merges back, the free lists
 * are as before and no page stays used.  The sizes are in bytes, whatever
 * the page: small runs up to 2400 KiB, every sixteenth one past a top-level
 * block, up to three of them.
 */
#define SPLIT_SMALL_PAGES	((2400 * KiB) >> SP_PAGE_SHIFT)

static void test_split_merge(void **state)
{
	enum { N = 160 };
	size_t before[SP_MAX_ORDER + 1], after[SP_MAX_ORDER + 1];
	size_t used0, used1, runs0, runs1, sum = 0;
	uint64_t seed = sp_test_seed();
	long decay = segpool_get_decay_ms();
	size_t pages[N];
	char *run[N];
	bool dirty;

	(void)state;
	/*
	 * The region's counts are exact only while nothing else takes or
	 * gives back pages: no decay pass from here on, and no cache left
	 * holding anything an earlier pass could still give back (the decay
	 * thread shrank an idle cache's slabs in the middle of this test in
	 * a CI run under valgrind, 9 pages short).
	 */
	assert_int_equal(segpool_set_decay_ms(SEGPOOL_DECAY_NEVER), 0);
	assert_true(sp_decay_wait_idle(10000));	/* a pass under way ends */
	assert_true(segpool_shrink_all() >= 0);
	snapshot(0, before, &used0, &runs0);
	for (int i = 0; i < N; i++) {
		uint64_t r = sp_test_rand(&seed);

		pages[i] = i % 16 == 15 ?
			   SP_MAX_BLOCK_PAGES + 1 +
				   r % (2 * SP_MAX_BLOCK_PAGES) :
			   1 + r % SPLIT_SMALL_PAGES;
		run[i] = sp_region_alloc_pages(0, pages[i], SP_PAGE_SIZE,
					       &dirty);
		assert_non_null(run[i]);
		assert_int_equal(sp_run_pages(run[i]), pages[i]);
		sum += pages[i];
		/* both ends writable, and no two runs overlap */
		run[i][0] = 1;
		run[i][(pages[i] << SP_PAGE_SHIFT) - 1] = 1;
		for (int j = 0; j < i; j++)
			assert_true(run[j] + (pages[j] << SP_PAGE_SHIFT) <=
					    run[i] ||
				    run[i] + (pages[i] << SP_PAGE_SHIFT) <=
					    run[j]);
	}
	/* exact: a run costs its pages, not its buddy block's */
	assert_int_equal(pages_used(0), used0 + sum);
	for (int i = N - 1; i > 0; i--) {
		int j = (int)(sp_test_rand(&seed) % (uint64_t)(i + 1));
		char *tr = run[i];
		size_t tp = pages[i];

		run[i] = run[j];
		pages[i] = pages[j];
		run[j] = tr;
		pages[j] = tp;
	}
	for (int i = 0; i < N; i++)
		assert_true(sp_region_free_pages(run[i]));
	snapshot(0, after, &used1, &runs1);
	assert_int_equal(segpool_set_decay_ms(decay), 0);
	assert_int_equal(used1, used0);
	assert_int_equal(runs1, runs0);
	assert_memory_equal(after, before, sizeof(before));
}

/*
 * Every page of run @p (@pages long) and a byte inside it map to @p's head,
 * segpool_obj_node() answers for each; the page after it maps elsewhere.
 */
static void check_run_pages(char *p, size_t pages)
{
	for (size_t k = 0; k < pages; k++) {
		char *a = p + (k << SP_PAGE_SHIFT);

		CHECK(sp_run_head_of(a) == p, "page %zu of a run of %zu: "
		      "head %p, not %p", k, pages, sp_run_head_of(a),
		      (void *)p);
		CHECK(sp_run_head_of(a + 123) == p, "byte in page %zu", k);
		CHECK(sp_run_interior(a + 1), "page %zu + 1 not interior", k);
		CHECK(k == 0 || sp_run_interior(a), "page %zu", k);
		CHECK(segpool_obj_node(a + 8) >= 0, "node of page %zu", k);
	}
	CHECK(!sp_run_interior(p), "a run's head is not interior");
	CHECK(sp_run_head_of(p + (pages << SP_PAGE_SHIFT)) != p,
	      "the page after a run of %zu is not in it", pages);
}

/*
 * A run marks its head and one page in SP_RUN_ANCHOR_PAGES (numa/region.c),
 * yet every one of its pages finds the head, through runs of every length
 * around the anchor spacing, runs grown and shrunk in place, and nothing
 * is found once the run is gone or in pages no run holds.
 */
static void test_run_anchors(void **state)
{
	/* around the anchor spacing, and around and past a top-level block
	 * (1024, 1025 and 3000 pages of 4 KiB; 64 KiB pages make a top
	 * block 64 of them, and 3000 would pass SP_RUN_MAX_SIZE) */
	static const size_t len[] = {
		1, 2, 63, 64, 65, 127, 128, 129, 300,
		SP_MAX_BLOCK_PAGES, SP_MAX_BLOCK_PAGES + 1,
		3 * SP_MAX_BLOCK_PAGES - 72,
	};
	enum { N = sizeof(len) / sizeof(len[0]) };
	uint64_t seed = sp_test_seed();
	char *run[N];
	bool dirty;

	(void)state;
	for (int i = 0; i < N; i++) {
		run[i] = sp_region_alloc_pages(0, len[i], SP_PAGE_SIZE,
					       &dirty);
		assert_non_null(run[i]);
		check_run_pages(run[i], len[i]);
	}
	for (int i = 0; i < N; i++) {
		size_t to = 1 + (size_t)(sp_test_rand(&seed) % 700);

		if (sp_region_resize_pages(run[i], to)) {
			check_run_pages(run[i], to);
			assert_int_equal(sp_run_pages(run[i]), to);
		} else {
			check_run_pages(run[i], len[i]);
		}
	}
	for (int i = 0; i < N; i++) {
		size_t n = sp_run_pages(run[i]);

		assert_true(sp_region_free_pages(run[i]));
		for (size_t k = 0; k < n; k++)
			CHECK(sp_run_head_of(run[i] + (k << SP_PAGE_SHIFT)) !=
				      run[i],
			      "page %zu of a freed run", k);
	}
	/* a slab's page, and the space's last page (never handed out) */
	sink = segpool_malloc(opaque(64));
	assert_null(sp_run_head_of(sink));
	segpool_free(sink);
	assert_null(sp_run_head_of(sp_space.base + sp_space.size - 1));
}

/* segpool_malloc() above the classes costs whole pages, no more. */
static void test_exact_pages(void **state)
{
	static const size_t sizes[] = { 32 * KiB + 1, 33 * KiB, 36 * KiB,
					100 * KiB, 1 * MiB + 1, 3 * MiB,
					4 * MiB + 4 * KiB, 9 * MiB + 123 };
	size_t count0, bytes0, count1, bytes1;

	(void)state;
	/*
	 * On one CPU throughout: a move between reading the node and
	 * allocating puts the block on another node's region (seen on the
	 * emulated sparse machine, whose two CPUs are on two nodes).
	 */
	assert_int_equal(sp_test_pin(sp_test_allowed_cpu(0)), 0);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t want = SP_ALIGN(sizes[i], SP_PAGE_SIZE);
		int idx = sp_numa_current_idx();
		size_t used0 = pages_used(idx);
		char *p;

		sp_large_totals(&count0, &bytes0);
		p = segpool_malloc(sizes[i]);
		assert_non_null(p);
		assert_non_null(sp_space_page(p));
		assert_int_equal(sp_space_idx_of(p), idx);
		assert_int_equal(pages_used(idx),
				 used0 + (want >> SP_PAGE_SHIFT));
		assert_int_equal(segpool_usable_size(p), want);
		sp_large_totals(&count1, &bytes1);
		assert_int_equal(count1, count0 + 1);
		assert_int_equal(bytes1, bytes0 + want);
		memset(p, 0x5a, want);
		segpool_free(p);
		assert_int_equal(pages_used(idx), used0);
		sp_large_totals(&count1, &bytes1);
		assert_int_equal(count1, count0);
	}
	sp_test_unpin();
}

/* How many of the @pages pages at @p are resident. */
static size_t resident_pages(void *p, size_t pages)
{
	static unsigned char vec[(64 * MiB) / 4096];
	size_t n = 0;

	CHECK(pages <= sizeof(vec), "%zu pages", pages);
	CHECK(sp_test_mincore(p, pages << SP_PAGE_SHIFT, vec) == 0, "%m");
	for (size_t i = 0; i < pages; i++)
		n += vec[i] & 1;
	return n;
}

/* A run of @pages on region 0, written at its first and last page. */
static char *run_written(size_t pages)
{
	bool dirty;
	char *p = sp_region_alloc_pages(0, pages, SP_PAGE_SIZE, &dirty);

	CHECK(p, "%zu pages", pages);
	p[0] = 1;
	p[(pages << SP_PAGE_SHIFT) - 1] = 1;
	return p;
}

/*
 * The first runs of a size go back at their free (numa/region.c): a run
 * larger than every run freed before is purged at its free and raises the
 * bar to its size, so the next run of that size stays resident for reuse;
 * a run of 128 KiB or less never goes at its free, and the bar follows
 * runs up to the largest (glibc's threshold stops at 32 MiB).  The decay
 * is off, so only the free itself can have purged; a kept run counts its
 * two written pages or more (huge pages where its chunk is advised).
 */
static void test_first_runs_purged(void **state)
{
	size_t small = (96 * KiB + SP_PAGE_SIZE - 1) >> SP_PAGE_SHIFT;
	size_t mid = (640 * KiB) >> SP_PAGE_SHIFT;
	size_t huge = (36 * MiB) >> SP_PAGE_SHIFT;
	size_t bar0;
	long decay = segpool_get_decay_ms();
	uint64_t purged0;
	char *p;

	(void)state;
	assert_int_equal(segpool_set_decay_ms(SEGPOOL_DECAY_NEVER), 0);
	assert_true(sp_decay_wait_idle(10000));	/* a pass under way ends */
	sp_region_purge(0);	/* far below the cap of dirty pages */
	sp_region_first_bar_reset();
	bar0 = sp_region_first_bar();
	assert_int_equal(bar0, (128 * KiB) >> SP_PAGE_SHIFT);

	/* at or below the bar: kept resident, the bar as it was */
	p = run_written(small);
	assert_true(sp_region_free_pages(p));
	CHECK(resident_pages(p, small) >= 2, "%zu", resident_pages(p, small));
	assert_int_equal(sp_region_first_bar(), bar0);

	/* the first of its size: purged at its free, the bar raised to it */
	purged0 = sp_space.region[0].purged_pages;
	p = run_written(mid);
	assert_true(resident_pages(p, mid) >= 2);
	assert_true(sp_region_free_pages(p));
	assert_int_equal(resident_pages(p, mid), 0);
	assert_int_equal(sp_region_first_bar(), mid);
	assert_true(sp_space.region[0].purged_pages >= purged0 + mid);

	/* the same size again: kept for reuse, the bar unchanged */
	p = run_written(mid);
	assert_true(sp_region_free_pages(p));
	assert_true(resident_pages(p, mid) >= 2);
	assert_int_equal(sp_region_first_bar(), mid);
	/* and a smaller one too */
	p = run_written(mid / 2);
	assert_true(sp_region_free_pages(p));
	assert_true(resident_pages(p, mid / 2) >= 2);

	/*
	 * past glibc's 32 MiB the bar follows too: the second one is kept
	 * (its written ends resident, a huge page each where the run's
	 * chunks are advised: SP_REGION_THP_RUN_MB)
	 */
	for (int round = 0; round < 2; round++) {
		p = run_written(huge);
		assert_true(sp_region_free_pages(p));
		if (round)
			assert_true(resident_pages(p, huge) >= 2);
		else
			assert_int_equal(resident_pages(p, huge), 0);
		assert_int_equal(sp_region_first_bar(), huge);
	}

	/* a double free is refused, the bar and the pages untouched */
	assert_false(sp_region_free_pages(p));
	assert_int_equal(sp_region_first_bar(), huge);
	assert_true(resident_pages(p, huge) >= 2);

	sp_region_purge(0);
	sp_region_first_bar_reset();
	assert_int_equal(segpool_set_decay_ms(decay), 0);
}

/* Every power of two is aligned to itself; aligned_alloc's align is kept. */
static void test_alignment(void **state)
{
	void *p[16];

	(void)state;
	for (size_t s = 64 * KiB; s <= 32 * MiB; s <<= 1) {
		for (int k = 0; k < 3; k++) {
			p[k] = segpool_malloc(s);
			assert_non_null(p[k]);
			assert_int_equal((uintptr_t)p[k] % s, 0);
			assert_int_equal(sp_run_pages(p[k]),
					 s >> SP_PAGE_SHIFT);
		}
		for (int k = 0; k < 3; k++)
			segpool_free(p[k]);
	}
	for (size_t a = 8 * KiB; a <= 32 * MiB; a <<= 1) {
		for (int k = 0; k < 3; k++) {
			p[k] = segpool_aligned_alloc(
				a, 40 * KiB + 100 * (size_t)k);
			assert_non_null(p[k]);
			assert_int_equal((uintptr_t)p[k] % a, 0);
			/* exact even when the alignment is larger */
			assert_int_equal(sp_run_pages(p[k]),
					 SP_ALIGN(40 * KiB + 100 * (size_t)k,
						  SP_PAGE_SIZE) >>
						 SP_PAGE_SHIFT);
		}
		for (int k = 0; k < 3; k++)
			segpool_free(p[k]);
	}
	/* above the runs: a mapping, still naturally aligned */
	p[0] = segpool_malloc(64 * MiB);
	assert_non_null(p[0]);
	assert_null(sp_space_page(p[0]));
	assert_int_equal((uintptr_t)p[0] % (64 * MiB), 0);
	segpool_free(p[0]);
}

/*
 * The node the kernel placed @p's page on (touched first), or -errno: the
 * kernel's page, smaller than segpool's in a PAGE_SHIFT=16 build on a
 * kernel of 16 KiB pages, where the rest of segpool's page may be untouched
 * (move_pages() says -ENOENT of it).
 */
static int page_node(char *p)
{
	uintptr_t mask = (uintptr_t)sysconf(_SC_PAGESIZE) - 1;
	void *page = (void *)((uintptr_t)p & ~mask);
	int status = -1;

	*(volatile char *)p = 1;
	if (move_pages(0, 1, &page, NULL, &status, 0))
		return -errno;
	return status;
}

/*
 * Every node's large blocks are on it: segpool_obj_node() says so, and so
 * does the kernel (move_pages(2), at both ends) unless nodes are emulated.
 */
static void test_node_placement(void **state)
{
	static const size_t sizes[] = { 40 * KiB, 2 * MiB, 10 * MiB, 70 * MiB };

	(void)state;
	print_message("# %d node(s)\n", segpool_numa_node_count());
	for (int i = 0; i < segpool_numa_node_count(); i++) {
		int node = segpool_numa_node_id(i);

		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			char *p = segpool_malloc_node(sizes[k], node);

			assert_non_null(p);
			assert_int_equal(segpool_obj_node(p), node);
			if (!sp_topo.fake) {
				assert_int_equal(page_node(p), node);
				assert_int_equal(page_node(p + sizes[k] - 1),
						 node);
			}
			if (sizes[k] < SP_RUN_MAX_SIZE) {
				assert_int_equal(sp_space_idx_of(p), i);
				/* an address inside the block answers too */
				assert_int_equal(
					segpool_obj_node(p + sizes[k] - 1),
					node);
			}
			segpool_free(p);
			if (sizes[k] < SP_RUN_MAX_SIZE) {
				errno = 0;
				assert_true(segpool_obj_node(p) < 0);
				assert_int_equal(errno, EINVAL);
			}
		}
	}
}

static void fill(unsigned char *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i += 509)
		p[i] = (unsigned char)(seed + i / 509);
}

static bool check(const unsigned char *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i += 509)
		if (p[i] != (unsigned char)(seed + i / 509))
			return false;
	return true;
}

/*
 * Two runs of 16 pages side by side (64 KiB of 4 KiB pages; sizes here are
 * in pages, so each step is a whole number of them whatever the page):
 * growing the first must move it while the second is there, and stays in
 * place once the second is gone.
 */
#define PG(n)	((size_t)(n) * SP_PAGE_SIZE)

static void test_realloc_in_place_and_moving(void **state)
{
	enum { N = 64 };
	unsigned char *p[N], *a = NULL, *b = NULL, *q;
	int ia = -1;

	(void)state;
	for (int i = 0; i < N; i++) {
		p[i] = segpool_malloc(PG(16));
		assert_non_null(p[i]);
	}
	for (int i = 0; i < N && !a; i++)
		for (int j = 0; j < N; j++)
			if (p[i] + PG(16) == p[j]) {
				a = p[i];
				b = p[j];
				ia = i;
				p[j] = NULL;
				break;
			}
	assert_non_null(a);
	p[ia] = NULL;
	fill(a, PG(16), 7);
	/* b follows a: a grows by moving, content kept */
	q = segpool_realloc(a, PG(25));
	assert_non_null(q);
	assert_ptr_not_equal(q, a);
	assert_true(check(q, PG(16), 7));
	assert_int_equal(segpool_usable_size(q), PG(25));
	segpool_free(q);
	/* the pages after b: free (b's buddy block was split for it)? make
	 * them so by shrinking b first, then grow it back in place */
	fill(b, PG(16), 9);
	q = segpool_realloc(b, PG(10));
	assert_ptr_equal(q, b);
	assert_int_equal(segpool_usable_size(b), PG(10));
	q = segpool_realloc(b, PG(15));
	assert_ptr_equal(q, b);
	assert_true(check(b, PG(10), 9));
	/* and a shrink keeps the address and the bytes it keeps */
	q = segpool_realloc(b, PG(9));
	assert_ptr_equal(q, b);
	assert_true(check(b, PG(9), 9));
	segpool_free(b);
	for (int i = 0; i < N; i++)
		segpool_free(p[i]);
}

/* A whole top block shrunk then grown back: in place each time. */
static void test_realloc_grow_in_place(void **state)
{
	unsigned char *p, *q;
	size_t sz;

	(void)state;
	p = segpool_malloc(4 * MiB);
	assert_non_null(p);
	q = segpool_realloc(p, 40 * KiB);
	assert_ptr_equal(q, p);
	fill(p, 40 * KiB, 3);
	for (sz = 40 * KiB; sz < 4 * MiB; sz = sz * 3 / 2) {
		q = segpool_realloc(p, sz);
		assert_ptr_equal(q, p);
		assert_true(check(p, 40 * KiB, 3));
		p[sz - 1] = 0x77;
	}
	segpool_free(p);
}

/* Growth by 1.5x from 40 KiB to 256 MiB: runs, then mappings by mremap. */
static void test_realloc_growth_and_remap(void **state)
{
	unsigned char *p, *q;
	size_t sz, prev = 40 * KiB, moves = 0, steps = 0;
	bool mapped = false;

	(void)state;
	p = segpool_malloc(prev);
	assert_non_null(p);
	fill(p, prev, 11);
	p[prev - 1] = 0x33;
	for (sz = prev * 3 / 2; sz <= 256 * MiB; sz = sz * 3 / 2) {
		q = segpool_realloc(p, sz);
		assert_non_null(q);
		moves += q != p;
		steps++;
		/* a move by mremap keeps the offset within a huge page */
		if (q != p && sz >= SP_RUN_MAX_SIZE && !sp_on_valgrind)
			assert_int_equal((uintptr_t)q % SP_OS_HUGE_SIZE,
					 (uintptr_t)p % SP_OS_HUGE_SIZE);
		assert_true(check(q, 40 * KiB, 11));
		assert_int_equal(q[prev - 1], 0x33);
		assert_true(segpool_usable_size(q) >= sz);
		if (sz >= SP_RUN_MAX_SIZE) {
			assert_null(sp_space_page(q));
			mapped = true;
		} else {
			assert_non_null(sp_space_page(q));
		}
		q[sz - 1] = 0x33;
		p = q;
		prev = sz;
	}
	print_message("# %zu steps, %zu moves\n", steps, moves);
	assert_true(mapped);
	/* a mapping shrinks by mremap, and back below the runs' limit */
	q = segpool_realloc(p, 65 * MiB);
	assert_non_null(q);
	assert_true(check(q, 40 * KiB, 11));
	q = segpool_realloc(q, 40 * MiB);
	assert_non_null(q);
	assert_true(check(q, 40 * KiB, 11));
	/* and to a size class: a copy */
	p = segpool_realloc(q, 1000);
	assert_non_null(p);
	assert_true(check(p, 1000, 11));
	q = segpool_realloc(p, 5 * MiB);
	assert_non_null(q);
	assert_true(check(q, 1000, 11));
	segpool_free(q);
}

/* A reservation like an address sits at its offset within a huge page. */
static void test_reserve_like(void **state)
{
	static const size_t offs[] = { 0, 4 * KiB, 1 * MiB, 2 * MiB - 4 * KiB };

	(void)state;
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		uintptr_t at = (uintptr_t)0x7f0000000000 + offs[i];
		const void *like = (const void *)at;
		void *p = sp_os_reserve_like(like, 8 * MiB + 4 * KiB);

		assert_non_null(p);
		assert_int_equal((uintptr_t)p % SP_OS_HUGE_SIZE, offs[i]);
		sp_os_unmap(p, 8 * MiB + 4 * KiB);
	}
}

/* calloc of pages a freed block dirtied reads zero. */
static void test_calloc_zeroed(void **state)
{
	for (int round = 0; round < 4; round++) {
		unsigned char *p = segpool_malloc(MiB), *q;

		(void)state;
		assert_non_null(p);
		memset(p, 0xff, MiB);
		segpool_free(p);
		q = segpool_calloc(1, MiB);
		assert_non_null(q);
		assert_true(sp_test_all_bytes(q, 0, MiB));
		memset(q, 0xee, MiB);
		segpool_free(q);
	}
}

/* Pages of [@p, @p + @pages pages) that are not resident, marked in @out. */
static size_t nonresident(const void *p, size_t pages, unsigned char *out)
{
	size_t n = 0;

	assert_int_equal(mincore((void *)p, pages << SP_PAGE_SHIFT, out), 0);
	for (size_t i = 0; i < pages; i++) {
		out[i] = !(out[i] & 1);
		n += out[i];
	}
	return n;
}

#define ZERO_TEST_PAGES	300	/* more than one mincore() batch of os/ */

/*
 * sp_os_zero() clears the resident pages of a range and leaves the others
 * out: after it every byte reads zero, and a page nobody had touched is
 * still not resident (clearing it would have faulted it in).
 */
static void test_os_zero(void **state)
{
	static unsigned char before[ZERO_TEST_PAGES], after[ZERO_TEST_PAGES];
	size_t bytes = (size_t)ZERO_TEST_PAGES << SP_PAGE_SHIFT, out;
	unsigned char *p;

	(void)state;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	/* no huge pages here: a touched page must not back its neighbours */
	madvise(p, bytes, MADV_NOHUGEPAGE);
	/* runs of 7 pages touched and 7 not, one short run at each end */
	for (size_t i = 0; i < ZERO_TEST_PAGES; i++)
		if ((i / 7) % 2 == 0)
			memset(p + (i << SP_PAGE_SHIFT) + 100, 0xa5, 200);
	out = nonresident(p, ZERO_TEST_PAGES, before);
	if (!out) {
		munmap(p, bytes);
		print_message("# skipped: every page already resident\n");
		skip();
	}
	sp_os_zero(p, bytes);
	assert_int_equal(nonresident(p, ZERO_TEST_PAGES, after), out);
	for (size_t i = 0; i < ZERO_TEST_PAGES; i++)
		CHECK(after[i] == before[i], "page %zu: resident %d, was %d",
		      i, !after[i], !before[i]);
	assert_true(sp_test_all_bytes(p, 0, bytes));
	munmap(p, bytes);
}

#define ZERO_LOCKED_PAGES	16	/* below any RLIMIT_MEMLOCK in use */

/*
 * Pages locked on fault (mlock2(MLOCK_ONFAULT)) cannot be discarded: the
 * kernel refuses MADV_DONTNEED on them, and sp_os_zero() clears them
 * instead.  Written pages among them must read zero all the same.
 */
static void test_os_zero_locked(void **state)
{
	size_t bytes = (size_t)ZERO_LOCKED_PAGES << SP_PAGE_SHIFT;
	unsigned char *p;

	(void)state;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	if (mlock2(p, bytes, MLOCK_ONFAULT)) {
		munmap(p, bytes);
		print_message("# skipped: mlock2(MLOCK_ONFAULT): %s\n",
			      strerror(errno));
		skip();
	}
	/* every other page written, the rest never touched */
	for (size_t i = 0; i < ZERO_LOCKED_PAGES; i += 2)
		memset(p + (i << SP_PAGE_SHIFT), 0x3c, SP_PAGE_SIZE);
	assert_int_equal(madvise(p + SP_PAGE_SIZE, SP_PAGE_SIZE,
				 MADV_DONTNEED), -1);
	sp_os_zero(p, bytes);
	assert_true(sp_test_all_bytes(p, 0, bytes));
	munlock(p, bytes);
	munmap(p, bytes);
}

/*
 * calloc of a block that comes from a dirty free block: the pages the
 * block's last user never touched stay out (large/large.c, sp_os_zero()),
 * as they do under a malloc that maps its large blocks fresh.  The size is
 * not a power of two (no natural alignment, so the run is the one freed
 * just before: the region's free lists give the newest block first).
 */
static void test_calloc_leaves_untouched_out(void **state)
{
	size_t bytes = MiB + 3 * SP_PAGE_SIZE, pages = bytes >> SP_PAGE_SHIFT;
	static unsigned char before[(MiB >> SP_PAGE_SHIFT) + 3],
		after[(MiB >> SP_PAGE_SHIFT) + 3];
	unsigned char *p, *q;
	size_t out;

	(void)state;
	/* earlier tests left dirty blocks whose pages are all resident */
	for (int i = 0; i < sp_space.nr_regions; i++)
		sp_region_purge(i);
	p = segpool_malloc(bytes);
	assert_non_null(p);
	/* small pages: a huge one would back the untouched ones too */
	sp_os_advise_huge(p, bytes, false);
	memset(p, 0x5a, SP_PAGE_SIZE);
	p[bytes - 1] = 0x5a;
	segpool_free(p);
	out = nonresident(p, pages, before);
	q = segpool_calloc(1, bytes);
	assert_non_null(q);
	CHECK(q == p, "calloc returned %p, not the block freed at %p",
	      (void *)q, (void *)p);
	if (!out) {
		segpool_free(q);
		print_message("# skipped: every page of the block resident\n");
		skip();
	}
	assert_int_equal(nonresident(q, pages, after), out);
	for (size_t i = 0; i < pages; i++)
		CHECK(after[i] == before[i], "page %zu: resident %d, was %d",
		      i, !after[i], !before[i]);
	assert_true(sp_test_all_bytes(q, 0, bytes));
	segpool_free(q);
}

static void test_bad_input(void **state)
{
	char *p;

	(void)state;
	errno = 0;
	assert_null(segpool_malloc(opaque(SIZE_MAX)));
	assert_int_equal(errno, ENOMEM);
	errno = 0;
	assert_null(segpool_malloc(opaque(SIZE_MAX - SP_PAGE_SIZE + 2)));
	assert_int_equal(errno, ENOMEM);
	errno = 0;
	assert_null(segpool_calloc(opaque(SIZE_MAX / 2), 3));
	assert_int_equal(errno, ENOMEM);
	errno = 0;
	assert_null(segpool_aligned_alloc(opaque(3 * 64 * KiB), 100 * KiB));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(segpool_aligned_alloc(MiB, opaque(SIZE_MAX - 10)));
	assert_int_equal(errno, ENOMEM);
	p = segpool_malloc(PG(25));
	assert_non_null(p);
	memset(p, 0x42, PG(25));
	errno = 0;
	assert_null(segpool_realloc(p, opaque(SIZE_MAX - 1)));
	assert_int_equal(errno, ENOMEM);
	assert_true(sp_test_all_bytes(p, 0x42, PG(25)));
	assert_int_equal(segpool_usable_size(p), PG(25));
	/* an interior pointer has no usable size */
	errno = 0;
	assert_int_equal(segpool_usable_size(p + SP_PAGE_SIZE), 0);
	assert_int_equal(errno, EINVAL);
	segpool_free(p);
}

/* The death tests free or realloc an address the parent prepared. */
static void die_free(void *arg)
{
	segpool_free(arg);
}

static void die_realloc(void *arg)
{
	sink = segpool_realloc(arg, MiB);
}

static void expect_reported(void (*fn)(void *), void *ptr, const char *what)
{
	char addr[32];

	assert_true(sp_test_expect_death(fn, ptr, what));
	/* the report names the address */
	snprintf(addr, sizeof(addr), "%p", ptr);
	assert_true(sp_test_expect_death(fn, ptr, addr));
}

static void test_misuse_reported(void **state)
{
	struct sp_region *r = &sp_space.region[0];
	char *p = segpool_malloc(MiB), *q = segpool_malloc(40 * KiB);
	char *gone = segpool_malloc(300 * KiB);

	assert_non_null(p);
	assert_non_null(q);
	assert_non_null(gone);
	segpool_free(gone);
	expect_reported(die_free, p + 3 * SP_PAGE_SIZE,
			"free of interior pointer");
	expect_reported(die_free, q + 16, "free of interior pointer");
	expect_reported(die_free, p + SP_PAGE_SIZE - 8,
			"free of interior pointer");
	expect_reported(die_realloc, p + 2 * SP_PAGE_SIZE,
			"realloc of interior pointer");
	/* a double free, and a page of the region nobody was given */
	expect_reported(die_free, gone, "free of foreign pointer");
	if (r->top < r->nr_pages)
		expect_reported(die_free, r->base + (r->top << SP_PAGE_SHIFT),
				"free of foreign pointer");
	segpool_free(p);
	segpool_free(q);
	/* the page map is intact in this process: a full split-merge round */
	test_split_merge(state);
}

/* A child frees its parent's large blocks, allocates its own, and exits. */
static void test_fork(void **state)
{
	enum { N = 24 };
	unsigned char *p[N];
	int status;
	pid_t pid;

	(void)state;
	for (int i = 0; i < N; i++) {
		p[i] = segpool_malloc(40 * KiB + (size_t)i * 97 * KiB);
		assert_non_null(p[i]);
		fill(p[i], 40 * KiB, (unsigned int)i);
	}
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int bad = 0;

		for (int i = 0; i < N; i++) {
			bad |= !check(p[i], 40 * KiB, (unsigned int)i);
			segpool_free(p[i]);
		}
		for (int i = 0; i < N; i++) {
			p[i] = segpool_malloc(33 * KiB + (size_t)i * 211 * KiB);
			bad |= !p[i];
			if (p[i])
				memset(p[i], i, 33 * KiB);
			p[i] = segpool_realloc(p[i], 2 * MiB);
			bad |= !p[i];
		}
		for (int i = 0; i < N; i++)
			segpool_free(p[i]);
		_exit(bad ? 1 : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* the parent's blocks are untouched by the child's frees */
	for (int i = 0; i < N; i++) {
		assert_true(check(p[i], 40 * KiB, (unsigned int)i));
		segpool_free(p[i]);
	}
}

/*
 * Threads that allocate, grow and free runs, half of them freed by the
 * next thread: every block keeps its bytes, and no run is left over.
 */
enum { NR_THREADS = 4, PER_THREAD = 64, ROUNDS = 40 };

struct churner {
	int id;
	uint64_t seed;
	unsigned char *handoff[PER_THREAD];	/* to the next thread */
	pthread_barrier_t *bar;
	struct churner *next;
	int bad;
};

static void *churn(void *arg)
{
	struct churner *t = arg;
	unsigned char *mine[PER_THREAD];

	for (int round = 0; round < ROUNDS; round++) {
		for (int i = 0; i < PER_THREAD; i++) {
			size_t sz =
				33 * KiB + sp_test_rand(&t->seed) % (600 * KiB);

			mine[i] = segpool_malloc(sz);
			if (!mine[i]) {
				t->bad = 1;
				return NULL;
			}
			memset(mine[i], t->id, 33 * KiB);
			if (i & 1) {
				unsigned char *q =
					segpool_realloc(mine[i], sz * 2);

				if (!q) {
					t->bad = 1;
					return NULL;
				}
				mine[i] = q;
			}
		}
		for (int i = 0; i < PER_THREAD; i++)
			if (!sp_test_all_bytes(mine[i], (unsigned char)t->id,
					       33 * KiB))
				t->bad = 1;
		/* free the even ones here, hand the odd ones over */
		for (int i = 0; i < PER_THREAD; i++)
			if (!(i & 1))
				segpool_free(mine[i]);
		for (int i = 0; i < PER_THREAD; i++)
			t->handoff[i] = (i & 1) ? mine[i] : NULL;
		pthread_barrier_wait(t->bar);
		for (int i = 0; i < PER_THREAD; i++)
			if (t->next->handoff[i])
				segpool_free(t->next->handoff[i]);
		pthread_barrier_wait(t->bar);
	}
	return NULL;
}

static void test_threads_cross_free(void **state)
{
	struct churner t[NR_THREADS];
	pthread_t th[NR_THREADS];
	pthread_barrier_t bar;
	uint64_t seed = sp_test_seed();
	size_t runs0 = 0, runs1 = 0, bytes0, bytes1;

	(void)state;
	sp_large_totals(&runs0, &bytes0);
	pthread_barrier_init(&bar, NULL, NR_THREADS);
	for (int i = 0; i < NR_THREADS; i++) {
		t[i] = (struct churner){ .id = i + 1, .bar = &bar,
					 .next = &t[(i + 1) % NR_THREADS],
					 .seed = seed + (uint64_t)i };
	}
	for (int i = 0; i < NR_THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, churn, &t[i]), 0);
	for (int i = 0; i < NR_THREADS; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(t[i].bad, 0);
	}
	pthread_barrier_destroy(&bar);
	sp_large_totals(&runs1, &bytes1);
	assert_int_equal(runs1, runs0);
	assert_int_equal(bytes1, bytes0);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test_setup(test_split_merge, setup),
	cmocka_unit_test_setup(test_run_anchors, setup),
	cmocka_unit_test_setup(test_exact_pages, setup),
	cmocka_unit_test_setup(test_first_runs_purged, setup),
	cmocka_unit_test_setup(test_alignment, setup),
	cmocka_unit_test_setup(test_node_placement, setup),
	cmocka_unit_test_setup(test_realloc_in_place_and_moving, setup),
	cmocka_unit_test_setup(test_realloc_grow_in_place, setup),
	cmocka_unit_test_setup(test_realloc_growth_and_remap, setup),
	cmocka_unit_test(test_reserve_like),
	cmocka_unit_test_setup(test_calloc_zeroed, setup),
	cmocka_unit_test(test_os_zero),
	cmocka_unit_test(test_os_zero_locked),
	cmocka_unit_test_setup(test_calloc_leaves_untouched_out, setup),
	cmocka_unit_test_setup(test_bad_input, setup),
	cmocka_unit_test_setup(test_misuse_reported, setup),
	cmocka_unit_test_setup(test_fork, setup),
	cmocka_unit_test_setup(test_threads_cross_free, setup),
};

SP_TEST_MAIN(tests)
