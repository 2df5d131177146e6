/* SPDX-License-Identifier: MIT */
/*
 * internal/env.h - every SEGPOOL_* environment variable the library reads.
 *
 * One table (internal/env_table.c) states each variable once: its name,
 * kind, default, what it accepts, what a bad value leads to, and a help
 * line.  Every reader goes through the calls below, which check the value
 * against the table; the table of Documentation/reference/environment.md is
 * generated from it (make docs; make check-docs fails when they drift).
 *
 * Rules for every variable: unset or empty means the default.  A value
 * with a control character (a newline would break the text dumps) is
 * refused whatever the variable.  Words and booleans are matched without
 * regard to case; booleans accept the same words everywhere: 1 yes on true,
 * 0 no off false.  A bad value gets one short message on stderr naming the
 * variable, the value (escaped) and why, what is accepted when that is
 * short, the stated behaviour (@on_bad: mostly the default, without its
 * parenthesis) and the installed manual, segpool(7), whose ENVIRONMENT
 * section has the rest.  Each variable is reported at most once per
 * process.
 */
#ifndef SP_INTERNAL_ENV_H
#define SP_INTERNAL_ENV_H

#include <stdbool.h>
#include <stddef.h>

#include "internal/compiler.h"

enum sp_env_id {
	SP_ENV_PERCPU,
	SP_ENV_PERCPU_ID,
	SP_ENV_NUMA,
	SP_ENV_NUMA_BIND,
	SP_ENV_NUMA_FAKE_NODES,
	SP_ENV_REGION_SIZE,
	SP_ENV_FREELIST_HARDENED,
	SP_ENV_DEBUG,
	SP_ENV_DEBUG_RESPONSE,
	SP_ENV_FAILSLAB,
	SP_ENV_EXPORT,
	SP_ENV_EXPORT_INTERVAL_MS,
	SP_ENV_STATS_PRINT,
	SP_ENV_STATS_PRINT_FILE,
	SP_ENV_VERBOSE,
	SP_ENV_DECAY_MS,
	SP_ENV_MEMORY_LIMIT,
	SP_ENV_THP,
	SP_ENV_GUARD_SAMPLE,
	SP_ENV_GUARD_SLOTS,
	SP_ENV_HEAP_PROFILE,
	SP_ENV_HEAP_SAMPLE,
	SP_ENV_NR,
};

enum sp_env_kind {
	SP_ENV_BOOL,		/* the boolean words */
	SP_ENV_WORD,		/* one of @words */
	SP_ENV_INT,		/* a decimal integer in [@min, @max] */
	SP_ENV_SIZE,		/* bytes, decimal or 0x,
				 * K/M/G/T suffix, in range */
	SP_ENV_TEXT,		/* parsed by its reader (which reports) */
};

struct sp_env_var {
	const char *name;		/* SEGPOOL_... */
	enum sp_env_kind kind;
	const char *def;		/* the default, as the docs say it */
	const char *accepted;		/* what is accepted, in words */
	const char *on_bad;		/* what a bad value leads to */
	const char *help;		/* one line: what it does */
	const char *const *words;	/* SP_ENV_WORD: NULL-terminated */
	long long min, max;		/* SP_ENV_INT, SP_ENV_SIZE */
	const char *bad_example;	/* a value the reader refuses (tests) */
};

/* Bounds other layers size arrays by: checked there at compile time. */
#define SP_ENV_FAKE_NODES_MAX	8
#define SP_ENV_REGION_MIN	(16LL << 20)
#define SP_ENV_REGION_MAX	(1LL << 40)
#define SP_ENV_DECAY_MS_DEFAULT	1000
#define SP_ENV_DECAY_MS_MAX	3600000
#define SP_ENV_MEMORY_LIMIT_MIN	(1LL << 20)
#define SP_ENV_GUARD_SAMPLE_MAX	(1LL << 30)
#define SP_ENV_GUARD_SLOTS_DEFAULT	256
#define SP_ENV_GUARD_SLOTS_MAX	65536
#define SP_ENV_MEMORY_LIMIT_MAX	(1LL << 40)
#define SP_ENV_HEAP_SAMPLE_MAX	(1LL << 40)

/* --- internal/env_table.c --- */
extern SP_INTERNAL const struct sp_env_var sp_env_table[SP_ENV_NR];

/* --- internal/env.c --- */
/*
 * sp_env_get() - the value of @id, or NULL when unset, empty or refused
 * (a control character: reported).
 */
SP_INTERNAL const char *sp_env_get(enum sp_env_id id);
/*
 * sp_env_raw() - getenv(@name) for a SEGPOOL_* variable outside the table
 * (SEGPOOL_MALLOC_CONF, parsed by its own reader): NULL under AT_SECURE.
 */
SP_INTERNAL const char *sp_env_raw(const char *name);
/*
 * sp_env_secure() - whether the process runs with AT_SECURE (setuid,
 * setgid, file capabilities): then every SEGPOOL_* variable is ignored,
 * said once on stderr when one is set.  The one place that decides.
 */
SP_INTERNAL bool sp_env_secure(void);
/* sp_env_bool() - a SP_ENV_BOOL variable: its value, or @def when unset or
 * bad (reported). */
SP_INTERNAL bool sp_env_bool(enum sp_env_id id, bool def);
/* sp_env_word() - a SP_ENV_WORD variable: the index of its word, or -1
 * when unset or bad (reported). */
SP_INTERNAL int sp_env_word(enum sp_env_id id);
/* sp_env_number() - a SP_ENV_INT or SP_ENV_SIZE variable: its value, or
 * @def when unset or bad (reported). */
SP_INTERNAL long long sp_env_number(enum sp_env_id id, long long def);
/*
 * sp_env_bad() - report @value of @id as bad, because @why: one line
 * naming the variable, the value (escaped), @why, what is accepted and the
 * table's @on_bad.  At most once per variable.
 */
SP_INTERNAL void sp_env_bad(enum sp_env_id id, const char *value,
			    const char *why);
/*
 * sp_env_parse() - check @value against @v's kind without reporting.
 * Return: NULL and *@out set (a bool as 0/1, a word's index, a number), or
 * the reason the value is refused.
 */
SP_INTERNAL const char *sp_env_parse(const struct sp_env_var *v,
				     const char *value, long long *out);
/*
 * sp_env_print_settings() - one line per variable on stderr: its value
 * when set, else its default (SEGPOOL_VERBOSE).
 */
SP_INTERNAL void sp_env_print_settings(void);
/* sp_env_escape() - @s with control and non-ASCII bytes as \n, \xNN, into
 * @buf (cut to @size - 1). */
SP_INTERNAL void sp_env_escape(const char *s, char *buf, size_t size);

#endif /* SP_INTERNAL_ENV_H */
