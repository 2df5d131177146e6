// SPDX-License-Identifier: MIT
/*
 * tools/bench/xthread.cc - a threaded C++ program whose objects are freed
 * by other threads than those that made them, the "cxx" program of
 * tools/bench/programs.sh (segpool-bench --programs, make check-preload).
 *
 *   xthread THREADS BATCHES
 *
 * THREADS threads stand in a ring.  Each makes BATCHES batches (strings of
 * 8 to 2000 bytes, vectors, map nodes, a shared buffer), hands every batch
 * to the next thread through a queue under a mutex (at most 64 waiting)
 * and checks and destroys those it receives: every free is cross-thread.
 * It prints the sum of what it received; exit status 1 when an object came
 * back wrong.
 */
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

struct batch {
	std::vector<std::string> strings;
	std::vector<std::vector<int>> vectors;
	std::map<int, std::string> map;
	std::shared_ptr<std::vector<char>> shared;
	std::uint64_t sum = 0;			// what the receiver must find
};

struct queue {
	std::mutex lock;
	std::condition_variable ready;
	std::deque<std::unique_ptr<batch>> items;
};

static std::unique_ptr<batch> make_batch(std::uint64_t &s)
{
	auto b = std::make_unique<batch>();
	auto rnd = [&s] { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s; };

	for (int i = 0; i < 64; i++) {
		b->strings.emplace_back(8 + rnd() % 1993, 'a' + i % 26);
		b->sum += b->strings.back().size();
	}
	for (int i = 0; i < 16; i++) {
		b->vectors.emplace_back(1 + rnd() % 512, i);
		b->sum += b->vectors.back().size();
	}
	for (int i = 0; i < 32; i++)
		b->map.emplace(static_cast<int>(rnd() % 100000), "map value");
	b->shared = std::make_shared<std::vector<char>>(4096 + rnd() % 60000);
	b->sum += b->map.size() + b->shared->size();
	return b;
}

static std::uint64_t check_batch(const batch &b, bool &bad)
{
	std::uint64_t sum = b.map.size() + b.shared->size();

	for (const auto &str : b.strings)
		sum += str.size();
	for (const auto &v : b.vectors)
		sum += v.size();
	bad |= sum != b.sum;
	return sum;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? std::atoi(argv[1]) : 4;
	long batches = argc > 2 ? std::atol(argv[2]) : 20000;
	std::vector<queue> queues(n > 1 ? n : 1);
	std::vector<std::thread> threads;
	std::vector<std::uint64_t> sums(queues.size());
	std::vector<char> bad(queues.size());

	if (n < 2 || batches < 1) {
		std::fprintf(stderr, "usage: %s THREADS>=2 BATCHES>=1\n",
			     argv[0]);
		return 2;
	}
	for (int t = 0; t < n; t++)
		threads.emplace_back([&, t] {
			queue &out = queues[(t + 1) % n], &in = queues[t];
			std::uint64_t s = 20261201 + t;
			std::unique_ptr<batch> next;
			long made = 0, got = 0;
			bool wrong = false;

			while (made < batches || got < batches) {
				bool produced = false;

				if (made < batches) {
					if (!next)
						next = make_batch(s);
					std::lock_guard<std::mutex> g(out.lock);
					if (out.items.size() < 64) {
						out.items.push_back(std::move(next));
						out.ready.notify_one();
						made++;
						produced = true;
					}
				}
				std::unique_lock<std::mutex> g(in.lock);
				if (got < batches && in.items.empty() && !produced)
					in.ready.wait(g, [&] {
						return !in.items.empty();
					});
				while (!in.items.empty()) {
					auto b = std::move(in.items.front());

					in.items.pop_front();
					g.unlock();
					sums[t] += check_batch(*b, wrong);
					b.reset();	// the cross-thread free
					got++;
					g.lock();
				}
			}
			bad[t] = wrong;
		});
	std::uint64_t total = 0;
	for (int t = 0; t < n; t++) {
		threads[t].join();
		total += sums[t];
		if (bad[t]) {
			std::fprintf(stderr, "%s: objects came back wrong\n",
				     argv[0]);
			return 1;
		}
	}
	std::printf("%llu\n", static_cast<unsigned long long>(total));
	return 0;
}
