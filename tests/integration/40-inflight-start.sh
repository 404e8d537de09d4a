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
on_exit "rm -f $out $out.err $out.fio"

# fio runs until stopped: 2 s after truestat attached, however long that
# took (on a loaded host, longer than a fixed run time)
fio --name=busy --filename="/dev/$dev" --direct=1 --rw=randread --bs=64k \
	--ioengine=libaio --iodepth=16 --runtime=300 --time_based \
	--output-format=json --output="$out.fio" &
fio_pid=$!
on_exit "kill $fio_pid"
sleep 1
# diskstats just before the start and just after truestat says it attached:
# what it counts completed between the two reads, and the requests it
# cannot have seen issued completed after the first
before0=$(diskstats "$dev")
ts_start "$out" -d "$dev" 0.5
before=$(diskstats "$dev")
sleep 2
kill -INT "$fio_pid"
wait "$fio_pid" || true # fio's status after SIGINT is 128; its report is whole
sleep 0.6
ts_stop INT
after=$(diskstats "$dev")

check_lines < <(py "
b0 = [int(x) for x in '$before0'.split()]
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
# in flight when the completion program attached (at most fio's 16), and
# those issued while the programs were being attached (completions first,
# issue last), which completed after the first read of diskstats
attach = b[0] - b0[0]
print('unmatched_bounded', int(ev['unmatched_completions'] > 16 + attach),
      '%d unmatched <= 16 in flight + %d completed while truestat attached' % (ev['unmatched_completions'], attach))
# every completion after the attach is counted once, none before the start
seen = al['ios'] + al['missed'] + ev['unmatched_completions']
print('counted_once', int(not a[0] - b[0] <= seen <= a[0] - b0[0]),
      'ios+missed+unmatched %d, diskstats %d from just after the attach, %d from just before the start'
      % (seen, a[0] - b[0], a[0] - b0[0]))
# no interval's mean service above the slowest request fio saw (its
# latency holds the service)
f = open('$out.fio').read()  # after a line saying fio ended on SIGINT
fmax = json.loads(f[f.index('{'):])['jobs'][0]['read']['lat_ns']['max'] / 1e6
worst = max(r['all']['service_ms'] or 0 for r in rows)
print('sane_latency', int(worst > fmax), 'largest interval mean service %.3f ms <= fio\'s slowest %.3f ms'
      % (worst, fmax))
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
