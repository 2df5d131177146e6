// SPDX-License-Identifier: MIT
/*
 * selftests/lib/child.c - child processes of a selftest: forked death
 * tests, and this program started again under another environment, an
 * address-space limit or a wrapper (valgrind), its stderr captured or
 * shared.  The one place the selftests fork and exec themselves.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "segpool_config.h"
#include "selftests/lib/harness.h"

#ifdef CONFIG_SEGPOOL_VALGRIND
#include <valgrind/valgrind.h>
#endif

#define SP_EXEC_WORDS	32	/* wrapper words at most */

extern char **environ;

/*
 * Read the child's stderr from @fd into @buf (cut to @size - 1 bytes, NUL
 * ended) until it closes, then close @fd and reap @pid into *@status.
 */
static void sp_child_collect(pid_t pid, int fd, char *buf, size_t size,
			     int *status)
{
	size_t len = 0;
	ssize_t r;

	if (buf) {
		while (len < size - 1 &&
		       (r = read(fd, buf + len, size - 1 - len)) > 0)
			len += (size_t)r;
		buf[len] = '\0';
		close(fd);
	}
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
}

/* --- every forked child -------------------------------------------------- */

void sp_test_child_no_leak_search(void)
{
#ifdef CONFIG_SEGPOOL_VALGRIND
	if (RUNNING_ON_VALGRIND)
		VALGRIND_CLO_CHANGE("--leak-check=no");
#endif
}

/* --- death tests ---------------------------------------------------------- */

int sp_test_run_child(void (*fn)(void *), void *arg, char *buf, size_t size,
		      int *status)
{
	int fds[2];
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		struct sigaction sa = { .sa_handler = SIG_DFL };

		sigaction(SIGABRT, &sa, NULL);
		sigaction(SIGALRM, &sa, NULL);
		alarm(SP_TEST_CHILD_TIMEOUT);	/* a hang dies of SIGALRM */
		dup2(fds[1], STDERR_FILENO);
		close(fds[0]);
		close(fds[1]);
		fn(arg);
		_exit(0);	/* did not die: the parent reports it */
	}
	close(fds[1]);
	sp_child_collect(pid, fds[0], buf, size, status);
	return 0;
}

bool sp_test_expect_death(void (*fn)(void *), void *arg, const char *needle)
{
	char buf[4096];
	int status;

	if (sp_test_run_child(fn, arg, buf, sizeof(buf), &status))
		return false;
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT) {
		printf("# child did not abort (status %#x); stderr: %s\n",
		       status, buf);
		return false;
	}
	if (!strstr(buf, needle)) {
		printf("# child aborted but stderr lacks \"%s\": %s\n",
		       needle, buf);
		return false;
	}
	return true;
}

/* --- the environment of a child ------------------------------------------- */

/* Does environment entry @entry ("A=b") name the variable of @change
 * ("A=c" or "A")? */
static bool sp_env_same_name(const char *entry, const char *change)
{
	size_t len = strcspn(change, "=");

	return strncmp(entry, change, len) == 0 && entry[len] == '=';
}

static void sp_env_free(char **env, size_t kept)
{
	for (size_t i = kept; env[i]; i++)
		free(env[i]);
	free(env);
}

/*
 * environ without the variables named @drop_prefix... (when set) and with
 * @changes applied: a calloc'd array holding first *@kept of environ's
 * strings, then copies of the settings of @changes (freed by
 * sp_env_free()).  NULL when out of memory.
 */
static char **sp_env_apply(const char *drop_prefix,
			   const char *const *changes, size_t *kept)
{
	size_t n = 0, nc = 0, k = 0, i, j;
	char **out;

	while (environ[n])
		n++;
	while (changes && changes[nc])
		nc++;
	out = calloc(n + nc + 1, sizeof(*out));
	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		bool replaced = drop_prefix &&
			!strncmp(environ[i], drop_prefix, strlen(drop_prefix));

		for (j = 0; j < nc && !replaced; j++)
			replaced = sp_env_same_name(environ[i], changes[j]);
		if (!replaced)
			out[k++] = environ[i];
	}
	*kept = k;
	for (j = 0; j < nc; j++) {
		if (!strchr(changes[j], '='))
			continue;
		out[k] = strdup(changes[j]);
		if (!out[k++]) {
			sp_env_free(out, *kept);
			return NULL;
		}
	}
	return out;
}

