/* SPDX-License-Identifier: MIT */
/*
 * segpool/arena.h - arenas: bump allocation on a NUMA node, freed all at once.
 *
 * An arena hands out memory by moving a pointer through a chunk and frees
 * everything it handed out in one call, segpool_arena_reset(), whose cost
 * does not depend on how many allocations were made.  Chunks come from the
 * node's region (blocks up to 4 MiB, placed and bound like slabs), larger
 * ones from a mapping of their own on the node; they grow geometrically
 * from SEGPOOL_ARENA_CHUNK_MIN to SEGPOOL_ARENA_CHUNK_MAX.  A reset keeps
 * up to a bounded number of bytes of chunks for the next round (the
 * "keep", SEGPOOL_ARENA_KEEP_DEFAULT unless set) and gives the rest back;
 * kept chunks that a whole round did not use go back at the next reset,
 * and segpool_arena_trim() gives every kept chunk back at once.
 * Marks (segpool_arena_mark(), segpool_arena_rewind()) free what was
 * allocated after a point; an arena may start in a buffer of the caller's.
 *
 * Arenas are listed in segpool_stats_dump_detail() and segpool_stats_json()
 * ("arena <name>" blocks, an "arenas" array).  See
 * Documentation/guide/arenas.md.
 */
#ifndef SEGPOOL_ARENA_H
#define SEGPOOL_ARENA_H

#include <stddef.h>
#include <stdint.h>
#include <segpool/compiler.h>

SEGPOOL_BEGIN_DECLS

struct segpool_arena;

/* --- flags of segpool_arena_create() -------------------------------------- */

/**
 * SEGPOOL_ARENA_THREADSAFE - threads may allocate from the arena at the same
 * time: the bump is a compare-and-swap on the chunk's top, new chunks are
 * taken under the arena's lock.  Without it (the default) an arena belongs
 * to one thread at a time and a bump is plain loads and stores.
 */
#define SEGPOOL_ARENA_THREADSAFE	(1UL << 0)
/** SEGPOOL_ARENA_THISNODE - chunks only from the arena's node, no fallback. */
#define SEGPOOL_ARENA_THISNODE		(1UL << 1)
/**
 * SEGPOOL_ARENA_RED_ZONE - 16 bytes of 0xbb before and after every
 * allocation, checked at reset, rewind and destroy (letter Z of SEGPOOL_DEBUG
 * for the arena's name turns it on too).  Allocations then take the arena's
 * lock and a reset walks them: debug cost, O(allocations).
 */
#define SEGPOOL_ARENA_RED_ZONE		(1UL << 2)
/**
 * SEGPOOL_ARENA_POISON - fill free arena memory with 0x6b (at chunk creation
 * and on reset and rewind) and check on allocation that nothing wrote to it
 * in between (letter P of SEGPOOL_DEBUG).  Allocations take the arena's lock.
 */
#define SEGPOOL_ARENA_POISON		(1UL << 3)
/** SEGPOOL_ARENA_DEBUG - both debug flags. */
#define SEGPOOL_ARENA_DEBUG		(SEGPOOL_ARENA_RED_ZONE |	\
					 SEGPOOL_ARENA_POISON)
/** SEGPOOL_ARENA_FLAGS_VALID - every flag segpool_arena_create() accepts. */
#define SEGPOOL_ARENA_FLAGS_VALID	(SEGPOOL_ARENA_THREADSAFE |	\
					 SEGPOOL_ARENA_THISNODE |	\
					 SEGPOOL_ARENA_DEBUG)

/* --- limits --------------------------------------------------------------- */

/** SEGPOOL_ARENA_NAME_MAX - longest arena name accepted, without the NUL. */
#define SEGPOOL_ARENA_NAME_MAX		63
/**
 * SEGPOOL_ARENA_MAX_ALIGN - the largest alignment an allocation may ask for.
 */
