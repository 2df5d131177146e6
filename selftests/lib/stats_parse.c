// SPDX-License-Identifier: MIT
/*
 * selftests/lib/stats_parse.c - the statistics text renderings read back:
 * slabinfo rows by sscanf() as slabinfo readers do, detail blocks as "key
 * value" lines (see stats_parse.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <segpool/segpool.h>

#include "internal/compiler.h"
#include "selftests/lib/harness.h"
#include "selftests/lib/stats_parse.h"

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond))						\
			fail_msg(__VA_ARGS__);				\
	} while (0)

/* --- capturing an output ------------------------------------------------ */

char *sp_stats_capture(enum sp_stats_what w, const char *cache)
{
	FILE *f = tmpfile();
	char *buf;
	long len;
	int ret = -1;

	CHECK(f, "tmpfile: %s", strerror(errno));
	switch (w) {
	case SP_STATS_SLABINFO: ret = segpool_stats_dump(f); break;
	case SP_STATS_DETAIL:
		ret = segpool_stats_dump_detail(f, cache, 0);
		break;
	case SP_STATS_DETAIL_PERCPU:
		ret = segpool_stats_dump_detail(f, cache, SEGPOOL_STATS_PERCPU);
		break;
	case SP_STATS_HEALTH: ret = segpool_stats_health(f); break;
	case SP_STATS_JSON: ret = segpool_stats_json(f, 0); break;
	case SP_STATS_JSON_PERCPU:
		ret = segpool_stats_json(f, SEGPOOL_STATS_PERCPU);
		break;
	}
	CHECK(ret == 0, "statistics call %d failed: %d", (int)w, ret);
	len = ftell(f);
	CHECK(len >= 0, "ftell");
	buf = malloc((size_t)len + 1);
	assert_non_null(buf);
	rewind(f);
	CHECK(fread(buf, 1, (size_t)len, f) == (size_t)len, "short read");
	buf[len] = '\0';
	fclose(f);
	return buf;
}

/* --- slabinfo ----------------------------------------------------------- */

bool sp_slabinfo_parse_row(const char *line, struct sp_slabinfo_row *r)
{
	int end = -1;

	if (sscanf(line, "%63s %llu %llu %llu %llu %llu : tunables %llu %llu "
		   "%llu : slabdata %llu %llu %llu%n", r->name, &r->active,
		   &r->num, &r->objsize, &r->perslab, &r->pages, &r->limit,
		   &r->batch, &r->shared, &r->active_slabs, &r->slabs,
		   &r->sharedavail, &end) != 12 || end < 0)
		return false;
	return line[end] == '\0';
}

int sp_slabinfo_check(char *text, const char *name,
		      struct sp_slabinfo_row *want)
{
	char *save = NULL, *line;
	int n = 0, found = 0;

	CHECK(text[0] && text[strlen(text) - 1] == '\n',
	      "the dump does not end with a line break");
	line = strtok_r(text, "\n", &save);
	CHECK(line && !strcmp(line, SP_SLABINFO_VERSION),
	      "first line: '%s'", line ? line : "");
	line = strtok_r(NULL, "\n", &save);
	CHECK(line && !strcmp(line, SP_SLABINFO_HEADER), "header: '%s'",
	      line ? line : "");
	while ((line = strtok_r(NULL, "\n", &save))) {
		struct sp_slabinfo_row r;

		CHECK(sp_slabinfo_parse_row(line, &r),
		      "torn or malformed row: '%s'", line);
		CHECK(r.active <= r.num, "active_objs > num_objs: '%s'", line);
		CHECK(r.num == r.slabs * r.perslab,
		      "num_objs != num_slabs * objperslab: '%s'", line);
		CHECK(r.active_slabs <= r.slabs,
		      "active_slabs > num_slabs: '%s'", line);
		CHECK(r.perslab >= 1 && r.pages >= 1 &&
		      r.objsize * r.perslab <= r.pages * SP_PAGE_SIZE,
		      "geometry does not fit the slab: '%s'", line);
		CHECK(r.limit == 2 * r.batch, "limit != 2 * batchcount: '%s'",
		      line);
		if (name && !strcmp(r.name, name)) {
			*want = r;
			found++;
		}
		n++;
	}
	if (name)
		CHECK(found == 1, "%d rows for cache %s", found, name);
	return n;
}

