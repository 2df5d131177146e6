// SPDX-License-Identifier: MIT
/*
 * selftests/unit/test_decay.c - memory that goes back by itself: the
 * region's stamped dirty blocks and sp_region_decay(), the decay thread
 * giving a freed burst back with no further call, SEGPOOL_DECAY_MS=0 and
 * -1, segpool_shrink_all(), the soft memory limit, the thread's lazy start
 * (none in a process that frees little, started past SP_DECAY_WANT_MB of
 * free memory, in a fork child, by the limit, by a delay set later), and
 * bad settings.
 *
 * Residency is read with mincore() (sp_test_mincore()) over the regions'
 * committed memory (the RSS of segpool's own ranges), so sanitizer shadow
 * and the test's own heap do not blur it.  Waits poll up to a generous
 * bound, many times the delay: a correctness bound, not a timing
 * threshold.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <segpool/segpool.h>

#include "selftests/lib/harness.h"
#include "core/core.h"
#include "core/decay.h"
#include "internal/env.h"
#include "internal/reentry.h"
#include "internal/sanitize.h"
#include "numa/region.h"
#include "os/os.h"
#include "percpu/pcpu.h"
#include "percpu/stash.h"
#include "slab/slab.h"

#define BURST_OBJS	100000
#define BURST_BLOCKS	2000
#define WAIT_BOUND_MS	30000

static int setup(void **state)
{
	(void)state;
	return sp_init();
}

/* Resident bytes of every region's committed memory. */
static size_t arena_resident(void)
{
	static unsigned char vec[(64UL << 20) / SP_PAGE_SIZE];
	size_t bytes = 0;

	for (int i = 0; i < sp_space.nr_regions; i++) {
		struct sp_region *r = &sp_space.region[i];
		size_t committed, off = 0;

		pthread_mutex_lock(&r->lock);
		committed = r->committed << SP_PAGE_SHIFT;
		pthread_mutex_unlock(&r->lock);
		while (off < committed) {
			size_t len = committed - off;

			if (len > sizeof(vec) * SP_PAGE_SIZE)
				len = sizeof(vec) * SP_PAGE_SIZE;
			assert_int_equal(
				sp_test_mincore(r->base + off, len, vec), 0);
			for (size_t p = 0; p < len / SP_PAGE_SIZE; p++)
				bytes += (vec[p] & 1) * SP_PAGE_SIZE;
			off += len;
		}
	}
	return bytes;
}

static size_t dirty_pages(void)
{
	size_t n = 0;

	for (int i = 0; i < sp_space.nr_regions; i++) {
		pthread_mutex_lock(&sp_space.region[i].lock);
		n += sp_space.region[i].dirty_pages;
		pthread_mutex_unlock(&sp_space.region[i].lock);
	}
	return n;
}

/* Whether a thread of this process is named "segpool-decay". */
static bool decay_thread_running(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	bool found = false;

	assert_non_null(d);
	while (!found && (e = readdir(d))) {
		char path[300], comm[32] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f))
			found = !strncmp(comm, "segpool-decay", 13);
		fclose(f);
	}
	closedir(d);
	return found;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The thread names itself when it starts: wait up to 5 s for the name. */
static bool decay_thread_appears(void)
{
	for (int i = 0; i < 500; i++) {
		if (decay_thread_running())
			return true;
		sleep_ms(10);
	}
	return false;
}

struct burst {
	struct segpool_cache *c;
	void *objs[BURST_OBJS];
	void *blocks[BURST_BLOCKS];
};

/* Allocate and touch a burst (a cache's objects, malloc blocks), free it. */
static void burst(const char *name)
{
	static struct burst b;
	unsigned int seed = sp_test_seed();

	b.c = segpool_cache_create(name, 64, 0, 0, NULL);
	assert_non_null(b.c);
	for (size_t i = 0; i < BURST_OBJS; i++) {
		b.objs[i] = segpool_cache_alloc(b.c, 0);
		assert_non_null(b.objs[i]);
		memset(b.objs[i], 1, 64);
	}
	for (size_t i = 0; i < BURST_BLOCKS; i++) {
		size_t sz = 1024 + (size_t)(rand_r(&seed) % (16 * 1024));

		b.blocks[i] = segpool_malloc(sz);
		assert_non_null(b.blocks[i]);
		memset(b.blocks[i], 2, sz);
	}
	for (size_t i = 0; i < BURST_OBJS; i++)
		segpool_cache_free(b.c, b.objs[(i * 7919) % BURST_OBJS]);
	for (size_t i = 0; i < BURST_BLOCKS; i++)
		segpool_free(b.blocks[i]);
}

/* Poll until the space holds at most @bytes resident; what it holds. */
static size_t wait_resident_below(size_t bytes)
{
	size_t r = arena_resident();

	for (int t = 0; t < WAIT_BOUND_MS / 20 && r > bytes; t++) {
		sleep_ms(20);
		r = arena_resident();
	}
	return r;
}

static size_t wait_dirty_zero(void)
{
	size_t d = dirty_pages();

	for (int t = 0; t < WAIT_BOUND_MS / 20 && d; t++) {
		sleep_ms(20);
		d = dirty_pages();
	}
	return d;
}

/* A freed block stays dirty, stamped; the decay takes it once it is old. */
static void test_region_decay_by_age(void **state)
{
	unsigned char vec[16];
	uint64_t now;
	char *p;

	(void)state;
	assert_int_equal(segpool_set_decay_ms(SEGPOOL_DECAY_NEVER), 0);
	p = sp_region_alloc(0, 4, 0x1000);
	assert_non_null(p);
	memset(p, 1, 16 * SP_PAGE_SIZE);
	sp_region_free(p, 4);
	assert_int_equal(sp_test_mincore(p, 16 * SP_PAGE_SIZE, vec), 0);
	assert_true(vec[0] & 1);	/* kept: the delay has not passed */
	now = sp_region_now_ns();
	/* not older than a second: nothing of it goes */
	sp_region_decay(0, now, 1000000000ULL);
	assert_int_equal(sp_test_mincore(p, 16 * SP_PAGE_SIZE, vec), 0);
	assert_true(vec[0] & 1);
	/* two seconds later it is */
	assert_true(sp_region_decay(0, now + 2000000000ULL, 1000000000ULL) >=
		    16);
	assert_int_equal(sp_test_mincore(p, 16 * SP_PAGE_SIZE, vec), 0);
	for (int i = 0; i < 16; i++)
		assert_false(vec[i] & 1);
}

/*
 * 4096 blocks, or as many as keep the freed half under the cap of a region
 * without a decay (at 64 KiB a page, 2048 of them would pass it and every
 * free past it would purge them all).
 */
#define SPARSE_BLOCKS	\
	((int)(4096 < SP_DIRTY_MAX_PAGES ? 4096 : SP_DIRTY_MAX_PAGES))

/*
 * Free every other one of SPARSE_BLOCKS order-0 blocks of region 0: half of
 * them become free runs that cannot merge (their buddies are held).
 */
