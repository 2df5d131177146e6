// SPDX-License-Identifier: MIT
/*
 * selftests/api/test_export.c - the live statistics export and segpool-top.
 *
 * The export side is read here as any viewer reads it: through the layout
 * of include/segpool/export.h, with a small seqlock reader of this file's
 * own (segpool-top has its own, in tools/).  The tests check the header,
 * that the figures are what segpool_cache_get_info() says once the
 * publisher has run after the last change, that no snapshot is torn while
 * four threads allocate, that the segment grows, that stop, exit and fork
 * leave no segment behind and take none of the parent's, and that
 * SEGPOOL_EXPORT=1 exports from start-up.
 *
 * Then segpool-top itself (tools/segpool-top/Makefile.inc passes its path
 * as SEGPOOL_TOP_PATH) against a child that exports (this program again,
 * run with --serve): its one-shot slabinfo dump must
 * match the child's own segpool_stats_dump() row for row, its JSON must
 * hold the cache; a pid that does not exist, one that does not export, a
 * segment of another layout version and a process that is gone give their
 * message and exit status 1; and its full-screen mode runs in a
 * pseudo-terminal: frames with the header and the cache, the keys of every
 * view, q (exit 0) and SIGTERM (death by SIGTERM), each time with the
 * terminal's modes and the main screen restored.
 *
 * Waits (for a snapshot, a frame, an exit) are bounded by generous
 * timeouts that only turn a hang into a failure; nothing here measures
 * time.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <pty.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <utmp.h>

#include <segpool/segpool.h>
#include <segpool/export.h>
#include "segpool_config.h"
#include "selftests/lib/harness.h"

/* tools/segpool-top/Makefile.inc passes the viewer's path */
#ifdef SEGPOOL_TOP_PATH
#define TOP_PATH	SEGPOOL_TOP_PATH
#else
#define TOP_PATH	""
#endif

#define GUARD_S		30.0	/* failure guard for every wait, seconds */
#define NTHREADS	4
#define PAGE		4096UL

#define ALT_ENTER	"\033[?1049h"
#define ALT_LEAVE	"\033[?1049l"

