#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# run-unit.sh TEST...: runs each cmocka test binary, shows its output, and
# ends with "N passed, N failed" summed over the cmocka test counts. A binary
# that crashes, hangs (TS_UNIT_TIMEOUT seconds, default 60) or exits without
# cmocka's summary counts as one failed test. Exits 1 if anything failed.
set -uo pipefail

if (($# == 0)); then
	echo "usage: $0 TEST_BINARY..." >&2
	exit 2
fi

timeout=${TS_UNIT_TIMEOUT:-60}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# Plain cmocka output (not TAP/XML), stdout line buffered so that it keeps
# its place among the failure messages cmocka prints on stderr.
# stdbuf works by LD_PRELOAD, which ASan (make SANITIZE=1) must be told to
# accept.
export CMOCKA_MESSAGE_OUTPUT=stdout
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
run=()
command -v stdbuf >/dev/null && run+=(stdbuf -oL -eL)
command -v timeout >/dev/null && run=(timeout "$timeout" "${run[@]}")

passed=0
failed=0
for t in "$@"; do
	echo "== ${t##*/}"
	{ "${run[@]}" "$t" >"$log" 2>&1; } 2>/dev/null # no "Aborted" from bash
	rc=$?
	cat "$log"
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]\+\) test(s)\..*/\1/p' "$log" |
		tail -n 1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]\+\) test(s).*/\1/p' "$log" |
		tail -n 1)
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	# cmocka exits with its number of failures: anything else is a crash
	if [[ -z $p && -z $f ]] || ((rc != ${f:-0})); then
		case $rc in
		124) why="timed out after ${timeout}s" ;;
		127) why="could not be run" ;;
		0) why="printed no cmocka summary" ;;
		*) why="exit status $rc" ;;
		esac
		((rc > 128 && rc != 124)) && why="killed by signal $((rc - 128))"
		echo "== ${t##*/}: crashed ($why): counted as 1 failure"
		failed=$((failed + 1))
	fi
done

echo "$passed passed, $failed failed"
((failed == 0))
