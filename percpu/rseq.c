// SPDX-License-Identifier: MIT
/*
 * percpu/rseq.c - choose the per-CPU mode, register rseq, fence CPUs.
 *
 * The system calls themselves are the OS layer's (os/sys.c); this file
 * decides when to make them and what their failure means.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "segpool_config.h"
#include "internal/env.h"
#include "os/cpu.h"
#include "os/os.h"
#include "percpu/arch.h"
#include "percpu/pcpu.h"
#include "percpu/rseq.h"

/*
 * The signature of an area segpool registers itself: the one its sequences
 * place before their abort handlers (SP_RSEQ_SIG, percpu/arch-*.h), which
 * must also be glibc's, since glibc's area is the one the hit paths use
 * when glibc registered it.
 */
#if SP_RSEQ_ARCH
#if defined(RSEQ_SIG)
_Static_assert(SP_RSEQ_SIG == RSEQ_SIG, "the abort signature is glibc's");
#endif
#define SP_OWN_RSEQ_SIG	SP_RSEQ_SIG
#endif

#if defined(CONFIG_SEGPOOL_DEBUG) && SP_RSEQ_ARCH
/* the debug build's abort injection (SP_RSEQ_INJECT, percpu/arch-x86_64.h) */
__thread struct sp_rseq_inject sp_rseq_inject;
#endif

enum sp_pcpu_mode_id sp_pcpu_mode = SP_PCPU_LOCK;
long sp_rseq_off;
long sp_rseq_id_off;
bool sp_rseq_own;
bool sp_pcpu_use_mm_cid;
char sp_pcpu_reason[128] = "not initialised";

#define SP_RSEQ_CPU_ID_OFF	4
#define SP_RSEQ_LEN		32

/*
 * The area segpool registers when glibc did not (initial-exec TLS: its
 * offset from the thread pointer is the same in every thread).  Not glibc's
 * reserved one: a thread glibc did not register reads cpu_id 0 there, which
 * would look like a CPU before segpool's first slow path registered it.
 * The hit paths (which find glibc's area from __rseq_offset alone) stay
 * closed in this mode; every operation takes the slow paths' sequences.
 */
static __thread struct sp_own_rseq {
	uint32_t cpu_id_start;
	uint32_t cpu_id;
	uint64_t rseq_cs;
	uint32_t flags;
	uint32_t node_id;
	uint32_t mm_cid;
	uint32_t pad;
} sp_own_rseq __sp_unused
	__attribute__((aligned(32), tls_model("initial-exec"))) = {
	.cpu_id = UINT32_MAX,		/* RSEQ_CPU_ID_UNINITIALIZED */
};
#define SP_RSEQ_AREA()	(&sp_own_rseq)

struct segpool_inline_layout sp_pcpu_fast = {
	/* set at start-up (core/inline_abi.c) */
	.version = 0,
	.nr = 0,			/* no hit path before start-up */
	.id_delta = SP_RSEQ_CPU_ID_OFF,
	.rseq_off = 0,			/* sp_pcpu_base_init() */
};

/* the same object under its exported, versioned name (segpool/inline.h) */
extern SEGPOOL_API struct segpool_inline_layout segpool_inline_abi
	__attribute__((alias("sp_pcpu_fast")));
/* and under the name the frees' tag lookup reads it by (percpu/pcpu.h) */
extern SP_INTERNAL const struct segpool_inline_layout sp_pcpu_fast_tag
	__attribute__((alias("sp_pcpu_fast")));

static __thread long sp_test_slot = -1;

#if SP_RSEQ_ARCH
static pthread_key_t sp_rseq_key;

static void sp_rseq_thread_exit(void *arg)
{
	(void)arg;
	sp_os_rseq_unregister(SP_RSEQ_AREA(), SP_RSEQ_LEN, SP_OWN_RSEQ_SIG);
}

static bool sp_rseq_register_self(void)
{
	if (sp_os_rseq_register(SP_RSEQ_AREA(), SP_RSEQ_LEN, SP_OWN_RSEQ_SIG))
		return false;
	/* unregister before the TLS block goes away */
	pthread_setspecific(sp_rseq_key, (void *)1);
	return true;
}

bool sp_rseq_thread_ensure(void)
{
	if (!sp_rseq_own)
		return true;
	if (SP_RSEQ_AREA()->cpu_id < UINT32_MAX - 1)
		return true;
	return sp_rseq_register_self();
}
#else
bool sp_rseq_thread_ensure(void)
{
	return true;	/* no sequence ever runs: lock mode */
}
#endif

static __sp_printf(1, 2) void sp_set_reason(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sp_pcpu_reason, sizeof(sp_pcpu_reason), fmt, ap);
	va_end(ap);
}

static bool sp_rseq_usable(void)
{
#if SP_RSEQ_ARCH
	long tp_off;
	int ret;

	if (__rseq_size >= 20 && (int)sp_rseq_area()->cpu_id >= 0) {
		sp_rseq_off = (long)__rseq_offset;	/* the hit paths' too */
		sp_rseq_own = false;
		sp_set_reason("rseq (glibc registration%s)", SP_RSEQ_HIT_NOTE);
	} else {
		tp_off = (long)((char *)&sp_own_rseq -
				(char *)__builtin_thread_pointer());
		if (pthread_key_create(&sp_rseq_key, sp_rseq_thread_exit)) {
			sp_set_reason("lock (%s)",
				      "no thread key for own rseq");
			return false;
		}
		if (!sp_rseq_register_self()) {
			sp_set_reason("lock (rseq registration failed: %s)",
				      strerror(errno));
			return false;
		}
		sp_rseq_off = tp_off;
		sp_rseq_own = true;
		sp_set_reason("rseq (own registration%s%s)",
			      __rseq_size ? "" : ", glibc's is off",
			      SP_RSEQ_HIT_NOTE);
	}
	ret = sp_os_membarrier_register();
	if (ret) {
		sp_set_reason("lock (membarrier rseq unavailable: %s)",
			      strerror(errno));
		return false;
	}
	return true;
#else
	sp_set_reason("lock (%s)", "no rseq port for this architecture");
	return false;
#endif
}