static double guard(void)
{
	return sp_test_under_valgrind() ? GUARD_S * 4 : GUARD_S;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void shm_name_of(pid_t pid, char *buf, size_t len)
{
	snprintf(buf, len, "%s%d", SEGPOOL_EXPORT_SHM_PREFIX, (int)pid);
}

static bool shm_exists(pid_t pid)
{
	char name[64];
	int fd;

	shm_name_of(pid, name, sizeof(name));
	fd = shm_open(name, O_RDONLY, 0);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* --- a seqlock reader of the segment -------------------------------------- */

struct reader {
	int fd;
	void *map;
	size_t map_size;
	char *copy;		/* the last consistent copy */
	size_t copy_size;
	unsigned long retries;	/* copies thrown away: a write overlapped */
};

static void reader_map(struct reader *r)
{
	struct stat st;

	assert_int_equal(fstat(r->fd, &st), 0);
	if (r->map)
		munmap(r->map, r->map_size);
	r->map_size = (size_t)st.st_size;
	r->map = mmap(NULL, r->map_size, PROT_READ, MAP_SHARED, r->fd, 0);
	assert_true(r->map != MAP_FAILED);
}

static void reader_open(struct reader *r, pid_t pid)
{
	char name[64];

	memset(r, 0, sizeof(*r));
	shm_name_of(pid, name, sizeof(name));
	r->fd = shm_open(name, O_RDONLY, 0);
	if (r->fd < 0)
		fail_msg("shm_open(%s): %s", name, strerror(errno));
	reader_map(r);
	assert_true(r->map_size >= sizeof(struct segpool_export_header));
}

static void reader_close(struct reader *r)
{
	if (r->map)
		munmap(r->map, r->map_size);
	close(r->fd);
	free(r->copy);
	memset(r, 0, sizeof(*r));
}

static const struct segpool_export_header *map_hdr(const struct reader *r)
{
	return r->map;
}

/* One consistent copy of the whole segment into r->copy. */
static void reader_read(struct reader *r)
{
	const double end = now_s() + guard();

	while (now_s() < end) {
		const struct segpool_export_header *h = r->map;
		uint64_t s1, s2, size;
		const uint64_t *src;
		uint64_t *dst;

		s1 = __atomic_load_n(&h->seq, __ATOMIC_ACQUIRE);
		if (s1 & 1) {
			r->retries++;
			sched_yield();	/* let the writer finish (valgrind) */
			continue;
		}
		size = __atomic_load_n(&h->segment_size, __ATOMIC_RELAXED);
		if (size > r->map_size) {
			reader_map(r);	/* it grew */
			continue;
		}
		if (size < sizeof(*h) || size % 8) {
			r->retries++;
			continue;
		}
		if (size > r->copy_size) {
			free(r->copy);
			r->copy = malloc(size);
			assert_non_null(r->copy);
			r->copy_size = size;
		}
		src = r->map;
		dst = (uint64_t *)(void *)r->copy;
		/* acquire: the second load of seq stays after the copy */
		for (size_t i = 0; i < size / 8; i++)
			dst[i] = __atomic_load_n(&src[i], __ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&h->seq, __ATOMIC_RELAXED);
		if (s1 == s2)
			return;
		r->retries++;
		sched_yield();
	}
	fail_msg("no consistent snapshot within %.0f s", guard());
}

static const struct segpool_export_header *hdr(const struct reader *r)
{
	return (const struct segpool_export_header *)(const void *)r->copy;
}

static const struct segpool_export_cache *rec(const struct reader *r, size_t i)
{
	const struct segpool_export_header *h = hdr(r);

	return (const struct segpool_export_cache *)(const void *)
		(r->copy + h->caches_offset + i * h->cache_size);
}

static const struct segpool_export_cache_node *
rec_node(const struct reader *r, size_t i, size_t n)
{
	const struct segpool_export_header *h = hdr(r);

	return (const struct segpool_export_cache_node *)(const void *)
		(r->copy + h->cache_nodes_offset +
		 (i * h->nr_nodes + n) * h->cache_node_size);
}

static const struct segpool_export_node *node(const struct reader *r, size_t n)
{
	const struct segpool_export_header *h = hdr(r);

	return (const struct segpool_export_node *)(const void *)
		(r->copy + h->nodes_offset + n * h->node_size);
}

static long rec_find(const struct reader *r, const char *name)
{
	for (size_t i = 0; i < hdr(r)->nr_caches; i++)
		if (!strcmp(rec(r, i)->name, name))
			return (long)i;
	return -1;
}

/* Read until a snapshot numbered @min or later arrives. */
static void reader_wait_update(struct reader *r, uint64_t min)
{
	const double end = now_s() + guard();

	for (;;) {
		reader_read(r);
		if (hdr(r)->updates >= min)
			return;
		if (now_s() > end)
			fail_msg(
				"snapshot %llu did not come within %.0f s (at "
				"%llu)",
				(unsigned long long)min, guard(),
				(unsigned long long)hdr(r)->updates);
		nap_ms(5);
	}
}

/*
 * A snapshot that began after everything the caller did: the one being
 * written now (if any) may have started before, the one after it did not.
 */
static void reader_wait_fresh(struct reader *r)
{
	reader_read(r);
	reader_wait_update(r, hdr(r)->updates + 2);
}

/* Checks every consistent copy must pass. */
static void check_snapshot(const struct reader *r)
{
	const struct segpool_export_header *h = hdr(r);

	assert_true(h->nr_caches <= h->capacity);
	assert_true(h->caches_offset + (uint64_t)h->capacity * h->cache_size <=
		    h->segment_size);
	for (size_t i = 0; i < h->nr_caches; i++) {
		const struct segpool_export_cache *c = rec(r, i);

		assert_int_equal(c->update, h->updates);
		assert_true(memchr(c->name, '\0', sizeof(c->name)) != NULL);
		assert_true(c->name[0] != '\0');
		assert_int_equal(c->total_objs,
				 c->total_slabs * c->objs_per_slab);
		assert_int_equal(c->slab_bytes, c->total_slabs *
				 c->pages_per_slab * h->page_size);
		assert_true(c->active_slabs <= c->total_slabs);
	}
}

/* --- the export in this process ------------------------------------------- */

static void test_export_header(void **state)
{
	struct reader r;
	const struct segpool_export_header *h;

	(void)state;
	assert_int_equal(sp_test_make_size_classes(), 53);
	assert_int_equal(segpool_export_start(50), 0);
	assert_true(shm_exists(getpid()));
	reader_open(&r, getpid());
	/* the first snapshot is there when start returns */
	assert_int_equal(__atomic_load_n(&map_hdr(&r)->magic, __ATOMIC_ACQUIRE),
			 SEGPOOL_EXPORT_MAGIC);
	reader_read(&r);
	h = hdr(&r);
	assert_true(h->updates >= 1);
	assert_int_equal(h->layout_version, SEGPOOL_EXPORT_LAYOUT_VERSION);
	assert_int_equal(h->header_size, sizeof(struct segpool_export_header));
	assert_int_equal(h->cache_size, sizeof(struct segpool_export_cache));
	assert_int_equal(h->cache_node_size,
			 sizeof(struct segpool_export_cache_node));
	assert_int_equal(h->node_size, sizeof(struct segpool_export_node));
	assert_int_equal(h->pid, getpid());
	assert_int_equal(h->page_size, PAGE);
	assert_int_equal(h->interval_ms, 50);
	assert_int_equal(h->nr_nodes, segpool_numa_node_count());
	assert_true(h->nr_cpus >= 1);
	assert_string_equal(h->version, segpool_version());
	assert_string_equal(h->percpu_mode, segpool_percpu_mode());
	assert_int_equal(h->flags & SEGPOOL_EXPORT_F_TRUNCATED, 0);
	assert_true(h->monotonic_ns > 0 && h->realtime_ns > 0);
	assert_true(h->segment_size <= r.map_size);
	assert_true(h->nr_caches > 0);
	for (uint32_t n = 0; n < h->nr_nodes; n++) {
		assert_int_equal(node(&r, n)->node_id,
				 segpool_numa_node_id((int)n));
		assert_true(node(&r, n)->pages_used <=
			    node(&r, n)->pages_committed);
	}
	/* the size classes are there, flagged as such */
	assert_true(rec_find(&r, "kmalloc-64") >= 0);
	assert_true(rec(&r, (size_t)rec_find(&r, "kmalloc-64"))->flags &
		    SEGPOOL_EXPORT_CACHE_KMALLOC);
	check_snapshot(&r);
	/* snapshots keep coming */
	reader_wait_update(&r, h->updates + 2);

	assert_int_equal(segpool_export_stop(), 0);
	assert_false(shm_exists(getpid()));
	/* a viewer's mapping stays valid, with the last snapshot */
	assert_int_equal(__atomic_load_n(&map_hdr(&r)->magic, __ATOMIC_RELAXED),
			 SEGPOOL_EXPORT_MAGIC);
	reader_close(&r);
}

static void test_export_errors(void **state)
{
	(void)state;
	errno = 0;
	assert_int_equal(segpool_export_stop(), -ENOENT);
	assert_int_equal(errno, ENOENT);
	errno = 0;
	assert_int_equal(segpool_export_start(SEGPOOL_EXPORT_INTERVAL_MIN - 1),
			 -EINVAL);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(segpool_export_start(SEGPOOL_EXPORT_INTERVAL_MAX + 1),
			 -EINVAL);
	assert_false(shm_exists(getpid()));
	/* 0 is the default interval; a second start only changes it */
	assert_int_equal(segpool_export_start(0), 0);
	{
		struct reader r;

		reader_open(&r, getpid());
		reader_read(&r);
		assert_int_equal(hdr(&r)->interval_ms,
				 SEGPOOL_EXPORT_INTERVAL_DEFAULT);
		assert_int_equal(segpool_export_start(20), 0);
		reader_wait_update(&r, hdr(&r)->updates + 1);
		assert_int_equal(hdr(&r)->interval_ms, 20);
		reader_close(&r);
	}
	assert_int_equal(segpool_export_stop(), 0);
	assert_int_equal(segpool_export_stop(), -ENOENT);
	assert_false(shm_exists(getpid()));
}

/*
 * A file planted at the segment's name by another user (issue 23): the
 * start fails with EEXIST and says whose file is in the way.  The child
 * plants it as root, then becomes uid 65534, which cannot remove a
 * root-owned file from the sticky /dev/shm.
 */
static void plant_then_export(void *arg)
{
	char path[64];
	int fd, err;

	*(volatile pid_t *)arg = getpid();	/* for the parent's clean-up */
	snprintf(path, sizeof(path), "/dev/shm%s%d", SEGPOOL_EXPORT_SHM_PREFIX,
		 (int)getpid());
	fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
	if (fd < 0 || fchmod(fd, 0644) || write(fd, "forged", 6) != 6)
		_exit(2);
	close(fd);
	if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
		_exit(3);
	err = segpool_export_start(0);
	_exit(err == -EEXIST && errno == EEXIST ? 0 : 4);
}

static void test_export_planted(void **state)
{
	char buf[4096], path[64];
	pid_t *child;
	int status;
	mode_t old;
	struct stat st;

	(void)state;
	/* our own umask takes nothing from the segment's 0600 */
	old = umask(0277);
	assert_int_equal(segpool_export_start(0), 0);
	umask(old);
	snprintf(path, sizeof(path), "/dev/shm%s%d", SEGPOOL_EXPORT_SHM_PREFIX,
		 (int)getpid());
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(segpool_export_stop(), 0);

	if (geteuid() != 0)
		skip();		/* another user's file needs root to plant */
	child = mmap(NULL, sizeof(*child), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(child != MAP_FAILED);
	*child = 0;
	assert_int_equal(sp_test_run_child(plant_then_export, child, buf,
					   sizeof(buf), &status), 0);
	if (*child > 0) {
		snprintf(path, sizeof(path), "/dev/shm%s%d",
			 SEGPOOL_EXPORT_SHM_PREFIX, (int)*child);
		unlink(path);
	}
	munmap(child, sizeof(*child));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("child status %#x: %s", status, buf);
	if (!strstr(buf, " is in the way: a file of uid 0, mode 0644, that "
		    "this process (uid 65534) cannot remove"))
		fail_msg("the export does not say whose file is in the way: %s",
			 buf);
}

#define SAME(field)	assert_int_equal(c->field, info.field)

static void test_export_matches_info(void **state)
{
	struct segpool_cache_info info = { .size = sizeof(info) };
	struct segpool_cache *cache;
	const struct segpool_export_cache *c;
	uint64_t slabs = 0, objs = 0;
	enum { N = 1000 };
	void **o = calloc(N, sizeof(*o));
	struct reader r;
	long i;

	(void)state;
	assert_non_null(o);
	assert_int_equal(segpool_export_start(20), 0);
	cache = segpool_cache_create("export_match", 72, 0,
				     SEGPOOL_HWCACHE_ALIGN, NULL);
	assert_non_null(cache);
	for (int k = 0; k < N; k++)
		assert_non_null(o[k] = segpool_cache_alloc(cache, 0));
	for (int k = 0; k < N; k += 3)
		segpool_cache_free(cache, o[k]);
	{
		/* two allocations failed on purpose: alloc_failslab is 2 */
		struct segpool_failslab fs = {
			.probability = 100, .interval = 1, .times = 2,
			.cache = "export_match",
		};

		assert_int_equal(segpool_failslab_set(&fs), 0);
		for (int k = 0; k < 2; k++)
			assert_null(segpool_cache_alloc(cache, 0));
		segpool_failslab_disable();
	}

	reader_open(&r, getpid());
	reader_wait_fresh(&r);
	assert_int_equal(segpool_cache_get_info(cache, &info), 0);
	check_snapshot(&r);
	i = rec_find(&r, "export_match");
	assert_true(i >= 0);
	c = rec(&r, (size_t)i);
	SAME(object_size);
	SAME(stride);
	SAME(align);
	SAME(objs_per_slab);
	SAME(pages_per_slab);
	SAME(active_objs);
	SAME(total_objs);
	SAME(active_slabs);
	SAME(total_slabs);
	SAME(slab_bytes);
	SAME(allocs);
	SAME(frees);
	SAME(slabs_created);
	SAME(slabs_released);
	SAME(alloc_failures);
	SAME(alloc_failslab);
	assert_int_equal(c->alloc_failslab, 2);
	SAME(alloc_fastpath);
	SAME(free_fastpath);
	SAME(alloc_slowpath);
	SAME(free_slowpath);
	SAME(cpu_objs);
	SAME(depot_objs);
	SAME(mag_size);
	SAME(depot_max);
	assert_int_equal(c->active_objs, N - (N + 2) / 3);
	assert_true(c->flags & SEGPOOL_EXPORT_CACHE_HWCACHE_ALIGN);
	assert_false(c->flags & (SEGPOOL_EXPORT_CACHE_KMALLOC |
				 SEGPOOL_EXPORT_CACHE_INTERNAL |
				 SEGPOOL_EXPORT_CACHE_CTOR));
	/* the nodes add up to the sums */
	for (uint32_t n = 0; n < hdr(&r)->nr_nodes; n++) {
		const struct segpool_export_cache_node *x =
			rec_node(&r, (size_t)i, n);

		assert_int_equal(x->node_id, segpool_numa_node_id((int)n));
		slabs += x->partial_slabs + x->full_slabs + x->empty_slabs;
		objs += x->objects;
	}
	assert_int_equal(slabs, info.total_slabs);
	assert_int_equal(objs,
			 info.active_objs + info.cpu_objs + info.depot_objs);

	for (int k = 0; k < N; k++)
		if (k % 3)
			segpool_cache_free(cache, o[k]);
	assert_int_equal(segpool_export_stop(), 0);
	assert_int_equal(segpool_cache_destroy(cache), 0);
	reader_close(&r);
	free(o);
}

/* --- no torn snapshot under load ------------------------------------------ */

struct load {
	struct segpool_cache *cache;
	atomic_bool stop;
	uint64_t seed;
	unsigned long failed;	/* allocations that failed: asserted by the
				 * test thread, cmocka's only thread */
};

static void *load_thread(void *arg)
{
	struct load *l = arg;
	uint64_t rnd = l->seed;
	enum { HELD = 512 };
	void *held[HELD] = { 0 };

	while (!atomic_load_explicit(&l->stop, memory_order_relaxed)) {
		size_t k = sp_test_rand(&rnd) % HELD;

		if (held[k]) {
			segpool_cache_free(l->cache, held[k]);
			held[k] = NULL;
		} else {
			held[k] = segpool_cache_alloc(l->cache, 0);
			if (!held[k])
				l->failed++;
		}
		if (!(rnd & 0xff)) {
			void *p = segpool_malloc(rnd % 2000);

			segpool_free(p);
		}
	}
	for (size_t k = 0; k < HELD; k++)
		segpool_cache_free(l->cache, held[k]);
	return NULL;
}

/*
 * The load threads, static so that a failed assertion in the test (cmocka
 * leaves the test function by longjmp) does not leave them running on a dead
 * stack: load_teardown() stops and joins whatever is still running.
 */
static struct load load_state[NTHREADS];
static pthread_t load_tid[NTHREADS];
static int load_running;

static void load_stop(void)
{
	for (int k = 0; k < load_running; k++)
		atomic_store(&load_state[k].stop, true);
	for (int k = 0; k < load_running; k++)
		pthread_join(load_tid[k], NULL);
	load_running = 0;
}

static int load_teardown(void **state)
{
	(void)state;
	load_stop();
	return 0;
}

static void test_export_seqlock_under_load(void **state)
{
	struct segpool_cache *cache;
	struct reader r;
	uint64_t last = 0;
	unsigned int seen = 0;

	(void)state;
	/*
	 * memcheck runs one thread at a time: the race this test provokes
	 * (a reader copying while the writer publishes under load) hardly
	 * happens there, and starved of time slices the test ran past the
	 * runner's limit.  The race runs natively and under ThreadSanitizer.
	 */
	if (sp_test_under_valgrind()) {
		print_message("# skip: under valgrind threads do not race\n");
		skip();
	}
	cache = segpool_cache_create("export_load", 48, 0, 0, NULL);
	assert_non_null(cache);
	assert_int_equal(segpool_export_start(SEGPOOL_EXPORT_INTERVAL_MIN), 0);
	reader_open(&r, getpid());
	for (int k = 0; k < NTHREADS; k++) {
		struct load *l = &load_state[k];

		l->cache = cache;
		atomic_init(&l->stop, false);
		l->failed = 0;
		l->seed = sp_test_seed() + (uint64_t)k * 0x9e3779b97f4a7c15ULL;
		assert_int_equal(
			pthread_create(&load_tid[k], NULL, load_thread, l), 0);
		load_running = k + 1;
	}
	/* every copy the seqlock lets through is whole */
	while (seen < 40) {
		reader_read(&r);
		check_snapshot(&r);
		assert_true(rec_find(&r, "export_load") >= 0);
		if (hdr(&r)->updates != last) {
			assert_true(hdr(&r)->updates > last);
			last = hdr(&r)->updates;
			seen++;
		}
	}
	load_stop();
	for (int k = 0; k < NTHREADS; k++)
		assert_int_equal(load_state[k].failed, 0);
	print_message("# %u snapshots read whole; %lu copies retried\n", seen,
		      r.retries);
	assert_int_equal(segpool_export_stop(), 0);
	reader_close(&r);
	assert_int_equal(segpool_cache_destroy(cache), 0);
}

/* More caches than the segment has records: it grows, readers remap. */
static void test_export_grows(void **state)
{
	enum { NEW = 300 };
	struct segpool_cache **c = calloc(NEW, sizeof(*c));
	uint64_t size0;
	struct reader r;
	char name[32];

	(void)state;
	assert_non_null(c);
	assert_int_equal(segpool_export_start(20), 0);
	reader_open(&r, getpid());
	reader_read(&r);
	size0 = hdr(&r)->segment_size;
	for (int k = 0; k < NEW; k++) {
		snprintf(name, sizeof(name), "export_grow_%d", k);
		c[k] = segpool_cache_create(name, 16 + (size_t)k, 0, 0, NULL);
		assert_non_null(c[k]);
	}
	reader_wait_fresh(&r);
	check_snapshot(&r);
	assert_true(hdr(&r)->segment_size > size0);
	assert_true(r.map_size >= hdr(&r)->segment_size);
	assert_int_equal(hdr(&r)->flags & SEGPOOL_EXPORT_F_TRUNCATED, 0);
	for (int k = 0; k < NEW; k++) {
		snprintf(name, sizeof(name), "export_grow_%d", k);
		assert_true(rec_find(&r, name) >= 0);
	}
	for (int k = 0; k < NEW; k++)
		assert_int_equal(segpool_cache_destroy(c[k]), 0);
	reader_wait_fresh(&r);
	assert_true(rec_find(&r, "export_grow_0") < 0);
	assert_int_equal(segpool_export_stop(), 0);
	reader_close(&r);
	free(c);
}

/* --- fork and exit -------------------------------------------------------- */

enum {
	FORK_OK,
	FORK_RUNNING = 10,	/* the child found the
				 * parent's export running */
	FORK_NO_PARENT_SEG,	/* ... or the parent's segment gone */
	FORK_START,		/* its own start failed */
	FORK_OWN_SEG,		/* its own segment is missing */
};

static void test_export_fork(void **state)
{
	struct reader r;
	pid_t pid;
	int status;

	(void)state;
	assert_int_equal(segpool_export_start(20), 0);
	reader_open(&r, getpid());
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int code = FORK_OK;

		if (segpool_export_stop() != -ENOENT)
			code = FORK_RUNNING;
		else if (!shm_exists(getppid()))
			code = FORK_NO_PARENT_SEG;
#ifndef CONFIG_SEGPOOL_TSAN
		/*
		 * (TSan stops a child of a threaded parent that starts threads)
		 */
		else if (segpool_export_start(20))
			code = FORK_START;
		else if (!shm_exists(getpid()))
			code = FORK_OWN_SEG;
#endif
		/* exit(), not _exit(): the exit handler removes our segment */
		exit(code);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status))
		fail_msg("child: code %d", WEXITSTATUS(status));
	assert_false(shm_exists(pid));
	assert_true(shm_exists(getpid()));
	/* our publisher went on through the fork */
	reader_wait_fresh(&r);
	assert_int_equal(hdr(&r)->pid, getpid());
	assert_int_equal(segpool_export_stop(), 0);
	reader_close(&r);
}

/* Set in the child that test_export_env runs with SEGPOOL_EXPORT=1. */
#define ENV_CHILD	"SEGPOOL_TEST_EXPORT_CHILD"

/* SEGPOOL_EXPORT=1: the program exports from start-up (run as a child). */
static void test_export_env_child(void **state)
{
	const char *iv;
	struct reader r;

	(void)state;
	if (!getenv(ENV_CHILD)) {
		print_message("# runs in the child of test_export_env\n");
		return;
	}
	assert_true(shm_exists(getpid()));
	reader_open(&r, getpid());
	reader_read(&r);
	iv = getenv("SEGPOOL_EXPORT_INTERVAL_MS");
	assert_int_equal(hdr(&r)->interval_ms,
			 iv ? strtoul(iv, NULL, 10) :
			      SEGPOOL_EXPORT_INTERVAL_DEFAULT);
	assert_int_equal(hdr(&r)->pid, getpid());
	reader_close(&r);
	assert_int_equal(segpool_export_stop(), 0);
	assert_false(shm_exists(getpid()));
}

static void test_export_env(void **state)
{
	static const char *const env[] = {
		"SEGPOOL_EXPORT=1", "SEGPOOL_EXPORT_INTERVAL_MS=20",
		ENV_CHILD "=1", NULL,
	};
	int status;

	(void)state;
	if (getenv(ENV_CHILD))
		return;		/* we are that child */
	status = sp_test_rerun(env, "test_export_env_child");
	assert_int_equal(status, 0);
}

/* --- a child process that exports, for segpool-top ------------------------ */

/*
 * The child is this program again (fork and exec), run as
 *	test_export --serve NAME SIZE N DUMP
 * with a pipe to say "ready" on descriptor SERVE_READY_FD and one to wait on
 * at SERVE_CMD_FD: a fresh process, so it inherits none of this one's
 * locks or threads.
 */
#define SERVE_READY_FD	3
#define SERVE_CMD_FD	4

struct server {
	pid_t pid;
	int cmd;		/* closing it makes the child exit */
};

static void **serve_objs;	/* reachable until exit, for leak checkers */

/*
 * For test_top_sites: the one call site of the cache's objects, kept a
 * function of its own (no inlining, no tail call: the return address the
 * profile records is in here).
 */
static __attribute__((noinline)) void *serve_site_alloc(struct segpool_cache *c)
{
	void *p = segpool_cache_alloc(c, 0);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

/*
 * The child: a cache @name of @n objects of @size bytes, the export at a
 * 50 ms interval, its own slabinfo dump in @dump ("-": none); "ready";
 * then it waits for its command pipe to close and exits (the exit handler
 * removes the segment).
 */
static __attribute__((noreturn)) void serve(const char *name, size_t size,
					    unsigned int n, const char *dump)
{
	struct segpool_cache *c = segpool_cache_create(name, size, 0, 0, NULL);
	char ch;

	serve_objs = calloc(n, sizeof(*serve_objs));
	if (!c || !serve_objs)
		_exit(20);
	for (unsigned int k = 0; k < n; k++)
		if (!(serve_objs[k] = strstr(name, "_sites") ?
		      serve_site_alloc(c) : segpool_cache_alloc(c, 0)))
			_exit(21);
	/* for test_top_control: free slabs to give back, a bug to find */
	if (strstr(name, "_freed"))
		for (unsigned int k = 0; k < n; k++)
			segpool_cache_free(c, serve_objs[k]);
	if (strstr(name, "_redzone"))
		((volatile char *)serve_objs[0])[size] = 0x42;
	/* a size class the viewer tests look for (made at first use) */
	if (!segpool_cache_find("kmalloc-64"))
		_exit(23);
	if (segpool_export_start(50))
		_exit(22);
	if (strcmp(dump, "-")) {
		FILE *f = fopen(dump, "w");

		if (!f || segpool_stats_dump(f) || fclose(f))
			_exit(23);
	}
	if (write(SERVE_READY_FD, "r", 1) != 1)
		_exit(24);
	while (read(SERVE_CMD_FD, &ch, 1) > 0)
		;
	exit(0);
}

static void server_start(struct server *s, const char *name, size_t size,
			 unsigned int n, const char *dump)
{
	char exe[4096], sz[32], cnt[32];
	int ready[2], cmd[2];
	struct pollfd p;
	ssize_t len;
	char ch;

	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(len > 0);
	exe[len] = '\0';
	snprintf(sz, sizeof(sz), "%zu", size);
	snprintf(cnt, sizeof(cnt), "%u", n);
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	assert_int_equal(pipe2(cmd, O_CLOEXEC), 0);
	fflush(stdout);
	fflush(stderr);
	s->pid = fork();
	assert_true(s->pid >= 0);
	if (s->pid == 0) {
		/* dup2() clears close-on-exec on the copies */
		if (dup2(ready[1], SERVE_READY_FD) < 0 ||
		    dup2(cmd[0], SERVE_CMD_FD) < 0)
			_exit(126);
		execl(exe, exe, "--serve", name, sz, cnt, dump ? dump : "-",
		      (char *)NULL);
		_exit(127);
	}
	close(ready[1]);
	close(cmd[0]);
	s->cmd = cmd[1];
	p.fd = ready[0];
	p.events = POLLIN;
	assert_int_equal(poll(&p, 1, (int)(guard() * 1000)), 1);
	if (read(ready[0], &ch, 1) != 1) {
		int status;

		waitpid(s->pid, &status, 0);
		fail_msg("the exporting child failed (status %#x)", status);
	}
	close(ready[0]);
}

/* Tell the child to exit; Return: its wait status. */
static int server_stop(struct server *s)
{
	int status;

	close(s->cmd);
	assert_int_equal(waitpid(s->pid, &status, 0), s->pid);
	return status;
}

/* --- running segpool-top -------------------------------------------------- */

static const char *top_path(void)
{
	if (!TOP_PATH[0])
		fail_msg(
			"SEGPOOL_TOP_PATH is not defined: "
			"the Makefile does not "
			"include tools/segpool-top/Makefile.inc");
	if (access(TOP_PATH, X_OK))
		fail_msg("%s: %s", TOP_PATH, strerror(errno));
	return TOP_PATH;
}

struct run {
	int status;
	char out[1 << 17];
	char err[4096];
};

/* Run segpool-top with @args (NULL-terminated), output in pipes. */
static void run_top(struct run *r, const char *const *args)
{
	const char *argv[16] = { "segpool-top" };
	const char *path = top_path();
	int out[2], err[2], n = 1;
	size_t olen = 0, elen = 0;
	pid_t pid;

	while (args[n - 1] && n < 15) {
		argv[n] = args[n - 1];
		n++;
	}
	argv[n] = NULL;
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	assert_int_equal(pipe2(err, O_CLOEXEC), 0);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(out[1], STDOUT_FILENO);
		dup2(err[1], STDERR_FILENO);
		close(out[0]);
		close(err[0]);
		execv(path, (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	close(out[1]);
	close(err[1]);
	while (out[0] >= 0 || err[0] >= 0) {
		/* poll() skips the negative descriptors of closed pipes */
		struct pollfd p[2] = {
			{ .fd = out[0], .events = POLLIN },
			{ .fd = err[0], .events = POLLIN },
		};
		ssize_t k;

		if (poll(p, 2, (int)(guard() * 1000)) <= 0) {
			kill(pid, SIGKILL);
			fail_msg("segpool-top hangs");
		}
		if (p[0].revents) {
			k = read(out[0], r->out + olen,
				 sizeof(r->out) - 1 - olen);
			if (k > 0) {
				olen += (size_t)k;
			} else {
				close(out[0]);
				out[0] = -1;
			}
		}
		if (p[1].revents) {
			k = read(err[0], r->err + elen,
				 sizeof(r->err) - 1 - elen);
			if (k > 0) {
				elen += (size_t)k;
			} else {
				close(err[0]);
				err[0] = -1;
			}
		}
	}
	r->out[olen] = '\0';
	r->err[elen] = '\0';
	assert_int_equal(waitpid(pid, &r->status, 0), pid);
}

static void expect_exit(const struct run *r, int code, const char *needle)
{
	if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != code)
		fail_msg(
			"segpool-top: status %#x, expected exit %d; stderr: %s",
			r->status, code, r->err);
	if (needle && !strstr(r->err, needle))
		fail_msg("segpool-top's stderr lacks \"%s\": %s", needle,
			 r->err);
}

/* The line of @text starting with "@name " (copied to @line), or false. */
static bool find_row(const char *text, const char *name, char *line, size_t len)
{
	size_t nlen = strlen(name);

	for (const char *p = text; p && *p;
	     p = strchr(p, '\n'), p = p ? p + 1 : p) {
		if (!strncmp(p, name, nlen) && p[nlen] == ' ') {
			size_t l = strcspn(p, "\n");

			snprintf(line, len, "%.*s", (int)l, p);
			return true;
		}
	}
	return false;
}

/* The line of @text that ends with @tail (its newline included). */
static bool find_line(const char *text, const char *tail, char *line,
		      size_t len)
{
	const char *e = strstr(text, tail), *b;

	if (!e)
		return false;
	for (b = e; b > text && b[-1] != '\n'; b--)
		;
	snprintf(line, len, "%.*s", (int)(e - b + strlen(tail) - 1), b);
	return true;
}

static void read_text_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* A segment as a process that is gone left it, last written @age_s ago. */
static void fake_leftover(pid_t pid, uint64_t age_s)
{
	struct segpool_export_header *h;
	struct timespec ts;
	char name[64];
	int fd;

	shm_name_of(pid, name, sizeof(name));
	fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 4096), 0);
	h = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(h != MAP_FAILED);
	clock_gettime(CLOCK_REALTIME, &ts);
	h->layout_version = SEGPOOL_EXPORT_LAYOUT_VERSION;
	h->pid = pid;
	h->realtime_ns = ((uint64_t)ts.tv_sec - age_s) * 1000000000ULL;
	__atomic_store_n(&h->magic, SEGPOOL_EXPORT_MAGIC, __ATOMIC_RELEASE);
	munmap(h, 4096);
	close(fd);
}

static pid_t dead_pid(void)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return pid;
}

