/* SPDX-License-Identifier: MIT */
/*
 * <linux/slab.h> - segpool's kernel overlay: the kernel's slab API on
 * segpool.
 *
 * Kernel code that includes <linux/slab.h> compiles against this header
 * unchanged (`pkg-config --cflags --libs segpool-kernel`, or
 * -I<tree>/include/segpool/kernel in the source tree).  Every call is a
 * static inline (or a macro) over segpool's public API: with a constant
 * gfp mask the translation folds away and kmem_cache_alloc(), kmalloc()
 * and kfree() reach segpool's hit paths directly, plus one unlikely test
 * for the failure path (__GFP_NOFAIL, the warning).
 *
 * struct kmem_cache is segpool's struct segpool_cache, seen through an
 * incomplete type of its own; struct slab_sheaf likewise is a
 * struct segpool_sheaf.  What differs from the kernel is in
 * Documentation/guide/kernel-api.md.
 */
#ifndef SEGPOOL_KERNEL_LINUX_SLAB_H
#define SEGPOOL_KERNEL_LINUX_SLAB_H

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <linux/cleanup.h>
#include <linux/compiler.h>
#include <linux/gfp.h>
#include <linux/numa.h>
#include <linux/overflow.h>
#include <linux/types.h>

#include <segpool/sheaf.h>
#include <segpool/slab.h>

/* --- cache flags ---------------------------------------------------------- */

/* the flags with a meaning here: segpool's own values */
#define SLAB_HWCACHE_ALIGN	((__force slab_flags_t)SEGPOOL_HWCACHE_ALIGN)
#define SLAB_PANIC		((__force slab_flags_t)SEGPOOL_PANIC)
#define SLAB_TYPESAFE_BY_RCU	((__force slab_flags_t)SEGPOOL_TYPESAFE_BY_RCU)
#define SLAB_RED_ZONE		((__force slab_flags_t)SEGPOOL_RED_ZONE)
#define SLAB_POISON		((__force slab_flags_t)SEGPOOL_POISON)
#define SLAB_STORE_USER		((__force slab_flags_t)SEGPOOL_STORE_USER)
#define SLAB_CONSISTENCY_CHECKS \
	((__force slab_flags_t)SEGPOOL_CONSISTENCY_CHECKS)

/* accepted, no effect (bits 16 and up, dropped before segpool's calls) */
#define SLAB_CACHE_DMA		((__force slab_flags_t)(1UL << 16))
#define SLAB_CACHE_DMA32	((__force slab_flags_t)(1UL << 17))
#define SLAB_ACCOUNT		((__force slab_flags_t)(1UL << 18))
#define SLAB_RECLAIM_ACCOUNT	((__force slab_flags_t)(1UL << 19))
#define SLAB_TEMPORARY		SLAB_RECLAIM_ACCOUNT
#define SLAB_NO_MERGE		((__force slab_flags_t)(1UL << 20))
#define SLAB_MEM_SPREAD		((__force slab_flags_t)(1UL << 21))
#define SLAB_NOLEAKTRACE	((__force slab_flags_t)(1UL << 22))
#define SLAB_NO_USER_FLAGS	((__force slab_flags_t)(1UL << 23))
#define SLAB_DEBUG_OBJECTS	((__force slab_flags_t)(1UL << 24))
#define SLAB_TRACE		((__force slab_flags_t)(1UL << 25))
#define SLAB_FAILSLAB		((__force slab_flags_t)(1UL << 26))
#define SLAB_KASAN		((__force slab_flags_t)(1UL << 27))
#define SLAB_SKIP_KFENCE	((__force slab_flags_t)(1UL << 28))
#define SLAB_NO_OBJ_EXT		((__force slab_flags_t)(1UL << 29))
#define SLAB_NOFAILSLAB		((__force slab_flags_t)(1UL << 30))

_Static_assert((SEGPOOL_CACHE_FLAGS_VALID & ~0xffffUL) == 0,
	       "segpool's cache flags stay below the no-op flags");

