/* SPDX-License-Identifier: MIT */
/*
 * segpool/slab.h - named object caches and kmalloc-style size classes.
 *
 * The kernel's kmem_cache API in userspace: a cache hands out objects of one
 * size and alignment, carved from slabs that live in per-NUMA-node memory
 * regions.  Every function here is thread-safe and may be called from any
 * thread, including in a child after fork().  From a signal handler only
 * the allocation and free calls, with the limits that
 * Documentation/guide/using.md ("Signal handlers") states.
 *
 * Errors: functions returning a pointer return NULL and set errno; functions
 * returning int return a negative errno value and set errno too.  Misuse that
 * would corrupt memory (freeing a pointer segpool never handed out, an
 * interior pointer, an object of another cache, an obvious double free) is
 * reported on stderr as "segpool: <what> <address> (cache <name>)" and the
 * process aborts.
 */
#ifndef SEGPOOL_SLAB_H
#define SEGPOOL_SLAB_H

#include <stddef.h>
#include <segpool/compiler.h>

SEGPOOL_BEGIN_DECLS

struct segpool_cache;

/* --- cache flags (segpool_cache_create) --------------------------------- */

/** SEGPOOL_HWCACHE_ALIGN - align objects to the CPU cache line (64 bytes). */
#define SEGPOOL_HWCACHE_ALIGN		(1UL << 0)
/** SEGPOOL_PANIC - abort with a message if the cache cannot be created. */
#define SEGPOOL_PANIC			(1UL << 1)
/**
 * SEGPOOL_TYPESAFE_BY_RCU - the kernel's SLAB_TYPESAFE_BY_RCU: objects may be
 * freed and reused for new objects of the same cache at once, but the memory
 * of a slab goes back to the OS or to another cache only after an RCU grace
 * period (urcu-memb, segpool/rcu.h), so a reader in a read-side critical
 * section always finds a constructed object of this cache, though maybe not
 * the one it looked for: it must re-check (Documentation/guide/rcu.md).  The
 * free-list link is kept outside the object's bytes.
 */
#define SEGPOOL_TYPESAFE_BY_RCU		(1UL << 2)

/*
 * NUMA policy of a cache (bits 8 and 9).  Without either, objects come from
 * the calling CPU's node (or the node asked for) and, when that node has no
 * memory left, from the other nodes by increasing numa_distance().
 */
/**
 * SEGPOOL_NODE_STRICT - never fall back to another node: every allocation
 * of the cache behaves as with SEGPOOL_THISNODE and fails with ENOMEM when
 * its node is full.  Not with SEGPOOL_INTERLEAVE.
 */
#define SEGPOOL_NODE_STRICT		(1UL << 8)
/**
 * SEGPOOL_INTERLEAVE - spread the cache's slabs over every node: successive
 * allocations of a thread that names no node rotate over the nodes, for
 * read-mostly data shared by all nodes.  Such a cache has no per-CPU
 * magazines (they hold node-local objects only); segpool_cache_alloc_node()
 * still honours the node it is given.  Not with SEGPOOL_NODE_STRICT.
 */
#define SEGPOOL_INTERLEAVE		(1UL << 9)

/*
 * Debug flags (Documentation/guide/debugging.md).  A cache with any of them
 * takes the debug path: no per-CPU magazines, every allocation and free checked
 * in the slab layer.  SEGPOOL_DEBUG=<letters>[,<cache>...] sets them from the
 * environment; the letter of each is given below.
 */
/**
 * SEGPOOL_RED_ZONE - red zones before and after each object (letter Z),
 * checked on every allocation and free and by segpool_cache_validate().
 */
#define SEGPOOL_RED_ZONE		(1UL << 3)
/**
 * SEGPOOL_POISON - fill free objects with 0x6b (last byte 0xa5) and check
 * the fill when the object is handed out again (letter P).  Ignored for
 * caches with a ctor or SEGPOOL_TYPESAFE_BY_RCU, whose free objects keep
 * their bytes.
 */
