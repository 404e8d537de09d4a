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
python3 - "$tmp" "$disk" "$secs" "$json" "$versions" "$cmd" <<'EOF'
import glob, json, math, re, sys

tmp, disk, secs, jout, versions, cmd = sys.argv[1:7]
secs = int(secs)
v_iostat, v_bpftools, v_btt = versions.split('\t')

def die(msg):
    print('compare.sh: ' + msg, file=sys.stderr)
    sys.exit(1)

def iostat():
    # the header line names the columns: sysstat 11 and 12 differ
    lines = [l.split() for l in open(tmp + '/iostat.txt') if l.strip()]
    hdr = next((l for l in lines if l[0].rstrip(':') == 'Device'), None)
    row = next((l for l in lines if l[0] == disk), None)
    if not hdr or not row:
        die('no report of %s in iostat\'s output' % disk)
    c = dict(zip([h.rstrip(':') for h in hdr[1:]], [float(x) for x in row[1:]]))
    ops = ['r', 'w', 'd']
    iops = sum(c.get(o + '/s', 0) for o in ops)
    waited = sum(c.get(o + '/s', 0) * c.get(o + '_await', 0) for o in ops)
    out = {'r_s': c.get('r/s', 0), 'w_s': c.get('w/s', 0), 'd_s': c.get('d/s', 0),
           'f_s': c.get('f/s', 0), 'iops': iops + c.get('f/s', 0),
           'await_ms': waited / iops if iops else None,
           'aqu_sz': c.get('aqu-sz', c.get('avgqu-sz')), 'util_pct': c['%util']}
    if 'svctm' in c:
        out['svctm_ms'], out['svctm_printed'] = c['svctm'], True
    else:
        # sysstat 12 dropped svctm; its old formula: %util over r+w+d per s
        out['svctm_ms'] = c['%util'] * 10 / iops if iops else None
        out['svctm_printed'] = False
    return out

def biolatency():
    buckets = []
    for l in open(tmp + '/biolatency.txt'):
        m = re.match(r'\s*(\d+) -> (\d+)\s*: (\d+)', l)
        if m:
            buckets.append(tuple(int(x) for x in m.groups()))
    n = sum(b[2] for b in buckets)
    def bucket(q):
        rank, seen = max(1, math.ceil(q * n)), 0
        for lo, hi, c in buckets:
            seen += c
            if seen >= rank:
                return [lo / 1000, hi / 1000]
    return {'ios': n, 'service_p50_ms': n and bucket(0.5), 'service_p99_ms': n and bucket(0.99)}

def btt():
    s = dict(l.strip().split('=', 1) for l in open(tmp + '/btt.summary') if '=' in l)
    v = sorted(float(l.split()[1]) * 1e3 for f in glob.glob(tmp + '/btt/btt_*_d2c.dat')
               for l in open(f) if l.strip())
    def exact(q):
        return v[max(0, math.ceil(q * len(v)) - 1)] if v else None
    # -I: one line per second, then the device's whole-run line, ending
    # in TOTAL; the fields after the device's "(  7,  0)"
    dev = [l.rsplit(')', 1)[1].split() for l in open(tmp + '/btt/btt.iostat') if l.startswith('(')]
    tot = [l for l in dev if l[-1] == 'TOTAL']
    io = [float(x) for x in tot[0][:13]] if tot else [None] * 13
    per_s = [float(l[9]) for l in dev if l[-1] != 'TOTAL']
    # Q2D from the table (Q2C - D2C, when both hold the same I/Os), else
    # from the per-I/O file; queue_ios: the I/Os it is the mean of
    q2d = s.get('q2c_minus_d2c_us', s.get('q2d_mean_us'))
    q2d_n = s.get('d2c_n') if 'q2c_minus_d2c_us' in s else s.get('q2d_n')
    ms = lambda k: float(s[k]) / 1000 if k in s else None
    return {'ios': int(s.get('d2c_n', 0)), 'capture_ok': s.get('capture_ok') == '1',
            'lost': int(s.get('lost', 0)), 'same_sector': int(s.get('same_sector', 0)),
            'queue_ms': float(q2d) / 1000 if q2d is not None else None,
            'queue_ios': int(q2d_n or 0),
            'service_ms': ms('d2c_mean_us'), 'total_ms': ms('q2c_mean_us'),
            'service_max_ms': ms('d2c_max_us'), 'total_max_ms': ms('q2c_max_us'),
            'service_p50_ms': exact(0.5), 'service_p99_ms': exact(0.99),
            'iops': io[2] + io[3] if io[2] is not None else None,
            'aqu_sz': io[9], 'aqu_sz_range': [min(per_s), max(per_s)] if per_s else None,
            'io_svctm_ms': io[11], 'util_pct': io[12]}

