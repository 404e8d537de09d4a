#!/usr/bin/env bash
# Durable writes (the sync row): fio on a loop device (it has a write
# cache: flushes reach it). With --fsync=1 and with --fdatasync=1, every
# sync is one empty REQ_PREFLUSH bio: timed + missed + in flight equal
# fio's count of syncs. Each one's Q -> C holds its flush command's D -> C
# and lies inside fio's sync call, so, summed: the flush commands' service
# minus those of the syncs not timed (at most their count x the longest
# flush) <= the durable writes' time <= fio's sync latency. O_DSYNC direct
# writes (REQ_FUA, which loop does not have: data, then a post-flush, two
# completions of one request) carry fio's bytes, counted once.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need fio python3

loop_new 64
dev=$LOOP
make_tmp

run() { # NAME FIO-ARGS... (truestat's own extra arguments in ts_extra)
	local name=$1
	shift
	ts_start "$tmp/$name.json" -H -d "$dev" "${ts_extra[@]}"
	fio --name="$name" --filename="/dev/$dev" --rw=randwrite --ioengine=psync \
		--size=16M --output-format=json --output="$tmp/$name.fio" "$@"
	# the heat map, made of the interval reports, must hold every I/O
	[[ ${#ts_extra[@]} -eq 0 ]] || ts_reports_after "$tmp/$name.json"
	ts_stop INT
}
ts_extra=(--heatmap="$tmp/fsync.svg" 0.5)
run fsync --bs=4k --io_size=4M --fsync=1
ts_extra=()
run fdatasync --bs=4k --io_size=4M --fdatasync=1
run dsync --bs=16k --io_size=8M --direct=1 --sync=dsync

check_lines < <(py "
import re

def case(name):
    d = dev(totals('$tmp/%s.json' % name), '$dev')
    return d['sync'], d, json.load(open('$tmp/%s.fio' % name))['jobs'][0]

for name in ('fsync', 'fdatasync'):
    s, d, f = case(name)
    syncs = f['sync']['lat_ns']['N'] # fio 3.33 counts fdatasyncs here only
    got = s['ios'] + s['missed'] + s['in_flight']
    print(name + '_count', int(got != syncs or s['untracked']),
          'durable writes %d + missed %d + in flight %d = %d, fio %d syncs (untracked %d)'
          % (s['ios'], s['missed'], s['in_flight'], got, syncs, s['untracked']))
    fl = d['ops']['flush']
    flush_sum = fl['ios'] * fl['service_ms']
    untimed = max(0, fl['ios'] - s['ios'])
    low = flush_sum - untimed * fl['percentiles_ms']['service']['max'] / (1 - 0.0625)
    mine = s['ios'] * s['total_ms']
    high = syncs * f['sync']['lat_ns']['mean'] / 1e6
    print(name + '_time', int(not low <= mine <= high),
          'summed: flush service %.1f ms - %d untimed x max = %.1f <= durable %.1f ms <= fio sync %.1f ms'
          % (flush_sum, untimed, low, mine, high))

# The durable writes' histogram (BPF, beside the counters): as many as
# timed, their sum bracketed by its buckets (each at most 1/16 wide), the
# slowest no slower than fio's slowest sync call, and the heat map's panel
# of them (interval histograms, summed) holding every one.
s, d, f = case('fsync')
h = s['histograms']['total_ns']
n = sum(c for _, c in h)
print('hist_count', int(n != s['ios']), 'sync histogram holds %d, durable writes %d' % (n, s['ios']))
lo = sum(b * c for b, c in h) / 1e6
hi = sum((b + max(1, b // 16)) * c for b, c in h) / 1e6
mine = s['ios'] * s['total_ms']
print('hist_sum', int(not lo <= mine <= hi), 'buckets %.3f ms <= summed %.3f ms <= %.3f ms' % (lo, mine, hi))
top = max(b for b, _ in h)
fmax = f['sync']['lat_ns']['max']
print('hist_max', int(top > fmax), 'slowest durable write from %.3f ms, fio slowest sync %.3f ms' % (top / 1e6, fmax / 1e6))
p = s['percentiles_ms']['total']
print('pct_order', int(not p['p50'] <= p['p99'] <= p['max'] * 1.0625), 'p50 %.3f <= p99 %.3f <= max %.3f ms' % (p['p50'], p['p99'], p['max']))
svg = open('$tmp/fsync.svg').read()
m = re.search(r'data-op=\"write\" data-kind=\"sync\" data-ios=\"(\d+)\"', svg)
print('heatmap_sync', int(not m or int(m.group(1)) != s['ios']),
      'heat map sync panel: %s durable writes, totals %d' % (m.group(1) if m else 'none', s['ios']))

s, d, f = case('dsync')
w = f['write']
ok = w['io_bytes'] - 16384 * s['missed'] <= s['bytes'] <= w['io_bytes'] and s['ios'] >= w['total_ios'] - s['missed']
print('dsync_bytes', int(not ok), 'O_DSYNC writes: durable bytes %d, fio %d (missed %d); %d durable writes for fio %d writes (each also fsyncs)'
      % (s['bytes'], w['io_bytes'], s['missed'], s['ios'], w['total_ios']))
ev = d['events']
print('dsync_no_double', int(s['bytes'] > w['io_bytes']), 'no data counted twice though each request completes twice (%d zero-byte sequence ends)' % ev['flush_sequence_ends'])
")

# --light does not follow bios: no durable writes, and it says so (null).
ts_start "$tmp/light.json" --light -d "$dev"
fio --name=l --filename="/dev/$dev" --rw=randwrite --ioengine=psync --bs=4k \
	--size=1M --fsync=1 --output=/dev/null
ts_stop INT
check_lines < <(py "
d = dev(totals('$tmp/light.json'), '$dev')
print('light_null', int(d['sync'] is not None), '--light: sync %s (null: not followed)' % d['sync'])
")
finish
