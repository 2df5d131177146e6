// SPDX-License-Identifier: MIT
/*
 * prof/table.c - the heap profile's records: one per sampled object in
 * use, each pointing at its stack; stacks are kept once each (by frames
 * and cache), with the weighted totals in use and allocated.
 *
 * Memory comes straight from os/ (never from segpool's own caches: a
 * record is made inside an allocation's slow path) in chunks that are
 * never given back; stacks are bounded (SP_PROF_MAX_STACKS), records grow
 * with the live samples (about one per SEGPOOL_HEAP_SAMPLE bytes in use).
 * One mutex guards it all, taken only for a sample, for the free of an
 * object whose address passes the filter, and for a dump: a leaf of the
 * lock order (core/init.c, level 11), nothing is taken under it.
 */
#include <pthread.h>
#include <string.h>

#include "os/os.h"
#include "prof/prof.h"

#include <segpool/slab.h>

#define SP_PROF_MAX_STACKS	(1U << 16)
#define SP_PROF_STACK_BUCKETS	(1U << 14)
#define SP_PROF_REC_BUCKETS	(1U << 14)
#define SP_PROF_CHUNK		(64UL << 10)
#define SP_PROF_NAME		(SEGPOOL_CACHE_NAME_MAX + 1)

struct sp_prof_stack {
	struct sp_prof_stack *next;	/* bucket chain */
	struct sp_prof_stack *all;	/* every stack, newest first */
	uint64_t hash;
	double inuse_objs, inuse_bytes, alloc_objs, alloc_bytes;
	int frames;
	char cache[SP_PROF_NAME];	/* "" for a large block */
	void *pcs[SP_PROF_DEPTH];
};

struct sp_prof_rec {
	struct sp_prof_rec *next;	/* bucket chain, or the free list */
	const void *obj;
	struct sp_prof_stack *stack;
	double objs, bytes;		/* its weight */
};

uint64_t sp_prof_filter[(1U << SP_PROF_FILTER_BITS) / 64] __sp_big;

static pthread_mutex_t sp_prof_lock = PTHREAD_MUTEX_INITIALIZER;
/* mapped when sampling starts (sp_prof_table_init()): nothing otherwise */
struct sp_prof_tables {
	uint16_t filter_count[1U << SP_PROF_FILTER_BITS];
	struct sp_prof_stack *stack_hash[SP_PROF_STACK_BUCKETS];
	struct sp_prof_rec *rec_hash[SP_PROF_REC_BUCKETS];
};
static struct sp_prof_tables *sp_prof_tab;
#define sp_prof_filter_count	(sp_prof_tab->filter_count)
#define sp_prof_stack_hash	(sp_prof_tab->stack_hash)
#define sp_prof_rec_hash	(sp_prof_tab->rec_hash)
static struct sp_prof_stack *sp_prof_stacks;
static struct sp_prof_rec *sp_prof_rec_free;
static char *sp_prof_chunk, *sp_prof_chunk_end;
static struct sp_prof_totals sp_prof_sum;

/*
 * The tables, mapped when sampling starts and faulted in at once with the
 * filter and the first chunk of records: a sample's buckets and filter
 * counts fall anywhere in them, so left to fault on demand the first few
 * hundred samples of a process each took a page fault or three (several
 * microseconds here, where a sample costs half of one), paid by whichever
 * thread allocated.  About 460 KiB (and the learned walk's 64, prof/unwind.c),
 * resident while sampling is on.
 */
int sp_prof_table_init(void)
{
	size_t size = SP_ALIGN(sizeof(*sp_prof_tab), SP_PAGE_SIZE);
	char *chunk;

	sp_prof_tab = sp_os_map_meta(size);
	if (!sp_prof_tab)
		return -1;
	sp_os_prefault(sp_prof_tab, size);
	sp_os_prefault(sp_prof_filter, sizeof(sp_prof_filter));
	chunk = sp_os_map_meta(SP_PROF_CHUNK);
	if (chunk) {
		sp_os_prefault(chunk, SP_PROF_CHUNK);
		pthread_mutex_lock(&sp_prof_lock);
		sp_prof_chunk = chunk;
		sp_prof_chunk_end = chunk + SP_PROF_CHUNK;
		pthread_mutex_unlock(&sp_prof_lock);
	}
	return 0;
}

/* @size bytes of record memory, or NULL (under the lock). */
static void *sp_prof_carve(size_t size)
{
	void *p;

	size = SP_ALIGN(size, 16);
	if ((size_t)(sp_prof_chunk_end - sp_prof_chunk) < size) {
		char *c = sp_os_map_meta(SP_PROF_CHUNK);

		if (!c)
			return NULL;
		sp_prof_chunk = c;
		sp_prof_chunk_end = c + SP_PROF_CHUNK;
	}
	p = sp_prof_chunk;
	sp_prof_chunk += size;
	return p;
}

