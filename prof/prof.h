/* SPDX-License-Identifier: MIT */
/*
 * prof/prof.h - sampled heap profiling (private).
 *
 * With SEGPOOL_HEAP_PROFILE set, about one allocated byte in
 * SEGPOOL_HEAP_SAMPLE is sampled (a Poisson process over the bytes each
 * thread allocates, as tcmalloc and jemalloc sample): an allocation whose
 * bytes hold a sampling point is recorded with its call stack and weighs
 * the bytes it stands for, size / (1 - exp(-size / rate)).  Its record goes
 * at its free, so the profile is of the memory in use (the allocation
 * totals are kept per stack too).  The design, and why the hit paths are
 * closed while it runs: Documentation/internals/profile.md.
 *
 * Everything here is called from the library's slow paths (core/), but
 * for sp_prof_hit(), which the counted build of the entry points calls
 * from its allocation hit paths when a slot's count runs out (core/entry.h,
 * the count kept in the slot): with sampling off each hook of the slow
 * paths is one load and a branch not taken.  A sampled object of a cache with
 * magazines lies in a sampled slab (slab/slab.h, SP_TAG_SAMPLED), whose
 * page tag no slot expects: its free misses every hit path and reaches
 * sp_prof_free() on the slow path, where the filter below is read.
 */
#ifndef SP_PROF_PROF_H
#define SP_PROF_PROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal/compiler.h"

struct segpool_cache;

/* Mean bytes between samples unless SEGPOOL_HEAP_SAMPLE says (512 KiB). */
#define SP_PROF_RATE_DEFAULT	(512LL << 10)
/* Frames kept per sample (deeper stacks are cut at their outer end). */
#define SP_PROF_DEPTH		48
/* Bits of the filter a slow-path free consults before it takes the lock. */
#define SP_PROF_FILTER_BITS	16

/* Whether sampling runs (set once at start-up, before the hit paths open). */
extern SP_INTERNAL bool sp_prof_on;

/* sp_prof_on as the slow paths read it: one plain load (set once). */
static inline bool sp_prof_active(void)
{
	return __atomic_load_n(&sp_prof_on, __ATOMIC_RELAXED);
}
/* One bit per hash of a sampled address: set while a record may exist. */
extern SP_INTERNAL uint64_t sp_prof_filter[(1U << SP_PROF_FILTER_BITS) / 64];

/*
 * sp_prof_init() - read SEGPOOL_HEAP_PROFILE and SEGPOOL_HEAP_SAMPLE
 * (internal/env_table.c); with a usable path and rate, prepare the stack
 * walker and the dump at exit.  A bad setting is reported naming it and
 * sampling stays off.  Called once, after start-up, outside the library's
 * locks.  Return: whether sampling may start (the caller closes the hit
 * paths, then sets sp_prof_on: core/init.c).
 */
SP_INTERNAL bool sp_prof_init(void);

/*
 * sp_prof_site() - the allocating call, as the entry points hand it down
 * to the sampler (@site below): on x86-64 the address of the entry's
 * return address on the stack (its CFA less 8, by the psABI), which gives
 * both that return address into the program and the stack pointer a walk
 * of the program's frames starts from, so that the walk never visits the
 * library's own frames; elsewhere the return address itself.  A macro: it
 * names the frame it is written in, which stays live below it.
 */
#if defined(__x86_64__)
#define sp_prof_site()							\
	((void *)((char *)__builtin_dwarf_cfa() - sizeof(void *)))
#else
#define sp_prof_site()	__builtin_return_address(0)
#endif

/* The return address into the program of @site (sp_prof_site()). */
static inline void *sp_prof_site_ra(void *site)
{
#if defined(__x86_64__)
	return *(void *const *)site;
#else
	return site;
#endif
}

/* The stack pointer @site's call returns with (its callee's CFA); 0: none. */
static inline uintptr_t sp_prof_site_sp(void *site)
{
#if defined(__x86_64__)
	return (uintptr_t)site + sizeof(void *);
#else
	(void)site;
	return 0;
#endif
}

/* --- prof/sample.c --- */
/*
 * sp_prof_due() - @size bytes are about to be handed out by this thread:
 * whether they hold its next sampling point (the count moves either way).
 */
SP_INTERNAL __sp_noinline bool sp_prof_due(size_t size);
/*
 * sp_prof_take() - a large block of @size bytes at @obj was handed out;
 * @site is the allocating call (sp_prof_site()), where the recorded stack
 * starts.
 */
SP_INTERNAL __sp_noinline void sp_prof_take(void *obj, size_t size, void *site);

