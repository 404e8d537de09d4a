# SPDX-License-Identifier: GPL-2.0
"""scripts/compare.sh's figures: iostat's, biolatency's, btt's and
truestat's reports of one run side by side, each figure judged against
the others where they measure the same thing.
    compare.py TMP DISK SECONDS JSON_OUT VERSIONS COMMAND
"""
import glob
import json
import math
import re
import sys

import truestat_json as tj

tmp, disk, secs, jout, versions, cmd = sys.argv[1:7]
secs = int(secs)
v_iostat, v_bpftools, v_btt = versions.split('\t')

def die(msg):
    print('compare.sh: ' + msg, file=sys.stderr)
    sys.exit(1)

def iostat():
    # the header line names the columns: sysstat 11 and 12 differ
    lines = [l.split() for l in open(tmp + '/iostat.txt') if l.strip()]
    hdr = next((l for l in lines if l[0].rstrip(':') == 'Device'), None)
    row = next((l for l in lines if l[0] == disk), None)
    if not hdr or not row:
        die('no report of %s in iostat\'s output' % disk)
    c = dict(zip([h.rstrip(':') for h in hdr[1:]], [float(x) for x in row[1:]]))
    ops = ['r', 'w', 'd']
    iops = sum(c.get(o + '/s', 0) for o in ops)
    waited = sum(c.get(o + '/s', 0) * c.get(o + '_await', 0) for o in ops)
    out = {'r_s': c.get('r/s', 0), 'w_s': c.get('w/s', 0), 'd_s': c.get('d/s', 0),
           'f_s': c.get('f/s', 0), 'iops': iops + c.get('f/s', 0),
           'await_ms': waited / iops if iops else None,
           'aqu_sz': c.get('aqu-sz', c.get('avgqu-sz')), 'util_pct': c['%util']}
    if 'svctm' in c:
        out['svctm_ms'], out['svctm_printed'] = c['svctm'], True
    else:
        # sysstat 12 dropped svctm; its old formula: %util over r+w+d per s
        out['svctm_ms'] = c['%util'] * 10 / iops if iops else None
        out['svctm_printed'] = False
    return out

def biolatency():
    buckets = []
    for l in open(tmp + '/biolatency.txt'):
        m = re.match(r'\s*(\d+) -> (\d+)\s*: (\d+)', l)
        if m:
            buckets.append(tuple(int(x) for x in m.groups()))
    n = sum(b[2] for b in buckets)
    def bucket(q):
        rank, seen = max(1, math.ceil(q * n)), 0
        for lo, hi, c in buckets:
            seen += c
            if seen >= rank:
                return [lo / 1000, hi / 1000]
    return {'ios': n, 'service_p50_ms': n and bucket(0.5), 'service_p99_ms': n and bucket(0.99)}

def btt():
    s = dict(l.strip().split('=', 1) for l in open(tmp + '/btt.summary') if '=' in l)
    v = sorted(float(l.split()[1]) * 1e3 for f in glob.glob(tmp + '/btt/btt_*_d2c.dat')
               for l in open(f) if l.strip())
    def exact(q):
        return v[max(0, math.ceil(q * len(v)) - 1)] if v else None
    # -I: one line per second, then the device's whole-run line, ending
    # in TOTAL; the fields after the device's "(  7,  0)"
    dev = [l.rsplit(')', 1)[1].split() for l in open(tmp + '/btt/btt.iostat') if l.startswith('(')]
    tot = [l for l in dev if l[-1] == 'TOTAL']
    io = [float(x) for x in tot[0][:13]] if tot else [None] * 13
    per_s = [float(l[9]) for l in dev if l[-1] != 'TOTAL']
    # Q2D from the table (Q2C - D2C, when both hold the same I/Os), else
    # from the per-I/O file; queue_ios: the I/Os it is the mean of
    q2d = s.get('q2c_minus_d2c_us', s.get('q2d_mean_us'))
    q2d_n = s.get('d2c_n') if 'q2c_minus_d2c_us' in s else s.get('q2d_n')
    ms = lambda k: float(s[k]) / 1000 if k in s else None
    return {'ios': int(s.get('d2c_n', 0)), 'capture_ok': s.get('capture_ok') == '1',
            'lost': int(s.get('lost', 0)), 'same_sector': int(s.get('same_sector', 0)),
            'queue_ms': float(q2d) / 1000 if q2d is not None else None,
            'queue_ios': int(q2d_n or 0),
            'service_ms': ms('d2c_mean_us'), 'total_ms': ms('q2c_mean_us'),
            'service_max_ms': ms('d2c_max_us'), 'total_max_ms': ms('q2c_max_us'),
            'service_p50_ms': exact(0.5), 'service_p99_ms': exact(0.99),
            'iops': io[2] + io[3] if io[2] is not None else None,
            'aqu_sz': io[9], 'aqu_sz_range': [min(per_s), max(per_s)] if per_s else None,
            'io_svctm_ms': io[11], 'util_pct': io[12]}

