#!/usr/bin/env bash
# -p: a row per partition, of the I/O the kernel counts under it. A loop
# device with two partitions and a 1 MiB gap between them (a bio merged
# into a request of the partition it touches would count under the
# other's number only at a shared boundary), mq-deadline so that merges
# happen. fio on both at once: p1 random 4 KiB reads and 4 KiB writes of
# two jobs interleaved 4 KiB apart (merges), p2 random writes and
# sequential reads. Per partition and direction, ios + missed, bytes / 512
# and merges equal the deltas of that partition's own /proc/diskstats
# line over the same window, exactly, and the disk's rows still equal the
# disk's line. Three runs: tp_btf, the raw_tp fallback, and the programs
# for kernels before 5.12 (TRUESTAT_TEST_LOCKED). --partitions=nosuch is
# refused with one line and exit 2.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need fio sfdisk partx python3

err=$(mktemp /tmp/truestat-test.XXXXXX)
on_exit "rm -f $err"
rc=0
"$TRUESTAT" --partitions=nosuch 1 1 >/dev/null 2>"$err" || rc=$?
check_cmd bad_list "exit $rc, stderr: $(head -c 200 "$err")" \
	eval '[[ $rc == 2 && $(wc -l <"$err") == 1 ]] && grep -q nosuch "$err"'

LOOP_FLAGS=-P loop_new 128
dev=$LOOP
# sectors: p1 2048-51199, a 1 MiB gap, p2 53248-102399
printf 'label: dos\nstart=2048, size=49152, type=83\nstart=53248, size=49152, type=83\n' |
	sfdisk -q "/dev/$dev" >/dev/null
partx -u "/dev/$dev" 2>/dev/null || true # sfdisk's re-read does not always add them
wait_for "" "$START_GUARD" test -e "/sys/class/block/${dev}p2" || true # checked below
p1=${dev}p1 p2=${dev}p2
check_cmd partitions_exist "/sys/class/block/$p1 and $p2 exist" \
	test -e "/sys/class/block/$p1" -a -e "/sys/class/block/$p2"
queue_set "$dev" scheduler mq-deadline
queue_set "$dev" nomerges 0

# a listed partition on a disk -d leaves out is named, not silently empty
loop_new 16
rc=0
"$TRUESTAT" -d "$LOOP" -p="$p1" 0.1 1 >/dev/null 2>"$err" || rc=$?
check_cmd untraced_said "exit $rc, stderr: $(grep -m1 -- --partitions "$err" || echo none)" \
	eval '[[ $rc == 0 ]] && grep -q "truestat: --partitions: $p1 is on $dev, which -d does not trace" "$err"'

workload() {
	fio --output=/dev/null --direct=1 --ioengine=libaio --bs=4k \
		--runtime=2 --time_based \
		--name=p1_randread --filename="/dev/$p1" --rw=randread --iodepth=8 \
		--name=p1_write --filename="/dev/$p1" --rw=write --iodepth=64 \
		--numjobs=2 --offset_increment=4k \
		--name=p2_randwrite --filename="/dev/$p2" --rw=randwrite --iodepth=8 \
		--name=p2_read --filename="/dev/$p2" --rw=read --iodepth=16
}

for kind in tp_btf raw_tp locked; do
out=$(mktemp /tmp/truestat-test.XXXXXX)
on_exit "rm -f $out $out.err"
ts_start_as "$kind" "$out" -d "$dev" -p
b_disk=$(diskstats "$dev") b1=$(diskstats "$p1") b2=$(diskstats "$p2")
workload
a_disk=$(diskstats "$dev") a1=$(diskstats "$p1") a2=$(diskstats "$p2")
ts_stop INT

check_lines < <(py "
t = dev(totals('$out'), '$dev')
def delta(b, a):
    return [int(y) - int(x) for x, y in zip(b.split(), a.split())]
# diskstats fields (0-based): ios, merges, sectors per direction
fields = {'read': (0, 1, 2), 'write': (4, 5, 6), 'discard': (11, 12, 13)}
rows = {p['partition']: p for p in t.get('partitions', [])}
print('${kind}_rows', int(sorted(rows) != ['$p1', '$p2']), 'partition rows: %s' % sorted(rows))
merged = 0
for name, d in (('$p1', delta('$b1', '$a1')), ('$p2', delta('$b2', '$a2'))):
    ops = rows.get(name, {}).get('ops', {})
    for op, (fi, fm, fs) in fields.items():
        if fs >= len(d):
            continue
        o = ops.get(op, {})
        n, m = o.get('ios', 0) + o.get('missed', 0), o.get('merges', 0)
        s = (o.get('bytes', 0) + o.get('missed_bytes', 0)) / 512
        merged += m
        print('${kind}_%s_%s' % (name, op), int((n, s, m) != (d[fi], d[fs], d[fm])),
              '%s %s: truestat %d ios+missed, %d sectors (with missed), %d merges; diskstats %d, %d, %d (exact)'
              % (name, op, n, s, m, d[fi], d[fs], d[fm]))
    # flushes count under the whole disk only
    print('${kind}_%s_no_flush' % name, int(len(d) > 14 and d[14] != 0),
          '%s: %s flushes in diskstats' % (name, d[14] if len(d) > 14 else 'no field'))
print('${kind}_merges_seen', int(merged == 0), '%d merges in the partitions' % merged)
d = delta('$b_disk', '$a_disk')
r, w = t['ops'].get('read', {}), t['ops'].get('write', {})
n = r.get('ios', 0) + r.get('missed', 0)
print('${kind}_disk_reads', int(n != d[0]), '$dev reads: truestat %d, diskstats %d' % (n, d[0]))
n = w.get('ios', 0) + w.get('missed', 0) + w.get('unissued', 0)
print('${kind}_disk_writes', int(n != d[4]), '$dev writes: truestat %d, diskstats %d' % (n, d[4]))
m = sum(t['ops'].get(op, {}).get('merges', 0) for op in ('read', 'write'))
print('${kind}_disk_merges', int(m != d[1] + d[5]), '$dev merges: truestat %d, diskstats %d' % (m, d[1] + d[5]))
")
check_schema "${kind}_schema" "$out"
done
finish
