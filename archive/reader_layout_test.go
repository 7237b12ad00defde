package archive_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/storage"
)

// countingArchives is an engine.ArchiveReader that counts the storage
// queries the engine asks of the archive reader: each one decodes the
// row groups of the partition's time range.
type countingArchives struct {
	r  *archive.Reader
	mu sync.Mutex
	n  int
}

func (c *countingArchives) Query(ctx context.Context, target, table string, generation int64, shards int, q storage.Query) storage.Iterator {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return c.r.Query(ctx, target, table, generation, shards, q)
}

func (c *countingArchives) take() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = 0
	return n
}

// layoutArchive is a week of a family of one layout, written, archived
// (to a folder, in Parquet) and deleted, read through countingArchives.
type layoutArchive struct {
	db       *engine.DB
	archives *countingArchives
	manifest archive.Manifest
	target   string
}

// archiveLayout writes writes (batches of events) to a_table of a family
// of layout (chunks of an hour) over the week of April 9 2017, lets the
// lifecycle archive the week to a folder and delete its table, and
// returns the engine that reads it.
func archiveLayout(t *testing.T, b backends.Backend, layout family.Layout, writes [][]event.Event) layoutArchive {
	ctx := context.Background()
	s, cfg := b.Open(t)
	url, _ := fileTarget(t)
	archivedFamily(&cfg, url)
	f := &cfg.Families[0]
	f.Retention = 7 * 24 * time.Hour
	f.Layout, f.ChunkWindow = layout, time.Hour
	week := time.Date(2017, 4, 9, 0, 0, 0, 0, time.UTC)
	clk := clock.NewManual(week.Add(7 * 24 * time.Hour))
	archives := &countingArchives{r: archive.NewReader(archive.ReaderOptions{})}
	t.Cleanup(func() { archives.r.Close() })
	db, err := engine.Open(ctx, s, engine.Options{Schema: cfg, Clock: clk, Archives: archives, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	for _, w := range writes {
		_, err := db.Write(ctx, "acme", "a_table", w)
		require.NoError(t, err)
	}
	clk.Set(week.Add(4 * 7 * 24 * time.Hour))
	var archiver *archive.Archiver
	r, err := lifecycle.New(lifecycle.Options{Store: s, Families: cfg.Families, Clock: clk, MetaTable: cfg.MetaTable,
		FenceSettle: -1, ClockSkew: -1, Logger: slog.New(slog.DiscardHandler),
		OpenArchiver: func(target string, format family.ArchiveFormat) (lifecycle.Archiver, error) {
			a, err := archive.Open(ctx, target, s, archive.Options{Clock: clk, Format: format, Facts: registryFacts(s, cfg), Logger: slog.New(slog.DiscardHandler)})
			archiver = a
			return a, err
		}})
	require.NoError(t, err)
	deleted := ""
	for range 3 {
		res, err := r.Reconcile(ctx, false)
		require.NoError(t, err)
		for _, x := range res {
			if x.Kind == lifecycle.Delete && x.Err == nil && strings.Contains(x.Table, fmt.Sprint(week.UnixMilli())) {
				deleted = x.Table
			}
		}
	}
	require.NotEmpty(t, deleted, "the week's table is archived and deleted")
	require.NotNil(t, archiver)
	m, err := archiver.Manifest(ctx, deleted)
	require.NoError(t, err)
	archives.take()
	return layoutArchive{db: db, archives: archives, manifest: m, target: url}
}

// TestReaderReadsChunksAsRows archives the same week of events from a
// family of the row layout and from one of the chunk layout: the two
// archives' Parquet files are the same, bytes and all, and a query of
// one series for one hour asks the archive reader of the chunk table
// as few queries as of the row table, and gets the same answer. The
// archive reader answers with row items whatever the layout, so the
// engine reads an archived chunk table as one of rows: read a chunk
// window at a time, from pages that start at one item, its hour of 60
// rows took seven queries, each decoding the row groups again.
func TestReaderReadsChunksAsRows(t *testing.T) {
	week := time.Date(2017, 4, 9, 0, 0, 0, 0, time.UTC)
	var writes [][]event.Event
	var batch []event.Event
	for m := range 12 * 60 {
		for i := range 3 {
			batch = append(batch, event.Event{Time: week.Add(time.Duration(m) * time.Minute), Series: fmt.Sprintf("car-%02d", i),
				Fields: map[string]any{"speed": json.Number(fmt.Sprintf("%d.%d", 60+m%40, i)), "gear": "D"}})
		}
		if len(batch) >= 500 {
			writes, batch = append(writes, batch), nil
		}
	}
	writes = append(writes, batch)
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			rows := archiveLayout(t, b, family.LayoutRow, writes)
			chunks := archiveLayout(t, b, family.LayoutChunk, writes)
			require.Equal(t, len(rows.manifest.Parquet), len(chunks.manifest.Parquet))
			for i, p := range rows.manifest.Parquet {
				c := chunks.manifest.Parquet[i]
				require.Equal(t, p.Rows, c.Rows, "file %d", i)
				require.Equal(t, p.SHA256, c.SHA256, "file %d: the same Parquet, row groups and statistics alike", i)
			}
			queries := []engine.Query{
				{Series: "car-01", From: week.Add(5 * time.Hour), To: week.Add(6*time.Hour - time.Nanosecond)},
				{Series: "car-02", From: week.Add(90 * time.Minute), To: week.Add(4 * time.Hour), Limit: 100},
				{Series: "car-00", From: week.Add(3 * time.Hour), To: week.Add(5 * time.Hour), Desc: true, Limit: 30},
			}
			for _, q := range queries {
				q.Table = "a_table"
				want, err := rows.db.QueryJSON(ctx, "acme", q, nil)
				require.NoError(t, err)
				require.NotZero(t, want.Count)
				rowQueries := rows.archives.take()
				got, err := chunks.db.QueryJSON(ctx, "acme", q, nil)
				require.NoError(t, err)
				require.Equal(t, string(want.Events), string(got.Events), "%+v", q)
				// A cursor is the engine's own (signed): only whether there is one compares.
				require.Equal(t, want.NextCursor == "", got.NextCursor == "", "%+v", q)
				require.Equal(t, rowQueries, chunks.archives.take(), "archive queries of %+v", q)
			}
		})
	}
}

