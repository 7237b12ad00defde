package archive_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// TestEveryGenerationIsAnsweredWhileWritten steps the fence's protocol by
// hand, with one long-running writing server whose lifecycle runs a
// reconciler whose clock is past the table's retention: the server writes
// a series into a table; the reconciler fences it (a write is refused),
// archives it once the fence settled and deletes it; the server, its
// route to the table grown old, reads the registry again and writes the
// same series into the table's next generation. At every step a query of
// the period, by the writing server and by a fresh one, answers with
// every acknowledged event, each once: the generations archived from
// their archives, the live one from its table.
func TestEveryGenerationIsAnsweredWhileWritten(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			g := newGenerations(t, b)
			s, cfg, day := g.s, g.cfg, g.day
			const routeTTL, settle = 5 * time.Second, 30 * time.Second
			writerClk := g.clk
			reconClk := clock.NewManual(day.Add(5 * 7 * 24 * time.Hour)) // past retention
			archives := archive.NewReader(archive.ReaderOptions{CacheDir: t.TempDir()})
			t.Cleanup(func() { archives.Close() })
			db, err := engine.Open(ctx, s, engine.Options{Schema: cfg, Clock: writerClk, Archives: archives, RouteTTL: routeTTL})
			require.NoError(t, err)
			defer db.Close()
			r, err := lifecycle.New(lifecycle.Options{FenceSettle: settle, ClockSkew: -1, Store: s, Families: cfg.Families, Clock: reconClk,
				MetaTable: cfg.MetaTable, Logger: slog.New(slog.DiscardHandler), OpenArchiver: openArchiver(s, reconClk, cfg)})
			require.NoError(t, err)
			reg := registry.New(s, cfg.MetaTable)

			n := 0
			var acked []string
			write := func() error {
				t.Helper()
				ev := event.Event{ID: fmt.Sprintf("e%02d", n), Time: day.Add(time.Duration(n) * time.Minute), Series: "car-17",
					Fields: map[string]any{"speed": json.Number(fmt.Sprint(80 + n))}}
				n++
				_, err := db.Write(ctx, "acme", "a_table", []event.Event{ev})
				if err == nil {
					acked = append(acked, ev.ID)
				}
				return err
			}
			// answered checks that a query of the period answers with
			// every acknowledged event, once, by the writing server and
			// by one started now.
			whole := engine.Query{Table: "a_table", From: day.Add(-time.Hour), To: day.Add(2 * time.Hour)}
			answered := func(step string) {
				t.Helper()
				fresh, err := engine.Open(ctx, s, engine.Options{Schema: cfg, Clock: writerClk, Archives: archives, ReadOnly: true})
				require.NoError(t, err)
				defer fresh.Close()
				for name, d := range map[string]*engine.DB{"the writing server": db, "a fresh server": fresh} {
					p, err := d.Query(ctx, "acme", whole)
					require.NoError(t, err)
					require.Empty(t, p.Gaps)
					var got []string
					for _, e := range p.Events {
						got = append(got, e.ID)
					}
					require.Equal(t, acked, got, "%s: %s answers every acknowledged event once", step, name)
				}
			}
			// cycle runs the reconciler until it has done want to the
			// table, the fence settling by its clock meanwhile.
			cycle := func(want lifecycle.Kind) {
				t.Helper()
				for range 4 {
					res, err := r.Reconcile(ctx, false)
					require.NoError(t, err)
					for _, x := range res {
						if x.Kind == want && x.Outcome == lifecycle.Done {
							return
						}
					}
					reconClk.Advance(settle)
				}
				t.Fatalf("the reconciler did not %s the table", want)
			}
			// route lets the writer's routes grow older than RouteTTL, so
			// that its next write reads the registry again.
			route := func() { writerClk.Advance(routeTTL + time.Second) }

			var name string
			for gen := int64(1); gen <= 3; gen++ {
				require.NoError(t, write())
				require.NoError(t, write())
				if name == "" {
					name = table(t, db)
				}
				e, found, err := reg.Finder([]string{cfg.Families[0].Name})(ctx, name)
				require.NoError(t, err)
				require.True(t, found)
				require.Equal(t, gen, e.Generation)
				require.Len(t, e.PastArchives, int(gen-1))
				answered(fmt.Sprintf("generation %d live", gen))

				// Fenced: the server refuses a write once it read the fence.
				res, err := r.Reconcile(ctx, false)
				require.NoError(t, err)
				require.NotEmpty(t, res)
				route()
				err = write()
				require.ErrorIs(t, err, engine.ErrFenced)
				require.True(t, errors.Is(err, storage.ErrUnavailable))
				answered(fmt.Sprintf("generation %d fenced", gen))

				cycle(lifecycle.Archive)
				answered(fmt.Sprintf("generation %d archived", gen))
				cycle(lifecycle.Delete)
				answered(fmt.Sprintf("generation %d archived and deleted", gen))
				route()
			}
		})
	}
}
