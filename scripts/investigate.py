# SPDX-License-Identifier: GPL-2.0
"""scripts/investigate.sh's tables and conclusions, from what its steps kept.
    investigate.py 000 TMP DEV CLIENTS...
    investigate.py 001 TMP DEV SETTINGS...
    investigate.py 004 TMP DEV THREADS...
"""
import json
import re
import sys

import truestat_json as tj

LIMIT_MS = 50.0


def iostat(path, dev):
    """iostat -dxy -o JSON's one report of DEV: r/s, w/s, await (both
    directions, as sysstat 11 printed it), w_await, aqu-sz, %util."""
    st = json.load(open(path))['sysstat']['hosts'][0]['statistics'][-1]
    d = next(x for x in st['disk'] if x['disk_device'] == dev)
    n = d['r/s'] + d['w/s']
    wait = (d['r/s'] * d['r_await'] + d['w/s'] * d['w_await']) / n if n else 0.0
    return dict(r=d['r/s'], w=d['w/s'], await_ms=wait, r_await=d['r_await'],
                w_await=d['w_await'], aqu=d['aqu-sz'],
                util=d['util'])


def vmstat(path):
    """vmstat -n 1's CPU columns (us, sy, id, wa), averaged over its reports
    (the first, since boot, left out)."""
    lines = open(path).read().split('\n')
    head = next(l.split() for l in lines if l.split()[:2] == ['r', 'b'])
    rows = [l.split() for l in lines if l.split() and l.split()[0].isdigit()][1:]
    col = lambda k: sum(float(r[head.index(k)]) for r in rows) / max(len(rows), 1)
    return dict(us=col('us'), sy=col('sy'), id=col('id'), wa=col('wa'))


def status(path):
    """SHOW GLOBAL STATUS lines, as a dict of ints."""
    return dict((l.split()[0], int(l.split()[1])) for l in open(path) if l.strip())


def sysbench(path):
    """sysbench's latency: avg and 95th percentile (ms), and its
    transactions a second (0 for fileio, which has none)."""
    t = open(path).read()
    avg = float(re.search(r'avg:\s+([0-9.]+)', t).group(1))
    p95 = float(re.search(r'95th percentile:\s+([0-9.]+)', t).group(1))
    tps = re.search(r'transactions:\s+[0-9]+\s+\(([0-9.]+) per sec', t)
    return dict(avg_ms=avg, p95_ms=p95, tps=float(tps.group(1)) if tps else 0.0)


def truestat(path, dev):
    """truestat's totals of the step over reads and writes (as iostat's
    r/s, w/s and await; flushes apart): IOPS, QUEUE, SERVICE and TOTAL
    (means), and CONC."""
    d = tj.device(tj.last_totals(path), dev)
    rw = [d['ops'][k] for k in ('read', 'write') if k in d['ops']]
    ios = sum(o['ios'] for o in rw)
    queued = sum(o['queued_ios'] for o in rw)
    mean = lambda key, n: sum(o[n] * (o[key] or 0) for o in rw) / max(sum(o[n] for o in rw), 1)
    return dict(ios=ios, iops=sum(o['iops'] for o in rw), queue=mean('queue_ms', 'queued_ios'),
                service=mean('service_ms', 'ios'), total=mean('total_ms', 'queued_ios'),
                queued=queued, conc=d['concurrency']['mean'])


def tipping(rows, key):
    """The most threads whose KEY stays below LIMIT_MS there and at every
    count below; None: not even one."""
    best = None
    for n, r in rows:
        if r[key] >= LIMIT_MS:
            break
        best = n
    return best


