// SPDX-License-Identifier: MIT
/*
 * tools/bench/json.c - the results as one JSON document.
 *
 * Schema "segpool-bench/1": machine, config, contenders (with skip
 * reasons, the library checked to serve malloc and, for segpool's, the
 * per-CPU mode checked), workloads, and one result per workload x threads
 * x contender holding the summaries (median, min, max over repetitions),
 * the KiB segpool's caches held in magazines and depots (segpool-cache
 * contenders), and every repetition's raw sample.  Numbers that do not
 * exist (a ratio with no glibc run) are null.
 */
#include <math.h>
#include <string.h>

#include "internal/json.h"
#include "tools/bench/bench.h"

static void bench_json_sink(void *arg, const char *s, size_t n)
{
	fwrite(s, 1, n, arg);
}

/* The library's one escaper (internal/json.h), over @f. */
static void bench_json_str(FILE *f, const char *s)
{
	sp_json_escape(bench_json_sink, f, s);
}

/* Counts stay exact (up to 2^53); other numbers get 6 significant digits. */
static void bench_json_num(FILE *f, double v)
{
	if (!isfinite(v))
		fputs("null", f);
	else if (v == floor(v) && fabs(v) < 0x1p53)
		fprintf(f, "%.0f", v);
	else
		fprintf(f, "%.6g", v);
}

/* "key": value pairs; @first says whether a comma goes before. */
static void bench_json_key(FILE *f, const char *key, bool *first)
{
	fprintf(f, "%s\"%s\": ", *first ? "" : ", ", key);
	*first = false;
}

static void bench_json_kstr(FILE *f, const char *key, const char *v,
			    bool *first)
{
	bench_json_key(f, key, first);
	bench_json_str(f, v);
}

static void bench_json_knum(FILE *f, const char *key, double v, bool *first)
{
	bench_json_key(f, key, first);
	bench_json_num(f, v);
}

static void bench_json_summary(FILE *f, const char *key,
			       const struct bench_summary *s, bool *first)
{
	bool in = true;

	bench_json_key(f, key, first);
	fputc('{', f);
	bench_json_knum(f, "median", s->median, &in);
	bench_json_knum(f, "min", s->min, &in);
	bench_json_knum(f, "max", s->max, &in);
	fputc('}', f);
}

static void bench_json_machine(FILE *f, const struct bench_run *run)
{
	const struct bench_machine *m = &run->machine;
	const struct bench_cfg *c = &run->cfg;
	bool first = true;

	fprintf(f, "  \"machine\": {");
	bench_json_kstr(f, "cpu", m->cpu, &first);
	bench_json_knum(f, "cpus_online", m->online, &first);
	bench_json_knum(f, "cpus_usable", m->usable, &first);
	bench_json_knum(f, "memory_mib", (double)m->mem_mb, &first);
	bench_json_knum(f, "numa_nodes", m->numa_nodes, &first);
	bench_json_knum(f, "tsc_ghz", m->tsc_ghz, &first);
	bench_json_kstr(f, "kernel", m->kernel, &first);
	bench_json_kstr(f, "glibc", m->glibc, &first);
	bench_json_kstr(f, "compiler", m->compiler, &first);
	bench_json_kstr(f, "segpool", m->segpool, &first);
	bench_json_kstr(f, "segpool_revision", m->revision, &first);
	bench_json_kstr(f, "date", m->date, &first);
	fprintf(f, "},\n  \"config\": {");
	first = true;
	bench_json_knum(f, "reps", run->reps, &first);
	bench_json_knum(f, "warmup", c->warmup, &first);
	bench_json_key(f, "pinned", &first);
	fputs(c->pin ? "true" : "false", f);
	bench_json_key(f, "smoke", &first);
	fputs(run->smoke ? "true" : "false", f);
	bench_json_knum(f, "seed", (double)c->seed, &first);
	bench_json_knum(f, "size", (double)c->size, &first);
	bench_json_knum(f, "size_min", (double)c->size_min, &first);
	bench_json_knum(f, "size_max", (double)c->size_max, &first);
	bench_json_knum(f, "pairs", c->pairs, &first);
	bench_json_knum(f, "fs_threads", bench_fs_threads(c), &first);
	bench_json_knum(f, "writes", c->writes, &first);
	bench_json_knum(f, "live", (double)c->live, &first);
	bench_json_key(f, "threads", &first);
	for (unsigned int i = 0; i < c->nr_thread_list; i++)
		fprintf(f, "%s%u", i ? ", " : "[", c->thread_list[i]);
	fprintf(f, "]},\n");
}

