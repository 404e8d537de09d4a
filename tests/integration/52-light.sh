#!/usr/bin/env bash
# truestat --light against two independent sources on the same run. In
# light mode Q is the request's allocation (rq->start_time_ns), the same
# start the kernel's I/O accounting uses, so its mean TOTAL must equal the
# await of /proc/diskstats (iostat's r_await) less the time from
# block_rq_complete to the kernel's end stamp (the bios' completion
# callbacks), which tests/tools/spans measures in the same run; and it
# must leave out what happens before the request exists: btt's Q2G, the
# wait for a tag.
#   starved: scheduler none with 4 tags, 16 readers of one request each (4 per
#     tag): bios wait for a tag (btt Q2G) before their request exists, by
#     Little's law about 3 services each; light QUEUE + Q2G = Q2D, and
#     the default mode's QUEUE (50-btt) holds that wait.
#   deadline: 4 driver tags under mq-deadline, fio offers 32: requests
#     wait in the scheduler, after allocation, about 7 services each:
#     light QUEUE = G2D. Q2G and G2D come from the blk tracer's records
#     of the requests truestat printed (joined by sector).
# That the waits happened is judged against the same run's service (btt
# D2C): at least one service, a third or less of what the construction
# gives, never a time of one host's.
# Both: service against btt D2C, completions against blkparse, JSON saying
# what it measured, and no block_bio_* program attached.
# Service: each request truestat timed is printed (--slow=0) and joined to
# the blk tracer's, as in 50-btt, whose bounds it shares.
# Each once more with TRUESTAT_TEST_MISS_EVERY=500 (truestat also ignores
# one completion in 500, as the platform drops some: README). The misses
# change none of the counts (ios + missed = blkparse's = diskstats'), nor
# what btt, the JSON and the attached programs say. They take u of the n
# requests out of truestat's means: a mean over all n known within [lo, hi]
# (the checks above), and each request's value between btt's per-I/O
# samples (service: its D2C; total: D2C to Q2C; queue: 0 to Q2D), put
# truestat's mean over n - u in [(n lo - the u largest upper samples) /
# (n - u), (n hi - the u smallest lower samples) / (n - u)]. Every run with
# any unseen completion is judged by that range; with none it is [lo, hi].
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/blktrace.sh"
need fio python3 blkparse btt bpftool
tool_need "$SPANS"

loop_filled 256
dev=$LOOP
queue_set "$dev" nomerges 2 # one bio per request: btt's and our counts agree

# ts_progs PID: the names of the BPF programs PID holds (prog_id in the
# fdinfo of its program and link fds), sorted: others may run truestat
# meanwhile, and this bpftool shows no pids
ts_progs() {
	bpftool -j prog show | python3 -c "
import glob, json, re, sys
ids = set()
for f in glob.glob('/proc/$1/fdinfo/*'):
    try:
        ids.update(int(m) for m in re.findall(r'^prog_id:\s*(\d+)', open(f).read(), re.M))
    except OSError:
        pass
print(' '.join(sorted(p.get('name', '') for p in json.load(sys.stdin) if p['id'] in ids)))"
}