static void sparse_heap(void **blk)
{
	for (int i = 0; i < SPARSE_BLOCKS; i++) {
		blk[i] = sp_region_alloc(0, 0, 0x1000);
		assert_non_null(blk[i]);
	}
	for (int i = 0; i < SPARSE_BLOCKS; i += 2)
		sp_region_free(blk[i], 0);
}

/* A field of region @r, read under its lock. */
#define REGION_READ(r, field)						\
	({								\
		__typeof__((r)->field) v_;				\
									\
		pthread_mutex_lock(&(r)->lock);				\
		v_ = (r)->field;					\
		pthread_mutex_unlock(&(r)->lock);			\
		v_;							\
	})

static uint64_t decay_visits(struct sp_region *r)
{
	return REGION_READ(r, decay_visits);
}

/*
 * A pass costs what it can give back: on a region of thousands of free
 * runs none of which is past the delay it visits none of them (it walked
 * every one before), and once they are all clean again, none either.
 */
static void test_decay_visits_only_old(void **state)
{
	static void *blk[SPARSE_BLOCKS];
	struct sp_region *r = &sp_space.region[0];
	const uint64_t late = (SP_DECAY_SPLIT_DELAYS + 1) * 1000000000ULL;
	uint64_t now, v;
	size_t dirty, got;

	(void)state;
	assert_int_equal(segpool_set_decay_ms(SEGPOOL_DECAY_NEVER), 0);
	sp_region_purge(0);
	sparse_heap(blk);
	assert_true(r->nr_free[0] >= SPARSE_BLOCKS / 2);
	now = sp_region_now_ns();
	v = decay_visits(r);
	assert_int_equal(sp_region_decay(0, now, 1000000000ULL), 0);
	print_message("free order-0 runs %zu, visited with none old: %llu\n",
		      r->nr_free[0], (unsigned long long)(decay_visits(r) - v));
	assert_int_equal(decay_visits(r) - v, 0);
	/*
	 * Once past the delay (pieces of huge pages: SP_DECAY_SPLIT_DELAYS of
	 * it) every one goes, the lock dropped between batches.
	 */
	dirty = r->dirty_pages;
	got = sp_region_decay(0, now + late, 1000000000ULL);
	assert_true(got >= SPARSE_BLOCKS / 2);
	assert_true(decay_visits(r) - v >= SPARSE_BLOCKS / 2);
	assert_int_equal(dirty - r->dirty_pages, got);	/* the stats: exact */
	v = decay_visits(r);
	assert_int_equal(sp_region_decay(0, now + 2 * late, 1000000000ULL), 0);
	assert_int_equal(decay_visits(r) - v, 0);
	for (int i = 1; i < SPARSE_BLOCKS; i += 2)
		sp_region_free(blk[i], 0);
	sp_region_purge(0);
}

static atomic_bool churn_stop;
/* blocks the churn thread could not take: asserted on the test thread */
static atomic_uint churn_failed;

/* Takes and frees order-0 blocks while the decay walks, the lock dropped. */
static void *churn(void *arg)
{
	void **blk = arg;

	while (!atomic_load(&churn_stop)) {
		for (int i = 0; i < SPARSE_BLOCKS; i += 2) {
			blk[i] = sp_region_alloc(0, 0, 0x1000);
			if (!blk[i])
				atomic_fetch_add(&churn_failed, 1);
		}
		for (int i = 0; i < SPARSE_BLOCKS; i += 2)
			if (blk[i])
				sp_region_free(blk[i], 0);
	}
	return NULL;
}

/*
 * The walk drops the lock every SP_DECAY_BATCH blocks: with another thread
 * taking and freeing blocks of the same list meanwhile, the dirty count
 * still matches the blocks, and every order's oldest stamp is still no
 * newer than any of its dirty blocks (no block is left out of the decay).
 */
static void test_decay_walk_under_churn(void **state)
{
	static void *blk[SPARSE_BLOCKS];
	struct sp_region *r = &sp_space.region[0];
	size_t dirty = 0;
	pthread_t t;

	(void)state;
	assert_int_equal(segpool_set_decay_ms(SEGPOOL_DECAY_NEVER), 0);
	sparse_heap(blk);
	atomic_store(&churn_stop, false);
	atomic_store(&churn_failed, 0);
	assert_int_equal(pthread_create(&t, NULL, churn, blk), 0);
	for (int k = 0; k < 200; k++) {
		uint64_t ahead = k & 1 ? 2000000000ULL : 0;

		sp_region_decay(0, sp_region_now_ns() + ahead, 1000000000ULL);
	}
	atomic_store(&churn_stop, true);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(atomic_load(&churn_failed), 0);
	pthread_mutex_lock(&r->lock);
	for (unsigned int o = 0; o <= SP_MAX_ORDER; o++)
		for (uint32_t p = r->free_head[o]; p != SP_PAGE_NONE;
		     p = r->map[p].next) {
			uintptr_t info = r->map[p].info;

			if (!(info & SP_PAGE_DIRTY_BIT))
				continue;
			dirty += 1UL << o;
			assert_true(r->oldest[o] <=
				    info >> SP_PAGE_STAMP_SHIFT);
		}
	assert_int_equal(dirty, r->dirty_pages);
	pthread_mutex_unlock(&r->lock);
	for (int i = 1; i < SPARSE_BLOCKS; i += 2)
		sp_region_free(blk[i], 0);
	sp_region_purge(0);
}

/* The thread gives a freed burst back with no further call. */
static void test_burst_goes_back_by_itself(void **state)
{
	size_t before, freed, after;

	(void)state;
	assert_int_equal(segpool_shrink_all() >= 0, 1);
	before = arena_resident();
	assert_int_equal(segpool_set_decay_ms(200), 0);
	assert_int_equal(segpool_get_decay_ms(), 200);
	burst("decay-burst");
	/* the burst's free memory asked for it, if nothing did before */
	assert_true(decay_thread_appears());
	freed = arena_resident();
	print_message("resident: %zu KiB before, %zu KiB freed\n",
		      before >> 10, freed >> 10);
	assert_true(freed > before + (4UL << 20));	/* the burst stayed */
	after = wait_resident_below(before + (2UL << 20));
	print_message("resident after the decay: %zu KiB\n", after >> 10);
	assert_true(after <= before + (2UL << 20));
	/* pieces of huge pages go too, later (SP_DECAY_SPLIT_DELAYS) */
	assert_int_equal(wait_dirty_zero(), 0);
	assert_int_equal(segpool_set_decay_ms(SEGPOOL_DECAY_NEVER), 0);
}

/* Full magazines in every slot's stash of @c. */
static unsigned int stashed(struct segpool_cache *c)
{
	unsigned int n = 0;

	for (unsigned long i = 0; i < c->pcpu->nr_slots; i++)
		n += SP_READ_ONCE(c->pcpu->slots[i].stash_nr);
	return n;
}

/*
 * A busy cache's slot that kept a batch in its stash (percpu/stash.h),
 * then settled into pairs its two magazines serve, reaches no slow path
 * that would age the stash: the decay's passes give it to the depot once
 * it went unused for SP_STASH_IDLE_PASSES of them, and never a stash in
 * use; the thread does it with no call while the cache stays busy.
 */
