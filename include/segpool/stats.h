/* SPDX-License-Identifier: MIT */
/*
 * segpool/stats.h - what the caches hold, for programs and for people.
 */
#ifndef SEGPOOL_STATS_H
#define SEGPOOL_STATS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <segpool/compiler.h>

SEGPOOL_BEGIN_DECLS

struct segpool_cache;

/**
 * struct segpool_cache_info - a snapshot of one cache's accounting.
 * @size:           sizeof(struct segpool_cache_info), set by the caller
 *                  before the call (lets the struct grow compatibly).
 * @object_size:    the size the cache was created with.
 * @stride:         bytes between two objects in a slab (object, alignment
 *                  padding and the out-of-object free-list link, if any).
 * @align:          the alignment every object has.
 * @objs_per_slab:  objects in one slab.
 * @pages_per_slab: pages (segpool's: 4 KiB, or as built) in one slab.
 * @active_objs:    objects currently allocated.
 * @total_objs:     object slots in all slabs of the cache.
 * @active_slabs:   slabs holding at least one allocated object.
 * @total_slabs:    all slabs, empty ones included.
 * @slab_bytes:     bytes of memory in all slabs (total_slabs * slab size).
 * @allocs:         objects the application allocated since creation.
 * @frees:          objects the application freed since creation.
 * @slabs_created:  slabs populated since creation.
 * @slabs_released: slabs given back to the OS since creation.
 * @alloc_failures: allocations that failed with ENOMEM.
 * @alloc_fastpath: allocations served by a per-CPU magazine hit.
 * @free_fastpath:  frees absorbed by a per-CPU magazine.
 * @alloc_slowpath: allocations that missed the CPU's loaded magazine.
 * @free_slowpath:  frees that found it full (or could not use it).
 * @cpu_objs:       free objects held in per-CPU magazines (not counted in
 *                  @active_objs).
 * @depot_objs:     free objects held in full magazines in the depots.
 * @mag_size:       objects one magazine holds now (0 without a per-CPU layer).
 * @depot_max:      full magazines a node's depot keeps at most.
 * @alloc_failslab: allocations failed on purpose by fault injection
 *                  (segpool/fault.h); not counted in @alloc_failures.
 *
 * Objects cached in magazines are free: @active_objs counts only objects the
 * application holds, and @active_objs + @cpu_objs + @depot_objs objects are
 * allocated from the slabs.  With sampled heap profiling on
 * (segpool/profile.h) a sampled object is handed out in place of the one
 * the layers gave, which goes back: @allocs and @frees leave that swap out,
 * the four path counters count its free where it went.
 */
struct segpool_cache_info {
	size_t size;
	size_t object_size;
	size_t stride;
	size_t align;
	unsigned int objs_per_slab;
	unsigned int pages_per_slab;
	uint64_t active_objs;
	uint64_t total_objs;
	uint64_t active_slabs;
	uint64_t total_slabs;
	uint64_t slab_bytes;
	uint64_t allocs;
	uint64_t frees;
	uint64_t slabs_created;
	uint64_t slabs_released;
	uint64_t alloc_failures;
	uint64_t alloc_fastpath;
	uint64_t free_fastpath;
	uint64_t alloc_slowpath;
	uint64_t free_slowpath;
	uint64_t cpu_objs;
	uint64_t depot_objs;
	unsigned int mag_size;
	unsigned int depot_max;
	uint64_t alloc_failslab;
};

/**
 * segpool_cache_get_info() - read a cache's accounting.
 * @cache: the cache.
 * @info:  where to store it; @info->size must be set by the caller.
 *
 * The figures are a consistent snapshot per NUMA node, summed over nodes.
 *
 * Context: any thread.
 * Return: 0, or -EINVAL (NULL argument or @info->size too small).
 */
SEGPOOL_API int segpool_cache_get_info(struct segpool_cache *cache,
				       struct segpool_cache_info *info);

/**
 * segpool_percpu_mode() - which per-CPU mode is in force, and why.
 *
 * Return: a constant string starting with "rseq", "lock" or "off", then the
 * reason in parentheses, for example "rseq (glibc registration)" or
 * "lock (rseq registration failed: Function not implemented)".
 */
SEGPOOL_API const char *segpool_percpu_mode(void);

/**
 * segpool_stats_dump() - print every cache in /proc/slabinfo 2.1 format.
 * @out: the stream to write to.
 *
 * One "slabinfo - version: 2.1" line, the "# name ..." header and one row per
 * cache (named caches and the kmalloc size classes), so existing slabinfo
 * parsers and tools read it unchanged.  See
 * Documentation/reference/stats-keys.md.
 *
 * Context: any thread; takes the cache-list lock and each cache's node and
 * depot locks one at a time, formats the dump in memory and writes it to
 * @out after releasing every lock.
 * Return: 0; -EINVAL for a NULL stream; -ENOMEM when no memory could be
 * mapped for the output (or the library could not initialise); -EIO when
 * writing failed.  errno is set to the positive value.
 */
