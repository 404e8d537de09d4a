#!/usr/bin/env bash
# truestat --light against two independent sources on the same run. In
# light mode Q is the request's allocation (rq->start_time_ns), the same
# start the kernel's I/O accounting uses, so its mean TOTAL must equal the
# await of /proc/diskstats (iostat's r_await); and it must leave out what
# happens before the request exists: btt's Q2G, the wait for a tag.
#   starved: scheduler none with 4 tags, fio offers 32: bios wait for a tag
#     (btt Q2G) before their request exists; light QUEUE + Q2G = btt Q2D,
#     and the default mode's QUEUE (50-btt) holds that wait.
#   deadline: 4 driver tags under mq-deadline: requests wait in the
#     scheduler, after allocation: light QUEUE = btt Q2D - Q2G (= G2D).
# Both: service against btt D2C, completions against blkparse, JSON saying
# what it measured, and no block_bio_* program attached.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/blktrace.sh"
need fio python3 blkparse btt bpftool

loop_filled 256
dev=$LOOP
queue_set "$dev" nomerges 2 # one bio per request: btt's and our counts agree

# run NAME IODEPTH: one fio run traced by truestat -L and the blk tracer
run() {
	local name=$1 qd=$2 out bttdir before after progs
	out=$(mktemp /tmp/truestat-test.XXXXXX)
	bttdir=$(mktemp -d /tmp/truestat-test.XXXXXX)
	on_exit "rm -rf $out $out.err $bttdir"
	ts_start "$out" -L -d "$dev"
	progs=$(bpftool prog show | awk '/ name ts_/ { print $4 }' | sort | tr '\n' ' ')
	blk_trace_start "$dev" "$bttdir"
	on_exit "blk_trace_stop"
	before=$(diskstats "$dev")
	fio --name="$name" --filename="/dev/$dev" --direct=1 --rw=randread \
		--bs=4k --ioengine=libaio --iodepth="$qd" --numjobs=1 \
		--runtime=4 --time_based --output=/dev/null
	sleep 0.3
	after=$(diskstats "$dev")
	blk_trace_stop
	ts_stop INT
	blk_btt_summary "$bttdir" >"$bttdir/summary"
	check_lines < <(py "
s = dict(l.strip().split('=', 1) for l in open('$bttdir/summary') if '=' in l)
doc = totals('$out')
t = dev(doc, '$dev')
r = t['ops']['read']
n = '$name'
progs = '$progs'.split()
print(n + '_programs', int(not progs or any(p.startswith(('ts_bio', 'ts_split', 'ts_backm', 'ts_frontm')) for p in progs)),
      'attached: ' + ' '.join(progs))
print(n + '_says', int(doc.get('queue_from') != 'request' or t['os_queue'] is not None),
      'queue_from %r, os_queue %r' % (doc.get('queue_from'), t['os_queue']))
print(n + '_every_q', int(t['events']['no_queue_time'] != 0 or r['queued_ios'] != r['ios']),
      '%d of %d requests with a queue time (no_queue_time %d)' % (r['queued_ios'], r['ios'], t['events']['no_queue_time']))
print(n + '_capture', int(s.get('capture_ok') != '1'), 'blk tracer lost %s events' % s.get('lost'))
print(n + '_completions', int(int(s['reads_completed']) != r['ios'] + r['missed']),
      'blkparse %s reads completed, truestat %d (+%d unseen)' % (s['reads_completed'], r['ios'], r['missed']))
d2c, svc = float(s['d2c_mean_us']), r['service_ms'] * 1000
print(n + '_service', int(not within(svc, d2c, 0.02)),
      'btt mean D2C %.2f us, truestat mean service %.2f us (2%%)' % (d2c, svc))
# diskstats: reads and ms reading, each completion adding now - start_time_ns
b, a = '$before'.split(), '$after'.split()
reads, ms = int(a[0]) - int(b[0]), int(a[3]) - int(b[3])
await_us, total = ms * 1000.0 / reads, r['total_ms'] * 1000
# The kernel stamps the end in __blk_mq_end_request, after the bios'
# completion callbacks: 3-4 us after block_rq_complete here.
print(n + '_await', int(reads != r['ios'] + r['missed'] or not 0 <= await_us - total <= 0.02 * await_us + 5),
      'diskstats %d reads, await %.2f us; truestat mean total %.2f us (0 to 2%% + 5 us less)' % (reads, await_us, total))
q2d, q2g, q = float(s['q2c_minus_d2c_us']), float(s['q2g_mean_us']), r['queue_ms'] * 1000
if n == 'starved':
    print(n + '_tag_wait', int(q2g < 10), 'bios waited for a tag: btt Q2G %.2f us > 10 us' % q2g)
    # the request's clock starts 2-3 us after btt's G here, when the woken
    # submitter goes on
    print(n + '_queue', int(abs(q + q2g - q2d) > 0.10 * q2d + 3),
          'truestat queue %.2f us + btt Q2G %.2f us = %.2f us, btt Q2D %.2f us (10%% + 3 us)' % (q, q2g, q + q2g, q2d))
else:
    print(n + '_waits', int(q < 50), 'requests waited in the scheduler: %.1f us > 50 us' % q)
    print(n + '_queue', int(not within(q, q2d - q2g, 0.05)),
          'btt G2D (Q2D %.2f - Q2G %.2f) %.2f us, truestat queue %.2f us (5%%)' % (q2d, q2g, q2d - q2g, q))
")
}

queue_set "$dev" scheduler none
queue_set "$dev" nr_requests 4
run starved 32
# 4 driver tags kept, mq-deadline's own tags (256) on top (machine-facts)
queue_set "$dev" scheduler mq-deadline
run deadline 32

# --prometheus with --light: no OS queue metrics, the rest as usual
if command -v curl >/dev/null && command -v promtool >/dev/null; then
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	out=$(mktemp /tmp/truestat-test.XXXXXX)
	on_exit "rm -f $out $out.err $out.metrics"
	ts_start "$out" -L --prometheus="$port" -d "$dev"
	fio --name=prom --filename="/dev/$dev" --direct=1 --rw=randread --bs=4k \
		--ioengine=libaio --iodepth=4 --runtime=1 --time_based --output=/dev/null
	curl -sf "http://127.0.0.1:$port/metrics" >"$out.metrics" || true
	ts_stop INT
	check_cmd prom_valid "promtool check metrics accepts the --light exposition" \
		bash -c "promtool check metrics <'$out.metrics' >/dev/null 2>&1"
	os=$(grep -c '^truestat_os_queued' "$out.metrics" || true)
	inflight=$(grep -c '^truestat_device_inflight{' "$out.metrics" || true)
	check prom_no_os_queue "$((os != 0 || inflight == 0))" \
		"$os truestat_os_queued* samples (none wanted), $inflight truestat_device_inflight"
fi
finish
