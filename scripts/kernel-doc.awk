# SPDX-License-Identifier: MIT
#
# scripts/kernel-doc.awk - the kernel-doc parser of scripts/gen-api-doc.sh
# and its back-ends.  One header per run (POSIX awk), with these variables:
#
#   fmt      md (default): the header's section of Documentation/reference/api.md on
#            stdout; man: a man page per function, function-like macro and
#            struct in mandir, their names on stdout; names: only the names
#   rel      the header's path as reported in warnings
#   inc      its name as included ("segpool/slab.h")
#   grouped  1 when it has "/* --- group --- */" separators (md)
#   mandir, version, pages    (man) where the pages go, the version in
#            their footer, and the space-separated names of every page of
#            every header (the targets SEE ALSO may name)
#
# Exit status 3 when a comment had a problem (reported on stderr).

# ---- helpers ---------------------------------------------------------------

function warn(line, msg) {
	printf "%s:%d: warning: %s\n", rel, line, msg | "cat 1>&2"
	nwarn++
}

# Expand tabs to the next multiple of 8 columns (code blocks).
function expand(s,    out, i, c) {
	out = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "\t") {
			do
				out = out " "
			while (length(out) % 8)
		} else {
			out = out c
		}
	}
	return out
}

function trim(s) {
	sub(/^[ \t]+/, "", s)
	sub(/[ \t]+$/, "", s)
	return s
}

# Escape what Markdown would take for markup in running text.
function esc(s,    out, i, c) {
	out = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "<")
			out = out "&lt;"
		else if (c == ">")
			out = out "&gt;"
		else if (c == "*" || c == "`" || c == "\\" || c == "|")
			out = out "\\" c
		else
			out = out c
	}
	return out
}

# Running text: @param, name() and SEGPOOL_* become code spans.
function inl(s,    out, tok) {
	out = ""
	while (match(s, RX)) {
		tok = substr(s, RSTART, RLENGTH)
		if (substr(tok, 1, 1) == "@")
			tok = substr(tok, 2)
		out = out esc(substr(s, 1, RSTART - 1)) "`" tok "`"
		s = substr(s, RSTART + RLENGTH)
	}
	return out esc(s)
}