static void test_top_oneshot(void **state)
{
	static struct run r;
	static char dump[1 << 16];
	char path[] = "/tmp/segpool-export-dump.XXXXXX";
	char pid[16], mine[512], theirs[512], name[64];
	unsigned long long active, total, aslabs, tslabs, avail;
	unsigned int per, pages, limit, batch, shared;
	size_t objsize;
	struct server s;
	const char *p;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	server_start(&s, "top_oneshot_c", 96, 333, path);
	snprintf(pid, sizeof(pid), "%d", (int)s.pid);

	run_top(&r, (const char *const[]){ "--slabinfo", "-p", pid, NULL });
	expect_exit(&r, 0, NULL);
	read_text_file(path, dump, sizeof(dump));
	unlink(path);
	/* the same two header lines and the same row as the child's own dump */
	assert_true(!strncmp(r.out, "slabinfo - version: 2.1\n# name ",
			     strlen("slabinfo - version: 2.1\n# name ")));
	assert_true(!strncmp(
		r.out, dump,
		(size_t)(strchr(strchr(dump, '\n') + 1, '\n') - dump)));
	assert_true(find_row(r.out, "top_oneshot_c", mine, sizeof(mine)));
	assert_true(find_row(dump, "top_oneshot_c", theirs, sizeof(theirs)));
	assert_string_equal(mine, theirs);
	assert_int_equal(sscanf(mine,
				"%63s %llu %llu %zu %u %u : tunables %u %u "
				"%u : slabdata %llu %llu %llu",
				name, &active, &total, &objsize, &per, &pages,
				&limit, &batch, &shared, &aslabs, &tslabs,
				&avail),
			 12);
	assert_int_equal(active, 333);
	assert_true(total >= 333 && objsize >= 96);
	assert_true(find_row(r.out, "kmalloc-64", mine, sizeof(mine)));
	/*
	 * the program's caches before the library's, as in the library's dump
	 */
	assert_true(strstr(r.out, "\ntop_oneshot_c ") <
		    strstr(r.out, "\nkmalloc-"));

	run_top(&r, (const char *const[]){ "--json", "-p", pid, NULL });
	expect_exit(&r, 0, NULL);
	assert_non_null(strstr(r.out, "\"layout_version\": 1"));
	p = strstr(r.out, "\"name\": \"top_oneshot_c\"");
	assert_non_null(p);
	p = strstr(p, "\"active_objs\": ");
	assert_non_null(p);
	assert_int_equal(strtoull(p + 15, NULL, 10), 333);
	assert_int_equal(r.out[strlen(r.out) - 2], '}');

	/* -o: one frame of the table, as slabtop -o; plain text */
	run_top(&r, (const char *const[]){ "-o", "-p", pid, NULL });
	expect_exit(&r, 0, NULL);
	assert_null(strchr(r.out, '\033'));
	/* slabtop -o's frame: summary first, no rates or hints */
	assert_true(!strncmp(r.out, " Active / Total Objects (% used)    : ",
			     strlen(" Active / Total Objects (% used)    : ")));
	assert_null(strstr(r.out, "Sort:"));
	p = strstr(r.out, "\n\n  OBJS ACTIVE  USE OBJ SIZE  SLABS OBJ/SLAB "
		   "CACHE SIZE NAME\n");
	assert_non_null(p);
	assert_null(strstr(p + 3, "  OBJS ACTIVE"));
	assert_true(find_line(r.out, " top_oneshot_c\n", mine, sizeof(mine)));
	assert_int_equal(sscanf(mine, "%llu %llu", &total, &active), 2);
	assert_int_equal(active, 333);
	/* without a terminal: batch mode, one plain frame per refresh */
	run_top(&r, (const char *const[]){ "-n", "2", "-d", "0.1", "-s", "a",
					   "-p", pid, NULL });
	expect_exit(&r, 0, NULL);
	assert_null(strchr(r.out, '\033'));
	p = strstr(r.out, "Sort: number of active objects");
	assert_non_null(p);
	p = strstr(p + 1, "Sort: number of active objects");
	assert_non_null(p);
	assert_null(strstr(p + 1, "Sort: number of active objects"));

	assert_int_equal(server_stop(&s), 0);
	assert_false(shm_exists(s.pid));
}

