# TAP for the shell tests, sourced: `ok STATUS NAME` records a point (STATUS
# 0 passes); `tap_done` prints the plan and fails if any point did. And
# `own_env` and `own_make`, for the tests of the Makefiles.
# Prefixed: a test's own variables must not reset the count.
tap_n=0
tap_failed=0

ok() {
	tap_n=$((tap_n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $tap_n - ${*:2}"
	else
		echo "not ok $tap_n - ${*:2}"
		tap_failed=$((tap_failed + 1))
	fi
}

# own_env COMMAND...: COMMAND, not a part of a make that may be running the
# tests, nor given its variables (make puts those of its command line in
# the environment).
own_env() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u CC -u CFLAGS -u CXXFLAGS \
		-u O -u DESTDIR "$@"
}

# own_make LOG DIR ARGS...: an own_env make in DIR; its output in LOG,
# shown as TAP comments if it fails.
own_make() {
	local log=$1 dir=$2
	shift 2
	own_env make -C "$dir" --no-print-directory "$@" \
		>"$log" 2>&1 || { sed 's/^/# /' "$log"; return 1; }
}

tap_done() {
	echo "1..$tap_n"
	[ "$tap_failed" = 0 ]
}
