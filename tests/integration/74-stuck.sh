#!/usr/bin/env bash
# Stuck I/O: the simulated disk's daemon is stopped (SIGSTOP), so requests
# never complete. truestat keeps reporting, shows them in the device with
# their age (the oldest's age grows with the clock), does not grow in
# memory, and when the FUSE connection is aborted the requests fail and
# leave the depth; SIGINT then ends it cleanly.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/simdisk.sh"
need fio python3

simdisk_up 4 2000 64
dev=$SIMDISK_LOOP
tmp=$(mktemp -d /tmp/truestat-test.XXXXXX)
on_exit "rm -rf $tmp"
conns=/sys/fs/fuse/connections
if ! mountpoint -q $conns; then
	mount -t fusectl none $conns
	on_exit "umount $conns"
fi
conn=$(mountpoint -d "$SIMDISK_MNT" | cut -d: -f2)
# whatever happens below, the stuck I/O ends before simdisk_down
on_exit "echo 1 >$conns/$conn/abort; kill -CONT $SIMDISK_PID"

out=$tmp/ts.json
ts_start "$out" -d "$dev" 0.5
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$TS_PID/status"; }
kill -STOP "$SIMDISK_PID"
fio --name=stuck --filename="/dev/$dev" --direct=1 --rw=randread --bs=4k \
	--ioengine=io_uring --iodepth=8 --runtime=60 --time_based \
	--output="$tmp/fio.txt" &
fio_pid=$!
on_exit "kill -9 $fio_pid"
sleep 2
rss1=$(rss)
sleep 3
rss2=$(rss)
stuck_reports=$(wc -l <"$out")
echo 1 >"$conns/$conn/abort"
wait "$fio_pid" || true
sleep 1.5
kill -CONT "$SIMDISK_PID" 2>/dev/null || true
ts_stop INT
check ts_exit "$TS_RC" "SIGINT ends truestat with status $TS_RC, with the disk aborted"
check_lines < <(py "
rows = [(j, d) for j in docs('$out') if j['type'] == 'interval'
        for d in j['devices'] if d['device'] == '$dev']
stuck = [(j, d) for j, d in rows[:$stuck_reports] if d['concurrency']['now'] > 0]
print('kept_reporting', int(len(docs('$out')[:$stuck_reports]) < 8),
      '%d reports in 5 s of stuck I/O' % len(docs('$out')[:$stuck_reports]))
ages = [d['oldest_in_device_s'] for j, d in stuck]
print('stuck_in_device', int(not stuck or stuck[-1][1]['concurrency']['now'] < 4),
      'in the device at the last stuck report: %s (K = 4 units, iodepth 8)' % (stuck[-1][1]['concurrency']['now'] if stuck else 'none'))
print('age_grows', int(len(ages) < 4 or ages[-1] < 3 or any(b < a for a, b in zip(ages, ages[1:]))),
      'oldest in the device: %s s' % ' '.join('%.1f' % a for a in ages[-4:]))
last = rows[-1][1]
print('aborted_leave', int(last['concurrency']['now'] != 0 or last['oldest_in_device_s'] != 0),
      'after the abort: %d in the device, oldest %.1f s' % (last['concurrency']['now'], last['oldest_in_device_s']))
print('memory_flat', int($rss2 > $rss1 + 64), 'resident %d kB, 3 s later %d kB' % ($rss1, $rss2))
")
finish
