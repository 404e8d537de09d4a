#!/usr/bin/env bash
# The parallelism curve (--depth) against devices whose parallelism K is
# known (the simulated disk, S = 2 ms): fio offers depth 1, 2, 4, 8, 16 in
# turn while one truestat run records, K = 1 and K = 8, then K = 8 again
# with truestat told to ignore one completion in 50 (misses on demand).
# The reference is what the daemon logged for the same requests, and its
# own curve: each request filed under how many the daemon held when it
# arrived (itself included), the rows and the same two rules as truestat's
# (parallelism: throughput grows < 20% a doubling; saturation: p95 > 3x
# depth 1's). Checked, with the slack each states:
#  - counts and bytes equal the daemon's, fio's and /proc/diskstats', the
#    unseen completions included; every timed request is in one row;
#  - Little's law between the depth registers and the per-request sums;
#  - the maximum depth lies between the daemon's and the offered 16, or
#    truestat says it is not exact (and then its classes are estimates);
#  - each row's percentiles and throughput within what the requests it can
#    hold allow: those of the phases that reach its depths (less the counter's
#    excess when not exact), A..R below, fio's latency above;
#  - truestat's parallelism and saturation are among the answers the
#    daemon's curve gives once widened by the FUSE+loop share of each
#    request the log allows and the histograms' resolution;
#  - the limit: "device" (and a parallelism) where most requests of the
#    deepest phase waited in the daemon for a unit.
# Then what kept the depth where it was, with S = 8 ms: 2 synchronous
# readers on 16 units and 12 on 64 (the device takes them all, the limit is
# above it: no parallelism named), and 16 offered to a loop device that
# takes 4 at once (the rest wait in the OS queue), against the daemon's log.
# The model's figures (min(d, K)/S, max(1, d/K) x S, knee at K) are printed
# as a table, not judged: how close a host comes to them is its speed.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/simdisk.sh"
need fio python3

S_US=2000
# blind(concurrency, depth_curve): truestat's doubt: the growth into the
# deepest evidenced row does not hold with its mean depth less the counter's
# excess (every request there filed that much too deep); it names no limit
# then (unless a plateau shows)
BLIND='
def blind(c, cv):
    ev = [(i, r) for i, r in enumerate(cv["rows"]) if r["evidence"]]
    if len(ev) < 2:
        return False
    (p, a), (d, b) = ev[-2], ev[-1]
    low = (b["mean_depth"] - c["excess"]) / (b["service_mean_ms"] / 1e3)
    return low <= 0 or (low / a["iops"]) ** (1.0 / (d - p)) < 1.2
'
tmp=$(mktemp -d /tmp/truestat-test.curve.XXXXXX)
on_exit "rm -rf '$tmp'"