# A paragraph: inline markup, and no accidental list or heading at its start.
function para(s) {
	s = inl(trim(s))
	if (s ~ /^[-+#>=]/ || s ~ /^[0-9]+[.)]/)
		s = "\\" s
	return s
}

# Upper-case the first word of a summary when it is a plain English word.
function cap(s) {
	if (s ~ /^[a-z]+([ ,.;:]|$)/)
		s = toupper(substr(s, 1, 1)) substr(s, 2)
	return s
}

function join(a, b) {
	if (a == "")
		return trim(b)
	if (b == "")
		return a
	return a " " trim(b)
}

# ---- output ---------------------------------------------------------------

function file_heading() {
	if (headed)
		return
	headed = 1
	printf "\n## %s\n", esc(inc)
	if (nov) {
		for (i = 1; i <= nov; i++)
			printf "\n%s\n", para(ov[i])
	}
}

# One kernel-doc block (blk[1..nblk], starting at line blkline) and the
# declaration that follows it (decl, may be empty).
function emit(    i, l, st, m, word, base) {
	# the purpose line: "name - summary", the first non-empty line
	for (i = 1; i <= nblk && trim(blk[i]) == ""; i++)
		;
	if (i > nblk) {
		warn(blkline, "empty kernel-doc block")
		return
	}
	l = trim(blk[i])
	if (match(l, /^((struct|union|enum|typedef)[ \t]+)?[A-Za-z_][A-Za-z0-9_]*(\(\))?[ \t]+-[ \t]/)) {
		name = substr(l, 1, RLENGTH)
		sub(/[ \t]+-[ \t]$/, "", name)
		summary = substr(l, RLENGTH + 1)
	} else {
		warn(blkline, "no \"name - summary\" line: " l)
		name = l
		summary = ""
	}
	gsub(/[ \t]+/, " ", name)

	np = 0; nd = 0; ns = 0
	st = "purpose"
	for (i++; i <= nblk; i++) {
		l = blk[i]
		if (trim(l) == "") {
			if (st == "purpose" || st == "param")
				st = "desc"
			if (st == "desc" && nd && dt[nd] == "p" && dd[nd] != "")
				dd[++nd] = ""
			if (st == "desc" && nd && dt[nd] == "pre")
				dt[++nd] = "p"
			if (st == "sect" && st2[ns] != "")
				st2[ns] = st2[ns] "\n"
			continue
		}
		if (match(l, /^@[A-Za-z_][A-Za-z0-9_]*:/) || match(l, /^@\.\.\.:/)) {
			pn[++np] = substr(l, 2, RLENGTH - 2)
			pt[np] = trim(substr(l, RLENGTH + 1))
			st = "param"
			continue
		}
		if (match(l, /^(Context|Return|Returns|Note|Errors):/)) {
			sn[++ns] = substr(l, 1, RLENGTH - 1)
			st2[ns] = trim(substr(l, RLENGTH + 1))
			st = "sect"
			continue
		}
		if (st == "purpose") {
			summary = join(summary, l)
		} else if (st == "param") {
			pt[np] = join(pt[np], l)
		} else if (st == "sect") {
			if (st2[ns] ~ /\n$/)
				st2[ns] = st2[ns] trim(l)
			else
				st2[ns] = join(st2[ns], l)
		} else if (substr(l, 1, 1) == "\t") {
			if (!nd || dt[nd] != "pre") {
				if (nd && dt[nd] == "p" && dd[nd] == "")
					nd--
				dt[++nd] = "pre"
				dd[nd] = ""
			}
			dd[nd] = dd[nd] substr(l, 2) "\n"
		} else {
			if (!nd || dt[nd] != "p") {
				dt[++nd] = "p"
				dd[nd] = ""
			}
			dd[nd] = join(dd[nd], l)
		}
	}

	# checks against the declaration
	base = name
	sub(/^(struct|union|enum|typedef) /, "", base)
	sub(/\(\)$/, "", base)
	if (decl == "") {
		warn(blkline, name " is followed by no declaration")
	} else if (!match(" " decl " ", "[^A-Za-z0-9_]" base "[^A-Za-z0-9_]")) {
		warn(blkline, "the declaration after the block for " name " does not name it")
	} else {
		for (m = 1; m <= np; m++) {
			word = pn[m]
			if (word == "...")
				continue
			if (!match(" " decl " ", "[^A-Za-z0-9_]" word "[^A-Za-z0-9_]"))
				warn(blkline, name ": @" word " is not in the declaration")
		}
	}
	kind = name ~ /^(struct|union|enum) / ? "members" : "parameters"

	if (fmt == "man")
		man_entry()
	else if (fmt == "names")
		names_entry()
	else
		md_entry()
}

# ---- Markdown: one entry of Documentation/reference/api.md ------------------------------

function md_entry(    m, cur, hdr, level, i) {
	file_heading()
	if (pending_group != "") {
		printf "\n### %s\n", esc(cap(pending_group))
		pending_group = ""
	}
	level = grouped ? "####" : "###"
	printf "\n%s %s\n", level, name
	if (summary != "")
		printf "\n%s\n", para(cap(summary))
	if (decl != "") {
		printf "\n```c\n%s```\n", decl
	}
	if (np) {
		printf "\n**%s**\n\n", kind == "members" ? "Members" : "Parameters"
		for (m = 1; m <= np; m++)
			printf "- `%s`: %s\n", pn[m], inl(pt[m])
	}
	for (m = 1; m <= nd; m++) {
		if (dt[m] == "pre")
			printf "\n```\n%s```\n", expand(dd[m])
		else if (dd[m] != "")
			printf "\n%s\n", para(dd[m])
	}
	for (m = 1; m <= ns; m++) {
		cur = st2[m]
		sub(/\n+$/, "", cur)
		hdr = "**" sn[m] ":**"
		while ((i = index(cur, "\n")) > 0) {
			printf "\n%s %s\n", hdr, para(substr(cur, 1, i - 1))
			hdr = ""
			cur = substr(cur, i + 1)
			sub(/^\n+/, "", cur)
		}
		if (hdr == "")
			printf "\n%s\n", para(cur)
		else
			printf "\n%s %s\n", hdr, para(cur)
	}
}

# ---- man pages: one page per function, function-like macro and struct ----------

# The page a block gets, or "" (constants have none: api.md lists them).
function page_name(n) {
	if (n ~ /\(\)$/) {
		sub(/\(\)$/, "", n)
		return n
	}
	if (n ~ /^(struct|union|enum) /) {
		sub(/^(struct|union|enum) /, "", n)
		return n
	}
	return ""
}

function names_entry(    p) {
	p = page_name(name)
	if (p != "")
		print p
}

# roff text: backslashes escaped, and no line taken for a request.
function roff(s) {
	gsub(/\\/, "\\e", s)
	return s
}

function roff_line(s) {
	if (s ~ /^[.']/)
		s = "\\&" s
	return s
}

# Code: hyphens are minus signs too.
function roff_code(s) {
	s = roff(s)
	gsub(/-/, "\\-", s)
	return roff_line(s)
}

# Running text: @param in italics, name() and SEGPOOL_* in bold; the names
# that have pages are remembered for SEE ALSO.
function man_inl(s,    out, tok, b) {
	out = ""
	s = trim(s)
	while (match(s, RX)) {
		tok = substr(s, RSTART, RLENGTH)
		out = out roff(substr(s, 1, RSTART - 1))
		if (substr(tok, 1, 1) == "@") {
			out = out "\\fI\\%" roff_code(substr(tok, 2)) "\\fP"
		} else if (tok ~ /\(\)$/) {
			b = substr(tok, 1, length(tok) - 2)
			out = out "\\fB\\%" roff_code(b) "\\fP()"
			if (b in allpage)
				mention[cur_page, b] = 1
		} else {
			out = out "\\fB\\%" roff_code(tok) "\\fP"
		}
		s = substr(s, RSTART + RLENGTH)
	}
	return roff_line(out roff(s))
}

function man_section(sec) {
	if (sec == "Return" || sec == "Returns")
		return "RETURN VALUE"
	if (sec == "Note")
		return "NOTES"
	return toupper(sec)
}

function man_entry(    p, t, m, i, cur, lines, nl, what) {
	p = page_name(name)
	if (p == "")
		return
	cur_page = p
	if (!(p in pageno))
		pageno[p] = ++npages
	pagelist[pageno[p]] = p
	pagegrp[p] = cur_group
	what = summary
	sub(/\.$/, "", what)
	t = ".SH NAME\n" roff_code(p) " \\- " man_inl(what) "\n"
	t = t ".SH LIBRARY\nsegpool library\n.RI ( libsegpool \", \" \\-lsegpool )\n"
	t = t ".SH SYNOPSIS\n.nf\n.B #include <" inc ">\n.PP\n"
	# the export and compiler attributes say nothing to a reader
	what = public_decl(decl)
	nl = split(what, lines, "\n")
	for (i = 1; i <= nl; i++)
		if (i < nl || lines[i] != "")
			t = t roff_code(lines[i]) "\n"
	t = t ".fi\n"
	if (np) {
		what = kind == "members" ? "MEMBERS" : "ARGUMENTS"
		t = t ".SH " what "\n"
		for (m = 1; m <= np; m++)
			t = t ".TP\n.I " roff_code(pn[m]) "\n" man_inl(pt[m]) "\n"
	}
	t = t ".SH DESCRIPTION\n"
	cur = 0
	ex = ""
	for (m = 1; m <= nd; m++) {
		if (dt[m] == "pre") {
			# C code goes to EXAMPLES (man-pages(7)), as one
			# listing (blank lines apart); a table stays
			code = ""
			nl = split(expand(dd[m]), lines, "\n")
			for (i = 1; i <= nl; i++)
				if (i < nl || lines[i] != "")
					code = code roff_code(lines[i]) "\n"
			if (dd[m] ~ /;/) {
				ex = ex (ex != "" ? "\n" : "") code
			} else {
				t = t ".PP\n.in +4n\n.EX\n" code ".EE\n.in\n"
				cur++
			}
		} else if (dd[m] != "") {
			t = t ".PP\n" man_inl(dd[m]) "\n"
			cur++
		}
	}
	if (!cur)
		t = t man_inl(cap(summary)) "\n"
	errs = 0
	for (m = 1; m <= ns; m++)
		if (sn[m] == "Errors")
			errs = 1
	for (m = 1; m <= ns; m++) {
		t = t ".SH " man_section(sn[m]) "\n"
		cur = st2[m]
		sub(/\n+$/, "", cur)
		nl = split(cur, lines, "\n")
		for (i = 1; i <= nl; i++)
			if (trim(lines[i]) != "")
				t = t (i > 1 ? ".PP\n" : "") man_inl(cap(trim(lines[i]))) "\n"
		# ERRORS apart from RETURN VALUE, as man-pages(7) lays out
		if (!errs && man_section(sn[m]) == "RETURN VALUE")
			t = t man_errors(st2[m])
	}
	if (ex != "")
		t = t ".SH EXAMPLES\n.EX\n" ex ".EE\n"
	pagetxt[p] = t
}

# The declaration without the export and compiler attributes (SEGPOOL_API,
# SEGPOOL_WUR, SEGPOOL_MALLOC, SEGPOOL_ALLOC_SIZE(n), ...).
function public_decl(d) {
	gsub(/SEGPOOL_(API|WUR|MALLOC)[ \t]+/, "", d)
	gsub(/SEGPOOL_ALLOC_(SIZE2?|ALIGN)\([^)]*\)[ \t]*/, "", d)
	gsub(/SEGPOOL_(WUR|MALLOC)\n/, "\n", d)
	gsub(/\n[ \t]*\n/, "\n", d)
	sub(/^[ \t\n]+/, "", d)
	return d
}

# What an errno value means when the text gives no reason in parentheses.
function errno_default(e) {
	if (e == "ENOMEM") return "no memory was left"
	if (e == "EINVAL") return "an argument is not valid"
	if (e == "EEXIST") return "the name is taken"
	if (e == "ENOENT") return "no such object"
	if (e == "EBUSY") return "the object is in use"
	if (e == "EAGAIN") return "try again"
	if (e == "EPERM" || e == "EACCES") return "not permitted"
	if (e == "ENOSPC") return "no room left"
	if (e == "ERANGE" || e == "EOVERFLOW") return "a value out of range"
	if (e == "ENAMETOOLONG") return "the name is too long"
	if (e == "EIO") return "writing failed"
	if (e == "EMFILE" || e == "ENFILE") return "too many files are open"
	if (e == "ENODEV") return "no such device"
	if (e == "EFAULT") return "a bad address"
	if (e == "ENOSYS" || e == "EOPNOTSUPP" || e == "ENOTSUP")
		return "not supported here"
	return "see RETURN VALUE"
}

# An ERRORS section from the errno values a Return: text names, each with
# the reason in parentheses after it ("EINVAL (NULL cache, ...)").
function man_errors(s,    out, e, i, c, depth, why, n, order, reason) {
	n = 0
	split("", reason)
	while (match(s, /E[A-Z][A-Z0-9]+/)) {
		e = substr(s, RSTART, RLENGTH)
		c = substr(s, RSTART - 1, 1)
		s = substr(s, RSTART + RLENGTH)
		if ((c ~ /[A-Za-z0-9_]/ && RSTART > 1) || substr(s, 1, 1) ~ /[A-Za-z0-9_]/)
			continue
		if (e !~ /^E(INVAL|NOMEM|EXIST|NOENT|BUSY|AGAIN|PERM|ACCES|NOSPC|RANGE|OVERFLOW|NAMETOOLONG|NOSYS|OPNOTSUPP|NOTSUP|FAULT|IO|NODEV|SRCH|TIMEDOUT|DEADLK|BADF|CANCELED|ALREADY|NOTEMPTY|MFILE|NFILE|ROFS|XDEV|NXIO|LOOP|INTR|CHILD|PIPE|NOTDIR|ISDIR|FBIG)$/)
			continue
		why = ""
		# "-EINVAL (errno EINVAL) for ...": the reason follows
		if (match(s, /^[ \t]*\(errno E[A-Z0-9]+\)/))
			s = substr(s, RLENGTH + 1)
		if (match(s, /^[ \t]*(for|when|if|on) [^;.)]*/)) {
			why = trim(substr(s, 1, RLENGTH))
			s = substr(s, RLENGTH + 1)
			# "..., EEXIST if ...": the next value starts there
			if (match(why, /,?[ \t]+(or[ \t]+)?-?E[A-Z][A-Z0-9]+/)) {
				s = substr(why, RSTART) s
				why = substr(why, 1, RSTART - 1)
			}
		} else if (match(s, /^[ \t]*\(/)) {
			s = substr(s, RLENGTH + 1)
			depth = 1
			for (i = 1; i <= length(s) && depth; i++) {
				c = substr(s, i, 1)
				if (c == "(")
					depth++
				else if (c == ")")
					depth--
				if (depth)
					why = why c
			}
			s = substr(s, i)
		}
		if (!(e in reason)) {
			order[++n] = e
			reason[e] = why
		} else if (why != "") {
			reason[e] = reason[e] (reason[e] != "" ? "; " : "") why
		}
	}
	if (!n)
		return ""
	out = ".SH ERRORS\n"
	for (i = 1; i <= n; i++) {
		e = order[i]
		why = reason[e] != "" ? reason[e] : errno_default(e)
		sub(/\.$/, "", why)
		out = out ".TP\n.B " e "\n" man_inl(cap(why) ".") "\n"
	}
	return out
}

function man_write(    i, j, k, p, q, f, n, sa, tmp, seen) {
	for (i = 1; i <= npages; i++) {
		p = pagelist[i]
		# SEE ALSO: the group, then what the text names, by name
		n = 0
		split("", seen)
		for (j = 1; j <= npages; j++) {
			q = pagelist[j]
			if (q != p && pagegrp[q] == pagegrp[p] && !(q in seen)) {
				sa[++n] = q
				seen[q] = 1
			}
		}
		for (j = 1; j <= nall; j++) {
			q = allv[j]
			if (q != p && ((p, q) in mention) && !(q in seen)) {
				sa[++n] = q
				seen[q] = 1
			}
		}
		for (j = 2; j <= n; j++)
			for (k = j; k > 1 && sa[k - 1] > sa[k]; k--) {
				tmp = sa[k]; sa[k] = sa[k - 1]; sa[k - 1] = tmp
			}
		f = mandir "/" p ".3"
		printf ".\\\" SPDX-License-Identifier: MIT\n" > f
		printf ".\\\" Generated by scripts/gen-api-doc.sh from %s: do not edit.\n", rel > f
		printf ".TH %s 3 \"\" \"segpool %s\" \"segpool Library Functions\"\n", p, version > f
		printf "%s", pagetxt[p] > f
		printf ".SH SEE ALSO\n.ad l\n" > f
		for (j = 1; j <= n; j++)
			printf ".BR \\%%%s (3),\n", roff_code(sa[j]) > f
		printf ".BR segpool (7)\n" > f
		close(f)
		print p
	}
}

# ---- the scan ---------------------------------------------------------------

BEGIN {
	RX = "@[A-Za-z_][A-Za-z0-9_]*(->[A-Za-z_][A-Za-z0-9_]*)*|[A-Za-z_][A-Za-z0-9_]*\\(\\)|SEGPOOL_[A-Z0-9_]+"
	st = "code"
	nwarn = 0
	headed = 0
	nov = 0
	ov_state = 0	# 0 not seen, 1 inside, 2 done
	pending_group = ""
	cur_group = ""
	npages = 0
	nall = split(pages, allv, " ")
	for (i = 1; i <= nall; i++)
		allpage[allv[i]] = 1
}

# the opening comment of the header: its summary and paragraphs
st == "code" && ov_state == 0 && /^\/\*[ \t]*$/ {
	ov_state = 1
	next
}
ov_state == 1 {
	if ($0 ~ /^[ \t]*\*\//) {
		ov_state = 2
		next
	}
	l = $0
	sub(/^[ \t]*\*[ \t]?/, "", l)
	if (nov == 0 && trim(l) != "") {
		sub(/^[^ \t]+[ \t]+-[ \t]+/, "", l)
		ov[++nov] = cap(trim(l))
	} else if (trim(l) == "") {
		if (ov[nov] != "")
			ov[++nov] = ""
	} else {
		ov[nov] = join(ov[nov], l)
	}
	next
}

# inside a kernel-doc block
st == "doc" {
	l = $0
	done = 0
	if ((i = index(l, "*/")) > 0) {
		l = substr(l, 1, i - 1)
		done = 1
	}
	sub(/^[ \t]*\*/, "", l)
	if (substr(l, 1, 1) == " ")
		l = substr(l, 2)
	sub(/[ \t]+$/, "", l)
	if (!(done && trim(l) == ""))
		blk[++nblk] = l
	if (done) {
		st = "decl"
		decl = ""
		dkind = ""
	}
	next
}

# the declaration after a block
st == "decl" {
	if (decl == "" && $0 ~ /^[ \t]*$/)
		next
	if (decl == "" && ($0 ~ /^[ \t]*\/\*/ || $0 ~ /^#(if|endif|else|include)/)) {
		emit()
		st = "code"
		# fall through: the line is looked at again below
	} else {
		if (decl == "") {
			if ($0 ~ /^#[ \t]*define/)
				dkind = "define"
			else if ($0 ~ /^(struct|union|enum)[ \t][^;(]*\{/)
				dkind = "struct"
			else
				dkind = "proto"
		}
		# a static inline function: its head is the prototype
		if (dkind == "proto" && decl != "" && $0 ~ /^\{/) {
			emit()
			st = "code"
			next
		}
		decl = decl expand($0) "\n"
		if ((dkind == "define" && $0 !~ /\\[ \t]*$/) ||
		    (dkind == "struct" && $0 ~ /^\}/) ||
		    (dkind == "proto" && index($0, ";") > 0)) {
			emit()
			st = "code"
		}
		next
	}
}

st == "code" && /^[ \t]*\/\*\*/ {
	nblk = 0
	blkline = FNR
	l = $0
	sub(/^[ \t]*\/\*\*[ \t]*/, "", l)
	if ((i = index(l, "*/")) > 0) {
		l = trim(substr(l, 1, i - 1))
		if (l != "")
			blk[++nblk] = l
		st = "decl"
		decl = ""
		dkind = ""
	} else {
		if (trim(l) != "")
			blk[++nblk] = trim(l)
		st = "doc"
	}
	next
}

st == "code" && /^\/\* --- / {
	g = $0
	sub(/^\/\* --- /, "", g)
	sub(/[ \t]*-*[ \t]*\*\/[ \t]*$/, "", g)
	pending_group = trim(g)
	cur_group = pending_group
	next
}

END {
	if (st == "decl")
		emit()
	else if (st == "doc")
		warn(blkline, "unterminated kernel-doc block")
	if (fmt == "man")
		man_write()
	close("cat 1>&2")
	exit (nwarn ? 3 : 0)
}
