#!/usr/bin/env bash
# install-clients.sh installs, when missing, the programs the ingest and
# query tests run against (internal/clients): the influx 1.x CLI,
# InfluxDB's Python client, InfluxDB 1.x itself (influxd, which
# TestAnswersMatchInfluxDB compares /query with), the mosquitto broker and
# its command-line clients, from Debian's packages; and InfluxDB's
# influx_inspect, which Debian's influxdb leaves out, built from
# InfluxDB's source through the Go module proxy into Go's bin directory
# (the test of `timetable import` exports an influxd's data with it). It
# exits 0 when all are there afterwards, 1 when they could not be
# installed (not root, no apt, no network).
set -uo pipefail

# influx_inspect first: its build needs only Go.
gobin="$(go env GOPATH)/bin"
if ! command -v influx_inspect >/dev/null && [ ! -x "$gobin/influx_inspect" ]; then
	echo "== building influx_inspect (InfluxDB v1.8.3) into $gobin"
	if ! (cd /tmp && GOFLAGS=-mod=mod go install github.com/influxdata/influxdb/cmd/influx_inspect@v1.8.3); then
		echo "install-clients.sh: go install of influx_inspect failed: the import test will skip" >&2
		exit 1
	fi
fi

have() {
	command -v influx >/dev/null && command -v influxd >/dev/null && command -v mosquitto >/dev/null &&
		command -v mosquitto_pub >/dev/null && command -v mosquitto_sub >/dev/null &&
		{ /usr/bin/python3 -c 'import influxdb' 2>/dev/null || python3 -c 'import influxdb' 2>/dev/null; }
}

if have; then
	exit 0
fi
if ! command -v apt-get >/dev/null || [ "$(id -u)" -ne 0 ]; then
	echo "install-clients.sh: influxdb, influxdb-client, python3-influxdb, mosquitto and mosquitto-clients are missing, and apt-get cannot run here (needs root and apt): their tests will skip" >&2
	exit 1
fi
echo "== installing influxdb influxdb-client python3-influxdb mosquitto mosquitto-clients"
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -qq && apt-get install -y -qq influxdb influxdb-client python3-influxdb mosquitto mosquitto-clients >/dev/null; }; then
	echo "install-clients.sh: apt-get install failed: the tests that need these programs will skip" >&2
	exit 1
fi
# The packages start a broker on port 1883 and an influxd on 8086 where an
# init system runs; the tests start their own on free ports and need none.
have
