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
#   that the buckets did wrap: a class holds more completions than its
#     buckets could without one, each at most N - 1 and at most what the
#     same bucket of the service histogram (-H, the same completions)
#     holds; fio's first 8,192 reads are a count, not a time, so that
#     they are there on a host of any speed;
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

# run NAME QD CLOCK_WRAP_S: one truestat -D -H run of one-second reports
# over 8,192 reads of fio (256k, as 30-depth: 2 GiB, the device's 256 MiB
# eight times over) at QD, then 3 s more of them, buckets wrapping after
# 50, the stamps S s in. truestat is stopped two reports after fio's
# end, not after a count of reports: a host held up for seconds would
# leave fio's last I/O out of a fixed window (a fresh clone's run once
# counted 1,009 reads fewer than diskstats that way).
run() {
	local n=$1
	shift
	TRUESTAT_TEST_DEPTH_WRAP=$wrap TRUESTAT_TEST_CLOCK_WRAP=$2 \
		ts_start "$out" -D -H -d "$dev" 1
	before=$(diskstats "$dev")
	# the counted job fills the buckets past their wrap whatever the
	# host's speed; the timed one, started once the first has completed
	# all its reads, makes fio last 3 s at least, so that the clock run's
	# stamps wrap (2 s in) under one of the two, and the reports are there
	fio --filename="/dev/$dev" --direct=1 --rw=randread --bs=256k \
		--ioengine=libaio --iodepth="$1" --output=/dev/null \
		--name=counted --io_size=$((counted * 256))k \
		--name=timed --stonewall --runtime=3 --time_based
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
      'the -D classes hold %d completions, truestat timed %d (buckets wrapped after $wrap)' % (k, t['all']['ios']))
# a bucket of a class that did not wrap holds at most $wrap - 1, and no
# more than the service histogram's bucket of the same times: a class
# with more than these summed has a bucket that passed 2^32
hist = {}
for o in t['ops'].values():
    for lo, cnt in o['histograms']['service_ns']:
        hist[lo] = hist.get(lo, 0) + cnt
room = sum(min(cnt, $wrap - 1) for cnt in hist.values())
top = max(rows, key=lambda r: r['ios'])
print(n + '_wrapped', int(top['ios'] <= room),
      'class %d-%s: %d completions, more than the %d its buckets hold unwrapped (%d service buckets, each %d at most)'
      % (top['depth_lo'], top['depth_hi'], top['ios'], room, len(hist), $wrap - 1))
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
# ts_change_time takes a last change stamped less than a second ahead of
# the clock read for a race (a second or more: a wrap), and counts the
# difference: a wrap read as a race adds up to that second per change,
# seconds over the changes before the next restamp, where races add a few
# µs each. The bar: a twentieth of that second.
print(n + '_reordered', int(c['reordered_ms'] + o['reordered_ms'] > 1000 / 20),
      'changes stamped after their clock read: %.3f + %.3f ms, under 1/20 of the 1000 ms window a wrap taken for one fills'
      % (c['reordered_ms'], o['reordered_ms']))
print(n + '_deep', int(c['max'] < $1), 'depth reached %d (iodepth $1)' % c['max'])
")
}

wrap=50		# TRUESTAT_TEST_DEPTH_WRAP: each bucket wraps at its 50th completion
counted=8192	# reads of fio's counted job
run counters 8 3600
run clock 72 2
finish
