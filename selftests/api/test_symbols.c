// SPDX-License-Identifier: MIT
/*
 * selftests/api/test_symbols.c - the ABI of libsegpool.so as a program sees it.
 *
 * The library is built with -fvisibility=hidden, SEGPOOL_API on every public
 * prototype and the version script scripts/segpool.map.  This program checks
 * the result on the built shared object, not on the sources' intentions:
 *
 *  - every defined dynamic symbol is a segpool_* name, carries the version
 *    node of the map file and matches one of its global patterns;
 *  - every SEGPOOL_API function of include/segpool/ is exported, and every
 *    exported function is declared there (nothing leaks, nothing is missing);
 *  - the soname is libsegpool.so.<major> and the version node is defined;
 *  - dlopen() works and segpool_version() answers the header's version;
 *    a few calls through the shared object behave; internals stay hidden.
 *
 * nm, objdump (or readelf) come from binutils; where they are missing the
 * tests that need them are skipped.  The Makefile passes SEGPOOL_SO_PATH and
 * SEGPOOL_MAP_PATH; this program links nothing of libsegpool itself.
 */
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "selftests/lib/harness.h"
#include <segpool/segpool.h>
#include "segpool_config.h"

#ifndef SEGPOOL_SO_PATH
#error "SEGPOOL_SO_PATH (the built libsegpool.so.X.Y.Z) must be defined"
#endif
#ifndef SEGPOOL_MAP_PATH
#error "SEGPOOL_MAP_PATH (scripts/segpool.map) must be defined"
#endif

#define SP_STR2(x)	#x
#define SP_STR(x)	SP_STR2(x)

#define EXPECTED_SONAME	"libsegpool.so." SP_STR(SEGPOOL_VERSION_MAJOR)
#define NAME_MAX_LEN	256
#define MAX_ITEMS	1024

/* A list of names, with an optional second string each (a version, a type). */
struct namelist {
	size_t n;
	char name[MAX_ITEMS][NAME_MAX_LEN];
	char extra[MAX_ITEMS][NAME_MAX_LEN];
	char type[MAX_ITEMS];
};

static void namelist_add(struct namelist *l, const char *name,
			 const char *extra, char type)
{
	assert_true(l->n < MAX_ITEMS);
	assert_true(strlen(name) < NAME_MAX_LEN);
	strcpy(l->name[l->n], name);
	snprintf(l->extra[l->n], NAME_MAX_LEN, "%s", extra ? extra : "");
	l->type[l->n] = type;
	l->n++;
}

static ssize_t namelist_find(const struct namelist *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->name[i], name))
			return (ssize_t)i;
	return -1;
}

/* --- tools ---------------------------------------------------------------- */

/* find_tool() - true when @tool is an executable file somewhere in $PATH. */
static bool find_tool(const char *tool)
{
	const char *path = getenv("PATH");
	char dir[4096], file[4096 + NAME_MAX_LEN];
	const char *p, *end;
	size_t len;

	if (!path)
		path = "/usr/bin:/bin";
	for (p = path; *p; p = *end ? end + 1 : end) {
		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		len = (size_t)(end - p);
		if (len == 0 || len >= sizeof(dir))
			continue;
		memcpy(dir, p, len);
		dir[len] = '\0';
		snprintf(file, sizeof(file), "%s/%s", dir, tool);
		if (access(file, X_OK) == 0)
			return true;
	}
	return false;
}

/*
 * run_tool() - run "@tool @args '@file'" and hand each line of its stdout to
 * @line.  Fails the test when the command cannot run or exits non-zero.
 */
static void run_tool(const char *tool, const char *args, const char *file,
		     void (*line)(char *text, void *arg), void *arg)
{
	char cmd[8192], buf[4096];
	FILE *f;
	int status;

	assert_null(strchr(file, '\''));
	snprintf(cmd, sizeof(cmd), "%s %s '%s'", tool, args, file);
	f = popen(cmd, "r");
	if (!f)
		fail_msg("popen(%s): %s", cmd, strerror(errno));
	while (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = '\0';
		line(buf, arg);
	}
	status = pclose(f);
	if (status != 0)
		fail_msg("'%s' failed (status %#x)", cmd, (unsigned int)status);
}

