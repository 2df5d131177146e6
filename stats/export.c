// SPDX-License-Identifier: MIT
/*
 * stats/export.c - publish this process's statistics in shared memory.
 *
 * Exporting is opt-in: SEGPOOL_EXPORT=1 at start-up (sp_export_init()) or
 * segpool_export_start().  It adds one thread, the publisher, and one POSIX
 * shared-memory segment "/segpool.<pid>" laid out as
 * include/segpool/export.h describes.  Every interval the publisher gathers
 * a snapshot of every cache into a private staging area laid out like the
 * segment (stats/export_snapshot.c), then copies it into the segment inside a
 * seqlock write: the sequence counter is odd while the copy runs, so a
 * reader in another process retries rather than use a torn snapshot.
 * Gathering takes the locks segpool_stats_dump() takes; the copy takes none
 * and is a few dozen kilobytes.  The allocation paths never look at any of
 * this, and a process that does not export runs none of it.
 *
 * Locks (lock order: see core/init.c, level 1):
 *   op_lock     serialises start, stop, exit and fork; held across the
 *               join of the publisher
 *   lock        the run state and the interval; the publisher sleeps on
 *               @wake under it
 *   pub_lock    one snapshot at a time: the staging area, the mapping of
 *               the segment and its layout
 * Only the gathering, under pub_lock, takes the library's own locks.
 * The publisher holds lock or pub_lock, never both.
 *
 * The seqlock, writer side (sp_export_write()): store seq + 1 (odd), copy
 * with 8-byte release stores (each keeps the odd count before it), store
 * seq + 2 with release.  Readers load seq with acquire, copy with 8-byte
 * acquire loads (each keeps the second load of seq after it) and load seq
 * again; the two loads must agree and be even.  No fences: on x86 every one
 * of these is a plain move, and ThreadSanitizer models them.  Every store
 * and load is atomic, so readers and writer never race in the C11 sense, in
 * one process or across two.
 *
 * Segment life: created O_CREAT | O_EXCL, mode 0600 (set again with
 * fchmod(), whatever the umask: viewers refuse any other mode, and a
 * segment not owned by the process's user).  A segment already
 * named after this pid is stale (its process is gone) and is replaced; one
 * that cannot be (another user's: planted) fails the start with EEXIST
 * and a message naming its owner and mode (sp_export_in_way()); and
 * the first start removes the segments of this user's dead processes that
 * have not been written for a minute.  The header's constant part is
 * written first and @magic stored last (release); a first snapshot is
 * published before segpool_export_start() returns.
 * When caches outnumber its records the segment grows (made longer, then
 * remapped: os/shm.c); it never shrinks, so a reader's mapping stays valid.
 * segpool_export_stop() and exit() unlink it.  In a child of fork() there
 * is no publisher: the child handler drops the child's copies of the
 * mappings and forgets the parent's segment without unlinking it.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <segpool/segpool.h>
#include <segpool/export.h>

#include "internal/init.h"
#include "internal/env.h"
#include "internal/report.h"
#include "numa/region.h"
#include "numa/topology.h"
#include "os/os.h"
#include "stats/export.h"

#define SP_EXPORT_MIN_CAPACITY	128U		/* cache records, at least */
#define SP_EXPORT_MAX_CAPACITY	(1U << 20)
/* see sp_export_sweep() */
#define SP_EXPORT_STALE_NS	(60ULL * 1000000000ULL)
#define SP_EXPORT_SHM_DIR	"/dev/shm"
#define SP_EXPORT_ENV		"SEGPOOL_EXPORT"
#define SP_EXPORT_CTL_POLL_MS	100	/* requests from outside: how soon */

