#!/usr/bin/env bash
# scripts/investigate.sh 004, the lightest investigation (a cloud volume's
# tipping point: sysbench fileio at 1, 4, 16 and 64 threads on ext4 over a
# simulated volume capped at 1,000 IOPS, --quick), run to the end with its
# raw material kept, and judged against the volume's own log and the
# kernel's counts:
#  - it ends with status 0 and prints a row per thread count, knee.sh's
#    tipping point and truestat's findings, and leaves nothing behind (daemon,
#    mounts, loop device, files, truestat, sysbench, BPF programs), also
#    after Ctrl-C in the middle; without root or FUSE it refuses in one
#    line;
#  - the volume followed its model, request by request (replayed from its
#    arrivals, with its bucket), and its log holds every request;
#  - per step, truestat's reads and writes + missed equal the volume's
#    log's, and with the unissued (an fsync's empty preflush write, which
#    never reaches the volume) /proc/diskstats', exactly, but for preflush
#    writes whose completion went unseen, counted as bios left unseen;
#  - per step, truestat's summed service holds what the volume held (its
#    A..R, inside D..C; less the longest for each unseen completion);
#  - the tipping point truestat's figures give (the most threads whose mean
#    Q->C stays below 50 ms there and below) is the one the volume's own
#    log gives (its mean A..R per step by the same rule);
#  - truestat's own finding over all the steps (one truestat -D) is
#    capped-volume, its rate the cap the volume logged within 1/16.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/simdisk.sh"
. "$(dirname "$0")/../lib/investigate.sh"
need fio python3 fusermount3 sysbench iostat mkfs.ext4 bpftool setpriv unshare

inv_run 004 300 '^ +(1|4|16|64)  \|' 4 'tipping point: ' || { finish; exit 1; }
keep=$INV_KEEP

simdisk_judge inv "
import re
k, loop = '$keep', open('$keep/where').read().split('loop=')[1].split()[0]
P = sd_params(k + '/t64.full')
bad = sd_replay(k + '/t64.full', P['units'], P['service_ns'])
every = sd_read(k + '/t64.full')
print('volume_model', int(bool(bad) or sorted(x[9] for x in every) != list(range(len(every)))),
      '%d requests, %d off the model (%d units, S %d us, %d IOPS)'
      % (len(every), len(bad), P['units'], P['service_ns'] / 1000, P['iops']))
tip = dict(ts=None, disk=None)
stop = dict(ts=False, disk=False)
for n in (1, 4, 16, 64):
    s = '%s/t%d' % (k, n)
    d = dev(totals(s + '.json'), loop)
    ds0 = [int(x) for x in open(s + '.ds0').read().split()]
    ds1 = [int(x) for x in open(s + '.ds1').read().split()]
    reqs = [x for x in sd_read(s + '.log') if x[4] in 'RW']
    # diskstats counts an fsync's empty preflush write, which never reaches
    # the volume: truestat's unissued; one whose completion went unseen is
    # left as a bio (a stale bio when its address comes back, else still in
    # the OS queue at the end: 10-counts-vs-diskstats), the only shortfall
    unseen = d['events'].get('stale_bios', 0) + d['os_queue']['now']
    for op, got, nk, _, _, _ in tj.against_diskstats(d['ops'], ds0, ds1, lambda: 0):
        o = d['ops'].get(op, {})
        # the volume logs reads and writes (a flush it answers at once)
        log = sum(1 for x in reqs if x[4] == op[0].upper()) if op in ('read', 'write') else None
        vol = o.get('ios', 0) + o.get('missed', 0)
        slack = unseen if op == 'write' else 0
        print('t%d_%s_count' % (n, op), int(not 0 <= nk - got <= slack or log not in (None, vol)),
              '%d threads, %s: %d + %d missed + %d unissued, diskstats %d (%d bios left unseen); '
              'the first two, the volume %s' % (n, op, o.get('ios', 0), o.get('missed', 0),
              o.get('unissued', 0), nk, slack, 'logs none' if log is None else log))
    rw = [d['ops'][op] for op in ('read', 'write') if op in d['ops']]
    ra = [x[3] - x[0] for x in reqs]
    missed = sum(o['missed'] for o in rw)
    mine = sum(o['ios'] * o['service_ms'] for o in rw) * 1e6
    held = sum(ra) - missed * max(ra)
    print('t%d_service' % n, int(not held <= mine),
          '%d threads: service summed %.1f ms >= the volume\'s A..R %.1f ms (%d requests, %d unseen)'
          % (n, mine / 1e6, held / 1e6, len(ra), missed))
    queued = sum(o['queued_ios'] for o in rw)
    total = sum(o['queued_ios'] * o['total_ms'] for o in rw) / queued
    disk = sum(ra) / len(ra) / 1e6
    print('# %d threads: mean Q->C %.3f ms (truestat), mean A..R %.3f ms (the volume)' % (n, total, disk))
    for who, v in (('ts', total), ('disk', disk)):
        stop[who] = stop[who] or v >= 50
        if not stop[who]:
            tip[who] = n
