// SPDX-License-Identifier: MIT
/*
 * guard/pool.c - the guard pool: its slots, sampling, allocation and free.
 *
 * The design is in guard/guard.h.  The slots free for use form one FIFO
 * (head to tail, linked through their records): an allocation takes the
 * head, a free appends to the tail, so a freed slot waits for every other
 * free slot to be used before it is used again.  All of it under one
 * mutex, a leaf lock (core/init.c, level 11): guarded allocations are rare
 * by construction.
 */
#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <segpool/segpool.h>

#include "guard/guard.h"
#include "internal/env.h"
#include "internal/report.h"
#include "os/os.h"
#include "slab/slab.h"

#define SP_GUARD_NONE	UINT32_MAX

struct sp_guard_range sp_guard_range;
unsigned int sp_guard_rate;
struct sp_guard_slot *sp_guard_slots;
unsigned int sp_guard_nr_slots;

static struct {
	pthread_mutex_t lock;		/* everything below but @calls */
	uint32_t head, tail;		/* the free FIFO */
	unsigned int in_use;
	uint64_t calls;			/* slow-path calls counted (atomic) */
	uint64_t allocs, frees, exhausted;
	uint64_t faults;		/* atomic: the fault handler adds */
} sp_guard = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.head = SP_GUARD_NONE,
	.tail = SP_GUARD_NONE,
};

static inline void *sp_guard_slot_page(uint32_t i)
{
	return (void *)(sp_guard_range.base +
			(SP_GUARD_SLOT_PAGE(i) << SP_PAGE_SHIFT));
}

/* Append slot @i to the free FIFO.  Lock held (or not yet shared). */
static void sp_guard_push(uint32_t i)
{
	sp_guard_slots[i].next = SP_GUARD_NONE;
	if (sp_guard.tail == SP_GUARD_NONE)
		sp_guard.head = i;
	else
		sp_guard_slots[sp_guard.tail].next = i;
	sp_guard.tail = i;
}

static uint32_t sp_guard_pop(void)
{
	uint32_t i = sp_guard.head;

	if (i == SP_GUARD_NONE)
		return i;
	sp_guard.head = sp_guard_slots[i].next;
	if (sp_guard.head == SP_GUARD_NONE)
		sp_guard.tail = SP_GUARD_NONE;
	return i;
}

void sp_guard_init(void)
{
	long long rate = sp_env_number(SP_ENV_GUARD_SAMPLE, 0);
	long long n = sp_env_number(SP_ENV_GUARD_SLOTS,
				    SP_ENV_GUARD_SLOTS_DEFAULT);
	size_t pool, meta;
	void *base, *slots, *frame[2];

	if (rate <= 0)
		return;
	pool = (2 * (size_t)n + 1) << SP_PAGE_SHIFT;
	meta = SP_ALIGN((size_t)n * sizeof(struct sp_guard_slot), SP_PAGE_SIZE);
	base = sp_os_reserve(pool, SP_PAGE_SIZE);
	slots = base ? sp_os_map_meta(meta) : NULL;
	if (!slots) {
		if (base)
			sp_os_unmap(base, pool);
		sp_warn("SEGPOOL_GUARD_SAMPLE: cannot reserve the guard pool "
			"(%lld slots, %zu KiB): no guarded objects",
			n, pool >> 10);
		return;
	}
	sp_guard_slots = slots;
	sp_guard_nr_slots = (unsigned int)n;
	for (uint32_t i = 0; i < (uint32_t)n; i++)
		sp_guard_push(i);
	/* its first call loads the unwinder, which allocates: not later */
	backtrace(frame, 2);
	sp_guard_range.base = (uintptr_t)base;
	sp_guard_range.size = pool;
	if (sp_guard_fault_install()) {
		sp_warn("SEGPOOL_GUARD_SAMPLE: cannot install the SIGSEGV "
			"handler (%s): no guarded objects", strerror(errno));
		return;
	}
	/* last: the slow paths start sampling when they see it */
	__atomic_store_n(&sp_guard_rate, (unsigned int)rate, __ATOMIC_RELEASE);
}

