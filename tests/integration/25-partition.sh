#!/usr/bin/env bash
# -d with a partition traces its whole disk, says so on stderr, and counts
# the partition's I/O as the disk's (checked against /proc/diskstats).
# The partition's every bio fires block_bio_remap, but no traced disk is
# stacked: truestat holds no link to it (the kernel's /proc/PID/fdinfo of
# its links names their tracepoints) and -v says it is not followed.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need fio sfdisk partx python3

LOOP_FLAGS=-P loop_new 64
dev=$LOOP
echo ",,L" | sfdisk -q "/dev/$dev" >/dev/null
partx -u "/dev/$dev" 2>/dev/null || true # sfdisk's re-read does not always add it
for _ in $(seq 50); do [[ -e /sys/class/block/${dev}p1 ]] && break; sleep 0.1; done
part=${dev}p1
check_cmd partition_exists "/sys/class/block/$part exists" test -e "/sys/class/block/$part"

out=$(mktemp /tmp/truestat-test.XXXXXX)
on_exit "rm -f $out $out.err"
ts_start "$out" -d "$part"
before=$(diskstats "$dev")
fio --name=part --filename="/dev/$part" --direct=1 --rw=randread --bs=4k \
	--ioengine=libaio --iodepth=4 --runtime=1 --time_based --output=/dev/null
after=$(diskstats "$dev")
links=$(tp_links "$TS_PID")
ts_stop INT
check_cmd remap_unlinked "tracepoints linked: $links" \
	eval '[[ " $links " == *" block_rq_issue "* && " $links " != *" block_bio_remap "* ]]'
check_cmd remap_said "stderr: $(grep -m1 "^truestat: block_bio_remap" "$out.err" || echo none)" \
	grep -q "truestat: block_bio_remap not followed: no traced disk is stacked" "$out.err"
check_cmd note "stderr: $(grep -m1 partition "$out.err" || echo none)" \
	grep -q "truestat: $part is a partition: tracing its disk $dev" "$out.err"
check_lines < <(py "
t = dev(totals('$out'), '$dev')['ops']['read']
b = [int(x) for x in '$before'.split()]
a = [int(x) for x in '$after'.split()]
print('disk_reads', int(t['ios'] + t['missed'] != a[0] - b[0] or t['ios'] == 0),
      'reads on $dev: truestat %d, diskstats %d' % (t['ios'] + t['missed'], a[0] - b[0]))
")
finish