static void test_top_bad_targets(void **state)
{
	static struct run r;
	char pid[16], msg[160], name[64];
	struct segpool_export_header *h;
	struct server s;
	pid_t gone;
	int status, fd;

	(void)state;
	/* a pid nobody has: a child that was reaped */
	gone = dead_pid();
	snprintf(pid, sizeof(pid), "%d", (int)gone);
	run_top(&r, (const char *const[]){ "-o", "-p", pid, NULL });
	snprintf(msg, sizeof(msg), "no process with pid %d", (int)gone);
	expect_exit(&r, 1, msg);

	/* a live process that does not export: this one */
	assert_false(shm_exists(getpid()));
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	run_top(&r, (const char *const[]){ "-o", "-p", pid, NULL });
	snprintf(msg, sizeof(msg), "process %d does not export statistics; "
		 "start it with SEGPOOL_EXPORT=1", (int)getpid());
	expect_exit(&r, 1, msg);
	run_top(&r, (const char *const[]){ "--json", "-p", pid, NULL });
	expect_exit(&r, 1, msg);

	/* a segment of another layout version, under our pid */
	shm_name_of(getpid(), name, sizeof(name));
	fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 4096), 0);
	h = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(h != MAP_FAILED);
	h->layout_version = 999;
	h->pid = getpid();
	snprintf(h->version, sizeof(h->version), "9.9.9");
	__atomic_store_n(&h->magic, SEGPOOL_EXPORT_MAGIC, __ATOMIC_RELEASE);
	run_top(&r, (const char *const[]){ "-o", "-p", pid, NULL });
	snprintf(msg, sizeof(msg), "layout version 999; this segpool-top reads "
		 "version %u", SEGPOOL_EXPORT_LAYOUT_VERSION);
	expect_exit(&r, 1, msg);
	/* and something that is no segment at all */
	__atomic_store_n(&h->magic, 0x1234, __ATOMIC_RELEASE);
	run_top(&r, (const char *const[]){ "-o", "-p", pid, NULL });
	expect_exit(&r, 1, "is not a segpool statistics segment");
	munmap(h, 4096);
	close(fd);
	shm_unlink(name);

	/* a process killed before it could remove its segment */
	server_start(&s, "top_killed_c", 64, 10, NULL);
	kill(s.pid, SIGKILL);
	assert_int_equal(waitpid(s.pid, &status, 0), s.pid);
	close(s.cmd);
	assert_true(shm_exists(s.pid));
	snprintf(pid, sizeof(pid), "%d", (int)s.pid);
	run_top(&r, (const char *const[]){ "-o", "-p", pid, NULL });
	snprintf(msg, sizeof(msg), "process %d exited", (int)s.pid);
	expect_exit(&r, 1, msg);
	shm_name_of(s.pid, name, sizeof(name));
	shm_unlink(name);
	strcat(name, SEGPOOL_EXPORT_CTL_SUFFIX);
	shm_unlink(name);

	/* usage errors */
	run_top(&r, (const char *const[]){ "-o", NULL });
	expect_exit(&r, 2, "give its pid with -p PID");
	run_top(&r, (const char *const[]){ "-p", "12x", NULL });
	expect_exit(&r, 2, "is not a pid");
	/* the process is checked before the terminal: no terminal here */
	run_top(&r, (const char *const[]){ "-p", pid, NULL });
	snprintf(msg, sizeof(msg), "no process with pid %d", (int)s.pid);
	expect_exit(&r, 1, msg);
	/* slabtop's rules: -d is not for -o, -s takes slabtop's letters */
	run_top(&r, (const char *const[]){ "-o", "-d", "1", "-p", pid, NULL });
	expect_exit(&r, 2, "-d cannot be combined with -o");
	run_top(&r, (const char *const[]){ "-s", "x", "-p", pid, NULL });
	expect_exit(&r, 2, "-s wants a sort key");
}

