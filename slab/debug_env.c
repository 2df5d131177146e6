// SPDX-License-Identifier: MIT
/*
 * slab/debug_env.c - SEGPOOL_DEBUG and SEGPOOL_DEBUG_RESPONSE.
 *
 * SEGPOOL_DEBUG, in the manner of the kernel's slub_debug:
 *
 *   SEGPOOL_DEBUG=1                           every check, every cache (a
 *                                             bare slub_debug); 0: none
 *   SEGPOOL_DEBUG=<flags>                     every cache
 *   SEGPOOL_DEBUG=<flags>,<cache>[,<cache>]   the caches named
 *   SEGPOOL_DEBUG=<block>;<block>...          several blocks
 *
 * <flags> are letters: F consistency checks, Z red zones, P poison, U call
 * sites (either case); empty means all four, "-" none.  A <cache> is a name,
 * or a prefix ending in '*' ("kmalloc-*": every size class).  A cache takes
 * the flags of the first block that names it, else those of the last block
 * that names no cache, else none; they add to the flags it was created
 * with.  The library's internal caches (magazines, the large registry) are
 * never affected.  Read once, when the first cache is created (during
 * initialisation).
 *
 * SEGPOOL_DEBUG_RESPONSE=abort|continue sets the response to a bug.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <segpool/debug.h>

#include "internal/env.h"
#include "internal/report.h"
#include "os/os.h"
#include "slab/slab.h"

int sp_debug_response = SEGPOOL_DEBUG_ABORT;

static struct sp_debug_env sp_debug_env_global __sp_big;
static int sp_debug_env_once;		/* sp_os_once() */

static unsigned long sp_debug_letter(char ch)
{
	switch (ch) {
	case 'f': case 'F': return SEGPOOL_CONSISTENCY_CHECKS;
	case 'z': case 'Z': return SEGPOOL_RED_ZONE;
	case 'p': case 'P': return SEGPOOL_POISON;
	case 'u': case 'U': return SEGPOOL_STORE_USER;
	default: return 0;
	}
}

static void sp_debug_skip(struct sp_debug_env *env, const char *why, int *ret)
{
	if (!env->why[0])
		snprintf(env->why, sizeof(env->why), "%s", why);
	*ret = -EINVAL;
}

/* The flags of "<letters>" in [@p, @end); junk is skipped. */
static unsigned long sp_debug_parse_flags(struct sp_debug_env *env,
					  const char *p, const char *end,
					  int *ret)
{
	unsigned long flags = 0;

	if (p == end)
		return SP_CACHE_DEBUG;		/* no letter: all of them */
	for (; p < end; p++) {
		unsigned long f = sp_debug_letter(*p);

		if (*p == '-')
			continue;
		if (!f) {
			char why[sizeof(env->why)];

			/* name it: "FQ" says 'Q', not just "a letter" */
			snprintf(why, sizeof(why), "unknown flag letter '%c'",
				 *p);
			sp_debug_skip(env, why, ret);
		}
		flags |= f;
	}
	return flags;
}

static void sp_debug_add_name(struct sp_debug_env *env, const char *p,
			      const char *end, unsigned long flags, int *ret)
{
	size_t len = (size_t)(end - p);
	bool prefix = len && end[-1] == '*';

	if (prefix)
		len--;
	if (!len && !prefix) {
		return;			/* "ZP,,name": an empty name */
	}
	if (env->nr == SP_DEBUG_ENV_MAX || len > SEGPOOL_CACHE_NAME_MAX) {
		sp_debug_skip(env, len > SEGPOOL_CACHE_NAME_MAX ?
			      "a cache name too long" : "too many cache names",
			      ret);
		return;
	}
	for (size_t i = 0; i < len; i++) {
		if (!isgraph((unsigned char)p[i])) {
			sp_debug_skip(env, "a name no cache can have", ret);
			return;
		}
	}
	env->names[env->nr].flags = flags;
	env->names[env->nr].len = (unsigned int)len;
	env->names[env->nr].prefix = prefix;
	memcpy(env->names[env->nr].name, p, len);
	env->names[env->nr].name[len] = '\0';
	env->nr++;
}

/* A whole value that is a boolean word: 1 every check on every cache. */
static int sp_debug_env_bool(const char *str)
{
	static const char *const on[] = { "1", "yes", "on", "true" };
	static const char *const off[] = { "0", "no", "off", "false" };

	for (size_t i = 0; i < SP_ARRAY_SIZE(on); i++) {
		if (!strcasecmp(str, on[i]))
			return 1;
		if (!strcasecmp(str, off[i]))
			return 0;
	}
	return -1;
}

int sp_debug_env_parse(struct sp_debug_env *env, const char *str)
{
	int ret = 0;

	memset(env, 0, sizeof(*env));
	/* as a bare slub_debug: SEGPOOL_DEBUG=1 is every check, every cache */
	if (str && sp_debug_env_bool(str) >= 0) {
		env->global = sp_debug_env_bool(str) ? SP_CACHE_DEBUG : 0;
		return 0;
	}
	while (str && *str) {
		const char *end = strchrnul(str, ';');
		const char *comma = memchr(str, ',', (size_t)(end - str));
		const char *fend = comma ? comma : end;
		unsigned long flags =
			sp_debug_parse_flags(env, str, fend, &ret);

		if (!comma) {
			env->global = flags;
		} else {
			for (const char *p = comma + 1; p <= end;) {
				const char *q =
					memchr(p, ',', (size_t)(end - p));

				if (!q)
					q = end;
				sp_debug_add_name(env, p, q, flags, &ret);
				p = q + 1;
			}
		}
		str = *end ? end + 1 : end;
	}
	return ret;
}

unsigned long sp_debug_env_flags(const struct sp_debug_env *env,
				 const char *name)
{
	for (unsigned int i = 0; i < env->nr; i++) {
		const char *n = env->names[i].name;

		if (env->names[i].prefix ? !strncmp(name, n, env->names[i].len)
					 : !strcmp(name, n))
			return env->names[i].flags;
	}
	return env->global;
}

/* SEGPOOL_DEBUG as read, for the health report (cut at 47 characters) */
static char sp_debug_env_text[48];

static void sp_debug_env_init(void)
{
	/* no control character in it (refused): the health text shows it */
	const char *s = sp_env_get(SP_ENV_DEBUG);

	/* unset: the global table stays as it is, all zero (and its pages
	 * untouched, in every process) */
	if (s) {
		snprintf(sp_debug_env_text, sizeof(sp_debug_env_text), "%s", s);
		if (sp_debug_env_parse(&sp_debug_env_global, s))
			sp_env_bad(SP_ENV_DEBUG, s, sp_debug_env_global.why);
	}
	/* the table's words: 0 abort, 1 continue */
	if (sp_env_word(SP_ENV_DEBUG_RESPONSE) == 1)
		sp_debug_response = SEGPOOL_DEBUG_CONTINUE;
}

const char *sp_debug_env_string(void)
{
	sp_os_once(&sp_debug_env_once, sp_debug_env_init);
	return sp_debug_env_text;
}

unsigned long sp_debug_cache_flags(const char *name, unsigned long flags)
{
	sp_os_once(&sp_debug_env_once, sp_debug_env_init);
	if (!name || (flags & SP_CACHE_INTERNAL))
		return flags;
	return flags | sp_debug_env_flags(&sp_debug_env_global, name);
}
