# SPDX-License-Identifier: GPL-2.0
"""The checks of tests/vm's stacked cases (raid0, dm), on the host.

python3 stacked.py TS_FILE KVER KEY=VALUE...: TS_FILE holds the guest's
"@@TS" lines without the prefix ("WHO KEY VALUE"); the KEY=VALUEs are the
guest's parameters (CASES, S_NS, K, RAID_S_NS, RAID_JOBS, DM_DELAY_MS,
DM_JOBS) and the kernel's HZ. Prints one "NAME RC MESSAGE" line per check
(RC 0: a pass) and "# 0 TEXT" lines to be shown as they are; run.sh reads
them. Every message gives the measured value, its bound and where the
bound comes from.

raid0: md raid0 of four serial null_blk disks (K = 1, S = 8 ms), read by
1, 4, 16, 64 psync jobs in turn under one truestat -D -d md0 run.
 - counts: md0's reads and each member's (+ missed) equal the guest's
   /proc/diskstats exactly; the kernel's own block_bio_remap count (ftrace)
   says md0 sent each bio on once; truestat linked every one (layer_ios)
   but those that entered before md0's first remap (one per job at most)
 - members: service S to S + 2% and never more than one request at once
 - per job count N, over the part of the phase where all N jobs ran (the
   guest's diskstats every TICK s, from a SCHED_IDLE sampler that any job
   woken by its read's completion preempts: from the first to the last
   sample with md0's in-flight count at 90% of N, as fio starts and stops
   each job once) and truestat's reports that lie wholly inside it; the
   phase (run.sh's RAID_RUNTIME) is long enough for two of them, one to
   spare: md0's mean concurrency is
   N less the jobs' time between a completion and their next read, its
   maximum is N, busy nearly 100%, and its throughput is that of four
   serial disks fed at random (a closed queueing model, simulated here with
   the members' measured S), up to 4/S
 - -D: the parallelism the curve reads is one the model's curve gives
 - a table: iostat's %util and svctm (from the same diskstats, as sysstat
   computes them) next to truestat's IOPS, CONC and SERVICE

dm: dm-linear, dm-delay and dm-crypt over one null_blk (K, S), each read
in turn under one truestat run.
 - counts at both layers equal diskstats; every bio went on as one member
   bio (ftrace) and truestat linked it (layer_ios), as for raid0; where
   the kernel fires no block_bio_remap for a target (dm-delay and dm-crypt
   before 5.16), truestat says the layer time is unknown
 - layer time: dm-delay's is its delay as the kernel's timer gives it
   (whole jiffies), dm-linear's a few microseconds, dm-crypt's above zero
 - the member: service S to S + 2%, at most K at once
 - block_bio_remap followed: truestat holds a link to it (/proc/PID/fdinfo)
   and its remap program ran once per remap ftrace saw (bpf_stats)
dm_plain, before it: a plain null_blk (nullb1) traced with -d while
dm-linear and nullb1 are read at once.
 - no traced disk is stacked: truestat holds no link to block_bio_remap
   and its remap program ran 0 times (bpf_stats) while ftrace saw
   dm-linear's remaps; its issue program ran at least once per nullb1 read
 - nullb1 alone in the report, its counts equal diskstats
"""
import bisect
import heapq
import json
import math
import random
import re
import sys

TS_FILE, KV = sys.argv[1], sys.argv[2]
P = dict(a.split('=', 1) for a in sys.argv[3:])
OUT = []


def check(name, bad, msg):
    OUT.append('%s/%s %d %s' % (KV, name, 1 if bad else 0, msg))


def note(msg):
    OUT.append('# 0 ' + msg)


def judged(name, fn, *args):
    """fn(*args), the checks of one run; output it cannot read (a run cut
    short, a line broken off) is a failed check that says so, and the runs
    after it are still judged"""
    try:
        fn(*args)
    except (LookupError, ValueError, TypeError, ZeroDivisionError) as e:
        check(name + '_judged', 1, 'its output cannot be judged (%s: %s): cut short or malformed'
              % (type(e).__name__, e))


def parse():
    cases = {}
    for line in open(TS_FILE):
        parts = line.rstrip('\n').split(' ', 2)
        while len(parts) < 3:
            parts.append('')
        who, key, val = parts
        cases.setdefault(who, {}).setdefault(key, []).append(val)
    return cases


