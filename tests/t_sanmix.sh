#!/bin/bash
# A program built with -fsanitize=address or thread, linked with a libusched
# built without it, stops at usched_run() with a message naming the fix,
# rather than reporting a false error at the first block (or missing real
# ones). Built without a sanitizer, or with UBSan, the same program runs.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/tap.sh"

env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u O make -C "$root" -s \
	--no-print-directory O="$tmp" CFLAGS="-O2 -g" "$tmp/libusched.a" \
	>"$tmp/log" 2>&1
rc=$?
[ $rc = 0 ] || sed 's/^/# /' "$tmp/log"
ok $rc "libusched.a builds without sanitizers"

hello=$root/examples/hello.c
want=$'ping 0\npong 0\nping 1\npong 1\nping 2\npong 2'
cc -O2 -I"$root" "$hello" "$tmp/libusched.a" -pthread -o "$tmp/plain" &&
	[ "$("$tmp/plain")" = "$want" ]
ok $? "examples/hello.c, built without a sanitizer, runs"

for compiler in gcc clang; do
	command -v $compiler >/dev/null || continue
	for san in address thread; do
		prog=$tmp/$compiler-$san
		if ! echo 'int main(void) { return 0; }' |
		   $compiler -fsanitize=$san -x c - -o "$prog" 2>/dev/null ||
		   ! "$prog"; then
			echo "# skipping $compiler -fsanitize=$san: it does not build or run here"
			continue
		fi
		$compiler -O1 -g -fsanitize=$san -I"$root" "$hello" \
			"$tmp/libusched.a" -pthread -o "$prog"
		ok $? "$compiler -fsanitize=$san: hello.c links with the plain library"
		# A shell of its own, whose "Aborted" goes nowhere.
		sh -c '"$0" >"$1" 2>"$2"' "$prog" "$tmp/out" "$tmp/err" \
			2>/dev/null
		rc=$?
		[ $rc != 0 ] && ! grep -q ping "$tmp/out" &&
			grep -q "built with -fsanitize=$san and libusched is not" \
				"$tmp/err" &&
			! grep -q "ERROR: \|WARNING: " "$tmp/err"
		ok $? "it stops before any thread runs (exit $rc), and says why"
	done
	# UBSan keeps no state of the stack that a block would have to carry:
	# the plain library is right for it.
	prog=$tmp/$compiler-undefined
	if ! echo 'int main(void) { return 0; }' |
	   $compiler -fsanitize=undefined -x c - -o "$prog" 2>/dev/null ||
	   ! "$prog"; then
		echo "# skipping $compiler -fsanitize=undefined: it does not build or run here"
		continue
	fi
	$compiler -O1 -g -fsanitize=undefined -fno-sanitize-recover=all \
		-I"$root" "$hello" "$tmp/libusched.a" -pthread -o "$prog" &&
		[ "$("$prog" 2>"$tmp/err")" = "$want" ] && ! [ -s "$tmp/err" ]
	ok $? "$compiler -fsanitize=undefined: hello.c with the plain library runs, silent"
done
tap_done
