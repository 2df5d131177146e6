// SPDX-License-Identifier: MIT
/*
 * stats/health.c - which modes the library runs in, and why.
 *
 * The per-CPU mode and its reason were settled once at start-up
 * (percpu/rseq.c), the topology too (numa/topology.c); only the regions'
 * accounting moves, and it is read under each region's lock (a leaf lock:
 * nothing else is held meanwhile).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "segpool_config.h"
#include "internal/init.h"
#include "failslab/failslab.h"
#include "numa/region.h"
#include "numa/topology.h"
#include "percpu/rseq.h"
#include "slab/slab.h"
#include "slab/debug.h"
#include "slab/harden.h"
#include "stats/snap.h"

_Static_assert(SEGPOOL_HEALTH_MAX_NODES >= SP_MAX_NODES,
	       "struct segpool_health describes every node segpool can use");

#if defined(CONFIG_SEGPOOL_ASAN)
#define SP_SANITIZER	"address"
#elif defined(CONFIG_SEGPOOL_TSAN)
#define SP_SANITIZER	"thread"
#else
#define SP_SANITIZER	"none"
#endif

static void sp_copy(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src);
}

/*
 * The debug and hardening options in force, space-separated: "debug=" and
 * SEGPOOL_DEBUG as read, "continue" when a debug report does not abort,
 * "hardened" (free-list links encoded, the default) or "plain", and
 * "failslab" while fault injection is on.
 */
static void sp_health_debug(char *dst, size_t size)
{
	const char *env = sp_debug_env_string();
	int n = 0;

	if (*env)
		n = snprintf(dst, size, "debug=%s ", env);
	if (n >= 0 && (size_t)n < size &&
	    __atomic_load_n(&sp_debug_response, __ATOMIC_RELAXED) ==
	    SEGPOOL_DEBUG_CONTINUE)
		n += snprintf(dst + n, size - (size_t)n, "continue ");
	if (n >= 0 && (size_t)n < size)
		n += snprintf(dst + n, size - (size_t)n, "%s",
			      sp_freelist_hardened ? "hardened" : "plain");
	if (n >= 0 && (size_t)n < size &&
	    __atomic_load_n(&sp_failslab_on, __ATOMIC_RELAXED))
		snprintf(dst + n, size - (size_t)n, " failslab");
}

static void sp_health_node_read(int i, struct segpool_health_node *hn)
{
	struct sp_region *r = &sp_space.region[i];

	hn->node = sp_topo.node_id[i];
	for (int cpu = 0; cpu < sp_topo.nr_cpus && cpu < SP_MAX_CPUS; cpu++)
		if (sp_topo.cpu_idx[cpu] == i)
			hn->cpus++;
	pthread_mutex_lock(&r->lock);
	hn->bound = r->bound;
	hn->commit_failures = r->commit_failures;
	hn->region_bytes = (uint64_t)r->nr_pages << SP_PAGE_SHIFT;
	hn->committed_bytes = (uint64_t)r->committed << SP_PAGE_SHIFT;
	hn->used_bytes = (uint64_t)r->pages_used << SP_PAGE_SHIFT;
	hn->dirty_bytes = (uint64_t)r->dirty_pages << SP_PAGE_SHIFT;
	hn->purged_bytes = r->purged_pages << SP_PAGE_SHIFT;
	pthread_mutex_unlock(&r->lock);
	hn->huge_bytes = sp_region_huge_bytes(i);
}

void (*sp_health_decay_fn)(struct sp_decay_stats *st);

