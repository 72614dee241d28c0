#!/bin/bash
# Smoke test of the benchmarks in bench/bin (built by `make bench`): each
# built ring runs a tiny ring and its token check passes, bad arguments exit
# 2, impossible runs exit 1; the microbenchmarks likewise. Programs whose
# toolchain was missing are skipped, one line each.
set -u
bin=${BENCH_BIN:-$(cd "$(dirname "$0")/../bench/bin" && pwd)}
err=$(mktemp)
trap 'rm -f "$err"' EXIT
. "$(dirname "$0")/tap.sh"

# expect STATUS PROG ARGS...: exit status, and one number on stdout if 0,
# or a message on stderr only if not.
expect() {
	local want=$1 prog=$2 out rc good=1
	shift 2
	out=$(timeout 120 "$bin/$prog" "$@" 2>"$err")
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "# status $rc: $(head -n 1 "$err")"
	elif [ "$want" -eq 0 ] && ! [[ $out =~ ^[0-9]+\.[0-9]+$ ]]; then
		echo "# output '$out'"
	elif [ "$want" -ne 0 ] && { [ -n "$out" ] || ! [ -s "$err" ]; }; then
		echo "# want a message on stderr only"
	else
		good=0
	fi
	ok $good "$prog $* exits $want"
}

built() {
	[ -x "$bin/$1" ] && return 0
	echo "# skipping $1: not built (toolchain missing?)"
	return 1
}

# probe_running FN CMD...: runs CMD in the background and FN PID every
# 20 ms, for at most 50 s, until FN prints something; kills CMD, prints it.
probe_running() {
	local fn=$1 pid i out=
	shift
	"$@" >/dev/null 2>&1 &
	pid=$!
	for i in $(seq 2500); do
		out=$($fn $pid) && [ -n "$out" ] && break
		sleep 0.02
	done
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	echo "$out"
}

bad_ring_args=("" "2 1 x 0 1" "1 1 1 0 1" "2 0 1 0 1" "2 1 0 0 1" "2 1 1 0 0"
	"-2 1 1 0 1" "+2 1 1 0 1" "0x2 1 1 0 1" "2 1 1 0" "2 1 1 0 1 1"
	"99999999999999999999 1 1 0 1" "4294967296 4294967296 4294967296 0 1"
	"2 2147483648 1 0 1"
	"2 1 1 1073741825 1" $'\xff 1 1 0 1')

# The usched ring, with each scheduler.
for s in rr ll; do
	for a in "4 3 10 0 1" "2 1 1 0 1" "7 13 101 0 2" "8 100 100 1000 2" \
		 "2 10000 10 0 1"; do
		expect 0 ring --sched $s $a
	done
	for a in "4 3 10 0 1" "2 1 1 0 1" "7 13 1 0 2"; do
		USCHED_RING_FAULT=spurious expect 1 ring --sched $s $a
	done
	expect 0 ring -f --sched $s 7 13 101 1000 2
	USCHED_RING_FAULT=spurious expect 1 ring -f --sched $s 4 3 10 0 1
	# A byte of D changed while the thread ran (a stack not kept).
	for a in "--sched $s 4 3 10 100 1" "-f --sched $s 2 1 1 1 1"; do
		USCHED_RING_FAULT=pad expect 1 ring $a
		grep -q "token check failed: .* or its stack changed" "$err"
		ok $? "USCHED_RING_FAULT=pad ring $a: the stack check says so"
	done
done
USCHED_RING_FAULT=pad expect 2 ring 4 3 10 0 1	# no stack to change
head -n 1 "$err" | grep -q ": USCHED_RING_FAULT=pad needs D > 0$"
ok $? "USCHED_RING_FAULT=pad ring at D = 0: refused, saying why"
USCHED_RING_FAULT= expect 0 ring 4 3 10 0 1
expect 0 ring -v 4 3 10 0 1
# ring-lto, against the library's LTO archive: the same checks pass, and
# the link inlined each scheduler's wait into its loop (what bench/PERF.md
# says -flto gains).
for s in rr ll; do
	expect 0 ring-lto --sched $s 7 13 101 1000 2
	USCHED_RING_FAULT=spurious expect 1 ring-lto --sched $s 4 3 10 0 1
	USCHED_RING_FAULT=pad expect 1 ring-lto --sched $s 4 3 10 100 1
done
if ! command -v objdump >/dev/null; then
	echo "# skipping ring-lto's loop: no objdump"
