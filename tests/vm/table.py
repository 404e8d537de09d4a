# SPDX-License-Identifier: GPL-2.0
"""The tables of a `make test-kernels` log (tests/vm/run.sh's output), in
markdown, for doc/measurements/kernels.md.

python3 tests/vm/table.py LOG: reads run.sh's "== KVER (PKG)", "-- KVER:
CASES" (one per guest), "  ok    KVER/NAME: MESSAGE" / "  FAIL  ..." and
"N passed, N failed" lines; prints
 - the checks passed and failed in LOG, and run.sh's own count when LOG
   has it (a difference is warned of on stderr)
 - kernels x cases: each case's checks passed / run ('-': not run on that
   kernel), the guests' own (qemu, boot*) under "guests", those of no case
   their guest ran under "other" (named on stderr)
 - one row per kernel and run of base (null_blk) and of drivers.py's RUNS
   (nvme_ns: per disk), the figures from its checks' messages
A check's case is its run's (RUNS, read from drivers.py; none, deadline,
rawtp, missed: base; opts, optsraw, all, allraw, or these in a guest without base: load), else its name's first word (dm_*, raid0_*),
refused: refuse. Other lines are skipped, counted on stderr. Exit 2: LOG
missing or without a check.
"""
import ast
import os
import re
import sys

CHECK = re.compile(r'^  (ok|FAIL|not ok) +([^:]+): ?(.*)$')
SUMMARY = re.compile(r'^(\d+) passed, (\d+) failed$')
GUEST = re.compile(r'^(qemu \(.*\)|boot(_\w+)?)?$')   # '': "KVER: no results from the guest"
DISK = re.compile(r'^(nvme\d+n\d+|nullb\d+|[sv]d[a-z]+)_')
BASE = ['none', 'deadline', 'rawtp', 'missed', 'opts', 'optsraw', 'all', 'allraw']   # base.py
K4 = 'null_blk K 4, S 1 ms: '
LABELS = {'none': K4 + 'none', 'deadline': K4 + 'mq-deadline', 'rawtp': K4 + 'none, --raw-tp',
          'missed': K4 + '1 completion in 20 dropped', 'opts': K4 + '--slow --by --pattern',
          'optsraw': K4 + '--slow --by --pattern --raw-tp', 'all': K4 + '-p -F -c --slow-buffer --slow --by --pattern',
          'allraw': K4 + '-p -F -c --slow-buffer --slow --by --pattern --raw-tp', 'nvme_irq': 'NVMe, 2 queues, interrupts',
          'nvme_ns': 'NVMe, 2 namespaces', 'nvme_poll': 'NVMe, polled (hipri)', 'virtio': 'virtio-blk, 2 queues',
          'scsi': 'scsi_debug, max_queue 4', 'scsi_busy': 'scsi_debug, host busy',
          'scsi_retry': 'scsi_debug, retried', 'scsi_error': 'scsi_debug, medium error',
          'ncq': 'SATA (AHCI), NCQ', 'ncq1': 'SATA (AHCI), queue_depth 1'}
for i in range(3):
    LABELS['nullq%d' % i] = 'null_blk 2 queues, irqmode %d' % i
    LABELS['cpus8_%d' % i] = 'null_blk 8 queues, 8 vCPUs, irqmode %d' % i
UNREAD = []                                             # figure lines not understood


def warn(msg):
    print('table.py: ' + msg, file=sys.stderr)


def driver_runs():
    """drivers.py's RUNS, case -> its runs (read, not imported: it runs at import)"""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'drivers.py')) as f:
        for node in ast.parse(f.read()).body:
            if isinstance(node, ast.Assign) and [getattr(t, 'id', '') for t in node.targets] == ['RUNS']:
                return ast.literal_eval(node.value)
    return {}


RUN_CASE = dict([(r, 'base') for r in BASE] + [(r, c) for c, runs in driver_runs().items() for r in runs])


def run_of(name):
    """the longest run whose checks' names NAME may be: scsi_busy_read is scsi_busy's"""
    got = [r for r in RUN_CASE if name == r or name.startswith(r + '_')]
    return max(got, key=len) if got else None


