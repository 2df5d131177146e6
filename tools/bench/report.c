// SPDX-License-Identifier: MIT
/*
 * tools/bench/report.c - the results as markdown, for the terminal, for
 * results.md and for Documentation/reference/bench-results.md.
 *
 * The machine and the contenders as checked, a summary of CPU time per op
 * of every speed workload by contender, then a table per workload with the
 * columns its entry in workloads.c names, and the plots.  Every line fits
 * BENCH_TEXT_COLS: prose is wrapped, and a wider table comes in parts,
 * each beginning with its key column(s), so it reads on a terminal too.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>
#include <gnu/libc-version.h>
#include <sys/utsname.h>

#include <segpool/segpool.h>

#include "tools/bench/bench.h"

struct bench_table *bench_table_new(const char *const *head,
				    unsigned int ncol)
{
	struct bench_table *t = calloc(1, sizeof(*t));

	if (!t)
		bench_die("out of memory");
	t->ncol = ncol < BENCH_TCOLS ? ncol : BENCH_TCOLS;
	t->nkey = 1;
	memcpy(t->head, head, t->ncol * sizeof(*head));
	return t;
}

unsigned int bench_table_row(struct bench_table *t)
{
	if (t->nrow == BENCH_TROWS)
		bench_die("report: table too long");
	return t->nrow++;
}

void bench_table_set(struct bench_table *t, unsigned int row, unsigned int col,
		     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->cell[row][col], BENCH_TCELL, fmt, ap);
	va_end(ap);
}

bool bench_table_section(FILE *f, struct bench_table *t, const char *title)
{
	if (!t->nrow) {
		free(t);
		return false;
	}
	fprintf(f, "### %s\n\n", title);
	return true;
}

static const char bench_dashes[] = "--------------------------------"
	"----------------------------------";

/* The first column left-aligned, the others (numbers) right-aligned. */
void bench_table_print(FILE *f, struct bench_table *t)
{
	unsigned int cols[BENCH_TCOLS], n, c = t->nkey;
	size_t w[BENCH_TCOLS], used;

	for (unsigned int k = 0; k < t->ncol; k++) {
		w[k] = strlen(t->head[k]);
		for (unsigned int r = 0; r < t->nrow; r++)
			if (strlen(t->cell[r][k]) > w[k])
				w[k] = strlen(t->cell[r][k]);
	}
	do {
		for (n = 0, used = 1; n < t->nkey; n++)
			used += w[cols[n] = n] + 3;
		while (c < t->ncol && (n == t->nkey ||
				       used + w[c] + 3 <= BENCH_TEXT_COLS)) {
			used += w[c] + 3;
			cols[n++] = c++;
		}
		for (int r = -2; r < (int)t->nrow; r++) {
			for (unsigned int i = 0; i < n; i++) {
				unsigned int k = cols[i];
				const char *s = r == -2 ? t->head[k] :
						r >= 0 ? t->cell[r][k] : "";
				int wi = (int)w[k];

				if (r == -1)
					fprintf(f, "|%s%.*s%s", k ? "-" : ":",
						wi, bench_dashes,
						k ? ":" : "-");
				else
					fprintf(f, "| %*s ", cols[i] ? wi : -wi,
						s[0] ? s : "-");
			}
			fputs("|\n", f);
		}
		fputc('\n', f);
	} while (c < t->ncol);
	free(t);
}

void bench_para(FILE *f, const char *fmt, ...)
{
	char buf[2048], *p = buf, *cut, *end;
	size_t ind;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ind = strncmp(buf, "- ", 2) ? 0 : 2;
	while (strlen(p) > 100 - (p == buf ? 0 : ind)) {
		cut = p + 100 - (p == buf ? 0 : ind);
		while (cut > p && *cut != ' ')
			cut--;
		if (cut == p)
			break;
		for (end = cut; end > p && end[-1] == ' ';)
			end--;
		fprintf(f, "%.*s\n%*s", (int)(end - p), p, (int)ind, "");
		p = cut + 1;
	}
	fprintf(f, "%s\n%s", p, ind ? "" : "\n");
}

