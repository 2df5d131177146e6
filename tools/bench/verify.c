// SPDX-License-Identifier: MIT
/*
 * tools/bench/verify.c - find the peer libraries, and prove who serves malloc.
 *
 * The driver looks each peer's library up on disk (beside glibc, then the
 * usual library folders) and preloads it into the child by absolute path.
 * The child then asks the dynamic linker which object defines the malloc
 * every call in this program binds to (dladdr(dlsym(RTLD_DEFAULT,
 * "malloc"))), and reads /proc/self/maps for the allocator libraries
 * actually mapped.  A run whose intended library is not the one serving
 * malloc, or that has another peer mapped, is refused, never reported.
 *
 * segpool's contenders are checked the same way for their per-CPU mode:
 * the child asks segpool_percpu_mode() and refuses to report when it is not
 * the contender's.  The default contenders want "rseq", and accept segpool's
 * lock fallback only where the child's own probe finds rseq unusable
 * (valgrind, an old kernel, a seccomp filter, another architecture) or in a
 * ThreadSanitizer build, whose default is the lock mode.
 */
#include <dlfcn.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>

#include <segpool/segpool.h>

#include "tools/bench/bench.h"

static const char *bench_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Is @path the file of @soname (or a versioned name it points to)? */
static bool bench_is_lib(const char *path, const char *soname)
{
	return !strncmp(bench_basename(path), soname, strlen(soname));
}

static bool bench_try_dir(const char *dir, size_t dlen, const char *soname,
			  char *buf, size_t len)
{
	if (dlen == 0 ||
	    (size_t)snprintf(buf, len, "%.*s/%s", (int)dlen, dir, soname) >= len)
		return false;
	return access(buf, R_OK) == 0;
}

const char *bench_peer_path(const struct bench_contender *c, char *buf,
			    size_t len)
{
	static const char *const dirs[] = {
		"/usr/local/lib", "/usr/lib", "/lib64", "/usr/lib64",
	};
	const char *env = getenv("SEGPOOL_BENCH_LIBPATH");
	Dl_info libc;

	if (!c->soname)
		return NULL;
	/* a peer of the command line names its library by absolute path */
	if (c->soname[0] == '/') {
		if (access(c->soname, R_OK) ||
		    (size_t)snprintf(buf, len, "%s", c->soname) >= len)
			return NULL;
		return buf;
	}
	/* SEGPOOL_BENCH_LIBPATH: folders to look in first, colon-separated */
	while (env && *env) {
		size_t n = strcspn(env, ":");

		if (bench_try_dir(env, n, c->soname, buf, len))
			return buf;
		env += n + (env[n] == ':');
	}
	/* glibc's folder is the multiarch one (/lib/x86_64-linux-gnu) */
	if (dladdr((void *)gnu_get_libc_version, &libc) && libc.dli_fname) {
		const char *base = bench_basename(libc.dli_fname);
		size_t n = (size_t)(base - libc.dli_fname);
		char usr[256];

		if (n > 1 && bench_try_dir(libc.dli_fname, n - 1, c->soname,
					   buf, len))
			return buf;
		if (n > 1 && !strncmp(libc.dli_fname, "/lib", 4) &&
		    (size_t)snprintf(usr, sizeof(usr), "/usr%.*s", (int)(n - 1),
				     libc.dli_fname) < sizeof(usr) &&
		    bench_try_dir(usr, strlen(usr), c->soname, buf, len))
			return buf;
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (bench_try_dir(dirs[i], strlen(dirs[i]), c->soname, buf, len))
			return buf;
	return NULL;
}

/*
 * The allocator libraries mapped now, as "a b" into @out: basenames, and
 * the whole path for a --peer library (its soname is a path), so that a
 * peer named libmimalloc.so is not taken for Debian's libmimalloc.so.2.
 */
static void bench_mapped_peers(char *out, size_t len)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	size_t used = 0;

	out[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/');

		if (!path)
			continue;
		path[strcspn(path, "\n")] = '\0';
		for (unsigned int i = 0; i < bench_nr_contenders; i++) {
			const struct bench_contender *c = &bench_contenders[i];
			const char *name;

			if (!c->soname)
				continue;
			if (c->soname[0] == '/') {
				if (strcmp(path, c->soname))
					continue;
				name = path;
			} else {
				if (!bench_is_lib(path, bench_basename(c->soname)))
					continue;
				name = bench_basename(path);
			}
			if (strstr(out, name))
				continue;
			used += (size_t)snprintf(out + used, len - used, "%s%s",
						 used ? " " : "", name);
			if (used >= len)
				used = len - 1;
		}
	}
	fclose(f);
}

