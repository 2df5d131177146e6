// SPDX-License-Identifier: MIT
/*
 * stats/export_ctl.c - requests from outside, served by the publisher.
 *
 * Beside its statistics segment an exporting process creates the control
 * segment "/segpool.<pid>.ctl" (include/segpool/export.h describes the
 * protocol), mode 0600.  The publisher thread (stats/export.c) looks at
 * its state word every SP_EXPORT_CTL_POLL_MS while it waits for the next
 * snapshot, and serves a pending request there, on its own thread: shrink
 * every cache, validate every cache, dump the heap profile, write its top
 * call sites (symbolised here, where the addresses mean something), or
 * set the decay delay or the memory limit.  Every request gets an answer: done,
 * with what came of it, or refused, with the reason.
 *
 * Who may ask.  The file is created O_EXCL with mode 0600 and this
 * process's owner, so only that user (and root) can open it for writing;
 * each request carries the requester's uid, and one that is not this
 * process's real and effective uid is refused (so root asks as the user,
 * and a process that changed its uid takes no orders from its old one).
 * Before serving anything the file is checked again (fstat: ours, 0600).
 * The uid in a request is what the requester wrote: it is the file's
 * permissions that keep other users out, the uid check is the second
 * lock (a process of the owner's may also ask on behalf of anybody: that
 * is what the owner can do to its own processes anyway).
 *
 * Locks: none of its own.  Creation and removal run under the export's
 * op_lock and pub_lock (stats/export.c); serving runs on the publisher
 * with neither of its locks held, and takes what the call served takes.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <segpool/segpool.h>
#include <segpool/export.h>
#include <segpool/profile.h>

#include "internal/report.h"
#include "internal/rculist.h"
#include "os/os.h"
#include "rcu/rcu.h"
#include "slab/slab.h"
#include "stats/export.h"

int (*sp_export_sites_fn)(const char *path, unsigned int n);

static struct {
	int fd;
	struct segpool_export_ctl *ctl;	/* mapped shared; NULL: none */
	size_t size;
	char name[48];			/* "/segpool.<pid>.ctl" */
	pid_t owner;			/* process that created it */
} sp_ctl = { .fd = -1 };

int sp_export_ctl_create(const char *seg_name)
{
	struct segpool_export_ctl *c;
	struct stat in_way;
	size_t size = SP_ALIGN(sizeof(*c), SP_PAGE_SIZE);
	int fd, err;

	snprintf(sp_ctl.name, sizeof(sp_ctl.name), "%s%s", seg_name,
		 SEGPOOL_EXPORT_CTL_SUFFIX);
	fd = sp_os_shm_create(sp_ctl.name, &in_way);
	if (fd < 0) {
		err = errno;
		sp_warn("export: cannot create the control segment /dev/shm%s "
			"(%s): requests from outside are refused", sp_ctl.name,
			strerror(err));
		return -err;
	}
	if (sp_os_shm_resize(fd, size) ||
	    !(c = sp_os_map_shared(fd, size, true))) {
		err = errno;
		sp_os_close(fd);
		sp_os_shm_unlink(sp_ctl.name);
		return -err;
	}
	c->version = SEGPOOL_EXPORT_CTL_VERSION;
	c->size = sizeof(*c);
	__atomic_store_n(&c->state, SEGPOOL_CTL_IDLE, __ATOMIC_RELAXED);
	__atomic_store_n(&c->magic, SEGPOOL_EXPORT_CTL_MAGIC, __ATOMIC_RELEASE);
	sp_ctl.fd = fd;
	sp_ctl.ctl = c;
	sp_ctl.size = size;
	sp_ctl.owner = sp_os_pid();
	return 0;
}

void sp_export_ctl_destroy(bool unlink)
{
	if (!sp_ctl.ctl)
		return;
	if (unlink && sp_ctl.owner == sp_os_pid())
		sp_os_shm_unlink(sp_ctl.name);
	sp_os_unmap(sp_ctl.ctl, sp_ctl.size);
	sp_os_close(sp_ctl.fd);
	sp_ctl.ctl = NULL;
	sp_ctl.fd = -1;
	sp_ctl.owner = 0;
}

bool sp_export_ctl_pending(void)
{
	return sp_ctl.ctl && __atomic_load_n(&sp_ctl.ctl->state,
					     __ATOMIC_ACQUIRE) ==
			     SEGPOOL_CTL_PENDING;
}

/* segpool_cache_validate() of every cache: the problems, *@n the caches. */
static long sp_ctl_validate_all(long *n)
{
	struct segpool_cache *c;
	long bad = 0;

	*n = 0;
	sp_rcu_walk_begin();
	sp_list_for_each_entry_rcu(c, &sp_cache_list, list) {
		int r = segpool_cache_validate(c);

		if (r > 0)
			bad += r;
		++*n;
	}
	sp_rcu_walk_end();
	return bad;
}

/* The refusal of a request for the call sites of a process not sampling. */
static void sp_ctl_no_sampling(struct segpool_export_ctl *r)
{
	r->result = ENOTSUP;
	snprintf(r->reason, sizeof(r->reason), "refused: heap sampling is off "
		 "in this process; start it with SEGPOOL_HEAP_PROFILE=FILE "
		 "(SEGPOOL_HEAP_SAMPLE sets the rate)");
}

