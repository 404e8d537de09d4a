#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# soak.sh: truestat left running for SOAK_SECONDS (default 600) at the
# highest IOPS this machine sustains (fio 4k random reads, io_uring,
# iodepth 32, on a loop device over a /dev/shm file), with 1 s reports.
# Checks, each against its own source: resident memory flat from the first
# minute to the end (/proc/PID/status), the request and bio tables holding
# no more entries at the end than I/Os in flight (bpftool map dump), no
# events lost to recursion, and the totals equal to /proc/diskstats.
# `make soak` runs it; not part of `make test` (it takes ten minutes).
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need fio python3 bpftool

secs=${SOAK_SECONDS:-600}
file=$(mktemp /dev/shm/truestat-test.XXXXXX)
on_exit "rm -f $file"
truncate -s 1G "$file"
dev=$(losetup -f --show --direct-io=on "$file")
on_exit "losetup -d $dev"
dev=${dev#/dev/}
dd if=/dev/zero of="/dev/$dev" bs=1M count=1024 oflag=direct status=none

out=$(mktemp /tmp/truestat-test.XXXXXX)
on_exit "rm -f $out $out.err $out.maps"
ts_start "$out" -d "$dev" 1
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$TS_PID/status"; }
before=$(diskstats "$dev")
fio --name=soak --filename="/dev/$dev" --direct=1 --rw=randread --bs=4k \
	--ioengine=io_uring --iodepth=32 --runtime="$secs" --time_based \
	--output-format=json --output="$out.fio" &
fio_pid=$!
on_exit "kill -9 $fio_pid; rm -f $out.fio"
sleep $((secs < 120 ? secs / 4 : 60))
rss_start=$(rss)
wait "$fio_pid"
rss_end=$(rss)
after=$(diskstats "$dev")
# entries left in the tables once the I/O has ended and two reports' sweeps
# have repaired the requests whose completion went unseen
sleep 2.5
# this truestat's own maps: the ids its file descriptors hold (another
# truestat on the host has maps of the same names)
mine=$(awk '/^map_id:/ { print $2 }' /proc/"$TS_PID"/fdinfo/* 2>/dev/null | tr '\n' ' ')
for m in rq_slots bio_slots; do
	id=$(bpftool map show -j | python3 -c "
import json, sys
mine = set(int(x) for x in '$mine'.split())
ids = [m['id'] for m in json.load(sys.stdin) if m.get('name') == '$m' and m['id'] in mine]
print(ids[-1] if ids else '')")
	n=$(bpftool map dump id "$id" -j | python3 -c "
import json, sys
key = '${m%_slots}'
print(sum(1 for e in json.load(sys.stdin) if e['formatted']['value'][key]))")
	echo "$m $n" >>"$out.maps"
done
ts_stop INT
check soak_exit "$TS_RC" "SIGINT after $secs s ends truestat with status $TS_RC"
check_lines < <(py "
t = totals('$out')
d = dev(t, '$dev')
r = d['ops']['read']
b = [int(x) for x in '$before'.split()]
a = [int(x) for x in '$after'.split()]
fio = json.load(open('$out.fio'))['jobs'][0]['read']['total_ios']
print('soak_counts', int(r['ios'] + r['missed'] != a[0] - b[0]),
      'ios %d + missed %d, diskstats %d (fio %d) over %.0f s, %.0f IOPS' % (
      r['ios'], r['missed'], a[0] - b[0], fio, t['span_s'], r['iops']))
print('soak_no_lost', int(t['lost_events'] != 0), '%d events lost to recursion' % t['lost_events'])
print('soak_rss_flat', int($rss_end > $rss_start + 256),
      'resident %d kB after the first minute, %d kB at the end' % ($rss_start, $rss_end))
maps = dict(l.split() for l in open('$out.maps'))
print('soak_tables_empty', int(int(maps['rq_slots']) > 0 or int(maps['bio_slots']) > 16),
      'entries left with no I/O in flight: %s requests, %s bios' % (maps['rq_slots'], maps['bio_slots']))
print('soak_idle_at_end', int(d['concurrency']['now'] != 0 or d['os_queue']['now'] != 0),
      'depth at the end: device %d, OS %d' % (d['concurrency']['now'], d['os_queue']['now']))
")
finish
