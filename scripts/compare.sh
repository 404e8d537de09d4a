#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# compare.sh: truestat next to iostat, biolatency and btt, all four on the
# same device over the same window; prints one Markdown table. See --help.
set -euo pipefail

ME=compare.sh
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

usage() {
	cat <<'EOF'
Usage: scripts/compare.sh [options] DEVICE

While a workload runs on DEVICE (yours, or fio's with --fio), runs four tools
at the same time and prints what each says, as one Markdown table:
  iostat      iostat -dxy DEVICE SECONDS 1 (sysstat): its window is the one
              the others enclose
  biolatency  biolatency -d DEVICE (libbpf-tools): issue->completion, log2
              histogram; its p50/p99 are bucket ranges
  btt         the kernel's ftrace blk tracer (what blktrace uses) on DEVICE,
              turned into blkparse's binary format, then btt; its records
              cut to truestat's window, so both see the same requests
  truestat    truestat -j -v -H -d DEVICE (-v: its window at exit)
Each figure is read from its own tool's output, never from another's. One
line per tool under the table says what it measured.

Options:
  --seconds N     iostat's window (default 5; whole seconds, 1 to 3600)
  --fio QD        start fio on DEVICE: random 4k reads, direct I/O, iodepth
                  QD, from --warmup seconds before the window to its end
  --fio-args STR  more fio options for --fio (split on spaces), e.g.
                  '--bs=16k --ioengine=libaio'
  --warmup S      seconds fio runs before the tools start (default 1)
  --json FILE     also write every figure as JSON
  --keep DIR      keep each tool's raw output in DIR
  -h, --help      this text

DEVICE is a disk name (sda, nvme0n1, loop3) or /dev/NAME; a partition
stands for its disk. Needs root, iostat, biolatency, blkparse, btt, cc,
python3, stdbuf (and fio with --fio). The blk tracer is global: the run is
refused while another tracer is set, and every tracefs setting changed is
restored afterwards. Exit status: 0 done, 1 cannot run, 2 bad usage.

Examples:
  scripts/compare.sh --fio 16 --seconds 4 loop3
  scripts/compare.sh --seconds 10 nvme0n1      # your own workload running
EOF
}

# shellcheck source=lib.sh
. "$HERE/lib.sh"

# the options that take a value, and the variable each sets (opt_value)
# shellcheck disable=SC2034 # read by name
declare -A VALUED=([--seconds]=secs [--fio]=qd [--fio-args]=fio_args
	[--warmup]=warmup [--json]=json [--keep]=keep)
secs=5 qd= fio_args= warmup=1 json= keep= target=
while (($#)); do
	opt_value VALUED "$@" && { shift "$OPT_N"; continue; }
	case $1 in
	-h | --help) usage; exit 0 ;;
	-*) die 2 "unknown option '$1' (--help for usage)" ;;
	*) [[ -z $target ]] || die 2 "one device only: '$target' and '$1'"
		target=$1; shift ;;
	esac
done
[[ -n $target ]] || die 2 "no device given (--help for usage)"
opt_int --seconds "$secs" 1 3600 "whole seconds, 1 to 3600"
[[ -z $qd ]] || opt_int --fio "$qd" 1 4096 "an iodepth, 1 to 4096"
[[ -z $fio_args || -n $qd ]] || die 2 "--fio-args only goes with --fio"
opt_decimal --warmup "$warmup" "seconds, e.g. 1 or 0.5"

# the tools
need_cmd iostat "Debian package sysstat"
need_cmd biolatency "Debian package libbpf-tools"
need_cmd blkparse "Debian package blktrace"
need_cmd btt "Debian package blktrace"
need_cmd cc "Debian package gcc: builds tests/tools/blkrenum.c"
need_cmd python3 "Debian package python3"
need_cmd stdbuf "Debian package coreutils"
[[ -z $qd ]] || need_cmd fio "Debian package fio"
find_truestat
BLKLIB=$HERE/../tests/lib/blktrace.sh
[[ -r $BLKLIB ]] || die 1 "$BLKLIB not found: run compare.sh from a truestat source tree"
need_root "BPF programs, the blk tracer"

