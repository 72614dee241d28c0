#!/bin/bash
# make report: install what is missing, build the benchmarks, run the sweep
# (PROFILE=quick by default, or full) and write report/ (REPORT_DIR=DIR:
# there instead, relative to the source tree): plots and report.md.
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${PROFILE:-quick}
out=${REPORT_DIR:-report}

# Debian packages the report needs, by the command or file that shows them.
need=()
command -v hyperfine >/dev/null || need+=(hyperfine)
[ -e /usr/include/boost/context/fiber.hpp ] || need+=(libboost-context-dev)
command -v g++ >/dev/null || need+=(g++)
if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		echo "installing ${need[*]}"
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
	else
		echo "report: please install ${need[*]} (as root: apt-get install ${need[*]})" >&2
		exit 1
	fi
fi

python=$(scripts/matplotlib.sh)

make bench
# Each profile's results apart: a quick sweep never replaces hours of a
# full one's points, and each resumes where it stopped.
$python scripts/sweep.py --profile "$profile" --results "$out/results-$profile"
$python scripts/graph.py --results "$out/results-$profile" --out "$out"
