// SPDX-License-Identifier: MIT
/*
 * selftests/api/test_fork.c - fork() while other threads use the allocator.
 *
 * Worker threads allocate and free without pause while a thread forks.  A
 * lock held by a worker at the moment of fork() would stay locked forever in
 * the child, so the child immediately uses every layer (the caches the
 * workers use, segpool_malloc() small and large, a new cache, the stats dump)
 * and exits 0.  An alarm in the child turns a deadlock into a SIGALRM death
 * the parent reports, instead of a hang.
 */
#include <errno.h>
#include <sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/single_threaded.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <segpool/segpool.h>
#include <segpool/arena.h>
#include <segpool/mempool.h>
#include <segpool/rcu.h>
#include "segpool_config.h"
#include "selftests/lib/child.h"
#include "selftests/lib/harness.h"

#define CTOR_BYTE	0x6b
#define NWORKERS	4
#define NFORKS		8
#define HELD		100
#define CHILD_TIMEOUT	30	/* seconds before a stuck child is killed */

/* child exit codes, so the parent can say what went wrong */
enum {
	CHILD_OK = 0,
	CHILD_HELD_CORRUPT = 10,
	CHILD_CACHE_ALLOC,
	CHILD_CTOR_STATE,
	CHILD_MALLOC,
	CHILD_LARGE,
	CHILD_CREATE,
	CHILD_DESTROY,
	CHILD_DUMP,
	CHILD_GRANDCHILD,
	CHILD_INFO,
	CHILD_RCU,
	CHILD_THREAD,
};

static const char *const child_what[] = {
	[CHILD_HELD_CORRUPT - 10] = "objects held at fork time corrupted",
	[CHILD_CACHE_ALLOC - 10] = "cache allocation failed",
	[CHILD_CTOR_STATE - 10] = "ctor object not constructed",
	[CHILD_MALLOC - 10] = "segpool_malloc failed",
	[CHILD_LARGE - 10] = "large segpool_malloc failed",
	[CHILD_CREATE - 10] = "segpool_cache_create failed",
	[CHILD_DESTROY - 10] = "segpool_cache_destroy failed",
	[CHILD_DUMP - 10] = "segpool_stats_dump failed",
	[CHILD_GRANDCHILD - 10] = "a grandchild failed",
	[CHILD_INFO - 10] = "segpool_cache_get_info failed",
	[CHILD_RCU - 10] = "an RCU call failed",
	[CHILD_THREAD - 10] = "a thread of the child failed",
};

static void ctor_256(void *obj)
{
	memset(obj, CTOR_BYTE, 256);
}

struct forkrun {
	struct segpool_cache *plain, *ctor;
	atomic_bool stop;
	atomic_ulong loops;
	pthread_t th[NWORKERS];
	int fork_from;		/* -1: the main thread forks,
				 * else that worker */
	int nforks;
	int child_status[NFORKS];
	/* objects the forking thread holds across each fork */
	unsigned char *held[HELD];
	size_t held_size[HELD];
	int held_kind[HELD];	/* 0 plain, 1 ctor, 2 malloc */
};

struct wctx {
	struct forkrun *fr;
	int id;
};

static struct wctx wctx[NWORKERS];

static unsigned char pat(uintptr_t p, size_t i)
{
	return (unsigned char)((p >> 3) + i * 5 + 1);
}

static void churn(struct forkrun *fr, uint64_t *rng, int rounds)
{
	void *p[64];
	int r, i;

	for (r = 0; r < rounds; r++) {
		int kind = (int)(sp_test_rand(rng) % 3);

		for (i = 0; i < 64; i++) {
			if (kind == 0)
				p[i] = segpool_cache_alloc(fr->plain, 0);
			else if (kind == 1)
				p[i] = segpool_cache_alloc(fr->ctor, 0);
			else
				p[i] = segpool_malloc(1 +
						      sp_test_rand(rng) % 3000);
			if (p[i] && kind == 0)
				memset(p[i], i, 64);
		}
		for (i = 0; i < 64; i++) {
			if (!p[i])
				continue;
			if (kind == 0)
				segpool_cache_free(fr->plain, p[i]);
			else if (kind == 1)
				segpool_cache_free(fr->ctor, p[i]);
			else
				segpool_free(p[i]);
		}
	}
}

