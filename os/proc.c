// SPDX-License-Identifier: MIT
/*
 * os/proc.c - what /proc says about this process's threads (os/os.h).
 * Read with open() and read() into a stack buffer: nothing here allocates.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "os/os.h"

bool sp_os_alone(void)
{
	char buf[1024], *p;
	ssize_t n;
	long threads;
	int fd;

	fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* "pid (comm) state ...": comm may hold spaces and parentheses */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return false;
	if (p[2] != 'Z')
		return false;			/* the main thread runs */
	/* field 20, num_threads: 17 fields after the state */
	p += 3;
	for (int f = 0; f < 17 && p; f++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (!p)
		return false;
	threads = strtol(p, NULL, 10);
	/* the exited main thread is still counted */
	return threads > 0 && threads <= 2;
}
