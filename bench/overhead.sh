#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# bench/overhead.sh: what tracing costs each I/O, truestat against its peers.
#
# Sets up a fast device (loop on a /dev/shm file, direct I/O), then for each
# tracer runs fio without and with it, PAIRS times, the order alternating so
# that drift of the machine cancels, with bpf_stats off (its two clock reads
# per program run are not what a user pays). Then COST_RUNS runs of each BPF
# tracer with bpf_stats on, and of truestat with programs that return at
# once (truestat-empty): what bpf_stats reports for a program that does
# nothing is the floor of its measurement on this machine; and that return
# after one clock read (truestat-clock): the floor and a clock read. Prints per
# tracer: the median IOPS ratio traced/untraced (pair by pair), truestat's
# own CPU, the BPF time per I/O (run_time_ns summed over the tracer's
# programs / I/Os the device completed), the same above the floor, and ns
# per call of each program, and beside truestat's and --light's share of
# biolatency's BPF time per I/O the goal it is held to (bench/summarize.py:
# GOALS) and the least share any tracer could show here that reads the
# clock once in each of as many program runs (truestat-clock: programs that
# read the clock and return). A benchmark, not a test: it exits non-zero only
# when it could not run.
#
#	bench/overhead.sh [TRACER...]	default: every tracer found
#	PAIRS=5 COST_RUNS=3 RUNTIME=5 IODEPTH=32 BS=4k	knobs (environment)
#	DEVICE=zram	the fast device is zram0 (bio-based: what truestat
#			pays at a bio layer such as md or dm) instead of a loop
#	KEEP_WORK=DIR	keeps the raw runs (its runs file, bench/summarize.py's input)
#
# Tracers: truestat, truestat-light (--light), truestat-pattern (--pattern),
# truestat-slow (--slow=1000: above any request here, what capturing the
# submitter and comparing costs), truestat-slow0 (--slow=0: a line per
# request through the ring buffer, printed to /dev/null), truestat-by (--by=cgroup),
# truestat-cgroup (-c: the cgroup v2 this script runs in, so every I/O
# matches and is counted: the match at Q and the submitter kept to C),
# truestat-flags (-F: a hash lookup and adds at each completion),
# truestat-partitions (-p: on a disk without partitions, as the bench's,
# the read of req->part at issue; requests under a partition add a hash
# lookup and atomic adds at completion, which this row does not show),
# truestat-raw_tp, truestat-locked (the programs built for kernels before
# 5.12, whose atomic operations take locks, here: TRUESTAT_TEST_LOCKED),
# truestat-sweep16 (the request table 16 times the size truestat picks
# here, TRUESTAT_TEST_RQ_SLOTS: what the sweep costs on a host with that
# many driver tags), truestat-base
# (the truestat binary at $BASELINE, e.g. built from an older commit, for a
# before/after comparison in one run), biolatency,
# biolatency-Q (libbpf-tools, Debian package libbpf-tools), blk (the
# kernel's ftrace blk tracer: what blktrace uses; blktrace itself cannot open
# its relay files here).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PAIRS=${PAIRS:-5}
COST_RUNS=${COST_RUNS:-3}
RUNTIME=${RUNTIME:-5}
IODEPTH=${IODEPTH:-32}
BS=${BS:-4k}
TRACEFS=/sys/kernel/tracing

