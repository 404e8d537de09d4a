#!/usr/bin/env bash
# make demo: iostat's figures beside truestat's on the simulated disk it sets
# up itself (K = 4 units of S = 8 ms; 1, 4, 16 and 64 synchronous readers).
# Run once to the end with its raw material kept (DEMO_ARGS=--keep): it
# ends with status 0 within twice the minute it promises (the time is
# printed: a benchmark, not a test), prints a row per run, -D's verdict and
# truestat's findings, and what it prints agrees with the device model and
# the daemon's own log of the same requests:
#  - the daemon followed its model, request by request (replayed from its
#    arrivals), and its log holds every request;
#  - each run's SERVICE lies between the daemon's arrival..reply times (the
#    shortest of those that can fall in the window, as many as truestat
#    counted: A..R lies inside D..C) and what N readers can hold over the
#    window (Little's law: at most N in the device, each request at most
#    fio's longest latency);
#  - each run's request count lies between the daemon's finishes that must
#    and that may fall in truestat's window, and its IOPS is at most K/S
#    over the window and the longest latency fio saw before it;
#    at 16 readers near K/S: K per S at least for as long as the daemon
#    held K or more (every unit busy then, by the model);
#  - CONC is at most the N readers;
#  - iostat's %util at 1 reader is at least the daemon's busy share of the
#    window, less what jiffy-granular io_ticks may lose on the idle gaps
#    between requests (each gap is lost whole or not at all: 4 standard
#    deviations, and a jiffy at each end);
#  - -D's parallelism names the class that holds K;
#  - truestat's finding over the runs is the plateau of K units all busy
#    (capped-volume, or waiting-in-device past the knee), at K/S within
#    a histogram bucket.
# Then: Ctrl-C in the middle, and the bad input (not root, no /dev/fuse, no
# loop device), each ending non-zero with one line, and every run leaving
# nothing behind (daemon, FUSE mount, loop device, temporary files,
# truestat and its BPF programs, fio).
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/simdisk.sh"
need fio python3 fusermount3 setpriv unshare bpftool

keep=$(mktemp -d /tmp/truestat-test.demo.XXXXXX)
on_exit "rm -rf '$keep'"
simdisk_left_before

# 1. the whole demo, through make. 300 s: a guard against a hang; the
# demo's runs are 48 reports at most of truestat's 0.5 s (scripts/demo.sh:
# 4 x (RAMP_MAX + WINDOW)), the rest its set-up, built already here
t0=$EPOCHREALTIME
rc=0
timeout -k 5 300 make -s -C "$TS_ROOT" demo DEMO_ARGS="--keep $keep" >"$keep.out" 2>&1 || rc=$?
t1=$EPOCHREALTIME
on_exit "rm -f '$keep.out'"
sed 's/^/# /' "$keep.out"
secs=$(python3 -c "print('%.1f' % ($t1 - $t0))")
check demo_exit "$rc" "make demo ended with status $rc"
# how long it took depends on the host: a figure, not a check
echo "# make demo took $secs s (the README promises under a minute)"
left=$(simdisk_left_behind "$keep/where" 2>&1 || true)
check demo_left "$([[ -z $left ]]; echo $?)" "nothing left behind${left:+: $(paste -sd ';' <<<"$left")}"
((rc == 0)) || { finish; exit 1; }

hz=$({ zcat /proc/config.gz 2>/dev/null || cat "/boot/config-$(uname -r)" 2>/dev/null || true; } |
	sed -n 's/^CONFIG_HZ=//p')
simdisk_judge demo "
import json, math
k = '$keep'
F = json.load(open(k + '/figures.json'))
K, S = F['units'], F['service_ms'] * 1e6      # ns
J = 1e9 / int('${hz:-100}')                   # a jiffy; unknown: the longest, HZ=100
out = open('$keep.out').read().splitlines()
reqs = sd_read(k + '/simdisk.log')
bad = sd_replay(k + '/simdisk.log', K, S)
seqs = sorted(x[9] for x in reqs)
print('demo_simdisk', int(bool(bad) or seqs != list(range(len(seqs)))),
      '%d requests, %d off the model (K=%d, S=%.0f ms), log %s' % (
          len(reqs), len(bad), K, S / 1e6, 'complete' if seqs == list(range(len(seqs))) else 'with gaps'))

rows = F['rows']
printed = [l for l in out if l.split('|')[0].strip().isdigit()]
print('demo_rows', int([r['threads'] for r in rows] != [1, 4, 16, 64] or len(printed) != 4),
      '%d rows printed, runs of %s readers' % (len(printed), [r['threads'] for r in rows]))
print('demo_findings_printed', int(not (F['printed'] and all(l in out for l in F['printed']))),
      'truestat\'s findings printed, %d lines' % len(F['printed']))
