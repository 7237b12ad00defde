package engine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/admission"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/internal/metricstest"
)

// Aggregates of every series take a slot of the CPU pool their context
// carries (engine.WithCPU) for each turn of series they summarise while
// another tenant is active: four at once take slots (that they hold at
// most the pool's slots between them is the pool's own test,
// admission.TestCPUAccounting), give every slot back, and answer as
// without a pool. A tenant alone takes no slot and answers the
// same.
func TestAggregateCPUPool(t *testing.T) {
	store, cfg := backends.Pebble().Open(t)
	ctx := context.Background()
	cpu := admission.NewCPU(2)
	reg := prometheus.NewRegistry()
	reg.MustRegister(cpu)
	slots := func(name string) float64 { return metricstest.Value(t, reg, name, nil) }
	db, err := engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: clock.NewManual(apr10.Add(time.Hour))})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	var events []event.Event
	for i := range 400 {
		events = append(events, ev(apr10.Add(time.Duration(i)*time.Second), fmt.Sprintf("dev-%03d", i%100), map[string]any{"v": num(i)}))
	}
	_, err = db.Write(ctx, "acme", "m", events)
	require.NoError(t, err)
	q := engine.AggregateQuery{Table: "m", From: apr10, To: apr10.Add(time.Hour), Bucket: time.Minute, Funcs: []string{"count", "sum"}, Fields: []string{"v"}}

	aggregates := func() [][]engine.Bucket {
		answers := make([][]engine.Bucket, 4)
		var wg sync.WaitGroup
		for i := range answers {
			wg.Go(func() {
				bs, err := db.Aggregate(engine.WithCPU(ctx, cpu), "acme", q)
				if err != nil {
					t.Error(err)
				}
				answers[i] = bs
			})
		}
		wg.Wait()
		return answers
	}
	cpu.Seen("acme")
	alone := aggregates()
	require.Zero(t, slots("timetable_cpu_slots_taken_total"), "acme alone took no slot")

	cpu.Seen("globex")
	answers := append(aggregates(), alone...)
	require.Positive(t, slots("timetable_cpu_slots_taken_total"), "the aggregates took slots")
	require.Zero(t, slots("timetable_cpu_slots_held"), "and gave them back")

	plain, err := engine.Open(ctx, store, engine.Options{Schema: cfg, Clock: clock.NewManual(apr10.Add(time.Hour)), ReadOnly: true})
	require.NoError(t, err)
	t.Cleanup(func() { plain.Close() })
	want, err := plain.Aggregate(ctx, "acme", q)
	require.NoError(t, err)
	require.NotEmpty(t, want)
	for _, got := range answers {
		require.Equal(t, want, got)
	}
}
