// SPDX-License-Identifier: MIT
/*
 * selftests/api/test_json_schema.c - both producers of the statistics document
 * against its documented field list.
 *
 * Documentation/reference/stats-json.md holds the one list of keys (path, type,
 * producer; a row may name several leaves of one parent in braces).  This
 * test reads that table, then parses, with the selftests'
 * one JSON parser (selftests/lib/json.c), the document segpool_stats_json()
 * writes (with and without per-CPU figures) and the one segpool-top --json
 * writes about this very process (which exports for the occasion), and
 * checks both ways: every key a producer writes is listed, with its type,
 * as written by that producer; every key listed for a producer is in every
 * object of its kind that producer writes (unless listed as optional).
 * Then the same figures must agree between the two where both have them,
 * and a cache name that needs escaping must come back as it was from both.
 * And every key of a cache, a cache's node and the health section must be
 * in both documents (the per-CPU slots apart): the check that fails when
 * a field is added to one producer only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <segpool/segpool.h>
#include <segpool/export.h>

#include "selftests/lib/harness.h"
#include "selftests/lib/json.h"

#ifndef SEGPOOL_SRCTREE
#define SEGPOOL_SRCTREE "."
#endif
#ifndef SEGPOOL_TOP_PATH
#define SEGPOOL_TOP_PATH ""
#endif

#define SCHEMA_DOC	SEGPOOL_SRCTREE "/Documentation/reference/stats-json.md"
#define MAX_KEYS	512

enum producer { P_LIBRARY = 1, P_EXPORT = 2 };

struct key {
	char path[128];
	char type[32];		/* integer, string, boolean,
				 * object, array, T[] */
	unsigned int in;	/* enum producer bits */
	bool optional;
};

static struct key keys[MAX_KEYS];
static size_t nkeys;

/* A table cell: between two '|', trimmed, backticks dropped. */
static char *cell(char **p, char *out, size_t len)
{
	char *s = *p, *e;
	size_t n = 0;

	if (*s == '|')
		s++;
	e = strchr(s, '|');
	if (!e)
		return NULL;
	*p = e;
	while (s < e && *s == ' ')
		s++;
	while (e > s && e[-1] == ' ')
		e--;
	for (; s < e && n + 1 < len; s++)
		if (*s != '`')
			out[n++] = *s;
	out[n] = '\0';
	return out;
}

/*
 * Record the key(s) of one row.  A path may name several leaves of one
 * parent at once, "caches[].{allocs, frees}": each gets the row's type and
 * producer, as if it had a row of its own.
 */
static void add_keys(const char *path, const char *type, unsigned int in,
		     bool optional)
{
	const char *open = strchr(path, '{'), *close, *w;
	char one[128];

	if (!open) {
		assert_true(nkeys < MAX_KEYS);
		if (strlen(path) >= sizeof(keys[nkeys].path))
			fail_msg("%s: key path too long: %s", SCHEMA_DOC, path);
		for (size_t i = 0; i < nkeys; i++)
			if (!strcmp(keys[i].path, path))
				fail_msg("%s: key %s listed twice", SCHEMA_DOC,
					 path);
		snprintf(keys[nkeys].path, sizeof(keys[nkeys].path), "%s",
			 path);
		snprintf(keys[nkeys].type, sizeof(keys[nkeys].type), "%s",
			 type);
		keys[nkeys].in = in;
		keys[nkeys].optional = optional;
		nkeys++;
		return;
	}
	close = strchr(open, '}');
	if (!close || close[1] || strchr(open + 1, '{'))
		fail_msg("%s: a path with braces it cannot read: %s",
			 SCHEMA_DOC, path);
	for (w = open + 1; w < close;) {
		const char *e = memchr(w, ',', (size_t)(close - w));
		const char *ws = w, *we = e ? e : close;

		while (ws < we && *ws == ' ')
			ws++;
		while (we > ws && we[-1] == ' ')
			we--;
		if (ws == we ||
		    snprintf(one, sizeof(one), "%.*s%.*s", (int)(open - path),
			     path, (int)(we - ws), ws) >= (int)sizeof(one))
			fail_msg("%s: a bad leaf in %s", SCHEMA_DOC, path);
		add_keys(one, type, in, optional);
		w = e ? e + 1 : close;
	}
}