# truestat's own conclusion over the steps (one truestat -D over all):
# the volume's limit at the cap it logged, within a histogram bucket (a
# row's IOPS is its mean depth over a mean service of bucket middles):
# capped-volume when two depth classes beyond the knee got evidence, else
# waiting-in-device at the knee (how many classes do rests on the host's
# pace through the steps), one of them, never both
F = [f for f in totals(k + '/curve.json')['findings'] if f['device'] == loop]
cv = next((f for f in F if f['id'] == 'capped-volume'), None)
wd = next((f for f in F if f['id'] == 'waiting-in-device'), None)
fig = lambda f: dict((x['name'], x['value']) for x in f['figures'])
rate = fig(cv)['rate_iops'] if cv else fig(wd).get('iops_at_knee', -1) if wd else -1
said = 'capped-volume' if cv else 'waiting-in-device' if wd else 'neither'
cap = 1e9 / P['interval_ns']
print('finding_capped', int(not cap / 1.0625 <= rate <= cap * 1.0625 or bool(cv and wd)),
      '%s, its rate %.1f IOPS; the volume\'s cap %.1f (a token every %d ns), within 1/16 (findings: %s)'
      % (said, rate, cap, P['interval_ns'], [f['id'] for f in F]))
print('tipping_point', int(tip['ts'] != tip['disk'] or tip['ts'] is None),
      'below 50 ms up to %s threads by truestat\'s mean Q->C, %s by the volume\'s mean A..R'
      % (tip['ts'], tip['disk']))
"
# Ctrl-C as the first step starts (volume, file system and files made,
# truestat attaching): status 130, nothing left behind
kc=$keep/ctrl-c
interrupt_at '1 thread(s)' "$keep.c.out" "$TS_ROOT/scripts/investigate.sh" --quick --keep "$kc" 004
rc=$INT_RC
left=$(simdisk_left_behind "$kc/where" 2>&1 || true)
check ctrl_c "$( ((rc == 130)) && [[ -z $left ]]; echo $?)" \
	"Ctrl-C at 1 thread: status $rc (130), nothing left behind${left:+: $(paste -sd ';' <<<"$left")}"

# bad input: not root (a copy anyone can read), no FUSE, no such
# investigation: one line, status 1 (2 for bad usage)
public_copy investigate.sh
check_refuses not_root "needs root" setpriv --reuid=65534 --regid=65534 --clear-groups "$PUBLIC" 004
empty=$(mktemp /tmp/truestat-test.XXXXXX)
on_exit "rm -f '$empty'"
check_refuses no_fuse "FUSE" unshare -m sh -c "mount --bind $empty /dev/fuse && exec $TS_ROOT/scripts/investigate.sh 004"
rc=0
"$TS_ROOT/scripts/investigate.sh" 003 >"$keep/no_such.out" 2>"$keep/no_such.err" || rc=$?
check no_such "$( ((rc == 2)) && [[ ! -s $keep/no_such.out && $(wc -l <"$keep/no_such.err") == 1 ]]; echo $?)" \
	"investigate.sh 003: status $rc, $(wc -l <"$keep/no_such.err") line: $(head -1 "$keep/no_such.err")"
finish
