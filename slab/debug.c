// SPDX-License-Identifier: MIT
/*
 * slab/debug.c - the debug path of a cache: red zones, poison, object
 * state, call sites, validation and leak lists (slub_debug's userspace
 * cousin; the slot layout is drawn in slab/debug.h).
 *
 * A cache with a debug flag has no per-CPU layer (core/ creates none), so
 * each allocation and each free comes down to slab/slab.c, which calls
 * sp_debug_on_alloc() and sp_debug_on_free() under the node lock.  The state
 * word of each object (allocated or free) is only changed there, so a double
 * free, even one racing another free of the same object, is seen by
 * exactly one of them as a free of a free object.
 *
 * What each flag checks:
 *   any debug flag  the state word: double free, freeing an object of
 *                   another cache or an interior pointer, gets a full report;
 *                   the leak list on destroy
 *   F               the free-list link read on each allocation, the slab's
 *                   count on each free
 *   Z               both red zones, on every allocation and free
 *   P               the poison of a free object, on its next allocation
 *   U               records the call site of each allocation and free
 *
 * A problem is reported as one block (internal/report.h, struct sp_rbuf),
 * under the node lock, and then the response decides: abort (default), or
 * continue: a bad free is ignored, a damaged red zone or poison restored.
 * Stack traces come from backtrace() (primed once at the first debug cache,
 * outside any lock, since its first call loads libgcc_s) and are printed with
 * dladdr().  They start at the program's caller: the library's own frames
 * on the way to the hook (the __sp_libframe functions: sp_cache_alloc_slow,
 * sp_alloc_objs, sp_slab_take, sp_node_take, ...) are left out, as KASAN
 * and glibc leave theirs.
 */
#include <errno.h>
#include <execinfo.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <segpool/debug.h>

#include "internal/report.h"
#include "os/os.h"
#include "slab/slab.h"

static uint64_t sp_debug_seq;		/* last sequence number (atomic) */
static pthread_once_t sp_debug_prime_once = PTHREAD_ONCE_INIT;

/* --- the slot ------------------------------------------------------------- */

static void sp_debug_prime(void)
{
	void *frame[2];

	backtrace(frame, 2);	/* loads the unwinder now, not under a lock */
}

size_t sp_debug_geometry(struct segpool_cache *c, size_t size, size_t *align,
			 size_t *fp_offset)
{
	struct sp_debug_layout *d = &c->dbg;
	size_t a = *align, off;

	pthread_once(&sp_debug_prime_once, sp_debug_prime);
	/*
	 * A size class keeps the natural alignment segpool_malloc() promises
	 * (up to 32 KiB: the slab, aligned to its size, is larger than the
	 * stride, which is a multiple of the alignment).
	 */
	if (c->flags & SP_CACHE_KMALLOC)
		a = SP_MAX(a, size & -size);
	memset(d, 0, sizeof(*d));
	if (c->flags & SEGPOOL_RED_ZONE) {
		d->red_left =
			(unsigned int)SP_ALIGN((size_t)SP_DEBUG_RED_LEFT, a);
		off = SP_ALIGN(size + SP_DEBUG_RED_RIGHT, (size_t)8);
	} else {
		off = SP_ALIGN(size, (size_t)8);
	}
	d->red_end = (unsigned int)off;
	*fp_offset = off;
	off += SP_FREEPTR_SIZE;
	d->state = (unsigned int)off;
	off += sizeof(uint64_t);
	if (c->flags & SEGPOOL_STORE_USER) {
		d->track = (unsigned int)off;
		off += 2 * sizeof(struct sp_debug_track);
	}
	d->meta_end = (unsigned int)off;
	/* the kernel's rule: objects with a ctor or RCU keep their bytes */
	d->poison = (c->flags & SEGPOOL_POISON) && !c->ctor &&
		    !(c->flags & SEGPOOL_TYPESAFE_BY_RCU);
	c->flags |= SP_CACHE_FREEPTR_OUT;
	*align = a;
	return SP_ALIGN(off + d->red_left, a);
}

static inline uint64_t sp_debug_state(const struct segpool_cache *c,
				      const void *obj)
{
	uint64_t v;

	memcpy(&v, (const char *)obj + c->dbg.state, sizeof(v));
	return v;
}

static inline void sp_debug_set_state(const struct segpool_cache *c, void *obj,
				      uint64_t v)
{
	memcpy((char *)obj + c->dbg.state, &v, sizeof(v));
}

