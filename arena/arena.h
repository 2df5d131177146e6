/* SPDX-License-Identifier: MIT */
/*
 * arena/arena.h - bump arenas: chunks, the bump and the arena list (private).
 *
 * Naming: numa/region.h's "sp_space" is the address-space reservation that
 * holds the node regions; the bump arenas of <segpool/arena.h> are
 * struct segpool_arena, and their internal functions are sp_bump_*.
 *
 * An arena is a control block (from an internal cache, core/arena_api.c)
 * and a list of chunks.  A chunk starts with its header; its payload follows:
 *
 *   chunk                    + SP_BUMP_HDR          + top             + end
 *   | struct sp_bump_chunk   | handed out ...       | free ...        |
 *
 * The chunk being bumped is @cur.  Chunks in use are on @used (newest
 * first, by @prev), chunks kept for reuse on @kept.  Every change of the
 * chunk lists (a new chunk, reset, rewind, trim, destroy) and every read of
 * them by the statistics happens under @lock; a bump takes no lock:
 *
 *   plain arena        the owner loads cur->top, stores the new top
 *                      (relaxed atomics, plain moves on x86: the statistics
 *                      read the top from another thread)
 *   SEGPOOL_ARENA_THREADSAFE
 *                      compare-and-swap of cur->top; a thread that finds
 *                      the chunk full takes @lock, and takes a new chunk
 *                      only when @cur is still the chunk it found full
 *   debug flags        every allocation under @lock (the red-zone records
 *                      form a list through the chunk)
 *
 * Lock order: see core/init.c, level 1 (sp_bump_list_lock, then an
 * arena's @lock: the statistics walk) and level 9 (sp_region_alloc()
 * takes a region lock under an arena's @lock).
 */
#ifndef SP_ARENA_ARENA_H
#define SP_ARENA_ARENA_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <segpool/arena.h>

#include "internal/compiler.h"
#include "internal/list.h"
#include "internal/sanitize.h"

#define SP_BUMP_MAGIC		0xa4e9a5e7U
#define SP_BUMP_HDR		64	/* header bytes at the
					 * start of a chunk */

/*
 * Owner token of region pages that hold arena chunks: low bits set, as
 * SP_OWNER_META (slab/slab.h), so no slab lookup takes a chunk for a slab.
 */
#define SP_OWNER_ARENA		((uintptr_t)4)

enum sp_bump_kind {
	SP_BUMP_REGION,		/* a region block of 2^order pages */
	SP_BUMP_MAPPING,	/* a mapping of its own (above CHUNK_MAX) */
	SP_BUMP_BUFFER,		/* the caller's buffer */
};

/* struct sp_bump_chunk - the header at the start of every chunk. */
struct sp_bump_chunk {
	size_t top;			/* next free byte, from the chunk start;
					 * bumped without a lock (see above) */
	size_t end;			/* bytes usable: the chunk's size */
	struct sp_bump_chunk *prev;	/* next older chunk on its list */
	uint64_t seq;			/* serial in the arena, for marks */
	size_t last_rec;		/* red zones: offset of the newest
					 * record, 0 when none */
	unsigned char kind;		/* enum sp_bump_kind */
	unsigned char order;		/* region block order */
};
_Static_assert(sizeof(struct sp_bump_chunk) <= SP_BUMP_HDR,
	       "a chunk header fits in SP_BUMP_HDR");

/*
 * struct segpool_arena - the control block, one cache line of bump state
 * first (read by every allocation), then what changes under @lock.
 */
