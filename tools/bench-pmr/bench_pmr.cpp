// SPDX-License-Identifier: MIT
/*
 * tools/bench-pmr/bench_pmr.cpp - std::pmr resources on the log pattern.
 *
 * Each thread parses batches of log lines (examples/logpmr.hpp) into a
 * pmr vector of records (pmr strings, a pmr vector of words each),
 * deduplicates their patterns through a pmr unordered_set, and drops the
 * batch; all of it on one memory resource:
 *
 *   newdelete    std::pmr::new_delete_resource(), on glibc, jemalloc,
 *                tcmalloc and mimalloc (LD_PRELOAD, as tools/bench does)
 *   unsync-pool  std::pmr::unsynchronized_pool_resource, one per thread
 *   sync-pool    std::pmr::synchronized_pool_resource, shared
 *   monotonic    std::pmr::monotonic_buffer_resource per thread, release()
 *                after each batch
 *   sp-pool      segpool::pmr::pool_resource, shared
 *   sp-arena     segpool::pmr::arena_resource per thread, release() after
 *                each batch
 *   sp-cache     segpool::pmr::cache_resource(64) over sp-pool, shared
 *   sp-pool-inline, sp-cache-inline   the same two built with
 *                SEGPOOL_INLINE (inline_resources.cpp): the hit inline
 *
 * Every (resource, allocator, thread count) runs in a child process of its
 * own (this program again, with --child), so peak RSS is its own; with
 * -R rounds every such child runs once per round, the rounds interleaved
 * (A B C A B C ...: the clock's drift falls on every contender alike), and
 * the row reports the median of the rounds' medians; a child
 * that was to run on a preloaded allocator checks that malloc really comes
 * from it (dladdr) and refuses to report otherwise.  The lines are made
 * before the clock starts.  Reported per run: the median over the
 * repetitions of ns per line (thread CPU time, summed over threads, per
 * line), its ratio to new_delete on glibc, peak RSS, and RSS at the start
 * and after the last batch was dropped (the resource still alive).
 *
 *   bench-pmr [-t 1,2] [-n lines] [-b batch] [-r reps] [-R rounds]
 *             [-c LIST] [--peer NAME=LIB]... [--smoke]
 *
 * -c runs only the rows it names, comma-separated: a resource ("sp-pool")
 * or a resource on one malloc ("newdelete:tcmalloc"); the first row run is
 * the ratios' base.
 *
 * --peer adds a malloc of the caller's (LIB an absolute path, preloaded
 * and checked like the others) to the new_delete rows: a build of
 * mimalloc 3 or snmalloc from their own sources, never in the tree.
 *
 * --smoke (and the name bench-pmr-smoke) runs tiny counts of everything
 * and checks the results only.  Exit status 0, or 1 when a run failed.
 */
#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <memory_resource>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include <dlfcn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <segpool/segpool.h>
#include <segpool/pmr.hpp>

#include "segpool_config.h"
#include "examples/logpmr.hpp"
#include "tools/bench-pmr/bench_pmr.h"

/* A sanitized program cannot run on a preloaded malloc. */
#if defined(CONFIG_SEGPOOL_ASAN) || defined(CONFIG_SEGPOOL_TSAN)
#define BENCH_PRELOAD 0
#else
#define BENCH_PRELOAD 1
#endif

