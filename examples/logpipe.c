// SPDX-License-Identifier: MIT
/*
 * logpipe - a log-record pipeline on segpool, the project's demo service.
 *
 * Parser threads, pinned to CPUs spread over the NUMA nodes, generate
 * syslog-like lines (RFC 3164 style) from a seeded PRNG, parse them back into
 * struct log_record objects allocated from a named cache on the worker's node,
 * gather the records in struct log_batch objects and hand the batches to
 * cleaner threads through bounded queues.  Cleaners check each record, count
 * it by severity and host, drop debug lines, "clean" the message by masking
 * its digits, count the resulting patterns, and free records, payloads and
 * batches: every free is a free from another thread, and on a machine with
 * more than one node some are frees to another node.
 *
 * Message text shorter than INLINE_MSG bytes lives inside the record; longer
 * text goes to segpool_malloc().
 *
 * With -b malloc the same pipeline takes records, batches and payloads from
 * malloc() and gives them back with free(): whichever malloc serves the
 * process (glibc's, or a preloaded one), side by side with segpool's
 * caches (make bench runs both).  -p samples each worker's CPU time
 * (SIGPROF from a per-thread CPU-time timer, every millisecond, as the
 * kernel's tick allows) and reports the share of samples that fell inside
 * an allocation or free call of the pipeline.
 *
 * The content of record i is a function of the seed and i only, so the
 * histograms and pattern counts do not depend on -t or -c: runs with the same
 * -s and -n print the same figures (timings and placement apart).
 *
 * Exit status: 0 when everything adds up, 1 on an allocation failure or any
 * inconsistency (records lost or duplicated, corrupted records, counters of
 * the caches that disagree with the program's own, a cache that will not be
 * destroyed), 2 on a usage error.
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <segpool/segpool.h>

/* --- tunables ------------------------------------------------------------- */

#define DEFAULT_RECORDS		2000000ULL
#define MAX_RECORDS		1000000000000ULL	/* 10^12 */
#define DEFAULT_SEED		0x5e6b001c0ffeeULL
#define MAX_THREADS		1024
#define BATCH_MAX		64	/* records per batch */
#define QUEUE_DEPTH		16	/* batches per cleaner queue */
#define INLINE_MSG		96	/* message bytes kept
					 * inside the record */
#define LINE_MAX_LEN		1024
#define MALFORMED_ONE_IN	4096	/* about one line in this
					 * many is broken */
#define MAX_NODES		64	/* memory nodes the program
					 * keeps figures for */
#define MAX_NODE_ID		1024
#define PATTERN_SLOTS		2048	/* per cleaner; a power of two */
#define PATTERN_TEXT		72

#define RECORD_MAGIC		0x10c4ec0dU
#define RECORD_DEAD		0xdeadbeefU

#define SEV_DEBUG		7
#define SEV_ERR			3

/* --- the hot structures --------------------------------------------------- */

/* One parsed log line: 160 bytes, one 192-byte stride with HWCACHE_ALIGN. */
struct log_record {
	uint64_t seq;		/* index of the line, 0 .. n-1 */
	int64_t ts;		/* seconds since the epoch (UTC) */
	uint32_t magic;		/* RECORD_MAGIC while owned by the pipeline */
	uint32_t host_id;	/* 0 .. NHOSTS-1 */
	int32_t pid;		/* -1 when the line has none (kernel) */
	uint16_t msg_off;	/* offset of the message in the raw line */
	uint16_t msg_len;	/* message length, without the NUL */
	uint8_t severity;	/* 0 emerg .. 7 debug */
	uint8_t facility;
	uint8_t app;		/* index in apps[] */
	uint8_t parser;		/* parser index, modulo 256 */
	uint32_t raw_hash;	/* FNV-1a of the message as parsed */
	int16_t node;		/* segpool_obj_node() of the record */
	uint16_t http_status;	/* status of an HTTP request line, or 0 */
	char *ext;		/* segpool_malloc()ed message, or NULL */
	uint32_t src_ip;	/* first IPv4 address in the message, or 0 */
	uint32_t reserved;
	char msg[INLINE_MSG];	/* the message when msg_len < INLINE_MSG */
};

_Static_assert(sizeof(struct log_record) >= 128 &&
	       sizeof(struct log_record) <= 256,
	       "struct log_record should stay within 128..256 bytes");

/* A batch of records on its way from a parser to a cleaner. */
struct log_batch {
	struct log_batch *next;	/* queue link */
	uint64_t batch_seq;	/* per parser */
	uint32_t count;
	uint16_t parser;
	int16_t node;		/* node of the parser that filled it */
	struct log_record *recs[BATCH_MAX];
};

/* --- the synthetic log source --------------------------------------------- */

enum app_id { APP_SSHD, APP_KERNEL, APP_NGINX, APP_POSTGRES, APP_CRON,
	      APP_SYSTEMD, APP_DOCKERD, APP_HAPROXY, NAPPS };

static const char *const apps[NAPPS] = {
	"sshd", "kernel", "nginx", "postgres", "CRON", "systemd", "dockerd",
	"haproxy",
};
static const uint8_t app_facility[NAPPS] = { 10, 0, 3, 16, 9, 3, 3, 16 };

static const char *const host_prefix[] = { "web", "db", "cache", "lb" };
#define NHOST_PREFIX	4
#define HOSTS_PER_PREFIX 16
#define NHOSTS		(NHOST_PREFIX * HOSTS_PER_PREFIX)

static const char *const sev_names[8] = {
	"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
};
/* Severity weights in 1/1000: a chatty service, a quarter of it debug. */
static const uint16_t sev_weight[8] = { 2, 3, 10, 45, 90, 100, 500, 250 };

static const char *const months[12] = {
	"Jan", "Feb", "Mar", "Apr", "May", "Jun",
	"Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
};
/* Days before each month of 2024 (a leap year); [12] = days in the year. */
static const uint16_t cum_days[13] = {
	0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335, 366,
};
#define YEAR_START	1704067200LL	/* 2024-01-01T00:00:00Z */
#define YEAR_SECONDS	(366LL * 86400)
#define LINES_PER_SECOND 1000

static const char *const users[] = {
	"root", "admin", "deploy", "alice", "bob", "backup",
};
static const char *const ifnames[] = { "eth0", "eth1", "ens3", "bond0" };
static const char *const procs[] = { "java", "postgres", "node", "python3" };
static const char *const methods[] = { "GET", "POST", "PUT", "DELETE" };
static const char *const resources[] = {
	"users", "orders", "items", "carts", "invoices",
};
static const char *const cronjobs[] = {
	"logrotate", "backup-db", "certbot-renew", "cleanup-tmp",
};
static const char *const units[] = {
	"nginx", "postgresql", "docker", "cron", "ssh", "haproxy",
};
static const char *const containers[] = { "api", "worker", "redis", "metrics" };

/* What the generator put into a line, to check the parser against. */
struct truth {
	int64_t ts;
	unsigned int host_id;
	int pid;
	unsigned int severity;
	unsigned int app;
	bool malformed;
};

/* --- small helpers -------------------------------------------------------- */

static atomic_int g_abort;	/* set by a worker that cannot go on */
/* Lines the parsers are done with (parsed or found malformed), for the live
 * progress line: added per batch, so the count costs one atomic per 64. */
static atomic_ullong g_lines_done;
static bool all_caches;		/* -a: every cache in the dumps */
static atomic_uint g_parsers_left;

static void die(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("logpipe: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* For pthread calls that only fail on a programming error. */
static void check_pthread(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "logpipe: %s: %s\n", what, strerror(err));
		abort();
	}
}

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* splitmix64: one independent stream per line, seeded from (seed, index). */
static uint64_t rand_next(uint64_t *state)
{
	*state += 0x9e3779b97f4a7c15ULL;
	return mix64(*state);
}

static unsigned int rand_below(uint64_t *state, size_t bound)
{
	return (unsigned int)(((rand_next(state) >> 32) * (uint64_t)bound) >>
			      32);
}

static uint32_t fnv1a(const char *s, size_t len)
{
	uint32_t h = 2166136261U;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619U;
	}
	return h;
}

static uint64_t fnv1a64(uint64_t h, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static double now_seconds(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts))
		die("clock_gettime: %s", strerror(errno));
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Append to a line buffer; text that does not fit is cut. */
static void append(char *buf, size_t *len, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t *len, size_t cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*len + 1 >= cap)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *len, cap - *len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	*len += (size_t)n;
	if (*len >= cap)
		*len = cap - 1;
}

/* --- generating a line ---------------------------------------------------- */

static unsigned int draw_severity(uint64_t *rng)
{
	unsigned int r = rand_below(rng, 1000);

	for (unsigned int s = 0; s < 8; s++) {
		if (r < sev_weight[s])
			return s;
		r -= sev_weight[s];
	}
	return SEV_DEBUG;
}

/*
 * The message part of a line; returns the app it belongs to.  The random
 * values are drawn up front, in a fixed order: the order in which a
 * compiler evaluates function arguments must not change the lines.
 */
#define NDRAWS	26
#define R(k, bound)	below(rv[k], (bound))
#define PICK(k, arr)	((arr)[below(rv[k], sizeof(arr) / sizeof((arr)[0]))])

static unsigned int below(uint64_t r, size_t bound)
{
	return (unsigned int)(((r >> 32) * (uint64_t)bound) >> 32);
}

