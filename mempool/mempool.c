// SPDX-License-Identifier: MIT
/*
 * mempool/mempool.c - memory pools with a guaranteed reserve (the kernel's
 * mm/mempool.c, in userspace).
 *
 * A pool is an allocator (alloc_fn/free_fn over pool_data) and a reserve:
 * an array of up to min_nr elements allocated when the pool is made.
 *
 *   alloc: try the allocator first (without SEGPOOL_WAIT, quietly); when
 *          it fails take the top of the reserve under the pool's lock;
 *          when the reserve is empty, try the allocator once more with the
 *          caller's full gfp, then either fail (no SEGPOOL_WAIT) or sleep
 *          on the pool's condition variable for up to a second and start
 *          over.  The allocator is never called with the lock held.
 *   free:  when the reserve is short (an unlocked look, confirmed under
 *          the lock), the element goes into it and one waiter is woken;
 *          otherwise it goes back to the allocator.
 *
 * So the reserve only ever holds elements nobody else has, each element is
 * in at most one place (the reserve, a caller, or the allocator), and a
 * waiter wakes when the first element comes back.  A free that misses a
 * short reserve because it looked just before an allocation took from it
 * sends its element to the allocator; the waiter then finds the allocator
 * (or the next free) within its one-second timeout, as the kernel's
 * five-second io_schedule_timeout() does.
 *
 * Pools are on one list (the statistics walk it).  Lock order: see
 * core/init.c, level 1.  A pool's resize lock is held while a resize
 * allocates (never taken at fork, only re-initialised in the child);
 * nothing is allocated or freed while the list lock or a pool's lock is
 * held.  Across fork the handlers take both (list, then every pool) so
 * that the child's copies are consistent; the child re-initialises them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <segpool/segpool.h>
#include <segpool/mempool.h>

#include "internal/compiler.h"
#include "internal/list.h"
#include "internal/report.h"
#include "mempool/mempool.h"
#include "os/os.h"

/* How long a waiter sleeps before it asks the allocator again. */
#define SP_MEMPOOL_WAIT_SEC	1

/*
 * struct segpool_mempool - a pool.  Written under @lock: @elements,
 * @curr_nr, @min_nr, @waiters; the counters are atomic.
 */
struct segpool_mempool {
	pthread_mutex_t lock;			/* the reserve */
	pthread_mutex_t resize_lock;		/* one resize at a time */
	int curr_nr;				/* elements in @elements */
	int min_nr;				/* the reserve when full */
	void **elements;			/* min_nr slots */
	segpool_mempool_alloc_fn *alloc_fn;
	segpool_mempool_free_fn *free_fn;
	void *pool_data;
	unsigned int magic;			/* SP_MEMPOOL_MAGIC
						 * while live */
	unsigned int waiters;			/* callers asleep on @wait */
	pthread_cond_t wait;			/* an element came back */
	int64_t outstanding;			/* handed out, not freed */
	uint64_t reserve_allocs;
	uint64_t alloc_failed;
	uint64_t waits;
	struct sp_list_head list;		/* on sp_mempools */
	char name[SP_POOL_NAME_MAX];		/* "slab:<cache>", ... */
};

static pthread_mutex_t sp_mempools_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sp_list_head sp_mempools = { &sp_mempools, &sp_mempools };
static unsigned long sp_mempools_seq;		/* names custom pools */
static pthread_once_t sp_mempool_once = PTHREAD_ONCE_INIT;

/* As the library's own handler: no lock taken in a process that never
 * had a second thread (core/init.c). */
static bool sp_mempool_fork_alone;

static void sp_mempool_fork_prepare(void)
{
	struct segpool_mempool *p;

	sp_mempool_fork_alone = sp_os_single_threaded();
	if (sp_mempool_fork_alone)
		return;
	pthread_mutex_lock(&sp_mempools_lock);
	sp_list_for_each_entry(p, &sp_mempools, list)
		pthread_mutex_lock(&p->lock);
}

