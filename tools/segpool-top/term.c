// SPDX-License-Identifier: MIT
/*
 * tools/segpool-top/term.c - the terminal: raw mode, the alternate screen,
 * signals and keys.
 *
 * Entering saves the termios of standard input and turns off canonical
 * mode and echo (signals stay on, so ^C is SIGINT), then switches to the
 * alternate screen (CSI ?1049h) and hides the cursor.  Leaving undoes all
 * of it in reverse order, and runs on every way out: q, an error, and the
 * terminating signals, whose handlers only note the signal and wake the
 * main loop through a pipe (the self-pipe trick); the loop restores the
 * terminal and then dies of the same signal, so a shell sees what happened.
 * SIGWINCH redraws at the new size; SIGTSTP (^Z) restores the terminal
 * before stopping and sets it up again on SIGCONT.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "tools/segpool-top/top.h"

#define TOP_ENTER_SCREEN	"\033[?1049h\033[?25l\033[H\033[2J"
#define TOP_LEAVE_SCREEN	"\033[0m\033[?25h\033[?1049l"

static struct termios top_saved;
static bool top_have_saved;
static bool top_entered;
static int top_pipe[2] = { -1, -1 };
static volatile sig_atomic_t top_sig_fatal;
static volatile sig_atomic_t top_sig_winch;
static volatile sig_atomic_t top_sig_tstp;

static const int top_fatal_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

/* Keys read but not yet handed out. */
static unsigned char top_keybuf[64];
static size_t top_keylen;

static void top_write_all(const char *s)
{
	size_t len = strlen(s);

	while (len) {
		ssize_t w = write(STDOUT_FILENO, s, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		len -= (size_t)w;
	}
}

static void top_on_signal(int sig)
{
	int saved = errno;
	char c = 0;

	if (sig == SIGWINCH)
		top_sig_winch = 1;
	else if (sig == SIGTSTP)
		top_sig_tstp = 1;
	else
		top_sig_fatal = sig;
	if (write(top_pipe[1], &c, 1) < 0) {
		/* the pipe is full: the loop is awake already */
	}
	errno = saved;
}

static int top_raw_mode(void)
{
	struct termios raw;

	if (!isatty(STDIN_FILENO))
		return 0;		/* no keys, but the view still runs */
	if (!top_have_saved) {
		if (tcgetattr(STDIN_FILENO, &top_saved))
			return -1;
		top_have_saved = true;
	}
	raw = top_saved;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO | IEXTEN);
	raw.c_iflag &= ~(tcflag_t)(IXON | ICRNL);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	return tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw);
}

static void top_screen_on(void)
{
	top_write_all(TOP_ENTER_SCREEN);
	top_entered = true;
}

int top_term_enter(void)
{
	struct sigaction sa;

	if (top_pipe[0] < 0) {
		if (pipe2(top_pipe, O_CLOEXEC | O_NONBLOCK))
			return -1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = top_on_signal;
	sigemptyset(&sa.sa_mask);
	/* no SA_RESTART: poll() returns at once */
	for (size_t i = 0; i < sizeof(top_fatal_signals) / sizeof(int); i++)
		sigaction(top_fatal_signals[i], &sa, NULL);
	sigaction(SIGWINCH, &sa, NULL);
	sigaction(SIGTSTP, &sa, NULL);
	if (top_raw_mode())
		return -1;
	top_screen_on();
	return 0;
}

void top_term_leave(void)
{
	if (top_entered) {
		top_write_all(TOP_LEAVE_SCREEN);
		top_entered = false;
	}
	if (top_have_saved)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &top_saved);
}

void top_term_size(int *rows, int *cols)
{
	struct winsize ws;

	*rows = 24;
	*cols = 80;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row &&
	    ws.ws_col) {
		*rows = ws.ws_row;
		*cols = ws.ws_col;
	}
}

static void top_drain_pipe(void)
{
	char buf[64];

	while (read(top_pipe[0], buf, sizeof(buf)) > 0)
		;
}