/* Track 0 is the last allocation, track 1 the last free; NULL without U. */
static inline struct sp_debug_track *
sp_debug_track(const struct segpool_cache *c, const void *obj, int which)
{
	uintptr_t at = (uintptr_t)obj + c->dbg.track;

	if (!c->dbg.track)
		return NULL;
	return (struct sp_debug_track *)at + which;
}

static inline void *sp_debug_obj(const struct segpool_cache *c,
				 const struct sp_slab *s, unsigned int i)
{
	return s->base + (size_t)i * c->stride;
}

/* The byte @obj should hold at offset @off in a free, poisoned object. */
static inline unsigned char sp_debug_expect(const struct segpool_cache *c,
					    long off, bool free)
{
	if (off < 0 || off >= (long)c->object_size)
		return SP_DEBUG_RED;
	if (!free || !c->dbg.poison)
		return 0;
	return off == (long)c->object_size - 1 ? SP_DEBUG_POISON_END
					       : SP_DEBUG_POISON;
}

static void sp_debug_poison(const struct segpool_cache *c, void *obj)
{
	memset(obj, SP_DEBUG_POISON, c->object_size - 1);
	((unsigned char *)obj)[c->object_size - 1] = SP_DEBUG_POISON_END;
}

static void sp_debug_red_fill(const struct segpool_cache *c, void *obj)
{
	char *p = obj;

	memset(p - c->dbg.red_left, SP_DEBUG_RED, c->dbg.red_left);
	memset(p + c->object_size, SP_DEBUG_RED,
	       c->dbg.red_end - c->object_size);
	/* padding up to the next slot's left red zone */
	memset(p + c->dbg.meta_end, SP_DEBUG_RED,
	       c->stride - c->dbg.red_left - c->dbg.meta_end);
}

/*
 * The bounds of the __sp_libframe functions (internal/compiler.h): the
 * linker puts .text.sorted.* in name order, so these two come just before
 * and just after them.
 */
static __attribute__((section(".text.sorted.segpool_0"), noinline, used))
void sp_libframes_begin(void)
{
	__asm__ volatile("");
}

static __attribute__((section(".text.sorted.segpool_2"), noinline, used))
void sp_libframes_end(void)
{
	__asm__ volatile("");
}

/* Is @ret, a return address, in a function of the library's own paths? */
bool sp_debug_libframe(const void *ret)
{
	/* a call may end its function: the caller is the byte before */
	uintptr_t pc = (uintptr_t)ret - 1;
	uintptr_t lo = (uintptr_t)sp_libframes_begin;
	uintptr_t hi = (uintptr_t)sp_libframes_end;

	/* a linker that does not sort them: no bounds, skip by count */
	if (hi <= lo || hi - lo > (16UL << 20))
		return false;
	return pc >= lo && pc < hi;
}

__sp_noinline __sp_libframe void
sp_debug_capture(struct sp_debug_track *t)
{
	void *frames[SP_DEBUG_STACK_DEPTH + SP_DEBUG_SKIP_MAX];
	int n = backtrace(frames, (int)SP_ARRAY_SIZE(frames));
	int skip = 0;

	/*
	 * backtrace() itself (and a sanitizer's wrapper of it) first, then
	 * this function, the hook and the library's way there: the trace
	 * starts at the caller.  Without the section's bounds, the two frames
	 * of this function and the hook.
	 */
	while (skip < n && skip < 3 && !sp_debug_libframe(frames[skip]))
		skip++;
	if (skip == n || skip == 3)
		skip = 2;
	while (skip < n && skip < SP_DEBUG_SKIP_MAX &&
	       sp_debug_libframe(frames[skip]))
		skip++;
	n = n > skip ? n - skip : 0;
	if (n > SP_DEBUG_STACK_DEPTH)
		n = SP_DEBUG_STACK_DEPTH;
	memcpy(t->addrs, frames + skip, (size_t)n * sizeof(void *));
	t->nr = (uint32_t)n;
	t->tid = (uint32_t)sp_os_tid();
	t->seq = __atomic_add_fetch(&sp_debug_seq, 1, __ATOMIC_RELAXED);
}