elif built ring-lto; then
	for s in rr ll; do
		loop=$(objdump -d "$bin/ring-lto" |
			awk -v f="rounds_$s" '
			$0 ~ "<" f "(\\.lto_priv\\.[0-9]+)?>:$" { p = 1; next }
			p && /^$/ { exit } p')
		[[ $loop == *call* && ! $loop =~ \<${s}_wait[.\>] ]]
		ok $? "ring-lto: rounds_$s calls no ${s}_wait (nor a clone of it)"
	done
fi
# ring-shift-K, make perf's placement sweep: the same ring and checks, its
# hot code (and the library's) K bytes further on than ring's.
addr() {	# PROG FUNCTION: its address in hex, without leading zeros
	nm "$bin/$1" | awk -v f="$2" '$3 == f { sub(/^0+/, "", $1); print $1 }'
}
command -v nm >/dev/null || echo "# skipping ring-shift-K's code: no nm"
for k in 16 32 48 64 80 96 112; do
	expect 0 ring-shift-$k 8 2 100 0 1
	USCHED_RING_FAULT=spurious expect 1 ring-shift-$k 4 3 10 0 1
	command -v nm >/dev/null || continue
	at=$(addr ring-shift-$k rounds_ll) && was=$(addr ring rounds_ll) &&
		[ -n "$at" ] && [ -n "$was" ] &&
		[ $((0x$at - 0x$was)) = $k ]
	ok $? "ring-shift-$k: rounds_ll at ring's + $k (0x$was -> 0x$at)"
done
# 2000 stacks of 20 KB in 40 MB of address space: waits fail for memory.
(ulimit -v 40000; exec timeout 120 "$bin/ring" 2 2000 4 20000 1) \
	>/dev/null 2>"$err"
[ $? -eq 1 ] && grep -q "waits or wakes failed, the first with: Cannot" "$err"
ok $? "ring out of memory: says a wait failed and why, exits 1"
for run in "ring 4 3 10 0 1" "skynet 100 2"; do
	USCHED_PIN=yes expect 2 $run
	grep -q "USCHED_PIN is 'yes'; it must be 0 or 1" "$err"
	ok $? "USCHED_PIN=yes: ${run%% *} names the variable and what it must be"
done
for v in "" 0 1; do
	USCHED_PIN=$v expect 0 ring 4 3 10 0 1
	USCHED_PIN=$v expect 0 skynet 100 2
done
out=$(USCHED_RING_FAULT=x timeout 120 "$bin/ring" --help 2>"$err")
[ $? = 0 ] && [[ $out == usage:* ]] && ! [ -s "$err" ]
ok $? "USCHED_RING_FAULT=x ring --help: the usage all the same, exit 0"
# 1024 processors' native threads in 400 MB of address space: they fail
# to start, and the programs say why.
for run in "skynet 10 1024" "ring 2 1 1 0 1024"; do
	(ulimit -v 400000; exec timeout 120 "$bin/"$run) >/dev/null 2>"$err"
	[ $? = 1 ] && grep -q "cannot run the .*: Resource temporarily" "$err"
	ok $? "$run under a 400 MB limit: exit 1, with the reason"
done
expect 0 ring -v -f 4 3 10 0 1
# What scripts/perf.py reads from ring -v.
timeout 120 "$bin/ring" -v 4 3 10 100 1 2>"$err" >/dev/null &&
	grep -Eq "^switches: [0-9]+ " "$err" &&
	grep -Eq "max stack [0-9]+ B" "$err" &&
	grep -Eq "^peak RSS: [0-9]+ KiB, [0-9.]+ bytes per thread" "$err" &&
	grep -Eq "^CPU time: user [0-9]+\.[0-9]{2} s, system [0-9]+\.[0-9]{2} s$" \
		"$err" &&
	awk '/^processor / { sum += $4 } /^switches: / { total = $2 }
	     END { exit !(total > 0 && total == sum) }' "$err"
ok $? "ring -v prints the switches (the processors' sum, not 0), max stack, memory and CPU time perf.py reads"
# ring -v's rate: its N*R*M messages over the seconds it printed.
secs=$(timeout 120 "$bin/ring" -v 4 30 1000 0 1 2>"$err") &&
	awk -v secs="$secs" '/^messages\/s: [0-9]+ \(120000 messages\)$/ {
		n++; rate = $2 }
	    END { exit !(n == 1 && secs > 0 && rate * secs > 118800 &&
			 rate * secs < 121200) }' "$err"
ok $? "ring -v 4 30 1000 0 1: messages/s is 120000 over its ${secs:-?} s"
# With ll, each cycle lives on one processor: the R cycles are split in P
# runs of neighbours, whose wakes (N*M a cycle) all stay local.
timeout 120 "$bin/ring" -v --sched ll 3 7 50 0 3 2>"$err" >/dev/null
got=$(awk '/^processor / { printf "%s%s/%s", n++ ? " " : "", $7, $10 }' "$err")
[ "$got" = "450/0 300/0 300/0" ]
ok $? "ring -v --sched ll 3 7 50 0 3: local/remote wakes a processor are 3, 2 and 2 cycles' own (got '$got')"
# With few threads the process's own memory swamps theirs: ring -v also
# says what they added to the RSS it had before allocating for them.
timeout 120 "$bin/ring" -v --sched rr 2 10 3 0 1 2>"$err" >/dev/null &&
	awk '/^peak RSS: / { peak = $3; each = $5; above = $9; before = $14
		threads = 20; ok = $4 == "KiB," && $15 == "KiB" &&
		each + 0 > above + 0 && above + 0 >= 0 && before + 0 > 0 &&
		sprintf("%.1f", (peak - before) * 1024 / threads) == above &&
		sprintf("%.1f", peak * 1024 / threads) == each }
	END { exit !ok }' "$err"
ok $? "ring -v: the peak RSS a thread, and a thread's share of what the threads added"
# The READMEs' 48 bytes a ring member saves at D=0 are gcc's on x86-64:
# the member's loop keeps four values in callee-saved registers, whose
# old values go to the thread's struct, not to its stack.
if [ "$(uname -m)" = x86_64 ] && command -v readelf >/dev/null &&
   ! readelf -p .comment "$bin/ring" | grep -q clang; then
	used=$(timeout 120 "$bin/ring" -v 8 2 100 0 1 2>&1 >/dev/null |
		sed -n 's/.*max stack \([0-9]*\) B$/\1/p')
	[ -n "$used" ] && [ "$used" -le 48 ]
	ok $? "ring -v 8 2 100 0 1: a member saves at most 48 bytes (${used:-?})"
fi
expect 2 create -f 10		# create takes no -f
timeout 120 "$bin/create" 10 10 2>"$err" >/dev/null
[ $? = 2 ] && grep -q "expected one COUNT, got 2 arguments" "$err"
ok $? "create 10 10: one COUNT too many, said so, exit 2"
for a in "${bad_ring_args[@]}" "2 1 1 600000 1"; do
	expect 2 ring $a
done
timeout 120 "$bin/ring" 4 x 10 0 1 2>"$err"
grep -q -- "--sched NAME" "$err" && grep -q "R: not an unsigned" "$err"
ok $? "ring's argument errors say what is wrong and show its own options"
expect 2 ring --sched nope 4 3 10 0 1
expect 2 ring --sched
expect 2 ring --bogus 4 3 10 0 1
USCHED_RING_FAULT=0 expect 2 ring 4 3 10 0 1	# only "spurious" is a fault
expect 2 ring 65536 65536 1 0 1		# over 32-bit indices
expect 2 ring 2 1073741824 1 0 1	# over the scheduler's int
# More memory than this box (400 GB): the memory check says so, exit 1.
# Under a limit of 4 GB: a check that broke must fail here at once, not
# take the box's memory first.
(ulimit -v 4000000; exec timeout 120 "$bin/ring" 2 1000000000 1 0 1) \
	>/dev/null 2>"$err"
[ $? = 1 ] && grep -q "needs about [0-9]* MiB of memory" "$err"
ok $? "ring 2 1000000000 1 0 1: more memory than this box, said, exit 1"
# Over the shared parser's limits too: the message names ring's own.
for a in "2 1 1 2000000000 1:D is more than 524288 bytes" \
	 "2 4294967296 1 0 1:threads is more than 2147483647\$"; do
	timeout 120 "$bin/ring" ${a%%:*} 2>"$err"
	[ $? = 2 ] && head -n 1 "$err" | grep -q "${a#*:}"
	ok $? "ring ${a%%:*}: refused with ring's own limit, exit 2"