struct segpool_arena {
	/* --- line 0: read by every bump --- */
	struct sp_bump_chunk *cur;	/* chunk bumped from, or NULL */
	unsigned long flags;		/* SEGPOOL_ARENA_* */
	uint32_t magic;			/* SP_BUMP_MAGIC while alive */
	unsigned int pre;		/* bytes before an object: record and
					 * left red zone (red zones only) */
	unsigned int post;		/* bytes after: right red zone, or the
					 * ASan gap */
	unsigned int min_align;		/* 8 under ASan, else 1 */
	uint64_t alloc_failures;	/* written under @lock */
	char pad0[SP_CACHE_LINE - 40];
	/* --- line 1: under @lock --- */
	pthread_mutex_t lock;
	struct sp_bump_chunk *used;	/* chunks in use, newest first */
	struct sp_bump_chunk *kept;	/* chunks kept for reuse */
	struct sp_bump_chunk *buf;	/* the caller's buffer, or NULL */
	size_t held;			/* bytes of own chunks, used and kept */
	size_t nr_used, nr_kept, kept_bytes;
	size_t limit;			/* 0: none */
	size_t keep;
	size_t next_size;		/* the next new chunk's size */
	uint64_t next_seq;
	uint64_t peak;
	uint64_t resets;		/* also the epoch of marks */
	uint64_t rewinds;
	uint64_t created, released;
	int node;			/* kernel node id, or -1 */
	int idx;			/* its index, or -1 */
	/* --- the list of arenas, under sp_bump_list_lock --- */
	struct sp_list_head list;
	char name[SEGPOOL_ARENA_NAME_MAX + 1];
} __sp_cacheline_aligned;

_Static_assert(offsetof(struct segpool_arena, lock) == SP_CACHE_LINE,
	       "bump state fills line 0");

/*
 * The tools see a chunk's free part (and red zones) as not addressable;
 * the library opens bytes [@off, @off + @n) of chunk @c before it touches
 * them and closes them after.
 */
static inline void sp_bump_open(struct sp_bump_chunk *c, size_t off, size_t n)
{
	sp_asan_unpoison((char *)c + off, n);
	sp_vg_defined((char *)c + off, n);
}

static inline void sp_bump_close(struct sp_bump_chunk *c, size_t off, size_t n)
{
	sp_asan_poison((char *)c + off, n);
	sp_vg_noaccess((char *)c + off, n);
}

/* --- arena/chunk.c --- */
/*
 * sp_bump_chunk_new() - a chunk of at least @need bytes (header included)
 * for @a: a kept one if one is big enough, else a new region block (up to
 * SEGPOOL_ARENA_CHUNK_MAX) or mapping, within the limit.  Its payload is
 * poisoned (ASan), inaccessible (valgrind), 0x6b (SEGPOOL_ARENA_POISON).
 * It is not yet on a list.
 * Context: @a->lock held.
 * Return: the chunk, or NULL with errno ENOMEM.
 */
SP_INTERNAL struct sp_bump_chunk *sp_bump_chunk_new(struct segpool_arena *a,
						    size_t need);
/* sp_bump_chunk_release() - give @c back to the OS.  @a->lock held. */
SP_INTERNAL void sp_bump_chunk_release(struct segpool_arena *a,
				       struct sp_bump_chunk *c);
/*
 * sp_bump_chunk_recycle() - end @c's round: cut it back to empty and put it
 * on the kept list if the keep has room, else release it.  @a->lock held.
 */
SP_INTERNAL void sp_bump_chunk_recycle(struct segpool_arena *a,
				       struct sp_bump_chunk *c);
/*
 * sp_bump_chunk_clear() - make [@from, top) of @c free again: poison it
 * for the tools, fill it with 0x6b under SEGPOOL_ARENA_POISON, and set the
 * top to @from.
 */
SP_INTERNAL void sp_bump_chunk_clear(struct segpool_arena *a,
				     struct sp_bump_chunk *c, size_t from);
/* sp_bump_chunk_init_buf() - the caller's buffer as @a's first chunk. */
SP_INTERNAL struct sp_bump_chunk *
sp_bump_chunk_init_buf(struct segpool_arena *a, void *buf, size_t size);

/* --- arena/bump.c --- */
/*
 * sp_bump_init() - set up @a (its name, node and flags validated by the
 * caller), with @buf/@size as its first chunk when @buf is set.
 */
SP_INTERNAL void sp_bump_init(struct segpool_arena *a, const char *name,
			      int node, int idx, unsigned long flags,
			      void *buf, size_t size);
/* The allocation's slow path: the arena's lock, a new chunk if need be. */
SP_INTERNAL void *sp_bump_alloc_slow(struct segpool_arena *a, size_t size,
				     size_t align);

/* --- the fast path, inline in the public call (core/arena_api.c) --- */

