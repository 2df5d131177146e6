// SPDX-License-Identifier: MIT
/*
 * segpool/pmr.hpp - std::pmr memory resources on segpool (C++17, header only).
 *
 *   segpool::pmr::pool_resource    the size classes of segpool_malloc():
 *                                  thread-safe, per-CPU magazines behind it,
 *                                  no lock of its own; all instances are
 *                                  one pool (is_equal() between any two)
 *   segpool::pmr::cache_resource   one segpool cache for blocks up to one
 *                                  size and alignment; other requests go to
 *                                  an upstream resource
 *   segpool::pmr::arena_resource   a monotonic resource on a segpool arena:
 *                                  deallocate() does nothing, release()
 *                                  frees everything at once
 *   segpool::pmr::arena_scope      frees what an arena_resource handed out
 *                                  since the scope began, at its end
 *
 * Each is a std::pmr::memory_resource that containers use as they are:
 *
 *	segpool::pmr::arena_resource batch;
 *	std::pmr::vector<std::pmr::string> lines(&batch);
 *	...
 *	lines.clear();
 *	batch.release();
 *
 * Allocation failures throw std::bad_alloc, as memory resources must.
 * Usable with g++ and clang++; the C headers it includes are C++-safe.
 * See Documentation/guide/arenas.md.
 *
 * A program that defines SEGPOOL_INLINE before it includes segpool's
 * headers (segpool/inline.h) gets pool_resource and cache_resource with
 * the magazine hit inline in their do_allocate() and do_deallocate()
 * (pool_resource takes the size class from the library's table at run
 * time, one load); every miss is the library's call, as in C.  Those two
 * classes then live in the inline namespace segpool::pmr::hit_inline, so
 * that translation units built with and without SEGPOOL_INLINE each have
 * their own (no two definitions of one class); pool_resources of both
 * kinds are equal, since they share the size classes.
 */
#ifndef SEGPOOL_PMR_HPP
#define SEGPOOL_PMR_HPP

#if __cplusplus < 201703L
#error "segpool/pmr.hpp needs C++17"
#endif

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory_resource>
#include <new>
#include <system_error>

#include <segpool/arena.h>
#include <segpool/slab.h>

