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
// main only wires; deploy/template.yaml deploys it.
package main

import (
	"context"
	"log"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/clock"
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

func main() {
	ctx := context.Background()
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	r, err := newReconciler(ctx, wiring{getenv: os.Getenv, logger: logger, clock: clock.Real{}})
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(func(ctx context.Context, ev lifecycle.LambdaEvent) (lifecycle.LambdaResponse, error) {
		return lifecycle.HandleLambda(ctx, r, ev)
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

// newReconciler builds the lifecycle manager the function runs: the code
// path whose AWS calls deploy/template.yaml grants (main_test.go records
// them).
func newReconciler(ctx context.Context, w wiring) (*lifecycle.Reconciler, error) {
	cfg, err := lifecycle.ConfigFromEnv(w.getenv)
	if err != nil {
		return nil, err
	}
	w.store.Logger = w.logger
	store, err := dynamostore.Open(ctx, w.store)
	if err != nil {
		return nil, err
	}
	meta := cfg.MetaTable
	if meta == "" {
		meta = engine.DefaultMetaTable
	}
	var families []string
	for _, f := range cfg.Families {
		families = append(families, f.Name)
	}
	return lifecycle.New(lifecycle.Options{
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
	})
}