/* --- sizes and special pointers ------------------------------------------- */

/* ZERO_SIZE_PTR - what kmalloc(0) returns; kfree() and ksize() accept it. */
#define ZERO_SIZE_PTR		SEGPOOL_ZERO_SIZE_PTR
#define ZERO_OR_NULL_PTR(x)	SEGPOOL_ZERO_OR_NULL_PTR(x)

#define KMALLOC_MAX_CACHE_SIZE	SEGPOOL_KMALLOC_MAX_CACHE_SIZE
#define KMALLOC_MAX_SIZE	((size_t)1 << 46)
#define KMALLOC_MAX_ORDER	34
#define ARCH_KMALLOC_MINALIGN	16
#define ARCH_SLAB_MINALIGN	8

/* --- struct kmem_cache ---------------------------------------------------- */

/* Never defined: a struct kmem_cache * is a struct segpool_cache *. */
struct kmem_cache;
/* Never defined: a struct slab_sheaf * is a struct segpool_sheaf *. */
struct slab_sheaf;

static __always_inline struct segpool_cache *__segpool_kc(struct kmem_cache *s)
{
	return (struct segpool_cache *)(void *)s;
}

static __always_inline struct kmem_cache *__segpool_km(struct segpool_cache *c)
{
	return (struct kmem_cache *)(void *)c;
}

/*
 * struct kmem_cache_args - the optional arguments of kmem_cache_create()
 * (Linux 6.12+).  @align and @ctor are used; @useroffset/@usersize (the
 * hardened-usercopy window) and @freeptr_offset are checked and otherwise
 * ignored (segpool keeps the free link outside the object whenever the
 * object's bytes must survive); @sheaf_capacity sets the per-CPU magazine
 * size (segpool_cache_tunables.mag_size, at least SEGPOOL_MAG_SIZE_MIN).
 */
struct kmem_cache_args {
	unsigned int align;
	unsigned int useroffset;
	unsigned int usersize;
	unsigned int freeptr_offset;
	bool use_freeptr_offset;
	void (*ctor)(void *);
	unsigned int sheaf_capacity;
};

static inline struct kmem_cache *
__kmem_cache_create_args(const char *name, unsigned int object_size,
			 struct kmem_cache_args *args, slab_flags_t flags)
{
	static const struct kmem_cache_args __none;
	struct segpool_cache_tunables tun = { 0, 0 };
	unsigned long f = (unsigned long)flags & SEGPOOL_CACHE_FLAGS_VALID;
	struct segpool_cache *c = NULL;

	if (!args)
		args = (struct kmem_cache_args *)&__none;
	if (args->sheaf_capacity)
		tun.mag_size = args->sheaf_capacity < SEGPOOL_MAG_SIZE_MIN ?
			       SEGPOOL_MAG_SIZE_MIN : args->sheaf_capacity;
	/* the checks the kernel makes (it fails the creation too) */
	if (!(args->use_freeptr_offset &&
	      (args->freeptr_offset >= object_size ||
	       args->freeptr_offset % sizeof(void *) ||
	       !((flags & SLAB_TYPESAFE_BY_RCU) || args->ctor))))
		c = segpool_cache_create_tuned(name, object_size, args->align,
					       f, args->ctor, &tun);
	else if (flags & SLAB_PANIC)	/* reports EINVAL and aborts */
		c = segpool_cache_create(name, 0, 0, SEGPOOL_PANIC, NULL);
	else
		errno = EINVAL;
	return __segpool_km(c);
}

/* kmem_cache_create(name, size, NULL, flags): the default arguments. */
static inline struct kmem_cache *
__kmem_cache_default_args(const char *name, unsigned int object_size,
			  struct kmem_cache_args *args, slab_flags_t flags)
{
	(void)args;
	return __kmem_cache_create_args(name, object_size, NULL, flags);
}

