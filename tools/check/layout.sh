#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tools/check/layout.sh - the source layout keeps its two promises.
#
#  1. Includes point down: a folder of the library includes only from the
#     folders named before it in the root Kbuild (its include order), or
#     from itself.  There is no list of exceptions: a layer that needs
#     something from above takes it through a hook the upper layer sets
#     (sp_export_sites_fn, sp_health_decay_fn, sp_region_limit_hook) or
#     from a declaration at the bottom (internal/init.h's sp_init()).
#  2. The README's source-tree table lists these folders in this order
#     (the layers' one description; Documentation/internals/design.md
#     points to it).
#  4. (Given the object tree.)  The shared objects keep their large zeroed
#     arrays (1 KiB and more) out of .bss, in .sp_big (__sp_big,
#     scripts/segpool.lds), and their .bss within two pages (an ASan
#     build's red zones aside): the small variables a process writes at
#     start-up share those pages.
#  3. One OS door: no code outside os/ calls mmap, munmap, mremap,
#     mprotect, madvise, mbind, shm_open, shm_unlink, ftruncate or
#     syscall (comments aside; a source check, no build needed); and,
#     given the object tree, no object of a library folder but os/'s, nor
#     of malloc/, takes any C library wrapper of a system call (the list
#     below) from outside: nm -u of each object against it.  The one
#     exception is the one os/os.h states, internal/report.c's write(2)
#     to fd 2 (internal/ comes before os/).  What os/os.h leaves to its
#     callers (clock_gettime, sched_getcpu: vDSO reads; pthread_*, stdio
#     on a caller's stream; liburcu) is not on the list.
#
# Usage: layout.sh SRCTREE [OBJTREE].  Prints one TAP-like line per check
# and "N passed, N failed"; exit status 1 when one failed.
set -u

src=${1:?usage: layout.sh SRCTREE [OBJTREE]}
obj=${2:-}
[[ -z $obj ]] || obj=$(cd "$obj" && pwd) || exit 1
cd "$src" || exit 1
pass=0
fail=0

ok() { pass=$((pass + 1)); echo "ok $*"; }
bad() { fail=$((fail + 1)); echo "not ok $*"; }

# the include order, from the root Kbuild
mapfile -t order < <(sed -n 's|^obj-y[[:space:]]*+=[[:space:]]*\([a-z_]*\)/[[:space:]]*$|\1|p' Kbuild)
declare -A rank
for i in "${!order[@]}"; do rank[${order[$i]}]=$i; done

