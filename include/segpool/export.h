/* SPDX-License-Identifier: MIT */
/*
 * segpool/export.h - live statistics of a running process, for segpool-top.
 *
 * A process that exports (SEGPOOL_EXPORT=1 in its environment, or a call
 * to segpool_export_start()) gets one more thread, the publisher, which
 * every interval copies the figures of every cache into a POSIX
 * shared-memory segment named "/segpool.<pid>" (the file
 * /dev/shm/segpool.<pid>).  Any program of the same user may map it
 * read-only and show it; tools/segpool-top does.  Nothing else changes:
 * threads that allocate never touch the segment, and a process that does
 * not export pays nothing.
 *
 * The segment is a header (struct segpool_export_header, which describes
 * the layout and how to read it consistently), then node, cache and
 * per-cache node records.  Compatibility: @layout_version changes when a
 * field moves or changes its meaning; new fields are only ever appended to
 * a record, whose size the header gives, so a reader uses those sizes as
 * strides and reads only the fields it knows.
 */
#ifndef SEGPOOL_EXPORT_H
#define SEGPOOL_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <segpool/compiler.h>
#include <segpool/counters.h>

SEGPOOL_BEGIN_DECLS

/* --- the segment ---------------------------------------------------------- */

/**
 * SEGPOOL_EXPORT_SHM_PREFIX - POSIX shared-memory name of a segment, before the
 * pid.
 */
#define SEGPOOL_EXPORT_SHM_PREFIX	"/segpool."
/** SEGPOOL_EXPORT_MAGIC - first 8 bytes of a segment ("SPEXPORT" on x86). */
#define SEGPOOL_EXPORT_MAGIC		0x54524f5058455053ULL
/** SEGPOOL_EXPORT_LAYOUT_VERSION - the layout this header describes. */
#define SEGPOOL_EXPORT_LAYOUT_VERSION	1U
/** SEGPOOL_EXPORT_NAME_LEN - bytes of a cache name field, NUL included. */
#define SEGPOOL_EXPORT_NAME_LEN		64
/**
 * SEGPOOL_EXPORT_INTERVAL_DEFAULT - publish interval when none is given (ms).
 */
#define SEGPOOL_EXPORT_INTERVAL_DEFAULT	1000U
/** SEGPOOL_EXPORT_INTERVAL_MIN - shortest publish interval accepted (ms). */
#define SEGPOOL_EXPORT_INTERVAL_MIN	10U
/** SEGPOOL_EXPORT_INTERVAL_MAX - longest publish interval accepted (ms). */
#define SEGPOOL_EXPORT_INTERVAL_MAX	3600000U

/* Header flags (@flags). */
/**
 * SEGPOOL_EXPORT_F_TRUNCATED - the segment could not grow: caches are missing.
 */
#define SEGPOOL_EXPORT_F_TRUNCATED	(1U << 0)

/* Cache flags (struct segpool_export_cache, @flags). */
/** SEGPOOL_EXPORT_CACHE_KMALLOC - a segpool_malloc() size class. */
#define SEGPOOL_EXPORT_CACHE_KMALLOC	(1U << 0)
/** SEGPOOL_EXPORT_CACHE_INTERNAL - the library's own bookkeeping. */
#define SEGPOOL_EXPORT_CACHE_INTERNAL	(1U << 1)
/** SEGPOOL_EXPORT_CACHE_PERCPU - the cache has per-CPU magazines. */
#define SEGPOOL_EXPORT_CACHE_PERCPU	(1U << 2)
/** SEGPOOL_EXPORT_CACHE_HWCACHE_ALIGN - created with SEGPOOL_HWCACHE_ALIGN. */
#define SEGPOOL_EXPORT_CACHE_HWCACHE_ALIGN (1U << 3)
/**
 * SEGPOOL_EXPORT_CACHE_TYPESAFE_BY_RCU - created with SEGPOOL_TYPESAFE_BY_RCU.
 */
#define SEGPOOL_EXPORT_CACHE_TYPESAFE_BY_RCU (1U << 4)
/** SEGPOOL_EXPORT_CACHE_CTOR - the cache has a constructor. */
#define SEGPOOL_EXPORT_CACHE_CTOR	(1U << 5)