static void test_busy_cache_stale_stash(void **state)
{
	static void *objs[6000];
	struct segpool_cache *c;
	unsigned int kept;

	(void)state;
	assert_int_equal(segpool_set_decay_ms(SEGPOOL_DECAY_NEVER), 0);
	c = segpool_cache_create("decay-stash", 48, 0, 0, NULL);
	assert_non_null(c);
	if (!c->pcpu) {
		assert_int_equal(segpool_cache_destroy(c), 0);
		skip();
	}
	assert_int_equal(sp_test_pin(sp_test_allowed_cpu(0)), 0);
	sp_test_batches(c, objs, 6000, 3);
	kept = stashed(c);
	print_message("# %u magazines kept after the batches\n", kept);
	assert_true(kept > 0);

	/* pairs only: the stash stays, and the passes count it out */
	for (int pass = 1; pass <= 4; pass++) {
		for (int i = 0; i < 10000; i++)
			segpool_cache_free(c, segpool_cache_alloc(c, 0));
		assert_int_equal(sp_pcpu_reap_stashes(c->pcpu), 0);
		assert_int_equal(stashed(c), kept);
	}
	assert_int_equal(sp_pcpu_reap_stashes(c->pcpu), 1);
	assert_int_equal(stashed(c), 0);

	/* a stash in use between passes is never taken */
	sp_test_batches(c, objs, 6000, 2);
	for (int pass = 0; pass < 10; pass++) {
		sp_test_batches(c, objs, 6000, 1);
		assert_int_equal(sp_pcpu_reap_stashes(c->pcpu), 0);
	}
	assert_true(stashed(c) > 0);

	/* the thread, with no call, while the cache stays busy */
	assert_int_equal(segpool_set_decay_ms(40), 0);
	burst("decay-stash-burst");
	assert_true(decay_thread_appears());
	for (int t = 0; t < WAIT_BOUND_MS / 20 && stashed(c); t++) {
		for (int i = 0; i < 1000; i++)
			segpool_cache_free(c, segpool_cache_alloc(c, 0));
		sleep_ms(20);
	}
	print_message("# stash after the decay: %u magazines\n", stashed(c));
	assert_int_equal(stashed(c), 0);
	assert_int_equal(segpool_set_decay_ms(SEGPOOL_DECAY_NEVER), 0);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* -1: nothing goes back by itself; segpool_shrink_all() gives it all. */
static void test_never_then_shrink_all(void **state)
{
	size_t before, freed;
	long long released;

	(void)state;
	assert_int_equal(segpool_set_decay_ms(SEGPOOL_DECAY_NEVER), 0);
	segpool_shrink_all();
	before = arena_resident();
	burst("decay-never");
	freed = arena_resident();
	sleep_ms(300);			/* several passes of a 200 ms delay */
	assert_true(arena_resident() >= freed - (1UL << 20));
	released = segpool_shrink_all();
	assert_true(released > (4LL << 20));
	assert_true(arena_resident() <= before + (2UL << 20));
	assert_int_equal(dirty_pages(), 0);
}

/* The thread's passes so far. */
static uint64_t decay_passes(void)
{
	struct sp_decay_stats st;

	sp_decay_read(&st);
	return st.runs;
}

/*
 * After -1 the thread may still be in a pass it started before; once
 * sp_decay_wait_idle() says it is idle, it starts no other (what the
 * tests of exact region counts rely on, test_pages).
 */
static void test_never_waits_idle(void **state)
{
	uint64_t runs;

	(void)state;
	assert_int_equal(segpool_set_decay_ms(10), 0);
	burst("decay-wait-idle");
	assert_true(decay_thread_appears());
	runs = decay_passes();
	for (int t = 0; t < WAIT_BOUND_MS / 10 && decay_passes() < runs + 3;
	     t++)
		sleep_ms(10);
	assert_true(decay_passes() >= runs + 3);	/* it was passing */
	assert_int_equal(segpool_set_decay_ms(SEGPOOL_DECAY_NEVER), 0);
	assert_true(sp_decay_wait_idle(WAIT_BOUND_MS));
	runs = decay_passes();
	sleep_ms(100);			/* ten ticks of the last delay */
	assert_true(sp_decay_wait_idle(0));
	assert_int_equal(decay_passes(), runs);
}

/* 0: a freed block goes back at the free itself. */
static void test_zero_purges_at_once(void **state)
{
	unsigned char vec[16];
	char *p;

	(void)state;
	assert_int_equal(segpool_set_decay_ms(0), 0);
	p = sp_region_alloc(0, 4, 0x1000);
	assert_non_null(p);
	memset(p, 1, 16 * SP_PAGE_SIZE);
	sp_region_free(p, 4);
	assert_int_equal(sp_test_mincore(p, 16 * SP_PAGE_SIZE, vec), 0);
	for (int i = 0; i < 16; i++)
		assert_false(vec[i] & 1);
	assert_int_equal(segpool_set_decay_ms(SEGPOOL_DECAY_NEVER), 0);
}

/* Past the limit segpool purges before it takes more region memory. */
static void test_memory_limit_purges_first(void **state)
{
	struct segpool_health h = { .size = sizeof(h) };
	uint64_t hits;
	size_t used;
	void *p, *q;

	(void)state;
	assert_int_equal(segpool_set_decay_ms(SEGPOOL_DECAY_NEVER), 0);
	segpool_shrink_all();
	assert_int_equal(segpool_health_get(&h), 0);
	hits = h.limit_hits;
	/* 8 MiB dirty: freed, kept for ever */
	p = sp_region_alloc(0, SP_MAX_ORDER, 0x1000);
	q = sp_region_alloc(0, SP_MAX_ORDER, 0x1000);
	assert_non_null(p);
	assert_non_null(q);
	memset(p, 1, SP_MAX_BLOCK_SIZE);
	memset(q, 1, SP_MAX_BLOCK_SIZE);
	sp_region_free(p, SP_MAX_ORDER);
	sp_region_free(q, SP_MAX_ORDER);
	assert_true(dirty_pages() >= 2 * SP_MAX_BLOCK_PAGES);
	pthread_mutex_lock(&sp_space.region[0].lock);
	used = sp_space.region[0].pages_used;
	pthread_mutex_unlock(&sp_space.region[0].lock);
	/* a limit just above what is in use: the dirty memory passes it */
	assert_int_equal(
		segpool_set_memory_limit(((uint64_t)used << SP_PAGE_SHIFT) +
					 (1ULL << 20)),
		0);
	assert_int_equal(segpool_get_memory_limit(),
			 ((uint64_t)used << SP_PAGE_SHIFT) + (1ULL << 20));
	p = sp_region_alloc(0, 0, 0x1000);
	assert_non_null(p);
	assert_int_equal(dirty_pages(), 0);	/* purged before */
	assert_int_equal(segpool_health_get(&h), 0);
	assert_true(h.limit_hits > hits);
	assert_true(h.node[0].purged_bytes >= 2 * SP_MAX_BLOCK_SIZE);
	sp_region_free(p, 0);
	assert_int_equal(segpool_set_memory_limit(0), 0);
	segpool_shrink_all();
}

/* Whether the mapping holding @addr is advised huge pages ("hg"). */
static bool vma_advised_huge(const void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	uintptr_t a = (uintptr_t)addr, lo, hi;
	bool in = false, hg = false;
	char line[512];

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = a >= lo && a < hi;
			continue;
		}
		if (in && !strncmp(line, "VmFlags:", 8)) {
			hg = strstr(line, " hg") != NULL;
			break;
		}
	}
	fclose(f);
	return hg;
}

