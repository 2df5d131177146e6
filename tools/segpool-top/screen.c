// SPDX-License-Identifier: MIT
/*
 * tools/segpool-top/screen.c - one frame, built in memory, written at once.
 *
 * Plain ANSI (ECMA-48) sequences, no terminfo: cursor home (CSI H), erase
 * to the end of the line (CSI K) after each line, erase below (CSI J) after
 * the last, SGR 1 (bold), 7 (reverse) and 0 (reset).  The whole frame goes
 * out in one write(), so the terminal never shows half of one.  Lines are
 * cut at the screen's width and never wrap; the last row gets no newline,
 * so the screen never scrolls.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/segpool-top/top.h"

#define TOP_SCR_MAX_COLS	1000	/* wider terminals get 1000 columns */

static void top_scr_put(struct top_screen *scr, const char *s, size_t n)
{
	if (scr->oom)
		return;
	if (scr->len + n > scr->cap) {
		size_t cap = scr->cap ? scr->cap : 16384;
		char *p;

		while (cap < scr->len + n)
			cap *= 2;
		p = realloc(scr->buf, cap);
		if (!p) {
			scr->oom = true;
			return;
		}
		scr->buf = p;
		scr->cap = cap;
	}
	memcpy(scr->buf + scr->len, s, n);
	scr->len += n;
}

static void top_scr_puts(struct top_screen *scr, const char *s)
{
	top_scr_put(scr, s, strlen(s));
}

void top_scr_begin(struct top_screen *scr, int rows, int cols)
{
	scr->len = 0;
	scr->oom = false;
	scr->rows = rows > 1 ? rows : 1;
	scr->cols = cols > 10 ? cols : 10;
	if (scr->cols > TOP_SCR_MAX_COLS)
		scr->cols = TOP_SCR_MAX_COLS;
	scr->line = 0;
	scr->plain = false;
	top_scr_puts(scr, "\033[H");
}

void top_scr_begin_plain(struct top_screen *scr, int cols)
{
	scr->len = 0;
	scr->oom = false;
	scr->plain = true;
	scr->rows = 1 << 20;
	scr->cols = cols > 10 ? cols : 10;
	if (scr->cols > TOP_SCR_MAX_COLS)
		scr->cols = TOP_SCR_MAX_COLS;
	scr->line = 0;
}

bool top_scr_full(const struct top_screen *scr)
{
	return scr->line >= scr->rows;
}

int top_scr_left(const struct top_screen *scr)
{
	return scr->rows - scr->line;
}

void top_scr_line(struct top_screen *scr, enum top_attr attr,
		  const char *fmt, ...)
{
	char text[1024];
	va_list ap;
	size_t n;

	if (top_scr_full(scr))
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	n = strlen(text);
	/* what the process named its caches is not for the terminal to run */
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
			text[i] = '?';
	if (n > (size_t)scr->cols)
		n = (size_t)scr->cols;
	if (scr->plain) {
		/* no trailing blanks in a file */
		while (n && text[n - 1] == ' ')
			n--;
		top_scr_put(scr, text, n);
		top_scr_puts(scr, "\n");
		scr->line++;
		return;
	}
	if (attr == TOP_A_REVERSE) {
		/* the bar spans the whole row */
		memset(text + n, ' ', (size_t)scr->cols - n);
		n = (size_t)scr->cols;
	}
	if (scr->line)
		top_scr_puts(scr, "\r\n");
	if (attr == TOP_A_BOLD)
		top_scr_puts(scr, "\033[1m");
	else if (attr == TOP_A_REVERSE)
		top_scr_puts(scr, "\033[7m");
	top_scr_put(scr, text, n);
	if (attr != TOP_A_NONE)
		top_scr_puts(scr, "\033[0m");
	top_scr_puts(scr, "\033[K");
	scr->line++;
}

int top_scr_flush(struct top_screen *scr, int fd)
{
	size_t off = 0;

	if (!scr->plain)
		top_scr_puts(scr, "\033[J");
	if (scr->oom) {
		errno = ENOMEM;
		return -1;
	}
	while (off < scr->len) {
		ssize_t w = write(fd, scr->buf + off, scr->len - off);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		off += (size_t)w;
	}
	return 0;
}

void top_scr_free(struct top_screen *scr)
{
	free(scr->buf);
	memset(scr, 0, sizeof(*scr));
}