static int held_alloc(struct forkrun *fr, uint64_t *rng)
{
	int i;

	for (i = 0; i < HELD; i++) {
		int kind = i % 3;
		size_t size = kind == 0 ? 64 : kind == 1 ? 256 :
			      1 + sp_test_rand(rng) % 50000;
		unsigned char *p;
		size_t k;

		if (kind == 0)
			p = segpool_cache_alloc(fr->plain, 0);
		else if (kind == 1)
			p = segpool_cache_alloc(fr->ctor, 0);
		else
			p = segpool_malloc(size);
		if (!p)
			return -1;
		if (kind != 1)
			for (k = 0; k < size; k++)
				p[k] = pat((uintptr_t)p, k);
		fr->held[i] = p;
		fr->held_size[i] = size;
		fr->held_kind[i] = kind;
	}
	return 0;
}

static bool held_intact(struct forkrun *fr, int i)
{
	size_t k;

	for (k = 0; k < fr->held_size[i]; k++) {
		unsigned char want = fr->held_kind[i] == 1 ? CTOR_BYTE :
				     pat((uintptr_t)fr->held[i], k);

		if (fr->held[i][k] != want)
			return false;
	}
	return true;
}

static void held_free(struct forkrun *fr)
{
	int i;

	for (i = 0; i < HELD; i++) {
		if (fr->held_kind[i] == 0)
			segpool_cache_free(fr->plain, fr->held[i]);
		else if (fr->held_kind[i] == 1)
			segpool_cache_free(fr->ctor, fr->held[i]);
		else
			segpool_free(fr->held[i]);
		fr->held[i] = NULL;
	}
}

/* What a grandchild does: a little of everything. */
static int child_body_light(struct forkrun *fr)
{
	void *objs[200];
	int i;

	for (i = 0; i < 200; i++)
		if (!(objs[i] = segpool_cache_alloc(fr->plain, 0)))
			return CHILD_CACHE_ALLOC;
	for (i = 0; i < 200; i++)
		segpool_cache_free(fr->plain, objs[i]);
	for (i = 0; i < 200; i++)
		if (!(objs[i] = segpool_malloc((size_t)i * 10 + 1)))
			return CHILD_MALLOC;
	for (i = 0; i < 200; i++)
		segpool_free(objs[i]);
	return CHILD_OK;
}

