#!/usr/bin/env bash
# The exporter under hostile clients, on loopback: for 30 s one address
# holds 200 idle connections (each reopened when the exporter drops it)
# and another sends 50 requests a second with wrong passwords over TLS,
# while a scraper on a third reads /metrics every second with the right
# one. Each scrape must be answered as fast as the same scraper was before
# the attack, but for the one-thread server's bounded work for others
# and the host's scheduling lag, measured beside the attackers;
# each interval report as on time as before the attack, by the same
# measure; the exporter's CPU bounded; no wrong password let in. Then a
# TLS client that cuts its handshake short while another receives a large
# /metrics through a small window: the second gets the whole body. The
# page is large by construction: six disks, each with reads and writes of
# three sizes (histograms in both directions), full buckets; the check
# wants it at least four of the windows it goes through. Last, a reader
# of that page over TLS through a 4 KiB window, paced to read it in the
# request's limit (TS_HTTP_TIMEOUT_MS) and half the time the reply's rate
# (TS_HTTP_MIN_RATE) adds: past the first by construction, the whole
# body all the same.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need python3 openssl

loops=()
for _ in 1 2 3 4 5 6; do
	loop_new 16
	loops+=("$LOOP")
done
make_tmp

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	-keyout "$tmp/ca.key" -out "$tmp/ca.crt" -days 1 -subj /CN=truestat-test-ca 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	-keyout "$tmp/server.key" -out "$tmp/server.csr" -subj /CN=127.0.0.1 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$tmp/server.ext"
openssl x509 -req -in "$tmp/server.csr" -CA "$tmp/ca.crt" -CAkey "$tmp/ca.key" \
	-CAcreateserial -out "$tmp/server.crt" -days 1 -extfile "$tmp/server.ext" 2>/dev/null
# bcrypt at cost 10, what htpasswd -nBC 10 gives
hash=$(python3 -W ignore -c 'import crypt; print(crypt.crypt("s3cret pass", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1024)))')
cat >"$tmp/web.yml" <<EOF
tls_server_config:
  cert_file: server.crt
  key_file: server.key
basic_auth_users:
  prom: '$hash'
EOF
port=$(free_port)
ts_start "$tmp/ts.json" --prometheus="$port" --web.config.file="$tmp/web.yml" \
	--web.histogram-buckets=full $(printf -- '-d %s ' "${loops[@]}") 1
# reads and writes of a few sizes on each disk, once attached: histograms
# in both directions of each, a /metrics of tens of KiB
for dev in "${loops[@]}"; do
	for bs in 4k 64k 1M; do
		dd if=/dev/zero of="/dev/$dev" bs=$bs count=8 oflag=direct status=none
		dd if="/dev/$dev" of=/dev/null bs=$bs count=8 iflag=direct status=none
	done
done

# The clients, one process each (the GIL would otherwise serialise them),
# each ending by itself at its deadline: bounded even if this script dies.
cat >"$tmp/hostile.py" <<'PY'
import base64, multiprocessing as mp, os, select, socket, ssl, sys, threading, time
port, ca, pid = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
ATTACK_S, IDLE_CONNS, WRONG_PER_S = 30, 200, 50
ctx = ssl.create_default_context(cafile=ca)

def get(path, auth, src='127.0.0.1', timeout=10, rcvbuf=0, pause=0):
    """(status, body length, Content-Length, seconds) of one GET over TLS"""
    t0 = time.monotonic()
    s = socket.socket()
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(timeout)
    s.bind((src, 0))
    data = b''
    try:
        s.connect(('127.0.0.1', port))
        t = ctx.wrap_socket(s, server_hostname='127.0.0.1')
        t.sendall(b'GET ' + path + b' HTTP/1.1\r\nHost: x\r\nConnection: close\r\n'
                  b'Authorization: Basic ' + base64.b64encode(auth) + b'\r\n\r\n')
        time.sleep(pause)
        while (chunk := t.recv(65536)):
            data += chunk
    except (OSError, ssl.SSLError):
        pass
    s.close()
    head, _, body = data.partition(b'\r\n\r\n')
    status = int(head.split(b' ')[1]) if head.startswith(b'HTTP/') else 0
    length = [int(l.split(b':')[1]) for l in head.split(b'\r\n')
              if l.lower().startswith(b'content-length:')]
    return status, len(body), length[0] if length else -1, time.monotonic() - t0

