// SPDX-License-Identifier: MIT
/*
 * tools/segpool-top/segment.c - find, map and watch a process's segment.
 *
 * The segment is "/segpool.<pid>" (include/segpool/export.h).  Opening it
 * tells the usual failures apart: no such process, a process that does not
 * export, another user's segment, a layout this program does not read, the
 * leftover of a process that is gone.  While watching, the process is gone
 * when kill(pid, 0) fails with ESRCH or /proc says it is a zombie, and its
 * export stopped when the file we hold was unlinked.
 *
 * Anyone may create a file of that name in /dev/shm before the process
 * starts, so what is opened is checked before a byte of it is believed:
 * opened O_NONBLOCK | O_NOFOLLOW (a FIFO planted there would block the
 * open for good, a symbolic link lead anywhere), then it must be a
 * regular file, of mode 0600, owned by the user who owns the process
 * (/proc/<pid>'s owner).  The exporter never shrinks the segment; one that
 * shrank under our mapping is not its work, and reading the lost pages
 * would be SIGBUS: its size is checked again before every read
 * (top_seg_check_size()).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tools/segpool-top/top.h"

#define TOP_OPEN_WAIT_MS	2000	/* for a segment being set up */
#define TOP_EXIT_WAIT_MS	500	/* from removing the
					 * segment to exiting */

