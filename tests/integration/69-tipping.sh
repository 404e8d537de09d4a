#!/usr/bin/env bash
# scripts/knee.sh's tipping point (--max-latency: the most concurrent clients
# a disk serves within a latency) and its
# verdict when the limit lies above the device, on the simulated disk.
#
# 1. A provisioned-IOPS volume: the disk capped at 1000 requests a second
#    (a token bucket of one token), S = 1 ms, K = 4; knee.sh --max-depth 64
#    --runtime 1 --max-latency 50. Once the bucket binds, every request
#    waits for the tokens of those ahead of it: by Little's law in flight =
#    IOPS x latency, so 50 ms holds about 1000 x 0.050 = 50 requests. The
#    log must follow the model (the bucket replayed from the arrivals); the
#    tipping point must follow from knee.sh's table by its rule, lie among
#    the answers each step's bounds allow (the daemon's A..R below truestat's
#    Q->C, fio's latency above), and lie in the band Little's law gives with
#    what the device logged (its rate, what it held, its p95 against its
#    mean). The knee must sit at the cap: a parallelism named, and every
#    doubling beyond it run at the bucket's rate (the log: the time the
#    bucket held a request back, its tokens then, its span).
# 2. A submitter that cannot keep up: K = 64, S = 2 ms, no cap, and fio
#    capped at 300 submissions a second (a wrapper on PATH adds
#    --rate_iops=300), so about 300 x 2 ms = 0.6 requests reach the device
#    whatever the depth offered. knee.sh --max-depth 8 must say "limit above
#    the device" and name no parallelism, by its rule over its own table,
#    and the device's own log must agree (what it held grew less than +20%
#    over the doubling the verdict names). 66-knee checks that a run limited
#    by the device still names its parallelism.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/simdisk.sh"
need fio python3

KNEE=$TS_ROOT/scripts/knee.sh
tmp=$(mktemp -d /tmp/truestat-test.tipping.XXXXXX)
on_exit "rm -rf '$tmp'"

# tip_run NAME K S_US ARGS...: knee.sh ARGS on a fresh simulated disk;
# its table in NAME.table, JSON in NAME.json, the disk's requests of the
# run in NAME.log and its whole log (with its parameters) in NAME.full
tip_run() {
	local name=$1 k=$2 s=$3 dev rc=0
	shift 3
	simdisk_up "$k" "$s" || { check "${name}_runs" 1 "the simulated disk did not start"; return 1; }
	dev=/dev/$SIMDISK_LOOP
	simdisk_mark
	"$KNEE" "$@" --json "$tmp/$name.json" "$dev" >"$tmp/$name.table" 2>"$tmp/$name.err" || rc=$?
	simdisk_save "$tmp/$name"
	simdisk_down
	sed 's/^/# /' "$tmp/$name.table"
	check "${name}_runs" "$rc" "knee.sh $* $dev: status $rc $(grep -v 'done$\|trying' "$tmp/$name.err" | tail -1)"
	return "$rc"
}

# the Python shared by both: NAME's steps, each with the daemon's requests
# (the log is in reply order and each step ends before the next begins, so
# fio's counts cut it, in the order the steps ran), and the log checked
TIP_PY='
d = json.load(open(tmp + "/" + n + ".json"))
steps = dict((r["depth"], r) for r in d["steps"])
order = sorted(q for q in steps if not steps[q]["search"]) + d["search_order"]
Q = sorted(steps)
log = sd_read(tmp + "/" + n + ".log")
prm = sd_params(tmp + "/" + n + ".full")
bad = sd_replay(tmp + "/" + n + ".full", prm["units"], prm["service_ns"]) & set(x[9] for x in log)
P, pos = {}, 0
for q in order:
    P[q] = (Sd(log[pos:pos + steps[q]["fio_ios"]]), {"lat_ns": steps[q]["fio_lat_ns"], "total_ios": steps[q]["fio_ios"]})
    pos += steps[q]["fio_ios"]
print(n + "_log", int(pos != len(log) or not Sd(log).contiguous or bool(bad)),
      "the daemon served %d requests, fio %d, in steps %s; log %s, %d off the model (K %d, S %d us, cap %s)"
      % (len(log), pos, " ".join(str(q) for q in order), "complete" if Sd(log).contiguous else "with gaps", len(bad),
         prm["units"], prm["service_ns"] // 1000,
         "%d IOPS: a token every %d ns, burst %d" % (prm["iops"], prm["interval_ns"], prm["burst"]) if prm["iops"] else "none"))