static struct sp_exporter {
	pthread_mutex_t op_lock;
	pthread_mutex_t lock;
	pthread_mutex_t pub_lock;
	pthread_cond_t wake;		/* CLOCK_MONOTONIC;
					 * signalled under lock */
	/* --- under lock --- */
	bool running;			/* a publisher thread exists */
	bool stopping;			/* it is asked to end */
	bool kicked;			/* the interval changed:
					 * restart the wait */
	unsigned int interval_ms;
	/* --- under op_lock --- */
	pthread_t thread;
	pid_t owner;			/* process that created
					 * the segment, or 0 */
	bool swept;			/* dead processes' segments removed */
	char name[32];			/* "/segpool.<pid>" */
	/* --- under pub_lock --- */
	int fd;
	struct segpool_export_header *seg;	/* the segment, mapped shared */
	void *stage;			/* private area of the same layout */
	struct sp_export_layout layout;	/* of both */
	uint64_t seq;			/* last even value of seg->seq */
	uint64_t updates;
	uint32_t flags;			/* SEGPOOL_EXPORT_F_* */
} sp_exp = {
	.op_lock = PTHREAD_MUTEX_INITIALIZER,
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.pub_lock = PTHREAD_MUTEX_INITIALIZER,
	.fd = -1,
};

static pthread_once_t sp_export_once_ctl = PTHREAD_ONCE_INIT;

static uint64_t sp_export_now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void sp_export_cond_init(void)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&sp_exp.wake, &attr);
	pthread_condattr_destroy(&attr);
}

/* --- the segment ---------------------------------------------------------- */

/*
 * Copy @len bytes (a multiple of 8, both ends 8-aligned) into the segment
 * with 8-byte atomic stores, since readers load the same words
 * concurrently; release, so that none is seen before the odd count.
 */
static void sp_export_copy(void *dst, const void *src, size_t len)
{
	uint64_t *d = dst;
	const char *s = src;

	for (size_t i = 0; i < len / 8; i++) {
		uint64_t w;

		memcpy(&w, s + i * 8, sizeof(w));
		__atomic_store_n(&d[i], w, __ATOMIC_RELEASE);
	}
}

/*
 * The seqlock write of the stage's first @n caches, @na arenas.  pub_lock held.
 */
static void sp_export_write(uint32_t n, uint32_t na)
{
	const struct sp_export_layout *l = &sp_exp.layout;
	size_t var = offsetof(struct segpool_export_header, updates);
	char *dst = (char *)sp_exp.seg;
	const char *src = sp_exp.stage;

	/* odd: the release stores of the copy are not seen before this */
	__atomic_store_n(&sp_exp.seg->seq, sp_exp.seq + 1, __ATOMIC_RELAXED);
	sp_export_copy(dst + var, src + var,
		       sizeof(struct segpool_export_header) - var);
	sp_export_copy(dst + l->nodes_offset, src + l->nodes_offset,
		       l->nr_nodes * sizeof(struct segpool_export_node));
	sp_export_copy(dst + l->caches_offset, src + l->caches_offset,
		       n * sizeof(struct segpool_export_cache));
	sp_export_copy(dst + l->cache_nodes_offset, src + l->cache_nodes_offset,
		       (size_t)n * l->nr_nodes *
		       sizeof(struct segpool_export_cache_node));
	sp_export_copy(dst + l->arenas_offset, src + l->arenas_offset,
		       (size_t)na * sizeof(struct segpool_export_arena));
	/* the key table and its values (stats/export_snapshot.c) */
	sp_export_copy(dst + l->keys_offset, src + l->keys_offset,
		       l->keys_size);
	sp_export_copy(dst + l->values_offset, src + l->values_offset,
		       sp_export_values_size(l, n, false));
	sp_export_copy(dst + l->node_values_offset, src + l->node_values_offset,
		       sp_export_values_size(l, n, true));
	sp_export_copy(dst + l->health_values_offset,
		       src + l->health_values_offset, l->health_values_size);
	sp_exp.seq += 2;
	/* every store of the snapshot is visible before the even count */
	__atomic_store_n(&sp_exp.seg->seq, sp_exp.seq, __ATOMIC_RELEASE);
}