class Run:
    """One case's lines: diskstats snapshots by tag, reports, remaps."""

    def __init__(self, c):
        self.c = c
        self.at = {}            # tag -> (uptime, reports printed by then)
        self.order = []         # tags in the order the guest took them
        for v in c.get('at', []):
            f = v.split()
            self.at[f[0]] = (float(f[1]), int(f[2]) if len(f) > 2 else None)
            self.order.append(f[0])
        self.ds = {}            # tag -> device -> [fields after the name]
        for v in c.get('ds', []):
            f = v.split()
            if len(f) >= 5:
                self.ds.setdefault(f[0], {})[f[3]] = [int(x) for x in f[4:]]
        self.reports = [json.loads(l) for l in c.get('json', [])]
        tot = [r for r in self.reports if r['type'] == 'totals']
        self.totals = tot[0] if len(tot) == 1 else None
        self.remaps = {}        # "maj,min" of the stacked device -> count
        for v in c.get('remaps', []):
            m = re.match(r'<- \((\d+,\d+)\) (\d+)', v)
            if m:
                self.remaps[m.group(1)] = int(m.group(2))
        # ftrace's buffer: events kept / written (fewer kept: it filled up)
        m = re.search(r'(\d+)/(\d+)', ' '.join(c.get('remaps_lost', [])))
        self.kept = (int(m.group(1)), int(m.group(2))) if m else None

    def delta(self, dev, field, a='start', b='end'):
        """diskstats field (1-based after the name) of dev from tag a to b"""
        return self.ds[b][dev][field - 1] - self.ds[a][dev][field - 1]


def dev(doc, name):
    for x in doc['devices']:
        if x['device'] == name:
            return x
    return None


def started(tag, c, want=None):
    """False (after the failing check) unless truestat attached; with
    @want, how it must attach (a fall back to raw_tp then fails, with the
    verifier's last words); its exit status"""
    if 'attach_failed' in c:
        check(tag + '_attach', 1, 'truestat did not attach: ' + ' | '.join(c.get('stderr', [])[-3:]))
        for l in c.get('log', [])[-25:]:
            note(l)
        return False
    err = c.get('stderr', [])
    kind = [l.split()[-1] for l in err if 'attached with' in l]
    fell = [l for l in err if 'tp_btf failed' in l]
    # the stacked cases are about the bio layer, not how it attached (the
    # base cases judge that): a fall back to raw_tp is said, not failed
    bad = kind != [want] or bool(fell) if want else not kind
    check(tag + '_attach', int(bad), 'attached with %s in %s s%s%s' % (
        kind[0] if kind else '?', c.get('attach_s', ['?'])[0], ' (wanted %s)' % want if want else '',
        ' (' + fell[0] + ')' if fell else ''))
    for l in c.get('log', [])[-12:] if fell and want else []:
        note(l)
    check(tag + '_exit', int(c.get('exit') != ['0']), 'truestat exit status %s' % c.get('exit', ['?'])[0])
    return True


def md_silent(r, n, maj_min):
    """md0 on 5.13 (measured): no reads in diskstats, though ftrace saw
    its bios sent on; each is sent on once, so ftrace's block_bio_remap
    count from it stands in for diskstats' reads"""
    return maj_min is not None and r.delta(n, 1) == 0 and r.remaps.get(maj_min, 0) > 0


def counts(tag, r, names, remapped=None):
    """ios + missed against diskstats' reads, for each device (or ftrace's
    remaps from a stacked one whose diskstats count nothing: md_silent);
    no writes"""
    t = r.totals
    for n in names:
        d = dev(t, n)
        reads, writes = r.delta(n, 1), r.delta(n, 5)
        src = 'diskstats'
        if md_silent(r, n, (remapped or {}).get(n)):
            reads, src = r.remaps[remapped[n]], 'ftrace block_bio_remap (diskstats count no %s reads here)' % n
        if d is None:
            check('%s_%s_counts' % (tag, n), 1, '%s not in the totals; %s: %d reads' % (n, src, reads))
            continue
        rd = d['ops'].get('read', {})
        got = rd.get('ios', 0) + rd.get('missed', 0)
        check('%s_%s_counts' % (tag, n), int(got != reads or writes != 0 or set(d['ops']) != {'read'}),
              '%s (%s) reads: truestat %d + %d missed, %s %d (exact); writes: diskstats %d, truestat ops %s'
              % (n, d['layer'], rd.get('ios', 0), rd.get('missed', 0), src, reads, writes, sorted(d['ops'])))


