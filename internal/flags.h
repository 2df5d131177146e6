/* SPDX-License-Identifier: MIT */
/*
 * internal/flags.h - a table of flag bits with their names, read one way
 * wherever flags are listed by name (the stats' cache and arena flags).
 */
#ifndef SP_INTERNAL_FLAGS_H
#define SP_INTERNAL_FLAGS_H

#include <stddef.h>

struct sp_flag_name {
	unsigned long bit;
	const char *name;
};

/*
 * sp_flag_names() - the names of the flags of @tab (@nr entries) set in
 * @flags, in the table's order, at most @max of them, into @names.
 * Return: how many were stored.
 */
static inline size_t sp_flag_names(const struct sp_flag_name *tab, size_t nr,
				   unsigned long flags, const char **names,
				   size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < nr && n < max; i++)
		if (flags & tab[i].bit)
			names[n++] = tab[i].name;
	return n;
}

#endif /* SP_INTERNAL_FLAGS_H */
