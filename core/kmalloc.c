// SPDX-License-Identifier: MIT
/*
 * core/kmalloc.c - the size classes behind segpool_malloc().
 *
 * 41 caches, "kmalloc-8" to "kmalloc-32k": 8 and 16, then steps of 16 up to
 * 128, then four classes per power of two (2^p * 5/4, 6/4, 7/4, 8/4).  Worst
 * internal waste is under 25% above 128 bytes and the mean near 12%.  Every
 * class from 16 up is a multiple of 16, so every allocation of 9 bytes or
 * more is 16-byte aligned; power-of-two classes are naturally aligned (their
 * stride divides the slab size and slabs are aligned to their size).
 */
#include <errno.h>
#include <stdio.h>

#include "core/core.h"

static const unsigned int sp_kmalloc_sizes[SP_KMALLOC_NR_CLASSES] = {
	8, 16, 32, 48, 64, 80, 96, 112, 128,
	160, 192, 224, 256,
	320, 384, 448, 512,
	640, 768, 896, 1024,
	1280, 1536, 1792, 2048,
	2560, 3072, 3584, 4096,
	5120, 6144, 7168, 8192,
	10240, 12288, 14336, 16384,
	20480, 24576, 28672, 32768,
};

/*
 * The stand-in of every class before start-up: no magic, no slots.  The hit
 * paths are closed until the classes exist (sp_pcpu_fast.nr is 0), so its
 * slot array is never reached; the slow path starts the library up first.
 */
static struct segpool_cache sp_kmalloc_boot;

struct segpool_cache *sp_kmalloc_by8[(SP_KMALLOC_BY8_MAX >> 3) + 1] = {
	[0 ... (SP_KMALLOC_BY8_MAX >> 3)] = &sp_kmalloc_boot,
};

struct segpool_cache *sp_kmalloc_caches[SP_KMALLOC_NR_CLASSES] = {
	[0 ... SP_KMALLOC_NR_CLASSES - 1] = &sp_kmalloc_boot,
};

_Static_assert(SP_KMALLOC_NR_CLASSES == 41, "class table size");

size_t sp_kmalloc_class_size(unsigned int idx)
{
	return sp_kmalloc_sizes[idx];
}

struct segpool_cache *sp_kmalloc_cache(unsigned int idx)
{
	return sp_kmalloc_caches[idx];
}

int sp_kmalloc_init(void)
{
	/* kept across tries: an earlier, failed init may have made some */
	static struct segpool_cache *made[SP_KMALLOC_NR_CLASSES];

	for (unsigned int i = 0; i < SP_KMALLOC_NR_CLASSES; i++) {
		unsigned int sz = sp_kmalloc_sizes[i];
		char name[32];

		if (made[i])
			continue;	/* made by an earlier, failed init */
		if (sz >= 1024 && sz % 1024 == 0)
			snprintf(name, sizeof(name), "kmalloc-%uk", sz / 1024);
		else
			snprintf(name, sizeof(name), "kmalloc-%u", sz);
		made[i] = sp_cache_create_full(name, sz, 0, SP_CACHE_KMALLOC,
					       NULL);
		if (!made[i])
			return -ENOMEM;
		if (sp_kmalloc_index(sz) != i || sp_kmalloc_index(sz - 1) > i)
			return -EINVAL;	/* the table and the formula disagree */
	}
	for (unsigned int i = 0; i < SP_KMALLOC_NR_CLASSES; i++)
		sp_kmalloc_caches[i] = made[i];
	for (size_t b = 0; b <= (SP_KMALLOC_BY8_MAX >> 3); b++)
		sp_kmalloc_by8[b] = made[sp_kmalloc_index(b << 3)];
	return 0;
}
