package engine_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/registry"
)

// consistency records the ConsistentRead of every Query request by table.
type consistency struct {
	mu     sync.Mutex
	tables map[string][]bool
}

func (c *consistency) install(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("recordConsistency", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			if q, ok := in.Parameters.(*dynamodb.QueryInput); ok && awsmiddleware.GetOperationName(ctx) == "Query" {
				c.mu.Lock()
				c.tables[*q.TableName] = append(c.tables[*q.TableName], q.ConsistentRead != nil && *q.ConsistentRead)
				c.mu.Unlock()
			}
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
	})
}

// A query reads a table that takes no more writes (its write month and
// grace are over) eventually consistent, at half the read units, and the
// table still written strongly consistent: the consistency the planner
// prices. Pebble has one consistency; this runs on the DynamoDB backend.
func TestReadsOfSettledTablesAreEventual(t *testing.T) {
	ctx := context.Background()
	march := time.Date(2017, 3, 15, 12, 0, 0, 0, time.UTC)
	clk := clock.NewManual(march)
	rec := &consistency{tables: map[string][]bool{}}
	store, cfg, _, _ := backends.OpenDynamo(t, clk.Now, rec.install)
	db, err := engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: clk})
	require.NoError(t, err)
	defer db.Close()
	write := func(at time.Time) {
		_, err := db.Write(ctx, "acme", "cars", []event.Event{{Time: at, Series: "car-1", Fields: map[string]any{"speed": json.Number("1")}}})
		require.NoError(t, err)
	}
	write(march)
	april := time.Date(2017, 4, 12, 12, 0, 0, 0, time.UTC)
	clk.Set(april)
	write(april)

	f := cfg.Families[0]
	old, current := f.TableFor(march, march), f.TableFor(april, april)
	oldName, currentName := f.Namer().Format(old), f.Namer().Format(current)
	e := registry.Entry{Ref: old, Policy: f}
	require.True(t, e.Settled(april), "March's write month and grace are over")
	e.Ref = current
	require.False(t, e.Settled(april))

	q := engine.Query{Table: "cars", Series: "car-1", From: march.Add(-time.Hour), To: april.Add(time.Hour), Limit: 100}
	p, err := db.Query(ctx, "acme", q)
	require.NoError(t, err)
	require.Len(t, p.Events, 2)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.NotEmpty(t, rec.tables[oldName])
	require.NotEmpty(t, rec.tables[currentName])
	for _, c := range rec.tables[oldName] {
		require.False(t, c, "March's table takes no more writes: eventually consistent")
	}
	for _, c := range rec.tables[currentName] {
		require.True(t, c, "April's table is still written: strongly consistent")
	}
}
