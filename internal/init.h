/* SPDX-License-Identifier: MIT */
/*
 * internal/init.h - the library's start-up, as every layer sees it
 * (private).
 *
 * Any public call may be the first one, before the constructor has run (a
 * call from another library's constructor, or the preload's first malloc),
 * so every folder's public entry points start the library themselves.  The
 * words and the declaration are here, at the bottom of the layers, so that
 * no folder includes upwards for them; the start-up itself is the top
 * layer's (core/init.c), which alone knows every layer to set up.
 */
#ifndef SP_INTERNAL_INIT_H
#define SP_INTERNAL_INIT_H

#include <stdbool.h>

#include "internal/compiler.h"

extern SP_INTERNAL bool sp_ready;
/*
 * The end of the one start-up failure message (core/init.c): what calls do
 * until a later try succeeds.  Set before the first call by a layer that
 * serves them otherwise (the malloc layer's bootstrap area).
 */
extern SP_INTERNAL const char *sp_init_meanwhile;

SP_INTERNAL int sp_init_slow(void);

/*
 * sp_init() - make sure the library is initialised (normally done by a
 * constructor before main).  Return: 0, or -ENOMEM when the space or the
 * size classes could not be set up.
 */
static inline int sp_init(void)
{
	if (likely(__atomic_load_n(&sp_ready, __ATOMIC_ACQUIRE)))
		return 0;
	return sp_init_slow();
}

#endif /* SP_INTERNAL_INIT_H */
