#!/bin/bash
# make check-matrix: the test suite under every compiler and optimisation
# level with the stack protector and _FORTIFY_SOURCE, with -flto, under
# ASan+UBSan, UBSan alone and TSan, under valgrind, and cross-compiled for
# aarch64 under qemu. One prove run over all of it. A configuration whose
# tools are missing is skipped with one line (CI installs them all).
set -euo pipefail
cd "$(dirname "$0")/.."

have() { command -v "$1" >/dev/null 2>&1; }
tests=()

# build NAME CC CONFIG [make variables...]: with the Makefile's
# CFLAGS_CONFIG and $MORE_CFLAGS, warnings as errors
build() {
	local name=$1 cc=$2 cflags
	cflags=$(make -s --no-print-directory print-cflags-$3)
	cflags="$cflags ${MORE_CFLAGS:-} -Werror"
	shift 3
	make -s --no-print-directory O="build/$name" CC="$cc" CFLAGS="$cflags" \
		"$@" check-build >/dev/null
}

# built NAME: the tests of tests/t_*.c as built in build/NAME, not what
# else is there (a removed test's old binary).
built() {
	local src
	for src in tests/t_*.c; do
		src=${src#tests/}
		echo "build/$1/tests/${src%.c}"
	done
}

# wrap NAME COMMAND...: scripts in build/NAME/run that run each test of
# build/NAME through COMMAND, for prove.
wrap() {
	local name=$1 t
	shift
	mkdir -p "build/$name/run"
	for t in $(built "$name"); do
		[ -x "$t" ] || continue
		printf '#!/bin/sh\nexec %s %s "$@"\n' "$*" "$PWD/$t" \
			>"build/$name/run/$(basename "$t")"
		chmod +x "build/$name/run/$(basename "$t")"
		tests+=("build/$name/run/$(basename "$t")")
	done
}

for cc in gcc clang; do
	if ! have $cc; then
		echo "skipping $cc: not installed"
		continue
	fi
	# lto: link-time optimisation inlines across files, into the tests too
	for c in O0 O1 O2 O3 Os lto asan ubsan; do
		build "m-$cc-$c" $cc $c
		tests+=($(built "m-$cc-$c"))
	done
done

if have clang; then
	build tsan clang tsan
	tests+=($(built tsan))
fi

if have valgrind; then
	build valgrind gcc O2
	# fair-sched: valgrind runs one native thread at a time, and by
	# default lets a spinning one keep its turn (t_sched: 20 s to 4 min)
	wrap valgrind env USCHED_TEST_THREADS=20000 valgrind -q \
		--fair-sched=yes --error-exitcode=9 --leak-check=full \
		--errors-for-leak-kinds=definite --child-silent-after-fork=yes
else
	echo "skipping valgrind: not installed"
fi

if have aarch64-linux-gnu-gcc && have qemu-aarch64; then
	qemu="qemu-aarch64 -L /usr/aarch64-linux-gnu"
	# a64 NAME CONFIG: cross-compiled, and run under qemu
	a64() {
		build "$1" aarch64-linux-gnu-gcc "$2" AR=aarch64-linux-gnu-ar
		wrap "$1" env USCHED_TEST_THREADS=200000 \
			"USCHED_TEST_EXEC='$qemu'" $qemu
	}
	a64 a64-O0 O0
	# Signing return addresses against the stack pointer, as some
	# distributions build for aarch64; qemu checks them: a thread's
	# frames must come back at the very addresses they were signed at.
	MORE_CFLAGS=-mbranch-protection=standard a64 a64-O2-pac O2
else
	echo "skipping aarch64: no aarch64-linux-gnu-gcc or qemu-aarch64"
fi

prove --exec tests/run-test --timer -j 2 "${tests[@]}"
