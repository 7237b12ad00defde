package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/storage"
)

// TestWriteRefusesItemsAStoreWould checks that Write refuses, before
// writing anything, an event whose item a store would refuse though the
// event's own rules let it through: here a series, allowed by the
// caller's limits, too long for DynamoDB's partition key. Without the
// check the store would refuse one table's items after another table's
// were written.
func TestWriteRefusesItemsAStoreWould(t *testing.T) {
	each(t, func(t *testing.T, b backends.Backend) {
		store, cfg := b.Open(t)
		db, err := engine.Open(context.Background(), store, engine.Options{
			Schema: cfg, Clock: clock.NewManual(apr10.Add(time.Hour)), Limits: event.Limits{MaxSeries: 2 * storage.MaxPKBytes},
		})
		require.NoError(t, err)
		defer db.Close()
		lastWeek := apr10.Add(-7 * 24 * time.Hour)
		n, err := db.Write(context.Background(), "acme", "t", []event.Event{
			{Time: lastWeek, Fields: map[string]any{"v": num(1)}},
			{Time: apr10, Series: strings.Repeat("s", storage.MaxPKBytes), Fields: map[string]any{"v": num(2)}},
		})
		require.Zero(t, n)
		var be *event.BatchError
		ok := errors.As(err, &be)
		require.True(t, ok, "%v", err)
		require.Len(t, be.Problems, 1)
		require.Equal(t, 1, be.Problems[0].Index)
		require.Contains(t, be.Problems[0].Reason, "as a stored item: partition key of")
		_, err = db.Query(context.Background(), "acme", engine.Query{Table: "t", From: lastWeek, To: apr10})
		require.ErrorIs(t, err, engine.ErrUnknownTable, "nothing was written")
	})
}