def member(tag, d, s_ms, k):
    """a null_blk member: service S to S + 2%, at most K at once"""
    n = d['device']
    svc = d['all']['service_ms']
    # as in run.sh: null_blk's timer fires S after the driver got the
    # request; the guest's path around it measured 0.1-0.7% of S, guest
    # instructions under -icount (1 ns each), not the host's speed
    check('%s_%s_service' % (tag, n), int(svc is None or not s_ms <= svc <= 1.02 * s_ms),
          '%s mean service %s ms, S %.4f ms (S to S + 2%%: the driver path under -icount)'
          % (n, '%.4f' % svc if svc is not None else 'null', s_ms))
    c = d['concurrency']
    if c['max_exact']:
        check('%s_%s_max' % (tag, n), int(c['max'] > k),
              '%s at most %d requests at once, exact (null_blk hw_queue_depth K = %d)' % (n, c['max'], k))
    else:
        check('%s_%s_max' % (tag, n), int(not c['max_min'] <= k <= c['max']),
              '%s max not exact: [%d, %d] must hold K = %d' % (n, c['max_min'], c['max'], k))


def layer(tag, r, d, maj_min, jobs, lo, hi, why):
    """ftrace's remaps, layer_ios and layer_ms of a stacked device whose
    first reads came from jobs jobs"""
    n = d['device']
    al = d['all']
    ios, reads = al['ios'], r.delta(n, 1)
    rm = r.remaps.get(maj_min, 0)
    fan = d['events'].get('fanned_out_bios', 0)
    lost = r.kept and r.kept[0] != r.kept[1]
    if rm == 0 and reads > 0:
        # before 5.16 (dm_submit_bio_remap), a dm target that submits its
        # bios itself (dm-delay, dm-crypt) sends them on with no
        # block_bio_remap: no one knows which member bio is whose, and
        # truestat must say the layer time is unknown, not make one up
        check('%s_%s_layer_unknown' % (tag, n), int(al['layer_ios'] != 0 or al['layer_ms'] is not None),
              'the kernel fired no block_bio_remap from %s (%s) for its %d reads (ftrace): truestat reports '
              'its layer time unknown (layer_ios %d, layer_ms %s)' % (n, maj_min, reads, al['layer_ios'],
                                                                     al['layer_ms']))
        return
    if md_silent(r, n, maj_min):
        note('not judged on this kernel: %s_%s_remaps (diskstats count no %s reads; ftrace\'s %d remaps are its '
             'count in %s_%s_counts)' % (tag, n, n, rm, tag, n))
    else:
        check('%s_%s_remaps' % (tag, n), int(rm != reads),
              'the kernel fired block_bio_remap from %s (%s) %d times (ftrace), for %d reads (diskstats): '
              'each bio sent on once%s' % (n, maj_min, rm, reads,
                                           '; ftrace kept only %d of %d events' % r.kept if lost else ''))
    if al['layer_ios'] == 0:
        check('%s_%s_layer_ios' % (tag, n), 1,
              'layer_ios is 0: truestat linked none of %s\'s %d bios to its member bio, though ftrace saw %d '
              'block_bio_remap from %s: no layer time' % (n, ios, rm, maj_min))
        return
    # truestat indexes a device's bios for remaps once it has seen one
    # from it (bpf 1bec6de): the bios that entered before that have no
    # layer time, at most one per job that started the device's I/O
    # (one where the first remap comes in the submitter's own call)
    unl = ios - al['layer_ios']
    check('%s_%s_layer_ios' % (tag, n), int(not 0 <= unl <= jobs or fan != 0),
          '%d of %d bios linked one-to-one to their member bio, %d not (bound [0, %d]: those that entered before '
          'the first remap, one per job at most; none is split), %d fanned out (0)'
          % (al['layer_ios'], ios, unl, jobs, fan))
    lm = al['layer_ms']
    p99 = (d['ops']['read'].get('percentiles_ms', {}).get('layer') or {}).get('p99')
    check('%s_%s_layer_ms' % (tag, n), int(lm is None or not lo <= lm <= hi),
          '%s layer time %s ms (p99 %s ms), bound [%g, %g] ms: %s'
          % (n, '%.4f' % lm if lm is not None else 'null', '%.4f' % p99 if p99 is not None else '-', lo, hi, why))


_SIM = {}