/* The classic form: kmem_cache_create(name, size, align, flags, ctor). */
static inline struct kmem_cache *
__kmem_cache_create(const char *name, unsigned int size, unsigned int align,
		    slab_flags_t flags, void (*ctor)(void *))
{
	struct kmem_cache_args args = { .align = align, .ctor = ctor };

	return __kmem_cache_create_args(name, size, &args, flags);
}

/**
 * kmem_cache_create() - create a cache; both forms of Linux 6.12+:
 * kmem_cache_create(name, size, align, flags, ctor) and
 * kmem_cache_create(name, size, &args, flags) (or NULL for @args).
 */
#define kmem_cache_create(__name, __object_size, __args, ...)		\
	_Generic((__args),						\
		 struct kmem_cache_args *: __kmem_cache_create_args,	\
		 void *: __kmem_cache_default_args,			\
		 default: __kmem_cache_create)(__name, __object_size,	\
					       __args, __VA_ARGS__)

/* kmem_cache_create_usercopy() - the classic form with a usercopy window. */
static inline struct kmem_cache *
kmem_cache_create_usercopy(const char *name, unsigned int size,
			   unsigned int align, slab_flags_t flags,
			   unsigned int useroffset, unsigned int usersize,
			   void (*ctor)(void *))
{
	struct kmem_cache_args args = {
		.align = align, .ctor = ctor,
		.useroffset = useroffset, .usersize = usersize,
	};

	return __kmem_cache_create_args(name, size, &args, flags);
}

/* KMEM_CACHE() - a cache named after struct @__struct, at its alignment. */
#define KMEM_CACHE(__struct, __flags)					\
	__kmem_cache_create_args(#__struct, sizeof(struct __struct),	\
		&(struct kmem_cache_args) {				\
			.align = __alignof__(struct __struct),		\
		}, (__flags))

/* KMEM_CACHE_USERCOPY() - KMEM_CACHE() with @__field as usercopy window. */
#define KMEM_CACHE_USERCOPY(__struct, __flags, __field)			\
	__kmem_cache_create_args(#__struct, sizeof(struct __struct),	\
		&(struct kmem_cache_args) {				\
			.align = __alignof__(struct __struct),		\
			.useroffset = offsetof(struct __struct, __field), \
			.usersize = sizeof(((struct __struct *)0)->__field), \
		}, (__flags))

/* kmem_cache_destroy() - all objects must be freed; NULL is a no-op. */
static inline void kmem_cache_destroy(struct kmem_cache *s)
{
	(void)segpool_cache_destroy(__segpool_kc(s));
}

static inline int kmem_cache_shrink(struct kmem_cache *s)
{
	return segpool_cache_shrink(__segpool_kc(s)) < 0 ? -EINVAL : 0;
}

static inline unsigned int kmem_cache_size(struct kmem_cache *s)
{
	return (unsigned int)segpool_cache_object_size(__segpool_kc(s));
}

/* --- objects of a cache --------------------------------------------------- */

static __always_inline void *kmem_cache_alloc(struct kmem_cache *s, gfp_t flags)
{
	void *p = segpool_cache_alloc(__segpool_kc(s),
				      __SEGPOOL_GFP_CACHE(flags));

	if (unlikely(!p))
		p = segpool_alloc_failed(__segpool_kc(s), 0,
					 __SEGPOOL_GFP_KMALLOC(flags),
					 NUMA_NO_NODE);
	return p;
}

static __always_inline void *kmem_cache_zalloc(struct kmem_cache *s,
					       gfp_t flags)
{
	return kmem_cache_alloc(s, flags | __GFP_ZERO);
}

static __always_inline void *kmem_cache_alloc_node(struct kmem_cache *s,
						   gfp_t flags, int node)
{
	void *p;

	if (node == NUMA_NO_NODE)
		return kmem_cache_alloc(s, flags);
	p = segpool_cache_alloc_node(__segpool_kc(s),
				     __SEGPOOL_GFP_CACHE(flags), node);
	if (unlikely(!p))
		p = segpool_alloc_failed(__segpool_kc(s), 0,
					 __SEGPOOL_GFP_KMALLOC(flags), node);
	return p;
}

