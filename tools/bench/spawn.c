// SPDX-License-Identifier: MIT
/*
 * tools/bench/spawn.c - one measurement: a child process and its record.
 *
 * The child is this program again, with "--child" and the job's settings
 * as options, the driver's environment less any LD_PRELOAD,
 * SEGPOOL_PERCPU and SEGPOOL_FREELIST_HARDENED, plus the peer library to
 * preload or the per-CPU mode of a segpool contender (SEGPOOL_PERCPU=lock
 * or off; the default contenders run without it, in segpool's default
 * mode) and its one extra variable (segpool-cache-plain), and the write end of a pipe as
 * fd 3 for its record ("key value" lines, child.c).  Its stdout and stderr
 * are the driver's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "tools/bench/bench.h"

#define BENCH_RESULT_FD 3

static void bench_record_line(struct bench_record *rec, const char *key,
			      const char *val)
{
	static const char *const lat[BENCH_NR_LAT][BENCH_NR_PCT] = {
		{ "lat_alloc_p50", "lat_alloc_p99", "lat_alloc_p999" },
		{ "lat_free_p50", "lat_free_p99", "lat_free_p999" },
	};
	struct bench_result *r = &rec->r;

	if (!strcmp(key, "status"))
		snprintf(rec->status, sizeof(rec->status), "%s", val);
	else if (!strcmp(key, "served"))
		snprintf(rec->served, sizeof(rec->served), "%s", val);
	else if (!strcmp(key, "mapped"))
		snprintf(rec->mapped, sizeof(rec->mapped), "%s", val);
	else if (!strcmp(key, "self_version"))
		snprintf(rec->version, sizeof(rec->version), "%s", val);
	else if (!strcmp(key, "percpu_mode"))
		snprintf(rec->mode, sizeof(rec->mode), "%s", val);
	else if (!strcmp(key, "trim"))
		snprintf(r->trim, sizeof(r->trim), "%s", val);
	else if (!strcmp(key, "ops"))
		r->ops = strtoull(val, NULL, 10);
	else if (!strcmp(key, "cpu_ns"))
		r->cpu_ns = strtod(val, NULL);
	else if (!strcmp(key, "wall_ns"))
		r->wall_ns = strtod(val, NULL);
	else if (!strcmp(key, "checksum"))
		r->checksum = strtoull(val, NULL, 10);
	else if (!strcmp(key, "expect"))
		r->expect = strtoull(val, NULL, 10);
	else if (!strcmp(key, "errors"))
		r->errors = atoi(val);
	else if (!strcmp(key, "peak_rss_kb"))
		r->peak_rss_kb = atol(val);
	else if (!strcmp(key, "live"))
		r->live = strtoull(val, NULL, 10);
	else if (!strcmp(key, "rss_base_kb"))
		r->rss_base_kb = atol(val);
	else if (!strcmp(key, "rss_live_kb"))
		r->rss_live_kb = atol(val);
	else if (!strcmp(key, "rss_freed_kb"))
		r->rss_freed_kb = atol(val);
	else if (!strcmp(key, "rss_trim_kb"))
		r->rss_trim_kb = atol(val);
	else if (!strcmp(key, "empty_ns"))
		r->empty_ns = strtod(val, NULL);
	else if (!strcmp(key, "tick_ns"))
		r->tick_ns = strtod(val, NULL);
	else if (!strcmp(key, "samples"))
		r->samples = strtoull(val, NULL, 10);
	else if (!strcmp(key, "cpu_objs"))
		r->cpu_objs = strtoull(val, NULL, 10);
	else if (!strcmp(key, "depot_objs"))
		r->depot_objs = strtoull(val, NULL, 10);
	else if (!strcmp(key, "cached_bytes")) {
		r->cached_bytes = strtoull(val, NULL, 10);
		r->has_cached = true;
	} else if (!strcmp(key, "cpu_bytes"))
		r->cpu_bytes = strtoull(val, NULL, 10);
	else if (!strcmp(key, "mag_size"))
		r->mag_size = (unsigned int)strtoul(val, NULL, 10);
	else if (!strcmp(key, "depot_max"))
		r->depot_max = (unsigned int)strtoul(val, NULL, 10);
	else if (!strcmp(key, "caches"))
		r->caches = (unsigned int)strtoul(val, NULL, 10);
	else if (!strcmp(key, "fast_allocs"))
		r->fast_allocs = strtoull(val, NULL, 10);
	else if (!strcmp(key, "slow_allocs"))
		r->slow_allocs = strtoull(val, NULL, 10);
	else if (!strcmp(key, "fast_frees"))
		r->fast_frees = strtoull(val, NULL, 10);
	else if (!strcmp(key, "slow_frees"))
		r->slow_frees = strtoull(val, NULL, 10);
	else if (!strncmp(key, "x_", 2)) {
		for (int k = 0; k < BENCH_NR_X; k++)
			if (!strcmp(key + 2, bench_x_names[k])) {
				r->x[k] = strtod(val, NULL);
				r->has_x |= 1u << k;
			}
	} else
		for (int k = 0; k < BENCH_NR_LAT; k++)
			for (int j = 0; j < BENCH_NR_PCT; j++)
				if (!strcmp(key, lat[k][j])) {
					r->lat[k][j] = strtod(val, NULL);
					r->has_lat = true;
				}
}

static void bench_record_parse(char *text, struct bench_record *rec)
{
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char *sp = strchr(line, ' ');

		if (sp) {
			*sp = '\0';
			bench_record_line(rec, line, sp + 1);
		}
	}
}

/*
 * The environment of a child: ours without LD_PRELOAD and SEGPOOL_PERCPU,
 * plus @preload, or the per-CPU mode a segpool contender asks for (in
 * @mode_buf).
 */