/* What a child does; returns its exit status. */
static int child_body(struct forkrun *fr, int nth, bool nest)
{
	struct segpool_cache_info info;
	struct segpool_cache *c;
	void *objs[600];
	char name[48];
	FILE *devnull;
	int i;

	/* the objects held across fork() are intact and can be freed here */
	for (i = 0; i < HELD; i++)
		if (!held_intact(fr, i))
			return CHILD_HELD_CORRUPT;
	held_free(fr);

	/* the caches the workers were using: enough to go past the per-CPU
	 * layer into the depot and the slabs */
	for (i = 0; i < 600; i++)
		if (!(objs[i] = segpool_cache_alloc(fr->plain, 0)))
			return CHILD_CACHE_ALLOC;
	for (i = 0; i < 600; i++)
		memset(objs[i], 0x33, 64);
	for (i = 0; i < 600; i++)
		segpool_cache_free(fr->plain, objs[i]);
	for (i = 0; i < 600; i++) {
		unsigned char *o = segpool_cache_alloc(fr->ctor, 0);

		if (!o)
			return CHILD_CACHE_ALLOC;
		if (o[0] != CTOR_BYTE || o[255] != CTOR_BYTE)
			return CHILD_CTOR_STATE;
		objs[i] = o;
	}
	for (i = 0; i < 600; i++)
		segpool_cache_free(fr->ctor, objs[i]);
	if (segpool_cache_alloc_bulk(fr->plain, 0, 300, objs) != 300)
		return CHILD_CACHE_ALLOC;
	segpool_cache_free_bulk(fr->plain, 300, objs);
	for (i = 0; i < 600; i++) {
		objs[i] = segpool_malloc((size_t)(i * 53 % 4000) + 1);
		if (!objs[i])
			return CHILD_MALLOC;
		memset(objs[i], 1, (size_t)(i * 53 % 4000) + 1);
	}
	for (i = 0; i < 600; i++)
		segpool_free(objs[i]);
	for (i = 0; i < 4; i++) {
		void *big = segpool_malloc(1 << 20);

		if (!big)
			return CHILD_LARGE;
		memset(big, 2, 1 << 20);
		segpool_free(big);
	}

	/* a new cache, used and destroyed */
	snprintf(name, sizeof(name), "tfk-child-%d-%d", (int)getpid(), nth);
	c = segpool_cache_create(name, 128, 0, 0, NULL);
	if (!c)
		return CHILD_CREATE;
	for (i = 0; i < 600; i++)
		if (!(objs[i] = segpool_cache_alloc(c, 0)))
			return CHILD_CACHE_ALLOC;
	for (i = 0; i < 600; i++)
		segpool_cache_free(c, objs[i]);
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	if (segpool_cache_get_info(c, &info) != 0 || info.active_objs != 0)
		return CHILD_INFO;
	if (segpool_cache_destroy(c) != 0)
		return CHILD_DESTROY;

	/* every cache's locks, one after the other */
	devnull = fopen("/dev/null", "w");
	if (!devnull || segpool_stats_dump(devnull) != 0)
		return CHILD_DUMP;
	fclose(devnull);

	if (nest) {
		/* fork once more, from a child that has never had threads */
		pid_t pid = fork();
		int status;

		if (pid == 0) {
			alarm(CHILD_TIMEOUT);
			_exit(child_body_light(fr));
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid ||
		    !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			return CHILD_GRANDCHILD;
	}
	return CHILD_OK;
}

static pid_t fork_child(struct forkrun *fr, int nth)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		alarm(CHILD_TIMEOUT);	/* a deadlock dies of SIGALRM */
		_exit(child_body(fr, nth, nth == 0));
	}
	return pid;
}

/* The forking thread: hold objects, fork, wait, repeat. */
static void fork_loop(struct forkrun *fr)
{
	uint64_t rng = sp_test_seed() ^ 0xf0f0f0ULL;
	int n;

	for (n = 0; n < fr->nforks; n++) {
		struct timespec ts = { 0, 0 };
		int status = -1;
		pid_t pid;

		ts.tv_nsec = (long)(sp_test_rand(&rng) % 20000000);
		/* land at a different moment each time */
		nanosleep(&ts, NULL);
		if (held_alloc(fr, &rng) != 0) {
			fr->child_status[n] = -2;
			continue;
		}
		pid = fork_child(fr, n);
		if (pid < 0) {
			fr->child_status[n] = -3;
		} else {
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			fr->child_status[n] = status;
		}
		/* the parent's copies are untouched by what the child did */
		{
			int i;

			for (i = 0; i < HELD; i++)
				if (!held_intact(fr, i))
					fr->child_status[n] = -4;
		}
		held_free(fr);
	}
}

static void *worker_main(void *arg)
{
	struct wctx *wc = arg;
	struct forkrun *fr = wc->fr;
	uint64_t rng = sp_test_seed() ^ ((uint64_t)(wc->id + 1) << 40);

	if (wc->id == fr->fork_from) {
		fork_loop(fr);
		return NULL;
	}
	while (!atomic_load_explicit(&fr->stop, memory_order_relaxed)) {
		churn(fr, &rng, 1);
		atomic_fetch_add_explicit(&fr->loops, 1, memory_order_relaxed);
	}
	return NULL;
}