SEGPOOL_API int segpool_stats_dump(FILE *out);

/* --- per-cache detail, health and JSON ------------------------------------ */

/**
 * SEGPOOL_STATS_PERCPU - also show each CPU slot (a CPU id, or an mm_cid):
 * the objects in its loaded and previous magazines, and every per-CPU
 * counter split by slot.
 */
#define SEGPOOL_STATS_PERCPU		(1U << 0)

/* All flags segpool_stats_dump_detail() and segpool_stats_json() accept. */
#define SEGPOOL_STATS_FLAGS_VALID	(SEGPOOL_STATS_PERCPU)

/**
 * segpool_stats_dump_detail() - print caches field by field, as in sysfs.
 * @out:   the stream to write to.
 * @cache: the name of the one cache to print, or NULL for the health
 *         section (as segpool_stats_health() prints it) and then every cache.
 * @flags: 0 or SEGPOOL_STATS_PERCPU.
 *
 * In the spirit of /sys/kernel/slab/<cache>/: one block per cache, opened
 * by a line "cache <name>" and closed by an empty line, holding one
 * "<key> <value>" line per field: geometry, flags and tunables, slabs and
 * objects with a per-node split ("N<node>=<value>" after the total), the
 * per-CPU layer's counters under SLUB's names where the meaning is the same
 * (alloc_fastpath, alloc_slowpath, free_fastpath, free_slowpath,
 * alloc_slab, free_slab, ...) and the bytes a cache holds.  With
 * SEGPOOL_STATS_PERCPU the per-CPU counters are also split by slot
 * ("C<slot>=<value>", slots with a non-zero value only) and one more line,
 * slot_objs, gives each slot's magazine occupancy.  Every key, its unit and
 * meaning are in Documentation/reference/stats-keys.md.
 *
 * Context: any thread.  Figures are read as by segpool_stats_dump(); the
 * output is formatted in memory and written after every lock is released.
 * Return: 0; -EINVAL (errno EINVAL) for a NULL stream or an unknown flag;
 * -ENOENT when no live cache is named @cache; -ENOMEM when no memory could
 * be mapped for the output; -EIO when writing failed.
 */
SEGPOOL_API int segpool_stats_dump_detail(FILE *out, const char *cache,
					  unsigned int flags);

/**
 * segpool_stats_json() - every cache and the health section as JSON.
 * @out:   the stream to write to.
 * @flags: 0 or SEGPOOL_STATS_PERCPU (adds a "cpus" array to each cache).
 *
 * One JSON object: {"schema": 2, "source": "library", "version": "<library
 * version>", "health": {...}, "caches": [{"name": ..., "slabinfo": {...},
 * <the detail fields>, "nodes": [...], "cpus": [...]}, ...]}.  Keys are
 * those of segpool_stats_health() and segpool_stats_dump_detail(), and
 * Documentation/reference/stats-json.md lists each (segpool-top --json writes
 * the same schema from outside the process); numbers are
 * integers, flags are arrays of names, yes/no fields are true/false,
 * strings are escaped (bytes that are not UTF-8 become U+FFFD).
 *
 * Context: any thread; as segpool_stats_dump_detail().
 * Return: 0, -EINVAL (NULL stream or unknown flag), -ENOMEM or -EIO, with
 * errno set to the positive value.
 */
SEGPOOL_API int segpool_stats_json(FILE *out, unsigned int flags);

/* --- one writer for every section ----------------------------------------- */

/**
 * SEGPOOL_STATS_SLABINFO - segpool_stats_print() section: the slabinfo 2.1
 * dump, as segpool_stats_dump() prints it.
 */
#define SEGPOOL_STATS_SLABINFO		(1U << 1)
/**
 * SEGPOOL_STATS_HEALTH - segpool_stats_print() section: the health block,
 * as segpool_stats_health() prints it.
 */
#define SEGPOOL_STATS_HEALTH		(1U << 2)
/**
 * SEGPOOL_STATS_DETAIL - segpool_stats_print() section: every cache field
 * by field, as segpool_stats_dump_detail(out, NULL, flags) prints it after
 * its health block.
 */
#define SEGPOOL_STATS_DETAIL		(1U << 3)
/**
 * SEGPOOL_STATS_JSON - segpool_stats_print() section: the JSON document of
 * segpool_stats_json(); not combined with the text sections.
 */
#define SEGPOOL_STATS_JSON		(1U << 4)

