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

/* First column left-aligned, numbers right-aligned. */
void bench_table_print(FILE *f, struct bench_table *t, bool md)
{
	size_t w[BENCH_TCOLS];

	for (unsigned int c = 0; c < t->ncol; c++) {
		w[c] = strlen(t->head[c]);
		for (unsigned int r = 0; r < t->nrow; r++)
			if (strlen(t->cell[r][c]) > w[c])
				w[c] = strlen(t->cell[r][c]);
	}
	for (int r = -1; r < (int)t->nrow; r++) {
		for (unsigned int c = 0; c < t->ncol; c++) {
			const char *s = r < 0 ? t->head[c] : t->cell[r][c];

			fprintf(f, md ? "| %*s " : c ? "  %*s" : "%*s",
				c ? (int)w[c] : -(int)w[c], s[0] ? s : "-");
		}
		fprintf(f, md ? "|\n" : "\n");
		if (r == -1 && md) {
			/* |:----|----:|: first column left, the rest right */
			for (unsigned int c = 0; c < t->ncol; c++) {
				fputs(c ? "|" : "|:", f);
				for (size_t k = 0; k <= w[c]; k++)
					fputc('-', f);
				fputs(c ? ":" : "", f);
			}
			fputs("|\n", f);
		}
	}
	fputc('\n', f);
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