/*
 * The bucket key of a stack and cache name (@len bytes): each word is
 * multiplied on its own and folded in by an xor and a rotation, so the
 * chain from word to word is two one-cycle steps (FNV-1a's multiply per
 * byte was a chain of some 60 cycles, a third of a record's time); the
 * name by 8-byte words.  Collisions cost only a compare.
 */
static uint64_t sp_prof_stack_key(void *const *pcs, int frames,
				  const char *name, size_t len)
{
	const uint64_t k = 0x9e3779b97f4a7c15ULL;
	uint64_t h = (uint64_t)frames * 0xff51afd7ed558ccdULL + len;

	for (int i = 0; i < frames; i++) {
		h ^= (uint64_t)(uintptr_t)pcs[i] * k;
		h = h << 27 | h >> 37;
	}
	for (size_t i = 0; i < len; i += 8) {
		uint64_t w = 0;

		memcpy(&w, name + i, len - i < 8 ? len - i : 8);
		h ^= w * 0xc4ceb9fe1a85ec53ULL;
		h = h << 27 | h >> 37;
	}
	h ^= h >> 33;
	h *= k;
	return h ^ (h >> 29);
}

static struct sp_prof_stack *sp_prof_stack_get(void *const *pcs, int frames,
					       const char *cache)
{
	const char *name = cache ? cache : "";
	size_t len = strnlen(name, SP_PROF_NAME - 1);
	uint64_t h = sp_prof_stack_key(pcs, frames, name, len);
	struct sp_prof_stack **b =
		&sp_prof_stack_hash[h % SP_PROF_STACK_BUCKETS];
	struct sp_prof_stack *st;

	/*
	 * A cache's name fits (segpool_cache_create() takes no longer one);
	 * compared and copied by its length, on every sample: no formatted
	 * copy (snprintf() was a fifth of a sample's instructions).
	 */
	for (st = *b; st; st = st->next)
		if (st->hash == h && st->frames == frames &&
		    !memcmp(st->pcs, pcs, (size_t)frames * sizeof(void *)) &&
		    !memcmp(st->cache, name, len) && !st->cache[len])
			return st;
	if (sp_prof_sum.stacks >= SP_PROF_MAX_STACKS)
		return NULL;
	st = sp_prof_carve(sizeof(*st));
	if (!st)
		return NULL;
	memset(st, 0, sizeof(*st));
	st->hash = h;
	st->frames = frames;
	memcpy(st->pcs, pcs, (size_t)frames * sizeof(void *));
	memcpy(st->cache, name, len);	/* NUL: the memset's */
	st->next = *b;
	*b = st;
	st->all = sp_prof_stacks;
	sp_prof_stacks = st;
	sp_prof_sum.stacks++;
	return st;
}

static struct sp_prof_rec **sp_prof_rec_bucket(const void *obj)
{
	uint64_t x = (uint64_t)(uintptr_t)obj * 0xff51afd7ed558ccdULL;

	/* SP_PROF_REC_BUCKETS */
	return &sp_prof_rec_hash[x >> (64 - 14)];
}

/* A sample that could not be kept where its free finds it: counted. */
void sp_prof_drop(void)
{
	if (sp_prof_busy)		/* a signal handler's, mid-record */
		return;
	sp_prof_busy = true;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	pthread_mutex_lock(&sp_prof_lock);
	sp_prof_sum.samples++;
	sp_prof_sum.dropped++;
	pthread_mutex_unlock(&sp_prof_lock);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	sp_prof_busy = false;
}

/*
 * Bit @h of the filter set or cleared (under the lock, which every writer
 * holds): a plain load and store, atomic only for the readers that take
 * no lock (sp_prof_maybe()).  A locked read-modify-write was a quarter of
 * a record's time.
 */
static void sp_prof_filter_put(unsigned int h, bool set)
{
	uint64_t *w = &sp_prof_filter[h / 64];
	uint64_t v = __atomic_load_n(w, __ATOMIC_RELAXED);

	v = set ? v | 1ULL << (h % 64) : v & ~(1ULL << (h % 64));
	__atomic_store_n(w, v, __ATOMIC_RELAXED);
}

