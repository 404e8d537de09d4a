# SPDX-License-Identifier: GPL-2.0
# The investigations' tests (tests/investigations, 63-investigate-004),
# after common.sh and simdisk.sh:
#	inv_run WHICH LIMIT ROW_RE ROWS [LINE_RE]
#				scripts/investigate.sh --quick WHICH, within
#				LIMIT seconds, its raw material kept in
#				$INV_KEEP and its output in $INV_KEEP.out
#				(printed as comments); checks its exit status,
#				that it left nothing behind, and that it
#				printed ROWS rows (lines matching ROW_RE),
#				truestat's findings and a line matching LINE_RE;
#				returns
#				its status
#	inv_events_start EVENT...	the kernel's trace events (system/name),
#				in an ftrace instance of this test's own, on
#				CLOCK_MONOTONIC (tracefs mounted for it if it
#				was not, and unmounted after)
#	inv_events_stop FILE	their records into FILE; the instance gone
#				(also at exit)
#	$INV_PYLIB		Python for simdisk_judge: inv_window_counts

inv_run() {
	local rc=0 left rows
	INV_KEEP=$(mktemp -d /tmp/truestat-test.inv.XXXXXX)
	on_exit "rm -rf '$INV_KEEP' '$INV_KEEP.out'"
	simdisk_left_before
	timeout -k 5 "$2" "$TS_ROOT/scripts/investigate.sh" --quick --keep "$INV_KEEP" "$1" \
		>"$INV_KEEP.out" 2>&1 || rc=$?
	sed 's/^/# /' "$INV_KEEP.out"
	check investigate_exit "$rc" "scripts/investigate.sh --quick $1 ended with status $rc"
	left=$(simdisk_left_behind "$INV_KEEP/where" 2>&1 || true)
	check investigate_left "$([[ -z $left ]]; echo $?)" \
		"nothing left behind${left:+: $(paste -sd ';' <<<"$left")}"
	((rc == 0)) || return "$rc"
	rows=$(grep -cE "$3" "$INV_KEEP.out" || true)
	check investigate_printed "$( ((rows == $4)) && grep -q "^truestat's findings" "$INV_KEEP.out" &&
		grep -qE "${5:-.}" "$INV_KEEP.out"; echo $?)" \
		"$rows rows of $4, truestat's findings${5:+ and a line matching '$5'} printed"
	return 0
}

_INV_TRACEFS=/sys/kernel/tracing
_INV_INSTANCE=
inv_events_start() {
	local e
	if ! mountpoint -q "$_INV_TRACEFS"; then
		mount -t tracefs nodev "$_INV_TRACEFS"
		on_exit "umount '$_INV_TRACEFS'"
	fi
	_INV_INSTANCE=$_INV_TRACEFS/instances/truestat-test-$$
	mkdir "$_INV_INSTANCE"
	on_exit inv_events_off
	echo mono >"$_INV_INSTANCE/trace_clock"
	echo 8192 >"$_INV_INSTANCE/buffer_size_kb"
	for e in "$@"; do echo 1 >"$_INV_INSTANCE/events/$e/enable"; done
}

inv_events_stop() {
	cat "$_INV_INSTANCE/trace" >"$1"
	inv_events_off
}

# the instance's events off and the instance gone (an instance with events
# on cannot be removed)
inv_events_off() {
	[[ -n $_INV_INSTANCE && -d $_INV_INSTANCE ]] || return 0
	echo 0 >"$_INV_INSTANCE/events/enable"
	rmdir "$_INV_INSTANCE"
}

# (quoted: the Python below may hold any quote)
INV_PYLIB=$(cat <<'PY'
def inv_window_counts(name, d, s):
    # a step of an investigation whose database writes in the background
    # (its page cleaner, its log): /proc/diskstats read before truestat's
    # start and after its stop (S.ds0, S.ds1) hold its window, those read
    # after its attach and before its stop (S.ds0b, S.ds1a) lie inside it.
    # A request in flight at its start is unmatched (not counted), an
    # fsync's empty preflush write whose completion went unseen a bio left
    # unseen. Prints a check per direction.
    ds = lambda x: [int(v) for v in open(s + x).read().split()]
    ev = d['events']
    unseen = ev.get('stale_bios', 0) + d['os_queue']['now']
    outer = tj.against_diskstats(d['ops'], ds('.ds0'), ds('.ds1'), lambda: 0)
    inner = dict((x[0], x[2]) for x in tj.against_diskstats(d['ops'], ds('.ds0b'), ds('.ds1a'), lambda: 0))
    for op, got, nk, _, _, _ in outer:
        lo = inner.get(op, 0) - ev['unmatched_completions'] - (unseen if op == 'write' else 0)
        print('%s_%s_count' % (name, op), int(not lo <= got <= nk),
              '%s, %s: truestat %d (ios + missed + unissued), diskstats %d inside its window, '
              '%d around it (%d unmatched, %d bios left unseen)'
              % (name, op, got, inner.get(op, 0), nk, ev['unmatched_completions'], unseen))
PY
)
