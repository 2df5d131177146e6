// SPDX-License-Identifier: MIT
/*
 * tools/bench/floor.c - the harness floor: as close to no allocator as works.
 *
 * Every object is a slot of one size (the workload's largest request).  A
 * thread pops slots from its own LIFO list and pushes freed ones onto it;
 * when the list is empty it carves slots from a chunk of its own.  So that
 * producer/consumer runs do not grow without bound, a thread whose list
 * holds many slots hands the whole list to one shared exchange slot, which
 * a thread with an empty list takes: one atomic exchange per
 * BENCH_FLOOR_HANDOFF frees.  No lock, no size classes, no headers: what a
 * workload costs with the floor is the cost of the loop around the calls.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <sys/mman.h>

#include "tools/bench/bench.h"

#define BENCH_FLOOR_CHUNK	(1UL << 20)
#define BENCH_FLOOR_HANDOFF	4096

struct bench_floor_slot {
	struct bench_floor_slot *next;
};

struct bench_floor_thread {
	struct bench_floor_slot *list;	/* free slots, LIFO */
	long count;			/* slots on list (may run below 0) */
	char *bump, *end;		/* the current chunk */
};

static size_t bench_floor_slot_size = 16;
static _Atomic(struct bench_floor_slot *) bench_floor_exchange;
static __thread struct bench_floor_thread bench_floor_self;

int bench_floor_setup(size_t slot)
{
	bench_floor_slot_size = (slot + 15) & ~(size_t)15;
	return 0;
}

static __attribute__((noinline)) void *bench_floor_refill(size_t size)
{
	struct bench_floor_thread *t = &bench_floor_self;
	struct bench_floor_slot *got;
	void *p;

	got = atomic_exchange_explicit(&bench_floor_exchange, NULL,
				       memory_order_acquire);
	if (got) {
		t->list = got->next;
		t->count = 0;	/* unknown; it only steers the hand-off */
		return got;
	}
	if (size > bench_floor_slot_size)
		return NULL;
	if (t->bump + bench_floor_slot_size > t->end) {
		/* not populated: pages fault in on first use, as anyone's do */
		p = mmap(NULL, BENCH_FLOOR_CHUNK, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		t->bump = p;
		t->end = t->bump + BENCH_FLOOR_CHUNK;
	}
	p = t->bump;
	t->bump += bench_floor_slot_size;
	return p;
}

void *bench_floor_alloc(size_t size)
{
	struct bench_floor_thread *t = &bench_floor_self;
	struct bench_floor_slot *s = t->list;

	if (__builtin_expect(s == NULL, 0))
		return bench_floor_refill(size);
	t->list = s->next;
	t->count--;
	return s;
}

void bench_floor_free(void *ptr, size_t size)
{
	struct bench_floor_thread *t = &bench_floor_self;
	struct bench_floor_slot *s = ptr;
	struct bench_floor_slot *expected = NULL;

	(void)size;
	s->next = t->list;
	t->list = s;
	if (__builtin_expect(++t->count < BENCH_FLOOR_HANDOFF, 1))
		return;
	/* hand the list over only when the exchange slot is empty */
	if (atomic_compare_exchange_strong_explicit(&bench_floor_exchange,
						    &expected, t->list,
						    memory_order_release,
						    memory_order_relaxed))
		t->list = NULL;
	t->count = 0;
}