static void sp_mempool_fork_parent(void)
{
	struct segpool_mempool *p;

	if (sp_mempool_fork_alone)
		return;
	sp_list_for_each_entry(p, &sp_mempools, list)
		pthread_mutex_unlock(&p->lock);
	pthread_mutex_unlock(&sp_mempools_lock);
}

static void sp_mempool_fork_child(void)
{
	struct segpool_mempool *p;

	if (sp_mempool_fork_alone)
		return;
	sp_list_for_each_entry(p, &sp_mempools, list) {
		pthread_mutex_init(&p->lock, NULL);
		pthread_mutex_init(&p->resize_lock, NULL);
		p->waiters = 0;		/* the waiters stayed in the parent */
	}
	pthread_mutex_init(&sp_mempools_lock, NULL);
}

static void sp_mempool_setup(void)
{
	pthread_atfork(sp_mempool_fork_prepare, sp_mempool_fork_parent,
		       sp_mempool_fork_child);
	sp_stats_pools_register(sp_mempool_walk);
}

static bool sp_pool_ok(const struct segpool_mempool *pool)
{
	return pool && pool->magic == SP_MEMPOOL_MAGIC;
}

/* Free @n elements with the pool's free function (no lock held). */
static void sp_mempool_free_elems(struct segpool_mempool *pool, void **elems,
				  int n)
{
	for (int i = 0; i < n; i++)
		pool->free_fn(elems[i], pool->pool_data);
}

/* Give back a pool's elements, locks and memory (it is off every list). */
static void sp_mempool_teardown(struct segpool_mempool *pool)
{
	sp_mempool_free_elems(pool, pool->elements, pool->curr_nr);
	pthread_cond_destroy(&pool->wait);
	pthread_mutex_destroy(&pool->lock);
	pthread_mutex_destroy(&pool->resize_lock);
	segpool_kfree(pool->elements);
	segpool_kfree(pool);
}

static int sp_mempool_init_cond(pthread_cond_t *c)
{
	pthread_condattr_t a;
	int ret;

	if (pthread_condattr_init(&a))
		return -ENOMEM;
	ret = pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	if (!ret)
		ret = pthread_cond_init(c, &a);
	pthread_condattr_destroy(&a);
	return ret ? -ENOMEM : 0;
}

/* The pool with its name and functions set, reserve filled; or NULL. */
static struct segpool_mempool *
sp_mempool_new(int min_nr, segpool_mempool_alloc_fn *alloc_fn,
	       segpool_mempool_free_fn *free_fn, void *pool_data,
	       unsigned int gfp, int node, const char *kind, const char *what)
{
	struct segpool_mempool *pool;

	if (min_nr < 1 || min_nr > SEGPOOL_MEMPOOL_MAX || !alloc_fn ||
	    !free_fn) {
		errno = EINVAL;
		return NULL;
	}
	pthread_once(&sp_mempool_once, sp_mempool_setup);
	pool = segpool_kmalloc_node(sizeof(*pool),
				    SEGPOOL_ZERO | SEGPOOL_NOWARN, node);
	if (!pool)
		return NULL;
	pool->elements = segpool_kmalloc_node((size_t)min_nr * sizeof(void *),
					      SEGPOOL_NOWARN, node);
	if (!pool->elements || sp_mempool_init_cond(&pool->wait)) {
		segpool_kfree(pool->elements);
		segpool_kfree(pool);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&pool->lock, NULL);
	pthread_mutex_init(&pool->resize_lock, NULL);
	pool->min_nr = min_nr;
	pool->alloc_fn = alloc_fn;
	pool->free_fn = free_fn;
	pool->pool_data = pool_data;
	while (pool->curr_nr < min_nr) {
		void *e = alloc_fn(gfp & ~SEGPOOL_NOFAIL, pool_data);

		if (!e) {
			sp_mempool_teardown(pool);
			errno = ENOMEM;
			return NULL;
		}
		pool->elements[pool->curr_nr++] = e;
	}
	pool->magic = SP_MEMPOOL_MAGIC;
	pthread_mutex_lock(&sp_mempools_lock);
	if (what)
		snprintf(pool->name, sizeof(pool->name), "%s:%s", kind, what);
	else
		snprintf(pool->name, sizeof(pool->name), "%s:%lu", kind,
			 ++sp_mempools_seq);
	sp_list_add_tail(&pool->list, &sp_mempools);
	pthread_mutex_unlock(&sp_mempools_lock);
	return pool;
}

