/* SPDX-License-Identifier: MIT */
/*
 * stats/snap.h - cache snapshots and the output buffer of the
 * statistics calls (private to the files of stats/).
 *
 * Every statistics call works in two steps.  Under the cache-list lock it
 * takes a snapshot of each cache in turn (struct sp_cache_snap: node
 * figures under each node lock, depot figures under each depot lock,
 * per-CPU counters by single-word reads that take no lock) and formats it
 * into a memory buffer (struct sp_sbuf).  Then, with no lock held, it
 * writes the buffer to the caller's stream, so a stream that blocks (a full
 * pipe, a stopped terminal) never holds up cache creation or destruction.
 *
 * Nothing here writes to a cache, a slot or a depot: the fast paths never
 * see a statistics reader except as a reader of their lines.
 */
#ifndef SP_STATS_SNAP_H
#define SP_STATS_SNAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <segpool/segpool.h>

#include "internal/compiler.h"
#include "numa/topology.h"
#include "percpu/pcpu.h"

/*
 * Counters of a CPU slot, by index: the slot's event counters (enum
 * sp_pcpu_stat, same values), then its two magazine-hit counters (class
 * SEGPOOL_CTR_HIT of SEGPOOL_PCPU_COUNTERS(): sp_slot_alloc_hits(),
 * slot->free_hits, as sp_pcpu_slot_counts() reads them).  SP_CTR_INDEX()
 * gives a listed counter's index.
 */
#define SP_CTR_ENUM_SEGPOOL_CTR_HIT(id)		SP_CTR_##id,
#define SP_CTR_ENUM_SEGPOOL_CTR_INFO(id)
#define SP_CTR_ENUM_SEGPOOL_CTR_EXPORT(id)
#define SP_CTR_ENUM_SEGPOOL_CTR_LIBRARY(id)
#define SP_CTR_ENUM(key, id, class, unit, doc)	SP_CTR_ENUM_##class(id)
enum sp_ctr {
	SP_CTR_BEFORE_HITS = SP_STAT_NR - 1,	/* not a counter */
	SEGPOOL_PCPU_COUNTERS(SP_CTR_ENUM)
	SP_CTR_NR,
};
#undef SP_CTR_ENUM

#define SP_CTR_INDEX_SEGPOOL_CTR_HIT(id)	SP_CTR_##id
#define SP_CTR_INDEX_SEGPOOL_CTR_INFO(id)	SP_STAT_##id
#define SP_CTR_INDEX_SEGPOOL_CTR_EXPORT(id)	SP_STAT_##id
#define SP_CTR_INDEX_SEGPOOL_CTR_LIBRARY(id)	SP_STAT_##id
#define SP_CTR_INDEX(class, id)			SP_CTR_INDEX_##class(id)

/* struct sp_node_snap - one node's figures of one cache. */
struct sp_node_snap {
	/* --- the slab layer, read under the node lock --- */
	uint64_t partial;		/* slabs on the partial list */
	uint64_t full;			/* slabs on the full list */
	uint64_t empty;			/* slabs kept empty */
	uint64_t slab_objs;		/* objects taken out of the slabs,
					 * magazines' included */
	uint64_t direct_allocs;		/* handed to the application directly */
	uint64_t direct_frees;		/* freed into the slabs directly */
	uint64_t sample_swaps;		/* sampled objects swapped in
					 * (slab/slab.h): the library's own
					 * allocation and free each */
	uint64_t fill_objs;		/* moved into magazines */
	uint64_t flush_objs;		/* flushed back from magazines */
	uint64_t slabs_created;
	uint64_t slabs_released;
	/* --- the per-CPU layer: slots whose node this is, and its depot --- */
	uint64_t cpu_objs;		/* in loaded and previous magazines */
	uint64_t mag_allocs;		/* alloc_fastpath + alloc_slowpath */
	uint64_t mag_frees;		/* free_fastpath + free_slowpath */
	uint64_t depot_objs;		/* in the depot's full magazines */
	uint64_t depot_full;		/* full magazines in the depot */
	uint64_t depot_empty;		/* empty magazines in the depot */
};

/*
 * The application's allocations and frees: all counted, less the sample
 * swaps, each an allocation and a free of the library's own (a sampled
 * object handed out, the object it replaced put back).  A read may meet a
 * swap before its put-back's free: never below 0.
 */
