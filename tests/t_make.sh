#!/bin/bash
# The Makefile where a user's setup is unusual, in a copy of the tree: a
# path with a blank, or an O with one, with a '$', empty, naming a file or
# a path under one, or build/, build/obj or the obj/ of a build in build/,
# is refused before anything is written or removed (make test's own O is
# not), as a PREFIX or DESTDIR is before make install builds anything;
# make O=DIR clean cleans DIR (and bench/bin if DIR built it), not the
# tree, nor the tree's sources when DIR is the tree; an edit of the
# Makefile's own flags rebuilds the library; make test runs only the tests
# that exist, each through tests/run-test, which passes its output and
# status on, ends it (and what it started) at its time limit, fails it
# if it leaves processes running (killing them), and names a signal
# that killed it, but not an exit of 128+N; CPPFLAGS and LDFLAGS
# are used and recorded; CFLAGS with quotes reach ring-lto's library,
# whose commands show (but under -s), and whose directory no O may name;
# -flto in CC makes an archive that links; another CXX checks the headers
# again, and each compiles alone, as ISO C and as C++; make -n writes no
# record of flags; a bench program or a C or C++ peer is rebuilt when a
# header it includes changes (the Makefile lists the former's by hand);
# ring-shift-K is built only for the K listed; the Rust peers are skipped
# where cargo cannot get their crates, removing an earlier build's
# programs, fail on their own errors, and are as rustfmt writes them.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/tap.sh"

tree=$tmp/tree
mkdir -p "$tree"
(cd "$root" && git ls-files -z | tar --null -T - -cf -) |
	tar -xf - -C "$tree" ||
	{ echo "1..0 # SKIP cannot copy the tree (git ls-files)"; exit 0; }

# make_in DIR ARGS...: an own_make in DIR, its log in $tmp/log.
make_in() {
	local dir=$1
	shift
	own_make "$tmp/log" "$dir" "$@"
}

# refused MESSAGE ARGS...: a make_in the tree with ARGS fails, its output
# one line, with MESSAGE.
refused() {
	local msg=$1
	shift
	! make_in "$tree" "$@" 2>/dev/null && [ "$(wc -l <"$tmp/log")" = 1 ] &&
		grep -qF "$msg" "$tmp/log"
}

# A blank in the path: every Makefile stops at once, naming the path; the
# file the path's first word names survives a clean.
mkdir -p "$tmp/my projects"
cp -a "$tree" "$tmp/my projects/u"
echo keep >"$tmp/my"
for d in . bench/peers/go bench/peers/rust bench/peers/c bench/peers/cpp; do
	make_in "$tmp/my projects/u/$d" clean 2>/dev/null
	[ $? != 0 ] && [ "$(cat "$tmp/my")" = keep ] &&
		[ -e "$tmp/my projects/u/Makefile" ] &&
		! grep -q "^rm " "$tmp/log" &&
		grep -q "path has no blanks" "$tmp/log"
	ok $? "make -C '$d' clean in a path with a blank: refused, saying why, nothing removed"
done
grep -q "usched builds only in a directory whose path has no blanks, not '$tmp/my projects/u'" \
	<(make_in "$tmp/my projects/u" all 2>&1; cat "$tmp/log")
ok $? "make in a path with a blank says why it stops"

