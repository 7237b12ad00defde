#!/usr/bin/env bash
# test.sh runs every test with the race detector: the whole module with the
# DynamoDB suites against dynalite and, at the same time, the packages
# that have DynamoDB suites against AWS's DynamoDB Local (their Pebble
# tests ran in the first run already: TIMETABLE_TEST_BACKENDS=dynamodb,
# under which internal/backends leaves Pebble out and backends.NoDynamoDB
# skips the slow tests that reach no DynamoDB).
# Each run starts and stops its own server (scripts/with-dynamodb.sh).
# The runs without DynamoDB (the benchmark module's tests, the memory
# bounds, the fuzzing) follow whichever of the two ends first. It prints
# every run's output and fails when any fails.
set -uo pipefail
cd "$(dirname "$0")/.."

GO="${GO:-go}"
# The packages whose tests reach DynamoDB (internal/dynamotest,
# internal/backends).
dynamo_pkgs=(./storage/dynamostore/... ./registry ./engine ./lifecycle ./archive ./compact ./server ./cli ./migrate ./cmd/timetable-lambda)

# The InfluxDB and MQTT clients the ingest tests run (internal/clients):
# once installed, a missing one fails its test instead of skipping it.
# influx_inspect is built into Go's bin directory, which the doc pages'
# shells find on the PATH.
export PATH="$PATH:$("$GO" env GOPATH)/bin"
if scripts/install-clients.sh; then
	export TIMETABLE_REQUIRE_CLIENTS=1
fi

# Both servers are installed first, one after the other: two npm installs
# at once would share npm's cache.
scripts/with-dynamodb.sh dynamodb-local true || exit 1
scripts/with-dynamodb.sh dynalite true || exit 1
# DuckDB's Node API, which the Parquet tests read their files with
# (internal/duckdbtest), likewise.
scripts/duckdb/install.sh >/dev/null || exit 1

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The packages that take longest are named first, so that each run starts
# them first (go test builds and runs its packages in the order it is
# given them, -p at a time) and ends on short ones rather than on one
# long package with the other core idle. Longest first, as measured in a
# quiet make test on two cores; the rest follow in ./...'s order.
dynalite_first=(./engine ./lifecycle ./archive ./server ./cmd/timetable ./storage/dynamostore ./cli ./compact ./influxql ./admission ./migrate)
local_first=(./engine ./storage/dynamostore ./lifecycle ./server ./archive)

# The runs that follow the two DynamoDB runs, longest first. Each is taken
# by whichever DynamoDB run ends first (mkdir, which is atomic, marks it
# taken), so that they fill the cores the longer run leaves idle instead
# of running after it. Each writes its output to $work/NAME.log and its
# status to $work/NAME.status; the output is printed at the end.
extras=(fuzz_query memory bench fuzz_parse)

# The InfluxQL statement text is fuzzed for a fixed number of inputs on
# every run (about ten seconds each here): the check of its bounds against
# what the parser builds (FuzzParse), and /query's answers, never a panic,
# a 5xx or a hang (FuzzInfluxQuery). A count, not a time: Go 1.26's fuzz
# coordinator can fail a run whose -fuzztime ends while a worker is busy
# (go.dev/issue/75804). Their seed corpora run with every test;
# `make fuzz` runs longer.
run_fuzz_parse() {
	echo "== fuzzing InfluxQL statements: the parser's bounds"
	"$GO" test -run XXX -fuzz '^FuzzParse$' -fuzztime 40000x ./influxql
}
run_fuzz_query() {
	echo "== fuzzing InfluxQL statements: /query"
	"$GO" test -run XXX -fuzz '^FuzzInfluxQuery$' -fuzztime 20000x ./server
}

# The benchmark is a module of its own (bench/go.mod), which ./... does
# not reach: its tests run here.
run_bench() {
	echo "== the benchmark module's tests"
	(cd bench && "$GO" test -race -timeout 10m ./...)
}

# The memory bounds skip under the race detector, which changes what
# memory holds, and so do the tests that move megabytes through a fake
# S3 server or dynalite, or the largest requests through the decoders,
# which it slows tenfold or more: they run here without it, the memory
# bounds at their -short sizes.
run_memory() {
	echo "== the memory bounds and the bulk-data tests, without the race detector"
	"$GO" test -short -count=1 -timeout 10m -run 'TestMemoryIsBoundedInWhatRequestsHold|TestInfluxQLMemoryIsBounded|TestAHugeMessageIsRefusedInBoundedMemory|TestArchiveMemoryIsBounded' ./server ./mqttsub ./archive &&
		"$GO" test -count=1 -timeout 10m -run '^TestLargestRequestsAreAdmittedOnAnIdleServer$' ./server &&
		scripts/with-dynamodb.sh dynalite "$GO" test -count=1 -timeout 10m -run '^(TestS3MultipartParts|TestArchiveOfAThrottledColdTable)$' ./archive
}

run_extras() {
	local x
	for x in "${extras[@]}"; do
		if mkdir "$work/$x.taken" 2>/dev/null; then
			"run_$x" >"$work/$x.log" 2>&1
			echo $? >"$work/$x.status"
		fi
	done
}

# Of cmd/timetable, only the tests of the binary against DynamoDB: a
# migration, an import and a compaction killed and resumed, and a server
# moved to DynamoDB.
(
	TIMETABLE_TEST_BACKENDS=dynamodb scripts/with-dynamodb.sh dynamodb-local \
		bash -c '"$0" test -race -timeout 20m "$@" && "$0" test -timeout 10m -run "^(TestMigrateKilled|TestMovingToDynamoDB|TestImportKilled|TestCompactKilled)$" ./cmd/timetable' \
		"$GO" "${local_first[@]}" "${dynamo_pkgs[@]}" >"$work/local.log" 2>&1
	echo $? >"$work/local.status"
	run_extras
) &
local_pid=$!

echo "== every test; the DynamoDB suites against dynalite"
scripts/with-dynamodb.sh dynalite "$GO" test -race -timeout 20m "${dynalite_first[@]}" ./...
dynalite_status=$?
run_extras

wait "$local_pid"
echo
echo "== the DynamoDB suites against AWS's DynamoDB Local"
cat "$work/local.log"
status() { cat "$work/$1.status" 2>/dev/null || echo 1; }
local_status=$(status local)
for x in "${extras[@]}"; do
	echo
	cat "$work/$x.log"
done
bench_status=$(status bench)
memory_status=$(status memory)
fuzz_status=$(status fuzz_parse)
if [ "$fuzz_status" -eq 0 ]; then
	fuzz_status=$(status fuzz_query)
fi

if [ "$dynalite_status" -ne 0 ] || [ "$local_status" -ne 0 ] || [ "$bench_status" -ne 0 ] || [ "$memory_status" -ne 0 ] || [ "$fuzz_status" -ne 0 ]; then
	echo "test.sh: failed (dynalite run: $dynalite_status, DynamoDB Local run: $local_status, bench module: $bench_status, memory bounds: $memory_status, InfluxQL fuzzing: $fuzz_status)" >&2
	exit 1
fi