void sp_debug_slab_init(struct segpool_cache *c, struct sp_slab *s)
{
	for (unsigned int i = 0; i < c->objs_per_slab; i++) {
		void *obj = sp_debug_obj(c, s, i);

		if (c->flags & SEGPOOL_RED_ZONE)
			sp_debug_red_fill(c, obj);
		if (c->dbg.poison)
			sp_debug_poison(c, obj);
		sp_debug_set_state(c, obj, SP_DEBUG_STATE_FREE);
		if (c->dbg.track)
			memset(sp_debug_track(c, obj, 0), 0,
			       2 * sizeof(struct sp_debug_track));
	}
}

/* --- reports -------------------------------------------------------------- */

/* struct sp_debug_bug - one problem, as the report prints it. */
struct sp_debug_bug {
	const char *kind;		/* "right-redzone", ... */
	const struct segpool_cache *c;	/* the cache named in the first line */
	const struct segpool_cache *owner; /* the object's cache (its layout) */
	const struct sp_slab *slab;	/* the object's slab, or NULL */
	const void *obj;
	long offset;			/* of the first bad byte from @obj */
	long last;			/* of the last bad byte */
	bool bytes;			/* show bytes @offset..@last */
	bool free;			/* the object is free
					 * (expected poison) */
	bool slab_only;			/* about the slab: no call sites */
	const char *what;		/* one line saying what was seen */
	const char *action;		/* what "continue" does about it */
	bool validate;			/* found by segpool_cache_validate() */
};

static void sp_debug_print_track(struct sp_rbuf *b, const char *verb,
				 const struct sp_debug_track *t)
{
	if (!t->seq) {
		sp_rbuf_line(b, "  %s: never", verb);
		return;
	}
	sp_rbuf_line(b, "  %s by thread %u, seq %llu:", verb, t->tid,
		     (unsigned long long)t->seq);
	sp_rbuf_frames(b, t->addrs, t->nr);
}

/* The object's call sites, for a report or a leak entry. */
static void sp_debug_print_sites(struct sp_rbuf *b,
				 const struct segpool_cache *owner,
				 const void *obj, bool with_free)
{
	const struct sp_debug_track *a, *f;

	if (!(owner->flags & SP_CACHE_DEBUG) || !owner->dbg.track) {
		sp_rbuf_line(b, "  call sites: not recorded (cache %s has no "
			     "SEGPOOL_STORE_USER, letter U)", owner->name);
		return;
	}
	a = sp_debug_track(owner, obj, 0);
	f = sp_debug_track(owner, obj, 1);
	sp_debug_print_track(b, "allocated", a);
	/* a free older than the allocation belongs to an earlier life */
	if (with_free)
		sp_debug_print_track(b, "freed", f);
	else if (f->seq > a->seq)
		sp_debug_print_track(b, "freed", f);
}

static void sp_debug_report(const struct sp_debug_bug *bug)
{
	const struct segpool_cache *o = bug->owner;
	struct sp_rbuf b;
	bool cont = bug->validate ||
		    __atomic_load_n(&sp_debug_response, __ATOMIC_RELAXED) ==
		    SEGPOOL_DEBUG_CONTINUE;

	sp_rbuf_init(&b, NULL);
	sp_rbuf_line(&b, "BUG %s in cache %s: object %p offset %ld",
		     bug->kind, bug->c->name, bug->obj, bug->offset);
	sp_rbuf_line(&b, "  %s", bug->what);
	if (bug->bytes) {
		unsigned char want[16];
		const unsigned char *p = (const unsigned char *)bug->obj +
					 bug->offset;
		size_t n = (size_t)SP_MIN(bug->last - bug->offset + 1, 16L);

		for (size_t i = 0; i < n; i++)
			want[i] = sp_debug_expect(o, bug->offset + (long)i,
						  bug->free);
		sp_rbuf_line(&b, "  bytes %ld..%ld of the object (size %u):",
			     bug->offset, bug->last, o->object_size);
		sp_rbuf_bytes(&b, "expected:", want, n);
		sp_rbuf_bytes(&b, "found:", p, n);
	}
	if (bug->slab)
		sp_rbuf_line(&b, "  slab %p of cache %s, node %u, %u of %u "
			     "objects in use",
			     (void *)(bug->slab->base - o->dbg.red_left),
			     o->name, bug->slab->node, bug->slab->inuse,
			     o->objs_per_slab);
	if (!bug->slab_only)
		sp_debug_print_sites(&b, o, bug->obj, bug->free);
	if (bug->validate)
		sp_rbuf_line(&b, "  found by segpool_cache_validate(): %s",
			     bug->action);
	else if (cont)
		sp_rbuf_line(&b, "  response: continue (%s)", bug->action);
	else
		sp_rbuf_line(&b, "  response: abort");
	sp_rbuf_flush(&b);
	if (!cont)
		abort();
}

