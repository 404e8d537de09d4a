# SPDX-License-Identifier: GPL-2.0
"""The checks of tests/vm's base and load cases, and of the boot, on the host.

python3 base.py TS_FILE KVER KEY=VALUE...: as stacked.py (whose parsing and
output it shares): TS_FILE holds the guest's "@@TS" lines, the KEY=VALUEs
its parameters (CASES, S_NS, K, DEPTH) and BOOT, the name of the boot's
check. Prints one "NAME RC MESSAGE" line per check; run.sh describes the
checks of each run.

A run the guest did not finish (stopped at its guard, or by the host for
making no progress) is a failed check that says where its output ends;
the runs before it are judged as usual.
"""
import json

import stacked as st
from stacked import check, note, dev

P = st.P
S_ms = int(P['S_NS']) / 1e6
K, D = int(P['K']), int(P['DEPTH'])
CASES = P.get('CASES', '').split()
# each case's runs: (name, how truestat must attach, the scheduler)
RUNS = {
    'base': (('none', 'tp_btf', 'none'), ('deadline', 'tp_btf', 'mq-deadline'),
             ('rawtp', 'raw_tp', 'none'), ('missed', 'tp_btf', 'none')),
    'load': (('none', 'tp_btf', 'none'), ('rawtp', 'raw_tp', 'none'),
             ('opts', 'tp_btf', 'none'), ('optsraw', 'raw_tp', 'none'),
             ('parts', 'tp_btf', 'mq-deadline'), ('partsraw', 'raw_tp', 'mq-deadline')),
}
# a run's lines in the order the guest prints them (guest-init.sh's
# run_case and ts_start): one missing means the run was cut off there
STEPS = ('scheduler', 'attach_s', 'before', 'after', 'exit', 'json')


def cut_off(name, c):
    """True (after the failing check) when the run's output ends early"""
    missing = [s for s in STEPS if s not in c]
    if not missing:
        return False
    done = [s for s in STEPS if s in c]
    check(name + '_finished', 1, 'the run did not finish: its output ends %s, with no %s line'
          % ('after its %s line' % done[-1] if done else 'before its first line', missing[0]))
    return True


def boot(cases):
    g = cases.get('guest', {})
    check(P['BOOT'], int(g.get('kernel') != [st.KV] or 'done' not in g),
          'guest ran kernel %s (btf: %s) to the end%s' % (g.get('kernel', ['?'])[0], g.get('btf', ['?'])[0],
          '' if 'done' in g else ': it did NOT finish (' + (g.get('case', ['none'])[-1].split() or ['?'])[0]
          + ' was its last case)'))


