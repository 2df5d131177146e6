// SPDX-License-Identifier: MIT
/*
 * arena/bump.c - the bump's slow path, reset, marks and rewind of an arena.
 *
 * The fast path (sp_bump_alloc(), inline in arena/arena.h) of a plain
 * arena: load @cur, load its top, round up to the
 * alignment, compare with its end, store the new top.  No lock, no atomic
 * read-modify-write, one unlikely exit (no chunk yet, or a full one) to
 * sp_bump_alloc_slow().  A SEGPOOL_ARENA_THREADSAFE arena does the same
 * with a compare-and-swap of the top.  The debug flags send every
 * allocation to the slow path, which holds the arena's lock.
 *
 * In use, an arena's memory is the sum of its used chunks' fill levels,
 * which only grow between two resets or rewinds: its peak is therefore
 * exact when taken just before each of them (and at every read of the
 * figures), with nothing counted on the fast path.
 *
 * Marks name a chunk by serial number, not by address, so a chunk that
 * went back and came again (kept and reused, or a new block at the same
 * address) never matches a stale mark.  A mark also records the next
 * serial: the chunks taken after it are those at or above that number,
 * wherever they sit on the list (a chunk for one large allocation goes
 * behind @cur, so that the room left in @cur is not wasted).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "arena/arena.h"
#include "internal/report.h"

void sp_bump_init(struct segpool_arena *a, const char *name, int node, int idx,
		  unsigned long flags, void *buf, size_t size)
{
	memset(a, 0, sizeof(*a));
	a->flags = flags;
	a->node = node;
	a->idx = idx;
	a->min_align = SP_ASAN ? 8 : 1;
	if (flags & SEGPOOL_ARENA_RED_ZONE) {
		a->pre = sizeof(struct sp_bump_rec) + SP_BUMP_RED_LEFT;
		a->post = SP_BUMP_RED_RIGHT;
	} else if (SP_ASAN) {
		/* a gap the tool sees as poisoned: overruns are caught */
		a->post = SP_BUMP_ASAN_GAP;
	}
	pthread_mutex_init(&a->lock, NULL);
	a->keep = SEGPOOL_ARENA_KEEP_DEFAULT;
	a->next_size = SEGPOOL_ARENA_CHUNK_MIN;
	a->next_seq = 1;
	snprintf(a->name, sizeof(a->name), "%s", name);
	sp_list_init(&a->list);
	if (buf) {
		struct sp_bump_chunk *c = sp_bump_chunk_init_buf(a, buf, size);

		c->seq = a->next_seq++;
		a->buf = c;
		a->used = c;
		a->nr_used = 1;
		a->cur = c;
	}
	a->magic = SP_BUMP_MAGIC;
}

/*
 * Room for @size at @align: a new chunk (or a kept one) on the used list.
 * One for a single allocation larger than half the largest block goes
 * behind @cur while @cur still has room worth keeping.  @a->lock held.
 * Return: 0, or -ENOMEM (errno set, the failure counted).
 */
static int sp_bump_grow(struct segpool_arena *a, size_t size, size_t align)
{
	/* own chunks are page aligned, and so is every alignment's unit */
	size_t need = SP_ALIGN((size_t)SP_BUMP_HDR + a->pre, align) + size +
		      a->post;
	struct sp_bump_chunk *c = a->cur, *n = sp_bump_chunk_new(a, need);

	if (!n) {
		a->alloc_failures++;
		return -ENOMEM;
	}
	n->seq = a->next_seq++;
	a->nr_used++;
	if (c && need > SEGPOOL_ARENA_CHUNK_MAX / 2 &&
	    c->end - SP_READ_ONCE(c->top) >= c->end / 4) {
		n->prev = c->prev;
		c->prev = n;
		return 1;
	}
	n->prev = a->used;
	a->used = n;
	/* release: the header is written before another thread bumps it */
	__atomic_store_n(&a->cur, n, __ATOMIC_RELEASE);
	return 0;
}