done
# scripts/sweep.py refuses a point of more threads than a program takes
# (its MOST_THREADS): each program must name that very limit for one more.
while read -r p most; do
	built "$p" || continue
	timeout 120 "$bin/$p" 2 $(((most + 1) / 2)) 1 0 1 2>"$err"
	[ $? = 2 ] && head -n 1 "$err" | grep -q "threads is more than $most\$"
	ok $? "$p over sweep.py's $most threads: refused, naming them, exit 2"
done < <(cd "$(dirname "$0")/../scripts" && python3 -c '
import sweep
for b in sorted({i.binary for i in sweep.IMPLS} | {"ring-lto"}):
    print(b, sweep.most_threads(b))')
# The parser's own bounds: 2^64 - 1 is a number, N*R*M of it overflows;
# 2^64 is not a number. (Both exit 2: only the message tells them apart.)
for a in "2 1 18446744073709551615 0 1:N\*R\*M overflows 64 bits" \
	 "2 1 18446744073709551616 0 1:M: not an unsigned 64-bit decimal"; do
	why=${a#*:}
	timeout 120 "$bin/ring" ${a%%:*} 2>"$err"
	[ $? = 2 ] && head -n 1 "$err" | grep -q "$why"
	ok $? "ring ${a%%:*}: exit 2, saying ${why//\\/}"
done

# The peers: tiny rings, bad arguments, and what each accepts for D and P.
# A token nobody handed (USCHED_RING_FAULT=spurious) fails each one's
# checks, as it fails usched's ring.
for p in ring-pthread ring-go ring-async-std ring-tokio ring-cpp \
	 ring-cpp-pool ring-boost; do
	built $p || continue
	for a in "4 3 10 0 1" "2 1 1 0 1" "7 13 101 0 1" "8 100 100 0 1"; do
		expect 0 $p $a
	done
	for a in "${bad_ring_args[@]}"; do
		expect 2 $p $a
	done
	for a in "4 3 10 0 1" "2 1 1 0 1" "8 100 100 0 1"; do
		USCHED_RING_FAULT=spurious expect 1 $p $a
	done
	# The C and C++ peers' check after each wait, not only their count
	# of tokens left over at the end.
	case $p in
	ring-pthread|ring-cpp*|ring-boost)
		grep -Eq "woken [1-9][0-9]* times before a token was handed" \
			"$err"
		ok $? "$p: thread 0's wait caught the token not handed"
	esac
	USCHED_RING_FAULT=0 expect 2 $p 4 3 10 0 1
	USCHED_RING_FAULT= expect 0 $p 4 3 10 0 1
	# A byte of D changed: the stackful peers' pad check says so; the
	# others take no D.
	case $p in
	ring-pthread|ring-boost|ring-go)
		USCHED_RING_FAULT=pad expect 1 $p 4 3 10 100 1
		grep -Eq "stack pad corrupted|its stack padding changed" "$err"
		ok $? "USCHED_RING_FAULT=pad $p: its pad check says so"
		USCHED_RING_FAULT=pad expect 2 $p 4 3 10 0 1
		head -n 1 "$err" | grep -q ": USCHED_RING_FAULT=pad needs D > 0$"
		ok $? "USCHED_RING_FAULT=pad $p at D = 0: refused, saying why" ;;
	*)
		USCHED_RING_FAULT=pad expect 2 $p 4 3 10 100 1
		# At D = 0 too, saying why: the fault needs a D > 0, which
		# these rings refuse.
		USCHED_RING_FAULT=pad expect 2 $p 4 3 10 0 1
		why="stackless coroutines keep no stack frame while blocked"
		[[ $p == ring-cpp* ]] || why="futures are stackless"
		why="needs D > 0, and D must be 0: $why"
		head -n 1 "$err" | grep -q ": USCHED_RING_FAULT=pad $why$"
		ok $? "USCHED_RING_FAULT=pad $p at D = 0: refused, saying why"
	esac
	out=$(USCHED_RING_FAULT=x timeout 120 "$bin/$p" --help 2>"$err")
	[ $? = 0 ] && [[ $out == usage:* ]] && ! [ -s "$err" ]
	ok $? "USCHED_RING_FAULT=x $p --help: the usage all the same, exit 0"
done
# On more than one native thread too.
for run in "ring-pthread 4 3 10 0 2" "ring-go 5 20 100 0 2" \
	   "ring-tokio 5 20 100 0 2" "ring-async-std 5 20 100 0 2" \
	   "ring-cpp-pool 5 20 100 0 3"; do
	built ${run%% *} || continue
	USCHED_RING_FAULT=spurious expect 1 $run
	case $run in
	ring-pthread*|ring-cpp*)
		grep -Eq "woken [1-9][0-9]* times before a token was handed" \
			"$err"
		ok $? "$run: thread 0's wait caught the token not handed"
	esac
done
for p in ring-pthread ring-cpp ring-cpp-pool ring-boost; do
	built $p && expect 2 $p 65536 65536 1 0 1	# over 32-bit indices
done
built ring-pthread && expect 0 ring-pthread 4 3 10 100000 5