static size_t region_committed(struct sp_region *r)
{
	return REGION_READ(r, committed);
}

/* Blocks a test may take with grow_past(): past SP_REGION_THP_EAGER_MB. */
#define GROW_MAX	((SP_REGION_THP_EAGER_MB >> 2) + 16)

/* Take top-level blocks until the region has committed past @past. */
static int grow_past(struct sp_region *r, size_t past, void **blk, int n)
{
	while (region_committed(r) <= past) {
		assert_true(n < GROW_MAX);
		blk[n] = sp_region_alloc(0, SP_MAX_ORDER, 0x1000);
		assert_non_null(blk[n]);
		n++;
	}
	return n;
}

/*
 * Start a huge-page test in a process of its own (once an earlier test's
 * run of 2 MiB or more advised a region's top chunk, every chunk after it
 * is advised at its commit): in the test's process rerun @fn so and return
 * false; in the rerun, with no decay pass looking with the real clock and
 * SEGPOOL_THP=auto, return true.  Skips where the kernel has no THP.
 */
static bool thp_fresh_process(const char *fn)
{
	static const char *const fresh[] = { "SP_TEST_THP_FRESH=1", NULL };

	if (access("/sys/kernel/mm/transparent_hugepage/enabled", R_OK))
		skip();		/* no THP in this kernel: nothing to advise */
	if (!getenv("SP_TEST_THP_FRESH")) {
		assert_int_equal(sp_test_rerun(fresh, fn), 0);
		return false;
	}
	assert_int_equal(segpool_set_decay_ms(SEGPOOL_DECAY_NEVER), 0);
	sp_region_thp = SP_REGION_THP_AGED;
	return true;
}

/*
 * SEGPOOL_THP=auto: a chunk is not advised huge pages when it is
 * committed, only once it stayed committed SP_REGION_THP_AGE_MS; one
 * committed after the look that starts its age is not.  In a process of
 * its own (thp_fresh_process()).
 */
static void test_thp_advised_by_age(void **state)
{
	struct sp_region *r = &sp_space.region[0];
	int saved = sp_region_thp, n = 0;
	size_t c1, x, y;
	void *blk[GROW_MAX];
	uint64_t now;

	(void)state;
	if (!thp_fresh_process(__func__))
		return;
	pthread_mutex_lock(&r->lock);
	r->thp_seen_ns = 0;
	pthread_mutex_unlock(&r->lock);

	/* chunk x, fresh: committed but not advised */
	x = SP_MAX(region_committed(r), (size_t)SP_MAX_BLOCK_PAGES);
	n = grow_past(r, x, blk, n);
	assert_false(vma_advised_huge(r->base + (x << SP_PAGE_SHIFT)));
	now = sp_region_now_ns() + 1;
	assert_int_equal(sp_region_thp_age(0, now), 0);	/* the first look */
	c1 = region_committed(r);

	/* chunk y, committed after the look */
	y = c1;
	n = grow_past(r, y, blk, n);
	/* a look whose clock is behind the last one's (the decay thread's
	 * pass that read the time before ours): too young, not 2^64 ns old */
	assert_int_equal(sp_region_thp_age(0, now - 1), 0);
	assert_int_equal(sp_region_thp_age(0, now + SP_REGION_THP_AGE_MS *
					   500000ULL), 0);	/* too young */
	assert_false(vma_advised_huge(r->base + (x << SP_PAGE_SHIFT)));
	assert_true(sp_region_thp_age(0, now + SP_REGION_THP_AGE_MS *
				      1000000ULL) >= 1);
	print_message("chunk at page %zu advised, %zu (younger) not\n", x, y);
	assert_true(vma_advised_huge(r->base + (x << SP_PAGE_SHIFT)));
	assert_false(vma_advised_huge(r->base + (y << SP_PAGE_SHIFT)));
	/* the first chunk never is, so a small program stays small */
	assert_false(vma_advised_huge(r->base));

	while (n--)
		sp_region_free(blk[n], SP_MAX_ORDER);
	sp_region_purge(0);
	sp_region_thp = saved;
}

/* The bounds of the mapping holding @addr (0, 0: none). */
static void vma_bounds(const void *addr, uintptr_t *lo, uintptr_t *hi)
{
	FILE *f = fopen("/proc/self/maps", "r");
	uintptr_t a = (uintptr_t)addr, l, h;
	char line[512];

	assert_non_null(f);
	*lo = *hi = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx ", &l, &h) == 2 && a >= l && a < h) {
			*lo = l;
			*hi = h;
			break;
		}
	fclose(f);
}

/* The advised part of region @r, [its second chunk, thp_done), is one
 * mapping (or there is none yet). */
static void assert_advised_one_mapping(struct sp_region *r)
{
	size_t done = REGION_READ(r, thp_done);
	uintptr_t lo, hi;

	if (done <= SP_MAX_BLOCK_PAGES)
		return;
	vma_bounds(r->base + (SP_MAX_BLOCK_PAGES << SP_PAGE_SHIFT), &lo, &hi);
	assert_true(vma_advised_huge(r->base +
				     (SP_MAX_BLOCK_PAGES << SP_PAGE_SHIFT)));
	assert_true(hi >= (uintptr_t)(r->base + (done << SP_PAGE_SHIFT)));
}

/*
 * SEGPOOL_THP=auto: a region that grows to SP_REGION_THP_EAGER_MB is no
 * short program's: the chunk that reaches it is advised at its commit, and
 * every chunk below it (but the first) with it, without waiting for their
 * age; below it nothing is advised before its age.  In a process of its
 * own (thp_fresh_process()).
 */
