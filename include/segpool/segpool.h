/* SPDX-License-Identifier: MIT */
/*
 * segpool/segpool.h - umbrella header: include this one.
 */
#ifndef SEGPOOL_SEGPOOL_H
#define SEGPOOL_SEGPOOL_H

#include <segpool/compiler.h>
#include <segpool/slab.h>
#include <segpool/numa.h>
#include <segpool/stats.h>
#include <segpool/memory.h>
#include <segpool/export.h>
#include <segpool/debug.h>
#include <segpool/fault.h>
#include <segpool/rcu.h>
#include <segpool/mempool.h>
#include <segpool/sheaf.h>
#include <segpool/arena.h>
#include <segpool/profile.h>

SEGPOOL_BEGIN_DECLS

#define SEGPOOL_VERSION_MAJOR	0
#define SEGPOOL_VERSION_MINOR	1
#define SEGPOOL_VERSION_PATCH	0
#define SEGPOOL_VERSION_STRING	"0.1.0"

/**
 * segpool_version() - the version of the library actually loaded.
 *
 * Return: a string "MAJOR.MINOR.PATCH"; compare with SEGPOOL_VERSION_STRING
 * to detect a header/library mismatch.
 */
SEGPOOL_API const char *segpool_version(void);

SEGPOOL_END_DECLS

/* opt-in: the hit paths inline in the program (segpool/inline.h) */
#ifdef SEGPOOL_INLINE
#include <segpool/inline.h>
#endif

#endif /* SEGPOOL_SEGPOOL_H */