die() { echo "overhead.sh: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || die "needs root"
for c in fio bpftool losetup python3; do
	command -v $c >/dev/null || die "$c not installed (make deps)"
done
[[ -x $ROOT/truestat ]] || die "build truestat first (make)"

work=$(mktemp -d /tmp/truestat-bench.XXXXXX)
undo=()
cleanup() {
	local i
	[[ -n ${TRACER_PID:-} ]] && kill -INT "$TRACER_PID" 2>/dev/null && wait "$TRACER_PID" 2>/dev/null
	for ((i = ${#undo[@]} - 1; i >= 0; i--)); do
		eval "${undo[i]}" >/dev/null 2>&1 || true
	done
	[[ -n ${KEEP_WORK:-} ]] && cp -r "$work" "$KEEP_WORK"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# the fast device
if [[ ${DEVICE:-loop} == zram ]]; then
	z=/sys/block/zram0
	[[ -w $z/disksize && $(<$z/disksize) == 0 ]] || die "zram0 missing or in use"
	undo+=("echo 1 >$z/reset")
	echo 1G >$z/disksize
	devpath=/dev/zram0
	what="zram0: bio-based, in memory"
else
	file=$(mktemp /dev/shm/truestat-bench.XXXXXX)
	undo+=("rm -f $file")
	truncate -s 1G "$file"
	devpath=$(losetup -f --show --direct-io=on "$file")
	undo+=("losetup -d $devpath")
	what="loop on /dev/shm, direct I/O"
fi
dev=${devpath#/dev/}
dd if=/dev/zero of="$devpath" bs=1M count=1024 oflag=direct status=none

old_stats=$(sysctl -n kernel.bpf_stats_enabled)
undo+=("sysctl -qw kernel.bpf_stats_enabled=$old_stats")
sysctl -qw kernel.bpf_stats_enabled=0

prog_ids() { bpftool prog show -j | python3 -c 'import json,sys; print(" ".join(str(p["id"]) for p in json.load(sys.stdin)))'; }

# own_cgroup: the directory of this script's cgroup v2
own_cgroup() {
	echo "$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)$(sed -n 's/^0:://p' /proc/self/cgroup)"
}

# start_tracer NAME NPROGS: attach it, set TRACER_PID; wait until truestat
# -v says it attached, another tracer has more than NPROGS programs loaded
start_tracer() {
	local i n rq16=
	[[ $1 == truestat-sweep16 ]] && rq16=$((16 * $(rq_slots)))
	: >"$work/err" # the last tracer's "attached" is not this one's
	case $1 in
	truestat) "$ROOT/truestat" -v 1 >/dev/null 2>"$work/err" & ;;
	truestat-light) "$ROOT/truestat" -v --light 1 >/dev/null 2>"$work/err" & ;;
	truestat-pattern) "$ROOT/truestat" -v --pattern 1 >/dev/null 2>"$work/err" & ;;
	truestat-slow) "$ROOT/truestat" -v --slow=1000 1 >/dev/null 2>"$work/err" & ;;
	truestat-slow0) "$ROOT/truestat" -v --slow=0 1 >/dev/null 2>"$work/err" & ;;
	truestat-by) "$ROOT/truestat" -v --by=cgroup 1 >/dev/null 2>"$work/err" & ;;
	truestat-cgroup) "$ROOT/truestat" -v -c "$(own_cgroup)" 1 >/dev/null 2>"$work/err" & ;;
	truestat-flags) "$ROOT/truestat" -v -F 1 >/dev/null 2>"$work/err" & ;;
	truestat-partitions) "$ROOT/truestat" -v -p 1 >/dev/null 2>"$work/err" & ;;
	truestat-raw_tp) "$ROOT/truestat" -v --raw-tp 1 >/dev/null 2>"$work/err" & ;;
	truestat-locked) TRUESTAT_TEST_LOCKED=1 "$ROOT/truestat" -v 1 >/dev/null 2>"$work/err" & ;;
	truestat-empty) TRUESTAT_BENCH_EMPTY=1 "$ROOT/truestat" -v 1 >/dev/null 2>"$work/err" & ;;
	truestat-clock) TRUESTAT_BENCH_EMPTY=clock "$ROOT/truestat" -v 1 >/dev/null 2>"$work/err" & ;;
	truestat-sweep16) TRUESTAT_TEST_RQ_SLOTS=$rq16 "$ROOT/truestat" -v 1 >/dev/null 2>"$work/err" & ;;
	truestat-base) "${BASELINE:?truestat-base: set BASELINE to a truestat binary}" -v 1 >/dev/null 2>"$work/err" & ;;
	biolatency) biolatency 3600 >/dev/null 2>"$work/err" & ;;
	biolatency-Q) biolatency -Q 3600 >/dev/null 2>"$work/err" & ;;
	blk) blk_on; TRACER_PID=; return ;;
	*) die "unknown tracer $1" ;;
	esac
	TRACER_PID=$!
	for ((i = 0; i < 100; i++)); do
		sleep 0.1
		kill -0 "$TRACER_PID" 2>/dev/null || die "$1 did not start: $(tail -1 "$work/err")"
		if [[ $1 == truestat* ]]; then # -v says when all are attached
			grep -q '^truestat: attached with' "$work/err" && return
			continue
		fi
		n=$(prog_ids | wc -w)
		((n > $2)) && break
	done
	sleep 0.5 # all of its links attached
}

