// SPDX-License-Identifier: MIT
/*
 * percpu/magazine.c - magazine memory.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "internal/report.h"
#include "percpu/magazine.h"
#include "slab/slab.h"

void *sp_mag_none[2] __sp_cacheline_aligned = { SP_MAG_GUARD, SP_MAG_GUARD };
void *sp_mag_busy[3] __sp_cacheline_aligned = {
	SP_MAG_GUARD, SP_MAG_GUARD, SP_MAG_GUARD,
};

static struct segpool_cache *sp_mag_caches[SP_MAG_CLASSES];

int sp_mag_init(void)
{
	for (unsigned int cls = 0; cls < SP_MAG_CLASSES; cls++) {
		char name[32];

		if (sp_mag_caches[cls])
			continue;	/* made by an earlier, failed init */
		snprintf(name, sizeof(name), "segpool-magazine-%u",
			 sp_mag_class_cap(cls));
		sp_mag_caches[cls] = sp_cache_create(name, 128U << cls, 0,
						     SP_CACHE_INTERNAL |
						     SP_CACHE_ZEROED, NULL);
		if (!sp_mag_caches[cls])
			return -ENOMEM;
		/* link and free mark stay out of the rounds (sp_mag_alloc()) */
		SP_BUG_ON(sp_mag_caches[cls]->fp_offset != 0 ||
			  sp_mag_caches[cls]->key_off + SP_FREEMARK_SIZE >
			  offsetof(struct sp_mag, slot));
	}
	return 0;
}

struct sp_mag *sp_mag_alloc(unsigned int cls)
{
	struct sp_mag *m;

	if (!sp_slab_alloc_bulk(sp_mag_caches[cls], sp_numa_current_idx(), 1,
				(void **)&m))
		return NULL;
	m->next = NULL;
	m->cap = sp_mag_class_cap(cls);
	m->count = 0;
	m->slot[0] = SP_MAG_GUARD;
	/*
	 * The full test reads the word at top: above top every word must be
	 * even.  The memory may come from a slab another cache gave back, with
	 * the program's bytes in it: an odd word there read as "full" and
	 * made the free path count a third-full magazine as full, handing out
	 * whatever the stale words held.  So a magazine cache's new slabs
	 * start zeroed (SP_CACHE_ZEROED), and afterwards its rounds only ever
	 * hold objects, which are even: the slab's link and free mark sit in
	 * @next and @cap/@count, outside the rounds (fp_offset 0, key_off 8),
	 * and no debug option reaches an internal cache.  No 8 KiB memset on
	 * every magazine made, which was the free path's p99.9 on the pool
	 * pattern.
	 */
	m->slot[m->cap + 1] = SP_MAG_GUARD;
	return m;
}

unsigned int sp_mag_class_of(const struct sp_mag *m)
{
	return sp_ilog2((m->cap + 4) * 8 / 128);
}

void sp_mag_free(struct sp_mag *m)
{
	struct segpool_cache *c = sp_mag_caches[sp_mag_class_of(m)];
	struct sp_slab *s = sp_obj_to_slab(m);

	sp_slab_free_one(c, s, m);
}
