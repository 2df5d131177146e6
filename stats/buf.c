// SPDX-License-Identifier: MIT
/*
 * stats/buf.c - the memory buffer statistics are formatted into.
 *
 * Formatting happens under the cache-list lock, writing to the caller's
 * stream after it is released (stats/snap.h).  The buffer lives in
 * pages of its own from the OS layer rather than in malloc'ed memory: the
 * library does not depend on the C library's allocator anywhere, and
 * fault injection (os/faultpoint.h) reaches the statistics calls too.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "os/os.h"
#include "stats/snap.h"

#define SP_SBUF_MIN	(16UL << 10)

/*
 * Make room for @more bytes and a NUL; false (and @b->err) when there is none.
 */
static bool sp_sbuf_reserve(struct sp_sbuf *b, size_t more)
{
	size_t cap = b->cap ? b->cap : SP_SBUF_MIN;
	char *buf;

	if (b->err)
		return false;
	if (b->len + more < b->cap)
		return true;
	while (b->len + more >= cap) {
		if (cap > SIZE_MAX / 2)
			goto nomem;
		cap *= 2;
	}
	buf = sp_os_map(cap, SP_PAGE_SIZE);
	if (!buf)
		goto nomem;
	if (b->buf) {
		memcpy(buf, b->buf, b->len);
		sp_os_unmap(b->buf, b->cap);
	}
	b->buf = buf;
	b->cap = cap;
	return true;
nomem:
	b->err = -ENOMEM;
	return false;
}

void sp_sbuf_printf(struct sp_sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!sp_sbuf_reserve(b, 256))
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->buf + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->err = -ENOMEM;
		return;
	}
	if ((size_t)n >= b->cap - b->len) {
		/* did not fit: grow to its length and format again */
		if (!sp_sbuf_reserve(b, (size_t)n + 1))
			return;
		va_start(ap, fmt);
		n = vsnprintf(b->buf + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0 || (size_t)n >= b->cap - b->len) {
			b->err = -ENOMEM;
			return;
		}
	}
	b->len += (size_t)n;
}

void sp_sbuf_putc(struct sp_sbuf *b, char c)
{
	if (!sp_sbuf_reserve(b, 1))
		return;
	b->buf[b->len++] = c;
	b->buf[b->len] = '\0';
}

void sp_sbuf_names(struct sp_sbuf *b, const char *key,
		   const char *const *names, size_t n)
{
	sp_sbuf_printf(b, "%s ", key);
	if (!n)
		sp_sbuf_printf(b, "none");
	for (size_t i = 0; i < n; i++)
		sp_sbuf_printf(b, "%s%s", i ? "," : "", names[i]);
	sp_sbuf_putc(b, '\n');
}

void sp_sbuf_write(struct sp_sbuf *b, const char *s, size_t n)
{
	if (!sp_sbuf_reserve(b, n + 1))
		return;
	memcpy(b->buf + b->len, s, n);
	b->len += n;
	b->buf[b->len] = '\0';
}

void sp_sbuf_free(struct sp_sbuf *b)
{
	if (b->buf)
		sp_os_unmap(b->buf, b->cap);
	b->buf = NULL;
	b->len = b->cap = 0;
}

int sp_sbuf_finish(struct sp_sbuf *b, FILE *out)
{
	int ret = b->err;

	if (!ret && b->len && fwrite(b->buf, 1, b->len, out) != b->len)
		ret = -EIO;
	if (!ret && fflush(out))
		ret = -EIO;
	sp_sbuf_free(b);
	if (ret)
		errno = -ret;
	return ret;
}
