#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# knee.sh: find a device's knee the active way. fio offers depth 1, 2, 4, ...
# in turn while truestat records each step; prints a table per offered
# depth, the knee by the rules of truestat --depth and, with --max-latency,
# the tipping point (the method of the article on measuring a cloud
# provider's virtual disk from inside the VM: the most concurrent clients
# a disk serves within a latency). See --help.
set -euo pipefail

ME=knee.sh
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

usage() {
	cat <<'EOF'
Usage: scripts/knee.sh [options] DEVICE-OR-FILE

Drives fio at offered depth 1, 2, 4, ... up to --max-depth (random reads,
direct I/O), one step at a time, while truestat (-j -H -D) records each step.
Prints per offered depth: fio's IOPS, truestat's service time (mean, p95,
p99), queue time, what the kernel held and the mean in-device concurrency
while busy; then the knee, by the rules of truestat --depth:
  parallelism: the offered depth beyond which IOPS grows less than +20%
               per doubling of depth. Named only if the device was the
               limit: when what the kernel held (OS queue and device, by
               Little's law fio's IOPS x truestat's mean Q->C time) grew
               less than +20% over that doubling too, the requests fio
               added never reached the kernel (they waited in the
               submitter: its CPUs, its rate) and the verdict is "limit
               above the device" instead
  saturation:  the lowest depth whose p95 service is above 3x that at depth 1

Options:
  --max-depth N   deepest offered depth (default 64); steps are the powers
                  of two below it, and N
  --runtime S     seconds per step (default 5; decimals allowed)
  --bs SIZE       block size (default 4k)
  --max-latency MS
                  also find the tipping point: the highest offered depth
                  whose p95 total time (Q->C: OS queue plus device, from
                  truestat's histogram of the step) stays below MS
                  milliseconds at that depth and every depth below. After
                  the doublings, the depths between the last one below MS
                  and the first one not below are searched by halving, to
                  one request (about log2 of the gap more steps; marked *)
  --write         random writes instead of reads. Destroys data on the
                  target. Refused on a mounted or otherwise used device, and
                  on one holding a filesystem or partition table unless --force
  --force         write over a filesystem or partition table (never mounted)
  --svg FILE      also draw throughput and service p99 against depth
  --json FILE     also write the table and the knee as JSON
  -h, --help      this text

A FILE is read (or written) within its size; truestat traces the disk the
file lives on, so other I/O on that disk mixes into its figures.
Needs root, fio, python3 and truestat (the one built next to this script,
else $TRUESTAT, else the one on PATH). Exit status: 0 done, 1 cannot run
or refused, 2 bad usage.

Examples:
  scripts/knee.sh /dev/nvme0n1                      # read-only, 1..64
  scripts/knee.sh --max-latency 50 /dev/xvdk        # how many clients in 50 ms
  scripts/knee.sh --max-depth 16 --runtime 2 /dev/loop3 --svg knee.svg
  scripts/knee.sh --write --bs 16k /dev/sdb          # sdb blank and unused
  scripts/knee.sh /var/tmp/big.img --json knee.json  # a file: its disk traced
EOF
}

# shellcheck source=lib.sh
. "$HERE/lib.sh"

# the options that take a value, and the variable each sets (opt_value)
# shellcheck disable=SC2034 # read by name
declare -A VALUED=([--max-depth]=max_depth [--runtime]=runtime [--bs]=bs
	[--svg]=svg [--json]=json [--max-latency]=max_latency)
max_depth=64 runtime=5 bs=4k write=0 force=0 svg= json= target= max_latency=
while (($#)); do
	opt_value VALUED "$@" && { shift "$OPT_N"; continue; }
	case $1 in
	-h | --help) usage; exit 0 ;;
	--write) write=1; shift ;;
	--force) force=1; shift ;;
	--) shift; (($# == 1)) || die 2 "one target expected after --"; target=$1; shift ;;
	-*) die 2 "unknown option '$1' (--help for usage)" ;;
	*) [[ -z $target ]] || die 2 "one target only: '$target' and '$1'"
		target=$1; shift ;;
	esac