/* Room for @need caches: grow the segment, then a new stage.  pub_lock held. */
static int sp_export_grow(uint32_t need)
{
	struct sp_export_layout nl;
	uint32_t cap = sp_exp.layout.capacity;
	void *seg, *stage;

	while (cap < need + need / 4 && cap < SP_EXPORT_MAX_CAPACITY)
		cap *= 2;
	if (cap < need)
		return -ENOSPC;
	sp_export_layout(&nl, sp_exp.layout.nr_nodes, cap);
	stage = sp_os_map_meta(nl.size);
	if (!stage)
		return -errno;
	/* a longer file leaves every reader's shorter mapping valid */
	if (sp_os_shm_resize(sp_exp.fd, nl.size) ||
	    !(seg = sp_os_remap(sp_exp.seg, sp_exp.layout.size, nl.size,
					  false))) {
		int err = -errno;

		sp_os_unmap(stage, nl.size);
		return err;
	}
	sp_os_unmap(sp_exp.stage, sp_exp.layout.size);
	sp_exp.seg = seg;
	sp_exp.stage = stage;
	sp_exp.layout = nl;
	return 0;
}

/* Gather a snapshot and publish it.  pub_lock held, a segment mapped. */
static void sp_export_publish(unsigned int interval_ms)
{
	uint64_t t0 = sp_export_now(CLOCK_MONOTONIC);
	struct segpool_export_header *h;
	struct segpool_export_cache *recs;
	struct segpool_export_arena *arecs;
	uint32_t n, na;

	sp_exp.flags &= ~SEGPOOL_EXPORT_F_TRUNCATED;
	for (;;) {
		n = sp_export_collect(sp_exp.stage, &sp_exp.layout);
		na = sp_export_collect_arenas(sp_exp.stage, &sp_exp.layout);
		if (n <= sp_exp.layout.capacity && na <= sp_exp.layout.capacity)
			break;
		if (sp_export_grow(SP_MAX(n, na))) {
			sp_exp.flags |= SEGPOOL_EXPORT_F_TRUNCATED;
			n = SP_MIN(n, sp_exp.layout.capacity);
			na = SP_MIN(na, sp_exp.layout.capacity);
			break;
		}
	}
	h = sp_exp.stage;
	recs = (struct segpool_export_cache *)((char *)sp_exp.stage +
					       sp_exp.layout.caches_offset);
	h->updates = ++sp_exp.updates;
	h->monotonic_ns = sp_export_now(CLOCK_MONOTONIC);
	h->realtime_ns = sp_export_now(CLOCK_REALTIME);
	h->segment_size = sp_exp.layout.size;
	h->interval_ms = interval_ms;
	h->flags = sp_exp.flags;
	h->capacity = sp_exp.layout.capacity;
	h->nr_caches = n;
	h->nodes_offset = sp_exp.layout.nodes_offset;
	h->caches_offset = sp_exp.layout.caches_offset;
	h->cache_nodes_offset = sp_exp.layout.cache_nodes_offset;
	h->arena_capacity = sp_exp.layout.capacity;
	h->nr_arenas = na;
	h->arenas_offset = sp_exp.layout.arenas_offset;
	h->keys_offset = sp_exp.layout.keys_offset;
	h->nr_cache_keys = sp_exp.layout.nr_keys[0];
	h->nr_node_keys = sp_exp.layout.nr_keys[1];
	h->nr_health_keys = sp_exp.layout.nr_keys[2];
	h->nr_health_node_keys = sp_exp.layout.nr_keys[3];
	h->values_offset = sp_exp.layout.values_offset;
	h->collect_ns = h->monotonic_ns - t0;
	for (uint32_t i = 0; i < n; i++)
		recs[i].update = h->updates;
	arecs = (struct segpool_export_arena *)((char *)sp_exp.stage +
						sp_exp.layout.arenas_offset);
	for (uint32_t i = 0; i < na; i++)
		arecs[i].update = h->updates;
	sp_export_write(n, na);
}

