// SPDX-License-Identifier: MIT
/*
 * guard/fault.c - the SIGSEGV handler of the guard pool, and its reports.
 *
 * A fault whose address lies in the pool is ours: a guard page beside an
 * object (an overflow of a right-aligned one, an underflow of a
 * left-aligned one: the nearer object is named), or the page of a freed
 * slot (a use after free).  The report names the cache, the object, the
 * access and both call sites, then the response (SEGPOOL_DEBUG_RESPONSE,
 * segpool_debug_set_response()) decides: abort, or continue: the page
 * touched is opened (read-write) so the access goes on, and closed again
 * when the object is freed.  Any other fault goes to the action that was
 * there before: called when it was a handler, else restored, and the
 * access faults again under it.
 *
 * The handler takes no lock and allocates nothing: it reads the slot
 * records as they are and writes its report with write(2) (sp_rbuf).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include <segpool/debug.h>

#include "guard/guard.h"
#include "internal/report.h"
#include "os/os.h"
#include "slab/slab.h"

static struct sigaction sp_guard_prev;

static void sp_guard_print_track(struct sp_rbuf *b, const char *verb,
				 const struct sp_debug_track *t)
{
	if (!t->seq) {
		sp_rbuf_line(b, "  %s: not yet", verb);
		return;
	}
	sp_rbuf_line(b, "  %s by thread %u:", verb, t->tid);
	sp_rbuf_frames(b, t->addrs, t->nr);
}

bool sp_guard_report(const char *kind, const struct sp_guard_slot *s,
		     uintptr_t addr, bool access, bool write, const char *what)
{
	bool cont = __atomic_load_n(&sp_debug_response, __ATOMIC_RELAXED) ==
		    SEGPOOL_DEBUG_CONTINUE;
	struct sp_rbuf b;

	sp_guard_count_fault();
	sp_rbuf_init(&b, NULL);
	if (s && s->obj) {
		sp_rbuf_line(&b, "BUG %s in cache %s: guarded object %p "
			     "(%u bytes), address %p", kind, s->cache->name,
			     (void *)s->obj, s->size, (void *)addr);
	} else {
		sp_rbuf_line(&b, "BUG %s in the guard pool: address %p", kind,
			     (void *)addr);
	}
	if (access)
		sp_rbuf_line(&b, "  %s of address %p: %s", write ? "write" :
			     "read", (void *)addr, what);
	else
		sp_rbuf_line(&b, "  %s", what);
	if (s && s->obj) {
		sp_rbuf_line(&b, "  slot %p, object at its %s end",
			     (void *)(s->obj & ~(uintptr_t)(SP_PAGE_SIZE - 1)),
			     s->left ? "left" : "right");
		sp_guard_print_track(&b, "allocated", &s->alloc);
		sp_guard_print_track(&b, "freed", &s->free);
	}
	sp_rbuf_line(&b, cont ? "  response: continue" : "  response: abort");
	sp_rbuf_flush(&b);
	if (!cont)
		abort();
	return cont;
}

/* The slot whose object is nearest to @a in the guard page @pg (even). */
static struct sp_guard_slot *sp_guard_near(uintptr_t pg, uintptr_t a,
					   bool *overflow, long *dist)
{
	struct sp_guard_slot *l = NULL, *r = NULL;
	long dl = 0, dr = 0;

	if (pg >= 2) {
		l = &sp_guard_slots[pg / 2 - 1];
		if (l->state == SP_GUARD_NEVER || l->left)
			l = NULL;
		else
			dl = (long)(a - (l->obj + l->size));
	}
	if (pg / 2 < sp_guard_nr_slots) {
		r = &sp_guard_slots[pg / 2];
		if (r->state == SP_GUARD_NEVER || !r->left)
			r = NULL;
		else
			dr = (long)(r->obj - a);
	}
	if (l && (!r || dl <= dr)) {
		*overflow = true;
		*dist = dl;
		return l;
	}
	*overflow = false;
	*dist = dr;
	return r;
}

