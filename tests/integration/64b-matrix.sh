#!/usr/bin/env bash
# The workload matrix: everyday loads, each with the findings it must state
# and the conclusions it must not draw (doc/diagnosis.md, "Workloads"), on
# the simulated disk (tests/lib/simdisk.sh, tests/lib/findings.sh). The
# loads the findings were built on are 64-findings'; these are the others:
#  - serial_reader (K = 1, S = 2 ms; one random reader): busy, one at a
#    time, nothing wrong: no headroom, no limit, not slow;
#  - mid_load (K = 4, S = 8 ms; 64 readers, truestat started once the disk
#    served 256 of their reads): the device's limit, waiting-in-device
#    (by physics: each read about 64 x S / K = 128 ms in the disk, past
#    any disk's 36.3 ms) or capped-volume; no throughput left stated;
#  - backup_oltp (K = 4, S = 1 ms, 200 MB/s; a 1 MiB sequential reader
#    beside two 4 KiB random readers, --pattern): not fragmentation (most
#    bytes are the scan's), not slow;
#  - mixed_sizes (K = 1, S = 0.5 ms, 100 MB/s; a 4 KiB reader beside a
#    1 MiB writer, each pausing, at depth 1 mostly): not slow (two
#    directions' spreads, not one tail);
#  - log_writer (K = 1, S = 1 ms, a flush 5 ms; one sequential writer,
#    fdatasync each): commits-wait-on-flush;
#  - throttled (K = 4, S = 1 ms; 4 readers in a cgroup held to 100 reads a
#    second above the block layer): the device not the limit, no
#    conclusion about it, and the disk's log busy under a fifth of the
#    time (the throttle held it, by construction: 100 of its 4,000);
#  - bursty (K = 16, S = 1 ms, 500 IOPS with a burst of 500; 1 to 16
#    readers in steps): no throughput left stated;
#  - idle (no I/O): no finding, and the disk in no report or named as
#    too little to conclude in findings_skipped;
#  - filter (K = 4, S = 1 ms; -c on one reader's cgroup beside two
#    readers of another): the device's figures, not the submitter's: any
#    throughput now stated is at least the disk's completions a second.
# Not here: a disk whose speed changes within the run (the simulated
# disk's timing is fixed when it starts).
set -euo pipefail
. "$(dirname "$0")/../lib/findings.sh"

# in_cgroup FILE COMMAND...: COMMAND with its process in the cgroup whose
# member list is FILE (cgroup.procs, or tasks of cgroup v1)
in_cgroup() {
	local file=$1
	shift
	(
		echo "$BASHPID" >"$file"
		"$@"
	)
}

# fio_on NAME ARGS...: fio's random 4 KiB reads on the disk, 2 s
fio_on() {
	local name=$1
	shift
	fio --filename="/dev/$SIMDISK_LOOP" --direct=1 --bs=4k --rw=randread \
		--ioengine=psync --time_based --runtime=2 --output=/dev/null \
		--name="$name" "$@"
}

simdisk_up 1 2000
run serial_reader '' --name=one --runtime=2
judge serial_reader "
for fid in ('busy-not-full', 'capped-volume', 'waiting-in-device', 'slow-not-busy'):
    concludes_not(fid)
"
simdisk_down

# truestat started during the load, as a user would: the disk has served
# 256 of the readers' requests first (its log, not a time)
simdisk_up 4 8000
simdisk_mark
fio --filename="/dev/$SIMDISK_LOOP" --direct=1 --bs=4k --rw=randread \
	--ioengine=psync --name=many --numjobs=64 --runtime=6 --time_based \
	--output=/dev/null &
fio_pid=$!
on_exit "kill $fio_pid"
base=$(simdisk_lines)
wait_for "$fio_pid" "$START_GUARD" test_lines_past $((base + 256))
ts_start "$tmp/mid_load.json" -D -d "$SIMDISK_LOOP"
wait "$fio_pid" || true
ts_stop INT
check mid_load_exit "$TS_RC" "truestat ended with status $TS_RC"
simdisk_save "$tmp/mid_load"
judge mid_load "
# the device's limit: waiting-in-device (by physics, or by a knee when the
# depths the run saw give one), or capped-volume when two deeper classes
# get evidence (a dropped completion's overcount can give one): one of them
w, c = F.get('waiting-in-device'), F.get('capped-volume')
print(name + '_device_limit', int(not (w or c) or bool(w and c) or (w or c)['severity'] != 'high'),
      'the limit inside the device: %s' % ((w or c or {}).get('sentence') or [x['id'] for x in t['findings']]))
ra = [x[3] - x[0] for x in reqs if t0 <= x[0] and x[3] <= t1]
svc = d['ops']['read']['service_ms']
print(name + '_service', int(not svc * 1e6 >= sum(ra) / len(ra) / 1.03125 or not svc > 36.3),
      'reads %.1f ms each in the device >= the disk\'s mean A..R %.1f ms (less half a bucket) and past any disk\'s 36.3 ms'
      % (svc, sum(ra) / len(ra) / 1e6))
concludes_not('busy-not-full')
"
simdisk_down

