#!/bin/bash
# make report: install what is missing, build the benchmarks, run the sweep
# (PROFILE=quick by default, or full) and write report/ (REPORT_DIR=DIR:
# there instead, relative to the source tree): plots and report.md.
# SWEEP_ARGS: more options for scripts/sweep.py, as --only U-ll-1T,GO1T
# (not --results: REPORT_DIR places the results).
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${PROFILE:-quick}
out=${REPORT_DIR:-report}
results=$out/results-$profile
# The graphs are made from $results: a --results of SWEEP_ARGS (or what
# argparse takes for it, --res...) would send the sweep elsewhere.
read -ra words <<<"${SWEEP_ARGS:-}"
for w in "${words[@]}"; do
	case $w in --res*)
		echo "report: SWEEP_ARGS may not give --results (${w%%=*}): the report is made from $results; give REPORT_DIR=DIR for DIR/results-$profile" >&2
		exit 2
	esac
done
# The sweep's arguments are checked before minutes of installing and
# building, by --check, which needs neither hyperfine nor the programs (a
# dry run stops where none is built yet).
# shellcheck disable=SC2086 # SWEEP_ARGS is words
python3 scripts/sweep.py --profile "$profile" --results "$results" \
	--check ${SWEEP_ARGS:-}

# Debian packages: hyperfine runs the sweep; the C++ peers' (g++, Boost),
# as bench/peers/cpp finds them missing, are installed if we can, and
# otherwise the report goes on without those peers.
need=()
command -v hyperfine >/dev/null || need+=(hyperfine)
read -ra want <<<"$(make -s --no-print-directory -C bench/peers/cpp missing)"
if [ $((${#need[@]} + ${#want[@]})) -gt 0 ] && [ "$(id -u)" = 0 ] &&
   command -v apt-get >/dev/null; then
	echo "installing ${need[*]} ${want[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		"${need[@]}" "${want[@]}" >/dev/null
elif [ ${#need[@]} -gt 0 ]; then
	echo "report: please install ${need[*]} (as root: apt-get install ${need[*]})" >&2
	exit 1
elif [ ${#want[@]} -gt 0 ]; then
	echo "report: going on without the C++ peers that need ${want[*]} (as root: apt-get install ${want[*]})" >&2
fi

python=$(scripts/matplotlib.sh)

make bench
# Each profile's results apart: a quick sweep never replaces hours of a
# full one's points, and each resumes where it stopped.
# shellcheck disable=SC2086 # SWEEP_ARGS is words
"$python" scripts/sweep.py --profile "$profile" --results "$results" \
	${SWEEP_ARGS:-}
"$python" scripts/graph.py --results "$results" --out "$out"