#define SEGPOOL_POISON			(1UL << 4)
/**
 * SEGPOOL_STORE_USER - keep the last allocation and free call sites of
 * every object (stack, thread id, sequence number), printed in every report
 * and in the leak list (letter U).
 */
#define SEGPOOL_STORE_USER		(1UL << 5)
/**
 * SEGPOOL_CONSISTENCY_CHECKS - check free-list links and slab counts on
 * every allocation and free (letter F).
 */
#define SEGPOOL_CONSISTENCY_CHECKS	(1UL << 6)

/** SEGPOOL_DEBUG_FLAGS - every debug flag (SEGPOOL_DEBUG=FZPU). */
#define SEGPOOL_DEBUG_FLAGS \
	(SEGPOOL_RED_ZONE | SEGPOOL_POISON | SEGPOOL_STORE_USER | \
	 SEGPOOL_CONSISTENCY_CHECKS)

/**
 * SEGPOOL_FREELIST_RANDOM - the kernel's SLAB_FREELIST_RANDOM: a new (or
 * emptied) slab hands out its objects in a random order, drawn from a
 * per-cache random permutation with a random start per slab, instead of
 * address order.  Makes the address of the next object hard to predict;
 * costs a table lookup when a slab hands out a never-used object.
 */
#define SEGPOOL_FREELIST_RANDOM		(1UL << 7)

/* All flags segpool_cache_create() accepts; any other bit is EINVAL. */
#define SEGPOOL_CACHE_FLAGS_VALID \
	(SEGPOOL_HWCACHE_ALIGN | SEGPOOL_PANIC | SEGPOOL_TYPESAFE_BY_RCU | \
	 SEGPOOL_NODE_STRICT | SEGPOOL_INTERLEAVE | SEGPOOL_DEBUG_FLAGS | \
	 SEGPOOL_FREELIST_RANDOM)

/* --- allocation flags (gfp) ---------------------------------------------- */

/** SEGPOOL_ZERO - return zeroed memory (EINVAL on a cache with a ctor). */
#define SEGPOOL_ZERO			(1U << 0)
/**
 * SEGPOOL_THISNODE - fail with ENOMEM rather than fall back to another node.
 */
#define SEGPOOL_THISNODE		(1U << 1)

#define SEGPOOL_GFP_VALID		(SEGPOOL_ZERO | SEGPOOL_THISNODE)

/*
 * More gfp bits, for the kernel-semantics calls below (segpool_kmalloc()
 * and friends, segpool_alloc_failed(), segpool/mempool.h); the cache calls
 * above take only SEGPOOL_GFP_VALID.  The kernel overlay (include/segpool/
 * kernel/, Documentation/guide/kernel-api.md) gives the kernel's __GFP_ names
 * these values, so its gfp masks reach these calls unchanged.
 */
/**
 * SEGPOOL_NOFAIL - the kernel's __GFP_NOFAIL: a failed allocation is
 * retried (with a growing pause, sleeping only with SEGPOOL_WAIT) and,
 * when it still fails, the process aborts with a message naming the
 * request; the call never returns NULL for lack of memory.
 */
#define SEGPOOL_NOFAIL			(1U << 2)
/**
 * SEGPOOL_WAIT - the kernel's __GFP_DIRECT_RECLAIM: the caller may sleep.
 * segpool_mempool_alloc() waits for an element to come back instead of
 * failing, SEGPOOL_NOFAIL retries sleep; allocation itself never sleeps.
 */
#define SEGPOOL_WAIT			(1U << 3)
/**
 * SEGPOOL_NOWARN - the kernel's __GFP_NOWARN: no warning on failure.
 * Without it a failed segpool_kmalloc() (or a failure passed to
 * segpool_alloc_failed()) prints one rate-limited line on stderr, as the
 * kernel's warn_alloc() does.
 */
#define SEGPOOL_NOWARN			(1U << 4)