/* The allocation with @a->lock held: debug arenas, and full chunks. */
static void *sp_bump_alloc_locked(struct segpool_arena *a, size_t size,
				  size_t align)
{
	bool atomic = a->flags & SEGPOOL_ARENA_THREADSAFE;
	struct sp_bump_chunk *c = a->cur;
	size_t old = 0;
	char *obj;
	int ret;

	for (;;) {
		obj = c ? sp_bump_try(a, c, size, align, atomic, &old) : NULL;
		if (obj)
			break;
		ret = sp_bump_grow(a, size, align);
		if (ret < 0)
			return NULL;
		if (ret > 0) {
			/*
			 * a chunk of its own behind @cur, bumped under the lock
			 */
			c = c->prev;
			obj = sp_bump_try(a, c, size, align, false, &old);
			SP_BUG_ON(!obj);
			break;
		}
		c = a->cur;
	}
	/* everything from the old top to the new one was free */
	if (a->flags & SEGPOOL_ARENA_POISON)
		sp_bump_debug_check_poison(a, c, old,
					   (size_t)(obj - (char *)c) + size +
					   a->post - old);
	if (a->flags & SEGPOOL_ARENA_RED_ZONE)
		sp_bump_debug_place(a, c, obj, size);
	return obj;
}

__sp_noinline void *sp_bump_alloc_slow(struct segpool_arena *a,
					      size_t size, size_t align)
{
	void *obj;

	pthread_mutex_lock(&a->lock);
	obj = sp_bump_alloc_locked(a, size, align);
	pthread_mutex_unlock(&a->lock);
	if (unlikely(!obj)) {
		errno = ENOMEM;
		return NULL;
	}
	return sp_bump_give(obj, size);
}

size_t sp_bump_in_use_locked(struct segpool_arena *a)
{
	size_t n = 0;

	for (struct sp_bump_chunk *c = a->used; c; c = c->prev)
		n += SP_READ_ONCE(c->top) - SP_BUMP_HDR;
	return n;
}

static void sp_bump_note_peak(struct segpool_arena *a)
{
	size_t n = sp_bump_in_use_locked(a);

	if (n > a->peak)
		SP_WRITE_ONCE(a->peak, n);
}

/* Every kept chunk goes back: none of them was needed this round. */
static size_t sp_bump_drop_kept(struct segpool_arena *a)
{
	size_t bytes = a->kept_bytes;
	struct sp_bump_chunk *c, *prev;

	for (c = a->kept; c; c = prev) {
		prev = c->prev;
		sp_bump_chunk_release(a, c);
	}
	a->kept = NULL;
	a->nr_kept = 0;
	a->kept_bytes = 0;
	return bytes;
}

void sp_bump_reset(struct segpool_arena *a)
{
	struct sp_bump_chunk *c, *prev;

	pthread_mutex_lock(&a->lock);
	sp_bump_note_peak(a);
	sp_bump_drop_kept(a);
	/* newest first: the largest chunks are the ones kept */
	for (c = a->used; c; c = prev) {
		prev = c->prev;
		if (a->flags & SEGPOOL_ARENA_RED_ZONE)
			sp_bump_debug_check(a, c, SP_BUMP_HDR);
		if (c == a->buf)
			sp_bump_chunk_clear(a, c, SP_BUMP_HDR);
		else
			sp_bump_chunk_recycle(a, c);
	}
	if (a->buf) {
		a->buf->prev = NULL;
		a->buf->seq = a->next_seq++;
	}
	a->used = a->buf;
	a->nr_used = a->buf ? 1 : 0;
	__atomic_store_n(&a->cur, a->buf, __ATOMIC_RELEASE);
	SP_WRITE_ONCE(a->resets, a->resets + 1);
	pthread_mutex_unlock(&a->lock);
}

