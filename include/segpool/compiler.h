/* SPDX-License-Identifier: MIT */
/*
 * segpool/compiler.h - export and attribute macros of the public API.
 *
 * Only what the installed headers need; the library's own helpers live in
 * internal/compiler.h.  Hermetic: includes nothing.
 */
#ifndef SEGPOOL_COMPILER_H
#define SEGPOOL_COMPILER_H

#if defined(__GNUC__) || defined(__clang__)
#define SEGPOOL_API		__attribute__((visibility("default")))
#define SEGPOOL_MALLOC		__attribute__((malloc))
#define SEGPOOL_ALLOC_SIZE(n)	__attribute__((alloc_size(n)))
#define SEGPOOL_ALLOC_SIZE2(n, m) __attribute__((alloc_size(n, m)))
#define SEGPOOL_ALLOC_ALIGN(n)	__attribute__((alloc_align(n)))
#define SEGPOOL_WUR		__attribute__((warn_unused_result))
#else
#define SEGPOOL_API
#define SEGPOOL_MALLOC
#define SEGPOOL_ALLOC_SIZE(n)
#define SEGPOOL_ALLOC_SIZE2(n, m)
#define SEGPOOL_ALLOC_ALIGN(n)
#define SEGPOOL_WUR
#endif

/*
 * C and C++ (C++11 and later) spell these two differently; a macro of the
 * public headers that needs one goes through these.
 */
#ifdef __cplusplus
#define SEGPOOL_BEGIN_DECLS	extern "C" {
#define SEGPOOL_END_DECLS	}
#define SEGPOOL_ALIGNOF(type)	alignof(type)
#define SEGPOOL_STATIC_ASSERT(expr, msg) static_assert(expr, msg)
#else
#define SEGPOOL_BEGIN_DECLS
#define SEGPOOL_END_DECLS
#define SEGPOOL_ALIGNOF(type)	_Alignof(type)
#define SEGPOOL_STATIC_ASSERT(expr, msg) _Static_assert(expr, msg)
#endif

/*
 * SEGPOOL_FLEX_ARRAY() - a trailing array member of unstated length, with
 * its semicolon (use it without one).  C99
 * has it; C++ has none, so there it is the GNU extension, its -pedantic
 * warning silenced for that one member.
 */
#ifdef __cplusplus
#define SEGPOOL_FLEX_ARRAY(type, name)					\
	_Pragma("GCC diagnostic push")					\
	_Pragma("GCC diagnostic ignored \"-Wpedantic\"")		\
	type name[];							\
	_Pragma("GCC diagnostic pop")
#else
#define SEGPOOL_FLEX_ARRAY(type, name)	type name[];
#endif

#endif /* SEGPOOL_COMPILER_H */