/* The gfp bits segpool_kmalloc() and friends accept; others are EINVAL. */
#define SEGPOOL_KMALLOC_GFP_VALID \
	(SEGPOOL_GFP_VALID | SEGPOOL_NOFAIL | SEGPOOL_WAIT | SEGPOOL_NOWARN)

/**
 * SEGPOOL_ZERO_SIZE_PTR - what segpool_kmalloc(0) returns: the kernel's
 * ZERO_SIZE_PTR, an address that faults on any access.  Free it with
 * segpool_kfree() (a no-op for it), not segpool_free().
 */
#define SEGPOOL_ZERO_SIZE_PTR		((void *)16)
/** SEGPOOL_ZERO_OR_NULL_PTR() - @p is NULL or SEGPOOL_ZERO_SIZE_PTR. */
#define SEGPOOL_ZERO_OR_NULL_PTR(p) \
	((unsigned long)(p) <= (unsigned long)SEGPOOL_ZERO_SIZE_PTR)

/** SEGPOOL_NUMA_NO_NODE - "any node": the calling CPU's node first. */
#define SEGPOOL_NUMA_NO_NODE		(-1)

/* --- limits --------------------------------------------------------------- */

/** SEGPOOL_CACHE_NAME_MAX - longest cache name accepted, without the NUL. */
#define SEGPOOL_CACHE_NAME_MAX		63
/** SEGPOOL_CACHE_MAX_SIZE - largest object size of a cache (256 KiB). */
#define SEGPOOL_CACHE_MAX_SIZE		(256UL * 1024)
/** SEGPOOL_CACHE_MAX_ALIGN - largest alignment of a cache (one page). */
#define SEGPOOL_CACHE_MAX_ALIGN		4096UL
/**
 * SEGPOOL_KMALLOC_MAX_CACHE_SIZE - largest size-class object; above, mappings.
 */
#define SEGPOOL_KMALLOC_MAX_CACHE_SIZE	(32UL * 1024)
/** SEGPOOL_MAG_SIZE_MIN - the smallest magazine (objects). */
#define SEGPOOL_MAG_SIZE_MIN		4U
/** SEGPOOL_CACHE_LINE - the cache line size SEGPOOL_HWCACHE_ALIGN uses. */
#define SEGPOOL_CACHE_LINE		64UL

/* --- object caches -------------------------------------------------------- */

/**
 * segpool_cache_create() - create a named cache of objects of one size.
 * @name:  name shown in the stats dump; 1 to SEGPOOL_CACHE_NAME_MAX
 *         characters, no white space, unique among live caches.  Copied.
 * @size:  object size in bytes, 1 to SEGPOOL_CACHE_MAX_SIZE.
 * @align: required alignment, 0 or a power of two up to
 *         SEGPOOL_CACHE_MAX_ALIGN.  Objects are always aligned to at least
 *         max(@align, 8); SEGPOOL_HWCACHE_ALIGN raises it to the cache line.
 * @flags: SEGPOOL_HWCACHE_ALIGN, SEGPOOL_PANIC, SEGPOOL_TYPESAFE_BY_RCU,
 *         SEGPOOL_FREELIST_RANDOM; at most one NUMA policy,
 *         SEGPOOL_NODE_STRICT or SEGPOOL_INTERLEAVE; and the debug flags
 *         SEGPOOL_RED_ZONE, SEGPOOL_POISON, SEGPOOL_STORE_USER,
 *         SEGPOOL_CONSISTENCY_CHECKS (the environment variable SEGPOOL_DEBUG
 *         may add debug flags).
 * @ctor:  optional constructor.  It runs once per object when the object's
 *         slab is populated, never on allocation; objects must be freed back
 *         in constructed state and segpool keeps their bytes intact while they
 *         are free (the free-list link lives outside the object).
 *
 * A cache for a program's connections, one object taken and given back:
 *
 *	struct segpool_cache *conns =
 *		segpool_cache_create("conn", sizeof(struct conn), 0,
 *				     SEGPOOL_HWCACHE_ALIGN, NULL);
 *	struct conn *c =
 *		conns ? segpool_cache_alloc(conns, SEGPOOL_ZERO) : NULL;
 *
 *	if (!c)
 *		err(1, "conn");
 *	segpool_cache_free(conns, c);
 *	segpool_cache_destroy(conns);
 *
 * Context: any thread.  Takes the global cache-list lock.
 * Return: the new cache, or NULL with errno set: EINVAL for a bad argument
 * (also both NUMA policies at once), EEXIST if a live cache already has @name,
 * ENOMEM when out of memory.  With SEGPOOL_PANIC a failure prints the reason
 * and aborts instead.
 */
