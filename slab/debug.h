/* SPDX-License-Identifier: MIT */
/*
 * slab/debug.h - debug caches: red zones, poison, object state, call sites.
 *
 * A cache with any of the debug flags (SEGPOOL_DEBUG_FLAGS) gets a wider
 * object slot and no per-CPU layer, so every allocation and free reaches
 * the slab layer, which calls the hooks below under the node lock.  Caches
 * without debug flags never call them: the slab layer tests one flag word
 * per object it hands out or takes back, and the per-CPU fast path is not
 * touched at all.
 *
 * Slot of a debug cache, offsets from the object pointer (which is what the
 * application sees; a slab's base is its first object, red_left bytes past
 * the first byte of the slab):
 *
 *   -red_left        0            size      red_end   +8     +16     meta_end
 *   | left red zone | object ...  | right RZ | link   | state | tracks | pad |
 *
 *   left/right red zone  SEGPOOL_RED_ZONE only; bytes SP_DEBUG_RED
 *   link                 the free-list link, always outside the object
 *   state                SP_DEBUG_STATE_ALLOC or SP_DEBUG_STATE_FREE
 *   tracks               SEGPOOL_STORE_USER only: last alloc, last free
 *   pad                  up to the next object's left red zone (SP_DEBUG_RED)
 *
 * A free object with poison holds SP_DEBUG_POISON in every byte but its last,
 * which holds SP_DEBUG_POISON_END, from its free to its next allocation.
 */
#ifndef SP_SLAB_DEBUG_H
#define SP_SLAB_DEBUG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <segpool/slab.h>

#include "internal/compiler.h"

struct segpool_cache;
struct sp_slab;

/* The debug flags of a cache; any of them selects the debug path. */
#define SP_CACHE_DEBUG		SEGPOOL_DEBUG_FLAGS

#define SP_DEBUG_RED		0xbb	/* red zones and padding */
#define SP_DEBUG_POISON		0x6b	/* free object */
#define SP_DEBUG_POISON_END	0xa5	/* last byte of a free object */
#define SP_DEBUG_STATE_ALLOC	0xa110ca7eda110ca7ULL
#define SP_DEBUG_STATE_FREE	0xf4eef4eef4eef4eeULL
#define SP_DEBUG_RED_LEFT	16	/* smallest left red zone */
#define SP_DEBUG_RED_RIGHT	8	/* smallest right red zone */
#define SP_DEBUG_STACK_DEPTH	16	/* frames kept per call site */
#define SP_DEBUG_SKIP_MAX	14	/* the library's own, left out */

/* struct sp_debug_track - one call site: who, when, from where. */
struct sp_debug_track {
	uint64_t seq;			/* global sequence
					 * number; 0: none yet */
	uint32_t tid;			/* thread id (gettid) */
	uint32_t nr;			/* frames in @addrs */
	void *addrs[SP_DEBUG_STACK_DEPTH]; /* return addresses,
					    * innermost first */
};

_Static_assert(sizeof(struct sp_debug_track) % 8 == 0,
	       "tracks keep the metadata 8-byte aligned");

/* struct sp_debug_layout - where the debug metadata of an object lies. */
struct sp_debug_layout {
	unsigned int red_left;		/* left red zone before the object */
	unsigned int red_end;		/* end of the right red zone */
	unsigned int state;		/* offset of the state word */
	unsigned int track;		/* offset of the two tracks, 0: none */
	unsigned int meta_end;		/* end of the metadata */
	unsigned int poison;		/* free objects are poisoned */
};

/* --- slab/debug_env.c --- */
#define SP_DEBUG_ENV_MAX	64	/* named entries of SEGPOOL_DEBUG */

/* struct sp_debug_env - SEGPOOL_DEBUG, parsed. */
struct sp_debug_env {
	unsigned long global;		/* flags of every cache not named */
	unsigned int nr;		/* entries in @names */
	char why[48];			/* the first thing skipped, or "" */
	struct {
		unsigned long flags;
		unsigned int len;	/* of @name, without a trailing '*' */
		bool prefix;		/* "name*": every name starting so */
		char name[SEGPOOL_CACHE_NAME_MAX + 1];
	} names[SP_DEBUG_ENV_MAX];
};