static void test_thp_eager_when_grown(void **state)
{
	struct sp_region *r = &sp_space.region[0];
	size_t eager = (size_t)SP_REGION_THP_EAGER_MB << (20 - SP_PAGE_SHIFT);
	size_t chunk = SP_MAX_BLOCK_PAGES, top;
	int saved = sp_region_thp, n = 0;
	void *blk[GROW_MAX];

	(void)state;
	if (!thp_fresh_process(__func__))
		return;
	assert_true(region_committed(r) + chunk < eager);

	/* one chunk short of it: nothing advised yet */
	n = grow_past(r, eager - 2 * chunk, blk, n);
	top = region_committed(r) - chunk;
	assert_true(region_committed(r) < eager);
	assert_false(vma_advised_huge(r->base + (chunk << SP_PAGE_SHIFT)));
	assert_false(vma_advised_huge(r->base + (top << SP_PAGE_SHIFT)));

	/* the chunk that reaches it: it and those below, at once */
	top = region_committed(r);
	n = grow_past(r, top, blk, n);
	print_message("# %d MiB committed: chunks from page %zu to %zu "
		      "advised at once\n", SP_REGION_THP_EAGER_MB, chunk,
		      region_committed(r));
	assert_true(vma_advised_huge(r->base + (chunk << SP_PAGE_SHIFT)));
	assert_true(vma_advised_huge(r->base + (top << SP_PAGE_SHIFT)));
	assert_false(vma_advised_huge(r->base));
	assert_advised_one_mapping(r);

	/* and the next at its commit */
	top = region_committed(r);
	n = grow_past(r, top, blk, n);
	assert_true(vma_advised_huge(r->base + (top << SP_PAGE_SHIFT)));
	assert_advised_one_mapping(r);

	while (n--)
		sp_region_free(blk[n], SP_MAX_ORDER);
	sp_region_purge(0);
	sp_region_thp = saved;
}

/*
 * Under SEGPOOL_THP=auto a run of SP_REGION_THP_RUN_MB or more has its
 * chunks advised when it is taken, not at their age (a growing block would
 * fault each 4 KiB page); a shorter one, a huge page say, waits for the
 * age like any memory (its first faults would pay for compaction); once
 * the region's top chunk is advised, a new chunk is advised at its commit.
 * Either way the advised part stays one mapping, so that a run can move
 * out of it with mremap.
 */
static void test_thp_big_run_at_once(void **state)
{
	struct sp_region *r = &sp_space.region[0];
	size_t pages = (size_t)SP_REGION_THP_RUN_MB << (20 - SP_PAGE_SHIFT);
	int saved = sp_region_thp, n = 0;
	void *blk[GROW_MAX];
	size_t top;
	uint64_t now;
	bool dirty;
	char *run, *small;

	(void)state;
	if (!thp_fresh_process(__func__))
		return;

	/* a huge page's run, past the first chunk: left to the age */
	n = grow_past(r, SP_MAX_BLOCK_PAGES, blk, n);
	small = sp_region_alloc_pages(0, pages >> 3, SP_PAGE_SIZE, &dirty);
	assert_non_null(small);
	assert_true(small >= r->base + SP_MAX_BLOCK_SIZE);
	assert_false(vma_advised_huge(small));
	assert_true(sp_region_free_pages(small));

	run = sp_region_alloc_pages(0, pages, SP_PAGE_SIZE, &dirty);
	assert_non_null(run);
	assert_true(vma_advised_huge(run));
	assert_true(vma_advised_huge(run + (pages << SP_PAGE_SHIFT) - 1));
	assert_advised_one_mapping(r);

	/* age everything committed: the top chunk is advised */
	pthread_mutex_lock(&r->lock);
	r->thp_seen_ns = 0;
	pthread_mutex_unlock(&r->lock);
	now = sp_region_now_ns() + 1;
	sp_region_thp_age(0, now);
	sp_region_thp_age(0, now + SP_REGION_THP_AGE_MS * 1000000ULL);
	top = region_committed(r);
	n = grow_past(r, top, blk, n);
	print_message("# run at page %zu advised at once, %zu at commit\n",
		      (size_t)(run - r->base) >> SP_PAGE_SHIFT, top);
	assert_true(vma_advised_huge(r->base + (top << SP_PAGE_SHIFT)));
	assert_advised_one_mapping(r);

	assert_true(sp_region_free_pages(run));
	while (n--)
		sp_region_free(blk[n], SP_MAX_ORDER);
	sp_region_purge(0);
	sp_region_thp = saved;
}

/* --- the lazy start ------------------------------------------------------ */

/* The threshold, in bytes (core/decay.c). */
#define WANT_BYTES	(8UL << 20)
/* Large blocks freed to pass it: twice the threshold. */
#define LAZY_BLOCKS	32
#define LAZY_BLOCK	(1UL << 20)

/*
 * Run @fn in a process of its own (the test's process had its thread long
 * ago): rerun with @env and SP_TEST_LAZY=1, and return false; in the
 * rerun, return true.  Huge pages off, so that only free memory asks for
 * the thread (the aging's ask is the committed memory's).
 */
static bool lazy_fresh_process(const char *fn, const char *decay_ms)
{
	char ms[64];
	const char *env[] = { "SP_TEST_LAZY=1", "SEGPOOL_THP=never", ms,
			      "SEGPOOL_MEMORY_LIMIT", NULL };

	if (getenv("SP_TEST_LAZY"))
		return true;
	snprintf(ms, sizeof(ms), "SEGPOOL_DECAY_MS=%s", decay_ms);
	assert_int_equal(sp_test_rerun(env, fn), 0);
	return false;
}

static bool health_decay_thread(void)
{
	struct segpool_health h = { .size = sizeof(h) };

	assert_int_equal(segpool_health_get(&h), 0);
	return h.decay_thread;
}

/* Allocate @n large blocks and touch them. */
/*
 * @n blocks of LAZY_BLOCK, written.  One of the size is freed first: the
 * first runs of a size go back at their own free (numa/region.c), and
 * these tests are about what the decay does with the ones that stay.
 */
static void lazy_alloc(void **blk, int n)
{
	segpool_free(segpool_malloc(LAZY_BLOCK));
	assert_true(sp_region_first_bar() >= LAZY_BLOCK >> SP_PAGE_SHIFT);
	for (int i = 0; i < n; i++) {
		blk[i] = segpool_malloc(LAZY_BLOCK);
		assert_non_null(blk[i]);
		memset(blk[i], 3, LAZY_BLOCK);
	}
}

/*
 * A process that allocates and frees little never starts the thread: a
 * few thousand small blocks and cache objects, a few large ones, all
 * freed, then more than the delay with no call, then more calls.
 */
static void test_lazy_no_thread_when_little_freed(void **state)
{
	static void *small[4000], *objs[20000], *big[4];
	struct segpool_cache *c;
	uint64_t seed = sp_test_seed(), x = seed ? seed : 1;

	(void)state;
	if (!lazy_fresh_process(__func__, "50"))
		return;
	print_message("# seed %llu\n", (unsigned long long)seed);
	assert_false(decay_thread_running());
	assert_false(health_decay_thread());
	c = segpool_cache_create("lazy-little", 64, 0, 0, NULL);
	assert_non_null(c);
	for (int round = 0; round < 3; round++) {
		for (size_t i = 0; i < 4000; i++) {
			small[i] = segpool_malloc(16 + sp_test_rand(&x) % 1024);
			assert_non_null(small[i]);
		}
		for (size_t i = 0; i < 20000; i++) {
			objs[i] = segpool_cache_alloc(c, 0);
			assert_non_null(objs[i]);
		}
		for (int i = 0; i < 4; i++) {
			big[i] = segpool_malloc(256UL << 10);
			assert_non_null(big[i]);
			memset(big[i], 1, 256UL << 10);
		}
		for (size_t i = 0; i < 4000; i++)
			segpool_free(small[(i * 7919) % 4000]);
		for (size_t i = 0; i < 20000; i++)
			segpool_cache_free(c, objs[i]);
		for (int i = 0; i < 4; i++)
			segpool_free(big[i]);
		sleep_ms(100);		/* twice the delay */
	}
	assert_true(segpool_cache_shrink(c) >= 0);
	assert_int_equal(segpool_cache_destroy(c), 0);
	print_message("# dirty %zu KiB, threshold %lu KiB\n",
		      dirty_pages() << (SP_PAGE_SHIFT - 10), WANT_BYTES >> 10);
	assert_true(dirty_pages() << SP_PAGE_SHIFT <= WANT_BYTES);
	assert_false(decay_thread_running());
	assert_false(health_decay_thread());
	assert_false(__atomic_load_n(&sp_lib_wanted, __ATOMIC_RELAXED));
}

