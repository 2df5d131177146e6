// SPDX-License-Identifier: MIT
/*
 * internal/env.c - read and check SEGPOOL_* variables against the table.
 *
 * The readers run at initialisation (core/init.c), one thread, before any
 * other library thread exists; a variable read again by a later try of a
 * failed initialisation is not reported twice.
 *
 * Every SEGPOOL_* variable is read here (sp_env_get(), sp_env_raw()), so
 * this is the one place that ignores them all in a process that runs with
 * AT_SECURE (setuid, setgid or with file capabilities): its environment is
 * its unprivileged caller's, who could otherwise have it create files,
 * inject faults or print its statistics.  glibc's secure_getenv() makes
 * the same test; getauxval() reads the auxiliary vector, no system call.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/auxv.h>

#include "internal/env.h"
#include "internal/report.h"

static bool sp_env_reported[SP_ENV_NR];

static const char *const sp_env_true[] = { "1", "yes", "on", "true", NULL };
static const char *const sp_env_false[] = { "0", "no", "off", "false", NULL };

void sp_env_escape(const char *s, char *buf, size_t size)
{
	size_t n = 0;

	if (!size)
		return;
	for (; *s && n + 5 < size; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '\n') {
			buf[n++] = '\\';
			buf[n++] = 'n';
		} else if (ch == '\\' || ch == '"') {
			buf[n++] = '\\';
			buf[n++] = (char)ch;
		} else if (ch < 0x20 || ch >= 0x7f) {
			n += (size_t)snprintf(buf + n, size - n, "\\x%02x", ch);
		} else {
			buf[n++] = (char)ch;
		}
	}
	if (*s && n + 4 <= size) {
		memcpy(buf + n, "...", 3);
		n += 3;
	}
	buf[n] = '\0';
}

/* An accepted list this short goes in the message; a longer one is left
 * to the manual, so a message stays within a line or two. */
#define SP_ENV_ACCEPTED_SHORT	48

void sp_env_bad(enum sp_env_id id, const char *value, const char *why)
{
	const struct sp_env_var *v = &sp_env_table[id];
	size_t instead;
	char esc[160];

	if (sp_env_reported[id])
		return;
	sp_env_reported[id] = true;
	sp_env_escape(value, esc, sizeof(esc));
	/* the first clause of @on_bad; the manual says the rest */
	instead = strcspn(v->on_bad, "(");
	while (instead && v->on_bad[instead - 1] == ' ')
		instead--;
	if (strlen(v->accepted) <= SP_ENV_ACCEPTED_SHORT)
		sp_warn("%s=\"%s\": %s (accepted: %s); instead: %.*s; see "
			"segpool(7)",
			v->name, esc, why, v->accepted, (int)instead,
			v->on_bad);
	else
		sp_warn("%s=\"%s\": %s; instead: %.*s; see segpool(7), "
			"ENVIRONMENT",
			v->name, esc, why, (int)instead, v->on_bad);
}

void sp_env_print_settings(void)
{
	for (int id = 0; id < SP_ENV_NR; id++) {
		const struct sp_env_var *v = &sp_env_table[id];
		const char *s = getenv(v->name);
		char esc[160];

		if (s && *s) {
			sp_env_escape(s, esc, sizeof(esc));
			sp_warn("  %s=\"%s\"", v->name, esc);
		} else if (!strncmp(v->def, "unset: ", 7)) {
			sp_warn("  %s unset: %s", v->name, v->def + 7);
		} else {
			sp_warn("  %s unset: default %s", v->name, v->def);
		}
	}
}

static int sp_env_word_index(const char *const *words, const char *s)
{
	for (int i = 0; words[i]; i++)
		if (!strcasecmp(s, words[i]))
			return i;
	return -1;
}