/* Hand @size bytes at @p to the caller: addressable, contents undefined. */
static __sp_always_inline void *sp_bump_give(void *p, size_t size)
{
	sp_asan_unpoison(p, size);
#if SP_VALGRIND
	if (unlikely(sp_on_valgrind))
		VALGRIND_MAKE_MEM_UNDEFINED(p, size);
#endif
	return p;
}

/*
 * Where an object of @size bytes at @align goes in @c when its top is
 * @top: *@off is its offset, *@ntop the top after it.  False if it does not
 * fit.  Sizes are below 2^46 and chunks below 2^47 bytes: no sum overflows.
 */
static inline bool sp_bump_fit(const struct segpool_arena *a,
			       const struct sp_bump_chunk *c, size_t top,
			       size_t size, size_t align, size_t *off,
			       size_t *ntop)
{
	uintptr_t base = (uintptr_t)c;
	size_t o = SP_ALIGN(base + top + a->pre, (uintptr_t)align) - base;

	if (unlikely(o + size + a->post > c->end))
		return false;
	*off = o;
	*ntop = o + size + a->post;
	return true;
}

/*
 * Bump @c: a plain store, or a compare-and-swap with @atomic.  *@old gets
 * the top the object was placed above.  Return: the object, or NULL when
 * @c is full.
 */
