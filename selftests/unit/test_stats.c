// SPDX-License-Identifier: MIT
/*
 * selftests/unit/test_stats.c - the statistics renderings, read back.
 *
 * Every output is parsed back the way a tool would read it: the slabinfo
 * dump row by row with sscanf(), the detail as "key value" lines, the JSON
 * with the selftests' small strict parser (selftests/lib/json.c, no library),
 * and the numbers are compared with an independent count of the objects the
 * test holds (slabs found from the objects' addresses, nodes from
 * segpool_obj_node()).  The counters are checked exactly after a known sequence
 * of operations on one pinned CPU, per CPU slot and per node.  Last, the three
 * renderings run in a loop while eight threads allocate, free, create and
 * destroy caches: no crash, every row whole, every document well-formed.
 *
 * The per-CPU mode is fixed per process, so the program runs once per mode
 * (SP_TEST_MAIN_VARIANTS, each run its own TAP line): the default mode
 * (rseq where it works, lock where not), lock, off, and the default with
 * regions bound to their nodes (SEGPOOL_NUMA_BIND=always).  Run by hand
 * without SEGPOOL_TEST_VARIANT, it prints each variant's command.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <segpool/segpool.h>

#include "segpool_config.h"
#include "core/core.h"
#include "os/faultpoint.h"
#include "percpu/pcpu.h"
#include "selftests/lib/harness.h"
#include "selftests/lib/json.h"
#include "selftests/lib/stats_parse.h"

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond))						\
			fail_msg(__VA_ARGS__);				\
	} while (0)

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* --- variants ----------------------------------------------------------- */

static const char *const env_default[] = {
	"SEGPOOL_PERCPU", "SEGPOOL_PERCPU_ID", "SEGPOOL_NUMA_BIND", NULL,
};
static const char *const env_lock[] = {
	"SEGPOOL_PERCPU=lock", "SEGPOOL_PERCPU_ID", "SEGPOOL_NUMA_BIND", NULL,
};
static const char *const env_off[] = {
	"SEGPOOL_PERCPU=off", "SEGPOOL_PERCPU_ID", "SEGPOOL_NUMA_BIND", NULL,
};
static const char *const env_bind[] = {
	"SEGPOOL_PERCPU", "SEGPOOL_PERCPU_ID", "SEGPOOL_NUMA_BIND=always", NULL,
};

static const struct sp_test_variant variants[] = {
	{ "mode=default", env_default },
	{ "mode=lock", env_lock },
	{ "mode=off", env_off },
	{ "numa_bind=always", env_bind },
};

static bool variant_is(const char *name)
{
	const char *v = sp_test_variant();

	return v && !strcmp(v, name);
}

/* The per-CPU mode in force: "rseq", "lock" or "off". */
static const char *mode(void)
{
	static char m[8];

	if (!m[0])
		sscanf(segpool_percpu_mode(), "%7s", m);
	return m;
}

static bool has_pcpu(void)
{
	return strcmp(mode(), "off") != 0;
}

static int teardown(void **state)
{
	sp_test_unpin();
	return sp_test_faults_teardown(state);
}

/* --- slabs ------------------------------------------------------------- */

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

/* Distinct slabs among the live objects of @objs (slabs are size-aligned). */
static unsigned long count_slabs(void **objs, size_t n, size_t slab_bytes)
{
	uintptr_t *base = calloc(n ? n : 1, sizeof(*base));
	unsigned long slabs = 0;
	size_t k = 0;

	assert_non_null(base);
	for (size_t i = 0; i < n; i++)
		if (objs[i])
			base[k++] = (uintptr_t)objs[i] &
				    ~(uintptr_t)(slab_bytes - 1);
	qsort(base, k, sizeof(*base), cmp_ptr);
	for (size_t i = 0; i < k; i++)
		slabs += i == 0 || base[i] != base[i - 1];
	free(base);
	return slabs;
}

/* --- tests -------------------------------------------------------------- */

static void noop_ctor(void *obj)
{
	(void)obj;
}