bool sp_guard_sample(const struct segpool_cache *c, size_t size)
{
	unsigned int rate = __atomic_load_n(&sp_guard_rate, __ATOMIC_ACQUIRE);

	if (!rate || size > SP_PAGE_SIZE ||
	    (c->flags & (SP_CACHE_DEBUG | SP_CACHE_INTERNAL |
			 SEGPOOL_TYPESAFE_BY_RCU)))
		return false;
	return __atomic_add_fetch(&sp_guard.calls, 1, __ATOMIC_RELAXED) %
	       rate == 0;
}

/* Where an object of @size bytes of @c goes in a slot page at @page. */
static uintptr_t sp_guard_place(const struct segpool_cache *c, uintptr_t page,
				size_t size, bool left)
{
	size_t align = c->align ? c->align : sizeof(void *);

	if (left)
		return page;
	/*
	 * A size class promises natural alignment to a power-of-two size
	 * only; other sizes get malloc's 16 bytes, so more of them end at
	 * the guard page.
	 */
	if ((c->flags & SP_CACHE_KMALLOC) && !SP_IS_POW2(size))
		align = SP_MIN(align, (size_t)16);
	return (page + SP_PAGE_SIZE - size) & ~(uintptr_t)(align - 1);
}

__sp_libframe void *sp_guard_alloc(struct segpool_cache *c, size_t size,
				   bool zero)
{
	struct sp_debug_track t;
	struct sp_guard_slot *s;
	uintptr_t page;
	uint32_t i;
	bool left;

	if (!size)
		size = c->object_size;
	sp_debug_capture(&t);
	pthread_mutex_lock(&sp_guard.lock);
	i = sp_guard_pop();
	if (i == SP_GUARD_NONE) {
		sp_guard.exhausted++;
		pthread_mutex_unlock(&sp_guard.lock);
		return NULL;
	}
	page = (uintptr_t)sp_guard_slot_page(i);
	if (sp_os_guard_open((void *)page, SP_PAGE_SIZE)) {
		sp_guard_push(i);
		sp_guard.exhausted++;
		pthread_mutex_unlock(&sp_guard.lock);
		return NULL;
	}
	/* alternate ends, so both an overflow and an underflow get caught */
	left = sp_guard.allocs & 1;
	s = &sp_guard_slots[i];
	memset((void *)page, SP_GUARD_FILL, SP_PAGE_SIZE);
	s->cache = c;
	s->size = (uint32_t)size;
	s->left = left;
	s->obj = sp_guard_place(c, page, size, left);
	s->alloc = t;
	memset(&s->free, 0, sizeof(s->free));
	__atomic_store_n(&s->state, SP_GUARD_LIVE, __ATOMIC_RELEASE);
	sp_guard.in_use++;
	sp_guard.allocs++;
	pthread_mutex_unlock(&sp_guard.lock);
	if (zero)
		memset((void *)s->obj, 0, size);
	else if (c->ctor)
		c->ctor((void *)s->obj);
	return (void *)s->obj;
}

/* The first byte of @s's slot outside its object that lost the fill. */
static const unsigned char *sp_guard_slack_hit(const struct sp_guard_slot *s)
{
	const unsigned char *page = (const unsigned char *)
		(s->obj & ~(uintptr_t)(SP_PAGE_SIZE - 1));
	const unsigned char *o = (const unsigned char *)s->obj;

	for (const unsigned char *p = page; p < o; p++)
		if (*p != SP_GUARD_FILL)
			return p;
	for (const unsigned char *p = o + s->size; p < page + SP_PAGE_SIZE; p++)
		if (*p != SP_GUARD_FILL)
			return p;
	return NULL;
}

/* Close the guard pages a continued report opened about slot @i. */
static void sp_guard_reclose(uint32_t i)
{
	struct sp_guard_slot *s = &sp_guard_slots[i];
	char *page = sp_guard_slot_page(i);

	if (s->opened & SP_GUARD_OPEN_LEFT)
		sp_os_guard_close(page - SP_PAGE_SIZE, SP_PAGE_SIZE);
	if (s->opened & SP_GUARD_OPEN_RIGHT)
		sp_os_guard_close(page + SP_PAGE_SIZE, SP_PAGE_SIZE);
	s->opened = 0;
}

