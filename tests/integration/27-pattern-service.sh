#!/usr/bin/env bash
# --pattern's service time by size against the simulated disk's own log.
# The disk serves each request for S + size / bandwidth (SIMDISK_BW), so
# service depends on size; merges are off on the loop queue (nomerges=2),
# so each request reaches the disk as fio sent it. Two fio jobs at once:
# 4 KiB random reads and 512 KiB sequential reads (the most a loop
# request holds whole: 128 segments of a page; fio's 1 MiB would reach
# the disk as two). Per size class:
#  - completed equals the daemon's count of requests of that size, the
#    completions truestat counted missed (all sizes) aside;
#  - the class's p50 is at least the daemon's p50 of A..R for that size
#    (A..R lies inside D..C), less one histogram bucket (1/16: truestat
#    interpolates within the bucket), and at most fio's latency of the same
#    rank in the job of that size (submit..reap holds D..C), plus one
#    bucket, ranks moved by the missed completions (60-simdisk.sh's rule);
#  - p50 <= p95 <= p99. How much slower the 512 KiB class is than the
#    4 KiB one, against the daemon's size term, is printed, not judged.
# The text output has the service columns on the same rows.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/simdisk.sh"
need fio python3 fusermount3

tmp=$(mktemp -d /tmp/truestat-test.XXXXXX)
on_exit "rm -rf $tmp"

SIMDISK_BW=400 simdisk_up 8 300 256
echo 2 >"/sys/block/$SIMDISK_LOOP/queue/nomerges"
# a 512 KiB request must reach the disk whole
q=/sys/block/$SIMDISK_LOOP/queue
max_kb=$(<"$q/max_sectors_kb") segs=$(<"$q/max_segments")
check whole_512k "$( ((max_kb >= 512 && segs * $(getconf PAGESIZE) >= 512 << 10)); echo $?)" \
	"$SIMDISK_LOOP: max_sectors_kb $max_kb, max_segments $segs (512 KiB whole)"

simdisk_mark
ts_start "$tmp/run.json" --pattern -d "$SIMDISK_LOOP"
fio --filename="/dev/$SIMDISK_LOOP" --direct=1 --ioengine=io_uring \
	--runtime=3 --time_based "${SIMDISK_FIO_PCT[@]}" --output-format=json \
	--output="$tmp/run.fio" \
	--name=small --rw=randread --bs=4k --iodepth=4 \
	--name=large --rw=read --bs=512k --iodepth=2
ts_stop INT
simdisk_save "$tmp/run"
check run_exit "$TS_RC" "truestat ended with status $TS_RC"

simdisk_judge svc "
L = 512 << 10
reqs = sd_read('$tmp/run.log')
d = dev(totals('$tmp/run.json'), '$SIMDISK_LOOP')
p = d['pattern']['read']
missed = d['ops']['read']['missed']
jobs = dict((j['jobname'], j['read']) for j in json.load(open('$tmp/run.fio'))['jobs'])
rows = dict((s['from_bytes'], s) for s in p['sizes'])
by_size = {}
for x in reqs:
    if x[4] == 'R':
        by_size.setdefault(x[6], []).append(x[3] - x[0])
ms = lambda ns: ns / 1e6
print('svc_sizes', int(sorted(by_size) != [4096, L]),
      'the daemon saw read sizes %s (4096 and 512 KiB only: nomerges=2)' % sorted(by_size))
# completions: per class at most the daemon's, all classes short of it by
# exactly the missed completions
short = 0
for size in sorted(by_size):
    r = rows.get(size, {})
    n = len(by_size[size])
    c = r.get('completed')
    short += n - (c or 0)
    print('svc_completed_%d' % size, int(c is None or not n - missed <= c <= n),
          '%d bytes: completed %s, the daemon logged %d (missed completions %d); ios at issue %s'
          % (size, c, n, missed, r.get('ios')))
print('svc_completed_sum', int(short != missed),
      'the daemon logged %d more than truestat completed, truestat counted %d missed' % (short, missed))
for size, job in ((4096, 'small'), (L, 'large')):
    r = rows.get(size, {})
    s = r.get('service_ms')
    if not s:
        print('svc_p50_%d' % size, 1, 'no service figures for %d bytes: %s' % (size, r))
        continue
    ra = sorted(by_size[size])
    n = r['completed']
    k = math.ceil(0.5 * n)
    lo = pct_of(ra, k) / 1.0625
    hi = fio_pct(jobs[job], (k + missed) / float(len(ra))) * 1.0625
    v = s['p50'] * 1e6
    print('svc_p50_%d' % size, int(not lo <= v <= hi),
          '%d bytes: p50 %.3f ms in [%.3f (daemon A..R p50 %.3f less 1/16), %.3f (fio rank %d+%d x 1.0625)]'
          % (size, ms(v), ms(lo), ms(pct_of(ra, k)), ms(hi), k, missed))
    print('svc_order_%d' % size, int(not s['p50'] <= s['p95'] <= s['p99']),
          '%d bytes: p50 %.3f <= p95 %.3f <= p99 %.3f ms' % (size, s['p50'], s['p95'], s['p99']))
P = sd_params('$tmp/run.full')
gap = ((L) - 4096) * 1e9 / P['bytes_per_s']
a, b = rows[4096]['service_ms']['p50'] * 1e6, rows[L]['service_ms']['p50'] * 1e6
print('# p50 of 512 KiB %.3f ms against 4 KiB %.3f ms: the disk adds %.3f ms for the size (not judged)' % (ms(b), ms(a), ms(gap)))
"

check_schema service_schema "$tmp/run.json"

# the text report: the service columns on the 4K and 512K rows
simdisk_mark
"$TRUESTAT" -v --pattern -d "$SIMDISK_LOOP" >"$tmp/text.out" 2>"$tmp/text.err" &
TS_PID=$!
on_exit "kill -9 $TS_PID"
wait_for "$TS_PID" "$START_GUARD" grep -q "attached with" "$tmp/text.err"
fio --filename="/dev/$SIMDISK_LOOP" --direct=1 --ioengine=psync --output=/dev/null \
	--name=small --rw=randread --bs=4k --size=4M \
	--name=large --rw=read --bs=512k --size=8M
ts_stop INT
simdisk_save "$tmp/text"
check_lines < <(py "
import re
txt = open('$tmp/text.out').read()
L, n = 512 << 10, {}
for l in open('$tmp/text.log'):
    x = l.split()
    if x[4] == 'R':
        n[int(x[6])] = n.get(int(x[6]), 0) + 1
m = re.search(r'(\d+) completions never seen', txt)
missed = int(m.group(1)) if m else 0
short = 0
for lo, size in (('4K', 4096), ('512K', L)):
    m = re.search(r'^\s+read\s+%s-\S+\s+(\d+)\s+\S+\s+\S+\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)$' % lo, txt, re.M)
    c = int(m.group(2)) if m else 0
    short += n.get(size, 0) - c
    ok = m and n.get(size, 0) - missed <= c <= n.get(size, 0)
    print('text_row_%s' % lo, int(not ok), 'text row %s: %s (the daemon logged %s, %d completions never seen)'
          % (lo, m.group(0).strip() if m else 'missing', n.get(size), missed))
print('text_completed_sum', int(short != missed), 'the daemon logged %d more than the rows completed, %d never seen' % (short, missed))
")
finish
