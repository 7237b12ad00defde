package compact_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/compact"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// rewriteEntry makes the entry's layout chunk (saved) and rewrites it
// into its next table, as the lifecycle does once the table is fenced.
func (f *fixture) rewriteEntry(t *testing.T, st compact.Store, entries compact.Entries, opts compact.Options) (compact.Result, error) {
	t.Helper()
	ctx := context.Background()
	e := f.entry(t)
	if e.ChunkWindow() == 0 {
		saved, err := f.reg.Save(ctx, compact.AsChunks(e, time.Hour))
		require.NoError(t, err)
		e = saved
	}
	opts.Method = compact.NextGeneration
	if opts.CheckpointEvery == 0 {
		opts.CheckpointEvery = 2
	}
	_, res, err := compact.Entry(ctx, st, entries, e, f.clock.Now(), opts)
	return res, err
}

// requireGone requires the store to have no table of that name.
func requireGone(t *testing.T, st storage.Store, table string) {
	t.Helper()
	_, err := st.DescribeTable(context.Background(), table)
	require.ErrorIs(t, err, storage.ErrTableNotFound, "table %q", table)
}

// TestRewriteTable writes events one at a time, and some in one request,
// into a table of a chunk, a row and a map family, rewrites it into its
// next table, and requires every read to answer as before, the new table
// to hold chunks only, with the registry's meta tag, the old table to be
// gone, a late event to land in the new table and be found, and a second
// rewrite to pack it too. On every backend.
func TestRewriteTable(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends.All(t) {
		for _, layout := range []family.Layout{family.LayoutChunk, family.LayoutRow, family.LayoutMap} {
			t.Run(b.Name+"/"+string(layout), func(t *testing.T) {
				f := open(t, b, layout, 2)
				evs := events()
				f.writeOneByOne(t, evs[:60])
				_, err := f.db.Write(ctx, "acme", "t", evs[60:])
				require.NoError(t, err)
				before := f.answers(t)
				require.Len(t, before.pages[0][0], len(evs))
				old := f.entry(t).Name
				oldInfo, err := f.store.DescribeTable(ctx, old)
				require.NoError(t, err)

				res, err := f.rewriteEntry(t, f.store, f.reg, compact.Options{})
				require.NoError(t, err)
				require.Positive(t, res.Packed)
				require.Equal(t, int64(len(evs)), res.Events, "every event verified")
				require.Equal(t, old, res.Dropped)
				e := f.entry(t)
				require.Equal(t, old+".r1", e.TableName())
				require.Equal(t, old, e.Name, "the entry keeps its name and key")
				require.Nil(t, e.Rewrite)
				require.False(t, e.ChunkedAt.IsZero())
				requireGone(t, f.store, old)
				info, err := f.store.DescribeTable(ctx, e.TableName())
				require.NoError(t, err)
				// Made as every table is: with the meta tag, where the
				// store keeps tags (DynamoDB Local keeps none).
				require.Equal(t, oldInfo.Tags[family.TagMeta], info.Tags[family.TagMeta])
				require.Equal(t, oldInfo.Capacity, info.Capacity, "the tier's capacity and class")
				rows, chunks := eventItems(t, f.store, e.TableName())
				require.Zero(t, rows)
				require.Less(t, chunks, len(evs)/2)

				require.Equal(t, before, f.answers(t), "every read answers as before")
				f.reopen(t)
				require.Equal(t, before, f.answers(t), "every read answers as before, read afresh")

				// A late event lands in the new table and is found.
				late := event.Event{Time: day.Add(90 * time.Minute), Series: "s1", Fields: map[string]any{"v": json.Number("-1")}}
				f.writeOneByOne(t, []event.Event{late})
				got := f.all(t)
				require.Len(t, got, len(evs)+1)
				require.True(t, slices.ContainsFunc(got, func(ev event.Event) bool { return ev.Time.Equal(late.Time) && ev.Series == "s1" }))
				rows2, chunks2 := eventItems(t, f.store, e.TableName())
				require.Equal(t, chunks+1, rows2+chunks2, "the late event is an item of the new table")

				// Rewritten again, into .r2, with the late event.
				late2 := f.answers(t)
				res, err = f.rewriteEntry(t, f.store, f.reg, compact.Options{})
				require.NoError(t, err)
				require.Equal(t, int64(len(evs)+1), res.Events)
				require.Equal(t, old+".r2", f.entry(t).TableName())
				requireGone(t, f.store, old+".r1")
				require.Equal(t, late2, f.answers(t))
			})
		}
	}
}