#define BENCH_X_COL(name, head, div) { head, div },
static const struct {
	const char *head;
	double div;
} bench_x_cols[BENCH_NR_X] = { BENCH_FIGURES(BENCH_X_COL) };

static void bench_report_workload(FILE *f, const struct bench_run *run,
				  const struct bench_workload *wl)
{
	static const char *const unit[] = { "ns", "us", "ms" };
	const char *u = unit[wl->unit >= 1e6 ? 2 : wl->unit >= 1e3];
	const char *head[BENCH_TCOLS] = { "contender", "threads" };
	char desc[256], hd[3][24];
	unsigned int first = wl->on == BENCH_ON_ONE, nc = 2 - first;
	const struct bench_cell *any = NULL;
	struct bench_table *t;

	for (const signed char *k = wl->cols; *k >= 0; k++)
		if (*k < BENCH_NR_X)
			head[nc++] = bench_x_cols[*k].head;
		else if (*k == BENCH_COL_SYS)
			for (int s = 0; s < 3; s++)
				head[nc++] = (const char *[]){ "mmap", "munmap",
							       "mremap" }[s];
		else
			head[nc++] = (const char *[]){ hd[0], "min-max", hd[1],
				"Mops/CPU-s", "x glibc", "x best peer",
				"peak RSS MiB", "", "trim by",
				"cached objs" }[*k - BENCH_COL_CPU];
	snprintf(hd[0], sizeof(hd[0]), "CPU %s/op", u);
	snprintf(hd[1], sizeof(hd[1]), "wall %s/op", u);
	t = bench_table_new(head, nc);
	t->nkey = 2 - first;	/* each part: contender, threads */
	for (unsigned int i = 0; i < run->nr_cells; i++) {
		const struct bench_cell *c = &run->cells[i];
		unsigned int r, col = 2 - first;

		if (c->wl != wl)
			continue;
		r = bench_table_row(t);
		bench_table_set(t, r, 0, "%s", c->c->name);
		if (!first)
			bench_table_set(t, r, 1, "%u%s", c->threads,
					c->threads > run->usable ? "*" : "");
		if (!c->nr) {
			bench_table_set(t, r, col, "failed");
			continue;
		}
		any = c;
		for (const signed char *k = wl->cols; *k >= 0; k++, col++) {
			/* a figure; the values of BENCH_COL_CPU .. _RSS */
			double x = *k < BENCH_NR_X ? c->x[*k].median /
				   bench_x_cols[*k].div : 0;
			const double v[] = {
				c->cpu.median / wl->unit, NAN,
				c->wall.median / wl->unit, 1e3 / c->cpu.median,
				c->ratio_glibc, c->ratio_peer,
				c->rss.median / 1024,
			};

			if (*k < BENCH_NR_X && (c->has_x & (1u << *k)))
				bench_table_set(t, r, col, isinf(x) ? "never" :
						"%.1f", x);
			else if (*k == BENCH_COL_RANGE)
				bench_table_set(t, r, col, "%.2f-%.2f",
						c->cpu.min / wl->unit,
						c->cpu.max / wl->unit);
			else if (*k >= BENCH_COL_CPU && *k <= BENCH_COL_RSS &&
				 !isnan(v[*k - BENCH_COL_CPU]))
				bench_table_set(t, r, col, "%.*f%s",
					*k == BENCH_COL_MOPS ||
					*k == BENCH_COL_RSS ? 1 : 2,
					v[*k - BENCH_COL_CPU],
					*k == BENCH_COL_GLIBC ||
					*k == BENCH_COL_PEER ? "x" : "");
			else if (*k == BENCH_COL_TRIM)
				bench_table_set(t, r, col, "%s",
						c->samples[0].trim);
			else if (*k == BENCH_COL_OBJS &&
				 (c->has_x & (1u << BENCH_X_CPU_OBJS)))
				bench_table_set(t, r, col, "%.0f+%.0f",
					c->x[BENCH_X_CPU_OBJS].median,
					c->x[BENCH_X_DEPOT_OBJS].median);
			for (int s = 0; *k == BENCH_COL_SYS && s < 3; s++)
				if (c->counted)
					bench_table_set(t, r, col + s, "%ld",
							c->sys[s]);
			col += *k == BENCH_COL_SYS ? 2 : 0;
		}
	}
	bench_describe(wl, &run->cfg, desc, sizeof(desc));
	fprintf(f, "### %u %s: %s\n\n", wl->number, wl->name, wl->title);
	bench_para(f, "%s.  One op: %s.  Medians of the repetitions%s.", desc,
		   wl->op, first ? "" :
		   "; *: more threads than the usable CPUs");
	if ((wl->flags & BENCH_WL_LATENCY) && any)
		bench_para(f, "Nanoseconds per call, every call timed, less "
			   "an empty measurement (%.1f ns); the clock steps by "
			   "%.1f ns.", any->x[BENCH_X_EMPTY].median,
			   any->x[BENCH_X_TICK].median);
	bench_table_print(f, t);
}