/* The header's constant part; @magic last.  pub_lock held. */
static void sp_export_fill_header(struct segpool_export_header *h)
{
	h->layout_version = SEGPOOL_EXPORT_LAYOUT_VERSION;
	h->header_size = sizeof(struct segpool_export_header);
	h->cache_size = sizeof(struct segpool_export_cache);
	h->cache_node_size = sizeof(struct segpool_export_cache_node);
	h->node_size = sizeof(struct segpool_export_node);
	h->arena_size = sizeof(struct segpool_export_arena);
	h->pid = (int32_t)sp_os_pid();
	h->nr_nodes = sp_exp.layout.nr_nodes;
	h->nr_cpus = (uint32_t)sp_topo.nr_cpus;
	h->page_size = (uint32_t)SP_PAGE_SIZE;
	h->start_realtime_ns = sp_export_now(CLOCK_REALTIME);
	snprintf(h->version, sizeof(h->version), "%s", segpool_version());
	snprintf(h->percpu_mode, sizeof(h->percpu_mode), "%s",
		 segpool_percpu_mode());
	snprintf(h->comm, sizeof(h->comm), "%s", program_invocation_short_name);
	/* a reader that sees the magic sees all of the above */
	__atomic_store_n(&h->magic, SEGPOOL_EXPORT_MAGIC, __ATOMIC_RELEASE);
}

/* Unmap (and, in the owner, unlink) the segment.  op_lock, pub_lock held. */
static void sp_export_destroy(void)
{
	sp_export_ctl_destroy(sp_exp.owner == sp_os_pid());
	if (sp_exp.owner == sp_os_pid())
		sp_os_shm_unlink(sp_exp.name);
	if (sp_exp.seg)
		sp_os_unmap(sp_exp.seg, sp_exp.layout.size);
	if (sp_exp.stage)
		sp_os_unmap(sp_exp.stage, sp_exp.layout.size);
	if (sp_exp.fd >= 0)
		sp_os_close(sp_exp.fd);
	sp_exp.seg = NULL;
	sp_exp.stage = NULL;
	sp_exp.fd = -1;
	sp_exp.owner = 0;
}

/*
 * Say whose file holds our segment's name: planted by another user before
 * we started (a viewer would take its contents for ours), or left by a
 * process of another user that had our pid.  We cannot remove it.
 */
static void sp_export_in_way(const struct stat *st)
{
	const char *kind = S_ISREG(st->st_mode) ? "file" :
			   S_ISFIFO(st->st_mode) ? "FIFO" :
			   S_ISLNK(st->st_mode) ? "symbolic link" :
			   S_ISDIR(st->st_mode) ? "directory" : "special file";

	if (!st->st_mode) {
		sp_warn("export: " SP_EXPORT_SHM_DIR "%s exists and cannot be "
			"replaced nor examined: not exporting", sp_exp.name);
		return;
	}
	sp_warn("export: " SP_EXPORT_SHM_DIR "%s is in the way: a %s of uid "
		"%u, mode %04o, that this process (uid %u) cannot remove; "
		"not exporting (remove it as its owner or root)", sp_exp.name,
		kind, (unsigned int)st->st_uid,
		(unsigned int)(st->st_mode & 07777), sp_os_euid());
}

/* Create and map the segment and the stage.  op_lock, pub_lock held. */
static int sp_export_create(void)
{
	uint32_t cap = SP_EXPORT_MIN_CAPACITY, n = sp_export_count_caches();
	struct sp_export_layout *l = &sp_exp.layout;
	struct stat in_way;
	void *seg, *stage;
	int fd, err;

	while (cap < 2 * n && cap < SP_EXPORT_MAX_CAPACITY)
		cap *= 2;
	sp_export_layout(l, (uint32_t)sp_space.nr_regions, cap);
	snprintf(sp_exp.name, sizeof(sp_exp.name), "%s%d",
		 SEGPOOL_EXPORT_SHM_PREFIX, sp_os_pid());
	fd = sp_os_shm_create(sp_exp.name, &in_way);
	if (fd < 0 && errno == EEXIST) {
		sp_export_in_way(&in_way);
		return -EEXIST;
	}
	if (fd < 0)
		return -errno;
	stage = NULL;
	seg = NULL;
	if (sp_os_shm_resize(fd, l->size) ||
	    !(seg = sp_os_map_shared(fd, l->size, true)) ||
	    !(stage = sp_os_map_meta(l->size))) {
		err = -errno;
		if (seg)
			sp_os_unmap(seg, l->size);
		sp_os_close(fd);
		sp_os_shm_unlink(sp_exp.name);
		return err;
	}
	sp_exp.fd = fd;
	sp_exp.seg = seg;
	sp_exp.stage = stage;
	sp_exp.owner = sp_os_pid();
	sp_exp.seq = 0;
	sp_exp.updates = 0;
	sp_exp.flags = 0;
	/* requests from outside: without it the statistics still go out */
	sp_export_ctl_create(sp_exp.name);
	sp_export_fill_header(sp_exp.seg);
	return 0;
}