/*
 * Check @n bytes at @obj + @from against what they should hold; report the
 * run from the first to the last bad byte as @kind and restore them.
 * Return: 1 when a problem was reported, else 0.
 */
static int sp_debug_check_bytes(struct segpool_cache *c, struct sp_slab *s,
				void *obj, long from, long n, bool free,
				const char *kind, const char *what,
				const char *action, bool validate)
{
	unsigned char *p = (unsigned char *)obj;
	long first = 0, last = 0;	/* offsets: negative on the left */
	bool bad = false;

	for (long i = from; i < from + n; i++) {
		if (p[i] != sp_debug_expect(c, i, free)) {
			if (!bad)
				first = i;
			bad = true;
			last = i;
		}
	}
	if (!bad)
		return 0;
	sp_debug_report(&(struct sp_debug_bug){
		.kind = kind, .c = c, .owner = c, .slab = s, .obj = obj,
		.offset = first, .last = last, .bytes = true, .free = free,
		.what = what,
		.action = action, .validate = validate });
	for (long i = first; i <= last; i++)
		p[i] = sp_debug_expect(c, i, free);
	return 1;
}

static int sp_debug_check_red(struct segpool_cache *c, struct sp_slab *s,
			      void *obj, bool free, bool validate)
{
	int bad;

	if (!(c->flags & SEGPOOL_RED_ZONE))
		return 0;
	bad = sp_debug_check_bytes(c, s, obj, -(long)c->dbg.red_left,
				   c->dbg.red_left, free, "left-redzone",
				   "red zone before the object overwritten "
				   "(buffer underflow)", "red zone restored",
				   validate);
	bad += sp_debug_check_bytes(c, s, obj, c->object_size,
				    (long)c->dbg.red_end - c->object_size,
				    free, "right-redzone",
				    "red zone after the object overwritten "
				    "(buffer overflow)", "red zone restored",
				    validate);
	return bad;
}

static int sp_debug_check_poison(struct segpool_cache *c, struct sp_slab *s,
				 void *obj, bool validate)
{
	if (!c->dbg.poison)
		return 0;
	return sp_debug_check_bytes(c, s, obj, 0, c->object_size, true,
				    "use-after-free",
				    "free object written (poison overwritten)",
				    "poison restored", validate);
}

static void sp_debug_bug_simple(struct segpool_cache *c, struct sp_slab *s,
				const void *obj, const char *kind,
				const char *what, const char *action,
				bool validate)
{
	sp_debug_report(&(struct sp_debug_bug){
		.kind = kind, .c = c, .owner = c, .slab = s, .obj = obj,
		.offset = 0, .last = -1, .what = what, .action = action,
		.validate = validate });
}

/* A problem of slab @s as a whole, found by validation. */
static void sp_debug_bug_slab(struct segpool_cache *c, struct sp_slab *s,
			      const char *kind, const char *what)
{
	sp_debug_report(&(struct sp_debug_bug){
		.kind = kind, .c = c, .owner = c, .slab = s, .obj = s->base,
		.offset = 0, .last = -1, .slab_only = true, .what = what,
		.action = "left as it is", .validate = true });
}

/* Is @p the address of an object of @s? */
static bool sp_debug_valid_obj(const struct segpool_cache *c,
			       const struct sp_slab *s, const void *p)
{
	return (const char *)p >= s->base &&
	       sp_obj_index(c, s, p) < c->objs_per_slab;
}

/* --- the hooks (node lock held) ------------------------------------------- */

__sp_libframe void sp_debug_on_alloc(struct segpool_cache *c, struct sp_slab *s,
				     void *obj)
{
	uint64_t st = sp_debug_state(c, obj);

	if (unlikely(st != SP_DEBUG_STATE_FREE))
		sp_debug_bug_simple(c, s, obj, "bad-state",
				    st == SP_DEBUG_STATE_ALLOC ?
				    "object on a free list is marked allocated "
				    "(handed out twice?)" :
				    "object state word overwritten",
				    "object handed out", false);
	if ((c->flags & SEGPOOL_CONSISTENCY_CHECKS) && s->freelist &&
	    unlikely(!sp_debug_valid_obj(c, s, s->freelist) ||
		     sp_debug_state(c, s->freelist) != SP_DEBUG_STATE_FREE)) {
		sp_debug_bug_simple(c, s, obj, "freelist-corrupt",
				    "free-list link of the object points to no "
				    "free object of its slab",
				    "rest of the free list dropped", false);
		s->freelist = NULL;
	}
	sp_debug_check_red(c, s, obj, true, false);
	sp_debug_check_poison(c, s, obj, false);
	if (c->dbg.track)
		sp_debug_capture(sp_debug_track(c, obj, 0));
	sp_debug_set_state(c, obj, SP_DEBUG_STATE_ALLOC);
}

