#!/usr/bin/env bash
# Stuck I/O: the simulated disk's daemon is stopped (SIGSTOP), so requests
# never complete. truestat keeps reporting, shows them in the device with
# their age (the oldest's age grows with the clock, counted from its issue
# on CLOCK_MONOTONIC, as the reports' end_mono_ns), does not grow in
# memory, and when the FUSE connection is aborted the requests fail and
# leave the depth; SIGINT then ends it cleanly.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/simdisk.sh"
need fio python3

simdisk_up 4 2000 64
dev=$SIMDISK_LOOP
make_tmp
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
t_attach=$EPOCHREALTIME
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$TS_PID/status"; }
# all of fio's 8 in the device (the loop device's inflight: reads, writes)
stuck8() {
	local r w
	read -r r w <"/sys/block/$dev/inflight" && ((r + w == 8))
}
# CLOCK_MONOTONIC in ns (truestat's clock, and its reports' end_mono_ns)
mono_ns() { python3 -c 'import time; print(time.monotonic_ns())'; }
kill -STOP "$SIMDISK_PID"
# no request of fio's was issued before this
t_fio0=$(mono_ns)
fio --name=stuck --filename="/dev/$dev" --direct=1 --rw=randread --bs=4k \
	--ioengine=io_uring --iodepth=8 --runtime=60 --time_based \
	--output="$tmp/fio.txt" &
fio_pid=$!
on_exit "kill -9 $fio_pid"
# the ages count from here: fio's start-up, however slow, is not in them
wait_for "$fio_pid" "$START_GUARD" stuck8 || true
# all 8 had been issued by this (read after the inflight that showed them)
t_in=$(mono_ns)
sleep 2
rss1=$(rss)
sleep 3
rss2=$(rss)
stuck_reports=$(wc -l <"$out")
t_count=$EPOCHREALTIME
echo 1 >"$conns/$conn/abort"
wait "$fio_pid" || true
sleep 1.5
kill -CONT "$SIMDISK_PID" 2>/dev/null || true
ts_stop INT
check ts_exit "$TS_RC" "SIGINT ends truestat with status $TS_RC, with the disk aborted"
check_lines < <(py "
import math
rows = [(j, d) for j in docs('$out') if j['type'] == 'interval'
        for d in j['devices'] if d['device'] == '$dev']
stuck = [(j, d) for j, d in rows[:$stuck_reports] if d['concurrency']['now'] > 0]
# the reports due every 0.5 s between the attach and the count, less one
# for the schedule's start (read just after the attach message that
# ts_start waited for) and one for the report being written at the count
elapsed = $t_count - $t_attach
due = math.floor(elapsed / 0.5) - 2
got = len(docs('$out')[:$stuck_reports])
print('kept_reporting', int(got < due),
      '%d reports in %.2f s of stuck I/O (at least %d due at 0.5 s)' % (got, elapsed, due))
ages = [d['oldest_in_device_s'] for j, d in stuck]
# fio keeps iodepth 8 in flight, the loop device's 128 tags take them all
# and none completes: exactly 8 in the device
print('stuck_in_device', int(not stuck or stuck[-1][1]['concurrency']['now'] != 8),
      'in the device at the last stuck report: %s (iodepth 8, none completing)' % (stuck[-1][1]['concurrency']['now'] if stuck else 'none'))
# nothing completes: the oldest stays the same request, so its age grows by
# exactly each report's span (both from the report's own clock read; the
# age printed to 3 decimals, the span to 6)
steps = [(ages[i + 1] - ages[i], stuck[i + 1][0]['span_s']) for i in range(len(ages) - 1)]
off = [abs(g - sp) for g, sp in steps]
# and it counts from the oldest's issue, on the run's own clock: that was
# after t_fio0 (before fio started), and by t_in (all 8 seen in the
# device) or the end of the first report that had it in the device, if
# earlier; so the last stuck report's age lies within its own end_mono_ns
# less those, but for the age's rounding to 3 decimals
end = stuck[-1][0]['end_mono_ns'] if stuck else 0
by = min($t_in, stuck[0][0]['end_mono_ns']) if stuck else $t_in
lo, hi = (end - by) / 1e9 - 0.0005, (end - $t_fio0) / 1e9 + 0.0005
inside = bool(stuck) and end > by and lo <= ages[-1] <= hi
print('age_grows', int(len(ages) < 4 or ages[0] <= 0 or not inside or max(off) > 0.001 + 1e-6),
      'oldest in the device: %s s, the last %s within [%.4f, %.4f] s (its end_mono_ns less when the oldest was in the device at the latest (%s), and less fio start; 0.0005: rounding); each step = the report span within %.4f s (0.001: rounding)'
      % (' '.join('%.3f' % a for a in ages[-4:]), '%.3f' % ages[-1] if ages else 'none', lo, hi,
         'the first stuck report' if by < $t_in else 'all 8 seen', max(off) if off else 0))
last = rows[-1][1]
print('aborted_leave', int(last['concurrency']['now'] != 0 or last['oldest_in_device_s'] != 0),
      'after the abort: %d in the device, oldest %.1f s' % (last['concurrency']['now'], last['oldest_in_device_s']))
# resident memory counts the pages touched: the reports between the two
# reads (6) reuse what the earlier ones touched, so any growth is a page
# newly touched while stuck (it was 64 kB, a figure with no reason)
print('memory_flat', int($rss2 > $rss1), 'resident %d kB, 3 s later %d kB' % ($rss1, $rss2))
")
finish