static unsigned int gen_message(uint64_t *rng, char *buf, size_t *len,
				size_t cap)
{
	uint64_t rv[NDRAWS];
	unsigned int tmpl = rand_below(rng, 12);

	for (int i = 0; i < NDRAWS; i++)
		rv[i] = rand_next(rng);

	switch (tmpl) {
	case 0:
		append(buf, len, cap,
		       "Accepted publickey for %s from 10.%u.%u.%u port %u "
		       "ssh2",
		       PICK(0, users), R(1, 256), R(2, 256), 1 + R(3, 254),
		       1024 + R(4, 64000));
		return APP_SSHD;
	case 1:
		append(buf, len, cap,
		       "Failed password for invalid user %s from 192.168.%u.%u "
		       "port %u ssh2",
		       PICK(0, users), R(1, 256), 1 + R(2, 254),
		       1024 + R(3, 64000));
		return APP_SSHD;
	case 2:
		append(buf, len, cap,
		       "[%u.%06u] %s: link is %s, %u Mbps full duplex",
		       R(0, 900000), R(1, 1000000), PICK(2, ifnames),
		       R(3, 2) ? "up" : "down", R(4, 2) ? 1000 : 10000);
		return APP_KERNEL;
	case 3:
		append(buf, len, cap,
		       "[%u.%06u] Out of memory: "
		       "Killed process %u (%s) total-vm:%ukB, anon-rss:%ukB, "
		       "file-rss:0kB, shmem-rss:0kB, "
		       "UID:%u pgtables:%ukB oom_score_adj:0",
		       R(0, 900000), R(1, 1000000), 100 + R(2, 4000000),
		       PICK(3, procs), R(4, 64000000), R(5, 16000000),
		       R(6, 2000), R(7, 100000));
		return APP_KERNEL;
	case 4:
	case 5: {
		/* Access-log lines: the long ones, 200 to 330 bytes. */
		unsigned int extra = R(0, 4);

		append(buf, len, cap,
		       "%u.%u.%u.%u - - \"%s /api/v%u/%s/%u?page=%u&limit=%u "
		       "HTTP/1.1\" %u %u \"-\" \"Mozilla/5.0 (X11; "
		       "Linux x86_64) AppleWebKit/537.36 (KHTML, "
		       "like Gecko) Chrome/%u.0.%u.%u Safari/537.36\"",
		       1 + R(1, 223), R(2, 256), R(3, 256), 1 + R(4, 254),
		       PICK(5, methods), 1 + R(6, 3), PICK(7, resources),
		       R(8, 1000000), R(9, 100), 10 + 10 * R(10, 10),
		       R(11, 8) ? 200 : 500 + R(12, 4), R(13, 200000),
		       100 + R(14, 30), R(15, 7000), R(16, 200));
		for (unsigned int i = 0; i < extra; i++)
			append(buf, len, cap, " x-req-%u=%u", i,
			       R(17 + i, 100000000));
		return APP_NGINX;
	}
	case 6:
		append(buf, len, cap,
		       "LOG:  duration: %u.%03u ms  statement: SELECT id, "
		       "name, updated_at FROM %s WHERE tenant_id = %u AND id > "
		       "%u ORDER BY id LIMIT %u",
		       R(0, 5000), R(1, 1000), PICK(2, resources), R(3, 10000),
		       R(4, 10000000), 10 * (1 + R(5, 10)));
		return APP_POSTGRES;
	case 7:
		append(buf, len, cap,
		       "(%s) CMD (/usr/local/bin/%s --quiet >/dev/null 2>&1)",
		       PICK(0, users), PICK(1, cronjobs));
		return APP_CRON;
	case 8:
		append(buf, len, cap,
		       "%s.service: Main process exited, code=exited, "
		       "status=%u/FAILURE",
		       PICK(0, units), 1 + R(1, 200));
		return APP_SYSTEMD;
	case 9:
		append(buf, len, cap, "Started %s.service.", PICK(0, units));
		return APP_SYSTEMD;
	case 10:
		append(buf, len, cap,
		       "container %s health status %s (exit code %u, %u ms)",
		       PICK(0, containers), R(1, 5) ? "healthy" : "unhealthy",
		       R(2, 3), R(3, 5000));
		return APP_DOCKERD;
	default:
		append(buf, len, cap,
		       "%u.%u.%u.%u:%u [%02u/Jan/2024:%02u:%02u:%02u.%03u] "
		       "fe_http be_%s/srv%u %u/%u/%u/%u/%u %u %u - - ---- "
		       "%u/%u/%u/%u/%u 0/0 \"%s /%s HTTP/1.1\"",
		       1 + R(0, 223), R(1, 256), R(2, 256), 1 + R(3, 254),
		       1024 + R(4, 64000), 1 + R(5, 28), R(6, 24), R(7, 60),
		       R(8, 60), R(9, 1000), PICK(10, resources), R(11, 8),
		       R(12, 10), R(13, 10), R(14, 10), R(15, 100), R(16, 1000),
		       R(17, 2) ? 200 : 404, R(18, 50000), R(19, 1000),
		       R(20, 1000), R(21, 100), R(22, 10), 0U,
		       PICK(23, methods), PICK(24, resources));
		return APP_HAPROXY;
	}
}

#undef R
#undef PICK

/*
 * gen_line() - the line of index @idx: "<PRI>Mmm dd hh:mm:ss host app[pid]:
 * msg".  Its content depends on @seed and @idx only.
 */
static size_t gen_line(uint64_t seed, uint64_t idx, char *buf, size_t cap,
		       struct truth *t)
{
	uint64_t rng = mix64(seed) ^ mix64(idx ^ 0x6c6f67706970ULL);
	char msg[LINE_MAX_LEN];
	size_t mlen = 0, len = 0;
	int64_t tsy =
		(int64_t)((idx / LINES_PER_SECOND) % (uint64_t)YEAR_SECONDS);
	unsigned int doy = (unsigned int)(tsy / 86400), mon = 0, secs;
	unsigned int prefix, hnum;

	t->malformed = rand_below(&rng, MALFORMED_ONE_IN) == 0;
	t->severity = draw_severity(&rng);
	prefix = rand_below(&rng, NHOST_PREFIX);
	hnum = rand_below(&rng, HOSTS_PER_PREFIX);
	t->host_id = prefix * HOSTS_PER_PREFIX + hnum;
	t->ts = YEAR_START + tsy;
	t->app = gen_message(&rng, msg, &mlen, sizeof(msg));
	t->pid = t->app == APP_KERNEL ? -1 :
					(int)(1 + rand_below(&rng, 4194303));

	while (doy >= cum_days[mon + 1])
		mon++;
	secs = (unsigned int)(tsy % 86400);
	append(buf, &len, cap, "<%u>%s %2u %02u:%02u:%02u %s-%02u %s",
	       app_facility[t->app] * 8U + t->severity, months[mon],
	       doy - cum_days[mon] + 1, secs / 3600, secs / 60 % 60, secs % 60,
	       host_prefix[prefix], hnum, apps[t->app]);
	if (t->pid >= 0)
		append(buf, &len, cap, "[%d]", t->pid);
	append(buf, &len, cap, ": %s", msg);

	if (t->malformed) {
		/* Cut the line somewhere inside its header. */
		size_t hdr = (size_t)(strstr(buf, ": ") - buf) + 1;

		len = 1 + rand_below(&rng, hdr - 1);
		buf[len] = '\0';
	}
	return len;
}

/* --- parsing a line ------------------------------------------------------- */

struct log_fields {
	int64_t ts;
	unsigned int pri;
	unsigned int host_id;
	int pid;
	unsigned int app;
	size_t msg_off;
	size_t msg_len;
};

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Parse up to @max digits at *@p; false if there are none. */
static bool parse_uint(const char **p, unsigned int max, unsigned long *out)
{
	unsigned long v = 0;
	unsigned int n = 0;

	while (n < max && is_digit(**p)) {
		v = v * 10 + (unsigned long)(**p - '0');
		(*p)++;
		n++;
	}
	*out = v;
	return n > 0;
}

static bool expect(const char **p, char c)
{
	if (**p != c)
		return false;
	(*p)++;
	return true;
}

/* parse_line() - split a syslog line into its fields; false if malformed. */
static bool parse_line(const char *line, size_t len, struct log_fields *f)
{
	const char *p = line, *end = line + len, *word;
	unsigned long v, day, hh, mm, ss;
	unsigned int mon, i;

	if (!expect(&p, '<') || !parse_uint(&p, 3, &v) || v > 191 ||
	    !expect(&p, '>'))
		return false;
	f->pri = (unsigned int)v;

	if (end - p < 4)
		return false;
	for (mon = 0; mon < 12; mon++)
		if (!memcmp(p, months[mon], 3))
			break;
	if (mon == 12)
		return false;
	p += 3;
	if (!expect(&p, ' '))
		return false;
	if (*p == ' ')
		p++;
	if (!parse_uint(&p, 2, &day) || day < 1 ||
	    day > (unsigned long)(cum_days[mon + 1] - cum_days[mon]))
		return false;
	if (!expect(&p, ' ') || !parse_uint(&p, 2, &hh) || hh > 23 ||
	    !expect(&p, ':') || !parse_uint(&p, 2, &mm) || mm > 59 ||
	    !expect(&p, ':') || !parse_uint(&p, 2, &ss) || ss > 59 ||
	    !expect(&p, ' '))
		return false;
	f->ts = YEAR_START +
		((int64_t)cum_days[mon] + (int64_t)day - 1) * 86400 +
		(int64_t)(hh * 3600 + mm * 60 + ss);

	/* Host "prefix-NN". */
	word = p;
	while (p < end && *p != '-' && *p != ' ')
		p++;
	for (i = 0; i < NHOST_PREFIX; i++)
		if (strlen(host_prefix[i]) == (size_t)(p - word) &&
		    !memcmp(word, host_prefix[i], (size_t)(p - word)))
			break;
	if (i == NHOST_PREFIX || !expect(&p, '-') || !parse_uint(&p, 2, &v) ||
	    v >= HOSTS_PER_PREFIX || !expect(&p, ' '))
		return false;
	f->host_id = i * HOSTS_PER_PREFIX + (unsigned int)v;

	/* Tag "app[pid]:" or "app:". */
	word = p;
	while (p < end && *p != '[' && *p != ':' && *p != ' ')
		p++;
	for (i = 0; i < NAPPS; i++)
		if (strlen(apps[i]) == (size_t)(p - word) &&
		    !memcmp(word, apps[i], (size_t)(p - word)))
			break;
	if (i == NAPPS)
		return false;
	f->app = i;
	f->pid = -1;
	if (*p == '[') {
		p++;
		if (!parse_uint(&p, 7, &v) || v == 0 || v > 4194304 ||
		    !expect(&p, ']'))
			return false;
		f->pid = (int)v;
	}
	if (!expect(&p, ':') || !expect(&p, ' ') || p >= end)
		return false;
	f->msg_off = (size_t)(p - line);
	f->msg_len = (size_t)(end - p);
	return f->msg_len < UINT16_MAX;
}

