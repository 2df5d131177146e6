// SPDX-License-Identifier: MIT
/*
 * tools/segpool-top/rows.c - the list's rows: which, in what order, and how
 * much each cache grew since the previous refresh.
 *
 * Growth is the change of a cache's slab memory (slab_bytes) between the
 * previous snapshot the viewer showed and this one; a cache that was not in
 * the previous snapshot is new.  Ties in every order fall back to the name,
 * so rows do not jump between refreshes.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tools/segpool-top/top.h"

const struct segpool_export_cache *top_prev_find(const struct top_snap *prev,
						 const char *name)
{
	return prev ? top_snap_find(prev, name) : NULL;
}

static enum top_sort top_cmp_sort;
static bool top_cmp_reverse;

static int top_cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

/* Largest first for the numeric keys, A to Z for the name. */
static int top_row_cmp(const void *pa, const void *pb)
{
	const struct top_row *a = pa, *b = pb;
	int r = 0;

	switch (top_cmp_sort) {
	case TOP_SORT_SIZE:
		r = -top_cmp_u64(a->c->slab_bytes, b->c->slab_bytes);
		break;
	case TOP_SORT_OBJS:
		r = -top_cmp_u64(a->c->active_objs, b->c->active_objs);
		break;
	case TOP_SORT_GROWTH:
		r = a->growth > b->growth ? -1 : a->growth < b->growth;
		if (!r)
			r = -top_cmp_u64(a->c->slab_bytes, b->c->slab_bytes);
		break;
	case TOP_SORT_NAME:
		break;
	}
	if (!r)
		r = strcmp(a->c->name, b->c->name);
	return top_cmp_reverse ? -r : r;
}

long top_rows_build(struct top_row **rows, size_t *cap,
		    const struct top_snap *cur, const struct top_snap *prev,
		    enum top_sort sort, bool reverse, bool hide_empty)
{
	size_t n = 0;

	if (cur->hdr.nr_caches > *cap) {
		struct top_row *r = realloc(*rows, cur->hdr.nr_caches * sizeof(*r));

		if (!r)
			return -1;
		*rows = r;
		*cap = cur->hdr.nr_caches;
	}
	for (size_t i = 0; i < cur->hdr.nr_caches; i++) {
		const struct segpool_export_cache *c = &cur->caches[i];
		const struct segpool_export_cache *p = top_prev_find(prev, c->name);
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
	switch (sort) {
	case TOP_SORT_SIZE:
		return "cache size";
	case TOP_SORT_OBJS:
		return "active objects";
	case TOP_SORT_NAME:
		return "name";
	case TOP_SORT_GROWTH:
		return "growth";
	}
	return "?";
}

int top_sort_parse(const char *s, enum top_sort *sort)
{
	static const struct {
		const char *name;
		enum top_sort sort;
	} keys[] = {
		{ "size", TOP_SORT_SIZE }, { "s", TOP_SORT_SIZE },
		{ "objects", TOP_SORT_OBJS }, { "o", TOP_SORT_OBJS },
		{ "name", TOP_SORT_NAME }, { "n", TOP_SORT_NAME },
		{ "growth", TOP_SORT_GROWTH }, { "g", TOP_SORT_GROWTH },
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (!strcasecmp(s, keys[i].name)) {
			*sort = keys[i].sort;
			return 0;
		}
	}
	return -1;
}
