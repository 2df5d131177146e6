// SPDX-License-Identifier: MIT
/*
 * stats/print.c - segpool_stats_print(): the chosen sections through
 * the caller's callback, and the print at exit (SEGPOOL_STATS_PRINT).
 *
 * Every section is formatted into one buffer under the locks its snapshot
 * needs (stats/snap.h), then handed to the callback line group by line
 * group with no lock held, so the callback may allocate from segpool or
 * print statistics again.
 *
 * The at-exit print is set up once, at initialisation, when
 * SEGPOOL_STATS_PRINT names sections:
 *
 *   SEGPOOL_STATS_PRINT=slabinfo,health        sections, comma-separated:
 *                                              slabinfo health detail json
 *                                              percpu; "all" (or 1, yes, on)
 *                                              = slabinfo,health,detail;
 *                                              "unused": list the caches
 *                                              that never held an object
 *                                              (else one line names them);
 *                                              0, no, off or empty: nothing
 *   SEGPOOL_STATS_PRINT_FILE=/tmp/stats.%p     where: a file (created or
 *                                              replaced, never through a
 *                                              link nor another user's: see
 *                                              os/file.c; %p is the pid, %%
 *                                              a %), default standard error
 *
 * A value that is not understood is reported (sp_warn) and nothing is
 * printed at exit: a setting is never half applied.  The handler runs from
 * atexit(), after the program's own handlers registered later, and writes
 * with write(2), not stdio, so a closed or redirected stdout does not
 * matter, on a copy of standard error taken at set-up, so a program that
 * closes fd 2 before it exits still gets its print.  A forked child that
 * calls exit() prints its own figures too.  The text begins with the
 * totals (stats/totals.c).  The malloc replacement's
 * SEGPOOL_MALLOC_CONF=stats_print asks for this same print
 * (sp_stats_print_request()): both set print once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <segpool/segpool.h>

#include "internal/init.h"
#include "internal/env.h"
#include "internal/report.h"
#include "os/os.h"
#include "stats/print.h"
#include "stats/snap.h"

#define SP_STATS_TEXT	(SEGPOOL_STATS_SLABINFO | SEGPOOL_STATS_HEALTH | \
			 SEGPOOL_STATS_DETAIL)

static void sp_stats_write_stderr(void *arg, const char *text)
{
	(void)arg;
	fputs(text, stderr);
}

/* Hand @b to @cb in pieces that end at a line's end (64 KiB or so each). */
static void sp_stats_deliver(struct sp_sbuf *b, segpool_write_cb cb, void *arg)
{
	const size_t piece = 64UL << 10;
	size_t off = 0;

	while (off < b->len) {
		size_t end = off + piece < b->len ? off + piece : b->len;
		char keep;

		while (end < b->len && b->buf[end - 1] != '\n')
			end++;
		keep = b->buf[end];
		b->buf[end] = '\0';
		cb(arg, b->buf + off);
		b->buf[end] = keep;
		off = end;
	}
}

/*
 * The sections of @opts; @at_exit: the print at exit's text, which begins
 * with the totals and folds the caches that never held an object unless
 * SP_STATS_PRINT_UNUSED is given.
 */
static int sp_stats_print_run(segpool_write_cb write_cb, void *arg,
			      unsigned int opts, bool at_exit)
{
	struct sp_sbuf b = SP_SBUF_INIT;
	unsigned int pcpu = opts & SEGPOOL_STATS_PERCPU;
	unsigned int fold = 0;
	int ret = 0;

	if (sp_init())
		return -ENOMEM;
	if (at_exit && !(opts & SP_STATS_PRINT_UNUSED))
		fold = SP_STATS_FOLD;
	opts &= ~SP_STATS_PRINT_UNUSED;
	if (!(opts & (SP_STATS_TEXT | SEGPOOL_STATS_JSON)))
		opts |= SP_STATS_TEXT;
	if (!write_cb)
		write_cb = sp_stats_write_stderr;

	if (opts & SEGPOOL_STATS_JSON)
		ret = sp_stats_fmt_json(&b, pcpu);
	else if (at_exit)
		sp_stats_fmt_totals(&b);	/* ends with an empty line */
	if (!ret && (opts & SEGPOOL_STATS_SLABINFO)) {
		ret = sp_stats_fmt_slabinfo(&b, fold);
		if (opts & (SEGPOOL_STATS_HEALTH | SEGPOOL_STATS_DETAIL))
			sp_sbuf_putc(&b, '\n');
	}
	if (!ret && (opts & SEGPOOL_STATS_HEALTH))
		sp_stats_fmt_health(&b);	/* ends with an empty line */
	if (!ret && (opts & SEGPOOL_STATS_DETAIL))
		ret = sp_stats_fmt_detail(&b, NULL, pcpu | fold);
	if (!ret)
		ret = b.err;
	if (!ret)
		sp_stats_deliver(&b, write_cb, arg);
	sp_sbuf_free(&b);
	if (ret)
		errno = -ret;
	return ret;
}

