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
tmp=$(mktemp -d /tmp/truestat-test.XXXXXX)
on_exit "rm -rf $tmp"

run() { # NAME FIO-ARGS...
	local name=$1
	shift
	ts_start "$tmp/$name.json" -H -d "$dev"
	fio --name="$name" --filename="/dev/$dev" --rw=randwrite --ioengine=psync \
		--size=16M --output-format=json --output="$tmp/$name.fio" "$@"
	ts_stop INT
}
run fsync --bs=4k --io_size=4M --fsync=1
run fdatasync --bs=4k --io_size=4M --fdatasync=1
run dsync --bs=16k --io_size=8M --direct=1 --sync=dsync

check_lines < <(py "
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
