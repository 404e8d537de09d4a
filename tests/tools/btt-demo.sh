#!/usr/bin/env bash
# btt-demo.sh: trace fio random reads on a fresh loop device with
# tests/lib/blktrace.sh and print btt's latencies next to fio's completion
# latency and the device's /proc/diskstats deltas.  Two runs:
#	none		scheduler none, iodepth 4
#	deadline	mq-deadline with nr_requests=4, iodepth 32 (requests wait
#			for a tag, so Q2G/Q2D grow while D2C stays)
# Exits 1 if events were lost or btt's completions differ from diskstats.
# Usage: btt-demo.sh [SECONDS]	(BTT_DEMO_KEEP=1 keeps the trace files)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/blktrace.sh"

secs=${1:-5}
work=$(mktemp -d /var/tmp/btt-demo.XXXXXX)
loop= q= sched0= nr0= fail=0

cleanup() {
	local rc=$?
	trap - EXIT
	blk_trace_stop || rc=1
	if [[ -n $q ]]; then
		echo "$sched0" >"$q/scheduler" || rc=1
		echo "$nr0" >"$q/nr_requests" || rc=1
	fi
	[[ -n $loop ]] && { losetup -d "$loop" || rc=1; }
	rm -f "$work/disk.img"
	if [[ ${BTT_DEMO_KEEP:-0} == 1 ]]; then
		echo "trace files kept in $work"
	else
		rm -rf "$work"
	fi
	exit $rc
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

# diskstats DEV: "reads read_ms writes write_ms"
diskstats() {
	awk -v d="$1" '$3 == d { print $4, $7, $8, $11 }' /proc/diskstats
}

# run NAME SCHED NR_REQUESTS IODEPTH
run() {
	local name=$1 sched=$2 nr=$3 depth=$4 out=$work/$1 s0 s1
	echo "== $name: scheduler=$sched nr_requests=$nr iodepth=$depth ${secs}s"
	echo "$sched" >"$q/scheduler"
	# Switching the elevator resets nr_requests (2x the queue depth for
	# mq-deadline), so set it afterwards.
	[[ $nr == default ]] || echo "$nr" >"$q/nr_requests"
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
	read -r r0 rt0 w0 wt0 <<<"$s0"
	read -r r1 rt1 w1 wt1 <<<"$s1"
	echo "diskstats_reads=$((r1 - r0)) diskstats_read_ms=$((rt1 - rt0))" \
		"diskstats_writes=$((w1 - w0))"
	awk -v r=$((r1 - r0)) -v ms=$((rt1 - rt0)) 'BEGIN {
		printf "diskstats_read_mean_us=%.3f\n", r ? ms * 1000 / r : 0 }'
	step summary
	check "$out/summary.txt" $((r1 - r0))
}

# check SUMMARY DISKSTATS_READS
check() {
	local lost done
	lost=$(sed -n 's/^lost=//p' "$1")
	done=$(sed -n 's/^completions=//p' "$1")
	if [[ $lost != 0 ]]; then
		echo "CHECK FAILED: $lost events lost"
		fail=1
	fi
	if [[ $done != "$2" ]]; then
		echo "CHECK FAILED: btt completions $done != diskstats reads $2"
		fail=1
	else
		echo "check ok: btt completions == diskstats reads == $2"
	fi
}

dd if=/dev/zero of="$work/disk.img" bs=1M count=256 conv=fsync status=none
loop=$(losetup -f --show --direct-io=on "$work/disk.img")
q=/sys/block/${loop#/dev/}/queue
sched0=$(sed 's/.*\[\(.*\)\].*/\1/' "$q/scheduler")
nr0=$(<"$q/nr_requests")
echo "loop=$loop dio=$(<"/sys/block/${loop#/dev/}/loop/dio") scheduler=$sched0 nr_requests=$nr0"
step setup

run none none default 4
run deadline mq-deadline 4 32
exit $fail
