#!/usr/bin/env bash
# --web.config.file: the exporter behind TLS and basic auth, in the file
# format of the Prometheus exporter toolkit. Debian's real Prometheus,
# given the CA and the password, scrapes it over TLS, and what it stores
# equals /proc/diskstats; without the password it gets 401, without the CA
# it refuses the certificate; curl shows the same, plain HTTP gets no
# answer, a stalled handshake does not block other clients. With client
# certificates required and TLS 1.3 as the minimum, only a client with a
# certificate from the CA, speaking TLS 1.3, gets through. Bad files: one
# line, exit 2, nothing attached.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need fio python3 curl openssl prometheus

loop_filled 64
dev=$LOOP
make_tmp

# A CA, a certificate for 127.0.0.1 signed by it, and one for a client.
sign() { # NAME SUBJECT EXTENSION
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$tmp/$1.key" -out "$tmp/$1.csr" -subj "$2" 2>/dev/null
	printf '%s\n' "$3" >"$tmp/$1.ext"
	openssl x509 -req -in "$tmp/$1.csr" -CA "$tmp/ca.crt" -CAkey "$tmp/ca.key" \
		-CAcreateserial -out "$tmp/$1.crt" -days 1 -extfile "$tmp/$1.ext" 2>/dev/null
}
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	-keyout "$tmp/ca.key" -out "$tmp/ca.crt" -days 1 -subj /CN=truestat-test-ca 2>/dev/null
sign server /CN=127.0.0.1 "subjectAltName=IP:127.0.0.1,DNS:localhost
extendedKeyUsage=serverAuth"
sign client /CN=prometheus "extendedKeyUsage=clientAuth"
# and a client certificate of nobody's CA
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	-keyout "$tmp/self.key" -out "$tmp/self.crt" -days 1 -subj /CN=intruder \
	-addext extendedKeyUsage=clientAuth 2>/dev/null
