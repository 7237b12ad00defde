package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/internal/backends"
)

// CheckWrite refuses what WriteBatch would, and writes nothing.
func TestCheckWrite(t *testing.T) {
	f := open(t, backends.Pebble(), 1, apr10)
	ctx := context.Background()
	good, err := event.Check([]event.Event{ev(apr10, "s", map[string]any{"v": num(1)})}, event.Limits{}, apr10)
	require.NoError(t, err)
	require.NoError(t, f.db.CheckWrite("acme", "t", good))
	require.ErrorIs(t, f.db.CheckWrite("acme", "no#hash", good), engine.ErrBadTableName)

	huge, err := event.Check([]event.Event{ev(apr10, "s", nil), ev(apr10.Add(time.Second), "s", map[string]any{"blob": string(make([]byte, 410*1024))})}, event.Limits{}, apr10)
	require.NoError(t, err)
	var be *event.BatchError
	ok := errors.As(f.db.CheckWrite("acme", "t", huge), &be)
	require.True(t, ok)
	require.Equal(t, 1, be.Problems[0].Index)

	names, err := f.db.LogicalTables(ctx, "acme")
	require.NoError(t, err)
	require.Empty(t, names, "nothing was written")
}
