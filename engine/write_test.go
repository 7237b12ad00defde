package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/admission"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/pebblestore"
)

// halfStore writes only the first half of every batch of event items while
// failing is set, and reports the rest unwritten, as a DynamoDB batch that
// ran out of retries does.
type halfStore struct {
	storage.Store
	failing atomic.Bool
}

var errInjected = errors.New("injected failure")

func (h *halfStore) BatchWrite(ctx context.Context, table string, items []storage.Item) error {
	if !h.failing.Load() || !strings.HasPrefix(table, "tt_events_") || len(items) < 2 || strings.Count(items[0].PK, "#") < 3 {
		return h.Store.BatchWrite(ctx, table, items)
	}
	half := len(items) / 2
	if err := h.Store.BatchWrite(ctx, table, items[:half]); err != nil {
		return err
	}
	we := &storage.BatchWriteError{Table: table, Err: errInjected}
	for i := half; i < len(items); i++ {
		we.Unwritten = append(we.Unwritten, i)
	}
	return we
}

func TestPartialWriteNamesTheUnwrittenEvents(t *testing.T) {
	inner, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { inner.Close() })
	store := &halfStore{Store: inner}
	store.failing.Store(true)
	db, err := engine.Open(context.Background(), store, engine.Options{Schema: rowSchema(), Clock: clock.NewManual(apr10)})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()

	batch := func() []event.Event {
		var evs []event.Event
		for i := range 10 {
			evs = append(evs, ev(apr10.Add(time.Duration(i)*time.Second), "s", map[string]any{"i": num(i)}))
		}
		// Event 10 repeats event 7: both are unwritten or neither is.
		return append(evs, evs[7])
	}
	n, err := db.Write(ctx, "acme", "t", batch())
	var we *engine.WriteError
	require.ErrorAs(t, err, &we)
	require.ErrorIs(t, err, errInjected)
	require.Equal(t, []int{5, 6, 7, 8, 9, 10}, we.Unwritten)
	require.Equal(t, 5, n)

	got := queryAll(t, db, "acme", engine.Query{Table: "t", From: apr10, To: apr10.Add(time.Minute)})
	var stored []string
	for _, e := range got {
		stored = append(stored, fmt.Sprint(e.Fields["i"]))
	}
	require.Equal(t, []string{"0", "1", "2", "3", "4"}, stored, "exactly the events reported written")

	// The client retries the whole request: every event once.
	store.failing.Store(false)
	_, err = db.Write(ctx, "acme", "t", batch())
	require.NoError(t, err)
	got = queryAll(t, db, "acme", engine.Query{Table: "t", From: apr10, To: apr10.Add(time.Minute)})
	require.Len(t, got, 10)
	require.True(t, slices.IsSortedFunc(got, func(a, b event.Event) int { return a.Time.Compare(b.Time) }))
}

func TestWriteBatchMatchesWrite(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		f := open(t, b, 2, apr10.Add(time.Hour))
		ctx := context.Background()
		body := []byte(`{"time":"2017-04-10T12:00:00.5Z","series":"a","fields":{"v":1.50,"s":"x"}}
{"time":1491825601000,"series":"b","fields":{"v":2e3}}
`)
		lim, now := f.db.Options().Limits, f.db.Options().Clock.Now()
		decoded, err := event.DecodeNDJSON(body, lim, now)
		require.NoError(t, err)
		n, err := f.db.WriteBatch(ctx, "acme", "dec", decoded)
		require.NoError(t, err)
		require.Equal(t, 2, n)
		againBatch, err := event.DecodeNDJSON(body, lim, now)
		again := againBatch.Events()
		require.NoError(t, err)
		n, err = f.db.Write(ctx, "acme", "plain", again)
		require.NoError(t, err)
		require.Equal(t, 2, n)

		q := engine.Query{From: apr10, To: apr10.Add(time.Minute)}
		q.Table = "dec"
		got := queryAll(t, f.db, "acme", q)
		q.Table = "plain"
		want := queryAll(t, f.db, "acme", q)
		require.Len(t, got, 2)
		for i := range got {
			require.Equal(t, want[i].Fields, got[i].Fields)
			require.True(t, want[i].Time.Equal(got[i].Time))
		}

		// Too large for an item is still refused, and nothing is written.
		big, err := event.DecodeNDJSON([]byte(`{"time":1491825602000,"fields":{"blob":"`+strings.Repeat("x", 300<<10)+`","more":"`+strings.Repeat("y", 120<<10)+`"}}`), lim, now)
		require.NoError(t, err)
		_, err = f.db.WriteBatch(ctx, "acme", "dec", big)
		var be *event.BatchError
		require.ErrorAs(t, err, &be)
		require.Len(t, queryAll(t, f.db, "acme", engine.Query{Table: "dec", From: apr10, To: apr10.Add(time.Minute)}), 2)
	})
}