/* Serve @r (a copy of the request); the answer into @r. */
static void sp_ctl_serve(struct segpool_export_ctl *r)
{
	int (*sites)(const char *path, unsigned int n);
	char *why = r->reason;
	size_t wl = sizeof(r->reason);
	long long v;
	long n;
	int ret;

	r->result = 0;
	r->value = 0;
	if (r->uid != (uint32_t)sp_os_uid() ||
	    r->uid != (uint32_t)sp_os_euid()) {
		r->result = EPERM;
		snprintf(why, wl, "refused: the requester's uid %u is not the "
			 "process's owner (uid %u)", r->uid,
			 (unsigned int)sp_os_euid());
		return;
	}
	switch (r->op) {
	case SEGPOOL_CTL_OP_SHRINK:
		v = segpool_shrink_all();
		if (v < 0) {
			r->result = ENOMEM;
			snprintf(why, wl, "failed: the library is not ready");
			return;
		}
		r->value = v;
		snprintf(why, wl, "done: shrunk every cache, %lld bytes given "
			 "back to the OS", v);
		return;
	case SEGPOOL_CTL_OP_VALIDATE:
		r->value = sp_ctl_validate_all(&n);
		snprintf(why, wl, "done: %ld caches validated, %lld problem%s "
			 "found%s", n, (long long)r->value,
			 r->value == 1 ? "" : "s", r->value ?
			 " (reported on the process's standard error)" : "");
		return;
	case SEGPOOL_CTL_OP_HEAP_PROFILE:
		r->path[sizeof(r->path) - 1] = '\0';
		if (r->path[0] != '/') {
			r->result = EINVAL;
			snprintf(why, wl, "refused: the profile's path must be "
				 "absolute");
			return;
		}
		errno = 0;
		ret = segpool_heap_profile_dump(r->path);
		if (ret) {
			r->result = ret < -1 ? -ret : (errno ? errno : EIO);
			snprintf(why, wl,
				 "failed: cannot write the heap profile "
				 "to %.120s: %s",
				 r->path, strerror(r->result));
			return;
		}
		snprintf(why, wl, "done: heap profile written to %.150s",
			 r->path);
		return;
	case SEGPOOL_CTL_OP_TOP_SITES:
		r->path[sizeof(r->path) - 1] = '\0';
		sites = __atomic_load_n(&sp_export_sites_fn, __ATOMIC_ACQUIRE);
		if (!sites) {
			sp_ctl_no_sampling(r);
			return;
		}
		if (r->arg < 1 || r->arg > SEGPOOL_CTL_SITES_MAX ||
		    r->path[0] != '/') {
			r->result = EINVAL;
			snprintf(why, wl, "refused: sites %lld: 1 to %d, "
				 "into an absolute path", (long long)r->arg,
				 SEGPOOL_CTL_SITES_MAX);
			return;
		}
		errno = 0;
		ret = sites(r->path, (unsigned int)r->arg);
		if (ret < 0 && errno == ENOTSUP) {
			sp_ctl_no_sampling(r);
			return;
		}
		if (ret < 0) {
			r->result = errno ? errno : EIO;
			snprintf(why, wl, "failed: cannot write the sites to "
				 "%.120s: %s", r->path, strerror(r->result));
			return;
		}
		r->value = ret;
		snprintf(why, wl, "done: %d call site%s written to %.140s", ret,
			 ret == 1 ? "" : "s", r->path);
		return;
	case SEGPOOL_CTL_OP_SET_DECAY_MS:
		ret = segpool_set_decay_ms((long)r->arg);
		if (ret && ret != -EAGAIN) {
			r->result = -ret;
			snprintf(why, wl,
				 "refused: decay-ms %lld: %s (accepted: "
				 "-1 for never, or 0 to %ld)",
				 (long long)r->arg, strerror(-ret),
				 (long)SEGPOOL_DECAY_MS_MAX);
			return;
		}
		r->value = segpool_get_decay_ms();
		snprintf(why, wl, "done: decay-ms is %lld",
			 (long long)r->value);
		return;
	case SEGPOOL_CTL_OP_SET_MEMORY_LIMIT:
		if (r->arg < 0) {
			r->result = EINVAL;
			snprintf(why, wl,
				 "refused: memory-limit %lld: a size in "
				 "bytes, 0 for none",
				 (long long)r->arg);
			return;
		}
		ret = segpool_set_memory_limit((uint64_t)r->arg);
		if (ret) {
			r->result = -ret;
			snprintf(why, wl, "failed: %s", strerror(-ret));
			return;
		}
		r->value = (int64_t)segpool_get_memory_limit();
		snprintf(why, wl, "done: memory-limit is %lld bytes%s",
			 (long long)r->value, r->value ? "" : " (none)");
		return;
	default:
		r->result = EINVAL;
		snprintf(why, wl, "refused: unknown request %u", r->op);
	}
}

void sp_export_ctl_serve(void)
{
	struct segpool_export_ctl *c = sp_ctl.ctl, r;
	struct stat st;

	if (!sp_export_ctl_pending())
		return;
	/* a private copy: the requester cannot change it under us */
	memcpy(&r, c, sizeof(r));
	if (sp_os_fstat(sp_ctl.fd, &st) || st.st_uid != sp_os_euid() ||
	    (st.st_mode & 07777) != 0600) {
		r.result = EPERM;
		r.value = 0;
		snprintf(r.reason, sizeof(r.reason),
			 "refused: the control segment is no longer the "
			 "process's own with mode 0600");
	} else {
		sp_ctl_serve(&r);
	}
	memcpy(c->reason, r.reason, sizeof(c->reason));
	c->result = r.result;
	c->value = r.value;
	c->answered = r.ticket;
	__atomic_store_n(&c->state, SEGPOOL_CTL_DONE, __ATOMIC_RELEASE);
}
