// SPDX-License-Identifier: MIT
/*
 * tools/check/inline_user.c - a program built as a user's would be, with
 * SEGPOOL_INLINE, for tools/check/hotpath.sh: its four functions are the
 * inline hit paths as they land in a caller (disassembled and counted
 * against the budgets stated in include/segpool/inline.h), and run, it
 * checks that it sees the library's layout words, not a copy of them.
 *
 * Exit status 0 when the inline hit path is open (or, in a sanitized
 * build, closed as it should be), 1 otherwise.
 */
#define SEGPOOL_INLINE 1
#include <stdio.h>
#include <segpool/segpool.h>

__attribute__((noinline)) void *user_cache_alloc(struct segpool_cache *c)
{
	return segpool_cache_alloc(c, 0);
}

__attribute__((noinline)) void user_cache_free(struct segpool_cache *c, void *p)
{
	segpool_cache_free(c, p);
}

__attribute__((noinline)) void *user_malloc64(void)
{
	return segpool_malloc(64);
}

__attribute__((noinline)) void user_free(void *p)
{
	segpool_free(p);
}

int main(int argc, char **argv)
{
	struct segpool_cache *c =
		segpool_cache_create("inline_user", 64, 0, 0, NULL);
	unsigned int want =
		argc > 1 && argv[1][0] == '0' ? 0 : SEGPOOL_INLINE_ABI_VERSION;
	void *p[100];

	if (!c)
		return 1;
	for (int r = 0; r < 100; r++) {
		for (int i = 0; i < 100; i++)
			p[i] = i & 1 ? user_malloc64() : user_cache_alloc(c);
		for (int i = 0; i < 100; i++) {
			if (i & 1)
				user_free(p[i]);
			else
				user_cache_free(c, p[i]);
		}
	}
	printf("# inline user program: layout version %u (want %u), "
	       "slot bound %u\n",
	       __segpool_abi()->version, want, __segpool_abi()->nr);
	segpool_cache_destroy(c);
	return __segpool_abi()->version == want ? 0 : 1;
}
