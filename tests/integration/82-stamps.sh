#!/usr/bin/env bash
# Hours without a depth change, in a short run. A depth word stamps each
# change with the low 44 bits of its time (include/truestat.h), which wrap
# every 2^44 ns (4.9 h). TRUESTAT_TEST_STAMP_AGE=FILE: when FILE exists at
# a snapshot, the time since the last one stands for the ns it holds; no
# event changed the words meanwhile (the disk is idle, or held by a
# stopped simulated disk), so what that time does to them is their stamps
# growing that much older, with whatever truestat does on its own while
# time passes. Two runs, checked against sources that know nothing of
# stamps:
#   idle: loop device idle (one read to have it traced), its words made
#     2^44 ns less 0.9 s old, then fio at
#     iodepth 8 for 2 s. A change after the gap must not be taken for one
#     that lost a race with a change 0.9 s later (ts_change_time): the
#     changes stamped after their clock read sum to less than half that
#     0.9 s (in a plain run they sum to µs; fio starts in ms); Little's law
#     between the depth registers and the requests' service (queue) times
#     summed, in the device and the OS queue; reads = diskstats'.
#   held: a simulated disk stopped with fio's 72 reads in it (the kernel's
#     /sys/block/X/inflight says how many, before and after), its words
#     made 2^43 + 2^40 ns old. Little's law: the depth x time equals the
#     requests' service summed plus, for the time that passed, the
#     requests beyond the 64th (inflight - 64) x that time: the area
#     above depth 64 is kept
#     in a register of its own, and a hung device adds to it like any.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/simdisk.sh"
need fio python3 fusermount3

out=$(mktemp /tmp/truestat-test.XXXXXX)
age=$out.age
on_exit "rm -f $out $out.err $age"

# ages NS: at the next snapshot the words become NS old; waits until they did
ages() {
	echo "$1" >"$age"
	wait_for "$TS_PID" 10 test ! -e "$age"
}

# checks NAME DEV EXTRA_NS: counts and Little's law (the device's area
# EXTRA_NS more than the service summed, to the ns: a whole ms would
# cut up to 1 ms off, more than the JSON's rounding) of run NAME
checks() {
	check_lines < <(py "
n = '$1'
t = dev(totals('$out'), '$2')
b = [int(x) for x in '$before'.split()]
a = [int(x) for x in '$after'.split()]
al, c, o = t['ops']['read'], t['concurrency'], t['os_queue']
reads = a[0] - b[0]
print(n + '_counts', int(al['ios'] + al['missed'] != reads),
      'reads: diskstats %d, truestat %d timed + %d unseen' % (reads, al['ios'], al['missed']))
pm = al['percentiles_ms']
span = totals('$out')['span_s'] * 1000
extra = $3 / 1e6
little(n + '_little', c, span, al['ios'] * al['service_ms'] + extra,
       al['ios'], al['missed'], pm['service']['max'], 'D..C (+ %.6f ms passed above 64)' % extra)
little(n + '_little_os', o, span, al['queued_ios'] * (al['queue_ms'] or 0),
       al['queued_ios'], al['missed'], pm['queue']['max'], 'Q..D')
print(n + '_reordered', int(c['reordered_ms'] + o['reordered_ms'] >= ${4:-1e18}),
      'changes stamped after their clock read: %.3f + %.3f ms (under ${4:-any} ms)'
      % (c['reordered_ms'], o['reordered_ms']))
")
}

# idle: a gap of 2^44 ns less 0.9 s before fio
short=900000000
loop_filled 256
TRUESTAT_TEST_STAMP_AGE=$age ts_start "$out" -d "$LOOP" 1
before=$(diskstats "$LOOP")
dd if="/dev/$LOOP" of=/dev/null bs=4k count=1 iflag=direct status=none
ts_reports_after "$out"
ages $(((1 << 44) - short)) || check idle_aged 1 "the snapshot did not take $age"
fio --name=stamps --filename="/dev/$LOOP" --direct=1 --rw=randread --bs=4k \
	--ioengine=libaio --iodepth=8 --runtime=2 --time_based --output=/dev/null
after=$(diskstats "$LOOP")
ts_reports_after "$out"
ts_stop INT
check idle_ts_exit "$TS_RC" "truestat ended at SIGINT, status $TS_RC"
checks idle "$LOOP" 0 $((short / 2000000))

# held: 72 reads in a stopped disk while 2^43 + 2^40 ns pass
QD=72
passed=$(((1 << 43) + (1 << 40)))
simdisk_up "$QD" 2000 64
dev=$SIMDISK_LOOP
on_exit "kill -CONT $SIMDISK_PID"
TRUESTAT_TEST_STAMP_AGE=$age ts_start "$out" -d "$dev" 1
before=$(diskstats "$dev")
fio --name=held --filename="/dev/$dev" --direct=1 --rw=randread --bs=4k \
	--ioengine=libaio --iodepth="$QD" --runtime=300 --time_based \
	--output=/dev/null &
fio_pid=$!
on_exit "kill $fio_pid"
inflight() { read -r r w <"/sys/block/$dev/inflight" && ((r + w == $1)); }
_reads_past() { (($(diskstats "$dev" | cut -d' ' -f1) >= $1)); }
reads0=$(diskstats "$dev" | cut -d' ' -f1)
wait_for "$fio_pid" "$START_GUARD" _reads_past $((reads0 + 50)) &&
	kill -STOP "$SIMDISK_PID" && wait_for "$fio_pid" "$START_GUARD" inflight "$QD" ||
	{ check held 1 "fio's $QD reads not held in the stopped disk: $(<"/sys/block/$dev/inflight")"; finish; exit 1; }
ages "$passed" || check held_aged 1 "the snapshot did not take $age"
check_cmd held_still "the disk held $QD reads while the time passed" inflight "$QD"
kill -CONT "$SIMDISK_PID"
sleep 1
kill -INT "$fio_pid"
wait "$fio_pid" || true
after=$(diskstats "$dev")
ts_reports_after "$out"
ts_stop INT
check held_ts_exit "$TS_RC" "truestat ended at SIGINT, status $TS_RC"
# the time that passed for the device's word, as the knob made it
aged=$(grep -o 'stamps aged, device [0-9]*' "$out.err" | tail -1 | grep -o '[0-9]*$')
checks held "$dev" "$(((QD - 64) * aged))"
finish
