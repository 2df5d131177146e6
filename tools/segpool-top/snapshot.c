// SPDX-License-Identifier: MIT
/*
 * tools/segpool-top/snapshot.c - read one consistent snapshot of a segment.
 *
 * The reader side of the seqlock of include/segpool/export.h: load the
 * sequence count (acquire), copy with 8-byte acquire loads (the count's
 * second load cannot pass them), load the count again; an odd or changed
 * count means a write overlapped the copy, so the copy is thrown away and
 * made again.  Every offset and
 * count is checked against the mapping before it is used: a torn header
 * can hold anything, and must not make us read outside the segment.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/segpool-top/top.h"

#define TOP_READ_TRIES		4000	/* about 4 s of 1 ms naps */

/* Copy @len bytes (a multiple of 8) from the segment with acquire loads. */
static void top_load(void *dst, const void *src, size_t len)
{
	const uint64_t *s = src;
	char *d = dst;

	for (size_t i = 0; i < len / 8; i++) {
		uint64_t w = __atomic_load_n(&s[i], __ATOMIC_ACQUIRE);

		memcpy(d + i * 8, &w, sizeof(w));
	}
}

static void top_nap(void)
{
	struct timespec ts = { 0, 1000000L };

	nanosleep(&ts, NULL);
}

/* Does [@off, @off + @n * @size) lie within @limit, 8-aligned? */
static bool top_fits(uint64_t off, uint64_t n, uint64_t size, uint64_t limit)
{
	if (off % 8 || off > limit || size == 0)
		return false;
	return n <= (limit - off) / size;
}

static int top_snap_reserve(struct top_snap *s, size_t nr_caches,
			    size_t nr_nodes, size_t nr_arenas, size_t raw)
{
	if (nr_arenas > s->cap_arenas) {
		void *a = realloc(s->arenas, nr_arenas * sizeof(*s->arenas));

		if (!a)
			return -1;
		s->arenas = a;
		s->cap_arenas = nr_arenas;
	}
	if (raw > s->raw_cap) {
		char *p = realloc(s->raw, raw);

		if (!p)
			return -1;
		s->raw = p;
		s->raw_cap = raw;
	}
	if (nr_caches > s->cap_caches || !s->nodes) {
		size_t cap = nr_caches > 64 ? nr_caches : 64;
		void *c = realloc(s->caches, cap * sizeof(*s->caches));
		void *cn;

		if (!c)
			return -1;
		s->caches = c;
		cn = realloc(s->cnodes, cap * nr_nodes * sizeof(*s->cnodes));
		if (!cn)
			return -1;
		s->cnodes = cn;
		s->cap_caches = cap;
	}
	if (!s->nodes) {
		s->nodes = calloc(nr_nodes, sizeof(*s->nodes));
		if (!s->nodes)
			return -1;
	}
	return 0;
}

/* Spread the raw copy into the arrays, one record at a time (its stride may
 * be longer than the struct we know: later fields are skipped). */
static void top_snap_unpack(struct top_snap *s, size_t nn, size_t nc,
			    size_t na)
{
	const struct segpool_export_header *h = &s->hdr;
	const char *p = s->raw;

	for (size_t i = 0; i < nn; i++, p += h->node_size)
		memcpy(&s->nodes[i], p, sizeof(s->nodes[i]));
	for (size_t i = 0; i < nc; i++, p += h->cache_size) {
		memcpy(&s->caches[i], p, sizeof(s->caches[i]));
		s->caches[i].name[SEGPOOL_EXPORT_NAME_LEN - 1] = '\0';
	}
	for (size_t i = 0; i < nc * nn; i++, p += h->cache_node_size)
		memcpy(&s->cnodes[i], p, sizeof(s->cnodes[i]));
	/* an older writer's arena record may be shorter: the rest reads 0 */
	for (size_t i = 0; i < na; i++, p += h->arena_size) {
		memset(&s->arenas[i], 0, sizeof(s->arenas[i]));
		memcpy(&s->arenas[i], p, h->arena_size < sizeof(s->arenas[i]) ?
		       h->arena_size : sizeof(s->arenas[i]));
		s->arenas[i].name[SEGPOOL_EXPORT_NAME_LEN - 1] = '\0';
	}
}

/*
 * The key table and its values into @s->kraw (a writer of before it has
 * none: 0 keys).  Return: 0, or -1 when they do not fit the segment (a
 * torn header: the caller reads again).
 */
