// SPDX-License-Identifier: MIT
/*
 * selftests/api/install_consumer.c - a program built against an installed
 * segpool, the way its users build one (test_install.sh: pkg-config,
 * pkg-config --static with -static, CMake's shared and static targets).
 *
 * It uses what needs the most of the link line: a cache, the kmalloc-style
 * classes, the inline RCU read side (liburcu-memb in the program itself)
 * and the NUMA state, which it prints as "numa_available=N nr_nodes=N" so
 * that the test can compare a static program with a dynamic one.
 */
#include <stdio.h>
#include <string.h>

#include <segpool/segpool.h>

struct ic_item {
	long key;
	char text[24];
};

int main(void)
{
	struct segpool_cache *c = SEGPOOL_CACHE(ic_item, 0);
	struct segpool_health h;
	struct ic_item *it;
	char *s;

	if (!c)
		return 10;
	it = segpool_cache_alloc(c, SEGPOOL_ZERO);
	s = segpool_malloc(1000);
	if (!it || !s || it->key)
		return 11;
	it->key = 42;
	strcpy(s, "installed");

	if (segpool_rcu_register_thread())
		return 12;
	segpool_rcu_read_lock();
	it->key++;
	segpool_rcu_read_unlock();
	segpool_synchronize_rcu();
	segpool_rcu_unregister_thread();

	memset(&h, 0, sizeof(h));
	h.size = sizeof(h);
	if (segpool_health_get(&h))
		return 13;
	if (strcmp(h.version, SEGPOOL_VERSION_STRING) ||
	    strcmp(segpool_version(), SEGPOOL_VERSION_STRING))
		return 14;
	printf("%s %ld version=%s numa_available=%u nr_nodes=%u\n", s, it->key,
	       segpool_version(), h.numa_available, h.nr_nodes);
	segpool_free(s);
	segpool_cache_free(c, it);
	return segpool_cache_destroy(c) ? 15 : 0;
}
