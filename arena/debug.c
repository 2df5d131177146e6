// SPDX-License-Identifier: MIT
/*
 * arena/debug.c - red zones and poison of debug arenas.
 *
 * SEGPOOL_ARENA_RED_ZONE: every object gets a record and a left red zone
 * before it and a right red zone after it (arena/arena.h), written when it
 * is handed out and checked when it is freed, which for an arena is at
 * reset, rewind or destroy: the records are walked backwards from the
 * chunk's newest.  SEGPOOL_ARENA_POISON: free memory holds 0x6b from the
 * moment a chunk is taken or cut back until it is handed out again, and is
 * checked then, which catches writes through pointers kept across a reset.
 *
 * A problem is reported as a block on stderr, as the debug caches report
 * ("BUG <kind> in arena <name>: ..."), then the process aborts unless
 * SEGPOOL_DEBUG_RESPONSE=continue.
 */
#include <stdlib.h>
#include <string.h>

#include <segpool/debug.h>

#include "arena/arena.h"
#include "internal/report.h"
#include "slab/debug.h"

static void sp_bump_report(const struct segpool_arena *a, const char *kind,
			   const void *obj, size_t size, const char *what,
			   const unsigned char *bytes, size_t n)
{
	struct sp_rbuf b;

	sp_rbuf_init(&b, NULL);
	sp_rbuf_line(&b, "BUG %s in arena %s: object %p size %zu", kind,
		     a->name, obj, size);
	sp_rbuf_line(&b, "  %s", what);
	if (bytes)
		sp_rbuf_bytes(&b, "bytes:", bytes, n);
	sp_rbuf_flush(&b);
	if (__atomic_load_n(&sp_debug_response, __ATOMIC_RELAXED) !=
	    SEGPOOL_DEBUG_CONTINUE)
		abort();
}

/* The first byte of the @n at @p that is not @v, or NULL. */
static const unsigned char *sp_bump_first_not(const unsigned char *p,
					      unsigned char v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return p + i;
	return NULL;
}

void sp_bump_debug_place(struct segpool_arena *a, struct sp_bump_chunk *c,
			 char *obj, size_t size)
{
	size_t off = (size_t)(obj - (char *)c) - a->pre;
	struct sp_bump_rec *r = (struct sp_bump_rec *)((char *)c + off);

	sp_bump_open(c, off, a->pre);
	r->size = size;
	r->prev = c->last_rec;
	memset(r + 1, SP_BUMP_RED, SP_BUMP_RED_LEFT);
	sp_bump_close(c, off, a->pre);
	sp_bump_open(c, off + a->pre + size, a->post);
	memset(obj + size, SP_BUMP_RED, a->post);
	sp_bump_close(c, off + a->pre + size, a->post);
	c->last_rec = off;
}

void sp_bump_debug_check_poison(struct segpool_arena *a,
				struct sp_bump_chunk *c, size_t off, size_t n)
{
	const unsigned char *p = (const unsigned char *)c + off, *bad;

	sp_bump_open(c, off, n);
	bad = sp_bump_first_not(p, SP_BUMP_POISON, n);
	if (bad) {
		size_t show = SP_MIN((size_t)16, n - (size_t)(bad - p));

		sp_bump_report(a, "use-after-reset", bad, n,
			       "free arena memory was written (poison 0x6b "
			       "overwritten) after a reset or rewind",
			       bad, show);
	}
	sp_bump_close(c, off, n);
}

void sp_bump_debug_check(struct segpool_arena *a, struct sp_bump_chunk *c,
			 size_t from)
{
	size_t off = c->last_rec, top = SP_READ_ONCE(c->top);

	while (off >= from && off >= SP_BUMP_HDR) {
		struct sp_bump_rec *r = (struct sp_bump_rec *)((char *)c + off);
		unsigned char *obj, *left, *right;
		const unsigned char *bad;
		uint64_t size, prev;

		sp_bump_open(c, off, a->pre);
		size = r->size;
		prev = r->prev;
		obj = (unsigned char *)r + a->pre;
		left = (unsigned char *)(r + 1);
		if (size > top || off + a->pre + size + a->post > top ||
		    prev >= off) {
			sp_bump_report(a, "metadata", obj, 0,
				       "the record before this object is "
				       "damaged: the walk stops", NULL, 0);
			sp_bump_close(c, off, a->pre);
			break;
		}
		bad = sp_bump_first_not(left, SP_BUMP_RED, SP_BUMP_RED_LEFT);
		if (bad)
			sp_bump_report(a, "red-zone", obj, size,
				       "left red zone (0xbb) overwritten",
				       left, SP_BUMP_RED_LEFT);
		sp_bump_close(c, off, a->pre);
		right = obj + size;
		sp_bump_open(c, off + a->pre + size, a->post);
		bad = sp_bump_first_not(right, SP_BUMP_RED, a->post);
		if (bad)
			sp_bump_report(a, "red-zone", obj, size,
				       "right red zone (0xbb) overwritten",
				       right, a->post);
		sp_bump_close(c, off + a->pre + size, a->post);
		off = prev;
	}
	/* the records above @from are gone with their objects */
	c->last_rec = off >= SP_BUMP_HDR && off < from ? off : 0;
}
