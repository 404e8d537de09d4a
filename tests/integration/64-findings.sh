#!/usr/bin/env bash
# Findings (doc/diagnosis.md) on simulated disks whose truth is known
# (tests/simdisk: K units, S per request, a rate cap, a flush cost, slow
# requests; tests/lib/simdisk.sh): for each finding a run where it must be
# stated and one where it must not, one truestat run (-D) per case over one
# fio run of a few seconds. A load that rises in steps (fio jobs that start
# later) is what lets the depth curve find a device's parallelism; a steady
# load shows one depth class. Each finding's figures are held to what the
# disk logged of the same requests or to its configuration:
#  - serial_step (K = 1, S = 2 ms; 1 reader, then 8): waiting-in-device
#    or capped-volume (one of them: a class beyond the 8 readers' gets
#    evidence only from a dropped completion's overcount), its knee the
#    class holding K or the next, its IOPS there (or its rate) at most
#    K/S, the reads' service at least the disk's mean A..R; not
#    busy-not-full, not waiting-in-os (the OS queue held nothing:
#    scheduler none, 128 tags);
#  - deep_start (the same disk; 8 at once from the start, a 9th from 1 s):
#    the waiting-in-device note, since the disk's log shows it never
#    held fewer than 5 long enough to measure a wait against; the
#    parallelism it gives as an upper bound at least K, its IOPS there
#    at most K/S; not busy-not-full;
#  - light (the same disk at a tenth of K/S): no finding at all, and the
#    disk's log says it was busy less than a fifth of the time (also the
#    control of slow-not-busy: every request takes S);
#  - headroom (K = 4, S = 4 ms; 1 reader, then short steps to 4 and 16):
#    busy-not-full (or capped-volume short of its limit, the one verdict
#    when a class between the load's gets evidence), its best IOPS (the
#    rate) at most K/S, its IOPS now between the
#    disk's completions over truestat's span and over the disk's own busy
#    time, its headroom within the bounds those give; not
#    waiting-in-device;
#  - random (the same disk, 4 KiB random reads, 4 readers, --pattern,
#    truestat's window inside the load by the disk's log):
#    random-reads, its share of reads gone on a stream within the bounds
#    the disk's log gives (its reads in arrival order through the same 8
#    stream heads, within truestat's window and over the run), most bytes
#    in reads below 8 KiB (the log: every read 4 KiB); sequential (1 MiB
#    sequential reads, --pattern): no random-reads; interleaved (four
#    sequential 64 KiB readers 64 MiB apart, --pattern): no random-reads,
#    the share gone on a stream within the log's bounds, 4 stream places
#    or more gone on;
#  - capped (K = 4, S = 1 ms, capped at 1,000 IOPS; 1, 2, 4, 8, 16
#    readers in steps): capped-volume, its rate at most a bucket (1/16)
#    above the cap the disk logged and below it by at most half a bucket
#    and the share of its class's time that was its step's two ends (a
#    service time each), not waiting-in-device;
#    uncapped (K = 16, S = 4 ms, the same steps): throughput grows at
#    every step, so neither capped-volume nor waiting-in-device;
#  - os_queue (K = 16, S = 4 ms, 16 readers, nr_requests 4): waiting-in-os,
#    the device holding no more than the 4 tags (the disk's log: at most 4
#    at once), far below K;
#  - flush (K = 4, S = 1 ms, a flush 5 ms; writes with fsync each):
#    commits-wait-on-flush, its share between the disk's summed flush
#    A..R over the durable writes' time and 1; flush_rare (fsync every 32
#    writes): durable writes under way a small part of the time, none;
#  - group (K = 1, S = 2 ms, a flush 8 ms; 4 writers, fdatasync each):
#    group commit, fewer flush commands than durable writes:
#    commits-wait-on-flush, its share as flush's; no throughput left;
#  - slow (K = 1, S = 1 ms, every 10th request 30 ms slower; 1 reader):
#    slow-not-busy, its median at depth 1 within a bucket of the disk's
#    median A..R, its mean at least the disk's;
#  - owner (K = 4, S = 2 ms, --by process: one fio at depth 8, one
#    synchronous reader): one-submitter, its requests those fio counted;
#    shared (two fio at depth 4 each, one a little above half by chance):
#    none.
set -euo pipefail
. "$(dirname "$0")/../lib/findings.sh"