# what the daemon held, time-averaged over its span of a step
held = dict((q, P[q][0].sum_ra / float(P[q][0].W)) for q in Q)
'

# --- 1. a 1000-IOPS volume, S = 1 ms: the tipping point for 50 ms
if SIMDISK_IOPS=1000 tip_run tip 4 1000 --max-depth 64 --runtime 1 --max-latency 50; then
	simdisk_judge tip "
tmp, n = '$tmp', 'tip'
$TIP_PY
MS = d['max_latency_ms']
r, iv, B = prm['iops'], prm['interval_ns'], prm['burst']
ms = lambda ns: ns / 1e6

# each step: truestat's count, and its p95 total (Q->C) between the daemon's
# A..R (inside Q..C) and fio's latency (around it), each in its bucket; with
# m completions unseen, the k-th of truestat's is at most fio's (k + m)-th
band, res, cnt = {}, [], []
for q in Q:
    s, (L, f) = steps[q], P[q]
    m, ios = s['missed'], s['ios']
    kk = math.ceil(0.95 * ios)
    band[q] = (pct_of(L.ra, kk) / 1.0625, fio_pct(f, (kk + m) / float(L.n)) * 1.0625)
    v = s['total_p95_ms'] * 1e6
    res.append((band[q][0] <= v <= band[q][1], '%d: %.3f in [%.3f, %.3f]' % (q, ms(v), ms(band[q][0]), ms(band[q][1]))))
    cnt.append((ios + m == s['fio_ios'] == L.n, '%d: %d + %d unseen, fio %d, daemon %d' % (q, ios, m, s['fio_ios'], L.n)))
print(n + '_counts', int(not all(x[0] for x in cnt)), 'per step: ' + '; '.join(x[1] for x in cnt))
print(n + '_p95', int(not all(x[0] for x in res)),
      'p95 total ms per step in [daemon A..R rank / 1.0625, fio rank x 1.0625]: ' + '; '.join(x[1] for x in res))

# the rule over knee.sh's own table: the highest depth below MS there and
# at every depth below
tip = None
for q in Q:
    if not steps[q]['total_p95_ms'] < MS:
        break
    tip = q
print(n + '_rule', int(d['tipping_point'] != tip),
      'tipping point %s; the highest depth whose p95 total and every one below it are below %g ms: %s' % (d['tipping_point'], MS, tip))

# the answers the bounds allow: the first depth not below MS can be any
# whose upper bound reaches MS, after depths whose lower bounds stay below
allowed, j = set(), 0
for j, q in enumerate(Q):
    if band[q][1] >= MS * 1e6:
        allowed.add(Q[j - 1] if j else None)
    if band[q][0] >= MS * 1e6:
        break
else:
    allowed.add(Q[-1])
print(n + '_daemon', int(d['tipping_point'] not in allowed),
      'tipping point %s; the daemon and fio allow %s' % (d['tipping_point'], ', '.join(str(x) for x in sorted(allowed, key=str))))

# the model: Little, in flight = IOPS x latency. Where the bucket binds,
# the device's mean A..R at depth q is what it held over its rate X, held
# <= q and held >= q - U; its p95 is J_lo to J_hi of that mean (truestat's
# between the daemon's p95 and fio's), 1/16 more for buckets. X, U and J
# are the log's at the steps from half to twice r x MS, where the model is
# applied
cap = [q for q in Q if r * MS / 2000 <= q <= r * MS / 500]
X = [P[q][0].n / (P[q][0].W / 1e9) for q in cap]
mean = dict((q, P[q][0].sum_ra / float(P[q][0].n)) for q in cap)
J_lo = min(pct_of(P[q][0].ra, math.ceil(0.95 * P[q][0].n)) / mean[q] for q in cap)
J_hi = max(fio_pct(P[q][1], 0.95) / mean[q] for q in cap)
U = max(q - held[q] for q in cap)
lo = max(q for q in range(1, 10 * int(r * MS / 1000) + 2) if q * J_hi * 1.0625 / min(X) * 1e3 < MS)
hi = min(q for q in range(1, 10 * int(r * MS / 1000) + 2) if (q - U) * J_lo / 1.0625 / max(X) * 1e3 >= MS) - 1
print(n + '_model', int(not (d['tipping_point'] is not None and lo <= d['tipping_point'] <= hi)),
      'tipping point %s; Little puts it at %d x %g ms = %.0f in flight, in [%d, %d] with the log: rate %.1f to %.1f IOPS, up to %.2f of the depth not held, p95 %.3f to %.3f x the mean, and 1/16 for buckets'
      % (d['tipping_point'], r, MS, r * MS / 1000, lo, hi, min(X), max(X), U, J_lo, J_hi))