# why the device's depth is not exact, from the events doc/json.md names
def not_exact_why(ev):
    said = {'missed_completions': '%d completions unseen, each estimated',
            'unmatched_completions': '%d requests already in the device at attach',
            'rq_table_full': 'request table full %d times',
            'claim_races': '%d claim races',
            'contended_depth_updates': '%d contended depth updates',
            'depth_below_zero': 'depth below zero %d times',
            'unordered_depth_changes': '%d unordered depth changes'}
    why = [t % ev[k] for k, t in said.items() if ev.get(k)]
    return ', '.join(why) or 'a request too young to judge at the last sweep'

def truestat():
    docs = [json.loads(l) for l in open(tmp + '/truestat.json') if l.strip()]
    tot = [d for d in docs if d['type'] == 'totals']
    d = next((x for x in tot[-1]['devices'] if x['device'] == disk), None) if tot else None
    if d is None:
        die('truestat saw no I/O on %s: is a workload running? (or --fio QD)' % disk)
    a, c, oq = d['all'], d['concurrency'], d['os_queue']
    p = a['percentiles_ms']['service']
    # -v: when it began attaching, its span (CLOCK_MONOTONIC ns)
    w = [int(x) for x in open(tmp + '/window').read().split()]
    return {'ios': a['ios'], 'missed': a['missed'], 'span_s': tot[-1]['span_s'],
            'queued_ios': a['queued_ios'], 'window_mono_ns': w,
            'queue_ms': a['queue_ms'], 'service_ms': a['service_ms'], 'total_ms': a['total_ms'],
            'service_p50_ms': p['p50'], 'service_p99_ms': p['p99'], 'service_max_ms': p['max'],
            'queue_max_ms': a['percentiles_ms']['queue']['max'],
            'conc_mean': c['mean'], 'conc_max': c['max'], 'conc_max_min': c['max_min'],
            'conc_max_exact': c['max_exact'], 'conc_exact': c['exact'],
            'conc_not_exact_why': not_exact_why(d['events']), 'os_qd_mean': oq['mean'],
            'aqu_sz': c['mean'] + oq['mean'], 'util_pct': c['busy_pct'],
            'svctm_ms': d['iostat']['svctm_ms'], 'iops': a['iops']}

times = dict((k, float(v)) for k, v in (l.split() for l in open(tmp + '/times')))
I, B, T, S = iostat(), biolatency(), btt(), truestat()
if not I['iops']:
    die('iostat saw no I/O on %s in the window: is a workload running? (or --fio QD)' % disk)

def f(v, spec='%.3f'):
    if v is None:
        return '-'
    if isinstance(v, list):
        return '%s-%s' % (spec % v[0], spec % v[1])
    return spec % v