static __always_inline void kmem_cache_free(struct kmem_cache *s, void *objp)
{
	segpool_cache_free(__segpool_kc(s), objp);
}

/* kmem_cache_alloc_bulk() - all @size objects or none: @size, or 0. */
static inline int kmem_cache_alloc_bulk(struct kmem_cache *s, gfp_t flags,
					size_t size, void **p)
{
	return segpool_cache_alloc_bulk(__segpool_kc(s),
					__SEGPOOL_GFP_CACHE(flags), size, p);
}

/* kmem_cache_free_bulk() - with a NULL @s, kfree() of each (kfree_bulk()). */
static inline void kmem_cache_free_bulk(struct kmem_cache *s, size_t size,
					void **p)
{
	if (!s) {
		for (size_t i = 0; i < size; i++)
			if (!ZERO_OR_NULL_PTR(p[i]))
				segpool_free(p[i]);
		return;
	}
	segpool_cache_free_bulk(__segpool_kc(s), size, p);
}

/* --- prefilled sheaves (Linux 6.18) --------------------------------------- */

static inline struct slab_sheaf *
kmem_cache_prefill_sheaf(struct kmem_cache *s, gfp_t gfp, unsigned int size)
{
	return (struct slab_sheaf *)(void *)segpool_sheaf_prefill(
		__segpool_kc(s), (unsigned int)gfp & SEGPOOL_THISNODE, size);
}

static inline int kmem_cache_refill_sheaf(struct kmem_cache *s, gfp_t gfp,
					  struct slab_sheaf **sheafp,
					  unsigned int size)
{
	struct segpool_sheaf *sh;
	int ret;

	if (!sheafp)
		return segpool_sheaf_refill(__segpool_kc(s), 0, NULL, size);
	sh = (struct segpool_sheaf *)(void *)*sheafp;
	ret = segpool_sheaf_refill(__segpool_kc(s),
				   (unsigned int)gfp & SEGPOOL_THISNODE, &sh,
				   size);
	*sheafp = (struct slab_sheaf *)(void *)sh;
	return ret;
}

static inline void kmem_cache_return_sheaf(struct kmem_cache *s, gfp_t gfp,
					   struct slab_sheaf *sheaf)
{
	(void)gfp;
	segpool_sheaf_return(__segpool_kc(s),
			     (struct segpool_sheaf *)(void *)sheaf);
}

/* kmem_cache_alloc_from_sheaf() - never fails while the sheaf holds one. */
static __always_inline void *
kmem_cache_alloc_from_sheaf(struct kmem_cache *s, gfp_t gfp,
			    struct slab_sheaf *sheaf)
{
	(void)s;
	return segpool_sheaf_alloc((struct segpool_sheaf *)(void *)sheaf,
				   (unsigned int)gfp & SEGPOOL_ZERO);
}

static inline unsigned int kmem_cache_sheaf_size(struct slab_sheaf *sheaf)
{
	return segpool_sheaf_size((struct segpool_sheaf *)(void *)sheaf);
}

/* --- kmalloc -------------------------------------------------------------- */

static __always_inline void *kmalloc_node(size_t size, gfp_t flags, int node)
{
	unsigned int g = __SEGPOOL_GFP_KMALLOC(flags);
	void *p;

	/* no zeroing, no node rule, no NOFAIL: segpool_malloc()'s hit path */
	if (likely(size != 0) && node == NUMA_NO_NODE &&
	    !(g & (SEGPOOL_ZERO | SEGPOOL_THISNODE | SEGPOOL_NOFAIL))) {
		p = segpool_malloc(size);
		if (unlikely(!p))
			p = segpool_alloc_failed(NULL, size, g, node);
		return p;
	}
	return segpool_kmalloc_node(size, g, node);
}

static __always_inline void *kmalloc(size_t size, gfp_t flags)
{
	return kmalloc_node(size, flags, NUMA_NO_NODE);
}

static __always_inline void *kzalloc(size_t size, gfp_t flags)
{
	return kmalloc(size, flags | __GFP_ZERO);
}