/*
 * Has the segment @name been silent for a minute?  Until then a viewer may
 * still want to say that its process just died; after, it is litter.
 */
static bool sp_export_silent(const char *name)
{
	/* only a regular file of this user (os/shm.c) */
	struct stat st;
	int fd = sp_os_shm_open_own(name, &st);
	uint64_t now = sp_export_now(CLOCK_REALTIME), last;
	struct segpool_export_header *h;

	if (fd < 0)
		return false;
	last = (uint64_t)st.st_mtim.tv_sec * 1000000000ULL +
	       (uint64_t)st.st_mtim.tv_nsec;
	if ((size_t)st.st_size >= sizeof(*h)) {
		h = sp_os_map_shared(fd, sizeof(*h), false);
		if (h) {
			/* its writer is gone: nothing changes under us */
			uint64_t t = __atomic_load_n(&h->realtime_ns,
						     __ATOMIC_RELAXED);

			if (t)
				last = t;
			sp_os_unmap(h, sizeof(*h));
		}
	}
	sp_os_close(fd);
	return now > last && now - last > SP_EXPORT_STALE_NS;
}

/*
 * Remove the segments of this user's processes that are gone (killed
 * before their exit handlers ran) and that have been silent for a minute.
 * Best effort; op_lock held.
 */
static void sp_export_sweep_one(const char *name, void *arg)
{
	size_t plen = strlen(SEGPOOL_EXPORT_SHM_PREFIX) - 1;
	char *end, shm[256 + 1];
	long pid;

	(void)arg;
	if (strncmp(name, &SEGPOOL_EXPORT_SHM_PREFIX[1], plen))
		return;
	errno = 0;
	pid = strtol(name + plen, &end, 10);
	if (end == name + plen || errno || pid <= 0 || pid == sp_os_pid())
		return;
	if (*end && strcmp(end, SEGPOOL_EXPORT_CTL_SUFFIX))
		return;
	if (!sp_os_pid_gone(pid))
		return;
	if (*end) {
		/* a control segment: litter once its segment went */
		char seg[256 + 1];
		struct stat st;
		int fd;

		snprintf(seg, sizeof(seg), "%.*s", (int)(end - name), name);
		fd = sp_os_shm_open_own(seg, &st);
		if (fd >= 0) {
			sp_os_close(fd);
			return;
		}
		if (errno != ENOENT)
			return;
		snprintf(shm, sizeof(shm), "/%s", name);
		sp_os_shm_unlink(shm);
		return;
	}
	if (!sp_export_silent(name))
		return;
	snprintf(shm, sizeof(shm), "/%s", name);
	sp_os_shm_unlink(shm);
}

static void sp_export_sweep(void)
{
	sp_os_shm_each(sp_export_sweep_one, NULL);
}

/* --- the publisher -------------------------------------------------------- */