done
[[ -n $target ]] || die 2 "no target: give a block device or a file (--help for usage)"
opt_int --max-depth "$max_depth" 1 4096 "must be 1 to 4096"
opt_decimal --runtime "$runtime" "seconds, e.g. 5 or 0.5"
runtime_ms=$(awk -v s="$runtime" 'BEGIN { printf "%d", s * 1000 }')
((runtime_ms >= 100 && runtime_ms <= 3600000)) ||
	die 2 "bad --runtime '$runtime': must be 0.1 to 3600 seconds"
[[ $bs =~ ^[1-9][0-9]*[kKmM]?$ ]] || die 2 "bad --bs '$bs': e.g. 4k, 64k, 1m"
[[ -z $max_latency ]] || { [[ $max_latency =~ ^[0-9]*\.?[0-9]+$ ]] &&
	awk -v m="$max_latency" 'BEGIN { exit !(m > 0 && m <= 3600000) }'; } ||
	die 2 "bad --max-latency '$max_latency': milliseconds above 0, e.g. 50 or 2.5"
((force == 0 || write == 1)) || die 2 "--force only goes with --write"

# the tools
need_cmd fio "Debian: apt install fio"
need_cmd python3
find_truestat
need_root "truestat loads BPF programs; fio opens the device"

# the target, and the disk truestat traces
[[ -e $target ]] || die 1 "$target: no such file or device"
# sysfs directory of a device number, its disk's name (a partition's parent)
disk_of() {
	local d
	d=$(readlink -f "/sys/dev/block/$1")
	if [[ -e $d/partition ]]; then basename "$(dirname "$d")"; else basename "$d"; fi
}
is_file=0
if [[ -b $target ]]; then
	devno=$(stat -L -c '%Hr:%Lr' "$target")
	[[ -e /sys/dev/block/$devno ]] || die 1 "$target: device $devno is not in /sys/dev/block"
	disk=$(disk_of "$devno")
	what="$target"
elif [[ -f $target ]]; then
	is_file=1
	devno=$(stat -L -c '%Hd:%Ld' "$target")
	[[ -e /sys/dev/block/$devno ]] ||
		die 1 "$target: its filesystem is not on a block device (device $devno: tmpfs, FUSE, btrfs or overlay?): give a file on a disk, or the disk"
	disk=$(disk_of "$devno")
	size=$(stat -L -c %s "$target")
	((size >= 1048576)) ||
		die 1 "$target: too small ($size bytes): knee.sh stays within the file's size; make it 1 MiB or more"
	alloc=$(($(stat -L -c %b "$target") * $(stat -L -c %B "$target")))
	((write || alloc * 2 >= size)) ||
		note "warning: $target is sparse ($alloc of $size bytes allocated): reads of holes never reach the disk"
	what="$target (on $disk)"
else
	die 1 "$target: not a block device or a regular file"
fi
[[ -z $(ls -A "/sys/block/$disk/slaves" 2>/dev/null) ]] ||
	note "warning: $disk is stacked on $(ls "/sys/block/$disk/slaves" | tr '\n' ' ')- truestat sees requests only if $disk is request-based"

# writing: never over anything in use; over a filesystem only with --force
if ((write && !is_file)); then
	name=$(basename "$(readlink -f "/sys/dev/block/$devno")")
	# the target and, for a disk, its partitions
	devs=("$name")
	for p in /sys/class/block/"$name"/"$name"*; do
		[[ -e $p/partition ]] && devs+=("$(basename "$p")")
	done
	for n in "${devs[@]}"; do
		nr=$(<"/sys/class/block/$n/dev")
		mnt=$(awk -v d="$nr" '$3 == d { print $5; exit }' /proc/self/mountinfo)
		[[ -z $mnt ]] || die 1 "refusing to write to $target: /dev/$n is mounted on $mnt"
		! grep -q "^/dev/$n " /proc/swaps || die 1 "refusing to write to $target: /dev/$n is in use as swap"
		[[ -z $(ls -A "/sys/class/block/$n/holders" 2>/dev/null) ]] ||
			die 1 "refusing to write to $target: /dev/$n is in use by $(ls "/sys/class/block/$n/holders" | tr '\n' ' ')"
		if ((!force)) && sig=$(blkid -p -o export "/dev/$n" 2>/dev/null | grep -E '^(TYPE|PTTYPE)=') ; then
			die 1 "refusing to write to $target: /dev/$n holds ${sig//$'\n'/ } (blkid); --force to overwrite it"
		fi
	done
	# a device opened exclusively elsewhere (mounted, in a RAID, ...)
	exec {fd}<>"$target" 2>/dev/null || die 1 "refusing to write to $target: cannot open it for writing"
	exec {fd}>&-
