#!/usr/bin/env bash
# A bio-based device (zram0: no request queue) is traced at its own layer,
# Q -> C: its reads and writes (+ missed) and their bytes equal its
# /proc/diskstats deltas exactly, the bios it holds at once obey Little's
# law against the per-bio times, and nothing is left in its depth at the
# end. Once as is, once with TRUESTAT_TEST_MISS_EVERY=N: the completion
# program then ignores one bio completion in N, the sweep must find each
# of them (BIO_TRACE_COMPLETION cleared, or the bio gone from the device)
# and every count must still come out right.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need fio python3

EVERY=29
zram_new 64
for run in plain miss; do
	out=$(mktemp /tmp/truestat-test.XXXXXX)
	on_exit "rm -f $out $out.err"
	every=0
	if [[ $run == miss ]]; then
		every=$EVERY
		TRUESTAT_TEST_MISS_EVERY=$every ts_start "$out" -d zram0
	else
		ts_start "$out" -d zram0
	fi
	# the device's entry is claimed by its first event: one read first,
	# so that two CPUs' first bios cannot race the claim (claim_races)
	before=$(diskstats zram0)
	dd if=/dev/zram0 of=/dev/null bs=4k count=1 iflag=direct status=none
	fio --name=zram --filename=/dev/zram0 --direct=1 --rw=randrw \
		--bssplit=4k/60:16k/30:64k/10 --ioengine=psync --numjobs=2 \
		--runtime=2 --time_based --group_reporting --output=/dev/null
	after=$(diskstats zram0)
	ts_stop INT
	check "${run}_exit" "$TS_RC" "SIGINT ends truestat with status $TS_RC"
	check_lines < <(py "
t = totals('$out')
d = dev(t, 'zram0')
b = [int(x) for x in '$before'.split()]
a = [int(x) for x in '$after'.split()]
every = $every
print('${run}_layer', int(d['layer'] != 'bio'), 'zram0 traced as layer %r (bio)' % d['layer'])
op = lambda o, k: d['ops'].get(o, {}).get(k, 0)
done = 0
for o, ios_f, sect_f in (('read', 0, 2), ('write', 4, 6)):
    ios, missed = op(o, 'ios'), op(o, 'missed')
    done += ios + missed
    got_b = op(o, 'bytes') + op(o, 'missed_bytes')
    want, want_b = a[ios_f] - b[ios_f], (a[sect_f] - b[sect_f]) * 512
    print('${run}_%s_ios' % o, int(ios + missed != want or want == 0),
          'truestat %d + %d missed, diskstats %d (exact)' % (ios, missed, want))
    print('${run}_%s_bytes' % o, int(got_b != want_b),
          'truestat %d bytes (with missed), diskstats %d (exact)' % (got_b, want_b))
missed = op('read', 'missed') + op('write', 'missed')
if every:
    # every N-th completion with a record is ignored: at least floor(done / N)
    print('${run}_missed', int(missed < done // every),
          '%d missed >= %d injected (1 in %d of %d)' % (missed, done // every, every, done))
c = d['concurrency']
print('${run}_depth_now', int(c['now'] != 0), 'bios left in the layer at the end: %d' % c['now'])
# Little's law between the depth registers and the per-bio times (two
# paths through the BPF side), as in 30-depth: equal but for the changes
# stamped after their clock read (reordered_ms) and the JSON's 6 decimals;
# a missed bio is in the depth until its repair's estimated end, from 0 to
# the recent mean Q -> C (at most the slowest).
al = d['all']
little('${run}_little', c, t['span_s'] * 1000, al['ios'] * al['service_ms'], al['ios'], missed,
       al['percentiles_ms']['service']['max'], 'Q->C')
print('${run}_exact_flag', int(c['exact'] != (missed == 0 and c['excess'] == 0)),
      'depth exact=%s with %d missed' % (c['exact'], missed))
")
done
finish
