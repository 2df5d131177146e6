// SPDX-License-Identifier: MIT
/*
 * tools/segpool-top/sites.c - --sites [N]: the top call sites of a running
 * process's sampled heap profile.
 *
 * The addresses mean something only in the process, so the process names
 * them (dladdr()) and writes the N sites with the most sampled bytes in
 * use into a file of a directory this program makes for the purpose
 * (mkdtemp(), mode 0700, under $TMPDIR or /tmp): the request
 * SEGPOOL_CTL_OP_TOP_SITES through the control segment (control.c), the
 * same checks of who asks whom as every request.  This file reads the
 * answer back (its format: prof/sites.c of the library), prints it and
 * removes file and directory.  A process without sampling refuses,
 * naming SEGPOOL_HEAP_PROFILE.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/segpool-top/top.h"

#define TOP_SITES_LINE	4096

/* The next tab-separated field of *@s (NUL-terminated in place), or NULL. */
static char *top_sites_field(char **s)
{
	char *f = *s, *t;

	if (!f)
		return NULL;
	t = strchr(f, '\t');
	if (t) {
		*t = '\0';
		*s = t + 1;
	} else {
		*s = NULL;
	}
	return f;
}

int top_sites_show(int pid, const char *path)
{
	char line[TOP_SITES_LINE], *p, *f;
	FILE *in = fopen(path, "re");
	unsigned int k = 0;

	if (!in) {
		top_error("process %d: sites: cannot read its answer %s: %s",
			  pid, path, strerror(errno));
		return TOP_EXIT_TARGET;
	}
	while (fgets(line, sizeof(line), in)) {
		line[strcspn(line, "\n")] = '\0';
		p = line;
		f = top_sites_field(&p);
		if (!f)
			continue;
		if (!strcmp(f, "total")) {
			char *bytes = top_sites_field(&p);
			char *objs = top_sites_field(&p);
			char *samples = top_sites_field(&p);
			char *rate = top_sites_field(&p);

			printf("process %d: top call sites by sampled bytes in "
			       "use; in use in all: %s bytes, %s objects (%s "
			       "samples, 1 per %s bytes)\n", pid,
			       bytes ? bytes : "?", objs ? objs : "?",
			       samples ? samples : "?", rate ? rate : "?");
			printf("%4s %14s %10s  %s\n", "#", "IN-USE-BYTES",
			       "OBJECTS", "CACHE / CALL SITE");
			continue;
		}
		if (strcmp(f, "site"))
			continue;
		{
			char *bytes = top_sites_field(&p);
			char *objs = top_sites_field(&p);
			char *cache = top_sites_field(&p);
			unsigned int fr = 0;

			printf("%4u %14s %10s  %s\n", ++k, bytes ? bytes : "?",
			       objs ? objs : "?", cache ? cache : "?");
			while ((f = top_sites_field(&p)))
				printf("%4s %14s %10s    #%u %s\n", "", "", "",
				       fr++, f);
		}
	}
	fclose(in);
	if (!k)
		printf("(no sampled object in use)\n");
	return TOP_EXIT_OK;
}

int top_sites_request(int pid, long long n)
{
	const char *base = getenv("TMPDIR");
	char dir[SEGPOOL_CTL_PATH_MAX - 16], path[SEGPOOL_CTL_PATH_MAX];
	int len, ret;

	if (!base || base[0] != '/')
		base = "/tmp";
	len = snprintf(dir, sizeof(dir), "%s/segpool-top.XXXXXX", base);
	if (len < 0 || (size_t)len >= sizeof(dir)) {
		top_error("--sites: TMPDIR %s is too long a path", base);
		return TOP_EXIT_TARGET;
	}
	if (!mkdtemp(dir)) {
		top_error("--sites: cannot make a directory for the answer "
			  "under %s: %s", base, strerror(errno));
		return TOP_EXIT_TARGET;
	}
	snprintf(path, sizeof(path), "%s/sites", dir);
	ret = top_ctl_request(pid, SEGPOOL_CTL_OP_TOP_SITES, n, path);
	unlink(path);
	rmdir(dir);
	return ret;
}