# ring_cpus P: the CPU lists of a running ring-pthread's threads, once its
# members run (a long ring, killed then), one line each distinct list.
ring_cpus() {
	probe_running cpus_once_running "$bin/ring-pthread" 2 1 100000000 0 "$1"
}
cpus_once_running() {
	[ "$(ls /proc/$1/task 2>/dev/null | wc -l)" -ge 3 ] &&
		sed -n 's/^Cpus_allowed_list:\t//p' /proc/$1/task/*/status \
			2>/dev/null | sort -u
}
# P counts CPUs: P = 1 runs every thread on the first CPU the ring may use;
# P as many as those, or more, leaves them all.
mine=$(sed -n 's/^Cpus_allowed_list:\t//p' /proc/self/status)
if ! built ring-pthread; then
	:
elif [ "$(nproc)" -lt 2 ]; then
	echo "# skipping ring-pthread's P: one CPU cannot tell P = 1 apart"
else
	got=$(ring_cpus 1)
	[ "$got" = "$(echo "$mine" | grep -Eo '^[0-9]+')" ]
	ok $? "ring-pthread P = 1: its threads run on one CPU (got '$got' of '$mine')"
	got=$(ring_cpus "$(nproc)")
	[ "$got" = "$mine" ]
	ok $? "ring-pthread P = CPUs: on all of them (got '$got')"
	got=$(ring_cpus 1024)
	[ "$got" = "$mine" ]
	ok $? "ring-pthread P = 1024: on all of them (got '$got')"
fi
built ring-pthread && expect 2 ring-pthread 2 1 1 0 1025
# Where glibc's least thread stack is more than ring-pthread's base, as
# on aarch64 (run under qemu, if both are here): it still runs at D = 0.
if ! command -v aarch64-linux-gnu-gcc >/dev/null ||
   ! command -v qemu-aarch64 >/dev/null; then
	echo "# skipping ring-pthread on aarch64: no cross compiler or qemu"
else
	src=$(cd "$(dirname "$0")/../bench" && pwd)
	arm=$(mktemp)
	aarch64-linux-gnu-gcc -std=c11 -O2 -I"$src" -I"$src/peers" -pthread \
		-o "$arm" "$src/peers/c/ring-pthread.c" "$src/args.c" &&
		timeout 120 qemu-aarch64 -L /usr/aarch64-linux-gnu "$arm" \
			4 3 10 0 1 >/dev/null 2>"$err"
	rc=$?
	[ $rc = 0 ] || echo "# status $rc: $(head -n 1 "$err")"
	ok $rc "ring-pthread 4 3 10 0 1 on aarch64 (qemu): runs"
	rm -f "$arm"
fi
# One thread more than the kernel allows: said at once, with the limit.
limit=$(( $(cat /proc/sys/vm/max_map_count) / 2 ))
for f in kernel/pid_max kernel/threads-max; do
	v=$(cat /proc/sys/$f)
	[ "$v" -lt "$limit" ] && limit=$v
done
cycles=$(( limit / 2 + 1 ))
avail=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
if ! built ring-pthread; then
	:
elif [ $(( cycles * 2 * 32 * 2 )) -gt "$avail" ]; then
	echo "# skipping the thread limit: $limit threads need more memory"
else
	expect 1 ring-pthread 2 $cycles 1 0 1
	grep -q "threads exceed what /proc/sys/" "$err"
	ok $? "ring-pthread over the kernel's thread limit names it"
	# At it too: the process's own thread and maps count, else it made
	# nearly all its threads, then failed.
	expect 1 ring-pthread $limit 1 1 0 1
	grep -q "threads exceed what /proc/sys/" "$err"
	ok $? "ring-pthread at the kernel's thread limit names it"
fi
built ring-boost && expect 0 ring-boost 4 3 10 100000 1
# The Boost peers' stacks have no guard page but a mark at the bottom,
# checked as each is freed: a stack whose lowest byte changed fails the
# program, saying so; one left alone is freed silently.
if built ring-boost; then
	stk=$(mktemp -d)
	cat >"$stk/stk.cpp" <<-'EOS'
	#include "boost-stack.h"
	int main()
	{
		peers::checked_stack stack("stk", peers::boost_stack_base);
		auto fine = stack.allocate(), bad = stack.allocate();
		stack.deallocate(fine);
		static_cast<char *>(bad.sp)[-static_cast<long>(bad.size)] ^= 1;
		stack.deallocate(bad);
		return 0;
	}
	EOS
	"${CXX:-g++}" -std=c++17 -I"$(dirname "$0")/../bench/peers/cpp" \
		-o "$stk/stk" "$stk/stk.cpp" -lboost_context 2>"$err" &&
		"$stk/stk" >/dev/null 2>"$err"
	rc=$?
	[ $rc = 1 ] && [ "$(cat "$err")" = \
		"stk: a fiber overran its $((16 * 1024))-byte stack" ]
	ok $? "a Boost peer's stack overrun: exit 1, and why" \
		"(status $rc: $(head -n 1 "$err"))"
	rm -rf "$stk"
fi
built ring-go && expect 0 ring-go 4 3 10 1000 2
# The Go peers build with the Go 1.22 their go.mod asks for (a newer one
# there stops an older Go, GOTOOLCHAIN=local): vet finds nothing of the
# standard library they use newer than that.
gomod=$(dirname "$0")/../bench/peers/go
go=$(command -v go || ls /usr/local/go/bin/go 2>/dev/null) # as its Makefile
if [ -z "$go" ]; then
	echo "# skipping the Go peers' version: no go"
else
	grep -qx "go 1.22" "$gomod/go.mod" &&
		(cd "$gomod" && GOTOOLCHAIN=local "$go" vet ./... 2>"$err")
	ok $? "the Go peers' go.mod asks for Go 1.22, and vet finds no newer API"
fi
# Go dies of an address space it cannot have, with a runtime trace: the
# memory check says so first.
if built ring-go; then
	(ulimit -v 4000000
	 exec timeout 120 "$bin/ring-go" 16 1 1 268435456 1) \
		>/dev/null 2>"$err"
	[ $? = 1 ] && grep -q "but ulimit -v allows 3906 MiB" "$err"
	ok $? "ring-go over ulimit -v: refused at once, naming the limit"
	# The runtime holds over a gigabyte of address space from its start:
	# the check counts it, or 112 stacks of 32 MiB passed it and died.
	for r in 14 9; do
		(ulimit -v 4000000; exec timeout 120 "$bin/ring-go" \
			8 $r 100 30000000 2) >/dev/null 2>"$err"
		rc=$?
		msg="beside the [0-9]* MiB of address space it holds"
		case $r in
		14) [ $rc = 1 ] && grep -q "$msg" "$err"
		    ok $? "ring-go R=14 under ulimit -v: refused" ;;
		9)  ok $rc "ring-go R=9 under ulimit -v: runs" ;;
		esac
	done
fi
# Rust aborts on a failed allocation: its peers check the limit first.
for p in ring-tokio ring-async-std; do
	built $p || continue
	(ulimit -v 400000; exec timeout 120 "$bin/$p" 2 200000 2 0 1) \
		>/dev/null 2>"$err"
	[ $? = 1 ] && grep -q "but ulimit -v allows 391 MiB" "$err"
	ok $? "$p over ulimit -v: refused at once, naming the limit"
	# A runtime's worker that cannot start panics in its own thread:
	# the run fails and says why (tokio hung, async-std aborted), once
	# though two threads fail (async-std's driver and executor: two lines
	# in 1 run of 40, so 50 runs).
	failed=0
	for i in $(seq 50); do
		(ulimit -v 10000; exec timeout 60 "$bin/$p" 2 1 1 0 4) \
			>/dev/null 2>"$err"
		[ $? = 1 ] &&
			grep -q "^$p: panicked at .*spawn .*thread" "$err" &&
			[ "$(wc -l <"$err")" = 1 ] || { failed=1; break; }
	done
	[ $failed = 0 ]
	ok $? "$p, its workers' threads refused: exit 1, and why, on one line"
	# Just under the limit by that check, the run may still not fit (the
	# workers' stacks, malloc's arenas): an allocation refused fails it
	# with one line, not Rust's abort and backtrace.
	bad=0 fits=0
	why="^$p: (out of memory: an allocation of [0-9]+ bytes was refused"
	why="$why|panicked at .*spawn .*thread)"
	for v in 100000 150000 200000; do
		r=$(( v * 1024 / 2048 / 2 * 95 / 100 ))	# 95 % of the estimate
		for procs in 1 2 8; do
			run="2 $r 2 0 $procs"
			(ulimit -v $v; exec timeout 60 "$bin/$p" $run) \
				>/dev/null 2>"$err"
			rc=$?
			if [ $rc = 0 ]; then
				fits=$((fits + 1))
			elif [ $rc != 1 ] || ! grep -Eq "$why" "$err"; then
				bad=$((bad + 1))
				echo "# ulimit -v $v, $run: status $rc:" \
					"$(head -n 1 "$err")"
			fi
		done
	done
	[ $bad = 0 ]
	ok $? "$p just under ulimit -v: $fits of 9 fit, the rest say why"
done
# main_ticks PROG ARGS...: the CPU ticks of a long ring's main thread once
# the run has had 60 (enough to spawn its members), then killed.
main_ticks() {
	probe_running ticks_after_60 "$bin/$1" "${@:2}"
}
ticks_after_60() {
	[ "$(cat /proc/$1/task/*/stat 2>/dev/null |
		awk '{ t += $14 + $15 } END { print t + 0 }')" -ge 60 ] &&
		awk '{ print $14 + $15 }' /proc/$1/task/$1/stat
}
# P > 1: the rings spawn their members on the P workers, as the others
# make them on their P native threads; the main thread only waits.
for p in ring-tokio ring-async-std; do
	built $p || continue
	got=$(main_ticks $p 2 100000 1000000000 0 2)
	[ -n "$got" ] && [ "$got" -le 2 ]
	ok $? "$p P = 2: the main thread only waits (${got:-?} ticks of CPU)"
