#!/usr/bin/env bash
# --by=process with more submitters than its BPF table holds (1,024): 1,300
# short dd readers, one after another, each 3 direct reads of 4 KiB, and two
# dd writers of 8 KiB blocks (50 and 1), under reports every 0.5 s and the
# exporter. Past 3/4 full, the table's reader folds the submitters idle
# since its last read into "other" and deletes them, down to half: each
# read leaves room for 256 new ones at the least. The readers go in batches
# of 200, a report between two, so that no more than those start between
# two reads of the table, on a host of any speed; and:
#  - no request goes unattributed (a table that never gives room back
#    leaves 276 of these submitters out: not_attributed);
#  - every request is in a row: per direction, the rows' I/Os + the unseen
#    completions = diskstats, exactly (up to who_fold_races, the requests
#    counted while their entry was folded);
#  - the report intervals' rows add up to the totals' (a folded submitter
#    is counted once, in the span it ran);
#  - each row is of its direction: reads of 4 KiB, writes of 8 KiB (rows
#    sorted by device and direction: the small writer's total time falls
#    among the readers');
#  - the exporter's by-process series add up to the same, and the
#    processes named at a scrape after the first 100 readers keep their
#    series, with the same counts, to the end (never folded).
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need python3 curl dd

make_tmp
loop_new 64
dev=$LOOP
port=$(free_port)
readers=1300
batch=200	# readers between two reports: fewer than the 256 a fold leaves room for

ts_start "$tmp/by.json" --by=process --top=10 --prometheus="$port" -d "$dev" 0.5
ds0=$(diskstats "$dev")
dd if=/dev/zero of="/dev/$dev" bs=8k count=50 seek=4096 oflag=direct status=none
for i in $(seq "$readers"); do
	dd if="/dev/$dev" of=/dev/null bs=4k count=3 skip=$((i * 3)) iflag=direct status=none
	((i != readers / 2)) ||
		dd if=/dev/zero of="/dev/$dev" bs=8k count=1 seek=4200 oflag=direct status=none
	# the exporter's figures are the last report's: one whole report
	# after the 100th reader
	((i != 100)) || { ts_reports_after "$tmp/by.json"; curl -sf "http://127.0.0.1:$port/metrics" >"$tmp/metrics.100" || true; }
	# a read of the table after the batch, before the next one starts
	((i % batch)) || ts_reports_after "$tmp/by.json"
done
ds1=$(diskstats "$dev")
ts_reports_after "$tmp/by.json" # a report after the last dd: its entries idle once more
curl -sf "http://127.0.0.1:$port/metrics" >"$tmp/metrics" || true
ts_stop INT
check by_exit "$TS_RC" "truestat ended with status $TS_RC"

check_lines < <(py "
d = dev(totals('$tmp/by.json'), '$dev')
by, ev = d['by'], d['events']
b0, b1 = [int(x) for x in '$ds0'.split()], [int(x) for x in '$ds1'.split()]
ds = {'read': b1[0] - b0[0], 'write': b1[4] - b0[4]}
races = ev.get('who_fold_races', 0)
print('by_attributed', int(by['not_attributed'] or ev['who_table_full']),
      '$readers readers (in batches of $batch, a report between two) and 2 writers through a table of 1024: '
      '%d not attributed, who_table_full %d (both must be 0)' % (by['not_attributed'], ev['who_table_full']))
sums = {}
for op, size in (('read', 4096), ('write', 8192)):
    rows = [r for r in by['rows'] if r['op'] == op]
    got = sum(r['ios'] for r in rows)
    missed = d['ops'].get(op, {}).get('missed', 0)
    sums[op] = got
    print('by_%s_sum' % op, int(abs(got + missed - ds[op]) > races),
          '%s: rows %d + unseen %d = %d, diskstats %d (who_fold_races %d)' % (op, got, missed, got + missed, ds[op], races))
    bad = [r for r in rows if r['bytes'] != r['ios'] * size]
    print('by_%s_rows' % op, int(bool(bad) or not rows),
          '%s: %d rows, each of %d-byte requests%s' % (op, len(rows), size, '; not: %s' % bad if bad else ''))
other = [r for r in by['rows'] if r['op'] == 'read' and 'others' in r]
named = [r for r in by['rows'] if r['op'] == 'read' and 'others' not in r]
ok = len(other) == 1 and len(named) == 10 and other[0]['others'] >= $readers - 10
print('by_read_other', int(not ok), 'reads: %d rows of their own (top 10), other holds %s submitters (>= %d)'
      % (len(named), [r['others'] for r in other], $readers - 10))
spans = {'read': 0, 'write': 0}
for doc in docs('$tmp/by.json'):
    if doc['type'] != 'interval':
        continue
    for x in doc['devices']:
        if x['device'] == '$dev' and x.get('by'):
            for r in x['by']['rows']:
                spans[r['op']] = spans.get(r['op'], 0) + r['ios']
print('by_spans', int(spans != sums), 'the reports\' rows summed %s, the totals\' %s' % (spans, sums))
prom = {}
for l in open('$tmp/metrics'):
    if l.startswith('truestat_by_requests_total{') and 'device=\"$dev\"' in l:
        op = l.split('op=\"')[1].split('\"')[0]
        prom[op] = prom.get(op, 0) + float(l.rsplit(' ', 1)[1])
ok = all(prom.get(op, 0) == sums[op] for op in sums)
print('by_prometheus', int(not ok), 'truestat_by_requests_total summed by direction %s, the totals\' rows %s' % (prom, sums))
def series(path):
    out = {}
    for l in open(path):
        if l.startswith('truestat_by_requests_total{') and 'device=\"$dev\"' in l and 'process=\"other\"' not in l:
            out[l.rsplit(' ', 1)[0]] = float(l.rsplit(' ', 1)[1])
    return out
early, late = series('$tmp/metrics.100'), series('$tmp/metrics')
kept = {k: late.get(k) for k in early}
print('by_prometheus_kept', int(not early or any(kept[k] != early[k] for k in early)),
      '%d series named after 100 readers, at the end: %d of them with the same count' % (
      len(early), sum(kept[k] == early[k] for k in early)))
")
check_schema by_schema "$tmp/by.json"
finish
