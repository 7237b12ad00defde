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

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/dynamostore"
)

func main() {
	ctx := context.Background()
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	cfg, err := lifecycle.ConfigFromEnv(os.Getenv)
	if err != nil {
		log.Fatal(err)
	}
	store, err := dynamostore.Open(ctx, dynamostore.Options{Logger: logger})
	if err != nil {
		log.Fatal(err)
	}
	meta := cfg.MetaTable
	if meta == "" {
		meta = engine.DefaultMetaTable
	}
	clk := clock.Real{}
	r, err := lifecycle.New(lifecycle.Options{
		Store:     store,
		Families:  cfg.Families,
		MetaTable: meta,
		Clock:     clk,
		OpenArchiver: func(target string, s storage.Store) (lifecycle.Archiver, error) {
			var families []string
			for _, f := range cfg.Families {
				families = append(families, f.Name)
			}
			return archive.Open(ctx, target, s, archive.Options{Clock: clk, Logger: logger, Facts: registry.New(s, meta).Finder(families)})
		},
		Leaser: dynamostore.Lease{Store: store, Table: meta, Clock: clk},
		Logger: logger,
	})
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(func(ctx context.Context, ev lifecycle.LambdaEvent) (lifecycle.LambdaResponse, error) {
		return lifecycle.HandleLambda(ctx, r, ev)
	})
}