done
built ring-tokio && expect 0 ring-tokio 5 20 100 0 2
built ring-cpp-pool && expect 0 ring-cpp-pool 5 20 100 0 3
# A worker of ring-cpp-pool that cannot start, for want of a thread or of
# memory for its state (a std::bad_alloc, which an LD_PRELOAD makes the
# main thread's first operator new after its first pthread_create throw):
# exit 1, and why, on one line, not an uncaught exception's abort.
if built ring-cpp-pool; then
	(ulimit -v 100000; exec timeout 60 "$bin/ring-cpp-pool" 2 1 1 0 64) \
		>/dev/null 2>"$err"
	[ $? = 1 ] && [ "$(wc -l <"$err")" = 1 ] &&
		grep -q "cannot start worker thread [0-9]* of 64: Resource" \
			"$err"
	ok $? "ring-cpp-pool, its workers' threads refused: exit 1, and why"
	shim=$(mktemp -d)
	cat >"$shim/shim.cpp" <<-'EOS'
	#include <dlfcn.h>
	#include <pthread.h>
	#include <cstdlib>
	#include <new>
	static thread_local bool armed;
	extern "C" int pthread_create(pthread_t *t, const pthread_attr_t *a,
				      void *(*f)(void *), void *arg)
	{
		auto real = reinterpret_cast<decltype(&pthread_create)>(
			dlsym(RTLD_NEXT, "pthread_create"));
		int rc = real(t, a, f, arg);
		armed = true;
		return rc;
	}
	void *operator new(std::size_t n)
	{
		void *p = armed ? nullptr : std::malloc(n ? n : 1);
		if (p == nullptr)
			throw std::bad_alloc();
		return p;
	}
	EOS
	if ! "${CXX:-g++}" -shared -fPIC -O2 -o "$shim/shim.so" \
		"$shim/shim.cpp" -ldl 2>"$err"; then
		echo "# skipping ring-cpp-pool's bad_alloc: $(head -n 1 "$err")"
	else
		LD_PRELOAD=$shim/shim.so timeout 60 "$bin/ring-cpp-pool" \
			2 1 1 0 2 >/dev/null 2>"$err"
		rc=$?
		[ $rc = 1 ] && [ "$(wc -l <"$err")" = 1 ] && grep -q \
			"cannot start worker thread 2 of 2: std::bad_alloc" \
			"$err"
		ok $? "ring-cpp-pool, no memory for a worker: exit 1, and why" \
			"(status $rc: $(head -n 1 "$err"))"
	fi
	rm -rf "$shim"
fi
for p in ring-cpp ring-cpp-pool ring-async-std ring-tokio; do
	built $p && expect 2 $p 4 3 10 1 1	# stackless: D must be 0
done
# The C++20 rings' usage gives the reason their refusal of D gives: a
# coroutine keeps its frame (on the heap) across a wait, but no stack.
for p in ring-cpp ring-cpp-pool; do
	built $p || continue
	timeout 120 "$bin/$p" 4 3 10 1 1 >/dev/null 2>"$err"
	why=$(sed -n '1s/^.*D must be 0: //p' "$err")
	out=$(timeout 120 "$bin/$p" --help)
	[ -n "$why" ] && [[ $out == *"D  must be 0 ($why)"* ]]
	ok $? "$p --help gives D's reason as its refusal does ('$why')"
done
for p in ring-cpp ring-boost; do
	built $p && expect 2 $p 4 3 10 0 2	# single-threaded: P must be 1
done

