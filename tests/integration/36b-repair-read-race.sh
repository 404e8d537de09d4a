#!/usr/bin/env bash
# A repair that lands while a report reads a disk: after the disk's
# counters and before its depth. The depth then holds the repair (the
# request taken out at its estimated end) while the counters do not count
# it missed, and the report would read exact; the next, the one whose
# counters have it, would take the blame. truestat reads the counters
# again while a repair is under way (each disk's repairs_begun against its
# missed completions). The race is met every time by construction:
# TRUESTAT_TEST_SWEEP_BETWEEN runs a report's sweeps between the two reads,
# and TRUESTAT_TEST_MISS_EVERY=2 drops every other completion of a burst of
# 8 reads submitted at once (8 distinct requests, none issued again, so
# the sweep is the only repair), then the disk stays idle. Judged against
# diskstats (every read counted, seen or missed) and the construction:
# the last report whose depth saw the burst is the one whose sweeps found
# its unseen completions, and it must count them and not read exact; no
# report after it counts them (an idle disk is in no report: one that
# holds it counted something).
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need fio python3

loop_new 64
dev=$LOOP
out=$(mktemp /tmp/truestat-test.XXXXXX)
on_exit "rm -f $out $out.err"

TRUESTAT_TEST_SWEEP_BETWEEN=1 TRUESTAT_TEST_MISS_EVERY=2 \
	ts_start "$out" -d "$dev" 0.5
ds0=$(diskstats "$dev")
fio --name=burst --filename="/dev/$dev" --direct=1 --rw=randread --bs=4k \
	--ioengine=libaio --iodepth=8 --iodepth_batch_submit=8 --number_ios=8 \
	--output=/dev/null
ds1=$(diskstats "$dev")
# two interval reports after the one that holds the burst, whichever that is
intervals() { grep -c '"type":"interval"' "$1" || true; }
at_least() { (($(intervals "$1") >= $2)); }
wait_for "$TS_PID" 20 at_least "$out" $(($(intervals "$out") + 3))
ts_stop INT
check exit "$TS_RC" "truestat ended with status $TS_RC"

check_lines < <(py "
b0, b1 = [int(x) for x in '$ds0'.split()], [int(x) for x in '$ds1'.split()]
rd = dev(totals('$out'), '$dev')['ops']['read']
print('count', int(rd['ios'] + rd['missed'] != b1[0] - b0[0]),
      'reads: truestat %d + %d missed, diskstats %d (8 made)' % (rd['ios'], rd['missed'], b1[0] - b0[0]))
print('misses_made', int(rd['missed'] < 1), '%d completions dropped on purpose (one in 2 of 8)' % rd['missed'])
rows = [r for d in docs('$out') if d['type'] == 'interval' for r in d['devices'] if r['device'] == '$dev']
seen = [i for i, r in enumerate(rows) if r['concurrency']['busy_pct'] > 0]
print('burst_seen', int(not seen), '%d interval reports, %d with the burst in the depth' % (len(rows), len(seen)))
last = rows[seen[-1]] if seen else None
missed = lambda r: r['ops']['read']['missed'] if 'read' in r['ops'] else 0
print('repairs_counted_there', int(not last or missed(last) != rd['missed']),
      'the last report with the burst in its depth counts %s of the %d repairs'
      % (missed(last) if last else 'none', rd['missed']))
print('not_exact_there', int(not last or last['concurrency']['exact']),
      'that report\'s depth exact: %s, events %s'
      % (last and last['concurrency']['exact'], last and {k: v for k, v in last['events'].items() if v}))
# the reports after it: an idle disk is left out of a report, so none
# holds it unless it counted something (the repairs, late: the bug)
after = rows[seen[-1] + 1:] if seen else []
blamed = [r for r in after if missed(r) or not r['concurrency']['exact']]
print('after_clean', int(not seen or blamed != []),
      '%d reports after it hold the disk, %d of them counting repairs or not exact' % (len(after), len(blamed)))
")
finish
