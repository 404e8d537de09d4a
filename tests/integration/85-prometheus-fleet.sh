#!/usr/bin/env bash
# The exporter as a fleet reads it: truestat_build_info names the version
# and commit `truestat --version` prints and the kernel `uname -r` does;
# --web.listen-address serves /metrics and --prometheus is the same option;
# the series of one disk under fio's reads and writes, then durable writes,
# stay within their ceilings, with and without -D and --by; the short
# buckets' counts are the kernel's fine buckets summed (the JSON totals of
# the same data), and the full form has the same histograms, 113 edges each;
# bad values are one line and exit 2.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need fio python3 curl promtool prometheus

loop_filled 64
dev=$LOOP
make_tmp

# serve OUT ARGS...: truestat with ARGS, once /metrics answers on $url
serve() {
	local out=$1 i
	shift
	port=$(free_port)
	url=http://127.0.0.1:$port
	ts_start "$out" "${@/PORT/$port}"
	wait_serving "$url" && return 0
	echo "truestat did not serve $url"
	return 1
}

# The classic series of one disk, the ceiling doc/prometheus.md states:
# 11 always, the events that happened, 4 sync counters, 3 per direction and
# per depth class, 14 per histogram: reads and writes have 6 histograms, durable writes add a
# flush direction's 3 and the sync histogram; --by=process adds
# (--top + 1) submitters x 3 directions x 3 counters at most.
RW_CEILING=200
DURABLE_CEILING=200
BY_CEILING=$((DURABLE_CEILING + (10 + 1) * 3 * 3))
mix() {
	fio --name=mix --filename="/dev/$dev" --direct=1 --rw=randrw --bs=4k \
		--ioengine=libaio --iodepth=4 --runtime=2 --time_based --output=/dev/null
}
durable() {
	fio --name=durable --filename="/dev/$dev" --rw=randwrite --bs=4k \
		--size=16M --io_size=1M --fsync=1 --ioengine=psync --output=/dev/null
}
# series OUT: the scrape's series of $dev (comments left out)
series() {
	grep -v '^#' "$1" | grep -c "device=\"$dev\""
}
# ceilings NAME RW_CEILING DURABLE_CEILING: reads and writes, then durable
# writes, each scraped and its series of $dev held to its ceiling
ceilings() {
	local n
	mix
	curl -sf "$url/metrics" >"$tmp/$1.rw"
	n=$(series "$tmp/$1.rw")
	check "series_$1_rw" "$((n > $2))" "$1, reads and writes: $n series of $dev (ceiling $2)"
	durable
	curl -sf "$url/metrics" >"$tmp/$1.durable"
	n=$(series "$tmp/$1.durable")
	check "series_$1_durable" "$((n > $3))" "$1, then durable writes: $n series of $dev (ceiling $3)"
}

serve "$tmp/a.json" --web.listen-address=PORT -d "$dev" --hist=fine
curl -sf "$url/metrics" >"$tmp/a0"
check_cmd promtool_check "promtool check metrics accepts the exposition" \
	bash -c "promtool check metrics <'$tmp/a0' >'$tmp/promtool.txt' 2>&1"