__sp_libframe void sp_guard_free(struct segpool_cache *c, void *p)
{
	uintptr_t off = (uintptr_t)p - sp_guard_range.base;
	uintptr_t pg = off >> SP_PAGE_SHIFT;
	struct sp_debug_track t;
	struct sp_guard_slot *s;
	const unsigned char *hit;
	uint32_t i = (uint32_t)(pg >> 1);
	char what[128];

	sp_debug_capture(&t);
	pthread_mutex_lock(&sp_guard.lock);
	if (!(pg & 1)) {
		/* a guard page: the nearest slot's record says the most */
		if (i >= sp_guard_nr_slots)
			i = sp_guard_nr_slots - 1;
		s = &sp_guard_slots[i];
		sp_guard_report("invalid free", s, (uintptr_t)p, false, false,
				"free of a pointer into a guard page");
		goto ignore;
	}
	s = &sp_guard_slots[i];
	if (s->state != SP_GUARD_LIVE) {
		sp_guard_report(s->state == SP_GUARD_FREED ? "double free" :
				"invalid free", s, (uintptr_t)p, false, false,
				s->state == SP_GUARD_FREED ?
				"free of a guarded object already freed" :
				"free of a pointer into a guard slot "
				"never used");
		goto ignore;
	}
	if ((uintptr_t)p != s->obj) {
		snprintf(what, sizeof(what), "free of interior pointer "
			 "(offset %ld of the object)",
			 (long)((uintptr_t)p - s->obj));
		sp_guard_report("invalid free", s, (uintptr_t)p, false, false,
				what);
		goto ignore;
	}
	if (c && c != s->cache) {
		snprintf(what, sizeof(what), "free into cache %.64s of an "
			 "object of another cache", c->name);
		sp_guard_report("invalid free", s, (uintptr_t)p, false, false,
				what);
		goto ignore;
	}
	hit = sp_guard_slack_hit(s);
	if (hit) {
		long at = (long)((uintptr_t)hit - s->obj);

		snprintf(what, sizeof(what), "byte %ld %s the object, in its "
			 "slot, was written (found at its free)",
			 at < 0 ? -at : at - (long)s->size,
			 at < 0 ? "before" : "past the end of");
		/* continue: the free goes on */
		sp_guard_report(at < 0 ? "heap-buffer-underflow" :
				"heap-buffer-overflow", s, (uintptr_t)hit,
				false, true, what);
	}
	s->free = t;
	__atomic_store_n(&s->state, SP_GUARD_FREED, __ATOMIC_RELEASE);
	sp_guard_reclose(i);
	sp_os_guard_close(sp_guard_slot_page(i), SP_PAGE_SIZE);
	sp_guard_push(i);
	sp_guard.in_use--;
	sp_guard.frees++;
ignore:
	pthread_mutex_unlock(&sp_guard.lock);
}

size_t sp_guard_usable_size(const void *p)
{
	uintptr_t pg = ((uintptr_t)p - sp_guard_range.base) >> SP_PAGE_SHIFT;
	const struct sp_guard_slot *s;

	if (!sp_guard_owns(p) || !(pg & 1))
		return 0;
	s = &sp_guard_slots[pg >> 1];
	if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != SP_GUARD_LIVE ||
	    s->obj != (uintptr_t)p)
		return 0;
	return s->size;
}

void sp_guard_count_fault(void)
{
	__atomic_fetch_add(&sp_guard.faults, 1, __ATOMIC_RELAXED);
}

void sp_guard_get_stats(struct sp_guard_stats *st)
{
	pthread_mutex_lock(&sp_guard.lock);
	st->allocs = sp_guard.allocs;
	st->frees = sp_guard.frees;
	st->exhausted = sp_guard.exhausted;
	st->in_use = sp_guard.in_use;
	pthread_mutex_unlock(&sp_guard.lock);
	st->faults = __atomic_load_n(&sp_guard.faults, __ATOMIC_RELAXED);
	st->slots = sp_guard_nr_slots;
}

void sp_guard_fork_lock(void)
{
	pthread_mutex_lock(&sp_guard.lock);
}

void sp_guard_fork_unlock(void)
{
	pthread_mutex_unlock(&sp_guard.lock);
}

void sp_guard_fork_child(void)
{
	pthread_mutex_init(&sp_guard.lock, NULL);
}
