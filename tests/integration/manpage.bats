#!/usr/bin/env bats
# The man page (docs/brig.8.md) must keep up with the command line: every
# command of `brig --help` has its own "### NAME" section, every option a
# command's --help shows appears in that section, the global options in
# GLOBAL OPTIONS, and the page documents no command brig does not have.
# Also checks that both converters (go-md2man, docs/md2roff.awk) give roff
# that groff reads without warnings.
# brig-only: it compares brig's own --help with brig's own page.

load helpers

MANPAGE="$SRCDIR/docs/brig.8.md"

setup() {
	requires brig
	need_built "$MANPAGE"
	TMP="$(mktemp -d /tmp/brig-test-manpage.XXXXXX)"
}

teardown() {
	if [ -n "${TMP:-}" ]; then rm -rf "$TMP"; fi
}

# The command names of `brig --help`, one per line.
help_commands() {
	"$RUNTIME" --help | awk '/^Commands:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }'
}

# section_of HEADING_REGEX: the lines of the page from the heading that
# matches to the next heading of the same or a higher level.
section_of() {
	awk -v re="$1" '
		$0 ~ re { on = 1; level = index($0, " "); next }
		on && /^#+ / && index($0, " ") <= level { exit }
		on { print }' "$MANPAGE"
}

# The long options (--name) in stdin, one per line, without duplicates.
long_options() {
	grep -oE -- '(^|[^[:alnum:]-])--[[:alpha:]][[:alnum:]-]*' | sed 's/^[^-]*--/--/' | sort -u
}

# The short options given as "--long, -x" in stdin, one per line.
short_options() {
	grep -oE -- '--[[:alpha:]][[:alnum:]-]*, -[[:alpha:]]([^[:alnum:]-]|$)' |
		sed -E 's/.*, (-[[:alpha:]]).*/\1/' | sort -u
}

# check_options WHAT HELP_TEXT SECTION_TEXT: every option of the help text is
# in the section, in bold (**--opt**); prints each one that is missing.
check_options() {
	local what="$1" help="$2" section="$3" opt missing=0
	for opt in $(long_options <<<"$help") $(short_options <<<"$help"); do
		if ! grep -qF -- "**$opt**" <<<"$section"; then
			echo "$what: $opt is in --help but not in its section of brig.8.md"
			missing=1
		fi
	done
	return "$missing"
}

@test "manpage: --help lists commands and they have options to compare" {
	# Guards the checks below against passing on an empty list.
	run help_commands
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -ge 10 ]
	[[ " ${lines[*]} " == *" create "* ]]
	run long_options <<<"$("$RUNTIME" exec --help)"
	[[ " ${lines[*]} " == *" --process "* ]]
	run short_options <<<"$("$RUNTIME" exec --help)"
	[[ " ${lines[*]} " == *" -p "* ]]
}

@test "manpage: every command of brig --help has a section" {
	local cmd missing=0
	for cmd in $(help_commands); do
		if ! grep -qxF "### $cmd" "$MANPAGE"; then
			echo "command $cmd has no '### $cmd' section in brig.8.md"
			missing=1
		fi
	done
	[ "$missing" -eq 0 ]
}

@test "manpage: every section under COMMANDS is a command of brig --help" {
	local cmds sec extra=0
	cmds=" $(help_commands | tr '\n' ' ') "
	while read -r sec; do
		if [[ "$cmds" != *" $sec "* ]]; then
			echo "brig.8.md documents '$sec', which brig --help does not list"
			extra=1
		fi
	done < <(section_of '^## COMMANDS$' | sed -n 's/^### //p')
	[ "$extra" -eq 0 ]
}

@test "manpage: every option of each command's --help is in its section" {
	local cmd help section missing=0
	for cmd in $(help_commands); do
		help="$("$RUNTIME" "$cmd" --help)"
		section="$(section_of "^### $cmd\$")"
		[ -n "$section" ] || { echo "no section for $cmd"; missing=1; continue; }
		check_options "brig $cmd" "$help" "$section" || missing=1
	done
	[ "$missing" -eq 0 ]
}

@test "manpage: every global option of brig --help is in GLOBAL OPTIONS" {
	local help section
	help="$("$RUNTIME" --help | sed -n '/^Global options:/,$p')"
	section="$(section_of '^## GLOBAL OPTIONS$')"
	[ -n "$section" ]
	run long_options <<<"$help"
	[ "${#lines[@]}" -ge 5 ]
	check_options "brig" "$help" "$section"
}

@test "manpage: the page has the sections of a man page" {
	local s
	head -n1 "$MANPAGE" | grep -q '^% BRIG 8'
	for s in NAME SYNOPSIS DESCRIPTION "GLOBAL OPTIONS" COMMANDS "EXIT STATUS" FILES \
		ENVIRONMENT EXAMPLES "SEE ALSO"; do
		grep -qxF "## $s" "$MANPAGE" || { echo "missing section $s"; return 1; }
	done
}

# render_check FILE: groff reads FILE without warnings and the text has
# every command as a subsection heading.
render_check() {
	local cmd
	run groff -man -Tutf8 -ww -z "$1"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	MANWIDTH=80 man -l "$1" >"$TMP/page.txt" 2>"$TMP/man.err"
	! [ -s "$TMP/man.err" ] || { cat "$TMP/man.err"; return 1; }
	grep -q '^NAME' "$TMP/page.txt"
	grep -q '^EXIT STATUS' "$TMP/page.txt"
	for cmd in $(help_commands); do
		grep -qE "^   $cmd\$" "$TMP/page.txt" ||
			{ echo "rendered page has no '$cmd' subsection"; return 1; }
	done
	# Markdown that leaked through unconverted.
	! grep -nE '\*\*|^#|^```|^: ' "$TMP/page.txt" || false
}

@test "manpage: the awk fallback renders valid roff" {
	requires program:groff program:man
	awk -f "$SRCDIR/docs/md2roff.awk" "$MANPAGE" >"$TMP/brig.8"
	render_check "$TMP/brig.8"
}

@test "manpage: go-md2man renders valid roff" {
	requires program:groff program:man program:go-md2man
	go-md2man -in "$MANPAGE" -out "$TMP/brig.8"
	render_check "$TMP/brig.8"
}
