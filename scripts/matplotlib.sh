#!/bin/bash
# Prints a python3 that can import matplotlib, installing matplotlib if
# needed: with pip for the python3 on PATH; from Debian for Debian's own
# python3, whose pip refuses to install (PEP 668); else into build/venv.
set -euo pipefail
cd "$(dirname "$0")/.."

has() { "$1" -c 'import matplotlib' 2>/dev/null; }

if has python3 || { python3 -m pip install -q matplotlib >&2 2>/dev/null &&
		    has python3; }; then
	echo python3
	exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		python3-matplotlib python3-venv >&2
	if has python3; then
		echo python3
		exit 0
	fi
fi
# Absolute: the caller may be in another directory.
venv=$PWD/build/venv/bin/python3
has "$venv" || { python3 -m venv build/venv >&2 &&
		 "$venv" -m pip install -q matplotlib >&2; }
has "$venv" || { echo "matplotlib: cannot install it" >&2; exit 1; }
echo "$venv"
