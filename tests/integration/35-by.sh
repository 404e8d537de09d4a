#!/usr/bin/env bash
# --by=cgroup and --by=process against fio's own counts and the simulated
# disk's log. Two fio jobs at once on one simulated disk (K = 8, S = 1 ms),
# each in a cgroup v2 of its own and on a range of its own (4 KiB reads in
# the first 16 MiB, 16 KiB reads from 32 MiB): per cgroup, I/Os and bytes
# equal that job's, less at most the requests whose submitter is not known:
# the completions counted missed, and the row of submitter id 0, which may
# hold only requests issued without their Q seen (no_queue_time: a Q lost
# while another CPU set up the disk's entry, claim_races); all rows and the
# missed equal diskstats; each
# cgroup's mean total time lies between the disk's own mean A..R for the
# requests of its range and fio's mean latency for the job (D..C holds
# A..R, and fio's submit..reap holds Q..C). By process: two rows, one per
# fio job, with its I/Os and bytes; with --top=1, one of them summed as
# other, in the JSON and in the exporter's by-process series alike. With
# one completion in 7 dropped (TRUESTAT_TEST_MISS_EVERY), each missed one
# is in its cgroup's row: the rows' missed add up to the device's repairs
# (missed_completions), and a cgroup's I/Os + missed equal its job's, less
# at most the requests of no known submitter (the row of id 0, the issues
# unseen). Bad --by and --top: one line, exit 2.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/simdisk.sh"
need fio python3 fusermount3 curl

make_tmp
cgroup_new a
cg_a=$CG
cgroup_new b
cg_b=$CG

simdisk_up 8 1000 64

# job NAME BS OFFSET: fio in cgroup NAME, in the background
job() {
	local cg=cg_$1
	cgroup_exec "${!cg}" fio --name="$1" --filename="/dev/$SIMDISK_LOOP" --direct=1 \
		--rw=randread --bs="$2" --offset="$3" --size=16M --ioengine=psync \
		--runtime=3 --time_based --output-format=json --output="$tmp/$1.fio" &
	FIO_PIDS+=($!)
}
port=$(free_port)
run() { # BY TOP [NAME]
	local name=${3:-$1}
	simdisk_mark
	ds0=$(diskstats "$SIMDISK_LOOP")
	ts_start "$tmp/$name.json" --by="$1" --top="$2" --prometheus="$port" -d "$SIMDISK_LOOP"
	FIO_PIDS=()
	job a 4k 0
	job b 16k 32M
	wait "${FIO_PIDS[@]}"
	curl -sf "http://127.0.0.1:$port/metrics" >"$tmp/$name.prom" || true
	ts_stop INT
	ds1=$(diskstats "$SIMDISK_LOOP")
	simdisk_save "$tmp/$name"
}

run cgroup 5
simdisk_judge cgroup "
d = dev(totals('$tmp/cgroup.json'), '$SIMDISK_LOOP')
by = d['by']
missed = d['ops']['read']['missed']
rows = [r for r in by['rows'] if r['op'] == 'read']
unknown = sum(r['ios'] for r in rows if not r.get('id'))
ev = d['events']
reqs = sd_read('$tmp/cgroup.log')
ds = int('$ds1'.split()[0]) - int('$ds0'.split()[0])
for n, bs, lo, hi in (('a', 4096, 0, 16 << 20), ('b', 16384, 32 << 20, 48 << 20)):
    f = json.load(open('$tmp/%s.fio' % n))['jobs'][0]['read']
    mine = [r for r in rows if r.get('name') == '/truestat-test.$$.' + n]
    r = mine[0] if len(mine) == 1 else {'ios': -1, 'bytes': -1, 'total_ms': -1}
    ok = f['total_ios'] - missed - unknown <= r['ios'] <= f['total_ios'] and r['bytes'] == r['ios'] * bs
    print('cgroup_' + n + '_counts', int(not ok), 'cgroup %s: %d I/Os, %d bytes; fio %d, %d (missed %d, submitter not known %d)' % (
          n, r['ios'], r['bytes'], f['total_ios'], f['io_bytes'], missed, unknown))
    ar = [x[3] - x[0] for x in reqs if lo <= x[5] < hi]
    low = sum(ar) / len(ar) / 1e6 if ar else 0
    high = f['lat_ns']['mean'] / 1e6
    print('cgroup_' + n + '_total', int(not low <= r['total_ms'] <= high),
          'cgroup %s: mean total %.3f ms in [%.3f (disk A..R over %d requests), %.3f (fio latency)]' % (n, r['total_ms'], low, len(ar), high))
