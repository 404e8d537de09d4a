#!/usr/bin/env bash
# Time-weighted concurrency, checked three ways: against the kernel's own
# time-weighted count of requests in flight (/proc/diskstats time_in_queue,
# iostat's aqu-sz), against Little's law with the per-request service times
# (a second, independent path through the BPF side), and against the depth
# fio offers (at iodepth 1 the device never holds more than one request).
#
# Completions the program never sees (the platform drops some: README;
# TRUESTAT_TEST_MISS_EVERY=N drops one in N on purpose) are counted as
# missed, and each such request leaves the depth at an estimated end (its
# issue plus the recent mean service time) once it is found. The report
# then says "exact": false and gives the true maximum as a range [max_min,
# max]. Every run is judged, with or without misses, never skipped; with
# misses, by bounds from the count:
#   flagged: any completion unseen, the report is not exact.
#   max: exact, max <= iodepth (and = 16 at iodepth 16); else the range
#     holds the true maximum: max_min <= iodepth (1, or 16) <= max.
#   Little: each missed request adds between nothing and one recent mean
#     service time to the depth's area, so sum(service) over ios <= area <=
#     that + missed x mean service (2% either way, as without misses).
#   mean at iodepth 1: <= 1 + missed x mean service / span (what estimated
#     ends may overlap the next request by).
#   the kernel's area: within 5%, and missed x mean service more.
#   mean at iodepth 16: 16 x busy share (10%), the busy share being the
#     kernel's (diskstats io_ticks) when truestat's is not exact: repairs
#     move time between depth levels, and busy is the time at >= 1.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need fio python3

loop_filled 256
dev=$LOOP

# run QD EVERY: one traced fio run (misses on demand when EVERY > 0);
# sets $out, $before, $after
run() {
	out=$(mktemp /tmp/truestat-test.XXXXXX)
	on_exit "rm -f $out $out.err"
	if (($2)); then
		TRUESTAT_TEST_MISS_EVERY=$2 ts_start "$out" -d "$dev"
	else
		ts_start "$out" -d "$dev"
	fi
	before=$(diskstats "$dev")
	fio --name=depth --filename="/dev/$dev" --direct=1 --rw=randread \
		--bs=256k --ioengine=io_uring --iodepth="$1" --runtime=3 \
		--time_based --output=/dev/null
	after=$(diskstats "$dev")
	# a request is repaired once it was issued over 10 ms ago: the last
	# snapshot must find every unseen completion of the run repairable
	sleep 0.1
	ts_stop INT
}

for every in 0 50; do
for qd in 1 16; do
	run "$qd" "$every"
	name=qd$qd
	((every)) && name=miss_qd$qd
	check_lines < <(py "
qd, n = $qd, '$name'
t = dev(totals('$out'), '$dev')
b = [int(x) for x in '$before'.split()]
a = [int(x) for x in '$after'.split()]
span_ms = totals('$out')['span_s'] * 1000
c, o, al = t['concurrency'], t['os_queue'], t['all']
# area under the depth curve, request-milliseconds
area = (c['mean'] + o['mean']) * span_ms
kernel = a[10] - b[10]          # time_in_queue: alloc -> completion
service = al['ios'] * al['service_ms']
missed = al['missed']
exact = c['exact'] and c['max_exact']
print(n + '_flagged', int(exact and missed > 0),
      'exact %s, max_exact %s with %d completions unseen' % (c['exact'], c['max_exact'], missed))
dev_area, extra = c['mean'] * span_ms, missed * al['service_ms']
print(n + '_kernel_area', int(abs(area - kernel) > 0.05 * kernel + extra),
      'device+OS depth x time %.0f ms, diskstats time_in_queue %d ms (5%% + %.0f ms for %d unseen)'
      % (area, kernel, extra, missed))
print(n + '_little', int(not service * 0.98 <= dev_area <= (service + extra) * 1.02),
      'depth x time %.0f ms, sum of service times %.0f ms + up to %.0f ms for %d unseen (2%%)'
      % (dev_area, service, extra, missed))
if exact:
    print(n + '_max', int(c['max'] > qd), 'max depth %d for iodepth %d (exact)' % (c['max'], qd))
else:
    print(n + '_max', int(not c['max_min'] <= qd <= c['max']),
          'true max in [%d, %d], iodepth %d (%d completions unseen)' % (c['max_min'], c['max'], qd, missed))
print(n + '_idle_at_end', int(c['now'] != 0 or o['now'] != 0),
      'depth at the end: device %d, OS %d' % (c['now'], o['now']))
if qd == 1:
    bound = 1 + extra / span_ms
    print(n + '_mean', int(c['mean'] > bound), 'mean depth %.3f <= %.3f' % (c['mean'], bound))
else:
    print(n + '_reached', int(c['max'] < 16 or (exact and c['max'] != 16)),
          'the device held all 16 at times (max %d, exact %s)' % (c['max'], exact))
    # busy, it holds what fio offers: mean depth = 16 x busy share. With
    # misses, truestat's busy share is a level time the repairs may have
    # moved: the kernel's own (diskstats io_ticks) stands in for it
    busy = c['busy_pct'] / 100 if exact else (a[9] - b[9]) / span_ms
    want = 16 * busy
    print(n + '_mean', int(not within(c['mean'], want, 0.10)),
          'mean depth %.2f, 16 x busy share %.2f (%s, 10%%; truestat\'s %.1f%%)'
          % (c['mean'], want, 'truestat' if exact else 'diskstats io_ticks', c['busy_pct']))
")
done
done
finish