static inline uint64_t sp_node_app_count(uint64_t v,
					 const struct sp_node_snap *n)
{
	return v > n->sample_swaps ? v - n->sample_swaps : 0;
}

static inline uint64_t sp_node_allocs(const struct sp_node_snap *n)
{
	return sp_node_app_count(n->direct_allocs + n->mag_allocs, n);
}

static inline uint64_t sp_node_frees(const struct sp_node_snap *n)
{
	return sp_node_app_count(n->direct_frees + n->mag_frees, n);
}

/* struct sp_slot_snap - one CPU slot of one cache. */
struct sp_slot_snap {
	uint64_t ctr[SP_CTR_NR];	/* enum sp_ctr */
	unsigned int objs;		/* in the loaded and
					 * previous magazines */
	unsigned int node;		/* node index */
};

/* struct sp_cache_snap - one cache, as a statistics call saw it. */
struct sp_cache_snap {
	char name[SEGPOOL_CACHE_NAME_MAX + 1];
	unsigned long flags;		/* SEGPOOL_* | SP_CACHE_* */
	unsigned int object_size;
	unsigned int stride;
	unsigned int align;
	unsigned int order;
	unsigned int objs_per_slab;
	unsigned int max_empty;		/* empty slabs kept per node */
	bool ctor;
	bool pcpu;			/* has a per-CPU layer */
	unsigned int mag_size;		/* current magazine capacity */
	unsigned int mag_size_max;	/* tunable: the largest allowed */
	unsigned int depot_max;		/* tunable: full magazines per depot */
	uint64_t alloc_failures;
	uint64_t alloc_failslab;	/* failures injected by failslab */
	uint64_t meta_bytes;		/* control block, slots and depots */
	uint64_t ctr[SP_CTR_NR];	/* slot counters summed, shared bypass
					 * count included */
	int nr_nodes;
	struct sp_node_snap sum;	/* every node's figures added up */
	struct sp_node_snap *node;	/* [nr_nodes], or NULL: sums only */
	unsigned long nr_slots;		/* entries of @slot */
	struct sp_slot_snap *slot;	/* [nr_slots], or NULL: sums only */
};

/* Objects the application holds on @n: slab objects not in magazines. */
static inline uint64_t sp_node_active(const struct sp_node_snap *n)
{
	uint64_t cached = n->cpu_objs + n->depot_objs;

	/* a racing magazine fill can make the cached count run ahead */
	return n->slab_objs > cached ? n->slab_objs - cached : 0;
}

static inline uint64_t sp_node_slabs(const struct sp_node_snap *n)
{
	return n->partial + n->full + n->empty;
}

/* --- stats/snap.c --- */

/*
 * sp_stats_snap_cache() - take the snapshot of @c into @s.  @s->node and
 * @s->slot are kept: when set they receive the per-node (per-slot) figures,
 * and @s->nr_slots must say how many slots @s->slot holds (a cache with
 * more slots is snapshot without them: @s->slot becomes NULL).
 * Context: the cache-list lock held, or @c otherwise kept alive; takes each
 * node lock and then each depot lock, one at a time.
 */
SP_INTERNAL void sp_stats_snap_cache(struct segpool_cache *c,
				     struct sp_cache_snap *s);

/*
 * sp_stats_walk() - snapshot every live cache (or the one named @name), the
 * program's own first and the library's (size classes, magazines) after,
 * each group in list order, and call @fn with each, with the cache-list lock
 * held: @fn must only format into memory.  @slots asks for per-slot figures.
 * Return: the number of caches visited, or -ENOMEM.
 */
typedef void (*sp_stats_fn)(const struct sp_cache_snap *s, void *arg);
SP_INTERNAL int sp_stats_walk(const char *name, bool slots, sp_stats_fn fn,
			      void *arg);

/* Names of the slot counters, and the order they are printed in (both
 * from SEGPOOL_PCPU_COUNTERS()). */
extern SP_INTERNAL const char *const sp_ctr_name[SP_CTR_NR];
extern SP_INTERNAL const unsigned char sp_ctr_order[SP_CTR_NR];

