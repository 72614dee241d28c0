#!/bin/bash
# The build follows its compiler and flags: a make with other CFLAGS or
# another CC rebuilds the library, the tests and the benchmarks under the
# same O, and a make with the same ones rebuilds nothing. The benchmarks,
# in one directory whatever O is, follow the O they were linked from. The
# debug info's producer lines say which flags an object or program was
# built with. And the C and C++ sources, the scripts, the Makefiles and
# the Markdown keep to 80 columns, but for strings that end their line and
# what cannot wrap.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/tap.sh"

# mk CC CFLAGS TARGET...: a make of its own into $tmp/out (or $out); its
# log in $tmp/log.
mk() {
	local cc=$1 cflags=$2
	shift 2
	own_make "$tmp/log" "$root" O="${out:-$tmp/out}" CC="$cc" \
		CFLAGS="$cflags" "$@"
}

# compiled: how many sources the last make compiled
compiled() {
	grep -c -- ' -c ' "$tmp/log"
}

# built_with FILE FLAG: FILE has producer lines, and each names FLAG
built_with() {
	readelf --debug-dump=info "$1" 2>/dev/null | grep DW_AT_producer |
		grep -v -- " $2\( \|$\)" | grep -q . && return 1
	readelf --debug-dump=info "$1" 2>/dev/null | grep -q DW_AT_producer
}