got = sum(r['ios'] for r in rows) + missed
print('cgroup_sum', int(got != ds), 'all rows %d + missed %d = %d, diskstats %d' % (got - missed, missed, got, ds))
named = [r for r in rows if r.get('id')]
print('cgroup_rows', int(len(named) != 2 or by['kind'] != 'cgroup' or by['not_attributed']),
      '%d rows (kind %s, not attributed %d): the two cgroups, besides submitter id 0 (%s)' % (
      len(rows), by['kind'], by['not_attributed'],
      ', '.join('%s id %s: %d' % (r.get('name'), r.get('id'), r['ios']) for r in rows)))
print('cgroup_unknown', int(unknown > ev['no_queue_time']),
      'submitter id 0: %d I/Os, at most the %d issued without their Q seen (claim_races %d)' % (
      unknown, ev['no_queue_time'], ev['claim_races']))
"

run process 1
check_lines < <(py "
d = dev(totals('$tmp/process.json'), '$SIMDISK_LOOP')
missed = d['ops']['read']['missed']
rows = [r for r in d['by']['rows'] if r['op'] == 'read']
fio = [json.load(open('$tmp/%s.fio' % n))['jobs'][0]['read'] for n in 'ab']
# a job's row is the one whose bytes per I/O are its block size (the
# summed row of the others too: it holds one process)
for f, bs in zip(fio, (4096, 16384)):
    mine = [r for r in rows if r['ios'] and r['bytes'] == r['ios'] * bs]
    ok = len(mine) == 1 and f['total_ios'] - missed <= mine[0]['ios'] <= f['total_ios'] and mine[0].get('name', 'other (fio)').endswith('(fio)')
    print('process_%d' % bs, int(not ok), 'the %d-byte reader: %s; fio %d I/Os (missed %d)%s' % (
          bs, [(r.get('name', 'other'), r['ios']) for r in mine], f['total_ios'], missed,
          '' if ok else '; every row (name, others, I/Os, bytes): %s; events %s' % (
              [(r.get('name'), r.get('others'), r['ios'], r['bytes']) for r in rows],
              {k: v for k, v in d['events'].items() if v})))
print('process_rows', int(len(rows) != 2 or sum('others' in r for r in rows) != 1),
      '%d rows with --top=1: one fio process, the other summed' % len(rows))
# Prometheus: the first process seen has series of its own, the rest are
# summed as process=\"other\"; they add up to the JSON's rows
prom = {}
for l in open('$tmp/process.prom'):
    if l.startswith('truestat_by_requests_total{'):
        k, v = l.rsplit(' ', 1)
        prom[k.split('process=\"')[1].split('\"')[0]] = float(v)
named = [k for k in prom if k != 'other']
ok = len(named) == 1 and 'other' in prom and prom[named[0]] in [r['ios'] for r in rows]
ok = ok and sum(prom.values()) == sum(r['ios'] for r in rows)
print('process_prometheus', int(not ok), 'truestat_by_requests_total: %s; JSON rows %s' % (prom, [r['ios'] for r in rows]))
")

TRUESTAT_TEST_MISS_EVERY=7 run cgroup 5 dropped
check_lines < <(py "
d = dev(totals('$tmp/dropped.json'), '$SIMDISK_LOOP')
ev = d['events']
rows = [r for r in d['by']['rows'] if r['op'] == 'read']
got = sum(r['missed'] for r in rows)
print('dropped_rows_missed', int(got != ev['missed_completions'] or not got or ev['who_table_full']),
      'the rows\' missed %d, the device\'s repairs %d (> 0; who_table_full %d)' % (
      got, ev['missed_completions'], ev['who_table_full']))
unknown = sum(r['ios'] + r['missed'] for r in rows if not r.get('id')) + ev['issues_unseen']
for n in 'ab':
    f = json.load(open('$tmp/%s.fio' % n))['jobs'][0]['read']
    mine = [r for r in rows if r.get('name') == '/truestat-test.$$.' + n]
    seen = mine[0]['ios'] + mine[0]['missed'] if len(mine) == 1 else -1
    print('dropped_' + n, int(not f['total_ios'] - unknown <= seen <= f['total_ios']),
          'cgroup %s: %d I/Os + %d missed, fio %d (less at most %d of no known submitter)' % (
          n, mine[0]['ios'] if mine else -1, mine[0]['missed'] if mine else -1, f['total_ios'], unknown))
")

check_schema by_schema "$tmp"/cgroup.json "$tmp"/process.json "$tmp"/dropped.json

for a in --by=foo --by= --top=0 --top=x --top=5; do
	rc=0
	err=$("$TRUESTAT" $a 1 1 2>&1 >/dev/null) || rc=$?
	check "bad_${a//[^a-z0-9]/_}" "$([[ $rc == 2 && $(wc -l <<<"$err") == 1 ]]; echo $?)" "$a: exit $rc, $err"
done
finish
