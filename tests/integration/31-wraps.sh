#!/usr/bin/env bash
# Long runs in a short one. TRUESTAT_TEST_DEPTH_WRAP=N starts every bucket
# of the depth histograms (32-bit counters, -D) at 2^32 - N, so that each
# bucket fio fills wraps after N completions, as it would after 2^32 on a
# host that runs for hours. Checked against sources that know nothing of
# the wrap:
#   counts: reads completed in /proc/diskstats = ios + missed (totals);
#   classes: the -D rows' completions summed = the I/Os timed, at exit
#     (the totals, from the start); and the six one-second reports' rows
#     summed = the totals' rows, class by class (fio ends before the last
#     report: the totals add an idle moment);
#   Little's law between the depth registers and the service times summed.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need fio python3

loop_filled 256
dev=$LOOP
out=$(mktemp /tmp/truestat-test.XXXXXX)
on_exit "rm -f $out $out.err"

TRUESTAT_TEST_DEPTH_WRAP=50 ts_start "$out" -D -d "$dev" 1 6
before=$(diskstats "$dev")
fio --name=wraps --filename="/dev/$dev" --direct=1 --rw=randread --bs=4k \
	--ioengine=io_uring --iodepth=8 --runtime=3 --time_based \
	--output=/dev/null
after=$(diskstats "$dev")
TS_RC=0
wait "$TS_PID" || TS_RC=$?
check ts_exit "$TS_RC" "truestat ended by itself after 6 reports, status $TS_RC"

check_lines < <(py "
t = dev(totals('$out'), '$dev')
b = [int(x) for x in '$before'.split()]
a = [int(x) for x in '$after'.split()]
al, c = t['ops']['read'], t['concurrency']
reads = a[0] - b[0]
print('counts', int(al['ios'] + al['missed'] != reads),
      'reads: diskstats %d, truestat %d timed + %d unseen' % (reads, al['ios'], al['missed']))
rows = t['depth_curve']['rows']
n = sum(r['ios'] for r in rows)
print('totals_rows', int(n != t['all']['ios']),
      'the -D classes hold %d completions, truestat timed %d (buckets wrapped after 50)' % (n, t['all']['ios']))
print('wrapped', int(max(r['ios'] for r in rows) < 1000),
      'a class passed %d completions: its buckets wrapped' % max(r['ios'] for r in rows))
ivs = [x for x in docs('$out') if x['type'] != 'totals']
per = {}
for x in ivs:
    for d in x['devices']:
        for r in d['depth_curve']['rows'] if d['device'] == '$dev' else []:
            per[r['depth_lo']] = per.get(r['depth_lo'], 0) + r['ios']
print('reports', int(len(ivs) != 6), '%d reports before the totals' % len(ivs))
tot = {r['depth_lo']: r['ios'] for r in rows}
diff = {k: (per.get(k, 0), v) for k, v in tot.items() if per.get(k, 0) != v}
print('intervals_sum', int(bool(diff)),
      'the intervals\' classes sum to the totals\' (%s)' % (diff or 'all equal'))
pm = al['percentiles_ms']
little('little', c, totals('$out')['span_s'] * 1000, al['ios'] * al['service_ms'],
       al['ios'], al['missed'], pm['service']['max'], 'D..C')
")
finish
