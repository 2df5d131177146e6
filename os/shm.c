// SPDX-License-Identifier: MIT
/*
 * os/shm.c - POSIX shared memory behind the OS door (os/os.h).
 *
 * Only the live statistics export (stats/export.c) uses it: one segment
 * per process, created here, mapped shared, grown in place.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "os/faultpoint.h"
#include "os/os.h"

#define SP_SHM_FLAGS	(O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC)

int sp_os_shm_create(const char *name)
{
	int fd;

	if (sp_fault_should_fail(SP_FAULT_SHM)) {
		errno = EMFILE;
		return -1;
	}
	fd = shm_open(name, SP_SHM_FLAGS, 0600);
	if (fd < 0 && errno == EEXIST) {
		/* no live process has our pid: a crashed one left it */
		shm_unlink(name);
		fd = shm_open(name, SP_SHM_FLAGS, 0600);
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

void *sp_os_remap(void *addr, size_t old, size_t size)
{
	void *p = mremap(addr, old, size, MREMAP_MAYMOVE);

	return p == MAP_FAILED ? NULL : p;
}
