#!/usr/bin/env bash
# The shipped rules (prometheus/truestat.rules.yml) on Debian's real
# Prometheus in both of its forms at once, scraping the same truestat: one
# with native histograms (--enable-feature=native-histograms: it asks for
# protobuf and stores each histogram as one native series, no _bucket or
# _sum), one without (the classic buckets). Each is checked to have stored
# the form it stands for (the scenario happened), then every recording
# rule of the file must answer in both. (Debian's promtool, 2.42, reads no
# native histogram in a rules test: prometheus/truestat.rules.test.yml
# holds the classic form, this test the native one.)
# The load: fio at depth 1 for 3 s, then at depth 8, so that the rules that
# need the depth-1 baseline and a deeper class where the device sits have
# their evidence.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need fio python3 curl prometheus

loop_filled 64
dev=$LOOP
make_tmp
port=$(free_port)
ts_start "$tmp/ts.json" --prometheus="$port" -d "$dev"
wait_serving "http://127.0.0.1:$port" || true

fio --name=shallow --filename="/dev/$dev" --direct=1 --rw=randread --bs=4k \
	--ioengine=libaio --iodepth=1 --runtime=3 --time_based \
	--output=/dev/null
fio --name=deep --filename="/dev/$dev" --direct=1 --rw=randread --bs=4k \
	--ioengine=libaio --iodepth=8 --runtime=600 --time_based \
	--output=/dev/null &
fio_pid=$!
on_exit "kill $fio_pid 2>/dev/null || true"

# prom NAME [FLAGS]: a Prometheus scraping truestat once a second, the
# rules evaluated once a second; its port in $PPORT_NAME
prom() {
	local name=$1 p
	shift
	p=$(free_port)
	mkdir -p "$tmp/$name"
	cat >"$tmp/$name/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $TS_ROOT/prometheus/truestat.rules.yml
scrape_configs:
  - job_name: truestat
    static_configs:
      - targets: ['127.0.0.1:$port']
EOF
	prometheus --config.file="$tmp/$name/prometheus.yml" \
		--storage.tsdb.path="$tmp/$name/tsdb" \
		--web.listen-address="127.0.0.1:$p" "$@" \
		>"$tmp/$name/prometheus.log" 2>&1 &
	on_exit "kill $!; wait $! 2>/dev/null || true"
	printf -v "PPORT_$name" %s "$p"
}
prom native --enable-feature=native-histograms
prom classic

# the number of series QUERY returns on Prometheus PORT ("none": no answer)
answers() {
	curl -sf --data-urlencode "query=$2" "http://127.0.0.1:$1/api/v1/query" |
		python3 -c 'import json, sys; print(len(json.load(sys.stdin)["data"]["result"]))' ||
		echo none
}
rules=$(sed -n 's/^ *- record: //p' "$TS_ROOT/prometheus/truestat.rules.yml")
all_answer() {
	local r
	for r in $rules; do
		[[ $(answers "$PPORT_native" "$r") =~ ^[1-9] &&
			$(answers "$PPORT_classic" "$r") =~ ^[1-9] ]] || return 1
	done
}
# 180 s: a guard for both to start, scrape and evaluate (seconds here),
# by the clock (a round of queries takes a while); the loop ends as soon
# as every rule answers in both
end=$((SECONDS + 180))
until all_answer || ((SECONDS >= end)); do sleep 0.5; done
kill "$fio_pid" 2>/dev/null || true

n_native=$(answers "$PPORT_native" 'truestat_service_seconds')
b_native=$(answers "$PPORT_native" 'truestat_service_seconds_bucket')
b_classic=$(answers "$PPORT_classic" 'truestat_service_seconds_bucket')
check native_stored "$([[ $n_native =~ ^[1-9] && $b_native == 0 ]]; echo $?)" \
	"with native histograms: $n_native native service series, $b_native _bucket series"
check classic_stored "$([[ $b_classic =~ ^[1-9] ]]; echo $?)" \
	"without: $b_classic _bucket series"
for r in $rules; do
	a=$(answers "$PPORT_native" "$r")
	b=$(answers "$PPORT_classic" "$r")
	check "rule_${r//[:]/_}" "$([[ $a =~ ^[1-9] && $b =~ ^[1-9] ]]; echo $?)" \
		"$r: $a series with native histograms, $b without"
done
ts_stop INT
check ts_exit "$TS_RC" "truestat ended at SIGINT, status $TS_RC"
finish