objs=$(cd "$root" && ls usched.c rr.c ll.c sched/*.c | wc -l)
t=tests/t_basic
# The benchmarks go to bench/bin unless told: here, to $tmp/bin.
ring=(BENCH_BIN="$tmp/bin" "$tmp/bin/ring")

# again CFLAGS: the same make once more compiles and links nothing
again() {
	mk cc "$1" all "$tmp/out/$t" "${ring[@]}" && [ "$(compiled)" = 0 ] &&
		! grep -q -- "-o $tmp/bin/ring" "$tmp/log"
	ok $? "the same make with $1 again compiles nothing ($(compiled)" \
		"compiled)"
}

mk cc "-O2 -g" all "$tmp/out/$t" "${ring[@]}"
ok $? "make all, $t and the ring with -O2"
built_with "$tmp/out/obj/ll.o" -O2
ok $? "ll.o is built with -O2"

again "-O2 -g"

touch "$tmp/before"
mk cc "-O1 -g" all "$tmp/out/$t" "${ring[@]}" && [ "$(compiled)" -gt "$objs" ]
ok $? "with -O1, it compiles the library's $objs sources and the test's" \
	"again ($(compiled) compiled)"
bad=
for o in "$tmp"/out/obj/*.o "$tmp"/out/obj/sched/*.o \
	 "$tmp/out/obj/$t.o"; do
	built_with "$o" -O1 || bad+=" ${o#$tmp/out/obj/}"
done
[ -z "$bad" ]
ok $? "every object is now built with -O1${bad:+ (not:$bad)}"
# The archive's objects are renamed copies: check one of them.
(cd "$tmp" && ar x "$tmp/out/libusched.a" dispatcher.o) &&
	built_with "$tmp/dispatcher.o" -O1
ok $? "so is libusched.a's dispatcher"
[ "$tmp/out/$t" -nt "$tmp/before" ]
ok $? "$t is linked again"
# ... its own ring.c among the units so built, not only the library's
built_with "$tmp/bin/ring" -O1 &&
	readelf --debug-dump=info "$tmp/bin/ring" |
		grep -q "DW_AT_name .*ring\.c$"
ok $? "the ring is built again, with -O1"

again "-O1 -g"

# The benchmarks' directory is shared: a make from another O relinks them
# against its own library, and the first O's next make relinks them back.
out=$tmp/other mk cc "-O1 -g" "${ring[@]}" &&
	grep -q -- "$tmp/other/libusched.a -o $tmp/bin/ring" "$tmp/log"
ok $? "a make from another O links the ring against that O's library"
mk cc "-O1 -g" "${ring[@]}" &&
	grep -q -- "$tmp/out/libusched.a -o $tmp/bin/ring" "$tmp/log"
ok $? "and the first O's make links it back"

if command -v clang >/dev/null; then
	mk clang "-O1 -g" all && [ "$(compiled)" = "$objs" ]
	ok $? "clang, same flags: the library again ($(compiled) compiled)"
	readelf --debug-dump=info "$tmp/out/obj/ll.o" |
		grep -m1 DW_AT_producer | grep -q clang
	ok $? "ll.o is clang's"
else
	echo "# skipping the change of compiler: no clang"
fi

# The C and C++ peers' makes likewise, into $tmp/pbin.
pk() {
	local dir=$1 cflags=$2
	shift 2
	own_make "$tmp/log" "$root/bench/peers/$dir" BIN="$tmp/pbin" \
		CFLAGS="$cflags" CXXFLAGS="$cflags" "$@"
}
for p in c:ring-pthread cpp:ring-cpp; do
	prog=$tmp/pbin/${p#*:}
	if [ "${p#*:}" = ring-cpp ] &&
	   ! command -v "${CXX:-g++}" >/dev/null; then
		echo "# skipping ring-cpp: no C++ compiler"
		continue
	fi
	pk ${p%%:*} -O2 "$prog" && pk ${p%%:*} -O1 "$prog" &&
		grep -q -- "-o $prog" "$tmp/log" && pk ${p%%:*} -O1 "$prog" &&
		! grep -q -- "-o $prog" "$tmp/log"
	ok $? "${p#*:}: its make builds it again with -O1, and not twice"
done

# A change only quoting shows, kept as it is.
mk cc "-O1 -g -DV=x" all && mk cc "-O1 -g -DV='\"x\"'" all &&
	[ "$(compiled)" = "$objs" ]
ok $? "-DV=x, then -DV='\"x\"': the library again ($(compiled) compiled)"

# wide KIND...: FILE:LINE: N columns for each line over 80 columns in the
# tracked files of those kinds: c (C, C++), script (shell, Python), make
# and md (Markdown, but for bench/report/, graph.py's output). Tabs are of
# 8, and a character is one column: its UTF-8 continuation bytes are
# dropped first. As in the kernel, a string that ends its line and starts
# within the 80 columns is let run past them: a message split in two is
# not found by grep. In a script the string has a blank (a message, not a
# quoted word), and closing brackets, a separator, a continuation or >&2
# may follow it. Nor can a line of one word (a URL, a path), a Markdown
# table row or heading, or a code block be wrapped.
wide_awk='
kind == "md" && /^ *(```|~~~)/ { code = !code; next }
length($0) <= 80 || code || /^ *([#*>\/-]+ +)?[^ ]+$/ { next }
kind == "md" && /^(    | *[|#])/ { next }
kind == "c" && match($0, /"([^"\\]|\\.)*"[ ]*[,;)]*[ ]*$/) &&
	RSTART <= 80 { next }
kind == "script" &&
	match($0, /"([^"\\]|\\.)* ([^"\\]|\\.)*"([] ,;)}|&\\]|>&2)*$/) &&
	RSTART <= 80 { next }
{ print f ":" FNR ": " length($0) " columns" }'
wide() {
	local kinds=" $* " f kind
	cd "$root" && git ls-files | while IFS= read -r f; do
		[ -f "$f" ] || continue		# deleted, not yet committed
		case $f in
		*.c|*.h|*.cpp) kind=c ;;
		bench/report/*) continue ;;
		*.md) kind=md ;;
		*Makefile|*.mk) kind=make ;;
		*.sh|*.py) kind=script ;;
		*) [ "$(head -c 2 "$f")" = '#!' ] && kind=script || continue ;;
		esac
		[[ $kinds == *" $kind "* ]] || continue
		LC_ALL=C sed 's/[\x80-\xbf]//g' "$f" | expand |
			awk -v f="$f" -v kind=$kind "$wide_awk"
	done
}

# lines KINDS NAME: a point that the tracked files of those kinds have no
# line wide() finds, skipped outside a git checkout
lines() {
	local long
	if [ -z "$(git -C "$root" ls-files 2>/dev/null)" ]; then
		ok 0 "$2 # SKIP not a git checkout"
		return
	fi
	long=$(wide $1)
	[ -n "$long" ] && sed 's/^/# /' <<<"$long"
	[ -z "$long" ]
	ok $? "$2${long:+ ($(wc -l <<<"$long") lines over)}"
}
lines c "the tracked C and C++ sources' lines fit 80 columns (tabs of 8)"
lines "script make md" "the tracked shell, Python, make and Markdown files' lines fit 80 columns (tabs of 8)"

tap_done
