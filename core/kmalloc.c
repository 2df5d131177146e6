// SPDX-License-Identifier: MIT
/*
 * core/kmalloc.c - the size classes behind segpool_malloc().
 *
 * 53 caches, "kmalloc-8" to "kmalloc-32k": 8 and 16, then steps of 16 up to
 * 128, then four classes per power of two up to 4 KiB (2^p * 5/4, 6/4, 7/4,
 * 8/4) and eight above (2^p * 9/8 ... 16/8).  Worst internal waste is under
 * 25% from 128 bytes to 4 KiB (the mean near 12%) and under 12.5% above,
 * where a block's waste is whole pages: sqlite's 4368-byte page-cache
 * entries took 5120 bytes each with four classes there, 4608 with eight.
 * Every class from 16 up is a multiple of 16, so every allocation of 9
 * bytes or more is 16-byte aligned; power-of-two classes are naturally
 * aligned (their stride divides the slab size and slabs are aligned to
 * their size).
 *
 * Classes fitted to a request size.  A program whose heap is mostly one
 * struct above 1 KiB pays its class's rounding on every one: sqlite3's
 * page-cache entries of 4368 bytes took 4608 each, its 1032-byte ones
 * 1280, 6.8 MB of its 10.6 over glibc's peak (glibc rounds to 16 bytes).
 * So each allocation that leaves the hit path of a table class above
 * 1 KiB (once a magazine's worth of hits) casts a vote for its size,
 * rounded to 64 (the lookup's step), in a majority vote (Boyer and
 * Moore's: one candidate and a count) of the class; a size that wins
 * SP_FIT_VOTES votes net and leaves at least a 32nd of the class unused
 * gets a class of its own, "kmalloc-4416", and the entries of
 * sp_kmalloc_mid[] from it down to the next smaller class take it.
 * Objects already out stay in their old class and are freed by their
 * page tag, as every object is.  A fitted class is never undone (a
 * process makes at most SP_KMALLOC_FIT_MAX), and the votes cost the slow
 * path two plain words of the class's ballot: racing voters may lose a
 * vote, never corrupt one.  Sizes up to 1 KiB keep the table's classes
 * (sp_kmalloc_by8[] is the inline layout's, and their rounding is under
 * 128 bytes).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#include "core/core.h"
#include "percpu/pcpu.h"
#include "young/young.h"

static const unsigned int sp_kmalloc_sizes[SP_KMALLOC_NR_CLASSES] = {
	8, 16, 32, 48, 64, 80, 96, 112, 128,
	160, 192, 224, 256,
	320, 384, 448, 512,
	640, 768, 896, 1024,
	1280, 1536, 1792, 2048,
	2560, 3072, 3584, 4096,
	4608, 5120, 5632, 6144, 6656, 7168, 7680, 8192,
	9216, 10240, 11264, 12288, 13312, 14336, 15360, 16384,
	18432, 20480, 22528, 24576, 26624, 28672, 30720, 32768,
};

/*
 * The stand-in of every class not made yet.  No magic; its slot array is
 * the nil one from start-up on (before, the hit paths are closed), so
 * every allocation through it misses and the slow path makes the class
 * (sp_kmalloc_get()).  A class is made at its first allocation: a process
 * that uses a dozen of the 53 pays for a dozen, at start-up and in memory.
 */
static struct segpool_cache sp_kmalloc_boot
	__attribute__((aligned(SP_CACHE_CTL_ALIGN)));

struct segpool_cache *sp_kmalloc_by8[(SP_KMALLOC_BY8_MAX >> 3) + 1] = {
	[0 ... (SP_KMALLOC_BY8_MAX >> 3)] = &sp_kmalloc_boot,
};

struct segpool_cache *sp_kmalloc_mid[SP_KMALLOC_MID_NR] = {
	[0 ... SP_KMALLOC_MID_NR - 1] = &sp_kmalloc_boot,
};
_Static_assert(sizeof(sp_kmalloc_mid) <= SP_PAGE_SIZE, "within a page");

struct segpool_cache *sp_kmalloc_caches[SP_KMALLOC_NR_CLASSES] = {
	[0 ... SP_KMALLOC_NR_CLASSES - 1] = &sp_kmalloc_boot,
};

/* One maker at a time (lock order level 1, core/init.c). */
static pthread_mutex_t sp_kmalloc_lock = PTHREAD_MUTEX_INITIALIZER;