SEGPOOL_API SEGPOOL_WUR struct segpool_cache *
segpool_cache_create(const char *name, size_t size, size_t align,
		     unsigned long flags, void (*ctor)(void *));

/**
 * struct segpool_cache_tunables - per-CPU magazine limits of a cache.
 * @mag_size:  most objects one magazine may hold (magazines come in 4, 12,
 *             28, 60, 124, 252, 508 and 1020 rounds; the largest class not
 *             above this is the limit), or 0 to keep the current limit.
 *             Each CPU holds up to two magazines; frequent trips to the
 *             depot and depot contention grow magazines up to this limit,
 *             quiet shrinks them back.
 * @depot_max: most full (and most empty) magazines a node's depot keeps,
 *             or 0 to keep the current value.
 */
struct segpool_cache_tunables {
	unsigned int mag_size;
	unsigned int depot_max;
};

/**
 * segpool_cache_create_tuned() - segpool_cache_create() with magazine limits.
 * @name:  as for segpool_cache_create().
 * @size:  as for segpool_cache_create().
 * @align: as for segpool_cache_create().
 * @flags: as for segpool_cache_create().
 * @ctor:  as for segpool_cache_create().
 * @tun:   the limits, or NULL for the defaults.
 *
 * Context: any thread.
 * Return: as segpool_cache_create(); EINVAL also for a @tun->mag_size below
 * the smallest magazine (4).
 */
SEGPOOL_API SEGPOOL_WUR struct segpool_cache *
segpool_cache_create_tuned(const char *name, size_t size, size_t align,
			   unsigned long flags, void (*ctor)(void *),
			   const struct segpool_cache_tunables *tun);

/**
 * segpool_cache_set_tunables() - change a cache's magazine limits at run time.
 * @cache: the cache.
 * @tun:   the new limits (0 fields keep their value).
 *
 * Takes effect as magazines cycle through the depot; call
 * segpool_cache_shrink() to apply it at once.
 *
 * Context: any thread.
 * Return: 0; -EINVAL (bad argument); -ENOTSUP when the cache has no per-CPU
 * layer (SEGPOOL_PERCPU=off).
 */
SEGPOOL_API int
segpool_cache_set_tunables(struct segpool_cache *cache,
			   const struct segpool_cache_tunables *tun);

/**
 * SEGPOOL_CACHE() - create a cache for a struct type, like KMEM_CACHE().
 * @type:  the struct name (without "struct"); it names the cache.
 * @flags: cache flags as for segpool_cache_create().
 *
 * Return: as segpool_cache_create().
 */
#define SEGPOOL_CACHE(type, flags)					\
	segpool_cache_create(#type, sizeof(struct type),		\
			     SEGPOOL_ALIGNOF(struct type), (flags), NULL)