static int top_keys_read(struct top_snap *s,
			 const struct segpool_export_header *v,
			 const char *base, size_t nn)
{
	/* keys of one kind: far more than any */
	const uint64_t max = 4096;
	uint64_t nk = 0, keys_len, vals_len, nvals_len, h_len, nvals_off, h_off;
	char *p;

	memset(s->nkeys, 0, sizeof(s->nkeys));
	s->keys = NULL;
	if (!v->keys_offset)
		return 0;
	if (v->nr_cache_keys > max || v->nr_node_keys > max ||
	    v->nr_health_keys > max || v->nr_health_node_keys > max)
		return -1;
	nk = (uint64_t)v->nr_cache_keys + v->nr_node_keys + v->nr_health_keys +
	     v->nr_health_node_keys;
	keys_len = nk * sizeof(struct segpool_export_key);
	vals_len = (uint64_t)v->nr_caches * v->nr_cache_keys * 8;
	nvals_len = (uint64_t)v->nr_caches * nn * v->nr_node_keys * 8;
	nvals_off =
		v->values_offset + (uint64_t)v->capacity * v->nr_cache_keys * 8;
	h_off = nvals_off + (uint64_t)v->capacity * nn * v->nr_node_keys * 8;
	h_len = ((uint64_t)v->nr_health_keys + nn * v->nr_health_node_keys) *
			8 +
		SEGPOOL_EXPORT_STRINGS;
	if (!top_fits(v->keys_offset, nk, sizeof(struct segpool_export_key),
		      v->segment_size) ||
	    !top_fits(h_off, 1, h_len, v->segment_size) ||
	    v->values_offset % 8 || v->values_offset > h_off)
		return -1;
	if (keys_len + vals_len + nvals_len + h_len > s->kraw_cap) {
		p = realloc(s->kraw, keys_len + vals_len + nvals_len + h_len);
		if (!p)
			return 0;		/* without the keys, then */
		s->kraw = p;
		s->kraw_cap = keys_len + vals_len + nvals_len + h_len;
	}
	p = s->kraw;
	top_load(p, base + v->keys_offset, keys_len);
	top_load(p + keys_len, base + v->values_offset, vals_len);
	top_load(p + keys_len + vals_len, base + nvals_off, nvals_len);
	top_load(p + keys_len + vals_len + nvals_len, base + h_off, h_len);
	s->keys = (const struct segpool_export_key *)p;
	s->vals = (const uint64_t *)(p + keys_len);
	s->nvals = (const uint64_t *)(p + keys_len + vals_len);
	s->hvals = (const uint64_t *)(p + keys_len + vals_len + nvals_len);
	s->strings = (const char *)(s->hvals + v->nr_health_keys +
				    nn * v->nr_health_node_keys);
	s->strings_base = h_off + h_len - SEGPOOL_EXPORT_STRINGS;
	s->nkeys[0] = v->nr_cache_keys;
	s->nkeys[1] = v->nr_node_keys;
	s->nkeys[2] = v->nr_health_keys;
	s->nkeys[3] = v->nr_health_node_keys;
	/* what the process named is not trusted to end */
	((char *)s->strings)[SEGPOOL_EXPORT_STRINGS - 1] = '\0';
	for (uint64_t i = 0; i < nk; i++)
		((struct segpool_export_key *)p)[i].name[30] = '\0';
	return 0;
}

const char *top_snap_string(const struct top_snap *s, uint64_t v)
{
	if (!s->strings || v < s->strings_base ||
	    v - s->strings_base >= SEGPOOL_EXPORT_STRINGS)
		return "";
	return s->strings + (v - s->strings_base);
}