# run NAME EVERY JOBS IODEPTH: one fio run traced by truestat -L (with
# TRUESTAT_TEST_MISS_EVERY=EVERY unless 0) and the blk tracer; each of
# JOBS readers in a 16 MiB region of its own (no two requests in flight
# on one sector: the join to the blk tracer's is by sector)
run() {
	local name=$1 every=$2 jobs=$3 qd=$4 out bttdir before after progs
	out=$(mktemp /tmp/truestat-test.XXXXXX)
	bttdir=$(mktemp -d /tmp/truestat-test.XXXXXX)
	on_exit "rm -rf $out $out.err $bttdir"
	# spans before truestat: at block_rq_complete its program runs first,
	# so its C stamp is at or before truestat's (the await check below);
	# C and E only, nothing on the way in to move the queue times
	spans_start "$bttdir/spans" "$dev" ends
	# --slow=0: every request printed, joined to the blk tracer's (50-btt;
	# its ring of 2^27 bytes too, and at most 1,000,000 requests in all)
	if ((every)); then
		TRUESTAT_TEST_SLOW_RING=$((1 << 27)) TRUESTAT_TEST_MISS_EVERY=$every \
			ts_start "$out" -L --slow=0 -d "$dev"
	else
		TRUESTAT_TEST_SLOW_RING=$((1 << 27)) ts_start "$out" -L --slow=0 -d "$dev"
	fi
	progs=$(ts_progs "$TS_PID")
	blk_trace_start "$dev" "$bttdir"
	on_exit "blk_trace_stop"
	before=$(diskstats "$dev")
	fio --name="$name" --filename="/dev/$dev" --direct=1 --rw=randread \
		--bs=4k --ioengine=libaio --iodepth="$qd" --numjobs="$jobs" \
		--size=16M --offset_increment=16M --runtime=4 --time_based \
		--number_ios=$((1000000 / jobs)) \
		--output=/dev/null
	sleep 0.3
	after=$(diskstats "$dev")
	blk_trace_stop
	ts_stop INT
	spans_stop
	check "${name}_spans_exit" "$S_RC" "spans ended with status $S_RC"
	blk_btt_summary "$bttdir" >"$bttdir/summary"
	check_lines < <(py "$BLK_JOIN_PY
s = dict(l.strip().split('=', 1) for l in open('$bttdir/summary') if '=' in l)
doc = totals('$out')
t = dev(doc, '$dev')
r = t['ops']['read']
n = '$name'
import glob
def samples(kind):
    return sorted(float(l.split()[1]) * 1e6 for f in glob.glob('$bttdir/btt_*_%s.dat' % kind) for l in open(f) if l.strip())
# truestat's mean over n - u of n values (us) whose mean over all n lies in
# [lo, hi], each value at most its btt @upper sample, at least its @lower
# one (0 when None)
u, nreq = r['missed'], int(s['reads_completed'])
def without_u(lo, hi, upper, lower):
    if not u:
        return lo, hi
    top, bot = sum(samples(upper)[-u:]), sum(samples(lower)[:u]) if lower else 0
    return (nreq * lo - top) / (nreq - u), (nreq * hi - bot) / (nreq - u)
def span(lo, hi):
    return '%.2f-%.2f us' % (lo, hi) + (' (%d of %d unseen)' % (u, nreq) if u else '')
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
# service, as in 50-btt: against the blk tracer's D2C of exactly the
# requests truestat printed (all it timed), at least that less truestat's
# measured lead at C (off_C), at most 2% above it (its lead at D, not
# printed: the one constant left)
lines = [x for x in docs('$out') if x['type'] == 'slow']
late, _, ref, off_c = blk_join(lines, blk_events('$bttdir/renum.bin'), queue=False)
dropped = t['events']['slow_dropped']
print(n + '_joined', int(len(lines) != r['ios'] - dropped or bool(late)),
      '%d requests printed (%d ios, %d not printed), each stamped at or before the blk tracer: %s'
      % (len(lines), r['ios'], dropped, '; '.join(late[:3]) or 'yes'))
d2c, svc = float(s['d2c_mean_us']), r['service_ms'] * 1000
if len(ref['service']) == r['ios'] and not late:
    m, oc = sum(ref['service']) / r['ios'] / 1e3, sum(off_c) / r['ios'] / 1e3
    lo, hi = m - oc - 0.001, m * 1.02 + 0.001
    print(n + '_service', int(not lo <= svc <= hi),
          'truestat mean service %.3f us in [%.3f, %.3f]: blk D2C %.3f us over its %d requests (btt %.2f over %d) - mean off_C %.3f us, + 2%%'
          % (svc, lo, hi, m, r['ios'], d2c, nreq, oc))
else:
    print(n + '_service', 1, '%d of %d requests joined: no reference' % (len(ref['service']), r['ios']))
# diskstats: reads and ms reading (whole ms), each completion adding
# now - start_time_ns, where start_time_ns is the start truestat reads and
# now is taken in __blk_mq_end_request, after the bios' completion
# callbacks: later than truestat's C by what spans measured this run, its
# C stamp at or before truestat's and its E (block_io_done) after now.
# The mean over the requests truestat timed is then at least the kernel's
# sum less the unseen ones' (each at most its Q2C and a gap) and less the
# gaps, over the requests seen; at most await (truestat's C before now).
b, a = '$before'.split(), '$after'.split()
reads, ms = int(a[0]) - int(b[0]), int(a[3]) - int(b[3])
await_us, total = ms * 1000.0 / reads, r['total_ms'] * 1000
sys.path.insert(0, '$TS_ROOT/tests/lib')
import spans
gaps, sdropped = spans.end_gaps('$bttdir/spans')
if gaps and not sdropped:
    top = sum(gaps[-nreq:]) + max(0, nreq - len(gaps)) * gaps[-1]
    lo = (((ms - 1) * 1000.0 - sum(samples('q2c')[-u:]) if u else (ms - 1) * 1000.0) - top) / (nreq - u)
    _, hi = without_u(0, (ms + 1) * 1000.0 / reads, 'q2c', 'd2c')
    print(n + '_await', int(reads != r['ios'] + r['missed'] or not lo <= total <= hi),
          'diskstats %d reads, await %.2f us; truestat mean total %.2f us in %s: await less the C-to-end gaps spans measured (mean %.2f us over %d)'
          % (reads, await_us, total, span(lo, hi), sum(gaps) / len(gaps), len(gaps)))
else:
    print(n + '_await', 1, 'spans: %d C-to-end gaps, %d events dropped: no bound' % (len(gaps), sdropped))
# the queue: truestat's (allocation to D) against the blk tracer's G2D of
# the same requests, the Q2G they waited before it (the tag) beside it;
# from the join, over the requests truestat printed (all it timed: the
# unseen ones are in neither)
q, nq = r['queue_ms'] * 1000, len(ref['g2d'])
if nq != r['ios'] or late:
    print(n + '_queue', 1, '%d of %d requests joined to a blk G: no reference' % (nq, r['ios']))
    sys.exit(0)
g2d, q2g = sum(ref['g2d']) / nq / 1e3, sum(ref['q2g']) / nq / 1e3
if n.startswith('starved'):
    # the request's clock starts 2-3 us after the blk tracer's G here, when the woken
    # submitter goes on (3 us, measured on these hosts, not in this run);
    # 10% of Q2D: the tag wait is a sleep, and btt's G and truestat's
    # start stand on either side of the wake-up, which the kernel may
    # delay in proportion to how long the sleepers queue (not measured)
    slack = 0.10 * (q2g + g2d) + 3
    # the wait happened, and is larger than the queue check's slack: a
    # light QUEUE that held it would fail that check
    print(n + '_tag_wait', int(q2g < d2c or q2g <= slack),
          'bios waited for a tag: blk Q2G %.2f us, at least one service (btt D2C %.2f us; 16 readers on 4 tags: about 3) and above the queue check\'s slack (%.2f us)'
          % (q2g, d2c, slack))
    print(n + '_queue', int(not g2d - slack <= q <= g2d + slack),
          'truestat queue %.2f us + blk Q2G %.2f us = %.2f us, blk Q2D %.2f us; queue in %.2f-%.2f us (10%% + 3 us; over its %d requests)'
          % (q, q2g, q + q2g, q2g + g2d, g2d - slack, g2d + slack, nq))
else:
    print(n + '_waits', int(g2d < d2c),
          'requests waited in the scheduler: blk G2D %.1f us, at least one service (btt D2C %.1f us; 32 on 4 driver tags: about 7)'
          % (g2d, d2c))
    # 5%: as 50-btt's Q2D (the probes' order at Q and D, unmeasured here)
    print(n + '_queue', int(not g2d * 0.95 <= q <= g2d * 1.05),
          'blk G2D %.2f us (Q2G %.2f), truestat queue %.2f us in %.2f-%.2f us (5%%; over its %d requests)'
          % (g2d, q2g, q, g2d * 0.95, g2d * 1.05, nq))
")
}

queue_set "$dev" scheduler none
queue_set "$dev" nr_requests 4
run starved 0 16 1
run starved_miss 500 16 1
# 4 driver tags kept, mq-deadline's own tags (256) on top (machine-facts)
queue_set "$dev" scheduler mq-deadline
run deadline 0 1 32
run deadline_miss 500 1 32

# --prometheus with --light: no OS queue metrics, the rest as usual
if command -v curl >/dev/null && command -v promtool >/dev/null; then
	port=$(free_port)
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