/* A numeric field of a cache, or of a node of a cache (tables below). */
enum sp_field_kind {
	SP_FIELD_U64,			/* a number */
	SP_FIELD_BOOL,			/* yes/no, true/false */
	SP_FIELD_FLAGS,			/* the cache flags, by name */
	SP_FIELD_STR,			/* a string */
};

struct sp_cache_field {
	const char *name;
	enum sp_field_kind kind;
	uint64_t (*get)(const struct sp_cache_snap *s);
};

struct sp_node_field {
	const char *name;
	uint64_t (*get)(const struct sp_cache_snap *s,
			const struct sp_node_snap *n);
};

/*
 * The cache's own fields, then those with a per-node split: one list for
 * the text and the JSON renderings, so they cannot drift apart.
 */
extern SP_INTERNAL const struct sp_cache_field sp_cache_fields[];
extern SP_INTERNAL const size_t sp_nr_cache_fields;
extern SP_INTERNAL const struct sp_node_field sp_node_fields[];
extern SP_INTERNAL const size_t sp_nr_node_fields;

/*
 * sp_node_field_total() - field @f over every node: the sum of the per-node
 * values when @s has them (so a total always equals its split), else @f of
 * @s->sum.
 */
SP_INTERNAL uint64_t sp_node_field_total(const struct sp_node_field *f,
					 const struct sp_cache_snap *s);

/* The columns of a /proc/slabinfo 2.1 row after the name, in order. */
enum sp_slabinfo_col {
	SP_SI_ACTIVE_OBJS, SP_SI_NUM_OBJS, SP_SI_OBJSIZE, SP_SI_OBJPERSLAB,
	SP_SI_PAGESPERSLAB,
	SP_SI_LIMIT, SP_SI_BATCHCOUNT, SP_SI_SHAREDFACTOR,	/* tunables */
	SP_SI_ACTIVE_SLABS, SP_SI_NUM_SLABS, SP_SI_SHAREDAVAIL,	/* slabdata */
	SP_SI_NR,
};

extern SP_INTERNAL const char *const sp_slabinfo_name[SP_SI_NR];

/* sp_slabinfo_of() - the slabinfo columns of @s into @v. */
SP_INTERNAL void sp_slabinfo_of(const struct sp_cache_snap *s,
				uint64_t v[SP_SI_NR]);

/*
 * sp_cache_flag_names() - the names of the cache flags set in @flags, in
 * bit order, into @names[0 .. @max - 1].  Return: how many.
 */
SP_INTERNAL size_t sp_cache_flag_names(unsigned long flags,
				       const char **names, size_t max);

/* Check a public call's stream and flags; 0 or -EINVAL with errno set. */
SP_INTERNAL int sp_stats_check_args(FILE *out, unsigned int flags);

/*
 * SP_STATS_FOLD - an option of the text sections beside the public ones:
 * caches that never held an object (no slab ever made) are folded into one
 * line naming them.  The print at exit sets it unless told "unused".
 */
#define SP_STATS_FOLD		(1U << 31)

/* --- stats/buf.c --- */

/*
 * struct sp_sbuf - text formatted in memory: pages mapped with sp_os_map()
 * (so formatting never calls malloc) and doubled as it grows.  A failed
 * growth sets @err and drops every later write.
 */
struct sp_sbuf {
	char *buf;
	size_t len;
	size_t cap;
	int err;			/* 0, or -ENOMEM */
};

#define SP_SBUF_INIT	{ NULL, 0, 0, 0 }

SP_INTERNAL __sp_printf(2, 3) void sp_sbuf_printf(struct sp_sbuf *b,
						   const char *fmt, ...);
SP_INTERNAL void sp_sbuf_putc(struct sp_sbuf *b, char c);
/* @n bytes at @s, which need not end with a NUL. */
SP_INTERNAL void sp_sbuf_write(struct sp_sbuf *b, const char *s, size_t n);
/* "<key> a,b,c\n" from @n names, or "<key> none\n" when there are none. */
SP_INTERNAL void sp_sbuf_names(struct sp_sbuf *b, const char *key,
			       const char *const *names, size_t n);
SP_INTERNAL void sp_sbuf_free(struct sp_sbuf *b);
/*
 * sp_sbuf_finish() - write @b to @out, flush @out and free @b.
 * Return: 0, or -ENOMEM (@b lost a write; nothing is written) or -EIO,
 * with errno set.
 */