void sp_debug_on_untake(struct segpool_cache *c, void *obj)
{
	sp_debug_set_state(c, obj, SP_DEBUG_STATE_FREE);
}

__sp_libframe bool sp_debug_on_free(struct segpool_cache *c, struct sp_slab *s,
				     void *obj)
{
	uint64_t st = sp_debug_state(c, obj);

	if (unlikely(st == SP_DEBUG_STATE_FREE)) {
		sp_debug_report(&(struct sp_debug_bug){
			.kind = "double-free", .c = c, .owner = c, .slab = s,
			.obj = obj, .offset = 0, .last = -1, .free = true,
			.what = "object freed again: it is free already",
			.action = "free ignored" });
		return false;
	}
	if (unlikely(st != SP_DEBUG_STATE_ALLOC))
		sp_debug_bug_simple(c, s, obj, "bad-state",
				    "object state word overwritten",
				    "object freed", false);
	if ((c->flags & SEGPOOL_CONSISTENCY_CHECKS) &&
	    unlikely(s->inuse == 0 || s->inuse > c->objs_per_slab)) {
		sp_debug_bug_simple(c, s, obj, "slab-corrupt",
				    "slab count of objects in use is wrong",
				    "free ignored", false);
		return false;
	}
	sp_debug_check_red(c, s, obj, false, false);
	if (c->dbg.track)
		sp_debug_capture(sp_debug_track(c, obj, 1));
	if (c->dbg.poison)
		sp_debug_poison(c, obj);
	sp_debug_set_state(c, obj, SP_DEBUG_STATE_FREE);
	return true;
}

bool sp_debug_bad_free(struct segpool_cache *c, void *obj)
{
	struct sp_slab *s = sp_obj_to_slab(obj);
	struct segpool_cache *o;
	struct sp_cache_node *n;
	unsigned int idx;
	const char *base;
	char what[160];
	bool cont;

	if (!s || !((c->flags | s->cache->flags) & SP_CACHE_DEBUG))
		return false;
	o = s->cache;
	/* the object of the owner cache that holds @obj */
	base = s->base - o->dbg.red_left;
	idx = (unsigned int)(((const char *)obj - base) / o->stride);
	if (idx >= o->objs_per_slab)
		idx = o->objs_per_slab - 1;
	base = (const char *)sp_debug_obj(o, s, idx);
	cont = __atomic_load_n(&sp_debug_response, __ATOMIC_RELAXED) ==
	       SEGPOOL_DEBUG_CONTINUE;
	if (o != c)
		snprintf(what, sizeof(what), "object belongs to cache %s "
			 "(object %p offset %ld)", o->name, (const void *)base,
			 (long)((const char *)obj - base));
	else
		snprintf(what, sizeof(what), "pointer is not the start of an "
			 "object (object %p offset %ld)", (const void *)base,
			 (long)((const char *)obj - base));
	/* the owner's lock keeps the call sites still while they print */
	n = &o->node[s->node];
	pthread_mutex_lock(&n->lock);
	sp_debug_report(&(struct sp_debug_bug){
		.kind = o != c ? "wrong-cache" : "interior-free", .c = c,
		.owner = o, .slab = s, .obj = base,
		.offset = (long)((const char *)obj - base), .last = -1,
		.what = what, .action = "free ignored" });
	pthread_mutex_unlock(&n->lock);
	return cont;
}

/* --- validation ----------------------------------------------------------- */

/*
 * Say in @what that the free list of @s went wrong after @count links at
 * @p.  The list's head is the descriptor's plain pointer; a link inside an
 * object (@prev's) is shown as the word stored there, never decoded: the
 * decoded value next to the stored word gives the cache's secret away.
 */
