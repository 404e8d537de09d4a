#!/usr/bin/env bash
# scripts/investigate.sh 001 (iowait and commits: MariaDB under sysbench
# oltp_write_only, 64 threads, innodb_flush_log_at_trx_commit=1 then 2, on
# ext4 over a simulated disk of one unit whose cache flush holds it 8 ms),
# --quick, judged against the disk's own log, /proc/diskstats and InnoDB's
# own counters:
#  - it ends with status 0, prints a row per setting and the conclusion,
#    and leaves nothing behind (the database server included);
#  - per setting, truestat's reads, writes (with the unissued: an fsync's
#    empty preflush write) and flushes lie between /proc/diskstats' read
#    inside its window and around it (the database writes in the
#    background), less its unmatched completions and the bios left unseen;
#    its flush commands + missed between the flushes the disk logged inside
#    its window (-v) and around it;
#  - the flush commands' summed service holds the disk's summed
#    arrival..reply of its flushes inside the window, each at least 8 ms;
#  - durable writes (+ missed, in flight at the end): at least one for each
#    fsync InnoDB counted inside truestat's window (Innodb_data_fsyncs,
#    which in MariaDB 10.11 holds the redo log's too), as ext4 ends each
#    fsync of a file with a preflush or FUA write;
#  - with =1 more durable writes per transaction than with =2.
# timeout: 900 s
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/simdisk.sh"
. "$(dirname "$0")/../lib/investigate.sh"
need python3 fusermount3 iostat vmstat mkfs.ext4 bpftool

rc=0
inv_run 001 600 || rc=$?
keep=$INV_KEEP
((rc == 0)) || { finish; exit 1; }
rows=$(grep -cE '^ +[12] \|' "$keep.out" || true)
check investigate_printed "$( ((rows == 2)) && grep -q '^Conclusion:' "$keep.out"; echo $?)" \
	"$rows rows of 2 and the conclusion printed"

simdisk_judge inv "$INV_PYLIB
import re
k = '$keep'
loop = open(k + '/where').read().split('loop=')[1].split()[0]
per_trx = {}
for trx in (1, 2):
    s = '%s/trx%d' % (k, trx)
    t = totals(s + '.json')
    d = dev(t, loop)
    inv_window_counts('trx%d' % trx, d, s)
    ev = d['events']
    # the disk's flushes: those that arrived and were answered inside
    # truestat's totals (its -v line) were counted, but for the unmatched
    win = re.search(r'totals from ([0-9.]+) to ([0-9.]+) s', open(s + '.json.err').read())
    t0, t1 = float(win.group(1)) * 1e9, float(win.group(2)) * 1e9
    reqs = sd_read(s + '.log')
    F = [x for x in reqs if x[4] == 'F']
    Fin = [x[3] - x[0] for x in F if x[0] >= t0 and x[3] <= t1]
    fl = d['ops'].get('flush', dict(ios=0, missed=0, service_ms=0))
    n = fl['ios'] + fl['missed']
    print('trx%d_flush_disk' % trx, int(not len(Fin) - ev['unmatched_completions'] <= n <= len(F)),
          'flush commands %d + missed %d; the disk served %d inside truestat\'s window, %d around it'
          % (fl['ios'], fl['missed'], len(Fin), len(F)))
    D = sd_params(s + '.full')['fsync_ns']
    Fall = [x[3] - x[0] for x in F]
    held = sum(Fin) - (fl['missed'] + ev['unmatched_completions']) * max(Fall, default=0)
    mine = fl['ios'] * (fl['service_ms'] or 0) * 1e6
    print('trx%d_flush_service' % trx, int(not held <= mine or min(Fall, default=D) < D),
          'flush service summed %.1f ms >= the disk\'s A..R inside the window %.1f ms, each A..R >= %.1f ms '
          '(shortest %.3f)' % (mine / 1e6, held / 1e6, D / 1e6, min(Fall, default=0) / 1e6))
    st0 = dict((l.split()[0], int(l.split()[1])) for l in open(s + '.status') if l.strip())
    st1 = dict((l.split()[0], int(l.split()[1])) for l in open(s + '.status1') if l.strip())
    # MariaDB 10.11 counts the redo log's fsyncs in Innodb_data_fsyncs
    fs = sum(st1[x] - st0[x] for x in ('Innodb_os_log_fsyncs', 'Innodb_data_fsyncs') if x in st1)
    sy = d['sync']
    durable = sy['ios'] + sy['missed'] + sy['in_flight']
    print('trx%d_durable_vs_innodb' % trx, int(not fs <= durable),
          'durable writes %d (+ missed, in flight), InnoDB fsyncs %d' % (durable, fs))
    print('# trx%d: %d durable writes, %d flushes served, InnoDB fsyncs %d' % (trx, durable, len(F), fs))
    per_trx[trx] = (durable, st1['Com_commit'] - st0['Com_commit'])
r1 = per_trx[1][0] / max(per_trx[1][1], 1)
r2 = per_trx[2][0] / max(per_trx[2][1], 1)
print('durable_per_commit', int(not r1 > r2), 'durable writes per commit: %.3f with =1, %.3f with =2' % (r1, r2))
"
finish
