/* SPDX-License-Identifier: MIT */
/*
 * selftests/lib/json.h - the selftests' one JSON parser: small, strict
 * (RFC 8259), and independent of the library's writer, so a test never
 * trusts the code it checks.  test_stats reads segpool_stats_json() with
 * it; test_json_schema reads both the library's and segpool-top's
 * documents and checks them against Documentation/reference/stats-json.md.
 *
 * Failures are cmocka failures (fail_msg()) naming the byte and the cause.
 */
#ifndef SEGPOOL_SELFTESTS_JSON_H
#define SEGPOOL_SELFTESTS_JSON_H

#include <stdbool.h>

enum jtype { J_OBJ, J_ARR, J_STR, J_NUM, J_BOOL, J_NULL };

struct jval {
	enum jtype type;
	int next;		/* next member of the parent, or -1 */
	int child;		/* first member, or -1 */
	int last;
	char *key;		/* the member's key in an object */
	char *str;		/* J_STR: decoded (UTF-8) */
	unsigned long long num;	/* J_NUM with @integer; J_BOOL: 0 or 1 */
	bool integer;		/* digits only: no sign, fraction or exponent */
};

struct jdoc {
	struct jval *v;
	int n, cap;
	const char *p;
	const char *err;
};

/* Parse @text, which must be one JSON value and nothing else; the root is 0. */
void jparse(struct jdoc *d, const char *text);
void jfree(struct jdoc *d);
/* The member @key of object @obj (fails the test when it is missing). */
int jget(struct jdoc *d, int obj, const char *key);
/* The member, or -1 when there is none. */
int jget_opt(struct jdoc *d, int obj, const char *key);
unsigned long long jnum(struct jdoc *d, int obj, const char *key);
const char *jstr(struct jdoc *d, int obj, const char *key);
bool jbool(struct jdoc *d, int obj, const char *key);
/*
 * The element of array @arr whose @key is the
 * string @want (or, @want NULL, the number @id).
 */
int jfind(struct jdoc *d, int arr, const char *key, const char *want, long id);
/* Every number of the document is an unsigned integer. */
void jcheck_integers(struct jdoc *d);
/* "object", "array", "string", "number", "boolean", "null". */
const char *jtype_name(enum jtype t);

#endif /* SEGPOOL_SELFTESTS_JSON_H */
