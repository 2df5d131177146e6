/* SPDX-License-Identifier: MIT */
/*
 * malloc/symbols.h - prototypes of the entry points no system header of
 * Debian 12 declares: C23's free_sized() and free_aligned_sized() (glibc
 * 2.36 has neither), and the C++ operator new and delete families under
 * their Itanium-ABI names (x86-64: size_t is "m", std::align_val_t
 * "St11align_val_t", const std::nothrow_t& "RKSt9nothrow_t").
 */
#ifndef SP_MALLOC_SYMBOLS_H
#define SP_MALLOC_SYMBOLS_H

#include <stddef.h>

void free_sized(void *ptr, size_t size);
void free_aligned_sized(void *ptr, size_t align, size_t size);

/* std::nothrow_t is an empty class: only its address is passed. */
struct sp_cxx_nothrow;

/* operator new, new[]: plain, nothrow, aligned, aligned nothrow */
void *_Znwm(size_t size);
void *_Znam(size_t size);
void *_ZnwmRKSt9nothrow_t(size_t size, const struct sp_cxx_nothrow *nt);
void *_ZnamRKSt9nothrow_t(size_t size, const struct sp_cxx_nothrow *nt);
void *_ZnwmSt11align_val_t(size_t size, size_t align);
void *_ZnamSt11align_val_t(size_t size, size_t align);
void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t size, size_t align,
					  const struct sp_cxx_nothrow *nt);
void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t size, size_t align,
					  const struct sp_cxx_nothrow *nt);

/* operator delete, delete[]: plain, sized, nothrow, aligned, both */
void _ZdlPv(void *ptr);
void _ZdaPv(void *ptr);
void _ZdlPvm(void *ptr, size_t size);
void _ZdaPvm(void *ptr, size_t size);
void _ZdlPvRKSt9nothrow_t(void *ptr, const struct sp_cxx_nothrow *nt);
void _ZdaPvRKSt9nothrow_t(void *ptr, const struct sp_cxx_nothrow *nt);
void _ZdlPvSt11align_val_t(void *ptr, size_t align);
void _ZdaPvSt11align_val_t(void *ptr, size_t align);
void _ZdlPvmSt11align_val_t(void *ptr, size_t size, size_t align);
void _ZdaPvmSt11align_val_t(void *ptr, size_t size, size_t align);
void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *ptr, size_t align,
					  const struct sp_cxx_nothrow *nt);
void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *ptr, size_t align,
					  const struct sp_cxx_nothrow *nt);

#endif /* SP_MALLOC_SYMBOLS_H */
