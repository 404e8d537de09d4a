# SPDX-License-Identifier: GPL-2.0
"""scripts/demo.sh's figures: its header, each row (iostat's formulas on
/proc/diskstats beside truestat's report over the same window), the end.
    demo.py TMP DEV K S_US BS WINDOW INTERVAL header|row N|end
"""
import json
import sys
import time

import truestat_json as tj

tmp, dev, K, S_US, BS, WINDOW, INTERVAL, mode = sys.argv[1:9]
K, S = int(K), int(S_US) / 1000.0       # S in ms

def reports():
    return tj.docs(tmp + '/reports.jsonl')

def stamps():
    out = []
    for l in open(tmp + '/stamps'):
        x = l.split()
        out.append((float(x[0]), [int(v) for v in x[1:]]))
    return out

def mine(rep):
    return tj.device(rep, dev)

RULE = '        |  iostat -x (from /proc/diskstats)             |  truestat -j -D'
HEAD = ('THREADS |     r/s  r_await_ms  aqu-sz  %%util  svctm_ms  |'
        '    IOPS  SERVICE_ms  QUEUE_ms    CONC  BUSY%%')

if mode == 'header':
    secs = int(WINDOW) * float(INTERVAL)
    print('truestat demo: a simulated disk with %d units, each serving one request in exactly'
          % K)
    print('%g ms (at most %d reads/s; tests/simdisk behind %s), read by N synchronous readers'
          % (S, round(K * 1000 / S), dev))
    print('in turn (fio --ioengine=psync --rw=randread --bs=%s --direct=1 --numjobs=N).' % BS)
    print('Each row: iostat\'s figures (sysstat\'s formulas on /proc/diskstats) and truestat\'s')
    print('(truestat -j -D -d %s %s) over the same %g s of steady load.' % (dev, INTERVAL, secs))
    print()
    print(RULE)
    print(HEAD.replace('%%', '%'))
    sys.exit(0)

if mode == 'row':
    n = int(sys.argv[9])
    ph = dict((int(x.split()[0]), [int(v) for v in x.split()[1:]]) for x in open(tmp + '/phases'))
    first, last = ph[n]
    st, reps = stamps(), reports()
    # iostat: the deltas of /proc/diskstats between the stamps around the
    # window, as sysstat computes them (ticks in ms)
    (t0, a), (t1, b) = st[first - 1], st[last - 1]
    d = [y - x for x, y in zip(a, b)]
    el = t1 - t0
    reads, ios = d[0], d[0] + d[4] + (d[11] if len(d) > 11 else 0)
    io = {'r_s': reads / el, 'r_await_ms': d[3] / reads if reads else None,
          'aqu_sz': d[10] / (el * 1000), 'util_pct': d[9] / (el * 10),
          'svctm_ms': d[9] / ios if ios else None, 'reads': reads, 'elapsed_s': el}
    # truestat: its reports of the same window, summed
    span = n_ios = svc = q = qn = conc = busy = missed = 0
    exact = True
    for r in reps[first:last]:
        span += r['span_s']
        x = mine(r)
        if not x:
            continue
        al, c = x['all'], x['concurrency']
        n_ios += al['ios']
        missed += al['missed']
        svc += (al['service_ms'] or 0) * al['ios']
        q += (al['queue_ms'] or 0) * al['queued_ios']
        qn += al['queued_ios']
        conc += c['mean'] * r['span_s']
        busy += c['busy_pct'] * r['span_s']
        exact = exact and c['exact']
    # what an unseen completion can add to CONC: its request stays in the
    # depth to its estimated end, issue + the last report's mean service
    # (the hint), or to the next report when found then (suspect: under
    # 10 ms); found in one of the window's reports or the one after
    near = [mine(r) for r in reps[max(first - 1, 0):last + 1]]
    hint_ms = max([(x['all']['service_ms'] or 0) for x in near if x] + [0])
    missed_near = sum(x['all']['missed'] for x in near[1 if first else 0:] if x)
    ts = {'iops': n_ios / span, 'service_ms': svc / n_ios if n_ios else None,
          'queue_ms': q / qn if qn else None, 'conc': conc / span, 'busy_pct': busy / span,
          'exact': exact, 'ios': n_ios, 'missed': missed, 'span_s': span,
          'missed_near': missed_near, 'hint_max_ms': hint_ms}
    row = {'threads': n, 't0': t0, 't1': t1, 'iostat': io, 'truestat': ts,
           'realtime_minus_monotonic_s': time.time() - time.monotonic()}
    with open(tmp + '/rows.jsonl', 'a') as f:
        f.write(json.dumps(row) + '\n')
    f = lambda v, spec: '-' if v is None else spec % v
    print('%7d | %7.1f  %10s  %6.2f  %5.1f  %8s  | %7.1f  %10s  %8s  %6s  %5.1f' % (
        n, io['r_s'], f(io['r_await_ms'], '%.2f'), io['aqu_sz'], io['util_pct'],
        f(io['svctm_ms'], '%.2f'), ts['iops'], f(ts['service_ms'], '%.2f'),
        f(ts['queue_ms'], '%.3f'), ('%.2f' if exact else '~%.1f') % ts['conc'], ts['busy_pct']))
    sys.exit(0)

# end: the verdict of -D over the whole demo, then truestat's findings
rows = [json.loads(l) for l in open(tmp + '/rows.jsonl')]
tot = [r for r in reports() if r['type'] == 'totals']
cv = mine(tot[-1])['depth_curve'] if tot and mine(tot[-1]) else None
print()
if any(not r['truestat']['exact'] for r in rows):
    print('~: an estimate: a completion went unseen in that run (the platform drops a few);'
          ' truestat counts them')
if cv and cv['parallelism_depths']:
    print('truestat -D over the %d runs: effective parallelism %s%s (the disk has %d units):'
          % (len(rows), cv['parallelism_depths'], ' (still growing)' if cv['still_growing'] else '', K))
    print('  beyond that depth, throughput grew less than +20%% per doubling%s.'
          % ('' if cv['exact'] else '; the depths are estimates'))
else:
    print('truestat -D over the %d runs: no parallelism verdict (too little evidence)' % len(rows))

# truestat's own conclusion: the findings of its totals over the demo
lines = tj.findings_lines(tot[-1], dev) if tot else ['  none (no totals)']
print()
print("truestat's findings over the %d runs:" % len(rows))
for l in lines:
    print(l)
json.dump({'device': dev, 'units': K, 'service_ms': S, 'bs': BS,
           'interval_s': float(INTERVAL), 'window_reports': int(WINDOW),
           'rows': rows, 'depth_curve': cv,
           'findings': tj.findings_of(tot[-1], dev) if tot else [], 'printed': lines},
          open(tmp + '/figures.json', 'w'), indent=1)