/*
 * sp_debug_env_parse() - parse a SEGPOOL_DEBUG value into @env:
 * "<flags>[,<cache>...][;<flags>,<cache>...]...".  Unknown letters,
 * names no cache can have and surplus names are skipped, silently: @env->why
 * says what the first one was (the caller reports it).
 * Return: 0, or -EINVAL when something was skipped.
 */
SP_INTERNAL int sp_debug_env_parse(struct sp_debug_env *env, const char *str);
/* sp_debug_env_flags() - the debug flags @env gives cache @name. */
SP_INTERNAL unsigned long sp_debug_env_flags(const struct sp_debug_env *env,
					     const char *name);
/*
 * sp_debug_cache_flags() - @flags of a cache being created as @name, plus
 * what SEGPOOL_DEBUG gives it (the variable is read on the first call;
 * internal caches get nothing).
 */
SP_INTERNAL unsigned long sp_debug_cache_flags(const char *name,
					       unsigned long flags);
/* SEGPOOL_DEBUG as read at start-up (cut short), "" when unset. */
SP_INTERNAL const char *sp_debug_env_string(void);
/*
 * sp_debug_capture() - record the calling thread's stack into @t, the
 * library's own frames left out (the guard pool's call sites too).
 */
SP_INTERNAL __sp_noinline __sp_libframe void
sp_debug_capture(struct sp_debug_track *t);

/* The response to a bug: SEGPOOL_DEBUG_ABORT or SEGPOOL_DEBUG_CONTINUE. */
extern SP_INTERNAL int sp_debug_response;

/* --- slab/debug.c --- */
/*
 * sp_debug_geometry() - the slot of a debug cache: fills @c->dbg and
 * returns the stride; may raise *@align (a size class keeps the natural
 * alignment of its size); *@fp_offset receives the link's offset.
 */
SP_INTERNAL size_t sp_debug_geometry(struct segpool_cache *c, size_t size,
				     size_t *align, size_t *fp_offset);
/* sp_debug_slab_init() - red zones, poison and state of a new slab. */
SP_INTERNAL void sp_debug_slab_init(struct segpool_cache *c, struct sp_slab *s);
/* sp_debug_on_alloc() - checks of @obj just taken from @s (node lock held). */
SP_INTERNAL void sp_debug_on_alloc(struct segpool_cache *c, struct sp_slab *s,
				   void *obj);
/* sp_debug_on_untake() - @obj goes back unused (bulk rollback). */
SP_INTERNAL void sp_debug_on_untake(struct segpool_cache *c, void *obj);
/*
 * sp_debug_on_free() - checks of @obj being freed to @s (node lock held).
 * Return: true to go on with the free, false to ignore it (a double free
 * reported, response continue).
 */
SP_INTERNAL bool sp_debug_on_free(struct segpool_cache *c, struct sp_slab *s,
				  void *obj);
/*
 * sp_debug_bad_free() - @obj, not an object of @c at an object boundary,
 * lies in a slab: when @c or the slab's cache has debug flags, report it
 * as a debug bug (wrong-cache, interior-free) with the object's call sites.
 * Return: true when reported and the response is to continue (the free is
 * to be ignored); false when not a debug case (the caller reports).
 */
SP_INTERNAL bool sp_debug_bad_free(struct segpool_cache *c, void *obj);
/* sp_debug_validate() - segpool_cache_validate(); the problem count. */
SP_INTERNAL int sp_debug_validate(struct segpool_cache *c);
/*
 * sp_debug_leaks() - list the objects of @c in use to @file (a FILE *, or
 * NULL for stderr); the per-CPU layer must be drained.
 * Return: their count, or -ENOMEM.
 */
SP_INTERNAL long sp_debug_leaks(struct segpool_cache *c, void *file);

/*
 * sp_debug_libframe() - whether @ret, a return address, lies in one of the
 * library's own __sp_libframe functions (internal/compiler.h); false
 * when the linker did not keep them together.  The call sites of a debug
 * cache and of the heap profile (prof/) start past such frames.
 */
SP_INTERNAL bool sp_debug_libframe(const void *ret);

#endif /* SP_SLAB_DEBUG_H */
