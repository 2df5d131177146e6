// SPDX-License-Identifier: MIT
/*
 * selftests/unit/test_heap_profile.c - sampled heap profiling
 * (SEGPOOL_HEAP_PROFILE, SEGPOOL_HEAP_SAMPLE, segpool_heap_profile_dump()).
 *
 * Sampling starts at start-up, so the tests that need it run in a child of
 * this program with the settings in its environment (sp_test_rerun()); in
 * the parent they say so and pass.  The child:
 *   - allocates from three call sites in the ratio 1:2:5 of bytes, sizes
 *     from 16 B to 1 MiB (size classes, a named cache and large blocks;
 *     site a's all below 8 KiB, where a sample weighs many objects),
 *     and checks that each site's share of the sampled bytes in use is
 *     within 3 points of its true share (fixed seed, printed);
 *   - frees one site's objects: its records go, the others stay;
 *   - dumps the profile on demand and checks the file's shape and sums,
 *     and the refusals of bad paths.
 * The parent checks that bad settings are refused naming the setting, with
 * sampling off and the hit paths open, and that google-pprof (when
 * installed) reads a profile written at exit and names the call sites;
 * and that the sampler's stack walk (prof/unwind.c) gives libgcc's frames
 * at every depth, past a frame sized by alloca() once it has seen it
 * change, from a signal handler (on the thread's stack and on an
 * alternate one), and from threads at once.
 */
#include <alloca.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <unwind.h>

#include <segpool/segpool.h>

#include "core/entry.h"
#include "percpu/pcpu.h"
#include "prof/prof.h"
#include "slab/slab.h"
#include "selftests/lib/harness.h"

#define CHILD_ENV	"SP_TEST_HEAP_PROFILE_CHILD"
#define RATE		"4096"
#define SITES		3
#define TOTAL_BYTES	(48UL << 20)
#define MAX_OBJS	200000
#define CACHE_NAME	"prof-test-obj"
#define CACHE_OBJ	200
/*
 * Site c's first objects are the named cache's: 2048 of them, 400 KiB,
 * some 100 samples expected at RATE.  With a quarter of its draws alone
 * (49 objects at the fixed seed, 9.8 KB, 2.4 samples expected) a child
 * now and then had no sample in the cache (one in 50 runs, two at a
 * time), and every check that wants its name in the profile failed.
 */
#define CACHE_FIRST	2048