static void check_status(int n, int status)
{
	if (status == -2)
		fail_msg("fork %d: the parent could not allocate", n);
	if (status == -3)
		fail_msg("fork %d: fork() failed: %s", n, strerror(errno));
	if (status == -4)
		fail_msg("fork %d: the parent's objects changed", n);
	if (WIFSIGNALED(status))
		fail_msg("fork %d: child killed by signal %d (%s)%s", n,
			 WTERMSIG(status), strsignal(WTERMSIG(status)),
			 WTERMSIG(status) == SIGALRM ?
			 ": deadlocked after fork" : "");
	if (!WIFEXITED(status))
		fail_msg("fork %d: child status %#x", n, status);
	if (WEXITSTATUS(status) != 0) {
		int code = WEXITSTATUS(status);

		fail_msg("fork %d: child exited %d (%s)", n, code,
			 code >= 10 && code - 10 < (int)(sizeof(child_what) /
						       sizeof(child_what[0])) ?
			 child_what[code - 10] : "?");
	}
}

static void run_fork(int fork_from, const char *tag)
{
	struct forkrun *fr = calloc(1, sizeof(*fr));
	char name[48];
	int i, nworkers = NWORKERS;

	assert_non_null(fr);
	fr->fork_from = fork_from;
	fr->nforks = sp_test_under_valgrind() ? 2 : NFORKS;
	snprintf(name, sizeof(name), "tfk-%s-64", tag);
	fr->plain = segpool_cache_create(name, 64, 0, 0, NULL);
	assert_non_null(fr->plain);
	snprintf(name, sizeof(name), "tfk-%s-ctor", tag);
	fr->ctor = segpool_cache_create(name, 256, 0, SEGPOOL_HWCACHE_ALIGN,
					ctor_256);
	assert_non_null(fr->ctor);

	for (i = 0; i < nworkers; i++) {
		wctx[i].fr = fr;
		wctx[i].id = i;
		assert_int_equal(pthread_create(&fr->th[i], NULL, worker_main,
						&wctx[i]), 0);
	}
	/* let every worker get going before the first fork */
	while (atomic_load(&fr->loops) < (unsigned long)nworkers * 4)
		sched_yield();
	if (fork_from < 0)
		fork_loop(fr);
	else
		pthread_join(fr->th[fork_from], NULL);
	atomic_store(&fr->stop, true);
	for (i = 0; i < nworkers; i++)
		if (i != fork_from)
			pthread_join(fr->th[i], NULL);

	for (i = 0; i < fr->nforks; i++)
		check_status(i, fr->child_status[i]);

	/* the parent's accounting is whole after all that */
	assert_int_equal(sp_test_info(fr->plain).active_objs, 0);
	assert_int_equal(sp_test_info(fr->ctor).active_objs, 0);
	assert_int_equal(segpool_cache_destroy(fr->plain), 0);
	assert_int_equal(segpool_cache_destroy(fr->ctor), 0);
	free(fr);
}

static void test_fork_from_main(void **state)
{
	(void)state;
	run_fork(-1, "main");
}

static void test_fork_from_worker(void **state)
{
	(void)state;
	run_fork(1, "worker");
}

/* Fork with no other thread around: the trivial case must work too. */
static void test_fork_single_thread(void **state)
{
	struct forkrun *fr = calloc(1, sizeof(*fr));
	uint64_t rng = 99;
	int n;

	(void)state;
	assert_non_null(fr);
	fr->plain = segpool_cache_create("tfk-single-64", 64, 0, 0, NULL);
	fr->ctor = segpool_cache_create("tfk-single-ctor", 256, 0, 0, ctor_256);
	assert_non_null(fr->plain);
	assert_non_null(fr->ctor);
	churn(fr, &rng, 4);
	for (n = 0; n < 2; n++) {
		int status = -1;
		pid_t pid;

		assert_int_equal(held_alloc(fr, &rng), 0);
		pid = fork_child(fr, n);
		assert_true(pid > 0);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		check_status(n, status);
		held_free(fr);
	}
	assert_int_equal(segpool_cache_destroy(fr->plain), 0);
	assert_int_equal(segpool_cache_destroy(fr->ctor), 0);
	free(fr);
}

