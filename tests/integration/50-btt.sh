#!/usr/bin/env bash
# truestat against blkparse/btt on the same run (the kernel's blk tracer:
# blktrace itself cannot open its relay files here): the same completions,
# mean D2C within 2% of the mean service time, mean Q2D within 5% of the
# mean queue time. Two runs: scheduler none, and mq-deadline with fewer
# driver tags than fio offers, so that requests wait in the scheduler.
# Each once more with TRUESTAT_TEST_MISS_EVERY=500: truestat then also
# ignores one completion in 500 (as the platform drops some: README). The
# misses cannot change the count of completions (ios + missed, exact), nor
# which samples btt has; they take u of them out of truestat's: its mean
# service (queue) time is then that of n - u of btt's n D2C (Q2D) samples,
# between the mean of the n - u smallest and that of the n - u largest
# (2% and 5% either side, as without misses), and its percentiles lie in
# the rank range below. Every run with any unseen completion is judged by
# those bounds.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/blktrace.sh"
need fio python3 blkparse btt cc

loop_filled 256
dev=$LOOP
# btt's per-I/O files hold one sample per bio, truestat one per request:
# without merges they are the same I/Os. (With them, the few merged
# requests, slower, counted once per bio by btt, made its p99.9 up to 10%
# higher than truestat's.)
queue_set "$dev" nomerges 2

# run NAME EVERY IODEPTH [FIO_OPTION...]: trace one fio run with both tools
# (TRUESTAT_TEST_MISS_EVERY=EVERY unless 0), then compare.
run() {
	local name=$1 every=$2 qd=$3 out bttdir
	shift 3
	out=$(mktemp /tmp/truestat-test.XXXXXX)
	bttdir=$(mktemp -d /tmp/truestat-test.XXXXXX)
	on_exit "rm -rf $out $out.err $bttdir"
	# truestat first: its probes then run before the blk tracer's at each
	# tracepoint, so its timestamps do not include the blk tracer's work
	if ((every)); then
		TRUESTAT_TEST_MISS_EVERY=$every ts_start "$out" -d "$dev"
	else
		ts_start "$out" -d "$dev"
	fi
	blk_trace_start "$dev" "$bttdir"
	on_exit "blk_trace_stop"
	fio --name="$name" --filename="/dev/$dev" --direct=1 --rw=randread \
		--bs=4k --ioengine=libaio --iodepth="$qd" --numjobs=1 \
		--runtime=4 --time_based --output=/dev/null "$@"
	sleep 0.3
	blk_trace_stop
	ts_stop INT
	blk_btt_summary "$bttdir" >"$bttdir/summary"
	check_lines < <(py "
s = dict(l.strip().split('=', 1) for l in open('$bttdir/summary') if '=' in l)
t = dev(totals('$out'), '$dev')['ops']['read']
n = '$name'
import glob, math
# Completions truestat never saw (u of n) are missing from its figures
# wherever they fell.
u = t['missed']
def samples(kind):
    return sorted(float(l.split()[1]) * 1e3 for f in glob.glob('$bttdir/btt_*_%s.dat' % kind) for l in open(f) if l.strip())
# truestat's mean over n - u of btt's n samples of @kind lies between the
# mean of the n - u smallest and that of the n - u largest (in us, moved by
# what btt's rounding of each sample to 1 us took off @table, the mean of
# all from btt's table): @got within @tol of that range (of @table, u = 0)
def mean_check(what, kind, table, got, tol):
    v = samples(kind)
    k, shift = len(v) - u, table - sum(v) / len(v) * 1e3
    lo, hi = sum(v[:k]) / k * 1e3 + shift, sum(v[u:]) / k * 1e3 + shift
    span = ', of all but %d: %.3f-%.3f us' % (u, lo, hi) if u else ''
    print('%s_%s' % (n, what), int(not lo * (1 - tol) <= got <= hi * (1 + tol)),
          'btt mean %s %.3f us%s; truestat mean %s %.3f us (%d%%)'
          % (kind.upper(), table, span, what, got, tol * 100))
print(n + '_capture', int(s.get('capture_ok') != '1'), 'blk tracer lost %s events' % s.get('lost'))
# btt counts bios (merged ones too), blkparse requests, like truestat
print(n + '_completions', int(int(s['reads_completed']) != t['ios'] + t['missed']),
      'blkparse %s reads completed, truestat %d (+%d unseen)' % (s['reads_completed'], t['ios'], t['missed']))
q = t['queue_ms'] * 1000
mean_check('service', 'd2c', float(s['d2c_mean_us']), t['service_ms'] * 1000, 0.02)
mean_check('queue', 'q2d', float(s['q2c_minus_d2c_us']), q, 0.05)
if n.startswith('deadline'):
    print(n + '_waits', int(q < 50), 'requests waited in the scheduler: %.1f us > 50 us' % q)
# Percentiles: truestat's come from its histograms (buckets 1/16 of a power
# of two wide: within 6.25%), btt's per-I/O D2C (and, with the scheduler,
# Q2D) are exact to the 1 us btt rounds them to: sorted, the sample at
# rank ceil(q n). With u unseen, truestat's q-percentile lies between btt's
# samples of rank ceil(q (n - u)) and that + u.
def exact(kind):
    v = samples(kind)
    def rng(q):
        lo = max(0, math.ceil(q * (len(v) - u)) - 1)
        return v[lo], v[min(len(v) - 1, lo + u)]
    return rng
kinds = [('service', 'd2c', 0.001)] + ([('queue', 'q2d', 0.001)] if n.startswith('deadline') else [])
for what, kind, slack_ms in kinds:
    ref, got = exact(kind), t['percentiles_ms'][what]
    for key, q in (('p50', 0.5), ('p90', 0.9), ('p99', 0.99), ('p99_9', 0.999)):
        lo, hi = ref(q)
        ok = lo - lo / 16 - slack_ms <= got[key] <= hi + hi / 16 + slack_ms
        span = '%.4f ms' % lo if lo == hi else '%.4f-%.4f ms (%d unseen)' % (lo, hi, u)
        print('%s_%s_%s' % (n, what, key), int(not ok),
              'btt %s %s, truestat %.4f ms (6.25%% + %.1f us)' % (kind.upper(), span, got[key], slack_ms * 1000))
")
}

# fio submits four at once: bios wait in the plug until the last is queued,
# which gives the none case a queue time well above the few hundred ns by
# which two tracers on one tracepoint shift each other's timestamps.
run none 0 4 --iodepth_batch_submit=4 --iodepth_batch_complete_min=4
run none_miss 500 4 --iodepth_batch_submit=4 --iodepth_batch_complete_min=4

# Fewer driver tags (4) than fio offers (32): shrink them under none, then
# switch to mq-deadline, whose own tags stay at 256 (machine-facts).
queue_set "$dev" scheduler none
queue_set "$dev" nr_requests 4
queue_set "$dev" scheduler mq-deadline
run deadline 0 32
run deadline_miss 500 32
finish
