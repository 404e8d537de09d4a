#!/usr/bin/env bash
# The exporter as a fleet reads it: truestat_build_info names the version
# and commit `truestat --version` prints and the kernel `uname -r` does;
# --web.listen-address serves /metrics and --prometheus is the same option;
# a bad address is one line and exit 2.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need fio python3 curl promtool

loop_filled 64
dev=$LOOP
tmp=$(mktemp -d /tmp/truestat-test.XXXXXX)
on_exit "rm -rf $tmp"

# serve OUT ARGS...: truestat with ARGS, once /metrics answers on $url
serve() {
	local out=$1 i
	shift
	port=$(free_port)
	url=http://127.0.0.1:$port
	ts_start "$out" "${@/PORT/$port}"
	for ((i = 0; i < 100; i++)); do
		curl -sf "$url/" >/dev/null && return 0
		sleep 0.1
	done
	echo "truestat did not serve $url"
	return 1
}

serve "$tmp/a.json" --web.listen-address=PORT -d "$dev"
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
ts_stop INT
check ts_exit "$TS_RC" "--web.listen-address: SIGINT ends truestat with status $TS_RC"

rc=0
err=$("$TRUESTAT" --web.listen-address=localhost:1 2>&1 >/dev/null) || rc=$?
check bad_listen_address "$([[ $rc == 2 && $(wc -l <<<"$err") == 1 && $err == *'bad --web.listen-address'* ]]; echo $?)" \
	"exit $rc: $err"
finish
