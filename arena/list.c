// SPDX-License-Identifier: MIT
/*
 * arena/list.c - the list of live arenas, what the statistics read of
 * each, and fork.
 *
 * sp_bump_list_lock protects the list; a statistics walk holds it and takes
 * each arena's lock in turn to read its figures (sp_bump_info()), so an
 * arena is never destroyed under a reader: segpool_arena_destroy() unlists
 * it first.
 *
 * fork: the first listed arena registers handlers that take the list lock
 * and then every arena's lock before fork() and release (parent) or
 * re-initialise (child) them after.  They are registered after the
 * library's own handlers (core/init.c), so they run before them in the
 * prepare step, as the lock order wants (see core/init.c, level 1).
 */
#include <pthread.h>
#include <string.h>

#include "arena/arena.h"
#include "internal/flags.h"
#include "os/os.h"

pthread_mutex_t sp_bump_list_lock = PTHREAD_MUTEX_INITIALIZER;
struct sp_list_head sp_bump_list = SP_LIST_HEAD_INIT(sp_bump_list);
static pthread_once_t sp_bump_fork_once = PTHREAD_ONCE_INIT;

#define SP_BUMP_FIELD_GET(name, expr)					\
	static uint64_t sp_bump_get_##name(const struct segpool_arena_info *i) \
	{								\
		return (expr);						\
	}
SP_ARENA_FIELDS(SP_BUMP_FIELD_GET)
#undef SP_BUMP_FIELD_GET

#define SP_BUMP_FIELD_ENTRY(name, expr) { #name, sp_bump_get_##name },
const struct sp_bump_field sp_bump_fields[] = {
	SP_ARENA_FIELDS(SP_BUMP_FIELD_ENTRY)
};
#undef SP_BUMP_FIELD_ENTRY
const size_t sp_nr_bump_fields = SP_ARRAY_SIZE(sp_bump_fields);

static const struct sp_flag_name sp_bump_flag_name[] = {
	{ SEGPOOL_ARENA_THREADSAFE,	"threadsafe" },
	{ SEGPOOL_ARENA_THISNODE,	"thisnode" },
	{ SEGPOOL_ARENA_RED_ZONE,	"red_zone" },
	{ SEGPOOL_ARENA_POISON,		"poison" },
};

size_t sp_bump_flag_names(unsigned long flags, const char **names, size_t max)
{
	return sp_flag_names(sp_bump_flag_name,
			     SP_ARRAY_SIZE(sp_bump_flag_name), flags, names,
			     max);
}

/* As the library's own handler: no lock taken in a process that never
 * had a second thread (core/init.c). */
static bool sp_bump_fork_alone;

static void sp_bump_fork_prepare(void)
{
	struct segpool_arena *a;

	sp_bump_fork_alone = sp_os_single_threaded();
	if (sp_bump_fork_alone)
		return;
	pthread_mutex_lock(&sp_bump_list_lock);
	sp_list_for_each_entry(a, &sp_bump_list, list)
		pthread_mutex_lock(&a->lock);
}

static void sp_bump_fork_parent(void)
{
	struct segpool_arena *a;

	if (sp_bump_fork_alone)
		return;
	sp_list_for_each_entry(a, &sp_bump_list, list)
		pthread_mutex_unlock(&a->lock);
	pthread_mutex_unlock(&sp_bump_list_lock);
}

static void sp_bump_fork_child(void)
{
	struct segpool_arena *a;

	if (sp_bump_fork_alone)
		return;
	sp_list_for_each_entry(a, &sp_bump_list, list)
		pthread_mutex_init(&a->lock, NULL);
	pthread_mutex_init(&sp_bump_list_lock, NULL);
}

static void sp_bump_fork_register(void)
{
	pthread_atfork(sp_bump_fork_prepare, sp_bump_fork_parent,
		       sp_bump_fork_child);
}

void sp_bump_list_add(struct segpool_arena *a)
{
	pthread_once(&sp_bump_fork_once, sp_bump_fork_register);
	pthread_mutex_lock(&sp_bump_list_lock);
	sp_list_add_tail(&a->list, &sp_bump_list);
	pthread_mutex_unlock(&sp_bump_list_lock);
}

void sp_bump_list_del(struct segpool_arena *a)
{
	pthread_mutex_lock(&sp_bump_list_lock);
	sp_list_del(&a->list);
	pthread_mutex_unlock(&sp_bump_list_lock);
}

size_t sp_bump_walk(sp_bump_fn fn, void *arg)
{
	struct segpool_arena *a;
	struct sp_bump_snap s;
	size_t n = 0;

	pthread_mutex_lock(&sp_bump_list_lock);
	sp_list_for_each_entry(a, &sp_bump_list, list) {
		memcpy(s.name, a->name, sizeof(s.name));
		s.info.size = sizeof(s.info);
		sp_bump_info(a, &s.info);
		fn(&s, arg);
		n++;
	}
	pthread_mutex_unlock(&sp_bump_list_lock);
	return n;
}
