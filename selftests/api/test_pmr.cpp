// SPDX-License-Identifier: MIT
/*
 * selftests/api/test_pmr.cpp - the std::pmr resources of <segpool/pmr.hpp>.
 *
 * Every standard container (and adaptor) is filled, checked and dropped on
 * each resource; the resource's own figures then say that its memory was
 * used and given back (cache objects freed, arena bytes in use).  Also:
 * is_equal(), routing of cache_resource's requests to its upstream,
 * arena release() and scopes, over-aligned requests, std::bad_alloc, and
 * pool_resource blocks freed by other threads than those that allocated,
 * and a cache_resource over a pool, which passes its other requests to the
 * size classes without the upstream's virtual calls.
 * Built with g++ (test_pmr) and, where installed, clang++ (test_pmr_clang);
 * test_pmr_inline.cpp builds it again with SEGPOOL_INLINE (the hit inline
 * in the resources), where blocks also cross between the inline functions
 * and the library's calls.
 */
#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <forward_list>
#include <list>
#include <map>
#include <memory_resource>
#include <mutex>
#include <queue>
#include <set>
#include <stack>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <segpool/segpool.h>
#include <segpool/pmr.hpp>

extern "C" {
#include "selftests/lib/harness.h"
}

namespace sp = segpool::pmr;

namespace {

/* A resource that counts what passes through it to new_delete. */
class counting_resource : public std::pmr::memory_resource {
public:
	std::size_t allocs = 0, deallocs = 0, live = 0;

private:
	void *do_allocate(std::size_t b, std::size_t a) override
	{
		allocs++;
		live += b;
		return std::pmr::new_delete_resource()->allocate(b, a);
	}
	void do_deallocate(void *p, std::size_t b, std::size_t a) override
	{
		deallocs++;
		live -= b;
		std::pmr::new_delete_resource()->deallocate(p, b, a);
	}
	bool do_is_equal(const memory_resource &o) const noexcept override
	{
		return this == &o;
	}
};

std::pmr::string text(unsigned i, std::pmr::memory_resource *r)
{
	/* long enough to leave the small-string buffer */
	std::pmr::string s("line-", r);

	s += std::to_string(i);
	s += "-padding-padding-padding";
	return s;
}

/* Fill every kind of container on @r with @n elements and check them. */
void every_container(std::pmr::memory_resource *r, unsigned n)
{
	std::pmr::vector<std::pmr::string> v(r);
	std::pmr::deque<int> dq(r);
	std::pmr::list<std::pmr::string> l(r);
	std::pmr::forward_list<int> fl(r);
	std::pmr::set<int> s(r);
	std::pmr::multiset<int> ms(r);
	std::pmr::map<int, std::pmr::string> m(r);
	std::pmr::multimap<int, int> mm(r);
	std::pmr::unordered_set<std::pmr::string> us(r);
	std::pmr::unordered_multiset<int> ums(r);
	std::pmr::unordered_map<std::pmr::string, unsigned> um(r);
	std::pmr::unordered_multimap<int, int> umm(r);
	std::stack<int, std::pmr::deque<int>> st{std::pmr::deque<int>(r)};
	std::queue<int, std::pmr::list<int>> q{std::pmr::list<int>(r)};
	std::priority_queue<int, std::pmr::vector<int>> pq{
		std::less<int>(), std::pmr::vector<int>(r)};

	for (unsigned i = 0; i < n; i++) {
		int k = (int)i;

		v.push_back(text(i, r));
		dq.push_front(k);
		l.push_back(text(i, r));
		fl.push_front(k);
		s.insert(k);
		ms.insert(k % 10);
		m.emplace(k, text(i, r));
		mm.emplace(k % 7, k);
		us.insert(text(i % (n / 2 + 1), r));
		ums.insert(k % 5);
		um[text(i, r)] = i;
		umm.emplace(k % 3, k);
		st.push(k);
		q.push(k);
		pq.push(k);
	}
	/* the containers propagate the resource to their elements */
	assert_true(v.get_allocator().resource() == r);
	assert_true(v[0].get_allocator().resource() == r);
	assert_true(m.begin()->second.get_allocator().resource() == r);
	for (unsigned i = 0; i < n; i++) {
		assert_true(v[i] == text(i, r));
		assert_int_equal(um.at(text(i, r)), i);
		assert_true(m.at((int)i) == text(i, r));
	}
	assert_int_equal(dq.size(), n);
	assert_int_equal(dq.front(), (int)n - 1);
	assert_int_equal(l.size(), n);
	assert_int_equal(std::distance(fl.begin(), fl.end()), n);
	assert_int_equal(s.size(), n);
	assert_int_equal(ms.size(), n);
	assert_int_equal(ms.count(3), (n + 6) / 10);
	assert_int_equal(mm.size(), n);
	assert_int_equal(us.size(), std::min(n, n / 2 + 1));
	assert_int_equal(ums.size(), n);
	assert_int_equal(umm.size(), n);
	assert_int_equal(st.top(), (int)n - 1);
	assert_int_equal(q.front(), 0);
	assert_int_equal(pq.top(), (int)n - 1);
	/* growth, erasure, shrinking */
	v.erase(v.begin(), v.begin() + n / 2);
	v.shrink_to_fit();
	assert_int_equal(v.size(), n - n / 2);
	for (unsigned i = 0; i < n; i += 2)
		um.erase(text(i, r));
	assert_int_equal(um.size(), n / 2);
	um.rehash(4 * n);
	assert_int_equal(um.at(text(1, r)), 1);
}

struct segpool_arena_info arena_info(sp::arena_resource &r)
{
	struct segpool_arena_info i;

