package influxql_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/influxql"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/storage"
)

// readsStore counts the partitions of events a query reads, by series:
// every Query but those of the series index and the meta table.
type readsStore struct {
	storage.Store
	mu     sync.Mutex
	series map[string]int
}

func (s *readsStore) Query(ctx context.Context, q storage.Query) storage.Iterator {
	if parts := strings.Split(q.PK, "#"); len(parts) == 4 && parts[0] == "acme" {
		s.mu.Lock()
		s.series[parts[2]]++
		s.mu.Unlock()
	}
	return s.Store.Query(ctx, q)
}

func (s *readsStore) reads() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.series
	s.series = map[string]int{}
	return out
}

// A measurement of 100,000 series answers SHOW TAG VALUES and queries
// filtered by tags from the series index, reading the events of no
// series the condition leaves out.
func TestTagsBounded(t *testing.T) {
	const n = 100_000
	ctx := context.Background()
	at := time.Date(2017, 6, 15, 9, 0, 0, 0, time.UTC)
	store, schema := backends.Pebble().Open(t)
	counting := &readsStore{Store: store, series: map[string]int{}}
	db, err := engine.Open(ctx, counting, engine.Options{Schema: schema, Clock: clock.NewManual(at.Add(time.Hour))})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })

	events := make([]event.Event, 0, 5000)
	for i := range n {
		host, region := fmt.Sprintf("h%05d", i), fmt.Sprintf("r%d", i%10)
		events = append(events, event.Event{Time: at, Series: "host=" + host + ",region=" + region,
			Fields: map[string]any{"host": host, "region": region, "v": json.Number(strconv.Itoa(i))}})
		if len(events) == cap(events) || i == n-1 {
			_, err := db.Write(ctx, "acme", "m", events)
			require.NoError(t, err)
			events = events[:0]
		}
	}
	counting.reads()

	run := func(q string) []any {
		t.Helper()
		stmts, err := influxql.Parse(q, nil)
		require.NoError(t, err)
		res, _ := influxql.Execute(ctx, db, "acme", stmts, influxql.Options{Database: "acme", Now: at.Add(time.Hour)})
		require.Empty(t, res[0].Error, q)
		require.NotEmpty(t, res[0].Series, q)
		return res[0].Series[0].Values[0]
	}
	require.Equal(t, []any{"host", "h00007"}, run(`SHOW TAG VALUES FROM m WITH KEY = "host" WHERE region = 'r7' LIMIT 1`))
	require.Empty(t, counting.reads(), "SHOW TAG VALUES reads no events")

	require.Equal(t, []any{"v", "float"}, run(`SHOW FIELD KEYS FROM m`))
	require.Len(t, counting.reads(), 100, "SHOW FIELD KEYS samples 100 series")

	require.Equal(t, []any{at.Format(time.RFC3339), json.Number("12345")}, run(`SELECT v FROM m WHERE host = 'h12345'`))
	require.Equal(t, map[string]int{"host=h12345,region=r5": 1}, counting.reads())

	got := run(`SELECT sum(v), count(v) FROM m WHERE (host = 'h00001' OR host =~ /^h0000[23]$/) AND region != 'r3' AND time >= now() - 2h`)
	require.Equal(t, []any{at.Add(-time.Hour).Format(time.RFC3339), json.Number("3"), int64(2)}, got)
	require.Equal(t, map[string]int{"host=h00001,region=r1": 1, "host=h00002,region=r2": 1}, counting.reads())
}