/*
 * sp_prof_sample_obj() - @obj of cache @c, @size bytes, is sampled (on a
 * count that took @charged bytes for it): record it, in a sampled slab
 * when @c has magazines (one of a sampled slab takes its place:
 * slab/slab.h, sp_slab_take_sampled()).  @obj is still as the layers keep
 * a free object (before sp_obj_out()).  Return: the object to hand out;
 * when it is not @obj, @obj is the caller's to put back (core/hotpath.h,
 * sp_sample_swapped(): through a free's hit, where this layer would take
 * the node's lock).
 */
SP_INTERNAL __sp_noinline void *sp_prof_sample_obj(struct segpool_cache *c,
						   void *obj, size_t size,
						   size_t charged, void *site);

/*
 * sp_prof_hit() - the counted build's hit path (core/entry.h) popped @obj
 * of @c (a request of @size bytes) and took the slot's count of objects to
 * its next sampling point down to @was, 0 or below: sample @obj when the
 * point lies in it, and say in *@arm what to arm the count with again
 * (the caller arms it, percpu/pcpu.h sp_pcpu_sample_arm()).  Each slot
 * counts in objects of its cache's size, a Poisson process over the bytes
 * it hands out as the thread's count is over the slow paths' (an
 * allocation is counted by one of the two, so each is sampled with the
 * chance its weight assumes: Documentation/internals/profile.md).
 * Return: the object to hand out, still as the layers keep a free one;
 * when it is not @obj, @obj is the caller's to put back, as
 * sp_prof_sample_obj()'s.
 */
SP_INTERNAL __sp_noinline void *sp_prof_hit(struct segpool_cache *c,
					    void *obj, size_t size,
					    int32_t was, int32_t *arm,
					    void *site);

/* The hash of @obj's address into the filter. */
static inline unsigned int sp_prof_hash(const void *obj)
{
	uint64_t x = (uint64_t)(uintptr_t)obj * 0x9e3779b97f4a7c15ULL;

	return (unsigned int)(x >> (64 - SP_PROF_FILTER_BITS));
}

static inline bool sp_prof_maybe(const void *obj)
{
	unsigned int h = sp_prof_hash(obj);

	return __atomic_load_n(&sp_prof_filter[h / 64], __ATOMIC_RELAXED) &
	       (1ULL << (h % 64));
}

/*
 * Bytes this thread's slow paths may still allocate before its next
 * sampling point (0 before its first allocation), counted by
 * sp_prof_due().
 */
extern SP_INTERNAL __thread int64_t sp_prof_left
	__attribute__((tls_model("initial-exec")));

/* Whether this thread is inside the table's lock (prof/sample.c). */
extern SP_INTERNAL __thread bool sp_prof_busy
	__attribute__((tls_model("initial-exec")));

/*
 * Set at start-up when the counted entry points run (core/entry.h) but
 * sampling does not (a setting was refused): their counts must then never
 * run out, so each thread's is set past reach at its first slow path (and
 * each slot's at its first count, sp_prof_hit()).
 */
extern SP_INTERNAL bool sp_prof_idle;

/* Sampling off: the thread's count past reach if the counted build runs. */
static inline void sp_prof_idle_count(void)
{
	if (unlikely(SP_READ_ONCE(sp_prof_idle)))
		sp_prof_left = INT64_MAX;
}

/* A large block leaves a slow path: charge it to the sampler. */
static inline void sp_prof_alloc(void *obj, size_t size, void *site)
{
	if (unlikely(sp_prof_active())) {
		if (obj)
			sp_prof_take(obj, size, site);
	} else {
		sp_prof_idle_count();
	}
}

/*
 * An object of cache @c is about to leave a slow path (before
 * sp_obj_out()): charge it to the sampler.  Return: the object to hand
 * out, another one when it was sampled (sp_prof_sample_obj(): @obj is
 * then the caller's to put back).
 */
static inline void *sp_prof_alloc_obj(struct segpool_cache *c, void *obj,
				      size_t size, void *site)
{
	if (unlikely(sp_prof_active())) {
		if (sp_prof_due(size))
			obj = sp_prof_sample_obj(c, obj, size, size, site);
	} else {
		sp_prof_idle_count();
	}
	return obj;
}

/* --- prof/unwind.c --- */

/*
 * sp_prof_unwind() - the calling thread's return addresses into @pcs, at
 * most @max, as backtrace() gives them: the first is the one into the
 * caller of sp_prof_unwind().  Return: how many.  Reads nothing but the
 * stack and its table once it has learned the frames (prof/unwind.c).
 */
SP_INTERNAL __sp_noinline int sp_prof_unwind(void **pcs, int max);
/*
 * sp_prof_unwind_at() - the return addresses from @pc on into @pcs, at
 * most @max, @sp the stack pointer @pc's call returns with (sp_prof_site()),
 * by the learned table alone.  Return: how many; -1 when this walk is to
 * be sp_prof_unwind()'s (a check is due, a frame is not learned, no @sp).
 */
