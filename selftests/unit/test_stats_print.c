// SPDX-License-Identifier: MIT
/*
 * selftests/unit/test_stats_print.c - segpool_stats_print() and the print at
 * exit (SEGPOOL_STATS_PRINT, SEGPOOL_STATS_PRINT_FILE).
 *
 * Each section must be byte for byte what its FILE call prints (captured
 * with open_memstream() right before, with nothing allocating between),
 * the sections in their order with one empty line between two; the
 * callback gets NUL-terminated pieces of whole lines and its argument, may
 * allocate from segpool and print again (no lock is held); bad options are
 * refused with EINVAL.  The settings are checked by their parser, by a
 * forked child that configures them and exits (its standard error read
 * back), and by this program run again with them in its environment,
 * which must leave the sections in the file it names.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <segpool/segpool.h>

#include "segpool_config.h"
#include "stats/print.h"
#include "selftests/lib/harness.h"
#include "selftests/lib/json.h"

#define CHILD_ENV	"SEGPOOL_TEST_STATS_PRINT_CHILD"
#define CHILD_CACHE	"stp-atexit"
#define CHILD_OBJS	7

/* What the callback was given. */
struct sink {
	char *text;
	size_t len;
	unsigned int calls;
	bool bad_piece;		/* a piece that did not end a line */
	void *arg_seen;
};

static void sink_cb(void *arg, const char *text)
{
	struct sink *s = arg;
	size_t n = strlen(text);

	s->arg_seen = arg;
	s->calls++;
	if (!n || text[n - 1] != '\n')
		s->bad_piece = true;
	s->text = realloc(s->text, s->len + n + 1);
	assert_non_null(s->text);
	memcpy(s->text + s->len, text, n + 1);
	s->len += n;
}

static char *print_to_string(unsigned int opts)
{
	struct sink s = { 0 };

	assert_int_equal(segpool_stats_print(sink_cb, &s, opts), 0);
	assert_true(s.calls >= 1);
	assert_ptr_equal(s.arg_seen, &s);
	assert_false(s.bad_piece);
	return s.text;
}

enum what { W_DUMP, W_HEALTH, W_DETAIL, W_JSON };

/* The FILE call's output. */
static char *file_call(enum what w, unsigned int flags)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int ret = -1;

	assert_non_null(f);
	switch (w) {
	case W_DUMP:
		ret = segpool_stats_dump(f);
		break;
	case W_HEALTH:
		ret = segpool_stats_health(f);
		break;
	case W_DETAIL:
		ret = segpool_stats_dump_detail(f, NULL, flags);
		break;
	case W_JSON:
		ret = segpool_stats_json(f, flags);
		break;
	}
	assert_int_equal(ret, 0);
	fclose(f);
	return buf;
}

static struct segpool_cache *make_cache(const char *name, void **objs, int n)
{
	struct segpool_cache *c = segpool_cache_create(name, 88, 0, 0, NULL);

	assert_non_null(c);
	for (int i = 0; i < n; i++)
		assert_non_null(objs[i] = segpool_cache_alloc(c, 0));
	return c;
}

static void drop_cache(struct segpool_cache *c, void **objs, int n)
{
	for (int i = 0; i < n; i++)
		segpool_cache_free(c, objs[i]);
	assert_int_equal(segpool_cache_destroy(c), 0);
}

/*
 * The comparisons below take two dumps in turn and want them equal: no
 * decay pass (a counter, an idle cache shrunk) may come in between.
 */
static void decay_off(void)
{
	assert_int_equal(segpool_set_decay_ms(SEGPOOL_DECAY_NEVER), 0);
}