static void bench_report_summary(FILE *f, const struct bench_run *run)
{
	const struct bench_contender *sc =
		bench_contender_find("segpool-cache");
	const struct bench_contender *cols[BENCH_TCOLS];
	const char *head[BENCH_TCOLS] = { "workload" };
	unsigned int nc = 1;
	struct bench_table *t;

	for (unsigned int i = 0; i < run->nr_cs && nc < BENCH_TCOLS - 1; i++)
		if (run->cs[i].selected && !run->cs[i].skipped)
			head[nc] = (cols[nc] = run->cs[i].c)->name, nc++;
	head[nc++] = "segpool-cache vs best peer";
	t = bench_table_new(head, nc);
	for (unsigned int i = 0; i < run->nr_cells; i++) {
		const struct bench_cell *a = &run->cells[i], *mine;
		unsigned int r;

		if (!bench_cell_summary(run, i))
			continue;
		r = bench_table_row(t);
		bench_table_set(t, r, 0, "%u %s, %u thr%s", a->wl->number,
				a->wl->name, a->threads,
				a->threads > run->usable ? "*" : "");
		for (unsigned int k = 1; k < nc - 1; k++) {
			const struct bench_cell *c = bench_cell_get(run, a->wl,
				a->threads, cols[k]);

			if (c)
				bench_table_set(t, r, k, "%.1f", c->cpu.median);
		}
		mine = bench_cell_get(run, a->wl, a->threads, sc);
		if (mine && mine->best_peer)
			bench_table_set(t, r, nc - 1, "%.2fx (%s)",
					mine->ratio_peer, mine->best_peer);
	}
	if (!bench_table_section(f, t, "Summary: CPU ns per op, median"))
		return;
	bench_para(f, "Thread CPU time summed over workers, per operation; "
		   "lower is better.  The last column is segpool-cache's CPU "
		   "time over the best peer's (below 1.00x: segpool is "
		   "ahead).  *: oversubscribed, more threads than the %u "
		   "usable CPUs.  floor: the benchmark loop with no allocator, "
		   "the cost every figure includes; on the passive "
		   "false-sharing row (scratch) no lower bound, as its loop "
		   "writes the shared lines an allocator may keep apart.",
		   run->usable);
	bench_table_print(f, t);
}

/*
 * Repetition k of @y over repetition k of @x, both CPU time per op: the
 * repetitions are interleaved, so each pair ran minutes apart at most and
 * the host's drift cancels out of its ratio.  Their median and range.
 */