SP_INTERNAL int sp_sbuf_finish(struct sp_sbuf *b, FILE *out);

/*
 * struct sp_fold - the caches a text section folds (@on: SP_STATS_FOLD was
 * given).  sp_fold_take() is true for a cache to leave out, whose name it
 * keeps; sp_fold_finish() writes the one line that names them all into @b
 * ("# 47 caches never held an object (...): a b c") and frees @f.
 */
struct sp_fold {
	bool on;
	unsigned int n;
	struct sp_sbuf names;
};

#define SP_FOLD_INIT(flags) \
	{ ((flags) & SP_STATS_FOLD) != 0, 0, SP_SBUF_INIT }

SP_INTERNAL bool sp_fold_take(struct sp_fold *f, const struct sp_cache_snap *s);
SP_INTERNAL void sp_fold_finish(struct sp_fold *f, struct sp_sbuf *b);

/* --- the sections, formatted into @b (the files of stats/) --- */

/*
 * Each returns 0 or a negative errno (-ENOMEM; -ENOENT for a named cache
 * that does not exist); a buffer that ran out of memory says so in
 * @b->err.  segpool_stats_print() strings them together.
 */
/* @flags: 0 or SP_STATS_FOLD */
SP_INTERNAL int sp_stats_fmt_slabinfo(struct sp_sbuf *b, unsigned int flags);
/* The totals the print at exit starts with (stats/totals.c). */
SP_INTERNAL void sp_stats_fmt_totals(struct sp_sbuf *b);
SP_INTERNAL void sp_stats_fmt_health(struct sp_sbuf *b);
/* @cache: one cache, or NULL for every cache (without the health block). */
SP_INTERNAL int sp_stats_fmt_detail(struct sp_sbuf *b, const char *cache,
				    unsigned int flags);
SP_INTERNAL int sp_stats_fmt_json(struct sp_sbuf *b, unsigned int flags);

/* --- stats/health.c --- */

/* What the decay (core/decay.c) reports to the health read. */
struct sp_decay_stats {
	int64_t decay_ms;		/* the delay; -1 never */
	uint64_t runs;			/* the thread's passes */
	unsigned int thread;		/* 1 once the thread was started */
	uint64_t caches_released;	/* idle caches drained and shrunk */
	uint64_t memory_limit;		/* bytes; 0 none */
	uint64_t limit_hits;		/* allocations that found it reached */
	uint64_t limit_exceeded;	/* and went past it */
	unsigned int thp;		/* 1 when huge pages are advised */
};
/*
 * sp_health_decay_fn - fills a struct sp_decay_stats: set by core/ as the
 * decay's settings are read (sp_decay_read(), core/decay.c), NULL before
 * (the health read then reports the decay off); a hook, as core/ comes
 * after stats/ in the layers.
 */
extern SP_INTERNAL void (*sp_health_decay_fn)(struct sp_decay_stats *st);

/* Fill @h (all of it, @h->size included). */
SP_INTERNAL void sp_stats_health_read(struct segpool_health *h);
/* The health block of the text renderings. */
SP_INTERNAL void sp_stats_health_text(struct sp_sbuf *b,
				      const struct segpool_health *h);

/*
 * The fields of struct segpool_health as the renderings show them: a
 * string or a number (or yes/no), then the per-node ones.  The node ids
 * ("node_ids") come after the fields, the nodes after them.
 */
struct sp_health_field {
	const char *name;
	enum sp_field_kind kind;		/* STR (then @str),
						 * U64 or BOOL */
	uint64_t (*num)(const struct segpool_health *h);
	const char *(*str)(const struct segpool_health *h);
};

struct sp_health_node_field {
	const char *name;
	enum sp_field_kind kind;		/* U64 or BOOL */
	uint64_t (*get)(const struct segpool_health_node *n);
};

extern SP_INTERNAL const struct sp_health_field sp_health_fields[];
extern SP_INTERNAL const size_t sp_nr_health_fields;
extern SP_INTERNAL const struct sp_health_node_field sp_health_node_fields[];
extern SP_INTERNAL const size_t sp_nr_health_node_fields;

/* --- stats/arena.c --- */

/* Every arena as a block of the detail dump (after the caches). */
SP_INTERNAL void sp_stats_arenas_text(struct sp_sbuf *b);

#endif /* SP_STATS_SNAP_H */
