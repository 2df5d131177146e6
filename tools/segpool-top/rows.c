// SPDX-License-Identifier: MIT
/*
 * tools/segpool-top/rows.c - the list's rows: which, in what order, and how
 * much each cache grew since the previous refresh.
 *
 * The orders are procps slabtop's, under slabtop's letters (-s and the
 * keys), plus segpool-top's own growth order on a letter slabtop leaves
 * free: top_sort_keys[] is the one list the option parser, the key handler,
 * the help screen and the usage text read.  Numbers sort largest first,
 * names A to Z in natural order (kmalloc-8 < kmalloc-96 < kmalloc-112 <
 * kmalloc-1k < kmalloc-10k); ties fall back to the name, so rows do not
 * jump between refreshes.
 *
 * Growth is the change of a cache's slab memory (slab_bytes) between the
 * previous snapshot the viewer showed and this one; a cache that was not in
 * the previous snapshot is new.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tools/segpool-top/top.h"

const struct top_sort_key top_sort_keys[TOP_SORT_NR] = {
	[TOP_SORT_ACTIVE] = { 'a', "active",
			      "number of active objects", "ACTIVE", true },
	[TOP_SORT_OBJ_PER_SLAB] = { 'b', "objperslab",
				    "objects per slab", "OBJ/SLAB", true },
	[TOP_SORT_CACHE_SIZE] = { 'c', "cachesize",
				  "cache size", "CACHE SIZE", true },
	[TOP_SORT_SLABS] = { 'l', "slabs",
			     "number of slabs", "SLABS", true },
	[TOP_SORT_ACTIVE_SLABS] = { 'v', "activeslabs",
				    "number of active slabs", NULL, true },
	[TOP_SORT_NAME] = { 'n', "name",
			    "name", "NAME", true },
	[TOP_SORT_OBJS] = { 'o', "objects",
			    "number of objects", "OBJS", true },
	[TOP_SORT_PAGES] = { 'p', "pages",
			     "pages per slab", NULL, true },
	[TOP_SORT_OBJ_SIZE] = { 's', "objsize",
				"object size", "OBJ SIZE", true },
	[TOP_SORT_USE] = { 'u', "use",
			   "cache utilization", "USE", true },
	[TOP_SORT_GROWTH] = { 'g', "growth",
			      "growth of the cache size", "GROWTH", false },
};

const struct segpool_export_cache *top_prev_find(const struct top_snap *prev,
						 const char *name)
{
	return prev ? top_snap_find(prev, name) : NULL;
}

/*
 * A run of digits at *@p as a number, times 1024^k for a size suffix (k, m,
 * g in either case) that ends a word: "10k" is 10240, "96" is 96.
 */
static unsigned long long top_nat_number(const char **p)
{
	const char *s = *p;
	unsigned long long v = 0;
	int shift = 0;

	while (isdigit((unsigned char)*s)) {
		unsigned long long nv = v * 10 + (unsigned long long)(*s - '0');

		v = nv / 10 == v ? nv : ~0ULL;	/* saturate */
		s++;
	}
	switch (*s) {
	case 'k': case 'K': shift = 10; break;
	case 'm': case 'M': shift = 20; break;
	case 'g': case 'G': shift = 30; break;
	}
	if (shift && !isalnum((unsigned char)s[1])) {
		v = v <= (~0ULL >> shift) ? v << shift : ~0ULL;
		s++;
	}
	*p = s;
	return v;
}

int top_natcmp(const char *a, const char *b)
{
	const char *pa = a, *pb = b;

	while (*pa && *pb) {
		if (isdigit((unsigned char)*pa) &&
		    isdigit((unsigned char)*pb)) {
			unsigned long long va = top_nat_number(&pa);
			unsigned long long vb = top_nat_number(&pb);

			if (va != vb)
				return va < vb ? -1 : 1;
			continue;
		}
		if (*pa != *pb)
			return (unsigned char)*pa < (unsigned char)*pb ? -1 : 1;
		pa++;
		pb++;
	}
	if (*pa || *pb)
		return *pa ? 1 : -1;
	return strcmp(a, b);		/* "k010" and "k10": still an order */
}

static enum top_sort top_cmp_sort;
static bool top_cmp_reverse;

static int top_cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

/* Utilization in parts per million, so that it compares exactly enough. */
static uint64_t top_use_ppm(const struct segpool_export_cache *c)
{
	return c->total_objs ? c->active_objs * 1000000 / c->total_objs : 0;
}

