/* SPDX-License-Identifier: MIT */
/*
 * internal/json.h - the one JSON writer: the library's statistics
 * (stats/json.c) and segpool-top's --json (tools/segpool-top/json.c) both
 * write through it, so there is one string escaper and one layout of
 * commas and indentation.
 *
 * The writer knows nothing of where the text goes: it hands every piece to
 * a sink callback (the library's formats into its page-backed buffer under
 * the cache-list lock, the tools' write to a FILE).  It allocates nothing.
 */
#ifndef SP_INTERNAL_JSON_H
#define SP_INTERNAL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal/compiler.h"

/*
 * SP_JSON_SCHEMA - the "schema" number of the statistics document that the
 * library and segpool-top both write (Documentation/reference/stats-json.md
 * lists every key).  It changes when a key changes meaning, type or unit, or
 * goes away; keys may be added without a change.
 */
#define SP_JSON_SCHEMA		2

#define SP_JSON_MAX_DEPTH	16

/* Takes @n bytes at @s (not NUL-terminated). */
typedef void (*sp_json_sink_fn)(void *arg, const char *s, size_t n);

/*
 * struct sp_json - a writer that places the commas and the indentation.
 * Containers opened "compact" keep their members on one line (and so do
 * the containers inside them).
 */
struct sp_json {
	sp_json_sink_fn sink;
	void *arg;
	int depth;				/* -1: nothing open */
	bool items[SP_JSON_MAX_DEPTH];		/* the container has a member */
	bool compact[SP_JSON_MAX_DEPTH];
	char closer[SP_JSON_MAX_DEPTH];		/* '}' or ']' */
};

SP_INTERNAL void sp_json_init(struct sp_json *j, sp_json_sink_fn sink,
			      void *arg);

/*
 * sp_json_escape() - @str as a JSON string, quotes included: '"' and '\'
 * escaped, \n and \t by name, other control bytes and DEL as \u00XX,
 * well-formed UTF-8 (RFC 3629) as it is and every byte that is not as
 * \ufffd.
 */
SP_INTERNAL void sp_json_escape(sp_json_sink_fn sink, void *arg,
				const char *str);

/* Open an object ('{') or array ('['); @key is NULL inside an array. */
SP_INTERNAL void sp_json_open(struct sp_json *j, const char *key,
			      char bracket, bool compact);
/* Close the innermost object or array. */
SP_INTERNAL void sp_json_close(struct sp_json *j);
SP_INTERNAL void sp_json_u64(struct sp_json *j, const char *key, uint64_t v);
SP_INTERNAL void sp_json_int(struct sp_json *j, const char *key, long long v);
SP_INTERNAL void sp_json_bool(struct sp_json *j, const char *key, bool v);
SP_INTERNAL void sp_json_str(struct sp_json *j, const char *key,
			     const char *v);
SP_INTERNAL void sp_json_null(struct sp_json *j, const char *key);
/* A number already formatted (a double the caller rounded, say). */
SP_INTERNAL void sp_json_raw(struct sp_json *j, const char *key,
			     const char *text);
/* Close whatever is still open and end the document with a newline. */
SP_INTERNAL void sp_json_end(struct sp_json *j);

#endif /* SP_INTERNAL_JSON_H */