# A result that cannot be written (a full disk) fails the run: exit 1,
# with the reason, not an empty success.
for run in "ring 2 1 1 0 1" "ring-lto 2 1 1 0 1" "switch -n 10 0" \
	   "create 10" "skynet 100" "ring-pthread 2 1 1 0 1" \
	   "ring-go 2 1 1 0 1" "ring-async-std 2 1 1 0 1" \
	   "ring-tokio 2 1 1 0 1" "ring-cpp 2 1 1 0 1" \
	   "ring-cpp-pool 2 1 1 0 1" "ring-boost 2 1 1 0 1" "create-cpp 10" \
	   "create-boost 10" "skynet-cpp 100" "skynet-go 100"; do
	p=${run%% *}
	built $p || continue
	timeout 120 "$bin/$p" ${run#* } >/dev/full 2>"$err"
	[ $? = 1 ] && grep -qi "cannot write the result to stdout: .*no space" \
		"$err"
	ok $? "$run >/dev/full: exit 1, and why"
done

# The peers' Makefiles, in a copy of what they build from: a CPPFLAGS
# given to make (as the top Makefile passes one on) reaches the compiles,
# and does not take away the peers' own include paths.
peers_tree() {	# DIR: the sources of the C and C++ peers, in DIR/bench
	local src
	src=$(cd "$(dirname "$0")/../bench" && pwd)
	mkdir -p "$1/bench/peers" &&
		cp "$src"/args.[ch] "$src"/flags.mk "$1/bench" &&
		cp -r "$src"/peers/ring-check.h "$src"/peers/deps.mk \
			"$src"/peers/c "$src"/peers/cpp "$1/bench/peers"
}
tree=$(mktemp -d)
if peers_tree "$tree"; then
	for run in "c ring-pthread" "cpp ring-cpp"; do
		set -- $run
		built $2 || continue
		own_make "$err" "$tree/bench/peers/$1" \
			CPPFLAGS=-DPEERS_CPPFLAGS "$tree/bench/bin/$2" &&
			sed -e :a -e '/\\$/N; s/\\\n//; ta' "$err" |
			grep -q -- "-DPEERS_CPPFLAGS .*/$2\.c" &&
			"$tree/bench/bin/$2" 4 3 10 0 1 >/dev/null
		ok $? "make -C bench/peers/$1 CPPFLAGS=-D...: $2 builds with it"
	done
fi
rm -rf "$tree"

# Unknown options, before or after the arguments.
for p in ring ring-pthread ring-go ring-async-std ring-tokio ring-cpp \
	 ring-cpp-pool ring-boost; do
	built $p || continue
	expect 2 $p --bogus 4 3 10 0 1
	expect 2 $p 4 3 10 0 1 --bogus
done
for p in create create-cpp create-boost skynet skynet-cpp skynet-go; do
	built $p || continue
	expect 2 $p --bogus 10
	expect 2 $p 10 --bogus
done

# -h and --help: the usage on stdout, nothing on stderr, exit 0; exit 1 if
# it cannot be written.
help_is() {
	local prog=$1 out rc
	shift
	out=$(timeout 120 "$bin/$prog" "$@" 2>"$err")
	rc=$?
	[ $rc = 0 ] && [[ $out == "usage: $bin/$prog "* ||
		$out == "usage: $prog "* ]] && ! [ -s "$err" ]
	ok $? "$prog $*: the usage on stdout, exit 0"
}
for p in ring ring-lto switch create skynet ring-pthread ring-go \
	 ring-async-std ring-tokio ring-cpp ring-cpp-pool ring-boost \
	 create-cpp create-boost skynet-cpp skynet-go; do
	built $p || continue
	help_is $p --help
	help_is $p -h
	timeout 120 "$bin/$p" --help >/dev/full 2>"$err"
	[ $? = 1 ] && grep -qi "cannot write the usage to stdout: .*no space" \
		"$err"
	ok $? "$p --help >/dev/full: exit 1, and why"
done
help_is ring -v --sched rr --help
help_is switch -n 10 -f -h
# As in GNU's programs: -h or --help anywhere, whatever the other
# arguments are (too many, bad, a bad option before it).
for p in ring ring-lto switch create skynet ring-pthread ring-go \
	 ring-async-std ring-tokio ring-cpp ring-cpp-pool ring-boost \
	 create-cpp create-boost skynet-cpp skynet-go; do
	built $p || continue
	help_is $p --help 2
	help_is $p 2 1 1 0 1 -h
	help_is $p --bogus x --help
done
out=$(timeout 120 "$bin/ring" --help)
[[ $out == *"--sched NAME"* && $out == *"N R M D P"* ]]
ok $? "ring --help shows its options and arguments"

# Microbenchmarks.
for p in create create-cpp create-boost; do
	built $p || continue
	expect 0 $p 1
	expect 0 $p 100000
	for a in "" 0 -1 x "1 2" 99999999999999999999 1099511627777; do
		expect 2 $p $a
	done
done
expect 0 create --sched none 1000
expect 0 create --sched rr 1000
# create times one processor: a long run's native threads, once it had 20
# ticks of CPU, are main's and that processor's, with either scheduler.
tasks_after_20() {
	[ "$(cat /proc/$1/stat 2>/dev/null |
		awk '{ t = $14 + $15 } END { print t + 0 }')" -ge 20 ] &&
		ls /proc/$1/task | wc -l
}
for s in ll rr; do
	got=$(probe_running tasks_after_20 "$bin/create" --sched $s \
		1099511627776)
	[ "$got" = 2 ]
	ok $? "create --sched $s: main and one processor, ${got:-?} native threads"
done
for p in skynet skynet-cpp skynet-go; do
	built $p || continue
	expect 0 $p 1000
	for a in 0 2 11 10000000000 x "10 0"; do
		expect 2 $p $a
	done
done
expect 0 skynet --sched rr 10000 2
# ll: a subtree in its root child's group, the ten groups over P processors
for p in 2 3; do
	expect 0 skynet --sched ll 10000 $p
done
# There, as skynet -v's counters show: each inner node is woken once, by
# its children, on its own processor; the 11 of each subtree of 1000
# leaves on processor k % 3, processor 0 also the root (from anywhere).
expect 0 skynet -v --sched ll 1000 3
got=$(awk '/^processor / { printf "%s%d", n++ ? " " : "", $7 + $10 }' "$err")
remote=$(awk '/^processor [12]: / { r += $10 } END { print r + 0 }' "$err")
[ "$got" = "45 33 33" ] && [ "$remote" = 0 ]
ok $? "skynet -v --sched ll 1000 3: wakes 45, 33, 33, local (got '$got', $remote remote)"
out=$(timeout 120 "$bin/switch" -n 1000 0 100 2>&1) &&
	[[ $(echo "$out" | wc -l) = 3 ]]
ok $? "switch -n 1000 0 100 prints a header and two rows"
for t in 1 3 1000; do
	out=$(timeout 120 "$bin/switch" -t $t -n 100 0 2>&1) &&
		[[ $(echo "$out" | wc -l) = 2 ]]
	ok $? "switch -t $t -n 100 0 runs a cycle of $t threads"
done
# At a stride the threads must still take turns in one cycle: one left
# out would not finish, and the run would fail.
for a in "-t 12 -s 4" "-s 6 -t 12" "-t 12 -s 12" "-t 7 -s 1"; do
	out=$(timeout 120 "$bin/switch" $a -n 100 0 1000 2>&1) &&
		[[ $(echo "$out" | wc -l) = 3 ]]
	ok $? "switch $a -n 100 0 1000 runs every thread of the cycle"
done
# And in the ring's order, as -v shows: thread j of every cycle of STRIDE
# threads, then thread j + 1.
for a in "-t 12 -s 4:0 4 8 1 5 9 2 6 10 3 7 11" "-t 3:0 1 2" \
	 "-t 12 -s 6:0 6 1 7 2 8 3 9 4 10 5 11" \
	 "-t 40 -s 2:0 2 4 6 8 10 12 14 16 18 20 22 24 26 28 30 ..."; do
	timeout 120 "$bin/switch" -v ${a%%:*} -n 10 0 >/dev/null 2>"$err" &&
		got=$(sed -n 's/^first turns, by thread in address order: //p' \
			"$err") && [ "$got" = "${a#*:}" ]
	ok $? "switch -v ${a%%:*}: the ring's order (got '$got')"
done
out=$(timeout 120 "$bin/switch" -n 100 -f -t 3 0 64 2>&1) &&
	[[ $(echo "$out" | wc -l) = 3 ]]
ok $? "switch -n 100 -f -t 3 0 64: -f among the options"
# --floor copies as many bytes as a switch saves, each size, and exits 1
# if a step left any of them uncopied.
sizes() { timeout 120 "$bin/switch" "$@" 2>&1 | awk 'NR > 1 { print $1 }'; }
want=$(sizes -n 1000 0 100 1000)
[ "$(echo $want | wc -w)" = 3 ] &&
	[ "$(sizes --floor -n 1000 0 100 1000)" = "$want" ] &&
	[ "$(sizes -f --floor -n 1000 0 100 1000)" = "$want" ]
ok $? "switch --floor [-f] copies, whole, what a switch saves: $(echo $want)"
out=$(timeout 120 "$bin/switch" --floor -n 1000 0 2>&1) &&
	[[ $(echo "$out" | tail -n 1) =~ ^\ +[0-9]+\ +[0-9]+\.[0-9]+$ ]]
ok $? "switch --floor -n 1000 0 prints a size and a time"
# A processor's native thread that cannot be made fails the run, saying
# why (the limit counts a user's processes: not root's).
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null ||
   ! command -v prlimit >/dev/null; then
	echo "# skipping the process limit: not root, or no setpriv or prlimit"
else
	for run in "create 100" "skynet 100" "ring 2 1 1 0 1"; do
		timeout 120 setpriv --reuid=65534 --regid=65534 --clear-groups \
			prlimit --nproc=1 "$bin/"$run >/dev/null 2>"$err"
		[ $? = 1 ] && grep -q "Resource temporarily unavailable" "$err"
		ok $? "$run under ulimit -u 1: exit 1, and why"
	done
fi
# Short of memory, create fails in init, start or a spawn, depending on
# the limit: whichever, it says why.
refused=0 said=0
for v in $(seq 4000 500 20000); do
	(ulimit -v $v; exec timeout 120 "$bin/create" 3000) >/dev/null 2>"$err"
	rc=$?
	case $rc in
	0) ;;
	1) refused=$((refused + 1))
	   grep -Eq ": (Cannot allocate memory|Resource temporarily unavailable)$" \
		"$err" && said=$((said + 1)) ||
		echo "# ulimit -v $v: $(cat "$err")" ;;
	*) refused=$((refused + 1)); echo "# ulimit -v $v: status $rc" ;;
	esac