SEGPOOL_API int segpool_stats_print(segpool_write_cb write_cb, void *arg,
				    unsigned int opts)
{
	if ((opts & ~SEGPOOL_STATS_PRINT_VALID) ||
	    ((opts & SEGPOOL_STATS_JSON) && (opts & SP_STATS_TEXT))) {
		errno = EINVAL;
		return -EINVAL;
	}
	return sp_stats_print_run(write_cb, arg, opts, false);
}

/* --- the print at exit --------------------------------------------------- */

static unsigned int sp_exit_opts;
static char sp_exit_path[256];		/* "" : standard error */
/* a copy of standard error taken when the print is set up: a program may
 * close fd 2 before it exits (coreutils' close_stdout() does) */
static int sp_exit_stderr = -1;
static bool sp_exit_env;		/* SEGPOOL_STATS_PRINT was set */

int sp_stats_print_parse(const char *s, unsigned int *opts)
{
	static const struct {
		const char *word;
		unsigned int opts;
	} words[] = {
		{ "slabinfo", SEGPOOL_STATS_SLABINFO },
		{ "health", SEGPOOL_STATS_HEALTH },
		{ "detail", SEGPOOL_STATS_DETAIL },
		{ "json", SEGPOOL_STATS_JSON },
		{ "percpu", SEGPOOL_STATS_PERCPU },
		{ "all", SP_STATS_TEXT },
		{ "1", SP_STATS_TEXT }, { "yes", SP_STATS_TEXT },
		{ "on", SP_STATS_TEXT }, { "true", SP_STATS_TEXT },
		{ "unused", SP_STATS_PRINT_UNUSED },
	};
	unsigned int o = 0;

	if (!*s || !strcasecmp(s, "0") || !strcasecmp(s, "no") ||
	    !strcasecmp(s, "off") || !strcasecmp(s, "false")) {
		*opts = 0;
		return 0;
	}
	while (*s) {
		size_t n = strcspn(s, ",");
		size_t i;

		for (i = 0; i < SP_ARRAY_SIZE(words); i++)
			if (strlen(words[i].word) == n &&
			    !strncasecmp(s, words[i].word, n))
				break;
		if (i == SP_ARRAY_SIZE(words))
			return -EINVAL;
		o |= words[i].opts;
		s += n;
		if (*s == ',' && !*++s)
			return -EINVAL;		/* a trailing comma */
	}
	if (!(o & (SP_STATS_TEXT | SEGPOOL_STATS_JSON)))
		return -EINVAL;			/* "percpu" or "unused" alone */
	if ((o & SP_STATS_PRINT_UNUSED) && (o & SEGPOOL_STATS_JSON))
		return -EINVAL;			/* JSON lists every cache */
	if ((o & SEGPOOL_STATS_JSON) && (o & SP_STATS_TEXT))
		return -EINVAL;
	*opts = o;
	return 0;
}

int sp_stats_path_expand(const char *pattern, int pid, char *out, size_t len)
{
	size_t o = 0;

	for (const char *p = pattern; *p; p++) {
		char piece[24];
		size_t n;

		if (*p == '%' && p[1] == 'p') {
			snprintf(piece, sizeof(piece), "%d", pid);
			p++;
		} else if (*p == '%' && p[1] == '%') {
			piece[0] = '%';
			piece[1] = '\0';
			p++;
		} else if (*p == '%') {
			return -EINVAL;
		} else {
			piece[0] = *p;
			piece[1] = '\0';
		}
		n = strlen(piece);
		if (o + n >= len)
			return -ENAMETOOLONG;
		memcpy(out + o, piece, n);
		o += n;
	}
	if (!o)
		return -EINVAL;
	out[o] = '\0';
	return 0;
}

static void sp_exit_write_fd(void *arg, const char *text)
{
	int fd = *(int *)arg;

	sp_os_write_all(fd, text, strlen(text));
}