void sp_stats_health_read(struct segpool_health *h)
{
	struct sp_decay_stats ds = { .decay_ms = -1 };
	void (*decay_read)(struct sp_decay_stats *) =
		__atomic_load_n(&sp_health_decay_fn, __ATOMIC_ACQUIRE);

	memset(h, 0, sizeof(*h));
	h->size = sizeof(*h);
	sp_copy(h->version, sizeof(h->version), CONFIG_SEGPOOL_VERSION);
	sp_copy(h->percpu_mode, sizeof(h->percpu_mode), sp_pcpu_mode_name());
	sp_copy(h->percpu_reason, sizeof(h->percpu_reason), sp_pcpu_reason);
	if (sp_pcpu_mode == SP_PCPU_RSEQ)
		h->rseq_registration = sp_rseq_own ? SEGPOOL_RSEQ_OWN :
						     SEGPOOL_RSEQ_GLIBC;
	h->slots_by_mm_cid = sp_pcpu_use_mm_cid;
	h->rseq_feature_size = sp_topo.rseq_feature_size;
	h->cpus_possible = (unsigned int)sp_topo.nr_cpus;
	/* every per-CPU layer has as many slots; none in off mode */
	h->cpu_slots = sp_pcpu_mode == SP_PCPU_OFF ? 0 : sp_pcpu_nr_slots();
	h->numa_available = sp_topo.numa_available;
	h->numa_bind = sp_topo.bind;
	h->nr_nodes = (unsigned int)sp_space.nr_regions;
	sp_health_debug(h->debug, sizeof(h->debug));
	sp_copy(h->sanitizer, sizeof(h->sanitizer), SP_SANITIZER);
	if (decay_read)
		decay_read(&ds);
	h->decay_on = ds.decay_ms >= 0;
	h->decay_ms = ds.decay_ms > 0 ? (uint64_t)ds.decay_ms : 0;
	h->decay_runs = ds.runs;
	h->decay_thread = ds.thread;
	h->decay_caches = ds.caches_released;
	h->memory_limit = ds.memory_limit;
	h->limit_hits = ds.limit_hits;
	h->limit_exceeded = ds.limit_exceeded;
	h->thp = ds.thp;
	for (int i = 0; i < sp_space.nr_regions; i++)
		sp_health_node_read(i, &h->node[i]);
}

/* --- the field lists ---------------------------------------------------- */

static const char *sp_rseq_registration_name(unsigned int reg)
{
	switch (reg) {
	case SEGPOOL_RSEQ_GLIBC: return "glibc";
	case SEGPOOL_RSEQ_OWN: return "own";
	default: return "none";
	}
}

#define SP_HEALTH_STRINGS(X)						\
	X(version,		h->version)				\
	X(percpu_mode,		h->percpu_mode)				\
	X(percpu_reason,	h->percpu_reason)			\
	X(rseq_registration,						\
	  sp_rseq_registration_name(h->rseq_registration))		\
	X(debug,		h->debug)				\
	X(sanitizer,		h->sanitizer)

#define SP_HEALTH_NUMBERS(X)						\
	X(slots_by_mm_cid,	SP_FIELD_BOOL,	h->slots_by_mm_cid)	\
	X(rseq_feature_size,	SP_FIELD_U64,	h->rseq_feature_size)	\
	X(cpus_possible,	SP_FIELD_U64,	h->cpus_possible)	\
	X(cpu_slots,		SP_FIELD_U64,	h->cpu_slots)		\
	X(numa_available,	SP_FIELD_BOOL,	h->numa_available)	\
	X(numa_bind,		SP_FIELD_BOOL,	h->numa_bind)		\
	X(nr_nodes,		SP_FIELD_U64,	h->nr_nodes)		\
	X(decay_on,		SP_FIELD_BOOL,	h->decay_on)		\
	X(decay_ms,		SP_FIELD_U64,	h->decay_ms)		\
	X(decay_thread,		SP_FIELD_BOOL,	h->decay_thread)	\
	X(decay_runs,		SP_FIELD_U64,	h->decay_runs)		\
	X(decay_caches,		SP_FIELD_U64,	h->decay_caches)	\
	X(memory_limit,		SP_FIELD_U64,	h->memory_limit)	\
	X(limit_hits,		SP_FIELD_U64,	h->limit_hits)		\
	X(limit_exceeded,	SP_FIELD_U64,	h->limit_exceeded)	\
	X(thp,			SP_FIELD_BOOL,	h->thp)

#define SP_HEALTH_NODE(X)						\
	X(cpus,			SP_FIELD_U64,	n->cpus)		\
	X(bound,		SP_FIELD_BOOL,	n->bound)		\
	X(commit_failures,	SP_FIELD_U64,	n->commit_failures)	\
	X(region_bytes,		SP_FIELD_U64,	n->region_bytes)	\
	X(committed_bytes,	SP_FIELD_U64,	n->committed_bytes)	\
	X(used_bytes,		SP_FIELD_U64,	n->used_bytes)		\
	X(dirty_bytes,		SP_FIELD_U64,	n->dirty_bytes)		\
	X(purged_bytes,		SP_FIELD_U64,	n->purged_bytes)	\
	X(huge_bytes,		SP_FIELD_U64,	n->huge_bytes)

#define SP_STR_GETTER(name, expr)					\
	static const char *sp_hs_##name(const struct segpool_health *h)	\
	{								\
		return (expr);						\
	}
SP_HEALTH_STRINGS(SP_STR_GETTER)
#undef SP_STR_GETTER

