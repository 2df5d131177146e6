// SPDX-License-Identifier: MIT
/*
 * logpipe_pmr - the demo's log-cleaning pipeline in C++, on std::pmr and
 * segpool's memory resources.
 *
 * Each worker thread takes batches of lines in turn: it parses a batch into
 * a std::pmr::vector of records (pmr strings, and a pmr vector of each
 * message's words) on its batch resource, cleans every message into its
 * pattern (digits masked) and counts the patterns in a
 * std::pmr::unordered_map that lives for the whole run on a segpool
 * pool_resource, then drops the batch at once: with the arena
 * (segpool::pmr::arena_resource, the default) that is one release().
 *
 *   logpipe_pmr [-n lines] [-t threads] [-b batch] [-s seed]
 *               [-r arena|pool|cache|newdelete]
 *
 * The lines depend on the seed alone, so the totals and the top patterns
 * do not depend on -t, -b or -r.  Exit status: 0 when every line is
 * accounted for (parsed or malformed, each pattern count summed back to
 * the parsed lines), 1 otherwise, 2 on a usage error.
 */
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <memory_resource>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>
#include <unistd.h>

#include <segpool/segpool.h>
#include <segpool/pmr.hpp>

#include "examples/logpmr.hpp"

namespace {

enum class kind { arena, pool, cache, newdelete };

struct options {
	std::uint64_t lines = 500000;
	unsigned threads = 2;
	unsigned batch = 2000;
	std::uint64_t seed = 0x5e6b001c0ffeeULL;
	kind res = kind::arena;
};

using counts = std::pmr::unordered_map<std::pmr::string, std::uint64_t>;

struct worker {
	unsigned id;
	std::uint64_t parsed = 0, malformed = 0;
	std::uint64_t peak = 0;		/* the arena's peak bytes */
	std::unique_ptr<counts> patterns;
};

void run(const options &o, worker &w, std::uint64_t nbatches)
{
	segpool::pmr::arena_resource arena;
	segpool::pmr::cache_resource cache(64, 16, &segpool::pmr::pool());
	std::pmr::memory_resource *mem =
		o.res == kind::arena ?
			static_cast<std::pmr::memory_resource *>(&arena) :
		o.res == kind::pool  ? &segpool::pmr::pool() :
		o.res == kind::cache ? &cache :
				       std::pmr::new_delete_resource();
	char line[512];

	w.patterns = std::make_unique<counts>(&segpool::pmr::pool());
	for (std::uint64_t b = w.id; b < nbatches; b += o.threads) {
		std::uint64_t first = b * o.batch;
		std::uint64_t last = std::min(first + o.batch, o.lines);
		{
			/* the batch: everything in it lives on @mem */
			std::pmr::vector<logpmr::record> recs(mem);
			std::pmr::string pat(mem);

			recs.reserve(last - first);
			for (std::uint64_t i = first; i < last; i++) {
				std::size_t n = logpmr::gen_line(
					o.seed, i, line, sizeof(line));

				recs.emplace_back();
				if (!logpmr::parse(std::string_view(line, n),
						   recs.back())) {
					recs.pop_back();
					w.malformed++;
				}
			}
			for (const auto &r : recs) {
				logpmr::pattern(r, pat);
				auto it = w.patterns->find(pat);

				if (it == w.patterns->end())
					w.patterns->emplace(pat, 1);
				else
					it->second++;
			}
			w.parsed += recs.size();
		}
		if (o.res == kind::arena) {
			struct segpool_arena_info i;

			i.size = sizeof(i);
			if (!segpool_arena_get_info(arena.arena(), &i))
				w.peak = std::max<std::uint64_t>(w.peak,
								 i.in_use);
			arena.release();	/* the whole batch, at once */
		}
	}
}

bool parse_args(int argc, char **argv, options &o)
{
	int c;

	while ((c = getopt(argc, argv, "n:t:b:s:r:h")) != -1) {
		char *end = nullptr;

		switch (c) {
		case 'n':
			o.lines = std::strtoull(optarg, &end, 0);
			break;
		case 't':
			o.threads = (unsigned)std::strtoul(optarg, &end, 0);
			if (o.threads < 1 || o.threads > 256)
				return false;
			break;
		case 'b':
			o.batch = (unsigned)std::strtoul(optarg, &end, 0);
			if (o.batch < 1)
				return false;
			break;
		case 's':
			o.seed = std::strtoull(optarg, &end, 0);
			break;
		case 'r':
			if (!std::strcmp(optarg, "arena"))
				o.res = kind::arena;
			else if (!std::strcmp(optarg, "pool"))
				o.res = kind::pool;
			else if (!std::strcmp(optarg, "cache"))
				o.res = kind::cache;
			else if (!std::strcmp(optarg, "newdelete"))
				o.res = kind::newdelete;
			else
				return false;
			break;
		default:
			return false;
		}
		if (end && *end)
			return false;
	}
	return optind == argc;
}

} // namespace

int main(int argc, char **argv)
{
	static const char *const names[] = { "arena", "pool", "cache",
					     "newdelete" };
	options o;

	if (!parse_args(argc, argv, o)) {
		std::fprintf(stderr,
			     "usage: %s [-n lines] [-t threads] [-b batch] "
			     "[-s seed] [-r arena|pool|cache|newdelete]\n",
			     argv[0]);
		return 2;
	}

	std::uint64_t nbatches = (o.lines + o.batch - 1) / o.batch;
	std::vector<worker> ws(o.threads);
	std::vector<std::thread> th;
	auto t0 = std::chrono::steady_clock::now();

	for (unsigned i = 0; i < o.threads; i++) {
		ws[i].id = i;
		th.emplace_back(run, std::cref(o), std::ref(ws[i]), nbatches);
	}
	for (auto &t : th)
		t.join();

	double secs = std::chrono::duration<double>(
		std::chrono::steady_clock::now() - t0).count();
	counts total(&segpool::pmr::pool());
	std::uint64_t parsed = 0, malformed = 0, summed = 0, peak = 0;

	for (auto &w : ws) {
		parsed += w.parsed;
		malformed += w.malformed;
		peak = std::max(peak, w.peak);
		for (const auto &kv : *w.patterns)
			total[kv.first] += kv.second;
		w.patterns.reset();
	}
	std::vector<std::pair<std::uint64_t, const std::pmr::string *>> top;
	for (const auto &kv : total) {
		summed += kv.second;
		top.emplace_back(kv.second, &kv.first);
	}
	std::sort(top.begin(), top.end(), [](const auto &a, const auto &b) {
		return a.first != b.first ? a.first > b.first :
					    *a.second < *b.second;
	});

	std::printf("logpipe_pmr: %" PRIu64
		    " lines, %u threads, batches of %u, "
		    "resource %s: %.0f lines/s\n",
		    o.lines, o.threads, o.batch, names[(int)o.res],
		    secs > 0 ? (double)o.lines / secs : 0.0);
	std::printf("  parsed %" PRIu64 ", malformed %" PRIu64
		    ", %zu patterns\n",
		    parsed, malformed, total.size());
	for (std::size_t i = 0; i < top.size() && i < 5; i++)
		std::printf("  %8" PRIu64 "  %s\n", top[i].first,
			    top[i].second->c_str());
	if (o.res == kind::arena)
		std::printf("  largest batch in an arena: %" PRIu64 " bytes\n",
			    peak);

	bool ok = parsed + malformed == o.lines && summed == parsed;

	if (!ok)
		std::fprintf(stderr, "logpipe_pmr: lines do not add up\n");
	return ok ? 0 : 1;
}