up=0
for dir in "${order[@]}"; do
	for f in "$dir"/*.[ch]; do
		[[ -e $f ]] || continue
		while IFS= read -r hdr; do
			to=${hdr%%/*}
			[[ -n ${rank[$to]+x} ]] || continue	# not a library folder
			(( rank[$to] > rank[$dir] )) || continue
			bad "include order: $f -> $hdr points up ($to/ comes after $dir/ in Kbuild)"
			up=1
		done < <(sed -n 's|^#[[:space:]]*include[[:space:]]*"\([a-z_]*/[^"]*\)".*|\1|p' "$f")
	done
done
(( up )) || ok "include order: every include points down (${#order[@]} folders, no exception)"

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

# The OS door in the objects: the C library's wrappers of system calls
# (syscalls(2), and the stdio and directory calls that open or read
# files).  A name is compared without glibc's decorations: a leading __,
# and a trailing _chk, _2 or 64 (__read_chk, __open64_2, fstat64).
wrappers='accept accept4 access acct alarm bind brk capget capset chdir chmod
chown chroot clock_adjtime clock_getres clock_nanosleep clock_settime clone
clone3 close close_range closedir connect copy_file_range creat dup dup2 dup3
epoll_create epoll_create1 epoll_ctl epoll_pwait epoll_wait eventfd
eventfd_read eventfd_write execl execle execlp execv execve execveat execvp
exit_group faccessat fallocate fchdir fchmod fchmodat fchown fchownat fclose
fcntl fdatasync fdopen fdopendir fgetxattr flistxattr flock fopen fork
fremovexattr freopen fsetxattr fstat fstatat fstatfs fstatvfs fsync ftruncate
futimens futimes fxstat fxstatat get_mempolicy getcwd getdents getdirentries
getegid getentropy geteuid getgid getgroups getitimer getpeername getpgid
getpgrp getpid getppid getpriority getrandom getresgid getresuid getrlimit
getrusage getsid getsockname getsockopt gettid gettimeofday getuid getxattr
inotify_add_watch inotify_init inotify_init1 inotify_rm_watch ioctl ioperm
iopl kill killpg lchown lgetxattr link linkat listen listxattr llistxattr
lremovexattr lseek lsetxattr lstat lxstat madvise mbind membarrier
memfd_create migrate_pages mincore mkdir mkdirat mkfifo mknod mknodat
mkostemp mkstemp mlock mlock2 mlockall mmap mount move_pages mprotect mq_open
mq_unlink mremap msgctl msgget msgrcv msgsnd msync munlock munlockall munmap
nanosleep newfstatat open openat opendir pause pipe pipe2 pkey_alloc
pkey_free pkey_mprotect poll popen posix_fadvise posix_fallocate
posix_madvise posix_spawn posix_spawnp ppoll prctl pread preadv preadv2
prlimit process_vm_readv process_vm_writev pselect pwrite pwritev pwritev2
raise read readahead readdir readdir_r readlink readlinkat readv reboot recv
recvfrom recvmmsg recvmsg remove removexattr rename renameat renameat2 rmdir
rseq scandir sched_get_priority_max sched_get_priority_min sched_getaffinity
sched_getattr sched_getparam sched_getscheduler sched_rr_get_interval
sched_setaffinity sched_setattr sched_setparam sched_setscheduler sched_yield
seccomp select semctl semget semop semtimedop send sendfile sendmmsg sendmsg
sendto set_mempolicy setegid seteuid setgid setgroups setitimer setns setpgid
setpriority setregid setresgid setresuid setreuid setrlimit setsid setsockopt
setuid setxattr shm_open shm_unlink shmat shmctl shmdt shmget shutdown
sigaction sigaltstack signal signalfd sigpending sigprocmask sigqueue
sigsuspend sigtimedwait sigwaitinfo sleep socket socketpair splice stat
statfs statvfs statx swapoff swapon symlink symlinkat sync sync_file_range
syncfs syscall sysconf sysinfo system tee tgkill time timer_create
timer_delete timer_getoverrun timer_gettime timer_settime timerfd_create
timerfd_gettime timerfd_settime times tkill truncate umask umount umount2
uname unlink unlinkat unshare usleep utime utimensat utimes vfork vmsplice
wait wait3 wait4 waitid waitpid write writev xstat'
# "object: name" pairs os/os.h names as the door's exceptions
door_allowed=("internal/report.o: write")
if [[ -n $obj ]]; then
	if ! command -v nm >/dev/null 2>&1; then
		echo "# OS door (objects): skipped, no nm"
	else
		declare -A wrapper
		for w in $wrappers; do wrapper[$w]=1; done
		nobj=0
		door=0
		for dir in "${order[@]}" malloc; do
			[[ $dir == os ]] && continue
			for o in "$obj/$dir"/*.o; do
				[[ -e $o ]] || continue
				nobj=$((nobj + 1))
				rel=${o#"$obj"/}
				while read -r _ sym; do
					n=${sym%%@*}
					n=${n#__}
					n=${n%_chk}
					n=${n%_2}
					n=${n%64}
					[[ -n ${wrapper[$n]+x} ]] || continue
					[[ " ${door_allowed[*]} " == *" $rel: $n "* ]] && continue
					bad "OS door: $rel calls $sym outside os/ (nm -u)"
					door=1
				done < <(nm -u "$o")
			done
		done
		(( nobj )) || bad "OS door: no object under $obj (build first)"
		(( door || !nobj )) || ok "OS door: no object but os/'s takes a system call wrapper ($nobj objects, ${#door_allowed[@]} exception)"
	fi
fi

# the shared objects' data: large zeroed arrays in .sp_big, .bss small
if [[ -n $obj ]] && command -v readelf >/dev/null 2>&1; then
	nso=0
	lay=0
	for so in "$obj"/libsegpool.so "$obj"/libsegpool-malloc.so; do
		[[ -e $so ]] || continue
		nso=$((nso + 1))
		# .bss: its address and size, from the section headers
		read -r bss_addr bss_size < <(readelf -SW "$so" |
			awk '$2 == ".bss" { print $4, $6 }')
		if [[ -z ${bss_size:-} ]]; then
			bad "data layout: ${so##*/} has no .bss"
			lay=1
			continue
		fi
		lo=$((16#$bss_addr))
		hi=$((lo + 16#$bss_size))
		# AddressSanitizer pads every global with its red zone
		if (( hi - lo > 8192 )) &&
		   ! nm -D "$so" 2>/dev/null | grep -q ' __asan_'; then
			bad "data layout: ${so##*/}'s .bss is $((hi - lo)) bytes, more than two pages"
			lay=1
		fi
		# zeroed objects of 1 KiB or more inside .bss: to tag __sp_big
		while read -r addr size type name; do
			[[ $type == [bB] ]] || continue
			(( 16#$size >= 1024 && 16#$addr >= lo && 16#$addr < hi )) ||
				continue
			bad "data layout: ${so##*/}: $name ($((16#$size)) bytes) in .bss, not __sp_big"
			lay=1
		done < <(nm -S "$so")
	done
	(( nso && !lay )) && ok "data layout: the shared objects' .bss within two pages, their large arrays in .sp_big ($nso objects)"
fi

# the README's source-tree table names the library folders in that order
mapfile -t table < <(sed -n 's/^| `\([a-z_]*\)\/` |.*/\1/p' README.md |
		     grep -xF -f <(printf '%s\n' "${order[@]}"))
if [[ "${table[*]}" == "${order[*]}" ]]; then
	ok "README's folder table: the ${#order[@]} folders of Kbuild, in its order"
else
	bad "README's folder table lists (${table[*]}), Kbuild (${order[*]})"
fi

echo "$pass passed, $fail failed"
(( fail == 0 ))
