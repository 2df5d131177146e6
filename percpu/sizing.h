/* SPDX-License-Identifier: MIT */
/*
 * percpu/sizing.h - use-driven magazine sizing (private): the slow paths
 * report each sizing event, and swaps meet magazines of the cache's class
 * (percpu/sizing.c says how a class grows and shrinks).
 */
#ifndef SP_PERCPU_SIZING_H
#define SP_PERCPU_SIZING_H

#include <stdbool.h>
#include <stdint.h>

#include "internal/compiler.h"
#include "percpu/pcpu.h"

/*
 * sp_size_event() - a trip (@trip) or a swap of loaded and previous on
 * @slot, which the caller owns.  Return: the slot's operations since its
 * previous event.
 */
SP_INTERNAL uint64_t sp_size_event(struct sp_pcpu_cache *pc,
				   struct sp_pcpu_slot *slot, bool trip);
/* sp_trip() - a slow path leaves @slot's two magazines (a sizing event). */
SP_INTERNAL void sp_trip(struct sp_pcpu_cache *pc, struct sp_pcpu_slot *slot);
/* sp_swap_resize() - @m, or a magazine of the current class in its place. */
SP_INTERNAL struct sp_mag *sp_swap_resize(struct sp_pcpu_cache *pc,
					  struct sp_mag *m);
/*
 * sp_swap_center() - after a swap @since operations after the previous
 * event, leave the rounds centred between the two magazines (@alloc: an
 * allocation's swap).
 */
SP_INTERNAL void sp_swap_center(struct sp_pcpu_slot *slot, bool alloc,
				uint64_t since);

#endif /* SP_PERCPU_SIZING_H */