/* The fitted classes, in the order made (published with release stores). */
static struct segpool_cache *sp_kmalloc_fitted[SP_KMALLOC_FIT_MAX];
static unsigned int sp_kmalloc_nr_fitted;	/* written under the lock */

/*
 * A table class's ballot: the candidate size and its net votes, read and
 * written racily by the slow paths (relaxed atomics: a lost vote is all a
 * race costs).  SP_FIT_CLOSED as the candidate: a class that could not be
 * made for it; the class votes no more.
 */
struct sp_kmalloc_ballot {
	uint32_t cand;
	uint32_t votes;
};
static struct sp_kmalloc_ballot sp_kmalloc_ballots[SP_KMALLOC_NR_CLASSES];

#define SP_FIT_VOTES	32	/* net votes that fit a class */
#define SP_FIT_WASTE	32	/* at least 1/32 of the class unused */
#define SP_FIT_CLOSED	UINT32_MAX

_Static_assert(SP_KMALLOC_NR_CLASSES == 53, "class table size");

size_t sp_kmalloc_class_size(unsigned int idx)
{
	return sp_kmalloc_sizes[idx];
}

struct segpool_cache *sp_kmalloc_cache(unsigned int idx)
{
	struct segpool_cache *c = __atomic_load_n(&sp_kmalloc_caches[idx],
						  __ATOMIC_ACQUIRE);

	return c == &sp_kmalloc_boot ? NULL : c;
}

void sp_kmalloc_name(unsigned int idx, char *buf, size_t size)
{
	unsigned int sz = sp_kmalloc_sizes[idx];

	if (sz >= 1024 && sz % 1024 == 0)
		snprintf(buf, size, "kmalloc-%uk", sz / 1024);
	else
		snprintf(buf, size, "kmalloc-%u", sz);
}

/* Point the table entry for @size at @c: a release store. */
static void sp_kmalloc_set(size_t size, struct segpool_cache *c)
{
	__atomic_store_n((struct segpool_cache **)sp_kmalloc_entry(size), c,
			 __ATOMIC_RELEASE);
}

/*
 * Point the entries of both tables for the sizes class @idx serves at @c:
 * a hit path that loads one sees the cache made.  Each entry is visited at
 * the largest size it covers.
 */
static void sp_kmalloc_publish(unsigned int idx, struct segpool_cache *c)
{
	for (size_t sz = 0; sz <= SEGPOOL_KMALLOC_MAX_CACHE_SIZE;
	     sz += sz < SP_KMALLOC_BY8_MAX ? 8 : SP_KMALLOC_MID_STEP)
		if (sp_kmalloc_index(sz) == idx)
			sp_kmalloc_set(sz, c);
}

struct segpool_cache *sp_kmalloc_get(unsigned int idx)
{
	struct segpool_cache *c = sp_kmalloc_cache(idx);
	char name[32];

	if (likely(c))
		return c;
	pthread_mutex_lock(&sp_kmalloc_lock);
	c = sp_kmalloc_cache(idx);
	if (!c) {
		sp_kmalloc_name(idx, name, sizeof(name));
		c = sp_cache_create_full(name, sp_kmalloc_sizes[idx], 0,
					 SP_CACHE_KMALLOC, NULL);
	}
	if (c && sp_kmalloc_cache(idx) != c) {
		/* release: a hit path that loads it sees it made */
		__atomic_store_n(&sp_kmalloc_caches[idx], c,
				 __ATOMIC_RELEASE);
		sp_kmalloc_publish(idx, c);
	}
	pthread_mutex_unlock(&sp_kmalloc_lock);
	return c;
}

struct segpool_cache *sp_kmalloc_class_made(size_t size)
{
	struct segpool_cache *c = sp_kmalloc_load(sp_kmalloc_entry(size));

	return c == &sp_kmalloc_boot ? NULL : c;
}

struct segpool_cache *sp_kmalloc_class(size_t size)
{
	struct segpool_cache *c = sp_kmalloc_class_made(size);

	return likely(c) ? c : sp_kmalloc_get(sp_kmalloc_index(size));
}

struct segpool_cache *sp_kmalloc_any(unsigned int i)
{
	if (i < SP_KMALLOC_NR_CLASSES)
		return sp_kmalloc_cache(i);
	i -= SP_KMALLOC_NR_CLASSES;
	if (i >= SP_KMALLOC_FIT_MAX)
		return NULL;
	return __atomic_load_n(&sp_kmalloc_fitted[i], __ATOMIC_ACQUIRE);
}