	i.size = sizeof(i);
	assert_int_equal(segpool_arena_get_info(r.arena(), &i), 0);
	return i;
}

} // namespace

static void test_pool_every_container(void **)
{
	sp::pool_resource r;

	every_container(&r, sp_test_scaled(3000, 300));
	every_container(&sp::pool(), 100);
	/* its blocks are segpool_malloc() memory */
	std::pmr::vector<char> v(5000, 'x', &r);
	assert_true(segpool_usable_size(v.data()) >= 5000);
}

static void test_cache_every_container(void **)
{
	sp::pool_resource up;
	sp::cache_resource r(64, 16, &up);

	every_container(&r, sp_test_scaled(3000, 300));
	/* everything went back to the cache */
	assert_int_equal(sp_test_info(r.cache()).active_objs, 0);
	assert_true(sp_test_info(r.cache()).allocs > 1000);
}

static void test_arena_every_container(void **)
{
	sp::arena_resource r;
	struct segpool_arena_info i;

	every_container(&r, sp_test_scaled(3000, 300));
	i = arena_info(r);
	assert_true(i.in_use > 100000);
	r.release();
	i = arena_info(r);
	assert_int_equal(i.in_use, 0);
	assert_int_equal(i.resets, 1);
	every_container(&r, 200);

	alignas(64) static char buf[16384];
	sp::arena_resource b(buf, sizeof(buf));
	std::pmr::vector<int> v(100, 7, &b);

	assert_true((char *)v.data() >= buf &&
		    (char *)v.data() < buf + sizeof(buf));
}

static void test_is_equal(void **)
{
	sp::pool_resource p1, p2;
	sp::cache_resource c1(32), c2(32);
	sp::arena_resource a1, a2;

	assert_true(p1 == p2);
	assert_true(p1.is_equal(sp::pool()));
	assert_false(p1 == *std::pmr::new_delete_resource());
	assert_false(*std::pmr::new_delete_resource() == p1);
	assert_true(c1 == c1);
	assert_false(c1 == c2);
	assert_false(c1 == p1);
	assert_true(a1 == a1);
	assert_false(a1 == a2);
	assert_false(a1 == p1);
	/* equal resources: memory of one goes back through the other */
	void *b = p1.allocate(100, 8);
	p2.deallocate(b, 100, 8);
}

