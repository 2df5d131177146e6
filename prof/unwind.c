// SPDX-License-Identifier: MIT
/*
 * prof/unwind.c - a sample's call stack, walked on frame sizes learned once.
 *
 * glibc's backtrace() runs libgcc's unwinder, which for every frame looks
 * up the function's unwind entry and interprets its CFA program: 100 to
 * 200 ns a frame here, most of what a sample costs.  But at one return
 * address a function's frame has, nearly always, one size: its CFA (the
 * stack pointer its caller had before the call) is the stack pointer at
 * that call plus a constant.  So each return address's constant is
 * learned from libgcc's walk (_Unwind_GetCFA() of a frame against the
 * frame's below it), and later walks find each caller's return address at
 * CFA - 8 (the x86-64 psABI's place for it) from a table: a few
 * nanoseconds a frame.
 *
 * What keeps the walk honest:
 *   - a frame whose size changes between calls (alloca(), a variable-length
 *     array) would have a wrong constant: every learning walk compares the
 *     constants it meets with the table's and marks an address whose
 *     constant changed unstable, and some samples of each thread are
 *     walked by libgcc even when the table knows every frame: one in
 *     SP_UNWIND_CHECK, then ever fewer while those checks find the table
 *     right (one in SP_UNWIND_CHECK_MAX at least), and again one in
 *     SP_UNWIND_CHECK from a check that found it wrong;
 *   - a signal frame (the kernel's trampoline) is never learned;
 *   - the outermost frame a learning walk reached is marked so, and the
 *     fast walk ends there as libgcc's did;
 *   - the fast walk gives up (and libgcc's runs, and learns) at an address
 *     the table does not know or marked unstable, and before a CFA beyond
 *     the outermost one this thread's learning walks saw on its stack (not
 *     on an alternate signal stack): it reads nothing but this thread's
 *     stack between its own frame and that CFA.
 * Other architectures (arm64 keeps its return address where each function
 * chooses) and a libgcc that cannot be found use backtrace() for every
 * sample.
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <stdbool.h>
#include <stdint.h>
#include <unwind.h>

#include "internal/compiler.h"
#include "os/os.h"
#include "prof/prof.h"

#if defined(__x86_64__)
#define SP_UNWIND_FAST		1
#else
#define SP_UNWIND_FAST		0
#endif

/* Return addresses the table holds (64 KiB of bss, touched when sampling). */
#define SP_UNWIND_BITS		12
/* Slots a lookup probes before it gives up. */
#define SP_UNWIND_PROBES	16
/*
 * One sample in this many per thread is walked by libgcc all the same, at
 * first; each such check that finds the table right doubles the distance
 * to the next, up to SP_UNWIND_CHECK_MAX, and one that finds a frame's
 * size changed (or a frame the table lacked) starts it over.  A libgcc
 * walk costs some 19,000 instructions (about 0.7 us here) where the
 * table's costs 50 a frame: at one in 16 the checks were two fifths of a
 * sample's cost.
 */
#define SP_UNWIND_CHECK		16
#define SP_UNWIND_CHECK_MAX	1024
/* A frame larger than this is not learned. */
#define SP_UNWIND_DELTA_MAX	(1U << 20)

enum sp_unwind_state {
	SP_UNWIND_EMPTY,
	SP_UNWIND_READY,	/* delta is the frame's size at this address */
	SP_UNWIND_LAST,		/* the outermost frame: the walk ends here */
	SP_UNWIND_UNSTABLE,	/* sizes differed, or a signal frame */
};

/* One return address; pc is claimed first, state published last. */
struct sp_unwind_ent {
	uintptr_t pc;
	uint32_t delta;
	uint32_t state;
};

static struct sp_unwind_ent sp_unwind_tab[1U << SP_UNWIND_BITS] __sp_big;

/*
 * This thread's outermost CFA seen, its samples since a check, and the
 * samples between checks now (0: SP_UNWIND_CHECK).
 */
static __thread uintptr_t sp_unwind_top
	__attribute__((tls_model("initial-exec")));
static __thread unsigned int sp_unwind_count
	__attribute__((tls_model("initial-exec")));
static __thread unsigned int sp_unwind_every
	__attribute__((tls_model("initial-exec")));
/* libgcc walks this thread made (sp_prof_unwind_slow_walks()). */
static __thread unsigned long sp_unwind_slow_nr
	__attribute__((tls_model("initial-exec")));

/* libgcc's walker, found where glibc's backtrace() loaded it. */
static _Unwind_Reason_Code (*sp_ug_backtrace)(_Unwind_Trace_Fn, void *);
static _Unwind_Ptr (*sp_ug_ip_info)(struct _Unwind_Context *, int *);
static _Unwind_Word (*sp_ug_cfa)(struct _Unwind_Context *);