# htpasswd's $2y$ (what the toolkit's documentation shows), from Python's
# libcrypt binding: another caller of the bcrypt truestat checks with
hash=$(python3 -W ignore -c 'import crypt; print(crypt.crypt("s3cret pass", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1024)))')
hash=\$2y${hash#\$2b}

# relative paths: from the file's directory
cat >"$tmp/web.yml" <<EOF
tls_server_config:
  cert_file: server.crt
  key_file: server.key
basic_auth_users:
  prom: '$hash'
EOF
port=$(free_port)
url=https://127.0.0.1:$port
ts_start "$tmp/ts.json" --prometheus="$port" --web.config.file="$tmp/web.yml" -d "$dev"
auth=(--cacert "$tmp/ca.crt" -u 'prom:s3cret pass')
wait_serving "$url" "${auth[@]}" || true
status() { curl -s -o /dev/null -w '%{http_code}' "$@" || true; }

check http_tls_auth "$([[ $(status "${auth[@]}" "$url/metrics") == 200 ]]; echo $?)" \
	"GET /metrics over TLS with the CA and the password: 200"
hdr=$(curl -s -D - -o /dev/null --cacert "$tmp/ca.crt" "$url/metrics" | tr -d '\r' || true)
check http_no_password "$([[ $hdr == "HTTP/1.1 401 "* && $hdr == *'WWW-Authenticate: Basic realm="truestat"'* ]]; echo $?)" \
	"without a password: $(head -1 <<<"$hdr"), asks for Basic"
check http_wrong_password "$([[ $(status --cacert "$tmp/ca.crt" -u 'prom:s3cret' "$url/metrics") == 401 ]]; echo $?)" \
	"a wrong password: 401"
check http_unknown_user "$([[ $(status --cacert "$tmp/ca.crt" -u 'root:s3cret pass' "$url/metrics") == 401 ]]; echo $?)" \
	"another user with the password: 401"
check http_other_paths "$([[ $(status --cacert "$tmp/ca.crt" "$url/nope") == 401 && $(status "${auth[@]}" "$url/nope") == 404 ]]; echo $?)" \
	"GET /nope: 401 without the password, 404 with it"
rc=0
curl -s -o /dev/null -u 'prom:s3cret pass' "$url/metrics" || rc=$?
check tls_unknown_ca "$([[ $rc == 60 ]]; echo $?)" \
	"a client without the CA refuses the certificate (curl exit $rc, 60: not verified)"
rc=0
out=$(curl -s -m 5 "http://127.0.0.1:$port/metrics") || rc=$?
check plain_http_refused "$([[ $rc != 0 && $out != *truestat_* ]]; echo $?)" \
	"plain HTTP to the TLS port gets no metrics (curl exit $rc)"
# a handshake that stops after the record header: others are still served
exec {slow}<>/dev/tcp/127.0.0.1/"$port"
printf '\x16\x03\x01' >&"$slow"
# 3 s: less than the 5 s (TS_HTTP_TIMEOUT_MS) for which a server that
# waited on the stalled handshake would hold it before closing it
check tls_stalled_handshake "$([[ $(status -m 3 "${auth[@]}" "$url/metrics") == 200 ]]; echo $?)" \
	"/metrics answered while another client's handshake stalls"
exec {slow}>&-
# a handshake cut short by its client (a scanner, a timeout) leaves the
# next client whole: OpenSSL's error queue is the thread's, and an error
# left in it by the first would make the exporter take the next one's
# every wait for the socket (in its handshake, in a long /metrics) for a
# failure; read through a small window, so that it waits to write too
check_lines < <(python3 - "$port" "$tmp/ca.crt" <<'PY'
import base64, socket, ssl, sys, time
port, ca = int(sys.argv[1]), sys.argv[2]
a = socket.create_connection(('127.0.0.1', port))
a.sendall(b'\x16\x03\x01\x00\x05\x01')  # a ClientHello's first bytes
a.shutdown(socket.SHUT_WR)
while a.recv(4096):  # until the exporter has closed it: done with it
    pass
a.close()
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(('127.0.0.1', port))
t = ssl.create_default_context(cafile=ca).wrap_socket(s, server_hostname='127.0.0.1')
t.sendall(b'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAuthorization: Basic '
          + base64.b64encode(b'prom:s3cret pass') + b'\r\n\r\n')
time.sleep(0.5)  # the exporter fills the window and waits for room
data = b''
while True:
    try:
        chunk = t.recv(65536)
    except (ssl.SSLError, OSError):
        break
    if not chunk:
        break
    data += chunk
head, _, body = data.partition(b'\r\n\r\n')
length = [int(l.split(b':')[1]) for l in head.split(b'\r\n') if l.lower().startswith(b'content-length:')]
print('tls_after_aborted_handshake', int(not length or len(body) != length[0]),
      'after a handshake cut short, /metrics through a 4 KiB window: %d of %s bytes'
      % (len(body), length[0] if length else 'no Content-Length'))
PY
)

# Debian's Prometheus: one job as it should be, one without the password,
# one without the CA.
pport=$(free_port)
job() { # NAME EXTRA-YAML-LINES
	printf '  - job_name: %s\n    scheme: https\n%s    static_configs:\n      - targets: ["127.0.0.1:%s"]\n' \
		"$1" "$2" "$port"
}
{
	printf 'global:\n  scrape_interval: 1s\nscrape_configs:\n'
	job good "    tls_config: {ca_file: $tmp/ca.crt}
    basic_auth: {username: prom, password: 's3cret pass'}
"
	job nopass "    tls_config: {ca_file: $tmp/ca.crt}
"
	job noca "    basic_auth: {username: prom, password: 's3cret pass'}
"
} >"$tmp/prometheus.yml"
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
	--web.listen-address="127.0.0.1:$pport" >"$tmp/prometheus.log" 2>&1 &
ppid=$!
on_exit "kill $ppid; wait $ppid"
api() { curl -sf "http://127.0.0.1:$pport/api/v1/$1" "${@:2}"; }
query() {
	api query --data-urlencode "query=$1" |
		python3 -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "none")'
}

before=$(diskstats "$dev")
fio --name=tls --filename="/dev/$dev" --direct=1 --rw=randread --bs=4k \
	--ioengine=psync --numjobs=2 --runtime=2 --time_based --output=/dev/null
after=$(diskstats "$dev")
want=$(($(cut -d' ' -f1 <<<"$after") - $(cut -d' ' -f1 <<<"$before")))
# I/O has stopped: the next scrape holds every read (a wrong count never
# comes to equal it, and the loop ends at 120 s: a guard for Prometheus'
# start and scrapes, seconds here, which costs nothing when they are done)
lab='{job="good",device="'$dev'",op="read"}'
got=none
for ((i = 0; i < 240; i++)); do
	got=$(query "truestat_requests_total$lab + truestat_missed_completions_total$lab" 2>/dev/null) || got=none
	[[ $got == "$want" ]] && break
	sleep 0.5
done
check prometheus_tls_scrape "$([[ $got == "$want" ]]; echo $?)" \
	"Prometheus over TLS with basic auth: reads + missed $got, diskstats $want"
