// SPDX-License-Identifier: MIT
/*
 * malloc/conf.c - SEGPOOL_MALLOC_CONF: the malloc replacement's own options.
 *
 * jemalloc's convention: comma-separated "key:value" pairs, read once at
 * start-up, e.g. SEGPOOL_MALLOC_CONF=stats_print:true,stats_format:json.
 * The library's own knobs stay the SEGPOOL_* variables; these are only what
 * a program that does not know it runs on segpool cannot ask for itself.
 * An unknown key or a bad value is reported on stderr and ignored.
 * sp_pl_conf_opts is the one list of the options: the documentation's table
 * is checked against it (selftests/unit/test_malloc.c).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <segpool/segpool.h>

#include "internal/env.h"
#include "internal/report.h"
#include "malloc/preload.h"
#include "stats/print.h"

#define SP_PL_CONF_ENV	"SEGPOOL_MALLOC_CONF"

const struct sp_pl_conf_opt sp_pl_conf_opts[] = {
	{ "stats_print", "true, false", "false",
	  "print the statistics on stderr when the program exits "
	  "(the library's print at exit; SEGPOOL_STATS_PRINT decides "
	  "when set too)" },
	{ "stats_format", "text, json, detail, health", "text",
	  "what stats_print prints: the slabinfo table "
	  "(segpool_stats_dump()), JSON (segpool_stats_json()), every field "
	  "(segpool_stats_dump_detail()) or the health report "
	  "(segpool_stats_health())" },
};
const size_t sp_pl_conf_nr_opts = SP_ARRAY_SIZE(sp_pl_conf_opts);

enum sp_pl_format { SP_PL_TEXT, SP_PL_JSON, SP_PL_DETAIL, SP_PL_HEALTH };

static bool sp_pl_stats_print;
static enum sp_pl_format sp_pl_stats_format;

/* One "key:value" of @len bytes at @s; false when not understood. */
static bool sp_pl_conf_pair(const char *s, size_t len)
{
	static const char *const formats[] = {
		[SP_PL_TEXT] = "text", [SP_PL_JSON] = "json",
		[SP_PL_DETAIL] = "detail", [SP_PL_HEALTH] = "health",
	};
	const char *colon = memchr(s, ':', len);
	size_t klen, vlen;
	const char *v;

	if (!colon)
		return false;
	klen = (size_t)(colon - s);
	v = colon + 1;
	vlen = len - klen - 1;
#define SP_IS(str, n, lit) ((n) == sizeof(lit) - 1 && !memcmp(str, lit, n))
	if (SP_IS(s, klen, "stats_print")) {
		if (SP_IS(v, vlen, "true"))
			sp_pl_stats_print = true;
		else if (SP_IS(v, vlen, "false"))
			sp_pl_stats_print = false;
		else
			return false;
		return true;
	}
	if (SP_IS(s, klen, "stats_format")) {
		for (size_t i = 0; i < SP_ARRAY_SIZE(formats); i++) {
			if (vlen == strlen(formats[i]) &&
			    !memcmp(v, formats[i], vlen)) {
				sp_pl_stats_format = (enum sp_pl_format)i;
				return true;
			}
		}
		return false;
	}
#undef SP_IS
	return false;
}

void sp_pl_conf_init(void)
{
	const char *env = sp_env_raw(SP_PL_CONF_ENV);
	const char *s = env;

	if (!env)
		return;
	while (*s) {
		size_t len = strcspn(s, ",");

		if (len && !sp_pl_conf_pair(s, len))
			sp_warn(SP_PL_CONF_ENV ": '%.*s' not understood "
				"(see segpool-malloc(7)): ignored",
				(int)len, s);
		s += len;
		if (*s == ',')
			s++;
	}
	/*
	 * The library's print at exit, not one of our own: one knob whether
	 * or not the preload is used, and SEGPOOL_STATS_PRINT, when set too,
	 * decides (stats/print.c) so nothing is printed twice.
	 */
	if (sp_pl_stats_print) {
		static const char *const sections[] = {
			[SP_PL_TEXT] = "slabinfo", [SP_PL_JSON] = "json",
			[SP_PL_DETAIL] = "detail", [SP_PL_HEALTH] = "health",
		};

		sp_stats_print_request(sections[sp_pl_stats_format]);
	}
}
