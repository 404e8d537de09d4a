# SPDX-License-Identifier: GPL-2.0
# The investigations' tests (tests/investigations, 63-investigate-004),
# after common.sh and simdisk.sh:
#	inv_run WHICH LIMIT	scripts/investigate.sh --quick WHICH, within
#				LIMIT seconds, its raw material kept in
#				$INV_KEEP and its output in $INV_KEEP.out
#				(printed as comments); checks its exit status
#				and that it left nothing behind; returns its
#				status
#	$INV_PYLIB		Python for simdisk_judge: inv_window_counts

inv_run() {
	local rc=0 left
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
	return "$rc"
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
