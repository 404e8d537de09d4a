#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# run-integration.sh [TEST...]: runs the integration tests (default: every
# tests/integration/*.sh) as root, each in its own bash with a time limit.
# Counts their checks ("ok"/"FAIL" lines); a script that fails without a
# FAIL line counts as one failure, exit 77 as skipped. After each script it
# removes what it left behind, saying what, and counts a failure if it
# left anything (tests/lib/leftovers.sh: cgroups, mounts, loop devices and
# their files, zram0, the blk tracer, truestat programs; at the end, the
# loop device numbers the run made). A failed test's files are kept in
# .output/failed-tests (TS_KEEP_FAILED). Ends with "N passed, N failed,
# N skipped".
#
# A test with a line "# concurrent: yes" among its first 30 runs beside the
# others, which still run one after another: it is started first, in the
# background, and its output, checks and time (its own, from its start to
# its end) come after theirs. Only a test that touches nothing they use
# nor anything the leftovers check looks at (host block and loop devices,
# BPF programs, tracefs), and whose checks hold on a busy host, may say so:
# 95-older-kernel, qemu guests in virtual time. It runs at nice 10, so
# that the host tests, whose timing is the host's, get the CPU first, and
# at nice 0 once they are done.
# SIGINT, SIGTERM or SIGHUP ends every test still running (TERM to its
# process group, which cleans up) and waits for it, removes what it left
# and says what, before the runner dies.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. tests/lib/leftovers.sh

if [[ $(id -u) -ne 0 ]]; then
	echo "integration tests need root (they load BPF programs)"
	echo "0 passed, 1 failed"
	exit 1
fi
# One run at a time on a host: the tests share its tracer, zram0 and loop
# devices, and what a test leaves is found by name (leftovers.sh). A second
# run waits for the first; its tests do not inherit the lock.
exec {lock}<>/run/truestat-tests.lock
if ! flock -n "$lock"; then
	echo "== waiting for the test run already under way here (pid $(cat /run/truestat-tests.lock))"
	flock "$lock"
fi
echo $$ >/run/truestat-tests.lock
limit=${TS_TEST_TIMEOUT:-600}
tests=("$@")
((${#tests[@]})) || tests=(tests/integration/*.sh)
logs=$(mktemp -d)
started=()	# the pid of each test started (timeout's, its process group's)
declare -A ended	# PID: "STATUS SECONDS" once that test has ended

# stop: ends the tests still running and waits for them; timeout passes
# the TERM on to the test's whole process group, and kills it 10 s later
stop() {
	local p
	for p in $(jobs -p); do kill -TERM "$p" 2>/dev/null; done
	wait
}
# interrupted SIG: the tests ended, then the runner dies of SIG as asked.
# A Ctrl-C may have ended the tee reading this output too (make test):
# writing to it must not end the runner before its tests.
interrupted() {
	local left
	trap '' PIPE
	stop
	echo "== interrupted ($1): the tests still running were ended"
	left=$(leftovers_sweep)
	echo "${left:-nothing left behind}" | sed 's/^/  /'
	leftovers_end
	trap - EXIT "$1"
	rm -rf "$logs"
	kill -"$1" $$
}
leftovers_begin
trap 'stop; leftovers_end; rm -rf "$logs"' EXIT
for sig in INT TERM HUP; do
	trap "interrupted $sig" "$sig"
done
# a failed test's files (tests/lib/common.sh), of this run only
export TS_KEEP_FAILED=${TS_KEEP_FAILED:-$PWD/.output/failed-tests}
rm -rf "$TS_KEEP_FAILED"

passed=0 failed=0 skipped=0

concurrent() {
	sed -n '1,30p' "$1" | grep -q '^# concurrent: yes'
}

# start TEST [NICENESS]: TEST in the background under its time limit (a
# "# timeout: N s" line among its first 30 may ask for longer), in a
# process group of its own (timeout's), its output to $logs/TEST. Every
# test runs so, the host tests too: wait, unlike a foreground command,
# lets a signal's trap run at once.
start() {
	local tl
	tl=$(sed -n '1,30s/^# timeout: \([0-9][0-9]*\) s.*/\1/p' "$1" | head -1)
	nice -n "${2:-0}" timeout -k 10 "${TS_TEST_TIMEOUT:-${tl:-$limit}}" \
		bash "$1" >"$logs/${1##*/}" 2>&1 {lock}>&- &
	started+=($!)
}

# reap PID: waits until test PID has ended; a test running beside it that
# ends meanwhile is noted too, so that its time is its own
reap() {
	local p who pending
	while [[ -z ${ended[$1]:-} ]]; do
		pending=()
		for p in "${started[@]}"; do
			[[ -n ${ended[$p]:-} ]] || pending+=("$p")
		done
		who=
		wait -n -p who "${pending[@]}"
		ended[${who:-$1}]="$? $SECONDS"
	done
}

# report TEST PID START: TEST's output, its checks counted, what it left
report() {
	local t=$1 rc=${ended[$2]% *} end=${ended[$2]#* } ok bad left
	cat "$logs/${t##*/}"
	ok=$(grep -c '^  ok ' "$logs/${t##*/}")
	bad=$(grep -c '^  FAIL ' "$logs/${t##*/}")
	if ((rc == 77)); then
		skipped=$((skipped + 1))
	elif ((rc != 0 && bad == 0)); then
		echo "== ${t##*/}: exit status $rc without a failed check: counted as 1 failure"
		bad=1
	fi
	left=$(leftovers_sweep)
	if [[ -n $left ]]; then
		echo "== ${t##*/}: left behind, now removed:"
		echo "$left" | sed 's/^/  /'
		bad=$((bad + 1))
	fi
	passed=$((passed + ok))
	failed=$((failed + bad))
	echo "== ${t##*/}: $((end - $3)) s"
}

side=() host=()
for t in "${tests[@]}"; do
	if concurrent "$t"; then side+=("$t"); else host+=("$t"); fi
done
side_pid=() side_start=()
for t in "${side[@]}"; do
	echo "== ${t##*/}: started, beside the tests below (its output after theirs)"
	side_start+=("$SECONDS")
	start "$t" 10
	side_pid+=("${started[-1]}")
done
for t in "${host[@]}"; do
	echo "== ${t##*/}"
	begin=$SECONDS
	start "$t"
	reap "${started[-1]}"
	report "$t" "${started[-1]}" "$begin"
done
# descendants PID: PID and every process below it
descendants() {
	local c
	echo "$1"
	for c in $(pgrep -P "$1"); do descendants "$c"; done
}
# threads PID...: every thread of each process (a nice value is a
# thread's: renice -p PID leaves the others, qemu's vCPU among them, as
# they were)
threads() {
	local p
	for p; do ls "/proc/$p/task" 2>/dev/null; done
}
# the host tests are done: what still runs beside them gets the CPU back
# (nice 0, inherited by what it starts next), or other load on the host
# (two busy loops) would starve it at nice 10 for the rest of its run
for i in "${!side_pid[@]}"; do
	# shellcheck disable=SC2046 # one pid per word
	renice -n 0 -p $(threads $(descendants "${side_pid[i]}")) >/dev/null 2>&1 || true
done
for i in "${!side[@]}"; do
	echo "== ${side[i]##*/}"
	reap "${side_pid[i]}"
	report "${side[i]}" "${side_pid[i]}" "${side_start[i]}"
done
echo "$passed passed, $failed failed, $skipped skipped"
((failed == 0))