# the disk: a name or /dev/NAME; a partition stands for its disk
name=${target#/dev/}
[[ -n $name && $name != */* && -e /sys/class/block/$name ]] ||
	die 1 "$target: no such block device (disks: $(ls /sys/block | paste -sd ' '))"
disk=$name
if [[ -e /sys/class/block/$name/partition ]]; then
	disk=$(basename "$(dirname "$(readlink -f "/sys/class/block/$name")")")
	note "$name is a partition: comparing its disk $disk"
fi
[[ -d /sys/block/$disk/trace ]] || die 1 "$disk: has no blk trace support (/sys/block/$disk/trace)"

# shellcheck source=../tests/lib/blktrace.sh
. "$BLKLIB"
tmp=$(mktemp -d /tmp/compare.XXXXXX)
fio_pid= ts_pid= bl_pid= io_pid=
cleanup() {
	stop_pid "$io_pid"
	stop_pid "$bl_pid"
	stop_pid "$ts_pid"
	blk_trace_abort 2>/dev/null || true
	stop_pid "$fio_pid"
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
stamp() { echo "$1 $(date +%s.%N)" >>"$tmp/times"; }
# what blktrace.sh said last, without its name
blk_error() { sed 's/^blktrace.sh: //' "$tmp/blk.err" | tail -1; }

# 1. the workload
if [[ -n $qd ]]; then
	engine=io_uring
	[[ $(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0) == 0 ]] || engine=libaio
	# shellcheck disable=SC2086 # --fio-args: options split on spaces
	fio --name=compare --filename="/dev/$name" --direct=1 --rw=randread --bs=4k \
		--ioengine="$engine" --iodepth="$qd" --time_based --runtime=86400 \
		--norandommap --randrepeat=0 $fio_args \
		--output-format=json --output="$tmp/fio.json" >"$tmp/fio.err" 2>&1 &
	fio_pid=$!
	sleep "$warmup"
	kill -0 "$fio_pid" 2>/dev/null ||
		die 1 "fio failed: $(last_error "$tmp/fio.err" "$tmp/fio.json")"
fi

# 2. the blk tracer first: setting it up stalled the device for up to 0.2 s
# here, which the tools started after it then do not see. btt does not
# either: the requests it stalled were issued before it was on.
blk_trace_start "$disk" "$tmp/btt" 2>"$tmp/blk.err" ||
	die 1 "blk tracer: $(blk_error)"
stamp blk_start
sleep 0.3

# 3. truestat, biolatency
"$TRUESTAT" -j -v -H -d "$disk" >"$tmp/truestat.json" 2>"$tmp/truestat.err" &
ts_pid=$!
wait_line "$ts_pid" "$tmp/truestat.err" "attached with" truestat "$tmp/truestat.err"
stamp truestat_start
stdbuf -oL biolatency -d "$disk" >"$tmp/biolatency.txt" 2>"$tmp/biolatency.err" &
bl_pid=$!
wait_line "$bl_pid" "$tmp/biolatency.txt" "^Tracing" biolatency "$tmp/biolatency.err"
stamp biolatency_start

# 4. iostat's window, then everything stops, in reverse order
stamp iostat_start
iostat -dxy "$disk" "$secs" 1 >"$tmp/iostat.txt" 2>"$tmp/iostat.err" &
io_pid=$!
rc=0
wait "$io_pid" || rc=$?
io_pid=
stamp iostat_end
((rc == 0)) || die 1 "iostat failed: $(tail -1 "$tmp/iostat.err")"
stop_pid "$bl_pid"
bl_pid=
stamp biolatency_end
stop_pid "$ts_pid"
ts_pid=
stamp truestat_end
grep -q "^{\"type\":\"totals\".*\"device\":\"$disk\"" "$tmp/truestat.json" ||
	die 1 "no I/O on $disk during the window: is a workload running? (or --fio QD)"
# truestat's window (-v), CLOCK_MONOTONIC like the blk tracer's records:
# from when it began attaching to its last snapshot. btt gets only the
# records inside, so every request truestat timed is btt's too
# (attaching, totals from, totals to, in ns) into $tmp/window
sed -n 's/^truestat: CLOCK_MONOTONIC: attaching at \([0-9]*\)\.\([0-9]*\) s, totals from \([0-9]*\)\.\([0-9]*\) to \([0-9]*\)\.\([0-9]*\) s$/\1\2 \3\4 \5\6/p' \
	"$tmp/truestat.err" >"$tmp/window"
read -r attach_ns _ to_ns <"$tmp/window" && [[ $attach_ns$to_ns =~ ^[0-9]+$ ]] ||
	die 1 "truestat did not print its window: $(last_error "$tmp/truestat.err")"
stamp blk_end
blk_trace_stop "$attach_ns" "$to_ns" 2>"$tmp/blk.err" ||
	die 1 "blk tracer: $(blk_error)"
stop_pid "$fio_pid"
fio_pid=
# btt's iostat-like figures (-I), from the same trace
(cd "$tmp/btt" && btt -i trace.bin -o iostat -I btt.iostat >/dev/null 2>&1) ||
	die 1 "btt -I failed on the trace"
blk_btt_summary "$tmp/btt" >"$tmp/btt.summary" 2>"$tmp/blk.err" ||
	die 1 "btt: $(blk_error)"

if [[ -n $keep ]]; then
	mkdir -p "$keep" || die 1 "--keep: cannot create $keep"
	cp "$tmp"/{iostat.txt,biolatency.txt,truestat.json,truestat.err,btt.summary,times} "$keep/"
	cp "$tmp"/btt/{btt.avg,btt.iostat,blkparse.txt,renum.bin} "$keep/"
	[[ -z $qd ]] || cp "$tmp/fio.json" "$keep/"
fi

versions=$(printf '%s\t%s\t%s\n' \
	"$(iostat -V 2>&1 | awk 'NR == 1 { print $3 }')" \
	"$(dpkg-query -W -f='${Version}' libbpf-tools 2>/dev/null || echo '?')" \
	"$(btt -V 2>&1 | awk '{ print $3 }')")
cmd="scripts/compare.sh --seconds $secs${qd:+ --fio $qd}${fio_args:+ --fio-args '$fio_args'} $target"
python3 -B "$HERE/compare.py" "$tmp" "$disk" "$secs" "$json" "$versions" "$cmd"
