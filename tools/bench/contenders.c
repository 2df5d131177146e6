// SPDX-License-Identifier: MIT
/*
 * tools/bench/contenders.c - who competes, and how each one allocates.
 *
 * segpool's two APIs are linked in; the malloc contenders are one malloc()
 * call served by glibc or by the library the driver preloaded.  The child
 * refuses to report when the intended library does not serve malloc or
 * another peer is mapped, or when segpool runs in another per-CPU mode;
 * Documentation/internals/benchmarks.md says how each is checked.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <gnu/libc-version.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>

#include <segpool/segpool.h>

#include "tools/bench/bench.h"

static const char *bench_base(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Is @path the file of @soname (or a versioned name of it)? */
static bool bench_is_lib(const char *path, const char *soname)
{
	return !strncmp(bench_base(path), soname, strlen(soname));
}

/* SEGPOOL_BENCH_LIBPATH, glibc's (multiarch) folder, the usual ones */
const char *bench_peer_path(const struct bench_contender *c, char *buf,
			    size_t len)
{
	const char *env = getenv("SEGPOOL_BENCH_LIBPATH");
	char dirs[1024];
	Dl_info libc = { .dli_fname = "/lib/" };
	int n;

	if (!c->soname)
		return NULL;
	if (c->soname[0] == '/')	/* a --peer: its absolute path */
		return access(c->soname, R_OK) || (size_t)snprintf(buf, len,
			"%s", c->soname) >= len ? NULL : buf;
	dladdr((void *)gnu_get_libc_version, &libc);
	n = (int)(bench_base(libc.dli_fname) - libc.dli_fname - 1);
	snprintf(dirs, sizeof(dirs), "%s:%.*s:/usr%.*s:/usr/local/lib:/usr/lib",
		 env ? env : "", n, libc.dli_fname, n, libc.dli_fname);
	for (char *d = strtok(dirs, ":"); d; d = strtok(NULL, ":"))
		if ((size_t)snprintf(buf, len, "%s/%s", d, c->soname) < len &&
		    !access(buf, R_OK))
			return buf;
	return NULL;
}

/*
 * The allocator libraries mapped, as "a b": basenames, the whole path for
 * a --peer (a libmimalloc.so of one's own is not Debian's .so.2).
 */
static void bench_mapped(char *out, size_t len)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	size_t used = 0;

	out[0] = '\0';
	while (f && fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/');

		if (!path)
			continue;
		path[strcspn(path, "\n")] = '\0';
		for (unsigned int i = 0; i < bench_nr_contenders; i++) {
			const char *so = bench_contenders[i].soname, *name;

			if (!so || (so[0] == '/' ? strcmp(path, so) :
				    !bench_is_lib(path, so)))
				continue;
			name = so[0] == '/' ? path : bench_base(path);
			if (!strstr(out, name) && used < len)
				used += (size_t)snprintf(out + used,
					len - used, "%s%s", used ? " " : "",
					name);
		}
	}
	if (f)
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
	bench_mapped(mapped, mlen);
	if (c->kind == BENCH_MALLOC && !bench_is_lib(served, c->malloc_from)) {
		bench_warn("%s: malloc is served by %s, not %s: refusing to "
			   "report", c->name, served, c->malloc_from);
		ret = -1;
	}
	for (unsigned int i = 0; i < bench_nr_contenders; i++) {
		const char *so = bench_contenders[i].soname;
		bool present, wanted = &bench_contenders[i] == c;

		/* a --peer may be a built-in one's file */
		if (!so || (!wanted && c->soname &&
			    !strcmp(bench_base(so), bench_base(c->soname))))
			continue;
		present = strstr(mapped, so[0] == '/' ? so : bench_base(so)) !=
			  NULL;
		if (present != wanted) {
			bench_warn("%s: %s is %smapped: refusing to report",
				   c->name, so, present ? "" : "not ");
			ret = -1;
		}
	}
	return ret;
}

static void *bench_contender_sym(const struct bench_contender *c,
				const char *name)
{
	void *sym = dlsym(RTLD_DEFAULT, name);
	Dl_info info;

	if (!sym || !dladdr(sym, &info) || !info.dli_fname ||
	    !bench_is_lib(info.dli_fname, c->malloc_from))
		return NULL;
	return sym;
}

/*
 * Could segpool run on rseq here?  The kernel's side: rseq itself (length
 * 0 is refused with EINVAL by a kernel that has the call; valgrind and old
 * kernels say ENOSYS, seccomp filters EPERM) and membarrier's rseq fence;
 * and segpool's rseq port, for x86_64 only.
 */