def case_of(name, cases):
    """the case of check NAME in a guest that ran CASES, None: none of them"""
    if GUEST.match(name):
        return 'guests'
    run = run_of(name)
    want = RUN_CASE[run] if run else 'refuse' if name == 'refused' else name.split('_')[0]
    if want == 'base' and 'base' not in cases:
        want = 'load'
    return want if want in cases else None


def parse(path):
    """the checks (kernel, name, passed, message, its guest's cases), each
    kernel's cases in order, run.sh's summary, the lines skipped"""
    checks, kcases, summary, skipped = [], {}, None, 0
    kver, cases = None, []
    for line in (x.rstrip('\n') for x in open(path, errors='replace')):
        m = CHECK.match(line)
        if m:
            full = m.group(2)
            if '/' in full:
                kv, name = full.split('/', 1)
            elif full == kver:
                kv, name = kver, ''
            else:                       # a script's failure (py_script), a package's (no kernel)
                kv, name = kver or '(none)', full
            kcases.setdefault(kv, [])
            checks.append((kv, name, m.group(1) == 'ok', m.group(3), cases))
        elif re.match(r'-- \S+: ', line):
            kver, rest = line[3:].split(': ', 1)
            cases = rest.split(' (')[0].split()   # "refuse (older than 5.10)"
            kc = kcases.setdefault(kver, [])
            kc += [c for c in cases if c not in kc]
        elif re.match(r'== \S+ \(', line):
            kver, cases = line.split()[1], []
        elif re.match(r'== .*: \d+ s$', line):
            kver, cases = None, []
        elif SUMMARY.match(line):
            summary = tuple(int(x) for x in SUMMARY.match(line).groups())
        elif line.strip() and not line.startswith(('        ', '  # ')):
            skipped += 1
    return checks, kcases, summary, skipped


def cases_table(checks, kcases):
    tally, other = {}, []
    for kv, name, ok, _, cases in checks:
        c = case_of(name, cases)
        if c is None:
            c = 'other'
            other.append('%s/%s' % (kv, name))
        tally.setdefault((kv, c), []).append(ok)
    cols = ['guests'] + list(dict.fromkeys(c for kc in kcases.values() for c in kc)) + ['other'] * bool(other)
    if other:
        warn('%d checks of no case their guest ran, under other: %s' % (
            len(other), ', '.join(other[:10]) + (', ...' if len(other) > 10 else '')))
    print('| kernel | %s | all |' % ' | '.join(cols))
    print('|---|%s---:|' % ('---:|' * len(cols)))
    for kv, kc in kcases.items():
        ran = kc + ['guests'] * bool(kc)
        cells = ['%d/%d' % (sum(tally[kv, c]), len(tally[kv, c])) if (kv, c) in tally else '0/0' if c in ran else '-'
                 for c in cols]
        mine = sum((t for (k, _), t in tally.items() if k == kv), [])
        print('| %s | %s | %d/%d |' % (kv, ' | '.join(cells), sum(mine), len(mine)))


def fig(f, *alts):
    """the cell of the first of ALTS (check suffix, pattern, format) that
    run f has: '-' none, '?' its message not understood (counted)"""
    for key, pattern, fmt in alts:
        if key in f:
            m = re.search(pattern, f[key])
            if m:
                return fmt(m)
            UNREAD.append(key)
            return '?'
    return '-'


IO = r'truestat (\d+) \+ (\d+) missed(?: \+ (\d+) unissued)?, diskstats (\d+)'


def ios(m):
    return '%s+%s%s / %s' % (m[1], m[2], '+' + m[3] if m[3] and m[3] != '0' else '', m[4])


