#!/bin/bash
# make report on a machine that lacks what it installs: run as root, it
# installs hyperfine and the C++ peers' packages with apt-get; otherwise it
# stops without hyperfine, and goes on without the C++ peers. A PATH of its
# own hides hyperfine or g++, and stubs stand for id and apt-get.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/tap.sh"

if ! command -v hyperfine >/dev/null; then
	echo "1..0 # SKIP hyperfine is not installed"
	exit 0
fi

# farm DIR UID NAMES...: DIR holds a link to every command on PATH but
# NAMES, an id that gives UID, and an apt-get that records its arguments.
farm() {
	local dir=$1 uid=$2 d f
	shift 2
	mkdir -p "$dir"
	IFS=: read -ra path <<<"$PATH"
	for d in "${path[@]}"; do
		for f in "$d"/*; do
			[ -x "$f" ] && [ ! -e "$dir/${f##*/}" ] &&
				ln -s "$f" "$dir/${f##*/}"
		done
	done
	rm -f "$dir/id" "$dir/apt-get"
	for f in "$@"; do rm -f "$dir/$f"; done
	printf '#!/bin/sh\necho %s\n' "$uid" >"$dir/id"
	printf '#!/bin/sh\necho "$*" >>%s/apt.log\n' "$tmp" >"$dir/apt-get"
	chmod +x "$dir/id" "$dir/apt-get"
}

# report DIR: make report with DIR as PATH, a tiny sweep of U-ll-1T alone, into
# $tmp/out; its stderr in $tmp/err.
report() {
	rm -rf "$tmp/out" "$tmp/apt.log"
	PATH=$1 REPORT_DIR="$tmp/out" \
		SWEEP_ARGS="--only U-ll-1T --ns 2 --rs 2 --runs 1 --warmup 0" \
		own_env "$root/scripts/report.sh" >"$tmp/log" 2>"$tmp/err"
}

farm "$tmp/nohf" 1000 hyperfine
report "$tmp/nohf"
[ $? = 1 ] && [ ! -e "$tmp/out" ] &&
	grep -q "^report: please install hyperfine (as root: apt-get install hyperfine)" \
		"$tmp/err"
ok $? "not root, no hyperfine: exit 1, naming it, before any sweep"

farm "$tmp/nocxx" 1000 g++
report "$tmp/nocxx"
rc=$?
[ $rc = 0 ] && [ ! -e "$tmp/apt.log" ] &&
	grep -q "^report: going on without the C++ peers that need g++ libboost-context-dev (as root: apt-get install g++ libboost-context-dev)" \
		"$tmp/err" &&
	grep -q "^| U-ll-1T |" "$tmp/out/report.md"
ok $? "not root, no g++: goes on without the C++ peers, saying so; the report has U-ll-1T (exit $rc)"
[ $rc = 0 ] || sed 's/^/# /' "$tmp/err"

farm "$tmp/root" 0 g++ hyperfine
PROFILE=huge report "$tmp/root"
[ $? = 2 ] && [ ! -e "$tmp/apt.log" ] && ! grep -q . "$tmp/log" &&
	grep -q "argument --profile: invalid choice: 'huge'" "$tmp/err"
ok $? "root, PROFILE=huge: exit 2, naming it, before installing or building"

# --results in SWEEP_ARGS would send the sweep where the graphs do not
# look: refused, in each form argparse takes it, before anything is done.
for arg in "--results $tmp/mine" "--results=$tmp/mine" "--res $tmp/mine"; do
	rm -rf "$tmp/out" "$tmp/mine" "$tmp/apt.log"
	PATH="$tmp/root" REPORT_DIR="$tmp/out" \
		SWEEP_ARGS="--only U-ll-1T --ns 2 --rs 2 $arg --runs 1" \
		own_env "$root/scripts/report.sh" >"$tmp/log" 2>"$tmp/err"
	rc=$?
	[ $rc = 2 ] && [ ! -e "$tmp/apt.log" ] && ! grep -q . "$tmp/log" &&
		[ ! -e "$tmp/out" ] && [ ! -e "$tmp/mine" ] &&
		[ "$(cat "$tmp/err")" = "report: SWEEP_ARGS may not give --results (${arg%%[ =]*}): the report is made from $tmp/out/results-quick; give REPORT_DIR=DIR for DIR/results-quick" ]
	ok $? "root, SWEEP_ARGS with '${arg/$tmp/DIR}': exit 2, one line, before installing or building (exit $rc)"
	[ $rc = 2 ] || sed 's/^/# /' "$tmp/err" | tail -5
done

# No program built yet (a fresh tree; here an empty --bin): the check
# before the build passes, and the sweep after it finds none.
mkdir -p "$tmp/empty"
rm -rf "$tmp/out" "$tmp/apt.log"
PATH="$tmp/root" REPORT_DIR="$tmp/out" \
	SWEEP_ARGS="--only U-ll-1T --ns 2 --rs 2 --bin $tmp/empty" \
	own_env "$root/scripts/report.sh" >"$tmp/log" 2>"$tmp/err"
rc=$?
[ $rc = 1 ] && [ -e "$tmp/apt.log" ] && grep -q "^make" "$tmp/log" &&
	[ "$(tail -1 "$tmp/err")" = "sweep.py: none of the selected programs is in $tmp/empty (make bench builds them)" ]
ok $? "root, no program built before: installs, builds, then sweeps (exit $rc)"
[ $rc = 1 ] || sed 's/^/# /' "$tmp/err" | tail -5

farm "$tmp/root" 0 g++
report "$tmp/root"
[ $? = 0 ] &&
	grep -qx "install -y -qq g++ libboost-context-dev" "$tmp/apt.log" &&
	grep -q "^| U-ll-1T |" "$tmp/out/report.md"
ok $? "root, no g++: apt-get installs g++ and Boost, then the report"

tap_done