/* Drop the record at *@pp (under the lock). */
static void sp_prof_rec_drop(struct sp_prof_rec **pp)
{
	struct sp_prof_rec *r = *pp;
	unsigned int h = sp_prof_hash(r->obj);

	*pp = r->next;
	r->stack->inuse_objs -= r->objs;
	r->stack->inuse_bytes -= r->bytes;
	sp_prof_sum.inuse_objs -= r->objs;
	sp_prof_sum.inuse_bytes -= r->bytes;
	sp_prof_sum.records--;
	if (--sp_prof_filter_count[h] == 0)
		sp_prof_filter_put(h, false);
	r->next = sp_prof_rec_free;
	sp_prof_rec_free = r;
}

int sp_prof_record(const void *obj, void *const *pcs, int frames,
		   const char *cache, size_t size, double wobjs)
{
	struct sp_prof_stack *st;
	struct sp_prof_rec *r, **b;
	double wbytes = wobjs * (double)size;
	unsigned int h = sp_prof_hash(obj);

	pthread_mutex_lock(&sp_prof_lock);
	sp_prof_sum.samples++;
	b = sp_prof_rec_bucket(obj);
	/* a record left at this address (a free the filter cannot have
	 * missed, so only after a block was resized in place): replaced */
	for (struct sp_prof_rec **pp = b; *pp; pp = &(*pp)->next)
		if ((*pp)->obj == obj) {
			sp_prof_rec_drop(pp);
			break;
		}
	st = sp_prof_stack_get(pcs, frames, cache);
	r = sp_prof_rec_free;
	if (r)
		sp_prof_rec_free = r->next;
	else if (st)
		r = sp_prof_carve(sizeof(*r));
	if (!st || !r) {
		if (r) {
			r->next = sp_prof_rec_free;
			sp_prof_rec_free = r;
		}
		sp_prof_sum.dropped++;
		pthread_mutex_unlock(&sp_prof_lock);
		return -1;
	}
	r->obj = obj;
	r->stack = st;
	r->objs = wobjs;
	r->bytes = wbytes;
	r->next = *b;
	*b = r;
	st->inuse_objs += wobjs;
	st->inuse_bytes += wbytes;
	st->alloc_objs += wobjs;
	st->alloc_bytes += wbytes;
	sp_prof_sum.inuse_objs += wobjs;
	sp_prof_sum.inuse_bytes += wbytes;
	sp_prof_sum.alloc_objs += wobjs;
	sp_prof_sum.alloc_bytes += wbytes;
	sp_prof_sum.records++;
	if (sp_prof_filter_count[h]++ == 0)
		sp_prof_filter_put(h, true);
	pthread_mutex_unlock(&sp_prof_lock);
	return 0;
}

void sp_prof_forget(const void *obj)
{
	if (!__atomic_load_n(&sp_prof_on, __ATOMIC_ACQUIRE))	/* the tables */
		return;
	/* a signal handler's free amid this thread's record: left as it is
	 * (its record outlives it, replaced when the address is sampled) */
	if (sp_prof_busy)
		return;
	sp_prof_busy = true;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	pthread_mutex_lock(&sp_prof_lock);
	for (struct sp_prof_rec **pp = sp_prof_rec_bucket(obj); *pp;
	     pp = &(*pp)->next)
		if ((*pp)->obj == obj) {
			sp_prof_rec_drop(pp);
			break;
		}
	pthread_mutex_unlock(&sp_prof_lock);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	sp_prof_busy = false;
}

void sp_prof_totals(struct sp_prof_totals *t)
{
	pthread_mutex_lock(&sp_prof_lock);
	*t = sp_prof_sum;
	pthread_mutex_unlock(&sp_prof_lock);
}

int sp_prof_walk(sp_prof_head_fn head, sp_prof_line_fn fn, void *arg,
		 struct sp_prof_totals *t)
{
	int err = 0;

	sp_prof_busy = true;	/* the walk's thread samples nothing */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	pthread_mutex_lock(&sp_prof_lock);
	*t = sp_prof_sum;
	if (head)
		err = head(arg, t);
	for (struct sp_prof_stack *st = sp_prof_stacks; st && !err;
	     st = st->all) {
		double v[4] = { st->inuse_objs, st->inuse_bytes,
				st->alloc_objs, st->alloc_bytes };

		err = fn(arg, st->cache, st->pcs, st->frames, v);
	}
	pthread_mutex_unlock(&sp_prof_lock);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	sp_prof_busy = false;
	return err;
}

void sp_prof_fork_lock(void)
{
	pthread_mutex_lock(&sp_prof_lock);
}

void sp_prof_fork_unlock(void)
{
	pthread_mutex_unlock(&sp_prof_lock);
}

void sp_prof_fork_child(void)
{
	pthread_mutex_init(&sp_prof_lock, NULL);
}