/*
 * fork with RCU-registered threads in the parent.  liburcu's reader
 * registry is copied into the child with the parent's registered threads
 * in it, though they do not exist there; a thread the child creates gets
 * one of their stacks (and TLS) from glibc's cache, and its registration
 * used to link the same registry node twice: the child's first grace
 * period then spun forever (or crashed) inside liburcu.  The parent here
 * has idle threads registered in each way the library registers one
 * (segpool_rcu_register_thread(), a statistics walk, a free by RCU) and
 * workers freeing by RCU without pause; each child frees by RCU, waits
 * for the callbacks, starts threads that do the same, dumps and destroys,
 * under an alarm.
 */
#define RCU_IDLE	3
#define RCU_LOADERS	2
#define RCU_FORKS	6
#define RCU_THREADS	3

struct rcufork {
	struct segpool_cache *c, *ts;	/* plain, SEGPOOL_TYPESAFE_BY_RCU */
	atomic_bool stop;
	atomic_int idle_ready;
	atomic_ulong loops;
};

static void *rcu_idle_main(void *arg)
{
	struct rcufork *rf = arg;
	int kind = atomic_fetch_add(&rf->idle_ready, 1) % 3;

	if (kind == 0) {
		segpool_rcu_register_thread();
	} else if (kind == 1) {
		FILE *f = fopen("/dev/null", "w");

		if (f) {
			segpool_stats_dump(f);
			fclose(f);
		}
	} else {
		void *o = segpool_cache_alloc(rf->c, 0);

		if (o)
			segpool_cache_free_rcu(rf->c, o);
	}
	atomic_fetch_add(&rf->idle_ready, 16);
	while (!atomic_load(&rf->stop))
		usleep(1000);	/* idle, registered, outside any section */
	return NULL;
}

static void *rcu_load_main(void *arg)
{
	struct rcufork *rf = arg;
	void *o[32];
	int i;

	while (!atomic_load_explicit(&rf->stop, memory_order_relaxed)) {
		for (i = 0; i < 32; i++)
			o[i] = segpool_cache_alloc(i & 1 ? rf->ts : rf->c, 0);
		for (i = 0; i < 32; i++)
			if (o[i])
				segpool_cache_free_rcu(i & 1 ? rf->ts : rf->c,
						       o[i]);
		/*
		 * keep the backlog of callbacks (the child inherits it) short
		 */
		if (atomic_fetch_add_explicit(&rf->loops, 1,
					      memory_order_relaxed) % 16 == 15)
			segpool_rcu_barrier();
	}
	return NULL;
}

/* A thread of the child: registered, frees by RCU, waits for it. */
static void *rcu_child_thread(void *arg)
{
	struct rcufork *rf = arg;
	int i;

	if (segpool_rcu_register_thread())
		return (void *)1;
	for (i = 0; i < 100; i++) {
		void *o = segpool_cache_alloc(rf->c, 0);

		if (!o || segpool_cache_free_rcu(rf->c, o))
			return (void *)1;
	}
	segpool_rcu_barrier();
	return NULL;
}

