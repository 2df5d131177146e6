#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tools/check/layout.sh - the source layout keeps its two promises.
#
#  1. Includes point down: a folder of the library includes only from the
#     folders named before it in the root Kbuild (its include order), or
#     from itself.  The few includes that point up are listed below with
#     the reason; one that is not listed fails, and so does a listed one
#     that is gone (the list must not outlive its reason).
#  2. One OS door: no code outside os/ calls mmap, munmap, mremap,
#     mprotect, madvise, mbind, shm_open, shm_unlink, ftruncate or
#     syscall (comments aside); malloc/ may only interpose them.
#
# Usage: layout.sh SRCTREE.  Prints one TAP-like line per check and
# "N passed, N failed"; exit status 1 when one failed.
set -u

src=${1:?usage: layout.sh SRCTREE}
cd "$src" || exit 1
pass=0
fail=0

# Upward includes, "file -> header: why".
allowed=(
	"numa/large.c -> core/core.h: registry entries come from a segpool cache (sp_alloc_objs)"
	"numa/large.c -> core/hotpath.h: the entries leave the cache as any allocation (sp_obj_out)"
	"numa/policy.h -> slab/slab.h: a policy reads its cache's flags (struct segpool_cache)"
	"numa/pin.c -> core/core.h: the public calls start the library first (sp_init)"
	"rcu/rcu.c -> core/core.h: the public calls start the library first (sp_init)"
	"rcu/free.c -> core/core.h: frees by RCU go through the kmalloc classes and sp_init"
	"failslab/failslab.c -> core/core.h: the public calls start the library first (sp_init)"
	"stats/detail.c -> core/core.h: the public calls start the library first (sp_init)"
	"stats/export.c -> core/core.h: the public calls start the library first (sp_init)"
	"stats/export_snapshot.c -> core/core.h: the size classes (sp_kmalloc_caches)"
	"stats/health.c -> core/core.h: the public calls start the library first (sp_init)"
	"stats/health.c -> core/decay.h: the decay's delay, limit and counters (sp_decay_read)"
	"stats/json.c -> core/core.h: the public calls start the library first (sp_init)"
	"stats/print.c -> core/core.h: the public calls start the library first (sp_init)"
	"stats/snap.c -> core/core.h: the public calls start the library first (sp_init)"
	"stats/stats.c -> core/core.h: the public calls start the library first (sp_init)"
)

ok() { pass=$((pass + 1)); echo "ok $*"; }
bad() { fail=$((fail + 1)); echo "not ok $*"; }

# the include order, from the root Kbuild
mapfile -t order < <(sed -n 's|^obj-y[[:space:]]*+=[[:space:]]*\([a-z_]*\)/[[:space:]]*$|\1|p' Kbuild)
declare -A rank
for i in "${!order[@]}"; do rank[${order[$i]}]=$i; done

declare -A seen
up=0
for dir in "${order[@]}"; do
	for f in "$dir"/*.[ch]; do
		[[ -e $f ]] || continue
		while IFS= read -r hdr; do
			to=${hdr%%/*}
			[[ -n ${rank[$to]+x} ]] || continue	# not a library folder
			(( rank[$to] > rank[$dir] )) || continue
			key="$f -> $hdr"
			listed=0
			for a in "${allowed[@]}"; do
				[[ ${a%%:*} == "$key" ]] && listed=1
			done
			if (( listed )); then
				seen[$key]=1
			else
				bad "include order: $key points up ($to/ comes after $dir/ in Kbuild)"
				up=1
			fi
		done < <(sed -n 's|^#[[:space:]]*include[[:space:]]*"\([a-z_]*/[^"]*\)".*|\1|p' "$f")
	done
done
(( up )) || ok "include order: every include points down or is listed (${#allowed[@]} listed)"
for a in "${allowed[@]}"; do
	[[ -n ${seen[${a%%:*}]+x} ]] || bad "include order: listed '${a%%:*}' no longer exists: drop it"
done

# the OS door: calls outside os/, with comments stripped first
calls='\b(mmap|munmap|mremap|mprotect|madvise|mbind|shm_open|shm_unlink|ftruncate|syscall)[[:space:]]*\('
door=0
for dir in "${order[@]}"; do
	[[ $dir == os ]] && continue
	for f in "$dir"/*.[ch]; do
		[[ -e $f ]] || continue
		hits=$(sed -e 's|//.*||' "$f" | awk '
			{ line = $0; out = "" }
			{
				while (length(line)) {
					if (inc) {
						e = index(line, "*/")
						if (!e) { line = ""; break }
						line = substr(line, e + 2); inc = 0
					} else {
						s = index(line, "/*")
						if (!s) { out = out line; line = ""; break }
						out = out substr(line, 1, s - 1)
						line = substr(line, s + 2); inc = 1
					}
				}
				print NR ":" out
			}' | grep -E "$calls" || true)
		if [[ -n $hits ]]; then
			while IFS= read -r h; do
				bad "OS door: $f:${h%%:*} calls the OS outside os/"
			done <<< "$hits"
			door=1
		fi
	done
done
(( door )) || ok "OS door: no library folder but os/ calls the OS"

echo "$pass passed, $fail failed"
(( fail == 0 ))