int top_term_wait(int timeout_ms)
{
	struct pollfd p[2] = {
		{ .fd = top_pipe[0], .events = POLLIN },
		{ .fd = STDIN_FILENO, .events = POLLIN },
	};
	nfds_t n = isatty(STDIN_FILENO) ? 2 : 1;
	int r;

	if (top_keylen)
		return 1;
	if (timeout_ms < 0)
		timeout_ms = 0;
	r = poll(p, n, timeout_ms);
	if (r <= 0)
		return 0;
	if (p[0].revents)
		top_drain_pipe();
	if (n == 2 && (p[1].revents & (POLLHUP | POLLERR)) &&
	    !(p[1].revents & POLLIN)) {
		/* the terminal went away */
		top_sig_fatal = SIGHUP;
		return 0;
	}
	return n == 2 && (p[1].revents & POLLIN);
}

static void top_fill_keys(void)
{
	ssize_t r;

	if (top_keylen == sizeof(top_keybuf))
		return;
	r = read(STDIN_FILENO, top_keybuf + top_keylen,
		 sizeof(top_keybuf) - top_keylen);
	if (r > 0)
		top_keylen += (size_t)r;
}

static void top_consume(size_t n)
{
	memmove(top_keybuf, top_keybuf + n, top_keylen - n);
	top_keylen -= n;
}

/* An escape sequence at the head of the buffer: CSI x or CSI n ~ (or SS3 x). */
static int top_escape_key(void)
{
	static const struct {
		const char *seq;
		int key;
	} seqs[] = {
		{ "\033[A", TOP_KEY_UP }, { "\033[B", TOP_KEY_DOWN },
		{ "\033[C", TOP_KEY_RIGHT }, { "\033[D", TOP_KEY_LEFT },
		{ "\033OA", TOP_KEY_UP }, { "\033OB", TOP_KEY_DOWN },
		{ "\033OC", TOP_KEY_RIGHT }, { "\033OD", TOP_KEY_LEFT },
		{ "\033[5~", TOP_KEY_PGUP }, { "\033[6~", TOP_KEY_PGDN },
		{ "\033[H", TOP_KEY_HOME }, { "\033[F", TOP_KEY_END },
		{ "\033OH", TOP_KEY_HOME }, { "\033OF", TOP_KEY_END },
		{ "\033[1~", TOP_KEY_HOME }, { "\033[4~", TOP_KEY_END },
		{ "\033[7~", TOP_KEY_HOME }, { "\033[8~", TOP_KEY_END },
	};
	size_t i, n;

	for (i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++) {
		n = strlen(seqs[i].seq);
		if (top_keylen >= n && !memcmp(top_keybuf, seqs[i].seq, n)) {
			top_consume(n);
			return seqs[i].key;
		}
	}
	/* an unknown sequence: skip to its final byte; a lone ESC is ESC */
	if (top_keylen >= 2 && (top_keybuf[1] == '[' || top_keybuf[1] == 'O')) {
		for (n = 2; n < top_keylen; n++)
			if (top_keybuf[n] >= 0x40 && top_keybuf[n] <= 0x7e)
				break;
		top_consume(n < top_keylen ? n + 1 : top_keylen);
		return TOP_KEY_NONE;
	}
	top_consume(1);
	return TOP_KEY_ESC;
}

int top_term_key(void)
{
	int c;

	if (!isatty(STDIN_FILENO))
		return TOP_KEY_NONE;
	if (!top_keylen)
		top_fill_keys();
	if (!top_keylen)
		return TOP_KEY_NONE;
	if (top_keybuf[0] == 0x1b)
		return top_escape_key();
	c = top_keybuf[0];
	top_consume(1);
	if (c == '\r' || c == '\n')
		return TOP_KEY_ENTER;
	if (c == 0x7f || c == 0x08)
		return TOP_KEY_BACKSPACE;
	return c;
}

int top_term_fatal_signal(void)
{
	int sig = top_sig_fatal;

	top_sig_fatal = 0;
	return sig;
}

bool top_term_resized(void)
{
	bool r = top_sig_winch;

	top_sig_winch = 0;
	return r;
}

void top_term_suspend_if_asked(void)
{
	struct sigaction dfl, ours;

	if (!top_sig_tstp)
		return;
	top_sig_tstp = 0;
	top_term_leave();
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(SIGTSTP, &dfl, &ours);
	raise(SIGTSTP);			/* stops here until SIGCONT */
	sigaction(SIGTSTP, &ours, NULL);
	top_raw_mode();
	top_screen_on();
	top_sig_winch = 1;		/* redraw, perhaps at a new size */
}