def closed_model(n, s_ms, secs=1000.0, m=4, seed=1):
    """completion times (s) of n jobs, each reading one block at a time
    from one of m serial disks of fixed service s_ms chosen at random (raid0
    with random offsets), nothing between a completion and the next read;
    secs of it after a second's start"""
    if n not in _SIM:
        rnd = random.Random(seed)
        free, ev, done, end = [0.0] * m, [(0.0, j) for j in range(n)], [], (secs + 1) * 1000
        heapq.heapify(ev)
        while True:
            t, j = heapq.heappop(ev)
            if t > end:
                break
            k = rnd.randrange(m)
            c = max(t, free[k]) + s_ms
            free[k] = c
            heapq.heappush(ev, (c, j))
            if c >= 1000:
                done.append(c / 1000 - 1)
        done.sort()
        _SIM[n] = (done, secs)
    return _SIM[n]


def model_band(n, s_ms, win_s, q=0.001):
    """the model's mean IOPS, and its q and 1 - q quantiles over windows of
    win_s: what chance alone gives in a stretch that long"""
    done, secs = closed_model(n, s_ms)
    nwin = max(int(secs // win_s), 1)
    counts = sorted(bisect.bisect(done, (i + 1) * win_s) - bisect.bisect(done, i * win_s) for i in range(nwin))
    i = int(q * nwin)
    return len(done) / secs, counts[i] / win_s, counts[-1 - i] / win_s


def raid0(c):
    tag = 'raid0'
    S_ms = int(P['RAID_S_NS']) / 1e6
    jobs = [int(x) for x in P['RAID_JOBS'].split()]
    if 'setup_failed' in c or not c.get('setup'):
        check(tag + '_setup', 1, 'md0 was not built: ' + ' | '.join(c.get('setup', [])))
        return
    check(tag + '_setup', 0, c['setup'][-1])
    # the window below rests on the sampler yielding to every woken job
    pol = ' '.join(c.get('sampler_policy', []))
    check(tag + '_sampler', int('SCHED_IDLE' not in pol or 'sampler_policy_failed' in c),
          'the diskstats sampler\'s policy: %s (SCHED_IDLE: a job whose read completed issues its next before '
          'a sample is taken)' % (pol or 'not said'))
    r = Run(c)
    members = ['nullb0', 'nullb1', 'nullb2', 'nullb3']
    phases, inflight = {}, {}
    # md0's in-flight count, diskstats field 9, is what tells when all jobs
    # run; md keeps it since 5.14 (before, 0 at every tick: no window)
    ticks_all = [t for t in r.order if t.startswith('tick') and 'md0' in r.ds.get(t, {})]
    md_counts = any(r.ds[t]['md0'][8] for t in ticks_all)
    held = lambda t: r.ds[t]['md0'][8]
    for n in jobs:
        # the ticks where all n jobs ran: from the first to the last
        # tick where md0's in-flight count (diskstats field 9) is at
        # least 90% of n, reads growing into and out of it. fio starts
        # each job once and stops it once a phase, so a tick between
        # them with fewer in flight is a job between a completion and
        # its next read, not one that stopped: at n = 1 and 4 (90% is
        # all of them) any such gap at a tick split the stretch, and a
        # piece shorter than two reports may hold none whole
        b, e = r.at.get('p%d-begin' % n), r.at.get('p%d-end' % n)
        ticks = [t for t in r.order if t.startswith('tick') and b and e and b[0] <= r.at[t][0] <= e[0]
                 and 'md0' in r.ds.get(t, {})]
        need = math.ceil(0.9 * n)
        inflight[n] = ' '.join(str(held(t)) for t in ticks)
        ok = [i for i, t in enumerate(ticks) if held(t) >= need and 0 < i < len(ticks) - 1 and
              r.ds[ticks[i - 1]]['md0'][0] < r.ds[t]['md0'][0] < r.ds[ticks[i + 1]]['md0'][0]]
        phases[n] = ticks[ok[0]:ok[-1] + 1] if ok else []
    if not started(tag, c):
        iostat_table(r, phases, {}, S_ms)
        return
    t = r.totals
    if t is None:
        check(tag + '_json', 1, 'expected one totals object, got %d' % len([x for x in r.reports if x['type'] == 'totals']))
        return
    md = dev(t, 'md0')
    if md is None:
        check(tag + '_md0', 1, 'md0 not in the totals (devices: %s)' % [x['device'] for x in t['devices']])
        return
    mem_ok = md['layer'] == 'bio' and md['members'] == members and all(
        dev(t, m) is not None and dev(t, m)['layer'] == 'request' and dev(t, m)['holders'] == ['md0'] for m in members)
    check(tag + '_stack', int(not mem_ok), 'md0 layer %s, members %s; members\' layer and holders: %s (want bio, '
          'nullb0-3, request and [md0])' % (md['layer'], md['members'], [(m, dev(t, m)['layer'], dev(t, m)['holders'])
                                                                         if dev(t, m) else (m, None) for m in members]))
    counts(tag, r, ['md0'] + members, {'md0': '9,0'})
    for m in members:
        if dev(t, m):
            member(tag, dev(t, m), S_ms, 1)
    # raid0 only maps the sector and accounts the bio: ftrace showed 2 us
    # from Q to the remap and 1 us from the member's completion to md0's
    layer(tag, r, md, '9,0', jobs[0], 0, 0.05, 'md maps the sector and accounts the bio (ftrace: 2 us to the remap, '
          '1 us after the member\'s completion); 0.05 ms is 50000 instructions at -icount\'s 1 GIPS')

    # the members' measured service is the model's S
    svc = [dev(t, m)['all']['service_ms'] for m in members if dev(t, m) and dev(t, m)['all']['service_ms']]
    s_meas = sum(svc) / len(svc) if svc else S_ms
    cap = 4 / (s_meas / 1000)
    figs = {}
    if not md_counts:
        note('not judged on this kernel: %s (md0 counts no I/O in flight before Linux 5.14, diskstats field 9 is 0 '
             'at every tick: no independent count of the jobs running)' % ', '.join(
                 '%s_p%d_window, _conc, _max, _busy' % (tag, n) for n in jobs))
    for n in jobs if md_counts else []:
        w = phases[n]
        name = '%s_p%d' % (tag, n)
        if len(w) < 2:
            check(name + '_window', 1, 'no stretch of two ticks with all %d jobs running: %d ticks; md0 in flight '
                  'at the phase\'s ticks: %s (at least %d)' % (n, len(w), inflight[n], math.ceil(0.9 * n)))
            continue
        ka, kb = r.at[w[0]][1], r.at[w[-1]][1]
        reps = [x for x in r.reports[ka + 1:kb] if x['type'] == 'interval']
        ds_s = r.at[w[-1]][0] - r.at[w[0]][0]
        if not reps:
            check(name + '_window', 1, 'no report of truestat\'s lies wholly in %.2f s with all %d jobs running '
                  '(reports %d..%d); md0 in flight at the phase\'s ticks: %s (at least %d)'
                  % (ds_s, n, ka + 2, kb, inflight[n], math.ceil(0.9 * n)))
            continue
        span = sum(x['span_s'] for x in reps)
        ds = [dev(x, 'md0') for x in reps]
        ios = sum(d['all']['ios'] if d else 0 for d in ds)
        mean = sum(d['concurrency']['mean'] * x['span_s'] if d else 0 for d, x in zip(ds, reps)) / span
        busy = sum(d['concurrency']['busy_pct'] * x['span_s'] if d else 0 for d, x in zip(ds, reps)) / span
        mx = max(d['concurrency']['max'] if d else 0 for d in ds)
        exact = all(d and d['concurrency']['max_exact'] for d in ds)
        svc_ms = sum(d['all']['service_ms'] * d['all']['ios'] for d in ds if d and d['all']['ios']) / max(ios, 1)
        iops = ios / span
        figs[n] = dict(iops=iops, conc=mean, svc=svc_ms, busy=busy, span=span, nrep=len(reps))
        note('%d jobs: %d reports of truestat (%.2f s) inside %.2f s of ticks with all jobs running; md0 in flight '
             'at the phase\'s ticks: %s' % (n, len(reps), span, ds_s, inflight[n]))
        # a job is out of md0 only from its bio's completion to its next
        # read: a few tens of us in a cycle of n / IOPS; 2% allows 160 us
        # at one job. Those us are guest instructions under -icount (1 ns
        # each: fio's loop and the syscall path), so they do not stretch
        # with the host's load; the same gap sets busy >= 98% below
        gap_us = (n - mean) * span / max(ios, 1) * 1e6
        check(name + '_conc', int(not 0.98 * n <= mean <= n),
              'md0 mean concurrency %.3f for %d jobs (%s), bound [%.2f, %d]: each job holds one bio but between '
              'a completion and its next read' % (
                  mean, n, '%.2f%% below: %.0f us a read out of md0' % ((1 - mean / n) * 100, gap_us)
                  if mean <= n else '%.2f%% ABOVE: more bios than the jobs can hold' % ((mean / n - 1) * 100),
                  0.98 * n, n))
        check(name + '_max', int(mx != n or not exact),
              'md0 max concurrency %d (%s), %d jobs: one bio each' % (mx, 'exact' if exact else 'NOT exact', n))
        check(name + '_busy', int(busy < 98),
              'md0 busy %.2f%% (>= 98%%: idle only while no job has a read in md0, as for conc)' % busy)
        # above: four serial disks cannot complete more than 4/S, nor n
        # jobs more than n/S; 8 requests' slack for the reports' edges.
        # Below: the model (jobs meet at a disk while others idle) in the
        # worst of 1000 stretches as long as this one, less 2% for the
        # jobs' time between a completion and the next read (as for conc)
        mm, lo, _ = model_band(n, s_meas, span)
        hi = min(n, 4) / (s_meas / 1000) + 8 / span
        check(name + '_iops', int(not 0.98 * lo <= iops <= hi),
              'md0 %.1f IOPS = %.1f%% of 4/S (%.1f), bound [%.1f, %.1f]: the model (4 serial disks of S %.4f '
              'ms picked at random) gives %.1f (%.1f%% of 4/S), %.1f in its worst 0.1%% of %.2f s stretches, - 2%%; '
              'at most min(jobs, 4)/S' % (iops, iops / cap * 100, cap, 0.98 * lo, hi, s_meas, mm, mm / cap * 100,
                                          lo, span))
    curve(tag, md, s_meas, jobs)
    iostat_table(r, phases, figs, S_ms)


def curve(tag, md, s_meas, jobs):
    cv = md.get('depth_curve')
    if not cv:
        check(tag + '_curve', 1, 'no depth_curve for md0 (run with -D)')
        return
    rows = cv['rows']
    for x in rows:
        note('curve %s: %.3f s at mean depth %s, %d bios, %s IOPS, service p50 %s ms%s' % (
            label(x['depth_lo'], x['depth_hi']), x['time_s'], x['mean_depth'], x['ios'], x['iops'],
            x['service_p50_ms'], '' if x['evidence'] else ' (little evidence)'))
    # no bio of md0 can be at a depth above the jobs' count
    over = [x for x in rows if x['depth_lo'] > jobs[-1] and (x['time_s'] > 0 or x['ios'])]
    check(tag + '_curve_depths', int(bool(over)),
          'time at depths above %d jobs: %s (must be none: each job has one bio at a time)'
          % (jobs[-1], ', '.join('%s: %.3f s, mean %s, %d bios' % (label(x['depth_lo'], x['depth_hi']), x['time_s'],
                                                                   x['mean_depth'], x['ios']) for x in over) or 'none'))
    # truestat's rule (user/features/curve.c): the first evidenced row after which
    # throughput grows < 20% a doubling. Each evidenced row's IOPS may be
    # what the model gives at its mean depth over its time, from the worst
    # 0.1% of such stretches to the best, less 2% for the jobs' gaps and
    # +-1/32 for the histograms' bucket means: every answer the rule can
    # give on those
    ev = [(i, x) for i, x in enumerate(rows) if x['evidence'] and x['depth_lo'] <= jobs[-1]]

    def band(x):
        _, lo, hi = model_band(max(1, int(round(x['mean_depth'] or x['depth_lo']))), s_meas, max(x['time_s'], 0.1))
        return 0.98 * lo / 1.03125, hi * 1.03125

    out = set()

    def walk(j, prev):
        if j == len(ev):
            out.add((label(ev[prev][1]['depth_lo'], ev[prev][1]['depth_hi']) if prev is not None and j > 1 else None,
                     j > 1))
            return
        if prev is None:
            walk(j + 1, j)
            return
        (ia, a), (ib, b) = ev[prev], ev[j]
        la, ha = band(a)
        lb, hb = band(b)
        g = 1.0 / (ib - ia)
        for stop in set([(lb / ha) ** g < 1.2, (hb / la) ** g < 1.2]):
            if stop:
                out.add((label(a['depth_lo'], a['depth_hi']), False))
            else:
                walk(j + 1, j)
    walk(0, None)
    got = (cv['parallelism_depths'], cv['still_growing'])
    check(tag + '_parallelism', int(got not in out),
          'md0\'s curve reads a parallelism of %s%s; the model (4 serial disks at random) allows %s '
          '(4 members: 3-4, but at random two jobs meet at one disk often enough that 4 -> 16 jobs may still '
          'gain 20%% a doubling)' % (got[0], ' (still growing)' if got[1] else '',
                                     ', '.join('%s%s' % (a, ' (still growing)' if s else '') for a, s in sorted(out, key=str))))


def label(lo, hi):
    return str(lo) if lo == hi else '%d-%d' % (lo, hi)


def iostat_table(r, phases, figs, S_ms):
    """iostat's %util and svctm from the guest's diskstats (io_ticks over
    the time, io_ticks over the I/Os, as sysstat), beside truestat's"""
    note('md0, raid0 of 4 serial disks (S = %g ms), psync 16 KiB random reads; iostat from /proc/diskstats over '
         'the ticks with all jobs running, truestat from its reports inside them:' % S_ms)
    note('| jobs | r/s | %util | svctm_ms | truestat IOPS | CONC | SERVICE_ms | BUSY% |')
    note('|---:|---:|---:|---:|---:|---:|---:|---:|')
    for n, w in sorted(phases.items()):
        if len(w) < 2:
            continue
        a, b = w[0], w[-1]
        ms = (r.at[b][0] - r.at[a][0]) * 1000
        ios = r.ds[b]['md0'][0] - r.ds[a]['md0'][0]
        ticks = r.ds[b]['md0'][9] - r.ds[a]['md0'][9]
        f = figs.get(n)
        note('| %d | %.1f | %.1f | %.3f | %s | %s | %s | %s |' % (
            n, ios / ms * 1000, ticks / ms * 100, ticks / ios if ios else float('nan'),
            '%.1f' % f['iops'] if f else '-', '%.2f' % f['conc'] if f else '-',
            '%.3f' % f['svc'] if f else '-', '%.1f' % f['busy'] if f else '-'))


def bpf_seen(c):
    """truestat's links (their tracepoints) and its programs' run counts
    (None: unknown), as the guest read them from /proc/PID/fdinfo"""
    links, runs = [], {}
    for v in c.get('bpf', []):
        f = v.split()
        if f[0] == 'link' and len(f) >= 2:
            links.append(f[1])
        elif f[0] == 'prog' and len(f) >= 4:
            runs[f[3]] = int(f[2]) if f[2].isdigit() else None
    return links, runs


def runs_of(runs, prefix):
    """the run count of the program named PREFIX*, None if not there"""
    got = [v for k, v in runs.items() if k.startswith(prefix)]
    return got[0] if len(got) == 1 else None


def dm_plain(c, lin):
    """nullb1 traced alone beside dm-linear LIN (dm-N, "maj,min")"""
    tag = 'dm_plain'
    if not c:
        check(tag, 1, 'no output from this run')
        return
    if not started(tag, c):
        return
    r = Run(c)
    if r.totals is None:
        check(tag + '_json', 1, 'expected one totals object')
        return
    names = [d['device'] for d in r.totals['devices']]
    check(tag + '_devices', int(names != ['nullb1']), 'devices in the totals %s (want [nullb1]: -d nullb1)' % names)
    counts(tag, r, ['nullb1'])
    fired = r.remaps.get(lin[1], 0)
    check(tag + '_remaps_fired', int(fired == 0), 'ftrace: %d block_bio_remap from %s (%s) during the run (> 0: the '
          'tracepoint fired while truestat ran)' % (fired, lin[0], lin[1]))
    links, runs = bpf_seen(c)
    said = [l for l in c.get('stderr', []) if 'block_bio_remap' in l]
    check(tag + '_remap_unlinked', int('block_bio_remap' in links or 'block_rq_issue' not in links or not said),
          'truestat\'s links (fdinfo) %s: block_rq_issue, no block_bio_remap; -v: %s'
          % (sorted(set(links)), said[0] if said else 'nothing about block_bio_remap'))
    remap, issue = runs_of(runs, 'ts_remap_'), runs_of(runs, 'ts_issue_')
    reads = r.delta('nullb1', 1)
    check(tag + '_remap_runs', int(remap != 0 or issue is None or issue < reads or reads == 0),
          'bpf_stats: remap program ran %s times (want 0), issue program %s times (>= nullb1\'s %d reads: '
          'the counts are on)' % (remap, issue, reads))


def dm_followed(tag, c, r):
    """truestat linked block_bio_remap and its program ran once per remap"""
    links, runs = bpf_seen(c)
    said = [l for l in c.get('stderr', []) if 'ts_remap_' in l]
    check(tag + '_remap_linked', int('block_bio_remap' not in links or not said),
          'truestat\'s links (fdinfo) include block_bio_remap: %s; -v: %s'
          % ('block_bio_remap' in links, said[0] if said else 'nothing about ts_remap_'))
    remap, written = runs_of(runs, 'ts_remap_'), r.kept[1] if r.kept else None
    check(tag + '_remap_runs', int(not remap or remap != written),
          'bpf_stats: remap program ran %s times, ftrace wrote %s block_bio_remap events (equal, > 0)'
          % (remap, written))


def dm(c, plain):
    tag = 'dm'
    S_ms, K = int(P['S_NS']) / 1e6, int(P['K'])
    delay, hz = int(P['DM_DELAY_MS']), int(P['HZ'])
    devs = {}                  # target -> (dm-N, "maj,min")
    for v in c.get('dev', []):
        t, d, mm = v.split()
        devs[t] = (d, mm.replace(':', ','))
    for t in ('lin', 'dly', 'cry'):
        check('%s_%s_setup' % (tag, t), int(t not in devs), 'dm target %s: %s' % (
            {'lin': 'linear', 'dly': 'delay %d ms' % delay, 'cry': 'crypt cipher_null-ecb'}[t],
            '%s (%s)' % devs[t] if t in devs else 'NOT created: ' + ' | '.join(c.get('setup', [])[-3:])))
    if 'lin' in devs:
        dm_plain(plain, devs['lin'])
    if not devs or not started(tag, c):
        return
    r = Run(c)
    t = r.totals
    if t is None:
        check(tag + '_json', 1, 'expected one totals object')
        return
    dm_followed(tag, c, r)
    names = [devs[x][0] for x in ('lin', 'dly', 'cry') if x in devs]
    nb = dev(t, 'nullb0')
    ok = nb is not None and nb['holders'] == sorted(names) and all(
        dev(t, n) is not None and dev(t, n)['layer'] == 'bio' and dev(t, n)['members'] == ['nullb0'] for n in names)
    check(tag + '_stack', int(not ok), 'nullb0 holders %s; %s (want %s, layer bio, members [nullb0])' % (
        nb['holders'] if nb else None, [(n, dev(t, n)['layer'], dev(t, n)['members']) if dev(t, n) else (n, None)
                                        for n in names], sorted(names)))
    counts(tag, r, names + ['nullb0'])
    if nb:
        member(tag, nb, S_ms, K)
    J = 1000.0 / hz
    k = math.ceil(delay / J)
    for x, (lo, hi, why) in (
            ('lin', (0, 0.05, 'dm-linear maps the sector in the submitter\'s context (ftrace: 2-7 us to the remap, '
                              '1 us after the member); 0.05 ms is 50000 instructions at 1 GIPS')),
            ('dly', ((k - 1) * J, (k + 1) * J + S_ms + 0.2,
                     'dm-delay\'s timer runs on jiffies (HZ %d: %.0f ms): %d ms is %d jiffies, the timer wheel '
                     'fires one late, and a bio one jiffy younger than the one it fired for goes too: %d to %d '
                     'jiffies after Q; + S (%.0f ms) for the bios that one worker sends on after one that waited '
                     'for a tag, + 0.2 ms for the worker\'s wake-up' % (hz, J, delay, k, k - 1, k + 1, S_ms))),
            ('cry', (0.001, S_ms, 'dm-crypt reads complete through its kcryptd workqueue (cipher_null: no '
                                  'cipher work; ftrace: 28 us from the member\'s completion to the bio\'s): above '
                                  'zero, and below S: CPU work, no device time'))):
        if x in devs:
            d = dev(t, devs[x][0])
            if d is None:
                check('%s_%s_layer' % (tag, devs[x][0]), 1, '%s not in the totals' % devs[x][0])
                continue
            layer(tag, r, d, devs[x][1], int(P['DM_JOBS']), lo, hi, why)


def main():
    cases = parse()
    for name in P.get('CASES', '').split():
        if name not in ('raid0', 'dm'):
            continue
        c = cases.get(name)
        if not c:
            check(name, 1, 'no output from this case')
            continue
        if name == 'dm':
            judged(name, dm, c, cases.get('dm_plain'))
        else:
            judged(name, raid0, c)
    if OUT:
        print('\n'.join(OUT))


if __name__ == '__main__':
    main()