/* The slabs of cache @name in segpool-top's slabinfo of @pid. */
static unsigned long long top_slabs(struct run *r, const char *pid,
				    const char *name)
{
	unsigned long long a, t, as, ts, av;
	unsigned int per, pages, lim, batch, shared;
	char line[512], n[64];
	size_t sz;

	run_top(r, (const char *const[]){ "--slabinfo", "-p", pid, NULL });
	expect_exit(r, 0, NULL);
	if (!find_row(r->out, name, line, sizeof(line)))
		fail_msg("no row %s in: %s", name, r->out);
	assert_int_equal(sscanf(line, "%63s %llu %llu %zu %u %u : tunables %u "
				"%u %u : slabdata %llu %llu %llu", n, &a, &t,
				&sz, &per, &pages, &lim, &batch, &shared, &as,
				&ts, &av), 12);
	return ts;
}

/* Write a request into @pid's control segment by hand; its answer. */
static int32_t raw_request(pid_t pid, uint32_t op, uint32_t uid, char *reason,
			   size_t len)
{
	struct segpool_export_ctl *c;
	char name[64];
	double end = now_s() + guard();
	int fd;

	shm_name_of(pid, name, sizeof(name));
	strcat(name, SEGPOOL_EXPORT_CTL_SUFFIX);
	fd = shm_open(name, O_RDWR, 0);
	assert_true(fd >= 0);
	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(c != MAP_FAILED);
	close(fd);
	assert_true(__atomic_load_n(&c->magic, __ATOMIC_ACQUIRE) ==
		    SEGPOOL_EXPORT_CTL_MAGIC);
	assert_int_equal(c->version, SEGPOOL_EXPORT_CTL_VERSION);
	{
		uint32_t idle = SEGPOOL_CTL_IDLE;

		assert_true(__atomic_compare_exchange_n(&c->state, &idle,
				SEGPOOL_CTL_CLAIMED, false, __ATOMIC_ACQUIRE,
				__ATOMIC_RELAXED));
	}
	c->op = op;
	c->uid = uid;
	c->pid = getpid();
	c->ticket = 77;
	__atomic_store_n(&c->state, SEGPOOL_CTL_PENDING, __ATOMIC_RELEASE);
	while (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) !=
	       SEGPOOL_CTL_DONE) {
		if (now_s() > end)
			fail_msg("no answer from process %d", (int)pid);
		nap_ms(5);
	}
	assert_int_equal(c->answered, 77);
	snprintf(reason, len, "%s", c->reason);
	int32_t ret = c->result;

	__atomic_store_n(&c->state, SEGPOOL_CTL_IDLE, __ATOMIC_RELEASE);
	munmap(c, sizeof(*c));
	return ret;
}

