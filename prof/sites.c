// SPDX-License-Identifier: MIT
/*
 * prof/sites.c - the top call sites of the heap profile, symbolised, for
 * segpool-top --sites (a request served by stats/export_ctl.c).
 *
 * The @n stacks with the most sampled bytes in use are picked under the
 * table's lock (sp_prof_walk(): one snapshot, nothing allocated), then
 * written outside it, their first SP_PROF_SITE_FRAMES frames named with
 * dladdr() here, in the process, where the addresses mean something.  The
 * request reaches here through sp_export_sites_fn (stats/export.h), set
 * by sp_prof_init() when sampling may start.  The file is text, one
 * line per site, fields split by tabs:
 *
 *   total	<bytes in use>	<objects in use>	<samples>	<rate>
 *   site	<bytes>	<objects>	<cache, or "large">	<frame>...
 *
 * a frame as "0x<address> <symbol>+0x<offset>" or, for a symbol dladdr()
 * cannot name (a static function, an executable without -rdynamic),
 * "0x<address> <module>+0x<offset>"; the sites in decreasing bytes.  It is
 * written beside @path and renamed over it, as the profile is.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <segpool/export.h>

#include "os/os.h"
#include "prof/prof.h"

_Static_assert(SP_PROF_SITES_MAX == SEGPOOL_CTL_SITES_MAX &&
	       SP_PROF_SITES_PATH == SEGPOOL_CTL_PATH_MAX,
	       "the sites answer what the control segment asks");

struct sp_prof_site {
	double objs, bytes;
	int frames;
	char cache[32];
	void *pcs[SP_PROF_SITE_FRAMES];
};

struct sp_prof_top {
	unsigned int n, want;
	struct sp_prof_site s[SP_PROF_SITES_MAX];
};

/* Keep the stack if it is among the @want largest so far (under the lock). */
static int sp_prof_top_line(void *arg, const char *cache, void *const *pcs,
			    int frames, const double v[4])
{
	struct sp_prof_top *t = arg;
	struct sp_prof_site *s;
	unsigned int i;

	if (v[1] < 0.5)
		return 0;
	if (t->n == t->want && v[1] <= t->s[t->n - 1].bytes)
		return 0;
	i = t->n < t->want ? t->n++ : t->n - 1;
	for (; i > 0 && t->s[i - 1].bytes < v[1]; i--)
		t->s[i] = t->s[i - 1];
	s = &t->s[i];
	s->objs = v[0];
	s->bytes = v[1];
	s->frames = frames < SP_PROF_SITE_FRAMES ? frames : SP_PROF_SITE_FRAMES;
	memcpy(s->pcs, pcs, (size_t)s->frames * sizeof(void *));
	snprintf(s->cache, sizeof(s->cache), "%s", *cache ? cache : "large");
	return 0;
}

/* " 0x... name+0x..." for @pc at the end of @buf (@len bytes, @at used). */
static size_t sp_prof_frame(char *buf, size_t len, size_t at, void *pc)
{
	uintptr_t a = (uintptr_t)pc;
	const char *mod;
	Dl_info info;
	int n;

	if (at >= len)
		return at;
	if (!dladdr(pc, &info) || !info.dli_fname) {
		n = snprintf(buf + at, len - at, "\t%#lx", (unsigned long)a);
	} else if (info.dli_sname && info.dli_saddr) {
		n = snprintf(buf + at, len - at, "\t%#lx %s+%#lx",
			     (unsigned long)a, info.dli_sname,
			     (unsigned long)(a - (uintptr_t)info.dli_saddr));
	} else {
		mod = strrchr(info.dli_fname, '/');
		n = snprintf(buf + at, len - at, "\t%#lx %s+%#lx",
			     (unsigned long)a, mod ? mod + 1 : info.dli_fname,
			     (unsigned long)(a - (uintptr_t)info.dli_fbase));
	}
	return n < 0 ? len : at + (size_t)n;
}

int sp_prof_sites(const char *path, unsigned int n)
{
	static struct sp_prof_top top __sp_big;	/* one request at a time */
	char tmp[SP_PROF_SITES_PATH + 16], line[2048];
	struct sp_prof_totals tot;
	size_t at;
	int fd, err;

	if (!__atomic_load_n(&sp_prof_on, __ATOMIC_ACQUIRE)) {
		errno = ENOTSUP;
		return -1;
	}
	if (!path || path[0] != '/' || strlen(path) >= SP_PROF_SITES_PATH ||
	    n == 0 || n > SP_PROF_SITES_MAX) {
		errno = EINVAL;
		return -1;
	}
	top.n = 0;
	top.want = n;
	sp_prof_walk(NULL, sp_prof_top_line, &top, &tot);
	fd = sp_os_user_file_begin(path, tmp, sizeof(tmp));
	if (fd < 0)
		return -1;
	at = (size_t)snprintf(line, sizeof(line),
			      "total\t%.0f\t%.0f\t%llu\t%lld\n",
			      tot.inuse_bytes > 0 ? tot.inuse_bytes : 0,
			      tot.inuse_objs > 0 ? tot.inuse_objs : 0,
			      (unsigned long long)tot.samples, sp_prof_rate);
	if (sp_os_write_all(fd, line, at))
		goto fail;
	for (unsigned int i = 0; i < top.n; i++) {
		struct sp_prof_site *s = &top.s[i];

		at = (size_t)snprintf(line, sizeof(line),
				      "site\t%.0f\t%.0f\t%s", s->bytes,
				      s->objs, s->cache);
		for (int f = 0; f < s->frames; f++)
			at = sp_prof_frame(line, sizeof(line) - 1, at,
					   s->pcs[f]);
		if (at > sizeof(line) - 2)
			at = sizeof(line) - 2;
		line[at++] = '\n';
		if (sp_os_write_all(fd, line, at))
			goto fail;
	}
	if (sp_os_user_file_commit(fd, tmp, path))
		return -1;
	return (int)top.n;
fail:
	err = errno;
	sp_os_user_file_abort(fd, tmp);
	errno = err;
	return -1;
}