fi

# the steps: powers of two, then max_depth
depths=()
for ((d = 1; d < max_depth; d *= 2)); do depths+=("$d"); done
depths+=("$max_depth")

# libaio: it keeps exactly --iodepth in flight. fio 3.33's io_uring keeps
# up to the next power of two (at iodepth 12 the simulated disk held 16,
# at 50 it held 64, and fio's own iodepth_level showed it), which the
# search's depths are not
engine=libaio
if ! fio --enghelp 2>/dev/null | grep -qx '[[:space:]]*libaio'; then
	engine=io_uring
	note "warning: this fio has no libaio; io_uring may keep more in flight than a depth that is not a power of two"
fi
rw=randread
((write)) && rw=randwrite

tmp=$(mktemp -d /tmp/knee.XXXXXX)
ts_pid= fio_pid=
cleanup() {
	stop_pid "$fio_pid" 5 TERM
	stop_pid "$ts_pid" 0 KILL
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# step QD: fio at depth QD for the run time, a fresh truestat recording it
step() {
	local qd=$1 rc=0
	"$TRUESTAT" -j -v -H -D -d "$disk" >"$tmp/ts.$qd" 2>"$tmp/ts.$qd.err" &
	ts_pid=$!
	wait_line "$ts_pid" "$tmp/ts.$qd.err" "attached with" truestat "$tmp/ts.$qd.err"
	# fio's latency percentiles (in --json), finer just above 95: each of
	# its latencies holds a request's Q->C, so they bound truestat's p95
	fio --name=knee --filename="$target" --direct=1 --rw="$rw" --bs="$bs" \
		--ioengine="$engine" --iodepth="$qd" --runtime="${runtime_ms}ms" \
		--time_based --norandommap --randrepeat=0 --lat_percentiles=1 \
		--percentile_list=1:5:10:50:90:95:95.5:96:97:98:99:99.5:99.9:99.99 \
		--output-format=json --output="$tmp/fio.$qd" 2>"$tmp/fio.$qd.err" &
	fio_pid=$!
	wait "$fio_pid" || rc=$?
	fio_pid=
	kill -INT "$ts_pid"
	wait "$ts_pid" || die 1 "truestat ended with status $? at depth $qd"
	ts_pid=
	((rc == 0)) || die 1 "fio failed at depth $qd: $(last_error "$tmp/fio.$qd.err")"
	note "depth $qd done"
}

# the analysis: 'below MS TMP DISK OP QD' says whether a step's p95 total
# time is below MS (status 0) or not (1: above, or nothing seen); 'report
# ...' prints the table and the knee

op=read
((write)) && op=write
note "$what: $rw, bs $bs, $engine, depth ${depths[*]}, ${runtime} s each; truestat traces $disk"
((is_file == 0)) || note "note: other I/O on $disk mixes into truestat's figures"
for qd in "${depths[@]}"; do
	step "$qd"
done

# the tipping point: halve the gap between the last doubling below
# max_latency and the first not below, to one request
search=()
if [[ -n $max_latency ]]; then
	lo=0 hi=0
	for qd in "${depths[@]}"; do
		if python3 -B "$HERE/knee.py" below "$max_latency" "$tmp" "$disk" "$op" "$qd"; then
			lo=$qd
		else
			hi=$qd
			break
		fi
	done
	while ((lo > 0 && hi > lo + 1)); do
		mid=$(((lo + hi) / 2))
		note "tipping point between depth $lo and $hi: trying $mid"
		step "$mid"
		search+=("$mid")
		if python3 -B "$HERE/knee.py" below "$max_latency" "$tmp" "$disk" "$op" "$mid"; then
			lo=$mid
		else
			hi=$mid
		fi
	done
fi

python3 -B "$HERE/knee.py" report "$HERE" "$tmp" "$disk" "$rw" "$bs" "$runtime" "$what" "$svg" "$json" \
	"$max_latency" "${depths[@]}" -- "${search[@]}"
