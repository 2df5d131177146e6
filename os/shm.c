// SPDX-License-Identifier: MIT
/*
 * os/shm.c - POSIX shared memory behind the OS door (os/os.h).
 *
 * Only the live statistics export (stats/export.c) uses it: one segment
 * per process, created here, mapped shared, grown in place.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "os/faultpoint.h"
#include "os/os.h"

#define SP_SHM_FLAGS	(O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC)

/* where glibc's shm_open() puts @name */
#define SP_SHM_DIR	"/dev/shm"

int sp_os_shm_create(const char *name, struct stat *in_way)
{
	char path[sizeof(SP_SHM_DIR) + 64];
	int fd;

	if (sp_fault_should_fail(SP_FAULT_SHM)) {
		errno = EMFILE;
		return -1;
	}
	fd = shm_open(name, SP_SHM_FLAGS, 0600);
	if (fd < 0 && errno == EEXIST) {
		/* no live process has our pid: a crashed one left it, or
		 * another user planted it (then the sticky folder keeps it) */
		shm_unlink(name);
		fd = shm_open(name, SP_SHM_FLAGS, 0600);
		if (fd < 0 && errno == EEXIST) {
			snprintf(path, sizeof(path), SP_SHM_DIR "%s", name);
			if (lstat(path, in_way))
				in_way->st_mode = 0;
			errno = EEXIST;
			return -1;
		}
	}
	/* the umask may have taken bits away: readers check for 0600 */
	if (fd >= 0 && fchmod(fd, 0600)) {
		int err = errno;

		close(fd);
		shm_unlink(name);
		errno = err;
		return -1;
	}
	return fd;
}

void sp_os_shm_unlink(const char *name)
{
	(void)shm_unlink(name);
}

int sp_os_shm_resize(int fd, size_t size)
{
	return ftruncate(fd, (off_t)size);
}

void *sp_os_map_shared(int fd, size_t size, bool writable)
{
	void *p;

	if (sp_fault_should_fail(SP_FAULT_MAP_SHARED)) {
		errno = ENOMEM;
		return NULL;
	}
	p = mmap(NULL, size, writable ? PROT_READ | PROT_WRITE : PROT_READ,
		 MAP_SHARED, fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

void sp_os_shm_each(void (*fn)(const char *name, void *arg), void *arg)
{
	DIR *d = opendir(SP_SHM_DIR);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d)))
		fn(de->d_name, arg);
	closedir(d);
}

int sp_os_shm_open_own(const char *name, struct stat *st)
{
	char path[sizeof(SP_SHM_DIR) + 256];
	int fd;

	if (snprintf(path, sizeof(path), SP_SHM_DIR "/%s", name) >=
	    (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* O_NONBLOCK: a FIFO planted there would block the open for good */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (fstat(fd, st) || !S_ISREG(st->st_mode) || st->st_uid != geteuid()) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}