# 1. one unit: waiting inside it, or nothing at a tenth of its rate
simdisk_up 1 2000
# shellcheck disable=SC2046 # steps' options, split
run serial_step '' $(steps 2000 1@0 7@1000)
judge serial_step "
# the device past its knee: waiting-in-device, or capped-volume when two
# depth classes beyond the knee have evidence (a serial disk's one unit
# busy looks like a cap, as its sentence says): whether the class above
# the 8 readers' gets any rests on the platform (a completion it drops
# counts the depth one high until repaired), so either is the verdict,
# each held to the disk
w, c = F.get('waiting-in-device'), F.get('capped-volume')
f = fig(w) if w else fig(c) if c else {}
said = 'waiting-in-device' if w else 'capped-volume' if c else 'neither'
print(name + '_device_limit', int(not (w or c) or bool(w and c) or
                                 (w or c)['severity'] != 'high'),
      'the limit inside the device: %s (%s)' % (said, (w or c or {}).get('sentence', [x['id'] for x in t['findings']])))
ra = [x[3] - x[0] for x in reqs if t0 <= x[0] and x[3] <= t1]
par = f.get('parallelism', f.get('from_depth', 0))
print(name + '_knee', int(not K <= par <= 2 * K),
      'knee at %d requests: the class holding the disk\'s %d unit or the next' % (par, K))
rate = f.get('iops_at_knee', f.get('rate_iops', 1e99))
print(name + '_knee_iops', int(not rate <= iops_cap()),
      '%s %.1f <= K/S %.1f (+1/32)' % ('IOPS at the knee' if w else 'the rate', rate, iops_cap()))
svc = d['ops']['read']['service_ms']
print(name + '_service', int(not svc * 1e6 >= sum(ra) / len(ra)),
      'service %.3f ms >= the disk\'s mean A..R %.3f ms inside the window'
      % (svc, sum(ra) / len(ra) / 1e6))
hasnt('busy-not-full')
hasnt('waiting-in-os')
"
# 8 at once from the first request (one submitter, libaio), then a 9th
run deep_start '' --name=deep --ioengine=libaio --iodepth=8 --runtime=2 \
	--name=ninth --startdelay=1000ms --runtime=1
judge deep_start "
f = has('waiting-in-device', 'cannot_tell')
# requests that reached the disk with fewer than 4 others in it: the
# depths the note says were never seen long enough (the curve: 50)
import bisect
A, R = sorted(x[0] for x in reqs), sorted(x[3] for x in reqs)
shallow = sum(1 for x in reqs if t0 <= x[0] <= t1 and
              bisect.bisect_left(A, x[0]) - bisect.bisect_right(R, x[0]) < 4)
print(name + '_shallow', int(not shallow < 50),
      'the disk\'s log: %d requests arrived with fewer than 4 others in it (< 50)' % shallow)
par = f.get('parallelism_at_most', 0)
print(name + '_at_most', int(not K <= par), 'parallelism at most %d: at least the disk\'s %d unit' % (par, K))
print(name + '_knee_iops', int(not f.get('iops_at_knee', 1e99) <= iops_cap()),
      'IOPS at the knee %.1f <= K/S %.1f (+1/32)' % (f.get('iops_at_knee', -1), iops_cap()))
hasnt('busy-not-full')
"
run light '' --name=light --rate_iops=50 --runtime=2
judge light "
busy = Sd([x for x in reqs if t0 <= x[0] and x[3] <= t1]).busy / (t1 - t0)
print(name + '_load', int(not busy < 0.2), 'the disk was busy %.1f%% of the window' % (100 * busy))
print(name + '_none', int(bool(F) or any(s['device'] == '$SIMDISK_LOOP' for s in t['findings_skipped'])),
      'no finding, none skipped: %s' % ([f['sentence'] for f in F.values()] or 'none'))
"
simdisk_down

# 2. four units of 4 ms: capacity left, random and sequential reads
simdisk_up 4 4000
# shellcheck disable=SC2046
run headroom '' $(steps 4000 1@0 3@3600 12@3800)
judge headroom "
# busy-not-full, or capped-volume short of its limit: the one verdict when
# two depth classes beyond the knee have evidence (the 12 readers' 9-16
# and, when a dropped completion counts the depth one high for long
# enough, 5-8), the throughput left its rate over the IOPS now
b, c = F.get('busy-not-full'), F.get('capped-volume')
short = c and 'short of it' in c['sentence']
print(name + '_throughput_left', int(not (b and b['severity'] == 'medium' or short) or bool(b and c)),
      'throughput left: %s' % ((b or c)['sentence'] if b or short else
                               'not stated (findings: %s)' % [x['id'] for x in t['findings']]))
