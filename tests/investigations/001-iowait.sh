#!/usr/bin/env bash
# scripts/investigate.sh 001 (iowait and commits: MariaDB under sysbench
# oltp_write_only, 64 threads, innodb_flush_log_at_trx_commit=1 then 2, on
# ext4 over a simulated disk of one unit whose cache flush holds it 8 ms),
# --quick, judged against the disk's own log, /proc/diskstats and InnoDB's
# own counters:
#  - it ends with status 0, prints a row per setting and truestat's findings,
#    and leaves nothing behind (the database server included);
#  - per setting, truestat's reads, writes (with the unissued: an fsync's
#    empty preflush write) and flushes lie between /proc/diskstats' read
#    inside its window and around it (the database writes in the
#    background), less its unmatched completions and the bios left unseen;
#    its flush commands + missed between the flushes the disk logged inside
#    its window (-v) and around it;
#  - the flush commands' summed service holds the disk's summed
#    arrival..reply of its flushes inside the window, each at least 8 ms;
#  - durable writes against the kernel's own trace events for the volume
#    (ftrace: ext4_sync_file_enter/exit, jbd2_end_commit,
#    jbd2_write_superblock): each journal commit that ended inside
#    truestat's window wrote its commit block durably (ext4's barrier),
#    so durable writes + missed + in flight + unmatched are at least the
#    commits; and each durable write is a commit block, the journal's
#    superblock, or the one empty flush of an fsync that needed no commit:
#    at most the commits that ended from the window's start to the first
#    after its end, the superblock writes then, and the fsyncs that
#    overlapped the window. InnoDB's own fsyncs counted inside the window
#    (Innodb_data_fsyncs, which in MariaDB 10.11 holds the redo log's too)
#    are at most the kernel's fsyncs that overlapped it. (Not one durable
#    write per InnoDB fsync: fsyncs that wait on one journal transaction
#    share its commit.)
#  - with =1 more durable writes per transaction than with =2;
#  - truestat's own findings: with =1 commits-wait-on-flush, its flush
#    share at least the disk's flush A..R over the durable writes' time;
#    with =2 not stated.
# timeout: 900 s
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/simdisk.sh"
. "$(dirname "$0")/../lib/investigate.sh"
need python3 fusermount3 iostat vmstat mkfs.ext4 bpftool

inv_events_start ext4/ext4_sync_file_enter ext4/ext4_sync_file_exit jbd2/jbd2_end_commit \
	jbd2/jbd2_write_superblock
inv_run 001 600 '^ +[12] \|' 2 || { finish; exit 1; }
keep=$INV_KEEP
inv_events_stop "$keep/events"

simdisk_judge inv "$INV_PYLIB
import re
k = '$keep'
loop = open(k + '/where').read().split('loop=')[1].split()[0]
per_trx = {}
# the kernel's trace events for the volume (loop N is 7,N), CLOCK_MONOTONIC
num = '7,' + loop[4:]
recs = []
for l in open(k + '/events'):
    m = re.search(r' ([0-9]+\.[0-9]+): (\w+): dev ([0-9]+,[0-9]+)', l)
    if m and m.group(3) == num:
        recs.append((float(m.group(1)) * 1e9, m.group(2), l))

def kernel_events(t0, t1):
    ends = sorted(t for t, e, _ in recs if e == 'jbd2_end_commit')
    after = [t for t in ends if t > t1]
    upto = after[0] if after else t1
    enters = [t for t, e, _ in recs if e == 'ext4_sync_file_enter']
    exits = [t for t, e, _ in recs if e == 'ext4_sync_file_exit']
    # an fsync overlaps [t0, t1] unless it entered after t1 or left before
    # t0 (each enter has its exit, in order per task: counted apart)
    over = len(enters) - sum(1 for t in enters if t > t1) - sum(1 for t in exits if t < t0)
    return dict(commits=sum(1 for t in ends if t0 <= t <= t1),
                commits_to_next=sum(1 for t in ends if t0 <= t <= upto),
                superblocks=sum(1 for t, e, _ in recs if e == 'jbd2_write_superblock' and t0 <= t <= upto),
                fsyncs=over)
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
    done = sy['ios'] + sy['missed']
    durable = done + sy['in_flight']
    kernel = kernel_events(t0, t1)
    low = kernel['commits']
    print('trx%d_durable_commits' % trx, int(not low <= durable + ev['unmatched_completions']),
          'durable writes %d (+ missed, in flight) + %d unmatched >= %d journal commits ended in the window'
          % (durable, ev['unmatched_completions'], low))
    high = kernel['commits_to_next'] + kernel['superblocks'] + kernel['fsyncs']
    print('trx%d_durable_sources' % trx, int(not durable <= high),
          'durable writes %d <= %d commits (to the first after the window) + %d journal superblock writes '
          '+ %d fsyncs overlapping the window' % (durable, kernel['commits_to_next'], kernel['superblocks'],
                                                   kernel['fsyncs']))
    print('trx%d_innodb_fsyncs' % trx, int(not fs <= kernel['fsyncs']),
          'InnoDB\'s fsyncs inside the window %d <= the kernel\'s overlapping it %d' % (fs, kernel['fsyncs']))
    print('# trx%d: %d durable writes, %d journal commits, %d flushes served, InnoDB fsyncs %d'
          % (trx, durable, low, len(F), fs))
    per_trx[trx] = (durable, st1['Com_commit'] - st0['Com_commit'])
    # truestat's own finding: with =1 commits-wait-on-flush, its share at
    # least the disk's summed flush A..R inside the window over the durable
    # writes' summed time (less the longest flush for each one unseen), at
    # most 1; with =2 a durable write under way a small part of the time
    fw = [f for f in t['findings'] if f['device'] == loop and f['id'] == 'commits-wait-on-flush']
    if trx == 1:
        share = dict((x['name'], x['value']) for x in fw[0]['figures'])['flush_share'] if fw else -1
        lo = held / (sy['ios'] * sy['total_ms'] * 1e6)
        print('trx1_finding', int(not lo <= share <= 1),
              'commits-wait-on-flush %s, flush share %.3f: >= the disk\'s %.3f (flush A..R %.1f ms over '
              'durable writes %.1f ms), <= 1' % ('stated' if fw else 'not stated', share, lo, held / 1e6,
                                                  sy['ios'] * sy['total_ms']))
    else:
        print('trx2_no_finding', int(bool(fw)), 'commits-wait-on-flush not stated with =2%s'
              % (': ' + fw[0]['sentence'] if fw else ''))
r1 = per_trx[1][0] / max(per_trx[1][1], 1)
r2 = per_trx[2][0] / max(per_trx[2][1], 1)
print('durable_per_commit', int(not r1 > r2), 'durable writes per commit: %.3f with =1, %.3f with =2' % (r1, r2))
"
finish
