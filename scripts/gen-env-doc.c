// SPDX-License-Identifier: MIT
/*
 * scripts/gen-env-doc.c - print the environment table of
 * Documentation/reference/environment.md from internal/env_table.c (make
 * docs; make check-docs compares).  Built and run on the build machine; links
 * internal/env_table.c alone.
 *
 * Usage: gen-env-doc < environment.md > environment.md.new
 * Copies its input, replacing what lies between the marker lines
 * "<!-- generated:env begin -->" and "<!-- generated:env end -->".
 */
#include <stdio.h>
#include <string.h>

#include "internal/env.h"

#define BEGIN	"<!-- generated:env begin -->"
#define END	"<!-- generated:env end -->"

static const char *const kind_name[] = {
	[SP_ENV_BOOL] = "boolean",
	[SP_ENV_WORD] = "word",
	[SP_ENV_INT] = "integer",
	[SP_ENV_SIZE] = "size",
	[SP_ENV_TEXT] = "text",
};

/* @s with '|', '<' and '>' escaped for a table cell */
static void cell(const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", stdout);
		else if (*s == '<')
			fputs("&lt;", stdout);
		else if (*s == '>')
			fputs("&gt;", stdout);
		else
			putchar(*s);
	}
}

static void table(void)
{
	puts(BEGIN);
	puts("| Variable | Kind | Accepts | Default | A bad value gives "
	     "| Effect |");
	puts("|----------|------|---------|---------|------------------"
	     "|--------|");
	for (int i = 0; i < SP_ENV_NR; i++) {
		const struct sp_env_var *v = &sp_env_table[i];

		printf("| `%s` | %s | ", v->name, kind_name[v->kind]);
		cell(v->accepted);
		fputs(" | ", stdout);
		cell(v->def);
		fputs(" | ", stdout);
		cell(v->on_bad);
		fputs(" | ", stdout);
		cell(v->help);
		puts(" |");
	}
	puts(END);
}

int main(void)
{
	char line[4096];
	int state = 0;		/* 0 before, 1 inside, 2 after the markers */

	while (fgets(line, sizeof(line), stdin)) {
		if (state == 0 && !strncmp(line, BEGIN, strlen(BEGIN))) {
			table();
			state = 1;
		} else if (state == 1) {
			if (!strncmp(line, END, strlen(END)))
				state = 2;
		} else {
			fputs(line, stdout);
		}
	}
	if (state != 2) {
		fprintf(stderr,
			"gen-env-doc: no '%s' ... '%s' lines in the input\n",
			BEGIN, END);
		return 1;
	}
	return 0;
}