static int rcu_child_body(struct rcufork *rf, int nth)
{
	struct segpool_cache *c;
	pthread_t th[RCU_THREADS];
	void *objs[300], *ret;
	char name[48];
	FILE *devnull;
	int i;

	for (i = 0; i < 300; i++)
		if (!(objs[i] = segpool_cache_alloc(i & 1 ? rf->ts : rf->c, 0)))
			return CHILD_CACHE_ALLOC;
	for (i = 0; i < 150; i++)
		segpool_cache_free(i & 1 ? rf->ts : rf->c, objs[i]);
	for (; i < 300; i++)
		if (segpool_cache_free_rcu(i & 1 ? rf->ts : rf->c, objs[i]))
			return CHILD_RCU;
	segpool_rcu_barrier();
	segpool_synchronize_rcu();
	/* threads of its own: they reuse the stacks of the parent's */
	for (i = 0; i < RCU_THREADS; i++)
		if (pthread_create(&th[i], NULL, rcu_child_thread, rf))
			return CHILD_THREAD;
	for (i = 0; i < RCU_THREADS; i++)
		if (pthread_join(th[i], &ret) || ret)
			return CHILD_THREAD;
	devnull = fopen("/dev/null", "w");
	if (!devnull || segpool_stats_dump(devnull) != 0)
		return CHILD_DUMP;
	fclose(devnull);
	snprintf(name, sizeof(name), "tfk-rcu-child-%d", nth);
	c = segpool_cache_create(name, 96, 0, SEGPOOL_TYPESAFE_BY_RCU, NULL);
	if (!c)
		return CHILD_CREATE;
	for (i = 0; i < 300; i++)
		if (!(objs[i] = segpool_cache_alloc(c, 0)))
			return CHILD_CACHE_ALLOC;
	for (i = 0; i < 300; i++)
		segpool_cache_free_rcu(c, objs[i]);
	if (segpool_cache_destroy(c) != 0)
		return CHILD_DESTROY;
	return CHILD_OK;
}

static void test_fork_rcu_registered_threads(void **state)
{
	struct rcufork *rf = calloc(1, sizeof(*rf));
	pthread_t idle[RCU_IDLE], load[RCU_LOADERS];
	uint64_t rng = sp_test_seed() ^ 0x7cu;
	int i, n, nforks = sp_test_under_valgrind() ? 2 : RCU_FORKS;

	(void)state;
#ifdef CONFIG_SEGPOOL_TSAN
	/*
	 * ThreadSanitizer keeps the parent's threads in its own registry in
	 * the child, and aborts ("dup thread with used id") when a thread of
	 * the child gets the stack of one of them: the very case tested.
	 */
	free(rf);
	skip();
#endif
	assert_non_null(rf);
	rf->c = segpool_cache_create("tfk-rcu-64", 64, 0, 0, NULL);
	rf->ts = segpool_cache_create("tfk-rcu-ts", 64, 0,
				      SEGPOOL_TYPESAFE_BY_RCU, NULL);
	assert_non_null(rf->c);
	assert_non_null(rf->ts);
	for (i = 0; i < RCU_IDLE; i++)
		assert_int_equal(pthread_create(&idle[i], NULL, rcu_idle_main,
						rf), 0);
	while (atomic_load(&rf->idle_ready) < RCU_IDLE * 17)
		usleep(1000);
	for (i = 0; i < RCU_LOADERS; i++)
		assert_int_equal(pthread_create(&load[i], NULL, rcu_load_main,
						rf), 0);
	while (atomic_load(&rf->loops) < RCU_LOADERS * 4)
		sched_yield();

	for (n = 0; n < nforks; n++) {
		struct timespec ts = { 0,
				       (long)(sp_test_rand(&rng) % 10000000) };
		int status = -1;
		pid_t pid;

		nanosleep(&ts, NULL);
		fflush(stdout);
		fflush(stderr);
		pid = fork();
		if (pid == 0) {
			alarm(CHILD_TIMEOUT);	/* a hang dies of SIGALRM */
			_exit(rcu_child_body(rf, n));
		}
		assert_true(pid > 0);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		check_status(n, status);
	}
	atomic_store(&rf->stop, true);
	for (i = 0; i < RCU_LOADERS; i++)
		pthread_join(load[i], NULL);
	for (i = 0; i < RCU_IDLE; i++)
		pthread_join(idle[i], NULL);
	segpool_rcu_barrier();
	assert_int_equal(segpool_cache_destroy(rf->c), 0);
	assert_int_equal(segpool_cache_destroy(rf->ts), 0);
	free(rf);
}