/* Bytes with an optional K/M/G/T suffix; NULL or why not. */
static const char *sp_env_parse_size(const char *s, long long *out)
{
	unsigned long long v, mul = 1;
	char *end;

	if (*s == '-' || *s == '+')
		return "not a size";
	errno = 0;
	v = strtoull(s, &end, 0);
	if (end == s)
		return "not a size";
	if (errno == ERANGE)
		return "too large";
	switch (*end) {
	case 't': case 'T': mul = 1ULL << 40; end++; break;
	case 'g': case 'G': mul = 1ULL << 30; end++; break;
	case 'm': case 'M': mul = 1ULL << 20; end++; break;
	case 'k': case 'K': mul = 1ULL << 10; end++; break;
	default: break;
	}
	if (*end)
		return "trailing characters";
	if (v > (unsigned long long)LLONG_MAX / mul)
		return "too large";
	*out = (long long)(v * mul);
	return NULL;
}

const char *sp_env_parse(const struct sp_env_var *v, const char *s,
			 long long *out)
{
	const char *why;
	char *end;
	int i;

	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return "a control character";
	switch (v->kind) {
	case SP_ENV_BOOL:
		if (sp_env_word_index(sp_env_true, s) >= 0) {
			*out = 1;
			return NULL;
		}
		if (sp_env_word_index(sp_env_false, s) >= 0) {
			*out = 0;
			return NULL;
		}
		return "not a boolean";
	case SP_ENV_WORD:
		i = sp_env_word_index(v->words, s);
		if (i < 0)
			return "not one of the words";
		*out = i;
		return NULL;
	case SP_ENV_INT:
		errno = 0;
		*out = strtoll(s, &end, 10);
		if (end == s || *end)
			return "not an integer";
		if (errno == ERANGE || *out < v->min || *out > v->max)
			return "out of range";
		return NULL;
	case SP_ENV_SIZE:
		why = sp_env_parse_size(s, out);
		if (why)
			return why;
		if (*out < v->min || *out > v->max)
			return "out of range";
		return NULL;
	case SP_ENV_TEXT:
	default:
		*out = 0;
		return NULL;
	}
}

extern char **environ;

bool sp_env_secure(void)
{
	/* -1: not yet decided; 0 or 1 after (racing first calls agree) */
	static int secure = -1;
	int v = __atomic_load_n(&secure, __ATOMIC_RELAXED);
	bool any = false;

	if (likely(v >= 0))
		return v;
	v = getauxval(AT_SECURE) != 0;
	if (v && environ)
		for (char **e = environ; *e && !any; e++)
			any = !strncmp(*e, "SEGPOOL_", 8);
	if (any && __atomic_exchange_n(&secure, v, __ATOMIC_RELAXED) < 0)
		sp_warn("running with AT_SECURE (setuid, setgid or file "
			"capabilities): every SEGPOOL_* variable is ignored");
	else
		__atomic_store_n(&secure, v, __ATOMIC_RELAXED);
	return v;
}

const char *sp_env_raw(const char *name)
{
	return sp_env_secure() ? NULL : getenv(name);
}

const char *sp_env_get(enum sp_env_id id)
{
	const char *s = sp_env_raw(sp_env_table[id].name);

	if (!s || !*s)
		return NULL;
	for (const char *p = s; *p; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			sp_env_bad(id, s, "a control character");
			return NULL;
		}
	}
	return s;
}

/* The value of @id checked as its kind; false when unset or bad. */
static bool sp_env_checked(enum sp_env_id id, long long *out)
{
	const char *s = sp_env_get(id);
	const char *why;

	if (!s)
		return false;
	why = sp_env_parse(&sp_env_table[id], s, out);
	if (why) {
		sp_env_bad(id, s, why);
		return false;
	}
	return true;
}

bool sp_env_bool(enum sp_env_id id, bool def)
{
	long long v;

	return sp_env_checked(id, &v) ? v != 0 : def;
}

int sp_env_word(enum sp_env_id id)
{
	long long v;

	return sp_env_checked(id, &v) ? (int)v : -1;
}

long long sp_env_number(enum sp_env_id id, long long def)
{
	long long v;

	return sp_env_checked(id, &v) ? v : def;
}