stop_tracer() {
	if [[ $1 == blk ]]; then
		blk_off
		return
	fi
	kill -INT "$TRACER_PID"
	wait "$TRACER_PID" 2>/dev/null || true
	TRACER_PID=
	# truestat -v: its sweeps (slots; us each in BPF, longest part, in all)
	sed -n "s/^truestat: sweep of \([0-9]*\) slots: [0-9]*, \([0-9.]*\) us each in BPF, the longest part \([0-9.]*\) us; \([0-9.]*\) us each in all\$/$1 \1 \2 \3 \4/p" \
		"$work/err" >>"$work/sweeps"
}

# the kernel's blk tracer on the loop device, its records read and dropped
blk_on() {
	mountpoint -q $TRACEFS || { mount -t tracefs nodev $TRACEFS; undo+=("umount $TRACEFS"); }
	echo 0 >"/sys/block/$dev/trace/enable"
	echo blk >$TRACEFS/current_tracer
	echo 1 >"/sys/block/$dev/trace/enable"
	cat $TRACEFS/trace_pipe >/dev/null &
	BLK_READER=$!
	undo+=("blk_off")
}
blk_off() {
	echo 0 >"/sys/block/$dev/trace/enable" 2>/dev/null || true
	echo nop >$TRACEFS/current_tracer 2>/dev/null || true
	if [[ -n ${BLK_READER:-} ]]; then kill "$BLK_READER" 2>/dev/null; wait "$BLK_READER" 2>/dev/null || true; fi
	BLK_READER=
	return 0
}

# the request table's size truestat picks here (16x: truestat-sweep16)
rq_slots() {
	"$ROOT/truestat" -v 0.1 1 2>&1 >/dev/null |
		sed -n 's/^truestat: request table of \([0-9]*\) slots.*/\1/p'
}

reads() { awk -v d="$dev" '$3 == d { print $4 }' /proc/diskstats; }

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }

