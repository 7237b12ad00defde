// Command timetable-lambda is timetable's lifecycle manager as an AWS
// Lambda function (runtime provided.al2023, the binary named bootstrap),
// the replacement for the AWS blog's Lambda and its two cron rules. It
// accepts the blog's events {"Operation": "create_new"} and
// {"Operation": "resize_old"}, and {"Operation": "reconcile"} (or a plain
// scheduled event) for the whole cycle; see lifecycle.HandleLambda.
//
// The configuration comes from TIMETABLE_CONFIG (a file path) or
// TIMETABLE_CONFIG_YAML (inline); the store is DynamoDB through the
// standard AWS configuration chain. The function holds the same lease in
// the meta table as `timetable serve`, so the two never act at once; the
// meta table is the one serve and `timetable tenant add` create.
//
// After each run that succeeds, the function writes a heartbeat to its
// log in CloudWatch's embedded metric format (heartbeat.go): the metric
// Runs, whose absence the template's MissingRunAlarm treats as a missing
// run, and TableQuotaUsed, the share of the account's table quota the
// region's tables take.
//
// main only wires; deploy/template.yaml deploys it.
package main

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/compact"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage/dynamostore"
)

// lambdaDeadlineMargin is how long before the invocation's deadline an
// archive stops: time to write the Parquet part gathered so far (up to
// archive.DefaultParquetPartRows events), commit the upload, save the
// checkpoint and release the lease, at 1,024 MB (deploy/template.yaml;
// docs/archive.md gives the figures).
const lambdaDeadlineMargin = 2 * time.Minute

// envTableQuota is the account's table quota in the region
// (dynamostore.Options.TableQuota; its default when unset), which the
// heartbeat measures the tables against.
const envTableQuota = "TIMETABLE_TABLE_QUOTA"

func main() {
	ctx := context.Background()
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	clk := clock.Real{}
	r, store, err := newReconciler(ctx, wiring{getenv: os.Getenv, logger: logger, clock: clk})
	if err != nil {
		log.Fatal(err)
	}
	hb := heartbeat{out: os.Stdout, tables: store, quota: store.Options().TableQuota, function: os.Getenv("AWS_LAMBDA_FUNCTION_NAME"), now: clk.Now}
	lambda.Start(func(ctx context.Context, ev lifecycle.LambdaEvent) (lifecycle.LambdaResponse, error) {
		res, err := lifecycle.HandleLambda(ctx, r, ev)
		if err == nil {
			if herr := hb.beat(ctx); herr != nil {
				logger.Warn("no heartbeat written; the missing-run alarm may fire", "err", herr)
			}
		}
		return res, err
	})
}

// wiring is what the function is built from: the environment, and for
// tests the store's client options, the archive's S3 options and a clock.
type wiring struct {
	getenv func(string) string
	logger *slog.Logger
	clock  clock.Clock
	store  dynamostore.Options
	s3     archive.S3Options
}

// newReconciler builds the lifecycle manager the function runs, and
// returns it with its store: the code path whose AWS calls
// deploy/template.yaml grants (main_test.go records them).
func newReconciler(ctx context.Context, w wiring) (*lifecycle.Reconciler, *dynamostore.Store, error) {
	cfg, err := lifecycle.ConfigFromEnv(w.getenv)
	if err != nil {
		return nil, nil, err
	}
	w.store.Logger = w.logger
	if v := w.getenv(envTableQuota); v != "" {
		q, err := strconv.Atoi(v)
		if err != nil || q < 1 {
			return nil, nil, fmt.Errorf("%s=%q: must be a positive number of tables", envTableQuota, v)
		}
		w.store.TableQuota = q
	}
	store, err := dynamostore.Open(ctx, w.store)
	if err != nil {
		return nil, nil, err
	}
	meta := cfg.MetaTable
	if meta == "" {
		meta = engine.DefaultMetaTable
	}
	var families []string
	for _, f := range cfg.Families {
		families = append(families, f.Name)
	}
	r, err := lifecycle.New(lifecycle.Options{
		Store:     store,
		Families:  cfg.Families,
		MetaTable: meta,
		Clock:     w.clock,
		OpenArchiver: func(target string, format family.ArchiveFormat) (lifecycle.Archiver, error) {
			return archive.Open(ctx, target, store, archive.Options{Clock: w.clock, Logger: w.logger, S3: w.s3, Format: format, Method: archive.Method(cfg.ArchiveMethod),
				Facts: registry.New(store, meta).Finder(families), DeadlineMargin: lambdaDeadlineMargin})
		},
		Leaser: lifecycle.TableLease{Store: store, Table: meta, Clock: w.clock},
		Logger: w.logger,
		// DynamoDB: a table is packed into its next physical table.
		Compaction: compact.NextGeneration,
	})
	return r, store, err
}