f = fig(b) if b else fig(c) if short else {}
if short:
    f = dict(iops_now=f['iops_now'], iops_best=f['rate_iops'], headroom=f['rate_iops'] / f['iops_now'])
inner = [x for x in reqs if t0 <= x[0] and x[3] <= t1]
L = Sd(inner)
n = len(reqs)
# truestat's busy time holds the disk's (A..R inside D..C) and lies within
# its span; the completions it timed are the disk's less those it missed,
# and a missed completion's repair may take up to unsure_ms off its busy
# time (the depth left at an estimated end)
m = d['all']['missed']
unsure = d['concurrency']['unsure_ms'] * 1e6
now_lo, now_hi = (n - m) / ((t1 - t0) / 1e9), n / (max(L.busy - unsure, 1) / 1e9)
now, best, head = f.get('iops_now', -1), f.get('iops_best', 1e99), f.get('headroom', -1)
print(name + '_best', int(not best <= iops_cap()), 'best IOPS %.1f <= K/S %.1f (+1/32)' % (best, iops_cap()))
print(name + '_now', int(not now_lo - 1e-6 <= now <= now_hi + 1e-6),
      'IOPS now %.1f: between %d requests over the window %.1f and over the disk\'s busy time less truestat\'s unsure time %.1f'
      % (now, n, now_lo, now_hi))
print(name + '_headroom', int(not 1.2 <= head <= iops_cap() / now_lo),
      'headroom %.2f: >= 1.2, <= K/S / the IOPS over the window %.2f' % (head, iops_cap() / now_lo))
hasnt('waiting-in-device')
"
# inside the load: random-reads needs a busy device, and its absence means
# something only where the device was as busy (about 2 s of the disk's
# requests each: 1,000 a second with 4 readers, 250 with one)
run_within random --pattern 64 2000 --name=random --numjobs=4
run_within sequential --pattern 64 500 --name=seq --rw=read --bs=1m
run_within interleaved --pattern 64 2000 --name=inter --rw=read --bs=64k \
	--numjobs=4 --offset_increment=64m --size=64m
judge random "
f = has('random-reads', 'medium')
lo, hi = sd_stream_bounds(reqs, t0, t1)
s = f.get('in_stream_share', -1)
# the finding's figure has 6 decimals
print(name + '_in_stream', int(not lo - 5e-7 <= s <= hi + 5e-7),
      'share gone on a stream %.4f; the disk\'s log, its reads in arrival order through %d stream heads: %.4f to %.4f'
      % (s, SD_STREAMS, lo, hi))
sizes = set(x[6] for x in reqs)
print(name + '_sizes', int(not (sizes == {4096} and f.get('most_bytes_below') == 8192)),
      'most bytes below %s; the disk was given reads of %s bytes' % (f.get('most_bytes_below'), sorted(sizes)))
"
judge sequential "hasnt('random-reads')"
judge interleaved "
hasnt('random-reads')
p = d['pattern']['read']
lo, hi = sd_stream_bounds(reqs, t0, t1)
# the JSON's share has 4 decimals
print(name + '_in_stream', int(not lo - 5e-5 <= p['in_stream_share'] <= hi + 5e-5),
      'four sequential readers at once: %.4f of the reads went on a stream; the disk\'s log: %.4f to %.4f'
      % (p['in_stream_share'], lo, hi))
print(name + '_streams', int(p['streams'] < 4), '%d stream places gone on, for 4 readers' % p['streams'])
"
simdisk_down

# 3. a volume capped at 1,000 IOPS, a disk of 16 units without a cap
SIMDISK_IOPS=1000 simdisk_up 4 1000
# shellcheck disable=SC2046
run capped '' $(steps 2500 1@0 1@500 2@1000 4@1500 8@2000)
judge capped "
f = has('capped-volume', 'high')
cap = 1e9 / P['interval_ns']
r = f.get('rate_iops', -1)
# the rate is the deepest class's, by Little over its requests and its
# time: its service from bucket middles (1/32), and its time holding the
# step's first and last requests, issued or ended at shallower depths:
# at most one service time each end of the step (the last, 500 ms)
w = f.get('service_last_ms', 0) / 1e3
slack = 1 / 32 + 2 * w / 0.5
print(name + '_rate', int(not cap * (1 - slack) <= r <= cap * 1.0625),
      'rate %.1f IOPS, the cap the disk logged %.1f (a token every %d ns): at most 1/16 above, at most %.1f%% below '
      '(1/32 and two of the class\'s %.1f ms over its 500 ms step)' % (r, cap, P['interval_ns'], 100 * slack, w * 1e3))
