#!/usr/bin/env bash
# Disks that come and go by the hundred (a host that makes and removes loop
# devices, LVM snapshots or containers' disks all day): one loop device
# number is added, attached, read, detached and removed CYCLES times (200)
# while one truestat traces every disk with 0.5 s reports. Each new disk
# takes the queue id the last one gave back, so its slot, and the
# histograms the last one had, emptied. Checked:
#  - reads: over every row of that name in the totals (one per disk a
#    report saw; the disks that came and went between two reports are in
#    the next one's row, see doc/building.md's limits), ios + missed equal
#    the reads in diskstats of all the disks, each read just before its
#    removal, exactly;
#  - percentiles: every interval row of the name with reads has those of
#    service, and of Q->C when any read in it had its Q seen (queued_ios),
#    and no row counts no_histograms: the histograms were given back each
#    time;
#  - memory: truestat's anonymous resident set, read after each quarter of
#    the cycles, does not grow in each of the last three: nothing kept per
#    disk that went (a row kept for each took 220 kB more over the last
#    150 disks, when totals kept one each; anything kept per disk of 82
#    bytes or more grows a page every 50 disks). A path taken for the first
#    time late in the run (a static buffer touched, a pinned CPU's other
#    timing: 12 kB once) grows it once, in one quarter.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/faults.sh"
need python3 losetup

CYCLES=${CHURN_CYCLES:-200}
make_tmp
out=$tmp/ts.json
file=$(mktemp /var/tmp/truestat-test.XXXXXX)
on_exit "rm -f '$file'"
truncate -s 16M "$file"
# a number no loop device has: added and removed by this test only
loop_numbers 1
n=$LOOP_NUMBERS
dev=loop$n
# anonymous memory: what truestat keeps; not its code's file pages, which
# the first run of a rare path (the first finding stated) maps in once
rss() { awk '$1 == "RssAnon:" { print $2 }' "/proc/$TS_PID/status"; }

ts_start "$out" 0.5
rss_at=()
: >"$tmp/reads"
for ((i = 1; i <= CYCLES; i++)); do
	loop_ctl add "$n"
	losetup --direct-io=on "/dev/$dev" "$file"
	dd if="/dev/$dev" of=/dev/null bs=4k count=64 iflag=direct status=none
	# udev reads a new disk too: its reads are the disk's, counted once
	# the device is detached (no more I/O) and udev has let go of it
	losetup -d "/dev/$dev"
	loop_gone "$dev" || true
	udevadm settle 2>/dev/null || sleep 0.1
	diskstats "$dev" | cut -d' ' -f1 >>"$tmp/reads"
	loop_ctl remove "$n"
	((i % (CYCLES / 4))) || rss_at+=("$(rss)")
done
ts_reports_after "$out"
ts_stop INT
check exit "$TS_RC" "exit status $TS_RC at SIGINT"
grew=0
for q in 1 2 3; do ((rss_at[q] > rss_at[q - 1])) && grew=$((grew + 1)); done
check rss_flat "$((grew == 3))" \
	"truestat's anonymous memory after each quarter of $CYCLES disks: ${rss_at[*]} kB (a leak grows it in each of the last three; grew in $grew)"

check_lines < <(py "
d = docs('$out')
want = sum(int(x) for x in open('$tmp/reads').read().split())
rows = [x for x in totals('$out')['devices'] if (x['major'], x['minor']) == (7, $n)]
r = [x['ops'].get('read', {}) for x in rows]
got = sum(x.get('ios', 0) + x.get('missed', 0) for x in r)
print('reads', int(got != want or len(open('$tmp/reads').read().split()) != $CYCLES),
      '$CYCLES disks $dev one after another: %d rows in the totals, reads + missed %d, diskstats %d (exact)'
      % (len(rows), got, want))
seen = [x for doc in d if doc['type'] == 'interval' for x in doc['devices']
        if (x['major'], x['minor']) == (7, $n) and x['ops'].get('read', {}).get('ios')]
# service percentiles for every read timed; Q->C ones exactly when some
# read had its Q seen (a read without it has no total to count)
def bare(x):
    r = x['ops']['read']
    p = r['percentiles_ms']
    return p['service']['p50'] is None or (p['total']['p50'] is None) != (r['queued_ios'] == 0)
bad = [x['ops']['read'] for x in seen if bare(x)]
print('percentiles', int(not seen or bool(bad)),
      '%d interval rows of $dev with reads (%d with no read\'s Q seen), %d of them without the percentiles of what they timed%s'
      % (len(seen), sum(x['ops']['read']['queued_ios'] == 0 for x in seen), len(bad), ''.join('; ios %d, queued_ios %d, p50 service %s, total %s'
         % (r['ios'], r['queued_ios'], r['percentiles_ms']['service']['p50'], r['percentiles_ms']['total']['p50'])
         for r in bad[:3])))
nohist = sum(x['events']['no_histograms'] for x in rows)
print('no_histograms', int(nohist != 0), 'no_histograms %d in the totals (0)' % nohist)
")
finish