# truestat's own conclusion over the four runs: the disk's K units all
# busy from K readers on, which from the block layer is a plateau at K/S
# (capped-volume) or, without two evidenced depths beyond the knee,
# waiting-in-device at the knee; by Little its IOPS within a histogram
# bucket (1/16) of K/S, the model's rate
fs = dict((f['id'], dict((x['name'], x['value']) for x in f['figures'])) for f in F['findings'])
cap = K / (S / 1e9)
if 'capped-volume' in fs:
    got = ('capped-volume', fs['capped-volume']['rate_iops'])
elif 'waiting-in-device' in fs:
    got = ('waiting-in-device', fs['waiting-in-device']['iops_at_knee'])
else:
    got = (None, -1)
print('demo_finding', int(not cap / 1.0625 <= got[1] <= cap * 1.0625),
      '%s at %.1f IOPS; K/S %.1f, within 1/16 (findings: %s)' % (got[0], got[1], cap, sorted(fs)))

def fio(n):
    t = open('%s/fio-%d.json' % (k, n)).read()
    return json.loads(t[t.index('{'):])['jobs'][0]['read']

def busy_within(iv, a, b):
    # the time in [a, b] covered by the intervals iv
    tot, end = 0, a
    for s, e in sorted(iv):
        s, e = max(s, end), min(e, b)
        if e > s:
            tot += e - s
            end = e
    return tot

# truestat's window: from the end of the report before it to the end of
# its last (end_mono_ns, the clock of the daemon's log); iostat's: the
# stamps the demo took as it read those reports, later by the host's
# wake-up of the demo (printed: the host's speed, not a check)
stamps = [float(l.split()[0]) for l in open(k + '/stamps')]
ends = [json.loads(l)['end_mono_ns'] for l in open(k + '/reports.jsonl') if l.strip()]
phases = dict((int(x.split()[0]), [int(v) for v in x.split()[1:]]) for x in open(k + '/phases'))
for r in rows:
    first, last = phases[r['threads']]
    off = r['realtime_minus_monotonic_s']
    late = [(stamps[i] - off) * 1e3 - ends[i] / 1e6 for i in range(first - 1, last)]
    print('# %d readers: the window\'s reports reached the demo %.1f to %.1f ms after their ends'
          % (r['threads'], min(late), max(late)))
for r in rows:
    n, ts, io = r['threads'], r['truestat'], r['iostat']
    off = r['realtime_minus_monotonic_s']
    t0, t1 = (r['t0'] - off) * 1e9, (r['t1'] - off) * 1e9
    lmax = fio(n)['lat_ns']['max']
    span, ios = ts['span_s'] * 1e9, ts['ios']
    end = ends[phases[n][1] - 1]  # truestat's window: [end - span, end]
    # SERVICE: the ios shortest A..R that can lie in truestat's window
    # (inside [end - span - lmax, end]), and at most n in the device over
    # the window and one request's time before it
    ra = sorted(x[3] - x[0] for x in reqs if x[0] >= end - span - lmax and x[3] <= end)
    lo = sum(ra[:ios]) / ios if len(ra) >= ios else float('inf')
    hi = n * (span + lmax) / ios
    svc = ts['service_ms'] * 1e6
    print('service_%d' % n, int(not lo <= svc <= hi),
          'SERVICE %.3f ms: >= %.3f (the daemon), <= %.3f (%d reader%s over %.2f s + %.1f ms)'
          % (svc / 1e6, lo / 1e6, hi / 1e6, n, 's' if n > 1 else '', span / 1e9, lmax / 1e6))
    # the count: every request finished in [a, b - lmax] completed in the
    # window [a, b] (timed, or counted missed), none timed finished after b
    # or before a - lmax
    fin = [x[2] for x in reqs]
    must = sum(1 for f in fin if end - span <= f <= end - lmax)
    may = sum(1 for f in fin if end - span - lmax <= f <= end)
    # the daemon finishes at most K per S, and K more at the edges; a
    # completion reaches the block layer up to lmax after its finish (the
    # host may hold its reply up that long), so the window's completions
    # are finishes from lmax before it
    cap = K / (S / 1e9) * (span + lmax) / span + K / (span / 1e9)
    # a completion the platform dropped is counted missed, not timed
    print('count_%d' % n, int(not (must <= ios + ts['missed'] and ios <= may) or ts['iops'] > cap),
          '%d requests + %d unseen (IOPS %.1f = %.0f%% of K/S): the daemon finished %d to %d in the window; at most %.1f/s'
          % (ios, ts['missed'], ts['iops'], 100 * ts['iops'] * S / 1e9 / K, must, may, cap))
    # each unseen completion (counted: missed) keeps its request in the
    # depth at most to issue + the mean service it is repaired with, or,
    # found idle by a report's sweep less than TS_SWEEP_MIN_AGE_NS after
    # its issue (a suspect), to that report's end
    age = sd_sweep_min_age_ns() / 1e6
    over = ts['missed_near'] * (ts['hint_max_ms'] + age) / (ts['span_s'] * 1000)
    print('conc_%d' % n, int(ts['conc'] > n + over + 0.0005),
          'CONC %.3f: at most the %d reader%s + %.3f for %d completions unseen (each <= %.1f ms + %g ms over %.2f s)'
          % (ts['conc'], n, 's' if n > 1 else '', over, ts['missed_near'], ts['hint_max_ms'], age, ts['span_s']))
    if n == 16:
        # near K/S: while the daemon has K requests between arrival and
        # finish, every unit is busy (the model), so at least K finish per
        # S then, and every request that finishes in [a, b - lmax] is counted
        a, b = end - span, end - lmax
        ev = sorted([(x[0], 1) for x in reqs] + [(x[2], -1) for x in reqs])
        lvl, last, tk = 0, a, 0
        for t, dd in ev:
            if lvl >= K:
                tk += max(0, min(t, b) - max(last, a))
            last, lvl = t, lvl + dd
        least = K * tk / S - K
        print('iops_16', int(ios < least),
              'IOPS %.1f, %.1f%% of K/S: the daemon held K or more for %.1f%% of the window, so at least %d requests, %d counted'
              % (ts['iops'], 100 * ts['iops'] * S / 1e9 / K, 100 * tk / (b - a), least, ios))
    if n == 1:
        # the daemon's busy share of iostat's window, less what io_ticks
        # may lose: a gap between requests that crosses a jiffy boundary
        # loses that jiffy (chance gap/J), so the loss has mean = the idle
        # time, already out, and variance <= J x idle
        W = t1 - t0
        busy = busy_within([(x[0], x[3]) for x in reqs], t0, t1)
        idle = W - busy
        bound = 100 * (busy - 4 * math.sqrt(J * idle) - 2 * J) / W
        top = 100 * (W + 2 * J) / W
        u = io['util_pct']
        print('util_1', int(not bound <= u <= top),
              'iostat %%util %.1f at 1 reader: >= %.1f (the daemon busy %.1f%% of %.2f s, less 4 sd of %.1f ms lost on gaps, 2 jiffies), <= %.1f'
              % (u, bound, 100 * busy / W, W / 1e9, 4 * math.sqrt(J * idle) / 1e6, top))

