// SPDX-License-Identifier: MIT
/*
 * tools/segpool-top/slabinfo.c - the snapshot as a /proc/slabinfo 2.1 dump.
 *
 * Byte for byte what segpool_stats_dump() prints in the process itself
 * (stats/stats.c), from the same figures, so every slabinfo parser reads
 * the output of "segpool-top --slabinfo" too.  See
 * Documentation/reference/stats-keys.md
 * for the meaning of each column in segpool.
 */
#include "tools/segpool-top/top.h"

int top_print_slabinfo(FILE *out, const struct top_snap *s)
{
	int bad = 0;

	bad |= fprintf(out, "slabinfo - version: 2.1\n") < 0;
	bad |= fprintf(out,
		       "# name            <active_objs> <num_objs> <objsize> "
		       "<objperslab> <pagesperslab> : tunables <limit> "
		       "<batchcount> <sharedfactor> : slabdata <active_slabs> "
		       "<num_slabs> <sharedavail>\n") < 0;
	for (size_t i = 0; i < s->hdr.nr_caches; i++) {
		const struct segpool_export_cache *c = &s->caches[i];

		bad |= fprintf(out,
			       "%-17s %6llu %6llu %6llu %4u %4u : tunables "
			       "%4u %4u %4u : slabdata %6llu %6llu %6llu\n",
			       c->name, (unsigned long long)c->active_objs,
			       (unsigned long long)c->total_objs,
			       (unsigned long long)c->stride, c->objs_per_slab,
			       c->pages_per_slab, 2 * c->mag_size, c->mag_size,
			       c->depot_max,
			       (unsigned long long)c->active_slabs,
			       (unsigned long long)c->total_slabs,
			       (unsigned long long)c->depot_objs) < 0;
	}
	if (fflush(out) || bad)
		return -1;
	return 0;
}
