#!/bin/bash
# Built with shadow stacks asked for (-fcf-protection=full, the default of
# some distributions), the library does not claim to support them: usched.o
# lacks the SHSTK property, so programs linking it run without one. Other
# modes that keep something of a thread's stack elsewhere, and ABIs of
# 32-bit pointers, usched.h refuses to compile under.
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
		CFLAGS="--target=aarch64-linux-gnu -O2" \
		"$tmp/a64/obj/usched.o" >"$tmp/a64.log" 2>&1
	rc=$?
	[ $rc = 0 ] || sed 's/^/# /' "$tmp/a64.log"
	ok $rc "usched.o builds with clang --target=aarch64-linux-gnu"
fi

# refused WHY COMPILER ARGS...: usched.h does not compile, and says WHY.
echo '#include "usched.h"' >"$tmp/ss.c"
refused() {
	local why=$1 cc=$2
	shift 2
	command -v "$cc" >/dev/null || return 0
	! "$cc" "$@" -I"$root" -c "$tmp/ss.c" -o "$tmp/ss.o" 2>"$tmp/ss.log"
	ok $? "$cc $*: a program using usched.h does not compile"
	grep -q "$why" "$tmp/ss.log"
	ok $? "and the compiler says why"
}
# SafeStack's stack is per native thread, and would silently mix the
# threads' frames. HWAddressSanitizer tags stack memory: the tags would not
# follow a copy.
refused "safe-stack" clang -fsanitize=safe-stack
refused "hwaddress is not supported" clang --target=aarch64-linux-gnu \
	-fsanitize=hwaddress
refused "hwaddress is not supported" aarch64-linux-gnu-gcc -fsanitize=hwaddress
# The assembly's offsets are of 64-bit words.
refused "64-bit pointers only" gcc -mx32
refused "not i386" gcc -m32
refused "64-bit pointers only" aarch64-linux-gnu-gcc -mabi=ilp32
tap_done