/* --- the version script --------------------------------------------------- */

/*
 * The map file's version nodes and the patterns under "global:".  Comments
 * (C style and #) are dropped; the grammar is the small subset ld takes:
 *   NODE { global: pattern; ... local: pattern; ... } [PARENT];
 */
struct mapfile {
	struct namelist nodes;
	struct namelist globals;
};

static void read_file(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t len;

	if (!f)
		fail_msg("cannot open %s: %s", path, strerror(errno));
	len = fread(buf, 1, size - 1, f);
	fclose(f);
	assert_true(len < size - 1);	/* the whole file fitted */
	buf[len] = '\0';
}

/* Blank out C comments, // comments and, if @hash, # lines (with \ joins). */
static void strip_comments(char *s, bool hash)
{
	bool line_start = true;
	char *p = s;

	while (*p) {
		if (p[0] == '/' && p[1] == '*') {
			char *e = strstr(p + 2, "*/");

			e = e ? e + 2 : p + strlen(p);
			for (; p < e; p++)
				if (*p != '\n')
					*p = ' ';
			continue;
		}
		if ((p[0] == '/' && p[1] == '/') ||
		    (hash && line_start && *p == '#')) {
			while (*p && *p != '\n') {
				if (p[0] == '\\' && p[1] == '\n') {
					p[0] = ' ';
					p += 2;
					continue;
				}
				*p++ = ' ';
			}
			continue;
		}
		if (*p == '\n')
			line_start = true;
		else if (!isspace((unsigned char)*p))
			line_start = false;
		p++;
	}
}

static void load_map(struct mapfile *m)
{
	static char text[65536];
	enum { NONE, GLOBAL, LOCAL } mode = NONE;
	char word[NAME_MAX_LEN] = "";
	char *p;

	read_file(SEGPOOL_MAP_PATH, text, sizeof(text));
	strip_comments(text, true);
	memset(m, 0, sizeof(*m));

	for (p = text; *p; ) {
		if (isspace((unsigned char)*p)) {
			p++;
		} else if (strchr("{};:", *p)) {
			char c = *p++;

			if (c == '{' && word[0]) {
				namelist_add(&m->nodes, word, NULL, 'N');
			} else if (c == ':' && !strcmp(word, "global")) {
				mode = GLOBAL;
			} else if (c == ':' && !strcmp(word, "local")) {
				mode = LOCAL;
			} else if (c == ';' && word[0] && mode == GLOBAL) {
				namelist_add(&m->globals, word, NULL, 'G');
			} else if (c == '}') {
				mode = NONE;
			}
			word[0] = '\0';
		} else {
			size_t len = 0;

			while (*p && !isspace((unsigned char)*p) &&
			       !strchr("{};:", *p)) {
				assert_true(len < sizeof(word) - 1);
				word[len++] = *p++;
			}
			word[len] = '\0';
		}
	}
	if (m->nodes.n == 0 || m->globals.n == 0)
		fail_msg("%s: no version node or no global pattern found",
			 SEGPOOL_MAP_PATH);
}

/* --- the public headers --------------------------------------------------- */

/* include/segpool/ of the source tree, found from the map file's path. */
static void header_dir(char *buf, size_t size)
{
	const char *map = SEGPOOL_MAP_PATH, *tail = "scripts/segpool.map";
	size_t len = strlen(map), tlen = strlen(tail);

	assert_true(len >= tlen);
	assert_string_equal(&map[len - tlen], tail);
	snprintf(buf, size, "%.*sinclude/segpool", (int)(len - tlen), map);
}

/*
 * Collect the name declared by every SEGPOOL_API declaration of @text: the
 * first segpool_* identifier before the closing ';' that is followed by '('
 * (a function) or by ';' or '[' (an object).
 */