static void load_schema(void)
{
	FILE *f = fopen(SCHEMA_DOC, "r");
	char line[4096];
	bool in_table = false;

	if (!f)
		fail_msg("cannot open %s: %s", SCHEMA_DOC, strerror(errno));
	nkeys = 0;
	while (fgets(line, sizeof(line), f)) {
		char path[1024], type[32], in[64], *p = line;
		unsigned int bits = 0;

		if (!strncmp(line, "| Path | Type | In |", 20)) {
			in_table = true;
			continue;
		}
		if (!in_table || strncmp(line, "| `", 3))
			continue;
		if (!cell(&p, path, sizeof(path)) ||
		    !cell(&p, type, sizeof(type)) || !cell(&p, in, sizeof(in)))
			fail_msg("%s: a row with fewer than 3 cells: %s",
				 SCHEMA_DOC, line);
		if (!strncmp(in, "both", 4))
			bits = P_LIBRARY | P_EXPORT;
		else if (!strncmp(in, "library", 7))
			bits = P_LIBRARY;
		else if (!strncmp(in, "export", 6))
			bits = P_EXPORT;
		else
			fail_msg(
				"%s: key %s: producer '%s' is not both, "
				"library "
				"or export",
				SCHEMA_DOC, path, in);
		add_keys(path, type, bits, strstr(in, "optional") != NULL);
	}
	fclose(f);
	if (nkeys < 50)
		fail_msg("%s: only %zu keys found: is the table there?",
			 SCHEMA_DOC, nkeys);
}

static const struct key *find_key(const char *path)
{
	for (size_t i = 0; i < nkeys; i++)
		if (!strcmp(keys[i].path, path))
			return &keys[i];
	return NULL;
}

/* The type of value @v as the table names it. */
static const char *type_of(struct jdoc *d, int v, char *buf, size_t len)
{
	const struct jval *j = &d->v[v];

	if (j->type == J_ARR) {
		int first = j->child;

		if (first >= 0 && d->v[first].type != J_OBJ &&
		    d->v[first].type != J_ARR) {
			snprintf(buf, len, "%s[]", d->v[first].type == J_NUM ?
				 "integer" : jtype_name(d->v[first].type));
			return buf;
		}
		return "array";
	}
	if (j->type == J_NUM)
		return "integer";
	return jtype_name(j->type);
}

static bool type_ok(const struct key *k, struct jdoc *d, int v)
{
	char buf[32];
	const char *t = type_of(d, v, buf, sizeof(buf));

	if (d->v[v].type == J_NUM && !d->v[v].integer) {
		/* only "node" may be negative (-1: unknown); no fractions */
		const char *leaf = strrchr(k->path, '.');

		return leaf && !strcmp(leaf, ".node");
	}
	if (!strcmp(t, k->type))
		return true;
	/* an empty array fits any array type */
	return d->v[v].type == J_ARR && d->v[v].child < 0 &&
	       (!strcmp(k->type, "array") || strstr(k->type, "[]"));
}

static unsigned int objects_checked;

static void check_value(struct jdoc *d, int v, const char *path,
			enum producer who);

/* Every member of object @obj at @path is listed; every listed one is here. */
static void check_object(struct jdoc *d, int obj, const char *path,
			 enum producer who)
{
	size_t plen = strlen(path);

	objects_checked++;
	for (int m = d->v[obj].child; m >= 0; m = d->v[m].next) {
		char child[160];
		const struct key *k;

		snprintf(child, sizeof(child), "%s%s%s", path, plen ? "." : "",
			 d->v[m].key);
		k = find_key(child);
		if (!k)
			fail_msg("%s writes key %s, which %s does not list",
				 who == P_LIBRARY ? "the library" :
						    "segpool-top",
				 child, SCHEMA_DOC);
		if (!(k->in & who))
			fail_msg("%s writes key %s, listed as %s only",
				 who == P_LIBRARY ? "the library" :
						    "segpool-top",
				 child,
				 who == P_LIBRARY ? "export" : "library");
		if (!type_ok(k, d, m)) {
			char buf[32];

			fail_msg("key %s: %s, listed as %s", child,
				 type_of(d, m, buf, sizeof(buf)), k->type);
		}
		check_value(d, m, child, who);
	}
	for (size_t i = 0; i < nkeys; i++) {
		const struct key *k = &keys[i];
		const char *leaf = strrchr(k->path, '.');
		size_t parent = leaf ? (size_t)(leaf - k->path) : 0;

		if (!(k->in & who) || k->optional ||
		    strstr(k->path + parent, "[]"))
			continue;
		if (parent != plen || strncmp(k->path, path, plen))
			continue;
		if (jget_opt(d, obj, leaf ? leaf + 1 : k->path) < 0)
			fail_msg(
				"%s lists %s for %s, but an object at %s lacks "
				"it",
				SCHEMA_DOC, k->path,
				who == P_LIBRARY ? "the library" :
						   "segpool-top",
				plen ? path : "the root");
	}
}

