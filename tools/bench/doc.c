// SPDX-License-Identifier: MIT
/*
 * tools/bench/doc.c - put the latest results into
 * Documentation/reference/bench-results.md.
 *
 * The page holds its results between two marker lines; everything between
 * them is replaced, everything around them (the method, the explanations)
 * is left as written.  The new page is written beside the old one and
 * renamed over it, so an interrupted run leaves the old page whole.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench/bench.h"

#define BENCH_DOC_BEGIN "<!-- generated:bench-results begin -->"
#define BENCH_DOC_END	"<!-- generated:bench-results end -->"

static char *bench_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 &&
	    !fseek(f, 0, SEEK_SET) && (buf = malloc((size_t)n + 1))) {
		*len = fread(buf, 1, (size_t)n, f);
		buf[*len] = '\0';
	}
	fclose(f);
	return buf;
}

/*
 * Write @doc anew as its text up to @begin, then @head, @md and @tail,
 * then the text from @end: beside it first, then renamed over it.
 * Return: 0, or -1 (said why).
 */
static int bench_doc_write(const char *doc, const char *text, const char *begin,
			   const char *head, const char *md, const char *tail,
			   const char *end)
{
	char tmp[600];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", doc);
	f = fopen(tmp, "w");
	if (!f) {
		bench_warn("%s: %s", tmp, strerror(errno));
		return -1;
	}
	fwrite(text, 1, (size_t)(begin - text), f);
	fprintf(f, "%s%s%s", head, md, tail);
	fputs(end, f);
	if (fclose(f) || rename(tmp, doc)) {
		bench_warn("%s: %s", doc, strerror(errno));
		remove(tmp);
		return -1;
	}
	return 0;
}

int bench_doc_update(const char *doc, const char *md_path)
{
	size_t dlen = 0, mlen = 0;
	char *text = bench_slurp(doc, &dlen);
	char *md = bench_slurp(md_path, &mlen);
	char *begin, *end;
	int ret = -1;

	if (!text || !md) {
		bench_warn("%s: %s", text ? md_path : doc, strerror(errno));
		goto out;
	}
	begin = strstr(text, BENCH_DOC_BEGIN);
	end = begin ? strstr(begin, BENCH_DOC_END) : NULL;
	if (!begin || !end) {
		bench_warn("%s: no '%s' ... '%s' lines to put the results "
			   "between", doc, BENCH_DOC_BEGIN, BENCH_DOC_END);
		goto out;
	}
	begin += strlen(BENCH_DOC_BEGIN);
	ret = bench_doc_write(doc, text, begin, "\n", md, "", end);
out:
	free(text);
	free(md);
	return ret;
}

int bench_doc_update_part(const char *doc, const char *part,
			  const char *md_path)
{
	char pbegin[96], pend[96];
	char head[sizeof(pbegin) + 1], tail[sizeof(pend) + 1];
	size_t dlen = 0, mlen = 0;
	char *text = bench_slurp(doc, &dlen);
	char *md = bench_slurp(md_path, &mlen);
	char *sec, *secend, *begin, *end;
	int ret = -1;

	if (!text || !md) {
		bench_warn("%s: %s", text ? md_path : doc, strerror(errno));
		goto out;
	}
	snprintf(pbegin, sizeof(pbegin), "<!-- generated:bench-%s begin -->",
		 part);
	snprintf(pend, sizeof(pend), "<!-- generated:bench-%s end -->", part);
	sec = strstr(text, BENCH_DOC_BEGIN);
	secend = sec ? strstr(sec, BENCH_DOC_END) : NULL;
	if (!sec || !secend) {
		bench_warn("%s: no '%s' ... '%s' lines to put the results "
			   "between", doc, BENCH_DOC_BEGIN, BENCH_DOC_END);
		goto out;
	}
	begin = strstr(sec, pbegin);
	end = begin ? strstr(begin, pend) : NULL;
	if (!begin || !end || end > secend) {
		/* none yet: at the end of the results section */
		begin = end = secend;
	} else {
		end += strlen(pend);
		if (*end == '\n')
			end++;
	}
	/* the marks' lines: bounded, as the marks themselves are */
	snprintf(head, sizeof(head), "%s\n", pbegin);
	snprintf(tail, sizeof(tail), "%s\n", pend);
	ret = bench_doc_write(doc, text, begin, head, md, tail, end);
out:
	free(text);
	free(md);
	return ret;
}
