#!/usr/bin/env bash
# Merges under mq-deadline: bios merged into waiting requests (back and
# front) and requests the scheduler merges into others (block_rq_merge)
# leave the OS queue with them. Before block_rq_merge was followed, the
# merged request's first bio stayed counted in the OS queue until its
# address came back ("stale_bios" 11-33 per run here, 9 left in the OS queue
# at the end). fio: 4 jobs of 4 KiB direct writes interleaved 4 KiB apart
# (libaio, iodepth 64), then 64 MiB of buffered writes and an fsync.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need fio python3

loop_new 256
dev=$LOOP
queue_set "$dev" scheduler mq-deadline
queue_set "$dev" nomerges 0 # a loop device keeps what an earlier user set
out=$(mktemp /tmp/truestat-test.XXXXXX)
on_exit "rm -f $out $out.err"

ts_start "$out" -d "$dev"
before=$(diskstats "$dev")
fio --name=interleaved --filename="/dev/$dev" --direct=1 --rw=write --bs=4k \
	--size=16M --ioengine=libaio --iodepth=64 --numjobs=4 \
	--offset_increment=4k --output=/dev/null
fio --name=buffered --filename="/dev/$dev" --buffered=1 --rw=write --bs=4k \
	--size=64M --ioengine=sync --end_fsync=1 --output=/dev/null
after=$(diskstats "$dev")
ts_stop INT

check_lines < <(py "
b = [int(x) for x in '$before'.split()]
a = [int(x) for x in '$after'.split()]
t = dev(totals('$out'), '$dev')
w, ev, osq = t['ops'].get('write', {}), t['events'], t['os_queue']
merges = a[5] - b[5]
print('merged', int(merges == 0), '%d write merges in diskstats' % merges)
# the fsync's empty preflush write completes without being issued
n = w.get('ios', 0) + w.get('missed', 0) + w.get('unissued', 0)
print('counts', int(n != a[4] - b[4]),
      'writes: truestat %d + %d missed + %d unissued, diskstats %d (exact)'
      % (w.get('ios', 0), w.get('missed', 0), w.get('unissued', 0), a[4] - b[4]))
print('no_stale_bios', int(ev['stale_bios'] != 0),
      '%d bios found left in the OS queue (stale_bios)' % ev['stale_bios'])
print('os_queue_empty', int(osq['now'] != 0), 'OS queue at the end: %d' % osq['now'])
")
finish