static void check_value(struct jdoc *d, int v, const char *path,
			enum producer who)
{
	if (d->v[v].type == J_OBJ) {
		check_object(d, v, path, who);
	} else if (d->v[v].type == J_ARR) {
		char elem[200];
		const struct key *k;

		snprintf(elem, sizeof(elem), "%s[]", path);
		for (int e = d->v[v].child; e >= 0; e = d->v[e].next) {
			if (d->v[e].type != J_OBJ)
				/* scalars: the T[] type said it */
				continue;
			k = find_key(elem);
			if (!k || strcmp(k->type, "object"))
				fail_msg("%s: no \"%s | object\" row for the "
					 "elements of %s",
					 SCHEMA_DOC, elem, path);
			check_object(d, e, elem, who);
		}
	}
}

static void check_document(const char *text, enum producer who)
{
	struct jdoc d;

	jparse(&d, text);
	assert_int_equal(jnum(&d, 0, "schema"), 2);
	assert_string_equal(jstr(&d, 0, "source"),
			    who == P_LIBRARY ? "library" : "export");
	objects_checked = 0;
	check_object(&d, 0, "", who);
	assert_true(objects_checked > 10);
	jfree(&d);
}

static char *library_json(unsigned int flags)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(segpool_stats_json(f, flags), 0);
	fclose(f);
	return buf;
}

/* segpool-top --json about this process; its stdout, exit status 0. */
static char *viewer_json(void)
{
	char cmd[512], chunk[4096], *text = NULL;
	size_t len = 0, n;
	FILE *p;
	int status;

	if (!SEGPOOL_TOP_PATH[0] || access(SEGPOOL_TOP_PATH, X_OK))
		fail_msg("segpool-top not built (%s)", SEGPOOL_TOP_PATH);
	snprintf(cmd, sizeof(cmd), "%s --json %d", SEGPOOL_TOP_PATH,
		 (int)getpid());
	p = popen(cmd, "r");
	assert_non_null(p);
	while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0) {
		text = realloc(text, len + n + 1);
		assert_non_null(text);
		memcpy(text + len, chunk, n);
		len += n;
		text[len] = '\0';
	}
	status = pclose(p);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_non_null(text);
	return text;
}

/*
 * A cache in use (and a CPU slot with figures),
 * and one whose name needs escaping.
 */
static const char weird[] = "js-\"q\"\\b/";
static struct segpool_cache *busy, *odd;
static void *held[100];