/**
 * segpool_cache_destroy() - destroy a cache and give its memory back.
 * @cache: the cache, or NULL (a no-op returning 0).
 *
 * All objects must have been freed.  Objects freed with
 * segpool_cache_free_rcu() whose grace period is not over are waited for
 * first (they count as freed), and so are the empty slabs of a
 * SEGPOOL_TYPESAFE_BY_RCU cache waiting for theirs.  If some objects are
 * still allocated the call reports the cache name and the count of live
 * objects on stderr, releases only the empty slabs and leaves the cache
 * intact and usable (the leaked objects stay mapped), and fails with -EBUSY.
 *
 * After a successful call the handle is dead: any later call with it
 * (alloc, free, shrink, destroy, info...) is reported on stderr naming the
 * destroyed cache ("segpool: alloc from destroyed cache <handle> (cache
 * <name>)") and the process aborts; a cache created later never gets the
 * same address while the handle is recognised (the last 1024 destroyed
 * caches; Documentation/guide/using.md).
 *
 * Context: any thread outside an RCU read-side critical section (it may
 * wait for a grace period); no other thread may use @cache during or after
 * a successful call.
 * Return: 0 on success, -EBUSY (errno EBUSY) when objects are live,
 * -EINVAL (errno EINVAL) when @cache is not a cache or is a size-class or
 * internal cache, -EDEADLK (errno EDEADLK) inside a read-side critical
 * section.
 */
SEGPOOL_API int segpool_cache_destroy(struct segpool_cache *cache);

/**
 * segpool_cache_alloc() - allocate one object from a cache.
 * @cache: the cache.
 * @gfp:   0, or SEGPOOL_ZERO and/or SEGPOOL_THISNODE.
 *
 * The object comes from the calling CPU's NUMA node, or from the nearest
 * node with memory when that one is full (unless SEGPOOL_THISNODE or the
 * cache is SEGPOOL_NODE_STRICT); a SEGPOOL_INTERLEAVE cache rotates over
 * the nodes instead.
 *
 * Context: any thread.
 * Return: the object, aligned and constructed; NULL with errno EINVAL (NULL
 * cache, unknown gfp bit, SEGPOOL_ZERO on a cache with a ctor) or ENOMEM.
 */
SEGPOOL_API SEGPOOL_MALLOC SEGPOOL_WUR void *
segpool_cache_alloc(struct segpool_cache *cache, unsigned int gfp);

/**
 * segpool_cache_alloc_node() - allocate one object from a given NUMA node.
 * @cache: the cache.
 * @gfp:   as for segpool_cache_alloc().
 * @node:  a node id that has memory, or SEGPOOL_NUMA_NO_NODE.
 *
 * Context: any thread.
 * Return: the object, or NULL with errno EINVAL (also for a node that does
 * not exist) or ENOMEM (with SEGPOOL_THISNODE or on a SEGPOOL_NODE_STRICT
 * cache: @node has no free memory; otherwise: no node has).
 */
SEGPOOL_API SEGPOOL_MALLOC SEGPOOL_WUR void *
segpool_cache_alloc_node(struct segpool_cache *cache, unsigned int gfp,
			 int node);

/**
 * segpool_cache_free() - return an object to its cache.
 * @cache: the cache the object was allocated from.
 * @obj:   the object, or NULL (a no-op).
 *
 * Always checked, and reported with an abort: a pointer segpool never
 * handed out, an interior pointer, an object of another cache, and a double
 * free, whatever happened in between (other frees, shrinks, a slab released
 * and carved again at the same address): every free object carries a free
 * mark, from its slab's creation on.  What goes unseen is listed once in
 * Documentation/guide/using.md ("Errors and misuse").
 *
 * Context: any thread, not only the allocating one.
 */
SEGPOOL_API void segpool_cache_free(struct segpool_cache *cache, void *obj);

/**
 * segpool_cache_alloc_bulk() - allocate @n objects, all or nothing.
 * @cache: the cache.
 * @gfp:   as for segpool_cache_alloc().
 * @n:     how many objects.
 * @objs:  array of at least @n pointers that receives them.
 *
 * Context: any thread.
 * Return: @n on success (also 0 for @n == 0); 0 with errno set when it
 * fails, in which case nothing is allocated and @objs holds no object.
 */
SEGPOOL_API SEGPOOL_WUR int
segpool_cache_alloc_bulk(struct segpool_cache *cache, unsigned int gfp,
			 size_t n, void **objs);