static void scan_header(char *text, const char *file, struct namelist *api)
{
	const char *key = "SEGPOOL_API";
	size_t klen = strlen(key);
	char *p = text;

	strip_comments(text, true);
	while ((p = strstr(p, key))) {
		bool word_start =
			p == text ||
			!(isalnum((unsigned char)p[-1]) || p[-1] == '_');
		char *q = p + klen, *end;
		bool found = false;

		p = q;
		if (!word_start || isalnum((unsigned char)*q) || *q == '_')
			continue;
		end = strchr(q, ';');
		if (!end)
			fail_msg("%s: SEGPOOL_API declaration without ';'",
				 file);
		while (q < end && !found) {
			if (!strncmp(q, "segpool_", 8) &&
			    !(isalnum((unsigned char)q[-1]) || q[-1] == '_')) {
				char name[NAME_MAX_LEN];
				size_t len = 0;
				char *r;

				while (isalnum((unsigned char)q[len]) ||
				       q[len] == '_')
					len++;
				assert_true(len < sizeof(name));
				memcpy(name, q, len);
				name[len] = '\0';
				for (r = q + len; isspace((unsigned char)*r);
				     r++)
					;
				if (*r == '(' || *r == ';' || *r == '[') {
					if (namelist_find(api, name) < 0)
						namelist_add(api, name, file,
							     'H');
					found = true;
				}
				q += len;
			} else {
				q++;
			}
		}
		if (!found)
			fail_msg(
				"%s: no segpool_* name in a SEGPOOL_API "
				"declaration",
				file);
		p = end;
	}
}

static void load_headers(struct namelist *api)
{
	static char text[262144];
	char dir[4096], file[8192];
	struct dirent *de;
	DIR *d;

	header_dir(dir, sizeof(dir));
	d = opendir(dir);
	if (!d)
		fail_msg("opendir(%s): %s", dir, strerror(errno));
	memset(api, 0, sizeof(*api));
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len < 3 || strcmp(de->d_name + len - 2, ".h"))
			continue;
		snprintf(file, sizeof(file), "%s/%s", dir, de->d_name);
		read_file(file, text, sizeof(text));
		scan_header(text, de->d_name, api);
	}
	closedir(d);
	assert_true(api->n > 0);
}

/* --- the dynamic symbol table --------------------------------------------- */

/*
 * One line of "nm -D --defined-only": "VALUE TYPE NAME[@@VERSION]".  The name
 * goes to ->name, the version (without @ or @@) to ->extra.
 */
static void nm_line(char *text, void *arg)
{
	struct namelist *syms = arg;
	char *tok[4], *save = NULL, *at;
	int n = 0;

	for (char *t = strtok_r(text, " \t", &save); t && n < 4;
	     t = strtok_r(NULL, " \t", &save))
		tok[n++] = t;
	if (n == 2) {		/* no value column */
		tok[2] = tok[1];
		tok[1] = tok[0];
	} else if (n != 3) {
		fail_msg("unexpected nm output line: '%s'", text);
	}
	if (strlen(tok[1]) != 1)
		fail_msg("unexpected nm symbol type '%s'", tok[1]);
	at = strchr(tok[2], '@');
	if (at) {
		*at++ = '\0';
		if (*at == '@')
			at++;
	}
	namelist_add(syms, tok[2], at, tok[1][0]);
}

struct exports_state {
	struct namelist syms;	/* the defined dynamic symbols */
	struct mapfile map;
};

static int exports_setup(void **state)
{
	struct exports_state *st;

	*state = NULL;
	if (!find_tool("nm"))
		return 0;	/* the test skips */
	st = calloc(1, sizeof(*st));
	if (!st)
		return -1;
	*state = st;
	return 0;
}

static int exports_teardown(void **state)
{
	free(*state);
	*state = NULL;
	return 0;
}

/* Run nm and read the map file; skip when nm is not installed. */
static struct exports_state *load_exports(void **state)
{
	struct exports_state *st = *state;