static void bench_paired(const struct bench_cell *x,
			 const struct bench_cell *y, struct bench_summary *s)
{
	double v[BENCH_MAX_REPS];
	unsigned int n = 0;

	for (unsigned int k = 0; k < x->nr && k < y->nr && n < BENCH_MAX_REPS;
	     k++) {
		const struct bench_result *a = &x->samples[k];
		const struct bench_result *b = &y->samples[k];

		if (a->ops && b->ops && a->cpu_ns > 0 && b->cpu_ns > 0)
			v[n++] = (b->cpu_ns / (double)b->ops) /
				 (a->cpu_ns / (double)a->ops);
	}
	bench_summarize(v, n, s);
}

/*
 * What sampled heap profiling costs: each sampled contender's CPU time
 * over its plain one's, on the rows of the summary where both ran.
 */
static void bench_report_sampled(FILE *f, const struct bench_run *run)
{
	const struct bench_contender *on[BENCH_TCOLS], *off[BENCH_TCOLS];
	const char *head[BENCH_TCOLS] = { "workload" };
	unsigned int np = 0, nc = 1;
	struct bench_table *t;

	for (unsigned int i = 0; i < run->nr_cs && nc + 3 <= BENCH_TCOLS; i++) {
		const struct bench_contender *c = run->cs[i].c, *b;

		if (!run->cs[i].selected || run->cs[i].skipped ||
		    !c->sampled_of ||
		    !(b = bench_contender_find(c->sampled_of)) ||
		    !run->cs[b - bench_contenders].selected ||
		    run->cs[b - bench_contenders].skipped)
			continue;
		off[np] = b;
		on[np++] = c;
		head[nc++] = b->name;
		head[nc++] = c->name;
		head[nc++] = "ratio (range)";
	}
	if (!np)
		return;
	t = bench_table_new(head, nc);
	for (unsigned int i = 0; i < run->nr_cells; i++) {
		const struct bench_cell *a = &run->cells[i];
		unsigned int r = UINT_MAX;

		if (!bench_cell_summary(run, i))
			continue;
		for (unsigned int k = 0; k < np; k++) {
			const struct bench_cell *x = bench_cell_get(run, a->wl,
				a->threads, off[k]);
			const struct bench_cell *y = bench_cell_get(run, a->wl,
				a->threads, on[k]);
			struct bench_summary p;

			if (!x || !y)
				continue;
			if (r == UINT_MAX) {
				r = bench_table_row(t);
				bench_table_set(t, r, 0, "%u %s, %u thr%s",
						a->wl->number, a->wl->name,
						a->threads, a->threads >
						run->usable ? "*" : "");
			}
			bench_table_set(t, r, 1 + 3 * k, "%.2f",
					x->cpu.median / a->wl->unit);
			bench_table_set(t, r, 2 + 3 * k, "%.2f",
					y->cpu.median / a->wl->unit);
			bench_paired(x, y, &p);
			bench_table_set(t, r, 3 + 3 * k, "%.3fx (%.2f-%.2f)",
					p.median, p.min, p.max);
		}
	}
	if (!bench_table_section(f, t, "Sampled heap profiling: CPU ns per "
				 "op, median"))
		return;
	bench_para(f, "The same contender with SEGPOOL_HEAP_PROFILE set (one "
		   "sample per 512 KiB allocated, the default; the profile "
		   "written at the child's exit) and without, in the same "
		   "run, CPU ns per op (medians).  Ratio: the median, over "
		   "the repetitions, of each repetition's figure with "
		   "sampling over its figure without (the repetitions are "
		   "interleaved, so each pair ran minutes apart at most), "
		   "and the range of those ratios; the goal is 1.02x at "
		   "most.  Single figures on a busy or small host move by "
		   "more than that: read the ratios across rows and runs.");
	bench_table_print(f, t);
}

