// SPDX-License-Identifier: MIT
/*
 * tools/bench/xthread.cc - segpool-bench-xthread: a threaded C++ program
 * whose objects are freed by other threads than those that made them, one
 * of the real programs of segpool-bench --programs (programs.c).
 *
 *   segpool-bench-xthread THREADS BATCHES
 *
 * THREADS threads stand in a ring.  Each makes BATCHES batches of objects
 * (std::string of 8 to 2000 bytes, std::vector<int> of 1 to 512 elements,
 * std::map nodes, a std::shared_ptr), hands every batch to the next thread
 * through a queue under a mutex (at most 64 waiting), and destroys the batches it receives from
 * the previous one: every free is a cross-thread free.  Sizes come from a
 * fixed seed; the exit status says whether every object came back intact.
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

namespace {

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
	bool closed = false;
};

std::uint64_t rnd(std::uint64_t &s)
{
	s ^= s >> 12;
	s ^= s << 25;
	s ^= s >> 27;
	return s * 0x2545F4914F6CDD1DULL;
}

std::unique_ptr<batch> make_batch(std::uint64_t &s)
{
	auto b = std::make_unique<batch>();

	for (int i = 0; i < 64; i++) {
		std::size_t len = 8 + rnd(s) % 1993;

		b->strings.emplace_back(len, static_cast<char>('a' + i % 26));
		b->sum += len;
	}
	for (int i = 0; i < 16; i++) {
		std::size_t n = 1 + rnd(s) % 512;

		b->vectors.emplace_back(n, i);
		b->sum += n;
	}
	for (int i = 0; i < 32; i++) {
		b->map.emplace(static_cast<int>(rnd(s) % 100000),
			       std::string(24, 'm'));
	}
	b->sum += b->map.size();
	b->shared = std::make_shared<std::vector<char>>(4096 + rnd(s) % 60000);
	b->sum += b->shared->size();
	return b;
}

std::uint64_t check_batch(const batch &b)
{
	std::uint64_t sum = 0;

	for (const auto &str : b.strings)
		sum += str.size();
	for (const auto &v : b.vectors)
		sum += v.size();
	sum += b.map.size() + b.shared->size();
	return sum == b.sum ? 0 : 1;
}

} // namespace

int main(int argc, char **argv)
{
	unsigned int nthreads = argc > 1 ? std::atoi(argv[1]) : 4;
	long batches = argc > 2 ? std::atol(argv[2]) : 20000;
	std::vector<queue> queues(nthreads ? nthreads : 1);
	std::vector<std::thread> threads;
	std::vector<std::uint64_t> errors(queues.size());

	if (nthreads < 2 || batches < 1) {
		std::fprintf(stderr, "usage: %s THREADS>=2 BATCHES>=1\n",
			     argv[0]);
		return 2;
	}
	for (unsigned int t = 0; t < nthreads; t++) {
		threads.emplace_back([&, t] {
			queue &out = queues[(t + 1) % nthreads];
			queue &in = queues[t];
			std::uint64_t s = 20261201 + t;
			long made = 0, got = 0;

			std::unique_ptr<batch> pending;

			while (made < batches || got < batches) {
				bool produced = false;

				// at most 64 batches wait in a queue
				if (made < batches) {
					if (!pending)
						pending = make_batch(s);
					std::lock_guard<std::mutex> g(out.lock);
					if (out.items.size() < 64) {
						out.items.push_back(std::move(pending));
						out.ready.notify_one();
						made++;
						produced = true;
					}
				}
				if (got >= batches)
					continue;
				std::unique_lock<std::mutex> g(in.lock);
				if (in.items.empty()) {
					if (produced)
						continue;
					in.ready.wait(g, [&] { return !in.items.empty(); });
				}
				while (!in.items.empty()) {
					auto b = std::move(in.items.front());

					in.items.pop_front();
					g.unlock();
					errors[t] += check_batch(*b);
					b.reset();	// the cross-thread free
					got++;
					g.lock();
				}
			}
		});
	}
	for (auto &th : threads)
		th.join();
	for (auto e : errors)
		if (e) {
			std::fprintf(stderr, "%s: objects came back wrong\n",
				     argv[0]);
			return 1;
		}
	return 0;
}
