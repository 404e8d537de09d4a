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
KNEE_PY=$(cat <<'EOF'
import importlib.util, json, math, sys

GROWTH, SATURATION = 1.20, 3.0   # user/features/curve.h: the rules of --depth

def fio_step(path, op):
    # fio may print warnings before its JSON
    text = open(path).read()
    return json.loads(text[text.index('{'):])['jobs'][0][op]

def ts_step(path, disk):
    # the disk's totals, and their span
    docs = [json.loads(l) for l in open(path) if l.strip()]
    tot = [d for d in docs if d['type'] == 'totals']
    for d in (tot[-1]['devices'] if tot else []):
        if d['device'] == disk:
            return d, tot[-1]['span_s']
    return None, None

def upper(lo):
    # include/hist.h: 16 buckets per power of two from 32 ns, 1 ns below
    return lo + 1 if lo < 32 else lo + (1 << (lo.bit_length() - 5))

def quantile(buckets, q):
    # user/lib/histogram.c's ts_hist_quantile, over [[lower bound ns, count], ...]
    n = sum(c for _, c in buckets)
    if not n:
        return None
    rank, seen = max(1, math.ceil(q * n)), 0
    for lo, c in buckets:
        if seen + c < rank:
            seen += c
            continue
        return (lo + (upper(lo) - lo) * (rank - seen) / c) / 1e6

def p95(o, which):
    # p95 is not among -j's percentiles: from -H's histogram, as truestat
    # takes its own
    return o and quantile(o['histograms'][which + '_ns'], 0.95)

def row(tmp, disk, op, qd):
    fo = fio_step('%s/fio.%d' % (tmp, qd), op)
    iops, ios = fo['iops'], fo['total_ios']
    d, span = ts_step('%s/ts.%d' % (tmp, qd), disk)
    o = (d or {}).get('ops', {}).get(op)
    c = (d or {}).get('concurrency', {})
    pct = (o or {}).get('percentiles_ms', {}).get('service', {})
    busy = c.get('busy_pct') or 0
    total = o and o['total_ms']
    return {
        'depth': qd, 'iops': iops, 'fio_ios': ios,
        'ios': o['ios'] if o else 0, 'missed': o['missed'] if o else 0,
        'service_mean_ms': o and o['service_ms'],
        'service_p95_ms': p95(o, 'service'),
        'service_p99_ms': pct.get('p99'),
        'queue_ms': o and o['queue_ms'],
        'total_mean_ms': total,
        'total_p95_ms': p95(o, 'total'),
        'concurrency': c['mean'] * 100 / busy if busy else None,
        # what the kernel held, OS queue and device, while fio ran: by
        # Little's law its rate (fio's IOPS) x the time each request spent
        # there (truestat's mean Q->C); the rest of the offered depth was
        # in the submitter, between completion and the next submission
        'held': iops * total / 1000 if total is not None else None,
        'busy_pct': busy,
        # what the step's figures can be checked against: truestat's span
        # and the range of the true maximum depth; fio's latencies, submit
        # to reap, each of which holds a request's issue to completion
        'span_s': span, 'depth_max': c.get('max'), 'depth_max_min': c.get('max_min'),
        'depth_exact': c.get('exact'), 'fio_lat_ns': fo['lat_ns'], 'fio_runtime_ms': fo['runtime'],
    }

def below(ms, r):
    return r['total_p95_ms'] is not None and r['total_p95_ms'] < ms

def knee(rows):
    # the rules of truestat --depth, over the doublings. The first doubling
    # whose IOPS grew less than +20% names the parallelism only if what the
    # kernel held grew by +20% or more there too: IOPS = held / time per
    # request (Little), so with held growing less, the IOPS would have grown
    # less than +20% even had the device kept its time per request; the
    # requests fio added waited above the device
    par = None; still = False; gain = {}; above = None
    for a, b in zip(rows, rows[1:]):
        if not (a['iops'] and b['iops']):
            continue
        per = 1 / math.log2(b['depth'] / a['depth'])
        g = (b['iops'] / a['iops']) ** per
        gain[b['depth']] = g
        if par is None and above is None and g < GROWTH:
            if a['held'] and b['held'] is not None and (b['held'] / a['held']) ** per < GROWTH:
                above = (a, b, (b['held'] / a['held']) ** per)
            else:
                par = a
    if par is None and above is None and len(rows) > 1:
        par, still = rows[-1], True
    sat = None
    base = rows[0]['service_p95_ms']
    if rows[0]['depth'] == 1 and base:
        for r in rows[1:]:
            if r['service_p95_ms'] and r['service_p95_ms'] > SATURATION * base:
                sat = r
                break
    return par, still, gain, above, sat, base

def tipping(rows, ms):
    # the highest depth whose p95 total stays below ms there and at every
    # depth below; the first that does not
    tip = None
    for r in rows:
        if not below(ms, r):
            return tip, r
        tip = r
    return tip, None

def f(v, spec):
    return spec % v if v is not None else '-'

def pct(g):
    # a growth factor as a signed percentage, never '-0%'
    return '%+d%%' % round((g - 1) * 100)

def report(here, tmp, disk, rw, bs, runtime, what, svg, jout, max_ms, ladder, search):
    op = 'read' if rw == 'randread' else 'write'
    steps = dict((qd, row(tmp, disk, op, qd)) for qd in ladder + search)
    rows = [steps[qd] for qd in ladder]
    every = [steps[qd] for qd in sorted(steps)]
    for r in every:
        r['search'] = r['depth'] not in ladder
    par, still, gain, above, sat, base = knee(rows)
    ms = float(max_ms) if max_ms else None
    tip, over = tipping(every, ms) if ms else (None, None)

    print('%s: %s, %s %s, %s s per depth' % (disk, what, rw, bs, runtime))
    tot = ms is not None
    print('%5s %10s %7s %11s %10s %10s %s%10s %6s %6s' % ('DEPTH', 'IOPS', 'GAIN', 'SVC_MEAN_ms', 'SVC_P95_ms',
          'SVC_P99_ms', '%10s ' % 'TOT_P95_ms' if tot else '', 'QUEUE_ms', 'HELD', 'CONC'))
    for r in every:
        g = gain.get(r['depth']) if not r['search'] else None
        print('%4d%s %10.1f %7s %11s %10s %10s %s%10s %6s %6s' % (
            r['depth'], '*' if r['search'] else ' ', r['iops'], pct(g) if g else '-',
            f(r['service_mean_ms'], '%.3f'), f(r['service_p95_ms'], '%.3f'),
            f(r['service_p99_ms'], '%.3f'), '%10s ' % f(r['total_p95_ms'], '%.3f') if tot else '',
            f(r['queue_ms'], '%.3f'), f(r['held'], '%.2f'), f(r['concurrency'], '%.2f')))
    if above:
        a, b, hg = above
        print('  parallelism: none named: limit above the device: from depth %d to %d IOPS grew %s a doubling, but what'
              % (a['depth'], b['depth'], pct(gain[b['depth']])))
        print('    the kernel held grew less than +20%% (%s: %.2f to %.2f of %d offered; CONC %s, QUEUE %s ms): the'
              % (pct(hg), a['held'], b['held'], b['depth'], f(b['concurrency'], '%.2f'), f(b['queue_ms'], '%.3f')))
        print('    requests fio added waited in the submitter (its CPUs, its rate), not in the device or the OS queue')
    elif par is None:
        print('  parallelism: unknown (one depth only)')
    elif still:
        print('  parallelism: %d or more: IOPS still grows by +20%% or more per doubling at depth %d (%.1f IOPS)'
              % (par['depth'], par['depth'], par['iops']))
    else:
        nxt = rows[rows.index(par) + 1]
        print('  parallelism: %d: beyond depth %d IOPS grows less than +20%% per doubling (%+.0f%% to %d); %.1f IOPS there'
              % (par['depth'], par['depth'], (gain[nxt['depth']] - 1) * 100, nxt['depth'], par['iops']))
    if not base:
        print('  saturation: unknown (no service time at depth 1)')
    elif sat:
        print("  saturation: from depth %d: p95 service %.3f ms > 3x depth 1's %.3f ms"
              % (sat['depth'], sat['service_p95_ms'], base))
    else:
        print("  saturation: none seen (no depth's p95 service above 3x depth 1's %.3f ms)" % base)
    if ms is None:
        pass
    elif tip is None:
        print('  tipping point: none: p95 total time (Q->C) at depth %d is %s ms, not below %g ms'
              % (over['depth'], f(over['total_p95_ms'], '%.3f'), ms))
    elif over is None:
        print('  tipping point: %d or more: p95 total time (Q->C) stays below %g ms up to depth %d (%.3f ms); %.1f IOPS there'
              % (tip['depth'], ms, tip['depth'], tip['total_p95_ms'], tip['iops']))
    else:
        print('  tipping point: %d: the highest depth whose p95 total time (Q->C) stays below %g ms (%.3f ms; %.1f IOPS); '
              'at %d it is %s ms. Little: %.1f IOPS x %g ms = %.1f in flight'
              % (tip['depth'], ms, tip['total_p95_ms'], tip['iops'], over['depth'], f(over['total_p95_ms'], '%.3f'),
                 over['iops'], ms, over['iops'] * ms / 1000))
    for r in every:
        if r['missed']:
            print('  depth %d: %d completions unseen by truestat (not in its figures); CONC there reads high'
                  % (r['depth'], r['missed']))
        if not r['ios']:
            print('  depth %d: truestat saw no %s on %s' % (r['depth'], op, disk))
    print('  GAIN: IOPS growth per doubling from the depth before; HELD: requests in the kernel (OS queue and device), '
          'IOPS x mean Q->C; CONC: truestat\'s mean in-device depth while busy; service, queue and total times: '
          'truestat\'s, per step%s' % ('; TOT_P95: p95 of Q->C; *: a step of the tipping point\'s search, '
                                      'not in the knee\'s rules' if tot else ''))

    if jout:
        with open(jout, 'w') as fh:
            json.dump({'device': disk, 'target': what, 'rw': rw, 'bs': bs, 'runtime_s': float(runtime),
                       'steps': every, 'search_order': search,
                       'parallelism': par and par['depth'], 'still_growing': still,
                       'parallelism_iops': par and par['iops'],
                       'limit_above_device': above and {'from_depth': above[0]['depth'], 'to_depth': above[1]['depth'],
                                                        'held_from': above[0]['held'], 'held_to': above[1]['held'],
                                                        'held_gain': above[2]},
                       'saturation': sat and sat['depth'],
                       'depth1_p95_ms': base,
                       'max_latency_ms': ms,
                       'tipping_point': tip and tip['depth'], 'tipping_or_more': ms is not None and tip is not None and over is None,
                       'tipping_p95_ms': tip and tip['total_p95_ms'],
                       'tipping_next': over and over['depth']}, fh, indent=1)
            fh.write('\n')
    if svg:
        spec = importlib.util.spec_from_file_location('curve_svg', here + '/curve-svg.py')
        m = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m)
        mark = par and (par['depth'], 'parallelism: %d%s' % (par['depth'], ' (still growing)' if still else ''))
        if above:
            mark = (above[1]['depth'], 'limit above the device')
        m.plot([{'x': r['depth'], 'label': str(r['depth']), 'iops': r['iops'],
                 'p99_ms': r['service_p99_ms'], 'p95_ms': r['service_p95_ms']} for r in rows],
               svg, '%s: knee (fio %s %s, %s s per depth)' % (disk, rw, bs, runtime),
               'IOPS from fio; service time from truestat; target %s' % what,
               mark, sat and (sat['depth'], 'saturation: %d' % sat['depth']),
               x_name='offered depth (fio iodepth)')

if sys.argv[1] == 'below':
    ms, tmp, disk, op, qd = sys.argv[2:7]
    sys.exit(0 if below(float(ms), row(tmp, disk, op, int(qd))) else 1)
here, tmp, disk, rw, bs, runtime, what, svg, jout, max_ms = sys.argv[2:12]
ladder = [int(d) for d in sys.argv[12:sys.argv.index('--')]]
search = [int(d) for d in sys.argv[sys.argv.index('--') + 1:]]
report(here, tmp, disk, rw, bs, runtime, what, svg, jout, max_ms, ladder, search)
EOF
)

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
		if python3 -c "$KNEE_PY" below "$max_latency" "$tmp" "$disk" "$op" "$qd"; then
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
		if python3 -c "$KNEE_PY" below "$max_latency" "$tmp" "$disk" "$op" "$mid"; then
			lo=$mid
		else
			hi=$mid
		fi
	done
fi

python3 -c "$KNEE_PY" report "$HERE" "$tmp" "$disk" "$rw" "$bs" "$runtime" "$what" "$svg" "$json" \
	"$max_latency" "${depths[@]}" -- "${search[@]}"