static void sp_export_add_ms(struct timespec *ts, unsigned int ms)
{
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static bool sp_export_ts_after(const struct timespec *a,
			       const struct timespec *b)
{
	return a->tv_sec > b->tv_sec ||
	       (a->tv_sec == b->tv_sec && a->tv_nsec >= b->tv_nsec);
}

static void *sp_export_thread(void *arg)
{
	struct timespec next, now;

	(void)arg;
	sp_os_name_thread("segpool-export");
	clock_gettime(CLOCK_MONOTONIC, &next);
	pthread_mutex_lock(&sp_exp.lock);
	for (;;) {
		unsigned int interval = sp_exp.interval_ms;

		sp_export_add_ms(&next, interval);
		/* in slices, to serve a request from outside meanwhile */
		while (!sp_exp.stopping && !sp_exp.kicked) {
			struct timespec slice;

			clock_gettime(CLOCK_MONOTONIC, &slice);
			if (sp_export_ts_after(&slice, &next))
				break;		/* time for a snapshot */
			sp_export_add_ms(&slice, SP_EXPORT_CTL_POLL_MS);
			if (sp_export_ts_after(&slice, &next))
				slice = next;
			if (pthread_cond_timedwait(&sp_exp.wake, &sp_exp.lock,
						   &slice) == ETIMEDOUT &&
			    sp_export_ctl_pending()) {
				pthread_mutex_unlock(&sp_exp.lock);
				sp_export_ctl_serve();
				pthread_mutex_lock(&sp_exp.lock);
			}
		}
		if (sp_exp.stopping)
			break;
		if (sp_exp.kicked) {
			/* a new interval counts from now */
			sp_exp.kicked = false;
			clock_gettime(CLOCK_MONOTONIC, &next);
			continue;
		}
		pthread_mutex_unlock(&sp_exp.lock);

		pthread_mutex_lock(&sp_exp.pub_lock);
		sp_export_publish(interval);
		pthread_mutex_unlock(&sp_exp.pub_lock);

		pthread_mutex_lock(&sp_exp.lock);
		/*
		 * fell a whole interval behind (stopped process): from now on
		 */
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > next.tv_sec + 1 + (time_t)(interval / 1000))
			next = now;
	}
	pthread_mutex_unlock(&sp_exp.lock);
	return NULL;
}

/* Start the publisher with every signal blocked: none is ours to take. */
static int sp_export_spawn(void)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&sp_exp.thread, NULL, sp_export_thread, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -err;
}

/* --- start, stop, exit, fork ---------------------------------------------- */

static int sp_export_start_locked(unsigned int interval_ms)
{
	int err;

	pthread_mutex_lock(&sp_exp.lock);
	if (sp_exp.running) {
		sp_exp.interval_ms = interval_ms;
		sp_exp.kicked = true;
		pthread_cond_signal(&sp_exp.wake);
		pthread_mutex_unlock(&sp_exp.lock);
		return 0;
	}
	pthread_mutex_unlock(&sp_exp.lock);

	if (!sp_exp.swept) {
		sp_export_sweep();
		sp_exp.swept = true;
	}
	pthread_mutex_lock(&sp_exp.pub_lock);
	err = sp_export_create();
	if (!err)
		sp_export_publish(interval_ms);
	pthread_mutex_unlock(&sp_exp.pub_lock);
	if (err)
		return err;

	pthread_mutex_lock(&sp_exp.lock);
	sp_exp.running = true;
	sp_exp.stopping = false;
	sp_exp.kicked = false;
	sp_exp.interval_ms = interval_ms;
	pthread_mutex_unlock(&sp_exp.lock);
	err = sp_export_spawn();
	if (err) {
		pthread_mutex_lock(&sp_exp.lock);
		sp_exp.running = false;
		pthread_mutex_unlock(&sp_exp.lock);
		pthread_mutex_lock(&sp_exp.pub_lock);
		sp_export_destroy();
		pthread_mutex_unlock(&sp_exp.pub_lock);
	}
	return err;
}

static int sp_export_stop_locked(void)
{
	pthread_mutex_lock(&sp_exp.lock);
	if (!sp_exp.running) {
		pthread_mutex_unlock(&sp_exp.lock);
		return -ENOENT;
	}
	sp_exp.stopping = true;
	pthread_cond_signal(&sp_exp.wake);
	pthread_mutex_unlock(&sp_exp.lock);

	pthread_join(sp_exp.thread, NULL);

	pthread_mutex_lock(&sp_exp.lock);
	sp_exp.running = false;
	sp_exp.stopping = false;
	pthread_mutex_unlock(&sp_exp.lock);
	pthread_mutex_lock(&sp_exp.pub_lock);
	sp_export_destroy();
	pthread_mutex_unlock(&sp_exp.pub_lock);
	return 0;
}

