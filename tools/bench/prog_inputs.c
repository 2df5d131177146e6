// SPDX-License-Identifier: MIT
/*
 * tools/bench/prog_inputs.c - the inputs of the real programs (programs.c),
 * written into a temporary folder before the first run, from fixed seeds:
 *
 *   sort-input  600k lines of signed decimal numbers (sort -n)
 *   unit.c      a C file of about 130 lines (gcc -O2 -c)
 *   bench.py    a JSON round trip of a 200k-key dict, 300 bytearrays of
 *               40-340 KB (counts on its command line)
 *   bench.pl    a hash-heavy perl script (count on its command line)
 *   bench.sql   inserts, two indexes and queries for sqlite3 :memory:
 *   repo.git    a bare git repository of 400 commits over 20 files, made
 *               with git fast-import and packed with git gc (under glibc:
 *               making it is not measured)
 *
 * Line and commit counts are multiplied by the scale (at least 1/100 of
 * them stay).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/bench/bench.h"

static const char bench_py[] =
	"import json, random, sys\n"
	"n, nb = int(sys.argv[1]), int(sys.argv[2])\n"
	"random.seed(20261201)\n"
	"d = {}\n"
	"for i in range(n):\n"
	"    d['key-%d' % i] = {'id': i, 'name': 'n%d' % (i * 7919 % 100003),\n"
	"                      'tags': ['t%d' % (i % 13), 'u%d' % (i % 7)],\n"
	"                      'v': i / 3.0}\n"
	"s = json.dumps(d, sort_keys=True)\n"
	"e = json.loads(s)\n"
	"assert e == d\n"
	"bufs = [bytearray(random.randint(40000, 340000)) for _ in range(nb)]\n"
	"for b in bufs:\n"
	"    b[0] = b[-1] = 1\n"
	"print(len(s), sum(len(b) for b in bufs))\n";

static const char bench_pl[] =
	"use strict; use warnings;\n"
	"my $n = shift; my %h; my %w; my $s = 0;\n"
	"for my $i (0 .. $n - 1) {\n"
	"    $h{\"key$i\"} = [$i, 'v' x ($i % 17), { n => $i, m => $i * 3 }];\n"
	"}\n"
	"for my $k (sort keys %h) { $s += $h{$k}[0] + $h{$k}[2]{m}; }\n"
	"for my $i (0 .. $n - 1) { delete $h{\"key$i\"} if $i % 3 == 0; }\n"
	"for my $i (0 .. 2 * $n) {\n"
	"    my $k = join('', map { chr(97 + ($_ * $i + $i % 7) % 26) } 1 .. 6);\n"
	"    $w{$k}++;\n"
	"}\n"
	"my @top = (sort { $w{$b} <=> $w{$a} || $a cmp $b } keys %w)[0 .. 2];\n"
	"print \"$s \", scalar(keys %h), ' ', scalar(keys %w), \" @top\\n\";\n";

static FILE *bench_open_in(const char *tmp, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	return fopen(path, "w");
}

static unsigned long bench_scaled(unsigned long n, double scale)
{
	double v = (double)n * scale;

	return v < (double)n / 100 ? n / 100 : (unsigned long)v;
}

static int bench_write_text(const char *tmp, const char *name,
			    const char *text)
{
	FILE *f = bench_open_in(tmp, name);

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static int bench_sort_input(const char *tmp, unsigned long lines)
{
	FILE *f = bench_open_in(tmp, "sort-input");
	uint64_t x = 20261201;

	if (!f)
		return -1;
	for (unsigned long i = 0; i < lines; i++) {
		uint64_t r = bench_rand(&x);
		long long v = (long long)(r >> 24) % 100000000LL;

		fprintf(f, "%s%lld.%02u\n", r & 1 ? "-" : "", v >> (r % 20),
			(unsigned int)(r >> 8) % 100);
	}
	return fclose(f);
}

/* A C file of about 130 lines: structs, loops, a switch, calls. */
static int bench_unit_c(const char *tmp)
{
	FILE *f = bench_open_in(tmp, "unit.c");

	if (!f)
		return -1;
	fprintf(f, "#include <stdio.h>\n#include <stdlib.h>\n"
		"#include <string.h>\n\nstruct node {\n\tstruct node *next;\n"
		"\tlong key;\n\tdouble w;\n\tchar name[32];\n};\n\n");
	for (int k = 0; k < 9; k++)
		fprintf(f, "static long f%d(const struct node *n, long a)\n{\n"
			"\tlong s = a;\n\n\tfor (; n; n = n->next) {\n"
			"\t\tswitch (n->key %% %d) {\n"
			"\t\tcase 0: s += n->key * %d; break;\n"
			"\t\tcase 1: s ^= (long)(n->w * %d.5); break;\n"
			"\t\tcase 2: s -= (long)strlen(n->name); break;\n"
			"\t\tdefault: s = s * 31 + %d;\n\t\t}\n\t}\n"
			"\treturn s;\n}\n\n", k, k + 3, k * 7 + 1, k, k * 13);
	fprintf(f, "int main(int argc, char **argv)\n{\n"
		"\tstruct node *head = NULL;\n\tlong s = 0;\n\n"
		"\tfor (int i = 0; i < argc * 100; i++) {\n"
		"\t\tstruct node *n = calloc(1, sizeof(*n));\n\n"
		"\t\tif (!n)\n\t\t\treturn 1;\n\t\tn->key = i;\n"
		"\t\tn->w = i / 3.0;\n"
		"\t\tsnprintf(n->name, sizeof(n->name), \"%%s-%%d\", argv[0], i);\n"
		"\t\tn->next = head;\n\t\thead = n;\n\t}\n");
	for (int k = 0; k < 9; k++)
		fprintf(f, "\ts += f%d(head, s);\n", k);
	fprintf(f, "\tprintf(\"%%ld\\n\", s);\n\treturn 0;\n}\n");
	return fclose(f);
}

