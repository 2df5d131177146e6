// SPDX-License-Identifier: MIT
/*
 * rcu/free.c - segpool_cache_free_rcu(): free after a grace period,
 * with no rcu_head in the object (the kernel's headless kfree_rcu()).
 *
 * Objects wait in batches: one batch being filled per CPU, an array of up
 * to SP_RCU_BATCH_OBJS object pointers with one rcu_head in front, taken
 * from the kmalloc-512 size class.  A full batch is handed whole to
 * call_rcu(), so a grace period and a callback serve 60 objects; the
 * callback (in liburcu's call_rcu thread) frees each object into its cache
 * and the batch itself.
 *
 * Per CPU rather than per thread: a batch must be reachable from any thread,
 * because segpool_rcu_barrier() and cache destroy hand the partial batches
 * to call_rcu() before they wait; with a batch per CPU there are as many
 * batches as CPUs (not threads), no registry of threads and nothing to flush
 * at thread exit.  Each CPU's batch has a mutex, uncontended unless the
 * thread migrates or is preempted mid-call; the batch memory is allocated
 * with no lock held.
 *
 * segpool_free_rcu_head() (the kernel's two-argument kfree_rcu()) must
 * neither fail nor sleep, so when no batch can be allocated it uses the
 * caller's two-word head instead: the head is linked on a spill list
 * (word 0 the link, word 1 the object) under a leaf mutex, and one static
 * rcu_head carries the whole list through a grace period; its callback
 * frees the list and resubmits whatever spilled meanwhile.
 *
 * Back-pressure: what waits is bounded.  Every object queued counts in
 * sp_rcu_queued until its callback frees it; a thread that would queue one
 * more than sp_rcu_pending_max (SP_RCU_PENDING_MAX) first hands the
 * partial batches over (expedite: they start their grace period now), and
 * if that is not enough it helps instead of queuing: it waits for a grace
 * period itself and frees the object at once, so a flood slows down to
 * the pace at which the call_rcu worker empties the backlog and never
 * outgrows the bound by more than one object per flooding thread.  Not
 * inside a read-side critical section (the caller could not wait: it
 * queues past the bound) and not for segpool_free_rcu_head(), which must
 * never sleep.
 *
 * The CPU array is mapped on the first call, so a program that never frees
 * by RCU has none.  Each object is counted in its cache
 * (rcu_objs_pending, rcu_objs_freed), atomically.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include <urcu/urcu-memb.h>

#include <segpool/segpool.h>

#include "internal/init.h"
#include "large/large.h"
#include "guard/guard.h"
#include "young/young.h"
#include "internal/report.h"
#include "os/cpu.h"
#include "os/os.h"
#include "rcu/rcu.h"

#define SP_RCU_BATCH_OBJS	60

/* struct sp_rcu_batch - objects that wait for one grace period together. */
struct sp_rcu_batch {
	struct rcu_head head;		/* call_rcu() link: first */
	unsigned int nr;		/* objects in objs[] */
	unsigned int pad;
	void *objs[SP_RCU_BATCH_OBJS];
};

_Static_assert(sizeof(struct sp_rcu_batch) <= 512,
	       "a batch fits the kmalloc-512 class");

/* struct sp_rcu_cpu - one CPU's batch being filled; CPUs never share a line. */
struct sp_rcu_cpu {
	pthread_mutex_t lock;		/* protects batch */
	struct sp_rcu_batch *batch;	/* being filled, or NULL */
} __sp_cacheline_aligned;

_Static_assert(sizeof(struct sp_rcu_cpu) == SP_CACHE_LINE,
	       "one line per CPU");

static struct sp_rcu_cpu *sp_rcu_cpus;	/* NULL until the first call */
static unsigned int sp_rcu_nr_cpus;
static pthread_once_t sp_rcu_cpus_once = PTHREAD_ONCE_INIT;

static void sp_rcu_cpus_init(void)
{
	unsigned int n = (unsigned int)sp_cpu_possible_count();
	size_t bytes = SP_ALIGN(n * sizeof(struct sp_rcu_cpu), SP_PAGE_SIZE);
	struct sp_rcu_cpu *cpus = sp_os_map(bytes, SP_PAGE_SIZE);

	if (!cpus)
		return;		/* every call then takes the fallback */
	for (unsigned int i = 0; i < n; i++)
		pthread_mutex_init(&cpus[i].lock, NULL);
	sp_rcu_nr_cpus = n;
	__atomic_store_n(&sp_rcu_cpus, cpus, __ATOMIC_RELEASE);
}