static void bench_json_contenders(FILE *f, const struct bench_run *run)
{
	bool any = false;

	fprintf(f, "  \"contenders\": [");
	for (unsigned int i = 0; i < run->nr_cs; i++) {
		const struct bench_contender_state *s = &run->cs[i];
		bool first = true;

		if (!s->selected)
			continue;
		fprintf(f, "%s\n    {", any ? "," : "");
		any = true;
		bench_json_kstr(f, "name", s->c->name, &first);
		bench_json_kstr(f, "title", s->c->title, &first);
		bench_json_kstr(f, "version", s->version, &first);
		bench_json_kstr(f, "package", s->c->package, &first);
		bench_json_kstr(f, "preload", s->path, &first);
		bench_json_kstr(f, "malloc_served_by", s->served, &first);
		bench_json_kstr(f, "status", s->skipped ? "skipped" :
				s->refused ? "refused" : "ok", &first);
		bench_json_kstr(f, "mapped", s->mapped, &first);
		if (s->c->percpu) {
			bench_json_kstr(f, "percpu_intended", s->c->percpu,
					&first);
			bench_json_kstr(f, "percpu_mode", s->mode, &first);
		}
		bench_json_kstr(f, "reason", s->reason, &first);
		fputc('}', f);
	}
	fprintf(f, "\n  ],\n  \"workloads\": [");
	any = false;
	for (unsigned int i = 0; i < bench_nr_workloads; i++) {
		const struct bench_workload *wl = &bench_workloads[i];
		char desc[200];
		bool first = true;

		if (!run->wl_selected[i])
			continue;
		bench_describe(wl, &run->cfg, desc, sizeof(desc));
		fprintf(f, "%s\n    {", any ? "," : "");
		any = true;
		bench_json_kstr(f, "name", wl->name, &first);
		bench_json_knum(f, "number", wl->number, &first);
		bench_json_kstr(f, "description", desc, &first);
		bench_json_kstr(f, "op", wl->op, &first);
		fputc('}', f);
	}
	fprintf(f, "\n  ],\n");
}

static void bench_json_sample(FILE *f, const struct bench_result *r)
{
	static const char *const kind[] = { "alloc", "free" };
	static const char *const pct[] = { "p50", "p99", "p999" };
	bool first = true;

	fputc('{', f);
	bench_json_knum(f, "ops", (double)r->ops, &first);
	bench_json_knum(f, "cpu_ns", r->cpu_ns, &first);
	bench_json_knum(f, "wall_ns", r->wall_ns, &first);
	bench_json_knum(f, "peak_rss_kb", (double)r->peak_rss_kb, &first);
	bench_json_key(f, "checksum", &first);
	fprintf(f, "\"%016llx\"", (unsigned long long)r->checksum);
	if (r->live) {
		bench_json_knum(f, "live", (double)r->live, &first);
		bench_json_knum(f, "rss_base_kb", (double)r->rss_base_kb,
				&first);
		bench_json_knum(f, "rss_live_kb", (double)r->rss_live_kb,
				&first);
		bench_json_knum(f, "rss_freed_kb", (double)r->rss_freed_kb,
				&first);
		bench_json_knum(f, "rss_trim_kb", (double)r->rss_trim_kb,
				&first);
		bench_json_knum(f, "bytes_per_object",
				(double)(r->rss_live_kb - r->rss_base_kb) *
				1024 / (double)r->live, &first);
		bench_json_kstr(f, "trim", r->trim, &first);
	}
	if (r->has_cached) {
		bool in = true;

		bench_json_key(f, "cached", &first);
		fputc('{', f);
		bench_json_knum(f, "cpu_objs", (double)r->cpu_objs, &in);
		bench_json_knum(f, "depot_objs", (double)r->depot_objs, &in);
		bench_json_knum(f, "objs", (double)(r->cpu_objs +
						   r->depot_objs), &in);
		bench_json_knum(f, "bytes", (double)r->cached_bytes, &in);
		bench_json_knum(f, "cpu_bytes", (double)r->cpu_bytes, &in);
		bench_json_knum(f, "mag_size", r->mag_size, &in);
		bench_json_knum(f, "depot_max", r->depot_max, &in);
		bench_json_knum(f, "caches", r->caches, &in);
		bench_json_knum(f, "alloc_fastpath", (double)r->fast_allocs,
				&in);
		bench_json_knum(f, "alloc_slowpath", (double)r->slow_allocs,
				&in);
		bench_json_knum(f, "free_fastpath", (double)r->fast_frees, &in);
		bench_json_knum(f, "free_slowpath", (double)r->slow_frees, &in);
		fputc('}', f);
	}
	for (int x = 0; x < BENCH_NR_X; x++)
		if (r->has_x & (1u << x))
			bench_json_knum(f, bench_x_names[x], r->x[x], &first);
	if (r->has_lat) {
		bench_json_key(f, "latency_ns", &first);
		for (int k = 0; k < BENCH_NR_LAT; k++) {
			bool in = true;

			fprintf(f, "%s\"%s\": {", k ? ", " : "{", kind[k]);
			for (int j = 0; j < BENCH_NR_PCT; j++)
				bench_json_knum(f, pct[j], r->lat[k][j], &in);
			fputc('}', f);
		}
		fputc('}', f);
		bench_json_knum(f, "empty_ns", r->empty_ns, &first);
		bench_json_knum(f, "tick_ns", r->tick_ns, &first);
		bench_json_knum(f, "samples", (double)r->samples, &first);
	}
	fputc('}', f);
}

