#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# demo.sh (make demo): iostat's figures beside truestat's on a simulated
# disk whose truth is known, in well under a minute. See --help.
set -euo pipefail

ME="truestat demo"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
K=4 S_US=8000 BS=16k	# the RAID of "Why %util Number from Iostat is Meaningless for MySQL Capacity Planning": 4 disks of 8 ms
THREADS=(1 4 16 64)
INTERVAL=0.5	# truestat's reports; a run's window is WINDOW of them
WINDOW=6
RAMP_MAX=6	# reports a run may take to reach its threads (then: anyway)

usage() {
	cat <<'EOF'
Usage: scripts/demo.sh [--keep DIR]   (or: sudo make demo)

A simulated disk whose timing is known (tests/simdisk: 4 units, each
serving one request in exactly 8 ms, behind a loop device) is read by 1,
4, 16 and 64 synchronous readers in turn (fio psync, 16 KiB random reads,
direct I/O). truestat -j -D traces the whole demo; for each run, over the
same 3 s of steady load, the table shows
  iostat -x   r/s, r_await, aqu-sz, %util, svctm, computed from
              /proc/diskstats as sysstat does
  truestat    IOPS, SERVICE, QUEUE, CONC (mean), BUSY%
then truestat -D's verdict on the device's parallelism over all four runs,
and truestat's own findings over the whole demo (doc/diagnosis.md).

Needs root, FUSE (/dev/fuse) and loop devices; installs what it lacks
(scripts/deps.sh --demo: fio, fuse3, ...), builds truestat and the
simulated disk, and leaves nothing behind: daemon, mount, loop device,
temporary files and truestat are gone at exit, also after Ctrl-C.

Options:
  --keep DIR   keep the raw material in DIR: truestat's reports, the
               /proc/diskstats samples, fio's output, the disk's own
               request log and the figures as JSON
  -h, --help   this text
Exit status: 0 done, 1 cannot run (one line says why), 2 bad usage,
130 interrupted.
EOF
}