/*
 * glibc (2.35 and later) reserves its rseq area in every thread and sets
 * __rseq_offset whether or not it registered the area (the tunable, a
 * kernel without rseq, valgrind): a store of a descriptor there is
 * harmless in every mode, and only rseq mode on glibc's registration opens
 * a slot bound (sp_pcpu_fast_update()), so only there does a sequence get
 * past its id compare.  Set before any cache or tagged object exists, so
 * no hit path reads a 0 (the boot stand-in's allocation tests for it).
 */
void sp_pcpu_base_init(void)
{
#if SP_RSEQ_ARCH
	SP_WRITE_ONCE(sp_pcpu_fast.rseq_off, (long)__rseq_offset);
#endif
}

void sp_pcpu_mode_init(void)
{
	/* 0 rseq, 1 lock, 2 off (the table's words); -1 unset or bad */
	int env = sp_env_word(SP_ENV_PERCPU);
	bool mm_cid = sp_env_word(SP_ENV_PERCPU_ID) == 1;

	if (env == 2) {
		sp_pcpu_mode = SP_PCPU_OFF;
		sp_set_reason("off (SEGPOOL_PERCPU=%s)", "off");
		return;
	}
	if (env == 1) {
		sp_pcpu_mode = SP_PCPU_LOCK;
		sp_set_reason("lock (SEGPOOL_PERCPU=%s)", "lock");
		return;
	}
#ifdef CONFIG_SEGPOOL_TSAN
	if (env != 0) {
		sp_pcpu_mode = SP_PCPU_LOCK;
		sp_set_reason("lock (%s)", "ThreadSanitizer build");
		return;
	}
#endif
	if (!sp_rseq_usable()) {
		sp_pcpu_mode = SP_PCPU_LOCK;
		return;
	}
	sp_pcpu_mode = SP_PCPU_RSEQ;
	sp_rseq_id_off = sp_rseq_off + SP_RSEQ_CPU_ID_OFF;
	sp_pcpu_fast.id_delta = SP_RSEQ_CPU_ID_OFF;
	if (mm_cid) {
		if (sp_os_rseq_feature_size() >= SP_RSEQ_MM_CID_OFFSET + 4) {
			sp_pcpu_use_mm_cid = true;
			sp_rseq_id_off = sp_rseq_off + SP_RSEQ_MM_CID_OFFSET;
			sp_pcpu_fast.id_delta = SP_RSEQ_MM_CID_OFFSET;
			strncat(sp_pcpu_reason, ", slots by mm_cid",
				sizeof(sp_pcpu_reason) -
				strlen(sp_pcpu_reason) - 1);
		} else {
			strncat(sp_pcpu_reason,
				", mm_cid not provided: slots by cpu",
				sizeof(sp_pcpu_reason) -
				strlen(sp_pcpu_reason) - 1);
		}
	}
}

bool sp_pcpu_fast_closed;
uint32_t sp_pcpu_closed_nr;

void sp_pcpu_fast_update(bool forced_slow)
{
	uint32_t nr = 0;

	if (sp_pcpu_mode == SP_PCPU_RSEQ && !sp_rseq_own && !forced_slow)
		nr = sp_pcpu_nr_slots();
	/* the counted entry points' bound, closed or not (core/entry.h) */
	__atomic_store_n(&sp_pcpu_closed_nr, nr, __ATOMIC_RELEASE);
	if (__atomic_load_n(&sp_pcpu_fast_closed, __ATOMIC_RELAXED))
		nr = 0;
	__atomic_store_n(&sp_pcpu_fast.nr, nr, __ATOMIC_RELEASE);
}

const char *sp_pcpu_mode_name(void)
{
	switch (sp_pcpu_mode) {
	case SP_PCPU_RSEQ: return "rseq";
	case SP_PCPU_LOCK: return "lock";
	default: return "off";
	}
}

int sp_rseq_fence(long cpu)
{
	int ret;

	if (cpu >= 0 && !sp_pcpu_use_mm_cid)
		ret = sp_os_membarrier_fence((int)cpu);
	else
		ret = sp_os_membarrier_fence(-1);
	if (ret && cpu >= 0)	/* kernels without the CPU flag: fence all */
		ret = sp_os_membarrier_fence(-1);
	return ret ? -errno : 0;
}

unsigned long sp_pcpu_current_slot(unsigned long nr_slots)
{
	long slot = sp_test_slot;

	if (slot < 0) {
		if (sp_pcpu_use_mm_cid && sp_pcpu_mode == SP_PCPU_RSEQ)
			slot = (long)*(volatile uint32_t *)
				((char *)__builtin_thread_pointer() +
				 sp_rseq_id_off);
		else
			slot = sp_thread_cpu();
	}
	if (slot < 0)
		slot = 0;
	return (unsigned long)slot % nr_slots;
}

void sp_pcpu_test_inject_slot(long slot)
{
	sp_test_slot = slot;
}