/*
 * fork() + exec() while another thread is inside segpool_synchronize_rcu()
 * (issue 23): a grace period holds liburcu's registry mutex, which the
 * child's fork handler needs; forked at that moment, the child used to
 * hang inside fork() for good.  The child runs nothing of ours after the
 * fork, and its alarm would come too late (it hangs before fork()
 * returns), so the parent is the watchdog: a child not gone in
 * CHILD_TIMEOUT seconds is killed and fails the test.
 */
#define SYNC_FORKS	200

struct syncer {
	atomic_bool stop;
	atomic_ulong rounds;
};

static void *sync_loop(void *arg)
{
	struct syncer *sy = arg;

	while (!atomic_load(&sy->stop)) {
		segpool_synchronize_rcu();
		atomic_fetch_add(&sy->rounds, 1);
	}
	return NULL;
}

/* Wait for @pid at most CHILD_TIMEOUT seconds; false (it is killed) if not. */
static bool wait_bounded(pid_t pid, int *status)
{
	struct timespec nap = { 0, 1000000L };

	for (long waited = 0; waited < CHILD_TIMEOUT * 1000L; waited++) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid)
			return true;
		if (r < 0 && errno != EINTR)
			return false;
		nanosleep(&nap, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, status, 0);
	return false;
}

static void test_fork_exec_during_synchronize(void **state)
{
	struct syncer sy = { .stop = false };
	int nforks = sp_test_under_valgrind() ? 20 : SYNC_FORKS;
	unsigned long at_start;
	pthread_t th;

	(void)state;
	assert_int_equal(pthread_create(&th, NULL, sync_loop, &sy), 0);
	while (atomic_load(&sy.rounds) < 2)
		sched_yield();
	at_start = atomic_load(&sy.rounds);
	for (int n = 0; n < nforks; n++) {
		int status = -1;
		pid_t pid;

		fflush(stdout);
		fflush(stderr);
		pid = fork();
		if (pid == 0) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		assert_true(pid > 0);
		if (!wait_bounded(pid, &status)) {
			atomic_store(&sy.stop, true);
			pthread_join(th, NULL);
			fail_msg(
				"fork %d of %d: the child hung in fork() while "
				"another thread was in "
				"segpool_synchronize_rcu()",
				n + 1, nforks);
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			fail_msg("fork %d: child status %#x", n + 1, status);
	}
	atomic_store(&sy.stop, true);
	pthread_join(th, NULL);
	/* the grace periods went on meanwhile (and after every fork) */
	assert_true(atomic_load(&sy.rounds) > at_start);
	printf("# %d fork+exec during %lu grace periods\n", nforks,
	       atomic_load(&sy.rounds) - at_start);
}

/*
 * A process that never had a second thread takes no lock at fork
 * (core/init.c): a lock can be held only by a thread the child will not
 * have.  Taking them all would write, after the fork, every page that
 * holds one (each cache's depot and node locks), each then a
 * copy-on-write fault in the parent, and again in the child.  So the
 * parent's page faults across a fork are counted for ALONE_CACHES caches,
 * an arena and a mempool (whose handlers follow the same rule; each child
 * uses them all) while the process is single-threaded, then with one idle
 * thread alive, when every lock is taken and the count must grow by at
 * least ALONE_MIN_PAGES a fork.  It runs in a fresh process (this program
 * again): glibc never calls a process single-threaded again once it had
 * a thread, and the tests below start some.
 */
#define ALONE_CACHES	48
#define ALONE_FORKS	8
#define ALONE_MIN_PAGES	(ALONE_CACHES / 4)
#define ENV_ALONE	"SP_TFK_ALONE_CHILD"

/* What the alone test's children use: caches, an arena, a mempool. */
struct alone {
	struct segpool_cache *c[ALONE_CACHES];
	struct segpool_arena *arena;
	struct segpool_mempool *pool;
};

/* The parent's page faults a fork costs, the mean of ALONE_FORKS forks. */
static long faults_per_fork(struct alone *al)
{
	struct rusage before, after;

	assert_int_equal(getrusage(RUSAGE_SELF, &before), 0);
	for (int n = 0; n < ALONE_FORKS; n++) {
		int status = -1;
		pid_t pid;

		fflush(NULL);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			/* every cache, the arena and the pool work in it */
			void *e;

			for (int i = 0; i < ALONE_CACHES; i++) {
				void *p = segpool_cache_alloc(al->c[i], 0);

				if (!p)
					_exit(CHILD_CACHE_ALLOC);
				segpool_cache_free(al->c[i], p);
			}
			if (!segpool_arena_alloc(al->arena, 100, 8))
				_exit(CHILD_MALLOC);
			if (!(e = segpool_mempool_alloc(al->pool, 0)))
				_exit(CHILD_MALLOC);
			segpool_mempool_free(e, al->pool);
			_exit(CHILD_OK);
		}
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		check_status(n, status);
	}
	assert_int_equal(getrusage(RUSAGE_SELF, &after), 0);
	return (after.ru_minflt - before.ru_minflt) / ALONE_FORKS;
}