SEGPOOL_API struct segpool_mempool *
segpool_mempool_create(int min_nr, segpool_mempool_alloc_fn *alloc_fn,
		       segpool_mempool_free_fn *free_fn, void *pool_data,
		       unsigned int gfp, int node)
{
	return sp_mempool_new(min_nr, alloc_fn, free_fn, pool_data, gfp, node,
			      "custom", NULL);
}

SEGPOOL_API void *segpool_mempool_alloc_cache(unsigned int gfp, void *data)
{
	return segpool_cache_alloc(data, gfp & SEGPOOL_GFP_VALID);
}

SEGPOOL_API void segpool_mempool_free_cache(void *elem, void *data)
{
	segpool_cache_free(data, elem);
}

SEGPOOL_API void *segpool_mempool_alloc_kmalloc(unsigned int gfp, void *data)
{
	return segpool_kmalloc((size_t)(uintptr_t)data,
			       gfp & SEGPOOL_KMALLOC_GFP_VALID &
				       ~SEGPOOL_NOFAIL);
}

SEGPOOL_API void segpool_mempool_free_kmalloc(void *elem, void *data)
{
	(void)data;
	segpool_kfree(elem);
}

SEGPOOL_API struct segpool_mempool *
segpool_mempool_create_cache(int min_nr, struct segpool_cache *cache)
{
	const char *name = segpool_cache_name(cache);

	if (!name)
		return NULL;		/* errno EINVAL */
	return sp_mempool_new(min_nr, segpool_mempool_alloc_cache,
			      segpool_mempool_free_cache, cache, SEGPOOL_WAIT,
			      SEGPOOL_NUMA_NO_NODE, "slab", name);
}

SEGPOOL_API struct segpool_mempool *
segpool_mempool_create_kmalloc(int min_nr, size_t size)
{
	char what[24];

	if (size == 0 || size > SEGPOOL_KMALLOC_MAX_CACHE_SIZE) {
		errno = EINVAL;
		return NULL;
	}
	snprintf(what, sizeof(what), "%zu", size);
	return sp_mempool_new(min_nr, segpool_mempool_alloc_kmalloc,
			      segpool_mempool_free_kmalloc,
			      (void *)(uintptr_t)size, SEGPOOL_WAIT,
			      SEGPOOL_NUMA_NO_NODE, "kmalloc", what);
}

/* Sleep on @pool->wait for up to SP_MEMPOOL_WAIT_SEC (lock held). */
static void sp_mempool_sleep(struct segpool_mempool *pool)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += SP_MEMPOOL_WAIT_SEC;
	pool->waiters++;
	__atomic_fetch_add(&pool->waits, 1, __ATOMIC_RELAXED);
	pthread_cond_timedwait(&pool->wait, &pool->lock, &ts);
	pool->waiters--;
}