# each job scraped at least once (Prometheus spreads their first scrapes
# over the interval): a target is "unknown" until then; 120 s, a guard
for ((i = 0; i < 240; i++)); do
	api targets | grep -q '"health":"unknown"' || break
	sleep 0.5
done
check_lines < <(api targets | python3 -c '
import json, sys
t = {x["labels"]["job"]: x for x in json.load(sys.stdin)["data"]["activeTargets"]}
def line(name, job, want):
    x = t.get(job, {})
    ok = x.get("health") == "down" and want in x.get("lastError", "")
    print(name, int(not ok), "job %s: %s, %s" % (job, x.get("health"), x.get("lastError", "not scraped")))
line("prometheus_no_password", "nopass", "401")
line("prometheus_no_ca", "noca", "certificate")
')
kill "$ppid" && wait "$ppid" || true
ts_stop INT
check exporter_exit "$TS_RC" "exits 0 on SIGINT (exit $TS_RC)"

# Client certificates, TLS 1.3 at least.
cat >"$tmp/mtls.yml" <<EOF
tls_server_config:
  cert_file: $tmp/server.crt
  key_file: $tmp/server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: $tmp/ca.crt
  min_version: TLS13
EOF
port=$(free_port)
url=https://127.0.0.1:$port
ts_start "$tmp/mtls.json" --prometheus="$port" --web.config.file="$tmp/mtls.yml" -d "$dev"
cert=(--cacert "$tmp/ca.crt" --cert "$tmp/client.crt" --key "$tmp/client.key")
wait_serving "$url" "${cert[@]}" || true
check mtls_with_cert "$([[ $(status "${cert[@]}" "$url/metrics") == 200 ]]; echo $?)" \
	"with a client certificate from the CA: 200"
rc=0
curl -s -o /dev/null --cacert "$tmp/ca.crt" "$url/metrics" || rc=$?
check mtls_without_cert "$([[ $rc != 0 ]]; echo $?)" "without one: refused (curl exit $rc)"
rc=0
curl -s -o /dev/null --cacert "$tmp/ca.crt" --cert "$tmp/server.crt" --key "$tmp/server.key" "$url/metrics" || rc=$?
check mtls_not_client_cert "$([[ $rc != 0 ]]; echo $?)" \
	"a certificate of the CA for servers only: refused (curl exit $rc)"
rc=0
curl -s -o /dev/null --cacert "$tmp/ca.crt" --cert "$tmp/self.crt" --key "$tmp/self.key" "$url/metrics" || rc=$?
check mtls_other_ca "$([[ $rc != 0 ]]; echo $?)" \
	"a client certificate of another CA: refused (curl exit $rc)"
rc=0
curl -s -o /dev/null "${cert[@]}" --tls-max 1.2 "$url/metrics" || rc=$?
check tls_min_version "$([[ $rc != 0 ]]; echo $?)" "TLS 1.2 against min_version TLS13: refused (curl exit $rc)"
ts_stop INT

# Bad files: one line, exit 2, before anything is attached.
bad() { # NAME WANT-IN-MESSAGE FILE-TEXT
	local rc=0 err
	printf '%s\n' "$3" >"$tmp/bad.yml"
	err=$("$TRUESTAT" --prometheus="$(free_port)" --web.config.file="$tmp/bad.yml" 1 1 2>&1 >/dev/null) || rc=$?
	check "bad_$1" "$([[ $rc == 2 && $(wc -l <<<"$err") == 1 && $err == *"$2"* ]]; echo $?)" \
		"exit $rc: $err"
}
bad no_key 'needs cert_file and key_file' "tls_server_config:
  cert_file: $tmp/server.crt"
bad missing_cert 'cannot read cert_file' "tls_server_config:
  cert_file: nowhere.crt
  key_file: $tmp/server.key"
bad key_mismatch 'key_file' "tls_server_config:
  cert_file: $tmp/server.crt
  key_file: $tmp/client.key"
bad unsupported ":4: tls_server_config: 'cipher_suites' is not supported" "tls_server_config:
  cert_file: $tmp/server.crt
  key_file: $tmp/server.key
  cipher_suites: [TLS_AES_128_GCM_SHA256]"
bad plain_password 'bcrypt hash' "basic_auth_users:
  prom: s3cret"
bad not_yaml 'did not find expected' "tls_server_config: [a,
  b"
rc=0
err=$("$TRUESTAT" --web.config.file="$tmp/web.yml" 1 1 2>&1 >/dev/null) || rc=$?
check bad_without_prometheus "$([[ $rc == 2 && $err == *'give --web.listen-address'* ]]; echo $?)" "exit $rc: $err"
finish