static int bench_sql(const char *tmp, unsigned long rows)
{
	FILE *f = bench_open_in(tmp, "bench.sql");

	if (!f)
		return -1;
	fprintf(f,
		"CREATE TABLE t(id INTEGER PRIMARY KEY, k TEXT, v INTEGER, "
		"pad BLOB);\n"
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
		"WHERE x < %lu)\n"
		"INSERT INTO t(k, v, pad) SELECT printf('key-%%08d', "
		"(x * 7919) %% %lu), x %% 1000, zeroblob(x %% 200) FROM c;\n"
		"CREATE INDEX t_k ON t(k);\nCREATE INDEX t_v ON t(v);\n"
		"SELECT count(*), sum(length(pad)) FROM t WHERE v BETWEEN 100 "
		"AND 300;\n"
		"SELECT k FROM t WHERE k > 'key-0005' ORDER BY k LIMIT 5;\n"
		"SELECT v, count(*) FROM t GROUP BY v ORDER BY 2 DESC, 1 "
		"LIMIT 3;\n"
		"UPDATE t SET k = k || '-x' WHERE v < 100;\n"
		"DELETE FROM t WHERE v >= 900;\n"
		"SELECT count(*) FROM t;\n", rows, rows);
	return fclose(f);
}

/* Run a setup command (no preload), stdin from @in, output discarded. */
static int bench_setup_cmd(char *const argv[], const char *in)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		int fd = in ? open(in, O_RDONLY) : null;

		if (null < 0 || fd < 0)
			_exit(126);
		dup2(fd, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		unsetenv("LD_PRELOAD");
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* 20 files of 300 lines; each commit rewrites a tenth of two of them. */
static int bench_git_stream(const char *path, unsigned long commits)
{
	FILE *f = fopen(path, "w");
	char *buf = malloc(64 * 1024);

	if (!f || !buf) {
		free(buf);
		if (f)
			fclose(f);
		return -1;
	}
	for (unsigned long c = 0; c < commits; c++) {
		char msg[80];
		int mlen = snprintf(msg, sizeof(msg), "commit %lu: change two "
				    "files", c);

		fprintf(f, "commit refs/heads/main\ncommitter Bench "
			"<bench@example.org> %lu +0000\ndata %d\n%s\n",
			1700000000UL + c * 60, mlen, msg);
		for (unsigned int k = 0; k < 2; k++) {
			unsigned int file = (unsigned int)((c * 7 + k * 3) % 20);
			size_t used = 0;

			for (unsigned int l = 0; l < 300; l++)
				used += (size_t)snprintf(buf + used,
					64 * 1024 - used,
					"line %u of file %u, version %lu\n", l,
					file, l % 10 == c % 10 ? c : c / 10);
			fprintf(f, "M 644 inline file%02u.txt\ndata %zu\n", file,
				used);
			fwrite(buf, 1, used, f);
			fputc('\n', f);
		}
	}
	free(buf);
	return fclose(f);
}

static int bench_git_repo(const char *tmp, unsigned long commits)
{
	char repo[512], stream[512], gitdir[540];
	char *init[] = { "git", "init", "-q", "--bare", repo, NULL };
	char *imp[] = { "git", gitdir, "fast-import", "--quiet", NULL };
	char *gc[] = { "git", gitdir, "gc", "-q", NULL };

	snprintf(repo, sizeof(repo), "%s/repo.git", tmp);
	snprintf(stream, sizeof(stream), "%s/repo.stream", tmp);
	snprintf(gitdir, sizeof(gitdir), "--git-dir=%s", repo);
	if (bench_git_stream(stream, commits) || bench_setup_cmd(init, NULL) ||
	    bench_setup_cmd(imp, stream) || bench_setup_cmd(gc, NULL))
		return -1;
	unlink(stream);
	return 0;
}

int bench_prog_inputs(const char *tmp, double scale)
{
	int err = 0;

	err |= bench_sort_input(tmp, bench_scaled(600000, scale));
	err |= bench_unit_c(tmp);
	err |= bench_write_text(tmp, "bench.py", bench_py);
	err |= bench_write_text(tmp, "bench.pl", bench_pl);
	err |= bench_sql(tmp, bench_scaled(300000, scale));
	if (err)
		return -1;
	/* git is optional: its rows are skipped where it is missing */
	if (access("/usr/bin/git", X_OK) == 0 &&
	    bench_git_repo(tmp, bench_scaled(400, scale) + 2))
		bench_warn("could not make the git repository in %s", tmp);
	return 0;
}

void bench_prog_cleanup(const char *tmp)
{
	char *rm[] = { "rm", "-rf", (char *)tmp, NULL };

	if (strncmp(tmp, "/tmp/segpool-bench-", 19) || bench_setup_cmd(rm, NULL))
		bench_warn("could not remove %s", tmp);
}