// Two events of one request with the same client id refuse the request,
// naming both; nothing is written.
func TestWriteRefusesRepeatedClientIDs(t *testing.T) {
	f := open(t, backends.Pebble(), 1, apr10.Add(time.Hour))
	ctx := context.Background()
	evs := []event.Event{
		{Time: apr10, ID: "x", Fields: map[string]any{"v": num(1)}},
		{Time: apr10, ID: "y", Fields: map[string]any{"v": num(2)}},
		{Time: apr10, ID: "x", Fields: map[string]any{"v": num(3)}},
	}
	n, err := f.db.Write(ctx, "acme", "t", evs)
	require.Zero(t, n)
	var be *event.BatchError
	require.ErrorAs(t, err, &be)
	require.Equal(t, []event.Problem{{Index: 2, Reason: `id "x": event 0 of this request has it too; a client id names one event of a request`}}, be.Problems)
	_, err = f.db.Query(ctx, "acme", engine.Query{Table: "t", From: apr10, To: apr10})
	require.ErrorIs(t, err, engine.ErrUnknownTable, "nothing was written")
}

// An event older than its family keeps tables is refused with the reason,
// not stored in a table the lifecycle deletes at its next cycle; with
// write-time grouping a late event's table lives on its write month, so
// only events past retention as the table would age are refused.
func TestWriteRefusesEventsPastRetention(t *testing.T) {
	store, cfg := backends.Pebble().Open(t)
	cfg.Families[0].Retention = 30 * 24 * time.Hour
	cfg.Families[0].WriteTimeGrouping = false
	now := apr10.Add(90 * 24 * time.Hour)
	db, err := engine.Open(context.Background(), store, engine.Options{Schema: cfg, Clock: clock.NewManual(now)})
	require.NoError(t, err)
	defer db.Close()
	n, err := db.Write(context.Background(), "acme", "t", []event.Event{
		{Time: now.Add(-time.Hour), Fields: map[string]any{"v": num(1)}},
		{Time: apr10, Fields: map[string]any{"v": num(2)}},
	})
	require.Zero(t, n)
	var be *event.BatchError
	require.ErrorAs(t, err, &be)
	require.Len(t, be.Problems, 1)
	require.Equal(t, 1, be.Problems[0].Index)
	require.Contains(t, be.Problems[0].Reason, "past family \"events\"'s retention")

	// With write-time grouping the same late event lands in a table of
	// this month, kept a retention past it.
	cfg.Families[0].WriteTimeGrouping = true
	db2, err := engine.Open(context.Background(), store, engine.Options{Schema: cfg, Clock: clock.NewManual(now)})
	require.NoError(t, err)
	defer db2.Close()
	_, err = db2.Write(context.Background(), "acme", "t", []event.Event{{Time: apr10, Fields: map[string]any{"v": num(2)}}})
	require.NoError(t, err)
}

// A request of more events than one span (admission.WriteSpanEnd) is
// written span by span: every event is stored with the id Write gives
// it in place, and when a span fails, it and every span after it are
// named unwritten, and exactly the others are stored.
func TestAWriteOfManyGroups(t *testing.T) {
	inner, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { inner.Close() })
	store := &halfStore{Store: inner}
	db, err := engine.Open(context.Background(), store, engine.Options{Schema: rowSchema(), Clock: clock.NewManual(apr10)})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	const n = 2*admission.WriteSpanEvents + 100
	batch := func() []event.Event {
		evs := make([]event.Event, n)
		for i := range evs {
			evs[i] = ev(apr10.Add(time.Duration(i)*time.Millisecond), "s", map[string]any{"i": num(i)})
		}
		return evs
	}
	count := func() int {
		return len(queryAll(t, db, "acme", engine.Query{Table: "t", From: apr10, To: apr10.Add(time.Minute)}))
	}

	store.failing.Store(true)
	written, err := db.Write(ctx, "acme", "t", batch())
	var we *engine.WriteError
	require.ErrorAs(t, err, &we)
	half := admission.WriteSpanEvents / 2
	want := make([]int, 0, n-half)
	for i := half; i < n; i++ {
		want = append(want, i)
	}
	require.Equal(t, want, we.Unwritten, "the failed group's unwritten half and every later group")
	require.Equal(t, half, written)
	require.Equal(t, half, count())

	store.failing.Store(false)
	evs := batch()
	written, err = db.Write(ctx, "acme", "t", evs)
	require.NoError(t, err)
	require.Equal(t, n, written)
	require.Equal(t, n, count())
	got := queryAll(t, db, "acme", engine.Query{Table: "t", From: apr10, To: apr10.Add(time.Minute)})
	for i, e := range got {
		require.NotEmpty(t, evs[i].ID)
		require.Equal(t, evs[i].ID, e.ID, "event %d", i)
	}
}

// rowSchema is the default schema with its family pinned to the row
// layout, for tests of what a write of one item per event does (which
// items a failed batch leaves unwritten); the chunk layout's own are in
// chunk_layout_test.go.
func rowSchema() family.Schema {
	s := family.DefaultSchema()
	s.Families[0].Layout = family.LayoutRow
	return s
}
