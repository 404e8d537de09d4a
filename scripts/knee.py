# SPDX-License-Identifier: GPL-2.0
"""scripts/knee.sh's figures: each depth's row from fio's and truestat's
JSON, the knee's rules, the report, its JSON and its SVG.
    knee.py below MAX_MS TMP DISK OP QD    exit 0 when QD's p95 is below
    knee.py report HERE TMP DISK RW BS RUNTIME WHAT SVG JSON MAX_MS D... -- S...
"""
import importlib.util
import json
import math
import sys

import truestat_json as tj

GROWTH, SATURATION = 1.20, 3.0   # user/features/curve.h: the rules of --depth

def fio_step(path, op):
    # fio may print warnings before its JSON
    text = open(path).read()
    return json.loads(text[text.index('{'):])['jobs'][0][op]

def ts_step(path, disk):
    # the disk's totals, and their span
    tot = tj.last_totals(path)
    d = tot and tj.device(tot, disk)
    return (d, tot['span_s']) if d else (None, None)

def upper(lo):
    # include/hist.h: 16 buckets per power of two from 32 ns, 1 ns below
    return lo + 1 if lo < 32 else lo + (1 << (lo.bit_length() - 5))

def quantile(buckets, q):
    # user/lib/histogram.c's ts_hist_quantile, over [[lower bound ns, count], ...]
    n = sum(c for _, c in buckets)
    if not n:
        return None
    rank, seen = max(1, math.ceil(q * n)), 0
    for lo, c in buckets:
        if seen + c < rank:
            seen += c
            continue
        return (lo + (upper(lo) - lo) * (rank - seen) / c) / 1e6

def p95(o, which):
    # p95 is not among -j's percentiles: from -H's histogram, as truestat
    # takes its own
    return o and quantile(o['histograms'][which + '_ns'], 0.95)

def row(tmp, disk, op, qd):
    fo = fio_step('%s/fio.%d' % (tmp, qd), op)
    iops, ios = fo['iops'], fo['total_ios']
    d, span = ts_step('%s/ts.%d' % (tmp, qd), disk)
    o = (d or {}).get('ops', {}).get(op)
    c = (d or {}).get('concurrency', {})
    pct = (o or {}).get('percentiles_ms', {}).get('service', {})
    busy = c.get('busy_pct') or 0
    total = o and o['total_ms']
    return {
        'depth': qd, 'iops': iops, 'fio_ios': ios,
        'ios': o['ios'] if o else 0, 'missed': o['missed'] if o else 0,
        'service_mean_ms': o and o['service_ms'],
        'service_p95_ms': p95(o, 'service'),
        'service_p99_ms': pct.get('p99'),
        'queue_ms': o and o['queue_ms'],
        'total_mean_ms': total,
        'total_p95_ms': p95(o, 'total'),
        'concurrency': c['mean'] * 100 / busy if busy else None,
        # what the kernel held, OS queue and device, while fio ran: by
        # Little's law its rate (fio's IOPS) x the time each request spent
        # there (truestat's mean Q->C); the rest of the offered depth was
        # in the submitter, between completion and the next submission
        'held': iops * total / 1000 if total is not None else None,
        'busy_pct': busy,
        # what the step's figures can be checked against: truestat's span
        # and the range of the true maximum depth; fio's latencies, submit
        # to reap, each of which holds a request's issue to completion
        'span_s': span, 'depth_max': c.get('max'), 'depth_max_min': c.get('max_min'),
        'depth_exact': c.get('exact'), 'unsure_ms': c.get('unsure_ms'),
        'fio_lat_ns': fo['lat_ns'], 'fio_runtime_ms': fo['runtime'],
    }

def below(ms, r):
    return r['total_p95_ms'] is not None and r['total_p95_ms'] < ms

