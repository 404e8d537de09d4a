#!/usr/bin/env bash
# --pattern: the access pattern a disk sees, against fio's own jobs. One
# pass of sequential 64 KiB reads: every request but the first starts
# where the one before it ended (all seeks at distance 0), all of them in
# the 64K size class with fio's bytes. Random 4 KiB writes over 16384
# blocks, drawn independently (norandommap): a request follows the one
# before it with chance 1/16384, goes backwards with chance about 1/2.
# Counts equal fio's and diskstats'. A bio layer (zram) is counted at Q,
# alike, and its service by size at completion. Without --pattern its maps hold one
# entry each, and the JSON has no "pattern".
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need fio python3 bpftool

loop_new 64
dev=$LOOP
make_tmp

# run NAME FIO-ARGS...: fio under truestat --pattern; fio's JSON and the
# totals in $tmp/NAME.fio and $tmp/NAME.json, diskstats around it.
run() {
	local name=$1 dev=${DEV:-$dev}
	shift
	ts_start "$tmp/$name.json" --pattern -d "$dev"
	diskstats "$dev" >"$tmp/$name.before"
	fio --name="$name" --filename="/dev/$dev" --direct=1 --ioengine=psync \
		--output-format=json --output="$tmp/$name.fio" "$@"
	diskstats "$dev" >"$tmp/$name.after"
	ts_stop INT
}

run seq --rw=read --bs=64k --size=32M
run rand --rw=randwrite --bs=4k --size=64M --norandommap --randrepeat=0
zram_new 64
DEV=zram0 run zram --rw=write --bs=16k --size=16M
check_lines < <(py "
def case(name, op, fio_op, field, disk='$dev'):
    t = totals('$tmp/%s.json' % name)
    p = dev(t, disk)['pattern'][op]
    f = json.load(open('$tmp/%s.fio' % name))['jobs'][0][fio_op]
    b = [int(x) for x in open('$tmp/%s.before' % name).read().split()]
    a = [int(x) for x in open('$tmp/%s.after' % name).read().split()]
    return p, f, a[field] - b[field]
def sizes(p):
    return {(s['from_bytes'], s['below_bytes']): (s['ios'], s['bytes']) for s in p['sizes']}

p, f, disk = case('seq', 'read', 'read', 0)
ok = p['ios'] == f['total_ios'] == disk
print('seq_ios', int(not ok), 'sequential reads: pattern %d, fio %d, diskstats %d' % (p['ios'], f['total_ios'], disk))
ok = p['compared'] == p['ios'] - 1 and p['sequential'] == p['compared'] and p['backward'] == 0
print('seq_all_sequential', int(not ok), '%d compared with the request before, %d sequential, %d backward (all but the first, all, none)' % (p['compared'], p['sequential'], p['backward']))
seek = [(s['from_bytes'], s['ios']) for s in p['seek']]
print('seq_seek_zero', int(seek != [(0, p['compared'])]), 'seek histogram %s: all at distance 0' % seek)
sz = sizes(p)
print('seq_sizes', int(sz != {(65536, 131072): (f['total_ios'], f['io_bytes'])}), 'sizes %s: all 64K, fio %d bytes' % (sz, f['io_bytes']))

p, f, disk = case('rand', 'write', 'write', 4)
ok = p['ios'] == f['total_ios'] == disk
print('rand_ios', int(not ok), 'random writes: pattern %d, fio %d, diskstats %d' % (p['ios'], f['total_ios'], disk))
n = p['compared']
# sequential: binomial(n, 1/16384), mean about 1; 1% of n is over 60 sd away
print('rand_not_sequential', int(not (n == p['ios'] - 1 and p['sequential'] < 0.01 * n)),
      '%d of %d sequential (%.3f%%, expected %.1f)' % (p['sequential'], n, 100.0 * p['sequential'] / n, n / 16384.0))
# backward: binomial(n, about 1/2), sd 0.4% of n at n = 16383: +-5% is over 10 sd
share = p['backward'] / n
print('rand_backward_half', int(not 0.45 < share < 0.55), 'backward share %.3f (binomial about 1/2)' % share)
far = sum(s['ios'] for s in p['seek'] if s['from_bytes'] >= 1 << 20)
print('rand_seeks_far', int(far < n / 2), '%d of %d seeks 1 MiB or more (most, over 64 MiB drawn uniformly)' % (far, n))
sz = sizes(p)
print('rand_sizes', int(sz != {(4096, 8192): (f['total_ios'], f['io_bytes'])}), 'sizes %s: all 4K, fio %d bytes' % (sz, f['io_bytes']))

p, f, disk = case('zram', 'write', 'write', 4, 'zram0')
ok = p['ios'] == f['total_ios'] == disk and p['compared'] == p['ios'] - 1 == p['sequential']
ok = ok and sizes(p) == {(16384, 32768): (f['total_ios'], f['io_bytes'])}
print('zram_bio_layer', int(not ok), 'zram (a bio layer, counted at Q): %d writes (fio %d, diskstats %d), %d of %d compared sequential, sizes %s' % (p['ios'], f['total_ios'], disk, p['sequential'], p['compared'], sizes(p)))
# service by size, at completion: every write of the 16K class, less the
# completions never seen
m = dev(totals('$tmp/zram.json'), 'zram0')['ops']['write']['missed']
c = [s for s in p['sizes'] if s['from_bytes'] == 16384]
ok = c and c[0]['completed'] + m == f['total_ios'] and c[0]['service_ms'] is not None
print('zram_completed', int(not ok), 'zram 16K class: %s completed + %d never seen, fio %d writes; service %s'
      % (c[0]['completed'] if c else None, m, f['total_ios'], c[0]['service_ms'] if c else None))
")

check_schema pattern_schema "$tmp"/seq.json "$tmp"/rand.json "$tmp"/zram.json

# Off by default: one map entry, no "pattern" in the JSON.
ts_start "$tmp/off.json" -d "$dev"
# this truestat's maps: the map ids in its fds' fdinfo
ids=$(grep -h '^map_id:' /proc/"$TS_PID"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | xargs)
entries=$(bpftool map show -j | python3 -c '
import json, sys
ids = set(int(x) for x in sys.argv[1].split())
print(" ".join(str(m["max_entries"]) for m in json.load(sys.stdin)
               if m.get("name") in ("patterns", "size_hists") and m["id"] in ids))' "$ids")
dd if="/dev/$dev" of=/dev/null bs=4k count=16 iflag=direct status=none
ts_stop INT
check off_map_small "$([[ $entries == "1 1" ]]; echo $?)" "without --pattern the patterns and size_hists maps have max_entries '$entries' (1 1)"
check_lines < <(py "
d = dev(totals('$tmp/off.json'), '$dev')
print('off_no_json', int('pattern' in d), 'without --pattern the JSON has no pattern object')
")
finish