/*
 * segpool-top asks a live process: shrink (its free slabs go), validate
 * (a planted red-zone overwrite is found), tunables; refusals with their
 * reason; a process that does not export, or is gone.
 */
static void test_top_control(void **state)
{
	static struct run r;
	char pid[16], msg[256], reason[SEGPOOL_CTL_REASON_MAX];
	unsigned long long before, after;
	struct server s;
	double end;

	(void)state;
	server_start(&s, "top_ctl_freed_c", 256, 2000, NULL);
	snprintf(pid, sizeof(pid), "%d", (int)s.pid);
	before = top_slabs(&r, pid, "top_ctl_freed_c");
	assert_true(before > 0);
	run_top(&r, (const char *const[]){ "--shrink", "-p", pid, NULL });
	expect_exit(&r, 0, NULL);
	snprintf(msg, sizeof(msg), "segpool-top: process %s: shrink: done: "
		 "shrunk every cache, ", pid);
	if (!strstr(r.out, msg))
		fail_msg("no ack \"%s\" in: %s", msg, r.out);
	/* the effect, once a snapshot after it is out */
	end = now_s() + guard();
	while ((after = top_slabs(&r, pid, "top_ctl_freed_c")) > 0 &&
	       now_s() < end)
		nap_ms(20);
	assert_int_equal(after, 0);

	run_top(&r, (const char *const[]){ "--validate", "-p", pid, NULL });
	expect_exit(&r, 0, NULL);
	assert_non_null(strstr(r.out, "validate: done: "));
	assert_non_null(strstr(r.out, " 0 problems found"));

	/* tunables: set, and out of range refused with the reason */
	run_top(&r, (const char *const[]){ "--set", "decay-ms=250", "-p", pid,
					   NULL });
	expect_exit(&r, 0, NULL);
	assert_non_null(strstr(r.out, "decay-ms: done: decay-ms is 250"));
	run_top(&r, (const char *const[]){ "--set", "memory-limit=64M", "-p",
					   pid, NULL });
	expect_exit(&r, 0, NULL);
	assert_non_null(strstr(r.out, "memory-limit is 67108864 bytes"));
	run_top(&r, (const char *const[]){ "--set", "decay-ms=99999999", "-p",
					   pid, NULL });
	expect_exit(&r, 1, "decay-ms: refused: decay-ms 99999999");
	run_top(&r, (const char *const[]){ "--set", "speed=3", "-p", pid,
					   NULL });
	expect_exit(&r, 2, "unknown tunable 'speed'");
	run_top(&r, (const char *const[]){ "--shrink", "--validate", "-p", pid,
					   NULL });
	expect_exit(&r, 2, "one request at a time");
	/* sampling is off here: --sites refused, naming the setting */
	run_top(&r, (const char *const[]){ "--sites", "-p", pid, NULL });
	expect_exit(&r, 1, "sites: refused: heap sampling is off in this "
		    "process; start it with SEGPOOL_HEAP_PROFILE=FILE");
	run_top(&r, (const char *const[]){ "--sites=0", "-p", pid, NULL });
	expect_exit(&r, 2, "--sites wants a count, 1 to 64, not '0'");
	/* the heap profile: written, or refused with a reason */
	run_top(&r, (const char *const[]){ "--heap-profile",
					   "/nonexistent/dir/x.prof", "-p",
					   pid, NULL });
	expect_exit(&r, 1, "heap-profile: ");
	/* a request whose uid is not the owner's is refused, and says why */
	assert_int_equal(raw_request(s.pid, SEGPOOL_CTL_OP_SHRINK,
				     (uint32_t)getuid() + 1, reason,
				     sizeof(reason)), EPERM);
	assert_non_null(strstr(reason, "is not the process's owner"));
	assert_int_equal(raw_request(s.pid, 99, (uint32_t)getuid(), reason,
				     sizeof(reason)), EINVAL);
	assert_non_null(strstr(reason, "unknown request 99"));
	assert_int_equal(server_stop(&s), 0);
	assert_false(shm_exists(s.pid));
	{
		char name[64], path[96];

		shm_name_of(s.pid, name, sizeof(name));
		snprintf(path, sizeof(path), "/dev/shm%s%s", name,
			 SEGPOOL_EXPORT_CTL_SUFFIX);
		/* removed too */
		assert_int_equal(access(path, F_OK), -1);
	}

	/* validate finds a planted bug of a debug cache */
	setenv("SEGPOOL_DEBUG", "Z,top_ctl_redzone_c", 1);
	server_start(&s, "top_ctl_redzone_c", 64, 4, NULL);
	unsetenv("SEGPOOL_DEBUG");
	snprintf(pid, sizeof(pid), "%d", (int)s.pid);
	run_top(&r, (const char *const[]){ "--validate", "-p", pid, NULL });
	expect_exit(&r, 0, NULL);
	assert_non_null(strstr(r.out, " 1 problem found (reported on the "
			       "process's standard error)"));
	assert_int_equal(server_stop(&s), 0);

	/* a process that does not export (this one), one that is gone */
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	run_top(&r, (const char *const[]){ "--shrink", "-p", pid, NULL });
	snprintf(msg, sizeof(msg), "process %d does not export, so it takes no "
		 "requests; start it with SEGPOOL_EXPORT=1", (int)getpid());
	expect_exit(&r, 1, msg);
	snprintf(pid, sizeof(pid), "%d", (int)dead_pid());
	run_top(&r, (const char *const[]){ "--validate", "-p", pid, NULL });
	expect_exit(&r, 1, "no process with pid");
}