enum top_status top_snap_read(struct top_seg *sg, struct top_snap *s,
			      char *msg, size_t len)
{
	const struct segpool_export_header *c = &sg->head;
	size_t var = offsetof(struct segpool_export_header, updates);
	size_t nn = c->nr_nodes;

	for (int tries = 0; tries < TOP_READ_TRIES; tries++) {
		const struct segpool_export_header *h = sg->map;
		const char *base = sg->map;
		struct segpool_export_header v;
		size_t nodes_len, caches_len, cnodes_len, arenas_len;
		enum top_status st;
		uint64_t s1, s2;
		uint32_t na;

		/* a file cut shorter than the mapping: SIGBUS on its pages */
		st = top_seg_check_size(sg, msg, len);
		if (st != TOP_OK)
			return st;
		s1 = __atomic_load_n(&h->seq, __ATOMIC_ACQUIRE);
		if (s1 & 1) {
			top_nap();
			continue;
		}
		top_load((char *)&v + var, base + var, sizeof(v) - var);
		if (v.segment_size > sg->map_size) {
			/* it grew: map it again, then read again */
			if (top_seg_remap(sg, (size_t)v.segment_size, msg,
					  len)) {
				if (s1 !=
				    __atomic_load_n(&h->seq, __ATOMIC_ACQUIRE))
					continue;	/* a torn size */
				return TOP_EBADSEG;
			}
			continue;
		}
		if (v.updates == 0 || v.nr_caches > v.capacity ||
		    !top_fits(v.nodes_offset, nn, c->node_size,
			      v.segment_size) ||
		    !top_fits(v.caches_offset, v.capacity, c->cache_size,
			      v.segment_size) ||
		    !top_fits(v.cache_nodes_offset, (uint64_t)v.capacity * nn,
			      c->cache_node_size, v.segment_size)) {
			if (s1 != __atomic_load_n(&h->seq, __ATOMIC_ACQUIRE))
				continue;
			snprintf(msg, len,
				 "%s is damaged (snapshot %llu: %u of "
				 "%u records, %llu bytes)",
				 sg->path, (unsigned long long)v.updates,
				 v.nr_caches, v.capacity,
				 (unsigned long long)v.segment_size);
			return TOP_EBADSEG;
		}
		/* arenas: none from a writer older than them (zero words) */
		na = c->arena_size && v.arenas_offset ? v.nr_arenas : 0;
		if (na && (na > v.arena_capacity ||
			   !top_fits(v.arenas_offset, v.arena_capacity,
				     c->arena_size, v.segment_size))) {
			if (s1 != __atomic_load_n(&h->seq, __ATOMIC_ACQUIRE))
				continue;
			snprintf(msg, len,
				 "%s is damaged (snapshot %llu: %u of "
				 "%u arena records)",
				 sg->path, (unsigned long long)v.updates, na,
				 v.arena_capacity);
			return TOP_EBADSEG;
		}
		/* a torn header: read again; a damaged table: go without */
		if (top_keys_read(s, &v, base, nn) &&
		    s1 != __atomic_load_n(&h->seq, __ATOMIC_ACQUIRE))
			continue;
		nodes_len = nn * c->node_size;
		caches_len = (size_t)v.nr_caches * c->cache_size;
		cnodes_len = (size_t)v.nr_caches * nn * c->cache_node_size;
		arenas_len = (size_t)na * c->arena_size;
		if (top_snap_reserve(s, v.nr_caches, nn, na,
				     nodes_len + caches_len + cnodes_len +
				     arenas_len)) {
			snprintf(msg, len, "out of memory");
			return TOP_ESYS;
		}
		top_load(s->raw, base + v.nodes_offset, nodes_len);
		top_load(s->raw + nodes_len, base + v.caches_offset,
			 caches_len);
		top_load(s->raw + nodes_len + caches_len,
			 base + v.cache_nodes_offset, cnodes_len);
		top_load(s->raw + nodes_len + caches_len + cnodes_len,
			 base + v.arenas_offset, arenas_len);
		/* after the acquire loads of the copy */
		s2 = __atomic_load_n(&h->seq, __ATOMIC_RELAXED);
		if (s1 != s2)
			continue;
		memcpy(&s->hdr, c, var);
		memcpy((char *)&s->hdr + var, (char *)&v + var,
		       sizeof(v) - var);
		s->hdr.seq = s1;
		s->hdr.nr_arenas = na;
		top_snap_unpack(s, nn, v.nr_caches, na);
		return TOP_OK;
	}
	snprintf(msg, len, "process %d did not finish a snapshot in time "
		 "(is it stopped?)", sg->pid);
	return TOP_EBUSY;
}

const struct segpool_export_cache_node *
top_snap_cache_nodes(const struct top_snap *s, size_t i)
{
	return &s->cnodes[i * s->hdr.nr_nodes];
}

const struct segpool_export_cache *top_snap_find(const struct top_snap *s,
						 const char *name)
{
	for (size_t i = 0; i < s->hdr.nr_caches; i++)
		if (!strcmp(s->caches[i].name, name))
			return &s->caches[i];
	return NULL;
}

void top_snap_free(struct top_snap *s)
{
	free(s->nodes);
	free(s->caches);
	free(s->cnodes);
	free(s->arenas);
	free(s->raw);
	free(s->kraw);
	memset(s, 0, sizeof(*s));
}