static bool bench_rseq_usable(void)
{
#if defined(__x86_64__) && defined(__NR_rseq) && defined(__NR_membarrier)
	long cmds;

	if (syscall(__NR_rseq, NULL, 0, 0, 0) < 0 &&
	    (errno == ENOSYS || errno == EPERM))
		return false;
	cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	return cmds >= 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ);
#else
	return false;
#endif
}

/* Does @mode (segpool_percpu_mode()) name mode @want? */
static bool bench_mode_is(const char *mode, const char *want)
{
	size_t n = strlen(want);

	return !strncmp(mode, want, n) && (mode[n] == ' ' || !mode[n]);
}

int bench_verify_percpu(const struct bench_contender *c, char *mode,
			size_t len)
{
	mode[0] = '\0';
	if (!c->percpu)
		return 0;
	snprintf(mode, len, "%s", segpool_percpu_mode());
	/* the variant build, and only it, says so in its mode */
	if (!c->exec_suffix != !strstr(mode, "no hit counters")) {
		bench_warn("%s: segpool runs in mode '%s', not the build "
			   "this contender names: refusing to report", c->name,
			   mode);
		return -1;
	}
	/* sampling on exactly where the contender says so */
	if (!segpool_heap_profile_enabled() != !c->sampled_of) {
		bench_warn("%s: sampled heap profiling is %s in the child: "
			   "refusing to report", c->name,
			   c->sampled_of ? "off" : "on");
		return -1;
	}
	if (c->sampled_of)
		snprintf(mode + strlen(mode), len - strlen(mode),
			 ", heap profile sampled");
	if (bench_mode_is(mode, c->percpu))
		return 0;
	/* the default contenders: the library's own fallback, rightly so */
	if (!strcmp(c->percpu, "rseq") && bench_mode_is(mode, "lock") &&
	    !strstr(mode, "SEGPOOL_PERCPU=") &&
	    (strstr(mode, "ThreadSanitizer build") || !bench_rseq_usable()))
		return 0;
	bench_warn("%s: segpool runs in mode '%s', not %s: refusing to report",
		   c->name, mode, c->percpu);
	return -1;
}

#define LIBC .malloc_from = "libc.so.6"
#define CACHE(n, t, mode, ...) { .name = n, .title = t, LIBC, \
	.kind = BENCH_SEGPOOL_CACHE, .percpu = mode, __VA_ARGS__ }
#define PEER(n, t, pkg, so, trim) { .name = n, .title = t, .peer = true, \
	.kind = BENCH_MALLOC, .package = pkg, .soname = so, \
	.malloc_from = so, .trim_sym = trim }

struct bench_contender bench_contenders[BENCH_MAX_C] = {
	CACHE("segpool-cache", "segpool_cache_alloc(), a cache per size class",
	      "rseq"),
	CACHE("segpool-cache-lock", "segpool-cache, SEGPOOL_PERCPU=lock",
	      "lock"),
	CACHE("segpool-cache-off", "segpool-cache, SEGPOOL_PERCPU=off", "off"),
	CACHE("segpool-cache-nostats", "segpool-cache built without hit "
	      "counters", "rseq", .exec_suffix = "-nostats"),
	CACHE("segpool-cache-plain", "segpool-cache, "
	      "SEGPOOL_FREELIST_HARDENED=0", "rseq",
	      .env = "SEGPOOL_FREELIST_HARDENED=0"),
	CACHE("segpool-cache-off-plain", "segpool-cache-off, "
	      "SEGPOOL_FREELIST_HARDENED=0", "off",
	      .env = "SEGPOOL_FREELIST_HARDENED=0"),
	CACHE("segpool-cache-inline", "segpool-cache built with "
	      "SEGPOOL_INLINE", "rseq", .inline_api = true),
	{ .name = "segpool-malloc", .title = "segpool_malloc() size classes",
	  .kind = BENCH_SEGPOOL_MALLOC, LIBC, .percpu = "rseq" },
	/* sampled heap profiling's cost: the two above with it on */
	CACHE("segpool-cache-sampled", "segpool-cache, SEGPOOL_HEAP_PROFILE "
	      "set (the default rate)", "rseq",
	      .sampled_of = "segpool-cache"),
	{ .name = "segpool-malloc-sampled", .title = "segpool-malloc, "
	  "SEGPOOL_HEAP_PROFILE set (the default rate)",
	  .kind = BENCH_SEGPOOL_MALLOC, LIBC, .percpu = "rseq",
	  .sampled_of = "segpool-malloc" },
	{ .name = "glibc", .title = "glibc malloc", .kind = BENCH_MALLOC,
	  .peer = true, .package = "libc6", LIBC, .trim_sym = "malloc_trim" },
	PEER("jemalloc", "jemalloc (LD_PRELOAD)", "libjemalloc2",
	     "libjemalloc.so.2", "mallctl"),
	PEER("tcmalloc", "tcmalloc minimal (LD_PRELOAD)",
	     "libtcmalloc-minimal4", "libtcmalloc_minimal.so.4",
	     "MallocExtension_ReleaseFreeMemory"),
	PEER("mimalloc", "mimalloc (LD_PRELOAD)", "libmimalloc2.0",
	     "libmimalloc.so.2", "mi_collect"),
	/* found in the build tree through SEGPOOL_BENCH_LIBPATH */
	{ .name = "segpool-preload", .kind = BENCH_MALLOC,
	  .title = "libsegpool-malloc.so (LD_PRELOAD)",
	  .soname = "libsegpool-malloc.so.0",
	  .malloc_from = "libsegpool-malloc.so.0", .trim_sym = "malloc_trim" },
	{ .name = "floor", .kind = BENCH_FLOOR, LIBC,
	  .title = "harness floor: no allocator (per-thread LIFO of slots)" },
};