/*
 * Make the class fitted to @size in the range of table class @idx, whose
 * cache is @gen, and point the entries from @size down to the next smaller
 * class at it.  Lock held.
 */
static void sp_kmalloc_fit_locked(unsigned int idx, struct segpool_cache *gen,
				  uint32_t size)
{
	struct sp_kmalloc_ballot *b = &sp_kmalloc_ballots[idx];
	struct segpool_cache *c;
	char name[32];

	/* another voter made it, or the slots are all taken */
	if (sp_kmalloc_class_made(size) != gen ||
	    sp_kmalloc_nr_fitted >= SP_KMALLOC_FIT_MAX)
		return;
	snprintf(name, sizeof(name), "kmalloc-%u", size);
	c = sp_cache_create_full(name, size, 0, SP_CACHE_KMALLOC, NULL);
	if (!c) {
		SP_WRITE_ONCE(b->cand, SP_FIT_CLOSED);
		return;
	}
	__atomic_store_n(&sp_kmalloc_fitted[sp_kmalloc_nr_fitted], c,
			 __ATOMIC_RELEASE);
	SP_WRITE_ONCE(sp_kmalloc_nr_fitted, sp_kmalloc_nr_fitted + 1);
	/* release: a hit path that loads an entry sees the cache made */
	for (size_t sz = size; sz > SP_KMALLOC_BY8_MAX &&
	     sp_kmalloc_class_made(sz) == gen; sz -= SP_KMALLOC_MID_STEP)
		sp_kmalloc_set(sz, c);
	SP_WRITE_ONCE(b->votes, 0);
}

void sp_kmalloc_fit_vote(size_t size, struct segpool_cache *c)
{
	unsigned int idx = sp_kmalloc_index(c->object_size);
	struct sp_kmalloc_ballot *b = &sp_kmalloc_ballots[idx];
	uint32_t want = (uint32_t)SP_ALIGN(size, (size_t)SP_KMALLOC_MID_STEP);
	uint32_t cand = SP_READ_ONCE(b->cand), votes = SP_READ_ONCE(b->votes);

	/* a table class only (a fitted one takes no votes) */
	if (cand == SP_FIT_CLOSED || sp_kmalloc_cache(idx) != c ||
	    SP_READ_ONCE(sp_kmalloc_nr_fitted) >= SP_KMALLOC_FIT_MAX)
		return;
	if (cand == want) {
		if (votes < SP_FIT_VOTES)
			votes++;
	} else if (votes == 0) {
		cand = want;
		votes = 1;
	} else {
		votes--;
	}
	SP_WRITE_ONCE(b->cand, cand);
	SP_WRITE_ONCE(b->votes, votes);
	if (votes < SP_FIT_VOTES || cand != want ||
	    (c->object_size - want) * SP_FIT_WASTE < c->object_size)
		return;
	pthread_mutex_lock(&sp_kmalloc_lock);
	sp_kmalloc_fit_locked(idx, c, want);
	pthread_mutex_unlock(&sp_kmalloc_lock);
}

void sp_kmalloc_fork_lock(void)
{
	pthread_mutex_lock(&sp_kmalloc_lock);
}

void sp_kmalloc_fork_unlock(void)
{
	pthread_mutex_unlock(&sp_kmalloc_lock);
}

void sp_kmalloc_fork_child(void)
{
	pthread_mutex_init(&sp_kmalloc_lock, NULL);
}

int sp_kmalloc_init(void)
{
	if (sp_kmalloc_sizes[SP_KMALLOC_FINE_IDX] != SP_KMALLOC_FINE_FROM ||
	    SP_KMALLOC_NR_CLASSES != SP_YOUNG_CLASSES)
		return -EINVAL;
	for (unsigned int i = 0; i < SP_KMALLOC_NR_CLASSES; i++) {
		unsigned int sz = sp_kmalloc_sizes[i];
		unsigned int prev = i ? sp_kmalloc_sizes[i - 1] : 0;

		/* the table and the formula disagree */
		if (sp_kmalloc_index(sz) != i || sp_kmalloc_index(sz - 1) > i ||
		    sp_kmalloc_index(prev + 1) != i)
			return -EINVAL;
		/* a class that would split a step of sp_kmalloc_mid[] */
		if (sz > SP_KMALLOC_BY8_MAX && sz % SP_KMALLOC_MID_STEP)
			return -EINVAL;
	}
	/* before the hit paths open: they may reach the stand-in's slots */
	sp_kmalloc_boot.slots = sp_pcpu_nil_slots();
	return 0;
}
