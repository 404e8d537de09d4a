#!/usr/bin/env bash
# --prometheus: the exposition passes promtool; the sync counters follow
# fio's syncs; its counters equal
# /proc/diskstats, and its concurrency bounds (since the last scrape and over
# the run) hold together; its counters by
# depth class at issue add up to the requests, a serial run's all at depth
# 1, their service time to the histogram's; Debian's real
# Prometheus scrapes it, and a histogram_quantile over truestat's buckets
# agrees with truestat's own p99; the HTTP server answers bad requests with
# the right status, survives oversized, slow, many and idle connections
# without spinning, and binds to loopback by default; a disk that goes away
# and is made again under its name has counters of its own, not the old
# disk's held.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/faults.sh"
need fio python3 curl promtool prometheus

loop_filled 64
dev=$LOOP
make_tmp
# the disk that is removed and made again (a file of its own: loop_at
# detaches it at exit only while it is still backed by that file)
newfile() {
	FILE=$(mktemp /var/tmp/truestat-test.XXXXXX)
	on_exit "rm -f '$FILE'"
	truncate -s "$1M" "$FILE"
}
newfile 64
loop_at "$FILE"
renew=$LOOP

port=$(free_port)
url=http://127.0.0.1:$port

out=$tmp/ts.json
# the full bucket set: a quantile within a quarter of a power of two
ts_start "$out" --prometheus="$port" -d "$dev" -d "$renew" \
	--web.histogram-buckets=full
wait_serving "$url" || true

check_cmd loopback_only "listens on 127.0.0.1:$port only" \
	bash -c "ss -Hltn 'sport = :$port' | awk '{ print \$4 }' | grep -qx '127.0.0.1:$port'"

# One request at a time (psync): fio issues each after the last completed,
# so every one is issued at in-device depth 1.
curl -sf "$url/metrics" >"$tmp/m0"
fio --name=serial --filename="/dev/$dev" --direct=1 --rw=randread --bs=4k \
	--ioengine=psync --runtime=1 --time_based --output-format=json >"$tmp/serial.json"
curl -sf "$url/metrics" >"$tmp/m1"

before=$(diskstats "$dev")
fio --name=prom --filename="/dev/$dev" --direct=1 --rw=randread --bs=4k \
	--ioengine=io_uring --iodepth=4 --runtime=3 --time_based --output=/dev/null
after=$(diskstats "$dev")

curl -sf "$url/metrics" >"$tmp/metrics"
check_cmd promtool_check "promtool check metrics accepts the exposition" \
	bash -c "promtool check metrics <'$tmp/metrics' >'$tmp/promtool.txt' 2>&1"
