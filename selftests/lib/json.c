// SPDX-License-Identifier: MIT
/*
 * selftests/lib/json.c - the selftests' strict JSON parser
 * (selftests/lib/json.h).
 */
#include <stdlib.h>
#include <string.h>

#include "selftests/lib/harness.h"
#include "selftests/lib/json.h"

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond))						\
			fail_msg(__VA_ARGS__);				\
	} while (0)

void jfree(struct jdoc *d)
{
	for (int i = 0; i < d->n; i++) {
		free(d->v[i].key);
		free(d->v[i].str);
	}
	free(d->v);
}

static void jws(struct jdoc *d)
{
	while (*d->p == ' ' || *d->p == '\t' || *d->p == '\n' || *d->p == '\r')
		d->p++;
}

static int jnew(struct jdoc *d, enum jtype t)
{
	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 1024;
		d->v = realloc(d->v, (size_t)d->cap * sizeof(*d->v));
		assert_non_null(d->v);
	}
	memset(&d->v[d->n], 0, sizeof(d->v[0]));
	d->v[d->n].type = t;
	d->v[d->n].next = d->v[d->n].child = d->v[d->n].last = -1;
	return d->n++;
}

static int jhex(const char *p)
{
	int v = 0;

	for (int i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

static size_t jputcp(char *out, unsigned int cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Length of the well-formed UTF-8 sequence at @p, or 0 (independent of the
 * library's: the test must not trust the code it checks). */
static size_t jutf8(const unsigned char *p)
{
	unsigned int cp, n;

	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = p[0] & 0x1fU;
	} else if ((p[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = p[0] & 0x0fU;
	} else if ((p[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = p[0] & 0x07U;
	} else {
		return 0;
	}
	for (unsigned int i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3fU);
	}
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
	    (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* A string at d->p (on its opening quote); decoded and malloc'ed, or NULL. */
static char *jstring(struct jdoc *d)
{
	const char *p = d->p + 1, *q = p;
	char *out, *o;

	/* an upper bound of the decoded length: up to the closing quote */
	while (*q && *q != '"')
		q += q[0] == '\\' && q[1] ? 2 : 1;
	out = malloc((size_t)(q - p) + 1);
	o = out;

	assert_non_null(out);
	for (;;) {
		unsigned char c = (unsigned char)*p;

		if (c == '"')
			break;
		if (c < 0x20) {
			d->err = c ? "control character in a string" :
				     "unterminated string";
			goto bad;
		}
		if (c == '\\') {
			int cp, lo;

			p++;
			switch (*p) {
			case '"': *o++ = '"'; break;
			case '\\': *o++ = '\\'; break;
			case '/': *o++ = '/'; break;
			case 'b': *o++ = '\b'; break;
			case 'f': *o++ = '\f'; break;
			case 'n': *o++ = '\n'; break;
			case 'r': *o++ = '\r'; break;
			case 't': *o++ = '\t'; break;
			case 'u':
				cp = jhex(p + 1);
				if (cp < 0) {
					d->err = "bad \\u escape";
					goto bad;
				}
				p += 4;
				if (cp >= 0xd800 && cp <= 0xdbff) {
					if (p[1] != '\\' || p[2] != 'u' ||
					    (lo = jhex(p + 3)) < 0xdc00 ||
					    lo > 0xdfff) {
						d->err = "lone surrogate";
						goto bad;
					}
					cp = 0x10000 + ((cp - 0xd800) << 10) +
					     (lo - 0xdc00);
					p += 6;
				} else if (cp >= 0xdc00 && cp <= 0xdfff) {
					d->err = "lone surrogate";
					goto bad;
				}
				o += jputcp(o, (unsigned int)cp);
				break;
			default:
				d->err = "bad escape";
				goto bad;
			}
			p++;
			continue;
		}
		if (jutf8((const unsigned char *)p) == 0) {
			d->err = "invalid UTF-8 in a string";
			goto bad;
		}
		for (size_t n = jutf8((const unsigned char *)p); n; n--)
			*o++ = *p++;
	}
	*o = '\0';
	d->p = p + 1;
	return out;
bad:
	free(out);
	return NULL;
}

static int jvalue(struct jdoc *d, int depth);

/* Add @child (with key @key) to container @parent; false on a duplicate key. */
static bool jadd(struct jdoc *d, int parent, int child, char *key)
{
	for (int k = d->v[parent].child; key && k >= 0; k = d->v[k].next)
		if (!strcmp(d->v[k].key, key)) {
			d->err = "duplicate key";
			return false;
		}
	d->v[child].key = key;
	if (d->v[parent].last < 0)
		d->v[parent].child = child;
	else
		d->v[d->v[parent].last].next = child;
	d->v[parent].last = child;
	return true;
}

static int jcontainer(struct jdoc *d, int depth, bool obj)
{
	int me = jnew(d, obj ? J_OBJ : J_ARR);
	char close = obj ? '}' : ']';

	d->p++;
	jws(d);
	if (*d->p == close) {
		d->p++;
		return me;
	}
	for (;;) {
		char *key = NULL;
		int child;

		jws(d);
		if (obj) {
			if (*d->p != '"') {
				d->err = "object key expected";
				return -1;
			}
			key = jstring(d);
			if (!key)
				return -1;
			jws(d);
			if (*d->p != ':') {
				free(key);
				d->err = "':' expected";
				return -1;
			}
			d->p++;
		}
		child = jvalue(d, depth + 1);
		if (child < 0 || !jadd(d, me, child, key)) {
			free(key);
			return -1;
		}
		jws(d);
		if (*d->p == ',') {
			d->p++;
			continue;
		}
		if (*d->p == close) {
			d->p++;
			return me;
		}
		d->err = "',' or the closing bracket expected";
		return -1;
	}
}

static int jnumber(struct jdoc *d)
{
	const char *p = d->p;
	int me = jnew(d, J_NUM);
	bool integer = true;
	unsigned long long v = 0;

	if (*p == '-') {
		integer = false;
		p++;
	}
	if (*p == '0') {
		p++;
	} else if (*p >= '1' && *p <= '9') {
		while (*p >= '0' && *p <= '9') {
			unsigned long long nv =
				v * 10 + (unsigned long long)(*p - '0');

			if (nv / 10 != v)
				integer = false;	/* does not fit */
			v = nv;
			p++;
		}
	} else {
		d->err = "bad number";
		return -1;
	}
	if (*p == '.') {
		integer = false;
		if (!(*++p >= '0' && *p <= '9')) {
			d->err = "bad fraction";
			return -1;
		}
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		integer = false;
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!(*p >= '0' && *p <= '9')) {
			d->err = "bad exponent";
			return -1;
		}
		while (*p >= '0' && *p <= '9')
			p++;
	}
	/* v was accumulated for digits only: it is the value when integer */
	if (integer && d->p[0] == '0' && d->p + 1 != p)
		integer = false;
	d->v[me].num = v;
	d->v[me].integer = integer;
	d->p = p;
	return me;
}

static int jvalue(struct jdoc *d, int depth)
{
	int me;

	if (depth > 32) {
		d->err = "nested too deep";
		return -1;
	}
	jws(d);
	switch (*d->p) {
	case '{': return jcontainer(d, depth, true);
	case '[': return jcontainer(d, depth, false);
	case '"': {
		char *s = jstring(d);

		if (!s)
			return -1;
		me = jnew(d, J_STR);
		d->v[me].str = s;
		return me;
	}
	case 't': case 'f': case 'n': {
		static const char *const words[] = { "true", "false", "null" };

		for (int i = 0; i < 3; i++) {
			size_t l = strlen(words[i]);

			if (!strncmp(d->p, words[i], l)) {
				d->p += l;
				me = jnew(d, i == 2 ? J_NULL : J_BOOL);
				d->v[me].num = i == 0;
				return me;
			}
		}
		d->err = "bad literal";
		return -1;
	}
	default:
		return jnumber(d);
	}
}

/* Parse @text, which must be one JSON value and nothing else. */
void jparse(struct jdoc *d, const char *text)
{
	int root;

	memset(d, 0, sizeof(*d));
	d->p = text;
	root = jvalue(d, 0);
	if (root >= 0) {
		jws(d);
		if (*d->p)
			d->err = "text after the value";
	}
	CHECK(root == 0 && !d->err, "invalid JSON at byte %ld: %s",
	      (long)(d->p - text), d->err ? d->err : "?");
}

int jget(struct jdoc *d, int obj, const char *key)
{
	CHECK(obj >= 0 && d->v[obj].type == J_OBJ, "not an object (key %s)",
	      key);
	for (int k = d->v[obj].child; k >= 0; k = d->v[k].next)
		if (!strcmp(d->v[k].key, key))
			return k;
	fail_msg("JSON key %s missing", key);
	return -1;
}

unsigned long long jnum(struct jdoc *d, int obj, const char *key)
{
	int k = jget(d, obj, key);

	CHECK(d->v[k].type == J_NUM && d->v[k].integer,
	      "JSON key %s is not an unsigned integer", key);
	return d->v[k].num;
}

const char *jstr(struct jdoc *d, int obj, const char *key)
{
	int k = jget(d, obj, key);

	CHECK(d->v[k].type == J_STR, "JSON key %s is not a string", key);
	return d->v[k].str;
}

bool jbool(struct jdoc *d, int obj, const char *key)
{
	int k = jget(d, obj, key);

	CHECK(d->v[k].type == J_BOOL, "JSON key %s is not true/false", key);
	return d->v[k].num != 0;
}

/* The element of array @arr whose "name" (or "node", "cpu") is @want. */
int jfind(struct jdoc *d, int arr, const char *key, const char *want,
		 long id)
{
	CHECK(d->v[arr].type == J_ARR, "not an array");
	for (int k = d->v[arr].child; k >= 0; k = d->v[k].next) {
		int m = jget(d, k, key);

		if (want && d->v[m].type == J_STR && !strcmp(d->v[m].str, want))
			return k;
		if (!want && d->v[m].type == J_NUM && d->v[m].integer &&
		    (long)d->v[m].num == id)
			return k;
	}
	return -1;
}

/* Every number of the document is an integer without sign (but node -1). */
void jcheck_integers(struct jdoc *d)
{
	for (int i = 0; i < d->n; i++)
		CHECK(d->v[i].type != J_NUM || d->v[i].integer,
		      "a number that is not an unsigned integer (key %s)",
		      d->v[i].key ? d->v[i].key : "-");
}

int jget_opt(struct jdoc *d, int obj, const char *key)
{
	if (obj < 0 || d->v[obj].type != J_OBJ)
		return -1;
	for (int k = d->v[obj].child; k >= 0; k = d->v[k].next)
		if (!strcmp(d->v[k].key, key))
			return k;
	return -1;
}

const char *jtype_name(enum jtype t)
{
	static const char *const names[] = {
		[J_OBJ] = "object", [J_ARR] = "array", [J_STR] = "string",
		[J_NUM] = "number", [J_BOOL] = "boolean", [J_NULL] = "null",
	};

	return names[t];
}