done
[ $refused -gt 0 ] && [ $said = $refused ]
ok $? "create under ulimit -v 4000..20000: $refused failures, each says why"
# Each microbenchmark's self-check fails the run when USCHED_BENCH_FAULT
# injects what it is there to catch; a fault a program does not inject is
# a usage error, naming the one it does.
fault_fails() {	# FAULT MESSAGE PROG ARGS...
	local fault=$1 msg=$2 prog=$3
	shift 3
	USCHED_BENCH_FAULT=$fault timeout 120 "$bin/$prog" "$@" >/dev/null \
		2>"$err"
	[ $? = 1 ] && grep -q -- "$msg" "$err"
	ok $? "USCHED_BENCH_FAULT=$fault $prog $*: exit 1, '$msg'"
}
for s in ll rr none; do
	fault_fails lost "999 of 1000 threads ran" create --sched $s 1000
done
fault_fails lost "0 of 1 threads ran" create 1
built create-cpp &&
	fault_fails lost "999 of 1000 coroutines ran" create-cpp 1000
built create-boost &&
	fault_fails lost "999 of 1000 fibers ran" create-boost 1000
for a in "--sched ll 1000 2" "--sched rr 1000"; do
	fault_fails sum "root got 500500, expected 499500" skynet $a
done
built skynet-cpp &&
	fault_fails sum "sum is 500500, expected 499500" skynet-cpp 1000
built skynet-go && fault_fails sum "sum is 500500, want 499500" skynet-go 1000
for a in "-n 10 0 1000" "-f -t 3 -n 10 0" "-t 4 -s 2 -n 10 100"; do
	fault_fails stack "a thread's stack changed across its blocks" switch $a
done
for a in "--floor -n 10 0" "-f --floor -n 10 0 4096"; do
	fault_fails stack "floor: a step did not copy all" switch $a