def idle_holder(until, q):
    # connections that send nothing, reopened as the exporter drops them,
    # at most IDLE_CONNS opens a second
    socks, opened, p = {}, 0, select.poll()
    start = time.monotonic()
    while time.monotonic() < until:
        budget = int((time.monotonic() - start + 1) * IDLE_CONNS) - opened
        while len(socks) < IDLE_CONNS and budget > 0:
            s = socket.socket()
            s.setblocking(False)
            s.bind(('127.0.0.2', 0))
            s.connect_ex(('127.0.0.1', port))
            socks[s.fileno()] = s
            p.register(s, select.POLLIN)
            opened += 1
            budget -= 1
        for fd, ev in p.poll(100):
            s = socks.pop(fd)
            p.unregister(fd)
            s.close()
    q.put(('idle_opened', opened))

def wrong_sender(until, q):
    # every 1/WRONG_PER_S s a request, or a skip while 100 still wait
    statuses, lock, n, skipped = {}, threading.Lock(), 0, 0
    def one(i):
        st = get(b'/metrics', b'prom:wrong %d' % i, src='127.0.0.3', timeout=5)[0]
        with lock:
            statuses[st] = statuses.get(st, 0) + 1
    start = time.monotonic()
    while time.monotonic() < until:
        if threading.active_count() < 100:
            threading.Thread(target=one, args=(n,), daemon=True).start()
        else:
            skipped += 1
        n += 1
        time.sleep(max(0, start + n / WRONG_PER_S - time.monotonic()))
    for t in threading.enumerate():
        if t is not threading.current_thread():
            t.join(6)
    statuses[-1] = skipped
    q.put(('wrong', statuses))

def lag_watch(until, q):
    # this host's own scheduling under the attack: the longest a 10 ms
    # sleep overran, which every process waking here may pay (the
    # scraper's and the exporter's wake-ups alike)
    lag = 0
    while time.monotonic() < until:
        t = time.monotonic()
        time.sleep(0.01)
        lag = max(lag, time.monotonic() - t - 0.01)
    q.put(('lag', lag))

def cpu_s():
    f = open('/proc/%d/stat' % pid).read().rsplit(')', 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf('SC_CLK_TCK')

def scrapes(n, until=float('inf')):
    out = []
    for _ in range(n):
        t = time.monotonic()
        if t + 1 > until:
            break
        # 3 s: a scrape slower than that has failed whatever the bound
        out.append(get(b'/metrics', b'prom:s3cret pass', timeout=3))
        time.sleep(max(0, t + 1 - time.monotonic()))
    return out

# bcrypt's cost, as the exporter pays it: a wrong password answered 401
# less a right one answered from the exporter's memory (both quiet)
scrapes(1)
right = min(get(b'/', b'prom:s3cret pass')[3] for _ in range(3))
wrong = []
for i in range(3):
    r = get(b'/', b'prom:probe %d' % i, src='127.0.0.4')
    if r[0] == 401:
        wrong.append(r[3])
    time.sleep(1.1)
bcrypt_s = min(wrong) - right if wrong else float('nan')
base = scrapes(6)
q = mp.Queue()
t0 = time.monotonic()
until = t0 + ATTACK_S
kids = [mp.Process(target=f, args=(until, q), daemon=True) for f in (idle_holder, wrong_sender, lag_watch)]
c0 = cpu_s()
for k in kids:
    k.start()
time.sleep(1)  # the attack under way before the first scrape
attack = scrapes(ATTACK_S, until)
while time.monotonic() < until:
    time.sleep(0.1)
c1, t1 = cpu_s(), time.monotonic()
res = dict(q.get(timeout=15) for _ in kids)
for k in kids:
    k.join(5)
print('FIG bcrypt_s %.4f' % bcrypt_s)
print('FIG attack %.3f %.3f %.3f' % (t0 * 1e9, t1 * 1e9, c1 - c0))
print('FIG idle_opened %d' % res['idle_opened'])
print('FIG lag_s %.4f' % res['lag'])
print('FIG wrong %s' % ' '.join('%d:%d' % kv for kv in sorted(res['wrong'].items())))
for name, rows in (('base', base), ('attack', attack)):
    print('FIG scrapes_%s %s' % (name, ' '.join('%d:%.4f' % (r[0], r[3]) for r in rows)))

# a handshake cut short while another client waits to write a large
# /metrics through a 4 KiB window: the second still gets every byte
done = []
big = threading.Thread(target=lambda: done.append(
    get(b'/metrics', b'prom:s3cret pass', rcvbuf=4096, pause=1)))
big.start()
time.sleep(0.5)  # the exporter has filled the window and waits for room
a = socket.create_connection(('127.0.0.1', port))
a.sendall(b'\x16\x03\x01\x00\x05\x01')  # a ClientHello's first bytes
a.shutdown(socket.SHUT_WR)
while a.recv(4096):  # until the exporter closed it: done with it
    pass
a.close()
big.join(15)
st, got, want, _ = done[0] if done else (0, 0, -1, 0)
w = socket.socket()
w.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
print('FIG big %d %d %d %d' % (st, got, want, w.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)))
w.close()