int bench_verify_heap(const struct bench_contender *c, char *served,
		      size_t len, char *mapped, size_t mlen)
{
	void *sym = dlsym(RTLD_DEFAULT, "malloc");
	Dl_info info;
	int ret = 0;

	snprintf(served, len, "?");
	if (sym && dladdr(sym, &info) && info.dli_fname)
		snprintf(served, len, "%s", info.dli_fname);
	bench_mapped_peers(mapped, mlen);

	if (c->kind == BENCH_MALLOC && !bench_is_lib(served, c->malloc_from)) {
		bench_warn("%s: malloc is served by %s, not %s: refusing to "
			   "report", c->name, served, c->malloc_from);
		ret = -1;
	}
	for (unsigned int i = 0; i < bench_nr_contenders; i++) {
		const struct bench_contender *p = &bench_contenders[i];
		bool present, wanted = p == c;

		if (!p->soname)
			continue;
		/* a peer of the command line may be a built-in one's file */
		if (p != c && c->soname &&
		    !strcmp(bench_basename(p->soname), bench_basename(c->soname)))
			continue;
		present = strstr(mapped, p->soname[0] == '/' ? p->soname :
				 bench_basename(p->soname)) != NULL;
		if (present != wanted) {
			bench_warn("%s: %s is %smapped: refusing to report",
				   c->name, p->soname, present ? "" : "not ");
			ret = -1;
		}
	}
	return ret;
}

void *bench_contender_sym(const struct bench_contender *c, const char *name)
{
	void *sym = dlsym(RTLD_DEFAULT, name);
	Dl_info info;

	if (!sym || !dladdr(sym, &info) || !info.dli_fname ||
	    !bench_is_lib(info.dli_fname, c->malloc_from))
		return NULL;
	return sym;
}

const char *bench_self_version(const struct bench_contender *c, char *buf,
			       size_t len)
{
	void *sym;

	buf[0] = '\0';
	if (c->kind != BENCH_MALLOC)
		return buf;
	if (!c->soname) {
		snprintf(buf, len, "%s", gnu_get_libc_version());
	} else if ((sym = bench_contender_sym(c, "mallctl"))) {
		const char *v = NULL;
		size_t sz = sizeof(v);

		if (!((bench_mallctl_fn)sym)("version", &v, &sz, NULL, 0) && v)
			snprintf(buf, len, "%.*s", (int)strcspn(v, "-"), v);
	} else if ((sym = bench_contender_sym(c, "tc_version"))) {
		int major, minor;
		const char *patch, *v;

		v = ((const char *(*)(int *, int *, const char **))sym)(
			&major, &minor, &patch);
		snprintf(buf, len, "%s", v ? v : "");
	} else if ((sym = bench_contender_sym(c, "mi_version"))) {
		int v = ((int (*)(void))sym)();

		snprintf(buf, len, "%d.%d.%d", v / 100, v / 10 % 10, v % 10);
	}
	return buf;
}

/*
 * Could segpool run on rseq in this process?  Only the kernel's side is
 * probed: rseq itself (a registration of length 0 is refused with EINVAL by
 * a kernel that has the call, registered or not; valgrind and old kernels
 * answer ENOSYS, seccomp filters usually EPERM) and membarrier's rseq
 * fence, which segpool needs for its cross-CPU drains; and segpool has an
 * rseq port for x86_64 only.  Fills @why when the answer is no.
 */
static bool bench_rseq_usable(char *why, size_t len)
{
#if defined(__x86_64__) && defined(__NR_rseq) && defined(__NR_membarrier)
	long cmds;

	if (syscall(__NR_rseq, NULL, 0, 0, 0) < 0 &&
	    (errno == ENOSYS || errno == EPERM)) {
		snprintf(why, len, "rseq: %s", strerror(errno));
		return false;
	}
	cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ)) {
		snprintf(why, len, "membarrier: %s", cmds < 0 ?
			 strerror(errno) : "no rseq fence");
		return false;
	}
	return true;
#else
	snprintf(why, len, "no rseq port for this architecture");
	return false;
#endif
}

/* Does @mode (segpool_percpu_mode()) name mode @want ("rseq", "lock", ...)? */
static bool bench_mode_is(const char *mode, const char *want)
{
	size_t n = strlen(want);

	return !strncmp(mode, want, n) && (mode[n] == ' ' || !mode[n]);
}

int bench_verify_percpu(const struct bench_contender *c, char *mode,
			size_t len)
{
	char why[96];

	mode[0] = '\0';
	if (!c->percpu)
		return 0;
	snprintf(mode, len, "%s", segpool_percpu_mode());
	/* the variant build, and only it, says so in its mode */
	if (c->mode_note ? !strstr(mode, c->mode_note) :
			   strstr(mode, "no hit counters") != NULL) {
		bench_warn("%s: segpool runs in mode '%s': not the build this "
			   "contender names (%s): refusing to report", c->name,
			   mode, c->mode_note ? c->mode_note : "the default");
		return -1;
	}
	if (bench_mode_is(mode, c->percpu))
		return 0;
	/*
	 * The default contender, with SEGPOOL_PERCPU unset by the driver: the
	 * lock mode stands only where the library fell back on its own, and
	 * rightly so.
	 */
	if (!strcmp(c->percpu, "rseq") && bench_mode_is(mode, "lock") &&
	    !strstr(mode, "SEGPOOL_PERCPU=")) {
		if (strstr(mode, "ThreadSanitizer build") ||
		    !bench_rseq_usable(why, sizeof(why)))
			return 0;
		bench_warn("%s: segpool runs in mode '%s' although rseq is "
			   "usable here: refusing to report", c->name, mode);
		return -1;
	}
	bench_warn("%s: segpool runs in mode '%s', not %s: refusing to report",
		   c->name, mode, c->percpu);
	return -1;
}