SP_INTERNAL int sp_prof_unwind_at(void **pcs, int max, uintptr_t pc,
				  uintptr_t sp);
/* Find libgcc's walker (glibc's backtrace() loads it); at start-up. */
SP_INTERNAL void sp_prof_unwind_init(void);
/* How many of the calling thread's walks libgcc made (x86-64; tests). */
SP_INTERNAL unsigned long sp_prof_unwind_slow_walks(void);

/* --- prof/table.c --- */
/* Map the tables (at start-up, when sampling is asked for). Return: 0 or -1. */
SP_INTERNAL int sp_prof_table_init(void);
/* The record of the sample at @obj, if any, goes (its memory is freed). */
SP_INTERNAL __sp_noinline void sp_prof_forget(const void *obj);
/* A sample that could not be kept where its free finds it: counted. */
SP_INTERNAL void sp_prof_drop(void);

static inline void sp_prof_free(const void *obj)
{
	if (unlikely(sp_prof_active()) && sp_prof_maybe(obj))
		sp_prof_forget(obj);
}

/*
 * sp_prof_record() - keep a sample: @obj, its @frames return addresses at
 * @pcs, the name of its cache (NULL: a large block), its @size and its
 * weight @wobjs (the allocations it stands for; it stands for @wobjs times
 * @size bytes).  Return: 0, or -1 when no memory is left for records (the
 * sample is dropped and counted).
 */
SP_INTERNAL int sp_prof_record(const void *obj, void *const *pcs, int frames,
			       const char *cache, size_t size, double wobjs);

/* Fork: the table's lock, held across fork (core/init.c, level 11). */
SP_INTERNAL void sp_prof_fork_lock(void);
SP_INTERNAL void sp_prof_fork_unlock(void);
SP_INTERNAL void sp_prof_fork_child(void);

/* Totals for tests and the dump: in-use and allocated, weighted. */
struct sp_prof_totals {
	double inuse_objs, inuse_bytes, alloc_objs, alloc_bytes;
	uint64_t samples, records, stacks, dropped;
};
SP_INTERNAL void sp_prof_totals(struct sp_prof_totals *t);

/*
 * sp_prof_walk() - under the table's lock, *@t the totals, @head(@arg,
 * @t) unless NULL, then @fn once per stack: its cache's name ("" for large
 * blocks), its frames, and v[] = in-use objects, in-use bytes, allocated
 * objects, allocated bytes (weighted).  One snapshot: the totals are the
 * sums of the stacks'.  Stops at the first non-zero return, returned.
 */
typedef int (*sp_prof_line_fn)(void *arg, const char *cache, void *const *pcs,
			       int frames, const double v[4]);
typedef int (*sp_prof_head_fn)(void *arg, const struct sp_prof_totals *t);
SP_INTERNAL int sp_prof_walk(sp_prof_head_fn head, sp_prof_line_fn fn,
			     void *arg, struct sp_prof_totals *t);

/* --- prof/dump.c --- */
/* The sampling rate in force (bytes), for the dump's header. */
extern SP_INTERNAL long long sp_prof_rate;
/*
 * sp_prof_dump() - write the profile to @path (%p the pid), replaced
 * atomically.  Return: 0, or -1 with errno (EINVAL: sampling is off or
 * @path is no path; what the file system says otherwise).
 */
SP_INTERNAL int sp_prof_dump(const char *path);
/*
 * sp_prof_write() - the profile's text on @fd: header, one line per stack
 * (its cache's name on a comment line above it), then MAPPED_LIBRARIES:
 * and /proc/self/maps.  Return: 0, or -1 with errno.
 */
SP_INTERNAL int sp_prof_write(int fd);
/* The profile at exit (atexit), to SEGPOOL_HEAP_PROFILE's path. */
SP_INTERNAL void sp_prof_at_exit(void);
/* SEGPOOL_HEAP_PROFILE's path, checked at start-up ("" when off). */
extern SP_INTERNAL char sp_prof_path[4096];

/* --- prof/sites.c --- */
/* Sites at most in one answer, frames of each, bytes of the path. */
#define SP_PROF_SITES_MAX	64
#define SP_PROF_SITE_FRAMES	4
#define SP_PROF_SITES_PATH	256
/*
 * sp_prof_sites() - the @n (1 to SP_PROF_SITES_MAX) stacks with the most
 * sampled bytes in use, their first frames symbolised, as text into the
 * new file @path (absolute), replaced atomically (format: prof/sites.c).
 * Return: the sites written, or -1 with errno (ENOTSUP: sampling is off;
 * EINVAL: a bad @path or @n; what the file system says otherwise).
 */
SP_INTERNAL int sp_prof_sites(const char *path, unsigned int n);

#endif /* SP_PROF_PROF_H */