def run(name, want_kind, sched, c):
    if not c:
        check(name, 1, 'no output from this run')
        return
    if 'attach_failed' not in c and cut_off(name, c):
        return
    if not st.started(name, c, want_kind):
        return

    check(name + '_sched', int('[%s]' % sched not in c['scheduler'][0]), 'scheduler ' + c['scheduler'][0])
    docs = [json.loads(l) for l in c.get('json', [])]
    tot = [d for d in docs if d['type'] == 'totals']
    if len(tot) != 1:
        check(name + '_json', 1, 'expected one totals object, got %d' % len(tot))
        return
    t = dev(tot[0], 'nullb0')
    if t is None:
        check(name + '_json', 1, 'nullb0 not in the totals')
        return
    span_ms = tot[0]['span_s'] * 1000
    b = [int(x) for x in c['before'][0].split()[3:]]
    a = [int(x) for x in c['after'][0].split()[3:]]
    reads, writes = a[0] - b[0], a[4] - b[4]
    r = t['ops'].get('read', {})
    al, conc, osq = t['all'], t['concurrency'], t['os_queue']
    check(name + '_counts', int(r.get('ios', -1) + r.get('missed', 0) != reads or writes != 0
                                or set(t['ops']) != {'read'}),
          'reads: truestat %d + %d missed, diskstats %d (exact); writes: diskstats %d, truestat ops %s'
          % (r.get('ios', -1), r.get('missed', 0), reads, writes, sorted(t['ops'])))
    # null_blk's timer fires S after the request reaches the driver, and
    # D is taken before the driver arms it: service >= S. Above S is the
    # guest's path from the issue tracepoint to arming the timer and from
    # the timer to the completion tracepoint: measured 1-7 us (0.1-0.7%)
    # with -icount. Tolerance: S to S + 2%. Under -icount the guest's
    # clock counts its instructions (1 ns each), so that path is a number
    # of instructions, not the host's speed: 2% of S (1 ms) is 20,000 of
    # them against the 1,000-7,000 measured.
    svc = al['service_ms']
    check(name + '_service', int(not (S_ms <= svc <= 1.02 * S_ms)),
          'mean service %.4f ms, S %.4f ms (%+.2f%%; S to S + 2%%)' % (svc, S_ms, (svc / S_ms - 1) * 100))
    # TRUESTAT_TEST_MISS_EVERY=20 (case missed): one tracked completion in
    # 20 dropped, as if the platform had; at least that many counted missed
    n, missed = r.get('ios', 0) + r.get('missed', 0), r.get('missed', 0)
    if name == 'missed':
        check(name + '_dropped', int(missed < (n + 19) // 20),
              '%d completions counted missed, >= 1 in 20 of %d dropped' % (missed, n))
    # the device holds at most K; with completions missed the max is only a
    # range, which must say so and hold K (the device was full at times)
    if conc['max_exact']:
        check(name + '_max_depth', int(conc['max'] != K or missed),
              'max in-device depth %d = K %d, exact with %d missed' % (conc['max'], K, missed))
    else:
        check(name + '_max_depth', int(not (missed and conc['max_min'] <= K <= conc['max'])),
              'max not exact after %d missed: K %d in [%d, %d]' % (missed, K, conc['max_min'], conc['max']))
    # offered more than K, the device holds at most K while busy (each
    # missed request may overlap the next by its estimated end); how far
    # below K is the guest's time from a completion to waking the next
    # waiting job: printed, not judged
    slowest = al['percentiles_ms']['service']['max'] or 0
    held = conc['mean'] / (conc['busy_pct'] / 100) if conc['busy_pct'] else 0
    top = K * (conc['busy_pct'] + 0.005) / 100 + missed * slowest / span_ms + 5e-7
    check(name + '_parallel', int(conc['mean'] > top),
          'mean in-device depth %.4f <= K x busy share %.2f%% + %d missed = %.4f; while busy %.2f of K %d '
          '(the rest: the refill gap, not judged)' % (conc['mean'], conc['busy_pct'], missed, top, held, K))
    # Little's law between the depth registers and the per-request service
    # times (two separate paths through the BPF side), as in 30-depth: equal
    # but for the changes stamped after their clock read and the JSON's 6
    # decimals; a missed request is in the depth for 0 to the slowest
    area, svc_sum = conc['mean'] * span_ms, r.get('ios', 0) * al['service_ms']
    slack = conc['reordered_ms'] + 5e-7 * (r.get('ios', 0) + span_ms) + 5e-4 * conc['mean']
    check(name + '_little', int(not svc_sum - slack <= area <= svc_sum + missed * slowest + slack),
          'in-device depth x time %.3f ms, service summed %.3f ms (%d): %+.3f, within -%.3f and +%.3f '
          '(reordered %.3f ms, %d missed x the slowest)' % (area, svc_sum, r.get('ios', 0), area - svc_sum, slack,
                                                           missed * slowest + slack, conc['reordered_ms'], missed))
    # the D-K jobs the device cannot take wait in the OS (scheduler or tag
    # wait), after Q: queue time > 0, and up to D-K (+1 while a completed
    # job's next bio and a waiting one overlap) at once, never above D
    q = al['queue_ms']
    check(name + '_queue', int(not (q > 0 and D - K <= osq['max'] <= D)),
          'queue time %.4f ms > 0, OS depth max %d in [D-K, D] = [%d, %d] (mean %.2f)'
          % (q, osq['max'], D - K, D, osq['mean']))
    # fio has ended: every bio Q'd while traced has left, so the OS depth
    # ends at 0. Below 0 a departure was counted whose arrival was not:
    # always a failure. Above 0 only when a leave was dropped while the
    # device's entry was set up (claim_races), each leaving one record, and
    # then the report must say the OS depth is not exact.
    ev = t['events']
    check(name + '_os_end', int(osq['now'] < 0 or (osq['now'] > 0 and (osq['exact'] or osq['now'] > ev['claim_races']))),
          'OS depth at the end %d (0; above 0 only flagged not exact, up to claim_races %d; exact: %s)'
          % (osq['now'], ev['claim_races'], osq['exact']))
    # fio's own mean latency (submit to completion, in the guest) against
    # Q->C: fio's also holds the syscall path around the block layer,
    # measured 0.3-2.5% above truestat's total. Tolerance: 0 to 5% above.
    fio = c.get('fio', [''])[0].split(';')
    if len(fio) < 41:
        check(name + '_fio', 1, 'no terse fio output')
        return
    # With completions missed, truestat's mean is over the others: each
    # missed request took at least S, and together they took at most what
    # the same number of fio's slowest took, which bounds the mean over all
    # of them. fio's slowest: from its completion latency percentiles (the
    # value at p holds the ceil(p n)-th smallest of its n reads, to within
    # its histogram bucket: printed in whole us, a bucket at most 1/128 of
    # its value above), each at most its longest latency; plus its
    # submission part (lat - clat, >= 0 per read), summed over all n.
    flat, lmax = float(fio[39]) / 1000, float(fio[38]) / 1000
    seen, tot = n - missed, al['total_ms']
    nf = int(fio[5]) // 4  # fio's reads (KiB / 4 KiB)
    pcts = sorted((float(x.split('%=')[0]), (int(x.split('%=')[1]) + 1) / 1000 * (1 + 1 / 128))
                  for x in fio[17:37] if not x.startswith('0%'))
    slowest = sum(min(next((v for p, v in pcts if -(-p * nf // 100) >= r), lmax), lmax)
                  for r in range(max(nf - missed, 0) + 1, nf + 1))
    slowest += max(0.0, nf * (flat - float(fio[15]) / 1000))
    if missed > nf:  # more missed than fio read: no percentile bound
        slowest = missed * lmax
    lo = (seen * tot + missed * S_ms) / n if n else tot
    hi = 1.05 * (seen * tot + min(slowest, missed * lmax)) / n if n else 1.05 * tot
    check(name + '_vs_fio', int(not (lo <= flat <= hi)),
          'fio mean latency %.4f ms, truestat total %.4f ms = queue + service, over %d of %d: '
          'bound [%.4f, %.4f] (0 to 5%% above; the %d missed between S %.1f ms each and fio\'s %d slowest, '
          '%.1f ms in all; fio max %.1f ms)'
          % (flat, tot, seen, n, lo, hi, missed, S_ms, missed, min(slowest, missed * lmax), lmax))


def main():
    cases = st.parse()
    boot(cases)
    for case in CASES:
        for name, want_kind, sched in RUNS.get(case, ()):
            st.judged(name, run, name, want_kind, sched, cases.get(name))
    if st.OUT:
        print('\n'.join(st.OUT))


main()