static void sp_debug_bad_link(const struct segpool_cache *c,
			      const struct sp_slab *s, void *prev, void *p,
			      unsigned int count, char *what, size_t len)
{
	char *at;
	uintptr_t raw;

	if (!prev) {
		snprintf(what, len, "free list of the slab starts at %p, not a "
			 "free object of the slab", p);
		return;
	}
	at = (char *)prev + c->fp_offset;
	sp_san_link_open(c, at);
	memcpy(&raw, at, sizeof(raw));
	sp_san_link_close(c, at);
	snprintf(what, len, "the link of free object %p (offset %u holds "
		 "%#018" PRIxPTR ") leads to no other free object of the slab "
		 "(after %u links)", prev, c->fp_offset, raw, count);
	(void)s;
}

static int sp_debug_validate_slab(struct segpool_cache *c, struct sp_slab *s)
{
	unsigned int count = 0, alloc = 0, limit = c->objs_per_slab;
	bool debug = c->flags & SP_CACHE_DEBUG;
	char what[160];
	int bad = 0;

	if (debug) {
		for (unsigned int i = 0; i < c->objs_per_slab; i++) {
			void *obj = sp_debug_obj(c, s, i);
			uint64_t st = sp_debug_state(c, obj);
			bool free = st == SP_DEBUG_STATE_FREE;

			if (st == SP_DEBUG_STATE_ALLOC) {
				alloc++;
			} else if (!free) {
				sp_debug_bug_simple(c, s, obj, "bad-state",
					"object state word overwritten",
					"left as it is", true);
				bad++;
			}
			bad += sp_debug_check_red(c, s, obj, free, true);
			if (free)
				bad += sp_debug_check_poison(c, s, obj, true);
		}
		if (alloc != s->inuse) {
			snprintf(what, sizeof(what), "slab counts %u objects "
				 "in use, their state words %u", s->inuse,
				 alloc);
			sp_debug_bug_slab(c, s, "slab-corrupt", what);
			bad++;
		}
	}
	/* a map cache: no list, the map's bits are the free objects */
	if (c->flags & SP_CACHE_FREEMAP) {
		const uint64_t *map = sp_slab_freemap(c, s);

		for (unsigned int w = 0; w < sp_freemap_words(c); w++) {
			if (s->freelist || s->fresh != c->objs_per_slab ||
			    (map[w] & ~sp_freemap_full(c, w))) {
				snprintf(what, sizeof(what), "slab's free map "
					 "word %u %#llx (list %p, fresh %u) "
					 "is not a map of %u objects", w,
					 (unsigned long long)map[w],
					 s->freelist, s->fresh,
					 c->objs_per_slab);
				sp_debug_bug_slab(c, s, "freelist-corrupt",
						  what);
				return bad + 1;
			}
			count += (unsigned int)__builtin_popcountll(map[w]);
		}
	}
	for (void *prev = NULL, *p = s->freelist; p;
	     prev = p, p = sp_get_freeptr(c, p)) {
		if (!sp_debug_valid_obj(c, s, p) || p == prev ||
		    sp_obj_index(c, s, p) >= s->fresh || count == limit ||
		    (debug && sp_debug_state(c, p) != SP_DEBUG_STATE_FREE)) {
			sp_debug_bad_link(c, s, prev, p, count, what,
					  sizeof(what));
			sp_debug_bug_slab(c, s, "freelist-corrupt", what);
			return bad + 1;
		}
		count++;
	}
	if (count + (c->objs_per_slab - s->fresh) !=
	    c->objs_per_slab - s->inuse) {
		snprintf(what, sizeof(what), "slab has %u objects free on its "
			 "list and %u never used, but %u in use of %u",
			 count, c->objs_per_slab - s->fresh, s->inuse,
			 c->objs_per_slab);
		sp_debug_bug_slab(c, s, "slab-corrupt", what);
		bad++;
	}
	return bad;
}

/*
 * Whether @s is where its fill level says (slab/slab.c: sp_slab_relist()):
 * the list @want it was found on, and the count that list calls for.
 */
static int sp_debug_validate_list(struct segpool_cache *c, struct sp_slab *s,
				  enum sp_slab_list want)
{
	bool ok;
	char what[160];

	switch (want) {
	case SP_SLAB_EMPTY:
		ok = s->inuse == 0;
		break;
	case SP_SLAB_FULL:
		ok = s->inuse == c->objs_per_slab;
		break;
	case SP_SLAB_SAMPLED:	/* with room: one kept empty too */
		ok = s->inuse < c->objs_per_slab;
		break;
	default:
		ok = s->inuse > 0 && s->inuse < c->objs_per_slab;
		break;
	}
	if (ok && s->list == want)
		return 0;
	snprintf(what, sizeof(what), "slab with %u of %u objects in use is "
		 "on list %u, marked %u", s->inuse, c->objs_per_slab,
		 (unsigned int)want, (unsigned int)s->list);
	sp_debug_bug_slab(c, s, "slab-corrupt", what);
	return 1;
}