static void top_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int top_pid_alive(int pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	if (pid <= 0)
		return 0;
	if (kill(pid, 0) && errno == ESRCH)
		return 0;
	/* a zombie still answers kill(): ask /proc for its state */
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return errno == ENOENT ? 0 : -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');		/* the name may hold anything */
	if (p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'))
		return 0;
	return 1;
}

static void top_seg_names(struct top_seg *sg, int pid)
{
	sg->pid = pid;
	snprintf(sg->shm_name, sizeof(sg->shm_name), "%s%d",
		 SEGPOOL_EXPORT_SHM_PREFIX, pid);
	snprintf(sg->path, sizeof(sg->path), "/dev/shm%s", sg->shm_name);
}

/* Why shm_open() failed with @err, in words. */
static enum top_status top_open_error(struct top_seg *sg, int err, char *msg,
				      size_t len)
{
	int alive = top_pid_alive(sg->pid);

	if (err == ENOENT && alive == 0) {
		snprintf(msg, len, "no process with pid %d", sg->pid);
		return TOP_ENOPROC;
	}
	if (err == ENOENT) {
		snprintf(msg, len, "process %d does not export statistics; "
			 "start it with SEGPOOL_EXPORT=1", sg->pid);
		return TOP_ENOEXPORT;
	}
	if (err == EACCES) {
		snprintf(msg, len, "cannot read %s: %s (run %s as the user of "
			 "process %d)", sg->path, strerror(err), TOP_PROG,
			 sg->pid);
		return TOP_EACCES;
	}
	snprintf(msg, len, "cannot open %s: %s", sg->path, strerror(err));
	return TOP_ESYS;
}

/*
 * Is the file we opened a segment a viewer may believe: a regular file, of
 * mode 0600, owned by @pid's owner?  (Root may read anybody's file and the
 * process's user anybody's that is readable: neither proves the exporter
 * wrote it.)
 */
static enum top_status top_seg_trust(struct top_seg *sg, char *msg, size_t len)
{
	struct stat st, proc;
	char path[32];

	if (fstat(sg->fd, &st)) {
		snprintf(msg, len, "cannot stat %s: %s", sg->path,
			 strerror(errno));
		return TOP_ESYS;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(msg, len,
			 "%s is not a regular file (%s of uid %u): not "
			 "a segment of process %d; refused",
			 sg->path,
			 S_ISFIFO(st.st_mode) ? "a FIFO" :
			 S_ISDIR(st.st_mode)  ? "a directory" :
						"a special file",
			 (unsigned int)st.st_uid, sg->pid);
		return TOP_EBADSEG;
	}
	snprintf(path, sizeof(path), "/proc/%d", sg->pid);
	if (stat(path, &proc)) {
		if (errno == ENOENT)
			return TOP_OK;	/* gone: the caller says it exited */
		snprintf(msg, len, "cannot stat %s: %s", path, strerror(errno));
		return TOP_ESYS;
	}
	if (st.st_uid != proc.st_uid) {
		snprintf(msg, len,
			 "%s is owned by uid %u, but process %d runs as "
			 "uid %u: not its segment (planted by another user?); "
			 "refused",
			 sg->path, (unsigned int)st.st_uid, sg->pid,
			 (unsigned int)proc.st_uid);
		return TOP_EBADSEG;
	}
	if ((st.st_mode & 07777) != 0600) {
		snprintf(msg, len, "%s has mode %04o, not 0600: not a segment "
			 "segpool made; refused", sg->path,
			 (unsigned int)(st.st_mode & 07777));
		return TOP_EBADSEG;
	}
	return TOP_OK;
}

enum top_status top_seg_check_size(struct top_seg *sg, char *msg, size_t len)
{
	struct stat st;

	if (fstat(sg->fd, &st)) {
		snprintf(msg, len, "cannot stat %s: %s", sg->path,
			 strerror(errno));
		return TOP_ESYS;
	}
	if ((size_t)st.st_size < sg->map_size) {
		snprintf(msg, len, "%s shrank from %zu to %lld bytes (segpool "
			 "never shrinks a segment): not read", sg->path,
			 sg->map_size, (long long)st.st_size);
		return TOP_EBADSEG;
	}
	return TOP_OK;
}

/* Map what the file holds now (@min bytes at least, or fail). */
static enum top_status top_seg_map(struct top_seg *sg, size_t min, char *msg,
				   size_t len)
{
	struct stat st;
	void *map;

	if (fstat(sg->fd, &st)) {
		snprintf(msg, len, "cannot stat %s: %s", sg->path,
			 strerror(errno));
		return TOP_ESYS;
	}
	if ((size_t)st.st_size < min) {
		snprintf(msg, len, "%s is damaged (%lld bytes, expected %zu)",
			 sg->path, (long long)st.st_size, min);
		return TOP_EBADSEG;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, sg->fd, 0);
	if (map == MAP_FAILED) {
		snprintf(msg, len, "cannot map %s: %s", sg->path,
			 strerror(errno));
		return TOP_ESYS;
	}
	if (sg->map)
		munmap(sg->map, sg->map_size);
	sg->map = map;
	sg->map_size = (size_t)st.st_size;
	sg->ino = st.st_ino;
	return TOP_OK;
}

enum top_status top_seg_remap(struct top_seg *sg, size_t min, char *msg,
			      size_t len)
{
	return top_seg_map(sg, min, msg, len);
}

/* The header's constant part, once @magic says it is written. */
static enum top_status top_seg_head(struct top_seg *sg, char *msg, size_t len)
{
	const struct segpool_export_header *h = sg->map;
	struct segpool_export_header *c = &sg->head;
	uint64_t magic = 0;

	for (int waited = 0; waited < TOP_OPEN_WAIT_MS; waited += 10) {
		magic = __atomic_load_n(&h->magic, __ATOMIC_ACQUIRE);
		if (magic)
			break;
		top_sleep_ms(10);
	}
	if (magic != SEGPOOL_EXPORT_MAGIC) {
		if (!magic && top_pid_alive(sg->pid) == 0) {
			snprintf(msg, len, "process %d exited", sg->pid);
			return TOP_EEXITED;
		}
		snprintf(msg, len, "%s is not a segpool statistics segment",
			 sg->path);
		return TOP_EBADSEG;
	}
	/* written once before the magic: plain reads are fine from here */
	memcpy(c, h, offsetof(struct segpool_export_header, seq));
	c->version[sizeof(c->version) - 1] = '\0';
	c->percpu_mode[sizeof(c->percpu_mode) - 1] = '\0';
	c->comm[sizeof(c->comm) - 1] = '\0';
	if (c->layout_version != SEGPOOL_EXPORT_LAYOUT_VERSION) {
		snprintf(msg, len, "process %d exports statistics in layout "
			 "version %u; this %s reads version %u (use the %s of "
			 "the segpool release the process runs, %s)", sg->pid,
			 c->layout_version, TOP_PROG,
			 SEGPOOL_EXPORT_LAYOUT_VERSION, TOP_PROG,
			 c->version[0] ? c->version : "unknown");
		return TOP_EVERSION;
	}
	if (c->header_size < sizeof(*c) ||
	    c->cache_size < sizeof(struct segpool_export_cache) ||
	    c->cache_node_size < sizeof(struct segpool_export_cache_node) ||
	    c->node_size < sizeof(struct segpool_export_node) ||
	    (c->header_size | c->cache_size | c->cache_node_size |
	     c->node_size) % 8 || c->nr_nodes == 0 || c->nr_nodes > 4096 ||
	    c->header_size > sg->map_size) {
		snprintf(msg, len, "%s is damaged (record sizes %u/%u/%u/%u, "
			 "%u nodes)", sg->path, c->header_size, c->cache_size,
			 c->cache_node_size, c->node_size, c->nr_nodes);
		return TOP_EBADSEG;
	}
	if (c->pid != sg->pid) {
		snprintf(msg, len, "%s belongs to pid %d, not %d", sg->path,
			 c->pid, sg->pid);
		return TOP_EBADSEG;
	}
	return TOP_OK;
}

enum top_status top_seg_open(struct top_seg *sg, int pid, char *msg,
			     size_t len)
{
	enum top_status st;
	struct stat sb;
	int waited;

	memset(sg, 0, sizeof(*sg));
	sg->fd = -1;
	top_seg_names(sg, pid);
	/* not shm_open(): it would wait for a writer of a planted FIFO */
	sg->fd = open(sg->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	if (sg->fd < 0 && errno == ELOOP) {
		snprintf(msg, len, "%s is a symbolic link: not a segment of "
			 "process %d; refused", sg->path, pid);
		return TOP_EBADSEG;
	}
	if (sg->fd < 0)
		return top_open_error(sg, errno, msg, len);
	st = top_seg_trust(sg, msg, len);
	if (st != TOP_OK) {
		top_seg_close(sg);
		return st;
	}
	/* a segment being created may not have its size yet */
	for (waited = 0; waited < TOP_OPEN_WAIT_MS; waited += 10) {
		if (fstat(sg->fd, &sb) == 0 &&
		    (size_t)sb.st_size >= sizeof(struct segpool_export_header))
			break;
		top_sleep_ms(10);
	}
	st = top_seg_map(sg, sizeof(struct segpool_export_header), msg, len);
	if (st == TOP_OK)
		st = top_seg_head(sg, msg, len);
	if (st == TOP_OK && top_pid_alive(pid) == 0) {
		snprintf(msg, len, "process %d exited (it left %s behind)", pid,
			 sg->path);
		st = TOP_EEXITED;
	}
	if (st != TOP_OK)
		top_seg_close(sg);
	return st;
}

enum top_status top_seg_check(struct top_seg *sg, char *msg, size_t len)
{
	struct top_seg fresh;
	char ignored[TOP_MSG_LEN];
	struct stat st;

	if (top_pid_alive(sg->pid) == 0) {
		snprintf(msg, len, "process %d exited", sg->pid);
		return TOP_EEXITED;
	}
	if (fstat(sg->fd, &st) == 0 && st.st_nlink > 0)
		return TOP_OK;
	/* unlinked: stopped for good, or started again under a new file */
	if (top_seg_open(&fresh, sg->pid, ignored, sizeof(ignored)) == TOP_OK) {
		if (fresh.ino != sg->ino) {
			top_seg_close(sg);
			*sg = fresh;
			return TOP_OK;
		}
		top_seg_close(&fresh);
	}
	/* a process that exits removes its segment first: give it a moment */
	for (int waited = 0; waited < TOP_EXIT_WAIT_MS; waited += 20) {
		if (top_pid_alive(sg->pid) == 0) {
			snprintf(msg, len, "process %d exited", sg->pid);
			return TOP_EEXITED;
		}
		top_sleep_ms(20);
	}
	snprintf(msg, len, "process %d stopped exporting statistics", sg->pid);
	return TOP_ESTOPPED;
}

void top_seg_close(struct top_seg *sg)
{
	if (sg->map)
		munmap(sg->map, sg->map_size);
	if (sg->fd >= 0)
		close(sg->fd);
	sg->map = NULL;
	sg->map_size = 0;
	sg->fd = -1;
}