/**
 * struct segpool_export_header - what a segment starts with.
 * @magic:              SEGPOOL_EXPORT_MAGIC; stored last when the segment is
 *                      set up (0 until then: retry).
 * @layout_version:     SEGPOOL_EXPORT_LAYOUT_VERSION of the writer.
 * @header_size:        sizeof(struct segpool_export_header) of the writer.
 * @cache_size:         bytes of one cache record.
 * @cache_node_size:    bytes of one per-cache node record.
 * @node_size:          bytes of one node record.
 * @pid:                the exporting process.
 * @nr_nodes:           NUMA nodes with memory the library uses (>= 1).
 * @nr_cpus:            possible CPU ids the library sized its tables for.
 * @page_size:          bytes of the page unit of pages_per_slab and the
 *                      node records (4096).
 * @start_realtime_ns:  CLOCK_REALTIME when the export started.
 * @version:            segpool_version() of the exporting library.
 * @percpu_mode:        segpool_percpu_mode() of the process.
 * @comm:               the program's short name
 *                      (program_invocation_short_name).
 * @arena_size:         bytes of one arena record; 0 from a writer that
 *                      exports no arenas (then read none).
 * @seq:                the seqlock: odd while a snapshot is being written.
 * @pad0:               zero (keeps @seq on a line of its own).
 * @updates:            snapshots published so far (1 after the first).
 * @monotonic_ns:       CLOCK_MONOTONIC when the last snapshot was taken.
 * @realtime_ns:        CLOCK_REALTIME at the same moment.
 * @segment_size:       bytes of the segment now.
 * @interval_ms:        the publish interval.
 * @flags:              SEGPOOL_EXPORT_F_* bits.
 * @capacity:           cache records there is room for.
 * @nr_caches:          cache records of this snapshot.
 * @nodes_offset:       where the node records start.
 * @caches_offset:      where the cache records start.
 * @cache_nodes_offset: where the per-cache node records start.
 * @collect_ns:         how long gathering the last snapshot took.
 * @arena_capacity:     arena records there is room for.
 * @nr_arenas:          arena records of this snapshot.
 * @arenas_offset:      where the arena records start (0: none).
 * @keys_offset:        where the key table starts (0: none; a writer of
 *                      before the table).
 * @nr_cache_keys:      keys of a cache (struct segpool_export_key).
 * @nr_node_keys:       keys of a cache on one node.
 * @nr_health_keys:     keys of the health section.
 * @nr_health_node_keys: keys of one node of the health section.
 * @values_offset:      where the values of those keys start.
 * @reserved1:          zero.
 *
 * The segment, all integers in the machine's byte order, offsets in bytes
 * from its start, every size and offset a multiple of 8:
 *
 *	0                    struct segpool_export_header
 *	nodes_offset         struct segpool_export_node        [nr_nodes]
 *	caches_offset        struct segpool_export_cache       [capacity]
 *	cache_nodes_offset   struct segpool_export_cache_node
 *	                         [capacity][nr_nodes]
 *	arenas_offset        struct segpool_export_arena       [arena_capacity]
 *	keys_offset          struct segpool_export_key         [nr_cache_keys +
 *	                         nr_node_keys + nr_health_keys +
 *	                         nr_health_node_keys], in that order
 *	values_offset        uint64_t [capacity][nr_cache_keys]
 *	                     uint64_t [capacity][nr_nodes][nr_node_keys]
 *	                     uint64_t [nr_health_keys]
 *	                     uint64_t [nr_nodes][nr_health_node_keys]
 *	                     char     [SEGPOOL_EXPORT_STRINGS]
 *
 * of which the first @nr_caches cache records (and their node records and
 * values) and the first @nr_arenas arena records hold the last snapshot.
 * The key table names every figure segpool_stats_json() writes for a
 * cache, a cache's node, the health section and its nodes, in its order,
 * from the same field lists: a reader shows what the library knows
 * without knowing it in advance (segpool-top --json writes the library's
 * keys this way).  A key's value is a number, a boolean (0 or 1) or, for
 * a string, the offset of a NUL-terminated string in the last part.
 * The key words took over reserved words of layout 1 as the arena words
 * did: a writer of before leaves them zero.  The
 * arena fields took over reserved words of layout 1, which older writers
 * leave zero: a reader finds no arenas there, and an older reader never
 * looks.  The first part of the header is written once,
 * before @magic; everything from @updates on changes with each snapshot and
 * is guarded by the sequence counter @seq, a seqlock:
 *
 *	do {
 *	    s1 = load_acquire(&hdr->seq);    // odd: a write is under way
 *	    copy what you need, 8 bytes at a time with acquire loads
 *	    (or relaxed loads, then an acquire fence), checking every
 *	    offset against the size you mapped;
 *	} while ((s1 & 1) || s1 != load_relaxed(&hdr->seq));
 *
 * so a reader never acts on a torn snapshot.  The segment grows (never
 * shrinks) when more caches appear: when @segment_size is larger than the
 * size you mapped, map it again.
 */