/*
 * Freeing more than the threshold starts it, at the call that frees; and
 * then resident memory falls with no further call, within the delay (a
 * generous bound).  Less than the threshold first: no thread.
 */
static void test_lazy_starts_past_threshold(void **state)
{
	static void *blk[LAZY_BLOCKS];
	size_t before, freed, after;

	(void)state;
	if (!lazy_fresh_process(__func__, "200"))
		return;
	before = arena_resident();
	lazy_alloc(blk, LAZY_BLOCKS);
	assert_false(decay_thread_running());
	/* an eighth of it: well under the threshold */
	for (int i = 0; i < LAZY_BLOCKS / 8; i++)
		segpool_free(blk[i]);
	sleep_ms(300);
	assert_false(decay_thread_running());
	assert_false(health_decay_thread());
	for (int i = LAZY_BLOCKS / 8; i < LAZY_BLOCKS; i++)
		segpool_free(blk[i]);
	freed = arena_resident();
	assert_true(decay_thread_appears());
	assert_true(health_decay_thread());
	print_message("# resident: %zu KiB before, %zu KiB freed\n",
		      before >> 10, freed >> 10);
	/* no segpool call from here on: reads of the regions only */
	after = wait_resident_below(before + (2UL << 20));
	print_message("# resident after the decay: %zu KiB\n", after >> 10);
	assert_true(after <= before + (2UL << 20));
}

static void lazy_usr1(int sig)
{
	(void)sig;
}

/*
 * A thread that blocks a signal it has a handler for, for good (a worker
 * leaving SIGINT to the main thread, say), is no handler: past the
 * threshold its free starts the thread all the same.  The start used to
 * read such a mask as "maybe in a handler" and put itself off for ever.
 */
static void test_lazy_starts_with_signal_blocked(void **state)
{
	static void *blk[LAZY_BLOCKS];
	struct sigaction sa = { .sa_handler = lazy_usr1 };
	sigset_t set;

	(void)state;
	if (!lazy_fresh_process(__func__, "200"))
		return;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	assert_int_equal(pthread_sigmask(SIG_BLOCK, &set, NULL), 0);
	lazy_alloc(blk, LAZY_BLOCKS);
	assert_false(decay_thread_running());
	for (int i = 0; i < LAZY_BLOCKS; i++)
		segpool_free(blk[i]);
	/* no segpool call from here on */
	assert_true(decay_thread_appears());
}

/*
 * A fork child of a process with the thread has none, and frees a little
 * without one; past the threshold it starts its own.
 */