void bench_report(FILE *f, const struct bench_run *run, const char *img)
{
	static const char *const head[] = {
		"contender", "version", "malloc served by (checked)",
		"allocator libraries mapped", "per-CPU mode (checked)",
	};
	static const char *const plots[] = {
		"CPU time per op against glibc, every workload", "summary",
		"Throughput by threads, workload 3", "threads",
		"Latency percentiles, workloads 1 and 5", "latency",
		("Per-CPU layer: ns per pair in each mode, memory in "
		 "magazines by threads"), "percpu",
	};
	struct bench_table *t = bench_table_new(head, 5);

	fprintf(f, "<!-- generated by " BENCH_NAME "; do not edit -->\n\n"
		"### Machine\n\n");
	for (int i = 0; i < 5; i++)
		bench_para(f, "- %s", run->machine[i]);
	bench_para(f, "- Run: %u repetition%s interleaved, warm-up %gx, "
		   "threads pinned, %.0f s%s\n", run->reps, run->reps == 1 ?
		   "" : "s", run->cfg.warmup, run->elapsed_s, run->smoke ?
		   "; SMOKE RUN: tiny counts, the figures are not "
		   "measurements" : "");
	for (unsigned int i = 0; i < run->nr_cs; i++) {
		const struct bench_cstate *s = &run->cs[i];
		unsigned int r;

		if (!s->selected)
			continue;
		r = bench_table_row(t);
		bench_table_set(t, r, 0, "%s", s->c->name);
		bench_table_set(t, r, 1, "%s", s->version);
		bench_table_set(t, r, 2, "%s%s", s->skipped ? "skipped" :
				s->refused ? "REFUSED: " : "", s->skipped ? "" :
				s->c->kind != BENCH_MALLOC ? "(not malloc)" :
				s->served);
		bench_table_set(t, r, 3, "%s", s->mapped);
		bench_table_set(t, r, 4, "%s%s", s->refused && s->c->percpu ?
				"REFUSED: " : "", s->mode);
	}
	fprintf(f, "### Contenders\n\n");
	bench_table_print(f, t);
	for (unsigned int i = 0; i < run->nr_cs; i++)
		if (run->cs[i].selected && run->cs[i].skipped)
			bench_para(f, "- %s skipped: %s", run->cs[i].c->name,
				   run->cs[i].reason);
	bench_report_summary(f, run);
	bench_report_sampled(f, run);
	for (unsigned int w = 0; w < bench_nr_workloads; w++) {
		unsigned int ok = 0, failed = 0;

		for (unsigned int i = 0; i < run->nr_cells; i++)
			if (run->cells[i].wl == &bench_workloads[w]) {
				ok += run->cells[i].nr;
				failed += run->cells[i].failed;
			}
		if (ok + failed && run->smoke)
			fprintf(f, "- %s %s: %u runs checked, %u failed\n\n",
				failed ? "FAILED" : "ok",
				bench_workloads[w].name, ok + failed, failed);
		if (ok + failed)
			bench_report_workload(f, run, &bench_workloads[w]);
	}
	for (int i = 0; i < 4; i++)
		if (run->plotted & (1u << i))
			fprintf(f, "\n![%s](%sbench-%s.png)\n", plots[2 * i],
				img, plots[2 * i + 1]);
}

static char *bench_slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	long n;

	if (f && !fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 &&
	    !fseek(f, 0, SEEK_SET) && (buf = malloc((size_t)n + 1)))
		buf[fread(buf, 1, (size_t)n, f)] = '\0';
	if (f)
		fclose(f);
	return buf;
}

/*
 * Between the marks of @part, or in new marks at the end of the results
 * when there are none; written beside @doc, then renamed over it.
 */