static struct sp_rcu_cpu *sp_rcu_cpus_get(void)
{
	struct sp_rcu_cpu *cpus =
		__atomic_load_n(&sp_rcu_cpus, __ATOMIC_ACQUIRE);

	if (likely(cpus))
		return cpus;
	pthread_once(&sp_rcu_cpus_once, sp_rcu_cpus_init);
	return __atomic_load_n(&sp_rcu_cpus, __ATOMIC_ACQUIRE);
}

/* Large mappings (segpool_free_rcu()) waiting for a grace period. */
static uint64_t sp_rcu_large_pending;

/* Objects of every cache queued and not yet freed; the bound on them. */
static uint64_t sp_rcu_queued;
uint64_t sp_rcu_pending_max = SP_RCU_PENDING_MAX;

/* Give one object back to its cache once its grace period is over. */
static void sp_rcu_free_now(void *obj)
{
	struct sp_slab *s = sp_obj_to_slab(obj);
	struct segpool_cache *c;

	__atomic_fetch_sub(&sp_rcu_queued, 1, __ATOMIC_RELAXED);
	if (!s) {
		/* a large block from segpool_free_rcu() */
		segpool_free(obj);
		__atomic_fetch_sub(&sp_rcu_large_pending, 1, __ATOMIC_RELAXED);
		return;
	}
	c = s->cache;

	segpool_cache_free(c, obj);
	__atomic_fetch_add(&c->rcu_objs_freed, 1, __ATOMIC_RELAXED);
	/* the last touch of @c: destroy may go on once this reaches 0 */
	__atomic_fetch_sub(&c->rcu_objs_pending, 1, __ATOMIC_RELEASE);
}

/* The callback: a grace period has passed since the batch was handed over. */
static void sp_rcu_batch_done(struct rcu_head *head)
{
	struct sp_rcu_batch *b =
		sp_container_of(head, struct sp_rcu_batch, head);

	sp_rcu_tsan_acquire(head);
	sp_rcu_tsan_gp_acquire();
	for (unsigned int i = 0; i < b->nr; i++)
		sp_rcu_free_now(b->objs[i]);
	segpool_free(b);
}

static void sp_rcu_batch_submit(struct sp_rcu_batch *b)
{
	sp_rcu_call(&b->head, sp_rcu_batch_done);
}

/*
 * Queue @obj on the calling CPU's batch.  Return: 0, or -ENOMEM when no
 * batch could be allocated (nothing queued).
 */
static int sp_rcu_queue(struct sp_rcu_cpu *cpus, void *obj)
{
	int cpu = sp_thread_cpu();
	struct sp_rcu_cpu *pc = &cpus[(unsigned int)cpu < sp_rcu_nr_cpus ?
				      (unsigned int)cpu : 0];
	struct sp_rcu_batch *spare = NULL, *full = NULL, *b;

	pthread_mutex_lock(&pc->lock);
	while (!(b = pc->batch)) {
		if (spare) {
			spare->nr = 0;
			pc->batch = spare;
			spare = NULL;
			continue;
		}
		/* allocate with no lock held, then look again */
		pthread_mutex_unlock(&pc->lock);
		spare = segpool_malloc(sizeof(*spare));
		if (!spare)
			return -ENOMEM;
		pthread_mutex_lock(&pc->lock);
	}
	b->objs[b->nr++] = obj;
	__atomic_fetch_add(&sp_rcu_queued, 1, __ATOMIC_RELAXED);
	if (b->nr == SP_RCU_BATCH_OBJS) {
		full = b;
		pc->batch = NULL;
	}
	pthread_mutex_unlock(&pc->lock);
	if (spare)
		segpool_free(spare);	/* another thread filled the slot */
	if (full)
		sp_rcu_batch_submit(full);
	return 0;
}

/* struct sp_rcu_spill - the caller's segpool_rcu_head while it waits. */
struct sp_rcu_spill {
	struct sp_rcu_spill *next;
	void *obj;
};