struct segpool_export_header {
	/* --- written once, before @magic --- */
	uint64_t magic;			/* 0 */
	uint32_t layout_version;	/* 8 */
	uint32_t header_size;		/* 12 */
	uint32_t cache_size;		/* 16 */
	uint32_t cache_node_size;	/* 20 */
	uint32_t node_size;		/* 24 */
	int32_t pid;			/* 28 */
	uint32_t nr_nodes;		/* 32 */
	uint32_t nr_cpus;		/* 36 */
	uint32_t page_size;		/* 40 */
	uint32_t arena_size;		/* 44 */
	uint64_t start_realtime_ns;	/* 48 */
	char version[16];		/* 56 */
	char percpu_mode[120];		/* 72 */
	char comm[64];			/* 192 */
	/* --- line 4: the seqlock --- */
	uint64_t seq;			/* 256 */
	uint64_t pad0[7];		/* 264 */
	/* --- under @seq --- */
	uint64_t updates;		/* 320 */
	uint64_t monotonic_ns;		/* 328 */
	uint64_t realtime_ns;		/* 336 */
	uint64_t segment_size;		/* 344 */
	uint32_t interval_ms;		/* 352 */
	uint32_t flags;			/* 356 */
	uint32_t capacity;		/* 360 */
	uint32_t nr_caches;		/* 364 */
	uint64_t nodes_offset;		/* 368 */
	uint64_t caches_offset;		/* 376 */
	uint64_t cache_nodes_offset;	/* 384 */
	uint64_t collect_ns;		/* 392 */
	uint32_t arena_capacity;	/* 400 */
	uint32_t nr_arenas;		/* 404 */
	uint64_t arenas_offset;		/* 408 */
	uint64_t keys_offset;		/* 416 */
	uint32_t nr_cache_keys;		/* 424 */
	uint32_t nr_node_keys;		/* 428 */
	uint32_t nr_health_keys;	/* 432 */
	uint32_t nr_health_node_keys;	/* 436 */
	uint64_t values_offset;		/* 440 */
	uint64_t reserved1[8];		/* 448 */
};

/** SEGPOOL_EXPORT_STRINGS - bytes for the string values of the health keys. */
#define SEGPOOL_EXPORT_STRINGS		512

/* Kinds of a key (struct segpool_export_key, @kind). */
/** SEGPOOL_EXPORT_KEY_U64 - the value is a number. */
#define SEGPOOL_EXPORT_KEY_U64		'u'
/** SEGPOOL_EXPORT_KEY_BOOL - the value is 0 (false) or 1 (true). */
#define SEGPOOL_EXPORT_KEY_BOOL		'b'
/** SEGPOOL_EXPORT_KEY_STR - the value is an offset into the strings. */
#define SEGPOOL_EXPORT_KEY_STR		's'

/**
 * struct segpool_export_key - the name of one figure of the key table.
 * @name: the key of segpool_stats_json(), NUL-terminated.
 * @kind: SEGPOOL_EXPORT_KEY_U64, _BOOL or _STR.
 */
struct segpool_export_key {
	char name[31];			/* 0 */
	char kind;			/* 31 */
};

/**
 * struct segpool_export_node - one NUMA node's memory region.
 * @node_id:         the kernel's node id.
 * @bound:           1 when every committed part of the region is bound to
 *                   the node (mbind), 0 otherwise.
 * @pages_reserved:  pages of address space the region may grow to.
 * @pages_committed: pages made accessible so far.
 * @pages_used:      pages handed out (slabs, descriptors).
 * @commit_failures: commits or binds that failed.
 * @pages_dirty:     pages free but still resident, waiting for the decay.
 * @pages_purged:    pages given back to the OS so far.
 * @huge_bytes:      bytes of the region backed by transparent huge pages.
 */