SEGPOOL_API void *segpool_mempool_alloc(struct segpool_mempool *pool,
					unsigned int gfp)
{
	unsigned int full, first;

	if (unlikely(!sp_pool_ok(pool) || (gfp & SEGPOOL_ZERO))) {
		errno = EINVAL;
		return NULL;
	}
	full = (gfp & ~SEGPOOL_NOFAIL) | SEGPOOL_NOWARN;
	first = full & ~SEGPOOL_WAIT;
	for (;;) {
		void *elem = pool->alloc_fn(first, pool->pool_data);

		if (likely(elem))
			goto out;
		pthread_mutex_lock(&pool->lock);
		if (likely(pool->curr_nr)) {
			elem = pool->elements[--pool->curr_nr];
			pthread_mutex_unlock(&pool->lock);
			__atomic_fetch_add(&pool->reserve_allocs, 1,
					   __ATOMIC_RELAXED);
			goto out;
		}
		if (first != full) {
			/* the reserve is empty: now the allocator may wait */
			pthread_mutex_unlock(&pool->lock);
			first = full;
			continue;
		}
		if (!(gfp & SEGPOOL_WAIT)) {
			pthread_mutex_unlock(&pool->lock);
			__atomic_fetch_add(&pool->alloc_failed, 1,
					   __ATOMIC_RELAXED);
			errno = ENOMEM;
			return NULL;
		}
		sp_mempool_sleep(pool);
		pthread_mutex_unlock(&pool->lock);
		first = full & ~SEGPOOL_WAIT;
		continue;
out:
		__atomic_fetch_add(&pool->outstanding, 1, __ATOMIC_RELAXED);
		return elem;
	}
}

SEGPOOL_API void segpool_mempool_free(void *elem, struct segpool_mempool *pool)
{
	if (unlikely(!elem))
		return;
	if (unlikely(!sp_pool_ok(pool)))
		sp_report_bad_free("mempool_free into invalid pool", elem,
				   NULL);
	__atomic_fetch_sub(&pool->outstanding, 1, __ATOMIC_RELAXED);
	if (unlikely(SP_READ_ONCE(pool->curr_nr) <
		     SP_READ_ONCE(pool->min_nr))) {
		pthread_mutex_lock(&pool->lock);
		if (likely(pool->curr_nr < pool->min_nr)) {
			pool->elements[pool->curr_nr++] = elem;
			if (pool->waiters)
				pthread_cond_signal(&pool->wait);
			pthread_mutex_unlock(&pool->lock);
			return;
		}
		pthread_mutex_unlock(&pool->lock);
	}
	pool->free_fn(elem, pool->pool_data);
}

/* segpool_mempool_resize() with @pool->resize_lock held. */
static int sp_mempool_resize(struct segpool_mempool *pool, int new_min_nr)
{
	void **arr, **extra = NULL, **old = NULL;
	int n = 0, need;

	pthread_mutex_lock(&pool->lock);
	if (new_min_nr <= pool->min_nr) {
		/* shrink: the elements above the new size go back */
		n = pool->curr_nr > new_min_nr ? pool->curr_nr - new_min_nr : 0;
		pool->curr_nr -= n;
		pool->min_nr = new_min_nr;
		pthread_mutex_unlock(&pool->lock);
		/*
		 * elements[curr_nr ..] are ours now: nobody reads past curr_nr
		 */
		sp_mempool_free_elems(pool, pool->elements + new_min_nr, n);
		return 0;
	}
	need = new_min_nr - pool->curr_nr;
	pthread_mutex_unlock(&pool->lock);

	/* grow: everything allocated first, installed in one step */
	arr = segpool_kmalloc((size_t)new_min_nr * sizeof(void *),
			      SEGPOOL_NOWARN);
	extra = segpool_kmalloc((size_t)need * sizeof(void *), SEGPOOL_NOWARN);
	if (!arr || !extra)
		goto nomem;
	for (n = 0; n < need; n++) {
		extra[n] = pool->alloc_fn(SEGPOOL_WAIT | SEGPOOL_NOWARN,
					  pool->pool_data);
		if (!extra[n])
			goto nomem;
	}
	pthread_mutex_lock(&pool->lock);
	memcpy(arr, pool->elements, (size_t)pool->curr_nr * sizeof(void *));
	old = pool->elements;
	pool->elements = arr;
	pool->min_nr = new_min_nr;
	while (n && pool->curr_nr < new_min_nr) {
		pool->elements[pool->curr_nr++] = extra[--n];
		if (pool->waiters)
			pthread_cond_signal(&pool->wait);
	}
	pthread_mutex_unlock(&pool->lock);
	/* frees that refilled it meanwhile leave some of ours over */
	sp_mempool_free_elems(pool, extra, n);
	segpool_kfree(extra);
	segpool_kfree(old);
	return 0;
nomem:
	sp_mempool_free_elems(pool, extra, n);
	segpool_kfree(extra);
	segpool_kfree(arr);
	errno = ENOMEM;
	return -ENOMEM;
}