_Static_assert(sizeof(struct sp_rcu_spill) == sizeof(struct segpool_rcu_head),
	       "a spill record is the caller's head");

static pthread_mutex_t sp_rcu_spill_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sp_rcu_spill *sp_rcu_spilled;	/* waiting for a submission */
static struct sp_rcu_spill *sp_rcu_spill_gp_list; /* in the grace period */
static bool sp_rcu_spill_busy;			/* sp_rcu_spill_head queued */
static struct rcu_head sp_rcu_spill_head;

/* Under sp_rcu_spill_lock: queue the spilled list if none is in flight. */
static bool sp_rcu_spill_take_locked(void)
{
	if (sp_rcu_spill_busy || !sp_rcu_spilled)
		return false;
	sp_rcu_spill_gp_list = sp_rcu_spilled;
	sp_rcu_spilled = NULL;
	__atomic_store_n(&sp_rcu_spill_busy, true, __ATOMIC_RELEASE);
	return true;
}

static void sp_rcu_spill_done(struct rcu_head *head)
{
	struct sp_rcu_spill *e, *next;
	bool again;

	sp_rcu_tsan_acquire(head);
	sp_rcu_tsan_gp_acquire();
	pthread_mutex_lock(&sp_rcu_spill_lock);
	e = sp_rcu_spill_gp_list;
	sp_rcu_spill_gp_list = NULL;
	pthread_mutex_unlock(&sp_rcu_spill_lock);
	for (; e; e = next) {
		next = e->next;		/* read before the object goes */
		sp_rcu_free_now(e->obj);
	}
	pthread_mutex_lock(&sp_rcu_spill_lock);
	__atomic_store_n(&sp_rcu_spill_busy, false, __ATOMIC_RELEASE);
	again = sp_rcu_spill_take_locked();
	pthread_mutex_unlock(&sp_rcu_spill_lock);
	if (again)
		sp_rcu_call(&sp_rcu_spill_head, sp_rcu_spill_done);
}

/* Wait for @obj's grace period through its own @head (no allocation). */
static void sp_rcu_spill(void *obj, struct segpool_rcu_head *head)
{
	struct sp_rcu_spill *e = (struct sp_rcu_spill *)(void *)head;
	bool submit;

	__atomic_fetch_add(&sp_rcu_queued, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&sp_rcu_spill_lock);
	e->obj = obj;
	e->next = sp_rcu_spilled;
	sp_rcu_spilled = e;
	submit = sp_rcu_spill_take_locked();
	pthread_mutex_unlock(&sp_rcu_spill_lock);
	if (submit)
		sp_rcu_call(&sp_rcu_spill_head, sp_rcu_spill_done);
}

void sp_rcu_free_flush(void)
{
	struct sp_rcu_cpu *cpus =
		__atomic_load_n(&sp_rcu_cpus, __ATOMIC_ACQUIRE);

	if (!cpus)
		return;
	for (unsigned int i = 0; i < sp_rcu_nr_cpus; i++) {
		struct sp_rcu_batch *b;

		pthread_mutex_lock(&cpus[i].lock);
		b = cpus[i].batch;
		cpus[i].batch = NULL;
		pthread_mutex_unlock(&cpus[i].lock);
		if (b)
			sp_rcu_batch_submit(b);
	}
}

void sp_rcu_cache_quiesce(struct segpool_cache *c)
{
	while (__atomic_load_n(&c->rcu_objs_pending, __ATOMIC_ACQUIRE)) {
		sp_rcu_free_flush();
		sp_rcu_barrier_raw();
	}
}

void sp_rcu_free_lock_all(void)
{
	struct sp_rcu_cpu *cpus =
		__atomic_load_n(&sp_rcu_cpus, __ATOMIC_ACQUIRE);

	for (unsigned int i = 0; cpus && i < sp_rcu_nr_cpus; i++)
		pthread_mutex_lock(&cpus[i].lock);
	pthread_mutex_lock(&sp_rcu_spill_lock);
}