// corrupting is a store that loses the last item of each write to a
// rewrite's new table: a copy that does not verify.
type corrupting struct{ storage.Store }

func (s corrupting) BatchWrite(ctx context.Context, table string, items []storage.Item) error {
	if strings.Contains(table, ".r") && len(items) > 1 {
		items = items[:len(items)-1]
	}
	return s.Store.BatchWrite(ctx, table, items)
}

// TestRewriteVerifyFails requires a rewrite whose copy lost items to fail
// with ErrVerify, keep the old table (the entry still names it, the reads
// answer as before) and delete the new one, lifting the fence, and to
// record the failure on the entry: the next rewrite is refused
// (ErrRetryLater) until the delay it sets has passed, a second failure
// doubles the delay, and a rewrite after it starts over, succeeds and
// clears the record.
func TestRewriteVerifyFails(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			f := open(t, b, family.LayoutRow, 1)
			f.writeOneByOne(t, events())
			before := f.answers(t)
			old := f.entry(t).Name
			// Fenced for the rewrite, as the lifecycle fences it.
			fenced := f.entry(t)
			fenced.FencedAt = f.clock.Now()
			_, err := f.reg.Save(ctx, fenced)
			require.NoError(t, err)

			res, err := f.rewriteEntry(t, corrupting{f.store}, f.reg, compact.Options{Unfence: true, Segments: 2})
			require.ErrorIs(t, err, compact.ErrVerify)
			e := f.entry(t)
			require.False(t, e.Fenced(), "late events land until the next attempt")
			require.Equal(t, old, e.TableName(), "the entry keeps the old table")
			require.Nil(t, e.Rewrite, "the next run starts over")
			requireGone(t, f.store, old+".r1")
			require.Equal(t, before, f.answers(t))
			failed := e.RewriteFailed
			require.NotNil(t, failed)
			require.Equal(t, 1, failed.Count)
			require.Equal(t, old+".r1", failed.Table)
			require.Contains(t, failed.Reason, "does not hold")
			require.Equal(t, f.clock.Now().Add(compact.FirstRetryDelay).UTC(), failed.RetryAt)
			require.Equal(t, failed.RetryAt, res.RetryAt)

			// Before the delay: refused, nothing made.
			f.clock.Advance(compact.FirstRetryDelay - time.Second)
			_, err = f.rewriteEntry(t, f.store, f.reg, compact.Options{})
			require.ErrorIs(t, err, compact.ErrRetryLater)
			requireGone(t, f.store, old+".r1")
			require.Equal(t, old, f.entry(t).TableName())

			// After it: tried again, fails again, twice the delay.
			f.clock.Advance(time.Second)
			_, err = f.rewriteEntry(t, corrupting{f.store}, f.reg, compact.Options{})
			require.ErrorIs(t, err, compact.ErrVerify)
			failed = f.entry(t).RewriteFailed
			require.Equal(t, 2, failed.Count)
			require.Equal(t, f.clock.Now().Add(2*compact.FirstRetryDelay).UTC(), failed.RetryAt)
			requireGone(t, f.store, old+".r1")

			f.clock.Advance(2 * compact.FirstRetryDelay)
			res, err = f.rewriteEntry(t, f.store, f.reg, compact.Options{Segments: 2})
			require.NoError(t, err)
			require.Equal(t, int64(len(events())), res.Events)
			e = f.entry(t)
			require.Equal(t, old+".r1", e.TableName())
			require.Nil(t, e.RewriteFailed, "cleared by the rewrite that verified")
			require.Equal(t, before, f.answers(t))
		})
	}
}

