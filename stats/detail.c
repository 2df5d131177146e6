// SPDX-License-Identifier: MIT
/*
 * stats/detail.c - every field of every cache, sysfs style.
 *
 * /sys/kernel/slab/<cache>/ has one file per field; `grep . *` in that
 * folder prints them one per line.  Here a cache is a block of
 * "<key> <value>" lines opened by "cache <name>" and closed by an empty
 * line.  Fields with a per-node split print the total and then
 * "N<node>=<value>" for every node, as SLUB's "objects" or "slabs" files
 * do; with SEGPOOL_STATS_PERCPU the per-CPU counters print the total and
 * then "C<slot>=<value>" for every slot where it is not 0, as SLUB's
 * CONFIG_SLUB_STATS files do, and one more line, slot_objs, splits
 * cpu_objs (the objects in each slot's loaded and previous magazines).
 * The keys come from the field lists of stats/snap.c, which the JSON
 * rendering uses too.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <segpool/segpool.h>

#include "internal/init.h"
#include "numa/topology.h"
#include "stats/pools.h"
#include "stats/snap.h"

struct sp_detail {
	struct sp_sbuf *b;
	unsigned int flags;
	struct sp_fold fold;
};

static void sp_detail_flags(struct sp_sbuf *b, unsigned long flags)
{
	const char *names[16];
	size_t n = sp_cache_flag_names(flags, names, SP_ARRAY_SIZE(names));

	sp_sbuf_names(b, "flags", names, n);
}

/* "<key> <total>" and, for each slot of @s with a non-zero value, " C<i>=v". */
static void
sp_detail_slots(struct sp_sbuf *b, const struct sp_cache_snap *s,
		const char *key, uint64_t total,
		uint64_t (*get)(const struct sp_slot_snap *sl, int k), int k)
{
	sp_sbuf_printf(b, "%s %llu", key, (unsigned long long)total);
	for (unsigned long i = 0; s->slot && i < s->nr_slots; i++) {
		uint64_t v = get(&s->slot[i], k);

		if (v)
			sp_sbuf_printf(b, " C%lu=%llu", i,
				       (unsigned long long)v);
	}
	sp_sbuf_putc(b, '\n');
}

static uint64_t sp_slot_ctr(const struct sp_slot_snap *sl, int k)
{
	return sl->ctr[k];
}

static uint64_t sp_slot_objs(const struct sp_slot_snap *sl, int k)
{
	(void)k;
	return sl->objs;
}

static void sp_detail_cache(const struct sp_cache_snap *s, void *arg)
{
	struct sp_detail *d = arg;
	struct sp_sbuf *b = d->b;
	bool percpu = d->flags & SEGPOOL_STATS_PERCPU;

	if (sp_fold_take(&d->fold, s))
		return;
	sp_sbuf_printf(b, "cache %s\n", s->name);
	for (size_t i = 0; i < sp_nr_cache_fields; i++) {
		const struct sp_cache_field *f = &sp_cache_fields[i];
		uint64_t v = f->get(s);

		if (f->kind == SP_FIELD_FLAGS)
			sp_detail_flags(b, (unsigned long)v);
		else if (f->kind == SP_FIELD_BOOL)
			sp_sbuf_printf(b, "%s %s\n", f->name, v ? "yes" : "no");
		else
			sp_sbuf_printf(b, "%s %llu\n", f->name,
				       (unsigned long long)v);
	}
	for (size_t k = 0; k < sp_nr_node_fields; k++) {
		const struct sp_node_field *f = &sp_node_fields[k];

		sp_sbuf_printf(b, "%s %llu", f->name,
			       (unsigned long long)sp_node_field_total(f, s));
		for (int i = 0; i < s->nr_nodes; i++)
			sp_sbuf_printf(b, " N%d=%llu", sp_topo.node_id[i],
				       (unsigned long long)f->get(s,
								  &s->node[i]));
		sp_sbuf_putc(b, '\n');
	}
	for (int j = 0; j < SP_CTR_NR; j++) {
		int k = sp_ctr_order[j];

		if (percpu)
			sp_detail_slots(b, s, sp_ctr_name[k], s->ctr[k],
					sp_slot_ctr, k);
		else
			sp_sbuf_printf(b, "%s %llu\n", sp_ctr_name[k],
				       (unsigned long long)s->ctr[k]);
	}
	/* the occupancy of each slot: cpu_objs split by slot */
	if (percpu)
		sp_detail_slots(b, s, "slot_objs", s->sum.cpu_objs,
				sp_slot_objs, 0);
	sp_sbuf_putc(b, '\n');
}

/* A mempool or a cache's sheaves: "<kind> <name>", its counters, a blank. */
static void sp_detail_pool(const struct sp_pool_snap *p, void *arg)
{
	struct sp_sbuf *b = arg;

	sp_sbuf_printf(b, "%s %s\n", p->kind, p->name);
	for (size_t i = 0; i < p->nr; i++)
		sp_sbuf_printf(b, "%s %llu\n", p->keys[i],
			       (unsigned long long)p->vals[i]);
	sp_sbuf_putc(b, '\n');
}

int sp_stats_fmt_detail(struct sp_sbuf *b, const char *cache,
			unsigned int flags)
{
	struct sp_detail d = { b, flags, SP_FOLD_INIT(flags) };
	int ret;

	ret = sp_stats_walk(cache, flags & SEGPOOL_STATS_PERCPU,
			    sp_detail_cache, &d);
	if (d.fold.n) {
		sp_fold_finish(&d.fold, b);
		sp_sbuf_putc(b, '\n');		/* a block of its own */
	}
	sp_fold_finish(&d.fold, b);
	if (ret == 0 && cache)
		ret = -ENOENT;
	if (ret >= 0 && !cache)
		sp_stats_pools_walk(sp_detail_pool, b);
	return ret < 0 ? ret : 0;
}

SEGPOOL_API int segpool_stats_dump_detail(FILE *out, const char *cache,
					  unsigned int flags)
{
	struct sp_sbuf b = SP_SBUF_INIT;
	int ret;

	ret = sp_stats_check_args(out, flags);
	if (ret)
		return ret;
	if (!cache)
		sp_stats_fmt_health(&b);
	ret = sp_stats_fmt_detail(&b, cache, flags);
	if (ret < 0) {
		sp_sbuf_free(&b);
		errno = -ret;
		return ret;
	}
	if (!cache)
		sp_stats_arenas_text(&b);
	return sp_sbuf_finish(&b, out);
}