def figures(f):
    """one row's cells from its checks' messages (suffix -> message); base's
    runs have _counts, _max_depth, the drivers' _read, _write, _max"""
    ioe = fig(f, ('io_errors', r'io_errors: truestat (\w+)', lambda m: '; truestat: ' + m[1]))
    return [
        fig(f, ('read', IO, ios), ('counts', IO, ios)),
        fig(f, ('write', IO, ios),
            ('counts', r'writes: diskstats (\d+)', lambda m: '-' if m[1] == '0' else '- / ' + m[1])),
        fig(f, ('max', r'depth (?:(\d+) \(exact\)|flagged not exact, in \[(\d+), (\d+)\]).*?, at most (\d+)',
                lambda m: '%s (%s)' % (m[1] or '%s-%s*' % (m[2], m[3]), m[4])),
            ('max_depth', r'depth (\d+) = K (\d+)|K (\d+) in \[(\d+), (\d+)\]',
             lambda m: '%s (%s)' % (m[1], m[2]) if m[1] else '%s-%s* (%s)' % (m[4], m[5], m[3]))),
        # drivers.py's little: "service summed T ms (N x MEAN)" where no _service
        fig(f, ('service', r'mean service ([\d.]+|null) ms', lambda m: m[1]),
            ('little', r'service summed [\d.]+ ms \(\d+ x ([\d.]+)\)', lambda m: '%.4f' % float(m[1]))),
        fig(f, ('little', r'depth x time (-?[\d.]+) ms.*?service summed (-?[\d.]+) ms',
                lambda m: '%.1f / %.1f' % (float(m[1]), float(m[2])))),
        fig(f, ('requeues', r'truestat (\d+), ftrace block_rq_requeue (-?\d+)(?:, of requests issued (-?\d+))?',
                lambda m: '%s / %s%s' % (m[1], m[2], ' (%s)' % m[3] if m[3] else ''))),
        fig(f, ('errors', r'ftrace (-?\d+), fio\'s failed I/Os (-?\d+)',
                lambda m: '%s (fio: %s%s)' % (m[1], m[2], '' if ioe == '-' else ioe)))]


def runs_table(checks):
    rows, failed = {}, {}
    for kv, name, ok, msg, _ in checks:
        run = run_of(name)
        if not run:
            continue
        rest = name[len(run) + 1:]
        disk = DISK.match(rest)
        disk = disk.group(1) if disk else ''
        rows.setdefault((kv, run, disk), {})[rest[len(disk) + 1:] if disk else rest] = msg
        failed[kv, run] = failed.get((kv, run), 0) + (not ok)
    print('| kernel | driver: run | reads: truestat+missed / diskstats | writes | max (bound) | service ms | '
          'Little: depth x time / service summed, ms | requeues | errors |')
    print('|---|---|---|---|---|---|---|---|---|')
    for (kv, run, disk), f in rows.items():
        if not disk and any(k[:2] == (kv, run) and k[2] for k in rows):
            continue                 # nvme_ns's own checks (attach, exit): on its disks' rows
        label = LABELS.get(run, run) + (': ' + disk if disk else '')
        if failed[kv, run]:
            label += ' (%d FAILED)' % failed[kv, run]
        print('| %s | %s | %s |' % (kv, label, ' | '.join(figures(f))))
    print('\n`*`: the maximum flagged not exact, its range shown; in brackets the bound. reads, writes: '
          '+N after missed: unissued. requeues: truestat / ftrace (of which issued). `-`: no such check in the run.')


def main():
    log = sys.argv[1] if len(sys.argv) == 2 else ''
    if not os.path.isfile(log):
        warn('usage: python3 tests/vm/table.py LOG (%s: no such file)' % (log or 'no LOG'))
        sys.exit(2)
    checks, kcases, summary, skipped = parse(log)
    if not checks:
        warn('%s: no check line ("  ok    KVER/NAME: MESSAGE" or "  FAIL  ...")' % log)
        sys.exit(2)
    passed, failed = sum(c[2] for c in checks), sum(not c[2] for c in checks)
    print('make test-kernels log %s: %d passed, %d failed' % (log, passed, failed))
    if summary:
        print('run.sh\'s own summary: %d passed, %d failed' % summary)
        if summary != (passed, failed):
            warn('run.sh\'s summary differs from the check lines counted here')
    else:
        warn('no "N passed, N failed" line in %s: the run did not finish' % log)
    print()
    cases_table(checks, kcases)
    print()
    runs_table(checks)
    if skipped or UNREAD:
        warn('skipped %d lines of no check (build output, errors); %d figure lines not understood%s' % (
            skipped, len(UNREAD), ': ' + ', '.join(sorted(set(UNREAD))) if UNREAD else ''))


main()