// TestRetryDelay: an hour, doubled for each failure before, at most a
// week.
func TestRetryDelay(t *testing.T) {
	for n, want := range map[int]time.Duration{1: time.Hour, 2: 2 * time.Hour, 3: 4 * time.Hour, 8: 128 * time.Hour, 9: 7 * 24 * time.Hour, 1000: 7 * 24 * time.Hour} {
		require.Equal(t, want, compact.RetryDelay(n), "failure %d", n)
	}
}

// TestSegmentsFor: one segment per 2 GiB of table, at least one, at most
// MaxSegments; a 52-million-event day of rows (~150 bytes each, 7.3 GiB)
// is scanned in 4.
func TestSegmentsFor(t *testing.T) {
	for size, want := range map[int64]int{-1: 1, 0: 1, 1: 1, compact.SegmentBytes: 1, compact.SegmentBytes + 1: 2, 52e6 * 150: 4, 1 << 50: compact.MaxSegments} {
		require.Equal(t, want, compact.SegmentsFor(size), "size %d", size)
	}
}

// TestRewriteParallel rewrites a table of several series and shards in
// 3 and 7 segments, scanned 2 at a time (one segment: TestRewriteTable):
// every event is copied and verified once whatever the segments, and the
// reads answer as before.
func TestRewriteParallel(t *testing.T) {
	for _, b := range backends.All(t) {
		for _, n := range []int{3, 7} {
			t.Run(fmt.Sprintf("%s/%d", b.Name, n), func(t *testing.T) {
				f := open(t, b, family.LayoutRow, 3)
				f.writeOneByOne(t, events())
				before := f.answers(t)
				old := f.entry(t).Name
				res, err := f.rewriteEntry(t, f.store, f.reg, compact.Options{Segments: n, Concurrency: 2})
				require.NoError(t, err)
				require.Equal(t, int64(len(events())), res.Events)
				require.Equal(t, old+".r1", f.entry(t).TableName())
				rows, chunks := eventItems(t, f.store, old+".r1")
				require.Zero(t, rows)
				require.Positive(t, chunks)
				require.Equal(t, before, f.answers(t))
			})
		}
	}
}

// dying fails the call numbered at (from 0) of the store's writes and
// table changes and of the registry's saves, and every call after it, as
// a process killed there would stop: the failing write writes half its
// items, and every other failing save or table change is made before
// it fails (killed before its answer came back).
type dying struct {
	storage.Store
	reg   *registry.Registry
	mu    sync.Mutex
	calls int
	at    int
}

// dead counts a call and reports whether it fails, and whether it is
// made before it fails.
func (d *dying) dead() (fail, made bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := d.calls
	d.calls++
	return n >= d.at, n == d.at && n%2 == 1
}

func (d *dying) BatchWrite(ctx context.Context, table string, items []storage.Item) error {
	if fail, _ := d.dead(); fail {
		d.mu.Lock()
		first := d.calls == d.at+1
		d.mu.Unlock()
		if half := len(items) / 2; half > 0 && first {
			if err := d.Store.BatchWrite(ctx, table, items[:half]); err != nil {
				return err
			}
		}
		return errKilled
	}
	return d.Store.BatchWrite(ctx, table, items)
}

func (d *dying) CreateTable(ctx context.Context, spec storage.TableSpec) error {
	if fail, made := d.dead(); fail {
		if made {
			_ = d.Store.CreateTable(ctx, spec)
		}
		return errKilled
	}
	return d.Store.CreateTable(ctx, spec)
}

func (d *dying) DeleteTable(ctx context.Context, name string) error {
	if fail, made := d.dead(); fail {
		if made {
			_ = d.Store.DeleteTable(ctx, name)
		}
		return errKilled
	}
	return d.Store.DeleteTable(ctx, name)
}