cv = F['depth_curve'] or {}
d = cv.get('parallelism_depths') or ''
lo, _, hi = d.partition('-')
# the -D run's depth counter was at most e too high (completions unseen
# until the sweep found them, counted: concurrency.excess of the totals);
# a request issued at a true depth K is filed as deep as K + e, so the
# class where growth stops may start up to e above K (0 unseen: exact)
tot = [json.loads(l) for l in open(k + '/reports.jsonl') if l.strip()]
tot = [x for x in tot if x.get('type') == 'totals']
e = max([x['concurrency']['excess'] for x in tot[-1]['devices']] or [0]) if tot else 0
ok = d and int(lo) <= K + e and K <= int(hi or lo)
print('verdict', int(not ok), '-D: effective parallelism %s, the disk has %d units (the depth counter up to %d too high: lower end <= %d)'
      % (d or None, K, e, K + e))
"

# 2. Ctrl-C during the first run: status 130 (or make's), nothing left
kc=$keep/ctrl-c
interrupt_at '^ *1 |' "$keep.c.out" make -s -C "$TS_ROOT" demo DEMO_ARGS="--keep $kc"
rc=$INT_RC
left=$(simdisk_left_behind "$kc/where" 2>&1 || true)
check ctrl_c "$( ((rc != 0)) && [[ -z $left ]]; echo $?)" \
	"Ctrl-C after the first row: status $rc (non-zero), nothing left behind${left:+: $(paste -sd ';' <<<"$left")}"

# 3. bad input: one line on stderr, none on stdout, status 1
# not root: a copy anyone can read, as this tree may not be
public_copy demo.sh
check_refuses not_root "needs root" setpriv --reuid=65534 --regid=65534 --clear-groups "$PUBLIC"
# no FUSE, no loop devices: hidden in a mount namespace of its own
empty=$(mktemp /tmp/truestat-test.XXXXXX)
on_exit "rm -f '$empty'"
check_refuses no_fuse "FUSE" unshare -m sh -c "mount --bind $empty /dev/fuse && exec $TS_ROOT/scripts/demo.sh"
check_refuses no_loop "loop devices" unshare -m sh -c \
	"for f in /dev/loop-control /dev/loop[0-9]*; do mount --bind $empty \$f || exit 9; done; exec $TS_ROOT/scripts/demo.sh"
finish