static inline char *sp_bump_try(const struct segpool_arena *a,
				struct sp_bump_chunk *c, size_t size,
				size_t align, bool atomic, size_t *old)
{
	size_t top = SP_READ_ONCE(c->top), off, ntop;

	for (;;) {
		if (!sp_bump_fit(a, c, top, size, align, &off, &ntop))
			return NULL;
		if (!atomic) {
			SP_WRITE_ONCE(c->top, ntop);
			break;
		}
		/* relaxed: the memory publishes nothing; @c itself came
		 * with the acquire load of @cur */
		if (__atomic_compare_exchange_n(&c->top, &top, ntop, true,
						__ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			break;
	}
	*old = top;
	return (char *)c + off;
}

/*
 * sp_bump_alloc() - the allocation; @size and @align validated.  Budget:
 * a plain arena's hit is about a dozen instructions (loads from line 0 of
 * the arena and from the chunk header, an add and a mask, a compare, a
 * store), with one unlikely branch out; segpool_arena_alloc()'s argument
 * checks come on top (about as many, all predicted).
 */
static __sp_always_inline void *sp_bump_alloc(struct segpool_arena *a,
						size_t size, size_t align)
{
	struct sp_bump_chunk *c;
	size_t old;
	char *obj;

	if (align < a->min_align)
		align = a->min_align;
	if (unlikely(a->flags & SEGPOOL_ARENA_DEBUG))
		return sp_bump_alloc_slow(a, size, align);
	if (a->flags & SEGPOOL_ARENA_THREADSAFE) {
		c = __atomic_load_n(&a->cur, __ATOMIC_ACQUIRE);
		obj = likely(c) ? sp_bump_try(a, c, size, align, true, &old)
				: NULL;
	} else {
		c = a->cur;
		obj = likely(c) ? sp_bump_try(a, c, size, align, false, &old)
				: NULL;
	}
	if (unlikely(!obj))
		return sp_bump_alloc_slow(a, size, align);
	return sp_bump_give(obj, size);
}

SP_INTERNAL void sp_bump_reset(struct segpool_arena *a);
SP_INTERNAL size_t sp_bump_trim(struct segpool_arena *a);
SP_INTERNAL void sp_bump_mark(struct segpool_arena *a,
			      struct segpool_arena_pos *m);
/* Return: 0, or -EINVAL when @m is not a valid mark of @a. */
SP_INTERNAL int sp_bump_rewind(struct segpool_arena *a,
			       const struct segpool_arena_pos *m);
/* sp_bump_fini() - release every chunk (the buffer stays the caller's). */
SP_INTERNAL void sp_bump_fini(struct segpool_arena *a);
/* sp_bump_info() - @a's figures into @info (all of it but @size). */
SP_INTERNAL void sp_bump_info(struct segpool_arena *a,
			      struct segpool_arena_info *info);
/* Bytes handed out in the chunks in use.  @a->lock held. */
SP_INTERNAL size_t sp_bump_in_use_locked(struct segpool_arena *a);

/* --- arena/debug.c --- */
/*
 * Red-zone records: in a SEGPOOL_ARENA_RED_ZONE arena an object is preceded
 * by a record (its size, the offset of the record before it) and a left
 * red zone, and followed by a right one:
 *
 *   | struct sp_bump_rec | left red zone | object ... | right red zone |
 *
 * The records form a list backwards through the chunk from last_rec.
 */
#define SP_BUMP_RED		0xbb
#define SP_BUMP_POISON		0x6b
#define SP_BUMP_RED_LEFT	16
#define SP_BUMP_RED_RIGHT	16
#define SP_BUMP_ASAN_GAP	16

struct sp_bump_rec {
	uint64_t size;			/* bytes the caller asked for */
	uint64_t prev;			/* offset of the previous
					 * record, or 0 */
};

/* sp_bump_debug_place() - write the record and zones of an object. */
SP_INTERNAL void sp_bump_debug_place(struct segpool_arena *a,
				     struct sp_bump_chunk *c, char *obj,
				     size_t size);
/*
 * sp_bump_debug_check_poison() - are bytes [@off, @off + @n) of @c still
 * 0x6b?  Reports the first that is not.
 */
SP_INTERNAL void sp_bump_debug_check_poison(struct segpool_arena *a,
					    struct sp_bump_chunk *c,
					    size_t off, size_t n);
/*
 * sp_bump_debug_check() - check the red zones of @c's objects above offset
 * @from (the whole chunk for SP_BUMP_HDR) and drop their records; reports
 * every damaged one.
 */
SP_INTERNAL void sp_bump_debug_check(struct segpool_arena *a,
				     struct sp_bump_chunk *c, size_t from);

/* --- arena/list.c --- */
extern SP_INTERNAL pthread_mutex_t sp_bump_list_lock;
extern SP_INTERNAL struct sp_list_head sp_bump_list;

/* sp_bump_list_add() / _del() - (un)list @a; take sp_bump_list_lock. */
SP_INTERNAL void sp_bump_list_add(struct segpool_arena *a);
SP_INTERNAL void sp_bump_list_del(struct segpool_arena *a);

/* struct sp_bump_snap - one arena as the statistics show it. */
struct sp_bump_snap {
	char name[SEGPOOL_ARENA_NAME_MAX + 1];
	struct segpool_arena_info info;
};

/*
 * sp_bump_walk() - call @fn with a snapshot of every arena, in creation
 * order, under sp_bump_list_lock (@fn must only format into memory).
 * Return: the number of arenas.
 */
typedef void (*sp_bump_fn)(const struct sp_bump_snap *s, void *arg);
SP_INTERNAL size_t sp_bump_walk(sp_bump_fn fn, void *arg);

/*
 * The numeric fields of an arena in the statistics, in order, after its
 * name, node and flags: one list for the text and JSON renderings and for
 * Documentation/guide/arenas.md (selftests/test_arena checks that the page
 * names each one).
 */
#define SP_ARENA_FIELDS(X)						\
	X(in_use,	   i->in_use)					\
	X(peak,		   i->peak)					\
	X(held,		   i->held)					\
	X(chunks,	   i->chunks)					\
	X(kept_chunks,	   i->kept_chunks)				\
	X(kept_bytes,	   i->kept_bytes)				\
	X(chunks_created,  i->chunks_created)				\
	X(chunks_released, i->chunks_released)				\
	X(resets,	   i->resets)					\
	X(rewinds,	   i->rewinds)					\
	X(alloc_failures,  i->alloc_failures)				\
	X(limit,	   i->limit)					\
	X(keep,		   i->keep)

struct sp_bump_field {
	const char *name;
	uint64_t (*get)(const struct segpool_arena_info *i);
};

extern SP_INTERNAL const struct sp_bump_field sp_bump_fields[];
extern SP_INTERNAL const size_t sp_nr_bump_fields;

/* The names of the arena flags set in @flags into @names.  Return: how many. */
SP_INTERNAL size_t sp_bump_flag_names(unsigned long flags, const char **names,
				      size_t max);

#endif /* SP_ARENA_ARENA_H */
