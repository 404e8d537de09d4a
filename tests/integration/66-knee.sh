#!/usr/bin/env bash
# scripts/knee.sh, the active knee finder, against the simulated disk with
# K = 4 units of S = 2 ms: fio offers depth 1, 2, 4, 8, 16 for 2 s each,
# then again for 1 s each with truestat told to ignore one completion in 50
# (misses on demand). Each step is checked against what the daemon logged
# for its requests: counts exactly; the p95 service between the daemon's
# A..R and fio's latency; the mean depth while busy between what the daemon
# held and what the offered depth allows; the maximum depth, or truestat
# saying it is not exact. knee.sh's parallelism and saturation must follow
# from its own table by its rules, and its saturation must be among the
# answers the daemon's and fio's bounds allow; the device being the limit
# (what the kernel held grew with the depth), it must name a parallelism,
# not "limit above the device" (69-tipping has a run where it must). A
# truestat -D of its own over the whole run is checked like 65-curve's. How near the knee comes to
# the model (parallelism K, K/S there, saturation 16) is printed, not
# judged. Both SVG plots (knee.sh --svg and scripts/curve-svg.py) must be
# well formed and render. Then its refusals: writes to a mounted device or
# over a filesystem, a missing target, no fio.
# KNEE_PNG_DIR=DIR keeps the rendered PNGs there, to look at.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/simdisk.sh"
need fio python3 xmllint rsvg-convert mkfs.ext4 blkid

KNEE=$TS_ROOT/scripts/knee.sh
CURVE_SVG=$TS_ROOT/scripts/curve-svg.py
K=4 S_US=2000
tmp=$(mktemp -d /tmp/truestat-test.knee.XXXXXX)
on_exit "[[ -n \${KNEE_KEEP:-} ]] || rm -rf '$tmp'"

# svg_ok NAME FILE: well formed, and renders headless to a PNG
svg_ok() {
	local png=$tmp/$1.png
	check_cmd "$1_xml" "$(basename "$2") is well-formed XML (xmllint)" xmllint --noout "$2"
	if rsvg-convert -o "$png" "$2" 2>"$tmp/rsvg.err" &&
		[[ $(head -c 8 "$png" | od -An -tx1 | tr -d ' ') == 89504e470d0a1a0a ]]; then
		check "$1_png" 0 "rendered by rsvg-convert: $(stat -c %s "$png") bytes of PNG"
	else
		check "$1_png" 1 "rsvg-convert failed: $(head -1 "$tmp/rsvg.err")"
	fi
	[[ -z ${KNEE_PNG_DIR:-} ]] || cp "$png" "$KNEE_PNG_DIR/"
}

# expect_refusal NAME STATUS PATTERN MSG -- ARGS: knee.sh ARGS must end with
# STATUS and say PATTERN in one line on stderr
expect_refusal() {
	local name=$1 want=$2 pat=$3 msg=$4 rc=0
	shift 5
	"$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	if ((rc == want)) && [[ $(wc -l <"$tmp/err") -eq 1 ]] && grep -q "$pat" "$tmp/err"; then
		check "$name" 0 "$msg: status $rc, '$(cat "$tmp/err")'"
	else
		check "$name" 1 "$msg: status $rc (want $want), stderr '$(head -3 "$tmp/err")'"
	fi
}