struct segpool_export_node {
	int32_t node_id;		/* 0 */
	uint32_t bound;			/* 4 */
	uint64_t pages_reserved;	/* 8 */
	uint64_t pages_committed;	/* 16 */
	uint64_t pages_used;		/* 24 */
	uint64_t commit_failures;	/* 32 */
	uint64_t pages_dirty;		/* 40 */
	uint64_t pages_purged;		/* 48 */
	uint64_t huge_bytes;		/* 56 */
};

/*
 * SEGPOOL_EXPORT_CTR_FIELD() - the record field of a counter of
 * SEGPOOL_PCPU_COUNTERS(): a uint64_t named @key for class
 * SEGPOOL_CTR_EXPORT, nothing for the others.
 */
#define SEGPOOL_EXPORT_CTR_FIELD_SEGPOOL_CTR_HIT(key)
#define SEGPOOL_EXPORT_CTR_FIELD_SEGPOOL_CTR_INFO(key)
#define SEGPOOL_EXPORT_CTR_FIELD_SEGPOOL_CTR_EXPORT(key)	uint64_t key;
#define SEGPOOL_EXPORT_CTR_FIELD_SEGPOOL_CTR_LIBRARY(key)
#define SEGPOOL_EXPORT_CTR_FIELD(key, id, class, unit, doc)	\
	SEGPOOL_EXPORT_CTR_FIELD_##class(key)

/**
 * struct segpool_export_cache - one cache in a snapshot.
 * @name:             the cache's name, NUL-terminated.
 * @update:           the header's @updates of the snapshot that wrote this
 *                    record (equal to it in a consistent copy).
 * @flags:            SEGPOOL_EXPORT_CACHE_* bits.
 * @objs_per_slab:    as struct segpool_cache_info.
 * @pages_per_slab:   as struct segpool_cache_info.
 * @mag_size:         as struct segpool_cache_info.
 * @depot_max:        as struct segpool_cache_info.
 * @pad0:             zero.
 * @object_size:      as struct segpool_cache_info.
 * @stride:           as struct segpool_cache_info (the slabinfo objsize).
 * @align:            as struct segpool_cache_info.
 * @active_objs:      as struct segpool_cache_info.
 * @total_objs:       as struct segpool_cache_info.
 * @active_slabs:     as struct segpool_cache_info.
 * @total_slabs:      as struct segpool_cache_info.
 * @slab_bytes:       as struct segpool_cache_info.
 * @allocs:           as struct segpool_cache_info.
 * @frees:            as struct segpool_cache_info.
 * @slabs_created:    as struct segpool_cache_info.
 * @slabs_released:   as struct segpool_cache_info.
 * @alloc_failures:   as struct segpool_cache_info.
 * @alloc_fastpath:   as struct segpool_cache_info.
 * @free_fastpath:    as struct segpool_cache_info.
 * @alloc_slowpath:   as struct segpool_cache_info.
 * @free_slowpath:    as struct segpool_cache_info.
 * @cpu_objs:         as struct segpool_cache_info.
 * @depot_objs:       as struct segpool_cache_info.
 * @depot_full_mags:  full magazines in the depots now, all nodes.
 * @depot_empty_mags: empty magazines in the depots now, all nodes.
 * @alloc_failslab:   as struct segpool_cache_info.
 * @reserved:         zero.
 *
 * The fields named after struct segpool_cache_info hold what
 * segpool_cache_get_info() returned for the cache when the snapshot was
 * taken; see Documentation/reference/stats-keys.md.  After @depot_objs come the
 * per-CPU event counters, summed over the CPUs: one uint64_t for each counter
 * of class SEGPOOL_CTR_EXPORT of SEGPOOL_PCPU_COUNTERS() (segpool/counters.h,
 * which names and explains them), in its order, from mag_swap at offset
 * 248 to rseq_abort at 320.  They are 0 for caches without per-CPU
 * magazines.
 */