def truestat():
    tot = tj.last_totals(tmp + '/truestat.json')
    d = tot and tj.device(tot, disk)
    if d is None:
        die('truestat saw no I/O on %s: is a workload running? (or --fio QD)' % disk)
    a, c, oq = d['all'], d['concurrency'], d['os_queue']
    p = a['percentiles_ms']['service']
    # -v: when it began attaching, its span (CLOCK_MONOTONIC ns)
    w = [int(x) for x in open(tmp + '/window').read().split()]
    return {'ios': a['ios'], 'missed': a['missed'], 'span_s': tot['span_s'],
            'queued_ios': a['queued_ios'], 'window_mono_ns': w,
            'queue_ms': a['queue_ms'], 'service_ms': a['service_ms'], 'total_ms': a['total_ms'],
            'service_p50_ms': p['p50'], 'service_p99_ms': p['p99'], 'service_max_ms': p['max'],
            'queue_max_ms': a['percentiles_ms']['queue']['max'],
            'conc_mean': c['mean'], 'conc_max': c['max'], 'conc_max_min': c['max_min'],
            'conc_max_exact': c['max_exact'], 'conc_exact': c['exact'],
            'conc_not_exact_why': tj.not_exact_why(d['events']), 'os_qd_mean': oq['mean'],
            'aqu_sz': c['mean'] + oq['mean'], 'util_pct': c['busy_pct'],
            'svctm_ms': d['iostat']['svctm_ms'], 'iops': a['iops']}

times = dict((k, float(v)) for k, v in (l.split() for l in open(tmp + '/times')))
I, B, T, S = iostat(), biolatency(), btt(), truestat()
if not I['iops']:
    die('iostat saw no I/O on %s in the window: is a workload running? (or --fio QD)' % disk)

def f(v, spec='%.3f'):
    if v is None:
        return '-'
    if isinstance(v, list):
        return '%s-%s' % (spec % v[0], spec % v[1])
    return spec % v

rows = [
    ('mean time in the OS queue (Q→D), ms', '-', '-', f(T['queue_ms']), f(S['queue_ms'])),
    ('mean service time (D→C), ms', '-', '-', f(T['service_ms']), f(S['service_ms'])),
    ('mean total (Q→C; iostat: await), ms', f(I['await_ms']), '-', f(T['total_ms']), f(S['total_ms'])),
    ('p50 service, ms', '-', f(B['service_p50_ms']), f(T['service_p50_ms']), f(S['service_p50_ms'])),
    ('p99 service, ms', '-', f(B['service_p99_ms']), f(T['service_p99_ms']), f(S['service_p99_ms'])),
    ('requests in the device, mean', '-', '-', '-', f(S['conc_mean'], '%.2f')),
    ('requests in the OS and the device, mean (aqu-sz)', f(I['aqu_sz'], '%.2f'), '-',
     f(T['aqu_sz'], '%.2f'), f(S['aqu_sz'], '%.2f')),
    ('%util (iostat, btt) and BUSY% (truestat: time with a request in the device), %',
     f(I['util_pct'], '%.1f'), '-',
     f(T['util_pct'], '%.1f'), f(S['util_pct'], '%.1f')),
    ('svctm: busy time / I/Os, ms', f(I['svctm_ms']) + ('' if I['svctm_printed'] else ' *'), '-', '-',
     f(S['svctm_ms'])),
    ('IOPS', f(I['iops'], '%.1f'), '-', f(T['iops'], '%.1f'), f(S['iops'], '%.1f')),
]
print('| %s | iostat | biolatency | btt | truestat |' % disk)
print('|---|---|---|---|---|')
for r in rows:
    print('| ' + ' | '.join(r) + ' |')