hasnt('waiting-in-device')
"
simdisk_down
simdisk_up 16 4000
# shellcheck disable=SC2046
run uncapped '' $(steps 2500 1@0 1@500 2@1000 4@1500 8@2000)
judge uncapped "
hasnt('capped-volume')
hasnt('waiting-in-device')
"
queue_set "$SIMDISK_LOOP" nr_requests 4
run os_queue '' --name=os --numjobs=16 --runtime=2
judge os_queue "
f = has('waiting-in-os', 'high')
held = Sd([x for x in reqs if x[4] in 'RW']).held_max
c = f.get('concurrency', 99)
print(name + '_device', int(not (held <= 4 and c <= 4 and c < K)),
      'the device held %.2f at once, the disk at most %d: within the 4 tags, below its %d units'
      % (c, held, K))
hasnt('waiting-in-device')
"
simdisk_down

# 4. durable writes whose flush costs 5 ms
SIMDISK_FSYNC=5000 simdisk_up 4 1000
run flush '' --name=flush --rw=randwrite --fsync=1 --runtime=2
judge flush "flush_share_held(has('commits-wait-on-flush', 'high'))"
run flush_rare '' --name=flush --rw=randwrite --fsync=32 --runtime=2
judge flush_rare "hasnt('commits-wait-on-flush')"
simdisk_down

# 4b. group commit: four writers, fdatasync after each write, on one unit
# whose flush costs 8 ms: a flush runs while the others' preflushes wait,
# and blk-flush serves those with one flush (fewer flush commands than
# durable writes, by construction), which is in each one's time
SIMDISK_FSYNC=8000 simdisk_up 1 2000
run group '' --name=group --rw=randwrite --fdatasync=1 --numjobs=4 --runtime=3
judge group "
flush_share_held(has('commits-wait-on-flush', 'high'))
s, fl = d['sync'], d['ops'].get('flush', {'ios': 0})
print(name + '_merged', int(not 0 < fl['ios'] < s['ios']),
      '%d flush commands for %d durable writes' % (fl['ios'], s['ios']))
concludes_not('busy-not-full')
"
simdisk_down

# 5. every tenth request 30 ms slower
SIMDISK_SLOW=10:30000 simdisk_up 1 1000
run slow '' --name=slow --runtime=2 "${SIMDISK_FIO_PCT[@]}"
judge slow "
f = has('slow-not-busy', 'high')
ra = sorted(x[3] - x[0] for x in reqs if t0 <= x[0] and x[3] <= t1)
p50 = pct_of(ra, (len(ra) + 1) // 2)
# fio's latency (submit..reap) holds each D..C: its median, a rank further
# for each completion truestat missed, bounds truestat's from above
fr = json.load(open('$tmp/slow.fio'))['jobs'][0]['read']
top = fio_pct(fr, min(1.0, 0.5 + (d['all']['missed'] + 1.0) / fr['total_ios']))
print(name + '_median', int(not p50 / 1.0625 <= f.get('p50_depth1_ms', -1) * 1e6 <= top * 1.0625),
      'median at depth 1 %.3f ms: the disk\'s median A..R %.3f ms, fio\'s %.3f ms (a bucket either way)'
      % (f.get('p50_depth1_ms', -1), p50 / 1e6, top / 1e6))
print(name + '_mean', int(not f.get('service_depth1_ms', -1) * 1e6 >= sum(ra) / len(ra) / 1.03125),
      'mean at depth 1 %.3f ms >= the disk\'s mean A..R %.3f ms (less half a bucket)'
      % (f.get('service_depth1_ms', -1), sum(ra) / len(ra) / 1e6))
"
simdisk_down

# 6. one submitter with most of the device's time, or two sharing it
simdisk_up 4 2000
run owner '--by=process' --name=heavy --ioengine=io_uring --iodepth=8 --runtime=2 \
	--name=light --ioengine=psync --iodepth=1 --runtime=2
judge owner "
f = has('one-submitter', 'low')
jobs = json.load(open('$tmp/owner.fio'))['jobs']
heavy = next(j for j in jobs if j['jobname'] == 'heavy')['read']['total_ios']
n = f.get('ios', -1)
print(name + '_ios', int(not heavy - d['all']['missed'] <= n <= heavy),
      'the submitter\'s requests %d; fio\'s heavy job did %d (%d missed)' % (n, heavy, d['all']['missed']))
"
run shared '--by=process' --name=a --ioengine=io_uring --iodepth=4 --runtime=2 \
	--name=b --ioengine=io_uring --iodepth=4 --runtime=2
judge shared "hasnt('one-submitter')"
simdisk_down
finish