struct segpool_export_cache {
	char name[SEGPOOL_EXPORT_NAME_LEN];	/* 0 */
	uint64_t update;		/* 64 */
	uint32_t flags;			/* 72 */
	uint32_t objs_per_slab;		/* 76 */
	uint32_t pages_per_slab;	/* 80 */
	uint32_t mag_size;		/* 84 */
	uint32_t depot_max;		/* 88 */
	uint32_t pad0;			/* 92 */
	uint64_t object_size;		/* 96 */
	uint64_t stride;		/* 104 */
	uint64_t align;			/* 112 */
	uint64_t active_objs;		/* 120 */
	uint64_t total_objs;		/* 128 */
	uint64_t active_slabs;		/* 136 */
	uint64_t total_slabs;		/* 144 */
	uint64_t slab_bytes;		/* 152 */
	uint64_t allocs;		/* 160 */
	uint64_t frees;			/* 168 */
	uint64_t slabs_created;		/* 176 */
	uint64_t slabs_released;	/* 184 */
	uint64_t alloc_failures;	/* 192 */
	uint64_t alloc_fastpath;	/* 200 */
	uint64_t free_fastpath;		/* 208 */
	uint64_t alloc_slowpath;	/* 216 */
	uint64_t free_slowpath;		/* 224 */
	uint64_t cpu_objs;		/* 232 */
	uint64_t depot_objs;		/* 240 */
	/* --- per-CPU layer events, summed over the CPUs: 248 to 327 --- */
	SEGPOOL_PCPU_COUNTERS(SEGPOOL_EXPORT_CTR_FIELD)
	uint64_t depot_full_mags;	/* 328 */
	uint64_t depot_empty_mags;	/* 336 */
	uint64_t alloc_failslab;	/* 344 */
	uint64_t reserved[4];		/* 352 */
};

/**
 * struct segpool_export_cache_node - one cache's slabs on one node.
 * @node_id:          the kernel's node id.
 * @pad0:             zero.
 * @partial_slabs:    slabs with some objects free.
 * @full_slabs:       slabs with no object free.
 * @empty_slabs:      slabs with every object free (the node's reserve).
 * @objects:          objects taken out of this node's slabs, by the
 *                    application or into per-CPU magazines.
 * @allocs:           objects the slab layer handed to the application
 *                    directly (not through a magazine).
 * @frees:            objects freed into the slab layer directly.
 * @xfer_allocs:      objects moved from the slabs into magazines.
 * @xfer_frees:       objects flushed from magazines back into the slabs.
 * @slabs_created:    slabs built on this node.
 * @slabs_released:   slabs given back to the OS from this node.
 * @depot_full_mags:  full magazines in this node's depot.
 * @depot_empty_mags: empty magazines in this node's depot.
 * @depot_objs:       objects in this node's full magazines.
 * @reserved:         zero.
 *
 * Read just after the cache's sums (struct segpool_export_cache), one node
 * lock at a time: on a busy cache the two can differ by the objects that
 * moved in between.
 */
struct segpool_export_cache_node {
	int32_t node_id;		/* 0 */
	uint32_t pad0;			/* 4 */
	uint64_t partial_slabs;		/* 8 */
	uint64_t full_slabs;		/* 16 */
	uint64_t empty_slabs;		/* 24 */
	uint64_t objects;		/* 32 */
	uint64_t allocs;		/* 40 */
	uint64_t frees;			/* 48 */
	uint64_t xfer_allocs;		/* 56 */
	uint64_t xfer_frees;		/* 64 */
	uint64_t slabs_created;		/* 72 */
	uint64_t slabs_released;	/* 80 */
	uint64_t depot_full_mags;	/* 88 */
	uint64_t depot_empty_mags;	/* 96 */
	uint64_t depot_objs;		/* 104 */
	uint64_t reserved[2];		/* 112 */
};

/**
 * struct segpool_export_arena - one arena in a snapshot.
 * @name:            the arena's name, NUL-terminated.
 * @update:          the header's @updates of the snapshot that wrote it.
 * @node:            as struct segpool_arena_info (-1: any node).
 * @flags:           its SEGPOOL_ARENA_* flags (<segpool/arena.h>).
 * @in_use:          as struct segpool_arena_info.
 * @peak:            as struct segpool_arena_info.
 * @held:            as struct segpool_arena_info.
 * @chunks:          as struct segpool_arena_info.
 * @kept_chunks:     as struct segpool_arena_info.
 * @kept_bytes:      as struct segpool_arena_info.
 * @chunks_created:  as struct segpool_arena_info.
 * @chunks_released: as struct segpool_arena_info.
 * @resets:          as struct segpool_arena_info.
 * @rewinds:         as struct segpool_arena_info.
 * @alloc_failures:  as struct segpool_arena_info.
 * @limit:           as struct segpool_arena_info.
 * @keep:            as struct segpool_arena_info.
 * @reserved:        zero.
 */
