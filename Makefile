# timetable's build. `make test` is what CI runs (.ci/run); it installs
# dynalite and AWS's DynamoDB Local (pinned, through npm) so the DynamoDB
# suites run against two real DynamoDB-API servers, and DuckDB's Node API
# (scripts/duckdb), which reads the Parquet files the tests write.

GO ?= go
PKGS := ./...

.PHONY: all build install lambda build-Lifecycle test vet unit bench influxdiff fuzz clean

all: build

build:
	$(GO) build -o bin/timetable ./cmd/timetable

# install puts the timetable binary in $(PREFIX)/bin, by default Go's own
# bin directory ($(go env GOPATH)/bin); `make install PREFIX=/usr/local`
# for a system-wide one.
PREFIX ?= $(shell $(GO) env GOPATH)
install:
	mkdir -p $(PREFIX)/bin
	$(GO) build -o $(PREFIX)/bin/timetable ./cmd/timetable

# lambda builds the lifecycle manager's AWS Lambda function for
# deploy/template.yaml (provided.al2023, arm64).
# The binary is stripped (-s -w, -trimpath): Lambda loads it on every cold
# start. `sam build -t deploy/template.yaml` calls build-Lifecycle, with
# ARTIFACTS_DIR set (the template's BuildMethod: makefile).
LAMBDA_BUILD = GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build -tags lambda.norpc -trimpath -ldflags "-s -w"
lambda:
	$(LAMBDA_BUILD) -o deploy/build/bootstrap ./cmd/timetable-lambda

build-Lifecycle:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./cmd/timetable-lambda

# The benchmark (bench/) is a module of its own, so that the peers'
# clients stay out of the product's go.mod: ./... does not reach it, and
# vet and unit name it.
vet:
	$(GO) vet $(PKGS)
	cd bench && $(GO) vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi

# test runs every test, with the race detector, the DynamoDB suites against
# dynalite and against DynamoDB Local, each on a free loopback port, the two
# runs at once (scripts/test.sh).
test: vet
	GO=$(GO) scripts/test.sh

# unit runs the tests without a DynamoDB server: the DynamoDB suites skip.
unit:
	$(GO) test -race $(PKGS)
	cd bench && $(GO) test -race ./...

# bench prints every figure of the benchmark table from one run, each next
# to its baseline, then the peer comparison: `timetable serve` (bin/timetable)
# beside InfluxDB, PostgreSQL and VictoriaMetrics, which it installs with
# apt-get when they are missing. BENCHFLAGS=-peers=only runs just that one,
# -peers=without skips it; BENCHFLAGS=-only=PART one part of the table.
# It writes the page docs/benchmarks.md from the run (BENCHPAGE= for none).
BENCHFLAGS ?=
BENCHPAGE ?= $(CURDIR)/docs/benchmarks.md
bench: build
	scripts/install-clients.sh || true
	scripts/with-dynalite.sh $(GO) -C bench run ./cmd/timetable-bench -timetable $(CURDIR)/bin/timetable -page "$(BENCHPAGE)" $(BENCHFLAGS)

# influxdiff runs the differential test of /query against InfluxDB
# (server's TestInfluxQLDifferential) longer than make test does:
# INFLUXDIFF generated statements of the seed INFLUXDIFF_SEED, the summary
# of the differences by kind printed (docs/influxql.md, Compared with
# InfluxDB).
INFLUXDIFF ?= 5000
INFLUXDIFF_SEED ?= 40
influxdiff:
	scripts/install-clients.sh
	TIMETABLE_REQUIRE_CLIENTS=1 TIMETABLE_INFLUXDIFF=$(INFLUXDIFF) TIMETABLE_INFLUXDIFF_SEED=$(INFLUXDIFF_SEED) \
		$(GO) test -count=1 -v -timeout 30m -run '^TestInfluxQLDifferential$$' ./server

# fuzz runs the fuzz targets of key encoding, name parsing and request
# decoding briefly (FUZZTIME each).
FUZZTIME ?= 20s
fuzz:
	$(GO) test -run XXX -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./naming
	$(GO) test -run XXX -fuzz '^FuzzRoundTrip$$' -fuzztime $(FUZZTIME) ./naming
	$(GO) test -run XXX -fuzz '^FuzzDecodeJSON$$' -fuzztime $(FUZZTIME) ./event
	$(GO) test -run XXX -fuzz '^FuzzDecodeNDJSON$$' -fuzztime $(FUZZTIME) ./event
	$(GO) test -run XXX -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./event/lineproto
	$(GO) test -run XXX -fuzz '^FuzzWholeMatchesEachLine$$' -fuzztime $(FUZZTIME) ./event/lineproto
	$(GO) test -run XXX -fuzz '^FuzzNumber$$' -fuzztime $(FUZZTIME) ./event/lineproto
	$(GO) test -run XXX -fuzz '^FuzzAdminBody$$' -fuzztime $(FUZZTIME) ./server
	$(GO) test -run XXX -fuzz '^FuzzRowKey$$' -fuzztime $(FUZZTIME) ./engine/itemenc
	$(GO) test -run XXX -fuzz '^FuzzTimeKeys$$' -fuzztime $(FUZZTIME) ./engine/itemenc
	$(GO) test -run XXX -fuzz '^FuzzAddSmall$$' -fuzztime $(FUZZTIME) ./engine/internal/agg
	$(GO) test -run XXX -fuzz '^FuzzItemKey$$' -fuzztime $(FUZZTIME) ./storage/pebblestore
	$(GO) test -run XXX -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s ./filter
	$(GO) test -run XXX -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./influxql
	$(GO) test -run XXX -fuzz '^FuzzInfluxQuery$$' -fuzztime $(FUZZTIME) ./server

clean:
	rm -rf bin .cache