def knee(rows):
    # the rules of truestat --depth, over the doublings. The first doubling
    # whose IOPS grew less than +20% names the parallelism only if what the
    # kernel held grew by +20% or more there too: IOPS = held / time per
    # request (Little), so with held growing less, the IOPS would have grown
    # less than +20% even had the device kept its time per request; the
    # requests fio added waited above the device
    par = None; still = False; gain = {}; above = None
    for a, b in zip(rows, rows[1:]):
        if not (a['iops'] and b['iops']):
            continue
        per = 1 / math.log2(b['depth'] / a['depth'])
        g = (b['iops'] / a['iops']) ** per
        gain[b['depth']] = g
        if par is None and above is None and g < GROWTH:
            if a['held'] and b['held'] is not None and (b['held'] / a['held']) ** per < GROWTH:
                above = (a, b, (b['held'] / a['held']) ** per)
            else:
                par = a
    if par is None and above is None and len(rows) > 1:
        par, still = rows[-1], True
    sat = None
    base = rows[0]['service_p95_ms']
    if rows[0]['depth'] == 1 and base:
        for r in rows[1:]:
            if r['service_p95_ms'] and r['service_p95_ms'] > SATURATION * base:
                sat = r
                break
    return par, still, gain, above, sat, base

def tipping(rows, ms):
    # the highest depth whose p95 total stays below ms there and at every
    # depth below; the first that does not
    tip = None
    for r in rows:
        if not below(ms, r):
            return tip, r
        tip = r
    return tip, None

def f(v, spec):
    return spec % v if v is not None else '-'

def pct(g):
    # a growth factor as a signed percentage, never '-0%'
    return '%+d%%' % round((g - 1) * 100)