void sp_rcu_free_unlock_all(void)
{
	struct sp_rcu_cpu *cpus =
		__atomic_load_n(&sp_rcu_cpus, __ATOMIC_ACQUIRE);

	pthread_mutex_unlock(&sp_rcu_spill_lock);
	for (unsigned int i = 0; cpus && i < sp_rcu_nr_cpus; i++)
		pthread_mutex_unlock(&cpus[i].lock);
}

void sp_rcu_free_reinit_locks(void)
{
	struct sp_rcu_cpu *cpus =
		__atomic_load_n(&sp_rcu_cpus, __ATOMIC_ACQUIRE);

	for (unsigned int i = 0; cpus && i < sp_rcu_nr_cpus; i++)
		pthread_mutex_init(&cpus[i].lock, NULL);
	pthread_mutex_init(&sp_rcu_spill_lock, NULL);
}

/*
 * Whether one more object may be queued (see "Back-pressure" above): over
 * the bound, the partial batches go first; false when the caller must help
 * (wait for a grace period and free the object itself).
 */
static bool sp_rcu_may_queue(void)
{
	uint64_t max = __atomic_load_n(&sp_rcu_pending_max, __ATOMIC_RELAXED);

	if (likely(__atomic_load_n(&sp_rcu_queued, __ATOMIC_RELAXED) < max))
		return true;
	if (sp_rcu_read_ongoing())
		return true;	/* cannot wait: past the bound */
	sp_rcu_free_flush();	/* expedite: their grace periods start now */
	return false;
}

/* Help: @obj of @c (NULL: a large mapping) freed after a grace period. */
static void sp_rcu_free_after_gp(struct segpool_cache *c, void *obj)
{
	sp_rcu_synchronize();
	if (c) {
		segpool_cache_free(c, obj);
		__atomic_fetch_add(&c->rcu_objs_freed, 1, __ATOMIC_RELAXED);
	} else {
		segpool_free(obj);
	}
}

/* --- public calls -------------------------------------------------------- */

SEGPOOL_API int segpool_cache_free_rcu(struct segpool_cache *cache, void *obj)
{
	struct sp_rcu_cpu *cpus;
	struct sp_slab *s;
	const char *what;

	if (unlikely(!obj))
		return 0;
	if (unlikely(!cache || cache->magic != SP_CACHE_MAGIC)) {
		sp_cache_check_dead(cache, "free by RCU into", obj);
		sp_report_bad_free("free into invalid cache", obj, NULL);
	}
	/* a guarded object (guard/) waits as a large block does */
	if (sp_guard_owns(obj))
		return segpool_free_rcu(obj);
	what = sp_cache_object_check(cache, obj, &s);
	if (unlikely(what))
		sp_report_bad_free(what, obj, cache->name);

	if (unlikely(!sp_rcu_may_queue())) {
		sp_rcu_free_after_gp(cache, obj);
		return 0;
	}
	__atomic_fetch_add(&cache->rcu_objs_pending, 1, __ATOMIC_RELAXED);
	cpus = sp_rcu_cpus_get();
	if (likely(cpus) && likely(sp_rcu_queue(cpus, obj) == 0))
		return 0;
	/* no memory for a batch: wait for the grace period here, if we may */
	__atomic_fetch_sub(&cache->rcu_objs_pending, 1, __ATOMIC_RELAXED);
	if (sp_rcu_read_ongoing()) {
		errno = ENOMEM;
		return -ENOMEM;
	}
	sp_rcu_free_after_gp(cache, obj);
	return 0;
}

/*
 * segpool_free_rcu{,_head}(): @ptr's cache (or NULL for a large block),
 * checked; @head, when given, must lie in the object's first 4096 bytes.
 */