struct sp_debug_walk {
	int bad;
	unsigned long seen;
};

static void sp_debug_validate_full(struct segpool_cache *c, struct sp_slab *s,
				   void *arg)
{
	struct sp_debug_walk *w = arg;

	w->bad += sp_debug_validate_slab(c, s);
	w->bad += sp_debug_validate_list(c, s, SP_SLAB_FULL);
	w->seen++;
}

/* The count of a node list against the slabs found on it. */
static int sp_debug_validate_count(struct segpool_cache *c, int idx,
				   const char *list, unsigned long seen,
				   unsigned long count)
{
	char what[160];

	if (seen == count)
		return 0;
	snprintf(what, sizeof(what), "node %d: %lu %s slabs found, %lu "
		 "counted", idx, seen, list, count);
	sp_debug_report(&(struct sp_debug_bug){
		.kind = "slab-corrupt", .c = c, .owner = c, .last = -1,
		.what = what, .action = "left as it is", .validate = true,
		.slab_only = true });
	return 1;
}

int sp_debug_validate(struct segpool_cache *c)
{
	int bad = 0;

	for (int i = 0; i < sp_space.nr_regions; i++) {
		struct sp_cache_node *n = &c->node[i];
		struct sp_debug_walk full = { 0, 0 };
		unsigned long partial = 0, empty = 0, sampled = 0;
		struct sp_slab *s;

		pthread_mutex_lock(&n->lock);
		sp_list_for_each_entry(s, &n->partial, lru) {
			bad += sp_debug_validate_slab(c, s);
			bad += sp_debug_validate_list(c, s, SP_SLAB_PARTIAL);
			partial++;
		}
		sp_list_for_each_entry(s, &n->sampled, lru) {
			bad += sp_debug_validate_slab(c, s);
			bad += sp_debug_validate_list(c, s, SP_SLAB_SAMPLED);
			sampled++;
		}
		sp_list_for_each_entry(s, &n->empty, lru) {
			bad += sp_debug_validate_slab(c, s);
			bad += sp_debug_validate_list(c, s, SP_SLAB_EMPTY);
			empty++;
		}
		/* full slabs are on no list outside debug caches */
		sp_slab_walk_full(c, i, sp_debug_validate_full, &full);
		bad += full.bad;
		bad += sp_debug_validate_count(c, i, "partial", partial,
					       n->nr_partial);
		bad += sp_debug_validate_count(c, i, "empty", empty,
					       n->nr_empty);
		bad += sp_debug_validate_count(c, i, "sampled", sampled,
					       n->nr_sampled);
		bad += sp_debug_validate_count(c, i, "full", full.seen,
					       n->nr_full);
		pthread_mutex_unlock(&n->lock);
	}
	return bad;
}

/* --- leaks ---------------------------------------------------------------- */

static void sp_debug_leak_entry(struct sp_rbuf *b, struct segpool_cache *c,
				const void *obj)
{
	sp_rbuf_line(b, "LEAK in cache %s: object %p size %u", c->name, obj,
		     c->object_size);
	if (c->flags & SP_CACHE_DEBUG)
		sp_debug_print_sites(b, c, obj, false);
	/* one write per entry keeps the stack buffer from filling up */
	sp_rbuf_flush(b);
}

/*
 * The objects of @s in use: by their state word in a debug cache; else
 * those handed out once (below fresh) and not on the free list, marked in
 * @map (one bit per object).
 */
static long sp_debug_leaks_slab(struct sp_rbuf *b, struct segpool_cache *c,
				struct sp_slab *s, unsigned long *map)
{
	const unsigned int bits = 8 * sizeof(unsigned long);
	long live = 0;