static void test_bad_arguments(void **state)
{
	struct segpool_health h;
	FILE *f = tmpfile();

	(void)state;
	assert_non_null(f);
	errno = 0;
	assert_int_equal(segpool_stats_dump_detail(NULL, NULL, 0), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(segpool_stats_dump_detail(f, NULL, 1U << 7), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(segpool_stats_dump_detail(f, "no-such-cache", 0),
			 -ENOENT);
	assert_int_equal(errno, ENOENT);
	errno = 0;
	assert_int_equal(segpool_stats_json(NULL, 0), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(segpool_stats_json(f, ~SEGPOOL_STATS_FLAGS_VALID),
			 -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(segpool_stats_health(NULL), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(segpool_health_get(NULL), -EINVAL);
	assert_int_equal(errno, EINVAL);
	memset(&h, 0, sizeof(h));
	h.size = sizeof(h) - 1;
	errno = 0;
	assert_int_equal(segpool_health_get(&h), -EINVAL);
	assert_int_equal(errno, EINVAL);
	/* nothing was written by the refused calls */
	assert_int_equal(ftell(f), 0);
	fclose(f);
}

/*
 * A 100-byte cache: stride 104 (the size rounded up to 8, the link inside
 * the free object).  A map cache's slab grows to 32 KiB while a map holds
 * its objects (slab/geometry.c): 315 of them, 32 bytes wasted.
 */
#define G_SIZE		100
#define G_STRIDE	104
#define G_SLAB		(32 << 10)
#define G_PERSLAB	(G_SLAB / G_STRIDE)
#define G_MAG		28
#define G_DEPOT		4

static void test_slabinfo_golden(void **state)
{
	struct segpool_cache_tunables tun = { G_MAG, G_DEPOT };
	struct segpool_cache_info info;
	const size_t k = 200;
	void **objs = calloc(k, sizeof(*objs));
	struct segpool_cache *c;
	unsigned long slabs;
	struct sp_slabinfo_row r;

	(void)state;
	assert_non_null(objs);
	c = segpool_cache_create_tuned("st-golden", G_SIZE, 0, 0, NULL, &tun);
	assert_non_null(c);
	r = sp_slabinfo_row("st-golden");
	assert_int_equal(r.active, 0);
	assert_int_equal(r.num, 0);
	assert_int_equal(r.objsize, G_STRIDE);
	assert_int_equal(r.perslab, G_PERSLAB);
	assert_int_equal(r.pages, G_SLAB / SP_PAGE_SIZE);
	if (has_pcpu()) {
		assert_int_equal(r.limit, 2 * G_MAG);
		assert_int_equal(r.batch, G_MAG);
		assert_int_equal(r.shared, G_DEPOT);
	} else {
		assert_int_equal(r.limit + r.batch + r.shared + r.sharedavail,
				 0);
	}

	for (size_t i = 0; i < k; i++)
		assert_non_null(objs[i] = segpool_cache_alloc(c, 0));
	/* magazine rounds are free: only what the test holds is active */
	r = sp_slabinfo_row("st-golden");
	assert_int_equal(r.active, k);
	/* with the magazines drained every slab holds test objects only */
	assert_true(segpool_cache_shrink(c) >= 0);
	slabs = count_slabs(objs, k, G_SLAB);
	r = sp_slabinfo_row("st-golden");
	assert_int_equal(r.active, k);
	assert_int_equal(r.active_slabs, slabs);
	assert_int_equal(r.slabs, slabs);
	assert_int_equal(r.num, slabs * G_PERSLAB);
	assert_int_equal(r.sharedavail, 0);

	/* free every other one: they rest in magazines, not active */
	for (size_t i = 0; i < k; i += 2) {
		segpool_cache_free(c, objs[i]);
		objs[i] = NULL;
	}
	r = sp_slabinfo_row("st-golden");
	info = sp_test_info(c);
	assert_int_equal(r.active, k / 2);
	assert_int_equal(r.sharedavail, info.depot_objs);
	assert_int_equal(r.slabs, info.total_slabs);
	assert_int_equal(info.active_objs + info.cpu_objs + info.depot_objs,
			 has_pcpu() ? k : k / 2);
	assert_true(segpool_cache_shrink(c) >= 0);
	slabs = count_slabs(objs, k, G_SLAB);
	r = sp_slabinfo_row("st-golden");
	assert_int_equal(r.active, k / 2);
	assert_int_equal(r.active_slabs, slabs);
	assert_int_equal(r.slabs, slabs);
	assert_int_equal(r.sharedavail, 0);

	for (size_t i = 1; i < k; i += 2)
		segpool_cache_free(c, objs[i]);
	r = sp_slabinfo_row("st-golden");
	assert_int_equal(r.active, 0);
	assert_int_equal(segpool_cache_destroy(c), 0);
	/* a destroyed cache has no row */
	{
		char *text = sp_stats_capture(SP_STATS_SLABINFO, NULL);

		assert_null(strstr(text, "\nst-golden "));
		free(text);
	}
	free(objs);
}

/* The size classes: segpool_malloc() blocks the test holds are active. */
static void test_slabinfo_kmalloc(void **state)
{
	const size_t k = 300;
	void **blk = calloc(k, sizeof(*blk));
	struct sp_slabinfo_row before, r;

	(void)state;
	assert_non_null(blk);
	/* a class is made at its first use, or when looked up by name */
	assert_non_null(segpool_cache_find("kmalloc-48"));
	before = sp_slabinfo_row("kmalloc-48");
	assert_int_equal(before.objsize, 48);
	for (size_t i = 0; i < k; i++)
		assert_non_null(blk[i] = segpool_malloc(40));
	r = sp_slabinfo_row("kmalloc-48");
	assert_int_equal(r.active, before.active + k);
	for (size_t i = 0; i < k; i++)
		segpool_free(blk[i]);
	r = sp_slabinfo_row("kmalloc-48");
	assert_int_equal(r.active, before.active);
	free(blk);
}

/*
 * Every key of a cache block, in order (Documentation/reference/stats-keys.md).
 */
static const char *const detail_keys[] = {
	"object_size", "slab_size", "align", "objs_per_slab", "order",
	"pages_per_slab", "ctor", "flags", "max_empty", "percpu", "mag_size",
	"mag_size_max", "depot_max", "meta_bytes", "alloc_failures",
	"alloc_failslab",
	"active_objs", "total_objs", "active_slabs", "slabs", "partial_slabs",
	"full_slabs", "empty_slabs", "cpu_objs", "depot_objs",
	"depot_full_mags", "depot_empty_mags", "slab_bytes", "active_bytes",
	"cpu_bytes", "depot_bytes", "allocs", "frees", "alloc_direct",
	"free_direct", "fill_objs", "flush_objs", "alloc_slab", "free_slab",
	/* the per-CPU counters, as <segpool/counters.h> lists them */
#define CTR_KEY(key, id, class, unit, doc)	#key,
	SEGPOOL_PCPU_COUNTERS(CTR_KEY)
#undef CTR_KEY
};

/* Where the keys with a per-node split start, and the per-CPU counters. */
#define FIRST_NODE_KEY	16	/* active_objs */
#define FIRST_CTR_KEY	39	/* alloc_fastpath */

/* The keys of the block of @name in @text, in order, match @keys exactly. */
static void check_block_keys(const char *text, const char *name,
			     const char *const *keys, size_t n, bool percpu)
{
	char head[96];
	const char *p;
	size_t i = 0;

	snprintf(head, sizeof(head), "cache %s\n", name);
	p = strstr(text, head);
	CHECK(p && (p == text || p[-1] == '\n'), "no block for %s", name);
	p += strlen(head);
	for (; *p != '\n'; p = strchr(p, '\n') + 1, i++) {
		size_t len = strcspn(p, " \n");

		if (i == n && percpu) {
			CHECK(!strncmp(p, "slot_objs ", 10), "after the "
			      "counters: '%.*s'", (int)len, p);
			continue;
		}
		CHECK(i < n, "extra key '%.*s' in %s", (int)len, p, name);
		CHECK(strlen(keys[i]) == len && !strncmp(p, keys[i], len),
		      "key %zu of %s is '%.*s', not %s", i, name, (int)len, p,
		      keys[i]);
		CHECK(p[len] == ' ', "key %s has no value", keys[i]);
	}
	CHECK(i == n + (percpu ? 1 : 0), "%zu keys in %s", i, name);
}

/*
 * A 40-byte cache with a ctor and SEGPOOL_HWCACHE_ALIGN: the link goes
 * after the object (offset 40, 8 bytes), the stride is 48 rounded up to 64,
 * 64 objects a 4 KiB slab.
 */
static void test_detail_keys(void **state)
{
	struct segpool_cache *c;
	struct segpool_cache_info info;
	void *objs[70];
	char *text;
	int node;

	(void)state;
	assert_non_null(segpool_cache_find("kmalloc-64"));
	c = segpool_cache_create("st-detail", 40, 0, SEGPOOL_HWCACHE_ALIGN,
				 noop_ctor);
	assert_non_null(c);
	for (size_t i = 0; i < ARRAY_SIZE(objs); i++)
		assert_non_null(objs[i] = segpool_cache_alloc(c, 0));
	info = sp_test_info(c);
	node = segpool_obj_node(objs[0]);

	text = sp_stats_capture(SP_STATS_DETAIL, "st-detail");
	/* one cache asked for: its block and nothing else */
	CHECK(!strncmp(text, "cache st-detail\n", 16), "starts '%.20s'", text);
	CHECK(!strstr(text + 1, "\ncache ") && !strstr(text, "health\n"),
	      "more than one block");
	check_block_keys(text, "st-detail", detail_keys,
			 ARRAY_SIZE(detail_keys), false);
	assert_int_equal(sp_detail_num(text, "st-detail", "object_size"), 40);
	assert_int_equal(sp_detail_num(text, "st-detail", "slab_size"), 64);
	assert_int_equal(sp_detail_num(text, "st-detail", "align"), 64);
	/* a 64-byte stride fills a page: no header in it, none wasted */
	assert_int_equal(sp_detail_num(text, "st-detail", "objs_per_slab"),
			 SP_PAGE_SIZE / 64);
	assert_int_equal(sp_detail_num(text, "st-detail", "order"), 0);
	assert_int_equal(sp_detail_num(text, "st-detail", "pages_per_slab"), 1);
	assert_string_equal(sp_detail_str(text, "st-detail", "ctor"), "yes");
	assert_string_equal(sp_detail_str(text, "st-detail", "flags"),
			    "hwcache_align,freeptr_outside");
	assert_string_equal(sp_detail_str(text, "st-detail", "percpu"),
			    has_pcpu() ? "yes" : "no");
	assert_int_equal(sp_detail_num(text, "st-detail", "active_objs"),
			 ARRAY_SIZE(objs));
	assert_int_equal(sp_detail_num(text, "st-detail", "slabs"),
			 info.total_slabs);
	assert_int_equal(sp_detail_num(text, "st-detail", "slab_bytes"),
			 info.slab_bytes);
	assert_int_equal(sp_detail_num(text, "st-detail", "active_bytes"),
			 ARRAY_SIZE(objs) * 64);
	assert_int_equal(sp_detail_num(text, "st-detail", "cpu_objs"),
			 info.cpu_objs);
	assert_int_equal(sp_detail_num(text, "st-detail", "depot_objs"),
			 info.depot_objs);
	assert_int_equal(sp_detail_num(text, "st-detail", "cpu_bytes"),
			 info.cpu_objs * 64);
	assert_int_equal(sp_detail_num(text, "st-detail", "allocs"),
			 info.allocs);
	assert_int_equal(sp_detail_num(text, "st-detail", "mag_size"),
			 info.mag_size);
	assert_int_equal(sp_detail_num(text, "st-detail", "depot_max"),
			 info.depot_max);
	assert_int_equal(sp_detail_num(text, "st-detail", "alloc_failures"), 0);
	assert_int_equal(sp_detail_num(text, "st-detail", "alloc_slab"),
			 info.slabs_created);
	assert_int_equal(sp_detail_num(text, "st-detail", "partial_slabs") +
			 sp_detail_num(text, "st-detail", "full_slabs") +
			 sp_detail_num(text, "st-detail", "empty_slabs"),
			 info.total_slabs);
	/* every split field has one entry per node, summing to the total */
	for (size_t i = FIRST_NODE_KEY; i < FIRST_CTR_KEY; i++) {
		unsigned long long at;
		int count;
		unsigned long long sum = sp_detail_split(text, "st-detail",
						      detail_keys[i], 'N', node,
						      &at, &count);

		assert_int_equal(count, segpool_numa_node_count());
		assert_int_equal(sum, sp_detail_num(text, "st-detail",
						    detail_keys[i]));
	}
	free(text);

	/* all caches: the health block first, then this one among them */
	text = sp_stats_capture(SP_STATS_DETAIL_PERCPU, NULL);
	CHECK(!strncmp(text, "health\n", 7), "starts '%.20s'", text);
	check_block_keys(text, "st-detail", detail_keys,
			 ARRAY_SIZE(detail_keys), true);
	check_block_keys(text, "kmalloc-64", detail_keys,
			 ARRAY_SIZE(detail_keys), true);
	free(text);

	for (size_t i = 0; i < ARRAY_SIZE(objs); i++)
		segpool_cache_free(c, objs[i]);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/*
 * A slot's fills ramp up: the first takes SP_FILL_FIRST_BYTES of objects,
 * each next one twice as many, until a fill is a whole magazine but the
 * room for frees (sp_fill_size()): a program that takes a few objects of
 * a size class does not hold a magazine's worth of it.  256-byte objects
 * in magazines of 60: fills of 16, 32, then 45.
 */
static void test_first_fill_short(void **state)
{
	const unsigned int size = 256, first =
		SP_MAX(SP_FILL_FIRST_MIN, SP_FILL_FIRST_BYTES / size);
	int cpu = sp_test_allowed_cpu(0);
	const char *C = "st-first-fill";
	unsigned long long mag, want = 0, taken = 0;
	struct segpool_cache *c;
	void *objs[128];
	unsigned int n = 0;

	(void)state;
	if (!has_pcpu())
		skip();
	CHECK(sp_test_pin(cpu) == 0, "cannot pin to CPU %d", cpu);
	c = segpool_cache_create_tuned(C, size, 0, 0, NULL,
				       &(struct segpool_cache_tunables){
					       .mag_size = 60 });
	assert_non_null(c);
	mag = sp_test_info(c).mag_size;
	assert_true(2 * first < sp_fill_size((unsigned int)mag) &&
		    4 * first > sp_fill_size((unsigned int)mag) &&
		    first + 2 * first + 1 <= ARRAY_SIZE(objs));
	/* each fill used up before the next: 1, 2, then 3 fills */
	for (unsigned int fill = 0; fill < 3; fill++) {
		unsigned long long full = sp_fill_size((unsigned int)mag);
		unsigned long long got =
			SP_MIN((unsigned long long)first << fill, full);
		char *text;

		assert_non_null(objs[n++] = segpool_cache_alloc(c, 0));
		want += got;
		text = sp_stats_capture(SP_STATS_DETAIL_PERCPU, C);
		assert_int_equal(sp_detail_num(text, C, "mag_fill"), fill + 1);
		assert_int_equal(sp_detail_num(text, C, "fill_objs"), want);
		free(text);
		/* the rest of this fill, so that the next allocation fills */
		for (taken = 1; taken < got && fill < 2; taken++)
			assert_non_null(objs[n++] = segpool_cache_alloc(c, 0));
	}
	assert_int_equal(want, first + 2 * first +
			 sp_fill_size((unsigned int)mag));
	for (unsigned int i = 0; i < n; i++)
		segpool_cache_free(c, objs[i]);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/*
 * A known sequence on one pinned CPU: every magazine event lands in that
 * CPU's slot, every object on its node.  In rseq and lock modes the hits
 * are exact, so the four path counters add up to the operations.
 */
static void test_counters_exact(void **state)
{
	const size_t n1 = 150, n2 = 97;
	void **objs = calloc(n1, sizeof(*objs));
	unsigned long long at, mag, held[64] = { 0 };
	struct segpool_cache *c;
	int cpu = sp_test_allowed_cpu(0), node, count;
	const char *C = "st-counters";
	char *text;

	(void)state;
	assert_non_null(objs);
	CHECK(sp_test_pin(cpu) == 0, "cannot pin to CPU %d", cpu);
	node = segpool_numa_current_node();
	/* a fixed magazine size: use-driven growth would move the counts */
	c = segpool_cache_create_tuned(C, 64, 0, 0, NULL,
				       &(struct segpool_cache_tunables){
					       .mag_size = 60 });
	assert_non_null(c);
	mag = sp_test_info(c).mag_size;

	/* n1 allocations, n2 frees, all on this CPU */
	for (size_t i = 0; i < n1; i++)
		assert_non_null(objs[i] = segpool_cache_alloc(c, 0));
	for (size_t i = 0; i < n2; i++) {
		segpool_cache_free(c, objs[i]);
		objs[i] = NULL;
	}
	/* the independent count: held objects by node */
	for (size_t i = n2; i < n1; i++) {
		int nd = segpool_obj_node(objs[i]);

		assert_true(nd >= 0 && nd < 64);
		held[nd]++;
	}

	text = sp_stats_capture(SP_STATS_DETAIL_PERCPU, C);
	assert_int_equal(sp_detail_num(text, C, "allocs"), n1);
	assert_int_equal(sp_detail_num(text, C, "frees"), n2);
	assert_int_equal(sp_detail_num(text, C, "active_objs"), n1 - n2);
	for (int i = 0; i < segpool_numa_node_count(); i++) {
		int id = segpool_numa_node_id(i);

		sp_detail_split(text, C, "active_objs", 'N', id, &at, &count);
		assert_int_equal(at, held[id]);
		/* all objects come from the CPU's node */
		sp_detail_split(text, C, "allocs", 'N', id, &at, &count);
		assert_int_equal(at, id == node ? n1 : 0);
		sp_detail_split(text, C, "frees", 'N', id, &at, &count);
		assert_int_equal(at, id == node ? n2 : 0);
	}
	if (has_pcpu()) {
		/* fills of f objects each: ceil(n1 / f) slow paths */
		unsigned long long f = sp_fill_size((unsigned int)mag);
		unsigned long long fills = (n1 + f - 1) / f;
		unsigned long long cached;

		assert_int_equal(sp_detail_num(text, C, "alloc_fastpath") +
				 sp_detail_num(text, C, "alloc_slowpath"), n1);
		assert_int_equal(sp_detail_num(text, C, "free_fastpath") +
				 sp_detail_num(text, C, "free_slowpath"), n2);
		assert_int_equal(sp_detail_num(text, C, "alloc_slowpath"),
				 fills);
		assert_int_equal(sp_detail_num(text, C, "mag_fill"), fills);
		assert_int_equal(sp_detail_num(text, C, "fill_objs"),
				 fills * f);
		assert_int_equal(sp_detail_num(text, C, "alloc_direct"), 0);
		assert_int_equal(sp_detail_num(text, C, "bypass"), 0);
		assert_int_equal(sp_detail_num(text, C, "remote_free"), 0);
		/* per CPU: everything in this CPU's slot, nothing elsewhere */
		for (size_t i = FIRST_CTR_KEY; i < ARRAY_SIZE(detail_keys);
		     i++) {
			unsigned long long total =
				sp_detail_num(text, C, detail_keys[i]);
			unsigned long long sum = sp_detail_split(text, C,
				detail_keys[i], 'C', cpu, &at, &count);

			if (!strcmp(detail_keys[i], "bypass"))
				continue;	/* one shared word, no split */
			assert_int_equal(sum, total);
			assert_int_equal(at, total);
			assert_int_equal(count, total ? 1 : 0);
		}
		/* objects moved: fills are the slab layer's, one full
		 * magazine went to the depot and is still there */
		assert_int_equal(sp_detail_num(text, C, "mag_fill_objs"),
				 sp_detail_num(text, C, "fill_objs"));
		assert_int_equal(sp_detail_num(text, C, "depot_put_objs") -
				 sp_detail_num(text, C, "depot_get_objs"),
				 sp_detail_num(text, C, "depot_objs"));
		/* occupancy: all in this CPU's slot; with the depot, what the
		 * slabs gave minus what the application holds */
		cached = sp_detail_num(text, C, "cpu_objs");
		assert_int_equal(sp_detail_split(text, C, "slot_objs", 'C', cpu,
					      &at, &count), cached);
		assert_int_equal(at, cached);
		assert_int_equal(sp_detail_num(text, C, "fill_objs") -
					 sp_detail_num(text, C, "flush_objs") -
					 (n1 - n2),
				 cached + sp_detail_num(text, C, "depot_objs"));
	} else {
		for (size_t i = FIRST_CTR_KEY; i < ARRAY_SIZE(detail_keys); i++)
			assert_int_equal(sp_detail_num(text, C, detail_keys[i]),
					 0);
		assert_int_equal(sp_detail_num(text, C, "alloc_direct"), n1);
		assert_int_equal(sp_detail_num(text, C, "free_direct"), n2);
		assert_int_equal(sp_detail_num(text, C, "slot_objs"), 0);
	}
	/* slabs: created on this node only, the slab layer agrees */
	sp_detail_split(text, C, "alloc_slab", 'N', node, &at, &count);
	assert_int_equal(at, sp_detail_num(text, C, "alloc_slab"));
	assert_int_equal(sp_detail_num(text, C, "alloc_slab") -
			 sp_detail_num(text, C, "free_slab"),
			 sp_detail_num(text, C, "slabs"));
	free(text);

	for (size_t i = n2; i < n1; i++)
		segpool_cache_free(c, objs[i]);
	assert_int_equal(segpool_cache_destroy(c), 0);
	free(objs);
}

static void test_json_golden(void **state)
{
	static const char weird[] = "st-\"json\"\\name/";
	struct segpool_cache_info info;
	struct segpool_health h;
	struct segpool_cache *c, *w;
	const size_t k = 123;
	void **objs = calloc(k, sizeof(*objs));
	int root, caches, me, nodes, cpus;
	unsigned long long held_on[64] = { 0 }, total, in_slots;
	struct jdoc d;
	char *text;

	(void)state;
	assert_non_null(objs);
	CHECK(sp_test_pin(sp_test_allowed_cpu(0)) == 0, "cannot pin");
	c = segpool_cache_create("st-json", 72, 0, 0, NULL);
	w = segpool_cache_create(weird, 8, 0, 0, NULL);
	assert_non_null(c);
	assert_non_null(w);
	for (size_t i = 0; i < k; i++) {
		assert_non_null(objs[i] = segpool_cache_alloc(c, 0));
		held_on[segpool_obj_node(objs[i])]++;
	}
	info = sp_test_info(c);
	memset(&h, 0, sizeof(h));
	h.size = sizeof(h);
	assert_int_equal(segpool_health_get(&h), 0);

	text = sp_stats_capture(SP_STATS_JSON_PERCPU, NULL);
	jparse(&d, text);
	jcheck_integers(&d);
	root = 0;
	assert_int_equal(jnum(&d, root, "schema"), 2);
	assert_string_equal(jstr(&d, root, "source"), "library");
	assert_string_equal(jstr(&d, root, "version"), segpool_version());
	assert_string_equal(jstr(&d, jget(&d, root, "health"), "percpu_reason"),
			    segpool_percpu_mode());
	caches = jget(&d, root, "caches");

	/* the escaped name comes back as it was */
	assert_true(jfind(&d, caches, "name", weird, 0) >= 0);

	me = jfind(&d, caches, "name", "st-json", 0);
	CHECK(me >= 0, "st-json not in the JSON");
	{
		int si = jget(&d, me, "slabinfo");

		assert_int_equal(jnum(&d, si, "active_objs"), k);
		assert_int_equal(jnum(&d, si, "num_objs"), info.total_objs);
		assert_int_equal(jnum(&d, si, "objsize"), 72);
		assert_int_equal(jnum(&d, si, "objperslab"),
				 info.objs_per_slab);
		assert_int_equal(jnum(&d, si, "pagesperslab"),
				 info.pages_per_slab);
		assert_int_equal(jnum(&d, si, "limit"), 2ULL * info.mag_size);
		assert_int_equal(jnum(&d, si, "batchcount"), info.mag_size);
		assert_int_equal(jnum(&d, si, "sharedfactor"), info.depot_max);
		assert_int_equal(jnum(&d, si, "active_slabs"),
				 info.active_slabs);
		assert_int_equal(jnum(&d, si, "num_slabs"), info.total_slabs);
		assert_int_equal(jnum(&d, si, "sharedavail"), info.depot_objs);
	}
	assert_int_equal(jnum(&d, me, "object_size"), 72);
	assert_int_equal(jnum(&d, me, "slab_size"), 72);
	assert_false(jbool(&d, me, "ctor"));
	assert_int_equal(jbool(&d, me, "percpu"), has_pcpu());
	assert_int_equal(d.v[jget(&d, me, "flags")].type, J_ARR);
	assert_int_equal(d.v[jget(&d, me, "flags")].child, -1);
	assert_int_equal(jnum(&d, me, "active_objs"), k);
	assert_int_equal(jnum(&d, me, "allocs"), k);
	assert_int_equal(jnum(&d, me, "frees"), 0);
	assert_int_equal(jnum(&d, me, "cpu_objs"), info.cpu_objs);
	assert_int_equal(jnum(&d, me, "alloc_fastpath") +
			 jnum(&d, me, "alloc_slowpath"), has_pcpu() ? k : 0);

	/* per node: the independent count, and the totals' split */
	nodes = jget(&d, me, "nodes");
	total = 0;
	for (int i = 0; i < segpool_numa_node_count(); i++) {
		int id = segpool_numa_node_id(i);
		int nd = jfind(&d, nodes, "node", NULL, id);

		CHECK(nd >= 0, "node %d missing", id);
		assert_int_equal(jnum(&d, nd, "active_objs"), held_on[id]);
		total += jnum(&d, nd, "slabs");
	}
	assert_int_equal(total, info.total_slabs);

	/* per CPU: the slots with anything, adding up to the totals */
	cpus = jget(&d, me, "cpus");
	total = 0;
	in_slots = 0;
	for (int s = d.v[cpus].child; s >= 0; s = d.v[s].next) {
		total += jnum(&d, s, "alloc_fastpath") +
			 jnum(&d, s, "alloc_slowpath");
		in_slots += jnum(&d, s, "slot_objs");
	}
	assert_int_equal(total, jnum(&d, me, "alloc_fastpath") +
			 jnum(&d, me, "alloc_slowpath"));
	assert_int_equal(in_slots, info.cpu_objs);

	/* health: the struct's figures */
	{
		int hh = jget(&d, root, "health"), hn = jget(&d, hh, "nodes");

		assert_string_equal(jstr(&d, hh, "percpu_mode"), h.percpu_mode);
		assert_int_equal(jnum(&d, hh, "nr_nodes"), h.nr_nodes);
		assert_int_equal(jnum(&d, hh, "cpus_possible"),
				 h.cpus_possible);
		assert_int_equal(jbool(&d, hh, "numa_bind"), h.numa_bind);
		for (unsigned int i = 0; i < h.nr_nodes; i++) {
			int nd = jfind(&d, hn, "node", NULL, h.node[i].node);

			CHECK(nd >= 0, "health node %d missing",
			      h.node[i].node);
			assert_int_equal(jnum(&d, nd, "region_bytes"),
					 h.node[i].region_bytes);
			assert_int_equal(jbool(&d, nd, "bound"),
					 h.node[i].bound);
		}
	}
	jfree(&d);
	free(text);

	/* without the flag: no "cpus" */
	text = sp_stats_capture(SP_STATS_JSON, NULL);
	jparse(&d, text);
	me = jfind(&d, jget(&d, 0, "caches"), "name", "st-json", 0);
	for (int m = d.v[me].child; m >= 0; m = d.v[m].next)
		CHECK(strcmp(d.v[m].key, "cpus"), "cpus without the flag");
	jfree(&d);
	free(text);

	for (size_t i = 0; i < k; i++)
		segpool_cache_free(c, objs[i]);
	assert_int_equal(segpool_cache_destroy(c), 0);
	assert_int_equal(segpool_cache_destroy(w), 0);
	free(objs);
}

/* The debug options health reports for this run's environment. */
static const char *debug_expected(void)
{
	const char *hard = getenv("SEGPOOL_FREELIST_HARDENED");
	const char *dbg = getenv("SEGPOOL_DEBUG");
	static char buf[80];

	snprintf(buf, sizeof(buf), "%s%s%s%s", dbg && *dbg ? "debug=" : "",
		 dbg && *dbg ? dbg : "", dbg && *dbg ? " " : "",
		 hard && !strcmp(hard, "0") ? "plain" : "hardened");
	return buf;
}

static void test_health(void **state)
{
	struct segpool_health h, *big;
	char *text;
	char *buf;

	(void)state;
	memset(&h, 0xa5, sizeof(h));
	h.size = sizeof(h);
	assert_int_equal(segpool_health_get(&h), 0);
	assert_int_equal(h.size, sizeof(h));
	assert_string_equal(h.version, segpool_version());
	assert_string_equal(h.percpu_reason, segpool_percpu_mode());
	assert_string_equal(h.percpu_mode, mode());
	assert_string_equal(h.debug, debug_expected());
	{
		/* fault injection on shows in the options, off again not */
		struct segpool_failslab fs = { .probability = 100,
					       .interval = 1000000,
					       .times = 1 };
		char want[80];

		assert_int_equal(segpool_failslab_set(&fs), 0);
		assert_int_equal(segpool_health_get(&h), 0);
		snprintf(want, sizeof(want), "%s failslab", debug_expected());
		assert_string_equal(h.debug, want);
		segpool_failslab_disable();
		assert_int_equal(segpool_health_get(&h), 0);
		assert_string_equal(h.debug, debug_expected());
	}
#if defined(CONFIG_SEGPOOL_TSAN)
	assert_string_equal(h.sanitizer, "thread");
#elif defined(CONFIG_SEGPOOL_ASAN)
	assert_string_equal(h.sanitizer, "address");
#else
	assert_string_equal(h.sanitizer, "none");
#endif
	if (!strcmp(mode(), "rseq"))
		assert_true(h.rseq_registration == SEGPOOL_RSEQ_GLIBC ||
			    h.rseq_registration == SEGPOOL_RSEQ_OWN);
	else
		assert_int_equal(h.rseq_registration, SEGPOOL_RSEQ_NONE);
	if (variant_is("mode=lock"))
		assert_string_equal(h.percpu_reason,
				    "lock (SEGPOOL_PERCPU=lock)");
	if (variant_is("mode=off")) {
		assert_string_equal(h.percpu_reason,
				    "off (SEGPOOL_PERCPU=off)");
		assert_int_equal(h.cpu_slots, 0);
	} else {
		assert_true(h.cpu_slots >= h.cpus_possible);
	}
	assert_int_equal(h.slots_by_mm_cid, 0);
	assert_true(h.cpus_possible >= 1);
	assert_int_equal(h.nr_nodes, segpool_numa_node_count());
	assert_int_equal(h.numa_bind, variant_is("numa_bind=always") ? 1 :
			 h.nr_nodes > 1);
	{
		unsigned int cpus = 0;

		for (unsigned int i = 0; i < h.nr_nodes; i++) {
			struct segpool_health_node *n = &h.node[i];

			assert_int_equal(n->node, segpool_numa_node_id((int)i));
			assert_int_equal(n->bound, h.numa_bind);
			assert_true(n->used_bytes <= n->committed_bytes);
			assert_true(n->committed_bytes <= n->region_bytes);
			assert_int_equal(n->reserved, 0);
			cpus += n->cpus;
		}
		assert_int_equal(cpus, h.cpus_possible);
		/* the rest of the array is zeroed */
		for (unsigned int i = h.nr_nodes; i < SEGPOOL_HEALTH_MAX_NODES;
		     i++)
			assert_int_equal(h.node[i].region_bytes, 0);
	}

	/* a caller with a longer struct: accepted, the tail left alone */
	buf = malloc(sizeof(h) + 64);
	assert_non_null(buf);
	memset(buf, 0x5a, sizeof(h) + 64);
	big = (struct segpool_health *)(void *)buf;
	big->size = sizeof(h) + 64;
	assert_int_equal(segpool_health_get(big), 0);
	assert_int_equal(big->size, sizeof(h));
	assert_int_equal((unsigned char)buf[sizeof(h) + 63], 0x5a);
	free(buf);

	/* the text says the same */
	text = sp_stats_capture(SP_STATS_HEALTH, NULL);
	CHECK(!strncmp(text, "health\n", 7), "starts '%.20s'", text);
	CHECK(strlen(text) > 2 && !strcmp(text + strlen(text) - 2, "\n\n"),
	      "the block is not closed by an empty line");
	assert_string_equal(sp_detail_str(text, NULL, "percpu_mode"),
			    h.percpu_mode);
	{
		char val[256], rest[256];

		/* the reason is the rest of the line */
		assert_true(sp_detail_get(text, NULL, "percpu_reason", val,
				       sizeof(val), rest, sizeof(rest)));
		CHECK(!strncmp(h.percpu_reason, val, strlen(val)) &&
		      !strcmp(h.percpu_reason + strlen(val) + (rest[0] ? 1 : 0),
			      rest), "percpu_reason '%s %s'", val, rest);
	}
	assert_int_equal(sp_detail_num(text, NULL, "cpus_possible"),
			 h.cpus_possible);
	assert_int_equal(sp_detail_num(text, NULL, "nr_nodes"), h.nr_nodes);
	assert_string_equal(sp_detail_str(text, NULL, "numa_bind"),
			    h.numa_bind ? "yes" : "no");
	assert_string_equal(sp_detail_str(text, NULL, "debug"),
			    debug_expected());
	for (unsigned int i = 0; i < h.nr_nodes; i++) {
		unsigned long long at;
		int count;

		sp_detail_split(text, NULL, "region_bytes", 'N', h.node[i].node,
			     &at, &count);
		assert_int_equal(at, h.node[i].region_bytes);
		assert_int_equal(count, h.nr_nodes);
		sp_detail_split(text, NULL, "bound", 'N', h.node[i].node, &at,
				&count);
		assert_int_equal(at, h.node[i].bound);
	}
	free(text);
}

/*
 * Chunks that cannot be committed (or bound, in the bind variant) show in
 * their node's commit_failures: a filler takes the committed memory with
 * the fault armed, so that the regions must commit more, and fail.  The
 * independent count is the fault point's own.
 */
static void test_health_commit_failure(void **state)
{
	enum sp_fault_point point = variant_is("numa_bind=always") ?
				    SP_FAULT_MBIND : SP_FAULT_COMMIT;
	struct segpool_health before, after;
	struct sp_test_filler f;
	unsigned long hits;
	uint64_t fb = 0, fa = 0;
	int e;

	(void)state;
	memset(&f, 0, sizeof(f));
	memset(&before, 0, sizeof(before));
	memset(&after, 0, sizeof(after));
	before.size = after.size = sizeof(before);
	assert_int_equal(segpool_health_get(&before), 0);
	hits = sp_fault_hits(point);
	sp_fault_arm(point, 0, 1000000);
	e = sp_test_filler_fill(&f, "st-commit", SP_TEST_FILLER_SIZE);
	sp_fault_arm(point, 0, 0);
	CHECK(e == ENOMEM, "the filler stopped with errno %d", e);
	hits = sp_fault_hits(point) - hits;
	CHECK(hits >= 1, "the fault never fired");
	assert_int_equal(segpool_health_get(&after), 0);
	for (unsigned int i = 0; i < before.nr_nodes; i++) {
		fb += before.node[i].commit_failures;
		fa += after.node[i].commit_failures;
		assert_true(after.node[i].committed_bytes >=
			    before.node[i].committed_bytes);
		assert_true(after.node[i].used_bytes <=
			    after.node[i].committed_bytes);
		assert_int_equal(after.node[i].bound, before.node[i].bound);
	}
	assert_int_equal(fa - fb, hits);
	sp_test_filler_done(&f);
}

/* No memory for the output: -ENOMEM, and nothing half-written. */
static void test_stats_enomem(void **state)
{
	FILE *f = tmpfile();

	(void)state;
	assert_non_null(f);
	sp_fault_arm(SP_FAULT_MMAP, 0, 1000);
	errno = 0;
	assert_int_equal(segpool_stats_dump(f), -ENOMEM);
	assert_int_equal(errno, ENOMEM);
	assert_int_equal(segpool_stats_dump_detail(f, NULL, 0), -ENOMEM);
	assert_int_equal(segpool_stats_json(f, SEGPOOL_STATS_PERCPU), -ENOMEM);
	assert_int_equal(segpool_stats_health(f), -ENOMEM);
	sp_fault_arm(SP_FAULT_MMAP, 0, 0);
	assert_int_equal(ftell(f), 0);
	/*
	 * A failure at each later mapping in turn (the per-cache and per-slot
	 * workspace, the buffer as it grows): when the fault fires the call
	 * fails and writes nothing; once there are no more mappings to fail
	 * it succeeds.
	 */
	for (unsigned int skip = 1; skip < 16; skip++) {
		unsigned long hits = sp_fault_hits(SP_FAULT_MMAP);
		long at = ftell(f);
		int ret;

		sp_fault_arm(SP_FAULT_MMAP, skip, 1);
		ret = segpool_stats_json(f, SEGPOOL_STATS_PERCPU);
		sp_fault_arm(SP_FAULT_MMAP, 0, 0);
		if (sp_fault_hits(SP_FAULT_MMAP) != hits) {
			assert_int_equal(ret, -ENOMEM);
			assert_int_equal(ftell(f), at);
		} else {
			assert_int_equal(ret, 0);
			assert_true(ftell(f) > at);
			print_message("# the JSON call survived a failure at "
				      "each of its %u mappings\n", skip);
			break;
		}
		CHECK(skip < 15, "still failing after %u mappings", skip);
	}
	assert_true(ftell(f) > 0);
	fclose(f);
}

/* --- dumps while the caches churn --------------------------------------- */

#define CHURN_THREADS	8
#define CHURN_SHARED	3

struct churn {
	struct segpool_cache *shared[CHURN_SHARED];
	int stop;
	int failed;
	unsigned long ops[CHURN_THREADS];
};

struct churn_arg {
	struct churn *ch;
	int id;
};

/* Even threads allocate and free on shared caches; odd ones create, use
 * and destroy caches of their own. */
static void *churn_thread(void *p)
{
	struct churn_arg *a = p;
	struct churn *ch = a->ch;
	uint64_t rnd = 0x9e3779b97f4a7c15ULL * (uint64_t)(a->id + 1);
	void *objs[96];
	unsigned long it;

	for (it = 0; !__atomic_load_n(&ch->stop, __ATOMIC_RELAXED); it++) {
		struct segpool_cache *c;
		size_t n = 1 + sp_test_rand(&rnd) % ARRAY_SIZE(objs);
		char name[64];

		if (a->id % 2 == 0) {
			c = ch->shared[sp_test_rand(&rnd) % CHURN_SHARED];
		} else {
			snprintf(name, sizeof(name), "st-churn-%d-%lu", a->id,
				 it % 4);
			c = segpool_cache_create(name,
						 16 + sp_test_rand(&rnd) % 500,
						 0, 0, NULL);
			if (!c) {
				__atomic_store_n(&ch->failed, 1,
						 __ATOMIC_RELAXED);
				break;
			}
		}
		for (size_t i = 0; i < n; i++)
			objs[i] = segpool_cache_alloc(c, 0);
		for (size_t i = 0; i < n; i++) {
			if (!objs[i])
				__atomic_store_n(&ch->failed, 2,
						 __ATOMIC_RELAXED);
			segpool_cache_free(c, objs[i]);
		}
		if (a->id % 2 && segpool_cache_destroy(c))
			__atomic_store_n(&ch->failed, 3, __ATOMIC_RELAXED);
		__atomic_store_n(&ch->ops[a->id], it + 1, __ATOMIC_RELAXED);
		/* eight threads on few CPUs: let the reader in */
		sched_yield();
	}
	return NULL;
}

/* Iterations of the thread that did the fewest. */
static unsigned long min_ops(struct churn *ch)
{
	unsigned long min = ~0UL;

	for (int i = 0; i < CHURN_THREADS; i++) {
		unsigned long n =
			__atomic_load_n(&ch->ops[i], __ATOMIC_RELAXED);

		min = n < min ? n : min;
	}
	return min;
}

/* Every block of a detail dump: a head line, "key value" lines, a blank. */
static void check_detail_shape(const char *text)
{
	const char *p = text;
	bool in_block = false;

	while (*p) {
		const char *nl = strchr(p, '\n');

		CHECK(nl, "detail does not end with a line break");
		if (nl == p) {
			CHECK(in_block, "empty line outside a block");
			in_block = false;
		} else if (!in_block) {
			CHECK(!strncmp(p, "cache ", 6) ||
				      !strncmp(p, "health\n", 7),
			      "block head '%.*s'", (int)(nl - p), p);
			in_block = true;
		} else {
			size_t key = strspn(p, "abcdefghijklmnopqrstuvwxyz_");

			CHECK(key > 0 && p[key] == ' ' && nl > p + key + 1,
			      "not a 'key value' line: '%.*s'", (int)(nl - p),
			      p);
		}
		p = nl + 1;
	}
	CHECK(!in_block, "the last block is not closed");
}

static void test_dump_while_churning(void **state)
{
	struct churn_arg args[CHURN_THREADS];
	pthread_t th[CHURN_THREADS];
	unsigned long rounds = sp_test_scaled(150, 4), r;
	struct churn ch;

	(void)state;
	assert_int_equal(sp_test_make_size_classes(), SP_KMALLOC_NR_CLASSES);
	memset(&ch, 0, sizeof(ch));
	for (int i = 0; i < CHURN_SHARED; i++) {
		char name[32];

		snprintf(name, sizeof(name), "st-shared-%d", i);
		ch.shared[i] = segpool_cache_create(name, 24 + 40 * (size_t)i,
						    0, 0, NULL);
		assert_non_null(ch.shared[i]);
	}
	for (int i = 0; i < CHURN_THREADS; i++) {
		args[i].ch = &ch;
		args[i].id = i;
		assert_int_equal(pthread_create(&th[i], NULL, churn_thread,
						&args[i]), 0);
	}
	/* the rounds asked for, and more until every thread did some work */
	for (r = 0; (r < rounds || (min_ops(&ch) < 10 && r < 20 * rounds)) &&
	     !__atomic_load_n(&ch.failed, __ATOMIC_RELAXED); r++) {
		char *text;
		struct jdoc d;

		text = sp_stats_capture(SP_STATS_SLABINFO, NULL);
		CHECK(sp_slabinfo_check(text, NULL, NULL) >=
		      SP_KMALLOC_NR_CLASSES,
		      "round %lu: fewer rows than size classes", r);
		free(text);
		text = sp_stats_capture(
			r % 2 ? SP_STATS_DETAIL_PERCPU : SP_STATS_DETAIL, NULL);
		check_detail_shape(text);
		free(text);
		text = sp_stats_capture(
			r % 2 ? SP_STATS_JSON : SP_STATS_JSON_PERCPU, NULL);
		jparse(&d, text);
		jcheck_integers(&d);
		jfree(&d);
		free(text);
		text = sp_stats_capture(SP_STATS_HEALTH, NULL);
		check_detail_shape(text);
		free(text);
	}
	__atomic_store_n(&ch.stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < CHURN_THREADS; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	CHECK(!ch.failed, "a churning thread failed (%d)", ch.failed);
	print_message("# %lu rounds of every rendering while 8 threads ran "
		      "(the least busy made %lu iterations)\n",
		      r, min_ops(&ch));
	for (int i = 0; i < CHURN_SHARED; i++) {
		assert_int_equal(sp_test_info(ch.shared[i]).active_objs, 0);
		assert_int_equal(segpool_cache_destroy(ch.shared[i]), 0);
	}
	/* every churned cache is gone from the dump */
	{
		char *text = sp_stats_capture(SP_STATS_SLABINFO, NULL);

		assert_null(strstr(text, "st-churn-"));
		free(text);
	}
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test_teardown(test_bad_arguments, teardown),
	cmocka_unit_test_teardown(test_slabinfo_golden, teardown),
	cmocka_unit_test_teardown(test_slabinfo_kmalloc, teardown),
	cmocka_unit_test_teardown(test_detail_keys, teardown),
	cmocka_unit_test_teardown(test_counters_exact, teardown),
	cmocka_unit_test_teardown(test_first_fill_short, teardown),
	cmocka_unit_test_teardown(test_json_golden, teardown),
	cmocka_unit_test_teardown(test_health, teardown),
	cmocka_unit_test_teardown(test_health_commit_failure, teardown),
	cmocka_unit_test_teardown(test_stats_enomem, teardown),
	cmocka_unit_test_teardown(test_dump_while_churning, teardown),
};

SP_TEST_MAIN_VARIANTS(tests, variants)