static void bench_json_results(FILE *f, const struct bench_run *run)
{
	fprintf(f, "  \"results\": [");
	for (unsigned int i = 0; i < run->nr_cells; i++) {
		const struct bench_cell *c = &run->cells[i];
		bool first = true;

		fprintf(f, "%s\n    {", i ? "," : "");
		bench_json_kstr(f, "workload", c->job.wl->name, &first);
		bench_json_knum(f, "number", c->job.wl->number, &first);
		bench_json_kstr(f, "contender", c->job.c->name, &first);
		bench_json_knum(f, "threads", c->job.threads, &first);
		bench_json_knum(f, "runs", c->nr, &first);
		bench_json_knum(f, "failed", c->failed, &first);
		bench_json_summary(f, "cpu_ns_per_op", &c->cpu, &first);
		bench_json_summary(f, "wall_ns_per_op", &c->wall, &first);
		bench_json_summary(f, "peak_rss_kb", &c->rss, &first);
		if (c->has_cached)
			bench_json_summary(f, "cached_kib", &c->cached, &first);
		else
			bench_json_knum(f, "cached_kib", NAN, &first);
		bench_json_knum(f, "ratio_vs_glibc", c->ratio_glibc, &first);
		bench_json_knum(f, "ratio_vs_best_peer", c->ratio_peer, &first);
		bench_json_kstr(f, "best_peer", c->best_peer, &first);
		for (int x = 0; x < BENCH_NR_X; x++)
			if (c->has_x & (1u << x))
				bench_json_summary(f, bench_x_names[x], &c->x[x],
						   &first);
		if (c->counted) {
			bool in = true;

			bench_json_key(f, "syscalls", &first);
			fputc('{', f);
			for (int k = 0; k < BENCH_NR_SYS; k++)
				bench_json_knum(f, bench_sys_names[k],
						(double)c->sys[k], &in);
			fputc('}', f);
		}
		bench_json_key(f, "samples", &first);
		fputc('[', f);
		for (unsigned int k = 0; k < c->nr; k++) {
			fprintf(f, "%s\n      ", k ? "," : "");
			bench_json_sample(f, &c->samples[k]);
		}
		fprintf(f, "]}");
	}
	fprintf(f, "\n  ],\n");
}

void bench_json(FILE *f, const struct bench_run *run)
{
	fprintf(f, "{\n  \"schema\": \"%s\",\n", BENCH_SCHEMA);
	bench_json_machine(f, run);
	bench_json_contenders(f, run);
	bench_json_results(f, run);
	fprintf(f, "  \"elapsed_s\": %.1f,\n  \"errors\": %d\n}\n",
		run->elapsed_s, run->errors);
}