/* The first dotted quad in @s, or 0. */
static uint32_t find_ipv4(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		const char *p = s + i;
		uint32_t ip = 0;
		unsigned long v;
		int k;

		if (!is_digit(*p) ||
		    (i > 0 && (is_digit(s[i - 1]) || s[i - 1] == '.')))
			continue;
		for (k = 0; k < 4; k++) {
			if (!parse_uint(&p, 3, &v) || v > 255)
				break;
			ip = ip << 8 | (uint32_t)v;
			if (k < 3 && !expect(&p, '.'))
				break;
		}
		if (k == 4 && !is_digit(*p))
			return ip;
	}
	return 0;
}

/* The status code after the request of an access-log line, or 0. */
static uint16_t find_http_status(const char *s)
{
	const char *p = strstr(s, "HTTP/1.1\" ");
	unsigned long v;

	if (!p)
		return 0;
	p += 10;
	if (!parse_uint(&p, 3, &v) || v < 100 || v > 599)
		return 0;
	return (uint16_t)v;
}

/* --- bounded batch queue -------------------------------------------------- */

struct bqueue {
	pthread_mutex_t lock;
	pthread_cond_t not_empty;
	pthread_cond_t not_full;
	struct log_batch *head, *tail;
	unsigned int len;
	unsigned int push_waiters;	/* parsers waiting for room */
	unsigned int pop_waiters;	/* cleaners waiting for a batch */
	bool closed;
	uint64_t pushed, popped, full_waits;
} __attribute__((aligned(64)));

static void bq_init(struct bqueue *q)
{
	memset(q, 0, sizeof(*q));
	check_pthread(pthread_mutex_init(&q->lock, NULL), "pthread_mutex_init");
	check_pthread(pthread_cond_init(&q->not_empty, NULL),
		      "pthread_cond_init");
	check_pthread(pthread_cond_init(&q->not_full, NULL),
		      "pthread_cond_init");
}

static void bq_destroy(struct bqueue *q)
{
	check_pthread(pthread_cond_destroy(&q->not_full),
		      "pthread_cond_destroy");
	check_pthread(pthread_cond_destroy(&q->not_empty),
		      "pthread_cond_destroy");
	check_pthread(pthread_mutex_destroy(&q->lock), "pthread_mutex_destroy");
}

static void bq_push(struct bqueue *q, struct log_batch *b)
{
	check_pthread(pthread_mutex_lock(&q->lock), "pthread_mutex_lock");
	if (q->len >= QUEUE_DEPTH)
		q->full_waits++;
	while (q->len >= QUEUE_DEPTH) {
		q->push_waiters++;
		check_pthread(pthread_cond_wait(&q->not_full, &q->lock),
			      "pthread_cond_wait");
		q->push_waiters--;
	}
	b->next = NULL;
	if (q->tail)
		q->tail->next = b;
	else
		q->head = b;
	q->tail = b;
	q->len++;
	q->pushed++;
	if (q->pop_waiters)
		check_pthread(pthread_cond_signal(&q->not_empty),
			      "pthread_cond_signal");
	check_pthread(pthread_mutex_unlock(&q->lock), "pthread_mutex_unlock");
}

/* The next batch, or NULL once the queue is closed and empty. */
static struct log_batch *bq_pop(struct bqueue *q)
{
	struct log_batch *b;

	check_pthread(pthread_mutex_lock(&q->lock), "pthread_mutex_lock");
	while (!q->len && !q->closed) {
		q->pop_waiters++;
		check_pthread(pthread_cond_wait(&q->not_empty, &q->lock),
			      "pthread_cond_wait");
		q->pop_waiters--;
	}
	b = q->head;
	if (b) {
		q->head = b->next;
		if (!q->head)
			q->tail = NULL;
		q->len--;
		q->popped++;
		/*
		 * Wake blocked parsers only once the queue is half empty: they
		 * then push several batches in a row instead of sleeping and
		 * waking again for every batch.
		 */
		if (q->push_waiters && q->len <= QUEUE_DEPTH / 2)
			check_pthread(pthread_cond_broadcast(&q->not_full),
				      "pthread_cond_broadcast");
	}
	check_pthread(pthread_mutex_unlock(&q->lock), "pthread_mutex_unlock");
	return b;
}

static void bq_close(struct bqueue *q)
{
	check_pthread(pthread_mutex_lock(&q->lock), "pthread_mutex_lock");
	q->closed = true;
	check_pthread(pthread_cond_broadcast(&q->not_empty),
		      "pthread_cond_broadcast");
	check_pthread(pthread_mutex_unlock(&q->lock), "pthread_mutex_unlock");
}

/* --- topology: where the workers run -------------------------------------- */

struct cpu_slot {
	int cpu;	/* -1: do not pin */
	int node;	/* segpool node id, or SEGPOOL_NUMA_NO_NODE */
};

static int nr_nodes;			/* memory nodes segpool knows */
static int node_ids[MAX_NODES];		/* index -> node id */
static int16_t node_index_of[MAX_NODE_ID];	/* node id -> index, or -1 */

static int node_index(int node)
{
	if (node < 0 || node >= MAX_NODE_ID)
		return -1;
	return node_index_of[node];
}

static void discover_nodes(void)
{
	int count = segpool_numa_node_count();

	if (count < 1)
		die("segpool_numa_node_count() returned %d", count);
	if (count > MAX_NODES) {
		fprintf(stderr,
			"logpipe: %d memory nodes, figures for the first %d "
			"only\n",
			count, MAX_NODES);
		count = MAX_NODES;
	}
	for (int i = 0; i < MAX_NODE_ID; i++)
		node_index_of[i] = -1;
	for (int i = 0; i < count; i++) {
		int id = segpool_numa_node_id(i);

		if (id < 0 || id >= MAX_NODE_ID)
			die("segpool_numa_node_id(%d) returned %d", i, id);
		node_ids[i] = id;
		node_index_of[id] = (int16_t)i;
	}
	nr_nodes = count;
}

/* The CPUs this process may run on. */
static cpu_set_t *allowed_cpus(size_t *setsize, int *ncpus)
{
	for (size_t n = 1024; n <= ((size_t)1 << 20); n *= 2) {
		size_t sz = CPU_ALLOC_SIZE(n);
		cpu_set_t *set = CPU_ALLOC(n);

		if (!set)
			die("CPU_ALLOC: out of memory");
		if (sched_getaffinity(0, sz, set) == 0) {
			*setsize = sz;
			*ncpus = (int)n;
			return set;
		}
		CPU_FREE(set);
		if (errno != EINVAL)
			die("sched_getaffinity: %s", strerror(errno));
	}
	die("sched_getaffinity: CPU set too large");
}

/*
 * build_slots() - the allowed CPUs, one node after the other in turn, so
 * that workers handed out round-robin spread evenly over the nodes:
 * node0 cpu, node1 cpu, node0 cpu, ...  CPUs on no memory node come last.
 */
static struct cpu_slot *build_slots(int *nslots)
{
	size_t setsize;
	int ncpus, n = 0, total = 0;
	cpu_set_t *allowed = allowed_cpus(&setsize, &ncpus);
	int *cpu_node;
	struct cpu_slot *slots;

	for (int c = 0; c < ncpus; c++)
		total += CPU_ISSET_S((size_t)c, setsize, allowed) ? 1 : 0;
	cpu_node = malloc(sizeof(*cpu_node) * (size_t)ncpus);
	slots = calloc((size_t)(total ? total : 1), sizeof(*slots));
	if (!cpu_node || !slots)
		die("out of memory");
	for (int c = 0; c < ncpus; c++)
		cpu_node[c] = SEGPOOL_NUMA_NO_NODE;

	/* segpool's worker-pool helper: the CPUs each node serves first */
	for (int i = 0; i < nr_nodes; i++) {
		int k = segpool_numa_node_cpus(node_ids[i], NULL, 0);
		int *cpus = k > 0 ? malloc(sizeof(*cpus) * (size_t)k) : NULL;

		if (k < 0)
			die("segpool_numa_node_cpus(%d): %s", node_ids[i],
			    strerror(-k));
		if (k > 0 && !cpus)
			die("out of memory");
		k = k > 0 ? segpool_numa_node_cpus(node_ids[i], cpus,
						   (size_t)k) :
			    0;
		for (int j = 0; j < k; j++)
			if (cpus[j] < ncpus)
				cpu_node[cpus[j]] = node_ids[i];
		free(cpus);
	}

