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
			if (top_seg_remap(sg, (size_t)v.segment_size, msg, len)) {
				if (s1 != __atomic_load_n(&h->seq, __ATOMIC_ACQUIRE))
					continue;	/* a torn size */
				return TOP_EBADSEG;
			}
			continue;
		}
		if (v.updates == 0 || v.nr_caches > v.capacity ||
		    !top_fits(v.nodes_offset, nn, c->node_size, v.segment_size) ||
		    !top_fits(v.caches_offset, v.capacity, c->cache_size,
			      v.segment_size) ||
		    !top_fits(v.cache_nodes_offset, (uint64_t)v.capacity * nn,
			      c->cache_node_size, v.segment_size)) {
			if (s1 != __atomic_load_n(&h->seq, __ATOMIC_ACQUIRE))
				continue;
			snprintf(msg, len, "%s is damaged (snapshot %llu: %u of "
				 "%u records, %llu bytes)", sg->path,
				 (unsigned long long)v.updates, v.nr_caches,
				 v.capacity, (unsigned long long)v.segment_size);
			return TOP_EBADSEG;
		}
		/* arenas: none from a writer older than them (zero words) */
		na = c->arena_size && v.arenas_offset ? v.nr_arenas : 0;
		if (na && (na > v.arena_capacity ||
			   !top_fits(v.arenas_offset, v.arena_capacity,
				     c->arena_size, v.segment_size))) {
			if (s1 != __atomic_load_n(&h->seq, __ATOMIC_ACQUIRE))
				continue;
			snprintf(msg, len, "%s is damaged (snapshot %llu: %u of "
				 "%u arena records)", sg->path,
				 (unsigned long long)v.updates, na,
				 v.arena_capacity);
			return TOP_EBADSEG;
		}
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
		top_load(s->raw + nodes_len, base + v.caches_offset, caches_len);
		top_load(s->raw + nodes_len + caches_len,
			 base + v.cache_nodes_offset, cnodes_len);
		top_load(s->raw + nodes_len + caches_len + cnodes_len,
			 base + v.arenas_offset, arenas_len);
		/* after the acquire loads of the copy */
		s2 = __atomic_load_n(&h->seq, __ATOMIC_RELAXED);
		if (s1 != s2)
			continue;
		memcpy(&s->hdr, c, var);
		memcpy((char *)&s->hdr + var, (char *)&v + var, sizeof(v) - var);
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
	memset(s, 0, sizeof(*s));
}