# curve NAME K SECONDS: one truestat -D run over offered depths 1..16 (each
# SECONDS of fio), then the checks; TRUESTAT_TEST_MISS_EVERY passes through
curve() {
	local name=$1 k=$2 secs=$3 qd dev ds0 ds1 cpu0 cpu1
	simdisk_up "$k" "$S_US"
	dev=$SIMDISK_LOOP
	ds0=$(diskstats "$dev")
	cpu0=$(head -1 /proc/stat)
	ts_start "$tmp/$name.json" -D -d "$dev"
	: >"$tmp/$name.phases"
	for qd in 1 2 4 8 16; do
		simdisk_sync
		echo "$qd $(simdisk_lines)" >>"$tmp/$name.phases"
		fio --name=curve --filename="/dev/$dev" --direct=1 \
			--rw=randread --bs=4k --ioengine=io_uring --iodepth="$qd" \
			--runtime="$secs" --time_based "${SIMDISK_FIO_PCT[@]}" \
			--output-format=json --output="$tmp/$name.fio$qd"
	done
	simdisk_sync
	echo "end $(simdisk_lines)" >>"$tmp/$name.phases"
	ts_stop INT
	cpu1=$(head -1 /proc/stat)
	ds1=$(diskstats "$dev")
	cp "$SIMDISK_LOG" "$tmp/$name.log"
	simdisk_down
	check "${name}_exit" "$TS_RC" "truestat ended with status $TS_RC"
	simdisk_judge "$name" "$BLIND
n, K, S, miss_every = '$name', $k, $S_US * 1000, int('${TRUESTAT_TEST_MISS_EVERY:-0}')
t = totals('$tmp/$name.json')
d = dev(t, '$dev')
rd, c, cv = d['ops']['read'], d['concurrency'], d['depth_curve']
ios, m = rd['ios'], rd['missed']
us = lambda ns: ns / 1000.0
ms = lambda ns: ns / 1e6
ph = [l.split() for l in open('$tmp/$name.phases')]
cut = [int(x[1]) for x in ph]
Q = [int(x[0]) for x in ph[:-1]]
allreq = sd_read('$tmp/$name.log', cut[0], cut[-1])
P = {}                                  # per phase: its requests, fio's figures
for i, q in enumerate(Q):
    P[q] = (Sd(sd_read('$tmp/$name.log', cut[i], cut[i + 1])),
            json.load(open('$tmp/$name.fio%d' % q))['jobs'][0]['read'])
L = Sd(allreq)
bad = sd_replay('$tmp/$name.log', K, S) & set(x[9] for x in allreq)
fio_n = sum(f['total_ios'] for _, f in P.values())
fio_b = sum(f['io_bytes'] for _, f in P.values())
fmax = max(f['lat_ns']['max'] for _, f in P.values())
ds0, ds1 = [int(x) for x in '$ds0'.split()], [int(x) for x in '$ds1'.split()]
span = t['span_s'] * 1e9

print(n + '_simdisk', int(bool(bad) or not L.contiguous or any(P[q][0].held_max > q for q in Q)),
      '%d requests, %d off the model (unit, start, finish = start + S, reply >= finish), log %s; held at most %s for offered %s'
      % (L.n, len(bad), 'complete' if L.contiguous else 'with gaps', [P[q][0].held_max for q in Q], Q))
print(n + '_count', int(not (ios + m == L.n == fio_n == ds1[0] - ds0[0])),
      'completions: truestat %d + %d unseen, daemon log %d, fio %d, diskstats %d' % (ios, m, L.n, fio_n, ds1[0] - ds0[0]))
print(n + '_bytes', int(not (rd['bytes'] + rd['missed_bytes'] == L.bytes == fio_b == (ds1[2] - ds0[2]) * 512)),
      'bytes: truestat %d + %d unseen, daemon log %d, fio %d, diskstats %d'
      % (rd['bytes'], rd['missed_bytes'], L.bytes, fio_b, (ds1[2] - ds0[2]) * 512))
if miss_every:
    print(n + '_misses_on_demand', int(m < (ios + m) // miss_every - 1),
          '%d unseen of %d with TRUESTAT_TEST_MISS_EVERY=%d (at least %d)' % (m, ios + m, miss_every, (ios + m) // miss_every - 1))
rows = cv['rows']
print(n + '_rows_ios', int(sum(r['ios'] for r in rows) != ios),
      'the rows hold %d requests, truestat timed %d' % (sum(r['ios'] for r in rows), ios))
# Little: the depth registers' area is the sum of service times, plus an
# estimate for each unseen completion, from 0 to the recent mean service;
# the JSON's rounding (6 decimals of the means and of span_s, in s) and the
# changes stamped late either way
rnd = 5e-7 * span + 500 * c['mean'] + ios * 0.5 + c['reordered_ms'] * 1e6
diff = c['mean'] * span - rd['service_ms'] * 1e6 * ios
print(n + '_little', int(not -rnd <= diff <= m * fmax + rnd),
      'depth x time - sum of service = %.3f request-ms: 0 to %d unseen x fio max %.0f us, +-%.3f rounding' % (ms(diff), m, us(fmax), ms(rnd)))
mx, mmin, exact = c['max'], c['max_min'], c['exact']
print(n + '_max', int(not (L.held_max <= mx and mmin <= 16 and (mx <= 16 or not c['max_exact']))),
      'max depth %d (%s, at least %d): the daemon held %d, offered 16' % (mx, 'exact' if c['max_exact'] else 'upper bound', mmin, L.held_max))
if m:
    print(n + '_flagged', int(exact or c['max_exact'] or cv['exact']),
          '%d completions unseen: exact %s, max_exact %s, depth_curve exact %s (all must be false)' % (m, exact, c['max_exact'], cv['exact']))
D, par_ok = sd_curve(n, c, cv, m, P, allreq)
# the deepest phase from the log: if most of its requests waited for a unit,
# the device was full there and was the limit (null when blind, unless the
# plateau shows anyway). Unless the daemon's own curve, widened as the
# parallelism check widens it, may still grow into its deepest row (a row
# below K whose mean depth is well under K does K/S less a fifth or more):
# then a curve still growing says the submitter gave all the load there was
# (above_device), or, its growth in doubt, nothing
deep = P[Q[-1]][0].reqs
waits = sum(1 for x in deep if x[1] > x[0])
want = ['device'] if 2 * waits >= len(deep) else ['no device limit (test not for that)']
grows = any(g for _, g in par_ok)
if want == ['device'] and grows and cv['still_growing']:
    want = ['above_device', None]
if blind(c, cv) and cv['parallelism'] is None:
    want = [None]
print(n + '_limit', int(cv['limit'] not in want or (cv['limit'] == 'device') != (cv['parallelism'] is not None)),
      'limit %s, parallelism %s, counter up to %d too high; the daemon: %d of the %d requests of depth %d waited for a unit, so %s%s'
      % (cv['limit'], cv['parallelism'], c['excess'], waits, len(deep), Q[-1], ' or '.join(map(str, want)),
         '' if not grows else ' (its curve may still grow at its deepest row)'))

# the benchmark: the model, the daemon's curve and truestat's rows
b = open('$tmp/bench', 'a')
for r in rows:
    lo, hi = r['depth_lo'], r['depth_hi']
    x = D.get(lo)
    b.write('| %s | %s | %.0f | %.0f | %s | %.3f | %.3f | %s | %s |\n' % (
        n, sd_label(lo, hi), r['iops'] or 0, min(hi, K) / (S / 1e9), '%.0f' % x['iops'] if x else '-',
        r['service_p50_ms'] or 0, max(1, hi / float(K)) * S / 1e6, '%.3f' % ms(pct_of(x['ra'], math.ceil(len(x['ra']) / 2.0))) if x else '-',
        '' if r['evidence'] else 'little evidence'))
b.write('| %s | knee | parallelism %s, saturation %s | model: K = %d, saturation %s | %s |\n' % (
    n, cv['parallelism_depths'], cv['saturation_depths'], K, {1: '3-4', 8: None}.get(K),
    host_load('$cpu0', '$cpu1').replace('host CPU during the run: ', '')))
"
}

# limit NAME K S_US NR_REQUESTS OFFERED FIO-OPTION...: one truestat -D run
# over one fio run (OFFERED requests at once) on a simulated disk whose loop
# device takes NR_REQUESTS at once, and what -D says kept the depth. The
# reference is the daemon's log: a request that waited for a unit found the
# device full (the device); else, if the daemon never held as many as were
# offered, the rest waited in the kernel above it (the OS queue); else the
# device took all it was given and the submitter was the limit.
limit() {
	local name=$1 k=$2 s=$3 nr=$4 offered=$5 dev
	shift 5
	simdisk_up "$k" "$s"
	dev=$SIMDISK_LOOP
	queue_set "$dev" nr_requests "$nr"
	simdisk_mark
	ts_start "$tmp/$name.json" -D -d "$dev"
	fio --name=limit --filename="/dev/$dev" --direct=1 --rw=randread --bs=4k \
		--runtime=3 --time_based --group_reporting "$@" \
		--output-format=json --output="$tmp/$name.fio"
	ts_stop INT
	simdisk_save "$tmp/$name"
	simdisk_down
	check "${name}_exit" "$TS_RC" "truestat ended with status $TS_RC"
	simdisk_judge "$name" "$BLIND
n, offered = '$name', $offered
d = dev(totals('$tmp/$name.json'), '$dev')
cv, os = d['depth_curve'], d['os_queue']
reqs = sd_read('$tmp/$name.log')
L = Sd(reqs)
waits = sum(1 for x in reqs if x[1] > x[0])
want = 'device' if waits else 'os_queue' if L.held_max < offered else 'above_device'
if want != 'device' and blind(d['concurrency'], cv):
    want = None
print(n + '_limit', int(cv['limit'] != want),
      'limit %s; the daemon: %d requests, %d waited for a unit, it held at most %d of %d offered, so %s (truestat: device %.0f%% busy, OS queue %.1f%%, counter up to %d too high)'
      % (cv['limit'], L.n, waits, L.held_max, offered, want, d['concurrency']['busy_pct'], os['busy_pct'], d['concurrency']['excess']))
print(n + '_no_parallelism', int(want != 'device' and cv['parallelism'] is not None),
      'parallelism %s (named only where the device was the limit)' % cv['parallelism'])
"
}

curve k1 1 2
curve k8 8 2
TRUESTAT_TEST_MISS_EVERY=50 curve k8_miss50 8 1
# 16 units, two synchronous readers: the device never fills, nothing waits;
# an unseen completion there blinds the growth from depth 1 to 2 (null)
limit k16_psync2 16 8000 128 2 --ioengine=psync --numjobs=2
# 64 units, twelve: the device holds 9-16 nearly always, and the growth
# into it from 5-8 outlasts a counter a few too high
limit k64_psync12 64 8000 128 12 --ioengine=psync --numjobs=12
# 16 units behind 4 requests at once: 12 of 16 wait in the OS queue
limit k16_nr4 16 8000 4 16 --ioengine=libaio --iodepth=16
echo "# this host against the model (not judged): per row truestat's IOPS, the model's min(d, K)/S, the daemon's"
echo "# own curve (mean held / mean A..R); p50 service: truestat's, the model's max(1, d/K) x S, the daemon's A..R"
echo "# | run | depth | IOPS | model | daemon | p50 ms | model | daemon | |"
sed 's/^/# /' "$tmp/bench"
finish
