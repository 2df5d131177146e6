// SPDX-License-Identifier: MIT
/*
 * malloc/compat.c - glibc's malloc controls, answered from segpool.
 *
 *   malloc_trim()   segpool_shrink_all(): drains the per-CPU magazines of
 *                   every cache, gives their empty slabs back and purges
 *                   every node's free pages; returns 1 when memory went
 *                   back to the OS.
 *   mallopt()       accepts glibc's parameters and changes nothing (segpool
 *                   has no arenas, thresholds or top pad; its knobs are the
 *                   SEGPOOL_* variables); 1 for a known parameter, 0 for an
 *                   unknown one, as glibc answers.
 *   mallinfo2()     the size classes and large blocks in glibc's fields
 *                   (below); mallinfo() the same, each field capped at
 *                   INT_MAX instead of wrapping.
 *   malloc_stats()  segpool_stats_dump() on stderr.
 *   malloc_info()   a short XML document in glibc's outline.
 *
 * mallinfo2 fields:  arena     bytes of every size-class slab
 *                    ordblks   free object slots in those slabs
 *                    smblks    0
 *                    hblks     live large blocks (runs and mappings)
 *                    hblkhd    bytes they hold
 *                    usmblks   0 (as glibc)
 *                    fsmblks   bytes of free objects cached per CPU and in
 *                              the depots (glibc's fastbins, in spirit)
 *                    uordblks  bytes of objects in use (by class size)
 *                    fordblks  arena - uordblks
 *                    keepcost  0 (nothing is kept at a top to trim)
 */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>

#include <segpool/segpool.h>

#include "malloc/preload.h"
#include "numa/topology.h"
#include "numa/region.h"

unsigned long sp_pl_trim(void)
{
	long long released;

	if (!sp_pl_ready())
		return 0;
	released = segpool_shrink_all();
	return released > 0 ? (unsigned long)released : 0;
}

SEGPOOL_API int malloc_trim(size_t pad)
{
	(void)pad;
	return sp_pl_trim() ? 1 : 0;
}

SEGPOOL_API int mallopt(int param, int value)
{
	(void)value;
	switch (param) {
	case M_MXFAST:
	case M_TRIM_THRESHOLD:
	case M_TOP_PAD:
	case M_MMAP_THRESHOLD:
	case M_MMAP_MAX:
	case M_CHECK_ACTION:
	case M_PERTURB:
	case M_ARENA_TEST:
	case M_ARENA_MAX:
		return 1;
	default:
		return 0;
	}
}

SEGPOOL_API struct mallinfo2 mallinfo2(void)
{
	struct mallinfo2 mi = { 0 };
	size_t hblks, hblkhd;

	if (!sp_pl_ready())
		return mi;
	for (unsigned int i = 0; i < SP_KMALLOC_NR_ANY; i++) {
		struct segpool_cache *c = sp_kmalloc_any(i);
		struct segpool_cache_info ci = { .size = sizeof(ci) };

		if (!c || segpool_cache_get_info(c, &ci))
			continue;	/* not made: never held an object */
		mi.arena += ci.slab_bytes;
		mi.ordblks += ci.total_objs - ci.active_objs;
		mi.fsmblks += (ci.cpu_objs + ci.depot_objs) * ci.object_size;
		mi.uordblks += ci.active_objs * ci.object_size;
	}
	sp_large_totals(&hblks, &hblkhd);
	mi.hblks = hblks;
	mi.hblkhd = hblkhd;
	mi.fordblks = mi.arena > mi.uordblks ? mi.arena - mi.uordblks : 0;
	return mi;
}

static int sp_pl_cap(size_t v)
{
	return v > INT_MAX ? INT_MAX : (int)v;
}

SEGPOOL_API struct mallinfo mallinfo(void)
{
	struct mallinfo2 m2 = mallinfo2();
	struct mallinfo mi = {
		.arena = sp_pl_cap(m2.arena),
		.ordblks = sp_pl_cap(m2.ordblks),
		.smblks = sp_pl_cap(m2.smblks),
		.hblks = sp_pl_cap(m2.hblks),
		.hblkhd = sp_pl_cap(m2.hblkhd),
		.usmblks = sp_pl_cap(m2.usmblks),
		.fsmblks = sp_pl_cap(m2.fsmblks),
		.uordblks = sp_pl_cap(m2.uordblks),
		.fordblks = sp_pl_cap(m2.fordblks),
		.keepcost = sp_pl_cap(m2.keepcost),
	};

	return mi;
}

SEGPOOL_API void malloc_stats(void)
{
	segpool_stats_dump(stderr);
}

SEGPOOL_API int malloc_info(int options, FILE *fp)
{
	struct mallinfo2 mi;

	if (options != 0 || !fp) {
		errno = EINVAL;
		return -1;
	}
	mi = mallinfo2();
	fprintf(fp, "<malloc version=\"segpool-%s\">\n<heap nr=\"0\">\n"
		"<sizes>\n", segpool_version());
	for (unsigned int i = 0; sp_pl_ready() && i < SP_KMALLOC_NR_ANY; i++) {
		struct segpool_cache *c = sp_kmalloc_any(i);
		struct segpool_cache_info ci = { .size = sizeof(ci) };

		if (!c || segpool_cache_get_info(c, &ci) || !ci.total_objs)
			continue;
		fprintf(fp, "  <size from=\"%zu\" to=\"%zu\" total=\"%llu\" "
			"count=\"%llu\"/>\n", ci.object_size, ci.object_size,
			(unsigned long long)(ci.total_objs - ci.active_objs) *
			ci.object_size,
			(unsigned long long)(ci.total_objs - ci.active_objs));
	}
	fprintf(fp, "</sizes>\n"
		"<total type=\"fast\" count=\"0\" size=\"%zu\"/>\n"
		"<total type=\"rest\" count=\"%zu\" size=\"%zu\"/>\n"
		"<total type=\"mmap\" count=\"%zu\" size=\"%zu\"/>\n"
		"<system type=\"current\" size=\"%zu\"/>\n"
		"<aspace type=\"total\" size=\"%zu\"/>\n"
		"</heap>\n</malloc>\n",
		mi.fsmblks, mi.ordblks, mi.fordblks, mi.hblks, mi.hblkhd,
		mi.arena + mi.hblkhd, mi.arena + mi.hblkhd);
	return ferror(fp) ? -1 : 0;
}