check_lines < <(py "
import re
m = scrape('$tmp/a0')
info = [k for k in m if k.startswith('truestat_build_info{')]
got = dict(re.findall(r'(\w+)=\"([^\"]*)\"', info[0])) if len(info) == 1 else {}
v = '$("$TRUESTAT" --version)'.split()
want = {'version': v[1], 'commit': v[2].strip('()') if len(v) > 2 else 'unknown',
        'kernel': '$(uname -r)'}
print('build_info', int(got != want or m.get(info[0] if info else '') != 1),
      'truestat_build_info %s = %s; truestat --version and uname -r: %s' % (
          got, m.get(info[0]) if info else 'missing', want))
")
ceilings short "$RW_CEILING" "$DURABLE_CEILING"
ts_stop INT
check ts_exit "$TS_RC" "--web.listen-address: SIGINT ends truestat with status $TS_RC"

# The last scrape and the totals at exit hold the same I/O (the disk was
# idle in between): at each short edge, the count is the fine buckets'
# below it, for every histogram of every direction.
check_lines < <(py "
import re
m = scrape('$tmp/short.durable')
d = dev(totals('$tmp/a.json'), '$dev')
bad, n = [], 0
for k, v in m.items():
    g = re.fullmatch(r'truestat_(queue|service|total_time)_seconds_bucket\{device=\"$dev\",layer=\"request\",op=\"(\w+)\",le=\"([^\"]+)\"\}', k)
    if not g:
        continue
    kind, op, le = g.groups()
    fine = d['ops'][op]['histograms'][('total' if kind == 'total_time' else kind) + '_ns']
    edge = float('inf') if le == '+Inf' else round(float(le) * 1e9)
    want = sum(c for lo, c in fine if lo < edge)
    n += 1
    if v != want:
        bad.append('%s %s le=%s: %d, fine buckets %d' % (kind, op, le, v, want))
print('short_sums_fine', int(bool(bad) or not n),
      '%d short buckets, each the sum of the JSON totals\' fine buckets below it; differing: %s' % (n, bad[:3] or 'none'))
")

# -D adds nothing to the exporter's series (the maps it reads are always
# on); --prometheus is the same option as --web.listen-address.
serve "$tmp/d.json" --prometheus=PORT -d "$dev" -D
ceilings depth "$RW_CEILING" "$DURABLE_CEILING"
ts_stop INT
serve "$tmp/b.json" --web.listen-address=PORT -d "$dev" --by=process
ceilings by "$BY_CEILING" "$BY_CEILING"
ts_stop INT

# The full form: the same histograms, 113 edges each, the short 11.
serve "$tmp/f.json" --web.listen-address=PORT -d "$dev" --web.histogram-buckets=full
ceilings full 100000 100000
ts_stop INT
check_lines < <(py "
import re
def buckets(path):
    n = {}
    for k in scrape(path):
        g = re.fullmatch(r'(truestat_\w+_seconds)_bucket\{device=\"$dev\",(.*),le=\"[^\"]+\"\}', k)
        if g:
            n[g.groups()] = n.get(g.groups(), 0) + 1
    return n
s, f = buckets('$tmp/short.durable'), buckets('$tmp/full.durable')
print('full_form', int(set(s) != set(f) or set(s.values()) != {12} or set(f.values()) != {114}),
      'short: %d histograms of $dev with %s buckets each; full: %d with %s (+Inf included)' % (
          len(s), sorted(set(s.values())), len(f), sorted(set(f.values()))))
")

# The depth per window: one completion in 50 dropped (as the platform
# drops some) under fio at depth 4, then the disk idle. The scrape after
# fio has missed completions (diskstats counts them) and an inexact window;
# once the sweep found them, a scrape's window is exact again, and so is
# the next one's, its max 0 (the disk idle: diskstats still), and the
# time counted inexact stopped rising; the run's max is a range.
# With an interval, its spans are the reports: the test sees them end.
TRUESTAT_TEST_MISS_EVERY=50 serve "$tmp/w.json" --web.listen-address=PORT -d "$dev" 0.5
lossy() {
	fio --name=lossy --filename="/dev/$dev" --direct=1 --rw=randread \
		--bs=4k --ioengine=libaio --iodepth=4 --runtime=1 --time_based \
		--output=/dev/null
}
curl -sf "$url/metrics" >"$tmp/w0"
before=$(diskstats "$dev")
lossy
after=$(diskstats "$dev")
curl -sf "$url/metrics" >"$tmp/w1"
W='{device="'$dev'",layer="request"}'
# exact_now FILE: the window of a scrape into FILE is exact
exact_now() {
	curl -sf "$url/metrics" >"$1" &&
		grep -qx "truestat_device_concurrency_window_exact$W 1" "$1"
}
# 60 s: a guard for the sweep to find the completions dropped; the loop
# ends at the first exact window
for ((i = 0; i < 300; i++)); do
	exact_now "$tmp/w2" && break
	sleep 0.2
done
idle=$(diskstats "$dev")
ts_reports_after "$tmp/w.json" # a span ended between the two scrapes
curl -sf "$url/metrics" >"$tmp/w3"
check_lines < <(py "
m0, m1, m2, m3 = (scrape('$tmp/w%d' % i) for i in range(4))
W = '$W'
L = W[:-1] + ',op=\"read\"}'
b, a = [int(x) for x in '$before'.split()], [int(x) for x in '$after'.split()]
missed = m1['truestat_missed_completions_total' + L] - m0.get('truestat_missed_completions_total' + L, 0)
seen = m1['truestat_requests_total' + L] - m0.get('truestat_requests_total' + L, 0)
print('lost_counted', int(not missed or seen + missed != a[0] - b[0]),
      'under fio: %d completions seen + %d counted missed = diskstats reads %d' % (seen, missed, a[0] - b[0]))
g = lambda m, k: m['truestat_device_concurrency_%s%s' % (k, W)]
print('window_inexact', int(g(m1, 'window_exact') != 0 or not g(m1, 'window_max_min') <= min(4, g(m1, 'window_max'))),
      'the scrape after fio: window exact %d, max between %d and %d (fio: 4)' % (
          g(m1, 'window_exact'), g(m1, 'window_max_min'), g(m1, 'window_max')))
print('window_exact_again', int(g(m2, 'window_exact') != 1 or g(m3, 'window_exact') != 1),
      'later scrapes: window exact %d, then %d' % (g(m2, 'window_exact'), g(m3, 'window_exact')))
print('window_idle_max', int(g(m3, 'window_max') != 0 or g(m3, 'window_max_min') != 0 or '$idle' != '$(diskstats "$dev")'),
      'the last window, the disk idle (diskstats unchanged): max %d, max_min %d' % (
          g(m3, 'window_max'), g(m3, 'window_max_min')))
t1, t2, t3 = (g(m, 'inexact_seconds_total') for m in (m1, m2, m3))
print('inexact_seconds', int(not 0 < t2 == t3 or t1 > t2),
      'time inexact: %.3f s after fio, %.3f s when exact again, %.3f s at the last scrape' % (t1, t2, t3))
rx, rn = g(m3, 'max'), g(m3, 'max_min')
print('run_max_range', int(not rn <= min(4, rx)), 'the run\'s max between %d and %d (fio: 4)' % (rn, rx))
")
ts_stop INT

# Its own cost: each program's run time and runs are the kernel's, read by
# bpftool just before and just after the scrape, and bpf_stats on or off
# is said as the kernel's counts show it (a scrape runs the sweep program:
# its runs rise only while the kernel counts). First as the host has it,
# then with bpf_stats turned on the way that turns nobody's off: a
# BPF_ENABLE_STATS descriptor held by the test, the sysctl left as it is.
# bpf_progs PID: PID's BPF programs (ids from /proc/PID/fdinfo) as bpftool
# shows them, as JSON: name to [run_time_ns, run_cnt]
bpf_progs() {
	python3 -c '
import json, os, subprocess, sys
d = "/proc/%s/fdinfo" % sys.argv[1]
ids = set()
for fd in os.listdir(d):
    try:
        ids |= {int(l.split()[1]) for l in open(os.path.join(d, fd)) if l.startswith("prog_id:")}
    except OSError:
        pass
out = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True, check=True).stdout
print(json.dumps({p["name"]: [p.get("run_time_ns", 0), p.get("run_cnt", 0)]
                  for p in json.loads(out) if p["id"] in ids}))' "$1"
}
# cost NAME: a scrape into $tmp/NAME between two reads of the programs
cost() {
	bpf_progs "$TS_PID" >"$tmp/$1.before"
	curl -sf "$url/metrics" >"$tmp/$1"
	bpf_progs "$TS_PID" >"$tmp/$1.after"
}
COST_PY="
def progs(name, figure):
    return {k[len(figure) + 10:-2]: v for k, v in scrape('$tmp/' + name).items()
            if k.startswith(figure + '{program=\"')}
def cost(name):
    b, a = (json.load(open('$tmp/%s.%s' % (name, w))) for w in ('before', 'after'))
    m = scrape('$tmp/' + name)
    counting = a['ts_sweep'][1] != b['ts_sweep'][1]
    said = m['truestat_bpf_stats_enabled']
    print(name + '_stats_enabled', int(said != counting),
          'truestat_bpf_stats_enabled %d; the sweep program\'s runs %d then %d across the scrape' % (
              said, b['ts_sweep'][1], a['ts_sweep'][1]))
    t, n = progs(name, 'truestat_bpf_run_seconds_total'), progs(name, 'truestat_bpf_runs_total')
    if not any(sum(v) for v in a.values()):
        print(name + '_no_zeros', int(bool(t or n)), 'the kernel counted no run: %d program series' % (len(t) + len(n)))
        return
    bad = [k for k in a if not (b[k][0] <= round(t.get(k, -1) * 1e9) <= a[k][0] and b[k][1] <= n.get(k, -1) <= a[k][1])]
    print(name + '_bpf_counts', int(bool(bad) or set(t) != set(a)),
          '%d programs, each time and runs between bpftool\'s reads around the scrape; outside: %s' % (len(a), bad or 'none'))
"
serve "$tmp/c.json" --web.listen-address=PORT -d "$dev"
cost c0
check_lines < <(py "
$COST_PY
cost('c0')
")
python3 -c '
import ctypes, platform, sys, time
nr = {"x86_64": 321, "aarch64": 280}[platform.machine()]  # bpf(2)
libc = ctypes.CDLL(None, use_errno=True)
attr = ctypes.create_string_buffer(16)  # enable_stats.type = BPF_STATS_RUN_TIME
fd = libc.syscall(nr, 32, attr, 16)  # BPF_ENABLE_STATS
print("on" if fd >= 0 else "failed: errno %d" % ctypes.get_errno(), flush=True)
time.sleep(600)' >"$tmp/stats.out" &
spid=$!
on_exit "kill $spid"
wait_for "$spid" 10 grep -qx on "$tmp/stats.out" || true
check_cmd stats_fd "BPF_ENABLE_STATS: $(cat "$tmp/stats.out")" grep -qx on "$tmp/stats.out"
cost c1
mix
cost c2
kill "$spid"
check_lines < <(py "
$COST_PY
cost('c1')
cost('c2')
L = '{device=\"$dev\",layer=\"request\",op=\"%s\"}'
def done(m): return sum(m.get('truestat_requests_total' + L % o, 0) for o in ('read', 'write'))
m1, m2 = scrape('$tmp/c1'), scrape('$tmp/c2')
n1, n2 = progs('c1', 'truestat_bpf_runs_total'), progs('c2', 'truestat_bpf_runs_total')
t1, t2 = progs('c1', 'truestat_bpf_run_seconds_total'), progs('c2', 'truestat_bpf_run_seconds_total')
runs, ios = n2['ts_complete_btf'] - n1['ts_complete_btf'], done(m2) - done(m1)
print('complete_runs', int(runs < ios), 'fio: the completion program ran %d times (every disk), $dev completed %d' % (runs, ios))
print('# BPF time per completion run, all programs: %.0f ns' % ((sum(t2.values()) - sum(t1.values())) * 1e9 / runs))
")
ts_stop INT

# Two of Debian's Prometheus scrape it once a second during fio, one with
# native histograms (it asks for protobuf), one without (text, the short
# classic buckets). Content negotiation: protobuf to whoever asks for it,
# text to any other Accept. Once both scraped after fio (the disk idle
# since), each one's histogram_quantile(0.99) is within its buckets of
# truestat's own p99 over the run (its JSON totals): the native one
# within two schema 4 buckets (2^(2/16): one for the bucket, one for each
# kernel bucket counted at its middle), the classic one inside the short
# bucket that holds truestat's; the requests Prometheus holds, with the
# missed, are diskstats' reads since truestat started, and rate() of the
# read counter from a sample before fio to one after (the disk idle at
# both), with the missed, is diskstats' reads over that window; the
# classic Prometheus holds no more series of the disk than the ceiling.
serve "$tmp/p.json" --web.listen-address=PORT -d "$dev"
start=$(diskstats "$dev")
# one read first, so that the read counter has a sample before fio
dd if="/dev/$dev" of=/dev/null bs=4k count=1 iflag=direct status=none
idle=$(diskstats "$dev")
ctype() { curl -s -o /dev/null -w '%{content_type}' -H "Accept: $1" "$url/metrics"; }
pb=$(ctype 'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3')
check accept_protobuf "$([[ $pb == application/vnd.google.protobuf*encoding=delimited ]]; echo $?)" "Accept protobuf: $pb"
om=$(ctype 'application/openmetrics-text; version=1.0.0')
check accept_other_text "$([[ $om == text/plain* ]]; echo $?)" "Accept OpenMetrics only: $om"
# prom NAME FLAGS...: a Prometheus scraping truestat each second; its
# port in PORT_NAME
prom() {
	local name=$1 pp
	shift
	pp=$(free_port)
	printf -v "PORT_$name" %s "$pp"
	printf '%s\n' 'global:' '  scrape_interval: 1s' 'scrape_configs:' \
		'  - job_name: truestat' '    static_configs:' \
		"      - targets: ['127.0.0.1:$port']" >"$tmp/$name.yml"
	prometheus "$@" --config.file="$tmp/$name.yml" --storage.tsdb.path="$tmp/$name.tsdb" \
		--web.listen-address="127.0.0.1:$pp" >"$tmp/$name.log" 2>&1 &
	on_exit "kill $!; wait $!"
}
prom native --enable-feature=native-histograms
prom classic
# query PORT QUERY: the first result's value (a histogram's count), or none
query() {
	curl -sf --data-urlencode "query=$2" "http://127.0.0.1:$1/api/v1/query" |
		python3 -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r and "value" in r[0] else r[0]["histogram"][1]["count"] if r else "none")'
}
R='truestat_requests_total{device="'$dev'",op="read"}'
# 120 s: a guard for the classic Prometheus' start and a scrape before fio
for ((i = 0; i < 240; i++)); do
	[[ $(query "$PORT_classic" "$R" 2>/dev/null) =~ ^[0-9]+$ ]] && break
	sleep 0.5
done
mix
after=$(diskstats "$dev")
curl -sf "$url/metrics" >"$tmp/p1"
reads=$(grep "^truestat_requests_total{device=\"$dev\",layer=\"request\",op=\"read\"}" "$tmp/p1" | cut -d' ' -f2)
# 120 s: a guard for each Prometheus' start and a scrape after fio; the
# loop ends as soon as both hold the last requests
for ((i = 0; i < 240; i++)); do
	[[ $(query "$PORT_native" "$R" 2>/dev/null) == "$reads" &&
		$(query "$PORT_classic" "$R" 2>/dev/null) == "$reads" ]] && break
	sleep 0.5
done
S='truestat_service_seconds{device="'$dev'",op="read"}'
SB='truestat_service_seconds_bucket{device="'$dev'",op="read"}'
M='truestat_missed_completions_total{device="'$dev'",op="read"}'
nq=$(query "$PORT_native" "histogram_quantile(0.99, $S)" || echo none)
cq=$(query "$PORT_classic" "histogram_quantile(0.99, $SB)" || echo none)
held=$(query "$PORT_native" "$R + ignoring(__name__) $M" || echo none)
# series PORT: how many series of the disk a Prometheus holds
series_held() {
	curl -sfG --data-urlencode "match[]={device=\"$dev\"}" "http://127.0.0.1:$1/api/v1/series" |
		python3 -c 'import json, sys; print(len(json.load(sys.stdin)["data"]))'
}
nseries=$(series_held "$PORT_classic" || echo none)
ncount=$(query "$PORT_native" "histogram_count($S)" || echo none)
nnative=$(series_held "$PORT_native" || echo none)
# rate() of the read counter over the classic Prometheus' samples from
# its first (the disk idle since the one read) to its last (idle since
# fio): a window with a sample at each end, so rate() extrapolates
# nothing and is the counter's rise over the window's length
python3 - "$PORT_classic" "$R" "$tmp/rate" <<'PYEOF' || true
import json, sys, urllib.parse, urllib.request
port, r, out = sys.argv[1:]
def ask(q, **kw):
    u = 'http://127.0.0.1:%s/api/v1/query?%s' % (port, urllib.parse.urlencode(dict(query=q, **kw)))
    return json.load(urllib.request.urlopen(u))['data']['result']
v = ask(r + '[1h]')[0]['values']
# Prometheus keeps whole milliseconds: t1 - t0 of the floats it prints
# would carry their rounding (1e-8 of 4 s at 1.8e9 s)
ms = lambda t: round(float(t) * 1000)
(t0, v0), (t1, v1) = (ms(v[0][0]), float(v[0][1])), (ms(v[-1][0]), float(v[-1][1]))
m = ask('truestat_missed_completions_total{device=%s,op="read"}[1h]' % r.split('device=')[1].split(',')[0])
m = [x for x in m[0]['values'] if t0 <= ms(x[0]) <= t1] if m else []
dm = float(m[-1][1]) - float(m[0][1]) if m else 0
rate = float(ask('rate(%s[%dms])' % (r, t1 - t0), time='%d.%03d' % divmod(t1, 1000))[0]['value'][1])
open(out, 'w').write('%r %r %r %r %r %r\n' % (t0, t1, v0, v1, dm, rate))
PYEOF
ts_stop INT
check_lines < <(py "
import re
t = dev(totals('$tmp/p.json'), '$dev')['ops']['read']['percentiles_ms']['service']['p99'] / 1e3
f = lambda s: float(s) if s not in ('none', 'NaN', '') else float('nan')
nq, cq = f('$nq'), f('$cq')
w = 2 ** (2 / 16)
print('native_p99', int(not t / w <= nq <= t * w),
      'native histogram_quantile(0.99) %.6f s, truestat p99 %.6f s (within 2^(2/16))' % (nq, t))
edges = sorted(float(re.search(r'le=\"([^\"]+)\"', k).group(1)) for k in scrape('$tmp/p1')
               if k.startswith('truestat_service_seconds_bucket{device=\"$dev\",layer=\"request\",op=\"read\"'))
lo = max([0] + [e for e in edges if e < t])
hi = min(e for e in edges if e >= t)
print('classic_p99', int(not lo <= cq <= hi),
      'classic histogram_quantile(0.99) %.6f s, truestat p99 %.6f s: both in the short bucket %g to %g s' % (cq, t, lo, hi))
b, a = [int(x) for x in '$start'.split()], [int(x) for x in '$after'.split()]
print('prometheus_requests', int(f('$held') != a[0] - b[0]),
      'Prometheus holds requests + missed %s, diskstats reads since the start %d' % ('$held', a[0] - b[0]))
try:
    t0, t1, v0, v1, dm, rate = [float(x) for x in open('$tmp/rate').read().split()]
except (OSError, ValueError):
    t0 = t1 = v0 = v1 = dm = rate = float('nan')
w = (t1 - t0) / 1000 if t1 > t0 else float('nan')
ds = (a[0] - int('$idle'.split()[0])) / w
print('prometheus_rate', int(not abs(rate - (v1 - v0) / w) <= 1e-9 * max(rate, 1) or
                             not abs(rate + dm / w - ds) <= 1e-9 * max(ds, 1)),
      'rate() over the samples %.3f..%.3f s: %.3f reads/s, + %d missed: %.3f; diskstats over the same window (idle at both ends): %.3f'
      % (t0 / 1000, t1 / 1000, rate, dm, rate + dm / w, ds))
print('native_count', int(f('$ncount') != $reads), 'the native histogram counts %s reads, truestat_requests_total $reads' % '$ncount')
print('prometheus_series', int(not 0 < f('$nseries') <= $RW_CEILING),
      'the classic Prometheus holds %s series of $dev (ceiling $RW_CEILING)' % '$nseries')
print('# the native Prometheus holds %s series of $dev (a native histogram is one)' % '$nnative')
")

# bad NAME WANT ARGS...: truestat ARGS is one line naming WANT, exit 2
bad() {
	local name=$1 want=$2 rc=0 err
	shift 2
	err=$("$TRUESTAT" "$@" 2>&1 >/dev/null) || rc=$?
	check "bad_$name" "$([[ $rc == 2 && $(wc -l <<<"$err") == 1 && $err == *"$want"* ]]; echo $?)" \
		"exit $rc: $err"
}
bad listen_address 'bad --web.listen-address' --web.listen-address=localhost:1
bad buckets "bad --web.histogram-buckets 'some'" --web.listen-address=1 --web.histogram-buckets=some
bad buckets_alone 'is for the exporter' --web.histogram-buckets=full
finish