namespace segpool {
namespace pmr {

namespace detail {

/* The base of every pool_resource, inline or not: what is_equal() asks. */
struct pool_kind {
};

/*
 * Whether segpool_malloc() serves @align for
 * @bytes (16-byte classes, 8 for the 8-byte one).
 */
inline bool pool_malloc_aligns(std::size_t bytes, std::size_t align) noexcept
{
	return align <= 8 || (align <= 16 && bytes > 8);
}

/* The serial in cache_resource names, one for both kinds of resource. */
inline std::atomic<unsigned long> &cache_serial() noexcept
{
	static std::atomic<unsigned long> serial{0};

	return serial;
}

/* Out of the hot functions: the throw of a failed allocation. */
[[noreturn]] [[gnu::cold]] [[gnu::noinline]] inline void throw_bad_alloc()
{
	throw std::bad_alloc();
}

} // namespace detail

#ifdef SEGPOOL_INLINE
inline namespace hit_inline {
#endif

namespace path {

/*
 * pool_allocate() / pool_deallocate() - pool_resource's two paths, shared
 * with a cache_resource whose upstream is a pool_resource (no second
 * virtual call for what the cache does not hold).
 */
[[gnu::always_inline]] inline void *pool_allocate(std::size_t bytes,
						  std::size_t align)
{
	void *p;

	if (detail::pool_malloc_aligns(bytes, align)) {
#ifdef SEGPOOL_INLINE_HIT
#if SEGPOOL_INLINE_HIT
		/*
		 * the one call site: the class from the table, the pop inline
		 */
		if (bytes <= SEGPOOL_ABI_BY8_MAX)
			p = __segpool_inline_malloc_by8(bytes);
		else
#endif
#endif
		p = segpool_malloc(bytes);
	} else {
		p = segpool_aligned_alloc(align, bytes);
	}
	if (!p)
		detail::throw_bad_alloc();
	return p;
}

[[gnu::always_inline]] inline void pool_deallocate(void *p) noexcept
{
	segpool_free(p);
}

} // namespace path

/**
 * class pool_resource - blocks of any size from segpool's size classes.
 *
 * Up to 32 KiB a block comes from its size-class cache (the per-CPU
 * magazine of the calling CPU, most of the time); above, from a mapping of
 * its own.  Blocks may be freed by any thread, to any pool_resource.
 */
class pool_resource final : public std::pmr::memory_resource,
				   public detail::pool_kind {
public:
	pool_resource() noexcept = default;
	pool_resource(const pool_resource &) = delete;
	pool_resource &operator=(const pool_resource &) = delete;

private:
	void *do_allocate(std::size_t bytes, std::size_t align) override
	{
		return path::pool_allocate(bytes, align);
	}

	void do_deallocate(void *p, std::size_t, std::size_t) override
	{
		path::pool_deallocate(p);
	}

	bool do_is_equal(const std::pmr::memory_resource &o) const
		noexcept override
	{
		/*
		 * one set of size classes: any instance frees another's blocks
		 */
		return dynamic_cast<const ::segpool::pmr::detail::pool_kind *>(
			       &o) != nullptr;
	}
};

/* pool() - a pool_resource for the whole program. */
inline pool_resource &pool() noexcept
{
	static pool_resource r;

	return r;
}

/**
 * class cache_resource - one segpool cache for blocks of up to @size bytes
 * at up to @align.
 *
 * Every block the cache can hold comes from it (a request for fewer bytes
 * takes a whole object); larger or more aligned requests go to @upstream,
 * as std::pmr pool resources pass on what their pools do not hold.  The
 * cache is named "pmr-<size>-<n>"; all its blocks must be deallocated
 * before the resource is destroyed (the cache outlives it otherwise, and
 * a note says so on stderr).  When @upstream is a pool_resource, the
 * requests for it go straight to the size classes (the same calls, one
 * virtual call fewer).
 */
class cache_resource final : public std::pmr::memory_resource {
public:
	explicit cache_resource(std::size_t size,
				std::size_t align = alignof(std::max_align_t),
				std::pmr::memory_resource *upstream =
					std::pmr::get_default_resource())
		: size_(size), align_(align), upstream_(upstream),
		  upstream_pool_(dynamic_cast<
				 const ::segpool::pmr::detail::pool_kind *>(
				 upstream) != nullptr)
	{
		char name[SEGPOOL_CACHE_NAME_MAX + 1];

		std::snprintf(name, sizeof(name), "pmr-%zu-%lu", size,
			      detail::cache_serial().fetch_add(
				      1, std::memory_order_relaxed));
		cache_ = segpool_cache_create(name, size, align, 0, nullptr);
		if (!cache_)
			throw std::system_error(errno, std::generic_category(),
						"segpool_cache_create");
		if (align_ < 8)
			align_ = 8;	/* what every object has anyway */
	}

	cache_resource(const cache_resource &) = delete;
	cache_resource &operator=(const cache_resource &) = delete;

	~cache_resource() override
	{
		if (segpool_cache_destroy(cache_))
			std::fprintf(stderr, "segpool::pmr::cache_resource: "
				     "cache %s still has objects; kept\n",
				     segpool_cache_name(cache_));
	}

	/* cache() - the segpool cache behind the resource. */
	struct segpool_cache *cache() const noexcept { return cache_; }
	std::pmr::memory_resource *upstream_resource() const noexcept
	{
		return upstream_;
	}

private:
	bool mine(std::size_t bytes, std::size_t align) const noexcept
	{
		return bytes <= size_ && align <= align_;
	}

	void *do_allocate(std::size_t bytes, std::size_t align) override
	{
		void *p;

		if (!mine(bytes, align)) {
			if (upstream_pool_)
				return path::pool_allocate(bytes, align);
			return upstream_->allocate(bytes, align);
		}
		p = segpool_cache_alloc(cache_, 0);
		if (!p)
			detail::throw_bad_alloc();
		return p;
	}

	void do_deallocate(void *p, std::size_t bytes,
			   std::size_t align) override
	{
		if (mine(bytes, align))
			segpool_cache_free(cache_, p);
		else if (upstream_pool_)
			path::pool_deallocate(p);
		else
			upstream_->deallocate(p, bytes, align);
	}

	bool do_is_equal(const std::pmr::memory_resource &o) const
		noexcept override
	{
		return this == &o;
	}

	std::size_t size_;
	std::size_t align_;
	std::pmr::memory_resource *upstream_;
	bool upstream_pool_;	/* upstream_ is a pool_resource */
	struct segpool_cache *cache_;
};

#ifdef SEGPOOL_INLINE
} // inline namespace hit_inline
#endif

/**
 * class arena_resource - a monotonic resource on a segpool arena.
 *
 * Blocks come from the arena's chunks on @node (SEGPOOL_NUMA_NO_NODE: the
 * node of the CPU that takes each chunk); deallocate() does nothing;
 * release() frees everything at once and keeps up to the arena's keep for
 * the next round (std::pmr::monotonic_buffer_resource::release() frees
 * it all).  Like monotonic_buffer_resource it is for one thread at a time,
 * unless @flags has SEGPOOL_ARENA_THREADSAFE.  An initial buffer of the
 * caller's may be given, as to monotonic_buffer_resource.
 */
class arena_resource final : public std::pmr::memory_resource {
public:
	explicit arena_resource(int node = SEGPOOL_NUMA_NO_NODE,
				unsigned long flags = 0,
				const char *name = "pmr-arena")
		: arena_(segpool_arena_create(name, node, flags))
	{
		if (!arena_)
			throw std::system_error(errno, std::generic_category(),
						"segpool_arena_create");
	}

