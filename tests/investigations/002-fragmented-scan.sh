#!/usr/bin/env bash
# scripts/investigate.sh 002 (a fragmented scan: a MyISAM table whose rows
# each grew by an update in random order, scanned from a cold cache, then
# rebuilt by OPTIMIZE TABLE and scanned again, on ext4 over a simulated
# disk with one arm that seeks), --quick, judged against the disk's own log
# of offsets and /proc/diskstats:
#  - it ends with status 0, prints a row per state of the table and
#    truestat's findings, and leaves nothing behind (the database server
#    included); random-reads stated on the fragmented table, its
#    sequential share the disk's log's, and not once rebuilt;
#  - the table was what the investigation says: myisamchk counts 2 blocks
#    a row before OPTIMIZE TABLE and 1 after;
#  - the disk followed its model (seeks by distance), request by request;
#  - per state, truestat's reads, writes and flushes lie between
#    /proc/diskstats' read inside its window and around it, less its
#    unmatched completions and the bios left unseen;
#  - per state, --pattern against the disk's log, which holds the requests
#    truestat saw one for one (at most 1 MiB each: FUSE would cut a larger
#    one) in the order the disk was given them (the loop device's one
#    worker, FUSE's one queue, the disk's one reading thread): its reads,
#    their sizes class by class, the sequential ones and those that went
#    backwards (each against the request before it, read or write), and
#    the seek distances class by class, between the disk's requests that
#    arrived inside truestat's window and all it logged in the step;
#  - Ctrl-C while the database scans: status 130, nothing left behind (the
#    server included); with a database server running on the host already
#    (a process named mariadbd), it refuses in one line and leaves that
#    process alone.
# timeout: 600 s
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/simdisk.sh"
. "$(dirname "$0")/../lib/investigate.sh"
need python3 fusermount3 iostat mkfs.ext4 bpftool

inv_run 002 400 '^(fragmented|rebuilt) +\|' 2 || { finish; exit 1; }
keep=$INV_KEEP

simdisk_judge inv "$INV_PYLIB
import re
k = '$keep'
loop = open(k + '/where').read().split('loop=')[1].split()[0]
P = sd_params(k + '/rebuilt.full')
bad = sd_replay(k + '/rebuilt.full', P['units'], P['service_ns'], P['bytes_per_s'])
every = sd_read(k + '/rebuilt.full')
print('disk_model', int(bool(bad) or sorted(x[9] for x in every) != list(range(len(every)))),
      '%d requests, %d off the model (1 arm, S %d us, seek %d-%d us, %d MB/s)'
      % (len(every), len(bad), P['service_ns'] / 1000, P['seek_min_ns'] / 1000,
         P['seek_max_ns'] / 1000, P['bytes_per_s'] / 1e6))
blocks = {}
for s in ('fragmented', 'rebuilt'):
    m = re.search(r'Blocks/Record:\s+([0-9.]+)', open('%s/%s.myisamchk' % (k, s)).read())
    blocks[s] = float(m.group(1)) if m else None
print('table', int(blocks != dict(fragmented=2.0, rebuilt=1.0)),
      'myisamchk: %s blocks a row fragmented, %s rebuilt' % (blocks['fragmented'], blocks['rebuilt']))

def cls(b):
    # truestat's classes: powers of two, 0 alone
    return 0 if b == 0 else 1 << (b.bit_length() - 1)

def pattern(reqs):
    # the disk's own: reads, per size class, sequential, backward, per seek
    # class, each request against the one before it (in arrival order)
    out = dict(ios=0, seq=0, back=0, size={}, seek={})
    prev = None
    for x in reqs:
        if x[4] == 'R':
            out['ios'] += 1
            out['size'][cls(x[6])] = out['size'].get(cls(x[6]), 0) + 1
            if prev is not None:
                d = x[5] - prev
                out['seq'] += d == 0
                out['back'] += d < 0
                out['seek'][cls(abs(d))] = out['seek'].get(cls(abs(d)), 0) + 1
        prev = x[5] + x[6]
    return out