static void sp_export_atexit(void)
{
	pthread_mutex_lock(&sp_exp.op_lock);
	if (sp_exp.owner == sp_os_pid())
		sp_export_stop_locked();
	pthread_mutex_unlock(&sp_exp.op_lock);
}

static void sp_export_atfork_prepare(void)
{
	pthread_mutex_lock(&sp_exp.op_lock);
	pthread_mutex_lock(&sp_exp.lock);
	pthread_mutex_lock(&sp_exp.pub_lock);
}

static void sp_export_atfork_parent(void)
{
	pthread_mutex_unlock(&sp_exp.pub_lock);
	pthread_mutex_unlock(&sp_exp.lock);
	pthread_mutex_unlock(&sp_exp.op_lock);
}

/*
 * The publisher was not copied and the segment is the parent's: let go.
 * The locks were taken by the thread that forked, which is the child's
 * only thread: it releases them.  The condvar may count the parent's
 * sleeping publisher as a waiter: it starts afresh.
 */
static void sp_export_atfork_child(void)
{
	sp_export_cond_init();
	sp_exp.running = false;
	sp_exp.stopping = false;
	sp_exp.kicked = false;
	sp_exp.owner = 0;		/* so the next line does not unlink */
	sp_export_destroy();
	pthread_mutex_unlock(&sp_exp.pub_lock);
	pthread_mutex_unlock(&sp_exp.lock);
	pthread_mutex_unlock(&sp_exp.op_lock);
}

/* Once per process, before the first start: the hooks and the condvar. */
static void sp_export_once(void)
{
	sp_export_cond_init();
	/* after the library's own handlers: prepare runs first, child last */
	pthread_atfork(sp_export_atfork_prepare, sp_export_atfork_parent,
		       sp_export_atfork_child);
	atexit(sp_export_atexit);
}

SEGPOOL_API int segpool_export_start(unsigned int interval_ms)
{
	int err;

	if (interval_ms == 0)
		interval_ms = SEGPOOL_EXPORT_INTERVAL_DEFAULT;
	if (interval_ms < SEGPOOL_EXPORT_INTERVAL_MIN ||
	    interval_ms > SEGPOOL_EXPORT_INTERVAL_MAX) {
		errno = EINVAL;
		return -EINVAL;
	}
	if (sp_init())
		return -ENOMEM;
	pthread_once(&sp_export_once_ctl, sp_export_once);
	pthread_mutex_lock(&sp_exp.op_lock);
	err = sp_export_start_locked(interval_ms);
	pthread_mutex_unlock(&sp_exp.op_lock);
	if (err)
		errno = -err;
	return err;
}

SEGPOOL_API int segpool_export_stop(void)
{
	int err;

	pthread_mutex_lock(&sp_exp.op_lock);
	err = sp_export_stop_locked();
	pthread_mutex_unlock(&sp_exp.op_lock);
	if (err)
		errno = -err;
	return err;
}

void sp_export_init(void)
{
	/* checked even when not exporting: every setting is */
	unsigned long ms = (unsigned long)sp_env_number(
		SP_ENV_EXPORT_INTERVAL_MS, SEGPOOL_EXPORT_INTERVAL_DEFAULT);
	int err;

	if (!sp_env_bool(SP_ENV_EXPORT, false))
		return;
	if (!__atomic_load_n(&sp_ready, __ATOMIC_ACQUIRE)) {
		sp_warn(SP_EXPORT_ENV ": library not ready: not exporting");
		return;
	}
	err = segpool_export_start((unsigned int)ms);
	if (err)
		sp_warn(SP_EXPORT_ENV ": cannot publish statistics: %s",
			strerror(-err));
}