static void test_lazy_fork_child(void **state)
{
	static void *blk[LAZY_BLOCKS];
	pid_t pid;
	int status;

	(void)state;
	/* no thread in a child of a threaded process there (core/decay.c) */
	if (SP_TSAN)
		skip();
	if (!lazy_fresh_process(__func__, "200"))
		return;
	lazy_alloc(blk, LAZY_BLOCKS);
	for (int i = 0; i < LAZY_BLOCKS; i++)
		segpool_free(blk[i]);
	assert_true(decay_thread_appears());
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		void *p;

		alarm(SP_TEST_CHILD_TIMEOUT);
		if (decay_thread_running())
			_exit(1);
		p = segpool_malloc(LAZY_BLOCK);
		if (!p)
			_exit(2);
		memset(p, 1, LAZY_BLOCK);
		segpool_free(p);
		sleep_ms(300);
		if (decay_thread_running())
			_exit(3);
		lazy_alloc(blk, LAZY_BLOCKS);
		for (int i = 0; i < LAZY_BLOCKS; i++)
			segpool_free(blk[i]);
		_exit(decay_thread_appears() ? 0 : 4);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * The limit: with a delay of -1 no thread, a limit set starts none either;
 * the allocation that reaches it asks for one, for its shrinks.
 */
static void test_lazy_limit_starts_it(void **state)
{
	static void *blk[4 * LAZY_BLOCKS];
	struct segpool_health h = { .size = sizeof(h) };
	uint64_t hits;
	size_t used = 0;
	int n = 0;

	(void)state;
	if (!lazy_fresh_process(__func__, "-1"))
		return;
	for (int i = 0; i < sp_space.nr_regions; i++)
		used += REGION_READ(&sp_space.region[i], pages_used);
	assert_int_equal(segpool_set_memory_limit(
				 ((uint64_t)used << SP_PAGE_SHIFT) +
				 (8ULL << 20)), 0);
	assert_int_equal(segpool_health_get(&h), 0);
	hits = h.limit_hits;
	sleep_ms(100);
	assert_false(decay_thread_running());
	assert_false(h.decay_thread);
	while (n < 4 * LAZY_BLOCKS) {
		blk[n] = segpool_malloc(LAZY_BLOCK);
		assert_non_null(blk[n]);
		n++;
		assert_int_equal(segpool_health_get(&h), 0);
		if (h.limit_hits > hits)
			break;
	}
	print_message("# limit reached after %d blocks of 1 MiB\n", n);
	assert_true(h.limit_hits > hits);
	assert_true(decay_thread_appears());
	assert_true(health_decay_thread());
	while (n--)
		segpool_free(blk[n]);
	assert_int_equal(segpool_set_memory_limit(0), 0);
}

/*
 * Past the threshold with a delay of -1 nothing starts; the request is
 * kept, and the delay set later starts the thread, which gives the memory
 * back with no further call.
 */
static void test_lazy_delay_set_later(void **state)
{
	static void *blk[LAZY_BLOCKS];
	size_t before, after;

	(void)state;
	if (!lazy_fresh_process(__func__, "-1"))
		return;
	before = arena_resident();
	lazy_alloc(blk, LAZY_BLOCKS);
	for (int i = 0; i < LAZY_BLOCKS; i++)
		segpool_free(blk[i]);
	sleep_ms(100);
	assert_false(decay_thread_running());
	assert_true(dirty_pages() << SP_PAGE_SHIFT > WANT_BYTES);
	assert_int_equal(segpool_set_decay_ms(100), 0);
	assert_true(decay_thread_appears());
	after = wait_resident_below(before + (2UL << 20));
	print_message("# resident: %zu KiB before, %zu KiB after\n",
		      before >> 10, after >> 10);
	assert_true(after <= before + (2UL << 20));
}

/* Bad settings: refused by the calls, and by the table with a reason. */
static size_t region_dirty(struct sp_region *r)
{
	return REGION_READ(r, dirty_pages);
}

#define VALVE_BLOCKS	((64UL << 20) / SP_MAX_BLOCK_SIZE + 1)

/*
 * The valve: a region holding more dirty free pages than its cap gives all
 * of them back at the free that passed it.  The cap is 64 MiB without a
 * decay and a sixteenth of the node's share of memory (at least 64 MiB)
 * with one: wide enough for a heap freed to be built again, narrow enough
 * for a small node (the 4-node rig's 256 MiB nodes ran out when it was
 * shut).
 */
static void test_dirty_cap_valve(void **state)
{
	struct sp_region *r = &sp_space.region[0];
	uint64_t mem = sp_os_memory_bytes();
	size_t want = (size_t)(mem / (uint64_t)sp_space.nr_regions >> 4 >>
			       SP_PAGE_SHIFT), saved;
	void *blk[VALVE_BLOCKS];

	(void)state;
	assert_true(mem > (64ULL << 20));
	if (want < ((64UL << 20) >> SP_PAGE_SHIFT))
		want = (64UL << 20) >> SP_PAGE_SHIFT;
	/* read when first needed: not at start-up */
	assert_int_equal(r->dirty_cap, 0);
	assert_int_equal(sp_region_dirty_cap(r), want);
	assert_int_equal(r->dirty_cap, want);
	print_message("# memory %llu MiB, cap %zu MiB per region\n",
		      (unsigned long long)(mem >> 20),
		      want >> (20 - SP_PAGE_SHIFT));

	/* with a decay (a long delay: it gives nothing back here) */
	assert_int_equal(segpool_set_decay_ms(60000), 0);
	segpool_shrink_all();
	pthread_mutex_lock(&r->lock);
	saved = r->dirty_cap;
	r->dirty_cap = 2 * SP_MAX_BLOCK_PAGES;
	pthread_mutex_unlock(&r->lock);
	for (int i = 0; i < 3; i++) {
		blk[i] = sp_region_alloc(0, SP_MAX_ORDER, 0x1000);
		assert_non_null(blk[i]);
		memset(blk[i], 1, SP_MAX_BLOCK_SIZE);
	}
	sp_region_free(blk[0], SP_MAX_ORDER);
	sp_region_free(blk[1], SP_MAX_ORDER);
	assert_true(region_dirty(r) >= 2 * SP_MAX_BLOCK_PAGES); /* kept */
	sp_region_free(blk[2], SP_MAX_ORDER);
	assert_int_equal(region_dirty(r), 0);	/* past the cap: all */
	pthread_mutex_lock(&r->lock);
	r->dirty_cap = saved;
	pthread_mutex_unlock(&r->lock);

	/* without a decay: 64 MiB, whatever the cap */
	assert_int_equal(segpool_set_decay_ms(SEGPOOL_DECAY_NEVER), 0);
	for (size_t i = 0; i < VALVE_BLOCKS; i++) {
		blk[i] = sp_region_alloc(0, SP_MAX_ORDER, 0x1000);
		assert_non_null(blk[i]);
		memset(blk[i], 1, SP_MAX_BLOCK_SIZE);
	}
	for (size_t i = 0; i + 1 < VALVE_BLOCKS; i++)
		sp_region_free(blk[i], SP_MAX_ORDER);
	assert_true(region_dirty(r) >= (64UL << 20) >> SP_PAGE_SHIFT);
	sp_region_free(blk[VALVE_BLOCKS - 1], SP_MAX_ORDER);
	assert_int_equal(region_dirty(r), 0);
}

/*
 * The decay's shrink of an idle cache releases its empty slabs but leaves
 * the node's other free pages to their age: it purged the whole region,
 * and an idle internal cache shrunk in the middle of a program's large
 * round took back (and split the huge pages of) memory about to be reused.
 * segpool_cache_shrink() itself still gives everything back.
 */
static void test_idle_shrink_leaves_others(void **state)
{
	struct sp_region *r = &sp_space.region[0];
	struct segpool_cache *idle;
	unsigned char vec[16];
	void *objs[512];
	uint64_t purged;
	char *p;

	(void)state;
	assert_int_equal(segpool_set_decay_ms(SEGPOOL_DECAY_NEVER), 0);
	idle = segpool_cache_create("decay-idle", 256, 0, 0, NULL);
	assert_non_null(idle);
	for (int i = 0; i < 512; i++) {
		objs[i] = segpool_cache_alloc(idle, 0);
		assert_non_null(objs[i]);
	}
	for (int i = 0; i < 512; i++)
		segpool_cache_free(idle, objs[i]);
	/* a young free block of someone else's */
	p = sp_region_alloc(0, 4, 0x1000);
	assert_non_null(p);
	memset(p, 1, 16 * SP_PAGE_SIZE);
	sp_region_free(p, 4);
	pthread_mutex_lock(&r->lock);
	purged = r->purged_pages;
	pthread_mutex_unlock(&r->lock);

	assert_true(sp_cache_shrink(idle, false) > 0);	/* slabs released */
	assert_int_equal(sp_test_mincore(p, 16 * SP_PAGE_SIZE, vec), 0);
	for (int i = 0; i < 16; i++)
		assert_true(vec[i] & 1);
	pthread_mutex_lock(&r->lock);
	assert_int_equal(r->purged_pages, purged);
	pthread_mutex_unlock(&r->lock);

	assert_true(segpool_cache_shrink(idle) >= 0);	/* now: everything */
	assert_int_equal(sp_test_mincore(p, 16 * SP_PAGE_SIZE, vec), 0);
	for (int i = 0; i < 16; i++)
		assert_false(vec[i] & 1);
	assert_int_equal(segpool_cache_destroy(idle), 0);
}

/*
 * Huge pages by SEGPOOL_THP, the kernel's mode and its huge page: a huge
 * page of another size than the regions are built for is refused whatever
 * the setting says, an unknown one changes nothing; and this kernel's
 * choice is the one start-up made.
 */
static void test_thp_choice(void **state)
{
	static const struct {
		int thp, mode;
		size_t huge;
		long ms;
		int want;
	} c[] = {
		{ SP_THP_AUTO, SP_OS_THP_MADVISE, SP_OS_HUGE_SIZE, 200,
		  SP_REGION_THP_AGED },
		{ SP_THP_AUTO, SP_OS_THP_MADVISE, SP_OS_HUGE_SIZE, -1,
		  SP_REGION_THP_COMMIT },
		{ SP_THP_AUTO, SP_OS_THP_MADVISE, 0, 200, SP_REGION_THP_AGED },
		{ SP_THP_AUTO, SP_OS_THP_ALWAYS, SP_OS_HUGE_SIZE, 200, 0 },
		{ SP_THP_AUTO, SP_OS_THP_NEVER, SP_OS_HUGE_SIZE, 200, 0 },
		{ SP_THP_AUTO, SP_OS_THP_UNKNOWN, 0, 200, 0 },
		{ SP_THP_ALWAYS, SP_OS_THP_UNKNOWN, SP_OS_HUGE_SIZE, 200,
		  SP_REGION_THP_COMMIT },
		{ SP_THP_NEVER, SP_OS_THP_UNKNOWN, SP_OS_HUGE_SIZE, 200,
		  SP_REGION_THP_NEVER },
		/* 16 KiB pages' 32 MiB, 64 KiB pages' 512 MiB: refused */
		{ SP_THP_AUTO, SP_OS_THP_MADVISE, 32UL << 20, 200,
		  SP_REGION_THP_NEVER },
		{ SP_THP_AUTO, SP_OS_THP_ALWAYS, 32UL << 20, 200,
		  SP_REGION_THP_NEVER },
		{ SP_THP_ALWAYS, SP_OS_THP_UNKNOWN, 512UL << 20, -1,
		  SP_REGION_THP_NEVER },
	};
	size_t huge = sp_os_thp_size();
	int mode = sp_os_thp_mode();

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int got = sp_decay_thp_choice(c[i].thp, c[i].mode, c[i].huge,
					      c[i].ms);

		if (got != c[i].want)
			fail_msg("case %zu: %d, want %d", i, got, c[i].want);
	}
	print_message("# the kernel's huge page: %zu KiB, mode %d\n",
		      huge >> 10, mode);
	/* start-up refused them on such a kernel, and only there (or when
	 * told to) */
	if (huge && huge != SP_OS_HUGE_SIZE)
		assert_int_equal(sp_region_thp, SP_REGION_THP_NEVER);
	else if (sp_env_word(SP_ENV_THP) != SP_THP_NEVER)
		assert_int_not_equal(sp_region_thp, SP_REGION_THP_NEVER);
	/* auto, set or by default, advises them where the kernel asks
	 * for advice (an unset SEGPOOL_THP once turned them off) */
	if (sp_env_word(SP_ENV_THP) <= SP_THP_AUTO &&
	    mode == SP_OS_THP_MADVISE && huge == SP_OS_HUGE_SIZE)
		assert_true(sp_region_thp_now() > 0);
	/* auto in another mode: nothing advised, once the mode is read */
	if (sp_env_word(SP_ENV_THP) <= SP_THP_AUTO &&
	    mode != SP_OS_THP_MADVISE)
		assert_true(sp_region_thp_now() <= 0);
	/* read now if it was not: the same answer, for good */
	assert_int_not_equal(sp_region_thp, SP_REGION_THP_UNREAD);
	assert_int_equal(sp_region_thp_now(), sp_region_thp);
}

