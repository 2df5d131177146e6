// SPDX-License-Identifier: MIT
/*
 * stats/json.c - the health section and every cache as one JSON object.
 *
 *   {
 *     "schema": 2,
 *     "source": "library",
 *     "version": "0.1.0",
 *     "health": { <segpool_stats_health() keys>, "node_ids": [...],
 *                 "nodes": [ {"node": <id>, <per-node keys>}, ... ] },
 *     "caches": [
 *       { "name": "...",
 *         "slabinfo": { <the /proc/slabinfo columns> },
 *         <segpool_stats_dump_detail() keys, totals for split ones>,
 *         "nodes": [ {"node": <id>, <per-node keys>}, ... ],
 *         "cpus": [ {"cpu": <slot>, "node": <id>, "slot_objs": n,
 *                    <per-CPU counters>}, ... ] },
 *       ...
 *     ],
 *     "pools": [ {"kind": "mempool"|"sheaves", "name": "...",
 *                 <counters>}, ... ]
 *     "arenas": [ {"name": "...", "node": <id or -1>, "flags": [...],
 *                  <the arena keys of stats/arena.c>}, ... ]
 *   }
 *
 * "cpus" is there with SEGPOOL_STATS_PERCPU, and lists the slots where a
 * value is not 0.  Keys are the detail's keys, so a field has one name in
 * every rendering, and segpool-top --json writes the same document from a
 * process's export segment ("source": "export", the keys the segment
 * carries).  Documentation/reference/stats-json.md lists every key, its type
 * and unit; selftests/test_json_schema checks both producers against that
 * list.  "schema" (SP_JSON_SCHEMA) changes when a key changes meaning or
 * goes away (new keys may appear without it).  Numbers are unsigned integers
 * printed in full; JSON readers that keep numbers as doubles lose precision
 * above 2^53, far beyond any count here but the byte totals of huge regions.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <segpool/segpool.h>

#include "arena/arena.h"
#include "internal/init.h"
#include "internal/json.h"
#include "numa/topology.h"
#include "stats/pools.h"
#include "stats/snap.h"

/* Everything the writer produces goes into the statistics buffer. */
static void sp_json_sbuf_sink(void *arg, const char *str, size_t n)
{
	sp_sbuf_write(arg, str, n);
}

/* --- the health section ------------------------------------------------- */

static void sp_json_health(struct sp_json *j, const struct segpool_health *h)
{
	sp_json_open(j, "health", '{', false);
	for (size_t i = 0; i < sp_nr_health_fields; i++) {
		const struct sp_health_field *f = &sp_health_fields[i];

		if (f->kind == SP_FIELD_STR)
			sp_json_str(j, f->name, f->str(h));
		else if (f->kind == SP_FIELD_BOOL)
			sp_json_bool(j, f->name, f->num(h));
		else
			sp_json_u64(j, f->name, f->num(h));
	}
	sp_json_open(j, "node_ids", '[', true);
	for (unsigned int i = 0; i < h->nr_nodes; i++)
		sp_json_int(j, NULL, h->node[i].node);
	sp_json_close(j);
	sp_json_open(j, "nodes", '[', false);
	for (unsigned int i = 0; i < h->nr_nodes; i++) {
		sp_json_open(j, NULL, '{', true);
		sp_json_int(j, "node", h->node[i].node);
		for (size_t k = 0; k < sp_nr_health_node_fields; k++) {
			const struct sp_health_node_field *f =
				&sp_health_node_fields[k];

			if (f->kind == SP_FIELD_BOOL)
				sp_json_bool(j, f->name, f->get(&h->node[i]));
			else
				sp_json_u64(j, f->name, f->get(&h->node[i]));
		}
		sp_json_close(j);
	}
	sp_json_close(j);
	sp_json_close(j);
}

/* --- a cache ------------------------------------------------------------ */

struct sp_json_walk {
	struct sp_json *j;
	unsigned int flags;
};

static void sp_json_flags(struct sp_json *j, unsigned long flags)
{
	const char *names[16];
	size_t n = sp_cache_flag_names(flags, names, SP_ARRAY_SIZE(names));

	sp_json_open(j, "flags", '[', true);
	for (size_t i = 0; i < n; i++)
		sp_json_str(j, NULL, names[i]);
	sp_json_close(j);
}

static bool sp_slot_quiet(const struct sp_slot_snap *sl)
{
	if (sl->objs)
		return false;
	for (int k = 0; k < SP_CTR_NR; k++)
		if (sl->ctr[k])
			return false;
	return true;
}

static void sp_json_cpus(struct sp_json *j, const struct sp_cache_snap *s)
{
	sp_json_open(j, "cpus", '[', false);
	for (unsigned long i = 0; s->slot && i < s->nr_slots; i++) {
		const struct sp_slot_snap *sl = &s->slot[i];
		int node = sl->node < (unsigned int)sp_topo.nr_nodes ?
			   sp_topo.node_id[sl->node] : -1;

		if (sp_slot_quiet(sl))
			continue;
		sp_json_open(j, NULL, '{', true);
		sp_json_u64(j, "cpu", i);
		sp_json_int(j, "node", node);
		sp_json_u64(j, "slot_objs", sl->objs);
		for (int n = 0; n < SP_CTR_NR; n++)
			sp_json_u64(j, sp_ctr_name[sp_ctr_order[n]],
				    sl->ctr[sp_ctr_order[n]]);
		sp_json_close(j);
	}
	sp_json_close(j);
}

