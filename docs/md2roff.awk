# Turn docs/brig.8.md into man(7) roff when go-md2man is not installed.
# It knows only the markdown the man page uses: a "% TITLE SECTION ..."
# title line, # / ## headings (.SH) and ### headings (.SS), paragraphs,
# "term" + ": definition" lists (.TP), "- " bullets, ``` fenced blocks,
# and **bold**, *italic* and `code` inline. Plain POSIX awk (mawk works).

# Replace every delimiter-enclosed span of s (delim "**", "*" or "`") by
# on text off; a lone delimiter is kept as it is.
function span(s, delim, on, off,    out, i, j, n) {
	n = length(delim)
	out = ""
	while ((i = index(s, delim)) > 0) {
		j = index(substr(s, i + n), delim)
		if (j <= 1)
			break
		out = out substr(s, 1, i - 1) on substr(s, i + n, j - 1) off
		s = substr(s, i + n + j - 1 + n)
	}
	return out s
}

# Escape roff's specials, then map the inline markup to fonts.
function inline(s) {
	gsub(/\\/, "\\e", s)
	gsub(/-/, "\\-", s)
	s = span(s, "`", "\\fB", "\\fR")
	s = span(s, "**", "\\fB", "\\fR")
	s = span(s, "*", "\\fI", "\\fR")
	if (s ~ /^[.']/)
		s = "\\&" s
	return s
}

# A code line: no fonts, but still no escapes or requests by accident.
function literal(s) {
	gsub(/\\/, "\\e", s)
	gsub(/-/, "\\-", s)
	if (s ~ /^[.']/)
		s = "\\&" s
	return s
}

function trim(s) {
	sub(/^[ \t]+/, "", s)
	sub(/[ \t]+$/, "", s)
	return s
}

{ line[NR] = $0 }

END {
	print ".\\\" Generated from brig.8.md by md2roff.awk; edit the markdown."
	para = 1
	for (i = 1; i <= NR; i++) {
		l = line[i]
		if (code) {
			if (l ~ /^```/) {
				print ".fi"
				print ".RE"
				code = 0
				para = 1
			} else
				print literal(l)
			continue
		}
		if (l ~ /^```/) {
			print ".PP"
			print ".RS 4"
			print ".nf"
			code = 1
			continue
		}
		if (l ~ /^% /) {
			# .TH resets hyphenation: turn it (and justification) off after.
			print ".TH " substr(l, 3)
			print ".nh"
			print ".ad l"
			continue
		}
		if (l ~ /^###+ /) {
			sub(/^###+ +/, "", l)
			print ".SS \"" inline(trim(l)) "\""
			para = 0
			continue
		}
		if (l ~ /^##? /) {
			sub(/^##? +/, "", l)
			print ".SH \"" inline(trim(l)) "\""
			para = 0
			continue
		}
		if (l ~ /^[ \t]*$/) {
			para = 1
			continue
		}
		if (i < NR && line[i + 1] ~ /^: /) {
			print ".TP"
			print inline(trim(l))
			para = 0
			continue
		}
		if (l ~ /^: /) {
			print inline(trim(substr(l, 3)))
			continue
		}
		if (l ~ /^[-*] /) {
			print ".IP \\(bu 2"
			print inline(trim(substr(l, 3)))
			para = 0
			continue
		}
		if (para) {
			print ".PP"
			para = 0
		}
		print inline(trim(l))
	}
	if (code) {
		print ".fi"
		print ".RE"
	}
}
