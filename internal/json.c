// SPDX-License-Identifier: MIT
/*
 * internal/json.c - the one JSON writer (internal/json.h says who uses it).
 *
 * Compiled into the library and linked into the tools as well, so it uses
 * nothing but the C library's string functions and the caller's sink.
 */
#include <stdio.h>
#include <string.h>

#include "internal/json.h"

static void sp_json_put(struct sp_json *j, const char *s)
{
	j->sink(j->arg, s, strlen(s));
}

void sp_json_init(struct sp_json *j, sp_json_sink_fn sink, void *arg)
{
	memset(j, 0, sizeof(*j));
	j->sink = sink;
	j->arg = arg;
	j->depth = -1;
}

/* Length of the well-formed UTF-8 sequence at @p (RFC 3629), or 0. */
static size_t sp_utf8_len(const unsigned char *p)
{
	unsigned char c = p[0], lo = 0x80, hi = 0xbf;
	size_t n;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	/* the second byte's range excludes overlongs and surrogates */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

void sp_json_escape(sp_json_sink_fn sink, void *arg, const char *str)
{
	const unsigned char *p = (const unsigned char *)(str ? str : "");
	const unsigned char *run = p;	/* bytes copied as they are */

	sink(arg, "\"", 1);
	while (*p) {
		unsigned char c = *p;
		char esc[8];
		size_t n;

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			p++;
			continue;
		}
		if (c >= 0x80 && (n = sp_utf8_len(p)) != 0) {
			p += n;
			continue;
		}
		if (p > run)
			sink(arg, (const char *)run, (size_t)(p - run));
		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			esc[2] = '\0';
		} else if (c == '\n') {
			strcpy(esc, "\\n");
		} else if (c == '\t') {
			strcpy(esc, "\\t");
		} else if (c < 0x80) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
		} else {
			strcpy(esc, "\\ufffd");
		}
		sink(arg, esc, strlen(esc));
		run = ++p;
	}
	if (p > run)
		sink(arg, (const char *)run, (size_t)(p - run));
	sink(arg, "\"", 1);
}

static void sp_json_indent(struct sp_json *j)
{
	sp_json_put(j, "\n");
	for (int i = 0; i <= j->depth; i++)
		sp_json_put(j, "  ");
}

/* Before a member: the comma, the line break and indentation, the key. */
static void sp_json_member(struct sp_json *j, const char *key)
{
	if (j->depth < 0)
		return;
	if (j->items[j->depth])
		sp_json_put(j, ",");
	j->items[j->depth] = true;
	if (j->compact[j->depth])
		sp_json_put(j, " ");
	else
		sp_json_indent(j);
	if (key) {
		sp_json_escape(j->sink, j->arg, key);
		sp_json_put(j, ": ");
	}
}

void sp_json_open(struct sp_json *j, const char *key, char bracket,
		  bool compact)
{
	char b[2] = { bracket, '\0' };

	if (j->depth + 1 >= SP_JSON_MAX_DEPTH)
		return;			/* the documents written are shallow */
	sp_json_member(j, key);
	sp_json_put(j, b);
	j->depth++;
	j->items[j->depth] = false;
	j->compact[j->depth] = compact || (j->depth > 0 &&
					   j->compact[j->depth - 1]);
	j->closer[j->depth] = bracket == '[' ? ']' : '}';
}

void sp_json_close(struct sp_json *j)
{
	char b[2] = { '\0', '\0' };
	bool had, compact;

	if (j->depth < 0)
		return;
	b[0] = j->closer[j->depth];
	had = j->items[j->depth];
	compact = j->compact[j->depth];
	j->depth--;
	if (had && compact)
		sp_json_put(j, " ");
	else if (had)
		sp_json_indent(j);
	sp_json_put(j, b);
}

void sp_json_raw(struct sp_json *j, const char *key, const char *text)
{
	sp_json_member(j, key);
	sp_json_put(j, text);
}

void sp_json_u64(struct sp_json *j, const char *key, uint64_t v)
{
	char num[24];

	snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
	sp_json_raw(j, key, num);
}

void sp_json_int(struct sp_json *j, const char *key, long long v)
{
	char num[24];

	snprintf(num, sizeof(num), "%lld", v);
	sp_json_raw(j, key, num);
}

void sp_json_bool(struct sp_json *j, const char *key, bool v)
{
	sp_json_raw(j, key, v ? "true" : "false");
}

void sp_json_null(struct sp_json *j, const char *key)
{
	sp_json_raw(j, key, "null");
}

void sp_json_str(struct sp_json *j, const char *key, const char *v)
{
	sp_json_member(j, key);
	sp_json_escape(j->sink, j->arg, v);
}

void sp_json_end(struct sp_json *j)
{
	while (j->depth >= 0)
		sp_json_close(j);
	sp_json_put(j, "\n");
}
