// SPDX-License-Identifier: MIT
/*
 * tools/bench/table.c - a table of cells, printed as aligned text or as
 * markdown (report.c, report_beneath.c and programs.c use it).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench/bench.h"

struct bench_table *bench_table_new(const char *const *head)
{
	struct bench_table *t = calloc(1, sizeof(*t));

	if (!t)
		bench_die("out of memory");
	while (head[t->ncol] && t->ncol < BENCH_TCOLS) {
		t->head[t->ncol] = head[t->ncol];
		t->ncol++;
	}
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

/* One text or markdown table of the columns in @cols (@n of them). */
static void bench_table_part(FILE *f, const struct bench_table *t, bool md,
			     const size_t *w, const unsigned int *cols,
			     unsigned int n)
{
	for (int r = -1; r < (int)t->nrow; r++) {
		for (unsigned int i = 0; i < n; i++) {
			unsigned int c = cols[i];
			const char *s = r < 0 ? t->head[c] : t->cell[r][c];

			fprintf(f, md ? "| %*s " : i ? "  %*s" : "%*s",
				c ? (int)w[c] : -(int)w[c], s[0] ? s : "-");
		}
		fprintf(f, md ? "|\n" : "\n");
		if (r == -1 && md) {
			/* |:----|----:|: first column left, the rest right */
			for (unsigned int i = 0; i < n; i++) {
				fputs(cols[i] ? "|" : "|:", f);
				for (size_t k = 0; k <= w[cols[i]]; k++)
					fputc('-', f);
				fputs(cols[i] ? ":" : "", f);
			}
			fputs("|\n", f);
		}
	}
	fputc('\n', f);
}

/*
 * First column left-aligned, numbers right-aligned.  As text, a table wider
 * than BENCH_TEXT_COLS is cut into parts that fit, each beginning with the
 * key columns (the first @t->nkey, at least one).
 */
void bench_table_print(FILE *f, struct bench_table *t, bool md)
{
	unsigned int cols[BENCH_TCOLS], nkey = t->nkey ? t->nkey : 1, n;
	size_t w[BENCH_TCOLS], keyw = 0, used;

	for (unsigned int c = 0; c < t->ncol; c++) {
		w[c] = strlen(t->head[c]);
		for (unsigned int r = 0; r < t->nrow; r++)
			if (strlen(t->cell[r][c]) > w[c])
				w[c] = strlen(t->cell[r][c]);
	}
	if (nkey > t->ncol)
		nkey = t->ncol;
	for (unsigned int c = 0; c < nkey; c++)
		keyw += w[c] + (c ? 2 : 0);
	for (unsigned int c = nkey; c < t->ncol || c == nkey;) {
		for (n = 0; n < nkey; n++)
			cols[n] = n;
		used = keyw;
		/* at least one more column per part, even one too wide */
		while (c < t->ncol && (n == nkey || md ||
				       used + 2 + w[c] <= BENCH_TEXT_COLS)) {
			used += 2 + w[c];
			cols[n++] = c++;
		}
		bench_table_part(f, t, md, w, cols, n);
		if (c >= t->ncol)
			break;
	}
	free(t);
}

void bench_heading(FILE *f, bool md, const char *fmt, ...)
{
	va_list ap;

	fprintf(f, md ? "### " : "== ");
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fprintf(f, md ? "\n\n" : " ==\n");
}

FILE *bench_text_begin(struct bench_text_buf *b)
{
	b->buf = NULL;
	b->len = 0;
	b->f = open_memstream(&b->buf, &b->len);
	return b->f ? b->f : stdout;
}

/*
 * Print what went into @b to @out, each line longer than BENCH_TEXT_COLS
 * broken at its last space that fits, the continuation indented as the line
 * began (the tables fit already: bench_table_print).
 */
void bench_text_end(struct bench_text_buf *b, FILE *out)
{
	if (!b->f)
		return;
	fclose(b->f);
	for (char *line = b->buf, *nl; line && *line; line = nl) {
		size_t len, indent = strspn(line, " ");
		const char *p = line;
		bool first = true;

		nl = strchr(line, '\n');
		len = nl ? (size_t)(nl - line) : strlen(line);
		nl = nl ? nl + 1 : NULL;
		while (len) {
			size_t room = BENCH_TEXT_COLS - (first ? 0 : indent), cut;

			if (!first)
				fprintf(out, "%*s", (int)indent, "");
			cut = len;
			if (len > room) {
				for (cut = room; cut > 0 && p[cut] != ' '; cut--)
					;
				if (cut <= indent)	/* no space to break at */
					cut = len;
			}
			fwrite(p, 1, cut, out);
			fputc('\n', out);
			while (cut < len && p[cut] == ' ')
				cut++;
			p += cut;
			len -= cut;
			first = false;
		}
		if (p == line)
			fputc('\n', out);	/* an empty line */
	}
	free(b->buf);
}