/**
 * segpool_cache_free_bulk() - free @n objects of one cache.
 * @cache: the cache.
 * @n:     how many objects.
 * @objs:  the objects; NULL entries are skipped.
 *
 * Each object is checked as by segpool_cache_free().
 *
 * Context: any thread.
 */
SEGPOOL_API void segpool_cache_free_bulk(struct segpool_cache *cache,
					 size_t n, void **objs);

/**
 * segpool_cache_shrink() - give every empty slab of a cache back to the OS.
 * @cache: the cache.
 *
 * Context: any thread.
 * Return: the number of slabs released (>= 0), or -EINVAL.
 */
SEGPOOL_API int segpool_cache_shrink(struct segpool_cache *cache);

/**
 * segpool_cache_name() - the name a cache was created with.
 * @cache: the cache.
 *
 * Return: the name, or NULL with errno EINVAL.
 */
SEGPOOL_API const char *segpool_cache_name(const struct segpool_cache *cache);

/**
 * segpool_cache_object_size() - the object size a cache was created with.
 * @cache: the cache.
 *
 * Return: the size in bytes, or 0 with errno EINVAL.
 */
SEGPOOL_API size_t segpool_cache_object_size(const struct segpool_cache *cache);

/* --- kmalloc-style size classes ------------------------------------------- */

/**
 * segpool_malloc() - allocate @size bytes from the size-class caches.
 * @size: any size.  Up to SEGPOOL_KMALLOC_MAX_CACHE_SIZE the object comes
 *        from the smallest size class that holds it (power-of-two sizes are
 *        naturally aligned); above, a run of pages of the calling CPU's node
 *        region (power-of-two sizes aligned to their size), or from 64 MiB
 *        up a mapping of its own on that node, unmapped on free.
 *
 * As malloc(), on segpool's size classes:
 *
 *	char *line = segpool_malloc(len + 1);
 *
 *	if (!line)
 *		return -ENOMEM;
 *	memcpy(line, text, len);
 *	line[len] = '\0';
 *	...
 *	segpool_free(line);
 *
 * Context: any thread.
 * Return: the memory, at least 16-byte aligned (8 for the 8-byte class), or
 * NULL with errno ENOMEM.  segpool_malloc(0) returns a unique pointer of the
 * smallest class.
 */
SEGPOOL_API SEGPOOL_MALLOC SEGPOOL_ALLOC_SIZE(1) SEGPOOL_WUR void *
segpool_malloc(size_t size);

/**
 * segpool_calloc() - allocate a zeroed array.
 * @n:    number of elements.
 * @size: element size.
 *
 * Return: the memory, or NULL with errno ENOMEM (also when @n * @size
 * overflows).
 */
SEGPOOL_API SEGPOOL_MALLOC SEGPOOL_ALLOC_SIZE2(1, 2) SEGPOOL_WUR void *
segpool_calloc(size_t n, size_t size);

/**
 * segpool_realloc() - resize an allocation.
 * @ptr:  NULL (then like segpool_malloc()) or memory from segpool_malloc()
 *        and friends.
 * @size: the new size; 0 frees @ptr and returns NULL.
 *
 * The contents up to the smaller of the old and new sizes are kept.  When the
 * new size fits the current size class, @ptr is returned unchanged; a large
 * block shrinks in place and grows in place when the pages after it are
 * free, a mapping of its own (64 MiB and up) grows by mremap.  @ptr
 * is checked as segpool_free() checks it before anything is copied: a
 * pointer segpool never handed out, an interior pointer or an object of a
 * named cache is reported ("realloc of interior pointer", with the cache
 * name) and the process aborts.
 *
 * Return: the memory, or NULL with errno ENOMEM (@ptr is then untouched).
 */
SEGPOOL_API SEGPOOL_ALLOC_SIZE(2) SEGPOOL_WUR void *
segpool_realloc(void *ptr, size_t size);