namespace {

const char *const resources[] = {
	"newdelete", "unsync-pool", "sync-pool", "monotonic",
	"sp-pool", "sp-arena", "sp-cache", "sp-pool-inline", "sp-cache-inline",
};

struct peer {
	const char *name;
	const char *soname;	/* nullptr: glibc, no preload */
};

/* soname: a name the loader finds, or an absolute path (--peer) */
std::vector<peer> peers = {
	{ "glibc", nullptr },
	{ "jemalloc", "libjemalloc.so.2" },
	{ "tcmalloc", "libtcmalloc_minimal.so.4" },
	{ "mimalloc", "libmimalloc.so.2" },
};

/* --peer NAME=LIB: LIB absolute, NAME new and short; false otherwise. */
bool add_peer(const char *spec)
{
	static std::vector<std::string> keep;	/* the names' storage */
	const char *eq = std::strchr(spec, '=');

	if (!eq || eq == spec || eq - spec > 31 || eq[1] != '/')
		return false;
	std::string name(spec, (std::size_t)(eq - spec));
	for (const auto &p : peers)
		if (name == p.name)
			return false;
	keep.reserve(64);
	if (keep.size() + 2 > keep.capacity())
		return false;
	keep.push_back(name);
	const char *n = keep.back().c_str();
	keep.push_back(eq + 1);
	peers.push_back({ n, keep.back().c_str() });
	return true;
}

struct config {
	std::uint64_t lines = 200000;	/* per thread */
	unsigned batch = 2000;
	unsigned reps = 5;
	unsigned rounds = 1;
	std::vector<std::string> only;	/* -c: "resource" or
					 * "resource:malloc" */
	std::vector<unsigned> threads{1, 2};
	bool smoke = false;
};

std::size_t rss_bytes()
{
	long pages = 0, res = 0;
	FILE *f = std::fopen("/proc/self/statm", "r");

	if (f) {
		if (std::fscanf(f, "%ld %ld", &pages, &res) != 2)
			res = 0;
		std::fclose(f);
	}
	return (std::size_t)res * (std::size_t)sysconf(_SC_PAGESIZE);
}

double thread_cpu_ns()
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* One thread's batches on @mem; @release drops a monotonic resource. */
template <typename Release>
std::uint64_t run_batches(const std::vector<std::string> &lines, unsigned batch,
			  std::pmr::memory_resource *mem, Release release)
{
	std::uint64_t unique = 0;

	for (std::size_t first = 0; first < lines.size(); first += batch) {
		std::size_t last = std::min(first + batch, lines.size());
		{
			std::pmr::vector<logpmr::record> recs(mem);
			std::pmr::unordered_set<std::pmr::string> seen(mem);
			std::pmr::string pat(mem);

			recs.reserve(last - first);
			for (std::size_t i = first; i < last; i++) {
				recs.emplace_back();
				if (!logpmr::parse(lines[i], recs.back()))
					recs.pop_back();
			}
			for (const auto &r : recs) {
				logpmr::pattern(r, pat);
				seen.insert(pat);
			}
			unique += seen.size();
		}
		release();
	}
	return unique;
}

struct child_result {
	double ns_per_line;
	std::uint64_t unique;
	std::size_t rss_start, rss_after;
};

/* The work of one child: @res with @nthreads threads, @reps times. */
int child(const config &c, const std::string &res, const peer &p,
	  unsigned nthreads)
{
	if (p.soname) {
		Dl_info info;
		void *m = dlsym(RTLD_DEFAULT, "malloc");

		const char *want = std::strrchr(p.soname, '/');

		want = want ? want + 1 : p.soname;
		if (!m || !dladdr(m, &info) || !info.dli_fname ||
		    !std::strstr(info.dli_fname, want)) {
			std::fprintf(stderr,
				     "bench-pmr: malloc is not %s's here "
				     "(it is %s's): run refused\n",
				     p.name,
				     m && dladdr(m, &info) ? info.dli_fname :
							     "?");
			return 1;
		}
	}
	std::vector<std::vector<std::string>> lines(nthreads);
	for (unsigned t = 0; t < nthreads; t++) {
		char buf[512];

		lines[t].reserve(c.lines);
		for (std::uint64_t i = 0; i < c.lines; i++) {
			std::size_t n = logpmr::gen_line(0x5e6b001c0ffeeULL,
							 i + t * c.lines, buf,
							 sizeof(buf));
			lines[t].emplace_back(buf, n);
		}
	}

	std::pmr::synchronized_pool_resource sync_pool;
	segpool::pmr::cache_resource sp_cache(64, 16, &segpool::pmr::pool());
	std::vector<double> samples;
	std::size_t rss_start = rss_bytes(), rss_after = 0;
	std::uint64_t unique = 0;

	for (unsigned rep = 0; rep < c.reps; rep++) {
		std::vector<double> cpu(nthreads);
		std::vector<std::uint64_t> uniq(nthreads);
		std::vector<std::size_t> after(nthreads);
		std::vector<std::thread> th;

		for (unsigned t = 0; t < nthreads; t++) {
			th.emplace_back([&, t] {
				const auto &l = lines[t];
				double t0 = thread_cpu_ns();
				auto none = [] {};

				if (res == "newdelete") {
					uniq[t] = run_batches(
						l, c.batch,
						std::pmr::new_delete_resource(),
						none);
				} else if (res == "unsync-pool") {
					std::pmr::unsynchronized_pool_resource
						r;
					uniq[t] = run_batches(l, c.batch, &r,
							      none);
					after[t] = rss_bytes();
				} else if (res == "sync-pool") {
					uniq[t] = run_batches(l, c.batch,
							      &sync_pool, none);
				} else if (res == "monotonic") {
					std::pmr::monotonic_buffer_resource r;
					uniq[t] = run_batches(
						l, c.batch, &r,
						[&r] { r.release(); });
					after[t] = rss_bytes();
				} else if (res == "sp-pool") {
					uniq[t] = run_batches(l, c.batch,
						&segpool::pmr::pool(), none);
				} else if (res == "sp-arena") {
					segpool::pmr::arena_resource r;
					uniq[t] = run_batches(
						l, c.batch, &r,
						[&r] { r.release(); });
					after[t] = rss_bytes();
				} else if (res == "sp-pool-inline") {
					uniq[t] = run_batches(l, c.batch,
						bench_pmr_inline_pool(), none);
				} else if (res == "sp-cache-inline") {
					uniq[t] = run_batches(l, c.batch,
						bench_pmr_inline_cache(), none);
				} else {
					uniq[t] = run_batches(l, c.batch,
							      &sp_cache, none);
				}
				cpu[t] = thread_cpu_ns() - t0;
				if (!after[t])
					after[t] = rss_bytes();
			});
		}
		for (auto &x : th)
			x.join();
		double sum = 0;
		std::uint64_t u = 0;
		for (unsigned t = 0; t < nthreads; t++) {
			sum += cpu[t];
			u += uniq[t];
			rss_after = std::max(rss_after, after[t]);
		}
		if (rep && u != unique) {
			std::fprintf(stderr,
				     "bench-pmr: %s: results differ between "
				     "repetitions\n",
				     res.c_str());
			return 1;
		}
		unique = u;
		samples.push_back(sum / (double)(c.lines * nthreads));
	}
	std::sort(samples.begin(), samples.end());

	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	std::printf("result %s %s %u %.2f %" PRIu64 " %zu %ld %zu\n",
		    res.c_str(), p.name, nthreads, samples[samples.size() / 2],
		    unique, rss_start >> 10, ru.ru_maxrss, rss_after >> 10);
	return 0;
}

/* Where the dynamic loader would find @soname: next to libc, or nowhere. */
std::string find_lib(const char *soname)
{
	Dl_info info;
	std::string dir;

	if (soname[0] == '/')
		return access(soname, R_OK) == 0 ? std::string(soname) :
						   std::string();
	if (dladdr((void *)&std::fopen, &info) && info.dli_fname) {
		dir = info.dli_fname;
		dir.erase(dir.rfind('/') + 1);
	}
	for (const std::string &d :
	     { dir, std::string("/usr/lib/x86_64-linux-gnu/"),
	       std::string("/usr/lib/"), std::string("/usr/local/lib/") }) {
		std::string path = d + soname;

		if (!d.empty() && access(path.c_str(), R_OK) == 0)
			return path;
	}
	return {};
}

struct row {
	std::string res, peer;
	unsigned threads;
	double ns;
	std::uint64_t unique;
	std::size_t start_kb, peak_kb, after_kb;
};

/*
 * This program's file.  readlink(), not an exec of /proc/self/exe: under
 * valgrind the link names the program, while an exec of it would start
 * valgrind's tool without its arguments.
 */
std::string self_path()
{
	char buf[4096];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

	if (n <= 0)
		return "/proc/self/exe";
	buf[n] = '\0';
	return buf;
}

bool spawn(const config &c, const char *self, const std::string &res,
	   const peer &p, unsigned t, row &out)
{
	static const std::string exe = self_path();

	std::string preload = p.soname ? find_lib(p.soname) : std::string();
	int fds[2];

	if (p.soname && preload.empty())
		return false;
	if (pipe(fds))
		return false;
	pid_t pid = fork();
	if (pid == 0) {
		std::string n = std::to_string(c.lines),
			    b = std::to_string(c.batch),
			    r = std::to_string(c.reps), ts = std::to_string(t);

		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		if (!preload.empty())
			setenv("LD_PRELOAD", preload.c_str(), 1);
		execl(exe.c_str(), self, "--child", res.c_str(), p.name,
		      p.soname ? p.soname : "-", ts.c_str(), n.c_str(),
		      b.c_str(), r.c_str(), (char *)nullptr);
		_exit(127);
	}
	close(fds[1]);
	char buf[512] = "";
	FILE *f = fdopen(fds[0], "r");
	bool got = f && std::fgets(buf, sizeof(buf), f);
	int st = 0;

	if (f)
		std::fclose(f);
	waitpid(pid, &st, 0);
	if (!got || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return false;
	char rn[32], pn[32];
	unsigned long long uq;
	if (std::sscanf(buf, "result %31s %31s %u %lf %llu %zu %zu %zu", rn, pn,
			&out.threads, &out.ns, &uq, &out.start_kb, &out.peak_kb,
			&out.after_kb) != 8)
		return false;
	out.res = rn;
	out.peer = pn;
	out.unique = uq;
	return true;
}

bool parse_threads(const char *s, std::vector<unsigned> &out)
{
	out.clear();
	while (*s) {
		char *end;
		unsigned long v = std::strtoul(s, &end, 10);

		if (end == s || v < 1 || v > 256)
			return false;
		out.push_back((unsigned)v);
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return false;
	}
	return !out.empty();
}

} // namespace

int main(int argc, char **argv)
{
	config c;
	const char *self = argv[0];
	const char *base = std::strrchr(self, '/');

	if (argc == 9 && !std::strcmp(argv[1], "--child")) {
		peer p = { argv[3],
			   std::strcmp(argv[4], "-") ? argv[4] : nullptr };

		c.lines = std::strtoull(argv[6], nullptr, 10);
		c.batch = (unsigned)std::strtoul(argv[7], nullptr, 10);
		c.reps = (unsigned)std::strtoul(argv[8], nullptr, 10);
		return child(c, argv[2], p,
			     (unsigned)std::strtoul(argv[5], nullptr, 10));
	}
	c.smoke = std::strstr(base ? base + 1 : self, "smoke") != nullptr;
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];