rows = [
    ('mean time in the OS queue (Q→D), ms', '-', '-', f(T['queue_ms']), f(S['queue_ms'])),
    ('mean service time (D→C), ms', '-', '-', f(T['service_ms']), f(S['service_ms'])),
    ('mean total (Q→C; iostat: await), ms', f(I['await_ms']), '-', f(T['total_ms']), f(S['total_ms'])),
    ('p50 service, ms', '-', f(B['service_p50_ms']), f(T['service_p50_ms']), f(S['service_p50_ms'])),
    ('p99 service, ms', '-', f(B['service_p99_ms']), f(T['service_p99_ms']), f(S['service_p99_ms'])),
    ('requests in the device, mean', '-', '-', '-', f(S['conc_mean'], '%.2f')),
    ('requests in the OS and the device, mean (aqu-sz)', f(I['aqu_sz'], '%.2f'), '-',
     f(T['aqu_sz'], '%.2f'), f(S['aqu_sz'], '%.2f')),
    ('%util: time with a request in the device, %', f(I['util_pct'], '%.1f'), '-',
     f(T['util_pct'], '%.1f'), f(S['util_pct'], '%.1f')),
    ('svctm: busy time / I/Os, ms', f(I['svctm_ms']) + ('' if I['svctm_printed'] else ' *'), '-', '-',
     f(S['svctm_ms'])),
    ('IOPS', f(I['iops'], '%.1f'), '-', f(T['iops'], '%.1f'), f(S['iops'], '%.1f')),
]
print('| %s | iostat | biolatency | btt | truestat |' % disk)
print('|---|---|---|---|---|')
for r in rows:
    print('| ' + ' | '.join(r) + ' |')
print()
t0, t1 = times['iostat_start'], times['iostat_end']
def win(a, b):
    return 'from %.2f s before to %.2f s after' % (t0 - times[a], times[b] - t1)
print('- **iostat** (sysstat %s): `iostat -dxy %s %d 1`, one report of /proc/diskstats over '
      '%.2f s. await (r_await, w_await and d_await weighted by r/s, w/s and d/s) runs '
      'from the allocation of the request, aqu-sz counts requests in the OS and in the '
      'device, %%util is the share of time with one in the device. '
      '%s' % (v_iostat, disk, secs, t1 - t0,
              'svctm as printed.' if I['svctm_printed'] else
              '\\* sysstat 12 no longer prints svctm: computed here from its %util and '
              'r/s + w/s + d/s, as it was before.'))
print('- **biolatency** (libbpf-tools %s): `biolatency -d %s`, %s iostat\'s window: a log2 '
      'histogram of issue→completion (D→C) in µs, %d I/Os. It prints no mean; a '
      'percentile is known only to its bucket, up to 2x wide.'
      % (v_bpftools, disk, win('biolatency_start', 'biolatency_end'), B['ios']))
print('- **btt** (blktrace %s): the kernel\'s blk tracer on %s (what blktrace uses), its '
      'records cut to truestat\'s window, through blkparse into btt: Q2D, D2C, Q2C of %d I/Os%s; p50 and p99 '
      'from its per-I/O D2C file (`-l`); aqu-sz (from getrq to completion; %s to %s in its '
      'seconds), %%util and IOPS from its iostat-like output (`-I`), whose svctm column is '
      'its mean Q2C (%s ms), not busy time / I/Os.'
      % (v_btt, disk, T['ios'],
         '' if T['capture_ok'] else ' (the tracer lost %d events: incomplete)' % T['lost'],
         f((T['aqu_sz_range'] or [None])[0], '%.2f'), f((T['aqu_sz_range'] or [None, None])[1], '%.2f'),
         f(T['io_svctm_ms'])))
print('- **truestat**: `truestat -j -v -H -d %s`, %s iostat\'s window (%.2f s): per request '
      'Q→D, D→C, Q→C and their histograms (within 6.25%%), %d I/Os%s; the device held '
      '%.2f requests on average%s and %s, the OS %.2f more.'
      % (disk, win('truestat_start', 'truestat_end'), S['span_s'], S['ios'],
         ' (+%d whose completion it did not see)' % S['missed'] if S['missed'] else '',
         S['conc_mean'], '' if S['conc_exact'] else ' (not exact: %s)' % S['conc_not_exact_why'],
         '%d at most' % S['conc_max'] if S['conc_max_exact'] else
         'from %d to %d at most (not exact)' % (S['conc_max_min'], S['conc_max']),
         S['os_qd_mean']))
if jout:
    with open(jout, 'w') as fh:
        json.dump({'device': disk, 'seconds': secs, 'command': cmd,
                   'windows': {k: v - t0 for k, v in times.items()},
                   'iostat': I, 'biolatency': B, 'btt': T, 'truestat': S}, fh, indent=1)
        fh.write('\n')
EOF