	arena_resource(void *buf, std::size_t size,
		       int node = SEGPOOL_NUMA_NO_NODE, unsigned long flags = 0,
		       const char *name = "pmr-arena")
		: arena_(segpool_arena_create_buf(name, node, flags, buf, size))
	{
		if (!arena_)
			throw std::system_error(errno, std::generic_category(),
						"segpool_arena_create_buf");
	}

	arena_resource(const arena_resource &) = delete;
	arena_resource &operator=(const arena_resource &) = delete;

	~arena_resource() override { segpool_arena_destroy(arena_); }

	/* release() - free every block at once (segpool_arena_reset()). */
	void release() noexcept { segpool_arena_reset(arena_); }

	/* arena() - the segpool arena behind the resource. */
	struct segpool_arena *arena() const noexcept { return arena_; }

private:
	void *do_allocate(std::size_t bytes, std::size_t align) override
	{
		void *p;

		if (align <= SEGPOOL_ARENA_MAX_ALIGN) {
			p = segpool_arena_alloc(arena_, bytes, align);
		} else {
			/* beyond a page: room to align by hand */
			if (bytes > SIZE_MAX - align)
				throw std::bad_alloc();
			p = segpool_arena_alloc(arena_, bytes + align,
						SEGPOOL_ARENA_MAX_ALIGN);
			if (p)
				p = reinterpret_cast<void *>(
					(reinterpret_cast<std::uintptr_t>(p) +
					 align - 1) &
					~(std::uintptr_t)(align - 1));
		}
		if (!p)
			throw std::bad_alloc();
		return p;
	}

	void do_deallocate(void *, std::size_t, std::size_t) override {}

	bool do_is_equal(const std::pmr::memory_resource &o) const
		noexcept override
	{
		return this == &o;
	}

	struct segpool_arena *arena_;
};

/**
 * class arena_scope - everything @r hands out from now on is freed when
 * the scope ends (segpool_arena_mark() and segpool_arena_rewind()).
 * Containers on @r that outlive the scope must not be used after it.
 */
class arena_scope {
public:
	explicit arena_scope(arena_resource &r) : arena_(r.arena())
	{
		if (segpool_arena_mark(arena_, &mark_))
			throw std::system_error(errno, std::generic_category(),
						"segpool_arena_mark");
	}

	arena_scope(const arena_scope &) = delete;
	arena_scope &operator=(const arena_scope &) = delete;

	~arena_scope() { segpool_arena_rewind(arena_, &mark_); }

private:
	struct segpool_arena *arena_;
	struct segpool_arena_pos mark_;
};

} // namespace pmr
} // namespace segpool

#endif /* SEGPOOL_PMR_HPP */
