// SPDX-License-Identifier: MIT
/*
 * os/file.c - a file the library writes for its user (os/os.h): the
 * statistics printed at exit (SEGPOOL_STATS_PRINT_FILE).
 *
 * The name comes from the environment and the directory may be shared
 * (/tmp), so the file is never opened by its name: whatever stands there
 * must be a regular file of this user (a symbolic link, a FIFO, a device
 * or another user's file is refused), the text goes to a new file made
 * beside it with O_EXCL (mkostemp(3): mode 0600, never through a link;
 * the statistics are the process's own business),
 * and that file is renamed over the name at the end.  A link planted
 * between the check and the rename is replaced, never followed; in a
 * sticky directory another user's file cannot be replaced at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "os/os.h"

int sp_os_user_file_begin(const char *path, char *tmp, size_t size)
{
	struct stat st;

	if (lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode)) {
			errno = ELOOP;
			return -1;
		}
		if (!S_ISREG(st.st_mode)) {
			errno = EINVAL;
			return -1;
		}
		if (st.st_uid != geteuid()) {
			errno = EPERM;
			return -1;
		}
	} else if (errno != ENOENT) {
		return -1;
	}
	if ((size_t)snprintf(tmp, size, "%s.XXXXXX", path) >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return mkostemp(tmp, O_CLOEXEC);	/* mode 0600 */
}

int sp_os_user_file_commit(int fd, const char *tmp, const char *path)
{
	int err = 0;

	if (close(fd))
		err = errno;
	if (!err && rename(tmp, path))
		err = errno;
	if (err) {
		unlink(tmp);
		errno = err;
		return -1;
	}
	return 0;
}


int sp_os_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int sp_os_dup_stderr(void)
{
	return fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
}

void sp_os_close(int fd)
{
	close(fd);
}

int sp_os_open_read(const char *path)
{
	return open(path, O_RDONLY | O_CLOEXEC);
}

ssize_t sp_os_read(int fd, void *buf, size_t len)
{
	ssize_t n;

	do
		n = read(fd, buf, len);
	while (n < 0 && errno == EINTR);
	return n;
}

ssize_t sp_os_read_text(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = sp_os_open_read(path);

	if (fd < 0)
		return -1;
	n = sp_os_read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return n;
}

int sp_os_fstat(int fd, struct stat *st)
{
	return fstat(fd, st);
}

void sp_os_user_file_abort(int fd, const char *tmp)
{
	close(fd);
	unlink(tmp);
}