def table_004(tmp, dev, threads):
    rows = []
    for n in threads:
        s = 't%d' % n
        rows.append((n, dict(sb=sysbench('%s/%s.out' % (tmp, s)),
                             io=iostat('%s/%s.iostat' % (tmp, s), dev),
                             ts=truestat('%s/%s.json' % (tmp, s), dev))))
    print('         | sysbench     | iostat -x (sysstat)                  | truestat -j -H -D')
    print('THREADS  | avg_ms p95_ms |    r/s    w/s  await  aqu-sz  %util | '
          '  IOPS QUEUE_ms SERVICE_ms TOTAL_ms   CONC')
    for n, r in rows:
        sb, io, ts = r['sb'], r['io'], r['ts']
        print('%7d  | %6.2f %6.2f | %6.1f %6.1f %6.2f %7.2f %6.1f | %6.1f %8.3f %10.3f %8.3f %6.2f'
              % (n, sb['avg_ms'], sb['p95_ms'], io['r'], io['w'], io['await_ms'], io['aqu'],
                 io['util'], ts['iops'], ts['queue'], ts['service'], ts['total'], ts['conc']))
    return rows


def knee_line(tmp):
    """knee.sh's tipping point, as it printed it."""
    for line in open(tmp + '/knee.out'):
        if line.strip().startswith('tipping point:'):
            return line.strip()
    return 'tipping point: knee.sh printed none'


def conclude_004(rows, knee):
    one, last = rows[0][1], rows[-1]
    busy = [(n, r['ts']) for n, r in rows if n >= 4]
    ts_tip = tipping([(n, r['ts']) for n, r in rows], 'total')
    io_tip = tipping([(n, r['io']) for n, r in rows], 'await_ms')
    (n0, a), (n1, b) = busy[0], busy[-1]
    slope = (b['total'] - a['total']) / (n1 - n0)
    print()
    print('knee.sh --max-latency 50 (fio random reads at depth 1, 2, 4, ..., then halving):')
    print('  ' + knee)
    print()
    print('iostat: %%util %.0f%% from one thread on: the volume looks full before it is loaded;'
          % one['io']['util'])
    print('  await stays below %g ms up to %s threads.' % (LIMIT_MS, io_tip))
    print('truestat: mean Q->C stays below %g ms up to %s threads (knee.sh: depth %s by p95).'
          % (LIMIT_MS, ts_tip, re.sub(r'^tipping point: ([0-9]+).*', r'\1', knee.strip())))
    print('  From %d threads on the volume completes %.0f to %.0f reads and writes a second, CONC'
          % (n0, min(t['iops'] for _, t in busy), max(t['iops'] for _, t in busy)))
    print('  follows the threads (%.1f at %d) and SERVICE with it, while QUEUE (the OS) stays below'
          % (b['conc'], n1))
    print('  %.3f ms: the requests wait inside the volume, each thread more adding %.2f ms.'
          % (max(t['queue'] for _, t in busy), slope))
    print('Conclusion: the limit is the volume\'s rate, about %.0f IOPS, not its 1 ms service time;'
          % b['iops'])
    print('  within %g ms it serves about %.0f clients; more only queue inside it.'
          % (LIMIT_MS, LIMIT_MS / slope if slope > 0 else float('inf')))


def step_000(tmp, dev, n):
    s = '%s/c%d' % (tmp, n)
    d = tj.device(tj.last_totals(s + '.json'), dev)
    io = iostat(s + '.iostat', dev)
    r = d['ops'].get('read', {})
    # iostat 11's svctm: busy time over the I/Os done in it
    io['svctm'] = io['util'] * 10 / (io['r'] + io['w']) if io['r'] + io['w'] else 0.0
    return dict(sb=sysbench(s + '.out'), io=io, ts=truestat(s + '.json', dev),
                r_iops=r.get('iops', 0), busy=d['concurrency']['busy_pct'])