#define SEGPOOL_ARENA_MAX_ALIGN		4096UL
/** SEGPOOL_ARENA_DEFAULT_ALIGN - the alignment an @align of 0 stands for. */
#define SEGPOOL_ARENA_DEFAULT_ALIGN	16UL
/** SEGPOOL_ARENA_MAX_SIZE - the largest single allocation (64 TiB). */
#define SEGPOOL_ARENA_MAX_SIZE		((size_t)1 << 46)
/** SEGPOOL_ARENA_CHUNK_MIN - bytes of an arena's first chunk of its own. */
#define SEGPOOL_ARENA_CHUNK_MIN		(64UL << 10)
/** SEGPOOL_ARENA_CHUNK_MAX - chunks double up to this size (a region block). */
#define SEGPOOL_ARENA_CHUNK_MAX		(4UL << 20)
/** SEGPOOL_ARENA_KEEP_DEFAULT - bytes of chunks a reset keeps, unless set. */
#define SEGPOOL_ARENA_KEEP_DEFAULT	(4UL << 20)
/**
 * SEGPOOL_ARENA_BUF_MIN - the smallest buffer segpool_arena_create_buf() takes.
 */
#define SEGPOOL_ARENA_BUF_MIN		256UL

/* --- life ----------------------------------------------------------------- */

/**
 * segpool_arena_create() - create an empty arena.
 * @name:  name shown in the statistics; 1 to SEGPOOL_ARENA_NAME_MAX
 *         characters, no white space.  Copied.  Several arenas may share a
 *         name.
 * @node:  the node whose region its chunks come from, or
 *         SEGPOOL_NUMA_NO_NODE (-1): the node of the CPU that takes each new
 *         chunk.  Without SEGPOOL_ARENA_THISNODE a full node falls back to
 *         the nearest others.
 * @flags: SEGPOOL_ARENA_* flags (SEGPOOL_ARENA_FLAGS_VALID).
 *
 * No memory is taken until the first allocation.
 *
 * Context: any thread.
 * Return: the arena, or NULL with errno EINVAL (bad name, unknown flag, a
 * node without memory) or ENOMEM.
 */
SEGPOOL_API SEGPOOL_WUR struct segpool_arena *
segpool_arena_create(const char *name, int node, unsigned long flags);

/**
 * segpool_arena_create_buf() - create an arena whose first chunk is @buf.
 * @name:  as for segpool_arena_create().
 * @node:  as for segpool_arena_create(), for the chunks after @buf.
 * @flags: as for segpool_arena_create().
 * @buf:   memory of the caller's (the stack, a static array), used before
 *         any chunk of the arena's own.  It stays the caller's: the arena
 *         never frees it, keeps it across resets, and stops using it at
 *         segpool_arena_destroy(), which must come before @buf goes away.
 * @size:  bytes at @buf, at least SEGPOOL_ARENA_BUF_MIN; a few dozen of
 *         them hold the chunk's header.
 *
 * Context: any thread.
 * Return: the arena, or NULL with errno EINVAL (as segpool_arena_create(),
 * or @buf NULL, or @size below SEGPOOL_ARENA_BUF_MIN) or ENOMEM.
 */
SEGPOOL_API SEGPOOL_WUR struct segpool_arena *
segpool_arena_create_buf(const char *name, int node, unsigned long flags,
			 void *buf, size_t size);

/**
 * segpool_arena_destroy() - free every chunk of an arena, and the arena.
 * @a: the arena.
 *
 * Memory handed out by @a is gone; chunks go back to the region (whose
 * memory goes back to the OS as freed slabs' does) or are unmapped.  With
 * SEGPOOL_ARENA_RED_ZONE the red zones are checked first.
 *
 * Context: no other thread may use @a, during or after the call.
 * Return: 0, or -EINVAL (errno EINVAL) when @a is NULL or not an arena.
 */
SEGPOOL_API int segpool_arena_destroy(struct segpool_arena *a);

/* --- allocation ----------------------------------------------------------- */

/**
 * segpool_arena_alloc() - @size bytes from an arena.
 * @a:     the arena.
 * @size:  bytes, 0 to SEGPOOL_ARENA_MAX_SIZE (0 gives a unique pointer, as
 *         1 does).
 * @align: 0 (SEGPOOL_ARENA_DEFAULT_ALIGN), or a power of two up to
 *         SEGPOOL_ARENA_MAX_ALIGN.
 *
 * The memory is not zeroed (a chunk's first round reads zero, later rounds
 * hold what the previous one left, or 0x6b with SEGPOOL_ARENA_POISON).  It
 * lives until the next segpool_arena_reset(), a segpool_arena_rewind() to a
 * mark taken before it, or segpool_arena_destroy(); it is never freed alone.
 *
 * Context: the owning thread, or any thread of a SEGPOOL_ARENA_THREADSAFE
 * arena (lock-free unless a new chunk is needed).
 * Return: the memory, or NULL with errno EINVAL (@a NULL or not an arena,
 * @align not a power of two or too large), EOVERFLOW (@size above
 * SEGPOOL_ARENA_MAX_SIZE) or ENOMEM (no memory, or the arena's limit
 * reached).
 */