/**
 * segpool_free() - free memory from segpool_malloc() and friends, or an
 * object of any cache.
 * @ptr: the memory, or NULL (a no-op).
 *
 * An object of a named cache goes back to that cache, as the kernel's
 * kfree() allows (the cache is found from the object's page).  Pointers
 * segpool never handed out, interior pointers and double frees are reported
 * with the address (and the cache's name) and abort the process.
 */
SEGPOOL_API void segpool_free(void *ptr);

/**
 * segpool_aligned_alloc() - allocate @size bytes aligned to @align.
 * @align: a power of two.
 * @size:  any size.
 *
 * Return: the memory, or NULL with errno EINVAL (@align not a power of two)
 * or ENOMEM.
 */
SEGPOOL_API SEGPOOL_MALLOC SEGPOOL_ALLOC_ALIGN(1) SEGPOOL_ALLOC_SIZE(2)
SEGPOOL_WUR void *segpool_aligned_alloc(size_t align, size_t size);

/**
 * segpool_usable_size() - how many bytes of an allocation may be used.
 * @ptr: memory from segpool_malloc() and friends, or NULL (returns 0).
 *
 * A pointer into a large block that is not its start has no size (0,
 * EINVAL).  A pointer into a slab that is not at an object's start is
 * misuse, as for segpool_free(): reported ("usable_size of interior
 * pointer", with the cache name), then the process aborts.
 *
 * Return: the size of @ptr's size class, or the bytes of its large block's
 * pages (>= the size asked for);
 * 0 with errno EINVAL for a pointer segpool did not hand out.
 */
SEGPOOL_API size_t segpool_usable_size(const void *ptr);

/**
 * segpool_malloc_node() - segpool_malloc() from a given NUMA node.
 * @size: any size.
 * @node: a node id with memory, or SEGPOOL_NUMA_NO_NODE.
 *
 * Return: the memory, or NULL with errno EINVAL (no such node) or ENOMEM.
 */
SEGPOOL_API SEGPOOL_MALLOC SEGPOOL_ALLOC_SIZE(1) SEGPOOL_WUR void *
segpool_malloc_node(size_t size, int node);

/* --- the kernel's kmalloc() semantics ------------------------------------- */

/**
 * segpool_kmalloc() - the kernel's kmalloc(): @size bytes under gfp rules.
 * @size: any size; 0 returns SEGPOOL_ZERO_SIZE_PTR.
 * @gfp:  0 or SEGPOOL_KMALLOC_GFP_VALID bits: SEGPOOL_ZERO (zeroed memory),
 *        SEGPOOL_THISNODE (no fallback from the calling CPU's node),
 *        SEGPOOL_NOFAIL, SEGPOOL_WAIT, SEGPOOL_NOWARN.
 *
 * As segpool_malloc() otherwise; power-of-two sizes are naturally aligned
 * at every size (above SEGPOOL_KMALLOC_MAX_CACHE_SIZE too).  Free with
 * segpool_kfree() or segpool_free().
 *
 * Context: any thread; sleeps only for SEGPOOL_NOFAIL | SEGPOOL_WAIT.
 * Return: the memory; NULL with errno EINVAL (unknown gfp bit) or ENOMEM
 * (never with SEGPOOL_NOFAIL, which aborts instead).
 */
SEGPOOL_API SEGPOOL_MALLOC SEGPOOL_ALLOC_SIZE(1) SEGPOOL_WUR void *
segpool_kmalloc(size_t size, unsigned int gfp);

/**
 * segpool_kmalloc_node() - segpool_kmalloc() from a given NUMA node.
 * @size: as for segpool_kmalloc().
 * @gfp:  as for segpool_kmalloc(); SEGPOOL_THISNODE fails rather than use
 *        another node than @node.
 * @node: a node id with memory, or SEGPOOL_NUMA_NO_NODE.
 *
 * Context: as segpool_kmalloc().
 * Return: as segpool_kmalloc(); EINVAL also for a node that does not exist.
 */