static void test_sections(void **state)
{
	void *objs[5];
	struct segpool_cache *c;
	char *want, *got, *health, *detail, *all;
	size_t hl;

	(void)state;
	decay_off();
	c = make_cache("stp-sections", objs, 5);

	want = file_call(W_DUMP, 0);
	got = print_to_string(SEGPOOL_STATS_SLABINFO);
	assert_string_equal(got, want);
	assert_non_null(strstr(got, "\nstp-sections "));
	free(want);
	free(got);

	health = file_call(W_HEALTH, 0);
	got = print_to_string(SEGPOOL_STATS_HEALTH);
	assert_string_equal(got, health);
	free(got);

	/* the detail section is dump_detail(NULL) without its health block */
	detail = file_call(W_DETAIL, 0);
	hl = strlen(health);
	assert_true(!strncmp(detail, health, hl));
	got = print_to_string(SEGPOOL_STATS_DETAIL);
	assert_string_equal(got, detail + hl);
	assert_non_null(strstr(got, "cache stp-sections\n"));
	free(got);

	/* 0: the three text sections in order, an empty line after slabinfo */
	want = file_call(W_DUMP, 0);
	all = malloc(strlen(want) + 1 + strlen(detail) + 1);
	assert_non_null(all);
	sprintf(all, "%s\n%s", want, detail);
	got = print_to_string(0);
	assert_string_equal(got, all);
	free(got);
	got = print_to_string(SEGPOOL_STATS_SLABINFO | SEGPOOL_STATS_HEALTH |
			      SEGPOOL_STATS_DETAIL);
	assert_string_equal(got, all);
	free(got);
	free(all);
	free(want);
	free(detail);
	free(health);

	/* per-CPU splits go to the detail as to dump_detail */
	detail = file_call(W_DETAIL, SEGPOOL_STATS_PERCPU);
	health = file_call(W_HEALTH, 0);
	got = print_to_string(SEGPOOL_STATS_DETAIL | SEGPOOL_STATS_PERCPU);
	assert_string_equal(got, detail + strlen(health));
	free(got);
	free(detail);
	free(health);

	want = file_call(W_JSON, SEGPOOL_STATS_PERCPU);
	got = print_to_string(SEGPOOL_STATS_JSON | SEGPOOL_STATS_PERCPU);
	assert_string_equal(got, want);
	free(got);
	free(want);

	drop_cache(c, objs, 5);
}

static void test_bad_options(void **state)
{
	struct sink s = { 0 };

	(void)state;
	errno = 0;
	assert_int_equal(segpool_stats_print(sink_cb, &s, 1U << 30), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(segpool_stats_print(sink_cb, &s, SEGPOOL_STATS_JSON |
					     SEGPOOL_STATS_HEALTH), -EINVAL);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(s.calls, 0);
}

/* Long output comes in several pieces, each whole lines, none lost. */
static void test_pieces(void **state)
{
	struct segpool_cache *c[40];
	struct sink s = { 0 };
	char *want, name[32];

	(void)state;
	decay_off();
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "stp-piece-%02d", i);
		c[i] = segpool_cache_create(name, 32 + (size_t)i, 0, 0, NULL);
		assert_non_null(c[i]);
	}
	want = file_call(W_JSON, SEGPOOL_STATS_PERCPU);
	assert_int_equal(segpool_stats_print(sink_cb, &s, SEGPOOL_STATS_JSON |
					     SEGPOOL_STATS_PERCPU), 0);
	assert_false(s.bad_piece);
	assert_string_equal(s.text, want);
	if (strlen(want) > (64U << 10) + 4096)
		assert_true(s.calls >= 2);
	free(want);
	free(s.text);
	for (int i = 0; i < 40; i++)
		assert_int_equal(segpool_cache_destroy(c[i]), 0);
}

/* The callback allocates from segpool and prints again: no lock is held. */
struct reentry {
	struct segpool_cache *c;
	unsigned int depth, calls;
};

static void reentrant_cb(void *arg, const char *text)
{
	struct reentry *r = arg;
	void *p;

	(void)text;
	r->calls++;
	p = segpool_cache_alloc(r->c, 0);
	assert_non_null(p);
	segpool_cache_free(r->c, p);
	p = segpool_malloc(100);
	assert_non_null(p);
	segpool_free(p);
	if (r->depth++ == 0)
		assert_int_equal(segpool_stats_print(reentrant_cb, r,
						     SEGPOOL_STATS_HEALTH), 0);
}