/* Give the fault to whatever was there before us. */
static void sp_guard_chain(int sig, siginfo_t *si, void *uc)
{
	if (sp_guard_prev.sa_flags & SA_SIGINFO) {
		if (sp_guard_prev.sa_sigaction) {
			sp_guard_prev.sa_sigaction(sig, si, uc);
			return;
		}
	} else if (sp_guard_prev.sa_handler != SIG_DFL &&
		   sp_guard_prev.sa_handler != SIG_IGN) {
		sp_guard_prev.sa_handler(sig);
		return;
	}
	/* the default (an ignored fault kills too): it acts on the retry */
	(void)sig;
	sp_os_fault_default(si->si_code <= 0);
}

/*
 * sp_guard_fault_is_write() - was the fault of the context @ucv a write?
 * x86-64: bit 1 of the page fault's error code.  arm64: the WnR bit of the
 * exception syndrome of a data abort, which the kernel passes in an
 * esr_context record of the signal frame (the records of <asm/sigcontext.h>:
 * a magic word, a size, then the record's fields).  False when unknown.
 */
static bool sp_guard_fault_is_write(void *ucv)
{
#if defined(__x86_64__) && defined(REG_ERR)
	return ((ucontext_t *)ucv)->uc_mcontext.gregs[REG_ERR] & 2;
#elif defined(__aarch64__)
	const unsigned char *r = ((ucontext_t *)ucv)->uc_mcontext.__reserved;
	const unsigned char *end = r + sizeof(((ucontext_t *)ucv)->uc_mcontext
					      .__reserved);
	uint32_t magic, size;
	uint64_t esr, ec;

	while (r + 8 <= end) {
		memcpy(&magic, r, 4);
		memcpy(&size, r + 4, 4);
		if (!magic || size < 8 || size > (size_t)(end - r))
			break;
		if (magic == 0x45535201 && size >= 16) {	/* ESR_MAGIC */
			memcpy(&esr, r + 8, 8);
			ec = esr >> 26;
			/* a data abort from a lower or the same level */
			return (ec == 0x24 || ec == 0x25) && (esr & (1 << 6));
		}
		r += size;
	}
	return false;
#else
	(void)ucv;
	return false;
#endif
}

static void sp_guard_on_fault(int sig, void *info, void *ucv)
{
	siginfo_t *si = info;
	uintptr_t a = (uintptr_t)si->si_addr, pg, page;
	struct sp_guard_slot *s;
	bool write, overflow;
	int saved = errno;
	char what[128];
	long dist;

	if (si->si_code <= 0 || !sp_guard_owns((void *)a)) {
		sp_guard_chain(sig, si, ucv);
		return;
	}
	write = sp_guard_fault_is_write(ucv);
	pg = (a - sp_guard_range.base) >> SP_PAGE_SHIFT;
	page = a & ~(uintptr_t)(SP_PAGE_SIZE - 1);
	if (pg & 1) {
		s = &sp_guard_slots[pg >> 1];
		if (s->state == SP_GUARD_NEVER) {
			sp_guard_report("wild access", NULL, a, true, write,
					"a guard slot never used");
		} else {
			long at = (long)(a - s->obj);

			snprintf(what, sizeof(what), "byte %ld of the object, "
				 "freed", at);
			sp_guard_report("use-after-free", s, a, true, write,
					what);
		}
		s->opened |= SP_GUARD_OPEN_SLOT;
	} else {
		s = sp_guard_near(pg, a, &overflow, &dist);
		if (!s) {
			sp_guard_report("wild access", NULL, a, true, write,
					"a guard page with no object "
					"beside it");
		} else {
			snprintf(what, sizeof(what),
				 "%ld bytes %s the object%s", dist,
				 overflow ? "past the end of" : "before",
				 s->state == SP_GUARD_FREED ? ", freed" : "");
			sp_guard_report(overflow ? "heap-buffer-overflow" :
					"heap-buffer-underflow", s, a, true,
					write, what);
			s->opened |= overflow ? SP_GUARD_OPEN_RIGHT :
						SP_GUARD_OPEN_LEFT;
		}
	}
	/* continue: the access goes on in the page, opened until the free */
	sp_os_guard_open((void *)page, SP_PAGE_SIZE);
	errno = saved;
}

int sp_guard_fault_install(void)
{
	return sp_os_fault_handler(sp_guard_on_fault, &sp_guard_prev);
}
