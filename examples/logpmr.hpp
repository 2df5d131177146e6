// SPDX-License-Identifier: MIT
/*
 * examples/logpmr.hpp - log lines, their parser and their patterns, in C++
 * on std::pmr: what examples/logpipe_pmr.cpp runs and what
 * tools/bench-pmr measures (one workload, written once).
 *
 * A line is a syslog-like record, "<PRI>Mon DD HH:MM:SS host app[pid]:
 * message", made from a seed and its index alone, so every run with the
 * same seed sees the same lines; about one in 4096 is malformed.  Parsing
 * fills a record of pmr strings and a pmr vector of the message's words;
 * cleaning masks the digits of the message, which gives its pattern.
 */
#ifndef LOGPMR_HPP
#define LOGPMR_HPP

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory_resource>
#include <string>
#include <string_view>
#include <vector>

namespace logpmr {

inline std::uint64_t mix(std::uint64_t x)
{
	/* splitmix64's finaliser: a line's randomness from (seed, index) */
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

constexpr unsigned MALFORMED_ONE_IN = 4096;

/* gen_line() - line @idx of @seed into @buf (NUL-terminated); its length. */
inline std::size_t gen_line(std::uint64_t seed, std::uint64_t idx, char *buf,
			    std::size_t cap)
{
	static const char *const months[12] = {
		"Jan", "Feb", "Mar", "Apr", "May", "Jun",
		"Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
	};
	static const char *const hosts[4] = { "web", "db", "cache", "lb" };
	static const char *const apps[6] = {
		"sshd", "nginx", "kernel", "cron", "postgres", "dockerd",
	};
	static const char *const users[4] = { "alice", "bob", "carol",
					      "deploy" };
	std::uint64_t r = mix(seed ^ mix(idx)), r2 = mix(r);
	unsigned app = (unsigned)(r % 6), v = (unsigned)(r2 >> 8);
	char msg[160];
	int n;

	if (r2 % MALFORMED_ONE_IN == 0)
		return (std::size_t)std::snprintf(buf, cap, "garbage %u", v);
	switch (app) {
	case 0:
		std::snprintf(
			msg, sizeof(msg),
			"Accepted publickey for %s from 10.%u.%u.%u port %u "
			"ssh2",
			users[v % 4], v % 256, (v >> 8) % 256, (v >> 16) % 256,
			1024 + v % 60000);
		break;
	case 1:
		std::snprintf(
			msg, sizeof(msg),
			"GET /api/v1/items/%u HTTP/1.1 %u %u bytes in %u ms",
			v % 100000, v % 7 ? 200 : 404, v % 9000, v % 500);
		break;
	case 2:
		std::snprintf(
			msg, sizeof(msg),
			"eth%u: link up, %u Mbps, full duplex, "
			"flow control rx/tx",
			v % 4, v % 2 ? 1000 : 10000);
		break;
	case 3:
		std::snprintf(
			msg, sizeof(msg),
			"(root) CMD (run-parts /etc/cron.hourly) job %u done "
			"in %u s",
			v % 1000, v % 90);
		break;
	case 4:
		std::snprintf(
			msg, sizeof(msg),
			"duration: %u.%03u ms statement: "
			"SELECT * FROM orders WHERE id = %u",
			v % 300, (v >> 4) % 1000, v % 1000000);
		break;
	default:
		std::snprintf(
			msg, sizeof(msg),
			"container %08x health_status: %s after %u checks", v,
			v % 5 ? "healthy" : "unhealthy", v % 20);
		break;
	}
	n = std::snprintf(buf, cap,
			  "<%u>%s %2u %02u:%02u:%02u %s%02u %s[%u]: %s",
			  (unsigned)(r >> 56) % 192, months[(r >> 8) % 12],
			  1 + (unsigned)(r >> 16) % 28,
			  (unsigned)(r >> 24) % 24, (unsigned)(r >> 32) % 60,
			  (unsigned)(r >> 40) % 60, hosts[(r >> 44) % 4],
			  (unsigned)(r >> 48) % 32, apps[app],
			  (unsigned)(r2 % 32768), msg);
	return n < 0 ? 0 : (std::size_t)n < cap ? (std::size_t)n : cap - 1;
}

/* A parsed line: every string and the word list on one resource. */
struct record {
	using allocator_type = std::pmr::polymorphic_allocator<char>;

	unsigned pri = 0;
	unsigned pid = 0;
	std::pmr::string stamp, host, app, msg;
	std::pmr::vector<std::pmr::string> words;

	explicit record(allocator_type a = {})
		: stamp(a), host(a), app(a), msg(a), words(a)
	{
	}
	record(const record &o, allocator_type a)
		: pri(o.pri), pid(o.pid), stamp(o.stamp, a), host(o.host, a),
		  app(o.app, a), msg(o.msg, a), words(o.words, a)
	{
	}
	record(record &&o, allocator_type a)
		: pri(o.pri), pid(o.pid), stamp(std::move(o.stamp), a),
		  host(std::move(o.host), a), app(std::move(o.app), a),
		  msg(std::move(o.msg), a), words(std::move(o.words), a)
	{
	}
	record(record &&o) noexcept = default;
	record(const record &o) = default;
};

/* parse() - @line into @r; false when it is malformed. */
inline bool parse(std::string_view line, record &r)
{
	std::size_t gt, sp1, lb, rb;

	if (line.size() < 20 || line[0] != '<')
		return false;
	gt = line.find('>');
	if (gt == std::string_view::npos || gt > 4)
		return false;
	r.pri = 0;
	for (std::size_t i = 1; i < gt; i++) {
		if (line[i] < '0' || line[i] > '9')
			return false;
		r.pri = r.pri * 10 + (unsigned)(line[i] - '0');
	}
	if (line.size() < gt + 17)
		return false;
	r.stamp.assign(line.substr(gt + 1, 15));
	sp1 = line.find(' ', gt + 17);
	if (sp1 == std::string_view::npos)
		return false;
	r.host.assign(line.substr(gt + 17, sp1 - gt - 17));
	lb = line.find('[', sp1);
	rb = line.find("]: ", lb == std::string_view::npos ? sp1 : lb);
	if (lb == std::string_view::npos || rb == std::string_view::npos)
		return false;
	r.app.assign(line.substr(sp1 + 1, lb - sp1 - 1));
	r.pid = 0;
	for (std::size_t i = lb + 1; i < rb; i++)
		r.pid = r.pid * 10 + (unsigned)(line[i] - '0');
	r.msg.assign(line.substr(rb + 3));
	r.words.clear();
	for (std::size_t p = rb + 3; p < line.size();) {
		std::size_t e = line.find(' ', p);

		if (e == std::string_view::npos)
			e = line.size();
		if (e > p)
			r.words.emplace_back(line.substr(p, e - p));
		p = e + 1;
	}
	return true;
}

/* pattern() - @r's app and message with every digit run masked as '#'. */
inline void pattern(const record &r, std::pmr::string &out)
{
	out.assign(r.app);
	out += ": ";
	for (std::size_t i = 0; i < r.msg.size(); i++) {
		char c = r.msg[i];

		if (c >= '0' && c <= '9') {
			if (out.empty() || out.back() != '#')
				out += '#';
		} else {
			out += c;
		}
	}
}

} // namespace logpmr

#endif /* LOGPMR_HPP */