static void test_bad_settings(void **state)
{
	long long v;

	(void)state;
	errno = 0;
	assert_int_equal(segpool_set_decay_ms(-2), -EINVAL);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(segpool_set_decay_ms(SEGPOOL_DECAY_MS_MAX + 1),
			 -EINVAL);
	assert_string_equal(sp_env_parse(&sp_env_table[SP_ENV_DECAY_MS], "-2",
					 &v),
			    "out of range");
	assert_string_equal(sp_env_parse(&sp_env_table[SP_ENV_DECAY_MS], "1s",
					 &v),
			    "not an integer");
	assert_null(sp_env_parse(&sp_env_table[SP_ENV_DECAY_MS], "-1", &v));
	assert_int_equal(v, -1);
	assert_null(
		sp_env_parse(&sp_env_table[SP_ENV_MEMORY_LIMIT], "512M", &v));
	assert_int_equal(v, 512LL << 20);
	assert_string_equal(sp_env_parse(&sp_env_table[SP_ENV_MEMORY_LIMIT],
					 "-5", &v),
			    "not a size");
	assert_string_equal(sp_env_parse(&sp_env_table[SP_ENV_THP], "sometimes",
					 &v),
			    "not one of the words");
	assert_null(sp_env_parse(&sp_env_table[SP_ENV_THP], "NEVER", &v));
}

/* SEGPOOL_DECAY_MS=-1 at start-up: no thread, and a bad value is named. */
static void test_env_never_and_bad(void **state)
{
	static const char *const bad[] = { "SEGPOOL_DECAY_MS=soon", NULL };
	static const struct sp_test_exec x = {
		.arg = "test_bad_settings", .env = bad,
	};
	char buf[4096];
	int status;

	(void)state;
	assert_int_equal(sp_test_exec_self(&x, buf, sizeof(buf), &status), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_non_null(
		strstr(buf, "SEGPOOL_DECAY_MS=\"soon\": not an integer"));
	if (getenv("SEGPOOL_DECAY_MS")) {
		/* the child: -1 read at start-up, and no thread */
		assert_int_equal(segpool_get_decay_ms(), SEGPOOL_DECAY_NEVER);
		assert_false(decay_thread_running());
		return;
	}
	{
		static const char *const never[] = { "SEGPOOL_DECAY_MS=-1",
						     NULL };

		assert_int_equal(sp_test_rerun(never, "test_env_never_and_bad"),
				 0);
	}
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test_setup(test_env_never_and_bad, setup),
	cmocka_unit_test_setup(test_region_decay_by_age, setup),
	cmocka_unit_test_setup(test_decay_visits_only_old, setup),
	cmocka_unit_test_setup(test_decay_walk_under_churn, setup),
	cmocka_unit_test_setup(test_burst_goes_back_by_itself, setup),
	cmocka_unit_test_setup(test_never_then_shrink_all, setup),
	cmocka_unit_test_setup(test_never_waits_idle, setup),
	cmocka_unit_test_setup(test_zero_purges_at_once, setup),
	cmocka_unit_test_setup(test_memory_limit_purges_first, setup),
	cmocka_unit_test_setup(test_thp_advised_by_age, setup),
	cmocka_unit_test_setup(test_thp_big_run_at_once, setup),
	cmocka_unit_test_setup(test_thp_eager_when_grown, setup),
	cmocka_unit_test_setup(test_lazy_no_thread_when_little_freed, setup),
	cmocka_unit_test_setup(test_lazy_starts_past_threshold, setup),
	cmocka_unit_test_setup(test_lazy_starts_with_signal_blocked, setup),
	cmocka_unit_test_setup(test_lazy_fork_child, setup),
	cmocka_unit_test_setup(test_lazy_limit_starts_it, setup),
	cmocka_unit_test_setup(test_lazy_delay_set_later, setup),
	cmocka_unit_test_setup(test_dirty_cap_valve, setup),
	cmocka_unit_test_setup(test_idle_shrink_leaves_others, setup),
	cmocka_unit_test_setup(test_busy_cache_stale_stash, setup),
	cmocka_unit_test_setup(test_thp_choice, setup),
	cmocka_unit_test_setup(test_bad_settings, setup),
};

SP_TEST_MAIN(tests)