SEGPOOL_API SEGPOOL_MALLOC SEGPOOL_ALLOC_SIZE(2) SEGPOOL_WUR void *
segpool_arena_alloc(struct segpool_arena *a, size_t size, size_t align);

/**
 * segpool_arena_calloc() - a zeroed array of @n elements of @size bytes.
 * @a:     the arena.
 * @n:     number of elements.
 * @size:  bytes of one element.
 * @align: as for segpool_arena_alloc().
 *
 * Context: as segpool_arena_alloc().
 * Return: as segpool_arena_alloc(); EOVERFLOW also when @n * @size
 * overflows.
 */
SEGPOOL_API SEGPOOL_MALLOC SEGPOOL_ALLOC_SIZE2(2, 3) SEGPOOL_WUR void *
segpool_arena_calloc(struct segpool_arena *a, size_t n, size_t size,
		     size_t align);

/**
 * segpool_arena_reset() - free everything the arena handed out.
 * @a: the arena (NULL or a non-arena: nothing happens, errno EINVAL).
 *
 * Costs one step per chunk, none per allocation (but with
 * SEGPOOL_ARENA_RED_ZONE, which checks each allocation's zones).  Chunks of
 * up to the keep (segpool_arena_set_keep()) bytes stay for the next round,
 * the largest first; the others, and kept chunks the last round did not
 * use, go back.  Every mark taken before is invalid afterwards.  Under
 * AddressSanitizer the freed memory is poisoned, under valgrind it is made
 * inaccessible, with SEGPOOL_ARENA_POISON it is filled with 0x6b.
 *
 * Context: no other thread may allocate from @a during the call.
 */
SEGPOOL_API void segpool_arena_reset(struct segpool_arena *a);

/**
 * segpool_arena_trim() - give every chunk kept for reuse back now.
 * @a: the arena.
 *
 * Context: as segpool_arena_reset().
 * Return: the bytes given back, or -EINVAL (errno EINVAL) for a bad @a.
 */
SEGPOOL_API long segpool_arena_trim(struct segpool_arena *a);

/* --- marks ---------------------------------------------------------------- */

/**
 * struct segpool_arena_pos - a mark: a point in an arena's allocations.
 * @arena: the arena it belongs to.
 * @chunk: serial number of the chunk then in use (0: none yet).
 * @top:   that chunk's fill level then.
 * @next:  the serial number the next chunk would get then (chunks from
 *         this one on were taken after the mark).
 * @epoch: the arena's reset count then.
 *
 * Filled by segpool_arena_mark(); opaque to the caller, who keeps it in any
 * memory (the stack, usually).
 */
struct segpool_arena_pos {
	const struct segpool_arena *arena;
	uint64_t chunk;
	uint64_t top;
	uint64_t next;
	uint64_t epoch;
};

/**
 * segpool_arena_mark() - remember the arena's current point in @m.
 * @a: the arena.
 * @m: where to store it.
 *
 * Marks nest: rewinding to one invalidates those taken after it; the
 * others stay valid.  A rewind refuses an invalid mark whose chunk went
 * back or was cut below it; one that the arena has grown past again since
 * is not told apart, so such marks must not be used.
 *
 * Context: as segpool_arena_reset().
 * Return: 0, or -EINVAL (errno EINVAL) when @a or @m is NULL or @a is not
 * an arena.
 */
SEGPOOL_API int segpool_arena_mark(struct segpool_arena *a,
				   struct segpool_arena_pos *m);

