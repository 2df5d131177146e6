// SPDX-License-Identifier: MIT
/*
 * prof/dump.c - the heap profile as a file, in the text format of
 * gperftools' heap profiler (google-pprof; jemalloc's jeprof is its fork):
 *
 *   heap profile: N: B [ N: B] @ heapprofile
 *   n: b [ n: b] @ 0x... 0x...        one line per stack (and cache)
 *   ...
 *   MAPPED_LIBRARIES:
 *   (the process's /proc/self/maps)
 *
 * N: B are objects and bytes in use, the bracketed pair those allocated
 * since sampling began, every figure already weighted ("heapprofile": the
 * readers scale nothing).  A line's addresses are return addresses, the
 * allocating call's first.  Above each line a comment names the cache of
 * its objects ("# cache kmalloc-64", "# large" for blocks above the size
 * classes): pprof skips lines it does not understand, and a stack that
 * allocated from two caches has a line for each.  Header and lines are
 * written under the table's lock, from one snapshot; the memory map after.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal/report.h"
#include "os/os.h"
#include "prof/prof.h"
#include "stats/print.h"

struct sp_prof_out {
	int fd;
	size_t len;
	char buf[8192];
};

static int sp_prof_flush(struct sp_prof_out *o)
{
	if (o->len && sp_os_write_all(o->fd, o->buf, o->len))
		return -1;
	o->len = 0;
	return 0;
}

static __sp_printf(2, 3) int sp_prof_put(struct sp_prof_out *o, const char *fmt,
					 ...)
{
	va_list ap;
	int n;

	if (sizeof(o->buf) - o->len < 512 && sp_prof_flush(o))
		return -1;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, sizeof(o->buf) - o->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(o->buf) - o->len)
		return -1;
	o->len += (size_t)n;
	return 0;
}

static unsigned long long sp_prof_round(double v)
{
	return v <= 0 ? 0 : (unsigned long long)(v + 0.5);
}

static int sp_prof_line(void *arg, const char *cache, void *const *pcs,
			int frames, const double v[4])
{
	struct sp_prof_out *o = arg;

	if (sp_prof_round(v[2]) == 0)
		return 0;
	if (*cache ? sp_prof_put(o, "# cache %s\n", cache) :
		     sp_prof_put(o, "# large\n"))
		return -1;
	if (sp_prof_put(o, "%llu: %llu [%llu: %llu] @", sp_prof_round(v[0]),
			sp_prof_round(v[1]), sp_prof_round(v[2]),
			sp_prof_round(v[3])))
		return -1;
	for (int i = 0; i < frames; i++)
		if (sp_prof_put(o, " %p", pcs[i]))
			return -1;
	return sp_prof_put(o, "\n");
}

/* The header, from the same snapshot as the lines (under the table's lock). */
static int sp_prof_head(void *arg, const struct sp_prof_totals *t)
{
	struct sp_prof_out *o = arg;

	return sp_prof_put(o, "heap profile: %llu: %llu [%llu: %llu] "
			   "@ heapprofile\n",
			   sp_prof_round(t->inuse_objs),
			   sp_prof_round(t->inuse_bytes),
			   sp_prof_round(t->alloc_objs),
			   sp_prof_round(t->alloc_bytes)) ||
	       sp_prof_put(o, "# segpool heap profile: 1 sample per %lld "
			   "bytes (mean), figures weighted; %llu samples, "
			   "%llu dropped\n",
			   sp_prof_rate, (unsigned long long)t->samples,
			   (unsigned long long)t->dropped);
}

int sp_prof_write(int fd)
{
	static struct sp_prof_out o __sp_big;	/* a dump at a time: locked */
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct sp_prof_totals t;
	int maps, err = 0;

	pthread_mutex_lock(&lock);
	o.fd = fd;
	o.len = 0;
	if (sp_prof_walk(sp_prof_head, sp_prof_line, &o, &t) ||
	    sp_prof_put(&o, "\nMAPPED_LIBRARIES:\n") || sp_prof_flush(&o)) {
		err = errno ? errno : EIO;
		goto out;
	}
	maps = sp_os_open_read("/proc/self/maps");
	if (maps < 0) {
		err = errno;
		goto out;
	}
	for (;;) {
		ssize_t n = sp_os_read(maps, o.buf, sizeof(o.buf));

		if (n <= 0) {
			if (n < 0)
				err = errno;
			break;
		}
		o.len = (size_t)n;
		if (sp_prof_flush(&o)) {
			err = errno ? errno : EIO;
			break;
		}
	}
	sp_os_close(maps);
out:
	pthread_mutex_unlock(&lock);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

int sp_prof_dump(const char *path)
{
	char file[sizeof(sp_prof_path) + 16], tmp[sizeof(file) + 16];
	int fd, err;

	if (!__atomic_load_n(&sp_prof_on, __ATOMIC_ACQUIRE)) {
		errno = EINVAL;
		return -1;
	}
	if (!path || strlen(path) >= sizeof(sp_prof_path) ||
	    sp_stats_path_expand(path, sp_os_pid(), file, sizeof(file))) {
		errno = EINVAL;
		return -1;
	}
	fd = sp_os_user_file_begin(file, tmp, sizeof(tmp));
	if (fd < 0)
		return -1;
	if (sp_prof_write(fd)) {
		err = errno;
		sp_os_user_file_abort(fd, tmp);
		errno = err;
		return -1;
	}
	return sp_os_user_file_commit(fd, tmp, file);
}

void sp_prof_at_exit(void)
{
	int err = errno;

	if (sp_prof_path[0] && sp_prof_dump(sp_prof_path))
		sp_warn("SEGPOOL_HEAP_PROFILE=%s: cannot write the profile: %s",
			sp_prof_path, strerror(errno));
	errno = err;
}
