// SPDX-License-Identifier: MIT
/*
 * selftests/unit/test_region.c - the NUMA backend and slab geometry, from
 * inside: buddy allocator, pagemap ownership, commit rollback, topology, CPU
 * lists, size-class table and slab geometry bounds.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <segpool/segpool.h>

#include "selftests/lib/harness.h"
#include "core/core.h"
#include "os/faultpoint.h"
#include "numa/region.h"
#include "numa/topology.h"
#include "os/cpu.h"
#include "slab/slab.h"

#define OWNER_A ((uintptr_t)0x1000)
#define OWNER_B ((uintptr_t)0x2000)

static int setup(void **state)
{
	(void)state;
	return sp_init();
}

/* Is every page of [p, p + 2^order pages) owned by @owner? */
static bool owned_by(void *p, unsigned int order, uintptr_t owner)
{
	for (size_t i = 0; i < (1UL << order); i++)
		if (sp_space_owner((char *)p + i * SP_PAGE_SIZE) != owner)
			return false;
	return true;
}

static void test_blocks_aligned_and_owned(void **state)
{
	void *blocks[SP_MAX_ORDER + 1];

	(void)state;
	for (unsigned int o = 0; o <= SP_MAX_ORDER; o++) {
		blocks[o] = sp_region_alloc(0, o, OWNER_A);
		assert_non_null(blocks[o]);
		assert_int_equal((uintptr_t)blocks[o] % (SP_PAGE_SIZE << o), 0);
		assert_true(owned_by(blocks[o], o, OWNER_A));
		assert_int_equal(sp_space_idx_of(blocks[o]), 0);
		/* committed memory: writable end to end */
		memset(blocks[o], 0xa5, SP_PAGE_SIZE << o);
	}
	for (unsigned int o = 0; o <= SP_MAX_ORDER; o++) {
		sp_region_set_owner(blocks[o], o, OWNER_B);
		assert_true(owned_by(blocks[o], o, OWNER_B));
		sp_region_free(blocks[o], o);
		/* a freed block has no owner: lookups treat it as foreign */
		assert_true(owned_by(blocks[o], o, 0));
	}
}

static void snapshot_free(struct sp_region *r, size_t *nr_free, size_t *used)
{
	pthread_mutex_lock(&r->lock);
	memcpy(nr_free, r->nr_free, sizeof(r->nr_free));
	/* count top-level blocks never carved as free ones too */
	nr_free[SP_MAX_ORDER] += (r->nr_pages - r->top) / SP_MAX_BLOCK_PAGES;
	*used = r->pages_used;
	pthread_mutex_unlock(&r->lock);
}

/*
 * The buddy decomposition of a free set is unique: after freeing all it
 * allocated, the region's free lists look exactly as before, so every split
 * was merged back.
 */
static void test_buddies_merge(void **state)
{
	struct sp_region *r = &sp_space.region[0];
	size_t before[SP_MAX_ORDER + 1], after[SP_MAX_ORDER + 1];
	size_t used_before, used_after;
	uint64_t seed = sp_test_seed();
	void *blk[200];
	unsigned int ord[200];

	(void)state;
	snapshot_free(r, before, &used_before);
	for (int i = 0; i < 200; i++) {
		ord[i] = (unsigned int)(sp_test_rand(&seed) % 6);
		blk[i] = sp_region_alloc(0, ord[i], OWNER_A);
		assert_non_null(blk[i]);
		for (int j = 0; j < i; j++)	/* no two blocks overlap */
			assert_true((char *)blk[j] + (SP_PAGE_SIZE << ord[j]) <=
				    (char *)blk[i] ||
				    (char *)blk[i] + (SP_PAGE_SIZE << ord[i]) <=
				    (char *)blk[j]);
	}
	/* free in a shuffled order */
	for (int i = 199; i > 0; i--) {
		int j = (int)(sp_test_rand(&seed) % (uint64_t)(i + 1));
		void *tb = blk[i];
		unsigned int to = ord[i];

		blk[i] = blk[j];
		ord[i] = ord[j];
		blk[j] = tb;
		ord[j] = to;
	}
	for (int i = 0; i < 200; i++)
		sp_region_free(blk[i], ord[i]);
	snapshot_free(r, after, &used_after);
	assert_int_equal(used_after, used_before);
	assert_memory_equal(after, before, sizeof(before));
}