SIMDISK_BW=200 simdisk_up 4 1000
run backup_oltp --pattern --name=backup --rw=read --bs=1m --runtime=2 \
	--name=oltp --numjobs=2 --offset=128m --runtime=2
judge backup_oltp "
concludes_not('random-reads')
concludes_not('slow-not-busy')
"
simdisk_down

SIMDISK_BW=100 simdisk_up 1 500
run mixed_sizes '' --name=small --thinktime=2000 --runtime=3 \
	--name=big --rw=randwrite --bs=1m --thinktime=20000 --runtime=3
judge mixed_sizes "concludes_not('slow-not-busy')"
simdisk_down

SIMDISK_FSYNC=5000 simdisk_up 1 1000
run log_writer '' --name=log --rw=write --fdatasync=1 --runtime=2
judge log_writer "has('commits-wait-on-flush', 'high')"
simdisk_down

# a cgroup held to 100 reads a second: io.max where the io controller is
# on cgroup v2, else blkio v1's throttle (the kernel holds its bios before
# they enter the block layer, Q)
simdisk_up 4 1000
majmin=$(<"/sys/block/$SIMDISK_LOOP/dev")
cgroup_new held
v2root=${CG%/*}
if grep -qw io "$v2root/cgroup.controllers"; then
	if ! grep -qw io "$v2root/cgroup.subtree_control"; then
		echo +io >"$v2root/cgroup.subtree_control"
		on_exit "echo -io >'$v2root/cgroup.subtree_control'"
	fi
	echo "$majmin riops=100" >"$CG/io.max"
	members=$CG/cgroup.procs
else
	v1=$(awk '$3 == "cgroup" && $4 ~ /(^|,)blkio(,|$)/ { print $2; exit }' /proc/self/mounts)
	[[ -n $v1 ]] || die 1 "no io controller: neither on cgroup v2 nor a mounted blkio v1"
	mkdir "$v1/truestat-test.$$.held"
	on_exit "rmdir $v1/truestat-test.$$.held"
	echo "$majmin 100" >"$v1/truestat-test.$$.held/blkio.throttle.read_iops_device"
	members=$v1/truestat-test.$$.held/tasks
fi
simdisk_mark
ts_start "$tmp/throttled.json" -D -d "$SIMDISK_LOOP"
in_cgroup "$members" fio_on held --numjobs=4
ts_stop INT
check throttled_exit "$TS_RC" "truestat ended with status $TS_RC"
simdisk_save "$tmp/throttled"
judge throttled "
busy = Sd([x for x in reqs if t0 <= x[0] and x[3] <= t1]).busy / (t1 - t0)
print(name + '_held', int(not busy < 0.2), 'the disk was busy %.1f%% of the window' % (100 * busy))
for fid in ('busy-not-full', 'capped-volume', 'waiting-in-device', 'waiting-in-os'):
    concludes_not(fid)
"
simdisk_down

SIMDISK_IOPS=500 SIMDISK_BURST=500 simdisk_up 16 1000
# shellcheck disable=SC2046 # steps' options, split
run bursty '' $(steps 3000 1@0 1@500 2@1000 4@1500 8@2000)
judge bursty "concludes_not('busy-not-full')"
simdisk_down

simdisk_up 4 1000
simdisk_mark
ts_start "$tmp/idle.json" -D -d "$SIMDISK_LOOP" 0.5
ts_reports_after "$tmp/idle.json"
ts_stop INT
check idle_exit "$TS_RC" "truestat ended with status $TS_RC"
check_lines < <(py "
t = totals('$tmp/idle.json')
F = [f for f in t['findings'] if f['device'] == '$SIMDISK_LOOP']
print('idle_none', int(bool(F)), 'no finding: %s' % ([f['sentence'] for f in F] or 'none'))
# a disk that did nothing in the window is in no report, or named as too
# little to conclude
shown = tj.device(t, '$SIMDISK_LOOP') is not None
skip = [x for x in t['findings_skipped'] if x['device'] == '$SIMDISK_LOOP']
print('idle_said', int(shown and not skip), 'in the totals: %s; too little to conclude: %s' % (shown, skip or 'not said'))
")

# one reader's cgroup filtered beside two readers of another
cgroup_new small
small=$CG
cgroup_new big
big=$CG
simdisk_mark
ts_start "$tmp/filter.json" -D -d "$SIMDISK_LOOP" -c "$small"
in_cgroup "$big/cgroup.procs" fio_on big --numjobs=2 &
big_pid=$!
in_cgroup "$small/cgroup.procs" fio_on small
wait "$big_pid"
ts_stop INT
check filter_exit "$TS_RC" "truestat ended with status $TS_RC"
simdisk_save "$tmp/filter"
judge filter "
f = F.get('busy-not-full')
now = fig(f).get('iops_now', 0) if f and f['severity'] != 'cannot_tell' else None
done = len([x for x in reqs if t0 <= x[3] <= t1])
print(name + '_device_now', int(now is not None and now < done / ((t1 - t0) / 1e9)),
      'throughput now stated: %s, the disk completed %.0f a second in the window'
      % ('none' if now is None else '%.0f' % now, done / ((t1 - t0) / 1e9)))
"
simdisk_down
finish