#ifdef CONFIG_SEGPOOL_TSAN
#define IS_ENABLED_TSAN	1
#else
#define IS_ENABLED_TSAN	0
#endif

/* Whether the frame @line names serve_site_alloc (@fn_off in @mod). */
static bool site_frame_is(const char *line, const char *mod,
			  unsigned long long fn_off)
{
	char want[160];
	const char *p;
	unsigned long long off;

	if (strstr(line, " serve_site_alloc+"))
		return true;
	snprintf(want, sizeof(want), " %s+0x", mod);
	p = strstr(line, want);
	if (!p)
		return false;
	off = strtoull(p + strlen(want), NULL, 16);
	/* a return address a little past the function's start */
	return off > fn_off && off - fn_off <= 1024;
}

/*
 * segpool-top --sites: a child samples (SEGPOOL_HEAP_PROFILE, one sample
 * per 4 KiB) and allocates its cache's objects at one call site; that
 * site comes first, with the cache's name, its first frame in
 * serve_site_alloc() (by name when the process can tell it, else by its
 * offset in this program, the child being this program too).
 */
static void test_top_sites(void **state)
{
	static struct run r;
	char pid[16], prof[96], line[512], want[160];
	const char *p, *mod, *first;
	unsigned long long fn_off;
	int k;
	Dl_info di;
	struct server s;

	(void)state;
	assert_true(dladdr((void *)serve_site_alloc, &di) && di.dli_fbase);
	fn_off = (unsigned long long)((uintptr_t)serve_site_alloc -
				      (uintptr_t)di.dli_fbase);
	mod = strrchr(di.dli_fname, '/');
	mod = mod ? mod + 1 : di.dli_fname;
	setenv("SEGPOOL_HEAP_PROFILE", "/tmp/segpool-test-sites.%p.prof", 1);
	setenv("SEGPOOL_HEAP_SAMPLE", "4096", 1);
	server_start(&s, "top_sites_c", 256, 2000, NULL);
	unsetenv("SEGPOOL_HEAP_PROFILE");
	unsetenv("SEGPOOL_HEAP_SAMPLE");
	snprintf(pid, sizeof(pid), "%d", (int)s.pid);
	snprintf(prof, sizeof(prof), "/tmp/segpool-test-sites.%d.prof",
		 (int)s.pid);

	run_top(&r, (const char *const[]){ "--sites=3", "-p", pid, NULL });
	expect_exit(&r, 0, NULL);
	printf("# segpool-top --sites=3:\n%s", r.out);
	snprintf(want, sizeof(want), "process %s: top call sites by sampled "
		 "bytes in use", pid);
	assert_non_null(strstr(r.out, want));
	/* the first site: our cache, its bytes, then its frame #0 */
	p = strstr(r.out, "\n   1 ");
	assert_non_null(p);
	first = p;
	snprintf(line, sizeof(line), "%.*s", (int)strcspn(p + 1, "\n"), p + 1);
	if (!strstr(line, " top_sites_c"))
		fail_msg("the first site is not top_sites_c's: %s", line);
	/*
	 * frame #0; under TSan the library's entry is not inlined into its
	 * exported call and the stack keeps it: #1 there
	 */
	for (k = 0; k < (IS_ENABLED_TSAN ? 2 : 1); k++) {
		snprintf(want, sizeof(want), "#%d 0x", k);
		p = strstr(first, want);
		assert_non_null(p);
		snprintf(line, sizeof(line), "%.*s", (int)strcspn(p, "\n"), p);
		if (site_frame_is(line, mod, fn_off))
			break;
	}
	if (k == (IS_ENABLED_TSAN ? 2 : 1))
		fail_msg("frame #0 is not in serve_site_alloc (%s+%#llx): %s",
			 mod, fn_off, line);
	/* a count out of range: refused before asking */
	run_top(&r, (const char *const[]){ "--sites=65", "-p", pid, NULL });
	expect_exit(&r, 2, "1 to 64");
	assert_int_equal(server_stop(&s), 0);
	/* the profile at exit was written: sampling was on */
	assert_int_equal(access(prof, R_OK), 0);
	unlink(prof);
}

/* A process that starts exporting removes leftovers a minute old, only. */
static void test_export_sweep(void **state)
{
	pid_t old = dead_pid(), fresh = dead_pid(), fifo = dead_pid();
	char name[64], path[80];
	struct server s;

	(void)state;
	fake_leftover(old, 120);
	fake_leftover(fresh, 0);
	/* a FIFO planted under a dead pid: the sweep must not wait on it */
	shm_name_of(fifo, name, sizeof(name));
	snprintf(path, sizeof(path), "/dev/shm%s", name);
	assert_int_equal(mkfifo(path, 0600), 0);
	server_start(&s, "export_sweep_c", 64, 1, NULL);
	assert_false(shm_exists(old));
	assert_true(shm_exists(fresh));
	assert_int_equal(access(path, F_OK), 0);	/* not ours: left */
	assert_int_equal(server_stop(&s), 0);
	unlink(path);
	shm_name_of(fresh, name, sizeof(name));
	shm_unlink(name);
}

/* --- full screen in a pseudo-terminal ------------------------------------- */

struct pty_run {
	pid_t pid;
	int master;
	int slave;		/* kept open here, to read its modes after */
	struct termios before;
	char *buf;
	size_t len, cap;
};

static void pty_start(struct pty_run *t, pid_t target)
{
	struct winsize ws = { .ws_row = 64, .ws_col = 132 };
	const char *path = top_path();
	char pid[16];

	memset(t, 0, sizeof(*t));
	snprintf(pid, sizeof(pid), "%d", (int)target);
	assert_int_equal(openpty(&t->master, &t->slave, NULL, NULL, &ws), 0);
	fcntl(t->master, F_SETFD, FD_CLOEXEC);
	fcntl(t->slave, F_SETFD, FD_CLOEXEC);
	assert_int_equal(tcgetattr(t->slave, &t->before), 0);
	assert_true(t->before.c_lflag & ICANON);
	fflush(stdout);
	fflush(stderr);
	t->pid = fork();
	assert_true(t->pid >= 0);
	if (t->pid == 0) {
		close(t->master);
		if (login_tty(dup(t->slave)))
			_exit(126);
		close(t->slave);
		execl(path, "segpool-top", "-p", pid, "-d", "0.2", "-s", "c",
		      (char *)NULL);
		_exit(127);
	}
	t->cap = 1 << 16;
	t->buf = malloc(t->cap);
	assert_non_null(t->buf);
}