unsigned int bench_nr_contenders = BENCH_NR_BUILTIN;

int bench_add_peer(const char *spec)
{
	static char names[BENCH_MAX_EXTRA][32];
	static char paths[BENCH_MAX_EXTRA][PATH_MAX];
	const char *eq = strchr(spec, '=');
	unsigned int k = bench_nr_contenders - BENCH_NR_BUILTIN;
	struct bench_contender *c = &bench_contenders[bench_nr_contenders];

	if (!eq || eq == spec || eq - spec >= 32 || eq[1] != '/' ||
	    strlen(eq) >= PATH_MAX)
		return -EINVAL;
	if (k >= BENCH_MAX_EXTRA)
		return -ENOSPC;
	snprintf(names[k], sizeof(names[k]), "%.*s", (int)(eq - spec), spec);
	if (bench_contender_find(names[k]))
		return -EEXIST;
	/* the file itself: /proc/self/maps names it, not a symlink */
	if (!realpath(eq + 1, paths[k]))
		snprintf(paths[k], sizeof(paths[k]), "%s", eq + 1);
	*c = (struct bench_contender){
		.name = names[k], .title = paths[k], .kind = BENCH_MALLOC,
		.peer = true, .soname = paths[k],
		.malloc_from = strrchr(paths[k], '/') + 1,
	};
	bench_nr_contenders++;
	return 0;
}

const struct bench_contender *bench_contender_find(const char *name)
{
	for (unsigned int i = 0; i < bench_nr_contenders; i++)
		if (!strcmp(bench_contenders[i].name, name))
			return &bench_contenders[i];
	return NULL;
}

struct bench_heap bench_heap;
static const struct bench_contender *bench_owner;
static struct segpool_cache *bench_caches[BENCH_MAX_CLASSES];
static unsigned int bench_nr_caches;
struct segpool_cache *bench_cache_of[BENCH_CACHE_MAX_SIZE / 8 + 1];

static void *bench_cache_alloc(size_t size)
{
	return segpool_cache_alloc(bench_cache_of[(size + 7) >> 3], 0);
}

static void bench_cache_free(void *p, size_t size)
{
	segpool_cache_free(bench_cache_of[(size + 7) >> 3], p);
}

/* A cache per class; every size maps to the class that holds it. */
static int bench_caches_create(const size_t *cls, unsigned int nr)
{
	unsigned int k = 0;

	if (cls[nr - 1] > BENCH_CACHE_MAX_SIZE || nr > BENCH_MAX_CLASSES)
		return -1;
	for (unsigned int i = 0; i < nr; i++) {
		char name[32];

		snprintf(name, sizeof(name), "bench-%zu", cls[i]);
		bench_caches[i] = segpool_cache_create(name, cls[i], 0, 0,
						       NULL);
		if (!bench_caches[i]) {
			bench_warn("segpool_cache_create(%s): %s", name,
				   strerror(errno));
			return -1;
		}
		bench_nr_caches = i + 1;
	}
	for (size_t slot = 0; slot <= (cls[nr - 1] + 7) / 8; slot++) {
		while (k < nr && cls[k] < slot * 8)
			k++;
		bench_cache_of[slot] = bench_caches[k < nr ? k : nr - 1];
	}
	return 0;
}