int bench_doc_update(const char *doc, const char *part, const char *md_path)
{
	char *text = bench_slurp(doc), *md = bench_slurp(md_path);
	char b[64], e[64], tmp[PATH_MAX];
	char *at = NULL, *end = NULL;
	FILE *f = NULL;
	int ret = -1;

	snprintf(b, sizeof(b), "<!-- generated:bench-%s begin -->", part);
	snprintf(e, sizeof(e), "<!-- generated:bench-%s end -->", part);
	snprintf(tmp, sizeof(tmp), "%s.tmp", doc);
	if (text && md && (at = strstr(text, b)) && (end = strstr(at, e)))
		at += strlen(b);
	else if (text && md)
		at = end = strstr(text, "<!-- generated:bench-results end");
	if (at && (f = fopen(tmp, "w"))) {
		fprintf(f, "%.*s%s\n%s%s%s", (int)(at - text), text,
			at == end ? b : "", md, at == end ? e : "",
			at == end ? "\n" : "");
		fputs(end, f);
		ret = fclose(f) || rename(tmp, doc) ? -1 : 0;
	}
	if (ret)
		bench_warn("%s: cannot put %s there (%s)", doc, md_path,
			   at ? strerror(errno) : "no generated:bench marks");
	free(text);
	free(md);
	return ret;
}

/* The first line a shell command prints, or "". */
static void bench_first_line(const char *cmd, char *buf, size_t len)
{
	FILE *p = popen(cmd, "r");

	buf[0] = '\0';
	if (p && !fgets(buf, (int)len, p))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (p)
		pclose(p);
}

void bench_machine_read(struct bench_run *run)
{
	char cpu[128] = "unknown", line[256], rev[64] = "", cmd[600], date[40];
	FILE *f = fopen("/proc/cpuinfo", "r");
	int cpus[BENCH_MAX_THREADS], nodes = segpool_numa_node_count();
	time_t now = time(NULL);
	struct utsname u;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
			snprintf(cpu, sizeof(cpu), "%s",
				 strchr(line, ':') + 2);
			cpu[strcspn(cpu, "\n")] = '\0';
			break;
		}
	if (f)
		fclose(f);
	run->usable = bench_cpus(cpus, BENCH_MAX_THREADS);
	if (!strchr(run->srctree, '\'')) {
		snprintf(cmd, sizeof(cmd), "git -C '%s' describe --always "
			 "--dirty 2>/dev/null", run->srctree);
		bench_first_line(cmd, rev, sizeof(rev));
	}
	uname(&u);
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	snprintf(run->machine[0], 256, "%s, %ld CPUs online, %u usable, TSC "
		 "%.3f GHz", cpu, sysconf(_SC_NPROCESSORS_ONLN), run->usable,
		 run->cfg.tsc_hz / 1e9);
	snprintf(run->machine[1], 256, "%ld MiB, %d NUMA node%s",
		 sysconf(_SC_PHYS_PAGES) / 1024 * sysconf(_SC_PAGESIZE) / 1024,
		 nodes, nodes == 1 ? "" : "s");
	snprintf(run->machine[2], 256, "kernel %s %s %s", u.sysname,
		 u.release, u.machine);
	snprintf(run->machine[3], 256, "glibc %s, %s%s, segpool %s%s%s",
		 gnu_get_libc_version(),
#ifdef __clang__
		 "",
#else
		 "gcc ",
#endif
		 __VERSION__, segpool_version(), rev[0] ? " at " : "", rev);
	snprintf(run->machine[4], 256, "%s", date);
	for (unsigned int i = 0; i < run->nr_cs; i++) {
		struct bench_cstate *s = &run->cs[i];

		if (s->c->package) {
			/* the name comes from the table, never the user */
			snprintf(cmd, sizeof(cmd), "dpkg-query -W -f="
				 "'${Version}\\n' %s 2>/dev/null",
				 s->c->package);
			bench_first_line(cmd, s->version, sizeof(s->version));
		} else if (!s->c->peer && s->c->kind != BENCH_FLOOR) {
			snprintf(s->version, sizeof(s->version), "%s",
				 segpool_version());
		}
	}
}