# a slow reader of the full-bucket page: its reply read 4 KiB at a time,
# paced to end the request's limit plus half what the reply's rate gives
# after it (past the first, inside the second, by construction)
def slow_get(limit_s, rate):
    t0 = time.monotonic()
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(30)
    data, status, want, got = b'', 0, -1, 0
    try:
        s.connect(('127.0.0.1', port))
        t = ctx.wrap_socket(s, server_hostname='127.0.0.1')
        t.sendall(b'GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n'
                  b'Authorization: Basic ' + base64.b64encode(b'prom:s3cret pass') + b'\r\n\r\n')
        while b'\r\n\r\n' not in data and (chunk := t.recv(4096)):
            data += chunk
        head, _, body = data.partition(b'\r\n\r\n')
        status = int(head.split(b' ')[1]) if head.startswith(b'HTTP/') else 0
        want = [int(l.split(b':')[1]) for l in head.split(b'\r\n')
                if l.lower().startswith(b'content-length:')][0]
        total = limit_s + want / (2 * rate)
        got = len(body)
        while got < want:
            time.sleep(max(0, t0 + total * got / want - time.monotonic()))
            chunk = t.recv(4096)
            if not chunk:
                break
            got += len(chunk)
    except (OSError, ssl.SSLError, IndexError, ValueError):
        pass
    s.close()
    return status, got, want, time.monotonic() - t0

limit_ms, rate = (int(x) for x in sys.argv[4:6])
print('FIG slow %d %d %d %.3f' % slow_get(limit_ms / 1e3, rate))
PY
limit_ms=$(awk '$2 == "TS_HTTP_TIMEOUT_MS" { print $3 }' "$TS_ROOT/user/exporter/httpd.h")
min_rate=$(awk '$2 == "TS_HTTP_MIN_RATE" { print $3 }' "$TS_ROOT/user/exporter/httpd.h")
python3 -B "$tmp/hostile.py" "$port" "$tmp/ca.crt" "$TS_PID" "$limit_ms" "$min_rate" >"$tmp/figs" 2>"$tmp/hostile.err" ||
	{ check hostile_clients 1 "the client script failed: $(tail -1 "$tmp/hostile.err")"; }
sleep 1.5 # the report after the attack
ts_stop INT
check exporter_exit "$TS_RC" "exits 0 on SIGINT (exit $TS_RC)"