SEGPOOL_API int segpool_mempool_resize(struct segpool_mempool *pool,
				       int new_min_nr)
{
	int ret;

	if (!sp_pool_ok(pool) || new_min_nr < 1 ||
	    new_min_nr > SEGPOOL_MEMPOOL_MAX) {
		errno = EINVAL;
		return -EINVAL;
	}
	pthread_mutex_lock(&pool->resize_lock);
	ret = sp_mempool_resize(pool, new_min_nr);
	pthread_mutex_unlock(&pool->resize_lock);
	return ret;
}

SEGPOOL_API void segpool_mempool_destroy(struct segpool_mempool *pool)
{
	if (!pool)
		return;
	if (!sp_pool_ok(pool)) {
		sp_warn("mempool_destroy of invalid pool %p", (void *)pool);
		return;
	}
	pthread_mutex_lock(&sp_mempools_lock);
	sp_list_del(&pool->list);
	pthread_mutex_unlock(&sp_mempools_lock);
	pool->magic = 0;
	sp_mempool_teardown(pool);
}

SEGPOOL_API int segpool_mempool_get_stats(struct segpool_mempool *pool,
					  struct segpool_mempool_stats *st)
{
	int64_t out;

	if (!sp_pool_ok(pool) || !st || st->size < sizeof(*st)) {
		errno = EINVAL;
		return -EINVAL;
	}
	pthread_mutex_lock(&pool->lock);
	st->min_nr = (uint64_t)pool->min_nr;
	st->curr_nr = (uint64_t)pool->curr_nr;
	pthread_mutex_unlock(&pool->lock);
	out = __atomic_load_n(&pool->outstanding, __ATOMIC_RELAXED);
	st->outstanding = out > 0 ? (uint64_t)out : 0;
	st->reserve_allocs = __atomic_load_n(&pool->reserve_allocs,
					     __ATOMIC_RELAXED);
	st->alloc_failed = __atomic_load_n(&pool->alloc_failed,
					   __ATOMIC_RELAXED);
	st->waits = __atomic_load_n(&pool->waits, __ATOMIC_RELAXED);
	return 0;
}

void sp_mempool_walk(sp_pool_visit_fn *visit, void *arg)
{
	struct segpool_mempool *p;

	pthread_mutex_lock(&sp_mempools_lock);
	sp_list_for_each_entry(p, &sp_mempools, list) {
		struct segpool_mempool_stats st = { .size = sizeof(st) };
		struct sp_pool_snap s = {
			.kind = "mempool",
			.nr = 6,
			.keys = { "min_nr", "curr_nr", "outstanding",
				  "reserve_allocs", "alloc_failed", "waits" },
		};

		segpool_mempool_get_stats(p, &st);
		memcpy(s.name, p->name, sizeof(s.name));
		s.vals[0] = st.min_nr;
		s.vals[1] = st.curr_nr;
		s.vals[2] = st.outstanding;
		s.vals[3] = st.reserve_allocs;
		s.vals[4] = st.alloc_failed;
		s.vals[5] = st.waits;
		visit(&s, arg);
	}
	pthread_mutex_unlock(&sp_mempools_lock);
}