struct segpool_export_arena {
	char name[SEGPOOL_EXPORT_NAME_LEN];	/* 0 */
	uint64_t update;		/* 64 */
	int32_t node;			/* 72 */
	uint32_t flags;			/* 76 */
	uint64_t in_use;		/* 80 */
	uint64_t peak;			/* 88 */
	uint64_t held;			/* 96 */
	uint64_t chunks;		/* 104 */
	uint64_t kept_chunks;		/* 112 */
	uint64_t kept_bytes;		/* 120 */
	uint64_t chunks_created;	/* 128 */
	uint64_t chunks_released;	/* 136 */
	uint64_t resets;		/* 144 */
	uint64_t rewinds;		/* 152 */
	uint64_t alloc_failures;	/* 160 */
	uint64_t limit;			/* 168 */
	uint64_t keep;			/* 176 */
	uint64_t reserved[3];		/* 184 */
};

#if !defined(__cplusplus)
SEGPOOL_STATIC_ASSERT(sizeof(struct segpool_export_header) == 512,
		      "header: 512 bytes");
SEGPOOL_STATIC_ASSERT(offsetof(struct segpool_export_header, seq) == 256,
	       "header: seq on its own line");
SEGPOOL_STATIC_ASSERT(offsetof(struct segpool_export_header, updates) == 320,
	       "header: the seqlocked part starts at 320");
SEGPOOL_STATIC_ASSERT(offsetof(struct segpool_export_header, collect_ns) == 392,
	       "header: layout 1 offsets");
SEGPOOL_STATIC_ASSERT(sizeof(struct segpool_export_node) == 64,
		      "node record: 64 bytes");
SEGPOOL_STATIC_ASSERT(sizeof(struct segpool_export_cache) == 384,
		      "cache record: 384 bytes");
SEGPOOL_STATIC_ASSERT(offsetof(struct segpool_export_cache, object_size) == 96,
	       "cache record: layout 1 offsets");
/* the generated per-CPU event fields: layout 1, field by field */
SEGPOOL_STATIC_ASSERT(
	offsetof(struct segpool_export_cache, mag_swap) == 248 &&
	offsetof(struct segpool_export_cache, depot_get_full) == 256 &&
	offsetof(struct segpool_export_cache, depot_put_full) == 264 &&
	offsetof(struct segpool_export_cache, depot_get_empty) == 272 &&
	offsetof(struct segpool_export_cache, depot_put_empty) == 280 &&
	offsetof(struct segpool_export_cache, mag_fill) == 288 &&
	offsetof(struct segpool_export_cache, mag_flush) == 296 &&
	offsetof(struct segpool_export_cache, bypass) == 304 &&
	offsetof(struct segpool_export_cache, remote_free) == 312 &&
	offsetof(struct segpool_export_cache, rseq_abort) == 320 &&
	offsetof(struct segpool_export_cache, depot_full_mags) == 328,
	"cache record: layout 1 offsets of the per-CPU events");
SEGPOOL_STATIC_ASSERT(
	offsetof(struct segpool_export_cache, alloc_failslab) == 344,
	"cache record: layout 1 offsets (alloc_failslab was reserved, 0)");
SEGPOOL_STATIC_ASSERT(offsetof(struct segpool_export_cache, reserved) == 352,
	       "cache record: layout 1 offsets");
SEGPOOL_STATIC_ASSERT(
	offsetof(struct segpool_export_header, arenas_offset) == 408,
	"header: the arena words of layout 1");
SEGPOOL_STATIC_ASSERT(
	offsetof(struct segpool_export_header, keys_offset) == 416 &&
	offsetof(struct segpool_export_header, values_offset) == 440,
	"header: the key words of layout 1");
SEGPOOL_STATIC_ASSERT(sizeof(struct segpool_export_key) == 32, "key: 32 bytes");
SEGPOOL_STATIC_ASSERT(sizeof(struct segpool_export_arena) == 208,
	       "arena record: 208 bytes");
SEGPOOL_STATIC_ASSERT(sizeof(struct segpool_export_cache_node) == 128,
	       "cache node record: 128 bytes");
