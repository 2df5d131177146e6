// SPDX-License-Identifier: MIT
/*
 * tools/bench/floor.c - the harness floor: as close to no allocator as works.
 *
 * Every object is a slot of the workload's largest size.  A thread pops
 * slots from its own LIFO list and pushes freed ones onto it, carving new
 * ones from 1 MiB chunks of its own; a thread whose list holds many slots
 * hands the whole list to one exchange slot, which a thread with an empty
 * list takes (so producer/consumer runs do not grow without bound).  No
 * lock, no classes, no headers: the cost of the loop around the calls.
 */
#include <stdatomic.h>
#include <sys/mman.h>

#include "tools/bench/bench.h"

#define BENCH_FLOOR_CHUNK	(1UL << 20)
#define BENCH_FLOOR_HANDOFF	4096

struct bench_slot {
	struct bench_slot *next;
};

static size_t bench_slot_size = 16;
static _Atomic(struct bench_slot *) bench_exchange;
static __thread struct {
	struct bench_slot *list;	/* free slots, LIFO */
	long count;			/* on the list (may run below 0) */
	char *bump, *end;		/* the current chunk */
} bench_self;

static __attribute__((noinline)) void *bench_floor_refill(size_t size)
{
	struct bench_slot *got = atomic_exchange_explicit(&bench_exchange,
				 NULL, memory_order_acquire);
	void *p;

	if (got) {
		bench_self.list = got->next;
		bench_self.count = 0;	/* unknown; it only steers hand-offs */
		return got;
	}
	if (size > bench_slot_size)
		return NULL;
	if (bench_self.bump + bench_slot_size > bench_self.end) {
		/* not populated: pages fault in on first use, as anyone's */
		p = mmap(NULL, BENCH_FLOOR_CHUNK, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		bench_self.bump = p;
		bench_self.end = bench_self.bump + BENCH_FLOOR_CHUNK;
	}
	p = bench_self.bump;
	bench_self.bump += bench_slot_size;
	return p;
}

static void *bench_floor_alloc(size_t size)
{
	struct bench_slot *s = bench_self.list;

	if (__builtin_expect(s == NULL, 0))
		return bench_floor_refill(size);
	bench_self.list = s->next;
	bench_self.count--;
	return s;
}

static void bench_floor_free(void *ptr, size_t size)
{
	struct bench_slot *s = ptr, *expected = NULL;

	(void)size;
	s->next = bench_self.list;
	bench_self.list = s;
	if (__builtin_expect(++bench_self.count < BENCH_FLOOR_HANDOFF, 1))
		return;
	/* hand the list over only when the exchange slot is empty */
	if (atomic_compare_exchange_strong_explicit(&bench_exchange, &expected,
						    s, memory_order_release,
						    memory_order_relaxed))
		bench_self.list = NULL;
	bench_self.count = 0;
}

int bench_floor_setup(size_t slot)
{
	bench_slot_size = (slot + 15) & ~(size_t)15;
	bench_heap = (struct bench_heap){ bench_floor_alloc, bench_floor_free };
	return 0;
}
