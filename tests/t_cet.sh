#!/bin/bash
# Built with shadow stacks asked for (-fcf-protection=full, the default of
# some distributions), the library does not claim to support them: usched.o
# lacks the SHSTK property, so programs linking it run without one.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/tap.sh"

cc=${CC:-cc}
if ! command -v readelf >/dev/null ||
   [[ $($cc -dumpmachine 2>/dev/null) != x86_64* ]]; then
	echo "1..0 # SKIP not x86-64, or no readelf"
	exit 0
fi
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u O make -C "$root" -s \
	--no-print-directory O="$tmp" CFLAGS="-O2 -fcf-protection=full" \
	"$tmp/obj/usched.o" "$tmp/obj/rr.o" >"$tmp/log" 2>&1
rc=$?
[ $rc = 0 ] || sed 's/^/# /' "$tmp/log"
ok $rc "usched.o and rr.o build with -fcf-protection=full"
readelf -n "$tmp/obj/rr.o" | grep -q SHSTK
ok $? "rr.o claims shadow stacks (the flag took effect)"
! readelf -n "$tmp/obj/usched.o" | grep -q SHSTK
ok $? "usched.o does not"

# The flag is x86's: not given when CFLAGS name another target.
if command -v clang >/dev/null &&
   [ -e /usr/aarch64-linux-gnu/include/stdio.h ]; then
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u O make -C "$root" -s \
		--no-print-directory O="$tmp/a64" CC=clang \
		CFLAGS="--target=aarch64-linux-gnu -O2" "$tmp/a64/obj/usched.o" \
		>"$tmp/a64.log" 2>&1
	rc=$?
	[ $rc = 0 ] || sed 's/^/# /' "$tmp/a64.log"
	ok $rc "usched.o builds with clang --target=aarch64-linux-gnu"
fi

# SafeStack's and ShadowCallStack's stacks are per native thread, and would
# silently mix the threads' frames: the header refuses them.
if command -v clang >/dev/null; then
	echo '#include "usched.h"' >"$tmp/ss.c"
	! clang -fsanitize=safe-stack -I"$root" -c "$tmp/ss.c" \
		-o "$tmp/ss.o" 2>"$tmp/ss.log"
	ok $? "a program using usched.h does not compile with SafeStack"
	grep -q "safe-stack" "$tmp/ss.log"
	ok $? "and the compiler says why"
fi
tap_done
