// SPDX-License-Identifier: MIT
/*
 * internal/reentry.c - this thread's depth in the library and its deferred
 * frees, and the work wanted of a call leaving the library
 * (internal/reentry.h).
 */
#include "internal/reentry.h"

__thread unsigned int sp_lib_depth __attribute__((tls_model("initial-exec")));
__thread void *sp_lib_deferred __attribute__((tls_model("initial-exec")));
void (*sp_lib_drain_hook)(void);
unsigned int sp_lib_wanted;