/* the three call sites, each in a section of its own: its address range */
#if defined(__clang__)
#define SITE_NOCLONE		/* clang clones no function */
#else
#define SITE_NOCLONE		noclone,
#endif
#define SITE_SECTION(n)	__attribute__((noinline, SITE_NOCLONE		\
				       section("sp_prof_site_" #n)))
extern char __start_sp_prof_site_0[], __stop_sp_prof_site_0[];
extern char __start_sp_prof_site_1[], __stop_sp_prof_site_1[];
extern char __start_sp_prof_site_2[], __stop_sp_prof_site_2[];

static struct segpool_cache *cache;

SITE_SECTION(0) static void *site_a(size_t size)
{
	void *p = segpool_malloc(size);

	__asm__ volatile("" : : "r"(p) : "memory");	/* no tail call */
	return p;
}

SITE_SECTION(1) static void *site_b(size_t size)
{
	void *p = segpool_malloc(size);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

/* site c also allocates from a named cache: its stacks carry the name */
SITE_SECTION(2) static void *site_c(size_t size)
{
	void *p = size == CACHE_OBJ ? segpool_cache_alloc(cache, 0)
				    : segpool_malloc(size);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

/* Which site a stack's innermost frames fall in, or -1. */
static int site_of(void *const *pcs, int frames)
{
	static char *const lo[SITES] = {
		__start_sp_prof_site_0,
		__start_sp_prof_site_1,
		__start_sp_prof_site_2,
	};
	static char *const hi[SITES] = {
		__stop_sp_prof_site_0,
		__stop_sp_prof_site_1,
		__stop_sp_prof_site_2,
	};

	for (int i = 0; i < frames && i < 4; i++)
		for (int s = 0; s < SITES; s++)
			if ((char *)pcs[i] >= lo[s] && (char *)pcs[i] <= hi[s])
				return s;
	return -1;
}

struct shares {
	double inuse[SITES], alloc[SITES], other;
	bool named_cache;
};

static int add_line(void *arg, const char *cache_name, void *const *pcs,
		    int frames, const double v[4])
{
	struct shares *sh = arg;
	int s = site_of(pcs, frames);

	if (s < 0) {
		sh->other += v[1];
		return 0;
	}
	sh->inuse[s] += v[1];
	sh->alloc[s] += v[3];
	if (s == 2 && !strcmp(cache_name, CACHE_NAME))
		sh->named_cache = true;
	return 0;
}

static void read_shares(struct shares *sh)
{
	struct sp_prof_totals t;

	memset(sh, 0, sizeof(*sh));
	assert_int_equal(sp_prof_walk(NULL, add_line, sh, &t), 0);
}

static uint64_t rnd_state;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* 16 B to 2^@top B (at most 1 MiB), about uniform in log size */
static size_t draw_size(unsigned int top)
{
	unsigned int bits = 4 + (unsigned int)(rnd() % (top - 3));
	size_t lo = (size_t)1 << bits, size = lo + (size_t)(rnd() % lo);

	return size > (1UL << 20) ? (1UL << 20) : size;
}

static void *objs[SITES][MAX_OBJS];
static bool from_cache[SITES][MAX_OBJS];
static size_t nobjs[SITES], bytes[SITES];

static void allocate_mix(void)
{
	static const unsigned int weight[SITES] = { 1, 2, 5 };
	uint64_t seed = sp_test_seed() | 1;

	print_message("# seed %llu (SEGPOOL_TEST_SEED), rate " RATE "\n",
		      (unsigned long long)seed);
	rnd_state = seed;
	cache = segpool_cache_create(CACHE_NAME, CACHE_OBJ, 0, 0, NULL);
	assert_non_null(cache);
	for (int s = 0; s < SITES; s++) {
		size_t goal = TOTAL_BYTES / 8 * weight[s];

		while (bytes[s] < goal) {
			/*
			 * site a: small objects only, where the weights matter
			 */
			size_t size = draw_size(s == 0 ? 12 : 20);
			void *p;

			if (s == 2 &&
			    (nobjs[s] < CACHE_FIRST || rnd() % 4 == 0))
				size = CACHE_OBJ;
			assert_true(nobjs[s] < MAX_OBJS);
			p = s == 0 ? site_a(size) :
			    s == 1 ? site_b(size) :
				     site_c(size);
			assert_non_null(p);
			memset(p, 0x5a, size < 64 ? size : 64);
			from_cache[s][nobjs[s]] = s == 2 && size == CACHE_OBJ;
			objs[s][nobjs[s]++] = p;
			bytes[s] += size;
		}
	}
}

static void free_site(int s)
{
	for (size_t i = 0; i < nobjs[s]; i++) {
		if (from_cache[s][i])
			segpool_cache_free(cache, objs[s][i]);
		else
			segpool_free(objs[s][i]);
	}
	nobjs[s] = 0;
	bytes[s] = 0;
}

/* --- in the child: sampling on -------------------------------------------- */

static bool in_child(void)
{
	if (getenv(CHILD_ENV))
		return true;
	print_message("# runs in the child of test_heap_profile_child\n");
	return false;
}

static void check_shares(void)
{
	double truth = 0, est = 0;
	struct shares sh;

	read_shares(&sh);
	for (int s = 0; s < SITES; s++) {
		truth += (double)bytes[s];
		est += sh.inuse[s];
	}
	assert_true(sh.named_cache);
	for (int s = 0; s < SITES; s++) {
		double want = (double)bytes[s] / truth, got = sh.inuse[s] / est;

		print_message("# site %c: %.4f of the bytes, profile says %.4f "
			      "(%.0f of %zu bytes)\n", 'a' + s, want, got,
			      sh.inuse[s], bytes[s]);
		assert_true(got > want - 0.03 && got < want + 0.03);
	}
	/* the whole: within 5% of the bytes the sites hold */
	print_message("# in use: %.0f sampled-weighted bytes for %.0f true\n",
		      est, truth);
	assert_true(est > truth * 0.95 && est < truth * 1.05);
}

static void test_shares(void **state)
{
	(void)state;
	if (!in_child())
		return;
	assert_int_equal(segpool_heap_profile_enabled(), 1);
	/* the open hit paths are closed while sampling runs ... */
	assert_int_equal(sp_pcpu_fast.nr, 0);
	/* ... and the entry points resolved to the counted build */
	assert_true(sp_entry_counted());
	assert_ptr_equal((void *)segpool_malloc, (void *)sp_malloc_counted);
	assert_ptr_equal((void *)segpool_free, (void *)sp_free_counted);
	assert_ptr_equal((void *)segpool_cache_alloc,
			 (void *)sp_cache_alloc_counted);
	assert_ptr_equal((void *)segpool_cache_free,
			 (void *)sp_cache_free_counted);
	if (!strncmp(segpool_percpu_mode(), "rseq", 4))
		assert_true(sp_pcpu_closed_nr > 0);
	allocate_mix();
	check_shares();
}

static void test_free_removes(void **state)
{
	struct sp_prof_totals before, after;
	struct shares sh;
	double alloc_b;

	(void)state;
	if (!in_child())
		return;
	read_shares(&sh);
	alloc_b = sh.alloc[1];
	assert_true(sh.inuse[1] > 0);
	sp_prof_totals(&before);
	free_site(1);
	sp_prof_totals(&after);
	assert_true(after.records < before.records);
	read_shares(&sh);
	/* every record of site b is gone; what it allocated stays counted */
	assert_true(sh.inuse[1] < 1 && sh.inuse[1] > -1);
	assert_true(sh.alloc[1] == alloc_b);
	assert_true(sh.inuse[0] > 0 && sh.inuse[2] > 0);
}

static char *slurp(const char *path, size_t *lenp)
{
	char *text = NULL, chunk[4096];
	size_t len = 0, n;
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		text = realloc(text, len + n + 1);
		assert_non_null(text);
		memcpy(text + len, chunk, n);
		len += n;
		text[len] = '\0';
	}
	fclose(f);
	assert_non_null(text);
	if (lenp)
		*lenp = len;
	return text;
}

/* The file: header totals are the sums of the lines; maps follow. */
static void check_file(const char *path)
{
	unsigned long long n1, b1, n2, b2, sn = 0, sb = 0, an = 0, ab = 0;
	char *text = slurp(path, NULL), *line, *save = NULL;
	int lines = 0, comments = 0;
	bool maps = false, in_maps = false, named = false;

	assert_int_equal(
		sscanf(text,
		       "heap profile: %llu: %llu [%llu: %llu] @ heapprofile",
		       &n1, &b1, &n2, &b2),
		4);
	for (line = strtok_r(strchr(text, '\n') + 1, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long a, b, c, d;

		if (in_maps)
			continue;
		if (!strcmp(line, "MAPPED_LIBRARIES:")) {
			maps = in_maps = true;
			continue;
		}
		if (line[0] == '#') {
			comments++;
			if (!strcmp(line, "# cache " CACHE_NAME))
				named = true;
			continue;
		}
		assert_int_equal(sscanf(line, "%llu: %llu [%llu: %llu] @ 0x",
					&a, &b, &c, &d),
				 4);
		assert_non_null(strstr(line, "] @ 0x"));
		sn += a, sb += b, an += c, ab += d;
		lines++;
	}
	assert_true(maps && named && lines > 0 && comments >= lines);
	/* rounding per line: within a line's unit each */
	assert_true(sb + (unsigned long long)lines >= b1 &&
		    sb <= b1 + (unsigned long long)lines);
	assert_true(ab + (unsigned long long)lines >= b2 &&
		    ab <= b2 + (unsigned long long)lines);
	assert_true(b2 >= b1);
	(void)sn, (void)an;
	free(text);
}

static void test_dump_on_demand(void **state)
{
	char dir[] = "/tmp/segpool-heap-dump.XXXXXX", path[256], pat[256];
	struct stat st;

	(void)state;
	if (!in_child())
		return;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/heap", dir);
	assert_int_equal(segpool_heap_profile_dump(path), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	check_file(path);
	unlink(path);

	/* %p is the pid */
	snprintf(pat, sizeof(pat), "%s/heap.%%p", dir);
	snprintf(path, sizeof(path), "%s/heap.%d", dir, (int)getpid());
	assert_int_equal(segpool_heap_profile_dump(pat), 0);
	assert_int_equal(stat(path, &st), 0);
	unlink(path);

	/* refusals: nothing written */
	errno = 0;
	assert_int_equal(segpool_heap_profile_dump(NULL), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(segpool_heap_profile_dump(""), -1);
	assert_int_equal(errno, EINVAL);
	snprintf(pat, sizeof(pat), "%s/heap.%%q", dir);
	assert_int_equal(segpool_heap_profile_dump(pat), -1);
	assert_int_equal(errno, EINVAL);
	snprintf(pat, sizeof(pat), "%s/no/such/dir", dir);
	assert_int_equal(segpool_heap_profile_dump(pat), -1);
	assert_int_equal(errno, ENOENT);
	/* a symbolic link is not followed */
	snprintf(path, sizeof(path), "%s/link", dir);
	assert_int_equal(symlink("/dev/null", path), 0);
	assert_int_equal(segpool_heap_profile_dump(path), -1);
	assert_int_equal(errno, ELOOP);
	unlink(path);
	assert_int_equal(rmdir(dir), 0);
	free_site(0);
	free_site(2);
	segpool_cache_destroy(cache);
}

/*
 * Threads allocate and free at once with a low rate (many samples), each
 * freeing half of its objects itself and handing the rest to the next
 * thread, which frees them after the join: every record goes, wherever
 * the free runs, and a dump meanwhile sees a consistent file.
 */
#define THREADS		4
#define THREAD_OBJS	20000

static void *handoff[THREADS][THREAD_OBJS];
/* allocations that failed, per thread: asserted after the join */
static int thread_failed[THREADS];

static void *thread_main(void *arg)
{
	int me = (int)(intptr_t)arg;
	uint64_t x = 0x9e3779b97f4a7c15ULL * (uint64_t)(me + 1);

	for (int i = 0; i < THREAD_OBJS; i++) {
		size_t size;
		void *p;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size = 8 + (size_t)(x % 4096);
		p = segpool_malloc(size);
		if (!p) {
			thread_failed[me]++;
			continue;
		}
		if (i % 2)
			segpool_free(p);
		else
			handoff[me][i] = p;
	}
	return NULL;
}

static void test_threads_balance(void **state)
{
	char dir[] = "/tmp/segpool-heap-thr.XXXXXX", path[256];
	struct sp_prof_totals before, after;
	pthread_t t[THREADS];

	(void)state;
	if (!in_child())
		return;
	sp_prof_totals(&before);
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, thread_main,
						(void *)(intptr_t)i), 0);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/heap", dir);
	assert_int_equal(segpool_heap_profile_dump(path), 0);	/* meanwhile */
	for (int i = 0; i < THREADS; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(thread_failed[i], 0);
	}
	check_file(path);
	unlink(path);
	assert_int_equal(rmdir(dir), 0);
	/* each thread's kept half freed by another thread */
	for (int i = 0; i < THREADS; i++)
		for (int j = 0; j < THREAD_OBJS; j++)
			if (handoff[(i + 1) % THREADS][j]) {
				segpool_free(handoff[(i + 1) % THREADS][j]);
				handoff[(i + 1) % THREADS][j] = NULL;
			}
	sp_prof_totals(&after);
	print_message("# %llu samples taken by %d threads\n",
		      (unsigned long long)(after.samples - before.samples),
		      THREADS);
	assert_true(after.samples > before.samples + 100);
	assert_int_equal(after.records, before.records);
}

/*
 * The counted build counts its hits as sample counts spent (percpu/pcpu.h
 * sp_slot_alloc_hits()): across many arming, the cache's hit count is the
 * pairs made, exactly, and the samples were taken.  One CPU, so one slot
 * (and no other thread of this process allocates meanwhile).
 */
#define COUNTED_PAIRS	300000

static void test_counted_hits(void **state)
{
	struct segpool_cache_info a = { .size = sizeof(a) };
	struct segpool_cache_info b = { .size = sizeof(b) };
	struct sp_prof_totals before, after;
	struct segpool_cache *c;
	cpu_set_t one, was;

	(void)state;
	if (!in_child())
		return;
	if (strncmp(segpool_percpu_mode(), "rseq", 4)) {
		print_message("# skipped: the counted pop is rseq mode's\n");
		skip();
	}
	assert_int_equal(sched_getaffinity(0, sizeof(was), &was), 0);
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	c = segpool_cache_create("prof-counted-hits", 64, 0, 0, NULL);
	assert_non_null(c);
	/* the magazine loaded: the pairs below are all hits */
	segpool_cache_free(c, segpool_cache_alloc(c, 0));
	assert_int_equal(segpool_cache_get_info(c, &a), 0);
	sp_prof_totals(&before);
	for (int i = 0; i < COUNTED_PAIRS; i++) {
		void *p = segpool_cache_alloc(c, 0);

		assert_non_null(p);
		segpool_cache_free(c, p);
	}
	sp_prof_totals(&after);
	assert_int_equal(segpool_cache_get_info(c, &b), 0);
	assert_int_equal(sched_setaffinity(0, sizeof(was), &was), 0);
	print_message("# %d pairs: %llu hits and %llu slow allocations "
		      "counted, %llu samples\n", COUNTED_PAIRS,
		      (unsigned long long)(b.alloc_fastpath - a.alloc_fastpath),
		      (unsigned long long)(b.alloc_slowpath - a.alloc_slowpath),
		      (unsigned long long)(after.samples - before.samples));
	/* at 4096 bytes a sample, 64-byte objects: about 4700 samples */
	assert_true(after.samples - before.samples > 1000);
	assert_int_equal((b.alloc_fastpath - a.alloc_fastpath) +
			 (b.alloc_slowpath - a.alloc_slowpath), COUNTED_PAIRS);
	/* the application's counts: no sample's swap among them */
	assert_int_equal(b.allocs - a.allocs, COUNTED_PAIRS);
	assert_int_equal(b.frees - a.frees, COUNTED_PAIRS);
	/* a sampled object's free misses (its slab's tag): the rest hit */
	assert_true(b.alloc_fastpath - a.alloc_fastpath > COUNTED_PAIRS / 2);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/*
 * Every recorded object lies in a sampled slab (slab/slab.h, SP_TAG_SAMPLED)
 * and every object of one is recorded: a cache with magazines and the size
 * classes, allocated through the counted build and freed through it, whose
 * hit path tests nothing for records.  Afterwards no record is left, and
 * no sampled slab but one kept empty for the next sample, which the decay
 * gives back once the cache is idle.
 */
#define SAMPLED_OBJS	20000
#define SAMPLED_SIZE	200

static void *sampled_objs[2][SAMPLED_OBJS];

/* @c's sampled slabs on node index @i. */
static unsigned long sampled_slabs_on(struct segpool_cache *c, int i)
{
	unsigned long n;

	pthread_mutex_lock(&c->node[i].lock);
	n = c->node[i].nr_sampled;
	pthread_mutex_unlock(&c->node[i].lock);
	return n;
}

static unsigned long sampled_slabs(struct segpool_cache *c)
{
	unsigned long n = 0;

	for (int i = 0; i < sp_space.nr_regions; i++)
		n += sampled_slabs_on(c, i);
	return n;
}

static void test_sampled_slabs(void **state)
{
	struct segpool_cache *c, *k;
	struct sp_prof_totals before, mid, after;
	size_t tagged = 0, in_c[SP_MAX_NODES] = { 0 };
	long decay;

	(void)state;
	if (!in_child())
		return;
	c = segpool_cache_create("prof-sampled-slabs", SAMPLED_SIZE, 0, 0,
				 NULL);
	assert_non_null(c);
	sp_prof_totals(&before);
	for (int i = 0; i < SAMPLED_OBJS; i++) {
		sampled_objs[0][i] = segpool_cache_alloc(c, 0);
		sampled_objs[1][i] = segpool_malloc(SAMPLED_SIZE);
		assert_non_null(sampled_objs[0][i]);
		assert_non_null(sampled_objs[1][i]);
	}
	k = sp_tag_cache(sp_space_tag(sampled_objs[1][0]));
	sp_prof_totals(&mid);
	for (int a = 0; a < 2; a++)
		for (int i = 0; i < SAMPLED_OBJS; i++) {
			void *p = sampled_objs[a][i];

			if (!sp_tag_sampled(sp_space_tag(p)))
				continue;
			tagged++;
			in_c[sp_tag_node(sp_space_tag(p))] += !a;
			/* its record is there (the filter is exact for it) */
			assert_true(sp_prof_maybe(p));
			assert_ptr_equal(sp_tag_cache(sp_space_tag(p)),
					 a ? k : c);
		}
	print_message("# %zu of %d objects sampled, %llu records more, "
		      "%lu + %lu sampled slabs\n", tagged, 2 * SAMPLED_OBJS,
		      (unsigned long long)(mid.records - before.records),
		      sampled_slabs(c), sampled_slabs(k));
	/* at 4096 bytes a sample, a 200-byte object: about 1 in 21 */
	assert_true(tagged > SAMPLED_OBJS / 50);
	/* the records taken are those objects, nothing else */
	assert_int_equal(mid.records - before.records, tagged);
	/*
	 * samples fill one sampled slab of their node before the next is
	 * made: one with room is left on each node unless its last filled
	 * up (which samples happen to be counted by the slots, and on which
	 * nodes, depends on the CPUs the test ran on)
	 */
	for (int i = 0; i < sp_space.nr_regions; i++)
		assert_int_equal(sampled_slabs_on(c, i),
				 in_c[i] % c->objs_per_slab != 0);
	assert_int_equal(segpool_cache_validate(c), 0);
	assert_int_equal(segpool_cache_validate(k), 0);
	for (int i = 0; i < SAMPLED_OBJS; i++) {
		segpool_cache_free(c, sampled_objs[0][i]);
		segpool_free(sampled_objs[1][i]);
	}
	sp_prof_totals(&after);
	assert_int_equal(after.records, before.records);
	/*
	 * one empty sampled slab a node is kept for the next sample; the
	 * decay gives them back once the cache is idle (a deadline, not a
	 * timing)
	 */
	for (int i = 0; i < sp_space.nr_regions; i++)
		assert_true(sampled_slabs_on(c, i) <= 1);
	assert_int_equal(segpool_cache_validate(c), 0);
	decay = segpool_get_decay_ms();
	assert_int_equal(segpool_set_decay_ms(20), 0);
	for (int i = 0; i < 3000 && sampled_slabs(c); i++)
		usleep(10000);
	assert_int_equal(sampled_slabs(c), 0);
	assert_int_equal(segpool_set_decay_ms(decay), 0);
	assert_int_equal(segpool_cache_validate(c), 0);
	assert_int_equal(segpool_cache_validate(k), 0);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/* --- in the parent -------------------------------------------------------- */

static void test_heap_profile_child(void **state)
{
	char dir[] = "/tmp/segpool-heap-child.XXXXXX", env_file[128];
	const char *env[] = {
		env_file, "SEGPOOL_HEAP_SAMPLE=" RATE, CHILD_ENV "=1", NULL,
	};

	(void)state;
	if (getenv(CHILD_ENV))
		return;		/* we are that child */
	assert_non_null(mkdtemp(dir));
	snprintf(env_file, sizeof(env_file), "SEGPOOL_HEAP_PROFILE=%s/exit.%%p",
		 dir);
	assert_int_equal(sp_test_rerun(env, NULL), 0);
	/* the profile at exit: one file, named with the child's pid */
	{
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "rm -f %s/exit.* && rmdir %s", dir,
			 dir);
		assert_int_equal(system(cmd), 0);
	}
}

/* Without sampling: the call refuses, the hit paths stay open. */
static void test_off_by_default(void **state)
{
	(void)state;
	if (getenv(CHILD_ENV) || getenv("SEGPOOL_HEAP_PROFILE"))
		return;
	assert_int_equal(segpool_heap_profile_enabled(), 0);
	/* the entry points resolved to the open build */
	assert_false(sp_entry_counted());
	assert_ptr_equal((void *)segpool_malloc, (void *)sp_malloc_open);
	assert_ptr_equal((void *)segpool_cache_free,
			 (void *)sp_cache_free_open);
	errno = 0;
	assert_int_equal(segpool_heap_profile_dump("/tmp/segpool-never"), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(access("/tmp/segpool-never", F_OK), -1);
	if (!strncmp(segpool_percpu_mode(), "rseq", 4))
		assert_true(sp_pcpu_fast.nr > 0);
}

/* A child that reports whether sampling runs (run by test_bad_settings). */
static void test_bad_child(void **state)
{
	(void)state;
	if (!getenv("SP_TEST_HEAP_BAD"))
		return;
	/*
	 * Started with SEGPOOL_HEAP_PROFILE set, so on the counted build,
	 * which must serve from its hit path even so: the thread's count is
	 * set past reach at its first slow path.
	 */
	for (int i = 0; i < 1000; i++)
		segpool_free(segpool_malloc(64));
	printf("enabled=%d nr=%u counted=%d left=%lld\n",
	       segpool_heap_profile_enabled(), (unsigned int)sp_pcpu_fast.nr,
	       sp_entry_counted(), (long long)sp_prof_left);
	fflush(stdout);
	if (segpool_heap_profile_enabled())
		exit(1);
	exit(sp_entry_counted() && sp_prof_left > INT64_MAX / 2 ? 0 : 2);
}

static void run_bad(const char *profile, const char *rate, const char *needle)
{
	static char buf[1 << 14];
	char e1[300], e2[300];
	const char *env[] = { e1, e2, "SP_TEST_HEAP_BAD=1", NULL };
	struct sp_test_exec x = {
		.arg = "test_bad_child", .drop_prefix = "SEGPOOL_HEAP_",
		.env = env, .timeout = 60, .follow_valgrind = false,
	};
	int status;

	snprintf(e1, sizeof(e1), "SEGPOOL_HEAP_PROFILE=%s", profile);
	if (rate)
		snprintf(e2, sizeof(e2), "SEGPOOL_HEAP_SAMPLE=%s", rate);
	else
		snprintf(e2, sizeof(e2), "SEGPOOL_HEAP_SAMPLE");
	assert_int_equal(sp_test_exec_self(&x, buf, sizeof(buf), &status), 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
	    !strstr(buf, needle))
		print_message("# status %d, stderr:\n%s\n", status, buf);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_non_null(strstr(buf, needle));
}

static void test_bad_settings(void **state)
{
	char dir[] = "/tmp/segpool-heap-bad.XXXXXX", ok[128], bad[160];

	(void)state;
	if (getenv(CHILD_ENV) || getenv("SP_TEST_HEAP_BAD"))
		return;
	assert_non_null(mkdtemp(dir));
	snprintf(ok, sizeof(ok), "%s/heap.%%p", dir);
	run_bad(ok, "0", "SEGPOOL_HEAP_SAMPLE");
	run_bad(ok, "lots", "SEGPOOL_HEAP_SAMPLE");
	run_bad(ok, "-5", "SEGPOOL_HEAP_SAMPLE");
	snprintf(bad, sizeof(bad), "%s/no/such/dir/heap", dir);
	run_bad(bad, NULL, "SEGPOOL_HEAP_PROFILE");
	snprintf(bad, sizeof(bad), "%s/heap.%%q", dir);
	run_bad(bad, NULL, "SEGPOOL_HEAP_PROFILE");
	/* nothing was written, not even at exit */
	assert_int_equal(rmdir(dir), 0);
}

/*
 * A child for test_pprof: site a's objects held at exit, where the profile
 * shows them; a static array keeps them reachable (memcheck counts them
 * lost otherwise, which fails the child under CI's valgrind).
 */
static void *volatile pprof_held[2000];	/* volatile: stores kept */

static void test_pprof_child(void **state)
{
	(void)state;
	if (!getenv("SP_TEST_HEAP_PPROF"))
		return;
	for (int i = 0; i < 2000; i++) {
		pprof_held[i] = site_a(4096);
		assert_non_null(pprof_held[i]);
	}
}

/* @tool --text reads @file of @exe: a total, and site a's frame. */
static void pprof_reads(const char *tool, const char *exe, const char *file)
{
	char cmd[2048], out[8192];
	size_t len;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s --text '%s' '%s' 2>&1", tool, exe,
		 file);
	p = popen(cmd, "r");
	assert_non_null(p);
	len = fread(out, 1, sizeof(out) - 1, p);
	out[len] = '\0';
	assert_int_equal(pclose(p), 0);
	print_message("# %s\n", cmd);
	if (!strstr(out, "site_a") || !strstr(out, "Total:"))
		print_message("%s\n", out);
	assert_non_null(strstr(out, "Total:"));
	assert_non_null(strstr(out, "site_a"));
}

/*
 * The profile is read by gperftools' google-pprof and by jemalloc's fork
 * of it, jeprof: each that is installed reads it (Debian:
 * google-perftools, libjemalloc-dev); with neither the test skips.
 */
static void test_pprof(void **state)
{
	static const struct {
		const char *tool, *pkg;		/* the reader, its package */
	} readers[] = {
		{ "google-pprof", "google-perftools" },
		{ "jeprof", "libjemalloc-dev" },
	};
	char dir[] = "/tmp/segpool-heap-pprof.XXXXXX", env_file[128], exe[512];
	char file[256], cmd[128];
	const char *env[] = {
		env_file,
		"SEGPOOL_HEAP_SAMPLE=65536",
		"SP_TEST_HEAP_PPROF=1",
		NULL,
	};
	bool have[SP_ARRAY_SIZE(readers)], any = false;
	ssize_t n;

	(void)state;
	if (getenv(CHILD_ENV) || getenv("SP_TEST_HEAP_PPROF") ||
	    getenv("SP_TEST_HEAP_BAD"))
		return;
	for (size_t i = 0; i < SP_ARRAY_SIZE(readers); i++) {
		snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1",
			 readers[i].tool);
		have[i] = system(cmd) == 0;
		any |= have[i];
		if (!have[i])
			print_message("# %s not installed (Debian: %s): not "
				      "read by it\n", readers[i].tool,
				      readers[i].pkg);
	}
	if (!any) {
		print_message("# skip: neither reader installed\n");
		skip();
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	assert_non_null(mkdtemp(dir));
	snprintf(env_file, sizeof(env_file), "SEGPOOL_HEAP_PROFILE=%s/heap",
		 dir);
	assert_int_equal(sp_test_rerun(env, "test_pprof_child"), 0);
	snprintf(file, sizeof(file), "%s/heap", dir);
	for (size_t i = 0; i < SP_ARRAY_SIZE(readers); i++)
		if (have[i])
			pprof_reads(readers[i].tool, exe, file);
	unlink(file);
	assert_int_equal(rmdir(dir), 0);
}

/* --- the sampled stack (prof/unwind.c), in the parent ------------------- */

#define UW_MAX	64

struct uw_ref {
	void **pcs;
	int max, n;
	bool skip;
};

static _Unwind_Reason_Code uw_ref_step(struct _Unwind_Context *ctx,
				       void *arg)
{
	struct uw_ref *r = arg;
	uintptr_t pc = _Unwind_GetIP(ctx);

	if (r->skip) {			/* in uw_libgcc() itself */
		r->skip = false;
		return _URC_NO_REASON;
	}
	if (!pc || r->n == r->max)
		return _URC_END_OF_STACK;
	r->pcs[r->n++] = (void *)pc;
	return _URC_NO_REASON;
}

/*
 * The reference: libgcc's walk as glibc's backtrace() runs it (which
 * AddressSanitizer replaces with a walk of its own).
 */
static __attribute__((noinline)) int uw_libgcc(void **pcs, int max)
{
	struct uw_ref r = { .pcs = pcs, .max = max, .skip = true };

	_Unwind_Backtrace(uw_ref_step, &r);
	__asm__ __volatile__("" : : : "memory");	/* no tail call */
	return r.n;
}

/* One walk or the other from one frame: entries 2 on are the callers'. */
static __attribute__((noinline)) int uw_walk(void **pcs, int max, bool bt)
{
	int n = bt ? uw_libgcc(pcs, max) : sp_prof_unwind(pcs, max);

	__asm__ __volatile__("" : : : "memory");	/* no tail call */
	return n;
}

struct uw_pair {
	void *a[UW_MAX], *b[UW_MAX];
	int na, nb, max;
};

/* Both walks, @depth frames of recursion down. */
static __attribute__((noinline)) void uw_nest(int depth, struct uw_pair *p)
{
	if (depth > 0) {
		uw_nest(depth - 1, p);
		__asm__ __volatile__("" : : : "memory");
		return;
	}
	p->na = uw_walk(p->a, p->max, false);
	p->nb = uw_walk(p->b, p->max, true);
}

/* The table's walk gave libgcc's frames (above the two call sites). */
static bool uw_same(const struct uw_pair *p)
{
	return p->na == p->nb && p->na > 2 &&
	       !memcmp(p->a + 2, p->b + 2,
		       (size_t)(p->na - 2) * sizeof(void *));
}

/* A frame whose size changes from call to call. */
static __attribute__((noinline)) void uw_alloca(size_t len,
						struct uw_pair *p)
{
	volatile char *buf = alloca(len);

	buf[0] = 1;
	buf[len - 1] = 1;
	uw_nest(2, p);
	__asm__ __volatile__("" : : "r"(buf) : "memory");
}

/*
 * Walks from every depth to past the frame limit, many times each (the
 * first learns, the rest read the table, some learn again as checks):
 * always libgcc's frames.
 */
static void test_unwind_matches(void **state)
{
	static struct uw_pair p;

	(void)state;
	sp_prof_unwind_init();
	for (int depth = 0; depth < 80; depth += 3)
		for (int rep = 0; rep < 40; rep++) {
			p.max = rep % 4 ? UW_MAX : 8;
			uw_nest(depth, &p);
			assert_true(uw_same(&p));
		}
}

/*
 * A frame sized by alloca(): once its size changed, the walk that meets
 * the difference (a lookup that fails, or the periodic learning walk)
 * marks its return address unstable, and libgcc walks past it from then
 * on.  Before that a walk may be wrong; never after, and nothing faults.
 */
static void test_unwind_alloca(void **state)
{
	static struct uw_pair p;
	unsigned int seed = (unsigned int)sp_test_seed();
	int wrong = 0;

	(void)state;
	sp_prof_unwind_init();
	p.max = UW_MAX;
	for (int rep = 0; rep < 400; rep++) {
		uw_alloca(16 + rand_r(&seed) % 4096, &p);
		if (rep >= 2 * 16)
			assert_true(uw_same(&p));
		else
			wrong += !uw_same(&p);
	}
	print_message("# %d of the first 32 walks past alloca() were wrong\n",
		      wrong);
}

static struct uw_pair uw_sig;
static volatile sig_atomic_t uw_sig_done;

static void uw_handler(int sig)
{
	(void)sig;
	uw_nest(1, &uw_sig);
	uw_sig_done = 1;
}

/* From a signal handler: past the kernel's trampoline as libgcc walks. */
/* Both walks from uw_handler() 40 times, the handler installed @flags. */
static void uw_signal_walks(int flags)
{
	struct sigaction sa = { .sa_handler = uw_handler, .sa_flags = flags };
	struct sigaction old;

	sp_prof_unwind_init();
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	uw_sig.max = UW_MAX;
	for (int rep = 0; rep < 40; rep++) {
		uw_sig_done = 0;
		raise(SIGUSR1);
		assert_true(uw_sig_done);
		assert_true(uw_same(&uw_sig));
	}
	assert_int_equal(sigaction(SIGUSR1, &old, NULL), 0);
}

static void test_unwind_signal(void **state)
{
	(void)state;
	uw_signal_walks(0);
}

/*
 * The same from a handler on an alternate signal stack (sigaltstack()):
 * the walk starts on other memory than the thread's stack and crosses to
 * it at the trampoline.
 */
static void test_unwind_altstack(void **state)
{
	stack_t ss = { .ss_size = 1 << 16 };

	(void)state;
	ss.ss_sp = malloc(ss.ss_size);
	assert_non_null(ss.ss_sp);
	assert_int_equal(sigaltstack(&ss, NULL), 0);
	uw_signal_walks(SA_ONSTACK);
	ss.ss_flags = SS_DISABLE;
	assert_int_equal(sigaltstack(&ss, NULL), 0);
	free(ss.ss_sp);
}

static void *uw_thread(void *arg)
{
	struct uw_pair *p = arg;
	long bad = 0;

	for (int rep = 0; rep < 2000; rep++) {
		p->max = UW_MAX;
		uw_nest(rep % 23, p);
		bad += !uw_same(p);
	}
	return (void *)bad;
}

/* Threads learning and reading the one table at once. */
static void test_unwind_threads(void **state)
{
	static struct uw_pair p[4];
	pthread_t t[4];

	(void)state;
	sp_prof_unwind_init();
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, uw_thread, &p[i]),
				 0);
	for (int i = 0; i < 4; i++) {
		void *bad;

		assert_int_equal(pthread_join(t[i], &bad), 0);
		assert_ptr_equal(bad, NULL);
	}
}

/*
 * Two frames the table has not met before their first call; unlike each
 * other, so that no pass of the compiler folds them into one.
 */
static __attribute__((noinline)) void uw_fresh_a(struct uw_pair *p)
{
	uw_nest(0, p);
	__asm__ __volatile__("" : : : "memory");	/* no tail call */
}

static __attribute__((noinline)) void uw_fresh_b(struct uw_pair *p)
{
	uw_nest(1, p);
	__asm__ __volatile__("" : : : "memory");
}

/* What uw_backoff_thread() saw: cmocka's asserts are the main thread's. */
struct uw_backoff {
	struct uw_pair p;
	int wrong;			/* walks unlike libgcc's */
	unsigned long first;		/* libgcc walks in the first 4096 */
	unsigned long after15, after16;	/* past a walk that learned */
};

/* @n walks from one call site: the same return addresses each time. */
static __attribute__((noinline)) void uw_walks(struct uw_backoff *b, int n)
{
	for (int rep = 0; rep < n; rep++) {
		uw_nest(3, &b->p);
		b->wrong += !uw_same(&b->p);
	}
}

/*
 * 4096 walks (256 checks at one in 16); one walk through @fresh, a frame
 * new to the table (it learns); then 15 walks and one more.  Into @b when
 * @keep (the libgcc walks before each phase's end).
 */
static __attribute__((noinline)) void
uw_pass(struct uw_backoff *b, void (*fresh)(struct uw_pair *), bool keep)
{
	static const int phase[] = { 4096, -1, 15, 1 };
	unsigned long slow[SP_ARRAY_SIZE(phase)];

	for (size_t i = 0; i < SP_ARRAY_SIZE(phase); i++) {
		if (phase[i] < 0) {
			fresh(&b->p);
			b->wrong += !uw_same(&b->p);
		} else {
			uw_walks(b, phase[i]);
		}
		slow[i] = sp_prof_unwind_slow_walks();
	}
	if (keep) {
		b->first = slow[0];
		b->after15 = slow[2] - slow[1];
		b->after16 = slow[3] - slow[1];
	}
}

/*
 * Two passes: the first teaches the table every call site the compiler
 * made of the loops (an unrolled or peeled copy calls from another
 * address), the second is counted, its fresh frame another.
 */
static void *uw_backoff_thread(void *arg)
{
	struct uw_backoff *b = arg;
	unsigned long before;

	b->p.max = UW_MAX;
	uw_pass(b, uw_fresh_a, false);
	before = sp_prof_unwind_slow_walks();
	uw_pass(b, uw_fresh_b, true);
	b->first -= before;
	return NULL;
}

/*
 * The checks by libgcc grow rarer while they find the table right, and
 * come at one in SP_UNWIND_CHECK again after a walk that learned (in a
 * thread of its own: the schedule is the thread's).
 */
static void test_unwind_backoff(void **state)
{
	static struct uw_backoff b;
	pthread_t t;

	(void)state;
#ifndef __x86_64__
	print_message("# skipped: the learned walk is x86-64's\n");
	skip();
#endif
	sp_prof_unwind_init();
	assert_int_equal(pthread_create(&t, NULL, uw_backoff_thread, &b), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	print_message("# %lu of 4096 walks by libgcc; after one that learned, "
		      "%lu in 15, %lu in 16\n", b.first, b.after15, b.after16);
	assert_int_equal(b.wrong, 0);
	/* the first (learns the thread's stack), then 16, 32, ... 1024 on */
	assert_in_range(b.first, 5, 16);
	assert_int_equal(b.after15, 0);
	assert_int_equal(b.after16, 1);
}

struct uw_at {
	void *at[UW_MAX], *ref[UW_MAX];
	void *ra;
	int nat, nref, depth;
};

/* From the site's callees: the walk from the site, then libgcc's whole. */
static __attribute__((noinline)) void uw_at_walk(void *site, struct uw_at *w)
{
	w->ra = sp_prof_site_ra(site);
	w->nat = sp_prof_unwind_at(w->at, UW_MAX, (uintptr_t)w->ra,
				   sp_prof_site_sp(site));
	/* declined: the whole walk, as a sample makes it (and learns) */
	if (w->nat < 0)
		sp_prof_unwind(w->at, UW_MAX);
	w->nref = uw_libgcc(w->ref, UW_MAX);
	__asm__ __volatile__("" : : : "memory");	/* no tail call */
}

/* @depth frames between the site and the walk, as the library's are. */
static __attribute__((noinline)) void uw_at_down(int depth, void *site,
						 struct uw_at *w)
{
	if (depth > 0)
		uw_at_down(depth - 1, site, w);
	else
		uw_at_walk(site, w);
	__asm__ __volatile__("" : : : "memory");
}

/* The entry point's part: the site is this frame's. */
static __attribute__((noinline)) void uw_at_entry(struct uw_at *w)
{
	uw_at_down(w->depth, sp_prof_site(), w);
	__asm__ __volatile__("" : : : "memory");
}

/* The entry point called from @depth frames of recursion down. */
static __attribute__((noinline)) void uw_at_nest(int depth, struct uw_at *w)
{
	if (depth > 0)
		uw_at_nest(depth - 1, w);
	else
		uw_at_entry(w);
	__asm__ __volatile__("" : : : "memory");
}

/*
 * The walk from a site (sp_prof_site(): the entry's return address slot)
 * gives libgcc's frames from the site's return address on, whatever lies
 * between the site and the walk; until the table knows the frames, or
 * when a check is due, it declines (-1) and the whole walk is made.
 */
static void test_unwind_at(void **state)
{
	static struct uw_at w;
	int walked = 0, declined = 0;

	(void)state;
#ifndef __x86_64__
	print_message("# skipped: the walk from a site is x86-64's\n");
	skip();
#endif
	sp_prof_unwind_init();
	for (int rep = 0; rep < 400; rep++) {
		int from = -1;

		w.depth = rep % 7;
		uw_at_nest(rep % 20, &w);
		for (int i = 0; i < w.nref; i++)
			if (w.ref[i] == w.ra) {
				from = i;
				break;
			}
		assert_true(from > 0);
		if (w.nat < 0) {
			declined++;
			continue;
		}
		walked++;
		assert_int_equal(w.nat, w.nref - from);
		assert_memory_equal(w.at, w.ref + from,
				    (size_t)w.nat * sizeof(void *));
	}
	print_message("# %d walks from a site matched libgcc's, %d declined\n",
		      walked, declined);
	assert_true(walked > 100);
	assert_true(declined > 0);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_shares),
	cmocka_unit_test(test_free_removes),
	cmocka_unit_test(test_dump_on_demand),
	cmocka_unit_test(test_threads_balance),
	cmocka_unit_test(test_sampled_slabs),
	cmocka_unit_test(test_counted_hits),
	cmocka_unit_test(test_heap_profile_child),
	cmocka_unit_test(test_off_by_default),
	cmocka_unit_test(test_bad_child),
	cmocka_unit_test(test_bad_settings),
	cmocka_unit_test(test_pprof_child),
	cmocka_unit_test(test_pprof),
	cmocka_unit_test(test_unwind_matches),
	cmocka_unit_test(test_unwind_alloca),
	cmocka_unit_test(test_unwind_signal),
	cmocka_unit_test(test_unwind_altstack),
	cmocka_unit_test(test_unwind_threads),
	cmocka_unit_test(test_unwind_backoff),
	cmocka_unit_test(test_unwind_at),
};

SP_TEST_MAIN(tests)