	/* Interleave: the r-th CPU of each node in turn. */
	for (int r = 0; n < total; r++) {
		bool any = false;

		for (int i = 0; i < nr_nodes; i++) {
			int seen = 0;

			for (int c = 0; c < ncpus; c++) {
				if (!CPU_ISSET_S((size_t)c, setsize, allowed) ||
				    cpu_node[c] != node_ids[i])
					continue;
				if (seen++ == r) {
					slots[n].cpu = c;
					slots[n].node = node_ids[i];
					n++;
					any = true;
					break;
				}
			}
		}
		if (!any)
			break;
	}
	for (int c = 0; c < ncpus && n < total; c++) {
		if (CPU_ISSET_S((size_t)c, setsize, allowed) &&
		    cpu_node[c] == SEGPOOL_NUMA_NO_NODE) {
			slots[n].cpu = c;
			slots[n].node = SEGPOOL_NUMA_NO_NODE;
			n++;
		}
	}
	if (n == 0) {
		slots[0].cpu = -1;
		slots[0].node = SEGPOOL_NUMA_NO_NODE;
		n = 1;
	}
	free(cpu_node);
	CPU_FREE(allowed);
	*nslots = n;
	return slots;
}

/* Pin the calling thread; false (with a warning) if that is refused. */
static bool pin_self(const char *who, int id, int cpu)
{
	size_t ncpus = (size_t)cpu + 1, sz = CPU_ALLOC_SIZE(ncpus);
	cpu_set_t *set;
	int err;

	if (cpu < 0)
		return false;
	set = CPU_ALLOC(ncpus);
	if (!set) {
		fprintf(stderr,
			"logpipe: %s %d: CPU_ALLOC failed (runs unpinned)\n",
			who, id);
		return false;
	}
	CPU_ZERO_S(sz, set);
	CPU_SET_S((size_t)cpu, sz, set);
	err = pthread_setaffinity_np(pthread_self(), sz, set);
	CPU_FREE(set);
	if (err) {
		fprintf(stderr,
			"logpipe: %s %d: cannot pin to CPU %d: "
			"%s (runs unpinned)\n",
			who, id, cpu, strerror(err));
		return false;
	}
	return true;
}

/* --- shared state --------------------------------------------------------- */

static struct segpool_cache *record_cache;
static struct segpool_cache *batch_cache;
static struct bqueue *queues;
static unsigned int nr_parsers, nr_cleaners;
static uint64_t nr_records;
static uint64_t seed;

struct parser {
	pthread_t tid;
	unsigned int id;
	int cpu, node;
	bool pinned;
	uint64_t lines, parsed, malformed, mismatched, misaligned;
	uint64_t batches, batch_allocs, payloads, payload_bytes, short_payloads;
	uint64_t local, remote, unknown_node;
	uint64_t seq_sum, seq_mix;
	uint64_t node_records[MAX_NODES];
	uint64_t node_payloads[MAX_NODES];
} __attribute__((aligned(64)));

struct pattern {
	uint64_t hash;		/* 0: free slot */
	uint64_t count;
	char text[PATTERN_TEXT];
};

struct cleaner {
	pthread_t tid;
	unsigned int id;
	int cpu, node;
	bool pinned;
	struct bqueue *q;
	uint64_t batches, records, dropped, kept, corrupt;
	uint64_t remote_frees, payload_frees, bytes_cleaned;
	uint64_t seq_sum, seq_mix;
	uint64_t sev[8];
	uint64_t host_err[NHOSTS];
	uint64_t http_5xx;
	struct pattern *pat;	/* PATTERN_SLOTS entries */
	uint64_t npat, pat_overflow;
} __attribute__((aligned(64)));

static struct parser *parsers;
static struct cleaner *cleaners;

/* --- where objects come from (-b) and the allocation share (-p) ----------- */

static bool use_malloc;		/* -b malloc: malloc()/free() for everything */
static bool profile;		/* -p: sample where the CPU time goes */

/* Set while this thread is inside an allocation or free call. */
static _Thread_local volatile sig_atomic_t in_alloc;
static atomic_ulong prof_samples, prof_alloc_samples;

#define ALLOC_BEGIN()						\
	do {							\
		in_alloc = 1;					\
		atomic_signal_fence(memory_order_seq_cst);	\
	} while (0)
#define ALLOC_END()						\
	do {							\
		atomic_signal_fence(memory_order_seq_cst);	\
		in_alloc = 0;					\
	} while (0)

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id	_sigev_un._tid
#endif

/* SIGPROF from the worker's own timer, so it lands on that worker. */
static void on_sigprof(int sig)
{
	(void)sig;
	atomic_fetch_add_explicit(&prof_samples, 1, memory_order_relaxed);
	if (in_alloc)
		atomic_fetch_add_explicit(&prof_alloc_samples, 1,
					  memory_order_relaxed);
}

static void profile_setup(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigprof;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL))
		die("sigaction(SIGPROF): %s", strerror(errno));
}

/* A timer on the calling thread's CPU time; false when there is none. */
static bool profile_start(timer_t *timer)
{
	const struct itimerspec every = { { 0, 1000000 }, { 0, 1000000 } };
	struct sigevent ev;

	if (!profile)
		return false;
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = SIGPROF;
	ev.sigev_notify_thread_id = gettid();
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, timer) ||
	    timer_settime(*timer, 0, &every, NULL))
		die("-p: a CPU-time timer: %s", strerror(errno));
	return true;
}

static void profile_stop(timer_t timer)
{
	timer_delete(timer);
}

static double alloc_share(void)
{
	unsigned long n = atomic_load(&prof_samples);

	return n ? 100.0 * (double)atomic_load(&prof_alloc_samples) /
			       (double)n :
		   0;
}

static void *obj_alloc(struct segpool_cache *cache, size_t size, int node)
{
	void *p;

	ALLOC_BEGIN();
	p = use_malloc ? malloc(size) :
			 segpool_cache_alloc_node(cache, 0, node);
	ALLOC_END();
	return p;
}

static void obj_free(struct segpool_cache *cache, void *p)
{
	ALLOC_BEGIN();
	if (use_malloc)
		free(p);
	else
		segpool_cache_free(cache, p);
	ALLOC_END();
}

static char *payload_alloc(size_t size)
{
	char *p;

	ALLOC_BEGIN();
	p = use_malloc ? malloc(size) : segpool_malloc(size);
	ALLOC_END();
	return p;
}

static void payload_free(char *p)
{
	ALLOC_BEGIN();
	if (use_malloc)
		free(p);
	else
		segpool_free(p);
	ALLOC_END();
}

static size_t payload_usable(const void *p)
{
	return use_malloc ? malloc_usable_size((void *)p) :
			    segpool_usable_size(p);
}

/* Tables outside the hot path: calloc() or segpool_calloc(). */
static void *table_calloc(size_t n, size_t size)
{
	return use_malloc ? calloc(n, size) : segpool_calloc(n, size);
}

static void table_free(void *p)
{
	if (use_malloc)
		free(p);
	else
		segpool_free(p);
}

/* The node of an object: segpool knows; malloc does not say. */
static int obj_node(const void *p)
{
	return use_malloc ? SEGPOOL_NUMA_NO_NODE : segpool_obj_node(p);
}

static const char *backend_name(void)
{
	return use_malloc ? "malloc" : "segpool caches";
}

/* --- parser thread -------------------------------------------------------- */

static struct log_batch *new_batch(struct parser *p)
{
	struct log_batch *b = obj_alloc(batch_cache, sizeof(*b), p->node);

	if (!b) {
		fprintf(stderr,
			"logpipe: parser %u: log_batch on node %d (%s): %s\n",
			p->id, p->node, backend_name(), strerror(errno));
		atomic_store(&g_abort, 1);
		return NULL;
	}
	p->batch_allocs++;
	b->next = NULL;
	b->batch_seq = p->batches;
	b->count = 0;
	b->parser = (uint16_t)p->id;
	b->node = (int16_t)p->node;
	return b;
}

static void ship_batch(struct parser *p, struct log_batch *b)
{
	/*
	 * Round-robin over the cleaners,
	 * starting at a different one per parser.
	 */
	unsigned int c = (unsigned int)((p->id + p->batches) % nr_cleaners);

	p->batches++;
	bq_push(&queues[c], b);
}

/* One line -> one record; false when the pipeline must stop. */
static bool parse_one(struct parser *p, uint64_t idx, struct log_batch *b)
{
	char line[LINE_MAX_LEN];
	struct truth t;
	struct log_fields f;
	struct log_record *r;
	size_t len = gen_line(seed, idx, line, sizeof(line), &t);
	const char *msg;
	int onode, ni;

	p->lines++;
	if (!parse_line(line, len, &f)) {
		p->malformed++;
		if (!t.malformed)
			p->mismatched++;
		return true;
	}
	if (t.malformed || f.ts != t.ts || f.host_id != t.host_id ||
	    f.pid != t.pid || f.pri % 8 != t.severity || f.app != t.app)
		p->mismatched++;

	r = obj_alloc(record_cache, sizeof(*r), p->node);
	if (!r) {
		fprintf(stderr,
			"logpipe: parser %u: log_record on node %d (%s): %s\n",
			p->id, p->node, backend_name(), strerror(errno));
		return false;
	}
	/* malloc promises 16 bytes, the cache SEGPOOL_HWCACHE_ALIGN */
	if (!use_malloc && (uintptr_t)r % SEGPOOL_CACHE_LINE)
		p->misaligned++;

	msg = line + f.msg_off;
	r->seq = idx;
	r->ts = f.ts;
	r->magic = RECORD_MAGIC;
	r->host_id = f.host_id;
	r->pid = f.pid;
	r->msg_off = (uint16_t)f.msg_off;
	r->msg_len = (uint16_t)f.msg_len;
	r->severity = (uint8_t)(f.pri % 8);
	r->facility = (uint8_t)(f.pri / 8);
	r->app = (uint8_t)f.app;
	r->parser = (uint8_t)p->id;
	r->raw_hash = fnv1a(msg, f.msg_len);
	r->http_status = r->app == APP_NGINX ? find_http_status(msg) : 0;
	r->src_ip = find_ipv4(msg, f.msg_len);
	r->reserved = 0;
	if (f.msg_len < INLINE_MSG) {
		memcpy(r->msg, msg, f.msg_len);
		r->msg[f.msg_len] = '\0';
		r->ext = NULL;
	} else {
		r->ext = payload_alloc(f.msg_len + 1);
		if (!r->ext) {
			fprintf(stderr,
				"logpipe: parser %u: "
				"payload of %zu bytes (%s): %s\n",
				p->id, f.msg_len + 1, backend_name(),
				strerror(errno));
			obj_free(record_cache, r);
			return false;
		}
		if (payload_usable(r->ext) < f.msg_len + 1)
			p->short_payloads++;
		memcpy(r->ext, msg, f.msg_len);
		r->ext[f.msg_len] = '\0';
		/* Keep the start inline too, for a quick look in a debugger. */
		memcpy(r->msg, msg, INLINE_MSG - 1);
		r->msg[INLINE_MSG - 1] = '\0';
		p->payloads++;
		p->payload_bytes += f.msg_len + 1;
		ni = node_index(obj_node(r->ext));
		if (ni >= 0)
			p->node_payloads[ni]++;
		else if (!use_malloc)
			p->unknown_node++;
	}

	onode = obj_node(r);
	ni = node_index(onode);
	r->node = (int16_t)onode;
	if (ni >= 0)
		p->node_records[ni]++;
	else if (!use_malloc)
		p->unknown_node++;
	if (use_malloc)
		;	/* malloc does not say where its memory lies */
	else if (p->node == SEGPOOL_NUMA_NO_NODE || onode == p->node)
		p->local++;
	else
		p->remote++;

	p->parsed++;
	p->seq_sum += idx;
	p->seq_mix ^= mix64(idx);
	b->recs[b->count++] = r;
	return true;
}