for s in ('fragmented', 'rebuilt'):
    p = '%s/%s' % (k, s)
    t = totals(p + '.json')
    d = dev(t, loop)
    inv_window_counts(s, d, p)
    win = re.search(r'totals from ([0-9.]+) to ([0-9.]+) s', open(p + '.json.err').read())
    t0, t1 = float(win.group(1)) * 1e9, float(win.group(2)) * 1e9
    reqs = sorted((x for x in sd_read(p + '.log') if x[4] in 'RW'), key=lambda x: x[9])
    lo = pattern([x for x in reqs if t0 <= x[0] and x[3] <= t1])
    hi = pattern(reqs)
    pr = d['pattern']['read']
    mine = dict(ios=pr['ios'], seq=pr['sequential'], back=pr['backward'],
                size=dict((c['from_bytes'], c['ios']) for c in pr['sizes']),
                seek=dict((0 if c['below_bytes'] == 1 else c['from_bytes'], c['ios']) for c in pr['seek']))
    for key in ('ios', 'seq', 'back'):
        print('%s_%s' % (s, key), int(not lo[key] <= mine[key] <= hi[key]),
              '%s: --pattern %s %d, the disk\'s log %d inside the window, %d in the step'
              % (s, key, mine[key], lo[key], hi[key]))
    # truestat's own finding: random-reads on the fragmented table, its
    # share of reads gone on a stream the disk's (sd_stream_bounds: its
    # reads through the same stream heads, inside the window and over the
    # step; JSON rounds to 6 decimals), none once rebuilt
    rr = [f for f in t['findings'] if f['device'] == loop and f['id'] == 'random-reads']
    if s == 'fragmented':
        sh = dict((x['name'], x['value']) for x in rr[0]['figures'])['in_stream_share'] if rr else -1
        slo, shi = sd_stream_bounds(reqs, t0, t1)
        print('fragmented_finding', int(not slo - 5e-7 <= sh <= shi + 5e-7),
              'random-reads %s, share gone on a stream %.3f; the disk\'s log: %.3f to %.3f'
              % ('stated' if rr else 'not stated', sh, slo, shi))
    else:
        print('rebuilt_no_finding', int(bool(rr)), 'random-reads not stated once rebuilt%s'
              % (': ' + rr[0]['sentence'] if rr else ''))
    for key in ('size', 'seek'):
        off = [c for c in set(mine[key]) | set(hi[key])
               if not lo[key].get(c, 0) <= mine[key].get(c, 0) <= hi[key].get(c, 0)]
        print('%s_%s' % (s, key), int(bool(off)),
              '%s: %d %s classes, each between the disk\'s inside the window and in the step%s'
              % (s, len(set(mine[key]) | set(hi[key])), key,
                 '; not: ' + ', '.join('%d: %d in [%d, %d]' % (c, mine[key].get(c, 0), lo[key].get(c, 0),
                                       hi[key].get(c, 0)) for c in sorted(off)) if off else ''))
"
# Ctrl-C in the middle of a scan: status 130, nothing left behind
kc=$keep/ctrl-c
interrupt_at 'the table fragmented' "$keep.c.out" "$TS_ROOT/scripts/investigate.sh" --quick --keep "$kc" 002
left=$(simdisk_left_behind "$kc/where" 2>&1 || true)
check ctrl_c "$( ((INT_RC == 130)) && [[ -z $left ]]; echo $?)" \
	"Ctrl-C while scanning: status $INT_RC (130), nothing left behind${left:+: $(paste -sd ';' <<<"$left")}"

# a database server of someone else's: refused, left running
mkdir "$keep/other"
cp "$(command -v sleep)" "$keep/other/mariadbd"
"$keep/other/mariadbd" 300 &
other=$!
on_exit "kill $other 2>/dev/null"
check_refuses db_running "a database server runs on this host already" "$TS_ROOT/scripts/investigate.sh" 002
check db_left_alone "$(kill -0 "$other" 2>/dev/null; echo $?)" "the other server (pid $other) still runs"
finish