static void test_reentrant_callback(void **state)
{
	struct reentry r = { 0 };

	(void)state;
	r.c = segpool_cache_create("stp-reenter", 48, 0, 0, NULL);
	assert_non_null(r.c);
	assert_int_equal(segpool_stats_print(reentrant_cb, &r,
					     SEGPOOL_STATS_SLABINFO), 0);
	assert_true(r.calls >= 2);
	assert_int_equal(segpool_cache_destroy(r.c), 0);
}

static void test_setting_parse(void **state)
{
	static const struct {
		const char *s;
		int ret;
		unsigned int opts;
	} cases[] = {
		{ "slabinfo", 0, SEGPOOL_STATS_SLABINFO },
		{ "health,slabinfo", 0,
		  SEGPOOL_STATS_SLABINFO | SEGPOOL_STATS_HEALTH },
		{ "DETAIL,percpu", 0,
		  SEGPOOL_STATS_DETAIL | SEGPOOL_STATS_PERCPU },
		{ "json", 0, SEGPOOL_STATS_JSON },
		{ "json,percpu", 0, SEGPOOL_STATS_JSON | SEGPOOL_STATS_PERCPU },
		{ "all", 0,
		  SEGPOOL_STATS_SLABINFO | SEGPOOL_STATS_HEALTH |
			  SEGPOOL_STATS_DETAIL },
		{ "1", 0,
		  SEGPOOL_STATS_SLABINFO | SEGPOOL_STATS_HEALTH |
			  SEGPOOL_STATS_DETAIL },
		{ "0", 0, 0 },
		{ "off", 0, 0 },
		{ "", 0, 0 },
		{ "json,health", -EINVAL, 0 },
		{ "percpu", -EINVAL, 0 },
		{ "slabinfo,", -EINVAL, 0 },
		{ ",slabinfo", -EINVAL, 0 },
		{ "slabinfo,,health", -EINVAL, 0 },
		{ "slab", -EINVAL, 0 },
		{ "healthy", -EINVAL, 0 },
		{ "2", -EINVAL, 0 },
		{ "all,unused", 0,
		  SEGPOOL_STATS_SLABINFO | SEGPOOL_STATS_HEALTH |
			  SEGPOOL_STATS_DETAIL | SP_STATS_PRINT_UNUSED },
		{ "unused", -EINVAL, 0 },
		{ "json,unused", -EINVAL, 0 },
	};
	char out[64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned int opts = 0xdead;
		int ret = sp_stats_print_parse(cases[i].s, &opts);

		if (ret != cases[i].ret)
			fail_msg("'%s': %d, not %d", cases[i].s, ret,
				 cases[i].ret);
		if (!ret && opts != cases[i].opts)
			fail_msg("'%s': options %#x, not %#x", cases[i].s, opts,
				 cases[i].opts);
	}
	assert_int_equal(sp_stats_path_expand("/tmp/s.%p.txt", 42, out,
					      sizeof(out)), 0);
	assert_string_equal(out, "/tmp/s.42.txt");
	assert_int_equal(sp_stats_path_expand("a%%b", 1, out, sizeof(out)), 0);
	assert_string_equal(out, "a%b");
	assert_int_equal(sp_stats_path_expand("a%d", 1, out, sizeof(out)),
			 -EINVAL);
	assert_int_equal(sp_stats_path_expand("", 1, out, sizeof(out)),
			 -EINVAL);
	assert_int_equal(sp_stats_path_expand("%p%p%p", 1234567, out, 8),
			 -ENAMETOOLONG);
}

/* In a forked child: configure, hold objects, exit(); stderr read back. */
static void child_configure_and_exit(void *arg)
{
	const char *sections = arg;
	void *objs[CHILD_OBJS];

	if (sp_stats_print_configure(sections, NULL))
		exit(3);
	make_cache(CHILD_CACHE, objs, CHILD_OBJS);
	exit(0);
}

static void drop_sanitizer_lines(char *buf);

/* A child that prints slabinfo at exit into the file @arg names. */
static void child_print_to_file(void *arg)
{
	if (sp_stats_print_configure("slabinfo", arg))
		exit(3);
	exit(0);
}

static char *slurp(const char *path)
{
	static char text[1 << 16];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	return text;
}

