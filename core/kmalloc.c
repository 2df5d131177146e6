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
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#include "core/core.h"
#include "percpu/pcpu.h"

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

struct segpool_cache *sp_kmalloc_by256[(SEGPOOL_KMALLOC_MAX_CACHE_SIZE >>
					SP_KMALLOC_BY256_SHIFT) + 1] = {
	[0 ... (SEGPOOL_KMALLOC_MAX_CACHE_SIZE >> SP_KMALLOC_BY256_SHIFT)] =
		&sp_kmalloc_boot,
};

struct segpool_cache *sp_kmalloc_caches[SP_KMALLOC_NR_CLASSES] = {
	[0 ... SP_KMALLOC_NR_CLASSES - 1] = &sp_kmalloc_boot,
};

/* One maker at a time (lock order level 1, core/init.c). */
static pthread_mutex_t sp_kmalloc_lock = PTHREAD_MUTEX_INITIALIZER;

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

/*
 * Point the entries of the size table @tab (one per 2^@shift bytes) for
 * the sizes @first to @last that class @idx serves at @c, with release
 * stores: a hit path that loads one sees the cache made.
 */
static void sp_kmalloc_publish(struct segpool_cache **tab, size_t first,
			       size_t last, unsigned int shift,
			       unsigned int idx, struct segpool_cache *c)
{
	for (size_t sz = first; sz <= last; sz += (size_t)1 << shift)
		if (sp_kmalloc_index(sz) == idx)
			__atomic_store_n(&tab[sz >> shift], c,
					 __ATOMIC_RELEASE);
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
		sp_kmalloc_publish(sp_kmalloc_by8, 0, SP_KMALLOC_BY8_MAX, 3,
				   idx, c);
		sp_kmalloc_publish(sp_kmalloc_by256,
				   SP_KMALLOC_BY8_MAX + SP_KMALLOC_BY256,
				   SEGPOOL_KMALLOC_MAX_CACHE_SIZE,
				   SP_KMALLOC_BY256_SHIFT, idx, c);
	}
	pthread_mutex_unlock(&sp_kmalloc_lock);
	return c;
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
	if (sp_kmalloc_sizes[SP_KMALLOC_FINE_IDX] != SP_KMALLOC_FINE_FROM)
		return -EINVAL;
	for (unsigned int i = 0; i < SP_KMALLOC_NR_CLASSES; i++) {
		unsigned int sz = sp_kmalloc_sizes[i];
		unsigned int prev = i ? sp_kmalloc_sizes[i - 1] : 0;

		/* the table and the formula disagree */
		if (sp_kmalloc_index(sz) != i || sp_kmalloc_index(sz - 1) > i ||
		    sp_kmalloc_index(prev + 1) != i)
			return -EINVAL;
		/* a class that would split a step of sp_kmalloc_by256[] */
		if (sz > SP_KMALLOC_BY8_MAX && sz % SP_KMALLOC_BY256)
			return -EINVAL;
	}
	/* before the hit paths open: they may reach the stand-in's slots */
	sp_kmalloc_boot.slots = sp_pcpu_nil_slots();
	return 0;
}