int top_row_order(const struct top_row *a, const struct top_row *b,
		  enum top_sort sort)
{
	const struct segpool_export_cache *x = a->c, *y = b->c;
	int r = 0;

	switch (sort) {
	case TOP_SORT_ACTIVE:
		r = -top_cmp_u64(x->active_objs, y->active_objs);
		break;
	case TOP_SORT_OBJ_PER_SLAB:
		r = -top_cmp_u64(x->objs_per_slab, y->objs_per_slab);
		break;
	case TOP_SORT_CACHE_SIZE:
		r = -top_cmp_u64(x->slab_bytes, y->slab_bytes);
		break;
	case TOP_SORT_SLABS:
		r = -top_cmp_u64(x->total_slabs, y->total_slabs);
		break;
	case TOP_SORT_ACTIVE_SLABS:
		r = -top_cmp_u64(x->active_slabs, y->active_slabs);
		break;
	case TOP_SORT_OBJS:
		r = -top_cmp_u64(x->total_objs, y->total_objs);
		break;
	case TOP_SORT_PAGES:
		r = -top_cmp_u64(x->pages_per_slab, y->pages_per_slab);
		break;
	case TOP_SORT_OBJ_SIZE:
		r = -top_cmp_u64(x->object_size, y->object_size);
		break;
	case TOP_SORT_USE:
		r = -top_cmp_u64(top_use_ppm(x), top_use_ppm(y));
		break;
	case TOP_SORT_GROWTH:
		r = a->growth > b->growth ? -1 : a->growth < b->growth;
		if (!r)
			r = -top_cmp_u64(x->slab_bytes, y->slab_bytes);
		break;
	case TOP_SORT_NAME:
	case TOP_SORT_NR:
		break;
	}
	if (!r)
		r = top_natcmp(x->name, y->name);
	return r;
}

static int top_row_cmp(const void *pa, const void *pb)
{
	int r = top_row_order(pa, pb, top_cmp_sort);

	return top_cmp_reverse ? -r : r;
}

long top_rows_build(struct top_row **rows, size_t *cap,
		    const struct top_snap *cur, const struct top_snap *prev,
		    enum top_sort sort, bool reverse, bool hide_empty)
{
	size_t n = 0;

	if (cur->hdr.nr_caches > *cap) {
		struct top_row *r =
			realloc(*rows, cur->hdr.nr_caches * sizeof(*r));

		if (!r)
			return -1;
		*rows = r;
		*cap = cur->hdr.nr_caches;
	}
	for (size_t i = 0; i < cur->hdr.nr_caches; i++) {
		const struct segpool_export_cache *c = &cur->caches[i];
		const struct segpool_export_cache *p =
			top_prev_find(prev, c->name);
		struct top_row *r = &(*rows)[n];

		if (hide_empty && c->total_slabs == 0 && !(p && p->total_slabs))
			continue;
		r->c = c;
		r->idx = i;
		r->is_new = prev && !p;
		r->growth = p ? (int64_t)(c->slab_bytes - p->slab_bytes) : 0;
		n++;
	}
	top_cmp_sort = sort;
	top_cmp_reverse = reverse;
	qsort(*rows, n, sizeof(**rows), top_row_cmp);
	return (long)n;
}

const char *top_sort_name(enum top_sort sort)
{
	return sort < TOP_SORT_NR ? top_sort_keys[sort].what : "?";
}

int top_sort_of_key(int key, enum top_sort *sort)
{
	if (key <= 0 || key > 0x7f)
		return -1;
	for (int i = 0; i < TOP_SORT_NR; i++) {
		/*
		 * slabtop takes its letters in both cases;
		 * g is ours, lower only
		 */
		if (top_sort_keys[i].key == key ||
		    (top_sort_keys[i].slabtop &&
		     top_sort_keys[i].key == tolower(key))) {
			*sort = (enum top_sort)i;
			return 0;
		}
	}
	return -1;
}

int top_sort_parse(const char *s, enum top_sort *sort)
{
	if (s[0] && !s[1])
		return top_sort_of_key((unsigned char)s[0], sort);
	for (int i = 0; i < TOP_SORT_NR; i++) {
		if (!strcasecmp(s, top_sort_keys[i].word)) {
			*sort = (enum top_sort)i;
			return 0;
		}
	}
	return -1;
}
