#!/usr/bin/env bash
# scripts/investigate.sh 000 (%util and capacity: MariaDB with a buffer pool
# far smaller than its data under sysbench oltp_read_only at 1, 4, 16 and
# 64 clients, on ext4 over a simulated disk of 4 units, 8 ms a request),
# --quick, judged against the disk's own log, /proc/diskstats and InnoDB's
# own counters:
#  - it ends with status 0, prints a row per client count, -D's verdict and
#    truestat's findings, and leaves nothing behind (the database server
#    included);
#  - the disk followed its model (4 units, S = 8 ms), request by request,
#    replayed from its log: its capacity is known, K / S = 500 a second;
#  - per step, truestat's reads, writes and flushes lie between
#    /proc/diskstats' read inside its window and around it (the database
#    writes in the background), less its unmatched completions and the
#    bios left unseen;
#  - per step, InnoDB's own reads inside truestat's window (O_DIRECT: each
#    one a request at the disk) are at most truestat's reads + missed;
#  - per step, truestat's summed service (CONC x the span, by Little) holds
#    the disk's summed arrival..reply of the requests inside its window,
#    less the longest for each unseen completion; its IOPS at most the
#    disk's capacity;
#  - -D over the four steps: the effective parallelism is the depth class
#    holding the disk's 4 units or the next (the class's mean depth may lie
#    below 4, where the disk is not yet full: throughput grows on by more
#    than the rule's +20% to the next), never serial, never deeper.
# timeout: 600 s
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/simdisk.sh"
. "$(dirname "$0")/../lib/investigate.sh"
need python3 fusermount3 iostat mkfs.ext4 bpftool

inv_run 000 400 '^ +(1|4|16|64) \|' 4 '^truestat -D over the four steps: ' || { finish; exit 1; }
keep=$INV_KEEP

simdisk_judge inv "$INV_PYLIB
import re
k = '$keep'
loop = open(k + '/where').read().split('loop=')[1].split()[0]
P = sd_params(k + '/c64.full')
K, S = P['units'], P['service_ns']
bad = sd_replay(k + '/c64.full', K, S)
every = sd_read(k + '/c64.full')
print('disk_model', int(bool(bad) or sorted(x[9] for x in every) != list(range(len(every)))),
      '%d requests, %d off the model (%d units, S %d us)' % (len(every), len(bad), K, S / 1000))
status = lambda p: dict((l.split()[0], int(l.split()[1])) for l in open(p) if l.strip())
for n in (1, 4, 16, 64):
    s = '%s/c%d' % (k, n)
    t = totals(s + '.json')
    d = dev(t, loop)
    inv_window_counts('c%d' % n, d, s)
    ev = d['events']
    rd = d['ops'].get('read', dict(ios=0, missed=0))
    b, a = status(s + '.status'), status(s + '.status1')
    inno = a['Innodb_data_reads'] - b['Innodb_data_reads']
    print('c%d_innodb_reads' % n, int(not inno <= rd['ios'] + rd['missed']),
          '%d clients: InnoDB read %d times inside truestat\'s window, truestat reads %d + %d missed'
          % (n, inno, rd['ios'], rd['missed']))
    win = re.search(r'totals from ([0-9.]+) to ([0-9.]+) s', open(s + '.json.err').read())
    t0, t1 = float(win.group(1)) * 1e9, float(win.group(2)) * 1e9
    reqs = sd_read(s + '.log')
    ra = [x[3] - x[0] for x in reqs]
    inside = [x[3] - x[0] for x in reqs if x[0] >= t0 and x[3] <= t1]
    missed = sum(o['missed'] for o in d['ops'].values()) + ev['unmatched_completions']
    held = sum(inside) - missed * max(ra, default=0)
    c = d['concurrency']
    mine = c['mean'] * t['span_s'] * 1e9
    print('c%d_held' % n, int(not held <= mine),
          '%d clients: CONC %.3f x %.3f s = %.1f ms in the device >= the disk\'s A..R inside the window %.1f ms '
          '(%d requests, %d unseen)' % (n, c['mean'], t['span_s'], mine / 1e6, held / 1e6, len(inside), missed))
    iops = sum(o['iops'] for o in d['ops'].values())
    cap = K / (S / 1e9)
    print('c%d_capacity' % n, int(not iops <= cap * 1.01),
          '%d clients: truestat %.1f IOPS, the disk\'s capacity %d x 1/S = %.0f' % (n, iops, K, cap))