def investigate_000(tmp, dev, clients):
    print('Investigation 000: %util and capacity. MariaDB (a buffer pool of 8 MiB, far smaller than')
    print('the data) on ext4 over a simulated disk of 4 units, 2 ms a request (tests/simdisk behind %s);'
          % dev)
    print('sysbench oltp_read_only with N clients; each row one step, iostat and truestat over it.')
    print()
    rows = [(n, step_000(tmp, dev, n)) for n in clients]
    print('        | sysbench            | iostat -x (sysstat)                     | truestat -j -H -D')
    print('CLIENTS |   tps avg_ms p95_ms |    r/s r_await aqu-sz  %util svctm_ms | '
          '  IOPS QUEUE_ms SERVICE_ms   CONC  BUSY%')
    for n, r in rows:
        sb, io, ts = r['sb'], r['io'], r['ts']
        print('%7d | %5.0f %6.2f %6.2f | %6.1f %7.2f %6.2f %6.1f %8.3f | %6.1f %8.3f %10.3f %6.2f %6.1f'
              % (n, sb['tps'], sb['avg_ms'], sb['p95_ms'], io['r'], io['r_await'], io['aqu'],
                 io['util'], io['svctm'], ts['iops'], ts['queue'], ts['service'], ts['conc'],
                 r['busy']))
    cv = tj.device(tj.last_totals(tmp + '/curve.json'), dev).get('depth_curve') or {}
    print()
    print('truestat -D over the four steps: %s' % curve_line(cv))
    conclude_000(rows, cv)


def curve_line(cv):
    if not cv.get('parallelism_depths'):
        return 'no parallelism verdict (too little evidence)'
    line = 'effective parallelism %s%s' % (cv['parallelism_depths'],
                                          ' (still growing)' if cv.get('still_growing') else '')
    if cv.get('saturation_depths'):
        line += ', service saturates at depth %s' % cv['saturation_depths']
    return line


def conclude_000(rows, cv):
    one, peak = rows[0][1], max((r for _, r in rows), key=lambda r: r['ts']['iops'])
    n_peak = next(n for n, r in rows if r is peak)
    n_mid, mid = rows[1]
    gain = peak['ts']['iops'] / max(one['ts']['iops'], 1e-9)
    last = rows[-1][1]
    print()
    print('iostat, 1 client: %%util %.0f%%: by iostat the disk is close to full with one client; svctm'
          % one['io']['util'])
    print('  %.2f ms. At %d clients it did %.1f times as many reads at %%util %.0f%%, svctm %.2f ms.'
          % (one['io']['svctm'], n_peak, gain, peak['io']['util'], peak['io']['svctm']))
    print('truestat, 1 client: CONC %.2f, each request %.2f ms in the disk. At %d clients CONC %.2f at'
          % (one['ts']['conc'], one['ts']['service'], n_mid, mid['ts']['conc']))
    print('  %.2f ms each: %.1f times the reads at the same service time. At %d, CONC %.1f at %.2f ms:'
          % (mid['ts']['service'], mid['ts']['iops'] / max(one['ts']['iops'], 1e-9), n_peak,
             peak['ts']['conc'], peak['ts']['service']))
    print('  more requests in the disk, each longer, the reads a second flat.')
    print('  -D: %s.' % curve_line(cv))
    print('Conclusion: at 1 client the disk had %.1fx the throughput left (%.0f of %.0f IOPS) while'
          % (gain, one['ts']['iops'], peak['ts']['iops']))
    print('  %%util said full; past %s requests at once more clients only queue (%d clients: CONC %.1f,'
          % (cv.get('parallelism_depths') or '?', rows[-1][0], last['ts']['conc']))
    print('  SERVICE %.2f ms, transactions %.0f/s against %.0f/s at %d).'
          % (last['ts']['service'], last['sb']['tps'], peak['sb']['tps'], n_peak))


def step_001(tmp, dev, trx):
    s = '%s/trx%s' % (tmp, trx)
    d = tj.device(tj.last_totals(s + '.json'), dev)
    b, a = status(s + '.status'), status(s + '.status1')
    span = tj.last_totals(s + '.json')['span_s']
    return dict(sb=sysbench(s + '.out'), vm=vmstat(s + '.vmstat'), io=iostat(s + '.iostat', dev),
                sync=d['sync'], fsyncs=innodb_fsyncs(b, a) / span)


def innodb_fsyncs(before, after):
    """InnoDB's fsyncs between two SHOW GLOBAL STATUS: of its data files and
    of its redo log (MariaDB 10.11 counts both in Innodb_data_fsyncs, and
    has no Innodb_os_log_fsyncs)."""
    keys = ('Innodb_data_fsyncs', 'Innodb_os_log_fsyncs')
    return sum(after[k] - before[k] for k in keys if k in after)