static void bench_sp_free(void *p, size_t size)
{
	(void)size;
	segpool_free(p);
}

static void bench_free(void *p, size_t size)
{
	(void)size;
	free(p);
}

int bench_heap_setup(const struct bench_contender *c, const size_t *cls,
		     unsigned int nr)
{
	static const struct bench_heap sp = {
		segpool_malloc, bench_sp_free, segpool_realloc, segpool_malloc,
		segpool_free,
	}, libc = { malloc, bench_free, realloc, malloc, free };

	bench_owner = c;
	switch (c->kind) {
	case BENCH_SEGPOOL_CACHE:
		bench_heap = sp;
		bench_heap.realloc = NULL;
		bench_heap.alloc = c->inline_api ? bench_cache_alloc_inline
						 : bench_cache_alloc;
		bench_heap.free = c->inline_api ? bench_cache_free_inline
						: bench_cache_free;
		return bench_caches_create(cls, nr);
	case BENCH_SEGPOOL_MALLOC:
		bench_heap = sp;
		return 0;
	case BENCH_MALLOC:
		bench_heap = libc;
		return 0;
	case BENCH_FLOOR:
		return bench_floor_setup(cls[nr - 1]);
	}
	return -1;
}

/* Each peer's own call to give memory back, found in its own library. */
const char *bench_heap_trim(void)
{
	static char what[48];
	const struct bench_contender *c = bench_owner;
	void *sym = c->trim_sym ? bench_contender_sym(c, c->trim_sym) : NULL;
	int slabs = 0;

	if (c->kind == BENCH_SEGPOOL_CACHE) {
		for (unsigned int i = 0; i < bench_nr_caches; i++)
			slabs += segpool_cache_shrink(bench_caches[i]);
		snprintf(what, sizeof(what), "segpool_cache_shrink: %d slabs",
			 slabs);
		return what;
	}
	if (c->kind == BENCH_SEGPOOL_MALLOC)
		return "none (no public trim for size classes)";
	if (!sym)
		return "none";
	if (!strcmp(c->trim_sym, "malloc_trim")) {
		((int (*)(size_t))sym)(0);
		return "malloc_trim(0)";
	}
	if (!strcmp(c->trim_sym, "mallctl")) {
		/* MALLCTL_ARENAS_ALL is 4096: every arena */
		if (((int (*)(const char *, void *, size_t *, void *,
			      size_t))sym)("arena.4096.purge", NULL, NULL,
					   NULL, 0))
			return "mallctl arena.4096.purge failed";
		return "mallctl(\"arena.4096.purge\")";
	}
	if (!strcmp(c->trim_sym, "mi_collect")) {
		((void (*)(bool))sym)(true);
		return "mi_collect(true)";
	}
	((void (*)(void))sym)();
	return "MallocExtension_ReleaseFreeMemory()";
}

/* What the caches hold in per-CPU magazines and depots after the run. */
void bench_heap_cached(struct bench_result *res)
{
	double cached = 0, mags = 0, cpu = 0, depot = 0;

	if (!bench_owner || bench_owner->kind != BENCH_SEGPOOL_CACHE)
		return;
	for (unsigned int i = 0; i < bench_nr_caches; i++) {
		struct segpool_cache_info info = { .size = sizeof(info) };

		if (segpool_cache_get_info(bench_caches[i], &info))
			return;
		cpu += (double)info.cpu_objs;
		depot += (double)info.depot_objs;
		cached += (double)((info.cpu_objs + info.depot_objs) *
				   info.object_size) / 1024;
		mags += (double)(info.cpu_objs * info.object_size) / 1024;
	}
	bench_x_set(res, BENCH_X_CACHED, cached);
	bench_x_set(res, BENCH_X_MAGS, mags);
	bench_x_set(res, BENCH_X_CPU_OBJS, cpu);
	bench_x_set(res, BENCH_X_DEPOT_OBJS, depot);
}

void bench_heap_teardown(void)
{
	for (unsigned int i = 0; i < bench_nr_caches; i++)
		if (segpool_cache_destroy(bench_caches[i]))
			bench_warn("segpool_cache_destroy(%s) failed",
				   segpool_cache_name(bench_caches[i]));
	bench_nr_caches = 0;
}
