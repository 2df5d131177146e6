// SPDX-License-Identifier: MIT
/*
 * tools/segpool-top/json.c - the snapshot as one JSON object (--json).
 *
 *   { "layout_version": 1, "pid": ..., "comm": ..., "version": ...,
 *     "percpu_mode": ..., "nr_nodes": ..., "nr_cpus": ..., "page_size": ...,
 *     "interval_ms": ..., "updates": ..., "start_realtime_ns": ...,
 *     "monotonic_ns": ..., "realtime_ns": ..., "collect_ns": ...,
 *     "truncated": false,
 *     "nodes": [ { "node_id": 0, "bound": ..., "pages_reserved": ... } ],
 *     "caches": [ { "name": ..., "flags": [ "kmalloc", ... ],
 *                   "object_size": ..., ...,
 *                   "nodes": [ { "node_id": 0, "partial_slabs": ... } ] } ],
 *     "arenas": [ { "name": ..., "node": -1, "flags": [ "threadsafe" ],
 *                   "in_use": ..., ... } ] }
 *
 * Numeric field names are those of include/segpool/export.h (which follow
 * struct segpool_cache_info); fields.c lists them.
 */
#include <string.h>

#include <segpool/arena.h>

#include "tools/segpool-top/top.h"

/* @s as a JSON string: quotes, backslashes and control bytes escaped. */
static void top_json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(out, "\\u%04x", ch);
		else
			fputc(ch, out);
	}
	fputc('"', out);
}

static void top_json_fields(FILE *out, const void *rec,
			    const struct top_field *f, size_t n,
			    const char *indent)
{
	for (size_t i = 0; i < n; i++)
		fprintf(out, ",\n%s\"%s\": %llu", indent, f[i].name,
			(unsigned long long)top_field_get(rec, &f[i]));
}

static void top_json_flags(FILE *out, uint32_t flags)
{
	bool first = true;

	fputc('[', out);
	for (size_t b = 0; b < top_cache_nflags; b++) {
		if (!(flags & (1U << b)))
			continue;
		fprintf(out, "%s\"%s\"", first ? "" : ", ",
			top_cache_flag_names[b]);
		first = false;
	}
	fputc(']', out);
}

static void top_json_cache(FILE *out, const struct top_snap *s, size_t i)
{
	const struct segpool_export_cache *c = &s->caches[i];
	const struct segpool_export_cache_node *cn = top_snap_cache_nodes(s, i);

	fprintf(out, "    {\n      \"name\": ");
	top_json_str(out, c->name);
	fprintf(out, ",\n      \"flags\": ");
	top_json_flags(out, c->flags);
	top_json_fields(out, c, top_cache_fields, top_cache_nfields, "      ");
	fprintf(out, ",\n      \"nodes\": [");
	for (uint32_t n = 0; n < s->hdr.nr_nodes; n++) {
		fprintf(out, "%s\n        { \"node_id\": %d", n ? "," : "",
			cn[n].node_id);
		for (size_t f = 0; f < top_cnode_nfields; f++)
			fprintf(out, ", \"%s\": %llu", top_cnode_fields[f].name,
				(unsigned long long)top_field_get(&cn[n],
							&top_cnode_fields[f]));
		fprintf(out, " }");
	}
	fprintf(out, "\n      ]\n    }");
}

static void top_json_arena(FILE *out, const struct segpool_export_arena *a)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} flags[] = {
		{ SEGPOOL_ARENA_THREADSAFE, "threadsafe" },
		{ SEGPOOL_ARENA_THISNODE, "thisnode" },
		{ SEGPOOL_ARENA_RED_ZONE, "red_zone" },
		{ SEGPOOL_ARENA_POISON, "poison" },
	};
	bool first = true;

	fprintf(out, "    { \"name\": ");
	top_json_str(out, a->name);
	fprintf(out, ", \"node\": %d, \"flags\": [", a->node);
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		if (!(a->flags & flags[i].bit))
			continue;
		fprintf(out, "%s\"%s\"", first ? " " : ", ", flags[i].name);
		first = false;
	}
	fprintf(out, "%s]", first ? "" : " ");
	for (size_t f = 0; f < top_arena_nfields; f++)
		fprintf(out, ", \"%s\": %llu", top_arena_fields[f].name,
			(unsigned long long)top_field_get(a, &top_arena_fields[f]));
	fprintf(out, " }");
}

int top_print_json(FILE *out, const struct top_snap *s)
{
	const struct segpool_export_header *h = &s->hdr;

	fprintf(out, "{\n  \"layout_version\": %u,\n  \"pid\": %d,\n  \"comm\": ",
		h->layout_version, h->pid);
	top_json_str(out, h->comm);
	fprintf(out, ",\n  \"version\": ");
	top_json_str(out, h->version);
	fprintf(out, ",\n  \"percpu_mode\": ");
	top_json_str(out, h->percpu_mode);
	fprintf(out, ",\n  \"nr_nodes\": %u,\n  \"nr_cpus\": %u,\n"
		"  \"page_size\": %u,\n  \"interval_ms\": %u,\n"
		"  \"updates\": %llu,\n  \"start_realtime_ns\": %llu,\n"
		"  \"monotonic_ns\": %llu,\n  \"realtime_ns\": %llu,\n"
		"  \"collect_ns\": %llu,\n  \"truncated\": %s,\n  \"nodes\": [",
		h->nr_nodes, h->nr_cpus, h->page_size, h->interval_ms,
		(unsigned long long)h->updates,
		(unsigned long long)h->start_realtime_ns,
		(unsigned long long)h->monotonic_ns,
		(unsigned long long)h->realtime_ns,
		(unsigned long long)h->collect_ns,
		(h->flags & SEGPOOL_EXPORT_F_TRUNCATED) ? "true" : "false");
	for (uint32_t n = 0; n < h->nr_nodes; n++) {
		fprintf(out, "%s\n    { \"node_id\": %d", n ? "," : "",
			s->nodes[n].node_id);
		for (size_t f = 0; f < top_node_nfields; f++)
			fprintf(out, ", \"%s\": %llu", top_node_fields[f].name,
				(unsigned long long)top_field_get(&s->nodes[n],
							&top_node_fields[f]));
		fprintf(out, " }");
	}
	fprintf(out, "\n  ],\n  \"caches\": [");
	for (size_t i = 0; i < h->nr_caches; i++) {
		fprintf(out, "%s\n", i ? "," : "");
		top_json_cache(out, s, i);
	}
	fprintf(out, "\n  ],\n  \"arenas\": [");
	for (uint32_t i = 0; i < h->nr_arenas; i++) {
		fprintf(out, "%s\n", i ? "," : "");
		top_json_arena(out, &s->arenas[i]);
	}
	fprintf(out, "\n  ]\n}\n");
	if (fflush(out) || ferror(out))
		return -1;
	return 0;
}