static void test_free_releases_memory(void **state)
{
	unsigned char vec[SP_MAX_BLOCK_PAGES];
	char *p;

	(void)state;
	p = sp_region_alloc(0, SP_MAX_ORDER, OWNER_A);
	assert_non_null(p);
	memset(p, 1, SP_MAX_BLOCK_SIZE);
	assert_int_equal(sp_test_mincore(p, SP_MAX_BLOCK_SIZE, vec), 0);
	assert_true(vec[0] & 1);
	sp_region_free(p, SP_MAX_ORDER);
	/* dirty until the decay finds it older than the delay */
	sp_region_decay(0, sp_region_now_ns() + 2000000000ULL, 1000000000ULL);
	assert_int_equal(sp_test_mincore(p, SP_MAX_BLOCK_SIZE, vec), 0);
	for (size_t i = 0; i < SP_MAX_BLOCK_PAGES; i++)
		assert_false(vec[i] & 1);
}

static void test_commit_failure_rolls_back(void **state)
{
	struct sp_region *r = &sp_space.region[0];
	void *held[64];
	size_t top, committed;
	int n = 0;

	(void)state;
	/* use up what is committed so the next block needs a new chunk */
	pthread_mutex_lock(&r->lock);
	top = r->top;
	committed = r->committed;
	pthread_mutex_unlock(&r->lock);
	while (top + SP_MAX_BLOCK_PAGES <= committed && n < 64) {
		held[n] = sp_region_alloc(0, SP_MAX_ORDER, OWNER_A);
		assert_non_null(held[n]);
		n++;
		pthread_mutex_lock(&r->lock);
		top = r->top;
		pthread_mutex_unlock(&r->lock);
	}
	/* any free blocks of max order would satisfy it: take them too */
	while (n < 64 && r->free_head[SP_MAX_ORDER] != SP_PAGE_NONE) {
		held[n] = sp_region_alloc(0, SP_MAX_ORDER, OWNER_A);
		assert_non_null(held[n]);
		n++;
	}
	assert_true(n < 64);
	sp_fault_arm(SP_FAULT_COMMIT, 0, 1);
	errno = 0;
	assert_null(sp_region_alloc(0, SP_MAX_ORDER, OWNER_A));
	assert_int_equal(errno, ENOMEM);
	assert_int_equal(r->committed, committed);
	assert_int_equal(r->top, top);
	held[n] = sp_region_alloc(0, SP_MAX_ORDER, OWNER_A);
	assert_non_null(held[n]);
	n++;
	while (n--)
		sp_region_free(held[n], SP_MAX_ORDER);
}

static void test_outside_arena_is_foreign(void **state)
{
	int local;
	void *heap = malloc(16);

	(void)state;
	assert_null(sp_space_page(&local));
	assert_null(sp_space_page(heap));
	assert_int_equal(sp_space_owner(heap), 0);
	assert_int_equal(sp_space_idx_of(heap), -1);
	/* reserved but never handed out */
	assert_int_equal(sp_space_owner(sp_space.base + sp_space.size - 1), 0);
	free(heap);
}

static void test_topology_consistent(void **state)
{
	(void)state;
	assert_true(sp_topo.nr_nodes >= 1);
	assert_int_equal(segpool_numa_node_count(), sp_topo.nr_nodes);
	for (int i = 0; i < sp_topo.nr_nodes; i++) {
		int id = sp_topo.node_id[i];

		assert_int_equal(sp_numa_node_to_idx(id), i);
		assert_int_equal(segpool_numa_node_id(i), id);
		assert_int_equal(sp_topo.fallback[i][0], i);
	}
	for (int c = 0; c < sp_topo.nr_cpus; c++)
		assert_true(sp_topo.cpu_idx[c] >= 0 &&
			    sp_topo.cpu_idx[c] < sp_topo.nr_nodes);
	assert_int_equal(sp_numa_node_to_idx(-1), -1);
	assert_int_equal(sp_numa_node_to_idx(SP_MAX_NODE_ID + 1), -1);
	assert_true(sp_numa_current_idx() >= 0);
	assert_int_equal(sp_space.nr_regions, sp_topo.nr_nodes);
	assert_true(SP_IS_POW2(sp_space.size / (size_t)sp_space.nr_regions));
}

