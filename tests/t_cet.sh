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
tap_done
