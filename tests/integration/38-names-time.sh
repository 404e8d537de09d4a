#!/usr/bin/env bash
# Names, time and units, as iostat -N -t prints them: with -t each
# table's timestamp carries the date, the same as date(1) gives around the
# run; sizes are binary (MiB/s, KiB), checked against /proc/diskstats'
# sectors over a mix of 4 KiB and 64 KiB reads; with -N a device-mapper
# disk is named as under /dev/mapper (a dm-linear device over a loop
# device, where the kernel has device-mapper) and any other disk keeps its
# kernel name.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need fio python3

loop_new 64
dev=$LOOP
make_tmp

# -t: the report's date and time lie between two readings of date(1)
t0=$(date '+%F %T')
"$TRUESTAT" -t -N -d "$dev" 0.2 1 >"$tmp/dated" 2>"$tmp/dated.err" && rc=0 || rc=$?
t1=$(date '+%F %T')
check dated_exit "$rc" "truestat -t -N -d $dev 0.2 1: status $rc"
stamp=$(head -1 "$tmp/dated" | cut -c1-19)
check dated_stamp "$([[ ! $stamp < $t0 && ! $stamp > $t1 ]] && echo 0 || echo 1)" \
	"first line '$(head -1 "$tmp/dated")': $stamp within date(1)'s $t0 .. $t1"
check_cmd undated_default "without -t, the time of day only" \
	bash -c "'$TRUESTAT' -d '$dev' 0.2 1 | head -1 | grep -qE '^[0-9]{2}:[0-9]{2}:[0-9]{2}  interval'"

# -N: a disk that is not device-mapper keeps its kernel name; MiB/s and
# KiB against diskstats' reads and sectors
ts_start "$tmp/plain" -N -d "$dev"
before=$(diskstats "$dev")
fio --name=r --filename="/dev/$dev" --direct=1 --rw=randread \
	--bssplit=4k/50:64k/50 --size=32M --ioengine=libaio --iodepth=4 \
	--output=/dev/null
after=$(diskstats "$dev")
ts_stop INT
check_lines < <(py "
t = totals('$tmp/plain')
print('kernel_name_kept', int([d['device'] for d in t['devices']] != ['$dev']),
      'devices: %s' % [d['device'] for d in t['devices']])
b = [int(x) for x in '$before'.split()]
a = [int(x) for x in '$after'.split()]
ios, nbytes = a[0] - b[0], (a[2] - b[2]) * 512
r = dev(t, '$dev')['ops']['read']
mib = nbytes / t['span_s'] / 2**20
# the JSON's 3 decimals, and span_s's 6 (a relative 1e-6 of the figure)
print('mib_per_s', int(abs(r['mib_per_s'] - mib) > 0.0005 + mib * 1e-6),
      'read: %.3f MiB/s, diskstats %d bytes over %.6f s: %.4f' % (r['mib_per_s'], nbytes, t['span_s'], mib))
kib = nbytes / ios / 1024
print('avg_kib', int(abs(r['avg_kib'] - kib) > 0.05),
      'read: %.1f KiB a request, diskstats %d bytes / %d reads / 1024 = %.3f' % (r['avg_kib'], nbytes, ios, kib))
")

# -N: a dm-linear device over the loop device, by its /dev/mapper name
name=truestat-test-$$
sectors=$(blockdev --getsz "/dev/$dev")
if ! dmsetup create "$name" --table "0 $sectors linear /dev/$dev 0" 2>"$tmp/dm.err"; then
	echo "  # no device-mapper here ($(head -1 "$tmp/dm.err")): -N not checked on a dm disk"
	finish
	exit 0
fi
on_exit "dmsetup remove $name"
udevadm settle 2>/dev/null || true
dm=$(basename "$(readlink -f "/dev/mapper/$name")")
ts_start "$tmp/dm" -N -d "$name"
fio --name=r --filename="/dev/mapper/$name" --direct=1 --rw=randread \
	--bs=4k --size=4M --ioengine=libaio --iodepth=4 --output=/dev/null
ts_stop INT
check_lines < <(py "
t = totals('$tmp/dm')
names = [d['device'] for d in t['devices']]
print('mapper_name', int('$name' not in names or '$dm' in names),
      '$dm as $name: devices %s' % names)
")
finish
