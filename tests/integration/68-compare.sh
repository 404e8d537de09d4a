#!/usr/bin/env bash
# scripts/compare.sh on the simulated disk, K = 4 units of S = 2 ms, whose
# four driver tags let it hold K requests at a time; mq-deadline holds the
# rest of fio's 16. What the README's comparison table shows must hold:
# truestat's service lies between the daemon's own arrival..reply times and
# what four tags allow over truestat's span, its concurrency between what
# the daemon held and the four tags; btt's D2C agrees with it; svctm (busy
# time / I/Os) is the service divided by the concurrency, so far below the
# service. The same run again with truestat ignoring one completion in 50
# (misses on demand): the same bounds, widened by what the counted misses
# can move. How this host compares with the model (S, K/S, S/K) and iostat's
# %util are printed, not judged: both depend on how fast the host turns a
# completion into the next issue.
# Then: Ctrl-C and a tool failing mid-run leave nothing behind (tracefs as it
# was, no process, no temporary files), and the errors are one line each.
# COMPARE_TABLE=FILE keeps the table (the README's comes from there).
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/simdisk.sh"
need fio python3 iostat biolatency blkparse btt cc stdbuf

COMPARE=$TS_ROOT/scripts/compare.sh
TRACEFS=/sys/kernel/tracing
K=4 S_US=2000 QD=16 SECS=4
tmp=$(mktemp -d /tmp/truestat-test.compare.XXXXXX)
on_exit "rm -rf '$tmp'"

simdisk_up "$K" "$S_US"
dev=$SIMDISK_LOOP
# a device that takes K requests at a time: four driver tags (set under
# none), then mq-deadline, whose own 256 tags hold what the device cannot take
queue_set "$dev" scheduler none
queue_set "$dev" nr_requests "$K"
queue_set "$dev" scheduler mq-deadline