static inline unsigned int sp_unwind_hash(uintptr_t pc)
{
	return (unsigned int)((pc * 0x9e3779b97f4a7c15ULL) >>
			      (64 - SP_UNWIND_BITS));
}

/* @pc's entry, NULL when the table has none (@claim: make one). */
static struct sp_unwind_ent *sp_unwind_find(uintptr_t pc, bool claim)
{
	unsigned int h = sp_unwind_hash(pc);

	for (unsigned int i = 0; i < SP_UNWIND_PROBES; i++) {
		struct sp_unwind_ent *e =
			&sp_unwind_tab[(h + i) & ((1U << SP_UNWIND_BITS) - 1)];
		uintptr_t at = __atomic_load_n(&e->pc, __ATOMIC_ACQUIRE);

		if (at == pc)
			return e;
		if (at)
			continue;
		if (!claim)
			return NULL;
		if (__atomic_compare_exchange_n(&e->pc, &at, pc, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE) || at == pc)
			return e;
	}
	return NULL;
}

/*
 * What a learning walk saw at @pc: its frame's @delta, and its @state.
 * Return: whether the table did not already say so (a check's finding).
 */
static bool sp_unwind_note(uintptr_t pc, uintptr_t delta,
			   enum sp_unwind_state state)
{
	struct sp_unwind_ent *e;
	uint32_t was;

	if (state == SP_UNWIND_READY &&
	    (delta < sizeof(void *) || delta > SP_UNWIND_DELTA_MAX))
		state = SP_UNWIND_UNSTABLE;
	e = sp_unwind_find(pc, true);
	if (!e)
		return true;		/* full here: libgcc walks past it */
	was = __atomic_load_n(&e->state, __ATOMIC_ACQUIRE);
	if (was == SP_UNWIND_UNSTABLE)
		return false;
	if (was == SP_UNWIND_READY && state == SP_UNWIND_READY &&
	    SP_READ_ONCE(e->delta) != delta)
		state = SP_UNWIND_UNSTABLE;
	if (was == state && (state != SP_UNWIND_READY ||
			     SP_READ_ONCE(e->delta) == delta))
		return false;
	if (state == SP_UNWIND_READY)
		SP_WRITE_ONCE(e->delta, (uint32_t)delta);
	/* the delta before the state that vouches for it */
	__atomic_store_n(&e->state, state, __ATOMIC_RELEASE);
	return true;
}

struct sp_unwind_learn {
	void **pcs;
	int max, n;
	uintptr_t sp;		/* the CFA of sp_prof_unwind() */
	uintptr_t pend_pc;	/* the frame below, its size not yet known */
	uintptr_t prev_sp;	/* its stack pointer at its call */
	uintptr_t top;		/* the outermost stack pointer since the
				 * last signal frame */
	bool started, full;
	bool news;		/* the walk changed the table */
};

/*
 * One frame of libgcc's walk.  _Unwind_GetCFA() gives the frame's stack
 * pointer at its call (its callee's CFA), so a frame's size is known at
 * the frame above it: that one's stack pointer less its own.
 */
static _Unwind_Reason_Code sp_unwind_step(struct _Unwind_Context *ctx,
					  void *arg)
{
	struct sp_unwind_learn *l = arg;
	int before = 0;
	uintptr_t pc = sp_ug_ip_info(ctx, &before);
	uintptr_t sp = sp_ug_cfa(ctx);

	/* no return address: the outermost frame was the one before */
	if (!pc)
		return _URC_END_OF_STACK;
	if (!l->started) {
		/* below the caller of sp_prof_unwind(): the walk's own */
		if (sp != l->sp)
			return _URC_NO_REASON;
		l->started = true;
	} else if (l->pend_pc) {
		/* one above a frame a signal interrupted: the trampoline */
		l->news |= sp_unwind_note(l->pend_pc, sp - l->prev_sp,
					  before || sp <= l->prev_sp ?
					  SP_UNWIND_UNSTABLE : SP_UNWIND_READY);
	}
	if (l->n == l->max) {
		l->full = true;
		return _URC_END_OF_STACK;
	}
	/* a frame a signal interrupted is at no return address */
	l->pend_pc = before ? 0 : pc;
	l->prev_sp = sp;
	/*
	 * The frames below a signal frame may be on an alternate stack
	 * (sigaltstack()): the bound of the table's walks is the thread's
	 * stack's, from the frames above the last one.
	 */
	if (before || sp > l->top)
		l->top = sp;
	l->pcs[l->n++] = (void *)pc;
	return _URC_NO_REASON;
}

/*
 * libgcc's walk from the caller of sp_prof_unwind() (CFA @sp), learning.
 * Return: the frames; *@news: whether the table learned anything.
 */
