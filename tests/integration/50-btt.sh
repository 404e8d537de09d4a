#!/usr/bin/env bash
# truestat against blkparse/btt on the same run (the kernel's blk tracer:
# blktrace itself cannot open its relay files here): the same completions,
# the mean service and queue times against btt's D2C and Q2D (below). Two runs: scheduler none, and mq-deadline with fewer
# driver tags than fio offers, so that requests wait in the scheduler.
# Each once more with TRUESTAT_TEST_MISS_EVERY=500: truestat then also
# ignores one completion in 500 (as the platform drops some: README). The
# misses cannot change the count of completions (ios + missed, exact), nor
# which samples btt has; they take u of them out of truestat's: its
# percentiles lie in the rank range below, and its means are over the
# requests it printed, each joined to the blk tracer's (below). Every run
# with any unseen completion is judged by those bounds.
# Both tracers stamp each event from the same clock, one probe after the
# other; an interrupt or a stolen vCPU between the two moves a request's
# time in one tracer and not in the other. truestat --slow=0 prints every
# request with its completion's CLOCK_MONOTONIC time (mono_ns), so each is
# joined to the blk tracer's records of the same sector: truestat stamps
# every Q, D and C at or before the blk tracer does (its probes run
# first). A request timed x ns apart by the two tracers moves truestat's
# percentiles by at most x; for every s, the m(s) requests more than s
# apart may sit anywhere (each widens the rank range by one, like the
# unseen) and the rest move them by at most s: each percentile is checked
# against every one of those windows (s from 0.5 us to 1 ms), and the
# tightest is printed. A stolen vCPU between the two probes then widens
# the check by what it measurably did, not by a constant.
# The means: every request truestat timed is printed and joined, so the
# blk tracer's mean D2C (Q2D) over exactly those requests is known to the
# ns, whatever the unseen. At C both stamps are printed: truestat's is
# off_C = C_blk - C_truestat >= 0 earlier; at D truestat's is off_D >= 0
# earlier (checked by the join). A request's service is then its D2C -
# off_C + off_D: the mean service is at least the blk tracer's mean D2C
# less the measured mean off_C (exact, no constant). off_D and, for the
# queue time, off_Q are never printed: what is left of the old tolerances
# (2% above the D2C, 5% either side of the Q2D) stands for them, one
# probe's run plus what interrupts it, and is the one constant here.
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
	# tracepoint, so its timestamps do not include the blk tracer's work.
	# The join needs every request printed: a ring of 2^27 bytes holds
	# 1,398,101 records (88 bytes and an 8-byte header each), and fio
	# issues at most 1,000,000 (--number_ios), so a reader held up by the
	# load cannot make it drop one, whatever the host's rate
	if ((every)); then
		TRUESTAT_TEST_SLOW_RING=$((1 << 27)) TRUESTAT_TEST_MISS_EVERY=$every \
			ts_start "$out" --slow=0 -d "$dev"
	else
		TRUESTAT_TEST_SLOW_RING=$((1 << 27)) ts_start "$out" --slow=0 -d "$dev"
	fi
	blk_trace_start "$dev" "$bttdir"
	on_exit "blk_trace_stop"
	fio --name="$name" --filename="/dev/$dev" --direct=1 --rw=randread \
		--bs=4k --ioengine=libaio --iodepth="$qd" --numjobs=1 \
		--runtime=4 --time_based --number_ios=1000000 --output=/dev/null "$@"
	sleep 0.3
	blk_trace_stop
	ts_stop INT
	blk_btt_summary "$bttdir" >"$bttdir/summary"
	check_lines < <(py "$BLK_JOIN_PY
s = dict(l.strip().split('=', 1) for l in open('$bttdir/summary') if '=' in l)
d = dev(totals('$out'), '$dev')
t = d['ops']['read']
n = '$name'
import bisect, glob, math
# Completions truestat never saw (u of n) are missing from its figures
# wherever they fell.
u = t['missed']
lines = [x for x in docs('$out') if x['type'] == 'slow']
late, apart, ref, off_c = blk_join(lines, blk_events('$bttdir/renum.bin'))
dropped = d['events']['slow_dropped']
print(n + '_joined', int(len(lines) != t['ios'] - dropped or bool(late)),
      '%d requests printed (%d ios, %d not printed), each stamped at or before the blk tracer: %s'
      % (len(lines), t['ios'], dropped, '; '.join(late[:3]) or 'yes'))
def samples(kind):
    return sorted(float(l.split()[1]) * 1e3 for f in glob.glob('$bttdir/btt_*_%s.dat' % kind) for l in open(f) if l.strip())
# @got (us): truestat's mean @what against the blk tracer's mean @kind
# over the same requests (@table: btt's, over all n, printed), at least
# that less @off (us, measured), at most that + @hi_tol; below it by at
# most @lo_tol when nothing was measured. Only when truestat printed every
# request it timed (else: no check can say which of btt's they were).
def mean_check(what, kind, table, got, off, lo_tol, hi_tol, count):
    r = ref[what]
    if len(r) != count or late:
        print('%s_%s' % (n, what), 1, '%d of %d requests joined: no reference' % (len(r), count))
        return
    m = sum(r) / len(r) / 1e3
    lo, hi = m * (1 - lo_tol) - off - 0.001, m * (1 + hi_tol) + 0.001
    print('%s_%s' % (n, what), int(not lo <= got <= hi),
          'truestat mean %s %.3f us in [%.3f, %.3f]: blk %s %.3f us over its %d requests (btt %.3f over %d)%s, %s'
          % (what, got, lo, hi, kind.upper(), m, len(r), table, len(r) + u,
             ' - mean off_C %.3f us' % off if off else ' - %d%%' % round(lo_tol * 100),
             '+ %d%% (the unmeasured probe offsets)' % round(hi_tol * 100)))
print(n + '_capture', int(s.get('capture_ok') != '1'), 'blk tracer lost %s events' % s.get('lost'))
# btt counts bios (merged ones too), blkparse requests, like truestat
print(n + '_completions', int(int(s['reads_completed']) != t['ios'] + t['missed']),
      'blkparse %s reads completed, truestat %d (+%d unseen)' % (s['reads_completed'], t['ios'], t['missed']))
q = t['queue_ms'] * 1000
# 2% above the D2C and 5% either side of the Q2D stand for off_D and off_Q:
# truestat's probe runs first at each tracepoint, so its D and Q stamps lead
# the blk tracer's by one probe's run plus what interrupts it, and no line
# prints those two leads (off_C, printed, is taken off exactly)
mean_check('service', 'd2c', float(s['d2c_mean_us']), t['service_ms'] * 1000,
           sum(off_c) / max(len(off_c), 1) / 1e3, 0, 0.02, t['ios'])
# (the table's Q2D is Q2C - D2C when their counts agree, else the per-IO file's)
mean_check('queue', 'q2d', float(s.get('q2c_minus_d2c_us', s['q2d_mean_us'])), q, 0, 0.05, 0.05, t['queued_ios'])
if n.startswith('deadline'):
    # 32 offered on 4 driver tags: by Little's law about 7 services each
    print(n + '_waits', int(q < float(s['d2c_mean_us'])),
          'requests waited in the scheduler: truestat queue %.1f us, at least one service (btt D2C %.1f us; about 7)'
          % (q, float(s['d2c_mean_us'])))
# Percentiles: truestat's come from its histograms (buckets 1/16 of a power
# of two wide: within 6.25%), btt's per-I/O D2C (and, with the scheduler,
# Q2D) are exact to the 1 us btt rounds them to: sorted, the sample at
# rank ceil(q n). With u unseen and m requests apart (m(s) + those not
# printed), truestat's q-percentile lies between btt's samples of rank
# ceil(q (n - u)) - m and that + u + m, each widened by s.
def windows(v, q, gaps):
    k = math.ceil(q * (len(v) - u)) - 1
    for s in (0, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000):
        m = dropped + len(gaps) - bisect.bisect_right(gaps, s * 1000)
        lo, hi = v[max(0, k - m)], v[min(len(v) - 1, k + u + m)]
        yield s, m, lo - lo / 16 - 0.001 - s / 1000, hi + hi / 16 + 0.001 + s / 1000
kinds = [('service', 'd2c')] + ([('queue', 'q2d')] if n.startswith('deadline') else [])
for what, kind in kinds:
    v, gaps, got = samples(kind), sorted(apart[what]), t['percentiles_ms'][what]
    for key, q in (('p50', 0.5), ('p90', 0.9), ('p99', 0.99), ('p99_9', 0.999)):
        w = list(windows(v, q, gaps))
        bad = [x for x in w if not x[2] <= got[key] <= x[3]]
        lo, hi = max(w, key=lambda x: x[2]), min(w, key=lambda x: x[3])
        print('%s_%s_%s' % (n, what, key), int(bool(bad)),
              'truestat %.4f ms; btt %s from %.4f (%d apart > %g us, %d unseen) to %.4f ms (%d apart > %g us)%s'
              % (got[key], kind.upper(), lo[2], lo[1], lo[0], u, hi[3], hi[1], hi[0],
                 '; outside %.4f-%.4f ms (%d apart > %g us)' % (bad[0][2], bad[0][3], bad[0][1], bad[0][0]) if bad else ''))
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
