#!/usr/bin/env bash
# Durable writes against a disk whose cache flush has a known cost: the
# simulated disk (tests/lib/simdisk.sh) with SIMDISK_FSYNC, so that each
# flush the loop device passes on (FUSE fsync) is served for D = 5 ms and
# logged as op F with its arrival A and reply R. fio writes 4 KiB with
# --fsync=1, then with --fdatasync=1; each sync is one empty REQ_PREFLUSH
# bio, served by one flush command whose issue..completion holds the
# daemon's A..R. Checked against the daemon's log and fio's report:
#  - count: the flush commands truestat timed + missed equal the F lines;
#    durable writes + missed + in flight equal fio's syncs; writes + missed
#    equal the W lines
#  - service: the flush commands' summed service holds the daemon's summed
#    A..R of its flushes (less, for each flush not timed, the longest A..R),
#    and each A..R holds D: the known delay is in the flush row
#  - share: the flush share lies between that summed A..R over the durable
#    writes' summed time (what the daemon held of it) and 1 (a flush
#    command is inside its sync's Q..end; plus, for each durable write
#    missed, the longest flush); and the durable writes' summed
#    time is at most fio's sync calls' (which add the system call)
#  - the slowest durable write at least D, and no slower than fio's slowest
#    sync
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/simdisk.sh"
need fio python3 fusermount3

make_tmp

SIMDISK_FSYNC=5000 simdisk_up 4 1000 64

run() { # NAME FIO-ARGS...
	local name=$1
	shift
	simdisk_mark
	ts_start "$tmp/$name.json" -d "$SIMDISK_LOOP"
	fio --name="$name" --filename="/dev/$SIMDISK_LOOP" --direct=1 \
		--rw=randwrite --bs=4k --ioengine=psync --size=16M --io_size=1M \
		--output-format=json --output="$tmp/$name.fio" "$@"
	ts_stop INT
	check "${name}_exit" "$TS_RC" "truestat ended with status $TS_RC"
	simdisk_save "$tmp/$name"
}

judge() { # NAME
	simdisk_judge "$1" "
name = '$1'
d = dev(totals('$tmp/$1.json'), '$SIMDISK_LOOP')
s, fl, wr = d['sync'], d['ops']['flush'], d['ops']['write']
f = json.load(open('$tmp/$1.fio'))['jobs'][0]
P = sd_params('$tmp/$1.full')
D = P['fsync_ns']
reqs = sd_read('$tmp/$1.log')
F = [r[3] - r[0] for r in reqs if r[4] == 'F']
W = [r for r in reqs if r[4] == 'W']
syncs = f['sync']['lat_ns']['N']
print(name + '_flush_count', int(fl['ios'] + fl['missed'] != len(F)),
      'flush commands %d + missed %d, the disk served %d' % (fl['ios'], fl['missed'], len(F)))
got = s['ios'] + s['missed'] + s['in_flight']
print(name + '_sync_count', int(got != syncs or s['untracked']),
      'durable writes %d + missed %d + in flight %d = %d, fio %d syncs (untracked %d)'
      % (s['ios'], s['missed'], s['in_flight'], got, syncs, s['untracked']))
print(name + '_write_count', int(wr['ios'] + wr['missed'] != len(W)),
      'writes %d + missed %d, the disk served %d' % (wr['ios'], wr['missed'], len(W)))
held = sum(F) - fl['missed'] * max(F, default=0)
mine = fl['ios'] * fl['service_ms'] * 1e6
print(name + '_flush_service', int(not held <= mine or min(F, default=0) < D),
      'flush service summed %.2f ms >= the disk\'s A..R %.2f ms (%d flushes, %d missed), each A..R >= D %.2f ms '
      '(shortest %.3f ms)' % (mine / 1e6, held / 1e6, len(F), fl['missed'], D / 1e6, min(F, default=0) / 1e6))
total = s['ios'] * s['total_ms'] * 1e6
share = s['flush_share']
lo = held / total if total else 1
# a flush timed whose durable write was missed adds to the share's top
hi = 1 + s['missed'] * fl['percentiles_ms']['service']['max'] * 1e6 / total if total else 1
print(name + '_share', int(not lo <= share <= hi),
      'flush share %.4f in [%.4f, %.4f]: the disk held %.2f of %.2f ms of durable writes (D %.2f ms of each; '
      '%d missed)' % (share, lo, hi, held / 1e6, total / 1e6, D / 1e6, s['missed']))
fsum = syncs * f['sync']['lat_ns']['mean']
print(name + '_vs_fio', int(total > fsum), 'durable writes summed %.2f ms <= fio\'s sync calls %.2f ms'
      % (total / 1e6, fsum / 1e6))
mx, fmax = s['percentiles_ms']['total']['max'] * 1e6, f['sync']['lat_ns']['max']
print(name + '_max', int(not D <= mx <= fmax * 1.0625),
      'slowest durable write %.3f ms: >= D %.3f ms, <= fio\'s slowest sync %.3f ms (+1/16, its bucket)'
      % (mx / 1e6, D / 1e6, fmax / 1e6))
"
}

run fsync --fsync=1
judge fsync
run fdatasync --fdatasync=1
judge fdatasync
finish