static int setup(void **state)
{
	(void)state;
	load_schema();
	busy = segpool_cache_create("js-busy", 120, 0, 0, NULL);
	odd = segpool_cache_create(weird, 16, 0, 0, NULL);
	if (!busy || !odd)
		return -1;
	for (int i = 0; i < 100; i++)
		held[i] = segpool_cache_alloc(busy, 0);
	for (int i = 0; i < 100; i += 2) {
		segpool_cache_free(busy, held[i]);
		held[i] = NULL;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (int i = 0; i < 100; i++)
		if (held[i])
			segpool_cache_free(busy, held[i]);
	segpool_cache_destroy(busy);
	segpool_cache_destroy(odd);
	return 0;
}

static void test_schema_table(void **state)
{
	(void)state;
	/* the table describes the two producers' common keys at least */
	assert_non_null(find_key("schema"));
	assert_non_null(find_key("caches[].nodes[].node"));
	/*
	 * One JSON: a cache, a cache's node and the health section have the
	 * same keys from both producers (the export's key table is filled
	 * from the library's field lists), so no key there may be one
	 * producer's.  Only the per-CPU slots (cpus[]) and the pools stay
	 * the library's, and the export object the viewer's.
	 */
	for (size_t i = 0; i < nkeys; i++) {
		const char *k = keys[i].path;

		if ((!strncmp(k, "caches", 6) || !strncmp(k, "health", 6)) &&
		    strncmp(k, "caches[].cpus", 13) &&
		    keys[i].in != (P_LIBRARY | P_EXPORT))
			fail_msg(
				"%s: key %s is not in both documents: "
				"add it to "
				"the library's field lists, which the export's "
				"key table follows",
				SCHEMA_DOC, k);
	}
	for (size_t i = 0; i < nkeys; i++) {
		static const char *const types[] = {
			"integer", "string", "boolean", "object", "array",
			"integer[]", "string[]",
		};
		bool ok = false;

		for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
			ok |= !strcmp(keys[i].type, types[t]);
		if (!ok)
			fail_msg("%s: key %s has type '%s'", SCHEMA_DOC,
				 keys[i].path, keys[i].type);
	}
	/* a key is written only by producers that write the object it is in */
	for (size_t i = 0; i < nkeys; i++) {
		char parent[sizeof(keys[i].path)];
		size_t n = strlen(keys[i].path);
		char *cut;
		const struct key *p;

		memcpy(parent, keys[i].path, n + 1);
		if (n > 2 && !strcmp(parent + n - 2, "[]")) {
			parent[n - 2] = '\0';		/* "a.b[]": "a.b" */
		} else {
			cut = strrchr(parent, '.');
			if (!cut)
				continue;		/* at the root */
			*cut = '\0';			/* "a.b": "a" */
		}
		p = find_key(parent);
		if (!p)
			fail_msg("%s: key %s, but no row for %s", SCHEMA_DOC,
				 keys[i].path, parent);
		if (keys[i].in & ~p->in)
			fail_msg(
				"%s: key %s is listed for a producer that does "
				"not write %s",
				SCHEMA_DOC, keys[i].path, parent);
	}
}

static void test_library_document(void **state)
{
	char *text;

	(void)state;
	text = library_json(0);
	check_document(text, P_LIBRARY);
	free(text);
	text = library_json(SEGPOOL_STATS_PERCPU);
	check_document(text, P_LIBRARY);
	free(text);
}

static void test_viewer_document(void **state)
{
	struct jdoc lib, top;
	char *lt, *tt;
	int lc, tc, lb, tb;

	(void)state;
	assert_int_equal(segpool_export_start(SEGPOOL_EXPORT_INTERVAL_MIN), 0);
	tt = viewer_json();
	lt = library_json(0);
	assert_int_equal(segpool_export_stop(), 0);
	check_document(tt, P_EXPORT);

	/* the same names for the same figures: the cache nobody touches now */
	jparse(&lib, lt);
	jparse(&top, tt);
	assert_int_equal(jnum(&top, jget(&top, 0, "export"), "pid"), getpid());
	assert_string_equal(jstr(&top, 0, "version"), segpool_version());
	lc = jfind(&lib, jget(&lib, 0, "caches"), "name", "js-busy", 0);
	tc = jfind(&top, jget(&top, 0, "caches"), "name", "js-busy", 0);
	assert_true(lc >= 0 && tc >= 0);
	{
		static const char *const same[] = {
			"object_size", "slab_size", "align", "objs_per_slab",
			"pages_per_slab", "active_objs", "total_objs", "slabs",
			"slab_bytes", "allocs", "frees", "alloc_slab",
			"free_slab",
		};

		for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++)
			if (jnum(&lib, lc, same[i]) != jnum(&top, tc, same[i]))
				fail_msg("%s: library %llu, segpool-top %llu",
					 same[i], jnum(&lib, lc, same[i]),
					 jnum(&top, tc, same[i]));
	}
	assert_int_equal(jnum(&top, tc, "active_objs"), 50);
	assert_int_equal(jbool(&lib, lc, "percpu"), jbool(&top, tc, "percpu"));
	lb = jget(&lib, lc, "slabinfo");
	tb = jget(&top, tc, "slabinfo");
	assert_int_equal(jnum(&lib, lb, "objsize"), jnum(&top, tb, "objsize"));
	assert_int_equal(jnum(&lib, lb, "num_slabs"),
			 jnum(&top, tb, "num_slabs"));
	/* bytes in both (not pages), a boolean binding in both */
	assert_int_equal(jnum(&lib, jget(&lib, 0, "health"), "nr_nodes"),
			 jnum(&top, jget(&top, 0, "health"), "nr_nodes"));
	{
		int ln = jget(&lib, jget(&lib, 0, "health"), "nodes");
		int tn = jget(&top, jget(&top, 0, "health"), "nodes");
		int l0 = lib.v[ln].child, t0 = top.v[tn].child;

		assert_true(l0 >= 0 && t0 >= 0);
		assert_int_equal(jnum(&lib, l0, "region_bytes"),
				 jnum(&top, t0, "region_bytes"));
		assert_int_equal(jbool(&lib, l0, "bound"),
				 jbool(&top, t0, "bound"));
	}
	/* the one escaper: the name comes back as it was, from both */
	assert_true(jfind(&lib, jget(&lib, 0, "caches"), "name", weird, 0) >=
		    0);
	assert_true(jfind(&top, jget(&top, 0, "caches"), "name", weird, 0) >=
		    0);
	jfree(&lib);
	jfree(&top);
	free(lt);
	free(tt);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_schema_table),
	cmocka_unit_test(test_library_document),
	cmocka_unit_test(test_viewer_document),
};

/* The caches live for the whole program: both documents must show them. */
int main(int argc, char **argv)
{
	int ret;

	if (setup(NULL)) {
		fprintf(stderr, "cannot set up the caches\n");
		return 1;
	}
	ret = sp_test_run(__FILE__, tests, sizeof(tests) / sizeof(tests[0]),
			  argc, argv);
	teardown(NULL);
	return ret;
}