check_lines < <(py "
import re
m, m1 = scrape('$tmp/metrics'), scrape('$tmp/m1')
b = [int(x) for x in '$before'.split()]
a = [int(x) for x in '$after'.split()]
lab = '{device=\"$dev\",layer=\"request\",op=\"read\"}'
def done(m): return m['truestat_requests_total' + lab] + m['truestat_missed_completions_total' + lab]
got = done(m) - done(m1)
print('requests_total', int(got != a[0] - b[0]), 'requests + missed rose %d, diskstats reads %d' % (got, a[0] - b[0]))
n = m['truestat_service_seconds_count' + lab]
print('histogram_count', int(n != m['truestat_requests_total' + lab]), 'service histogram count %d = requests %d' % (n, m['truestat_requests_total' + lab]))
buckets = sorted((float(re.search(r'le=\"([^\"]+)\"', k).group(1)), v) for k, v in m.items()
                 if k.startswith('truestat_service_seconds_bucket' + lab[:-1]))
mono = all(x[1] <= y[1] for x, y in zip(buckets, buckets[1:]))
print('buckets_cumulative', int(not mono or buckets[-1][1] != n), '%d buckets, non-decreasing, +Inf = count' % len(buckets))
# fio offered depth 4: a known max is at most that, else a range; the
# window since the last scrape is the depth-4 run's
ex, mx, mn = (m['truestat_device_concurrency_%s{device=\"$dev\",layer=\"request\"}' % k]
              for k in ('window_exact', 'window_max', 'window_max_min'))
ok = ex in (0, 1) and 1 <= mn <= mx and (not ex or mn == mx <= 4)
print('concurrency_window', int(not ok), 'window: exact %d, max %d, max_min %d (exact: max = max_min <= 4)' % (ex, mx, mn))
rx, rn = (m['truestat_device_concurrency_%s{device=\"$dev\",layer=\"request\"}' % k] for k in ('max', 'max_min'))
ok = mx <= rx and mn <= rn <= rx and (rn < rx or rx <= 4)
print('concurrency_run', int(not ok), 'run: max %d, max_min %d, around the window\'s (equal: <= 4)' % (rx, rn))
")

# The -D curve's counters by depth class at issue: every completion seen in
# one class (with the missed ones, diskstats' and fio's counts), the serial
# run's all at depth 1 while the depth counter is exact,
# their service time that of the service histogram (from the kernel's exact
# sums) within half a kernel bucket (1/16 of an octave wide: 3.2%).
check_lines < <(py "
import json, re
def by_depth(m, name):
    out = {}
    for k, v in m.items():
        g = re.fullmatch(name + r'\\{device=\"$dev\",layer=\"request\",depth=\"([^\"]+)\"\\}', k)
        if g:
            out[g.group(1)] = v
    return out
m0, m1, m = scrape('$tmp/m0'), scrape('$tmp/m1'), scrape('$tmp/metrics')
lab = '{device=\"$dev\",layer=\"request\",op=\"%s\"}'
ops = ('read', 'write', 'discard', 'flush')
def reqs(m): return sum(m.get('truestat_requests_total' + lab % o, 0) for o in ops)
def missed(m): return sum(m.get('truestat_missed_completions_total' + lab % o, 0) for o in ops)
b = [int(x) for x in '$before'.split()]
a = [int(x) for x in '$after'.split()]
n = by_depth(m, 'truestat_issued_at_depth_total')
print('depth_sum_requests', int(sum(n.values()) != reqs(m)),
      'issued_at_depth over %d classes %d = requests %d' % (len(n), sum(n.values()), reqs(m)))
def issued(m): return sum(by_depth(m, 'truestat_issued_at_depth_total').values())
# a completion truestat did not see is counted as missed, in no class
rose = issued(m) - issued(m1) + missed(m) - missed(m1)
print('depth_sum_diskstats', int(rose != a[0] - b[0]),
      'issued_at_depth + missed rose %d over the depth-4 run, diskstats reads %d' % (rose, a[0] - b[0]))
n0, n1 = by_depth(m0, 'truestat_issued_at_depth_total'), by_depth(m1, 'truestat_issued_at_depth_total')
rise = {k: v - n0.get(k, 0) for k, v in n1.items() if v != n0.get(k, 0)}
fio_ios = json.load(open('$tmp/serial.json'))['jobs'][0]['read']['total_ios']
seen = sum(rise.values()) + missed(m1) - missed(m0)
print('serial_count', int(seen != fio_ios),
      'psync: issued_at_depth + missed rose %d, fio issued %d' % (seen, fio_ios))
# When the depth counter was not exact over the serial run's window
# (README: exact or flagged), it may have been too high at an issue by the
# requests whose completion went unseen and were still counted: at most
# those found from the serial run on, each one more.
exact = m1['truestat_device_concurrency_window_exact{device=\"$dev\",layer=\"request\"}']
over = 0 if exact == 1 else missed(m) - missed(m0)  # found by the last scrape
lows = [int(k.split('-')[0]) for k in rise]
print('serial_depth1', int(max(lows, default=1) > 1 + over),
      'psync: classes that rose %s, lowest depth of each at most 1 + %d (%s)' % (
          rise, over, 'exact' if exact == 1 else 'not exact: the unseen completions of the run'))
s = sum(by_depth(m, 'truestat_issued_at_depth_service_seconds_total').values())
h = sum(m.get('truestat_service_seconds_sum' + lab % o, 0) for o in ops)
print('depth_service_sum', int(not abs(s - h) <= 0.032 * h),
      'service by depth class %.6f s, service histogram sum %.6f s (3.2%%)' % (s, h))
deep = [k for k in n if k != '1']
print('depth_classes_reached', int(not deep or '1' not in n),
      'iodepth 4 reached classes %s' % sorted(n))
")

# Debian's Prometheus scrapes it once a second.
pport=$(free_port)
cat >"$tmp/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: truestat
    static_configs:
      - targets: ['127.0.0.1:$port']
EOF
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
	--web.listen-address="127.0.0.1:$pport" >"$tmp/prometheus.log" 2>&1 &
ppid=$!
on_exit "kill $ppid; wait $ppid"
query() {
	curl -sf --data-urlencode "query=$1" "http://127.0.0.1:$pport/api/v1/query" |
		python3 -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "none")'
}
q='histogram_quantile(0.99, truestat_service_seconds_bucket{device="'$dev'",op="read"})'
p99=none
# 120 s: a guard for Prometheus' start, first scrape and query (seconds
# here); the loop ends as soon as they are done
for ((i = 0; i < 240; i++)); do
	sleep 0.5
	p99=$(query "$q" 2>/dev/null) || p99=none
	[[ $p99 != none && $p99 != NaN ]] && break
done
up=$(query 'up{job="truestat"}' || echo none)
check prometheus_scraped "$([[ $up == 1 ]]; echo $?)" "Prometheus scraped truestat: up = $up"
kill "$ppid" && wait "$ppid" || true # its scrapes would take slots below

# HTTP: bad requests get their status, a slow client does not block others
status() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
check http_404 "$([[ $(status "$url/nope") == 404 ]]; echo $?)" "GET /nope: 404"
check http_405 "$([[ $(status -X POST "$url/metrics") == 405 ]]; echo $?)" "POST /metrics: 405"
big=$(head -c 6000 /dev/zero | tr '\0' a)
check http_431 "$([[ $(status -H "X-Big: $big" "$url/metrics") == 431 ]]; echo $?)" "a 6000-byte header: 431"
bad=$(printf 'GARBAGE\r\n\r\n' | timeout 5 python3 -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", '"$port"'))
s.sendall(sys.stdin.buffer.read())
print(s.recv(64).split()[1].decode())')
check http_400 "$([[ $bad == 400 ]]; echo $?)" "a malformed request line: $bad"
exec {slow}<>/dev/tcp/127.0.0.1/"$port" # connects, never sends
# 3 s: less than the 5 s (TS_HTTP_TIMEOUT_MS) for which a server that
# waited on the silent client would hold it before closing it
check http_slow_client "$([[ $(status -m 3 "$url/metrics") == 200 ]]; echo $?)" \
	"/metrics answered while another client sends nothing"
exec {slow}>&-
for ((i = 0; i < 40; i++)); do status -m 10 "$url/metrics" >"$tmp/par.$i" & done
for job in $(jobs -p); do [[ $job == "$ppid" || $job == "$TS_PID" ]] || wait "$job" || true; done
ok=$(grep -lx 200 "$tmp"/par.* | wc -l)
check http_many "$([[ $ok == 40 ]]; echo $?)" "40 scrapes at once: $ok answered 200"

# 80 idle connections, more than the 64 slots (TS_HTTP_MAX_CLIENTS): the
# listening socket stays readable, and a server that still polls it spins: 3
# CPU-s in these 3 s. Idle, truestat takes its once-a-second snapshot, a few
# ms, so 0.3 CPU-s is a bound on a spin, not a benchmark. A connection that
# has sent nothing is closed 1 s after its accept (TS_HTTP_SILENT_MS), and
# a new one takes the slot of the quietest of the peer holding the most:
# an 81st client, 3 s in, gets /metrics at once; 3 s more than the 1 s is
# the margin. A server that never frees a slot never answers: 4 s only
# tells those apart.
check_lines < <(python3 -c '
import os, socket, time
port, pid, timeout_s, margin_s = '"$port"', '"$TS_PID"', 1, 3
def cpu_s():
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(80)]
c0, t0 = cpu_s(), time.monotonic()
time.sleep(3)
used, span = cpu_s() - c0, time.monotonic() - t0
print("http_idle_cpu", int(used >= 0.3),
      "80 idle connections for %.1f s: truestat used %.2f CPU-s (< 0.3)" % (span, used))
start = time.monotonic()
s = socket.create_connection(("127.0.0.1", port))
s.settimeout(timeout_s + margin_s)
s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
reply = b""
try:
    while (b := s.recv(65536)):
        reply += b
except OSError:
    pass
took = time.monotonic() - start
status = reply.split(b" ")[1].decode() if reply else "nothing"
print("http_idle_freed", int(status != "200" or took > timeout_s + margin_s),
      "an 81st client, slots held by idle ones: %s after %.1f s (< %d s)" % (
      status, took, timeout_s + margin_s))
')

# Durable writes: with fio --fsync=1 the sync counters rise by fio's syncs,
# less at most the completions counted missed meanwhile (an unseen end
# leaves its write out), and their time by at most fio's sync time.
curl -sf "$url/metrics" >"$tmp/s0"
fio --name=sync --filename="/dev/$dev" --rw=randwrite --bs=4k --size=16M \
	--io_size=1M --fsync=1 --ioengine=psync --output-format=json >"$tmp/sync.json"
curl -sf "$url/metrics" >"$tmp/s1"
check_lines < <(py "
m0, m1 = scrape('$tmp/s0'), scrape('$tmp/s1')
lab = '{device=\"$dev\",layer=\"request\"'
def rise(k, ops=('',)):
    return sum(m1.get(k + lab + o + '}', 0) - m0.get(k + lab + o + '}', 0) for o in ops)
n = rise('truestat_sync_requests_total')
missed = rise('truestat_missed_completions_total', (',op=\"write\"', ',op=\"flush\"'))
f = json.load(open('$tmp/sync.json'))['jobs'][0]['sync']['lat_ns']
print('sync_requests', int(not f['N'] - missed <= n <= f['N']),
      'sync requests rose %d, fio %d syncs (missed completions %d)' % (n, f['N'], missed))
s, fs = rise('truestat_sync_seconds_total'), f['N'] * f['mean'] / 1e9
print('sync_seconds', int(not 0 < s <= fs), 'sync seconds rose %.4f, fio spent %.4f in its syncs' % (s, fs))
h = rise('truestat_sync_time_seconds_count', (',op=\"write\"',))
print('sync_histogram', int(h != n), 'sync histogram count rose %d, sync requests %d' % (h, n))
hs = rise('truestat_sync_time_seconds_sum', (',op=\"write\"',))
print('sync_histogram_sum', int(abs(hs - s) > 2e-9), 'its sum rose %.6f s, sync seconds %.6f s (each printed to 1 ns)' % (hs, s))
")

# A disk removed and another made under its name (a new gendisk on the
# same dev_t, as a USB disk unplugged and plugged back): the exporter had
# printed the old disk's totals; the new disk's counters start from its own
# start, and equal its diskstats (from zero on a new gendisk; reads: requests
# + missed, as above), the depth classes with them. The exporter counts a
# disk that took over a queue id from its own start at its once-a-second
# snapshot: /metrics is scraped until the figures are the new disk's (one
# series, requests and depth classes at its diskstats), START_GUARD s at
# most, and the last scrape judged: a held old count never gets there.
reads() { # DEV SIZE: SIZE of 4 KiB random reads
	fio --name=renew --filename="/dev/$1" --direct=1 --rw=randread --bs=4k \
		--io_size="$2" --ioengine=libaio --iodepth=4 --output=/dev/null
}
reads "$renew" 8M
curl -sf "$url/metrics" >"$tmp/r0"
losetup -d "/dev/$renew"
loop_gone "$renew" || true
rc=0
python3 -c "
import fcntl, os
fd = os.open('/dev/loop-control', os.O_RDWR)
fcntl.ioctl(fd, 0x4C81, ${renew#loop})	# LOOP_CTL_REMOVE
fcntl.ioctl(fd, 0x4C80, ${renew#loop})	# LOOP_CTL_ADD
" || rc=$?
check renew_readded "$rc" "$renew removed and added again through /dev/loop-control"
settle
pre=$(diskstats "$renew")
newfile 64
rc=0
loop_at "$FILE" "$renew" || rc=$?
check renew_attached "$rc" "a new file attached on the new $renew"
reads "$renew" 1M
post=$(diskstats "$renew")
# the three figures of a scrape against the new disk's diskstats: "NAME RC
# MESSAGE" lines (RC 0: holds; a script that dies prints py_script 1)
renew_figures() { # SCRAPE
	py "
import re
m0, m = scrape('$tmp/r0'), scrape('$1')
b = [int(x) for x in '$pre'.split()] or [0] * 17
a = [int(x) for x in '$post'.split()]
lab = '{device=\"$renew\",layer=\"request\",op=\"read\"}'
def done(m): return m.get('truestat_requests_total' + lab, 0) + m.get('truestat_missed_completions_total' + lab, 0)
# the old disk's slot stays until its queue id is taken: not a second series
n = sum(l.startswith('truestat_requests_total' + lab + ' ') for l in open('$1'))
print('renew_one_series', int(n != 1), '%d series of $renew reads in the scrape (want 1)' % n)
print('renew_requests', int(done(m) != a[0] - b[0]),
      'new $renew: requests + missed %d, its diskstats reads %d (the old disk printed %d)' % (done(m), a[0] - b[0], done(m0)))
n = sum(v for k, v in m.items()
        if re.fullmatch(r'truestat_issued_at_depth_total\{device=\"$renew\",layer=\"request\",depth=\"[^\"]+\"\}', k))
missed = sum(v for k, v in m.items() if k.startswith('truestat_missed_completions_total{device=\"$renew\",'))
print('renew_depth', int(n + missed != a[0] - b[0]),
      'new $renew: issued_at_depth over its classes %d + missed %d, its diskstats reads %d' % (n, missed, a[0] - b[0]))
"
}
renew_scrapes=0
renew_held() {
	renew_scrapes=$((renew_scrapes + 1))
	curl -sf "$url/metrics" >"$tmp/r1" || return 1
	[[ $renew_scrapes != 1 ]] || renew_figures "$tmp/r1" >"$tmp/r1.first"
	! renew_figures "$tmp/r1" | awk '$2 != 0 { bad = 1 } END { exit !bad }'
}
t0=$EPOCHREALTIME
wait_for "$TS_PID" "$START_GUARD" renew_held || true
echo "  # the scrape judged: scrape $renew_scrapes after the reads, $(python3 -c "print('%.2f' % ($EPOCHREALTIME - $t0))") s after them (guard: $START_GUARD s)$(
	((renew_scrapes == 1)) || echo "; the first's: $(cut -d' ' -f3- "$tmp/r1.first" | paste -sd';')")"
check_lines < <(renew_figures "$tmp/r1")

ts_stop INT
check ts_exit "$TS_RC" "SIGINT ends truestat with status $TS_RC"
check_lines < <(py "
t = dev(totals('$out'), '$dev')['ops']['read']['percentiles_ms']['service']['p99'] / 1e3
p = float('$p99') if '$p99' not in ('none', 'NaN') else float('nan')
# Prometheus interpolates inside one exported bucket (a quarter of a power
# of two: at most 25% of its lower edge wide), truestat inside one fine
# bucket of the same data: both lie in the same exported bucket.
ok = abs(p - t) <= 0.25 * min(p, t)
print('histogram_quantile', int(not ok), 'Prometheus p99 %.6f s, truestat p99 %.6f s (25%%)' % (p, t))
")
finish