#define SP_NUM_GETTER(name, kind, expr)					\
	static uint64_t sp_hn_##name(const struct segpool_health *h)	\
	{								\
		return (uint64_t)(expr);				\
	}
SP_HEALTH_NUMBERS(SP_NUM_GETTER)
#undef SP_NUM_GETTER

#define SP_NODE_GETTER(name, kind, expr)				\
	static uint64_t sp_hnode_##name(const struct segpool_health_node *n) \
	{								\
		return (uint64_t)(expr);				\
	}
SP_HEALTH_NODE(SP_NODE_GETTER)
#undef SP_NODE_GETTER

const struct sp_health_field sp_health_fields[] = {
	/* the version and the modes first, the debug options last */
	{ "version", SP_FIELD_STR, NULL, sp_hs_version },
	{ "percpu_mode", SP_FIELD_STR, NULL, sp_hs_percpu_mode },
	{ "percpu_reason", SP_FIELD_STR, NULL, sp_hs_percpu_reason },
	{ "rseq_registration", SP_FIELD_STR, NULL, sp_hs_rseq_registration },
#define SP_NUM_ENTRY(name, kind, expr) { #name, kind, sp_hn_##name, NULL },
	SP_HEALTH_NUMBERS(SP_NUM_ENTRY)
#undef SP_NUM_ENTRY
	{ "debug", SP_FIELD_STR, NULL, sp_hs_debug },
	{ "sanitizer", SP_FIELD_STR, NULL, sp_hs_sanitizer },
};
const size_t sp_nr_health_fields = SP_ARRAY_SIZE(sp_health_fields);

const struct sp_health_node_field sp_health_node_fields[] = {
#define SP_NODE_ENTRY(name, kind, expr) { #name, kind, sp_hnode_##name },
	SP_HEALTH_NODE(SP_NODE_ENTRY)
#undef SP_NODE_ENTRY
};
const size_t sp_nr_health_node_fields = SP_ARRAY_SIZE(sp_health_node_fields);

/* --- text --------------------------------------------------------------- */

void sp_stats_health_text(struct sp_sbuf *b, const struct segpool_health *h)
{
	sp_sbuf_printf(b, "health\n");
	for (size_t i = 0; i < sp_nr_health_fields; i++) {
		const struct sp_health_field *f = &sp_health_fields[i];

		if (f->kind == SP_FIELD_STR)
			sp_sbuf_printf(b, "%s %s\n", f->name, f->str(h));
		else if (f->kind == SP_FIELD_BOOL)
			sp_sbuf_printf(b, "%s %s\n", f->name,
				       f->num(h) ? "yes" : "no");
		else
			sp_sbuf_printf(b, "%s %llu\n", f->name,
				       (unsigned long long)f->num(h));
	}
	sp_sbuf_printf(b, "node_ids");
	for (unsigned int i = 0; i < h->nr_nodes; i++)
		sp_sbuf_printf(b, "%c%d", i ? ',' : ' ', h->node[i].node);
	sp_sbuf_putc(b, '\n');
	for (size_t k = 0; k < sp_nr_health_node_fields; k++) {
		const struct sp_health_node_field *f =
			&sp_health_node_fields[k];
		uint64_t total = 0;

		for (unsigned int i = 0; i < h->nr_nodes; i++)
			total += f->get(&h->node[i]);
		sp_sbuf_printf(b, "%s %llu", f->name,
			       (unsigned long long)total);
		for (unsigned int i = 0; i < h->nr_nodes; i++)
			sp_sbuf_printf(b, " N%d=%llu", h->node[i].node,
				       (unsigned long long)f->get(&h->node[i]));
		sp_sbuf_putc(b, '\n');
	}
	sp_sbuf_putc(b, '\n');
}

/* --- the public calls --------------------------------------------------- */

SEGPOOL_API int segpool_health_get(struct segpool_health *h)
{
	if (!h || h->size < sizeof(*h)) {
		errno = EINVAL;
		return -EINVAL;
	}
	if (sp_init())
		return -ENOMEM;
	sp_stats_health_read(h);
	return 0;
}

void sp_stats_fmt_health(struct sp_sbuf *b)
{
	struct segpool_health h;

	sp_stats_health_read(&h);
	sp_stats_health_text(b, &h);
}

SEGPOOL_API int segpool_stats_health(FILE *out)
{
	struct sp_sbuf b = SP_SBUF_INIT;
	int ret;

	ret = sp_stats_check_args(out, 0);
	if (ret)
		return ret;
	sp_stats_fmt_health(&b);
	return sp_sbuf_finish(&b, out);
}
