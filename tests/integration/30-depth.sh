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
#   Little: the depth's area is the requests' D..C summed, less what the
#     depth's changes were stamped after their clock read (reordered_ms:
#     another CPU's later change landed first) and the JSON's rounding
#     (6 decimals of service_ms per I/O, of the mean over the span, and of
#     span_s times the mean);
#     each missed request adds between nothing and one recent mean service
#     (at most the slowest service) to the area, and nothing to the sum.
#     The same for the OS queue and the requests' Q..D, where a missed
#     request's Q..D is in the area and not in the sum (at most the
#     slowest queue time each).
#   mean at iodepth 1: <= 1 + missed x mean service / span (what estimated
#     ends may overlap the next request by).
#   the kernel's time_in_queue: each request's allocation..end, summed: at
#     least the requests' D..C summed, at most fio's latencies summed (its
#     submission..reaping holds both), 1 ms either way for the kernel's
#     rounding down of its sum at each read. (Its end is taken after the
#     bios' completions ran, past C: Q..C summed is no upper bound.)
#   mean at iodepth 16: at most 16 x the busy share (the device never
#     holds more than fio offers; each missed request may overlap the next
#     by its estimated end, as at iodepth 1). How far below it lies is
#     fio's own gap between a completion and the next submission, which
#     depends on the host's speed: printed, not judged.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need fio python3

loop_filled 256
dev=$LOOP

# run QD EVERY: one traced fio run (misses on demand when EVERY > 0);
# sets $out, $before, $after
run() {
	out=$(mktemp /tmp/truestat-test.XXXXXX)
	on_exit "rm -f $out $out.err $out.fio"
	if (($2)); then
		TRUESTAT_TEST_MISS_EVERY=$2 ts_start "$out" -d "$dev"
	else
		ts_start "$out" -d "$dev"
	fi
	engine=io_uring
	(($1 > 64)) && engine=libaio
	before=$(diskstats "$dev")
	fio --name=depth --filename="/dev/$dev" --direct=1 --rw=randread \
		--bs=256k --ioengine="$engine" \
		--iodepth="$1" --runtime=3 \
		--time_based --output-format=json --output="$out.fio"
	after=$(diskstats "$dev")
	# a request is repaired once it was issued over 10 ms ago: the last
	# snapshot must find every unseen completion of the run repairable
	sleep 0.1
	ts_stop INT
}

# iodepth 72 sits between the thresholds 64 and 80, where the level
# registers keep no time of their own: the mean comes from the area above
# 64, and Little's law must hold there as exactly as below (interpolating
# between the thresholds read 3% low), also when unseen completions are
# repaired there. libaio keeps exactly that many in flight (io_uring's
# ring rounds up to 128, and fio filled it).
for every in 0 50; do
for qd in 1 16 72; do
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
extra = missed * al['service_ms']
queue = al['queued_ios'] * (al['queue_ms'] or 0)
lat = json.load(open('$out.fio'))['jobs'][0]['read']['lat_ns']
lo, hi = service - 1, lat['N'] * lat['mean'] / 1e6 + 1
print(n + '_kernel', int(not lo <= kernel <= hi),
      'diskstats time_in_queue %d ms in [%.1f, %.1f]: D..C summed %.1f (Q..C %.1f), fio\'s %d latencies summed, '
      '1 ms rounding' % (kernel, lo, hi, service, service + queue, lat['N']))
pm = al['percentiles_ms']
little(n + '_little', c, span_ms, service, al['ios'], missed, pm['service']['max'], 'D..C')
little(n + '_little_os', o, span_ms, queue, al['queued_ios'], missed, pm['queue']['max'], 'Q..D')
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
    if qd == 16:
        print(n + '_reached', int(c['max'] < 16 or (exact and c['max'] != 16)),
              'the device held all 16 at times (max %d, exact %s)' % (c['max'], exact))
    # busy, it holds at most what fio offers: qd x the busy share (both
    # from the same level registers), plus what estimated ends may overlap
    bound = qd * (c['busy_pct'] + 0.005) / 100 + extra / span_ms + 5e-7  # the JSON's decimals
    print(n + '_mean', int(c['mean'] > bound),
          'mean depth %.4f <= %d x busy share %.2f%% + %d unseen = %.4f (%.1f%% of it: the rest is fio\'s '
          'time between a completion and its next submission, not judged)'
          % (c['mean'], qd, c['busy_pct'], missed, bound, 100 * c['mean'] / bound))
")
done
done
finish