print()
t0, t1 = times['iostat_start'], times['iostat_end']
def win(a, b):
    return 'from %.2f s before to %.2f s after' % (t0 - times[a], times[b] - t1)
print('- **iostat** (sysstat %s): `iostat -dxy %s %d 1`, one report of /proc/diskstats over '
      '%.2f s. await (r_await, w_await and d_await weighted by r/s, w/s and d/s) runs '
      'from the allocation of the request, aqu-sz counts requests in the OS and in the '
      'device, %%util is the share of time with at least one request between the start '
      'of its accounting in the block layer (when it is made from its first bio, before a '
      'scheduler holds it) and its end: a request waiting in the OS counts. '
      '%s' % (v_iostat, disk, secs, t1 - t0,
              'svctm as printed.' if I['svctm_printed'] else
              '\\* sysstat 12 no longer prints svctm: computed here from its %util and '
              'r/s + w/s + d/s, as it was before.'))
print('- **biolatency** (libbpf-tools %s): `biolatency -d %s`, %s iostat\'s window: a log2 '
      'histogram of issue→completion (D→C) in µs, %d I/Os. It prints no mean; a '
      'percentile is known only to its bucket, up to 2x wide.'
      % (v_bpftools, disk, win('biolatency_start', 'biolatency_end'), B['ios']))
print('- **btt** (blktrace %s): the kernel\'s blk tracer on %s (what blktrace uses), its '
      'records cut to truestat\'s window, through blkparse into btt: Q2D, D2C, Q2C of %d I/Os%s; p50 and p99 '
      'from its per-I/O D2C file (`-l`); aqu-sz (from getrq to completion; %s to %s in its '
      'seconds), %%util and IOPS from its iostat-like output (`-I`), whose svctm column is '
      'its mean Q2C (%s ms), not busy time / I/Os.'
      % (v_btt, disk, T['ios'],
         '' if T['capture_ok'] else ' (the tracer lost %d events: incomplete)' % T['lost'],
         f((T['aqu_sz_range'] or [None])[0], '%.2f'), f((T['aqu_sz_range'] or [None, None])[1], '%.2f'),
         f(T['io_svctm_ms'])))
print('- **truestat**: `truestat -j -v -H -d %s`, %s iostat\'s window (%.2f s): per request '
      'Q→D, D→C, Q→C and their histograms (within 6.25%%), %d I/Os%s; the device held '
      '%.2f requests on average%s and %s, the OS %.2f more.'
      % (disk, win('truestat_start', 'truestat_end'), S['span_s'], S['ios'],
         ' (+%d whose completion it did not see)' % S['missed'] if S['missed'] else '',
         S['conc_mean'], '' if S['conc_exact'] else ' (not exact: %s)' % S['conc_not_exact_why'],
         '%d at most' % S['conc_max'] if S['conc_max_exact'] else
         'from %d to %d at most (not exact)' % (S['conc_max_min'], S['conc_max']),
         S['os_qd_mean']))
if jout:
    with open(jout, 'w') as fh:
        json.dump({'device': disk, 'seconds': secs, 'command': cmd,
                   'windows': {k: v - t0 for k, v in times.items()},
                   'iostat': I, 'biolatency': B, 'btt': T, 'truestat': S}, fh, indent=1)
        fh.write('\n')