static char **bench_child_env(const struct bench_contender *c,
			      const char *preload, char *buf, size_t len,
			      char *mode_buf, size_t mode_len)
{
	size_t n = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + 4, sizeof(*env));
	if (!env)
		bench_die("out of memory");
	n = 0;
	for (char **e = environ; *e; e++)
		if (strncmp(*e, "LD_PRELOAD=", 11) &&
		    strncmp(*e, "SEGPOOL_PERCPU=", 15) &&
		    strncmp(*e, "SEGPOOL_FREELIST_HARDENED=", 26))
			env[n++] = *e;
	if (preload) {
		snprintf(buf, len, "LD_PRELOAD=%s", preload);
		env[n++] = buf;
	}
	/* "rseq" is the default: the mode segpool picks by itself */
	if (c->percpu && strcmp(c->percpu, "rseq")) {
		snprintf(mode_buf, mode_len, "SEGPOOL_PERCPU=%s", c->percpu);
		env[n++] = mode_buf;
	}
	if (c->env)
		env[n++] = (char *)c->env;
	env[n] = NULL;
	return env;
}

static void bench_child_args(const struct bench_run *run,
			     const struct bench_job *job, char args[][40],
			     char **argv)
{
	const struct bench_cfg *cfg = &run->cfg;
	int n = 0, a = 0;

#define ARG(...) do {							\
		snprintf(args[a], sizeof(args[a]), __VA_ARGS__);	\
		argv[n++] = args[a++];					\
	} while (0)
	argv[n++] = run->self;
	ARG("--child=%s", job->c->name);
	ARG("--workload=%s", job->wl->name);
	ARG("--threads=%u", job->threads);
	ARG("--ops=%llu", (unsigned long long)bench_workload_ops(job->wl, cfg));
	ARG("--live=%llu", (unsigned long long)cfg->live);
	ARG("--size=%zu", cfg->size);
	ARG("--size-range=%zu-%zu", cfg->size_min, cfg->size_max);
	ARG("--pairs=%u", cfg->pairs);
	ARG("--fs-threads=%u", bench_fs_threads(cfg));
	ARG("--writes=%u", cfg->writes);
	ARG("--seed=%llu", (unsigned long long)cfg->seed);
	ARG("--warmup=%g", cfg->warmup);
	ARG("--scale=%g", cfg->scale);
	ARG("--rows-scale=%g", cfg->rows_scale);
	ARG("--grow-max=%zu", cfg->grow_max);
	ARG("--idle-max=%u", cfg->idle_max_s);
	ARG("--tsc-hz=%.0f", cfg->tsc_hz);
	ARG("--result-fd=%d", BENCH_RESULT_FD);
	if (!cfg->pin)
		ARG("--no-pin");