/* Read what is there, waiting up to @ms. Return: false at end of output. */
static bool pty_pump(struct pty_run *t, int ms)
{
	struct pollfd p = { .fd = t->master, .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, ms) <= 0)
		return true;
	if (t->len + 4096 > t->cap) {
		t->cap *= 2;
		t->buf = realloc(t->buf, t->cap);
		assert_non_null(t->buf);
	}
	n = read(t->master, t->buf + t->len, t->cap - t->len);
	if (n <= 0)
		return false;
	t->len += (size_t)n;
	return true;
}

static size_t pty_count(const struct pty_run *t, size_t from, const char *s)
{
	size_t n = 0, sl = strlen(s);
	const char *p = t->buf + from, *end = t->buf + t->len;

	while ((p = memmem(p, (size_t)(end - p), s, sl))) {
		n++;
		p += sl;
	}
	return n;
}

/* Wait until @s has appeared @times since offset @from. */
static void pty_expect(struct pty_run *t, size_t from, const char *s,
		       size_t times)
{
	const double end = now_s() + guard();

	while (pty_count(t, from, s) < times) {
		if (now_s() > end || !pty_pump(t, 50))
			fail_msg(
				"no \"%s\" (x%zu) from segpool-top; it printed "
				"%zu bytes, last: %.300s",
				s, times, t->len,
				t->len > 300 ? t->buf + t->len - 300 : t->buf);
	}
}

/* Type @keys, then wait for @s on the screen after them. */
static void pty_key(struct pty_run *t, const char *keys, const char *s)
{
	size_t from = t->len;

	assert_int_equal(write(t->master, keys, strlen(keys)),
			 (ssize_t)strlen(keys));
	pty_expect(t, from, s, 1);
}

/* Wait for the viewer to end, keep its last output; Return: wait status. */
static int pty_wait(struct pty_run *t)
{
	const double end = now_s() + guard();
	int status;
	pid_t w;

	while ((w = waitpid(t->pid, &status, WNOHANG)) == 0) {
		if (now_s() > end) {
			kill(t->pid, SIGKILL);
			fail_msg("segpool-top did not end");
		}
		pty_pump(t, 20);
	}
	assert_int_equal(w, t->pid);
	/* what it wrote last may still be in the master's buffer */
	for (int k = 0; k < 20; k++)
		pty_pump(t, 10);
	return status;
}

/* The terminal is as it was: modes, and the main screen last. */
static void pty_check_restored(struct pty_run *t)
{
	struct termios after;
	const char *leave;

	assert_int_equal(tcgetattr(t->slave, &after), 0);
	assert_int_equal(after.c_lflag, t->before.c_lflag);
	assert_int_equal(after.c_iflag, t->before.c_iflag);
	assert_int_equal(after.c_cc[VMIN], t->before.c_cc[VMIN]);
	leave = memmem(t->buf, t->len, ALT_LEAVE, strlen(ALT_LEAVE));
	assert_non_null(leave);
	/* nothing drawn on the alternate screen after leaving it */
	assert_null(memmem(leave, t->len - (size_t)(leave - t->buf),
			   ALT_ENTER, strlen(ALT_ENTER)));
}

static void pty_end(struct pty_run *t)
{
	close(t->master);
	close(t->slave);
	free(t->buf);
}

static void test_top_fullscreen(void **state)
{
	struct pty_run t;
	struct server s;
	char title[64];
	size_t from;
	int status;

	(void)state;
	/* the biggest cache of the child: first by cache size (-s c) */
	server_start(&s, "top_full_c", 1024, 300, NULL);
	snprintf(title, sizeof(title), "segpool-top - pid %d (", (int)s.pid);
	pty_start(&t, s.pid);

	pty_expect(&t, 0, ALT_ENTER, 1);
	pty_expect(&t, 0, title, 3);		/* three frames */
	pty_expect(&t, 0, "top_full_c", 3);
	pty_expect(&t, 0, "OBJ/SLAB CACHE SIZE", 1);
	pty_expect(&t, 0, "kmalloc-64", 1);

	/* slabtop's sort letters, in either case, with slabtop's meaning */
	pty_key(&t, "n", "Sort: name");
	pty_key(&t, "o", "Sort: number of objects");
	pty_key(&t, "a", "Sort: number of active objects");
	pty_key(&t, "s", "Sort: object size");
	pty_key(&t, "U", "Sort: cache utilization");
	pty_key(&t, "l", "Sort: number of slabs");
	pty_key(&t, "b", "Sort: objects per slab");
	pty_key(&t, "g", "Sort: growth");
	/* r reverses this order only: the next order is not reversed */
	pty_key(&t, "r", "Sort: growth of the cache size, reversed");
	pty_key(&t, "C", "Sort: cache size  (h: help)");
	from = t.len;
	pty_key(&t, "\r", "cache top_full_c");
	pty_expect(&t, from, "SINCE CREATION", 1);
	pty_expect(&t, from, " NODE  PARTIAL", 1);
	pty_key(&t, "\033", "  OBJS ACTIVE  USE");
	pty_key(&t, "i", "cache top_full_c");
	pty_key(&t, "i", "  OBJS ACTIVE  USE");
	pty_key(&t, "m", "NUMA nodes");
	pty_key(&t, "m", "  OBJS ACTIVE  USE");
	pty_key(&t, "h", "Sort key");
	pty_key(&t, "x", "  OBJS ACTIVE  USE");
	pty_key(&t, "jk", "top_full_c");
	pty_key(&t, "q", ALT_LEAVE);
	status = pty_wait(&t);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	pty_check_restored(&t);
	pty_end(&t);

	/* SIGTERM: the terminal is restored, then it dies of SIGTERM */
	pty_start(&t, s.pid);
	pty_expect(&t, 0, title, 2);
	kill(t.pid, SIGTERM);
	status = pty_wait(&t);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGTERM);
	pty_check_restored(&t);
	pty_end(&t);

	/* the process exits while watched */
	pty_start(&t, s.pid);
	pty_expect(&t, 0, title, 2);
	assert_int_equal(server_stop(&s), 0);
	status = pty_wait(&t);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 1);
	snprintf(title, sizeof(title), "segpool-top: process %d exited",
		 (int)s.pid);
	assert_non_null(memmem(t.buf, t.len, title, strlen(title)));
	pty_check_restored(&t);
	pty_end(&t);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_export_header),
	cmocka_unit_test(test_export_errors),
	cmocka_unit_test(test_export_planted),
	cmocka_unit_test(test_export_matches_info),
	cmocka_unit_test_teardown(test_export_seqlock_under_load,
				  load_teardown),
	cmocka_unit_test(test_export_grows),
	cmocka_unit_test(test_export_fork),
	cmocka_unit_test(test_export_env_child),
	cmocka_unit_test(test_export_env),
	cmocka_unit_test(test_top_oneshot),
	cmocka_unit_test(test_top_bad_targets),
	cmocka_unit_test(test_top_control),
	cmocka_unit_test(test_top_sites),
	cmocka_unit_test(test_export_sweep),
	cmocka_unit_test(test_top_fullscreen),
};

int main(int argc, char **argv)
{
	/*
	 * Every test starts and stops the export itself: one that
	 * SEGPOOL_EXPORT started (make check run with it set) stops here, and
	 * the children do not inherit the setting.
	 */
	if (!getenv(ENV_CHILD)) {
		segpool_export_stop();
		unsetenv("SEGPOOL_EXPORT");
		unsetenv("SEGPOOL_EXPORT_INTERVAL_MS");
	}
	if (argc == 6 && !strcmp(argv[1], "--serve"))
		serve(argv[2], strtoul(argv[3], NULL, 10),
		      (unsigned int)strtoul(argv[4], NULL, 10), argv[5]);
	return sp_test_run(__FILE__, tests, sizeof(tests) / sizeof(tests[0]),
			   argc, argv);
}
