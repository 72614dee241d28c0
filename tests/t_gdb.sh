#!/bin/bash
# Backtraces in gdb, on bench/bin/switch: in a thread that blocked and was
# resumed, they go down to the thread's start (uarch_start); in the middle
# of a resume, while its stack is copied back, they end at uarch_resume.
# Neither shows frames gdb cannot name, which a wrong unwind gives. And
# -f of switch and ring reaches the dispatcher.
set -u
bin=${BENCH_BIN:-$(cd "$(dirname "$0")/../bench/bin" && pwd)}
. "$(dirname "$0")/tap.sh"

if ! command -v gdb >/dev/null || [ "$(uname -m)" != x86_64 ] ||
   [ ! -x "$bin/switch" ] || [ ! -x "$bin/ring" ]; then
	echo "1..0 # SKIP needs gdb, x86-64, bench/bin/switch and ring"
	exit 0
fi
# No debuginfod: a fresh machine may have no network.
gdb() {
	timeout 120 gdb -q -batch -nx -iex 'set debuginfod enabled off' "$@"
}
if ! gdb -ex run --args true >/dev/null 2>&1; then
	echo "1..0 # SKIP gdb cannot run programs here (ptrace refused?)"
	exit 0
fi

# Into the first resume's copy (uarch_start follows uarch_resume in
# usched.c), then to a thread's end, after many resumes.
cmds=$(mktemp)
trap 'rm -f "$cmds"' EXIT
cat >"$cmds" <<'EOF'
set pagination off
break uarch_resume
run -n 3 100 >/dev/null
while $pc >= (long)&uarch_resume && $pc < (long)&uarch_start
  stepi
end
stepi 3
echo === copy\n
bt
delete
break cycle_end
continue
echo === thread\n
bt
kill
EOF
out=$(gdb -x "$cmds" "$bin/switch" 2>&1)
copy=$(echo "$out" | sed -n '/^=== copy/,/^=== thread/p' | grep '^#')
thread=$(echo "$out" | sed -n '/^=== thread/,$p' | grep '^#')

# Frame 0 is libc's memcpy, named only where libc's symbols are installed
# (else "?? () from .../libc.so.6").
echo "$copy" | head -1 | grep -Eq 'mem(cpy|move)| from .*/libc\.so' &&
	[[ $(echo "$copy" | tail -1) == *" in uarch_resume "* ]] &&
	! echo "$copy" | tail -n +2 | grep -q '??'
rc=$?
[ $rc = 0 ] || echo "$out" | sed 's/^/# /'
ok $rc "in the copy of a resume: memcpy, then uarch_resume, where it ends"
echo "$thread" | head -1 | grep -q 'cycle_end' &&
	echo "$thread" | grep -q 'cycle_thread' &&
	[[ $(echo "$thread" | tail -1) == *" in uarch_start "* ]] &&
	! echo "$thread" | grep -q '??'
rc=$?
[ $rc = 0 ] || echo "$out" | sed 's/^/# /'
ok $rc "in a resumed thread: its frames, down to uarch_start"

# -f reaches the dispatcher: the threads of switch -f and ring -f block
# with s_share_fpctl set (their switches then skip the FP control state),
# those of switch and ring without it, unset.
for run in "switch -n 3 100" "switch -f -n 3 100" "ring 2 1 3 0 1" \
	   "ring -f 2 1 3 0 1"; do
	share=$(gdb -ex 'break ustack_block' -ex "run ${run#* } >/dev/null" \
		-ex 'printf "share %d\n", usched_here->s_share_fpctl' -ex kill \
		"$bin/${run%% *}" 2>&1 | sed -n 's/^share //p')
	want=0
	[[ $run == *" -f "* ]] && want=1
	[ -n "$share" ] && [ $((share != 0)) = $want ]
	ok $? "$run: a thread blocks with s_share_fpctl ${share:-?}" \
		"($([ $want = 1 ] && echo set || echo unset))"
done
tap_done