/*
 * The valgrind command line a child of a valgrind run starts with, split
 * into @words (pointing into @buf).  Returns the number of words; 0 when
 * valgrind follows children by itself.
 */
static size_t sp_valgrind_words(char *buf, size_t size, const char **words,
				size_t max)
{
	const char *wrapper = getenv("SEGPOOL_TEST_WRAPPER");
	char *tok, *save = NULL;
	size_t n = 0;

	if (!wrapper || !strstr(wrapper, "valgrind"))
		wrapper = "valgrind -q --error-exitcode=99";
	snprintf(buf, size, "%s", wrapper);
	for (tok = strtok_r(buf, " \t\n", &save); tok && n < max;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		if (!strcmp(tok, "--trace-children=yes"))
			return 0;
		words[n++] = tok;
	}
	return n;
}

/* --- this program again --------------------------------------------------- */

int sp_test_exec_self(const struct sp_test_exec *x, char *buf, size_t size,
		      int *status)
{
	char exe[4096], wrap[1024];
	const char *args[SP_EXEC_WORDS + 3];
	size_t nargs = 0, kept;
	int fds[2] = { -1, -1 };
	char **envp;
	ssize_t len;
	pid_t pid;

	/* the program's file (valgrind shows its client's here, not itself) */
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0)
		return -1;
	exe[len] = '\0';
	for (const char *const *w = x->wrapper; w && *w; w++)
		if (nargs < SP_EXEC_WORDS)
			args[nargs++] = *w;
	if (!x->wrapper && x->follow_valgrind && sp_test_under_valgrind())
		nargs = sp_valgrind_words(wrap, sizeof(wrap), args,
					  SP_EXEC_WORDS);
	args[nargs++] = exe;
	if (x->arg)
		args[nargs++] = x->arg;
	args[nargs] = NULL;
	envp = sp_env_apply(x->drop_prefix, x->env, &kept);
	if (!envp)
		return -1;
	if (buf && pipe(fds)) {
		sp_env_free(envp, kept);
		return -1;
	}

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		if (buf) {
			close(fds[0]);
			close(fds[1]);
		}
		sp_env_free(envp, kept);
		return -1;
	}
	if (pid == 0) {
		if (buf) {
			dup2(fds[1], STDERR_FILENO);
			close(fds[0]);
			close(fds[1]);
		}
		if (x->as_limit) {
			struct rlimit rl;

			getrlimit(RLIMIT_AS, &rl);
			rl.rlim_cur = x->as_limit;
			setrlimit(RLIMIT_AS, &rl);
		}
		if (x->timeout)
			alarm(x->timeout);	/* survives the exec */
		/*
		 * Without a wrapper, run /proc/self/exe: the very file this
		 * process runs, even if a rebuild has replaced it meanwhile
		 * (not under valgrind, where that is valgrind's own tool).
		 */
		execvpe(args[0] == exe && !sp_test_under_valgrind() ?
			"/proc/self/exe" : args[0],
			(char *const *)(uintptr_t)args, envp);
		fprintf(stderr, "# cannot run %s: %s\n", args[0],
			strerror(errno));
		_exit(127);
	}
	sp_env_free(envp, kept);
	if (buf)
		close(fds[1]);
	sp_child_collect(pid, fds[0], buf, size, status);
	return 0;
}

int sp_test_rerun(const char *const *env, const char *arg)
{
	const struct sp_test_exec x = {
		.arg = arg, .env = env, .follow_valgrind = true,
	};
	int status;

	if (sp_test_exec_self(&x, NULL, 0, &status))
		return -1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}