done
for run in "switch stack -n 10 0" "create lost 10" "create-cpp lost 10" \
	   "create-boost lost 10" "skynet sum 100" "skynet-cpp sum 100" \
	   "skynet-go sum 100"; do
	set -- $run
	built $1 || continue
	USCHED_BENCH_FAULT=pad expect 2 $1 ${run#* * }
	grep -q "USCHED_BENCH_FAULT is 'pad'; the one fault here is '$2'" "$err"
	ok $? "USCHED_BENCH_FAULT=pad $1: refused, naming '$2'"
	[ $1 = switch ] || USCHED_BENCH_FAULT= expect 0 $1 ${run#* * }
done
for a in "-n x" "-n" "--bogus" "-n 10 --bogus" "-n 0" "-1" "-t 0" "-t" \
	 "-t x" "-n 10 -t 99999999" "-f -n" "-f --bogus" "--floor -n" \
	 "--floor x" "--floor -t 3" "-s" "-s 0" "-s x" "-t 10 -s 4" \
	 "-s 3" "--floor -s 1" "--floor -v" "-v --floor"; do
	timeout 120 "$bin/switch" $a >/dev/null 2>&1; [ $? = 2 ]
	ok $? "switch $a exits 2"
done

# The bounded numbers name the argument and its bounds.
msg_is() {
	local want=$1
	shift
	timeout 120 "$@" >/dev/null 2>"$err"
	[ $? = 2 ] && grep -qF -- "$want" "$err"
	ok $? "${*#$bin/}: says $want"
}
msg_is "THREADS: not a number from 1 to 16777216: '0'" "$bin/switch" -t 0
msg_is "ROUNDS: not a number from 1 to 1099511627776: 'x'" "$bin/switch" -n x
msg_is "EXTRA_BYTES: not a number from 0 to" "$bin/switch" -n 10 0 x
msg_is "--floor runs no threads: -t means nothing with it" "$bin/switch" \
	--floor -t 2 0
msg_is "--floor runs no threads: -s means nothing with it" "$bin/switch" \
	--floor -s 1 0
msg_is "STRIDE 4 does not divide THREADS 10 into cycles" "$bin/switch" \
	-t 10 -s 4 0
# A newline or an escape in an argument or a variable is shown as \n or
# \xHH: the refusal stays on one line, the usage on the next, and nothing
# of it drives the terminal.
one_line() {	# WANT CMD...: exit 2, the first line ending ": WANT"
	local want=$1 prog
	shift
	for prog; do [[ $prog == "$bin/"* ]] && break; done
	timeout 120 "$@" >/dev/null 2>"$err"
	[ $? = 2 ] && [[ $(head -n 1 "$err") == *": $want" ]] &&
		[[ $(sed -n 2p "$err") == usage:* ]]
	ok $? "${prog##*/}: refused on one line, showing $want"
}
for p in ring ring-lto ring-pthread ring-cpp ring-cpp-pool ring-boost; do
	built $p || continue
	one_line "N: not an unsigned 64-bit decimal: '2\n'" \
		"$bin/$p" $'2\n' 1 1 0 1
	one_line "USCHED_RING_FAULT is 'a\nb'; the faults are 'spurious' and 'pad'" \
		env USCHED_RING_FAULT=$'a\nb' "$bin/$p" 2 1 1 0 1
done
one_line "unknown option '--x\x1b[0m'" "$bin/ring" $'--x\e[0m' 2 1 1 0 1
one_line "unknown scheduler 'a\nb' (rr|ll)" "$bin/ring" --sched $'a\nb' \
	2 1 1 0 1
one_line "USCHED_PIN is '1\n'; it must be 0 or 1 (or unset)" \
	env USCHED_PIN=$'1\n' "$bin/skynet" 10
for p in skynet skynet-cpp; do
	built $p && one_line "LEAVES must be a power of 10 up to 10^9, not '10\n'" \
		"$bin/$p" $'10\n'
done
for p in create create-cpp create-boost; do
	built $p && one_line "COUNT: not a number from 1 to 1099511627776: '1\n'" \
		"$bin/$p" $'1\n'
done
one_line "USCHED_BENCH_FAULT is 'a\x7fb'; the one fault here is 'lost'" \
	env USCHED_BENCH_FAULT=$'a\x7fb' "$bin/create" 1
one_line "unknown option '-\x1b'" "$bin/switch" -n 10 $'-\e'
built ring-go &&
	one_line "USCHED_RING_FAULT is 'a\nb'; the faults are 'spurious' and 'pad'" \
		env USCHED_RING_FAULT=$'a\nb' "$bin/ring-go" 2 1 1 0 1
# A value shown is cut at 64 bytes: '...' after them says so (here, where
# the x that makes it bad is), and is not there if nothing was cut.
zeros=$(printf '%064d' 0)
for p in ring ring-lto ring-pthread ring-cpp ring-cpp-pool ring-boost; do
	built $p || continue
	one_line "N: not an unsigned 64-bit decimal: '$zeros...'" \
		"$bin/$p" "${zeros}x" 1 1 0 1
done
one_line "N: not an unsigned 64-bit decimal: '${zeros#0}x'" \
	"$bin/ring" "${zeros#0}x" 1 1 0 1
one_line "USCHED_BENCH_FAULT is '$zeros...'; the one fault here is 'lost'" \
	env USCHED_BENCH_FAULT="${zeros}x" "$bin/create" 1
if built ring-go; then
	one_line "USCHED_RING_FAULT is '$zeros...'; the faults are 'spurious' and 'pad'" \
		env USCHED_RING_FAULT="${zeros}x" "$bin/ring-go" 2 1 1 0 1
	one_line "USCHED_RING_FAULT is '${zeros#0}x'; the faults are 'spurious' and 'pad'" \
		env USCHED_RING_FAULT="${zeros#0}x" "$bin/ring-go" 2 1 1 0 1
fi
built skynet-go &&
	one_line "USCHED_BENCH_FAULT is 'a\x1bb'; the one fault here is 'sum'" \
		env USCHED_BENCH_FAULT=$'a\eb' "$bin/skynet-go" 10
out=$(timeout 120 "$bin/switch" -n 10 0 x 2>/dev/null)
[ $? = 2 ] && [ -z "$out" ]
ok $? "switch -n 10 0 x: fails before timing the good size"
# Runs that cannot fit fail (exit 1) with the reason: the memory check,
# before any timing; an allocation that fails all the same.
out=$( (ulimit -v 4000000; timeout 120 "$bin/switch" -t 16777216 524288) \
	2>&1)
[ $? = 1 ] && [[ $out == *"needs about "*" MiB of memory"* ]] &&
	[[ $out != *"saved B"* ]]
ok $? "switch -t 16777216 524288: needs more memory than there is"
out=$( (ulimit -v 400000; timeout 120 "$bin/switch" -n 1 -t 10000 524288) \
	2>&1)
[ $? = 1 ] && [[ $out == *"a block failed: Cannot allocate memory"* ]]
ok $? "switch under a 400 MB limit: a block failed, and why"
out=$( (ulimit -v 400000; timeout 120 "$bin/switch" -n 1 -t 10000 -s 2 \
	524288) 2>&1)
[ $? = 1 ] && [[ $out == *"no memory for 10000 threads' stacks"* ]]
ok $? "switch -s under a 400 MB limit: its stacks do not fit, and why"
out=$( (ulimit -s 128; timeout 120 "$bin/switch" -n 10 0 200000) 2>&1)
[ $? = 1 ] && [[ $out == *"more stack than ulimit -s allows"* ]] &&
	[[ $out != *"saved B"* ]]
ok $? "switch under ulimit -s 128: 200000 extra bytes do not fit, and why"
msg_is "COUNT: not a number from 1 to" "$bin/create" 0
built create-cpp && msg_is "COUNT: not a number from 1 to" "$bin/create-cpp" -1
msg_is "P: not a number from 1 to" "$bin/skynet" 10 0

tap_done
