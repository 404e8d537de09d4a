#!/usr/bin/env bash
# Starting truestat while I/O is already in flight: the completions of
# requests it never saw issued are counted and reported, never turned into
# negative depth or absurd latencies, and nothing is counted twice.
#
# The requests in flight at the start must still be in flight once truestat
# traces the disk, however long it takes to attach on this host: the
# simulated disk's daemon is stopped (SIGSTOP) with fio's 16 reads in it,
# truestat attaches, one more read (dd) makes truestat take the disk (its
# first block_bio_queue: completions before that are not the disk's yet),
# and only then does the daemon go on. Each of the 16 then completes once,
# after the disk was taken: all are unmatched, but for any whose
# completion the platform lost (it shows nowhere: their issue was never
# seen). Nothing completed between the first read of diskstats and the
# daemon going on, so every completion truestat could count is in
# diskstats from that first read.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/simdisk.sh"
need fio python3

QD=16
simdisk_up "$QD" 20000 64
dev=$SIMDISK_LOOP
out=$(mktemp /tmp/truestat-test.XXXXXX)
on_exit "rm -f $out $out.err $out.fio"
# whatever happens below, the daemon goes on before simdisk_down
on_exit "kill -CONT $SIMDISK_PID"

fio --name=busy --filename="/dev/$dev" --direct=1 --rw=randread --bs=4k \
	--ioengine=libaio --iodepth="$QD" --runtime=300 --time_based \
	--output-format=json --output="$out.fio" &
fio_pid=$!
on_exit "kill $fio_pid"
inflight() { read -r r w <"/sys/block/$dev/inflight" && ((r + w == $1)); }
reads0=$(diskstats "$dev" | cut -d' ' -f1)
_reads_past() { (($(diskstats "$dev" | cut -d' ' -f1) >= $1)); }
# fio's reads flow, then the daemon stops with QD of them in the disk
wait_for "$fio_pid" "$START_GUARD" _reads_past $((reads0 + 50)) &&
	kill -STOP "$SIMDISK_PID" && wait_for "$fio_pid" "$START_GUARD" inflight "$QD" ||
	{ check held 1 "fio's $QD reads not held in the stopped disk: $(<"/sys/block/$dev/inflight")"; finish; exit 1; }
before0=$(diskstats "$dev")
ts_start "$out" -d "$dev" 0.5
dd if="/dev/$dev" of=/dev/null bs=4k count=1 skip=1000 iflag=direct status=none &
dd_pid=$!
wait_for "" "$START_GUARD" inflight $((QD + 1)) ||
	check dd_held 1 "dd's read not in the disk: $(<"/sys/block/$dev/inflight")"
before=$(diskstats "$dev")
kill -CONT "$SIMDISK_PID"
wait "$dd_pid"
sleep 2 # of I/O traced from its issue on
kill -INT "$fio_pid"
wait "$fio_pid" || true # fio's status after SIGINT is 128; its report is whole
ts_stop INT
after=$(diskstats "$dev")

check_lines < <(py "
QD = $QD
b0 = [int(x) for x in '$before0'.split()]
b = [int(x) for x in '$before'.split()]
a = [int(x) for x in '$after'.split()]
rows = [dev(d, '$dev') for d in docs('$out') if d['devices']]
t = dev(totals('$out'), '$dev')
ev, al = t['events'], t['all']
neg = [r['concurrency']['now'] for r in rows if r['concurrency']['now'] < 0]
print('no_negative_depth', int(bool(neg)), 'depth at every report >= 0 (%d reports, min now %d)' % (
      len(rows), min(r['concurrency']['now'] for r in rows)))
print('held_still', int(b[0] != b0[0]), '%d reads completed while the daemon was stopped (0)' % (b[0] - b0[0]))
# the QD reads in flight at the start completed after truestat took the
# disk: each is unmatched, unless the platform lost its completion
u = ev['unmatched_completions']
print('unmatched_reported', int(not 1 <= u <= QD),
      '%d completions of requests issued before the start, of the %d in flight then (fewer: lost by the platform)'
      % (u, QD))
# every completion since the first read of diskstats is counted once: in
# ios, in missed, or unmatched, but for the unmatched ones lost
seen = al['ios'] + al['missed'] + u
print('counted_once', int(not a[0] - b0[0] - (QD - u) <= seen <= a[0] - b0[0]),
      'ios+missed+unmatched %d, diskstats %d since the start (%d of the %d in flight then not seen)'
      % (seen, a[0] - b0[0], QD - u, QD))
# no interval's mean service above the slowest request fio saw (its
# latency holds the service)
f = open('$out.fio').read()  # after a line saying fio ended on SIGINT
fmax = json.loads(f[f.index('{'):])['jobs'][0]['read']['lat_ns']['max'] / 1e6
worst = max(r['all']['service_ms'] or 0 for r in rows)
print('sane_latency', int(worst > fmax), 'largest interval mean service %.3f ms <= fio\'s slowest %.3f ms'
      % (worst, fmax))
# the requests in flight at the start were never counted: the max is a
# range around the counter's peak that must hold the true one (fio's QD
# and dd's read), and it must say that it is not exact
c = t['concurrency']
print('max_flagged', int(c['max_exact'] or c['exact']),
      'max not exact after %d unmatched completions' % u)
print('max_range', int(not (c['max_min'] <= QD + 1 <= c['max'])),
      'the true max, %d (fio iodepth and dd), lies in [%d, %d]' % (QD + 1, c['max_min'], c['max']))
")
finish