static void sp_stats_print_at_exit(void)
{
	char path[sizeof(sp_exit_path) + 16], tmp[sizeof(path) + 8];
	/* a copy of stderr, so a program that closed its own still gets it */
	int err_fd = sp_exit_stderr >= 0 ? sp_exit_stderr : STDERR_FILENO;
	int fd = err_fd, err;

	if (!sp_exit_opts)
		return;
	if (sp_exit_path[0]) {
		err = sp_stats_path_expand(sp_exit_path, sp_os_pid(), path,
					   sizeof(path));
		/*
		 * never through a link, never into another's file (os/file.c)
		 */
		fd = err ? -1 : sp_os_user_file_begin(path, tmp, sizeof(tmp));
		if (fd < 0) {
			int e = err ? -err : errno;

			sp_warn("SEGPOOL_STATS_PRINT_FILE=%s: cannot write %s: "
				"%s; printing to standard error", sp_exit_path,
				err ? "it" : path,
				e == ELOOP ? "a symbolic link" :
				e == EINVAL ? "not a regular file" :
				e == EPERM ? "another user's file" :
				strerror(e));
			fd = err_fd;
		}
	}
	err = sp_stats_print_run(sp_exit_write_fd, &fd, sp_exit_opts, true);
	if (err)
		sp_warn("SEGPOOL_STATS_PRINT: cannot print the statistics: %s",
			strerror(-err));
	if (fd != err_fd && sp_os_user_file_commit(fd, tmp, path))
		sp_warn("SEGPOOL_STATS_PRINT_FILE=%s: cannot write %s: %s",
			sp_exit_path, path, strerror(errno));
}

int sp_stats_print_configure(const char *sections, const char *file)
{
	static bool registered;
	unsigned int opts;
	char check[sizeof(sp_exit_path) + 16];
	int err;

	if (!sections)
		return 0;
	err = sp_stats_print_parse(sections, &opts);
	if (err) {
		sp_warn("SEGPOOL_STATS_PRINT=%s not understood (a list of "
			"slabinfo, health, detail, percpu, or json alone; "
			"all; 0): nothing is printed at exit", sections);
		return err;
	}
	if (file && *file && strcmp(file, "-")) {
		err = strlen(file) >= sizeof(sp_exit_path) ? -ENAMETOOLONG :
		      sp_stats_path_expand(file, 0, check, sizeof(check));
		if (err) {
			sp_warn("SEGPOOL_STATS_PRINT_FILE=%s: %s (%%p is the "
				"pid, %%%% a %%): nothing is printed at exit",
				file, err == -ENAMETOOLONG ? "too long" :
							     "not a path");
			return err;
		}
		snprintf(sp_exit_path, sizeof(sp_exit_path), "%s", file);
	} else {
		sp_exit_path[0] = '\0';
	}
	sp_exit_opts = opts;
	if (opts && sp_exit_stderr < 0)
		sp_exit_stderr = sp_os_dup_stderr();
	if (opts && !registered) {
		if (atexit(sp_stats_print_at_exit)) {
			sp_warn("SEGPOOL_STATS_PRINT: atexit() failed: "
				"nothing is printed at exit");
			sp_exit_opts = 0;
			return -ENOMEM;
		}
		registered = true;
	}
	return 0;
}

/* The two settings, through the table of every variable (internal/env.h). */
void sp_stats_print_init(void)
{
	const char *sections = sp_env_get(SP_ENV_STATS_PRINT);
	const char *file = sp_env_get(SP_ENV_STATS_PRINT_FILE);
	char check[sizeof(sp_exit_path) + 16];
	unsigned int opts;

	if (file && strcmp(file, "-") &&
	    (strlen(file) >= sizeof(sp_exit_path) ||
	     sp_stats_path_expand(file, 0, check, sizeof(check)))) {
		sp_env_bad(SP_ENV_STATS_PRINT_FILE, file, "not a usable path");
		return;
	}
	if (!sections)
		return;
	sp_exit_env = true;
	if (sp_stats_print_parse(sections, &opts)) {
		sp_env_bad(SP_ENV_STATS_PRINT, sections, "not understood");
		return;
	}
	sp_stats_print_configure(sections, file);
}

/*
 * SEGPOOL_MALLOC_CONF=stats_print:true asks for the same print: one knob,
 * one print.  SEGPOOL_STATS_PRINT, when set, says what it prints.
 */
int sp_stats_print_request(const char *sections)
{
	if (sp_exit_env)
		return 0;
	return sp_stats_print_configure(sections,
					sp_env_get(SP_ENV_STATS_PRINT_FILE));
}