		if (a == "--smoke")
			c.smoke = true;
		else if (a == "-t" && i + 1 < argc &&
			 parse_threads(argv[i + 1], c.threads))
			i++;
		else if (a == "-n" && i + 1 < argc)
			c.lines = std::strtoull(argv[++i], nullptr, 10);
		else if (a == "-b" && i + 1 < argc)
			c.batch =
				(unsigned)std::strtoul(argv[++i], nullptr, 10);
		else if (a == "-r" && i + 1 < argc)
			c.reps = (unsigned)std::strtoul(argv[++i], nullptr, 10);
		else if (a == "-c" && i + 1 < argc) {
			std::string l = argv[++i];

			for (std::size_t at = 0; at <= l.size();) {
				std::size_t e = l.find(',', at);

				if (e == std::string::npos)
					e = l.size();
				if (e > at)
					c.only.push_back(l.substr(at, e - at));
				at = e + 1;
			}
		} else if (a == "-R" && i + 1 < argc)
			c.rounds =
				(unsigned)std::strtoul(argv[++i], nullptr, 10);
		else if (a == "--peer" && i + 1 < argc && add_peer(argv[i + 1]))
			i++;
		else if (!a.compare(0, 7, "--peer=") && add_peer(argv[i] + 7))
			;
		else {
			std::fprintf(
				stderr,
				"usage: %s [-t 1,2] [-n lines] [-b batch] "
				"[-r reps] [-R rounds] [-c LIST] [--peer "
				"NAME=/LIB]... "
				"[--smoke]\n",
				self);
			return 2;
		}
	}
	if (c.smoke) {
		c.lines = 3000;
		c.batch = 500;
		c.reps = 1;
		c.rounds = 1;
		c.threads = {1, 2};
	}
	if (!c.lines || !c.batch || !c.reps || !c.rounds) {
		std::fprintf(stderr,
			     "bench-pmr: -n, -b, -r and -R must be positive\n");
		return 2;
	}

	int failed = 0;

	if (c.smoke)
		std::printf("SMOKE RUN: tiny counts, figures mean nothing\n");
	std::printf("bench-pmr: %" PRIu64 " lines per thread, batches of %u, "
		    "median of %u", c.lines, c.batch, c.reps);
	if (c.rounds > 1)
		std::printf(" in each of %u interleaved rounds (median of the "
			    "rounds)", c.rounds);
	std::printf("; ns = thread CPU ns per line\n");
	for (unsigned t : c.threads) {
		struct slot {
			const char *res;
			const peer *p;
			std::vector<double> ns;
			row last;
			bool failed;
		};
		std::vector<slot> runs;
		double base_ns = 0;
		std::uint64_t unique = 0;
		bool have_unique = false;

		std::printf(
			"\n%u thread%s\n%-15s %-9s %10s %7s %11s %11s %11s "
			"%8s\n",
			t, t > 1 ? "s" : "", "resource", "malloc", "ns/line",
			"ratio", "rss start", "peak rss", "rss after",
			"after/st");
		for (const char *res : resources) {
			for (const auto &p : peers) {
				/*
				 * the allocator matters under new_delete only
				 */
				if (std::strcmp(res, "newdelete") && p.soname)
					continue;
				if (!c.only.empty() &&
				    std::find_if(c.only.begin(), c.only.end(),
						 [&](const std::string &o) {
					    return o == res ||
						   o == std::string(res) +
							   ":" + p.name;
				    }) == c.only.end())
					continue;
				runs.push_back({ res, &p, {}, {}, false });
			}
		}
		for (unsigned round = 0; round < c.rounds; round++) {
			for (auto &s : runs) {
				row r;

				if (s.failed ||
				    (s.p->soname &&
				     (!BENCH_PRELOAD ||
				      find_lib(s.p->soname).empty())))
					continue;
				if (!spawn(c, self, s.res, *s.p, t, r)) {
					s.failed = true;
					continue;
				}
				if (have_unique && r.unique != unique) {
					std::printf(
						"%-15s %-9s  WRONG RESULT\n",
						s.res, s.p->name);
					failed++;
				}
				unique = r.unique;
				have_unique = true;
				s.ns.push_back(r.ns);
				s.last = r;
			}
		}
		for (auto &s : runs) {
			const char *res = s.res, *name = s.p->name;

			if (s.p->soname && !BENCH_PRELOAD) {
				std::printf(
					"%-15s %-9s  (not in a sanitized "
					"build)\n",
					res, name);
				continue;
			}
			if (s.p->soname && find_lib(s.p->soname).empty()) {
				std::printf("%-15s %-9s  (not installed)\n",
					    res, name);
				continue;
			}
			if (s.failed || s.ns.empty()) {
				std::printf("%-15s %-9s  FAILED\n", res, name);
				failed++;
				continue;
			}
			std::sort(s.ns.begin(), s.ns.end());
			const row &r = s.last;
			double ns = s.ns[s.ns.size() / 2];

			if (!base_ns)
				base_ns = ns;
			std::printf("%-15s %-9s %10.1f %7.2f %8zu KiB %7zu KiB "
				    "%7zu KiB %8.2f\n",
				    res, name, ns, base_ns ? ns / base_ns : 0.0,
				    r.start_kb, r.peak_kb, r.after_kb,
				    r.start_kb ? (double)r.after_kb /
							 (double)r.start_kb :
						 0.0);
		}
	}
	std::printf("\n%s\n",
		    failed ? "bench-pmr: some runs failed" : "bench-pmr: ok");
	return failed ? 1 : 0;
}
