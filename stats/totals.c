// SPDX-License-Identifier: MIT
/*
 * stats/totals.c - the totals the print at exit begins with.
 *
 * As mimalloc's and jemalloc's prints do, the first lines say how much
 * memory the program used, before any cache:
 *
 *   totals
 *   in_use_bytes 1234          objects held (object sizes), large blocks
 *                              and live young blocks
 *   slab_bytes 65536           memory in slabs, full, partial or empty
 *   large_bytes 0              mapped for allocations above the classes
 *   young_bytes 8192           the young area's blocks (young/young.h)
 *   mapped_bytes 4259840       committed in the node regions + large
 *   resident_bytes 2412544     resident in the process (/proc/self/statm)
 *   peak_resident_bytes ...    the most ever resident (getrusage)
 *
 * segpool keeps no high-water mark of its own; the peak is the process's
 * peak resident set, as mimalloc's "peak rss".  The two resident figures
 * are 0 where /proc or getrusage cannot tell.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "large/large.h"
#include "os/os.h"
#include "stats/snap.h"
#include "young/young.h"

struct sp_totals {
	uint64_t in_use;
	uint64_t slabs;
};

static void sp_totals_cache(const struct sp_cache_snap *s, void *arg)
{
	struct sp_totals *t = arg;

	t->in_use += sp_node_active(&s->sum) * s->object_size;
	t->slabs += sp_node_slabs(&s->sum) * (SP_PAGE_SIZE << s->order);
}

void sp_stats_fmt_totals(struct sp_sbuf *b)
{
	struct sp_totals t = { 0, 0 };
	struct segpool_health h;
	size_t large_n = 0, large_bytes = 0;
	uint64_t mapped = 0, peak = 0, resident;

	uint64_t young_n, young_area, young_live;

	sp_stats_walk(NULL, false, sp_totals_cache, &t);
	sp_young_counts(&young_n, &young_area, &young_live);
	sp_large_totals(&large_n, &large_bytes);
	sp_stats_health_read(&h);
	for (unsigned int i = 0; i < h.nr_nodes; i++)
		mapped += h.node[i].committed_bytes;
	peak = sp_os_peak_resident_bytes();
	sp_sbuf_printf(b, "totals\n");
	sp_sbuf_printf(b, "in_use_bytes %llu\n",
		       (unsigned long long)(t.in_use + large_bytes +
					    young_live));
	sp_sbuf_printf(b, "slab_bytes %llu\n", (unsigned long long)t.slabs);
	sp_sbuf_printf(b, "large_bytes %llu\n",
		       (unsigned long long)large_bytes);
	sp_sbuf_printf(b, "young_bytes %llu\n",
		       (unsigned long long)young_area);
	sp_sbuf_printf(b, "mapped_bytes %llu\n",
		       (unsigned long long)(mapped + large_bytes));
	resident = sp_os_resident_bytes();
	if (peak < resident)
		peak = resident;	/* ru_maxrss lags a little */
	sp_sbuf_printf(b, "resident_bytes %llu\n",
		       (unsigned long long)resident);
	sp_sbuf_printf(b, "peak_resident_bytes %llu\n\n",
		       (unsigned long long)peak);
}
