#!/usr/bin/env bash
# A disk not traced between two of one number (truestat -d on a host whose
# disks come and go): loop device A (a number no device has, named with -d)
# is read and removed; B (the next number, not named) takes A's queue id,
# and so A's slot, which the programs hold for it without counting its
# I/O; A's number made again (C) takes the id back and is read. The slot's
# per-CPU counters run on through all three. Checked against the reads in
# /proc/diskstats of A and C, each read just before its removal:
#  - intervals: the interval rows of A's number add up to A's and C's
#    reads, exactly (C's first row once counted the slot from its start:
#    A's reads again);
#  - totals: so do the totals' rows of that number;
#  - untraced: no report has a row of B.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/faults.sh"
need python3 losetup

make_tmp
out=$tmp/ts.json
# two numbers no loop device has: added and removed by this test only
slot_reuse
file=$REUSE_FILE n=$N_OLD n2=$N_NEW

# loop number $1 made, read ($2 blocks), in a report, and removed; its
# reads in diskstats once detached (udev's too) appended to $tmp/reads$3
disk_life() {
	local dev=loop$1
	[[ -e /sys/block/$dev ]] || loop_ctl add "$1"
	losetup --direct-io=on "/dev/$dev" "$file"
	dd if="/dev/$dev" of=/dev/null bs=4k count="$2" iflag=direct status=none
	ts_reports_after "$out"
	losetup -d "/dev/$dev"
	loop_gone "$dev" || true
	udevadm settle 2>/dev/null || sleep 0.1
	diskstats "$dev" | cut -d' ' -f1 >>"$tmp/reads$3"
	loop_ctl remove "$1"
}

loop_ctl add "$n" # -d names a disk that is there
ts_start "$out" 0.5 -d "loop$n"
: >"$tmp/reads"
disk_life "$n" 100 ""
disk_life "$n2" 50 "-untraced"
disk_life "$n" 30 ""
ts_reports_after "$out"
ts_stop INT
check exit "$TS_RC" "exit status $TS_RC at SIGINT"

check_lines < <(py "
d = docs('$out')
want = sum(int(x) for x in open('$tmp/reads').read().split())
def reads(docs_, minor):
    rows = [x for doc in docs_ for x in doc['devices'] if (x['major'], x['minor']) == (7, minor)]
    return len(rows), sum(x['ops'].get('read', {}).get('ios', 0) + x['ops'].get('read', {}).get('missed', 0) for x in rows)
rows, got = reads([x for x in d if x['type'] == 'interval'], $n)
print('intervals', int(got != want), '%d interval rows of loop$n: reads + missed %d, diskstats of its two disks %d (exact)' % (rows, got, want))
rows, got = reads([totals('$out')], $n)
print('totals', int(got != want), '%d rows of loop$n in the totals: reads + missed %d, diskstats %d (exact)' % (rows, got, want))
rows, got = reads(d, $n2)
print('untraced', int(rows != 0), 'rows of loop$n2 (not traced, %s reads in diskstats): %d (none)' % (open('$tmp/reads-untraced').read().strip(), rows))
")
finish
