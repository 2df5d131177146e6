/* SPDX-License-Identifier: MIT */
/*
 * failslab/failslab.h - failslab fault injection (private side).
 */
#ifndef SP_FAILSLAB_FAILSLAB_H
#define SP_FAILSLAB_FAILSLAB_H

#include <stdbool.h>

#include "internal/compiler.h"

struct segpool_cache;
struct segpool_failslab;

/* true while injection is armed: one relaxed load on the alloc paths */
extern SP_INTERNAL bool sp_failslab_on;

static __sp_always_inline bool sp_failslab_active(void)
{
	return unlikely(SP_READ_ONCE(sp_failslab_on));
}

/*
 * sp_should_failslab() - whether this allocation from @c fails; counts it
 * in @c->alloc_failslab when it does.  Call only when sp_failslab_active().
 */
SP_INTERNAL __sp_noinline bool sp_should_failslab(struct segpool_cache *c);
/* Parse a SEGPOOL_FAILSLAB value into @fs.  Return: 0 or -EINVAL. */
SP_INTERNAL int sp_failslab_parse(const char *s, struct segpool_failslab *fs);
/* Arm from SEGPOOL_FAILSLAB, if set (once, at init). */
SP_INTERNAL void sp_failslab_init(void);
/* fork: hold the lock across fork; the child re-initialises it. */
SP_INTERNAL void sp_failslab_fork_lock(void);
SP_INTERNAL void sp_failslab_fork_unlock(void);
SP_INTERNAL void sp_failslab_fork_child(void);

#endif /* SP_FAILSLAB_FAILSLAB_H */
