#!/usr/bin/env bash
# Starting truestat while I/O is already in flight: the completions of
# requests it never saw issued are counted and reported, never turned into
# negative depth or absurd latencies, and nothing is counted twice.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need fio python3

loop_filled 256
dev=$LOOP
out=$(mktemp /tmp/truestat-test.XXXXXX)
on_exit "rm -f $out $out.err"

fio --name=busy --filename="/dev/$dev" --direct=1 --rw=randread --bs=64k \
	--ioengine=libaio --iodepth=16 --runtime=4 --time_based \
	--output=/dev/null &
fio_pid=$!
on_exit "kill $fio_pid"
sleep 1
ts_start "$out" -d "$dev" 0.5
before=$(diskstats "$dev")
wait "$fio_pid"
sleep 0.6
ts_stop INT
after=$(diskstats "$dev")

check_lines < <(py "
b = [int(x) for x in '$before'.split()]
a = [int(x) for x in '$after'.split()]
rows = [dev(d, '$dev') for d in docs('$out') if d['devices']]
t = dev(totals('$out'), '$dev')
ev, al = t['events'], t['all']
neg = [r['concurrency']['now'] for r in rows if r['concurrency']['now'] < 0]
print('no_negative_depth', int(bool(neg)), 'depth at every report >= 0 (%d reports, min now %d)' % (
      len(rows), min(r['concurrency']['now'] for r in rows)))
print('unmatched_reported', int(ev['unmatched_completions'] == 0),
      '%d completions of requests issued before the start' % ev['unmatched_completions'])
# in flight at the start (<= 16) plus those issued while the programs were
# being attached (completions first, issue last: a few ms)
print('unmatched_bounded', int(ev['unmatched_completions'] * 100 > al['ios']),
      '%d unmatched, under 1%% of %d' % (ev['unmatched_completions'], al['ios']))
# diskstats is read just after truestat reports it attached: truestat may
# see a little more (what completed in between), never less, never double
seen = al['ios'] + al['missed'] + ev['unmatched_completions']
delta = a[0] - b[0]
print('counted_once', int(not (delta <= seen <= delta * 1.05)),
      'ios+missed+unmatched %d, diskstats %d from just after the attach (+5%%)' % (seen, delta))
worst = max(r['all']['service_ms'] or 0 for r in rows)
print('sane_latency', int(worst > 1000), 'largest interval mean service %.3f ms' % worst)
# the requests in flight at the start were never counted: the max is a
# range around the counter's peak that must hold the true one (<= 16), and
# it must say that it is not exact
c = t['concurrency']
print('max_flagged', int(c['max_exact'] or c['exact']),
      'max not exact after %d unmatched completions' % ev['unmatched_completions'])
print('max_range', int(not (c['max_min'] <= 16 <= c['max'])),
      'the true max, 16 (fio iodepth), lies in [%d, %d]' % (c['max_min'], c['max']))
")
finish
