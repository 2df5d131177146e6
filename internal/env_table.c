// SPDX-License-Identifier: MIT
/*
 * internal/env_table.c - the SEGPOOL_* environment variables, each once.
 *
 * Documentation/reference/environment.md's table is generated from this file
 * (scripts/gen-env-doc.c, make docs).  Keep it free of other dependencies:
 * the generator compiles it alone.
 */
#include <segpool/export.h>

#include "internal/env.h"

#define STR_(x)	#x
#define STR(x)	STR_(x)

static const char *const sp_env_percpu_words[] = { "rseq", "lock", "off",
						   NULL };
static const char *const sp_env_percpu_id_words[] = { "cpu", "mm_cid", NULL };
static const char *const sp_env_bind_words[] = {
	"auto", "always", "never", NULL,
};
static const char *const sp_env_response_words[] = { "abort", "continue",
						     NULL };
/* in the order of enum sp_thp_mode (core/decay.h) */
static const char *const sp_env_thp_words[] = {
	"auto", "always", "never", NULL,
};

_Static_assert(SEGPOOL_EXPORT_INTERVAL_DEFAULT == 1000 &&
	       SEGPOOL_EXPORT_INTERVAL_MIN == 10 &&
	       SEGPOOL_EXPORT_INTERVAL_MAX == 3600000,
	       "SEGPOOL_EXPORT_INTERVAL_MS: the table's words");