SEGPOOL_STATIC_ASSERT(
	offsetof(struct segpool_export_cache_node, depot_objs) == 104,
	"cache node record: layout 1 offsets");
#endif

/* --- requests from outside: the control segment --------------------------- */

/*
 * A process that exports also creates "/segpool.<pid>.ctl" (mode 0600, its
 * owner's), one struct segpool_export_ctl through which a program of the
 * same user asks it for one thing at a time; the publisher thread serves
 * the request within about 100 ms, whatever the interval.  The requester:
 *
 *	open O_RDWR, check with fstat() that the file is the user's and
 *	mode 0600, map it shared, check @magic and @version;
 *	CAS @state SEGPOOL_CTL_IDLE -> SEGPOOL_CTL_CLAIMED (or take over a
 *	claim older than SEGPOOL_CTL_STALE_NS by @claimed_ns: its requester
 *	died), fill @op, @arg, @path, @uid (getuid()), @pid and @ticket, then
 *	store SEGPOOL_CTL_PENDING (release);
 *	wait for SEGPOOL_CTL_DONE with its @ticket, read @result, @value and
 *	@reason, store SEGPOOL_CTL_IDLE (release).
 *
 * Who may ask: the file's mode lets only its owner (and root) open it for
 * writing, and the process refuses a request whose @uid is not its own
 * (real and effective) uid, so root asks as the process's user; it also
 * refuses every request while the file is not its own with mode 0600.
 */

/**
 * SEGPOOL_EXPORT_CTL_SUFFIX - after the segment's name: the control segment.
 */
#define SEGPOOL_EXPORT_CTL_SUFFIX	".ctl"
/**
 * SEGPOOL_EXPORT_CTL_MAGIC - first 8 bytes of a control segment ("SPCONTRL").
 */
#define SEGPOOL_EXPORT_CTL_MAGIC	0x4c52544e4f435053ULL
/** SEGPOOL_EXPORT_CTL_VERSION - the layout of struct segpool_export_ctl. */
#define SEGPOOL_EXPORT_CTL_VERSION	1U
/** SEGPOOL_CTL_PATH_MAX - bytes of a request's path, NUL included. */
#define SEGPOOL_CTL_PATH_MAX		256
/** SEGPOOL_CTL_REASON_MAX - bytes of an answer's words, NUL included. */
#define SEGPOOL_CTL_REASON_MAX		192
/**
 * SEGPOOL_CTL_STALE_NS - a claim this old (CLOCK_REALTIME ns) may be taken
 * over.
 */
#define SEGPOOL_CTL_STALE_NS		10000000000ULL

/* States (@state). */
/** SEGPOOL_CTL_IDLE - no request: a requester may claim the segment. */
#define SEGPOOL_CTL_IDLE		0U
/** SEGPOOL_CTL_CLAIMED - a requester is writing its request. */
#define SEGPOOL_CTL_CLAIMED		1U
/** SEGPOOL_CTL_PENDING - a request waits for the process. */
#define SEGPOOL_CTL_PENDING		2U
/** SEGPOOL_CTL_DONE - answered: the requester reads it and sets IDLE. */
#define SEGPOOL_CTL_DONE		3U

/* Requests (@op). */
/**
 * SEGPOOL_CTL_OP_SHRINK - segpool_shrink_all(); @value: the bytes given back.
 */
#define SEGPOOL_CTL_OP_SHRINK		1U
/**
 * SEGPOOL_CTL_OP_VALIDATE - segpool_cache_validate() of every cache; @value:
 * the problems.
 */
#define SEGPOOL_CTL_OP_VALIDATE		2U
/** SEGPOOL_CTL_OP_HEAP_PROFILE - segpool_heap_profile_dump(@path). */
#define SEGPOOL_CTL_OP_HEAP_PROFILE	3U
/** SEGPOOL_CTL_OP_SET_DECAY_MS - segpool_set_decay_ms(@arg). */
#define SEGPOOL_CTL_OP_SET_DECAY_MS	4U
/** SEGPOOL_CTL_OP_SET_MEMORY_LIMIT - segpool_set_memory_limit(@arg). */
#define SEGPOOL_CTL_OP_SET_MEMORY_LIMIT	5U
/** SEGPOOL_CTL_OP_TOP_SITES - the top @arg call sites, into the file @path. */
#define SEGPOOL_CTL_OP_TOP_SITES	6U
/** SEGPOOL_CTL_SITES_MAX - the most call sites one request asks for. */
#define SEGPOOL_CTL_SITES_MAX		64