struct sp_slabinfo_row sp_slabinfo_row(const char *name)
{
	char *text = sp_stats_capture(SP_STATS_SLABINFO, NULL);
	struct sp_slabinfo_row r;

	memset(&r, 0, sizeof(r));
	sp_slabinfo_check(text, name, &r);
	free(text);
	return r;
}

bool sp_slabinfo_find(const char *name, struct sp_slabinfo_row *r)
{
	FILE *f = tmpfile();
	char line[512];
	bool found = false;

	if (!f)
		return false;
	if (segpool_stats_dump(f) != 0) {
		fclose(f);
		return false;
	}
	rewind(f);
	while (!found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		found = sp_slabinfo_parse_row(line, r) &&
			!strcmp(r->name, name);
	}
	fclose(f);
	return found;
}

unsigned long long sp_slabinfo_sum_active(const char *prefix)
{
	FILE *f = tmpfile();
	char line[512];
	unsigned long long sum = 0;
	struct sp_slabinfo_row r;

	assert_non_null(f);
	assert_int_equal(segpool_stats_dump(f), 0);
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, prefix, strlen(prefix)) &&
		    sp_slabinfo_parse_row(line, &r))
			sum += r.active;
	}
	fclose(f);
	return sum;
}


/* --- detail ------------------------------------------------------------- */

bool sp_detail_get(const char *text, const char *name, const char *key,
		   char *val, size_t vsize, char *rest, size_t rsize)
{
	char head[96];
	const char *p, *end;
	size_t klen = strlen(key);
	bool found = false;

	if (name)
		snprintf(head, sizeof(head), "cache %s\n", name);
	else
		snprintf(head, sizeof(head), "health\n");
	p = text;
	while (p && strncmp(p, head, strlen(head))) {
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	CHECK(p, "no block '%.*s' in the detail", (int)strlen(head) - 1, head);
	p = strchr(p, '\n') + 1;
	end = strstr(p, "\n\n");
	CHECK(end, "block of %s is not closed by an empty line", head);
	while (p <= end) {
		const char *nl = strchr(p, '\n');

		if (!strncmp(p, key, klen) && p[klen] == ' ') {
			const char *v = p + klen + 1;
			size_t vl = strcspn(v, " \n");
			const char *r = v + vl;

			CHECK(!found, "key %s twice in block %s", key, head);
			found = true;
			snprintf(val, vsize, "%.*s", (int)vl, v);
			if (*r == ' ')
				r++;
			snprintf(rest, rsize, "%.*s", (int)(nl - r), r);
		}
		p = nl + 1;
	}
	return found;
}

unsigned long long sp_detail_num(const char *text, const char *name,
				 const char *key)
{
	char val[256], rest[4096], *end;
	unsigned long long v;

	CHECK(sp_detail_get(text, name, key, val, sizeof(val), rest,
			    sizeof(rest)),
	      "key %s missing (cache %s)", key, name ? name : "health");
	v = strtoull(val, &end, 10);
	CHECK(*end == '\0' && val[0], "key %s: '%s' is not a number", key, val);
	return v;
}

const char *sp_detail_str(const char *text, const char *name,
			  const char *key)
{
	static char val[256];
	char rest[4096];

	CHECK(sp_detail_get(text, name, key, val, sizeof(val), rest,
			    sizeof(rest)),
	      "key %s missing (cache %s)", key, name ? name : "health");
	return val;
}

unsigned long long sp_detail_split(const char *text, const char *name,
				   const char *key, char tag, int id,
				   unsigned long long *at, int *count)
{
	char val[256], rest[16384], *tok, *save = NULL;
	unsigned long long sum = 0;

	CHECK(sp_detail_get(text, name, key, val, sizeof(val), rest,
			    sizeof(rest)),
	      "key %s missing", key);
	*at = 0;
	*count = 0;
	for (tok = strtok_r(rest, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		int i = -1, end = -1;
		unsigned long long v = 0;

		CHECK(tok[0] == tag &&
			      sscanf(tok + 1, "%d=%llu%n", &i, &v, &end) == 2 &&
			      tok[1 + end] == '\0',
		      "%s: bad split entry '%s'", key, tok);
		sum += v;
		if (i == id)
			*at = v;
		(*count)++;
	}
	return sum;
}