# the knee at the cap: a parallelism named, and every doubling beyond it at
# the bucket's rate: IOPS between the tokens the bucket gave out while it
# held a request back and all it could give in the step's span (n - B
# intervals at least), over fio's run time; the bucket holding a request
# back for most of the step, every unit free
kn = sd_knee(d['steps'])
out, ok = [], d['parallelism'] == kn['par'] and kn['par'] is not None and not d['limit_above_device']
for q in [q for q in Q if not steps[q]['search'] and kn['par'] is not None and q > kn['par']]:
    L, s = P[q][0], steps[q]
    bk = sd_bucket(L.reqs, iv)
    run = s['fio_runtime_ms'] / 1e3
    lo_i, hi_i = bk['tokens'] / run, (L.W / float(iv) + B) / run
    share = bk['capped'] / (run * 1e9)
    ok = ok and lo_i <= s['iops'] <= hi_i and share > 0.5 and not bk['unit_waits']
    out.append('%d: %.1f in [%.1f, %.1f], a request held back %.0f%% of fio\'s %.0f ms%s' % (
        q, s['iops'], lo_i, hi_i, 100 * share, run * 1e3, ', %d waited for a unit' % bk['unit_waits'] if bk['unit_waits'] else ''))
print(n + '_knee_cap', int(not ok or not out),
      'parallelism %s (rule: %s; %.1f IOPS there); beyond it IOPS at the cap of %d: %s' % (
          d['parallelism'], kn['par'], d['parallelism_iops'] or 0, r, '; '.join(out)))
"
fi

# --- 2. a submitter that cannot keep up: fio at most 300 submissions a second
mkdir "$tmp/bin"
printf '#!/bin/sh\nexec %q --rate_iops=300 "$@"\n' "$(command -v fio)" >"$tmp/bin/fio"
chmod +x "$tmp/bin/fio"
if PATH=$tmp/bin:$PATH tip_run above 64 2000 --max-depth 8 --runtime 1; then
	check_cmd above_says "the table says the limit lies above the device and names no parallelism" \
		eval "grep -q 'parallelism: none named: limit above the device' '$tmp/above.table' && ! grep -q 'parallelism: [0-9]' '$tmp/above.table'"
	simdisk_judge above "
tmp, n = '$tmp', 'above'
$TIP_PY
kn = sd_knee(d['steps'])
la = d['limit_above_device'] or {}
print(n + '_rule', int(not (kn['above'] and d['parallelism'] is None and la.get('from_depth') == kn['at'][0] and la.get('to_depth') == kn['at'][1])),
      'limit above the device from depth %s to %s, parallelism %s; the rule over the table: IOPS %+d%%, held %+d%% a doubling from %d to %d'
      % (la.get('from_depth'), la.get('to_depth'), d['parallelism'], round((kn['at'][2] - 1) * 100), round((kn['at'][3] - 1) * 100),
         kn['at'][0], kn['at'][1]))
a, b = kn['at'][:2]
g = (held[b] / held[a]) ** (1 / math.log2(b / float(a)))
print(n + '_daemon', int(not g < 1.2),
      'the device held %s at depths %s (its log; the model 300 x %.0f ms = %.2f): from %d to %d %+d%% a doubling, under +20%%'
      % (', '.join('%.2f' % held[q] for q in Q), ', '.join(str(q) for q in Q), prm['service_ns'] / 1e6,
         300 * prm['service_ns'] / 1e9, a, b, round((g - 1) * 100)))
"
fi

finish