static __always_inline void *kzalloc_node(size_t size, gfp_t flags, int node)
{
	return kmalloc_node(size, flags | __GFP_ZERO, node);
}

static inline void *kmalloc_array_node(size_t n, size_t size, gfp_t flags,
				       int node)
{
	size_t bytes;

	if (unlikely(__builtin_mul_overflow(n, size, &bytes)))
		return NULL;
	return kmalloc_node(bytes, flags, node);
}

static inline void *kmalloc_array(size_t n, size_t size, gfp_t flags)
{
	return kmalloc_array_node(n, size, flags, NUMA_NO_NODE);
}

static inline void *kcalloc(size_t n, size_t size, gfp_t flags)
{
	return kmalloc_array(n, size, flags | __GFP_ZERO);
}

static inline void *kcalloc_node(size_t n, size_t size, gfp_t flags, int node)
{
	return kmalloc_array_node(n, size, flags | __GFP_ZERO, node);
}

static inline __must_check void *krealloc(const void *p, size_t new_size,
					  gfp_t flags)
{
	return segpool_krealloc((void *)(uintptr_t)p, new_size,
				__SEGPOOL_GFP_KMALLOC(flags));
}

static inline __must_check void *krealloc_array(void *p, size_t new_n,
						size_t new_size, gfp_t flags)
{
	size_t bytes;

	if (unlikely(__builtin_mul_overflow(new_n, new_size, &bytes)))
		return NULL;
	return krealloc(p, bytes, flags);
}

/* kfree() - any segpool memory: kmalloc'ed or a cache object (as SLUB). */
static __always_inline void kfree(const void *objp)
{
	if (unlikely(ZERO_OR_NULL_PTR(objp)))
		return;
	segpool_free((void *)(uintptr_t)objp);
}

static inline void kfree_bulk(size_t size, void **p)
{
	kmem_cache_free_bulk(NULL, size, p);
}

/* ksize() - the bytes of the allocation that may be used. */
static inline size_t ksize(const void *objp)
{
	if (ZERO_OR_NULL_PTR(objp))
		return 0;
	return segpool_usable_size(objp);
}

/*
 * kfree_sensitive() - kfree() after clearing every usable byte.  Out of
 * line, as the kernel's: clearing ksize() bytes here, where the compiler
 * knows the size kmalloc() was asked for, aborts under -D_FORTIFY_SOURCE.
 */
static inline void kfree_sensitive(const void *objp)
{
	segpool_kfree_sensitive(objp);
}

static inline void *kmemdup(const void *src, size_t len, gfp_t gfp)
{
	void *p = kmalloc(len, gfp);

	if (p && len)
		memcpy(p, src, len);
	return p;
}

static inline char *kmemdup_nul(const char *s, size_t len, gfp_t gfp)
{
	char *p;

	if (!s || len == SIZE_MAX)
		return NULL;
	p = (char *)kmalloc(len + 1, gfp);
	if (p) {
		memcpy(p, s, len);
		p[len] = '\0';
	}
	return p;
}

static inline char *kstrdup(const char *s, gfp_t gfp)
{
	return s ? kmemdup_nul(s, strlen(s), gfp) : NULL;
}

static inline char *kstrndup(const char *s, size_t max, gfp_t gfp)
{
	return s ? kmemdup_nul(s, strnlen(s, max), gfp) : NULL;
}

/* No .rodata test here: kstrdup_const() always copies. */
static inline const char *kstrdup_const(const char *s, gfp_t gfp)
{
	return kstrdup(s, gfp);
}

static inline void kfree_const(const void *x)
{
	kfree(x);
}

/* --- kvmalloc: no vmalloc area here, kmalloc serves every size ------------ */

static __always_inline void *kvmalloc_node(size_t size, gfp_t flags, int node)
{
	return kmalloc_node(size, flags, node);
}

static __always_inline void *kvmalloc(size_t size, gfp_t flags)
{
	return kmalloc(size, flags);
}

