# SPDX-License-Identifier: GPL-2.0
"""scripts/investigate.sh's tables and truestat's findings, from what its steps kept.
    investigate.py 000 TMP DEV CLIENTS...
    investigate.py 001 TMP DEV SETTINGS...
    investigate.py 002 TMP DEV STATES...
    investigate.py 004 TMP DEV THREADS...
"""
import json
import re
import sys

import truestat_json as tj

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


def findings(path, dev, what):
    """truestat's own findings in the totals of the run at @path, under a
    heading that says which run it was"""
    print()
    print("truestat's findings, %s:" % what)
    for line in tj.findings_lines(tj.last_totals(path), dev):
        print(line)


def conclude_004(tmp, dev, knee):
    print()
    print('knee.sh --max-latency 50 (fio random reads at depth 1, 2, 4, ..., then halving):')
    print('  ' + knee)
    findings(tmp + '/curve.json', dev, 'one truestat -D over every step')


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
    print('the data) on ext4 over a simulated disk of 4 units, 8 ms a request (tests/simdisk behind %s);'
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
    conclude_000(tmp, dev, clients)


def curve_line(cv):
    if not cv.get('parallelism_depths'):
        return 'no parallelism verdict (too little evidence)'
    line = 'effective parallelism %s%s' % (cv['parallelism_depths'],
                                          ' (still growing)' if cv.get('still_growing') else '')
    if cv.get('saturation_depths'):
        line += ', service saturates at depth %s' % cv['saturation_depths']
    return line


def conclude_000(tmp, dev, clients):
    findings('%s/c%d.json' % (tmp, clients[0]), dev, '%d client (its step alone)' % clients[0])
    findings(tmp + '/burst.json', dev, '%d client, %d more for its last second (a load step)'
             % (clients[0], clients[-2] - clients[0]))
    findings(tmp + '/curve.json', dev, 'one truestat -D over the four steps')


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
    for t, _ in rows:
        findings('%s/trx%s.json' % (tmp, t), dev, 'innodb_flush_log_at_trx_commit=%s' % t)


def scan_state(tmp, dev, name):
    s = '%s/%s' % (tmp, name)
    d = tj.device(tj.last_totals(s + '.json'), dev)
    scans = [int(l.split()[1]) for l in open(s + '.out') if l.startswith('scan_ms ')]
    chk = open(s + '.myisamchk').read()
    blocks = re.search(r'Blocks/Record:\s+([0-9.]+)', chk)
    st = json.load(open(s + '.iostat'))['sysstat']['hosts'][0]['statistics'][-1]
    io = next(x for x in st['disk'] if x['disk_device'] == dev)
    r = d['ops']['read']
    p = d['pattern']['read']
    return dict(scans=scans, blocks=float(blocks.group(1)) if blocks else None, io=io, r=r, p=p,
                seek_p50=seek_pct(p, 0.5), seek_p90=seek_pct(p, 0.9), top=top_size(p))


def seek_pct(p, q):
    """The seek class holding the q-th share of the compared reads, as
    truestat names it (0: sequential)."""
    n, got = p['compared'], 0
    for c in p['seek']:
        got += c['ios']
        if got >= q * n:
            return '0' if c['below_bytes'] == 1 else '<' + size_name(c['below_bytes'])
    return '-'


def size_name(b):
    for unit, k in (('G', 30), ('M', 20), ('K', 10)):
        if b >= 1 << k:
            return '%d%s' % (b >> k, unit)
    return str(b)


def top_size(p):
    """The size class that carried most of the bytes."""
    c = max(p['sizes'], key=lambda c: c['bytes'])
    return '%s-%s' % (size_name(c['from_bytes']), size_name(c['below_bytes']))


def investigate_002(tmp, dev, states):
    print('Investigation 002: a fragmented scan. A MyISAM table of variable-length rows, each grown by')
    print('an update in random order, on ext4 over a simulated disk with one arm (seek 1-8 ms by')
    print('distance, 0.5 ms a request, 100 MB/s; tests/simdisk behind %s); a full scan from a cold cache,' % dev)
    print('over and over, then the same after OPTIMIZE TABLE.')
    print()
    rows = [(n, scan_state(tmp, dev, n)) for n in states]
    print('           | the table       | iostat -x (sysstat)         | truestat --pattern')
    print('TABLE      | blk/rec scan_ms |  r/s rMB/s rareq-sz %util |   IOPS SERVICE_ms  SEQ%  SEEK_P50 '
          'SEEK_P90  MOST_BYTES')
    for n, r in rows:
        io, ts, p = r['io'], r['r'], r['p']
        print('%-10s | %7.2f %7.0f | %4.0f %5.1f %8.1f %5.1f | %6.1f %10.3f %5.1f %9s %8s  %s'
              % (n, r['blocks'] or 0, sum(r['scans']) / max(len(r['scans']), 1), io['r/s'],
                 io['rkB/s'] / 1024, io['rareq-sz'], io['util'], ts['iops'], ts['service_ms'] or 0,
                 100 * (p['sequential_share'] or 0), r['seek_p50'], r['seek_p90'], r['top']))
    conclude_002(tmp, dev, states)


def conclude_002(tmp, dev, states):
    for n in states:
        findings('%s/%s.json' % (tmp, n), dev, 'the table %s (truestat --pattern)' % n)


def main():
    what, tmp, dev = sys.argv[1:4]
    if what == '002':
        investigate_002(tmp, dev, sys.argv[4:])
        return
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
    table_004(tmp, dev, threads)
    conclude_004(tmp, dev, knee_line(tmp))


main()