/* Every option segpool_stats_print() accepts. */
#define SEGPOOL_STATS_PRINT_VALID	(SEGPOOL_STATS_PERCPU |		\
					 SEGPOOL_STATS_SLABINFO |	\
					 SEGPOOL_STATS_HEALTH |		\
					 SEGPOOL_STATS_DETAIL |		\
					 SEGPOOL_STATS_JSON)

/**
 * typedef segpool_write_cb - where segpool_stats_print() sends its text.
 * @arg:  the pointer given to segpool_stats_print().
 * @text: a NUL-terminated piece of the output (one or more whole lines).
 *
 * The order of arguments is that of jemalloc's malloc_stats_print() write
 * callback, so an existing one can be passed as it is.
 */
typedef void (*segpool_write_cb)(void *arg, const char *text);

/**
 * segpool_stats_print() - print the chosen sections through a callback.
 * @write_cb: called with the output, piece by piece; NULL writes to
 *            standard error.
 * @arg:      passed to @write_cb as it is.
 * @opts:     sections, in any combination: SEGPOOL_STATS_SLABINFO,
 *            SEGPOOL_STATS_HEALTH, SEGPOOL_STATS_DETAIL (printed in that
 *            order, an empty line between two), or SEGPOOL_STATS_JSON
 *            alone; 0 means the three text sections.  SEGPOOL_STATS_PERCPU
 *            may be added: it splits the detail's and the JSON's per-CPU
 *            figures by CPU slot.
 *
 * In the spirit of jemalloc's malloc_stats_print() and mimalloc's
 * mi_stats_print_out(): the caller decides where the text goes (a log, a
 * socket, a buffer), the library which figures it holds.  The sections are
 * exactly what segpool_stats_dump(), segpool_stats_health(),
 * segpool_stats_dump_detail() and segpool_stats_json() print.  The setting
 * SEGPOOL_STATS_PRINT (a list such as "slabinfo,health", see
 * Documentation/guide/statistics.md) prints the chosen sections when the
 * process exits, to standard error or to the file SEGPOOL_STATS_PRINT_FILE
 * names.
 *
 * Context: any thread.  Every section is formatted in memory first, then
 * @write_cb is called with no lock of the library held: it may allocate
 * from segpool, or call segpool_stats_print() again.
 * Return: 0; -EINVAL (errno EINVAL) for an unknown option or
 * SEGPOOL_STATS_JSON with a text section; -ENOMEM when no memory could be
 * mapped for the output (nothing is written then).
 */
SEGPOOL_API int segpool_stats_print(segpool_write_cb write_cb, void *arg,
				    unsigned int opts);

/** SEGPOOL_HEALTH_MAX_NODES - NUMA nodes struct segpool_health describes. */
#define SEGPOOL_HEALTH_MAX_NODES	64

/* struct segpool_health.rseq_registration */
/** SEGPOOL_RSEQ_NONE - not in rseq mode: no rseq area is used. */
#define SEGPOOL_RSEQ_NONE		0U
/** SEGPOOL_RSEQ_GLIBC - the per-thread rseq area glibc registered. */
#define SEGPOOL_RSEQ_GLIBC		1U
/** SEGPOOL_RSEQ_OWN - an area segpool registers itself in each thread. */
#define SEGPOOL_RSEQ_OWN		2U

/**
 * struct segpool_health_node - one NUMA node's memory region.
 * @node:            the kernel's node id.
 * @cpus:            possible CPUs whose allocations go to this node first.
 * @bound:           1 when the region is bound to the node (mbind); every
 *                   committed chunk of a bound region is bound (a chunk
 *                   whose binding fails is given back at once).
 * @reserved:        0.
 * @commit_failures: chunks that could not be committed or bound.
 * @region_bytes:    address space reserved for the node.
 * @committed_bytes: bytes of it made accessible (and bound, if @bound).
 * @used_bytes:      bytes handed out: slabs, slab descriptors and large
 *                   allocations.
 * @dirty_bytes:     bytes free but still resident, waiting for the decay
 *                   (retained).
 * @purged_bytes:    bytes given back to the OS so far (MADV_DONTNEED), by
 *                   the decay, shrinks and the limit.
 * @huge_bytes:      bytes of the region backed by transparent huge pages
 *                   (AnonHugePages of /proc/self/smaps, read for the call).
 */
struct segpool_health_node {
	int node;
	unsigned int cpus;
	unsigned int bound;
	unsigned int reserved;
	uint64_t commit_failures;
	uint64_t region_bytes;
	uint64_t committed_bytes;
	uint64_t used_bytes;
	uint64_t dirty_bytes;
	uint64_t purged_bytes;
	uint64_t huge_bytes;
};