static void *parser_main(void *arg)
{
	struct parser *p = arg;
	struct log_batch *b = NULL;
	timer_t timer;
	bool timed;

	p->pinned = pin_self("parser", (int)p->id, p->cpu);
	if (!p->pinned)
		p->node = SEGPOOL_NUMA_NO_NODE;
	timed = profile_start(&timer);

	uint64_t since = 0;

	for (uint64_t idx = p->id; idx < nr_records; idx += nr_parsers) {
		if (++since == BATCH_MAX) {
			atomic_fetch_add_explicit(&g_lines_done, since,
						  memory_order_relaxed);
			since = 0;
		}
		if (!b) {
			if (atomic_load_explicit(&g_abort,
						 memory_order_relaxed))
				break;
			b = new_batch(p);
			if (!b)
				break;
		}
		if (!parse_one(p, idx, b)) {
			atomic_store(&g_abort, 1);
			break;
		}
		if (b->count == BATCH_MAX) {
			ship_batch(p, b);
			b = NULL;
		}
	}
	if (b && b->count)
		ship_batch(p, b);
	else if (b)
		obj_free(batch_cache, b);
	if (timed)
		profile_stop(timer);
	atomic_fetch_add_explicit(&g_lines_done, since, memory_order_relaxed);
	atomic_fetch_sub_explicit(&g_parsers_left, 1, memory_order_release);
	return NULL;
}

/* --- cleaner thread ------------------------------------------------------- */

/* "app: message", cut to fit: the table shows only the start anyway. */
static void set_pattern_text(struct pattern *e, const char *app,
			     const char *msg, size_t len)
{
	size_t n = strlen(app);

	if (n > PATTERN_TEXT - 3)
		n = PATTERN_TEXT - 3;
	memcpy(e->text, app, n);
	e->text[n++] = ':';
	e->text[n++] = ' ';
	if (len > PATTERN_TEXT - 1 - n)
		len = PATTERN_TEXT - 1 - n;
	memcpy(e->text + n, msg, len);
	e->text[n + len] = '\0';
}

static void count_pattern(struct cleaner *c, const struct log_record *r,
			  const char *msg)
{
	uint64_t h = fnv1a64(0xcbf29ce484222325ULL, apps[r->app],
			     strlen(apps[r->app]));
	size_t i;

	h = fnv1a64(h, msg, r->msg_len);
	if (!h)
		h = 1;
	for (size_t probe = 0; probe < PATTERN_SLOTS; probe++) {
		struct pattern *e;

		i = (size_t)(h + probe) & (PATTERN_SLOTS - 1);
		e = &c->pat[i];
		if (e->hash == h) {
			e->count++;
			return;
		}
		if (!e->hash) {
			e->hash = h;
			e->count = 1;
			set_pattern_text(e, apps[r->app], msg, r->msg_len);
			c->npat++;
			return;
		}
	}
	c->pat_overflow++;
}

static void clean_one(struct cleaner *c, struct log_record *r)
{
	char *msg;

	if (r->magic != RECORD_MAGIC || r->seq >= nr_records ||
	    r->severity > 7 || r->host_id >= NHOSTS || r->app >= NAPPS) {
		c->corrupt++;
		return;	/* do not touch, do not free: it is not ours */
	}
	msg = r->ext ? r->ext : r->msg;
	if (fnv1a(msg, r->msg_len) != r->raw_hash || msg[r->msg_len] != '\0')
		c->corrupt++;

	c->records++;
	c->seq_sum += r->seq;
	c->seq_mix ^= mix64(r->seq);
	c->sev[r->severity]++;
	if (r->severity <= SEV_ERR)
		c->host_err[r->host_id]++;
	if (r->http_status >= 500)
		c->http_5xx++;

	if (r->severity == SEV_DEBUG) {
		c->dropped++;
	} else {
		/*
		 * Clean: each run of digits becomes one '#', so that lines
		 * reduce to their patterns ("port 52811" -> "port #").
		 */
		size_t o = 0;

		for (size_t i = 0; i < r->msg_len; ) {
			if (is_digit(msg[i])) {
				while (i < r->msg_len && is_digit(msg[i]))
					i++;
				/* o < i: nothing unread is overwritten */
				msg[o++] = '#';
			} else {
				msg[o++] = msg[i++];
			}
		}
		msg[o] = '\0';
		c->bytes_cleaned += r->msg_len;
		r->msg_len = (uint16_t)o;
		count_pattern(c, r, msg);
		c->kept++;
	}

	if (!use_malloc && c->node != SEGPOOL_NUMA_NO_NODE &&
	    r->node != c->node)
		c->remote_frees++;
	r->magic = RECORD_DEAD;
	if (r->ext) {
		payload_free(r->ext);
		r->ext = NULL;
		c->payload_frees++;
	}
	obj_free(record_cache, r);
}

static void *cleaner_main(void *arg)
{
	struct cleaner *c = arg;
	struct log_batch *b;
	timer_t timer;
	bool timed;

	c->pinned = pin_self("cleaner", (int)c->id, c->cpu);
	if (!c->pinned)
		c->node = SEGPOOL_NUMA_NO_NODE;
	timed = profile_start(&timer);

	while ((b = bq_pop(c->q)) != NULL) {
		if (b->count > BATCH_MAX || b->parser >= nr_parsers) {
			c->corrupt++;
			continue;
		}
		for (uint32_t i = 0; i < b->count; i++)
			clean_one(c, b->recs[i]);
		c->batches++;
		obj_free(batch_cache, b);
	}
	if (timed)
		profile_stop(timer);
	return NULL;
}

/* --- options -------------------------------------------------------------- */

static void usage(FILE *out, int nslots)
{
	fprintf(out,
		"usage: logpipe [-t parsers] [-c cleaners] [-n records] [-s "
		"seed] [-b cache|malloc]\n"
		"               [-p] [-q] [-a] [-h]\n"
		"  -t N  parser threads, 1..%d (default: one per usable CPU, "
		"here %d)\n"
		"  -c N  cleaner threads, 1..%d (default: half the parsers, "
		"at least 1)\n"
		"  -n N  records to generate, 1..10^12, suffix k, "
		"M or G (default 2M)\n"
		"  -s S  PRNG seed, decimal or 0x-hex (default 0x%llx)\n"
		"  -b B  where records, batches and payloads come from: "
		"cache (segpool's\n"
		"        caches and segpool_malloc, "
		"the default) or malloc (malloc/free)\n"
		"  -p    report the share of CPU time spent in allocation and "
		"free calls\n"
		"        (SIGPROF samples, one per millisecond of CPU time)\n"
		"  -q    quiet: one summary line, no progress, "
		"no per-node figures, no dump\n"
		"  -a    list every cache in the dumps (default: "
		"empty ones on one line)\n"
		"  -h    this help\n",
		MAX_THREADS, nslots, MAX_THREADS,
		(unsigned long long)DEFAULT_SEED);
}

/* A decimal count in [min, max], optionally with a k/M/G suffix. */
static bool parse_count(const char *s, unsigned long long min,
			unsigned long long max, bool suffix,
			unsigned long long *out)
{
	unsigned long long v, mult = 1;
	char *end;

	if (!is_digit(*s))
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return false;
	if (suffix && *end) {
		switch (*end) {
		case 'k': case 'K': mult = 1000ULL; break;
		case 'm': case 'M': mult = 1000000ULL; break;
		case 'g': case 'G': mult = 1000000000ULL; break;
		default: return false;
		}
		end++;
	}
	if (*end || v > max / mult)
		return false;
	v *= mult;
	if (v < min || v > max)
		return false;
	*out = v;
	return true;
}

static bool parse_seed(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!is_digit(*s))
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end)
		return false;
	*out = v;
	return true;
}