check_lines < <(py "
f = {l.split()[1]: l.split()[2:] for l in open('$tmp/figs') if l.startswith('FIG ')}
bcrypt = float(f['bcrypt_s'][0])
t0, t1, cpu = (float(x) for x in f['attack'])
rows = lambda k: [(int(s), float(t)) for s, t in (x.split(':') for x in f[k])]
base, attack = rows('scrapes_base'), rows('scrapes_attack')
wrong = {int(k): int(v) for k, v in (x.split(':') for x in f['wrong'])}
print('# bcrypt at cost 10 as the exporter pays it: %.1f ms' % (bcrypt * 1e3))
skipped = wrong.pop(-1)
print('attack_real', int(not (int(f['idle_opened'][0]) >= 200 and sum(wrong.values()) + skipped >= 0.9 * 50 * 30)),
      'the attack: %s idle connections opened, %d wrong passwords sent, %d more not sent while 100 waited'
      % (f['idle_opened'][0], sum(wrong.values()), skipped))
print('wrong_refused', int(bool(set(wrong) - {401, 429, 0}) or not wrong.get(401)),
      'wrong passwords answered (status:count, 0: no answer): %s' % wrong)
print('scrape_base', int(any(s != 200 for s, _ in base)), 'before the attack: %d scrapes, all 200, slowest %.0f ms'
      % (len(base), max(t for _, t in base) * 1e3))
lag = float(f['lag_s'][0])
print('# the longest a 10 ms sleep overran on this host during the attack: %.1f ms' % (lag * 1e3))
# A scrape waits for the work the one thread does for others: its
# slowest without attack, plus at most two bcrypts (the burst of the
# shared budget the attacker draws on: one address, failing since its
# first try, among the peers that failed lately) and one more, and for this
# host's scheduling among the attackers: the lag measured beside them,
# once for each of the three wake-ups a scrape needs (the exporter's for
# the request, the scraper's for each half of the reply).
lim = max(t for _, t in base) + 3 * bcrypt + 3 * lag
slow = ['%d in %.0f ms' % (s, t * 1e3) for s, t in attack if s != 200 or t > lim]
print('scrape_attack', int(bool(slow) or not attack),
      'under attack: %d scrapes, not 200 within %.0f ms: %s (slowest %.0f ms)'
      % (len(attack), lim * 1e3, slow, max(t for _, t in attack) * 1e3))
# the reports: each is due at the run's start + k intervals; its lateness
# under attack against the same reports' before it, by the same bound (the
# exporter's one wake-up for its timer)
reps = [d for d in docs('$tmp/ts.json') if d.get('type') == 'interval']
start = reps[0]['end_mono_ns'] - reps[0]['span_s'] * 1e9
late = [(r['end_mono_ns'], r['end_mono_ns'] - start - (k + 1) * 1e9) for k, r in enumerate(reps)]
before = [l for e, l in late if e < t0]
during = [l for e, l in late if t0 <= e <= t1]
rlim = max(before) + (2 * bcrypt + lag) * 1e9
print('reports_on_time', int(not during or not before or max(during) > rlim),
      '%d reports under attack, latest %.1f ms after its time (before: %.1f ms; bound %.1f ms)'
      % (len(during), max(during or [0]) / 1e6, max(before or [0]) / 1e6, rlim / 1e6))
# One thread that ran every wrong password's bcrypt would spend the
# rate sent x the bcrypt this host paid (measured above) each second, all
# of its time at most: the bound is half of that, so that it moves with
# the host's speed as every other cost of the exporter does.
span = (t1 - t0) / 1e9
naive = min(1.0, (sum(wrong.values()) + skipped) / span * bcrypt) * span
print('cpu_bounded', int(not bcrypt > 0 or cpu > 0.5 * naive),
      'exporter CPU over the %.1f s attack: %.2f s, under half the %.2f s a bcrypt of every wrong password (%.1f ms each) would take'
      % (span, cpu, naive, bcrypt * 1e3))
st, got, want, window = (int(x) for x in f['big'])
print('tls_abort_big_metrics', int(st != 200 or got != want),
      'a handshake cut short beside a %d-byte /metrics through a 4 KiB window: status %d, %d bytes' % (want, st, got))
print('big_metrics_big', int(want < 4 * window),
      'the /metrics of six disks: %d bytes, at least 4 of the %d-byte receive windows it went through' % (want, window))
st, got, want, took = f['slow'][0:3] + [float(f['slow'][3])]
st, got, want = int(st), int(got), int(want)
print('tls_slow_reader', int(st != 200 or got != want),
      'a reader of the full-bucket page at a pace past the request\'s $limit_ms ms: status %d, %d of %d bytes in %.1f s'
      % (st, got, want, took))
print('slow_reader_slow', int(not took > $limit_ms / 1e3),
      'it read for %.1f s, past the $limit_ms ms from accept (the pace, by construction)' % took)
")
finish