#undef ARG
	/* the child knows the command line's peers too */
	for (unsigned int i = BENCH_NR_BUILTIN; i < bench_nr_contenders; i++) {
		static char spec[BENCH_MAX_EXTRA][4200];
		unsigned int k = i - BENCH_NR_BUILTIN;

		snprintf(spec[k], sizeof(spec[k]), "--peer=%s=%s",
			 bench_contenders[i].name, bench_contenders[i].soname);
		argv[n++] = spec[k];
	}
	argv[n] = NULL;
}

/*
 * A counting pass: strace runs the child, following its threads, and
 * writes every mmap, munmap, mremap and write (the marks) to @trace; the
 * preload is set for the child alone (-E), not for strace.
 */
static char **bench_traced_argv(const struct bench_run *run, char **argv,
				const char *preload, const char *trace,
				char *pre_buf, size_t len, char **out)
{
	int n = 0;

	out[n++] = (char *)run->strace;
	out[n++] = (char *)"-f";
	/* the child stops at the traced calls only */
	out[n++] = (char *)"--seccomp-bpf";
	out[n++] = (char *)"-qq";
	out[n++] = (char *)"-o";
	out[n++] = (char *)trace;
	out[n++] = (char *)"-e";
	out[n++] = (char *)"trace=mmap,munmap,mremap,write";
	out[n++] = (char *)"-e";
	out[n++] = (char *)"signal=none";
	if (preload) {
		snprintf(pre_buf, len, "LD_PRELOAD=%s", preload);
		out[n++] = (char *)"-E";
		out[n++] = pre_buf;
	}
	out[n++] = (char *)"--";
	for (int i = 0; argv[i]; i++)
		out[n++] = argv[i];
	out[n] = NULL;
	return out;
}

int bench_spawn(const struct bench_run *run, const struct bench_job *job,
		const char *preload, struct bench_record *rec,
		const char *trace)
{
	const struct bench_contender_state *s =
		&run->cs[job->c - bench_contenders];
	const char *exec = s->exec[0] ? s->exec : run->exec;
	char args[24][40], *argv[28 + BENCH_MAX_EXTRA], envbuf[300];
	char modebuf[40], text[8192], prebuf[300];
	char *targv[44 + BENCH_MAX_EXTRA], **run_argv = argv;
	char **env = bench_child_env(job->c, trace ? NULL : preload, envbuf,
				     sizeof(envbuf), modebuf, sizeof(modebuf));
	size_t used = 0;
	int fds[2], status;
	pid_t pid;
	ssize_t n;

	memset(rec, 0, sizeof(*rec));
	bench_child_args(run, job, args, argv);
	if (trace) {
		argv[0] = (char *)exec;
		run_argv = bench_traced_argv(run, argv, preload, trace, prebuf,
					     sizeof(prebuf), targv);
		exec = run->strace;
	}
	if (pipe2(fds, O_CLOEXEC))
		bench_die("pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		bench_die("fork: %s", strerror(errno));
	if (pid == 0) {
		/* dup2 clears close-on-exec; if fds[1] is already 3, do it */
		if (fds[1] == BENCH_RESULT_FD)
			fcntl(fds[1], F_SETFD, 0);
		else if (dup2(fds[1], BENCH_RESULT_FD) < 0)
			_exit(127);
		execve(exec, run_argv, env);
		_exit(127);
	}
	free(env);
	close(fds[1]);
	while (used < sizeof(text) - 1 &&
	       (n = read(fds[0], text + used, sizeof(text) - 1 - used)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		used += (size_t)n;
	}
	text[used] = '\0';
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	bench_record_parse(text, rec);

	if (WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
	    !strcmp(rec->status, "ok"))
		return 0;
	if (WIFSIGNALED(status))
		bench_warn("%s/%s (%u threads): child killed by signal %d",
			   job->c->name, job->wl->name, job->threads,
			   WTERMSIG(status));
	else
		bench_warn("%s/%s (%u threads): child exit status %d, "
			   "status '%s'", job->c->name, job->wl->name,
			   job->threads, WEXITSTATUS(status),
			   rec->status[0] ? rec->status : "none");
	return -1;
}
