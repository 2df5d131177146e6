// SPDX-License-Identifier: MIT
/*
 * tools/segpool-top/control.c - ask a running process to do something.
 *
 * --shrink, --validate, --heap-profile FILE, --set NAME=VALUE and --sites
 * (sites.c) write one request into the process's control segment
 * "/segpool.<pid>.ctl" and print its answer (include/segpool/export.h has
 * the protocol).  The file is believed only when it is a regular file of
 * this user, mode 0600, and the process runs as this user too; the process
 * checks the uid written in the request again.  The exit status is 0 when
 * the process did it, 1 when it refused or failed (the reason is printed),
 * or when it does not export, is gone, or did not answer in time.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tools/segpool-top/top.h"

#define TOP_CTL_WAIT_MS		10000	/* for the answer */
#define TOP_CTL_STEP_MS		10

const struct top_ctl_op top_ctl_ops[] = {
	{ SEGPOOL_CTL_OP_SHRINK, "shrink", "shrink every cache and give "
	  "free memory back (segpool_shrink_all)" },
	{ SEGPOOL_CTL_OP_VALIDATE, "validate", "check every cache "
	  "(segpool_cache_validate); reports go to the process's stderr" },
	{ SEGPOOL_CTL_OP_HEAP_PROFILE, "heap-profile", "write the heap "
	  "profile to an absolute path (segpool_heap_profile_dump)" },
	{ SEGPOOL_CTL_OP_SET_DECAY_MS, "decay-ms", "set the decay delay: "
	  "milliseconds, or -1 for never (segpool_set_decay_ms)" },
	{ SEGPOOL_CTL_OP_SET_MEMORY_LIMIT, "memory-limit", "set the soft "
	  "memory limit: bytes with K, M, G, 0 for none "
	  "(segpool_set_memory_limit)" },
	{ SEGPOOL_CTL_OP_TOP_SITES, "sites", "show the top call sites of "
	  "the sampled heap profile (SEGPOOL_HEAP_PROFILE)" },
};
const size_t top_nctl_ops = sizeof(top_ctl_ops) / sizeof(top_ctl_ops[0]);

static uint64_t top_ctl_now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

const struct top_ctl_op *top_ctl_find(unsigned int op)
{
	for (size_t i = 0; i < top_nctl_ops; i++)
		if (top_ctl_ops[i].op == op)
			return &top_ctl_ops[i];
	return NULL;
}

int top_ctl_parse_set(const char *s, unsigned int *op, long long *arg,
		      char *msg, size_t len)
{
	const char *eq = strchr(s, '=');
	char *end;
	long long v, mult = 1;

	if (!eq) {
		snprintf(msg, len, "--set wants NAME=VALUE (decay-ms or "
			 "memory-limit), not '%s'", s);
		return -1;
	}
	if (!strncmp(s, "decay-ms=", 9)) {
		*op = SEGPOOL_CTL_OP_SET_DECAY_MS;
	} else if (!strncmp(s, "memory-limit=", 13)) {
		*op = SEGPOOL_CTL_OP_SET_MEMORY_LIMIT;
	} else {
		snprintf(msg, len, "--set: unknown tunable '%.*s' (decay-ms or "
			 "memory-limit)", (int)(eq - s), s);
		return -1;
	}
	errno = 0;
	v = strtoll(eq + 1, &end, 0);
	if (*op == SEGPOOL_CTL_OP_SET_MEMORY_LIMIT && end != eq + 1 &&
	    end[0] && !end[1]) {
		switch (end[0]) {
		case 'k': case 'K': mult = 1LL << 10; end++; break;
		case 'm': case 'M': mult = 1LL << 20; end++; break;
		case 'g': case 'G': mult = 1LL << 30; end++; break;
		}
	}
	if (errno || end == eq + 1 || *end ||
	    __builtin_mul_overflow(v, mult, arg) ||
	    (*op == SEGPOOL_CTL_OP_SET_MEMORY_LIMIT && *arg < 0) ||
	    (*op == SEGPOOL_CTL_OP_SET_DECAY_MS && *arg < -1)) {
		snprintf(msg, len, "--set %.*s wants %s, not '%s'",
			 (int)(eq - s), s, *op == SEGPOOL_CTL_OP_SET_DECAY_MS ?
			 "milliseconds or -1" : "bytes (K, M, G suffixes)",
			 eq + 1);
		return -1;
	}
	return 0;
}