static void sp_json_cache(const struct sp_cache_snap *s, void *arg)
{
	struct sp_json_walk *w = arg;
	struct sp_json *j = w->j;
	bool percpu = w->flags & SEGPOOL_STATS_PERCPU;
	uint64_t si[SP_SI_NR];

	sp_json_open(j, NULL, '{', false);
	sp_json_str(j, "name", s->name);
	sp_slabinfo_of(s, si);
	sp_json_open(j, "slabinfo", '{', true);
	for (int i = 0; i < SP_SI_NR; i++)
		sp_json_u64(j, sp_slabinfo_name[i], si[i]);
	sp_json_close(j);
	for (size_t i = 0; i < sp_nr_cache_fields; i++) {
		const struct sp_cache_field *f = &sp_cache_fields[i];

		if (f->kind == SP_FIELD_FLAGS)
			sp_json_flags(j, (unsigned long)f->get(s));
		else if (f->kind == SP_FIELD_BOOL)
			sp_json_bool(j, f->name, f->get(s));
		else
			sp_json_u64(j, f->name, f->get(s));
	}
	for (size_t k = 0; k < sp_nr_node_fields; k++)
		sp_json_u64(j, sp_node_fields[k].name,
			    sp_node_field_total(&sp_node_fields[k], s));
	for (int n = 0; n < SP_CTR_NR; n++)
		sp_json_u64(j, sp_ctr_name[sp_ctr_order[n]],
			    s->ctr[sp_ctr_order[n]]);
	sp_json_open(j, "nodes", '[', false);
	for (int i = 0; i < s->nr_nodes; i++) {
		sp_json_open(j, NULL, '{', true);
		sp_json_int(j, "node", sp_topo.node_id[i]);
		for (size_t k = 0; k < sp_nr_node_fields; k++)
			sp_json_u64(j, sp_node_fields[k].name,
				    sp_node_fields[k].get(s, &s->node[i]));
		sp_json_close(j);
	}
	sp_json_close(j);
	if (percpu)
		sp_json_cpus(j, s);
	sp_json_close(j);
}

/* "pools": a mempool or a cache's sheaves (stats/pools.h). */
static void sp_json_pool(const struct sp_pool_snap *p, void *arg)
{
	struct sp_json *j = arg;

	sp_json_open(j, NULL, '{', true);
	sp_json_str(j, "kind", p->kind);
	sp_json_str(j, "name", p->name);
	for (size_t i = 0; i < p->nr; i++)
		sp_json_u64(j, p->keys[i], p->vals[i]);
	sp_json_close(j);
}

/* --- an arena: its name, node, flags and SP_ARENA_FIELDS --------------- */

static void sp_json_arena(const struct sp_bump_snap *s, void *arg)
{
	struct sp_json *j = arg;
	const char *names[8];
	size_t n =
		sp_bump_flag_names(s->info.flags, names, SP_ARRAY_SIZE(names));

	sp_json_open(j, NULL, '{', true);
	sp_json_str(j, "name", s->name);
	sp_json_int(j, "node", s->info.node);
	sp_json_open(j, "flags", '[', true);
	for (size_t i = 0; i < n; i++)
		sp_json_str(j, NULL, names[i]);
	sp_json_close(j);
	for (size_t i = 0; i < sp_nr_bump_fields; i++)
		sp_json_u64(j, sp_bump_fields[i].name,
			    sp_bump_fields[i].get(&s->info));
	sp_json_close(j);
}

int sp_stats_fmt_json(struct sp_sbuf *b, unsigned int flags)
{
	struct sp_json j;
	struct sp_json_walk w = { &j, flags };
	struct segpool_health h;
	int ret;

	sp_stats_health_read(&h);
	sp_json_init(&j, sp_json_sbuf_sink, b);
	sp_json_open(&j, NULL, '{', false);
	sp_json_int(&j, "schema", SP_JSON_SCHEMA);
	sp_json_str(&j, "source", "library");
	sp_json_str(&j, "version", h.version);
	sp_json_health(&j, &h);
	sp_json_open(&j, "caches", '[', false);
	ret = sp_stats_walk(NULL, flags & SEGPOOL_STATS_PERCPU, sp_json_cache,
			    &w);
	if (ret < 0)
		return ret;
	sp_json_close(&j);
	sp_json_open(&j, "pools", '[', false);
	sp_stats_pools_walk(sp_json_pool, &j);
	sp_json_close(&j);
	sp_json_open(&j, "arenas", '[', false);
	sp_bump_walk(sp_json_arena, &j);
	sp_json_close(&j);
	sp_json_end(&j);
	return 0;
}

SEGPOOL_API int segpool_stats_json(FILE *out, unsigned int flags)
{
	struct sp_sbuf b = SP_SBUF_INIT;
	int ret;

	ret = sp_stats_check_args(out, flags);
	if (ret)
		return ret;
	ret = sp_stats_fmt_json(&b, flags);
	if (ret < 0) {
		sp_sbuf_free(&b);
		errno = -ret;
		return ret;
	}
	return sp_sbuf_finish(&b, out);
}
