// Package backends gives tests of the layers above storage (engine,
// server, CLI) every backend to run on: Pebble in a temporary directory
// always, and DynamoDB when TIMETABLE_DYNAMODB_ENDPOINT names a
// DynamoDB-API server (`make test` starts dynalite and sets it).
//
// Each test gets names of its own (a table-name prefix and a meta table),
// so tests can share one server, and its tables are deleted when it ends,
// since dynalite's memory only grows.
package backends

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/dynamostore"
	"github.com/timetabledb/timetable/storage/dynamostore/dynamofault"
	"github.com/timetabledb/timetable/storage/pebblestore"
)

// EndpointEnv names the DynamoDB-API server the tests may use.
const EndpointEnv = "TIMETABLE_DYNAMODB_ENDPOINT"

// MetaTable returns the meta table cfg names, or the engine's default
// (engine.DefaultMetaTable) where it names none, as on Pebble.
func MetaTable(cfg family.Schema) string {
	if cfg.MetaTable == "" {
		return engine.DefaultMetaTable
	}
	return cfg.MetaTable
}

// Backend is a store a test can run on.
type Backend struct {
	// Name is "pebble" or "dynamodb".
	Name string
	// Open returns a new, empty store and the schema that keeps the
	// test's tables apart from other tests': the default one, with a
	// prefix and meta table of the test's own. The store is closed, and
	// its tables deleted, when the test ends.
	Open func(t *testing.T) (storage.Store, family.Schema)
}

// All returns the backends available here. A test that needs DynamoDB and
// finds it unavailable says so in its log.
//
// TIMETABLE_TEST_BACKENDS=dynamodb leaves Pebble out: scripts/test.sh runs
// the DynamoDB suites a second time, against DynamoDB Local, and the Pebble
// tests need not run twice.
func All(t *testing.T) []Backend {
	var bs []Backend
	if os.Getenv("TIMETABLE_TEST_BACKENDS") != "dynamodb" {
		bs = append(bs, Pebble())
	}
	if os.Getenv(EndpointEnv) != "" {
		bs = append(bs, Dynamo())
	} else {
		t.Logf("DynamoDB backend skipped: set %s or run `make test` to start dynalite", EndpointEnv)
	}
	return bs
}

// NoDynamoDB marks a test that reaches no DynamoDB: it skips in the run
// of scripts/test.sh against DynamoDB Local (TIMETABLE_TEST_BACKENDS=dynamodb),
// which is there for the DynamoDB suites, since the run against dynalite
// ran it already. Without it, the test would run twice for nothing.
func NoDynamoDB(t *testing.T) {
	t.Helper()
	if os.Getenv("TIMETABLE_TEST_BACKENDS") == "dynamodb" {
		t.Skip("reaches no DynamoDB: run in the other run of scripts/test.sh (TIMETABLE_TEST_BACKENDS=dynamodb)")
	}
}

// Pebble is the embedded backend in a temporary directory.
func Pebble() Backend {
	return Backend{Name: "pebble", Open: func(t *testing.T) (storage.Store, family.Schema) {
		s, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s, family.DefaultSchema()
	}}
}

var run = func() string {
	b := make([]byte, 3)
	rand.Read(b)
	return hex.EncodeToString(b)
}()

var seq atomic.Int64

// Dynamo is the DynamoDB backend on the server in TIMETABLE_DYNAMODB_ENDPOINT,
// reached through the standard AWS configuration chain and a
// dynamofault.ControlPlane on the wall clock, which keeps DynamoDB's
// control-plane rules and answers for what the local servers ignore
// (table class, limits, deletion protection, point-in-time recovery).
func Dynamo() Backend {
	return Backend{Name: "dynamodb", Open: func(t *testing.T) (storage.Store, family.Schema) {
		s, cfg, _, _ := OpenDynamo(t, nil)
		return s, cfg
	}}
}