static void top_ctl_sleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Open and check the control segment of @pid: its descriptor, or -1. */
static int top_ctl_open(int pid, char *path, size_t plen, char *msg,
			size_t len)
{
	struct stat st, proc;
	char ppath[32];
	int fd, err, alive;

	snprintf(path, plen, "/dev/shm%s%d%s", SEGPOOL_EXPORT_SHM_PREFIX, pid,
		 SEGPOOL_EXPORT_CTL_SUFFIX);
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		err = errno;
		alive = top_pid_alive(pid);
		if (err == ENOENT && alive == 0)
			snprintf(msg, len, "no process with pid %d", pid);
		else if (err == ENOENT)
			snprintf(msg, len, "process %d does not export, so it "
				 "takes no requests; start it with "
				 "SEGPOOL_EXPORT=1", pid);
		else if (err == EACCES)
			snprintf(msg, len, "refused: %s is not yours (only the "
				 "user of process %d may ask it)", path, pid);
		else
			snprintf(msg, len, "cannot open %s: %s", path,
				 strerror(err));
		return -1;
	}
	snprintf(ppath, sizeof(ppath), "/proc/%d", pid);
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (st.st_mode & 07777) != 0600 || st.st_uid != getuid() ||
	    st.st_size < (off_t)sizeof(struct segpool_export_ctl)) {
		snprintf(msg, len, "refused: %s is not a control segment of "
			 "yours (a regular file of uid %u, mode 0600)", path,
			 (unsigned int)getuid());
		close(fd);
		return -1;
	}
	if (stat(ppath, &proc) || proc.st_uid != st.st_uid) {
		snprintf(msg, len, "refused: process %d %s", pid,
			 errno == ENOENT ? "is gone" :
			 "runs as another user than its control segment's");
		close(fd);
		return -1;
	}
	return fd;
}

/* Claim @c: from idle, or from a requester that died holding it. */
static bool top_ctl_claim(struct segpool_export_ctl *c)
{
	uint32_t s = SEGPOOL_CTL_IDLE;
	uint64_t now = top_ctl_now(CLOCK_REALTIME);

	if (__atomic_compare_exchange_n(&c->state, &s, SEGPOOL_CTL_CLAIMED,
					false, __ATOMIC_ACQUIRE,
					__ATOMIC_RELAXED))
		goto claimed;
	/* CLAIMED or DONE for long: its requester is gone */
	if (s != SEGPOOL_CTL_PENDING &&
	    now - __atomic_load_n(&c->claimed_ns, __ATOMIC_RELAXED) >
	    SEGPOOL_CTL_STALE_NS &&
	    __atomic_compare_exchange_n(&c->state, &s, SEGPOOL_CTL_CLAIMED,
					false, __ATOMIC_ACQUIRE,
					__ATOMIC_RELAXED))
		goto claimed;
	return false;
claimed:
	__atomic_store_n(&c->claimed_ns, now, __ATOMIC_RELAXED);
	return true;
}

int top_ctl_request(int pid, unsigned int op, long long arg, const char *path)
{
	const struct top_ctl_op *what = top_ctl_find(op);
	struct segpool_export_ctl *c;
	char fpath[64], msg[TOP_MSG_LEN];
	uint64_t ticket, deadline;
	int fd, ret = TOP_EXIT_TARGET;

	fd = top_ctl_open(pid, fpath, sizeof(fpath), msg, sizeof(msg));
	if (fd < 0) {
		top_error("%s", msg);
		return TOP_EXIT_TARGET;
	}
	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (c == MAP_FAILED) {
		top_error("cannot map %s: %s", fpath, strerror(errno));
		return TOP_EXIT_TARGET;
	}
	if (__atomic_load_n(&c->magic, __ATOMIC_ACQUIRE) !=
		    SEGPOOL_EXPORT_CTL_MAGIC ||
	    c->version != SEGPOOL_EXPORT_CTL_VERSION) {
		top_error("%s: not a control segment of version %u", fpath,
			  SEGPOOL_EXPORT_CTL_VERSION);
		goto out;
	}
	deadline = top_ctl_now(CLOCK_MONOTONIC) + TOP_CTL_WAIT_MS * 1000000ULL;
	while (!top_ctl_claim(c)) {
		if (top_ctl_now(CLOCK_MONOTONIC) > deadline) {
			top_error("process %d is busy with another request; "
				  "try again", pid);
			goto out;
		}
		top_ctl_sleep(TOP_CTL_STEP_MS);
	}
	ticket = ((uint64_t)getpid() << 32) ^ top_ctl_now(CLOCK_MONOTONIC);
	c->op = op;
	c->arg = arg;
	c->uid = (uint32_t)getuid();
	c->pid = (int32_t)getpid();
	c->ticket = ticket;
	memset(c->path, 0, sizeof(c->path));
	if (path)
		snprintf(c->path, sizeof(c->path), "%s", path);
	__atomic_store_n(&c->state, SEGPOOL_CTL_PENDING, __ATOMIC_RELEASE);
	while (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) !=
		       SEGPOOL_CTL_DONE ||
	       c->answered != ticket) {
		if (top_ctl_now(CLOCK_MONOTONIC) > deadline) {
			top_error("process %d did not answer within %d s (%s)",
				  pid, TOP_CTL_WAIT_MS / 1000,
				  top_pid_alive(pid) ? "stopped, or its "
				  "export thread is busy" : "it is gone");
			goto out;
		}
		top_ctl_sleep(TOP_CTL_STEP_MS);
	}
	c->reason[sizeof(c->reason) - 1] = '\0';
	if (c->result == 0 && op == SEGPOOL_CTL_OP_TOP_SITES) {
		ret = top_sites_show(pid, path);
	} else if (c->result == 0) {
		printf("%s: process %d: %s: %s\n", TOP_PROG, pid, what->word,
		       c->reason);
		ret = TOP_EXIT_OK;
	} else {
		top_error("process %d: %s: %s", pid, what->word, c->reason);
	}
	__atomic_store_n(&c->state, SEGPOOL_CTL_IDLE, __ATOMIC_RELEASE);
out:
	munmap(c, sizeof(*c));
	return ret;
}