static void *idle_thread(void *arg)
{
	char byte;

	while (read(*(int *)arg, &byte, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static void test_fork_alone_child(void **state)
{
	struct alone al;
	long alone, locked;
	pthread_t th;
	int fd[2];

	(void)state;
	if (!getenv(ENV_ALONE)) {
		print_message("# runs in the child of test_fork_alone\n");
		return;
	}
	if (!__libc_single_threaded)
		skip();		/* a runtime under the program made a thread */
	for (int i = 0; i < ALONE_CACHES; i++) {
		char name[32];
		void *p;

		snprintf(name, sizeof(name), "tfk-alone-%d", i);
		al.c[i] = segpool_cache_create(name, 16 + 24 * (size_t)i, 0,
					       0, NULL);
		assert_non_null(al.c[i]);
		p = segpool_cache_alloc(al.c[i], 0);
		assert_non_null(p);
		segpool_cache_free(al.c[i], p);
	}
	al.arena = segpool_arena_create("tfk-alone", SEGPOOL_NUMA_NO_NODE, 0);
	assert_non_null(al.arena);
	assert_non_null(segpool_arena_alloc(al.arena, 100, 8));
	al.pool = segpool_mempool_create_kmalloc(4, 128);
	assert_non_null(al.pool);
	faults_per_fork(&al);	/* the pages the forks themselves touch */
	alone = faults_per_fork(&al);
	assert_int_equal(pipe(fd), 0);
	assert_int_equal(pthread_create(&th, NULL, idle_thread, &fd[0]), 0);
	assert_false(__libc_single_threaded);
	locked = faults_per_fork(&al);
	assert_int_equal(write(fd[1], "x", 1), 1);
	pthread_join(th, NULL);
	close(fd[0]);
	close(fd[1]);
	print_message("# parent's page faults a fork, %d caches: %ld alone, "
		      "%ld with a second thread\n", ALONE_CACHES, alone,
		      locked);
	assert_true(locked >= alone + ALONE_MIN_PAGES);
	segpool_mempool_destroy(al.pool);
	assert_int_equal(segpool_arena_destroy(al.arena), 0);
	for (int i = 0; i < ALONE_CACHES; i++)
		assert_int_equal(segpool_cache_destroy(al.c[i]), 0);
}

static void test_fork_alone(void **state)
{
	static const char *const env[] = { ENV_ALONE "=1", NULL };

	(void)state;
	if (getenv(ENV_ALONE))
		return;		/* we are that child */
	assert_int_equal(sp_test_rerun(env, "test_fork_alone_child"), 0);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_fork_single_thread),
	cmocka_unit_test(test_fork_alone),
	cmocka_unit_test(test_fork_alone_child),
	cmocka_unit_test(test_fork_from_main),
	cmocka_unit_test(test_fork_from_worker),
	cmocka_unit_test(test_fork_rcu_registered_threads),
	cmocka_unit_test(test_fork_exec_during_synchronize),
};

SP_TEST_MAIN(tests)