def investigate_001(tmp, dev, settings):
    print('Investigation 001: iowait and commits. MariaDB on ext4 over a simulated disk of one unit,')
    print('2 ms a request, whose cache flush holds it 8 ms (tests/simdisk behind %s); sysbench' % dev)
    print('oltp_write_only with 64 threads; each row one setting of innodb_flush_log_at_trx_commit.')
    print()
    rows = [(t, step_001(tmp, dev, t)) for t in settings]
    print('           | sysbench            | vmstat          | iostat -x           | InnoDB  | truestat sync row')
    print('TRX_COMMIT |   tps avg_ms p95_ms |  us  sy  id  wa |   w/s w_await %util | fsync/s | '
          'sync/s TOTAL_ms FLUSH%')
    for t, r in rows:
        sb, vm, io, sy = r['sb'], r['vm'], r['io'], r['sync']
        print('%10s | %5.0f %6.2f %6.2f | %3.0f %3.0f %3.0f %3.0f | %5.0f %7.2f %5.1f | %7.1f | '
              '%6.1f %8.3f %5.0f%%'
              % (t, sb['tps'], sb['avg_ms'], sb['p95_ms'], vm['us'], vm['sy'], vm['id'], vm['wa'],
                 io['w'], io['w_await'], io['util'], r['fsyncs'],
                 sy['iops'], sy['total_ms'] or 0, 100 * (sy['flush_share'] or 0)))
    one, two = rows[0][1], rows[-1][1]
    s1 = one['sync']
    busy = s1['iops'] * (s1['total_ms'] or 0) / 10   # % of the time
    print()
    print('vmstat, =1: the CPUs idle %.0f%% and waiting on I/O %.0f%% of the time: by vmstat the host has'
          % (one['vm']['id'], one['vm']['wa']))
    print('  CPU to spare and is only partly I/O-bound.')
    print('truestat, =1: %.1f durable writes a second (InnoDB: %.1f fsyncs), each %.2f ms from Q to the'
          % (s1['iops'], one['fsyncs'], s1['total_ms'] or 0))
    print('  end of its flush, %.0f%% of it in the disk\'s flush commands: a durable write is under way'
          % (100 * (s1['flush_share'] or 0)))
    print('  %.0f%% of the time, and every commit waits for one (InnoDB groups %.0f commits a flush).'
          % (busy, one['sb']['tps'] / max(s1['iops'], 1e-9)))
    print('  As the article explains, only the thread in fsync counts as iowait; those queued behind')
    print('  it wait on InnoDB\'s group commit, which vmstat counts as idle.')
    print('With =2 (the redo log flushed once a second): %.0f transactions a second, %.1f times as many,'
          % (two['sb']['tps'], two['sb']['tps'] / max(one['sb']['tps'], 1)))
    print('  %.1f durable writes a second, vmstat\'s iowait %.0f%%.' % (two['sync']['iops'], two['vm']['wa']))
    print('Conclusion: the commits were bound by the disk\'s cache flush, far more than iowait said;')
    print('  a disk with a protected write cache (a fast flush), or =2, is where the time is.')


def main():
    what, tmp, dev = sys.argv[1:4]
    threads = [int(x) for x in sys.argv[4:]]
    if what == '000':
        investigate_000(tmp, dev, threads)
        return
    if what == '001':
        investigate_001(tmp, dev, sys.argv[4:])
        return
    if what != '004':
        sys.exit('investigate.py: no investigation %s' % what)
    print('Investigation 004: a cloud volume\'s tipping point. A simulated volume capped at 1000 IOPS,')
    print('4 units of 1 ms (tests/simdisk behind %s), ext4, sysbench fileio rndrw (2 reads to a write,' % dev)
    print('4 KiB, direct I/O) with N threads; each row one step, iostat and truestat over it.')
    print()
    rows = table_004(tmp, dev, threads)
    conclude_004(rows, knee_line(tmp))


main()