// TestReaderKeepsAnEventOnce archives a chunk table two of whose chunks
// hold the same event (two writes of a window that overlap): the
// archive holds it twice, as the table did, and a read of the archive
// returns it once, as a read of the table did.
func TestReaderKeepsAnEventOnce(t *testing.T) {
	week := time.Date(2017, 4, 9, 0, 0, 0, 0, time.UTC)
	ev := func(m int) event.Event {
		return event.Event{Time: week.Add(time.Duration(m) * time.Minute), Series: "car-01",
			Fields: map[string]any{"speed": json.Number(fmt.Sprint(60 + m))}}
	}
	writes := [][]event.Event{{ev(0), ev(5)}, {ev(5), ev(10)}}
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			a := archiveLayout(t, b, family.LayoutChunk, writes)
			var rows int64
			for _, p := range a.manifest.Parquet {
				rows += p.Rows
			}
			require.Equal(t, int64(4), rows, "the event of minute 5 is in two chunks, and archived twice")
			// The archive reader answers the partition as the table's
			// store would have, had it held rows: a key once.
			it := a.archives.r.Query(ctx, a.target, a.manifest.Table, a.manifest.Generation, 1,
				storage.Query{PK: itemenc.PartitionKey("acme", "a_table", "car-01", 0)})
			var keys []string
			for it.Next() {
				keys = append(keys, it.SortKey())
			}
			require.NoError(t, it.Close())
			require.Len(t, keys, 3)
			require.IsIncreasing(t, keys)
			for _, q := range []engine.Query{
				{Series: "car-01", From: week, To: week.Add(time.Hour)},
				{Series: "car-01", From: week, To: week.Add(time.Hour), Desc: true},
				{From: week, To: week.Add(time.Hour)},
			} {
				q.Table = "a_table"
				p, err := a.db.Query(ctx, "acme", q)
				require.NoError(t, err)
				require.Len(t, p.Events, 3, "%+v", q)
				js, err := a.db.QueryJSON(ctx, "acme", q, nil)
				require.NoError(t, err)
				require.Equal(t, 3, js.Count, "%+v", q)
			}
			all, err := a.db.Aggregate(ctx, "acme", engine.AggregateQuery{Table: "a_table", From: week, To: week.Add(time.Hour),
				Bucket: time.Hour, Fields: []string{"speed"}, Funcs: []string{engine.FnCount, engine.FnSum}})
			require.NoError(t, err)
			js, err := json.Marshal(all)
			require.NoError(t, err)
			require.Contains(t, string(js), `"count":3`)
		})
	}
}
