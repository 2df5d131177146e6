/* SPDX-License-Identifier: MIT */
/*
 * percpu/magazine.h - Bonwick's magazines: arrays of object pointers (private).
 *
 * A magazine of capacity cap is laid out as
 *
 *   next | cap,count | slot[0]=GUARD | slot[1..cap]=rounds | slot[cap+1]=GUARD
 *
 * A CPU slot points "top" at the first free round slot.  The two odd guard
 * words make both fast-path tests one load each: the word below top is the
 * guard when the magazine is empty, the word at top is the guard when it is
 * full.  Objects are at least 8-byte aligned, so no round is ever odd.
 *
 * Magazines come from internal segpool caches, one per capacity class, whose
 * objects bypass the per-CPU layer themselves.
 */
#ifndef SP_PERCPU_MAGAZINE_H
#define SP_PERCPU_MAGAZINE_H

#include <stdint.h>
#include "internal/compiler.h"

#define SP_MAG_GUARD		((void *)(uintptr_t)1)
#define SP_MAG_CLASSES		8
#define SP_MAG_DEFAULT_CLASS	3		/* 60 rounds */
/*
 * The bytes of objects one magazine may hold, at its start and as it grows
 * (percpu/pcpu.c): two magazines per slot and the depot's full ones pin
 * that much each.  With four times the bound a two-thread pipeline of
 * records of a few hundred bytes (examples/logpipe -b malloc) kept most of
 * its peak RSS in magazines, for no throughput the benchmarks could see
 * (Documentation/internals/percpu.md).
 */
#define SP_MAG_BYTES_MAX	(64UL << 10)

struct sp_mag {
	struct sp_mag *next;		/* depot list link */
	uint32_t cap;			/* rounds it can hold */
	uint32_t count;			/* rounds held, while not loaded */
	void *slot[];			/* guard, rounds, guard */
};

/*
 * Capacity of each class: sizes 64, 128, ... 8192 bytes (4, 12 ... 1020).
 * The 4-round class is for objects above 5 KiB, where 12 rounds would pin
 * more than SP_MAG_BYTES_MAX a magazine (percpu/pcpu.c).
 */
static inline unsigned int sp_mag_class_cap(unsigned int cls)
{
	return (64U << cls) / 8 - 4;
}

static inline void **sp_mag_base(struct sp_mag *m)
{
	return &m->slot[1];
}

/* Rounds in a loaded magazine whose top is @top. */
static inline unsigned int sp_mag_count_at(struct sp_mag *m, void **top)
{
	return (unsigned int)(top - sp_mag_base(m));
}

/*
 * Static "magazines" that are always empty and always full, for tops that
 * hold no real magazine: sp_mag_top_none (no magazine loaded, slot free to
 * take) and sp_mag_top_busy / sp_mag_top_busy + 1 (slot owned by a local
 * slow path / by a remote drainer).
 */
extern SP_INTERNAL void *sp_mag_none[2];
extern SP_INTERNAL void *sp_mag_busy[3];
#define sp_mag_top_none		(&sp_mag_none[1])
#define sp_mag_top_busy		(&sp_mag_busy[1])
#define sp_mag_top_remote	(&sp_mag_busy[2])

static inline int sp_mag_top_is_busy(void **top)
{
	return top == sp_mag_top_busy || top == sp_mag_top_remote;
}

SP_INTERNAL int sp_mag_init(void);
/* A new empty magazine of class @cls, or NULL (ENOMEM). */
SP_INTERNAL struct sp_mag *sp_mag_alloc(unsigned int cls);
SP_INTERNAL void sp_mag_free(struct sp_mag *m);
/*
 * sp_mag_prefetch() - ask for the lines of @m's rounds the next operations
 * use: down from @top for pops (@alloc), up from it to the guard for
 * pushes (for writing, where the CPU has such a hint).  By the slow path
 * that is about to hand @m to the hits (or to remote frees).
 */
SP_INTERNAL void sp_mag_prefetch(struct sp_mag *m, void **top, bool alloc);
/* Class of a magazine from its capacity. */
SP_INTERNAL unsigned int sp_mag_class_of(const struct sp_mag *m);

#endif /* SP_PERCPU_MAGAZINE_H */