static void print_file_once(const char *path, char *buf, size_t size)
{
	int status;

	assert_int_equal(sp_test_run_child(child_print_to_file, (void *)path,
					   buf, size, &status), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	drop_sanitizer_lines(buf);	/* LeakSanitizer's, not segpool's */
}

/*
 * SEGPOOL_STATS_PRINT_FILE in a shared directory (issue 23, item 6): a
 * planted symbolic link is not followed (its target keeps its bytes), a
 * FIFO does not block, another user's file is not written; the statistics
 * go to standard error instead, said why.  A file of the caller's own is
 * replaced whole, and a new one is made with mode 0600.
 */
static void test_print_file_safe(void **state)
{
	static char buf[1 << 17];
	char dir[] = "/tmp/segpool-stats-safe.XXXXXX";
	char victim[256], path[256];
	const char *text;
	struct stat st;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(path, sizeof(path), "%s/stats", dir);
	f = fopen(victim, "w");
	assert_non_null(f);
	fputs("precious\n", f);
	fclose(f);

	/* a symbolic link to the victim */
	assert_int_equal(symlink(victim, path), 0);
	print_file_once(path, buf, sizeof(buf));
	assert_string_equal(slurp(victim), "precious\n");
	assert_non_null(strstr(buf, "a symbolic link"));
	assert_non_null(strstr(buf, "slabinfo - version"));	/* on stderr */
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	unlink(path);

	/* a FIFO: refused at once, not opened (which would block) */
	assert_int_equal(mkfifo(path, 0600), 0);
	print_file_once(path, buf, sizeof(buf));
	assert_non_null(strstr(buf, "not a regular file"));
	unlink(path);

	/* another user's file (as root: one made over to nobody) */
	if (geteuid() == 0) {
		f = fopen(path, "w");
		assert_non_null(f);
		fputs("theirs\n", f);
		fclose(f);
		assert_int_equal(chown(path, 65534, 65534), 0);
		print_file_once(path, buf, sizeof(buf));
		assert_non_null(strstr(buf, "another user's file"));
		assert_string_equal(slurp(path), "theirs\n");
		unlink(path);
	} else {
		print_message("# not root: another user's file not tried\n");
	}

	/* new: made, 0600, the statistics in it, nothing on stderr */
	print_file_once(path, buf, sizeof(buf));
	assert_string_equal(buf, "");
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	text = slurp(path);
	assert_non_null(text);
	/* the totals first, then the slabinfo section asked for */
	assert_true(!strncmp(text, "totals\n", 7));
	assert_non_null(strstr(text, "\nslabinfo - version: 2.1\n"));
	/* the caller's own file: replaced */
	print_file_once(path, buf, sizeof(buf));
	assert_string_equal(buf, "");
	assert_non_null(strstr(slurp(path), "\nslabinfo - version: 2.1\n"));
	unlink(path);
	unlink(victim);
	assert_int_equal(rmdir(dir), 0);	/* no temporary file left */
}

/*
 * A setuid program (issue 23, item 5): its environment is its caller's, so
 * no SEGPOOL_* variable counts.  This program is copied, made setuid to
 * nobody and run by root (so AT_SECURE is set) with a statistics file in a
 * directory nobody may write, fault injection on every allocation and
 * SEGPOOL_STATS_PRINT: no file, no fault, no print, one line saying so.
 */
#define SECURE_ENV	"SEGPOOL_TEST_SECURE_CHILD"

static void test_secure_env_child(void **state)
{
	void *p;

	(void)state;
	if (!getenv(SECURE_ENV)) {
		print_message("# runs in the child of test_secure_env\n");
		return;
	}
	p = segpool_malloc(64);		/* SEGPOOL_FAILSLAB would fail it */
	assert_non_null(p);
	segpool_free(p);
}

static void test_secure_env(void **state)
{
	static char buf[1 << 16];
	char dir[] = "/tmp/segpool-secure.XXXXXX";
	char prog[256], file[256], env_file[300], cmd[600];
	const char *line, *first;
	struct stat st;
	int status, pfd[2];
	ssize_t n, len = 0;
	pid_t pid;

	(void)state;
	if (getenv(SECURE_ENV))
		return;		/* we are that child */
#if defined(CONFIG_SEGPOOL_ASAN) || defined(CONFIG_SEGPOOL_TSAN)
	skip();		/* the sanitizers' runtimes refuse a setuid process */
#endif
	if (geteuid() != 0 || sp_test_under_valgrind()) {
		print_message("# skip: needs root to make a setuid copy, and "
			      "no valgrind\n");
		skip();
	}
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0777), 0);	/* nobody may write there */
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	snprintf(file, sizeof(file), "%s/stats", dir);
	snprintf(env_file, sizeof(env_file), "SEGPOOL_STATS_PRINT_FILE=%s",
		 file);
	snprintf(cmd, sizeof(cmd), "cp /proc/%d/exe %s", (int)getpid(), prog);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(chown(prog, 65534, 65534), 0);
	assert_int_equal(chmod(prog, 04755), 0);

	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *argv[] = { prog, "test_secure_env_child", NULL };
		char *envp[] = {
			"SEGPOOL_STATS_PRINT=slabinfo", env_file,
			"SEGPOOL_FAILSLAB=probability=100,times=-1",
			SECURE_ENV "=1", NULL,
		};

		dup2(pfd[1], STDERR_FILENO);
		close(pfd[0]);
		alarm(60);
		execve(prog, argv, envp);
		_exit(127);
	}
	close(pfd[1]);
	while ((n = read(pfd[0], buf + len, sizeof(buf) - 1 - (size_t)len)) > 0)
		len += n;
	buf[len] = '\0';
	close(pfd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	unlink(prog);
	if (lstat(file, &st) == 0) {
		unlink(file);
		rmdir(dir);
		fail_msg("the setuid child wrote %s; its stderr: %s", file,
			 buf);
	}
	rmdir(dir);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("child status %#x; stderr: %s", status, buf);
	first = strstr(buf, "AT_SECURE");
	if (!first)
		fail_msg("nothing said about AT_SECURE; stderr: %s", buf);
	line = strstr(first + 1, "AT_SECURE");
	assert_null(line);			/* said once */
	assert_null(strstr(buf, "slabinfo - version"));
}