static __always_inline void *kvzalloc(size_t size, gfp_t flags)
{
	return kzalloc(size, flags);
}

static __always_inline void *kvzalloc_node(size_t size, gfp_t flags, int node)
{
	return kzalloc_node(size, flags, node);
}

static inline void *kvmalloc_array(size_t n, size_t size, gfp_t flags)
{
	return kmalloc_array(n, size, flags);
}

static inline void *kvcalloc(size_t n, size_t size, gfp_t flags)
{
	return kcalloc(n, size, flags);
}

/* kvrealloc() - the Linux 6.12 form (no old size). */
static inline __must_check void *kvrealloc(const void *p, size_t size,
					   gfp_t flags)
{
	return krealloc(p, size, flags);
}

static __always_inline void kvfree(const void *addr)
{
	kfree(addr);
}

/*
 * kvfree_sensitive() - the kernel clears @len bytes; this clears every
 * usable byte, which holds them (an allocation of @len at least).
 */
static inline void kvfree_sensitive(const void *addr, size_t len)
{
	(void)len;
	segpool_kfree_sensitive(addr);
}

/* --- Linux 6.x idioms ----------------------------------------------------- */

/* __free(kfree), __free(kvfree): <linux/cleanup.h> */
DEFINE_FREE(kfree, void *, if (_T) kfree(_T))
DEFINE_FREE(kvfree, void *, if (_T) kvfree(_T))

/*
 * kmalloc_size_roundup() - the bytes kmalloc(@size) really gives, so a
 * caller can use them all: the size class, or whole pages above them;
 * SIZE_MAX above KMALLOC_MAX_SIZE.  It allocates and frees one object of
 * that class to ask (segpool has no public table of its classes): call
 * it when sizing, not in a hot path.
 */
static inline size_t kmalloc_size_roundup(size_t size)
{
	void *p;
	size_t n;

	if (size > KMALLOC_MAX_SIZE)
		return SIZE_MAX;
	if (size > SEGPOOL_KMALLOC_MAX_CACHE_SIZE)
		return (size + 4095) & ~(size_t)4095;
	p = segpool_malloc(size ? size : 1);
	if (!p)
		return size;		/* as the kernel when it cannot tell */
	n = segpool_usable_size(p);
	segpool_free(p);
	return n;
}

/* kmem_cache_alloc_lru() - no list_lru here: kmem_cache_alloc(). */
static __always_inline void *kmem_cache_alloc_lru(struct kmem_cache *s,
						  void *lru, gfp_t flags)
{
	(void)lru;
	return kmem_cache_alloc(s, flags);
}

/*
 * The _noprof forms (Linux 6.10's memory allocation profiling): the same
 * calls, with no profiling to leave out.
 */
#define kmalloc_noprof(...)		kmalloc(__VA_ARGS__)
#define kmalloc_node_noprof(...)	kmalloc_node(__VA_ARGS__)
#define kzalloc_noprof(...)		kzalloc(__VA_ARGS__)
#define kcalloc_noprof(...)		kcalloc(__VA_ARGS__)
#define kmalloc_array_noprof(...)	kmalloc_array(__VA_ARGS__)
#define krealloc_noprof(...)		krealloc(__VA_ARGS__)
#define kmemdup_noprof(...)		kmemdup(__VA_ARGS__)
#define kvmalloc_noprof(...)		kvmalloc(__VA_ARGS__)
#define kvmalloc_node_noprof(...)	kvmalloc_node(__VA_ARGS__)
#define kvzalloc_noprof(...)		kvzalloc(__VA_ARGS__)
#define kmem_cache_alloc_noprof(...)	kmem_cache_alloc(__VA_ARGS__)
#define kmem_cache_alloc_node_noprof(...) kmem_cache_alloc_node(__VA_ARGS__)
#define kmem_cache_alloc_lru_noprof(...) kmem_cache_alloc_lru(__VA_ARGS__)

#endif /* SEGPOOL_KERNEL_LINUX_SLAB_H */