// OpenDynamo opens the DynamoDB backend as Dynamo does, with its
// ControlPlane on the clock now (the wall clock when nil) and a fake
// Application Auto Scaling, and returns both too, for a test to count
// what was refused and what is auto scaled.
//
// Client options, when given, are applied to the DynamoDB client after the
// backend's own: a test that inspects requests adds its middleware there.
func OpenDynamo(t *testing.T, now func() time.Time, client ...func(*dynamodb.Options)) (storage.Store, family.Schema, *dynamofault.ControlPlane, *dynamofault.AutoScaling) {
	cp := dynamofault.NewControlPlane(dynamofault.ControlPlaneOptions{Now: now})
	as := dynamofault.NewAutoScaling()
	s, cfg := openDynamo(t, cp, as, client...)
	return s, cfg, cp, as
}

// OpenDynamoExports opens the DynamoDB backend as OpenDynamo does, with
// a ControlPlane that also answers DynamoDB's export to S3 and import
// from S3 (dynamofault.ControlPlaneOptions.Exports) on the S3 server of
// the standard AWS configuration chain, which the test sets up
// (AWS_ENDPOINT_URL_S3).
func OpenDynamoExports(t *testing.T) (storage.Store, family.Schema, *dynamofault.ControlPlane) {
	cp := dynamofault.NewControlPlane(dynamofault.ControlPlaneOptions{Exports: true})
	s, cfg := openDynamo(t, cp, dynamofault.NewAutoScaling())
	return s, cfg, cp
}

func openDynamo(t *testing.T, cp *dynamofault.ControlPlane, as *dynamofault.AutoScaling, client ...func(*dynamodb.Options)) (storage.Store, family.Schema) {
	{
		if os.Getenv(EndpointEnv) == "" {
			t.Skipf("set %s or run `make test` to start dynalite", EndpointEnv)
		}
		if os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") == "" {
			t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", os.Getenv(EndpointEnv))
		}
		ctx := context.Background()
		s, err := dynamostore.Open(ctx, dynamostore.Options{AutoScaling: as, ClientOptions: append([]func(*dynamodb.Options){func(o *dynamodb.Options) {
			o.HTTPClient = &http.Client{Transport: cp}
		}}, client...)})
		if err != nil {
			t.Fatal(err)
		}
		id := "t" + run + "_" + strconv.FormatInt(seq.Add(1), 10)
		cfg := family.DefaultSchema()
		cfg.Families[0].Prefix = id + "_ev_"
		cfg.MetaTable = id + "_meta"
		t.Cleanup(func() {
			// Delete what the test made, then close.
			var names []string
			_ = s.ListTables(ctx, id, func(name string) bool {
				if !strings.HasPrefix(name, id+"_") {
					return false
				}
				names = append(names, name)
				return true
			})
			off := false
			for _, n := range names {
				// Family tables are made protected from deletion.
				_ = s.UpdateTable(ctx, n, storage.TableUpdate{DeletionProtection: &off})
				_ = s.DeleteTable(ctx, n)
			}
			s.Close()
		})
		return s, cfg
	}
}

// Drop deletes a table as the lifecycle manager does, behind a test's
// back: it lifts the table's deletion protection, which every table of a
// family is made with, and deletes it.
func Drop(ctx context.Context, s storage.Tables, name string) error {
	off := false
	if err := s.UpdateTable(ctx, name, storage.TableUpdate{DeletionProtection: &off}); err != nil {
		return err
	}
	return s.DeleteTable(ctx, name)
}

// AdoptUntagged adopts the family's table name into the registry of meta,
// as an operator does with `timetable tables adopt`, where the store
// keeps no tags (DynamoDB Local): there a table cannot prove itself this
// deployment's by its timetable:meta tag, and the lifecycle adopts only
// the tables that can. Where the store keeps tags it does nothing.
func AdoptUntagged(t testing.TB, s storage.Store, meta string, f family.Family, name string, now time.Time) {
	t.Helper()
	ctx := context.Background()
	info, err := s.DescribeTable(ctx, name)
	if err != nil {
		t.Fatalf("describe table %q: %v", name, err)
	}
	if info.Tags[family.TagMeta] != "" {
		return
	}
	if err := s.CreateTable(ctx, storage.TableSpec{Name: meta, Capacity: storage.Capacity{Billing: storage.OnDemand}}); err != nil && !errors.Is(err, storage.ErrTableExists) {
		t.Fatalf("create meta table %q: %v", meta, err)
	}
	if _, err := registry.New(s, meta).Adopt(ctx, s, []family.Family{f}, name, false, now); err != nil {
		t.Fatalf("adopt table %q: %v", name, err)
	}
}