keep=
while (($#)); do
	case $1 in
	-h | --help) usage; exit 0 ;;
	--keep) (($# >= 2)) || { echo "$ME: --keep needs a directory" >&2; exit 2; }
		keep=$2; shift 2 ;;
	--keep=*) keep=${1#*=}; shift ;;
	*) echo "$ME: unknown argument '$1' (--help for usage)" >&2; exit 2 ;;
	esac
done

# What the demo cannot do without, before anything is installed or started.
# Root first, before lib.sh: said also by a copy of this script alone
((EUID == 0)) || {
	echo "$ME: needs root: it loads BPF programs and attaches a loop device (sudo make demo)" >&2
	exit 1
}
# shellcheck source=lib.sh
. "$HERE/lib.sh"
need_fuse_and_loop

"$ROOT/scripts/deps.sh" --demo
sd_make=${SIMDISK:-.output/simdisk}	# make demo passes its own
make -C "$ROOT" -s truestat "$sd_make"

# The simulated disk and its teardown (tests/lib/simdisk.sh): every step
# below is undone by cleanup(), on any exit, in reverse order
# shellcheck source=tests/lib/common.sh
. "$ROOT/tests/lib/common.sh"
# shellcheck source=tests/lib/simdisk.sh
. "$ROOT/tests/lib/simdisk.sh"
# a script ended early is not a failed test: its files are not kept
unset TS_KEEP_FAILED
SIMDISK_BIN=$sd_make
[[ $SIMDISK_BIN == /* ]] || SIMDISK_BIN=$ROOT/$SIMDISK_BIN

tmp=$(mktemp -d /tmp/truestat-demo.XXXXXX)
on_exit "rm -rf '$tmp'"
FIO_PID='' TS_PID=''
# shellcheck disable=SC2016 # expanded at exit: the pids of then
on_exit 'stop_pid "$TS_PID" 0 KILL'
# shellcheck disable=SC2016
on_exit 'stop_pid "$FIO_PID" 0 KILL'

if ! simdisk_up "$K" "$S_US" >"$tmp/err" 2>&1; then
	if [[ -n $SIMDISK_MNT && -z $SIMDISK_LOOP ]] && mountpoint -q "$SIMDISK_MNT"; then
		die 1 "cannot create a loop device on the simulated disk: $(grep -v '^simdisk:' "$tmp/err" | tail -1)"
	fi
	die 1 "the simulated disk (FUSE) did not start: $(tail -1 "$tmp/err")"
fi
dev=$SIMDISK_LOOP

# truestat over the whole demo: its reports come through a FIFO and each
# is stamped, with the disk's /proc/diskstats line, the moment it arrives
mkfifo "$tmp/ts.fifo"
"$TRUESTAT" -j -D -d "$dev" "$INTERVAL" >"$tmp/ts.fifo" 2>"$tmp/ts.err" &
TS_PID=$!
exec {ts_fd}<"$tmp/ts.fifo"
if [[ -n $keep ]]; then	# what there is to clean up, for the tests
	mkdir -p "$keep" || die 1 "--keep: cannot create $keep"
	printf '%s=%s\n' tmp "$tmp" simdisk_dir "$SIMDISK_DIR" simdisk_mnt "$SIMDISK_MNT" \
		simdisk_pid "$SIMDISK_PID" loop "$dev" truestat_pid "$TS_PID" >"$keep/where"
fi
nrep=0
report() { # the next report into $rep, appended with its stamp
	local line
	if ! IFS= read -r -t 15 -u "$ts_fd" rep; then
		die 1 "truestat stopped: $(last_error "$tmp/ts.err")"
	fi
	stamp=$EPOCHREALTIME
	while read -r line; do
		[[ $line == *" $dev "* ]] && break
	done </proc/diskstats
	printf '%s\n' "$rep" >>"$tmp/reports.jsonl"
	printf '%s %s\n' "$stamp" "${line#* "$dev" }" >>"$tmp/stamps"
	nrep=$((nrep + 1))
}
report	# the first: attached

# figures header | row N | end: the table's head, the row of the run with
# N readers, then truestat -D's verdict and its findings
figures() { python3 -B "$HERE/demo.py" "$tmp" "$dev" "$K" "$S_US" "$BS" "$WINDOW" "$INTERVAL" "$@"; }

figures header
for n in "${THREADS[@]}"; do
	fio --name=demo --filename="/dev/$dev" --direct=1 --rw=randread --bs="$BS" \
		--ioengine=psync --thread --numjobs="$n" --group_reporting \
		--time_based --runtime=600 --norandommap --randrepeat=0 \
		--output-format=json --output="$tmp/fio-$n.json" >"$tmp/fio.err" 2>&1 &
	FIO_PID=$!
	# the window starts after the first report in which the disk held
	# nine tenths of the readers on average, read as it arrived
	for ((r = 0; r < RAMP_MAX; r++)); do
		report
		kill -0 "$FIO_PID" 2>/dev/null ||
			die 1 "fio failed: $(grep -v '^$' "$tmp/fio.err" "$tmp/fio-$n.json" 2>/dev/null | tail -1)"
		[[ $rep =~ \"concurrency\":\{[^}]*\"mean\":([0-9]+)\.?([0-9]?) ]] || continue
		((BASH_REMATCH[1] * 10 + ${BASH_REMATCH[2]:-0} >= 9 * n)) || continue
		read -r -t 0 -u "$ts_fd" || break	# and not behind
	done
	first=$nrep
	for ((r = 0; r < WINDOW; r++)); do
		report
	done
	echo "$n $first $nrep" >>"$tmp/phases"
	kill -INT "$FIO_PID"
	wait "$FIO_PID" || true
	FIO_PID=
	figures row "$n"
done
kill -INT "$TS_PID"
while IFS= read -r -t 15 -u "$ts_fd" rep; do
	printf '%s\n' "$rep" >>"$tmp/reports.jsonl"
done
rc=0
wait "$TS_PID" || rc=$?
TS_PID=
((rc == 0)) || die 1 "truestat ended with status $rc: $(last_error "$tmp/ts.err")"
figures end

if [[ -n $keep ]]; then
	simdisk_sync
	cp "$tmp"/{reports.jsonl,stamps,phases,figures.json} "$tmp"/fio-*.json "$keep/"
	cp "$SIMDISK_LOG" "$keep/simdisk.log"
fi