# O with a blank, or empty (its clean removed /obj, /tests): refused
# before anything is written or removed. (The empty one dry, as /'s are
# at stake.)
for o in "$tmp/my dir|" "|-n"; do
	make_in "$tree" ${o#*|} O="${o%|*}" clean 2>/dev/null
	[ $? != 0 ] && [ "$(cat "$tmp/my")" = keep ] &&
		grep -q "O must name one directory, with no blanks, not '${o%|*}'" \
			"$tmp/log"
	rc=$?
	o=${o%|*}
	ok $rc "make O='${o//"$tmp"/TMP}' clean: refused, saying why, nothing removed"
done

# O with a '$' make would expand: O='DIR/$y' (y no variable) named DIR,
# whose tests/ clean removed. Refused; make's own $(X) is taken.
mkdir -p "$tmp/d/tests" && touch "$tmp/d/tests/keep"
make_in "$tree" O="$tmp/d/\$y" clean 2>/dev/null
[ $? != 0 ] && [ -e "$tmp/d/tests/keep" ] &&
	grep -q "O='$tmp/d/\$y' has a '\$', which make expands" "$tmp/log"
ok $? "make O='TMP/d/\$y' clean: refused, saying why, nothing removed"
make_in "$tree" -s O='$(T)/e' T="$tmp" all && [ -e "$tmp/e/libusched.a" ] &&
	make_in "$tree" -s O='$(T)/e' T="$tmp" clean && [ ! -e "$tmp/e" ]
ok $? "make O='\$(T)/e' T=TMP builds in TMP/e, and its clean removes it"

# A newline in O, refused as a blank or beside a '$', is shown as \n: the
# message was two lines.
for o in "$tmp/my"$'\n'"dir|O must name one directory, with no blanks, not '$tmp/my\\ndir'" \
	"$tmp/d/"$'\n'"\$y|O='$tmp/d/\\n\$y' has a '\$', which make expands"; do
	refused "${o#*|}" O="${o%%|*}" clean && [ "$(cat "$tmp/my")" = keep ]
	rc=$?
	o=${o%%|*}
	o=${o//"$tmp"/TMP}
	ok $rc "make O='${o//$'\n'/\\n}' clean: refused in one line, nothing removed"
done

# O naming a file, or a link to none, or under one: make stopped at its
# first write under it, with an error of its own. Refused, in one line,
# naming the file; the file stays.
echo keep >"$tmp/file" && ln -s "$tmp/none" "$tmp/dangling"
for o in "$tmp/file|all" "$tmp/file|clean" "$tmp/dangling|all" \
	 "$tmp/file/sub|all" "$tmp/file/a/b|clean" "$tmp/dangling/sub|all"; do
	f=${o#"$tmp"/}
	f=$tmp/${f%%[/|]*}
	why="is under a file ($f)"
	[ "$f" = "${o%|*}" ] && why="names a file"
	refused "O='${o%|*}' $why, not a directory: choose another O" \
		O="${o%|*}" "${o#*|}" && [ "$(cat "$tmp/file")" = keep ]
	rc=$?
	o=${o//"$tmp"/TMP}
	ok $rc "make O='${o%|*}' ${o#*|}: refused, saying why, in one line"
done

# O=DIR clean: DIR's build goes, and DIR with it; the tree's stays.
mkdir -p "$tree/build/keep"
make_in "$tree" -s O="$tmp/o" all && [ -e "$tmp/o/libusched.a" ] &&
	make_in "$tree" -s O="$tmp/o" BENCH_BIN="$tmp/bin" clean &&
	[ ! -e "$tmp/o" ] && [ -d "$tree/build/keep" ]
ok $? "make O=DIR clean removes DIR's build and DIR, not the tree's build/"

# The benchmarks, shared by every O: O=DIR clean leaves them to the O whose
# library they last linked, and removes them once that is DIR's; the
# peers' programs are the tree's.
make_in "$tree" -s bench/bin/ring && touch "$tree/bench/bin/ring-go" &&
	make_in "$tree" -s O="$tmp/o2" all &&
	make_in "$tree" -s O="$tmp/o2" clean && [ -e "$tree/bench/bin/ring" ] &&
	[ -e "$tree/bench/bin/ring-go" ] &&
	make_in "$tree" -s O="$tmp/o2" bench/bin/ring &&
	make_in "$tree" -s O="$tmp/o2" clean && [ ! -e "$tree/bench/bin" ] &&
	[ ! -e "$tmp/o2" ]
ok $? "make O=DIR clean keeps bench/bin built from another O, removes it built from DIR"

# O naming the tree itself, spelled otherwise than '.': its build goes to
# build/, and clean leaves the sources in tests/ and examples/ alone.
make_in "$tree" -s O=./ "build/tests/t_basic" "build/examples/hello" &&
	[ ! -e "$tree/tests/t_basic" ] &&
	make_in "$tree" -s O="$tree" clean && [ ! -e "$tree/build/tests" ] &&
	[ -e "$tree/tests/t_basic.c" ] && [ -e "$tree/examples/hello.c" ]
ok $? "make O=./ builds in build/; make O=TREE clean keeps tests/ and examples/"

# O naming build/, however spelled: the build without O's objects and
# tests were its own (O=build CFLAGS=-O0 rebuilt them at -O0, and its
# clean removed them). O naming build/obj: its tests and examples went in
# that build's obj/tests and obj/examples, where it keeps their objects,
# and its clean removed those. Refused before anything is built or
# removed.
make_in "$tree" -s all build/tests/t_basic &&
	cp "$tree/build/obj/flags" "$tmp/flags" &&
	ln -s "$tree/build" "$tmp/build-link" &&
	ln -s "$tree/build/obj" "$tmp/obj-link"
ok $? "make builds the library and t_basic in build/"
for o in "build|build|clean" "./build|build|clean" \
	 "$tree/build/|build|clean" "$tmp/build-link|build|clean" \
	 "build|build|CFLAGS=-O0 all" "build/obj|build/obj|clean" \
	 "./build/obj/|build/obj|clean" "$tree/build/obj|build/obj|clean" \
	 "$tmp/obj-link|build/obj|clean" \
	 "$tmp/build-link/obj|build/obj|clean" "build/obj|build/obj|all"; do
	IFS='|' read -r dir named args <<<"$o"
	refused "O='$dir' names $named, where the build without O keeps its objects and tests: choose another O" \
		O="$dir" $args && [ -e "$tree/build/obj/usched.o" ] &&
		[ -e "$tree/build/tests/t_basic" ] &&
		[ -e "$tree/build/obj/tests/t_basic.o" ] &&
		[ ! -e "$tree/build/obj/obj" ] &&
		cmp -s "$tmp/flags" "$tree/build/obj/flags"
	rc=$?
	dir=${dir//"$tmp"/TMP}
	ok $rc "make O='${dir//TMP\/tree/TREE}' $args: refused, saying why;" \
		"build/ stays"
done
# So is the obj/ of a build in build/, make test's (through a link to
# build/ too, build/O0 not there yet); make test's own O=build/O0 is not.
for o in "build/O0/obj|build/O0/obj" "$tmp/build-link/O0/obj|build/O0/obj" \
	 "build/ring-lto/obj|build/ring-lto/obj"; do
	refused "O='${o%|*}' names ${o#*|}, where a build in build/ keeps its objects and tests: choose another O" \
		O="${o%|*}" all && [ ! -e "$tree/build/O0" ]
	rc=$?
	o=${o%|*}
	ok $rc "make O='${o//"$tmp"/TMP}' all: refused, saying why; nothing built"
done
[ ! -e "$tree/build/O0" ] && make_in "$tree" -n O=build/O0 all &&
	grep -q -- "-c usched.c -o build/O0/obj/usched.o$" "$tmp/log"
ok $? "make O=build/O0 all, as make test's: builds in build/O0"

# make install or uninstall with a PREFIX or DESTDIR it refuses stops
# before anything is built: install built the library first.
touch "$tree/ll.c" "$tmp/stamp"
for t in "install PREFIX=rel|PREFIX must be an absolute path, not 'rel'" \
	 "install DESTDIR=rel|DESTDIR must be an absolute path (make -C takes a relative one from the tree), not 'rel'" \
	 "uninstall PREFIX=rel|PREFIX must be an absolute path, not 'rel'"; do
	refused "${t#*|}" ${t%|*} &&
		[ -z "$(find "$tree/build" "$tree"/libusched.* -newer \
			"$tmp/stamp")" ]
	ok $? "make ${t%|*}: refused, saying why; nothing built"
done

# -flto in CC, not CFLAGS: the archive holds the objects as they are, as
# with it in CFLAGS, and a program links against it.
make_in "$tree" -s O="$tmp/lto" CC="cc -flto" all &&
	cc -flto -I"$tree" "$tree/examples/hello.c" "$tmp/lto/libusched.a" \
		-pthread -o "$tmp/hello-lto" 2>"$tmp/log" &&
	"$tmp/hello-lto" | grep -q "^pong 2$"
ok $? "CC='cc -flto': libusched.a links into a program that runs"

# An edit of the flags in the Makefile itself rebuilds every object.
make_in "$tree" O="$tmp/o" all &&
	sed -i 's/^BASE_CFLAGS = -std=gnu11 /&-DUSCHED_EDITED /' \
		"$tree/Makefile" &&
	make_in "$tree" O="$tmp/o" all &&
	[ "$(grep -c -- '-DUSCHED_EDITED .* -c ' "$tmp/log")" = \
	  "$(cd "$tree" && ls usched.c rr.c ll.c sched/*.c | wc -l)" ]
ok $? "an edit of the Makefile's BASE_CFLAGS recompiles every library source"

# make test names the tests it runs: a binary left by a removed test is not
# among them. Each runs through tests/run-test.
mkdir -p "$tree/build/O2/tests" && touch "$tree/build/O2/tests/t_gone"
make_in "$tree" -n test TEST_CONFIGS=O2 &&
	sed -e ':a' -e '/\\$/{N;s/\\\n//;ba}' "$tmp/log" >"$tmp/joined" &&
	grep -q "^prove --exec tests/run-test .* build/O2/tests/t_basic " \
		"$tmp/joined" &&
	! grep -q "^prove .*\(t_gone\|t_\*\)" "$tmp/joined"
ok $? "make test runs the tests of tests/t_*.c, not whatever is in build/, through tests/run-test"

# tests/run-test, on tests of its own in $rt: each test's output and status
# are its own; one still running after USCHED_TEST_TIMEOUT seconds is
# ended, with what it started, saying so; a signal that killed one is
# named. Its runs are bounded: a runner that never ended its test must not
# hang this one.
rt=$tmp/rt
run_test=$root/tests/run-test
mkdir "$rt" && : >"$rt/in"

# rt_test NAME LINES: the bash script $rt/NAME
rt_test() {
	printf '#!/bin/bash\n%s\n' "$2" >"$rt/$1" && chmod +x "$rt/$1"
}

# rt_run NAME [VAR=VALUE...]: tests/run-test $rt/NAME with VARS, input
# $rt/in, output $rt/out, errors $rt/err
rt_run() {
	local name=$1
	shift
	timeout 30 env "$@" "$run_test" "$rt/$name" <"$rt/in" >"$rt/out" \
		2>"$rt/err"
}

# rt_wstat NAME WSTAT: as rt_run, and the runner's wait status is WSTAT
# as perl gives it (256 * N for exit N, N for signal N): a shell's $? is
# 137 both for SIGKILL and for exit 137.
rt_wstat() {
	timeout 30 perl -e 'system @ARGV[1..$#ARGV]; exit($? != $ARGV[0])' \
		"$2" "$run_test" "$rt/$1" <"$rt/in" >"$rt/out" 2>"$rt/err"
}

# gone PID...: each PID has ended (or is a zombie) within a second, or is
# killed
gone() {
	local i p left
	for i in 1 2 3 4 5 6 7 8 9 10; do
		left=
		for p; do
			grep -qs '^State:[[:space:]]*[^Z[:space:]]' \
				"/proc/$p/status" && left="$left $p"
		done
		[ -z "$left" ] && return 0
		sleep 0.1
	done
	kill -s KILL $left
	return 1
}

# A test that passes: what it writes, all of it, and nothing more.
rt_test pass 'printf "ok 1 - a\tb \\\\ c\n1..1"; cat'
printf '# its input\n' >"$rt/in"
"$rt/pass" <"$rt/in" >"$rt/expected" && rt_run pass &&
	cmp -s "$rt/expected" "$rt/out" && [ ! -s "$rt/err" ]
ok $? "tests/run-test: a test's output and input pass through byte for byte, and its exit 0"
: >"$rt/in"

rt_test fail 'echo "not ok 1 - x"; echo 1..1; exit 3'
rt_run fail
[ $? = 3 ] && [ "$(cat "$rt/out")" = $'not ok 1 - x\n1..1' ] &&
	[ ! -s "$rt/err" ]
ok $? "tests/run-test: a test's exit 3 passes through"

# A test that hangs, its child ignoring TERM; then one that ignores it too
# (killed 5 s after the TERM).
rt_test stubborn 'trap "" TERM; echo $$ >"${0%/*}/pid"; exec sleep 100'
rt_test hang 'echo "ok 1 - started"; "${0%/*}/stubborn" & wait'
rt_test deaf 'trap "" TERM; echo "ok 1 - started"; "${0%/*}/stubborn" & wait'
for t in hang:3 deaf:8; do
	rm -f "$rt/pid"
	start=$SECONDS
	rt_run ${t%:*} USCHED_TEST_TIMEOUT=1
	[ $? = 124 ] && [ $((SECONDS - start)) -le ${t#*:} ] &&
		said="$rt/${t%:*} did not end in 1 s (USCHED_TEST_TIMEOUT)" &&
		[ "$(cat "$rt/out")" = \
		  "ok 1 - started"$'\n\n'"not ok - $said" ] &&
		[ "$(cat "$rt/err")" = \
		  "$run_test: $said: killed it and what it started" ] &&
		[ -s "$rt/pid" ] && gone "$(cat "$rt/pid")"
	ok $? "tests/run-test: a test that hangs (${t%:*}) with USCHED_TEST_TIMEOUT=1 is killed within ${t#*:} s, with its child, saying so"
done

# Killed by SIGKILL (as tests/tap.c's watchdog does when its SIGALRM cannot
# end a hang): said so, in one line; the runner dies of it too, as prove
# would have seen the test do.
rt_test killed 'echo "ok 1 - before"; kill -s KILL $$'
rt_wstat killed 9 &&
	[ "$(cat "$rt/out")" = "ok 1 - before" ] &&
	[ "$(cat "$rt/err")" = "$run_test: $rt/killed was killed by SIGKILL, which the C tests' watchdog (tests/tap.c) sends when its SIGALRM did not end a hang" ]
ok $? "tests/run-test: a test killed by SIGKILL: said so in one line, the runner killed by it too"

# An exit of 128+N is not a death by signal N: it passes through, unnamed.
for st in 129 137 192; do
	rt_test exit$st "echo 'ok 1 - x'; exit $st"
	rt_wstat exit$st $((st * 256)) && [ "$(cat "$rt/out")" = "ok 1 - x" ] &&
		[ ! -s "$rt/err" ]
	ok $? "tests/run-test: a test's exit $st passes through, not named a signal"
done

# A test that exits leaving processes in its group: they are killed (one
# deaf to TERM 5 s later), and it fails, naming them, in one line on
# stderr. It waits for them to run sleep, the command named.
rt_test leaves 'echo "ok 1 - a"; echo 1..1
sleep 100 & (trap "" TERM; exec sleep 100) &
echo $(jobs -p | sort -n) >"${0%/*}/pid"
for p in $(jobs -p); do
	until grep -qa "^sleep" /proc/$p/cmdline; do sleep 0.01; done
done'
rm -f "$rt/pid"
start=$SECONDS
rt_run leaves
st=$? took=$((SECONDS - start))
read -r p1 p2 <"$rt/pid"
gone "$p1" "$p2" && [ $st = 1 ] && [ $took -le 8 ] &&
	said="$rt/leaves left 2 processes running ($p1 sleep 100, $p2 sleep 100)" &&
	[ "$(cat "$rt/out")" = $'ok 1 - a\n1..1\n\nnot ok - '"$said" ] &&
	[ "$(cat "$rt/err")" = "$run_test: $said: killed them" ]
ok $? "tests/run-test: a test that passes but leaves two processes running fails, naming them in one line, exit 1, both killed"

# The runner's point is on a line of its own whether or not the test's
# output ended its last line (a blank line between if it did, which prove
# passes over): prove counts it, the second, failed.
rt_test ended 'printf "1..1\nok 1 - a\n"; sleep 100 &'
rt_test unended 'printf "1..1\nok 1 - a"; sleep 100 &'
for t in ended:$'1..1\nok 1 - a\n' unended:$'1..1\nok 1 - a'; do
	name=${t%%:*}
	rt_run $name
	st=$? out=$(cat "$rt/out"; echo .)	# . keeps its last newlines
	said="$rt/$name left 1 process running ("
	[ $st = 1 ] && [[ $out == "${t#*:}"$'\nnot ok - '"$said"*$')\n.' ]] &&
		prove --exec "$run_test" "$rt/$name" >"$rt/prove" 2>&1
	[ $? = 1 ] && grep -q "Failed test: *2$" "$rt/prove"
	ok $? "tests/run-test: its 'not ok' on a line of its own after a test's output that ${name/unended/did not end} its last line, prove counting it"
done

# Processes of the group that the runner may not signal (another user's,
# as under sudo): it says so and fails, naming them, left running. Not made
# here, which would take root: a killpg() that fails as the kernel's would
# (EPERM), preloaded into the runner, stands in for them, both where the
# test has exited (one left) and on the limit's TERM (the test itself).
printf '%s\n' '#include <errno.h>' '#include <signal.h>' \
	'int killpg(pid_t pgrp, int sig)' \
	'{ (void)pgrp; (void)sig; errno = EPERM; return -1; }' >"$rt/eperm.c"
cc -shared -fPIC -o "$rt/eperm.so" "$rt/eperm.c"
rt_test left_one 'echo "ok 1 - a"; echo 1..1
sleep 100 & echo $! >"${0%/*}/pid"
until grep -qa "^sleep" /proc/$!/cmdline; do sleep 0.01; done'
rt_test at_limit 'echo $$ >"${0%/*}/pid"; exec sleep 100'

# rt_eperm NAME LIMIT BEFORE: NAME run with USCHED_TEST_TIMEOUT=LIMIT and
# that killpg(): it fails the test (exit 1) within 3 s, its output BEFORE
# and then the point, naming the sleep 100 of PID $rt/pid, which runs on
rt_eperm() {
	local st out said start=$SECONDS
	rm -f "$rt/pid"
	rt_run "$1" USCHED_TEST_TIMEOUT="$2" LD_PRELOAD="$rt/eperm.so"
	st=$? out=$(cat "$rt/out"; echo .)	# . keeps its last newlines
	said="cannot send SIGTERM to $rt/$1's process group ($(cat "$rt/pid") sleep 100): Operation not permitted"
	[ $st = 1 ] && [ $((SECONDS - start)) -le 3 ] &&
		[ "$out" = "$3"$'\nnot ok - '"$said"$'\n.' ] &&
		[ "$(cat "$rt/err")" = "$run_test: $said: left it running" ]
	st=$?
	gone "$(cat "$rt/pid")" && return 1	# it ran on: gone kills it
	return $st
}
rt_eperm left_one 600 $'ok 1 - a\n1..1\n'
ok $? "tests/run-test: a process the test left that it may not signal fails the test in one line naming it, left running"
rt_eperm at_limit 1 ''
ok $? "tests/run-test: a test at the limit that it may not signal fails in one line naming it, left running"

# A TERM (or ^C) to the runner reaches the test's own process group.
rt_test sleeper 'sleep 100 & echo $! >"${0%/*}/pid"; wait'
rm -f "$rt/pid"
"$run_test" "$rt/sleeper" >/dev/null 2>&1 &
for i in 1 2 3 4 5 6 7 8 9 10; do [ -s "$rt/pid" ] || sleep 0.1; done
kill -s TERM $!
wait $!
[ $? = 143 ] && [ -s "$rt/pid" ] && gone "$(cat "$rt/pid")"
ok $? "tests/run-test: a TERM to the runner ends the test and its child"

rt_test touch 'touch "${0%/*}/touched"'
for v in 0 10s 1000000000; do
	rt_run touch USCHED_TEST_TIMEOUT=$v
	[ $? = 2 ] && [ ! -e "$rt/touched" ] &&
		[ "$(cat "$rt/err")" = "$run_test: USCHED_TEST_TIMEOUT='$v': not a number of seconds, 1 to 999999999" ]
	ok $? "tests/run-test: USCHED_TEST_TIMEOUT=$v refused in one line, nothing run"
done

# CPPFLAGS and LDFLAGS: on the compiles and links, and in the record.
make_in "$tree" O="$tmp/o" CPPFLAGS=-DUSCHED_CPP LDFLAGS=-Wl,-z,now all &&
	grep -q -- "-DUSCHED_CPP .* -c usched.c" "$tmp/log" &&
	readelf -d "$tmp/o/libusched.so.0" | grep -q "BIND_NOW\|FLAGS_1.*NOW" &&
	make_in "$tree" O="$tmp/o" all &&
	[ "$(grep -c -- ' -c ' "$tmp/log")" -gt 0 ]
ok $? "CPPFLAGS and LDFLAGS reach the compiles and the link; without them, it rebuilds"

# CFLAGS with double quotes (a define with a blank): ring-lto's sub-make
# gets them whole.
make_in "$tree" -s BENCH_BIN="$tmp/bin" CFLAGS='-O2 -g -DUSCHED_MSG="a b"' \
	"$tmp/bin/ring-lto" && "$tmp/bin/ring-lto" 4 3 10 0 1 >/dev/null
ok $? "CFLAGS with a quoted blank: ring-lto builds and runs"

# The LTO sub-make's commands show as the make's own do: a compile that
# fails says with what flags. With -s, none; nor, when there is nothing to
# do, that its archive "is up to date".
make_in "$tree" BENCH_BIN="$tmp/bin" "$tmp/bin/ring-lto" &&
	grep -q -- "-O2 -g -flto -c ll\.c -o build/ring-lto/obj/ll\.o$" \
		"$tmp/log" &&
	touch "$tree/ll.c" && make_in "$tree" -s BENCH_BIN="$tmp/bin" \
		"$tmp/bin/ring-lto" && ! grep -q -- " -c " "$tmp/log" &&
	make_in "$tree" BENCH_BIN="$tmp/bin" "$tmp/bin/ring-lto" &&
	! grep -q "up to date" "$tmp/log"
ok $? "ring-lto's library: its commands show, but under -s; no 'up to date'"

# An O naming the LTO sub-make's directory, however spelled: the two
# builds would share it, the archive built without -flto. Refused before
# anything is built.
ln -s "$tree/build/ring-lto" "$tmp/lto-link"
for o in build/ring-lto ./build/ring-lto "$tree/build/ring-lto/" \
	 "$tmp/lto-link"; do
	refused "O='$o' names build/ring-lto, where make bench builds ring-lto's library: choose another O" \
		O="$o" BENCH_BIN="$tmp/bin" "$tmp/bin/ring-lto"
	rc=$?
	o=${o//"$tmp"/TMP}
	ok $rc "make O='${o//TMP\/tree/TREE}' bench/bin/ring-lto: refused, saying why"
done

# make test's configuration lto builds in build/lto: not the sub-make's.
make_in "$tree" -n test TEST_CONFIGS=lto &&
	grep -q "O=build/lto .* check-build" "$tmp/log"
ok $? "make test TEST_CONFIGS=lto builds in build/lto, which is not ring-lto's"

# The headers' C++ check runs again with another C++ compiler: one that
# fails makes check-build fail.
printf '#!/bin/sh\nexit 1\n' >"$tmp/bad-cxx" && chmod +x "$tmp/bad-cxx"
make_in "$tree" -s O="$tmp/o" "$tmp/o/tests/cxx-header.ok" &&
	! make_in "$tree" -s O="$tmp/o" CXX="$tmp/bad-cxx" \
		"$tmp/o/tests/cxx-header.ok"
ok $? "another CXX checks the headers again"

# Each public header compiles alone: one that leans on another included
# before it (usched.h's stddef.h) fails both checks, though they passed
# together; one that is not ISO C (a stray ';' outside a function) fails
# the C one.
cp -a "$tree" "$tmp/hdr"
sed -i 's/^struct ll_thread;$/&\nsize_t ll_size(void);/' "$tmp/hdr/ll.h"
for ok in c-header.ok cxx-header.ok; do
	! make_in "$tmp/hdr" -s O="$tmp/oh" "$tmp/oh/tests/$ok" 2>/dev/null &&
		grep -q "ll.h" "$tmp/log" && [ ! -e "$tmp/oh/tests/$ok" ]
	ok $? "$ok: a public header that does not include what it needs fails"
done
cp "$tree/ll.h" "$tmp/hdr/ll.h" && echo ';' >>"$tmp/hdr/sched/sched.h"
! make_in "$tmp/hdr" -s O="$tmp/oh" "$tmp/oh/tests/c-header.ok" 2>/dev/null &&
	grep -q "sched/sched.h" "$tmp/log"
ok $? "c-header.ok: a public header that is not ISO C fails"
cp "$tree/sched/sched.h" "$tmp/hdr/sched/sched.h" &&
	make_in "$tmp/hdr" -s O="$tmp/oh" "$tmp/oh/tests/c-header.ok" \
		"$tmp/oh/tests/cxx-header.ok"
ok $? "the headers as they are pass both"

# make -n: after a build, nothing to do; with other CFLAGS, the rebuild
# they would make, and the build's record of its flags as it was.
make_in "$tree" -s O="$tmp/o" all && cp "$tmp/o/obj/flags" "$tmp/flags" &&
	make_in "$tree" -n O="$tmp/o" all && ! grep -q -- " -c " "$tmp/log" &&
	make_in "$tree" -n O="$tmp/o" CFLAGS=-O1 all &&
	grep -q -- " -O1 .*-c usched.c" "$tmp/log" &&
	cmp -s "$tmp/flags" "$tmp/o/obj/flags"
ok $? "make -n: nothing to do after a build; other CFLAGS show a rebuild, and write no record"

# rebuilds DIR TARGET NAME HEADER...: after a build, make -n TARGET in DIR
# does not link NAME (in bench/bin) again; after a touch of any HEADER it
# does. Each header's date is put back.
rebuilds() {
	local dir=$1 target=$2 p=$3 h stale= link
	shift 3
	link="-o ([^ ]*/)?bench/bin/$p( |\$)"
	make_in "$dir" -n "$target" && ! grep -Eq -- "$link" "$tmp/log"
	ok $? "$p: after a build, make -n does not build it again"
	for h; do
		touch -r "$h" "$tmp/stamp" && touch "$h" &&
			make_in "$dir" -n "$target" &&
			grep -Eq -- "$link" "$tmp/log" ||
			stale="$stale ${h#"$tree"/}"
		touch -r "$tmp/stamp" "$h"
	done
	[ $# -gt 0 ] && [ -z "$stale" ]
	ok $? "$p: a change of any header it includes rebuilds it" \
		"($# headers${stale:+; not:$stale})"
}

# headers CC...: the headers CC (a compiler and its flags, sources last)
# says the sources include, each once.
headers() {
	"$@" -MM -MT x | sed 's/^x://; s/\\$//' | tr ' ' '\n' |
		grep '\.h$' | xargs realpath -s | sort -u
}

# The C and C++ peers: their compiles list the headers they read (-MMD).
peers=$tree/bench/peers
make_in "$peers/c" -s && make_in "$peers/cpp" -s
for src in "$peers"/c/*.c "$peers"/cpp/*.cpp; do
	p=$(basename "${src%.*}")
	[ -x "$tree/bench/bin/$p" ] ||
		{ echo "# skipping $p's headers: not built"; continue; }
	case $src in
	*.c) cc=("${CC:-cc}" -std=c11) ;;
	*) cc=("${CXX:-g++}" -std=c++20) ;;
	esac
	rebuilds "$(dirname "$src")" "$tree/bench/bin/$p" "$p" \
		$(headers "${cc[@]}" -I"$tree/bench" -I"$peers" "$src")
done

# The top Makefile's bench programs, whose headers it lists by hand: those
# of every source their link compiles (as make -B shows it).
make_in "$tree" -s bench/bin/ring bench/bin/ring-shift-16 bench/bin/switch \
	bench/bin/create bench/bin/skynet
ok $? "make builds the bench programs"
for p in ring ring-shift-16 switch create skynet; do
	make_in "$tree" -n -B "bench/bin/$p" &&
		srcs=$(grep -E -- "-o bench/bin/$p( |\$)" "$tmp/log" |
			tr ' ' '\n' | grep '\.c$') && [ -n "$srcs" ]
	ok $? "make -n -B bench/bin/$p shows its link"
	rebuilds "$tree" "bench/bin/$p" "$p" \
		$(cd "$tree" && headers "${CC:-cc}" -I. $srcs)
done
# ring-shift-K moves the ring's code by exactly K only for a multiple of
# 16: make has no rule for a K it does not list, and bench/ring.c refuses
# one that is not a multiple of 16 by hand.
for k in 0 20 128; do
	refused "No rule to make target 'bench/bin/ring-shift-$k'" \
		-n bench/bin/ring-shift-$k
	ok $? "make bench/bin/ring-shift-$k: refused, no rule for it"
done
for k in 0 20; do
	out=$(cd "$tree" && ${CC:-cc} -DRING_SHIFT=$k -fsyntax-only \
		bench/ring.c 2>&1)
	[ $? != 0 ] && [[ $out == *"RING_SHIFT must be a positive multiple"* ]]
	ok $? "bench/ring.c with RING_SHIFT=$k: refused, saying why"
done

# The Rust peers where cargo cannot get their crates (offline, with an
# empty cache): skipped with one line saying why, exit 0, for the build
# and the tests. What is wrong in the peers themselves still fails: a
# compile error, a Cargo.lock that no longer fits Cargo.toml (offline
# too, with the crates in the cache and the tree's target/ copied).
rust=$tree/bench/peers/rust
cargo=$(command -v cargo || echo "$HOME/.cargo/bin/cargo")
if ! [ -x "$cargo" ]; then
	echo "# skipping the Rust peers' build: no cargo"
else
	mkdir -p "$tmp/cargo"
	for t in all test; do
		CARGO_HOME=$tmp/cargo CARGO_NET_OFFLINE=true \
			make_in "$rust" $t &&
			[ "$(wc -l <"$tmp/log")" = 1 ] &&
			grep -q "^skipping ring-async-std ring-tokio.*: cargo cannot get their crates: .*offline" \
				"$tmp/log" &&
			[ ! -e "$tree/bench/bin/ring-tokio" ]
		ok $? "make -C bench/peers/rust $t, offline with an empty cargo cache: one line, skipped"
	done
	host=$("$cargo" -vV | sed -n 's/^host: //p')
fi

# A skipped build removes the Rust programs an earlier build left in
# bench/bin, which runs and sweeps would take for this tree's: those two
# names only, saying so on its one line. A skipped test run removes none,
# nor make -n.
bin=$tree/bench/bin
stale_rust() {
	mkdir -p "$bin" && touch "$bin/ring-async-std" "$bin/ring-tokio" \
		"$bin/ring-tokio.old" "$bin/ring-go"
}
# rust_removed WHY: the skip line gives WHY (a pattern) and the removal.
rust_removed() {
	[ "$(wc -l <"$tmp/log")" = 1 ] &&
		[[ $(cat "$tmp/log") == \
			"skipping ring-async-std ring-tokio: "$1"; removed an earlier build's ring-async-std ring-tokio from $bin" ]] &&
		[ ! -e "$bin/ring-async-std" ] && [ ! -e "$bin/ring-tokio" ] &&
		[ -e "$bin/ring-tokio.old" ] && [ -e "$bin/ring-go" ]
}
stale_rust && make_in "$rust" CARGO= all && rust_removed "cargo not found"
ok $? "make -C bench/peers/rust CARGO=: skipped, an earlier build's programs removed, saying so"
if [ -x "$cargo" ]; then
	stale_rust && CARGO_HOME=$tmp/cargo CARGO_NET_OFFLINE=true \
		make_in "$rust" -n all && [ -e "$bin/ring-async-std" ] &&
		[ -e "$bin/ring-tokio" ] &&
		CARGO_HOME=$tmp/cargo CARGO_NET_OFFLINE=true \
			make_in "$rust" all &&
		rust_removed "cargo cannot get their crates: *offline*"
	ok $? "make -C bench/peers/rust, offline with an empty cargo cache: an earlier build's programs removed (not under -n), saying so"
fi
stale_rust && CARGO_HOME=$tmp/cargo CARGO_NET_OFFLINE=true \
	make_in "$rust" test && ! grep -q removed "$tmp/log" &&
	[ -e "$bin/ring-async-std" ] && [ -e "$bin/ring-tokio" ]
ok $? "make -C bench/peers/rust test, skipped: removes no program"
rm -f "$bin/ring-async-std" "$bin/ring-tokio" "$bin/ring-tokio.old"

# The Rust peers' sources as rustfmt writes them.
if ! [ -x "$cargo" ] || ! "$cargo" fmt --version >/dev/null 2>&1; then
	echo "# skipping the Rust peers' format: no cargo fmt"
else
	"$cargo" fmt --check --manifest-path "$rust/Cargo.toml" \
		>"$tmp/log" 2>&1 ||
		{ sed 's/^/# /' "$tmp/log"; false; }
	ok $? "bench/peers/rust: cargo fmt --check finds nothing to change"
fi

if ! [ -x "$cargo" ] || ! [ -d "$root/bench/peers/rust/target" ] ||
	! (cd "$rust" && CARGO_NET_OFFLINE=true "$cargo" fetch -q --locked \
		--target "$host") 2>/dev/null; then
	echo "# skipping the Rust peers' errors: not built here, or crates not cached"
else
	cp -a "$root/bench/peers/rust/target" "$rust/"
	cp "$rust/src/lib.rs" "$tmp/lib.rs"
	echo 'fn broken() -> u32 { "no" }' >>"$rust/src/lib.rs"
	! CARGO_NET_OFFLINE=true make_in "$rust" all >/dev/null &&
		grep -q "^error\[E0308\]: mismatched types" "$tmp/log" &&
		[ ! -e "$tree/bench/bin/ring-tokio" ]
	ok $? "make -C bench/peers/rust, offline, a compile error: fails, saying it"
	cp "$tmp/lib.rs" "$rust/src/lib.rs"
	sed -i '/^futures-core/d' "$rust/Cargo.toml"
	! CARGO_NET_OFFLINE=true make_in "$rust" all >/dev/null &&
		grep -q "cannot update the lock file" "$tmp/log"
	ok $? "make -C bench/peers/rust, offline, a stale Cargo.lock: fails, saying it"
fi

tap_done