/**
 * struct segpool_health - the modes segpool runs in, and why.
 * @size:              sizeof(struct segpool_health), set by the caller
 *                     before the call (lets the struct grow compatibly).
 * @version:           the library's version, as segpool_version().
 * @percpu_mode:       "rseq", "lock" or "off".
 * @percpu_reason:     the whole segpool_percpu_mode() string, reason
 *                     included.
 * @rseq_registration: SEGPOOL_RSEQ_NONE, SEGPOOL_RSEQ_GLIBC or
 *                     SEGPOOL_RSEQ_OWN.
 * @slots_by_mm_cid:   1 when per-CPU slots are indexed by the kernel's
 *                     mm_cid (SEGPOOL_PERCPU_ID=mm_cid took), 0 by CPU id.
 * @rseq_feature_size: the kernel's AT_RSEQ_FEATURE_SIZE (0 when unknown;
 *                     mm_cid needs at least 28).
 * @cpus_possible:     possible CPU ids (sizes every per-CPU array).
 * @cpu_slots:         per-CPU slots each cache has (0 in off mode).
 * @numa_available:    1 when the kernel has NUMA policy (get_mempolicy).
 * @numa_bind:         1 when regions are bound to their nodes
 *                     (SEGPOOL_NUMA_BIND, default: only with several nodes).
 * @nr_nodes:          NUMA nodes with memory segpool uses; @node[0 ..
 *                     @nr_nodes - 1] describe them.
 * @debug:             the debug and hardening options in force,
 *                     space-separated: "debug=" and SEGPOOL_DEBUG as read
 *                     (cut short), "continue" when debug reports do not
 *                     abort, "hardened" (free-list links encoded, the
 *                     default) or "plain", "failslab" while fault
 *                     injection is on.
 * @sanitizer:         "none", or the sanitizer the library was built with
 *                     ("address" or "thread").
 * @decay_on:          1 when free memory goes back by itself
 *                     (SEGPOOL_DECAY_MS is not -1).
 * @decay_ms:          the decay delay in milliseconds (0 with @decay_on:
 *                     at once; 0 without: never).
 * @decay_thread:      1 once the decay thread was started: it starts
 *                     only when the process holds free memory worth giving
 *                     back, or the memory limit was reached (0 in a
 *                     process that never did).
 * @decay_runs:        passes of the decay thread.
 * @decay_caches:      idle caches the decay thread drained and shrank.
 * @memory_limit:      the soft memory limit in bytes, 0 for none.
 * @limit_hits:        allocations that found the limit reached (and gave
 *                     free memory back first).
 * @limit_exceeded:    of those, allocations that went past the limit all
 *                     the same.
 * @thp:               1 when region chunks are advised transparent huge
 *                     pages (SEGPOOL_THP).
 * @node:              one entry per node.
 */
struct segpool_health {
	size_t size;
	char version[16];
	char percpu_mode[8];
	char percpu_reason[128];
	unsigned int rseq_registration;
	unsigned int slots_by_mm_cid;
	unsigned long rseq_feature_size;
	unsigned int cpus_possible;
	unsigned int cpu_slots;
	unsigned int numa_available;
	unsigned int numa_bind;
	unsigned int nr_nodes;
	char debug[64];
	char sanitizer[16];
	unsigned int decay_on;
	unsigned int thp;
	unsigned int decay_thread;
	uint64_t decay_ms;
	uint64_t decay_runs;
	uint64_t decay_caches;
	uint64_t memory_limit;
	uint64_t limit_hits;
	uint64_t limit_exceeded;
	struct segpool_health_node node[SEGPOOL_HEALTH_MAX_NODES];
};

/**
 * segpool_health_get() - read the modes and the NUMA state.
 * @h: where to store them; @h->size must be set by the caller.
 *
 * Each node's figures are read under its region lock.  A larger @h->size (a
 * caller built against a later, longer struct) is accepted; on return
 * @h->size holds the length filled in.
 *
 * Context: any thread.
 * Return: 0; -EINVAL (errno EINVAL) for a NULL @h or an @h->size too small;
 * -ENOMEM when the library could not initialise.
 */
SEGPOOL_API int segpool_health_get(struct segpool_health *h);

/**
 * segpool_stats_health() - print the health section.
 * @out: the stream to write to.
 *
 * A block opened by the line "health" and closed by an empty line, with one
 * "<key> <value>" line for each field of struct segpool_health (per-node
 * figures as a total followed by "N<node>=<value>").  See
 * Documentation/reference/stats-keys.md.
 *
 * Context: any thread.
 * Return: 0, -EINVAL (NULL stream), -ENOMEM or -EIO, with errno set.
 */
SEGPOOL_API int segpool_stats_health(FILE *out);

SEGPOOL_END_DECLS

#endif /* SEGPOOL_STATS_H */