static void test_cache_routes_to_upstream(void **)
{
	counting_resource up;
	sp::cache_resource r(48, 8, &up);
	void *small, *big, *aligned;

	assert_true(r.upstream_resource() == &up);
	small = r.allocate(40, 8);
	assert_int_equal(sp_test_info(r.cache()).active_objs, 1);
	assert_int_equal(up.allocs, 0);
	big = r.allocate(49, 8);
	aligned = r.allocate(16, 64);
	assert_int_equal(up.allocs, 2);
	assert_int_equal((uintptr_t)aligned % 64, 0);
	r.deallocate(small, 40, 8);
	r.deallocate(big, 49, 8);
	r.deallocate(aligned, 16, 64);
	assert_int_equal(up.deallocs, 2);
	assert_int_equal(up.live, 0);
	assert_int_equal(sp_test_info(r.cache()).active_objs, 0);
}

/*
 * A resource that counts its calls and says it is a pool (the tag that
 * cache_resource looks for): its virtual functions must never be reached
 * from a cache_resource over it, whose requests go to the size classes.
 */
class pool_lookalike final : public std::pmr::memory_resource,
			     public segpool::pmr::detail::pool_kind {
public:
	std::size_t calls = 0;

private:
	void *do_allocate(std::size_t b, std::size_t a) override
	{
		calls++;
		return sp::pool().allocate(b, a);
	}
	void do_deallocate(void *p, std::size_t b, std::size_t a) override
	{
		calls++;
		sp::pool().deallocate(p, b, a);
	}
	bool do_is_equal(const memory_resource &o) const noexcept override
	{
		return sp::pool().is_equal(o);
	}
};

static void test_cache_over_pool(void **)
{
	pool_lookalike up;
	sp::cache_resource r(48, 8, &up);
	sp::pool_resource p;
	void *big, *aligned, *small;

	big = r.allocate(200, 8);
	aligned = r.allocate(16, 64);
	small = r.allocate(40, 8);
	assert_int_equal(up.calls, 0);
	assert_true(segpool_usable_size(big) >= 200);
	assert_int_equal((uintptr_t)aligned % 64, 0);
	std::memset(big, 1, 200);
	r.deallocate(big, 200, 8);
	r.deallocate(aligned, 16, 64);
	assert_int_equal(up.calls, 0);
	assert_int_equal(sp_test_info(r.cache()).active_objs, 1);
	r.deallocate(small, 40, 8);
	assert_int_equal(sp_test_info(r.cache()).active_objs, 0);

	/* a real pool upstream: its blocks and the cache's others mix */
	sp::cache_resource rp(48, 8, &p);
	big = rp.allocate(300, 8);
	p.deallocate(big, 300, 8);
	big = p.allocate(300, 8);
	rp.deallocate(big, 300, 8);
	every_container(&rp, 200);
	assert_int_equal(sp_test_info(rp.cache()).active_objs, 0);
}

#ifdef SEGPOOL_INLINE
/* The inline resources are their own classes, and share blocks with C. */
static void test_inline_kind(void **)
{
	static_assert(std::is_same<sp::pool_resource,
				   sp::hit_inline::pool_resource>::value,
		      "SEGPOOL_INLINE: the inline namespace's pool_resource");
	static_assert(std::is_same<sp::cache_resource,
				   sp::hit_inline::cache_resource>::value,
		      "SEGPOOL_INLINE: the inline namespace's cache_resource");
	sp::pool_resource p;
	sp::cache_resource c(64, 16, &p);

	for (int i = 0; i < 1000; i++) {
		std::size_t sz = 8 + (std::size_t)(i * 37) % 1500;
		void *x = p.allocate(sz, 8);
		void *y = (segpool_malloc)(sz);
		void *z = c.allocate(48, 16);

		assert_non_null(y);
		std::memset(x, 2, sz);
		/* inline-allocated through the call, and the other way */
		(segpool_free)(x);
		p.deallocate(y, sz, 8);
		(segpool_cache_free)(c.cache(), z);
	}
	assert_int_equal(sp_test_info(c.cache()).active_objs, 0);
	assert_true(sp_test_info(c.cache()).allocs >= 1000);
}
#endif