static __sp_noinline int sp_unwind_slow(void **pcs, int max, uintptr_t sp,
					bool *news)
{
	struct sp_unwind_learn l = { .pcs = pcs, .max = max, .sp = sp };

	sp_unwind_slow_nr++;
	sp_ug_backtrace(sp_unwind_step, &l);
	/* the walk went no further: the fast one ends there too */
	if (l.pend_pc && !l.full)
		l.news |= sp_unwind_note(l.pend_pc, 0, SP_UNWIND_LAST);
	if (l.top > sp_unwind_top) {
		sp_unwind_top = l.top;
		l.news = true;
	}
	*news = l.news;
	return l.n;
}

/*
 * The walk on the table from @pc, the stack pointer @sp; -1: give up.  It
 * reads callers' return address slots, no object of its own: not for
 * ASan to judge (which keeps no shadow of them as memory it allocated).
 */
static __attribute__((no_sanitize_address)) int
sp_unwind_fast(void **pcs, int max, uintptr_t pc, uintptr_t sp)
{
	uintptr_t top = sp_unwind_top;
	int n = 0;

	while (n < max) {
		const struct sp_unwind_ent *e = sp_unwind_find(pc, false);
		uint32_t state;

		if (!e)
			return -1;
		state = __atomic_load_n(&e->state, __ATOMIC_ACQUIRE);
		if (state != SP_UNWIND_READY && state != SP_UNWIND_LAST)
			return -1;
		pcs[n++] = (void *)pc;
		if (state == SP_UNWIND_LAST || n == max)
			break;
		/* the caller's stack pointer: this frame's CFA */
		sp += SP_READ_ONCE(e->delta);
		if (sp > top)
			return -1;
		pc = *(const uintptr_t *)(sp - sizeof(void *));
	}
	return n;
}

/* Walks between this thread's checks by libgcc now (test_unwind_backoff). */
static inline unsigned int sp_unwind_spacing(void)
{
	return sp_unwind_every ? sp_unwind_every : SP_UNWIND_CHECK;
}

__sp_noinline int sp_prof_unwind(void **pcs, int max)
{
	uintptr_t sp = (uintptr_t)__builtin_dwarf_cfa();
	unsigned int every = sp_unwind_spacing();
	bool check = false, news;
	int n;

	if (!SP_UNWIND_FAST || !sp_ug_backtrace)
		return backtrace(pcs, max);
	if (++sp_unwind_count < every && sp_unwind_top) {
		n = sp_unwind_fast(pcs, max,
				   (uintptr_t)__builtin_return_address(0), sp);
		if (n >= 0)
			return n;
	} else {
		check = sp_unwind_top != 0;
	}
	sp_unwind_count = 0;
	n = sp_unwind_slow(pcs, max, sp, &news);
	/* a check that found nothing new: the next one twice as far off */
	if (news)
		sp_unwind_every = SP_UNWIND_CHECK;
	else if (check && every < SP_UNWIND_CHECK_MAX)
		sp_unwind_every = every * 2;
	return n;
}

int sp_prof_unwind_at(void **pcs, int max, uintptr_t pc, uintptr_t sp)
{
	unsigned int every = sp_unwind_spacing();
	int n;

	/* a check due: sp_prof_unwind() counts this walk and makes it */
	if (!SP_UNWIND_FAST || !sp_ug_backtrace || !sp || !sp_unwind_top ||
	    sp_unwind_count + 1 >= every)
		return -1;
	n = sp_unwind_fast(pcs, max, pc, sp);
	if (n >= 0)
		sp_unwind_count++;
	return n;
}

unsigned long sp_prof_unwind_slow_walks(void)
{
	return sp_unwind_slow_nr;
}

void sp_prof_unwind_init(void)
{
	void *warm[4], *gcc;

	backtrace(warm, 4);	/* glibc loads libgcc_s (it may allocate) */
	if (!SP_UNWIND_FAST)
		return;
	gcc = dlopen("libgcc_s.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (!gcc)
		return;
	sp_ug_ip_info = (_Unwind_Ptr (*)(struct _Unwind_Context *, int *))
		dlsym(gcc, "_Unwind_GetIPInfo");
	sp_ug_cfa = (_Unwind_Word (*)(struct _Unwind_Context *))
		dlsym(gcc, "_Unwind_GetCFA");
	if (sp_ug_ip_info && sp_ug_cfa)
		sp_ug_backtrace = (_Unwind_Reason_Code (*)(_Unwind_Trace_Fn,
							   void *))
			dlsym(gcc, "_Unwind_Backtrace");
	/* the handle stays open, as glibc keeps its own */
	/* its probes fall anywhere in it: faulted in now (prof/table.c) */
	if (sp_ug_backtrace)
		sp_os_prefault(sp_unwind_tab, sizeof(sp_unwind_tab));
}