/* Sets the globals; exits 0 after -h and 2 on a usage error. */
static bool parse_options(int argc, char **argv, int nslots)
{
	unsigned long long v;
	bool quiet = false, have_t = false, have_c = false;
	int opt;

	nr_records = DEFAULT_RECORDS;
	seed = DEFAULT_SEED;
	while ((opt = getopt(argc, argv, "t:c:n:s:b:pqah")) != -1) {
		switch (opt) {
		case 't':
			if (!parse_count(optarg, 1, MAX_THREADS, false, &v)) {
				fprintf(stderr,
					"logpipe: "
					"-t wants 1..%d parser threads, "
					"not '%s'\n",
					MAX_THREADS, optarg);
				exit(2);
			}
			nr_parsers = (unsigned int)v;
			have_t = true;
			break;
		case 'c':
			if (!parse_count(optarg, 1, MAX_THREADS, false, &v)) {
				fprintf(stderr,
					"logpipe: "
					"-c wants 1..%d cleaner threads, "
					"not '%s'\n",
					MAX_THREADS, optarg);
				exit(2);
			}
			nr_cleaners = (unsigned int)v;
			have_c = true;
			break;
		case 'n':
			if (!parse_count(optarg, 1, MAX_RECORDS, true, &v)) {
				fprintf(stderr,
					"logpipe: -n wants 1..10^12 records "
					"(suffix k, M or G allowed), "
					"not '%s'\n",
					optarg);
				exit(2);
			}
			nr_records = v;
			break;
		case 's':
			if (!parse_seed(optarg, &seed)) {
				fprintf(stderr,
					"logpipe: -s wants an unsigned 64-bit "
					"seed, not '%s'\n",
					optarg);
				exit(2);
			}
			break;
		case 'b':
			if (!strcmp(optarg, "malloc")) {
				use_malloc = true;
			} else if (strcmp(optarg, "cache")) {
				fprintf(stderr,
					"logpipe: -b wants cache or malloc, "
					"not '%s'\n",
					optarg);
				exit(2);
			}
			break;
		case 'p':
			profile = true;
			break;
		case 'a':
			all_caches = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage(stdout, nslots);
			exit(0);
		default:
			usage(stderr, nslots);
			exit(2);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "logpipe: unexpected argument '%s'\n",
			argv[optind]);
		usage(stderr, nslots);
		exit(2);
	}
	if (!have_t)
		nr_parsers = (unsigned int)(nslots < MAX_THREADS ? nslots :
								   MAX_THREADS);
	if (!have_c)
		nr_cleaners = nr_parsers / 2 ? nr_parsers / 2 : 1;
	return quiet;
}

/* --- running the pipeline ------------------------------------------------- */

static void setup_workers(const struct cpu_slot *slots, int nslots)
{
	if (posix_memalign((void **)&parsers, 64,
			   sizeof(*parsers) * nr_parsers) ||
	    posix_memalign((void **)&cleaners, 64,
			   sizeof(*cleaners) * nr_cleaners) ||
	    posix_memalign((void **)&queues, 64, sizeof(*queues) * nr_cleaners))
		die("out of memory for %u parsers and %u cleaners",
		    nr_parsers, nr_cleaners);
	memset(parsers, 0, sizeof(*parsers) * nr_parsers);
	memset(cleaners, 0, sizeof(*cleaners) * nr_cleaners);

	/* Parsers take the slots in turn; cleaners go on where they stop. */
	for (unsigned int i = 0; i < nr_parsers; i++) {
		const struct cpu_slot *s = &slots[i % (unsigned int)nslots];

		parsers[i].id = i;
		parsers[i].cpu = s->cpu;
		parsers[i].node = s->node;
	}
	for (unsigned int i = 0; i < nr_cleaners; i++) {
		struct cleaner *c = &cleaners[i];
		const struct cpu_slot *s =
			&slots[(nr_parsers + i) % (unsigned int)nslots];

		bq_init(&queues[i]);
		c->id = i;
		c->cpu = s->cpu;
		c->node = s->node;
		c->q = &queues[i];
		c->pat = table_calloc(PATTERN_SLOTS, sizeof(*c->pat));
		if (!c->pat)
			die("calloc(%d, %zu): %s", PATTERN_SLOTS,
			    sizeof(*c->pat), strerror(errno));
	}
}

/* Start every worker, wait for the pipeline to drain; the wall time. */
/* The slabinfo text of the caches, taken half-way through (objects live). */
static char *midway_dump;
static size_t midway_len;

static void append_text(void *arg, const char *text)
{
	size_t n = strlen(text);
	char *p;

	(void)arg;
	p = realloc(midway_dump, midway_len + n + 1);
	if (!p)
		return;
	memcpy(p + midway_len, text, n + 1);
	midway_dump = p;
	midway_len += n;
}

static void progress_line(double t0, bool tty, bool last)
{
	uint64_t done =
		atomic_load_explicit(&g_lines_done, memory_order_relaxed);
	double el = now_seconds() - t0, rate = el > 0 ? (double)done / el : 0;
	char left[32] = "";

	if (!last && rate > 0 && done < nr_records)
		snprintf(left, sizeof(left), ", %.0f s left",
			 (double)(nr_records - done) / rate);
	fprintf(stderr,
		"%slogpipe: %" PRIu64 " / %" PRIu64 " records (%.1f%%), "
		"%.0f records/s, %.0f s%s%s",
		tty ? "\r" : "", done, nr_records,
		100.0 * (double)done / (double)nr_records, rate, el, left,
		tty ? (last ? "\033[K\n" : "\033[K") : "\n");
	fflush(stderr);
}

/*
 * While the parsers run: a progress line on stderr every second on a
 * terminal (rewritten in place) and every 5 s otherwise, and the cache dump
 * once half the lines are done.
 */
static void watch_pipeline(double t0, bool show)
{
	const bool tty = isatty(STDERR_FILENO);
	const double every = tty ? 1.0 : 5.0;
	const struct timespec step = { 0, 20 * 1000 * 1000 };
	double next = t0 + every;
	bool shown = false;

	while (atomic_load_explicit(&g_parsers_left, memory_order_acquire)) {
		nanosleep(&step, NULL);
		if (!midway_dump && !use_malloc &&
		    atomic_load_explicit(&g_lines_done, memory_order_relaxed) >=
		    nr_records / 2)
			segpool_stats_print(append_text, NULL,
					    SEGPOOL_STATS_SLABINFO);
		if (show && now_seconds() >= next) {
			progress_line(t0, tty, false);
			shown = true;
			next += every;
		}
	}
	if (shown)
		progress_line(t0, tty, true);
}

static double run_pipeline(bool show_progress)
{
	double t0 = now_seconds();
	int err;

	if (profile)
		profile_setup();

	for (unsigned int i = 0; i < nr_cleaners; i++) {
		err = pthread_create(&cleaners[i].tid, NULL, cleaner_main,
				     &cleaners[i]);
		if (err)
			die("pthread_create(cleaner %u): %s", i, strerror(err));
	}
	atomic_store(&g_parsers_left, nr_parsers);
	for (unsigned int i = 0; i < nr_parsers; i++) {
		err = pthread_create(&parsers[i].tid, NULL, parser_main,
				     &parsers[i]);
		if (err)
			die("pthread_create(parser %u): %s", i, strerror(err));
	}
	watch_pipeline(t0, show_progress);
	for (unsigned int i = 0; i < nr_parsers; i++)
		check_pthread(pthread_join(parsers[i].tid, NULL),
			      "pthread_join");
	/* No parser pushes any more: let the cleaners finish and leave. */
	for (unsigned int i = 0; i < nr_cleaners; i++)
		bq_close(&queues[i]);
	for (unsigned int i = 0; i < nr_cleaners; i++)
		check_pthread(pthread_join(cleaners[i].tid, NULL),
			      "pthread_join");
	return now_seconds() - t0;
}

/* --- adding up ------------------------------------------------------------ */

struct totals {
	double elapsed;
	/* parsers */
	uint64_t lines, parsed, malformed, mismatched, misaligned;
	uint64_t short_payloads, unknown_node, batches, batch_allocs;
	uint64_t payloads, payload_bytes, local, remote, pseq_sum, pseq_mix;
	uint64_t node_records[MAX_NODES], node_payloads[MAX_NODES];
	unsigned int node_parsers[MAX_NODES], node_cleaners[MAX_NODES];
	/* queues */
	uint64_t pushed, popped, full_waits;
	/* cleaners */
	uint64_t consumed, dropped, kept, corrupt, cbatches, remote_frees;
	uint64_t payload_frees, bytes_cleaned, cseq_sum, cseq_mix, http_5xx;
	uint64_t sev[8], host_err[NHOSTS];
	struct pattern *pat;	/* 2 * PATTERN_SLOTS entries */
	size_t npat;
	uint64_t pat_overflow;
};

#define ALL_PATTERNS	(2 * PATTERN_SLOTS)

static void merge_patterns(struct totals *t, const struct cleaner *c)
{
	for (size_t k = 0; k < PATTERN_SLOTS; k++) {
		const struct pattern *e = &c->pat[k];
		size_t probe;

		if (!e->hash)
			continue;
		/*
		 * Same hash, same pattern:
		 * a 64-bit collision is not a worry here.
		 */
		for (probe = 0; probe < ALL_PATTERNS; probe++) {
			struct pattern *d =
				&t->pat[(e->hash + probe) & (ALL_PATTERNS - 1)];

			if (d->hash == e->hash) {
				d->count += e->count;
				break;
			}
			if (!d->hash) {
				*d = *e;
				t->npat++;
				break;
			}
		}
		if (probe == ALL_PATTERNS)
			t->pat_overflow += e->count;
	}
}