SEGPOOL_API SEGPOOL_MALLOC SEGPOOL_ALLOC_SIZE(1) SEGPOOL_WUR void *
segpool_kmalloc_node(size_t size, unsigned int gfp, int node);

/**
 * segpool_krealloc() - the kernel's krealloc(): resize under gfp rules.
 * @ptr:  NULL, SEGPOOL_ZERO_SIZE_PTR, or memory from segpool_kmalloc() and
 *        friends (not an object of a named cache).
 * @size: the new size; 0 frees @ptr and returns SEGPOOL_ZERO_SIZE_PTR.
 * @gfp:  as for segpool_kmalloc().  With SEGPOOL_ZERO the bytes past the
 *        old usable size read as zero, and when @ptr stays in place the
 *        bytes past @size are zeroed (so a later grow reads zeros): as in
 *        the kernel, every call on one allocation must pass SEGPOOL_ZERO
 *        for that to hold.
 *
 * The memory stays where it is when @size fits its usable size.
 *
 * Context: as segpool_kmalloc().
 * Return: the memory; NULL with errno set (as segpool_kmalloc()), @ptr
 * then untouched.
 */
SEGPOOL_API SEGPOOL_ALLOC_SIZE(2) SEGPOOL_WUR void *
segpool_krealloc(void *ptr, size_t size, unsigned int gfp);

/**
 * segpool_kfree() - the kernel's kfree().
 * @ptr: NULL, SEGPOOL_ZERO_SIZE_PTR (both no-ops), or anything
 *       segpool_free() takes.
 *
 * Context: any thread.
 */
SEGPOOL_API void segpool_kfree(const void *ptr);

/**
 * segpool_kfree_sensitive() - the kernel's kfree_sensitive(): clear, then free.
 * @ptr: NULL, SEGPOOL_ZERO_SIZE_PTR (both no-ops), or anything
 *       segpool_free() takes.
 *
 * Every byte segpool_usable_size() gives for @ptr is cleared, in a way the
 * compiler cannot drop, before the memory is freed: the slack past the size
 * asked for may hold secrets too (a krealloc() that shrank, say).  Out of
 * line, as the kernel's: the caller's compiler sees neither the clearing
 * nor the usable size, so a build with -D_FORTIFY_SOURCE does not take the
 * clearing of more than the allocation's declared size for an overflow.
 * Misuse is reported as for segpool_free().
 *
 * Context: any thread.
 */
SEGPOOL_API void segpool_kfree_sensitive(const void *ptr);

/**
 * segpool_alloc_failed() - the failure path of an allocation under gfp rules.
 * @cache: the cache the failed allocation was from, or NULL for the size
 *         classes (segpool_kmalloc()).
 * @size:  bytes asked for when @cache is NULL (ignored otherwise).
 * @gfp:   the request's gfp bits (SEGPOOL_KMALLOC_GFP_VALID).
 * @node:  the node asked for, or SEGPOOL_NUMA_NO_NODE.
 *
 * For inline wrappers (the kernel overlay's kmem_cache_alloc()) that call
 * it when their allocation returned NULL.  With SEGPOOL_NOFAIL: retries
 * the allocation up to 10 times with pauses of 1, 2, 4, ... ms (sleeping
 * with SEGPOOL_WAIT, yielding the CPU otherwise), then prints
 * "segpool: __GFP_NOFAIL allocation failed: ..." and aborts.  Without it:
 * prints a warning unless SEGPOOL_NOWARN (at most 10 in any 5 seconds,
 * then a count of those suppressed) and returns NULL.  errno is kept.
 *
 * Context: any thread.
 * Return: the memory the retry got (SEGPOOL_NOFAIL), else NULL with errno
 * as it was at the call (ENOMEM when it was 0).
 */
SEGPOOL_API void *segpool_alloc_failed(struct segpool_cache *cache,
				       size_t size, unsigned int gfp,
				       int node);

SEGPOOL_END_DECLS

#endif /* SEGPOOL_SLAB_H */