# tracefs_state: every setting compare.sh may change, or that it is unmounted
tracefs_state() {
	local f
	if ! mountpoint -q "$TRACEFS"; then
		echo "tracefs not mounted"
		return
	fi
	for f in current_tracer tracing_on trace_clock options/bin \
		options/context-info options/blk_classic options/blk_cgroup set_event; do
		[[ ! -e $TRACEFS/$f ]] || echo "$f: $(<"$TRACEFS/$f")"
	done
	# never used since boot it reads "7 (expanded: 1408)"; restored to 1408
	# it reads 1410 (the kernel sizes it in pages): the size to 64 KiB
	f=$(<"$TRACEFS/buffer_size_kb")
	[[ $f =~ expanded:\ ([0-9]+) ]] && f=${BASH_REMATCH[1]}
	echo "buffer_size_kb: about $(((f + 32) / 64 * 64))"
}
# left_behind NAME WHEN: tracefs as before, no process on the device (so no
# BPF program of truestat's or biolatency's either: their links are the
# process's; counting programs would count another user's truestat), no
# temporary directory
left_behind() {
	local procs dirs i
	# the tracer and /tmp are shared with whatever else runs here (another
	# test's blk trace or compare.sh): wait for them to be done, 120 s at
	# most; what this run left would still be there after that
	for ((i = 0; i < 1200; i++)); do
		dirs=$(find /tmp -maxdepth 1 -name 'compare.*' -newer "$tmp/start" 2>/dev/null || true)
		[[ $(tracefs_state) != "$before" || -n $dirs ]] || break
		sleep 0.1
	done
	procs=$(pgrep -af "$dev( |\$)" | grep -v "$SIMDISK_MNT" || true)
	if [[ $(tracefs_state) == "$before" && -z $procs && -z $dirs &&
		$(<"/sys/block/$dev/trace/enable") == 0 ]]; then
		check "$1_clean" 0 "$2: tracefs as before, trace/enable 0, no process on $dev, no /tmp/compare.*"
	else
		check "$1_clean" 1 "$2: tracefs changed '$(diff <(echo "$before") <(tracefs_state) |
			grep '^[<>]' | head -4 | tr '\n' ';')' trace/enable $(<"/sys/block/$dev/trace/enable") procs '$procs' dirs '$dirs'"
	fi
}
# The blk tracer and tracefs are the whole machine's, and other tests may be
# using them. tracer_idle: wait until no blk trace is on and tracefs has not
# changed for 1 s (another may be setting one up), 120 s at most; `before`
# is then what the next run of compare.sh must leave. refused FILE: that
# run did not start because another trace was on (nothing measured: it is
# started again, 20 times at most).
tracer_now() {
	tracefs_state
	if grep -qx 1 /sys/block/*/trace/enable 2>/dev/null ||
		{ mountpoint -q "$TRACEFS" && [[ $(<"$TRACEFS/current_tracer") != nop ]]; }; then
		echo busy
	fi
}
tracer_idle() {
	local i quiet=0 s0 s1
	s0=$(tracer_now)
	for ((i = 0; i < 1200 && quiet < 10; i++)); do
		sleep 0.1
		s1=$(tracer_now)
		if [[ $s1 == "$s0" && $s1 != *busy ]]; then quiet=$((quiet + 1)); else quiet=0; fi
		s0=$s1
	done
	before=$(tracefs_state)
}
refused() {
	grep -q "not nop: in use?\|another block trace is running" "$1"
}
touch "$tmp/start"

# --- the comparison, once as it is and once with truestat told to ignore one
# completion in 50 (TRUESTAT_TEST_MISS_EVERY, misses on demand). What the
# README claims of the model (S, S/K, K/S) is printed as a table line; the
# checks take their slack from the daemon's log of the same requests and
# from fio's, with the clocks related by offsets measured around the run
# (compare.sh stamps CLOCK_REALTIME, the daemon CLOCK_MONOTONIC).
# compare_run NAME: compare.sh with --keep $tmp/NAME, the daemon's log of
# that run in $tmp/NAME.log
compare_run() {
	local name=$1 skip rc i
	for ((i = 0; i < 20; i++)); do
		tracer_idle
		simdisk_sync
		skip=$(simdisk_lines)
		clock_offset >"$tmp/$1.clock"
		head -1 /proc/stat >"$tmp/$1.cpu"
		rm -rf "$tmp/$1"
		rc=0
		"$COMPARE" --fio "$QD" --seconds "$SECS" --json "$tmp/$1.json" --keep "$tmp/$1" "$dev" \
			>"$tmp/$1.table" 2>"$tmp/$1.err" || rc=$?
		head -1 /proc/stat >>"$tmp/$1.cpu"
		clock_offset >>"$tmp/$1.clock"
		((rc == 1)) && refused "$tmp/$1.err" || break
	done
	simdisk_sync
	grep -v '^#' "$SIMDISK_LOG" | tail -n +$((skip + 1)) >"$tmp/$1.log"
	check "${name}_compare" "$rc" "compare.sh --fio $QD --seconds $SECS $dev: status $rc $(tail -1 "$tmp/$1.err")"
	return "$rc"
}
# CLOCK_REALTIME - CLOCK_MONOTONIC, ns
clock_offset() {
	python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_REALTIME) - time.clock_gettime_ns(time.CLOCK_MONOTONIC))'
}
# judge NAME MISS_EVERY: the checks of one run against the daemon's log
judge() {
	simdisk_judge "$1" "
name, miss_every, k, tags, qd, s = '$1', $2, $K, $K, $QD, $S_US * 1000
c = json.load(open('$tmp/$1.json'))
I, B, T, S = c['iostat'], c['biolatency'], c['btt'], c['truestat']
t = totals('$tmp/$1/truestat.json')
d = dev(t, '$dev')
a, cc = d['all'], d['concurrency']
ios, m = a['ios'], a['missed']
fio = open('$tmp/$1/fio.json').read()     # after a line saying fio was stopped
fio = json.loads(fio[fio.index('{'):])['jobs'][0]['read']
fmax = fio['lat_ns']['max']             # Q..C of any request is within it
times = dict((x, float(v)) for x, v in (l.split() for l in open('$tmp/$1/times')))
off = [int(l) for l in open('$tmp/$1.clock')]
mono_lo = lambda name: times[name] * 1e9 - max(off)   # earliest it can be
mono_hi = lambda name: times[name] * 1e9 - min(off)   # latest
reqs = sd_read('$tmp/$1.log')
L = Sd(reqs)
bad = sd_replay('$SIMDISK_LOG', k, s) & set(x[9] for x in reqs)
span = t['span_s'] * 1e9
us = lambda ns: ns / 1000.0
cpu = open('$tmp/$1.cpu').read().split('\n')
print(name + '_simdisk', int(bool(bad) or not L.contiguous or L.held_max > tags),
      '%d requests, %d off the model (unit, start, finish = start + S, reply >= finish), log %s; held %d at once (%d driver tags)'
      % (L.n, len(bad), 'complete' if L.contiguous else 'with gaps', L.held_max, tags))
# truestat's window: its totals span ends at its last snapshot, taken
# between the SIGINT compare.sh sent it and its exit. The daemon's requests
# surely inside: arrived after the latest start, replied before the earliest
# end; of those, truestat did not time the unseen ones and at most tags at
# each end (in the device when it attached, or when it took its snapshot)
t0 = mono_hi('truestat_end') - span
t1 = mono_lo('biolatency_end')
inner = Sd(sd_inner(reqs, t0, t1))
x = m + 2 * tags
if miss_every:
    print(name + '_misses_on_demand', int(m < (ios + m) // miss_every - 1),
          '%d unseen of %d with TRUESTAT_TEST_MISS_EVERY=%d (at least %d)' % (m, ios + m, miss_every, (ios + m) // miss_every - 1))
print(name + '_count', int(ios + m < inner.n - 2 * tags),
      'truestat %d requests + %d unseen over %.3f s; the daemon served %d surely inside that window (at most %d straddle its ends)'
      % (ios, m, span / 1e9, inner.n, 2 * tags))
# service: each D..C holds its A..R: the timed requests took at least the
# daemon's inner ones (less the x longest, which may not be among them) and,
# for the rest, the shortest A..R of the run; at most tags are in the
# device at once, so all of them at most tags x (span + fio's longest
# latency, for those issued before the span began)
svc = a['service_ms'] * 1e6
lo = (inner.sum_ra - inner.top(x) + max(ios - inner.n + x, 0) * L.ra[0]) / ios
hi = tags * (span + fmax) / ios
print(name + '_service', int(not lo <= svc <= hi),
      'mean service %.1f us: >= %.1f (the daemon A..R of %d requests in the window, %d left out), <= %.1f (%d tags over the span: FUSE+loop at most %.1f us a request)'
      % (us(svc), us(lo), inner.n, x, us(hi), tags, us(hi - inner.sum_ra / max(inner.n, 1))))
# depth x time: at least the timed requests' service (above); at most what
# tags allow, and each unseen completion adds an estimate from 0 to the
# recent mean service, below fio's longest latency
area = cc['mean'] * span
# the 6 decimals of the mean and of span_s (in s), and the changes stamped
# after their clock read
rnd = 5e-7 * span + 500 * cc['mean'] + cc['reordered_ms'] * 1e6
alo = lo * ios - rnd
ahi = tags * (span + fmax) + m * fmax + rnd
print(name + '_conc', int(not alo <= area <= ahi),
      'mean in the device %.3f: >= %.3f (the daemon held), <= %.3f (%d tags, %d unseen x fio max %.0f us)'
      % (cc['mean'], alo / span, ahi / span, tags, m, us(fmax)))
# Little: the registers hold the timed requests' service, an estimate for
# each unseen one (0 to the recent mean service) and, since truestat stops
# while fio runs, the time so far of those still in the device (tags)
print(name + '_little', int(not -rnd - ios * 0.5 <= area - svc * ios <= (m + tags) * fmax + rnd + ios * 0.5),
      'depth x time - sum of service = %.3f request-ms: 0 to (%d unseen + %d in the device at the end) x fio max %.0f us, +-%.3f rounding'
      % ((area - svc * ios) / 1e6, m, tags, us(fmax), (rnd + ios * 0.5) / 1e6))
mx, mmin, exact = cc['max'], cc['max_min'], cc['max_exact']
print(name + '_max', int(not (L.held_max <= mx and mmin <= tags and (mx <= tags or not exact))),
      'max in the device %d (%s, at least %d): the daemon held %d, %d tags' % (mx, 'exact' if exact else 'upper bound', mmin, L.held_max, tags))
if m:
    print(name + '_flagged', int(cc['exact'] or exact),
          '%d completions unseen: exact %s, max_exact %s (both must be false)' % (m, cc['exact'], exact))
# the OS queue: its depth x time is the sum of queue times (Little's law,
# another BPF path), but for requests still queued at the end, at most qd,
# and those whose completion went unseen, each within fio's longest latency
osq = d['os_queue']['mean'] * span
qsum = a['queue_ms'] * 1e6 * a['queued_ios']
oq = d['os_queue']
qtol = (qd - tags + m) * fmax + 5e-7 * span + 500 * oq['mean'] + oq['reordered_ms'] * 1e6 + a['queued_ios'] * 0.5
print(name + '_queue_little', int(not -qtol <= osq - qsum <= qtol),
      'OS queue depth x time %.1f request-ms, sum of queue times %.1f (+-%.1f: the %d that can be queued at the end, %d unseen, each within fio max %.0f us)'
      % (osq / 1e6, qsum / 1e6, qtol / 1e6, qd - tags, m, us(fmax)))
# Q..C: fio offers qd, so at most qd requests are between Q and C
print(name + '_total_bound', int(not a['total_ms'] * 1e6 * a['queued_ios'] <= qd * span),
      'mean Q->C %.3f ms x %d <= %d x span %.3f s (fio offers %d)' % (a['total_ms'], a['queued_ios'], qd, span / 1e9, qd))
# %util: iostat's io_ticks lose a jiffy whenever the device goes idle
# across a tick, which happens as often as the host makes the gaps between
# a completion and the next issue long: printed, with the daemon's idle
# time in iostat's window (the device is idle at most then)
w0, w1 = mono_lo('iostat_start'), mono_hi('iostat_end')
idle, gaps, last = 0, 0, w0
for x0, x1 in sorted((max(r[0], w0), min(r[3], w1)) for r in reqs if r[3] > w0 and r[0] < w1):
    if x0 > last:
        idle += x0 - last
        gaps += 1
    last = max(last, x1)
if last < w1:
    idle, gaps = idle + w1 - last, gaps + 1
b = open('$tmp/bench', 'a')
b.write('| %s | %.1f (K/S %.0f) | %.3f (S %.3f) | %.3f | %.1f | %.3f (3 S = %.3f) | %.2f (K %d) | %.1f / %.1f | %.1f ms in %d | %.3f (S/K %.3f) | %.1fx | %s |\n' % (
    name, S['iops'], k / s * 1e9, S['service_ms'], s / 1e6, inner.sum_ra / max(inner.n, 1) / 1e6,
    us(sum(L.late) / L.n), S['queue_ms'], 3 * s / 1e6, S['conc_mean'], k, I['util_pct'], S['util_pct'],
    idle / 1e6, gaps, I['svctm_ms'], s / 1e6 / k, S['service_ms'] / I['svctm_ms'] if I['svctm_ms'] else 0,
    host_load(cpu[0], cpu[1]).replace('host CPU during the run: ', '')))
if miss_every:
    sys.exit(0)

# the tools, on the same run
print('btt_capture', int(not T['capture_ok']), 'the blk tracer lost %d events' % T['lost'])
# btt's records are cut to truestat's window (truestat -v: from when it
# began attaching to its last snapshot). btt times a request when its Q, D
# and C are all inside; so every request whose Q, D and C truestat saw (its
# queued I/Os) is one of btt's. Each tool has more: truestat, the x it
# timed from D to C without seeing Q (queued before it attached: its I/Os
# less its queued ones); btt, the y whose D or C truestat did not see (the
# m unseen completions, and what the device took while truestat attached:
# the tags in it then, and what they serve meanwhile, each at least the
# daemon's shortest A..R). But btt pairs a request's Q, D and C by sector:
# of two requests queued at one sector while both are outstanding (z such,
# counted in the blk records by blkrenum), it may time neither, so btt
# lacks up to 2z of truestat's queued ones (fio's random reads, with no
# random map, repeat a sector now and then)
A, t0, t1 = S['window_mono_ns']
qn = S['queued_ios']
z = T['same_sector']
x, y = S['ios'] - qn, T['ios'] - qn
# (in the attach time, each tag finishes at most one request per shortest
# A..R, and one more: the one under way when it began)
served = tags * (1 + int((t0 - A) // L.ra[0]))
ymax = m + tags + served
print('btt_count', int(not -2 * z <= y <= ymax),
      'btt %d I/Os: truestat\'s %d queued ones and %d more, %d to %d (%d unseen by truestat, %d tags, %d finished by the tags in the %.0f us attaching, A..R >= %.0f us; %d requests queued at a sector already outstanding)'
      % (T['ios'], qn, y, -2 * z, ymax, m, tags, served, us(t0 - A), us(L.ra[0]), z))
# the means then: btt's service is truestat's less its x, plus btt's y,
# each within its own tool's longest; btt's Q2D is over truestat's queued
# ones and some more (its own I/Os with a Q2D), each within btt's longest
# Q2C; to the ns both round to (btt's per-I/O Q2D file: to the us). One
# constant stays, as in 50-btt: each tracer stamps from its own probe, one
# after the other, and the offsets between them are not measured here
# (50-btt joins every request to measure them): truestat's service up to
# 2%% above btt's D2C of the same requests, its queue 5%% either side.
def between(what, b_ms, b_n, t_ms, t_n, out_ms, in_ms, rnd, below, above):
    lo = (t_ms * t_n / (1 + above) - out_ms) / b_n - rnd
    hi = (t_ms * t_n / (1 - below) + in_ms) / b_n + rnd
    print('btt_' + what, int(not lo <= b_ms <= hi),
          'btt mean %s %.4f ms over %d I/Os, truestat %.4f over %d: btt within [%.4f, %.4f] (probe offsets: truestat %d%% below to %d%% above)'
          % (what, b_ms, b_n, t_ms, t_n, lo, hi, below * 100, above * 100))
# (btt's set: truestat's, less its x and the up to 2z btt lacks, plus
# btt's own, y + 2z at most)
between('service', T['service_ms'], T['ios'], S['service_ms'], S['ios'],
        (x + 2 * z) * S['service_max_ms'], (y + 2 * z) * T['service_max_ms'], 2e-6, 0, 0.02)
between('queue', T['queue_ms'], T['queue_ios'], S['queue_ms'], qn,
        2 * z * S['queue_max_ms'], (T['queue_ios'] - qn + 2 * z) * T['total_max_ms'], 5e-4, 0.05, 0.05)
# iostat: its window is its own two reads of /proc/diskstats, tenths of a
# second inside truestat's, which the run does not record to the request:
# 3%% where both count every request (IOPS), 5%% where one divides by a
# second figure of its own window (await, svctm). The device is held
# saturated through both windows (16 offered, 4 tags), so the edge requests
# are served like the rest.
# iostat's await starts at the request's allocation: with mq-deadline, at
# arrival, so it is the whole Q->C
print('iostat_await', int(not within(I['await_ms'], S['total_ms'], 0.05)),
      'iostat await %.3f ms, truestat Q->C %.3f ms (5%%)' % (I['await_ms'], S['total_ms']))
# svctm (busy time / I/Os) at 100%% busy is 1/IOPS, and service /
# concurrency is too (Little): the same figure, from two tools
sv = I['svctm_ms']
print('svctm_little', int(not within(sv, S['service_ms'] / S['conc_mean'], 0.05)),
      'iostat svctm %.3f ms = truestat service / concurrency %.3f ms (5%%)' % (sv, S['service_ms'] / S['conc_mean']))
print('svctm_truestat', int(not within(S['svctm_ms'], sv, 0.05)),
      'truestat SVCTM %.3f ms, iostat %.3f ms (5%%)' % (S['svctm_ms'], sv))
# svctm is busy time / I/Os, the mean concurrency depth x time / span:
# svctm x concurrency = busy / span x depth x time / I/Os, never above
# depth x time / I/Os (the service, plus the share of the unseen and of
# those still in the device at the end: _little above), to the JSON's
# rounding (truestat's own; iostat's agrees with it above)
per_io = (S['conc_mean'] + 5e-7) * (S['span_s'] + 5e-7) * 1e3 / S['ios']
print('svctm_far_below', int(not (S['svctm_ms'] - 5e-7) * (S['conc_mean'] - 5e-7) <= per_io),
      'svctm %.3f ms x concurrency %.3f <= depth x time / I/Os %.3f ms (service %.3f ms): svctm is %.1fx below the service because the device works on %.2f at once'
      % (S['svctm_ms'], S['conc_mean'], per_io, S['service_ms'], S['service_ms'] / sv, S['conc_mean']))
# IOPS: iostat's within 3%% of truestat's, windows apart by tenths of a
# second (btt's count is checked above)
print('iops_iostat', int(not within(I['iops'], S['iops'], 0.03)),
      'iostat %.1f IOPS, truestat %.1f (3%%)' % (I['iops'], S['iops']))
# biolatency: a power-of-two bucket, which holds truestat's p50 (widened by
# the 6.25%% of truestat's own buckets)
lo, hi = B['service_p50_ms']
p50 = S['service_p50_ms']
print('biolatency_bucket', int(not (abs(hi + 0.001 - 2 * lo) < 0.002 and lo / 1.0625 <= p50 <= hi * 1.0625)),
      'biolatency p50 bucket %.3f-%.3f ms (2x wide) holds truestat p50 %.3f ms' % (lo, hi, p50))
"
}

rc=0
compare_run run || rc=$?
sed 's/^/# /' "$tmp/run.table"
[[ -z ${COMPARE_TABLE:-} ]] || cp "$tmp/run.table" "$COMPARE_TABLE"
left_behind run "after the run"
check_cmd table_shape "one Markdown table of 10 rows and 4 columns of figures, then one line per tool" \
	python3 -c "
import sys
t = open('$tmp/run.table').read().split('\n')
rows = [l for l in t if l.startswith('|')]
tools = [l for l in t if l.startswith('- **')]
sys.exit(not (len(rows) == 12 and all(l.count('|') == 6 for l in rows) and len(tools) == 4))"
((rc != 0)) || judge run 0
rc=0
TRUESTAT_TEST_MISS_EVERY=50 compare_run miss50 || rc=$?
left_behind miss50 "after the run with misses on demand"
((rc != 0)) || judge miss50 50
echo "# this host against the model (not judged): truestat's figures, the daemon's mean A..R and timer lateness"
echo "# | run | IOPS | service ms | daemon A..R ms | late us | queue ms | in the device | %util iostat / truestat | daemon idle | iostat svctm ms | service / svctm | host |"
sed 's/^/# /' "$tmp/bench"

# --- Ctrl-C: the whole process group, as a terminal sends it
for ((try = 0; try < 20; try++)); do
	tracer_idle
	set -m
	"$COMPARE" --fio 4 --seconds 60 "$dev" >"$tmp/int.out" 2>"$tmp/int.err" &
	pid=$!
	set +m
	on_exit "kill -9 -- -$pid"
	for ((i = 0; i < 100; i++)); do
		pgrep -f "biolatency -d $dev\$" >/dev/null && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$pid" 2>/dev/null || ! refused "$tmp/int.err" || { wait "$pid" || true; continue; }
	break
done
sleep 0.5
tracer=$(<"$TRACEFS/current_tracer")
t0=$SECONDS
kill -INT -- "-$pid"
rc=0
wait "$pid" || rc=$?
check ctrl_c "$([[ $rc == 130 && $tracer == blk ]]; echo $?)" \
	"SIGINT while tracing (current_tracer $tracer): status $rc, in $((SECONDS - t0)) s"
left_behind ctrl_c "after Ctrl-C"

# --- a tool failing while the blk tracer and truestat are on
mkdir "$tmp/bin"
printf '#!/bin/sh\necho "failed to load BPF object" >&2\nexit 1\n' >"$tmp/bin/biolatency"
chmod +x "$tmp/bin/biolatency"
for ((try = 0; try < 20; try++)); do
	tracer_idle
	rc=0
	PATH=$tmp/bin:$PATH "$COMPARE" --fio 4 --seconds 2 "$dev" >"$tmp/out" 2>"$tmp/err" || rc=$?
	((rc == 1)) && refused "$tmp/err" || break
done
check fail_midway "$([[ $rc == 1 && $(wc -l <"$tmp/err") == 1 ]] &&
	grep -q 'biolatency failed: failed to load' "$tmp/err"; echo $?)" \
	"biolatency failing after the tracer started: status $rc, '$(head -3 "$tmp/err")'"
left_behind fail "after the failure"

# --- refusals: one line, status 1 (cannot run) or 2 (usage)
expect() { # expect NAME STATUS PATTERN -- ARGS
	local rc=0
	"${@:5}" >"$tmp/out" 2>"$tmp/err" || rc=$?
	expect_was "$1" "$2" "$3" "$rc"
}
expect_was() { # expect_was NAME STATUS PATTERN RC: of the command just run
	check "$1" "$([[ $4 == "$2" && $(wc -l <"$tmp/err") == 1 ]] && grep -q -- "$3" "$tmp/err"; echo $?)" \
		"status $4 (want $2): '$(head -3 "$tmp/err")'"
}
expect no_device 2 "no device given" -- "$COMPARE"
expect bad_option 2 "unknown option '--depth'" -- "$COMPARE" --depth 4 "$dev"
expect bad_seconds 2 "bad --seconds" -- "$COMPARE" --seconds 0 "$dev"
expect unknown_device 1 "nosuchdisk: no such block device" -- "$COMPARE" nosuchdisk
for ((try = 0; try < 20; try++)); do
	tracer_idle
	rc=0
	"$COMPARE" --seconds 1 "$dev" >"$tmp/out" 2>"$tmp/err" || rc=$?
	((rc == 1)) && refused "$tmp/err" || break
done
expect_was idle 1 "no I/O on $dev during the window" "$rc"
left_behind idle "after the idle run"
ln -s "$(command -v dirname)" "$tmp/bin/"
expect no_iostat 1 "iostat is not installed (Debian package sysstat)" \
	-- env PATH="$tmp/bin" "$(command -v bash)" "$COMPARE" "$dev"
check_cmd help "--help prints the usage, status 0" bash -c "'$COMPARE' --help | grep -q '^Usage: scripts/compare.sh'"

finish
