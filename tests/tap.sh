# TAP for the shell tests, sourced: `ok STATUS NAME` records a point (STATUS
# 0 passes); `tap_done` prints the plan and fails if any point did.
n=0
failed=0

ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - ${*:2}"
	else
		echo "not ok $n - ${*:2}"
		failed=$((failed + 1))
	fi
}

tap_done() {
	echo "1..$n"
	[ "$failed" = 0 ]
}
