#!/usr/bin/env bash
# Long runs in a short one. TRUESTAT_TEST_DEPTH_WRAP=N starts every bucket
# of the depth histograms (32-bit counters, -D) at 2^32 - N, so that each
# bucket fio fills wraps after N completions, as it would after 2^32 on a
# host that runs for hours. Checked against sources that know nothing of
# the wrap:
#   counts: reads completed in /proc/diskstats = ios + missed (totals);
#   classes: the -D rows' completions summed = the I/Os timed, at exit
#     (the totals, from the start); and the one-second reports' rows
#     summed = the totals' rows, class by class (truestat is stopped after
#     two reports that follow fio's end: the totals add an idle moment);
#   Little's law between the depth registers and the service times summed,
#     in the device and the OS queue.
# TRUESTAT_TEST_CLOCK_WRAP=S makes the depth words' 44-bit stamps wrap S
# seconds after the start (every 4.9 h otherwise): the second run wraps
# them mid-fio at iodepth 72, so that the area above depth 64 (its own
# register, stamp differences only) crosses the wrap too, and Little's law
# must hold there as exactly, with no time counted as reordered beyond
# what the first run shows.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need fio python3

loop_filled 256
dev=$LOOP
out=$(mktemp /tmp/truestat-test.XXXXXX)
on_exit "rm -f $out $out.err"

# run NAME QD CLOCK_WRAP_S: one truestat -D run of one-second reports over
# 3 s of fio (256k reads, as 30-depth) at QD, buckets wrapping after 50,
# the stamps S s in. truestat is stopped two reports after fio's end, not
# after a count of reports: a host held up for seconds would leave fio's
# last I/O out of a fixed window (a fresh clone's run once counted 1,009
# reads fewer than diskstats that way).
run() {
	local n=$1
	shift
	TRUESTAT_TEST_DEPTH_WRAP=50 TRUESTAT_TEST_CLOCK_WRAP=$2 \
		ts_start "$out" -D -d "$dev" 1
	before=$(diskstats "$dev")
	fio --name=wraps --filename="/dev/$dev" --direct=1 --rw=randread --bs=256k \
		--ioengine=libaio --iodepth="$1" --runtime=3 --time_based \
		--output=/dev/null
	after=$(diskstats "$dev")
	ts_reports_after "$out"
	ts_stop INT
	check ${n}_ts_exit "$TS_RC" "truestat ended at SIGINT two reports after fio's end, status $TS_RC"

	check_lines < <(py "
n = '$n'
t = dev(totals('$out'), '$dev')
b = [int(x) for x in '$before'.split()]
a = [int(x) for x in '$after'.split()]
al, c = t['ops']['read'], t['concurrency']
reads = a[0] - b[0]
print(n + '_counts', int(al['ios'] + al['missed'] != reads),
      'reads: diskstats %d, truestat %d timed + %d unseen' % (reads, al['ios'], al['missed']))
rows = t['depth_curve']['rows']
k = sum(r['ios'] for r in rows)
print(n + '_totals_rows', int(k != t['all']['ios']),
      'the -D classes hold %d completions, truestat timed %d (buckets wrapped after 50)' % (k, t['all']['ios']))
print(n + '_wrapped', int(max(r['ios'] for r in rows) < 1000),
      'a class passed %d completions: its buckets wrapped' % max(r['ios'] for r in rows))
ivs = [x for x in docs('$out') if x['type'] != 'totals']
per = {}
for x in ivs:
    for d in x['devices']:
        for r in d['depth_curve']['rows'] if d['device'] == '$dev' else []:
            per[r['depth_lo']] = per.get(r['depth_lo'], 0) + r['ios']
print(n + '_reports', int(len(ivs) < 5), '%d reports before the totals (at least 5: the 3 s of fio and two after)' % len(ivs))
tot = {r['depth_lo']: r['ios'] for r in rows}
diff = {k: (per.get(k, 0), v) for k, v in tot.items() if per.get(k, 0) != v}
print(n + '_intervals_sum', int(bool(diff)),
      'the intervals\' classes sum to the totals\' (%s)' % (diff or 'all equal'))
pm = al['percentiles_ms']
o = t['os_queue']
little(n + '_little', c, totals('$out')['span_s'] * 1000, al['ios'] * al['service_ms'],
       al['ios'], al['missed'], pm['service']['max'], 'D..C')
little(n + '_little_os', o, totals('$out')['span_s'] * 1000,
       al['queued_ios'] * (al['queue_ms'] or 0), al['queued_ios'], al['missed'],
       pm['queue']['max'], 'Q..D')
print(n + '_reordered', int(c['reordered_ms'] + o['reordered_ms'] > 50),
      'changes stamped after their clock read: %.3f + %.3f ms (a wrap taken for one: seconds)'
      % (c['reordered_ms'], o['reordered_ms']))
print(n + '_deep', int(c['max'] < $1), 'depth reached %d (iodepth $1)' % c['max'])
")
}

run counters 8 3600
run clock 72 2
finish