# run TRACER PAIR TOOL: one fio run (TRACER none: the baseline paired with
# TOOL's run); appends a line to $work/runs
run() {
	local tracer=$1 pair=$2 r0 r1 t0 t1 c0=0 c1=0 iops progs=-
	local known mine
	known=$(prog_ids)
	[[ $tracer != none ]] && start_tracer "$tracer" "$(wc -w <<<"$known")"
	# its programs: those that appeared while it started (not any that
	# another process loads later)
	mine=$(comm -13 <(tr ' ' '\n' <<<"$known" | sort) <(prog_ids | tr ' ' '\n' | sort) | tr '\n' ' ')
	[[ $tracer == truestat* ]] && c0=$(cpu_ticks "$TRACER_PID")
	r0=$(reads)
	t0=$(date +%s.%N)
	iops=$(fio --name=bench --filename="$devpath" --direct=1 --rw=randread \
		--bs="$BS" --ioengine=io_uring --iodepth="$IODEPTH" --runtime="$RUNTIME" \
		--time_based --output-format=json | python3 -c \
		'import json,sys; print(json.load(sys.stdin)["jobs"][0]["read"]["iops"])')
	t1=$(date +%s.%N)
	r1=$(reads)
	if [[ $3 == cost ]]; then
		progs=$(bpftool prog show -j | python3 -c '
import json, sys
mine = set(sys.argv[1].split())
out = ["%s:%d:%d" % (p["name"], p.get("run_time_ns", 0), p.get("run_cnt", 0))
       for p in json.load(sys.stdin) if str(p["id"]) in mine]
print(",".join(out) or "-")' "$mine")
	fi
	[[ $tracer == truestat* ]] && c1=$(cpu_ticks "$TRACER_PID")
	[[ $tracer != none ]] && stop_tracer "$tracer"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tracer" "$3" "$pair" "$iops" \
		$((r1 - r0)) "$(echo "$t1 - $t0" | bc)" $((c1 - c0)) "$progs" >>"$work/runs"
	printf '  %-16s pair %d: %8.0f IOPS\n' "$tracer" "$pair" "$iops"
}

tracers=("$@")
if ((${#tracers[@]} == 0)); then
	tracers=(truestat truestat-light truestat-raw_tp)
	command -v biolatency >/dev/null && tracers+=(biolatency biolatency-Q)
	[[ -d /sys/block/$dev/trace ]] && tracers+=(blk)
fi
command -v bc >/dev/null || die "bc not installed"
base_progs=$(prog_ids | wc -w)
((base_progs == 0)) || echo "note: $base_progs BPF programs already loaded; figures include their cost" >&2

echo "fio ${BS} random reads, io_uring, iodepth $IODEPTH, ${RUNTIME} s per run, $PAIRS pairs per tracer, on $dev ($what)"
echo "IOPS, bpf_stats off:"
for ((pair = 1; pair <= PAIRS; pair++)); do
	for t in "${tracers[@]}"; do
		if ((pair % 2)); then run none "$pair" "$t"; run "$t" "$pair" "$t"
		else run "$t" "$pair" "$t"; run none "$pair" "$t"; fi
	done
done

# BPF time, bpf_stats on: each BPF tracer, the floor (empty programs) and
# the clock (programs that only read it)
costed=()
for t in "${tracers[@]}"; do [[ $t != blk ]] && costed+=("$t"); done
((${#costed[@]} == 0)) || costed+=(truestat-empty truestat-clock)
((${#costed[@]} == 0)) || echo "BPF time, bpf_stats on:"
sysctl -qw kernel.bpf_stats_enabled=1
for ((i = 1; i <= COST_RUNS; i++)); do
	for t in "${costed[@]}"; do run "$t" "$i" cost; done
done
sysctl -qw kernel.bpf_stats_enabled=0

python3 "$ROOT/bench/summarize.py" "$work/runs" "$(getconf CLK_TCK)" "${tracers[@]}"
if [[ -s $work/sweeps ]]; then
	echo
	echo "The sweep, once per report (truestat -v: its time in BPF, where it runs"
	echo "with preemption off, in parts of up to 256 records; in all, with reading"
	echo "which slots hold one from the table's memory), median over runs:"
	python3 -c '
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    tracer, slots, each, part, wall = line.split()
    runs[(tracer, int(slots))].append((float(each), float(part), float(wall)))
for (tracer, slots), r in sorted(runs.items(), key=lambda x: x[0][1]):
    if tracer in ("truestat-empty", "truestat-clock"):
        continue
    print("  %-16s %7d slots: %7.1f us a sweep in BPF, the longest part %.1f us"
          " (goal: at most 50); %.1f us in all" % (tracer, slots,
          statistics.median(x[0] for x in r), statistics.median(x[1] for x in r),
          statistics.median(x[2] for x in r)))' "$work/sweeps"
fi
echo
echo "kernel $(uname -r), $(nproc) CPUs, $(date -u +%Y-%m-%d)"