def report(here, tmp, disk, rw, bs, runtime, what, svg, jout, max_ms, ladder, search):
    op = 'read' if rw == 'randread' else 'write'
    steps = dict((qd, row(tmp, disk, op, qd)) for qd in ladder + search)
    rows = [steps[qd] for qd in ladder]
    every = [steps[qd] for qd in sorted(steps)]
    for r in every:
        r['search'] = r['depth'] not in ladder
    par, still, gain, above, sat, base = knee(rows)
    ms = float(max_ms) if max_ms else None
    tip, over = tipping(every, ms) if ms else (None, None)

    print('%s: %s, %s %s, %s s per depth' % (disk, what, rw, bs, runtime))
    tot = ms is not None
    print('%5s %10s %7s %11s %10s %10s %s%10s %6s %6s' % ('DEPTH', 'IOPS', 'GAIN', 'SVC_MEAN_ms', 'SVC_P95_ms',
          'SVC_P99_ms', '%10s ' % 'TOT_P95_ms' if tot else '', 'QUEUE_ms', 'HELD', 'CONC'))
    for r in every:
        g = gain.get(r['depth']) if not r['search'] else None
        print('%4d%s %10.1f %7s %11s %10s %10s %s%10s %6s %6s' % (
            r['depth'], '*' if r['search'] else ' ', r['iops'], pct(g) if g else '-',
            f(r['service_mean_ms'], '%.3f'), f(r['service_p95_ms'], '%.3f'),
            f(r['service_p99_ms'], '%.3f'), '%10s ' % f(r['total_p95_ms'], '%.3f') if tot else '',
            f(r['queue_ms'], '%.3f'), f(r['held'], '%.2f'), f(r['concurrency'], '%.2f')))
    if above:
        a, b, hg = above
        print('  parallelism: none named: limit above the device: from depth %d to %d IOPS grew %s a doubling, but what'
              % (a['depth'], b['depth'], pct(gain[b['depth']])))
        print('    the kernel held grew less than +20%% (%s: %.2f to %.2f of %d offered; CONC %s, QUEUE %s ms): the'
              % (pct(hg), a['held'], b['held'], b['depth'], f(b['concurrency'], '%.2f'), f(b['queue_ms'], '%.3f')))
        print('    requests fio added waited in the submitter (its CPUs, its rate), not in the device or the OS queue')
    elif par is None:
        print('  parallelism: unknown (one depth only)')
    elif still:
        print('  parallelism: %d or more: IOPS still grows by +20%% or more per doubling at depth %d (%.1f IOPS)'
              % (par['depth'], par['depth'], par['iops']))
    else:
        nxt = rows[rows.index(par) + 1]
        print('  parallelism: %d: beyond depth %d IOPS grows less than +20%% per doubling (%+.0f%% to %d); %.1f IOPS there'
              % (par['depth'], par['depth'], (gain[nxt['depth']] - 1) * 100, nxt['depth'], par['iops']))
    if not base:
        print('  saturation: unknown (no service time at depth 1)')
    elif sat:
        print("  saturation: from depth %d: p95 service %.3f ms > 3x depth 1's %.3f ms"
              % (sat['depth'], sat['service_p95_ms'], base))
    else:
        print("  saturation: none seen (no depth's p95 service above 3x depth 1's %.3f ms)" % base)
    if ms is None:
        pass
    elif tip is None:
        print('  tipping point: none: p95 total time (Q->C) at depth %d is %s ms, not below %g ms'
              % (over['depth'], f(over['total_p95_ms'], '%.3f'), ms))
    elif over is None:
        print('  tipping point: %d or more: p95 total time (Q->C) stays below %g ms up to depth %d (%.3f ms); %.1f IOPS there'
              % (tip['depth'], ms, tip['depth'], tip['total_p95_ms'], tip['iops']))
    else:
        print('  tipping point: %d: the highest depth whose p95 total time (Q->C) stays below %g ms (%.3f ms; %.1f IOPS); '
              'at %d it is %s ms. Little: %.1f IOPS x %g ms = %.1f in flight'
              % (tip['depth'], ms, tip['total_p95_ms'], tip['iops'], over['depth'], f(over['total_p95_ms'], '%.3f'),
                 over['iops'], ms, over['iops'] * ms / 1000))
    for r in every:
        if r['missed']:
            print('  depth %d: %d completions unseen by truestat (not in its figures); CONC there reads high'
                  % (r['depth'], r['missed']))
        if not r['ios']:
            print('  depth %d: truestat saw no %s on %s' % (r['depth'], op, disk))
    print('  GAIN: IOPS growth per doubling from the depth before; HELD: requests in the kernel (OS queue and device), '
          'IOPS x mean Q->C; CONC: truestat\'s mean in-device depth while busy; service, queue and total times: '
          'truestat\'s, per step%s' % ('; TOT_P95: p95 of Q->C; *: a step of the tipping point\'s search, '
                                      'not in the knee\'s rules' if tot else ''))

    if jout:
        with open(jout, 'w') as fh:
            json.dump({'device': disk, 'target': what, 'rw': rw, 'bs': bs, 'runtime_s': float(runtime),
                       'steps': every, 'search_order': search,
                       'parallelism': par and par['depth'], 'still_growing': still,
                       'parallelism_iops': par and par['iops'],
                       'limit_above_device': above and {'from_depth': above[0]['depth'], 'to_depth': above[1]['depth'],
                                                        'held_from': above[0]['held'], 'held_to': above[1]['held'],
                                                        'held_gain': above[2]},
                       'saturation': sat and sat['depth'],
                       'depth1_p95_ms': base,
                       'max_latency_ms': ms,
                       'tipping_point': tip and tip['depth'], 'tipping_or_more': ms is not None and tip is not None and over is None,
                       'tipping_p95_ms': tip and tip['total_p95_ms'],
                       'tipping_next': over and over['depth']}, fh, indent=1)
            fh.write('\n')
    if svg:
        spec = importlib.util.spec_from_file_location('curve_svg', here + '/curve-svg.py')
        m = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m)
        mark = par and (par['depth'], 'parallelism: %d%s' % (par['depth'], ' (still growing)' if still else ''))
        if above:
            mark = (above[1]['depth'], 'limit above the device')
        m.plot([{'x': r['depth'], 'label': str(r['depth']), 'iops': r['iops'],
                 'p99_ms': r['service_p99_ms'], 'p95_ms': r['service_p95_ms']} for r in rows],
               svg, '%s: knee (fio %s %s, %s s per depth)' % (disk, rw, bs, runtime),
               'IOPS from fio; service time from truestat; target %s' % what,
               mark, sat and (sat['depth'], 'saturation: %d' % sat['depth']),
               x_name='offered depth (fio iodepth)')

if sys.argv[1] == 'below':
    ms, tmp, disk, op, qd = sys.argv[2:7]
    sys.exit(0 if below(float(ms), row(tmp, disk, op, int(qd))) else 1)
here, tmp, disk, rw, bs, runtime, what, svg, jout, max_ms = sys.argv[2:12]
ladder = [int(d) for d in sys.argv[12:sys.argv.index('--')]]
search = [int(d) for d in sys.argv[sys.argv.index('--') + 1:]]
report(here, tmp, disk, rw, bs, runtime, what, svg, jout, max_ms, ladder, search)
