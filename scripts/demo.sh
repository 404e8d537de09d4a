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
and two lines of conclusion drawn from the figures.

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
[[ -c /dev/fuse ]] || die 1 "no FUSE: /dev/fuse is missing (modprobe fuse; a container needs --device /dev/fuse)"
[[ -c /dev/loop-control ]] || compgen -G '/dev/loop[0-9]*' >/dev/null ||
	die 1 "cannot create loop devices: no /dev/loop-control and no /dev/loopN (modprobe loop)"
# a free one (made now if need be): the one error FUSE cannot explain later
err=$(losetup -f 2>&1 >/dev/null) || die 1 "cannot create loop devices: ${err:-losetup -f failed}"

"$ROOT/scripts/deps.sh" --demo
sd_make=${SIMDISK:-.output/simdisk}	# make demo passes its own
make -C "$ROOT" -s truestat "$sd_make"

# The simulated disk and its teardown (tests/lib/simdisk.sh): every step
# below is undone by cleanup(), on any exit, in reverse order
# shellcheck source=tests/lib/common.sh
. "$ROOT/tests/lib/common.sh"
# shellcheck source=tests/lib/simdisk.sh
. "$ROOT/tests/lib/simdisk.sh"
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
# N readers, then truestat -D's verdict and the conclusion
FIGURES_PY=$(cat <<'PY'
import json, sys, time

tmp, dev, K, S_US, BS, WINDOW, INTERVAL, mode = sys.argv[1:9]
K, S = int(K), int(S_US) / 1000.0       # S in ms

def reports():
    return [json.loads(l) for l in open(tmp + '/reports.jsonl') if l.strip()]

def stamps():
    out = []
    for l in open(tmp + '/stamps'):
        x = l.split()
        out.append((float(x[0]), [int(v) for v in x[1:]]))
    return out

def mine(rep):
    return next((d for d in rep['devices'] if d['device'] == dev), None)

RULE = '        |  iostat -x (from /proc/diskstats)             |  truestat -j -D'
HEAD = ('THREADS |     r/s  r_await_ms  aqu-sz  %%util  svctm_ms  |'
        '    IOPS  SERVICE_ms  QUEUE_ms    CONC  BUSY%%')

if mode == 'header':
    secs = int(WINDOW) * float(INTERVAL)
    print('truestat demo: a simulated disk with %d units, each serving one request in exactly'
          % K)
    print('%g ms (at most %d reads/s; tests/simdisk behind %s), read by N synchronous readers'
          % (S, round(K * 1000 / S), dev))
    print('in turn (fio --ioengine=psync --rw=randread --bs=%s --direct=1 --numjobs=N).' % BS)
    print('Each row: iostat\'s figures (sysstat\'s formulas on /proc/diskstats) and truestat\'s')
    print('(truestat -j -D -d %s %s) over the same %g s of steady load.' % (dev, INTERVAL, secs))
    print()
    print(RULE)
    print(HEAD.replace('%%', '%'))
    sys.exit(0)

if mode == 'row':
    n = int(sys.argv[9])
    ph = dict((int(x.split()[0]), [int(v) for v in x.split()[1:]]) for x in open(tmp + '/phases'))
    first, last = ph[n]
    st, reps = stamps(), reports()
    # iostat: the deltas of /proc/diskstats between the stamps around the
    # window, as sysstat computes them (ticks in ms)
    (t0, a), (t1, b) = st[first - 1], st[last - 1]
    d = [y - x for x, y in zip(a, b)]
    el = t1 - t0
    reads, ios = d[0], d[0] + d[4] + (d[11] if len(d) > 11 else 0)
    io = {'r_s': reads / el, 'r_await_ms': d[3] / reads if reads else None,
          'aqu_sz': d[10] / (el * 1000), 'util_pct': d[9] / (el * 10),
          'svctm_ms': d[9] / ios if ios else None, 'reads': reads, 'elapsed_s': el}
    # truestat: its reports of the same window, summed
    span = n_ios = svc = q = qn = conc = busy = missed = 0
    exact = True
    for r in reps[first:last]:
        span += r['span_s']
        x = mine(r)
        if not x:
            continue
        al, c = x['all'], x['concurrency']
        n_ios += al['ios']
        missed += al['missed']
        svc += (al['service_ms'] or 0) * al['ios']
        q += (al['queue_ms'] or 0) * al['queued_ios']
        qn += al['queued_ios']
        conc += c['mean'] * r['span_s']
        busy += c['busy_pct'] * r['span_s']
        exact = exact and c['exact']
    # what an unseen completion can add to CONC: its request stays in the
    # depth to its estimated end, issue + the last report's mean service
    # (the hint), or to the next report when found then (suspect: under
    # 10 ms); found in one of the window's reports or the one after
    near = [mine(r) for r in reps[max(first - 1, 0):last + 1]]
    hint_ms = max([(x['all']['service_ms'] or 0) for x in near if x] + [0])
    missed_near = sum(x['all']['missed'] for x in near[1 if first else 0:] if x)
    ts = {'iops': n_ios / span, 'service_ms': svc / n_ios if n_ios else None,
          'queue_ms': q / qn if qn else None, 'conc': conc / span, 'busy_pct': busy / span,
          'exact': exact, 'ios': n_ios, 'missed': missed, 'span_s': span,
          'missed_near': missed_near, 'hint_max_ms': hint_ms}
    row = {'threads': n, 't0': t0, 't1': t1, 'iostat': io, 'truestat': ts,
           'realtime_minus_monotonic_s': time.time() - time.monotonic()}
    with open(tmp + '/rows.jsonl', 'a') as f:
        f.write(json.dumps(row) + '\n')
    f = lambda v, spec: '-' if v is None else spec % v
    print('%7d | %7.1f  %10s  %6.2f  %5.1f  %8s  | %7.1f  %10s  %8s  %6s  %5.1f' % (
        n, io['r_s'], f(io['r_await_ms'], '%.2f'), io['aqu_sz'], io['util_pct'],
        f(io['svctm_ms'], '%.2f'), ts['iops'], f(ts['service_ms'], '%.2f'),
        f(ts['queue_ms'], '%.3f'), ('%.2f' if exact else '~%.1f') % ts['conc'], ts['busy_pct']))
    sys.exit(0)

# end: the verdict of -D over the whole demo, then the conclusion
rows = [json.loads(l) for l in open(tmp + '/rows.jsonl')]
tot = [r for r in reports() if r['type'] == 'totals']
cv = mine(tot[-1])['depth_curve'] if tot and mine(tot[-1]) else None
print()
if any(not r['truestat']['exact'] for r in rows):
    print('~: an estimate: a completion went unseen in that run (the platform drops a few);'
          ' truestat counts them')
if cv and cv['parallelism_depths']:
    print('truestat -D over the %d runs: effective parallelism %s%s (the disk has %d units):'
          % (len(rows), cv['parallelism_depths'], ' (still growing)' if cv['still_growing'] else '', K))
    print('  beyond that depth, throughput grew less than +20%% per doubling%s.'
          % ('' if cv['exact'] else '; the depths are estimates'))
else:
    print('truestat -D over the %d runs: no parallelism verdict (too little evidence)' % len(rows))

one = rows[0]
best = max(r['truestat']['iops'] for r in rows)
p = next(r for r in rows if r['truestat']['iops'] >= 0.9 * best)
ratio = p['truestat']['iops'] / one['truestat']['iops']
u = one['iostat']['util_pct']
full = ' (full)' if u >= 95 else ''
if p is one or ratio < 1.2:
    l1 = ('%%util said %.0f%%%s at %d thread, and the device did no more with more'
          ' (%.1fx at %d).' % (u, full, one['threads'], rows[-1]['truestat']['iops'] /
                               one['truestat']['iops'], rows[-1]['threads']))
    p = rows[-1]
else:
    l1 = ('%%util said %.0f%%%s at %d thread; the device did %.1fx more at %d threads.'
          % (u, full, one['threads'], ratio, p['threads']))
sv, se = p['iostat']['svctm_ms'], p['truestat']['service_ms']
l2 = ('svctm said %.1f ms at %d threads; each request took %.1f ms in the device'
      ' (truestat\'s SERVICE), %.1fx as long.' % (sv, p['threads'], se, se / sv))
print()
print(l1)
print(l2)
json.dump({'device': dev, 'units': K, 'service_ms': S, 'bs': BS,
           'interval_s': float(INTERVAL), 'window_reports': int(WINDOW),
           'rows': rows, 'depth_curve': cv, 'conclusion': [l1, l2]},
          open(tmp + '/figures.json', 'w'), indent=1)
PY
)
figures() { python3 -c "$FIGURES_PY" "$tmp" "$dev" "$K" "$S_US" "$BS" "$WINDOW" "$INTERVAL" "$@"; }

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
