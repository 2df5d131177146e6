/* SPDX-License-Identifier: MIT */
/*
 * segpool/counters.h - the per-CPU counters of a cache, listed once.
 *
 * Every CPU slot of a cache with per-CPU magazines counts what its paths
 * do; the counters are summed on read (SLUB's CONFIG_SLUB_STATS way).
 * SEGPOOL_PCPU_COUNTERS() is the one list of them: the library's counter
 * indices, the keys of segpool_stats_dump_detail() and segpool_stats_json(),
 * the per-CPU event fields of struct segpool_export_cache, segpool-top's
 * fields and the key tables of Documentation/reference/stats-keys.md and
 * stats-json.md are all generated from it, so none can leave a counter out.
 */
#ifndef SEGPOOL_COUNTERS_H
#define SEGPOOL_COUNTERS_H

/**
 * SEGPOOL_PCPU_COUNTERS() - call @X once per per-CPU counter, in print order.
 * @X: a macro of five parameters, X(key, ID, class, unit, doc):
 *     @key is the counter's name in every rendering (an identifier);
 *     @ID is the library's own name for it (its index is SP_STAT_ID or
 *     SP_CTR_ID inside the library);
 *     @class says where it lives and who shows it, one of
 *     SEGPOOL_CTR_HIT (a fast-path hit count, also a field of struct
 *     segpool_cache_info), SEGPOOL_CTR_INFO (a slow-path count, also a
 *     field of struct segpool_cache_info), SEGPOOL_CTR_EXPORT (a per-CPU
 *     event, also a field of struct segpool_export_cache, in this order)
 *     or SEGPOOL_CTR_LIBRARY (only in the library's own renderings);
 *     @unit is what it counts ("count", "objects", "magazines", "events");
 *     @doc is one line saying what it counts.
 *
 * The class names are tokens for X to paste onto a name of its own (to
 * keep or drop a class), never macros.  A counter is only ever added, at the
 * end of its class's run; struct segpool_export_cache's layout is checked
 * by static assertions in segpool/export.h.
 */
#define SEGPOOL_PCPU_COUNTERS(X)					\
	X(alloc_fastpath, ALLOC_FASTPATH, SEGPOOL_CTR_HIT, "count",	\
	  "allocations served by the CPU's loaded magazine "		\
	  "(SLUB's name, same meaning: the fast path hit)")		\
	X(alloc_slowpath, ALLOC_SLOWPATH, SEGPOOL_CTR_INFO, "count",	\
	  "allocations that found the loaded magazine empty and were "	\
	  "served from a magazine after a swap, a depot exchange or a fill") \
	X(free_fastpath, FREE_FASTPATH, SEGPOOL_CTR_HIT, "count",	\
	  "frees put on the CPU's loaded magazine, or on its remote "	\
	  "lane (another node's objects)")				\
	X(free_slowpath, FREE_SLOWPATH, SEGPOOL_CTR_INFO, "count",	\
	  "frees that found it full and were put in a magazine "	\
	  "after a swap, a depot exchange or on a new magazine")	\
	X(mag_swap, MAG_SWAP, SEGPOOL_CTR_EXPORT, "count",		\
	  "loaded and previous magazines exchanged (Bonwick)")		\
	X(depot_get_full, DEPOT_GET_FULL, SEGPOOL_CTR_EXPORT, "magazines", \
	  "full magazines taken from the depot")			\
	X(depot_put_full, DEPOT_PUT_FULL, SEGPOOL_CTR_EXPORT, "magazines", \
	  "full magazines given to the depot")				\
	X(depot_get_empty, DEPOT_GET_EMPTY, SEGPOOL_CTR_EXPORT, "magazines", \
	  "empty magazines taken from the depot")			\
	X(depot_put_empty, DEPOT_PUT_EMPTY, SEGPOOL_CTR_EXPORT, "magazines", \
	  "empty magazines given to the depot")				\
	X(mag_fill, MAG_FILL, SEGPOOL_CTR_EXPORT, "magazines",		\
	  "magazines filled from the slabs in one bulk call")		\
	X(mag_flush, MAG_FLUSH, SEGPOOL_CTR_EXPORT, "magazines",	\
	  "magazines a CPU emptied into the slabs rather than "		\
	  "keep them (the depot had no room, the magazine was of "	\
	  "a retired size, or there was no memory for a new one)")	\
	X(bypass, BYPASS, SEGPOOL_CTR_EXPORT, "count",			\
	  "slow paths that found their slot owned "			\
	  "by another thread and went to the slabs")			\
	X(remote_free, REMOTE_FREE, SEGPOOL_CTR_EXPORT, "count",	\
	  "frees of objects of another node, sent home in magazines "	\
	  "of that node (the CPU's alien magazines and remote lane)")	\
	X(rseq_abort, RSEQ_ABORT, SEGPOOL_CTR_EXPORT, "count",		\
	  "restartable sequences of the slow "				\
	  "paths that were aborted and retried")			\
	X(mag_fill_objs, FILL_OBJS, SEGPOOL_CTR_LIBRARY, "objects",	\
	  "objects into the slot's magazines from the slabs")		\
	X(mag_flush_objs, FLUSH_OBJS, SEGPOOL_CTR_LIBRARY, "objects",	\
	  "objects out of the slot's magazines "			\
	  "into the slabs (flushes and drains)")			\
	X(depot_get_objs, DEPOT_GET_OBJS, SEGPOOL_CTR_LIBRARY, "objects", \
	  "objects into the slot in full magazines from the depot")	\
	X(depot_put_objs, DEPOT_PUT_OBJS, SEGPOOL_CTR_LIBRARY, "objects", \
	  "objects out of the slot in full magazines given to the depot") \
	X(mag_trip, TRIP, SEGPOOL_CTR_LIBRARY, "events",		\
	  "slow paths that left the slot's two magazines for the "	\
	  "depot or the slabs (what use-driven sizing counts)")		\
	X(mag_grow, MAG_GROW, SEGPOOL_CTR_LIBRARY, "events",		\
	  "magazine class grown because trips came too often "		\
	  "(Documentation/internals/percpu.md, \"Dynamic magazine sizing\")") \
	X(mag_shrink, MAG_SHRINK, SEGPOOL_CTR_LIBRARY, "events",	\
	  "magazine class shrunk because trips came rarely")		\
	X(mag_stash, STASH_TAKE, SEGPOOL_CTR_LIBRARY, "magazines",	\
	  "full magazines a slot loaded from its own stash, kept at "	\
	  "its frees for its own allocations, rather than the depot")

#endif /* SEGPOOL_COUNTERS_H */
