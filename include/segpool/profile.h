/* SPDX-License-Identifier: MIT */
/*
 * segpool/profile.h - sampled heap profiling: which call sites hold the
 * memory in use, at a cost low enough for production.
 *
 * Started by the environment: SEGPOOL_HEAP_PROFILE=FILE (%p the pid) turns
 * sampling on and writes the profile to FILE at exit; SEGPOOL_HEAP_SAMPLE
 * sets the mean bytes between samples (512 KiB).  About one allocated byte
 * in that many is a sampling point, and the allocation that holds one is
 * recorded with its call stack and the name of its cache, weighted by the
 * bytes it stands for; its record goes at its free.  The file is in the
 * heap-profile text format of gperftools, which `google-pprof --text
 * PROGRAM FILE` reads (and jemalloc's jeprof, its fork; Documentation/guide/
 * debugging.md, "In production").
 */
#ifndef SEGPOOL_PROFILE_H
#define SEGPOOL_PROFILE_H

#include <segpool/compiler.h>

SEGPOOL_BEGIN_DECLS

/**
 * segpool_heap_profile_dump() - write the sampled heap profile now.
 * @path: the file to write (%p is replaced by the process id, %% by %).
 *
 * Writes what SEGPOOL_HEAP_PROFILE writes at exit, at the moment of the
 * call: the sampled objects in use and the totals allocated, by call stack,
 * in gperftools' heap-profile text format, followed by the process's
 * memory map.  The file is written beside @path and renamed over it, so a
 * reader never sees half a profile; a symbolic link, a FIFO or another
 * user's file at @path is refused.  Sampling must have been turned on at
 * start-up by SEGPOOL_HEAP_PROFILE.
 *
 * Context: any thread, while others allocate; not from a signal handler.
 * Return: 0, or -1 with errno set: EINVAL when sampling is off or @path is
 * NULL, empty or holds another %-sequence; ELOOP, EPERM or EINVAL for what
 * stands at @path; what the file system says otherwise (EACCES, ENOSPC, ...).
 */
SEGPOOL_API int segpool_heap_profile_dump(const char *path);

/**
 * segpool_heap_profile_enabled() - whether sampled heap profiling runs.
 *
 * Context: any thread.
 * Return: 1 when SEGPOOL_HEAP_PROFILE turned sampling on at start-up
 * (the hit paths are then closed, every operation takes a slow path), 0
 * otherwise.
 */
SEGPOOL_API int segpool_heap_profile_enabled(void);

SEGPOOL_END_DECLS

#endif /* SEGPOOL_PROFILE_H */