size_t sp_bump_trim(struct segpool_arena *a)
{
	size_t bytes;

	pthread_mutex_lock(&a->lock);
	bytes = sp_bump_drop_kept(a);
	pthread_mutex_unlock(&a->lock);
	return bytes;
}

void sp_bump_mark(struct segpool_arena *a, struct segpool_arena_pos *m)
{
	struct sp_bump_chunk *c;

	pthread_mutex_lock(&a->lock);
	c = a->cur;
	m->arena = a;
	m->chunk = c ? c->seq : 0;
	m->top = c ? SP_READ_ONCE(c->top) : 0;
	m->next = a->next_seq;
	m->epoch = a->resets;
	pthread_mutex_unlock(&a->lock);
}

int sp_bump_rewind(struct segpool_arena *a, const struct segpool_arena_pos *m)
{
	struct sp_bump_chunk **pp, *c, *target = NULL;

	pthread_mutex_lock(&a->lock);
	if (m->arena != a || m->epoch != a->resets || m->next > a->next_seq ||
	    m->chunk >= m->next)
		goto bad;
	if (m->chunk) {
		for (c = a->used; c; c = c->prev)
			if (c->seq == m->chunk)
				break;
		if (!c || m->top < SP_BUMP_HDR || m->top > SP_READ_ONCE(c->top))
			goto bad;
		target = c;
	}
	sp_bump_note_peak(a);
	/* the chunks taken after the mark go back (or are kept) */
	for (pp = &a->used; (c = *pp) != NULL;) {
		if (c->seq < m->next) {
			pp = &c->prev;
			continue;
		}
		*pp = c->prev;
		a->nr_used--;
		if (a->flags & SEGPOOL_ARENA_RED_ZONE)
			sp_bump_debug_check(a, c, SP_BUMP_HDR);
		sp_bump_chunk_recycle(a, c);
	}
	if (target) {
		if (a->flags & SEGPOOL_ARENA_RED_ZONE)
			sp_bump_debug_check(a, target, (size_t)m->top);
		sp_bump_chunk_clear(a, target, (size_t)m->top);
	}
	__atomic_store_n(&a->cur, target, __ATOMIC_RELEASE);
	SP_WRITE_ONCE(a->rewinds, a->rewinds + 1);
	pthread_mutex_unlock(&a->lock);
	return 0;
bad:
	pthread_mutex_unlock(&a->lock);
	return -EINVAL;
}

void sp_bump_fini(struct segpool_arena *a)
{
	struct sp_bump_chunk *c, *prev;

	pthread_mutex_lock(&a->lock);
	a->magic = 0;
	sp_bump_drop_kept(a);
	for (c = a->used; c; c = prev) {
		prev = c->prev;
		if (a->flags & SEGPOOL_ARENA_RED_ZONE)
			sp_bump_debug_check(a, c, SP_BUMP_HDR);
		sp_bump_chunk_release(a, c);
	}
	a->used = NULL;
	a->cur = NULL;
	a->buf = NULL;
	pthread_mutex_unlock(&a->lock);
	pthread_mutex_destroy(&a->lock);
}

void sp_bump_info(struct segpool_arena *a, struct segpool_arena_info *info)
{
	pthread_mutex_lock(&a->lock);
	sp_bump_note_peak(a);
	info->flags = a->flags;
	info->node = a->node;
	info->in_use = sp_bump_in_use_locked(a);
	info->peak = a->peak;
	info->held = a->held;
	info->chunks = a->nr_used;
	info->kept_chunks = a->nr_kept;
	info->kept_bytes = a->kept_bytes;
	info->chunks_created = a->created;
	info->chunks_released = a->released;
	info->resets = a->resets;
	info->rewinds = a->rewinds;
	info->alloc_failures = a->alloc_failures;
	info->limit = a->limit;
	info->keep = a->keep;
	pthread_mutex_unlock(&a->lock);
}