/*
 * LeakSanitizer's own lines ("==pid==...") out of @buf: in a child of a
 * process with another thread (the decay thread) it warns that the
 * parent's threads could not be suspended, which is not segpool's output.
 */
static void drop_sanitizer_lines(char *buf)
{
	char *in = buf, *out = buf;

	while (*in) {
		char *nl = strchr(in, '\n');
		size_t len = nl ? (size_t)(nl - in) + 1 : strlen(in);

		if (strncmp(in, "==", 2)) {
			memmove(out, in, len);
			out += len;
		}
		in += len;
	}
	*out = '\0';
}

static void test_print_at_exit_stderr(void **state)
{
	static char buf[1 << 17];
	unsigned long long active;
	const char *row;
	int status;

	(void)state;
	assert_int_equal(sp_test_run_child(child_configure_and_exit,
					   "slabinfo,health", buf, sizeof(buf),
					   &status), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(!strncmp(buf, "totals\n", 7));
	assert_non_null(strstr(buf, "\n\nslabinfo - version: 2.1\n"));
	row = strstr(buf, "\n" CHILD_CACHE " ");
	assert_non_null(row);
	assert_int_equal(sscanf(row + 1, CHILD_CACHE " %llu", &active), 1);
	assert_int_equal(active, CHILD_OBJS);
	assert_non_null(strstr(buf, "\n\nhealth\n"));
	assert_null(strstr(buf, "cache " CHILD_CACHE "\n"));	/* no detail */

	/* a value not understood: reported, and nothing at exit */
	assert_int_equal(sp_test_run_child(child_configure_and_exit,
					   "slabinfo,bogus", buf, sizeof(buf),
					   &status), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 3);
	assert_non_null(strstr(buf, "SEGPOOL_STATS_PRINT=slabinfo,bogus not "
			       "understood"));
	assert_null(strstr(buf, "slabinfo - version"));

	/* "0": configured off, nothing printed, no complaint */
	assert_int_equal(sp_test_run_child(child_configure_and_exit, "0", buf,
					   sizeof(buf), &status), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	drop_sanitizer_lines(buf);
	assert_string_equal(buf, "");
}

/* In a forked child: configure, hold objects, make a cache it never uses. */
static void child_fold_and_exit(void *arg)
{
	const char *sections = arg;
	void *objs[CHILD_OBJS];

	if (sp_stats_print_configure(sections, NULL))
		exit(3);
	make_cache(CHILD_CACHE, objs, CHILD_OBJS);
	if (!segpool_cache_create("stp-never-used", 40, 0, 0, NULL))
		exit(4);
	exit(0);
}

/*
 * The print at exit: totals first; caches that never held an object on one
 * line unless "unused"; the program's caches before the library's.
 */
static void test_print_at_exit_shape(void **state)
{
	static char buf[1 << 18];
	unsigned long long in_use, mapped, resident, peak;
	const char *row, *folded, *kmalloc;
	int status;

	(void)state;
	assert_int_equal(sp_test_run_child(child_fold_and_exit,
					   "slabinfo,detail", buf, sizeof(buf),
					   &status),
			 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (sscanf(buf,
		   "totals\nin_use_bytes %llu\nslab_bytes %*u\nlarge_bytes "
		   "%*u\nyoung_bytes %*u\nmapped_bytes %llu\n"
		   "resident_bytes %llu\n"
		   "peak_resident_bytes %llu\n\nslabinfo - version: 2.1\n",
		   &in_use, &mapped, &resident, &peak) != 4)
		fail_msg("the print does not start with the totals: %.400s",
			 buf);
	assert_true(in_use >= CHILD_OBJS * 88);
	assert_true(mapped >= 4u << 20);
	assert_true(peak >= resident && resident > 0);
	/* folded: named on one line, no row and no detail block */
	folded = strstr(buf, "caches never held an object (");
	assert_non_null(folded);
	assert_non_null(strstr(folded, "stp-never-used"));
	assert_null(strstr(buf, "\nstp-never-used "));
	assert_null(strstr(buf, "cache stp-never-used\n"));
	/* the program's cache comes first, in both sections */
	row = strstr(buf, "\n" CHILD_CACHE " ");
	kmalloc = strstr(buf, "\nkmalloc-");
	assert_non_null(row);
	assert_true(!kmalloc || row < kmalloc);
	row = strstr(buf, "cache " CHILD_CACHE "\n");
	assert_non_null(row);
	printf("# %zu bytes printed at exit\n", strlen(buf));

	/* "unused": every cache, as before */
	assert_int_equal(sp_test_run_child(child_fold_and_exit,
					   "slabinfo,detail,unused", buf,
					   sizeof(buf), &status), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_null(strstr(buf, "never held an object"));
	assert_non_null(strstr(buf, "\nstp-never-used "));
	assert_non_null(strstr(buf, "cache stp-never-used\n"));
}

/* A program that closes standard error before it exits still gets it. */
static void child_close_stderr(void *arg)
{
	void *objs[CHILD_OBJS];

	(void)arg;
	if (sp_stats_print_configure("slabinfo", NULL))
		exit(3);
	make_cache(CHILD_CACHE, objs, CHILD_OBJS);
	close(STDERR_FILENO);
	exit(0);
}

static void test_print_at_exit_closed_stderr(void **state)
{
	static char buf[1 << 17];
	int status;

	(void)state;
	assert_int_equal(sp_test_run_child(child_close_stderr, NULL, buf,
					   sizeof(buf), &status), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_non_null(strstr(buf, "\n" CHILD_CACHE " "));
}

/* Every rendering lists the program's caches before the library's. */
static void test_user_caches_first(void **state)
{
	void *objs[CHILD_OBJS];
	struct segpool_cache *c;
	void *k = segpool_malloc(24);
	char *text;

	(void)state;
	assert_non_null(k);
	/* its first blocks may be young (young/): the class made by name */
	assert_non_null(segpool_cache_find("kmalloc-32"));
	c = make_cache("stp-mine", objs, CHILD_OBJS);
	text = file_call(W_DUMP, 0);
	assert_non_null(strstr(text, "\nstp-mine "));
	assert_true(strstr(text, "\nstp-mine ") <
		    strstr(text, "\nkmalloc-32 "));
	free(text);
	text = file_call(W_DETAIL, 0);
	assert_true(strstr(text, "cache stp-mine\n") <
		    strstr(text, "cache kmalloc-32\n"));
	free(text);
	text = file_call(W_JSON, 0);
	assert_true(strstr(text, "\"stp-mine\"") <
		    strstr(text, "\"kmalloc-32\""));
	free(text);
	drop_cache(c, objs, CHILD_OBJS);
	segpool_free(k);
}

/* Run again with the settings in the environment (see test_print_at_exit). */
static void test_print_at_exit_child(void **state)
{
	/* static: still reachable at exit, not a leak to memcheck */
	static void *objs[CHILD_OBJS];

	(void)state;
	if (!getenv(CHILD_ENV)) {
		print_message("# runs in the child of test_print_at_exit\n");
		return;
	}
	/* held at exit on purpose: the print must show them */
	make_cache(CHILD_CACHE, objs, CHILD_OBJS);
}

static void test_print_at_exit(void **state)
{
	char dir[] = "/tmp/segpool-stats-print.XXXXXX";
	char env_file[128], path[512], *text = NULL;
	const char *env[] = {
		"SEGPOOL_STATS_PRINT=json", env_file, CHILD_ENV "=1", NULL,
	};
	struct dirent *de;
	struct jdoc d;
	size_t len = 0;
	int found = 0, status, caches, me;
	DIR *dp;
	FILE *f;

	(void)state;
	if (getenv(CHILD_ENV))
		return;		/* we are that child */
	assert_non_null(mkdtemp(dir));
	snprintf(env_file, sizeof(env_file),
		 "SEGPOOL_STATS_PRINT_FILE=%s/stats.%%p.json", dir);
	status = sp_test_rerun(env, "test_print_at_exit_child");
	assert_int_equal(status, 0);

	dp = opendir(dir);
	assert_non_null(dp);
	while ((de = readdir(dp))) {
		int pid;
		char tail[16];

		if (de->d_name[0] == '.')
			continue;
		/* the name carries the child's pid */
		assert_int_equal(
			sscanf(de->d_name, "stats.%d.%15s", &pid, tail), 2);
		assert_string_equal(tail, "json");
		assert_true(pid > 0 && pid != getpid());
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		found++;
	}
	closedir(dp);
	assert_int_equal(found, 1);
	f = fopen(path, "r");
	assert_non_null(f);
	{
		char chunk[4096];
		size_t n;

		while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
			text = realloc(text, len + n + 1);
			assert_non_null(text);
			memcpy(text + len, chunk, n);
			len += n;
			text[len] = '\0';
		}
	}
	fclose(f);
	unlink(path);
	rmdir(dir);
	assert_non_null(text);
	jparse(&d, text);
	assert_string_equal(jstr(&d, 0, "source"), "library");
	caches = jget(&d, 0, "caches");
	me = jfind(&d, caches, "name", CHILD_CACHE, 0);
	assert_true(me >= 0);
	assert_int_equal(jnum(&d, me, "active_objs"), CHILD_OBJS);
	jfree(&d);
	free(text);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test(test_sections),
	cmocka_unit_test(test_bad_options),
	cmocka_unit_test(test_pieces),
	cmocka_unit_test(test_reentrant_callback),
	cmocka_unit_test(test_setting_parse),
	cmocka_unit_test(test_print_at_exit_stderr),
	cmocka_unit_test(test_print_file_safe),
	cmocka_unit_test(test_secure_env),
	cmocka_unit_test(test_secure_env_child),
	cmocka_unit_test(test_print_at_exit_shape),
	cmocka_unit_test(test_print_at_exit_closed_stderr),
	cmocka_unit_test(test_user_caches_first),
	cmocka_unit_test(test_print_at_exit_child),
	cmocka_unit_test(test_print_at_exit),
};

SP_TEST_MAIN(tests)