static struct segpool_cache *
sp_rcu_classify(void *ptr, const struct segpool_rcu_head *head)
{
	struct sp_slab *s = sp_obj_to_slab(ptr);
	size_t size = 0, off = (uintptr_t)head - (uintptr_t)ptr;
	const char *what;
	int idx;

	if (s) {
		what = sp_cache_object_check(s->cache, ptr, &s);
		if (unlikely(what))
			sp_report_bad_free(what, ptr, s->cache->name);
		size = s->cache->object_size;
	} else if (sp_young_owns(ptr)) {
		/* a young block (young/young.c): freed as a large block is */
		size = sp_young_size(ptr, "kfree_rcu");
	} else if (sp_guard_owns(ptr)) {
		/* a guarded object: freed as a large block is (guard/) */
		size = sp_guard_usable_size(ptr);
		if (!size)
			sp_report_bad_free(
				"kfree_rcu() of a pointer that is no "
				"live guarded object",
				ptr, NULL);
	} else if (!sp_large_lookup(ptr, &size, &idx)) {
		sp_report_bad_free(sp_large_misuse(ptr), ptr, NULL);
	}
	if (unlikely(head && (off >= SP_MIN(size, (size_t)4096) ||
			      size - off < sizeof(*head) ||
			      off % sizeof(void *))))
		sp_report_bad_free(
			"kfree_rcu() with an rcu_head outside the object", ptr,
			s ? s->cache->name : NULL);
	return s ? s->cache : NULL;
}

static int sp_free_rcu(void *ptr, struct segpool_rcu_head *head)
{
	struct segpool_cache *c = sp_rcu_classify(ptr, head);
	uint64_t *pending = c ? &c->rcu_objs_pending : &sp_rcu_large_pending;
	struct sp_rcu_cpu *cpus;

	/* with a head the caller may not sleep: never throttled */
	if (unlikely(!head && !sp_rcu_may_queue())) {
		sp_rcu_free_after_gp(c, ptr);
		return 0;
	}
	__atomic_fetch_add(pending, 1, __ATOMIC_RELAXED);
	cpus = sp_rcu_cpus_get();
	if (likely(cpus) && likely(sp_rcu_queue(cpus, ptr) == 0))
		return 0;
	if (head) {
		/* no batch: the object's own head carries it, never waiting */
		sp_rcu_spill(ptr, head);
		return 0;
	}
	__atomic_fetch_sub(pending, 1, __ATOMIC_RELAXED);
	if (sp_rcu_read_ongoing()) {
		errno = ENOMEM;
		return -ENOMEM;
	}
	sp_rcu_free_after_gp(c, ptr);
	return 0;
}

SEGPOOL_API int segpool_free_rcu(void *ptr)
{
	if (unlikely(SEGPOOL_ZERO_OR_NULL_PTR(ptr)))
		return 0;
	return sp_free_rcu(ptr, NULL);
}

SEGPOOL_API void segpool_free_rcu_head(void *ptr, struct segpool_rcu_head *head)
{
	if (unlikely(SEGPOOL_ZERO_OR_NULL_PTR(ptr)))
		return;
	if (unlikely(!head))
		sp_report_bad_free("kfree_rcu() without an rcu_head", ptr,
				   NULL);
	(void)sp_free_rcu(ptr, head);
}

SEGPOOL_API int segpool_rcu_barrier(void)
{
	uint64_t ticket;

	if (sp_init())
		return -ENOMEM;
	if (sp_rcu_read_ongoing()) {
		errno = EDEADLK;
		return -EDEADLK;
	}
	ticket = sp_rcu_slab_queued();
	sp_rcu_free_flush();
	sp_rcu_barrier_raw();
	/* spills resubmitted by their own callback come in later rounds */
	while (__atomic_load_n(&sp_rcu_spill_busy, __ATOMIC_ACQUIRE))
		sp_rcu_barrier_raw();
	sp_rcu_slab_wait(ticket);
	return 0;
}

SEGPOOL_API int segpool_cache_rcu_stats(struct segpool_cache *cache,
					struct segpool_rcu_stats *st)
{
	if (!cache || cache->magic != SP_CACHE_MAGIC || !st ||
	    st->size < sizeof(*st)) {
		sp_cache_check_dead(cache, "RCU stats of", NULL);
		errno = EINVAL;
		return -EINVAL;
	}
	st->objs_pending = __atomic_load_n(&cache->rcu_objs_pending,
					   __ATOMIC_RELAXED);
	st->objs_freed = __atomic_load_n(&cache->rcu_objs_freed,
					 __ATOMIC_RELAXED);
	st->slabs_pending = __atomic_load_n(&cache->rcu_slabs_pending,
					    __ATOMIC_RELAXED);
	st->slabs_released = __atomic_load_n(&cache->rcu_slabs_released,
					     __ATOMIC_RELAXED);
	return 0;
}
