#!/usr/bin/env bash
# btt-demo.sh: trace fio random reads on a fresh loop device with
# tests/lib/blktrace.sh and print btt's latencies next to fio's completion
# latency and the device's /proc/diskstats deltas.  Three runs:
#	none		scheduler none, iodepth 4
#	deadline	nr_requests=4 under none (4 driver tags), then mq-deadline
#			(nr_requests back to 256), iodepth 32: requests wait in
#			the scheduler, so I2D/Q2D grow while D2C stays
#	sched4		mq-deadline, then nr_requests=4 (4 scheduler tags),
#			iodepth 32: fio's submitter blocks for a tag before the
#			next bio is queued, so most of the wait is not in Q2C
# Exits 1 if the capture was not clean or btt's counts differ from diskstats.
# Cleans up (trace, queue settings, loop device, image) also on failure.
# Usage: btt-demo.sh [SECONDS]	(BTT_DEMO_KEEP=1 keeps the trace files)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib/blktrace.sh
. "$here/../lib/blktrace.sh"

secs=${1:-5}
work=$(mktemp -d /var/tmp/btt-demo.XXXXXX)
loop='' q='' sched0='' nr0='' fail=0

# shellcheck disable=SC2317 # called from the trap
cleanup() {
	local rc=$?
	trap - EXIT
	blk_trace_stop || rc=1
	if [[ -n $q ]]; then
		# The queue outlives losetup -d: put it back as it was.
		echo none >"$q/scheduler" || rc=1
		echo "$sched0" >"$q/scheduler" || rc=1
		[[ $(<"$q/nr_requests") == "$nr0" ]] || echo "$nr0" >"$q/nr_requests" || rc=1
	fi
	[[ -n $loop ]] && { losetup -d "$loop" || rc=1; }
	rm -f "$work/disk.img"
	if [[ ${BTT_DEMO_KEEP:-0} == 1 ]]; then
		echo "trace files kept in $work"
	else
		rm -rf "$work"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

t0=${EPOCHREALTIME/./}
step() {	# step NAME: print seconds since the last step
	local now=${EPOCHREALTIME/./}
	printf 'time_%s_s=%d.%02d\n' "$1" $(((now - t0) / 1000000)) \
		$(((now - t0) / 10000 % 100))
	t0=$now
}

# diskstats DEV: "reads reads_merged read_ms writes"
diskstats() {
	awk -v d="$1" '$3 == d { print $4, $5, $7, $8 }' /proc/diskstats
}

# run NAME NR_UNDER_NONE SCHED NR_AFTER IODEPTH ("-": leave nr_requests)
run() {
	local name=$1 nr1=$2 sched=$3 nr2=$4 depth=$5 out=$work/$1 s0 s1
	echo "== $name: nr_requests=$nr1 under none, scheduler=$sched," \
		"nr_requests=$nr2, iodepth=$depth, ${secs}s"
	# Switching to none sets nr_requests back to the queue depth.
	echo none >"$q/scheduler"
	# nr_requests under none sizes the driver tags; switching the elevator
	# keeps those but sets nr_requests (scheduler tags) to 2x queue depth.
	[[ $nr1 == - ]] || echo "$nr1" >"$q/nr_requests"
	echo "$sched" >"$q/scheduler"
	[[ $nr2 == - ]] || echo "$nr2" >"$q/nr_requests"
	echo "nr_requests=$(<"$q/nr_requests") scheduler=$(<"$q/scheduler")"
	blk_trace_start "${loop#/dev/}" "$out"
	step trace_start
	s0=$(diskstats "${loop#/dev/}")
	fio --name="$name" --filename="$loop" --ioengine=libaio --direct=1 \
		--rw=randread --bs=4k --iodepth="$depth" --runtime="$secs" \
		--time_based --output-format=json --output="$out/fio.json"
	s1=$(diskstats "${loop#/dev/}")
	step fio
	blk_trace_stop
	step trace_stop_and_convert
	blk_btt_summary "$out" | tee "$out/summary.txt"
	python3 - "$out/fio.json" <<-'EOF'
		import json, sys
		r = json.load(open(sys.argv[1]))["jobs"][0]["read"]
		print("fio_ios=%d" % r["total_ios"])
		print("fio_iops=%.0f" % r["iops"])
		print("fio_slat_mean_us=%.3f" % (r["slat_ns"]["mean"] / 1e3))
		print("fio_clat_mean_us=%.3f" % (r["clat_ns"]["mean"] / 1e3))
		print("fio_lat_mean_us=%.3f" % (r["lat_ns"]["mean"] / 1e3))
	EOF
	read -r r0 m0 rt0 w0 <<<"$s0"
	read -r r1 m1 rt1 w1 <<<"$s1"
	echo "diskstats_reads=$((r1 - r0)) diskstats_reads_merged=$((m1 - m0))" \
		"diskstats_read_ms=$((rt1 - rt0)) diskstats_writes=$((w1 - w0))"
	awk -v r=$((r1 - r0)) -v ms=$((rt1 - rt0)) 'BEGIN {
		printf "diskstats_read_mean_us=%.3f (per request)\n", r ? ms * 1000 / r : 0 }'
	step summary
	check "$out/summary.txt" $((r1 - r0)) $((m1 - m0))
}

# check SUMMARY DISKSTATS_READS DISKSTATS_MERGED
# btt counts D2C/Q2C per queued bio, diskstats and blkparse per request:
# a merged bio completes with the request it was merged into.
check() {
	local ok ios reqs
	ok=$(sed -n 's/^capture_ok=//p' "$1")
	ios=$(sed -n 's/^completions=//p' "$1")
	reqs=$(sed -n 's/^reads_completed=//p' "$1")
	if [[ $ok != 1 ]]; then
		echo "CHECK FAILED: capture not clean (see lost=, garbage_bytes=)"
		fail=1
	fi
	if [[ $ios != $(($2 + $3)) || $reqs != "$2" ]]; then
		echo "CHECK FAILED: btt completions $ios, blkparse requests $reqs;" \
			"diskstats reads $2 + merged $3"
		fail=1
	else
		echo "check ok: btt completions $ios == diskstats reads $2 + merged $3;" \
			"blkparse requests == diskstats reads"
	fi
}

dd if=/dev/zero of="$work/disk.img" bs=1M count=256 conv=fsync status=none
loop=$(losetup -f --show --direct-io=on "$work/disk.img")
q=/sys/block/${loop#/dev/}/queue
sched0=$(sed 's/.*\[\(.*\)\].*/\1/' "$q/scheduler")
nr0=$(<"$q/nr_requests")
echo "loop=$loop dio=$(<"/sys/block/${loop#/dev/}/loop/dio") scheduler=$sched0 nr_requests=$nr0"
step setup

run none - none - 4
run deadline 4 mq-deadline - 32
run sched4 - mq-deadline 4 32
exit $fail