static void test_alignment_and_failures(void **)
{
	sp::pool_resource p;
	sp::arena_resource a;

	for (std::size_t al = 1; al <= 16384; al *= 2) {
		for (std::size_t sz : {1, 8, 24, 100, 5000}) {
			void *x = p.allocate(sz, al);
			void *y = a.allocate(sz, al);

			assert_int_equal((uintptr_t)x % al, 0);
			assert_int_equal((uintptr_t)y % al, 0);
			std::memset(x, 1, sz);
			std::memset(y, 1, sz);
			p.deallocate(x, sz, al);
			a.deallocate(y, sz, al);
		}
	}
	/* the arena's limit: std::bad_alloc */
	assert_int_equal(segpool_arena_set_limit(a.arena(), 1 << 20), 0);
	bool threw = false;
	try {
		(void)a.allocate(8u << 20, 8);
	} catch (const std::bad_alloc &) {
		threw = true;
	}
	assert_true(threw);
	/* a cache that cannot be made: std::system_error with its errno */
	threw = false;
	try {
		sp::cache_resource bad(0);
	} catch (const std::system_error &e) {
		threw = e.code().value() == EINVAL;
	}
	assert_true(threw);
}

static void test_arena_scope(void **)
{
	sp::arena_resource r;
	std::pmr::vector<int> keep(1000, 1, &r);
	std::uint64_t before = arena_info(r).in_use;

	{
		sp::arena_scope scope(r);
		std::pmr::vector<std::pmr::string> tmp(&r);

		for (unsigned i = 0; i < 5000; i++)
			tmp.push_back(text(i, &r));
		assert_true(arena_info(r).in_use > before);
		tmp.clear();	/* nothing to free: the scope does it */
	}
	assert_int_equal(arena_info(r).in_use, before);
	assert_int_equal(arena_info(r).rewinds, 1);
	assert_int_equal(keep[999], 1);
}

/* Strings made on one thread, checked and dropped on another. */
static void test_pool_cross_thread(void **)
{
	sp::pool_resource r;
	using batch = std::pmr::vector<std::pmr::string>;
	std::mutex mu;
	std::condition_variable cv;
	std::deque<batch *> queue;
	const unsigned producers = 2, batches = sp_test_scaled(400, 20);
	unsigned done = 0;
	std::size_t checked = 0;

	auto produce = [&](unsigned id) {
		for (unsigned b = 0; b < batches; b++) {
			batch *v = new batch(&r);

			for (unsigned i = 0; i < 50; i++)
				v->push_back(
					text(id * 1000000 + b * 100 + i, &r));
			std::lock_guard<std::mutex> g(mu);
			queue.push_back(v);
			cv.notify_one();
		}
		std::lock_guard<std::mutex> g(mu);
		done++;
		cv.notify_all();
	};
	auto consume = [&]() {
		for (;;) {
			std::unique_lock<std::mutex> g(mu);
			cv.wait(g, [&] {
				return !queue.empty() || done == producers;
			});
			if (queue.empty())
				return;
			batch *v = queue.front();
			queue.pop_front();
			g.unlock();
			for (const auto &s : *v)
				if (s.compare(0, 5, "line-") != 0 ||
				    s.get_allocator().resource() != &r)
					return;
			g.lock();
			checked += v->size();
			g.unlock();
			delete v;	/* freed on this thread */
		}
	};
	std::thread c1(consume), c2(consume);
	std::thread p1(produce, 1), p2(produce, 2);

	p1.join();
	p2.join();
	c1.join();
	c2.join();
	assert_int_equal(checked, (std::size_t)producers * batches * 50);
	assert_true(queue.empty());
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_pool_every_container),
	cmocka_unit_test(test_cache_every_container),
	cmocka_unit_test(test_arena_every_container),
	cmocka_unit_test(test_is_equal),
	cmocka_unit_test(test_cache_routes_to_upstream),
	cmocka_unit_test(test_cache_over_pool),
#ifdef SEGPOOL_INLINE
	cmocka_unit_test(test_inline_kind),
#endif
	cmocka_unit_test(test_alignment_and_failures),
	cmocka_unit_test(test_arena_scope),
	cmocka_unit_test(test_pool_cross_thread),
};

SP_TEST_MAIN(tests)