cv = dev(totals(k + '/curve.json'), loop).get('depth_curve') or {}
rows = cv.get('rows', [])
home = [r for r in rows if r['depth_lo'] <= K <= r['depth_hi']]
ok = [sd_label(r['depth_lo'], r['depth_hi']) for r in home]
ok += [sd_label(r['depth_lo'], r['depth_hi']) for r in rows if home and r['depth_lo'] == home[0]['depth_hi'] + 1]
got = cv.get('parallelism_depths')
# truestat's own findings. With a load step (15 clients more for the last
# second of a step at 1 client): busy-not-full, its headroom at least the
# rule's 1.2 and at most the model's, K/S over the step's completions a
# second (the disk's own, inside truestat's window: a bucket's 1/32 above
# for a row's Little IOPS)
s = k + '/burst'
t = totals(s + '.json')
fs = dict((f['id'], f) for f in t['findings'] if f['device'] == loop)
win = re.search(r'totals from ([0-9.]+) to ([0-9.]+) s', open(s + '.json.err').read())
t0, t1 = float(win.group(1)) * 1e9, float(win.group(2)) * 1e9
n = len([x for x in sd_read(s + '.log') if x[4] == 'R' and t0 <= x[0] and x[3] <= t1])
most = K / (S / 1e9) * 1.03125 / (n / ((t1 - t0) / 1e9))
# (or capped-volume, the one verdict when the steps beyond the knee are
# flat: then the throughput left is its rate over the IOPS now, stated
# when short of it)
def figs(f):
    return dict((x['name'], x['value']) for x in f['figures'])
bnf, capped = fs.get('busy-not-full'), fs.get('capped-volume')
if bnf:
    said, head = 'busy-not-full', figs(bnf)['headroom'] if bnf['severity'] == 'medium' else -1
elif capped and 'short of it' in capped['sentence']:
    said, head = 'capped-volume', figs(capped)['rate_iops'] / figs(capped)['iops_now']
else:
    said, head = 'neither (%s)' % sorted(fs), -1
print('burst_busy_not_full', int(not 1.2 <= head <= most),
      'load step: %s, headroom %.2f: >= 1.2, <= the model\'s %.2f (K/S over %d reads in %.2f s)'
      % (said, head, most, n, (t1 - t0) / 1e9))
# over the four steps: the K units all busy from K clients on, which the
# block layer cannot tell from a rate cap (capped-volume, its rate) or, with
# fewer evidenced depths beyond the knee, waiting-in-device (its IOPS at the
# knee); by Little at K/S within a histogram bucket (1/16)
fs = dict((f['id'], dict((x['name'], x['value']) for x in f['figures']))
          for f in totals(k + '/curve.json')['findings'] if f['device'] == loop)
cap = K / (S / 1e9)
fnd = (('capped-volume', fs['capped-volume']['rate_iops']) if 'capped-volume' in fs else
       ('waiting-in-device', fs['waiting-in-device']['iops_at_knee']) if 'waiting-in-device' in fs else (None, -1))
print('curve_finding', int(not cap / 1.0625 <= fnd[1] <= cap * 1.0625),
      'over the four steps: %s at %.1f IOPS; K/S %.1f, within 1/16 (findings: %s)' % (fnd[0], fnd[1], cap, sorted(fs)))
print('curve_parallelism', int(got not in ok),
      '-D over the four steps: effective parallelism %s; the disk\'s %d units allow %s'
      % (got, K, ' or '.join(ok) or 'none'))
"
finish