	if (c->flags & SP_CACHE_FREEMAP) {
		const uint64_t *free = sp_slab_freemap(c, s);

		memset(map, 0, SP_ALIGN(c->objs_per_slab, bits) / 8);
		for (unsigned int i = 0; i < c->objs_per_slab; i++)
			if ((free[i / 64] >> (i % 64)) & 1)
				map[i / bits] |= 1UL << (i % bits);
	} else if (!(c->flags & SP_CACHE_DEBUG)) {
		memset(map, 0, SP_ALIGN(c->objs_per_slab, bits) / 8);
		for (void *p = s->freelist; p; p = sp_get_freeptr(c, p)) {
			unsigned int i = sp_obj_index(c, s, p);

			if (i >= c->objs_per_slab ||
			    (map[i / bits] >> (i % bits)) & 1)
				break;	/* a bad list: validate says more */
			map[i / bits] |= 1UL << (i % bits);
		}
	}
	for (unsigned int i = 0; i < c->objs_per_slab; i++) {
		void *obj = sp_debug_obj(c, s, i);

		if (c->flags & SP_CACHE_DEBUG) {
			if (sp_debug_state(c, obj) != SP_DEBUG_STATE_ALLOC)
				continue;
		} else if (i >= s->fresh ||
			   ((map[i / bits] >> (i % bits)) & 1)) {
			continue;
		}
		sp_debug_leak_entry(b, c, obj);
		live++;
	}
	return live;
}

struct sp_debug_leak_walk {
	struct sp_rbuf *b;
	unsigned long *map;
	long live;
};

static void sp_debug_leaks_full(struct segpool_cache *c, struct sp_slab *s,
				void *arg)
{
	struct sp_debug_leak_walk *w = arg;

	w->live += sp_debug_leaks_slab(w->b, c, s, w->map);
}

/*
 * The text of one node's leaks, formatted under its lock into memory of
 * its own (mapped: no allocation from a cache while a node lock is held)
 * and written once the lock is dropped, so a slow reader of @file (a
 * pipe, a logging thread that allocates from this very cache) never holds
 * up the cache.  Memory that cannot grow cuts the text short, said so.
 */
struct sp_leak_text {
	char *p;
	size_t len, cap;
	bool cut;
};

static void sp_leak_text_sink(void *arg, const char *text, size_t len)
{
	struct sp_leak_text *t = arg;

	if (t->cut)
		return;
	if (t->len + len > t->cap) {
		size_t cap = t->cap ? t->cap : 16 * SP_PAGE_SIZE;
		char *p;

		while (cap < t->len + len)
			cap *= 2;
		p = t->p ? sp_os_remap(t->p, t->cap, cap, false) :
			   sp_os_map(cap, SP_PAGE_SIZE);
		if (!p) {
			t->cut = true;
			return;
		}
		t->p = p;
		t->cap = cap;
	}
	memcpy(t->p + t->len, text, len);
	t->len += len;
}

long sp_debug_leaks(struct segpool_cache *c, void *file)
{
	size_t map_bytes = SP_ALIGN((size_t)c->objs_per_slab / 8 + 8,
				    SP_PAGE_SIZE);
	struct sp_leak_text t = { 0 };
	unsigned long *map = NULL;
	struct sp_rbuf b;
	long live = 0;

	if (!(c->flags & SP_CACHE_DEBUG)) {
		map = sp_os_map(map_bytes, SP_PAGE_SIZE);
		if (!map) {
			errno = ENOMEM;
			return -ENOMEM;
		}
	}
	sp_rbuf_init_sink(&b, sp_leak_text_sink, &t);
	for (int i = 0; i < sp_space.nr_regions; i++) {
		struct sp_cache_node *n = &c->node[i];
		struct sp_debug_leak_walk w = { &b, map, 0 };
		struct sp_slab *s;

		pthread_mutex_lock(&n->lock);
		sp_list_for_each_entry(s, &n->partial, lru)
			live += sp_debug_leaks_slab(&b, c, s, map);
		sp_list_for_each_entry(s, &n->sampled, lru)
			live += sp_debug_leaks_slab(&b, c, s, map);
		sp_slab_walk_full(c, i, sp_debug_leaks_full, &w);
		live += w.live;
		sp_rbuf_flush(&b);
		pthread_mutex_unlock(&n->lock);
		/* the lock is dropped: now the slow part */
		sp_report_text(file, t.p, t.len);
		t.len = 0;
	}
	if (t.cut) {
		sp_rbuf_init(&b, file);
		sp_rbuf_line(&b, "leak list of cache %s cut short: no memory "
			     "to format it in", c->name);
		sp_rbuf_flush(&b);
	}
	if (t.p)
		sp_os_unmap(t.p, t.cap);
	if (map)
		sp_os_unmap(map, map_bytes);
	return live;
}
