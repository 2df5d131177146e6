// SPDX-License-Identifier: MIT
/*
 * tools/bench/machine.c - the machine the numbers come from.
 *
 * CPU model, CPUs online and usable, memory, kernel, glibc, compiler,
 * segpool and the git revision of its sources, NUMA nodes, the measured TSC
 * rate, and each peer's Debian package version (dpkg-query).  Printed with
 * every result.
 */
#include <gnu/libc-version.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>

#include <segpool/segpool.h>

#include "tools/bench/bench.h"

static void bench_cpu_model(char *buf, size_t len)
{
	char line[256];
	FILE *f = fopen("/proc/cpuinfo", "r");

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) || !colon)
			continue;
		colon += 1 + strspn(colon + 1, " \t");
		colon[strcspn(colon, "\n")] = '\0';
		snprintf(buf, len, "%s", colon);
		break;
	}
	fclose(f);
}

/* The first line a shell command prints, or "". */
static void bench_first_line(const char *cmd, char *buf, size_t len)
{
	FILE *p = popen(cmd, "r");

	buf[0] = '\0';
	if (!p)
		return;
	if (!fgets(buf, (int)len, p))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	pclose(p);
}

/* The installed version of Debian package @pkg, or "" (not Debian, absent). */
static void bench_pkg_version(const char *pkg, char *buf, size_t len)
{
	char cmd[128];

	/* @pkg comes from the contender table, never from the command line */
	snprintf(cmd, sizeof(cmd),
		 "dpkg-query -W -f='${Version}' %s 2>/dev/null", pkg);
	bench_first_line(cmd, buf, len);
}

/* Which sources were measured: git describe of the tree, "-dirty" included. */
static void bench_revision(const char *srctree, char *buf, size_t len)
{
	char cmd[600];

	buf[0] = '\0';
	if (strchr(srctree, '\''))
		return;
	snprintf(cmd, sizeof(cmd), "git -C '%s' describe --always --dirty "
		 "2>/dev/null", srctree);
	bench_first_line(cmd, buf, len);
}

void bench_machine_read(struct bench_machine *m, struct bench_run *run)
{
	int cpus[BENCH_MAX_THREADS];
	struct utsname u;
	time_t now = time(NULL);

	memset(m, 0, sizeof(*m));
	bench_cpu_model(m->cpu, sizeof(m->cpu));
	m->online = (unsigned int)sysconf(_SC_NPROCESSORS_ONLN);
	m->usable = bench_cpus(cpus, BENCH_MAX_THREADS);
	m->mem_mb = sysconf(_SC_PHYS_PAGES) / 1024 * sysconf(_SC_PAGESIZE) /
		    1024;
	if (!uname(&u))
		snprintf(m->kernel, sizeof(m->kernel), "%s %s %s", u.sysname,
			 u.release, u.machine);
	snprintf(m->glibc, sizeof(m->glibc), "%s", gnu_get_libc_version());
#ifdef __clang__
	snprintf(m->compiler, sizeof(m->compiler), "%s", __VERSION__);
#else
	snprintf(m->compiler, sizeof(m->compiler), "gcc %s", __VERSION__);
#endif
	snprintf(m->segpool, sizeof(m->segpool), "%s", segpool_version());
	bench_revision(run->srctree, m->revision, sizeof(m->revision));
	strftime(m->date, sizeof(m->date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	m->numa_nodes = segpool_numa_node_count();
	m->tsc_ghz = run->cfg.tsc_hz / 1e9;

	for (unsigned int i = 0; i < run->nr_cs; i++) {
		struct bench_contender_state *s = &run->cs[i];

		if (s->c->package)
			bench_pkg_version(s->c->package, s->version,
					  sizeof(s->version));
		else if (s->c->peer)	/* --peer: a library of unknown version */
			snprintf(s->version, sizeof(s->version), "-");
		else if (s->c->kind != BENCH_FLOOR)
			snprintf(s->version, sizeof(s->version), "%s",
				 m->segpool);
	}
}