const struct sp_env_var sp_env_table[SP_ENV_NR] = {
	[SP_ENV_PERCPU] = {
		.name = "SEGPOOL_PERCPU", .kind = SP_ENV_WORD,
		.words = sp_env_percpu_words,
		.def = "rseq where the kernel, libc and architecture allow, "
		       "else lock (lock in a ThreadSanitizer build)",
		.accepted = "rseq, lock or off",
		.on_bad = "the default mode",
		.help = "the per-CPU mode: restartable sequences, "
			"per-CPU spinlocks, or no per-CPU layer; "
			"segpool_percpu_mode() says which and why "
			"(guide/tuning.md)",
	},
	[SP_ENV_PERCPU_ID] = {
		.name = "SEGPOOL_PERCPU_ID", .kind = SP_ENV_WORD,
		.words = sp_env_percpu_id_words,
		.def = "cpu",
		.accepted = "cpu or mm_cid",
		.on_bad = "slots by CPU id",
		.help = "in rseq mode, index the CPU slots by the kernel's "
			"concurrency id (mm_cid) instead of the CPU id, "
			"when the kernel provides it",
	},
	[SP_ENV_NUMA] = {
		.name = "SEGPOOL_NUMA", .kind = SP_ENV_BOOL,
		.def = "on",
		.accepted = "a boolean: 1 yes on true, 0 no off false",
		.on_bad = "NUMA-aware, the default",
		.help = "off: one node whatever the machine has "
			"(guide/tuning.md)",
	},
	[SP_ENV_NUMA_BIND] = {
		.name = "SEGPOOL_NUMA_BIND", .kind = SP_ENV_WORD,
		.words = sp_env_bind_words,
		.def = "auto",
		.accepted = "auto, always or never (or a boolean: "
			    "true for always, false for never)",
		.on_bad = "auto, the default",
		.help = "when regions and large mappings are bound to their "
			"node (mbind): auto binds on machines with more than "
			"one node (guide/tuning.md)",
	},
	[SP_ENV_NUMA_FAKE_NODES] = {
		.name = "SEGPOOL_NUMA_FAKE_NODES", .kind = SP_ENV_INT,
		.min = 2, .max = SP_ENV_FAKE_NODES_MAX,
		.def = "unset: the machine's nodes",
		.accepted = "an integer from 2 to " STR(SP_ENV_FAKE_NODES_MAX),
		.on_bad = "no emulation: the machine's nodes",
		.help = "emulate that many nodes on this machine's memory, "
			"for tests (internals/numa.md)",
	},
	[SP_ENV_REGION_SIZE] = {
		.name = "SEGPOOL_REGION_SIZE", .kind = SP_ENV_SIZE,
		.min = SP_ENV_REGION_MIN, .max = SP_ENV_REGION_MAX,
		.def = "32G",
		.accepted = "bytes from 16M to 1T, decimal or 0x hex, "
			    "with an optional K, M, G or T suffix",
		.on_bad = "the default, 32G",
		.help = "the address space reserved for each node's region, "
			"rounded up to a power of two; "
			"halved until the reservation fits, down to 16M; "
			"under a soft address-space limit (ulimit -v) no more "
			"than half of what the limit leaves, down to 4M",
	},
	[SP_ENV_FREELIST_HARDENED] = {
		.name = "SEGPOOL_FREELIST_HARDENED", .kind = SP_ENV_BOOL,
		.def = "on",
		.accepted = "a boolean: 1 yes on true, 0 no off false",
		.on_bad = "hardening stays on",
		.help = "store free-list links encoded and check them "
			"(internals/hardening.md)",
	},
	[SP_ENV_DEBUG] = {
		.name = "SEGPOOL_DEBUG", .kind = SP_ENV_TEXT,
		.def = "unset: no debug flags",
		.accepted = "1 (every check on every cache, "
			    "as a bare slub_debug), 0, "
			    "or <letters>[,<cache>...][;...], "
			    "letters F Z P U or -, cache names of printable "
			    "characters up to 63 bytes, "
			    "a '*' at the end for a prefix",
		.on_bad = "the parts understood apply, "
			  "the rest is skipped (a value with a control "
			  "character is refused whole: no debug flags)",
		.help = "debug flags for every cache or the caches named; "
			"1 (or yes, on, true) turns every check on for every "
			"cache, 0 (no, off, false) none (guide/debugging.md)",
		.bad_example = "FQ",
	},
	[SP_ENV_DEBUG_RESPONSE] = {
		.name = "SEGPOOL_DEBUG_RESPONSE", .kind = SP_ENV_WORD,
		.words = sp_env_response_words,
		.def = "abort",
		.accepted = "abort or continue",
		.on_bad = "abort, the default",
		.help = "what a debug cache does after a report "
			"(guide/debugging.md)",
	},
	[SP_ENV_FAILSLAB] = {
		.name = "SEGPOOL_FAILSLAB", .kind = SP_ENV_TEXT,
		.def = "unset: no fault injection",
		.accepted = "probability=P,interval=N,times=N,space=B,"
			    "cache=NAME,verbose=1,seed=S or "
			    "<interval>,<probability>,<space>,<times>, "
			    "with NAME a possible cache name",
		.on_bad = "none: no fault injection",
		.help = "failslab fault injection (guide/debugging.md)",
		.bad_example = "probability=50,cache=no such name",
	},
	[SP_ENV_EXPORT] = {
		.name = "SEGPOOL_EXPORT", .kind = SP_ENV_BOOL,
		.def = "off",
		.accepted = "a boolean: 1 yes on true, 0 no off false",
		.on_bad = "not exporting",
		.help = "publish live statistics in shared memory for "
			"segpool-top (guide/statistics.md)",
	},
	[SP_ENV_EXPORT_INTERVAL_MS] = {
		.name = "SEGPOOL_EXPORT_INTERVAL_MS", .kind = SP_ENV_INT,
		.min = SEGPOOL_EXPORT_INTERVAL_MIN,
		.max = SEGPOOL_EXPORT_INTERVAL_MAX,
		.def = "1000",
		.accepted = "milliseconds, an integer from 10 to 3600000",
		.on_bad = "the default, 1000",
		.help = "with SEGPOOL_EXPORT, how often the statistics are "
			"published",
	},
	[SP_ENV_STATS_PRINT] = {
		.name = "SEGPOOL_STATS_PRINT", .kind = SP_ENV_TEXT,
		.def = "unset: nothing printed at exit",
		.accepted = "comma-separated slabinfo, health, detail, percpu, "
			    "unused, or json (with percpu at most); "
			    "all (or 1) for the three text sections; "
			    "0 for nothing",
		.on_bad = "nothing printed at exit",
		.help = "print those sections of the statistics when the "
			"process exits, after the totals, "
			"caches that never held an object folded on one line "
			"(unused lists them); SEGPOOL_MALLOC_CONF=stats_print "
			"asks for the same print, and this decides when both "
			"are set (guide/statistics.md)",
		.bad_example = "slabinfo,bogus",
	},
	[SP_ENV_STATS_PRINT_FILE] = {
		.name = "SEGPOOL_STATS_PRINT_FILE", .kind = SP_ENV_TEXT,
		.def = "standard error",
		.accepted = "a path (%p the pid, %% a %), "
			    "or - for standard error; "
			    "a new file (mode 0600) or one of the caller's "
			    "own, replaced; a symbolic link, "
			    "a FIFO or another user's file is refused "
			    "(standard error is used)",
		.on_bad = "nothing printed at exit",
		.help = "where SEGPOOL_STATS_PRINT prints",
		.bad_example = "/tmp/%q",
	},
	[SP_ENV_VERBOSE] = {
		.name = "SEGPOOL_VERBOSE", .kind = SP_ENV_BOOL,
		.def = "off",
		.accepted = "a boolean: 1 yes on true, 0 no off false",
		.on_bad = "quiet",
		.help = "print the settings in force at start-up on standard "
			"error: every variable's value or default, "
			"then the per-CPU mode and the nodes, "
			"as MIMALLOC_VERBOSE and jemalloc's confirm_conf do",
	},
	[SP_ENV_DECAY_MS] = {
		.name = "SEGPOOL_DECAY_MS", .kind = SP_ENV_INT,
		.min = -1, .max = SP_ENV_DECAY_MS_MAX,
		.def = STR(SP_ENV_DECAY_MS_DEFAULT)
		       " (-1 in a ThreadSanitizer build: there a fork child "
		       "of a threaded process cannot start threads)",
		.accepted = "milliseconds, an integer from -1 to "
			    STR(SP_ENV_DECAY_MS_MAX) ": 0 gives free pages "
			    "back at once, -1 never (no background thread)",
		.on_bad = "the default",
		.help = "how long free pages, idle magazines and empty slabs "
			"stay resident before a background thread gives them "
			"back to the OS (guide/tuning.md); "
			"segpool_set_decay_ms() changes it",
	},
	[SP_ENV_MEMORY_LIMIT] = {
		.name = "SEGPOOL_MEMORY_LIMIT", .kind = SP_ENV_SIZE,
		.min = SP_ENV_MEMORY_LIMIT_MIN, .max = SP_ENV_MEMORY_LIMIT_MAX,
		.def = "unset: no limit",
		.accepted = "bytes from 1M to 1T, decimal or 0x hex, "
			    "with an optional K, M, G or T suffix",
		.on_bad = "no limit",
		.help = "a soft limit on the memory the regions commit: "
			"past it segpool gives free memory back before it "
			"commits more, and still allocates if that did not "
			"help (guide/tuning.md); segpool_set_memory_limit() "
			"changes it",
	},
	[SP_ENV_THP] = {
		.name = "SEGPOOL_THP", .kind = SP_ENV_WORD,
		.words = sp_env_thp_words,
		.def = "auto",
		.accepted = "auto, always or never",
		.on_bad = "auto, the default",
		.help = "transparent huge pages for the regions' slab memory: "
			"auto advises them (MADV_HUGEPAGE) when the kernel's "
			"mode is madvise, for memory that stayed committed 2 s "
			"or under a block of 16 MiB or more, and for all of a "
			"node's region once it reaches 256 MiB (at once with "
			"SEGPOOL_DECAY_MS=-1), always at once whatever the "
			"mode, never refuses them (MADV_NOHUGEPAGE) "
			"(guide/tuning.md)",
		.bad_example = "sometimes",
	},
	[SP_ENV_GUARD_SAMPLE] = {
		.name = "SEGPOOL_GUARD_SAMPLE", .kind = SP_ENV_INT,
		.min = 1, .max = SP_ENV_GUARD_SAMPLE_MAX,
		.def = "unset: no guarded objects",
		.accepted = "an integer from 1 to 1073741824",
		.on_bad = "no guarded objects",
		.help = "place one in N allocations that reach the slow path "
			"(a magazine refill, a cache without magazines) in a "
			"slot of its own beside guard pages, "
			"which catch an overflow, an underflow or a use after "
			"free (guide/debugging.md)",
		.bad_example = "0",
	},
	[SP_ENV_GUARD_SLOTS] = {
		.name = "SEGPOOL_GUARD_SLOTS", .kind = SP_ENV_INT,
		.min = 1, .max = SP_ENV_GUARD_SLOTS_MAX,
		.def = "256",
		.accepted = "an integer from 1 to 65536",
		.on_bad = "the default, 256",
		.help = "with SEGPOOL_GUARD_SAMPLE, "
			"the slots of the guard pool, one page each, "
			"reserved at start-up with a guard page between two "
			"(guide/debugging.md)",
		.bad_example = "lots",
	},
	[SP_ENV_HEAP_PROFILE] = {
		.name = "SEGPOOL_HEAP_PROFILE", .kind = SP_ENV_TEXT,
		.def = "unset: no sampling",
		.accepted = "a path (%p the pid, %% a %) where the process may "
			    "write a new file or replace one of the caller's "
			    "own; a symbolic link, a FIFO or another user's "
			    "file is refused",
		.on_bad = "no sampling, nothing written",
		.help = "turn sampled heap profiling on and write the profile "
			"there at exit, in gperftools' heap-profile format "
			"(google-pprof --text PROGRAM FILE); "
			"segpool_heap_profile_dump() writes one on demand "
			"(guide/debugging.md)",
		.bad_example = "/tmp/%q",
	},
	[SP_ENV_HEAP_SAMPLE] = {
		.name = "SEGPOOL_HEAP_SAMPLE", .kind = SP_ENV_SIZE,
		.min = 1, .max = SP_ENV_HEAP_SAMPLE_MAX,
		.def = "512K",
		.accepted = "bytes, from 1 to 1T (K, M, G, T suffixes)",
		.on_bad = "no sampling (SEGPOOL_HEAP_PROFILE is then ignored)",
		.help = "with SEGPOOL_HEAP_PROFILE, the mean bytes allocated "
			"between two samples",
		.bad_example = "0",
	},
};