static void gather(struct totals *t)
{
	t->pat = table_calloc(ALL_PATTERNS, sizeof(*t->pat));
	if (!t->pat)
		die("calloc(%d, %zu): %s", ALL_PATTERNS, sizeof(*t->pat),
		    strerror(errno));

	for (unsigned int i = 0; i < nr_parsers; i++) {
		const struct parser *p = &parsers[i];
		int ni = node_index(p->node);

		t->lines += p->lines;
		t->parsed += p->parsed;
		t->malformed += p->malformed;
		t->mismatched += p->mismatched;
		t->misaligned += p->misaligned;
		t->short_payloads += p->short_payloads;
		t->unknown_node += p->unknown_node;
		t->batches += p->batches;
		t->batch_allocs += p->batch_allocs;
		t->payloads += p->payloads;
		t->payload_bytes += p->payload_bytes;
		t->local += p->local;
		t->remote += p->remote;
		t->pseq_sum += p->seq_sum;
		t->pseq_mix ^= p->seq_mix;
		for (int n = 0; n < nr_nodes; n++) {
			t->node_records[n] += p->node_records[n];
			t->node_payloads[n] += p->node_payloads[n];
		}
		if (ni >= 0)
			t->node_parsers[ni]++;
	}

	for (unsigned int i = 0; i < nr_cleaners; i++) {
		struct cleaner *c = &cleaners[i];
		int ni = node_index(c->node);

		t->pushed += queues[i].pushed;
		t->popped += queues[i].popped;
		t->full_waits += queues[i].full_waits;
		t->consumed += c->records;
		t->dropped += c->dropped;
		t->kept += c->kept;
		t->corrupt += c->corrupt;
		t->cbatches += c->batches;
		t->remote_frees += c->remote_frees;
		t->payload_frees += c->payload_frees;
		t->bytes_cleaned += c->bytes_cleaned;
		t->cseq_sum += c->seq_sum;
		t->cseq_mix ^= c->seq_mix;
		t->http_5xx += c->http_5xx;
		t->pat_overflow += c->pat_overflow;
		for (int s = 0; s < 8; s++)
			t->sev[s] += c->sev[s];
		for (int h = 0; h < NHOSTS; h++)
			t->host_err[h] += c->host_err[h];
		if (ni >= 0)
			t->node_cleaners[ni]++;
		merge_patterns(t, c);
	}
}

/* --- checking ------------------------------------------------------------- */

static int failures;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;

	fputs("logpipe: INCONSISTENT: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	failures++;
}

/* The cache's own counters must agree with what the program did. */
static void check_cache(struct segpool_cache *cache, uint64_t expect)
{
	struct segpool_cache_info info;
	const char *name = segpool_cache_name(cache);
	int err;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	err = segpool_cache_get_info(cache, &info);
	if (err) {
		fail("segpool_cache_get_info(%s): %s", name ? name : "?",
		     strerror(-err));
		return;
	}
	if (info.allocs != expect || info.frees != expect)
		fail("cache %s counted %" PRIu64 " allocs and %" PRIu64
		     " frees, the program made %" PRIu64 " of each",
		     name, info.allocs, info.frees, expect);
	if (info.active_objs)
		fail("cache %s still has %" PRIu64 " active objects",
		     name, info.active_objs);
	if (info.alloc_failures)
		fail("cache %s counted %" PRIu64 " failed allocations",
		     name, info.alloc_failures);
}

static void check_totals(const struct totals *t)
{
	/*
	 * After an early stop the line counts fall short; all else must hold.
	 */
	if (atomic_load(&g_abort))
		fail("a worker stopped early (see above)");
	else if (t->lines != nr_records)
		fail("%" PRIu64 " lines generated, %" PRIu64 " asked for",
		     t->lines, nr_records);
	else if (t->parsed + t->malformed != t->lines)
		fail("%" PRIu64 " parsed + %" PRIu64 " malformed != %" PRIu64
		     " lines",
		     t->parsed, t->malformed, t->lines);
	if (t->mismatched)
		fail("%" PRIu64
		     " lines parsed otherwise than they were generated",
		     t->mismatched);
	if (t->consumed != t->parsed)
		fail("records lost: %" PRIu64 " produced, %" PRIu64 " consumed",
		     t->parsed, t->consumed);
	if (t->cseq_sum != t->pseq_sum || t->cseq_mix != t->pseq_mix)
		fail("the records consumed are not the records produced");
	if (t->corrupt)
		fail("%" PRIu64 " corrupted records or batches", t->corrupt);
	if (t->misaligned)
		fail("%" PRIu64 " records not aligned to %lu bytes",
		     t->misaligned, SEGPOOL_CACHE_LINE);
	if (t->short_payloads)
		fail("%" PRIu64
		     " payloads with a usable size below the size asked",
		     t->short_payloads);
	if (t->unknown_node)
		fail("segpool_obj_node() did not know %" PRIu64 " objects",
		     t->unknown_node);
	if (t->batches != t->pushed || t->pushed != t->popped ||
	    t->popped != t->cbatches)
		fail("batches: %" PRIu64 " shipped, %" PRIu64
		     " queued, %" PRIu64 " dequeued, %" PRIu64 " cleaned",
		     t->batches, t->pushed, t->popped, t->cbatches);
	if (t->payloads != t->payload_frees)
		fail("payloads: %" PRIu64 " allocated, %" PRIu64 " freed",
		     t->payloads, t->payload_frees);
	if (t->pat_overflow)
		fail("pattern tables overflowed (%" PRIu64 " records)",
		     t->pat_overflow);
	if (use_malloc)
		return;
	check_cache(record_cache, t->parsed);
	check_cache(batch_cache, t->batch_allocs);
}

/* --- report --------------------------------------------------------------- */

static void print_header(int nslots)
{
	printf("logpipe: segpool %s, seed 0x%016" PRIx64
	       " (rerun with -s 0x%" PRIx64 "), %" PRIu64 " records\n",
	       segpool_version(), seed, seed, nr_records);
	printf("logpipe: %u parser%s, %u cleaner%s, "
	       "%d usable CPU%s on %d memory node%s, "
	       "batches of %d, queues of %d\n",
	       nr_parsers, nr_parsers == 1 ? "" : "s", nr_cleaners,
	       nr_cleaners == 1 ? "" : "s", nslots, nslots == 1 ? "" : "s",
	       nr_nodes, nr_nodes == 1 ? "" : "s", BATCH_MAX, QUEUE_DEPTH);
	if (use_malloc) {
		printf("logpipe: -b malloc: log_record (%zu bytes), log_batch "
		       "(%zu bytes) and payloads from malloc()\n",
		       sizeof(struct log_record), sizeof(struct log_batch));
		fflush(stdout);
		return;
	}
	struct segpool_cache_info ri = { .size = sizeof(ri) };
	struct segpool_cache_info bi = { .size = sizeof(bi) };

	segpool_cache_get_info(record_cache, &ri);
	segpool_cache_get_info(batch_cache, &bi);
	printf("logpipe: log_record object size %zu, stride %zu; "
	       "log_batch object size %zu, stride %zu (bytes)\n",
	       ri.object_size, ri.stride, bi.object_size, bi.stride);
	fflush(stdout);
}

static int cmp_pattern(const void *a, const void *b)
{
	const struct pattern *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->text, y->text);
}