/**
 * struct segpool_export_ctl - the control segment: one request, one answer.
 * @magic:      SEGPOOL_EXPORT_CTL_MAGIC, stored last at creation.
 * @version:    SEGPOOL_EXPORT_CTL_VERSION.
 * @size:       sizeof(struct segpool_export_ctl) of the process.
 * @state:      SEGPOOL_CTL_*, changed with atomic operations only.
 * @op:         SEGPOOL_CTL_OP_* of the request.
 * @ticket:     the requester's number for its request, copied into the
 *              answer's @answered.
 * @uid:        the requester's real uid.
 * @pid:        the requester's pid.
 * @arg:        the request's number (a delay, a limit), if it has one.
 * @claimed_ns: CLOCK_REALTIME when the segment was claimed.
 * @answered:   the @ticket of the request answered.
 * @result:     0: done; else refused or failed: a positive errno value.
 * @reserved0:  zero.
 * @value:      what the request returned (bytes, a count), when done.
 * @path:       the request's path (SEGPOOL_CTL_OP_HEAP_PROFILE,
 *              SEGPOOL_CTL_OP_TOP_SITES).
 * @reason:     the answer in words, for people.
 */
struct segpool_export_ctl {
	uint64_t magic;
	uint32_t version;
	uint32_t size;
	uint32_t state;
	uint32_t op;
	uint64_t ticket;
	uint32_t uid;
	int32_t pid;
	int64_t arg;
	uint64_t claimed_ns;
	uint64_t answered;
	int32_t result;
	int32_t reserved0;
	int64_t value;
	char path[SEGPOOL_CTL_PATH_MAX];
	char reason[SEGPOOL_CTL_REASON_MAX];
};

#if !defined(__cplusplus)
SEGPOOL_STATIC_ASSERT(sizeof(struct segpool_export_ctl) == 528,
		      "control segment: 528 bytes");
#endif

/* --- starting and stopping ------------------------------------------------ */

/**
 * segpool_export_start() - publish this process's statistics for segpool-top.
 * @interval_ms: milliseconds between two snapshots, SEGPOOL_EXPORT_INTERVAL_MIN
 *               to SEGPOOL_EXPORT_INTERVAL_MAX, or 0 for
 *               SEGPOOL_EXPORT_INTERVAL_DEFAULT.
 *
 * Creates the segment "/segpool.<pid>" (mode 0600; a stale segment of this
 * pid, and those that dead processes of the same user left a minute ago or
 * more, are removed first),
 * publishes a first snapshot before returning, and starts the publisher
 * thread.  Called again while the export runs, it only changes the
 * interval.  The segment is removed by segpool_export_stop() and at exit();
 * a child of fork() does not export until it calls this function itself.
 * SEGPOOL_EXPORT=1 in the environment does the same at library start-up,
 * with the interval from SEGPOOL_EXPORT_INTERVAL_MS.
 *
 * Context: any thread; not from a signal handler.  Takes the cache-list lock
 * and each cache's node and depot locks in turn, as segpool_stats_dump().
 * Return: 0; -EINVAL (errno EINVAL) for an interval out of range; -ENOMEM
 * when the library could not start; or the errno of the call that failed,
 * negated: creating the shared-memory object (shm_open: -EACCES, -EMFILE,
 * ...), sizing or mapping it (ftruncate, mmap: -ENOSPC, -ENOMEM), starting
 * the publisher (pthread_create: -EAGAIN).  Nothing is left behind
 * on failure.
 */
SEGPOOL_API int segpool_export_start(unsigned int interval_ms);

/**
 * segpool_export_stop() - stop publishing and remove the segment.
 *
 * Waits for the publisher thread to end, then unlinks and unmaps the
 * segment; a viewer that has it mapped keeps its last snapshot and sees
 * that it was removed.
 *
 * Context: any thread but the publisher; not from a signal handler.
 * Return: 0, or -ENOENT (errno ENOENT) when this process was not exporting.
 */
SEGPOOL_API int segpool_export_stop(void);

SEGPOOL_END_DECLS

#endif /* SEGPOOL_EXPORT_H */