static void test_cpu_list_parse(void **state)
{
	(void)state;
	assert_int_equal(sp_cpu_parse_list("0\n"), 0);
	assert_int_equal(sp_cpu_parse_list("0-3\n"), 3);
	assert_int_equal(sp_cpu_parse_list("0-3,8,10-11"), 11);
	assert_int_equal(sp_cpu_parse_list("5,2"), 5);
	assert_int_equal(sp_cpu_parse_list("3-1"), -1);
	assert_int_equal(sp_cpu_parse_list("a"), -1);
	assert_int_equal(sp_cpu_parse_list("1-"), -1);
	/* the bits too, ids past the mask's end counted but not set */
	{
		unsigned long m[2] = { 0 };

		assert_int_equal(sp_cpu_parse_mask("0,2-3,63-65,200\n", m,
						   65), 200);
		assert_true(m[0] == (0xdUL | 1UL << 63));
		assert_true(m[1] == 1UL);
		memset(m, 0, sizeof(m));
		assert_int_equal(sp_cpu_parse_mask("1,x", m, 64), -1);
		assert_int_equal(sp_cpu_parse_mask("", m, 64), -1);
	}
	assert_true(sp_cpu_possible_count() >=
		    (int)sysconf(_SC_NPROCESSORS_ONLN));
}

static void test_kmalloc_classes(void **state)
{
	(void)state;
	for (size_t sz = 0; sz <= SEGPOOL_KMALLOC_MAX_CACHE_SIZE; sz++) {
		unsigned int i = sp_kmalloc_index(sz);

		assert_true(i < SP_KMALLOC_NR_CLASSES);
		assert_true(sp_kmalloc_class_size(i) >= sz);
		/* smallest class that fits */
		if (i > 0)
			assert_true(sp_kmalloc_class_size(i - 1) <
				    SP_MAX(sz, 1UL));
		/* internal waste under 25% above 128 bytes */
		if (sz > 128)
			assert_true((sp_kmalloc_class_size(i) - sz) * 4 <
				    sp_kmalloc_class_size(i));
		if (sz > 8)
			assert_int_equal(sp_kmalloc_class_size(i) % 16, 0);
	}
}

static void test_geometry_bounds(void **state)
{
	(void)state;
	for (size_t size = 1; size <= SEGPOOL_CACHE_MAX_SIZE;
	     size = size < 256 ? size + 1 : size + size / 7 + 1) {
		static const size_t aligns[] = { 0, 8, 64, 512, 4096 };

		for (unsigned int a = 0; a < 5; a++) {
			struct segpool_cache c = { .flags = 0 };
			size_t slab, waste;

			assert_int_equal(
				sp_geometry_compute(&c, size, aligns[a]), 0);
			slab = SP_PAGE_SIZE << c.order;
			waste = slab - (size_t)c.objs_per_slab * c.stride;
			assert_true(c.objs_per_slab >= 1);
			assert_true(c.stride >= size);
			assert_int_equal(c.stride % c.align, 0);
			assert_true(c.align >= SP_MAX(aligns[a], 8UL));
			/* the kernel's bound: at most 1/8 of a slab wasted */
			assert_true(waste * 8 <= slab);
		}
	}
}

static void test_geometry_ctor_link_outside(void **state)
{
	struct segpool_cache c = { .ctor = (void (*)(void *))abort };

	(void)state;
	assert_int_equal(sp_geometry_compute(&c, 64, 0), 0);
	assert_true(c.fp_offset >= 64);
	assert_true(c.fp_offset + sizeof(void *) <= c.stride);
	assert_true(c.flags & SP_CACHE_FREEPTR_OUT);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test_setup(test_blocks_aligned_and_owned, setup),
	cmocka_unit_test_setup(test_buddies_merge, setup),
	cmocka_unit_test_setup(test_free_releases_memory, setup),
	cmocka_unit_test_setup(test_commit_failure_rolls_back, setup),
	cmocka_unit_test_setup(test_outside_arena_is_foreign, setup),
	cmocka_unit_test_setup(test_topology_consistent, setup),
	cmocka_unit_test_setup(test_cpu_list_parse, setup),
	cmocka_unit_test_setup(test_kmalloc_classes, setup),
	cmocka_unit_test_setup(test_geometry_bounds, setup),
	cmocka_unit_test_setup(test_geometry_ctor_link_outside, setup),
};

SP_TEST_MAIN(tests)
