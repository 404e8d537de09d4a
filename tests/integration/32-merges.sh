#!/usr/bin/env bash
# Merges under mq-deadline: bios merged into waiting requests (back and
# front) and requests the scheduler merges into others (block_rq_merge)
# leave the OS queue with them. Before block_rq_merge was followed, the
# merged request's first bio stayed counted in the OS queue until its
# address came back ("stale_bios" 11-33 per run here, 9 left in the OS queue
# at the end). fio: 4 jobs of 4 KiB direct writes interleaved 4 KiB apart
# (libaio, iodepth 64), then 64 MiB of buffered writes and an fsync, the
# same interleaved pattern read, and discards likewise (blkdiscard, when
# the loop device takes them).
# Per direction, truestat's merges equal /proc/diskstats' merge fields
# (reads merged, writes merged, discards merged) over the same window,
# exactly: the kernel counts a merge only where one of the three merge
# tracepoints fires, but for a discard bio merged into a multi-range
# discard (queue/max_discard_segments above 1), which has none: on such a
# disk the discard check is a lower bound. Three runs: tp_btf, the raw_tp
# fallback, and the programs for kernels before 5.12 (TRUESTAT_TEST_LOCKED).
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need fio python3

loop_new 256
dev=$LOOP
queue_set "$dev" scheduler mq-deadline
queue_set "$dev" nomerges 0 # a loop device keeps what an earlier user set
for kind in tp_btf raw_tp locked; do
out=$(mktemp /tmp/truestat-test.XXXXXX)
on_exit "rm -f $out $out.err"

case $kind in
raw_tp) ts_start "$out" -d "$dev" --raw-tp ;;
locked) TRUESTAT_TEST_LOCKED=1 ts_start "$out" -d "$dev" ;;
*) ts_start "$out" -d "$dev" ;;
esac
case $kind in
raw_tp) says="attached with raw_tp" ;;
locked) says="before 5.12" ;;
*) says="attached with tp_btf" ;;
esac
check_cmd "${kind}_attached" "$says" grep -q "$says" "$out.err"
before=$(diskstats "$dev")
fio --name=interleaved --filename="/dev/$dev" --direct=1 --rw=write --bs=4k \
	--size=16M --ioengine=libaio --iodepth=64 --numjobs=4 \
	--offset_increment=4k --output=/dev/null
fio --name=buffered --filename="/dev/$dev" --buffered=1 --rw=write --bs=4k \
	--size=64M --ioengine=sync --end_fsync=1 --output=/dev/null
fio --name=interleaved_read --filename="/dev/$dev" --direct=1 --rw=read \
	--bs=4k --size=16M --ioengine=libaio --iodepth=64 --numjobs=4 \
	--offset_increment=4k --output=/dev/null
ranges=$(cat "/sys/block/$dev/queue/max_discard_segments" 2>/dev/null || echo 0)
if [[ $(cat "/sys/block/$dev/queue/discard_max_bytes") != 0 ]]; then
	fio --name=interleaved_trim --filename="/dev/$dev" --rw=trim --bs=4k \
		--size=4M --ioengine=libaio --iodepth=64 --numjobs=4 \
		--offset_increment=4k --output=/dev/null
fi
after=$(diskstats "$dev")
ts_stop INT

check_lines < <(py "
b = [int(x) for x in '$before'.split()]
a = [int(x) for x in '$after'.split()]
t = dev(totals('$out'), '$dev')
w, ev, osq = t['ops'].get('write', {}), t['events'], t['os_queue']
merges = a[5] - b[5]
print('${kind}_merged', int(merges == 0), '%d write merges in diskstats' % merges)
print('${kind}_read_merged', int(a[1] == b[1]), '%d read merges in diskstats' % (a[1] - b[1]))
# diskstats' merge fields: reads 2nd, writes 6th, discards 13th (since 4.18)
fields = {'read': 1, 'write': 5, 'discard': 12}
if len(a) > 11:
    print('# ${kind}: %d discards in diskstats, %d discard ranges a request at most'
          % (a[11] - b[11], $ranges))
for op, i in fields.items():
    if i >= len(a):
        print('# ${kind} %s: no merge field in this kernel\'s diskstats' % op)
        continue
    ts_m, ks_m = t['ops'].get(op, {}).get('merges', 0), a[i] - b[i]
    lower = op == 'discard' and $ranges > 1
    bad = ts_m > ks_m if lower else ts_m != ks_m
    print('${kind}_%s_merges' % op, int(bad), '%s merges: truestat %d, diskstats %d (%s)'
          % (op, ts_m, ks_m, 'a lower bound: multi-range discards' if lower else 'exact'))
flag = t['discard_merges_exact']
print('${kind}_discard_flag', int(flag != ($ranges <= 1)),
      'discard_merges_exact %s, queue/max_discard_segments %d' % (flag, $ranges))
m = t['all']['merges']
s = sum(x.get('merges', 0) for x in t['ops'].values())
print('${kind}_all_merges', int(m != s), 'all: %d merges, the directions %d' % (m, s))
# the fsync's empty preflush write completes without being issued
n = w.get('ios', 0) + w.get('missed', 0) + w.get('unissued', 0)
print('${kind}_counts', int(n != a[4] - b[4]),
      'writes: truestat %d + %d missed + %d unissued, diskstats %d (exact)'
      % (w.get('ios', 0), w.get('missed', 0), w.get('unissued', 0), a[4] - b[4]))
print('${kind}_no_stale_bios', int(ev['stale_bios'] != 0),
      '%d bios found left in the OS queue (stale_bios)' % ev['stale_bios'])
print('${kind}_os_queue_empty', int(osq['now'] != 0), 'OS queue at the end: %d' % osq['now'])
")
done
finish