/**
 * segpool_arena_rewind() - free what was allocated after mark @m.
 * @a: the arena.
 * @m: a mark of @a taken since its last reset and not rewound past.
 *
 * Chunks taken after the mark go back as at a reset (kept up to the keep);
 * the mark's chunk is cut back to where it was.  The mark itself stays
 * valid: rewinding to it again frees what came after it since.
 *
 * Context: as segpool_arena_reset().
 * Return: 0, or -EINVAL (errno EINVAL) when @a or @m is NULL, @a is not an
 * arena, or @m is not a valid mark of @a (another arena's, taken before a
 * reset, or after a mark @a was since rewound to).
 */
SEGPOOL_API int segpool_arena_rewind(struct segpool_arena *a,
				     const struct segpool_arena_pos *m);

/* --- limits and figures --------------------------------------------------- */

/**
 * segpool_arena_set_limit() - cap the memory an arena's chunks take.
 * @a:     the arena.
 * @bytes: the most bytes of chunks (in use and kept, the caller's buffer
 *         not counted) the arena may hold, or 0 for no limit.
 *
 * An allocation that would need a chunk beyond the limit fails with
 * ENOMEM; what the arena already holds is not taken away.
 *
 * Context: as segpool_arena_reset().
 * Return: 0, or -EINVAL (errno EINVAL) for a bad @a.
 */
SEGPOOL_API int segpool_arena_set_limit(struct segpool_arena *a, size_t bytes);

/**
 * segpool_arena_set_keep() - how many bytes of chunks a reset keeps.
 * @a:     the arena.
 * @bytes: the most bytes of chunks kept for reuse across a reset or
 *         rewind (0: none; SEGPOOL_ARENA_KEEP_DEFAULT at creation).
 *
 * Context: as segpool_arena_reset().
 * Return: 0, or -EINVAL (errno EINVAL) for a bad @a.
 */
SEGPOOL_API int segpool_arena_set_keep(struct segpool_arena *a, size_t bytes);

/**
 * struct segpool_arena_info - an arena's figures.
 * @size:            sizeof(struct segpool_arena_info), set by the caller.
 * @flags:           the arena's SEGPOOL_ARENA_* flags (those SEGPOOL_DEBUG
 *                   added included).
 * @node:            the node it was created for, or -1.
 * @in_use:          bytes handed out since the last reset (alignment
 *                   padding and red zones included).
 * @peak:            the largest @in_use so far.
 * @held:            bytes of the chunks the arena holds, in use and kept
 *                   (the caller's buffer not counted).
 * @chunks:          chunks in use, the caller's buffer included.
 * @kept_chunks:     chunks kept for reuse.
 * @kept_bytes:      bytes of those.
 * @chunks_created:  chunks taken from the regions or mapped, in all.
 * @chunks_released: chunks given back, in all.
 * @resets:          calls of segpool_arena_reset().
 * @rewinds:         calls of segpool_arena_rewind() that succeeded.
 * @alloc_failures:  allocations that failed with ENOMEM.
 * @limit:           the limit (0: none).
 * @keep:            the keep.
 */
struct segpool_arena_info {
	size_t size;
	unsigned long flags;
	int node;
	uint64_t in_use;
	uint64_t peak;
	uint64_t held;
	uint64_t chunks;
	uint64_t kept_chunks;
	uint64_t kept_bytes;
	uint64_t chunks_created;
	uint64_t chunks_released;
	uint64_t resets;
	uint64_t rewinds;
	uint64_t alloc_failures;
	uint64_t limit;
	uint64_t keep;
};

/**
 * segpool_arena_get_info() - read an arena's figures into @info.
 * @a:    the arena.
 * @info: where to put them; @info->size must be set.
 *
 * Context: any thread (takes the arena's lock; an allocation running at the
 * same time in another thread may or may not be counted).
 * Return: 0, or -EINVAL (errno EINVAL) for a bad @a, a NULL @info or an
 * @info->size smaller than this struct.
 */
SEGPOOL_API int segpool_arena_get_info(struct segpool_arena *a,
				       struct segpool_arena_info *info);

/**
 * segpool_arena_name() - the name an arena was created with.
 * @a: the arena.
 *
 * Return: the name, or NULL (errno EINVAL) for a bad @a.
 */
SEGPOOL_API const char *segpool_arena_name(const struct segpool_arena *a);

SEGPOOL_END_DECLS

#endif /* SEGPOOL_ARENA_H */