	if (!st) {
		print_message("# nm not found (binutils): skipped\n");
		skip();
	}
	run_tool("nm", "-D --defined-only", SEGPOOL_SO_PATH, nm_line,
		 &st->syms);
	load_map(&st->map);
	assert_true(st->syms.n > 0);
	return st;
}

static bool is_version_node(const struct mapfile *map, const char *name)
{
	return namelist_find(&map->nodes, name) >= 0;
}

/*
 * Every defined dynamic symbol is a segpool_* name; the only exception is the
 * absolute symbol ld defines for each version node.
 */
static void test_symbols_prefixed(void **state)
{
	struct exports_state *st = load_exports(state);
	unsigned int bad = 0;
	size_t i;

	for (i = 0; i < st->syms.n; i++) {
		const char *name = st->syms.name[i];
		char type = st->syms.type[i];

		if (type == 'A' && is_version_node(&st->map, name))
			continue;
		if (strncmp(name, "segpool_", 8) != 0) {
			print_message("# exported without the segpool_ prefix: "
				      "%s (type %c)\n", name, type);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

/*
 * Each export carries a version node of the map and matches a global pattern.
 */
static void test_symbols_match_map(void **state)
{
	struct exports_state *st = load_exports(state);
	unsigned int bad = 0;
	size_t i, j;

	for (i = 0; i < st->syms.n; i++) {
		const char *name = st->syms.name[i];
		const char *version = st->syms.extra[i];
		bool match = false;

		if (st->syms.type[i] == 'A' && is_version_node(&st->map, name))
			continue;
		for (j = 0; j < st->map.globals.n && !match; j++)
			match = fnmatch(st->map.globals.name[j], name, 0) == 0;
		if (!match) {
			print_message("# %s matches no global pattern of %s\n",
				      name, SEGPOOL_MAP_PATH);
			bad++;
		}
		/* nm of older binutils prints no versions: nothing to check */
		if (version[0] && !is_version_node(&st->map, version)) {
			print_message("# %s has version %s, not a node of %s\n",
				      name, version, SEGPOOL_MAP_PATH);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

/* The entry points every user needs are there, as functions. */
static void test_symbols_required(void **state)
{
	static const char *const required[] = {
		"segpool_cache_create", "segpool_cache_destroy",
		"segpool_cache_alloc", "segpool_cache_free",
		"segpool_malloc", "segpool_free",
		"segpool_stats_dump", "segpool_version",
	};
	struct exports_state *st = load_exports(state);
	unsigned int bad = 0;
	size_t i;

	for (i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		ssize_t k = namelist_find(&st->syms, required[i]);

		if (k < 0) {
			print_message("# not exported: %s\n", required[i]);
			bad++;
		} else if (st->syms.type[k] != 'T' &&
			   st->syms.type[k] != 'i') {
			/* i: the hit-path entry points (core/entry.c) */
			print_message("# %s is exported with type %c, "
				      "not T or i\n",
				      required[i], st->syms.type[k]);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

/* Every SEGPOOL_API declaration of the installed headers is exported. */
static void test_header_api_exported(void **state)
{
	static struct namelist api;
	struct exports_state *st = load_exports(state);
	unsigned int bad = 0;
	size_t i;

	load_headers(&api);
	for (i = 0; i < api.n; i++) {
		if (namelist_find(&st->syms, api.name[i]) < 0) {
			print_message("# declared SEGPOOL_API in %s but not "
				      "exported: %s\n",
				      api.extra[i], api.name[i]);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

/* Every exported segpool_* symbol is declared SEGPOOL_API in a header. */
static void test_symbols_declared(void **state)
{
	static struct namelist api;
	struct exports_state *st = load_exports(state);
	unsigned int bad = 0;
	size_t i;

	load_headers(&api);
	for (i = 0; i < st->syms.n; i++) {
		const char *name = st->syms.name[i];

		if (st->syms.type[i] == 'A' && is_version_node(&st->map, name))
			continue;
		if (namelist_find(&api, name) < 0) {
			print_message("# exported but declared in no header of "
				      "include/segpool/: %s\n", name);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

/* --- the dynamic section -------------------------------------------------- */

struct dynamic_info {
	char soname[NAME_MAX_LEN];
	struct namelist verdefs;	/* names in "Version definitions" */
	bool in_verdefs;
};

/*
 * objdump -p: "  SONAME               libsegpool.so.0", and after the line
 * "Version definitions:" lines "N 0xFLAGS 0xHASH NAME" up to a blank line.
 */
static void objdump_line(char *text, void *arg)
{
	struct dynamic_info *di = arg;
	char name[NAME_MAX_LEN];

	if (sscanf(text, " SONAME %255s", name) == 1) {
		snprintf(di->soname, sizeof(di->soname), "%s", name);
	} else if (!strncmp(text, "Version definitions:", 20)) {
		di->in_verdefs = true;
	} else if (di->in_verdefs) {
		unsigned int idx, flags;
		unsigned long hash;

		if (sscanf(text, "%u 0x%x 0x%lx %255s", &idx, &flags, &hash,
			   name) == 4)
			namelist_add(&di->verdefs, name, NULL, 'V');
		else if (strspn(text, " \t") == strlen(text))
			di->in_verdefs = false;
	}
}

/* readelf -d: "... (SONAME)   Library soname: [libsegpool.so.0]" */
static void readelf_line(char *text, void *arg)
{
	struct dynamic_info *di = arg;
	char *p = strstr(text, "(SONAME)"), *open, *close;

	if (!p)
		return;
	open = strchr(p, '[');
	close = open ? strchr(open, ']') : NULL;
	if (open && close && close - open - 1 < NAME_MAX_LEN)
		snprintf(di->soname, sizeof(di->soname), "%.*s",
			 (int)(close - open - 1), open + 1);
}

/* readelf -V: "  0x001c: Rev: 1  Flags: none  Index: 2  Cnt: 1  Name: NODE" */
static void readelf_verdef_line(char *text, void *arg)
{
	struct dynamic_info *di = arg;
	char *p = strstr(text, "Name: ");

	if (strstr(text, "Version definition section"))
		di->in_verdefs = true;
	else if (strstr(text, "Version needs section") ||
		 strstr(text, "Version symbols section"))
		di->in_verdefs = false;
	else if (di->in_verdefs && p && strstr(text, "Index:"))
		namelist_add(&di->verdefs, p + 6, NULL, 'V');
}

/* The soname is libsegpool.so.MAJOR and the map's version nodes are defined. */
static void test_soname_and_version_nodes(void **state)
{
	static struct dynamic_info di;
	static struct mapfile map;
	size_t i;

	(void)state;
	memset(&di, 0, sizeof(di));
	if (find_tool("objdump")) {
		run_tool("objdump", "-p", SEGPOOL_SO_PATH, objdump_line, &di);
	} else if (find_tool("readelf")) {
		run_tool("readelf", "-d", SEGPOOL_SO_PATH, readelf_line, &di);
		di.in_verdefs = false;
		run_tool("readelf", "-V", SEGPOOL_SO_PATH, readelf_verdef_line,
			 &di);
	} else {
		print_message("# neither objdump nor readelf found: skipped\n");
		skip();
	}
	print_message("# soname: %s\n", di.soname[0] ? di.soname : "(none)");
	assert_string_equal(di.soname, EXPECTED_SONAME);

	load_map(&map);
	for (i = 0; i < map.nodes.n; i++) {
		if (namelist_find(&di.verdefs, map.nodes.name[i]) < 0)
			fail_msg("version node %s of %s is not defined in %s",
				 map.nodes.name[i], SEGPOOL_MAP_PATH,
				 SEGPOOL_SO_PATH);
	}
}

/* --- loading the shared object -------------------------------------------- */

/*
 * RTLD_NODELETE: the library may have started threads or registered fork
 * handlers; it stays mapped after dlclose() so nothing runs unmapped code.
 */
static void *open_library(void)
{
	void *h;

	dlerror();
	h = dlopen(SEGPOOL_SO_PATH, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!h)
		fail_msg("dlopen(%s): %s", SEGPOOL_SO_PATH, dlerror());
	return h;
}

static void *symbol(void *h, const char *name)
{
	void *p;

	dlerror();
	p = dlsym(h, name);
	if (!p)
		fail_msg("dlsym(%s): %s", name, dlerror());
	return p;
}

/* The loaded library, the header and the build agree on the version. */
static void test_dlopen_version(void **state)
{
	const char *(*version)(void);
	const char *base = strrchr(SEGPOOL_SO_PATH, '/');
	void *h;

	(void)state;
	base = base ? base + 1 : SEGPOOL_SO_PATH;
	assert_string_equal(SEGPOOL_VERSION_STRING, CONFIG_SEGPOOL_VERSION);
	assert_string_equal(SEGPOOL_VERSION_STRING, "0.1.0");
	assert_string_equal(base, "libsegpool.so." SEGPOOL_VERSION_STRING);

	h = open_library();
	version = (const char *(*)(void))symbol(h, "segpool_version");
	assert_non_null(version());
	assert_string_equal(version(), SEGPOOL_VERSION_STRING);
	assert_int_equal(dlclose(h), 0);
}

/* A few calls through the shared object; internal functions are not visible. */
static void test_dlopen_calls(void **state)
{
	struct segpool_cache *(*cache_create)(const char *, size_t, size_t,
					      unsigned long, void (*)(void *));
	void *(*cache_alloc)(struct segpool_cache *, unsigned int);
	void (*cache_free)(struct segpool_cache *, void *);
	int (*cache_destroy)(struct segpool_cache *);
	void *(*sp_malloc)(size_t);
	void (*sp_free)(void *);
	struct segpool_cache *cache;
	unsigned char *p, *obj;
	void *h;

	(void)state;
	h = open_library();
	cache_create =
		(__typeof__(cache_create))symbol(h, "segpool_cache_create");
	cache_alloc = (__typeof__(cache_alloc))symbol(h, "segpool_cache_alloc");
	cache_free = (__typeof__(cache_free))symbol(h, "segpool_cache_free");
	cache_destroy =
		(__typeof__(cache_destroy))symbol(h, "segpool_cache_destroy");
	sp_malloc = (__typeof__(sp_malloc))symbol(h, "segpool_malloc");
	sp_free = (__typeof__(sp_free))symbol(h, "segpool_free");

	p = sp_malloc(100);
	assert_non_null(p);
	memset(p, 0xa5, 100);
	assert_int_equal(p[99], 0xa5);
	sp_free(p);

	cache = cache_create("test_symbols_dl", 48, 0, 0, NULL);
	assert_non_null(cache);
	obj = cache_alloc(cache, 0);
	assert_non_null(obj);
	assert_int_equal((uintptr_t)obj % 8, 0);
	memset(obj, 0x5a, 48);
	cache_free(cache, obj);
	assert_int_equal(cache_destroy(cache), 0);

	/* hidden helpers of internal/ must not be reachable */
	dlerror();
	assert_null(dlsym(h, "sp_fault_arm"));
	assert_null(dlsym(h, "sp_bug_at"));
	assert_int_equal(dlclose(h), 0);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test_setup_teardown(test_symbols_prefixed,
					exports_setup, exports_teardown),
	cmocka_unit_test_setup_teardown(test_symbols_match_map,
					exports_setup, exports_teardown),
	cmocka_unit_test_setup_teardown(test_symbols_required,
					exports_setup, exports_teardown),
	cmocka_unit_test_setup_teardown(test_header_api_exported,
					exports_setup, exports_teardown),
	cmocka_unit_test_setup_teardown(test_symbols_declared,
					exports_setup, exports_teardown),
	cmocka_unit_test(test_soname_and_version_nodes),
	cmocka_unit_test(test_dlopen_version),
	cmocka_unit_test(test_dlopen_calls),
};

SP_TEST_MAIN(tests)
