/* SPDX-License-Identifier: MIT */
/*
 * core/decay.h - memory that goes back by itself (private).
 */
#ifndef SP_CORE_DECAY_H
#define SP_CORE_DECAY_H

#include <stdint.h>

#include "internal/compiler.h"

/* SEGPOOL_THP, in the order of the option table's words */
enum sp_thp_mode { SP_THP_AUTO, SP_THP_ALWAYS, SP_THP_NEVER };

/* Settings, before the arena exists (core/init.c). */
SP_INTERNAL void sp_decay_settings(void);
/* Start the thread when the delay asks for it (after sp_ready). */
SP_INTERNAL void sp_decay_start(void);
/* fork: the child's thread, started afresh (after the library's child). */
SP_INTERNAL void sp_decay_fork_child(void);

struct sp_decay_stats {
	int64_t decay_ms;		/* the delay; -1 never */
	uint64_t runs;			/* the thread's passes */
	uint64_t caches_released;	/* idle caches drained and shrunk */
	uint64_t memory_limit;		/* bytes; 0 none */
	uint64_t limit_hits;		/* allocations that found it reached */
	uint64_t limit_exceeded;	/* and went past it */
	unsigned int thp;		/* 1 when huge pages are advised */
};
SP_INTERNAL void sp_decay_read(struct sp_decay_stats *st);

#endif /* SP_CORE_DECAY_H */