static void fmt_bytes(char *buf, size_t cap, double bytes)
{
	if (bytes >= 1024.0 * 1024 * 1024)
		snprintf(buf, cap, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
	else if (bytes >= 1024.0 * 1024)
		snprintf(buf, cap, "%.1f MiB", bytes / (1024.0 * 1024));
	else
		snprintf(buf, cap, "%.1f KiB", bytes / 1024.0);
}

static double rate(const struct totals *t)
{
	return t->elapsed > 0 ? (double)t->parsed / t->elapsed : 0.0;
}

static void print_workers(void)
{
	printf("\nworkers:\n");
	for (unsigned int i = 0; i < nr_parsers; i++)
		printf("  parser  %-3u cpu %-3d node %-3d %s  %10" PRIu64
		       " records %8" PRIu64 " batches\n",
		       i, parsers[i].cpu, parsers[i].node,
		       parsers[i].pinned ? "pinned  " : "unpinned",
		       parsers[i].parsed, parsers[i].batches);
	for (unsigned int i = 0; i < nr_cleaners; i++)
		printf("  cleaner %-3u cpu %-3d node %-3d %s  %10" PRIu64
		       " records %8" PRIu64 " batches\n",
		       i, cleaners[i].cpu, cleaners[i].node,
		       cleaners[i].pinned ? "pinned  " : "unpinned",
		       cleaners[i].records, cleaners[i].batches);
}

static void print_results(const struct totals *t)
{
	char payload[32], cleaned[32];

	fmt_bytes(payload, sizeof(payload), (double)t->payload_bytes);
	fmt_bytes(cleaned, sizeof(cleaned), (double)t->bytes_cleaned);
	printf("\nresults:\n");
	printf("  lines generated     %12" PRIu64 "\n", t->lines);
	printf("  malformed lines     %12" PRIu64 "\n", t->malformed);
	printf("  records parsed      %12" PRIu64 "\n", t->parsed);
	printf("  records cleaned     %12" PRIu64 "   (%s of message text)\n",
	       t->kept, cleaned);
	printf("  debug lines dropped %12" PRIu64 "\n", t->dropped);
	printf("  HTTP 5xx responses  %12" PRIu64 "\n", t->http_5xx);
	printf("  distinct patterns   %12zu   (%" PRIu64 " repeats folded)\n",
	       t->npat, t->kept - t->npat);
	printf("  batches             %12" PRIu64 "   (%" PRIu64
	       " waits on a full queue)\n", t->batches, t->full_waits);
	printf("  payloads            %12" PRIu64 "   (%s, %s)\n",
	       t->payloads, use_malloc ? "malloc" : "segpool_malloc", payload);
	printf("  wall time           %12.3f s\n", t->elapsed);
	printf("  records/second      %12.0f\n", rate(t));
	if (profile)
		printf("  in alloc and free   %11.1f%%   (of %lu CPU-time "
		       "samples)\n",
		       alloc_share(), atomic_load(&prof_samples));
}

static void print_nodes(const struct totals *t)
{
	printf("\nper node (from segpool_obj_node):\n");
	for (int n = 0; n < nr_nodes; n++)
		printf("  node %-3d %3u parser%s %3u cleaner%s  "
		       "records %11" PRIu64 " (%5.1f%%)  "
		       "payloads %10" PRIu64 "\n",
		       node_ids[n], t->node_parsers[n],
		       t->node_parsers[n] == 1 ? " " : "s", t->node_cleaners[n],
		       t->node_cleaners[n] == 1 ? " " : "s", t->node_records[n],
		       t->parsed ? 100.0 * (double)t->node_records[n] /
					   (double)t->parsed :
				   0.0,
		       t->node_payloads[n]);
	printf("  records on the allocating worker's node %" PRIu64
	       ", on another %" PRIu64 "\n",
	       t->local, t->remote);
	printf("  records freed by a cleaner on another node %" PRIu64 "\n",
	       t->remote_frees);
}

static void print_severities(const struct totals *t)
{
	uint64_t max = 1;

	printf("\nseverity histogram:\n");
	for (int s = 0; s < 8; s++)
		if (t->sev[s] > max)
			max = t->sev[s];
	for (int s = 0; s < 8; s++) {
		int w = (int)((t->sev[s] * 40 + max - 1) / max);

		printf("  %-7s %11" PRIu64 " %5.1f%%  %.*s%s\n", sev_names[s],
		       t->sev[s], t->consumed ?
		       100.0 * (double)t->sev[s] / (double)t->consumed : 0.0,
		       w, "########################################",
		       s == SEV_DEBUG ? "  (dropped)" : "");
	}
}

static void print_hosts_and_patterns(struct totals *t)
{
	uint64_t host_err[NHOSTS];
	char name[16];

	memcpy(host_err, t->host_err, sizeof(host_err));
	printf("\nhosts with the most errors (err and worse):\n");
	for (int k = 0; k < 3; k++) {
		int best = -1;

		for (int h = 0; h < NHOSTS; h++)
			if (host_err[h] &&
			    (best < 0 || host_err[h] > host_err[best]))
				best = h;
		if (best < 0)
			break;
		snprintf(name, sizeof(name), "%s-%02d",
			 host_prefix[best / HOSTS_PER_PREFIX],
			 best % HOSTS_PER_PREFIX);
		printf("  %-10s %10" PRIu64 "\n", name, host_err[best]);
		host_err[best] = 0;
	}

	qsort(t->pat, ALL_PATTERNS, sizeof(*t->pat), cmp_pattern);
	printf("\ntop patterns after cleaning:\n");
	for (size_t k = 0; k < 5 && t->pat[k].hash; k++)
		printf("  %10" PRIu64 "  %.60s%s\n", t->pat[k].count,
		       t->pat[k].text,
		       strlen(t->pat[k].text) > 60 ? "..." : "");
}

/* One row of the slabinfo text. */
struct cache_row {
	char name[64];
	unsigned long long active, total, stride, aslabs, slabs, depot;
	unsigned int per, pages;
};

static bool parse_slabinfo_row(const char *line, struct cache_row *r)
{
	unsigned int limit, batch, shared;

	return sscanf(line, "%63s %llu %llu %llu %u %u : tunables %u %u %u : "
		      "slabdata %llu %llu %llu", r->name, &r->active, &r->total,
		      &r->stride, &r->per, &r->pages, &limit, &batch, &shared,
		      &r->aslabs, &r->slabs, &r->depot) == 12;
}

static void print_row(const struct cache_row *r)
{
	printf("  %-22s %10llu %10llu %7llu %8u %7u %7llu/%-7llu %9llu\n",
	       r->name, r->active, r->total, r->stride, r->per, r->pages,
	       r->aslabs, r->slabs, r->depot);
}

/*
 * The slabinfo text @text as a table: this program's caches first, then the
 * others with slabs, then, unless -a, the caches without slabs on one line.
 * Objects resting in magazines count as free, so a cache whose objects are
 * all freed can still hold slabs: STRIDE is the slabinfo objsize, DEPOT the
 * free objects in the depots (slabinfo's sharedavail).
 */
static void print_caches(const char *title, const char *text)
{
	const char *own[] = { "log_record", "log_batch" };
	char empty_first[64] = "", empty_last[64] = "";
	unsigned int nempty = 0;
	struct cache_row r;

	printf("\n%s:\n", title);
	printf("  %-22s %10s %10s %7s %8s %7s %15s %9s\n", "NAME", "ACTIVE",
	       "OBJS", "STRIDE", "OBJ/SLAB", "PAGES", "SLABS act/all", "DEPOT");
	for (int pass = 0; pass < 2; pass++) {
		for (const char *l = text; l && *l; l = strchr(l, '\n'),
		     l = l ? l + 1 : NULL) {
			bool mine = false;

			if (!parse_slabinfo_row(l, &r))
				continue;
			for (size_t k = 0; k < sizeof(own) / sizeof(own[0]);
			     k++)
				mine |= !strcmp(r.name, own[k]);
			if (mine != (pass == 0))
				continue;
			if (!mine && !all_caches && !r.slabs && !r.active) {
				if (!nempty++)
					snprintf(empty_first,
						 sizeof(empty_first), "%s",
						 r.name);
				snprintf(empty_last, sizeof(empty_last), "%s",
					 r.name);
				continue;
			}
			print_row(&r);
		}
	}
	if (nempty == 1)
		printf("  (1 more cache without slabs: %s; -a lists it)\n",
		       empty_first);
	else if (nempty)
		printf("  (%u more caches without slabs, %s .. %s; "
		       "-a lists them)\n",
		       nempty, empty_first, empty_last);
	printf("  (free objects resting in CPU magazines and depots keep their "
	       "slabs active)\n");
}

/* --- main ----------------------------------------------------------------- */

int main(int argc, char **argv)
{
	struct totals *t;
	struct cpu_slot *slots;
	uint64_t parsed;
	int nslots, err;
	bool quiet;

	discover_nodes();
	slots = build_slots(&nslots);
	quiet = parse_options(argc, argv, nslots);

	if (strcmp(segpool_version(), SEGPOOL_VERSION_STRING))
		fprintf(stderr,
			"logpipe: warning: built against segpool %s, "
			"running %s\n",
			SEGPOOL_VERSION_STRING, segpool_version());

	if (!use_malloc) {
		record_cache = SEGPOOL_CACHE(log_record, SEGPOOL_HWCACHE_ALIGN);
		if (!record_cache)
			die("segpool_cache_create(log_record): %s",
			    strerror(errno));
		batch_cache = SEGPOOL_CACHE(log_batch, SEGPOOL_HWCACHE_ALIGN);
		if (!batch_cache)
			die("segpool_cache_create(log_batch): %s",
			    strerror(errno));
	}

	/*
	 * watch it live: segpool-top -p <pid>
	 * (Documentation/guide/statistics.md)
	 */
	if (!use_malloc &&
	    segpool_export_start(SEGPOOL_EXPORT_INTERVAL_DEFAULT))
		fprintf(stderr, "logpipe: warning: no live statistics: %s\n",
			strerror(errno));
	if (!quiet)
		print_header(nslots);
	setup_workers(slots, nslots);

	t = calloc(1, sizeof(*t));
	if (!t)
		die("out of memory");
	t->elapsed = run_pipeline(!quiet);
	gather(t);
	check_totals(t);

	if (quiet) {
		char share[48] = "";

		if (profile)
			snprintf(share, sizeof(share), ", %.1f%% in alloc/free",
				 alloc_share());
		printf("logpipe: seed 0x%" PRIx64 ", %u+%u threads, %" PRIu64
		       " records in %.3f s, %.0f records/s%s, %zu patterns, "
		       "-b %s, %s\n", seed, nr_parsers, nr_cleaners, t->parsed,
		       t->elapsed, rate(t), share, t->npat,
		       use_malloc ? "malloc" : "cache",
		       failures ? "INCONSISTENT" : "consistent");
	} else {
		print_workers();
		print_results(t);
		if (!use_malloc)
			print_nodes(t);
		print_severities(t);
		print_hosts_and_patterns(t);
		if (use_malloc)
			;	/* no segpool cache to show */
		else if (midway_dump)
			print_caches(
				"segpool caches half-way through (records in "
				"flight)",
				midway_dump);
		free(midway_dump);
		midway_dump = NULL;
		midway_len = 0;
		err = use_malloc ? 0 :
				   segpool_stats_print(append_text, NULL,
						       SEGPOOL_STATS_SLABINFO);
		if (err)
			fail("segpool_stats_print: %s", strerror(-err));
		else if (!use_malloc)
			print_caches(
				"segpool caches at the end (every record "
				"freed)",
				midway_dump);
		free(midway_dump);
	}

	/* Tear down: everything back to segpool, then the caches go. */
	for (unsigned int i = 0; i < nr_cleaners; i++) {
		table_free(cleaners[i].pat);
		bq_destroy(&queues[i]);
	}
	table_free(t->pat);
	err = use_malloc ? 0 : segpool_cache_destroy(batch_cache);
	if (err)
		fail("segpool_cache_destroy(log_batch) returned %d (%s)", err,
		     strerror(-err));
	err = use_malloc ? 0 : segpool_cache_destroy(record_cache);
	if (err)
		fail("segpool_cache_destroy(log_record) returned %d (%s)", err,
		     strerror(-err));
	parsed = t->parsed;
	free(t);
	free(parsers);
	free(cleaners);
	free(queues);
	free(slots);

	if (failures) {
		fprintf(stderr, "logpipe: %d inconsistenc%s, exit 1\n",
			failures, failures == 1 ? "y" : "ies");
		return 1;
	}
	if (!quiet)
		printf("\nlogpipe: all %" PRIu64 " records accounted for, %s\n",
		       parsed,
		       use_malloc ? "every block freed" : "caches destroyed");
	return 0;
}