func (d *dying) Save(ctx context.Context, e registry.Entry) (registry.Entry, error) {
	if fail, made := d.dead(); fail {
		if made {
			_, _ = d.reg.Save(ctx, e)
		}
		return registry.Entry{}, errKilled
	}
	return d.reg.Save(ctx, e)
}

func (d *dying) CreateRewriteTable(ctx context.Context, store registry.Creator, e registry.Entry, name string) error {
	return d.reg.CreateRewriteTable(ctx, store, e, name)
}

// TestRewriteKilled stops rewrites at every call in turn (a write of the
// new table, its creation, a save of the entry at a checkpoint, a step or
// the switch, the old table's deletion), reads after each stop, and
// resumes from what the registry entry says: no event is lost or read
// twice at any point, and the end is the one an uninterrupted rewrite
// reaches. In one segment and in three scanned at once, where the kill
// finds the other segments between their checkpoints.
func TestRewriteKilled(t *testing.T) {
	for _, b := range backends.All(t) {
		for _, segs := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/%d", b.Name, segs), func(t *testing.T) {
				f := open(t, b, family.LayoutChunk, 2)
				f.writeOneByOne(t, events())
				before := f.answers(t)
				old := f.entry(t).Name
				kills := 0
				steps := map[registry.RewriteStep]bool{}
				for n := 0; ; n++ {
					if e := f.entry(t); e.Physical != "" && e.Rewrite == nil {
						// Done, though the last save's answer was lost:
						// another run would rewrite the new table.
						break
					}
					d := &dying{Store: f.store, reg: f.reg, at: n % 7}
					_, err := f.rewriteEntry(t, d, d, compact.Options{CheckpointEvery: 3, Segments: segs, Concurrency: segs})
					if err == nil {
						break
					}
					kills++
					require.ErrorIs(t, err, errKilled)
					require.Less(t, n, 300, "the rewrite does not end")
					if r := f.entry(t).Rewrite; r != nil {
						steps[r.Step] = true
					}
					require.Equal(t, before.pages[0][0], f.all(t), "after a kill at call %d: 0 lost, 0 duplicates", n)
				}
				require.Greater(t, kills, 10, "killed again and again")
				require.True(t, steps[registry.RewriteCopy] && steps[registry.RewriteVerify], "killed in copy and verify: %v", steps)
				e := f.entry(t)
				require.Equal(t, old+".r1", e.TableName())
				require.Nil(t, e.Rewrite)
				requireGone(t, f.store, old)
				require.Equal(t, before, f.answers(t))
				f.reopen(t)
				require.Equal(t, before, f.answers(t))
			})
		}
	}
}

// TestRewriteStopsAtDeadline runs rewrites whose deadline is always near
// (as a Lambda's is): each does one group, saves its checkpoint and stops
// with ErrStopped, and the next resumes, through copy and verify, until
// the switch; the reads answer the same all along. In one segment, and in
// three, each of which does one group a run.
func TestRewriteStopsAtDeadline(t *testing.T) {
	for _, b := range backends.All(t) {
		for _, segs := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/%d", b.Name, segs), func(t *testing.T) {
				f := open(t, b, family.LayoutChunk, 1)
				f.writeOneByOne(t, events()[:30])
				before := f.answers(t)
				deadline := time.Now().Add(time.Hour)
				ctx, cancel := context.WithDeadline(context.Background(), deadline)
				defer cancel()
				stops := 0
				for {
					e := f.entry(t)
					_, res, err := compact.Entry(ctx, f.store, f.reg, e, f.clock.Now(), compact.Options{Method: compact.NextGeneration, Segments: segs, Now: func() time.Time { return deadline }})
					if err == nil {
						break
					}
					require.ErrorIs(t, err, compact.ErrStopped)
					require.ErrorIs(t, err, context.DeadlineExceeded, "the lifecycle defers it")
					require.NotNil(t, f.entry(t).Rewrite, "the progress is saved")
					require.LessOrEqual(t, res.Groups, segs, "one window a segment a run")
					require.Equal(t, before.pages[0][0], f.all(t))
					stops++
					require.Less(t, stops, 200)
				}
				require.Greater(t, stops, 6/segs, "stopped in copy and in verify")
				require.Equal(t, f.entry(t).Name+".r1", f.entry(t).TableName())
				require.Equal(t, before, f.answers(t))
			})
		}
	}
}