# --- the knee of the simulated disk, and again with truestat told to ignore
# one completion in 50 (misses on demand, 1 s steps)
# knee_run NAME SECONDS: knee.sh with a truestat -D of its own over the run
knee_run() {
	local name=$1 secs=$2 rc=0
	simdisk_up "$K" "$S_US"
	dev=$SIMDISK_LOOP
	simdisk_mark
	ts_start "$tmp/$name.curve.json" -D -d "$dev"
	"$KNEE" --max-depth 16 --runtime "$secs" --svg "$tmp/$name.svg" --json "$tmp/$name.json" \
		"/dev/$dev" >"$tmp/$name.table" 2>"$tmp/$name.err" || rc=$?
	ts_stop INT
	simdisk_save "$tmp/$name"
	simdisk_down
	sed 's/^/# /' "$tmp/$name.table"
	check "${name}_runs" "$rc" "knee.sh --max-depth 16 --runtime $secs /dev/$dev: status $rc $(grep -v 'depth .* done' "$tmp/$name.err" | tail -1)"
	((rc == 0)) || return 0
	simdisk_judge "$name" "
n, k, S, miss_every = '$name', $K, $S_US * 1000, int('${TRUESTAT_TEST_MISS_EVERY:-0}')
d = json.load(open('$tmp/$name.json'))
steps = dict((r['depth'], r) for r in d['steps'])
Q = sorted(steps)
log = sd_read('$tmp/$name.log')
us = lambda ns: ns / 1000.0
ms = lambda ns: ns / 1e6
print(n + '_depths', int(Q != [1, 2, 4, 8, 16]), 'offered depths %s' % Q)
bad = sd_replay('$tmp/$name.full', k, S) & set(x[9] for x in log)
# the daemon's requests of each step: the log is in reply order and each
# step ends before the next begins, so fio's counts cut it
P, pos = {}, 0
for q in Q:
    r = steps[q]
    P[q] = (Sd(log[pos:pos + r['fio_ios']]), {'lat_ns': r['fio_lat_ns'], 'total_ios': r['fio_ios']})
    pos += r['fio_ios']
print(n + '_log', int(pos != len(log) or not Sd(log).contiguous or bool(bad)),
      'the daemon served %d requests, fio %d, in %d steps; log %s, %d off the model (unit, start, finish = start + S, reply >= finish)'
      % (len(log), pos, len(Q), 'complete' if Sd(log).contiguous else 'with gaps', len(bad)))
res = []
for q in Q:
    r, (L, f) = steps[q], P[q]
    m, ios = r['missed'], r['ios']
    ok = ios + m == r['fio_ios'] == L.n
    # each step is a truestat of its own: its requests are the step's, less
    # the unseen; the k-th shortest service is at least the daemon's k-th
    # A..R and at most fio's (k + m)-th latency, each in its bucket
    kk = math.ceil(0.95 * ios)
    p95 = r['service_p95_ms'] * 1e6
    plo, phi = pct_of(L.ra, kk) / 1.0625, fio_pct(f, (kk + m) / float(L.n)) * 1.0625
    # mean in the device while busy: its depth x time is the timed
    # requests' service (at least the daemon's A..R, less the m longest)
    # plus from 0 to fio max for each unseen; busy time is at most the
    # daemon's span with its edges (+ fio max with misses), at least the
    # daemon's, less what a repair may move (m x (sweep + fio max): each
    # step a truestat without an interval, sweeping on its 1 s schedule);
    # with misses, busy time may also be over by its unsure_ms (how long
    # a request counted after it left may have been counted alone)
    fmax = f['lat_ns']['max']
    e = max(fmax - L.ra[0], 0)
    span = r['span_s'] * 1e9
    busy = r['busy_pct'] / 100 * span
    area = r['concurrency'] * busy
    rnd = 0.0005 * span + 0.00005 * span * r['concurrency']
    alo = L.sum_ra - L.top(m) - rnd
    ahi = min(q * (L.W + 2 * e), L.n * f['lat_ns']['mean']) - m * L.ra[0] + m * fmax + rnd
    # 0.00005 of the span in bhi and blo: busy_pct has two decimals
    bhi = L.W + 2 * e + (fmax if m else 0) + r['unsure_ms'] * 1e6 + 0.00005 * span
    blo = L.busy - m * (sd_sweep_ns() + fmax) - 0.00005 * span
    clo, chi = alo / bhi, (ahi / blo if blo > 0 else float('inf'))
    if r['depth_exact']:
        chi = min(chi, q * 1.0005)
    mx, mmin = r['depth_max'], r['depth_max_min']
    ok_max = L.held_max <= mx and mmin <= q and (mx <= q or not r['depth_exact'])
    print('%s_step_%d' % (n, q), int(not (ok and plo <= p95 <= phi and clo <= r['concurrency'] <= chi and ok_max)),
          'depth %d: truestat %d + %d unseen, fio %d, daemon %d; p95 %.3f ms in [%.3f, %.3f] (daemon rank / 1.0625, fio rank + %d x 1.0625); mean in the device while busy %.2f in [%.2f, %.2f]; max %d (at least %d, %s): daemon held %d'
          % (q, ios, m, r['fio_ios'], L.n, ms(p95), ms(plo), ms(phi), m, r['concurrency'], clo, chi,
             mx, mmin, 'exact' if r['depth_exact'] else 'upper bound', L.held_max))
    res.append((q, plo, phi))
    if m:
        print('%s_step_%d_flagged' % (n, q), int(r['depth_exact']),
              'depth %d: %d completions unseen: its depth must be flagged not exact (exact %s)' % (q, m, r['depth_exact']))
if miss_every:
    tot_m, tot_n = sum(steps[q]['missed'] for q in Q), len(log)
    print(n + '_misses_on_demand', int(tot_m < tot_n // miss_every - len(Q)),
          '%d unseen of %d with TRUESTAT_TEST_MISS_EVERY=%d (at least %d)' % (tot_m, tot_n, miss_every, tot_n // miss_every - len(Q)))
# the knee: knee.sh's rules over its own table; the device was the limit,
# so a depth is named: what the kernel held grew with the depth offered
kn = sd_knee(d['steps'])
par, still = kn['par'], kn['still']
print(n + '_parallelism_rule', int(d['parallelism'] != par or d['still_growing'] != still),
      'parallelism %s%s, the first depth after which fio IOPS grows < 20%% a doubling: %s' % (
          d['parallelism'], ' (still growing)' if d['still_growing'] else '', par))
at = kn['at'] or (0, 0, 0, 0)
print(n + '_device_limit', int(kn['above'] or bool(d['limit_above_device']) or d['parallelism'] is None),
      'a device parallelism named (%s), no limit above the device (%s): from depth %d to %d IOPS grew %+d%%, what the kernel held %+d%% a doubling'
      % (d['parallelism'], d['limit_above_device'], at[0], at[1], round((at[2] - 1) * 100), round((at[3] - 1) * 100)))
base = steps[1]['service_p95_ms']
first = next((q for q in Q if q > 1 and steps[q]['service_p95_ms'] > 3 * base), None)
print(n + '_saturation_rule', int(d['saturation'] != first),
      'saturation %s, first depth with p95 > 3 x %.3f ms: %s' % (d['saturation'], base, first))
# saturation against the daemon: the answers the rule can give when each
# step's p95 lies anywhere in its bounds above
lo1, hi1 = res[0][1], res[0][2]
choices = [None]
for q, lo, hi in res[1:]:
    nxt = []
    for ch in choices:
        if ch is not None:
            nxt.append(ch)
            continue
        if hi > 3 * lo1:
            nxt.append(q)
        if lo <= 3 * hi1:
            nxt.append(None)
    choices = nxt
print(n + '_saturation_daemon', int(d['saturation'] not in choices),
      'saturation %s; the daemon and fio allow %s' % (d['saturation'], ', '.join(str(x) for x in sorted(set(choices), key=str))))

# the same run seen by one truestat -D of its own
t = totals('$tmp/$name.curve.json')
dv = dev(t, '$dev')
rd, c, cv = dv['ops']['read'], dv['concurrency'], dv['depth_curve']
allreq = log
Lall = Sd(log)
print(n + '_curve_count', int(rd['ios'] + rd['missed'] != len(log)),
      'truestat -D: %d + %d unseen, the daemon %d' % (rd['ios'], rd['missed'], len(log)))
print(n + '_curve_max', int(not (Lall.held_max <= c['max'] and c['max_min'] <= 16 and (c['max'] <= 16 or not c['max_exact']))),
      'max depth %d (at least %d, %s): daemon held %d, offered 16' % (c['max'], c['max_min'], 'exact' if c['max_exact'] else 'upper bound', Lall.held_max))
if rd['missed']:
    print(n + '_curve_flagged', int(c['exact'] or cv['exact']),
          '%d completions unseen: exact %s, depth_curve exact %s (both must be false)' % (rd['missed'], c['exact'], cv['exact']))
D, _ = sd_curve(n + '_curve', c, cv, rd['missed'], P, allreq)
b = open('$tmp/bench', 'a')
for q in Q:
    r, (L, f) = steps[q], P[q]
    b.write('| %s | %d | %.1f | %.1f | %.0f | %.3f | %.2f | %s |\n' % (
        n, q, r['iops'], L.n / (L.W / 1e9), min(q, k) / (S / 1e9), r['service_p95_ms'], r['concurrency'] or 0,
        'parallelism %s, saturation %s (model %d, 16); -D: %s' % (d['parallelism'], d['saturation'], k, cv['parallelism_depths']) if q == Q[-1] else ''))
"
}

knee_run knee 2
knee_dev=$dev
TRUESTAT_TEST_MISS_EVERY=50 knee_run knee_miss50 1
echo "# this host against the model (not judged): fio's IOPS per step, the daemon's count over its span, min(d, K)/S"
echo "# | run | depth | IOPS | daemon | model | p95 ms | in the device while busy | knee |"
sed 's/^/# /' "$tmp/bench"
par=$(python3 -c "import json; print(json.load(open('$tmp/knee.json'))['parallelism'])")
check_cmd knee_table_says "the table states the knee of the JSON ($par): '$(grep 'parallelism:' "$tmp/knee.table" | sed 's/^ *//')'" \
	grep -q "parallelism: $par\( or more\)\?:" "$tmp/knee.table"

svg_ok knee "$tmp/knee.svg"
rc=0
"$CURVE_SVG" "$tmp/knee.curve.json" "$knee_dev" "$tmp/curve.svg" 2>"$tmp/err" || rc=$?
check curve_svg_runs "$rc" "curve-svg.py on the run's totals: status $rc $(head -1 "$tmp/err")"
svg_ok curve "$tmp/curve.svg"
expect_refusal curve_svg_nodev 1 "no report of nosuchdev" "curve-svg.py, a device not in the file" \
	-- "$CURVE_SVG" "$tmp/knee.curve.json" nosuchdev "$tmp/x.svg"

# --- refusals
loop_new 64
mkfs.ext4 -q "/dev/$LOOP"
mnt=$tmp/mnt
mkdir "$mnt"
mount "/dev/$LOOP" "$mnt"
on_exit "umount '$mnt'"
expect_refusal write_mounted 1 "is mounted on $mnt" "--write on a mounted device" \
	-- "$KNEE" --write --runtime 0.2 "/dev/$LOOP"
expect_refusal write_mounted_force 1 "is mounted on $mnt" "--write --force on a mounted device" \
	-- "$KNEE" --write --force --runtime 0.2 "/dev/$LOOP"
umount "$mnt"
expect_refusal write_fs 1 "holds TYPE=ext4" "--write over an unmounted ext4" \
	-- "$KNEE" --write --runtime 0.2 "/dev/$LOOP"
rc=0
"$KNEE" --write --force --max-depth 2 --runtime 0.3 "/dev/$LOOP" >"$tmp/out" 2>"$tmp/err" || rc=$?
check write_force "$rc" "--write --force over an unmounted ext4 writes: status $rc, $(grep -c '^ *[12] ' "$tmp/out") rows"
expect_refusal missing 1 "no such file or device" "a missing target" \
	-- "$KNEE" /dev/truestat-no-such-disk
expect_refusal not_dev 1 "not a block device or a regular file" "a directory" \
	-- "$KNEE" "$tmp"
expect_refusal bad_option 2 "unknown option" "an unknown option" -- "$KNEE" --depth 4 /dev/null
mkdir "$tmp/bin"
ln -s "$(command -v dirname)" "$(command -v awk)" "$tmp/bin/"
expect_refusal no_fio 1 "fio is not installed" "fio not on PATH" \
	-- env PATH="$tmp/bin" "$(command -v bash)" "$KNEE" "/dev/$LOOP"

# --- a file: its disk is traced, and other I/O there is said to mix in
file=$(mktemp /var/tmp/truestat-test.XXXXXX)
on_exit "rm -f '$file'"
dd if=/dev/zero of="$file" bs=1M count=8 status=none conv=fsync
rc=0
"$KNEE" --max-depth 2 --runtime 0.3 "$file" >"$tmp/out" 2>"$tmp/err" || rc=$?
fdisk_of=$(basename "$(readlink -f "/sys/dev/block/$(stat -c '%Hd:%Ld' "$file")")")
[[ -e /sys/class/block/$fdisk_of/partition ]] &&
	fdisk_of=$(basename "$(dirname "$(readlink -f "/sys/class/block/$fdisk_of")")")
grep -q "truestat traces $fdisk_of\$" "$tmp/err" && grep -q "other I/O on $fdisk_of mixes in" "$tmp/err" &&
	[[ $(grep -c '^ *[12] ' "$tmp/out") -eq 2 ]] || rc=1
check file "$rc" "a file on $fdisk_of: status $rc, its disk traced, the mixing noted, 2 rows"

finish
