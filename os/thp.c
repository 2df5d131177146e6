// SPDX-License-Identifier: MIT
/*
 * os/thp.c - transparent huge pages behind the OS door (os/os.h): the
 * advice, the kernel's mode, and how much of a range huge pages back.
 * The files are read with open() and read() into stack buffers: this may
 * run inside malloc() (libsegpool-malloc.so), so nothing here allocates.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "os/cpu.h"
#include "os/os.h"

void sp_os_advise_huge(void *addr, size_t size, bool huge)
{
	madvise(addr, size, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
}

enum sp_os_thp sp_os_thp_mode(void)
{
	char buf[128];

	if (sp_os_read_text("/sys/kernel/mm/transparent_hugepage/enabled",
			    buf, sizeof(buf)) < 0)
		return SP_OS_THP_UNKNOWN;
	/* "always [madvise] never": the bracketed word is the mode */
	if (strstr(buf, "[madvise]"))
		return SP_OS_THP_MADVISE;
	if (strstr(buf, "[always]"))
		return SP_OS_THP_ALWAYS;
	if (strstr(buf, "[never]"))
		return SP_OS_THP_NEVER;
	return SP_OS_THP_UNKNOWN;
}

/*
 * A huge page is what one entry of the level above the last page table
 * maps: a page of page-table entries of 8 bytes each, each mapping a page,
 * on both architectures segpool builds for (x86-64, arm64 with 4, 16 or
 * 64 KiB pages).  Computed rather than read from hpage_pmd_size: every
 * process that loads the library asks at start-up, and each sysfs file
 * cost it 7-12 us of system calls here.  A kernel without THP has the same
 * page tables; its mode reads SP_OS_THP_UNKNOWN and nothing is advised.
 */
size_t sp_os_thp_size(void)
{
	size_t page = sp_os_kernel_page();

	return page * (page / 8);
}

/* One line of smaps: a mapping's range, or its AnonHugePages in kB. */
static void sp_smaps_line(const char *line, uintptr_t lo, uintptr_t hi,
			  bool *in, uint64_t *bytes)
{
	static const char key[] = "AnonHugePages:";
	char *end;
	uintptr_t start, stop;

	if (!strncmp(line, key, sizeof(key) - 1)) {
		if (*in)
			*bytes += strtoull(line + sizeof(key) - 1, NULL, 10)
				  << 10;
		return;
	}
	start = strtoull(line, &end, 16);
	if (end == line || *end != '-')
		return;			/* another field of the mapping */
	stop = strtoull(end + 1, &end, 16);
	if (*end != ' ')
		return;
	*in = start < hi && stop > lo;
}

uint64_t sp_os_huge_bytes(const void *addr, size_t size)
{
	uintptr_t lo = (uintptr_t)addr, hi = lo + size;
	char buf[4096], line[256];
	size_t len = 0;
	uint64_t bytes = 0;
	bool in = false;
	ssize_t n;
	int fd;

	fd = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				if (len < sizeof(line) - 1)
					line[len++] = buf[i];
				continue;
			}
			line[len] = '\0';
			sp_smaps_line(line, lo, hi, &in, &bytes);
			len = 0;
		}
	}
	close(fd);
	return bytes;
}