// TestRewriteDropWaits requires the old table of a rewrite to stay until
// DropAfter has passed since the switch, read by no one, and the run
// after that to delete it.
func TestRewriteDropWaits(t *testing.T) {
	b := backends.All(t)[0]
	f := open(t, b, family.LayoutChunk, 1)
	f.writeOneByOne(t, events()[:20])
	before := f.answers(t)
	old := f.entry(t).Name
	res, err := f.rewriteEntry(t, f.store, f.reg, compact.Options{DropAfter: time.Minute})
	require.NoError(t, err)
	require.True(t, res.DropPending)
	e := f.entry(t)
	require.Equal(t, registry.RewriteDrop, e.Rewrite.Step)
	require.Equal(t, old, e.Rewrite.Table)
	_, err = f.store.DescribeTable(context.Background(), old)
	require.NoError(t, err, "kept for the reads that listed it")
	require.Equal(t, before, f.answers(t))

	f.clock.Advance(time.Minute)
	_, res, err = compact.Entry(context.Background(), f.store, f.reg, f.entry(t), f.clock.Now(), compact.Options{DropAfter: time.Minute})
	require.NoError(t, err)
	require.Equal(t, old, res.Dropped)
	require.Nil(t, f.entry(t).Rewrite)
	requireGone(t, f.store, old)
	require.Equal(t, before, f.answers(t))
}

// TestRewriteResumesSequentialCheckpoint: a rewrite saved in its copy by
// a build whose scans were sequential (Rewrite.After and Source, no
// Segments) resumes as one segment after its key, and verifies.
func TestRewriteResumesSequentialCheckpoint(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			f := open(t, b, family.LayoutChunk, 1)
			f.writeOneByOne(t, events()[:30])
			before := f.answers(t)
			deadline := time.Now().Add(time.Hour)
			dctx, cancel := context.WithDeadline(ctx, deadline)
			defer cancel()
			e, err := f.reg.Save(ctx, compact.AsChunks(f.entry(t), time.Hour))
			require.NoError(t, err)
			// Stopped until it packed some events.
			for n := 0; f.entry(t).Rewrite == nil || f.entry(t).Rewrite.Segments[0].Sum.Events == 0; n++ {
				require.Less(t, n, 20)
				_, _, err = compact.Entry(dctx, f.store, f.reg, f.entry(t), f.clock.Now(), compact.Options{Method: compact.NextGeneration, Segments: 1, Now: func() time.Time { return deadline }})
				require.ErrorIs(t, err, compact.ErrStopped)
			}
			e = f.entry(t)
			r := e.Rewrite
			require.Equal(t, registry.RewriteCopy, r.Step)
			require.Len(t, r.Segments, 1)
			require.NotZero(t, r.Segments[0].After)
			r.After, r.Source, r.Segments = r.Segments[0].After, r.Segments[0].Sum, nil
			_, err = f.reg.Save(ctx, e)
			require.NoError(t, err)

			res, err := f.rewriteEntry(t, f.store, f.reg, compact.Options{Segments: 5})
			require.NoError(t, err)
			require.Equal(t, int64(30), res.Events)
			require.Less(t, res.Read, 30, "resumed after the key, not started over")
			require.Equal(t, e.Name+".r1", f.entry(t).TableName())
			require.Equal(t, before, f.answers(t))
		})
	}
}
