#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# run-integration.sh [TEST...]: runs the integration tests (default: every
# tests/integration/*.sh) as root, each in its own bash with a time limit.
# Counts their checks ("ok"/"FAIL" lines); a script that fails without a
# FAIL line counts as one failure, exit 77 as skipped. After each script it
# checks that nothing was left behind (loop devices on test files, truestat
# programs, the blk tracer). A failed test's files are kept in
# .output/failed-tests (TS_KEEP_FAILED). Ends with "N passed, N failed,
# N skipped".
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

if [[ $(id -u) -ne 0 ]]; then
	echo "integration tests need root (they load BPF programs)"
	echo "0 passed, 1 failed"
	exit 1
fi
limit=${TS_TEST_TIMEOUT:-600}
tests=("$@")
((${#tests[@]})) || tests=(tests/integration/*.sh)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# a failed test's files (tests/lib/common.sh), of this run only
export TS_KEEP_FAILED=${TS_KEEP_FAILED:-$PWD/.output/failed-tests}
rm -rf "$TS_KEEP_FAILED"

passed=0 failed=0 skipped=0
leftovers() {
	losetup -a 2>/dev/null | grep truestat-test
	command -v bpftool >/dev/null && bpftool prog show 2>/dev/null | grep ' name ts_'
	grep -qs '^blk$' /sys/kernel/tracing/current_tracer && echo "blk tracer still on"
}
for t in "${tests[@]}"; do
	echo "== ${t##*/}"
	start=$SECONDS
	# a test may need longer: a "# timeout: N s" line among its first 30
	tl=$(sed -n '1,30s/^# timeout: \([0-9][0-9]*\) s.*/\1/p' "$t" | head -1)
	timeout -k 10 "${TS_TEST_TIMEOUT:-${tl:-$limit}}" bash "$t" >"$log" 2>&1
	rc=$?
	cat "$log"
	ok=$(grep -c '^  ok ' "$log")
	bad=$(grep -c '^  FAIL ' "$log")
	if ((rc == 77)); then
		skipped=$((skipped + 1))
	elif ((rc != 0 && bad == 0)); then
		echo "== ${t##*/}: exit status $rc without a failed check: counted as 1 failure"
		bad=1
	fi
	if left=$(leftovers) && [[ -n $left ]]; then
		echo "== ${t##*/}: left behind:"
		echo "$left"
		bad=$((bad + 1))
	fi
	passed=$((passed + ok))
	failed=$((failed + bad))
	echo "== ${t##*/}: $((SECONDS - start)) s"
done
echo "$passed passed, $failed failed, $skipped skipped"
((failed == 0))
