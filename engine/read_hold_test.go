package engine_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/admission"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/internal/backends"
)

// A QueryHold takes bytes in partitions of the query budget, under its
// tenant's cap: what no wait lets in is refused at once (Never), what
// the tenant's other holds keep out is refused once it has waited, what
// the whole budget keeps out is ErrBusy, and what is given back is
// another's.
func TestQueryHold(t *testing.T) {
	store, cfg := backends.Pebble().Open(t)
	db, err := engine.Open(context.Background(), store, engine.Options{Schema: cfg, MaxQueryPartitions: 10, QueryBudgetWait: 10 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	ctx := engine.WithTenantQueryPartitions(context.Background(), 6)
	const part = engine.QueryPartitionBytes

	a := db.QueryHold(ctx, "acme")
	require.Equal(t, int64(6*part), a.Most())
	require.NoError(t, a.Resize(ctx, 4*part-1), "rounded up to whole partitions")
	require.Equal(t, int64(4), a.Held())
	held, size := db.QueryPartitions("acme")
	require.Equal(t, int64(4), held)
	require.Equal(t, int64(10), size)

	var le *admission.LimitError
	err = a.Resize(ctx, 7*part)
	require.ErrorAs(t, err, &le)
	require.True(t, le.Never, "more than the cap never fits")
	require.Equal(t, "max_query_partitions", le.Limit)
	require.Equal(t, int64(4), a.Held(), "a refused Resize holds what it held")
	require.ErrorAs(t, a.Fits(6*part+1), &le)
	require.NoError(t, a.Fits(6*part))
	require.ErrorAs(t, a.Fits(math.MaxInt64), &le, "the most bytes are not rounded past int64 into a count that fits")
	require.ErrorAs(t, a.Resize(ctx, math.MaxInt64), &le)
	require.Equal(t, int64(4), a.Held())

	// acme's second hold meets the first within the cap: refused once it
	// has waited, to be retried.
	b := db.QueryHold(ctx, "acme")
	err = b.Resize(ctx, 3*part)
	require.ErrorAs(t, err, &le)
	require.False(t, le.Never)
	require.Positive(t, le.RetryAfter)
	require.NoError(t, b.Resize(ctx, 2*part))

	// globex, capped at 6 too, meets the budget full: 6 of 10 held.
	g := db.QueryHold(ctx, "globex")
	err = g.Resize(ctx, 5*part)
	require.True(t, errors.Is(err, engine.ErrBusy), "%v", err)
	require.NoError(t, g.Resize(ctx, 4*part))

	a.Release()
	a.Release()
	require.NoError(t, b.Resize(ctx, 0))
	held, _ = db.QueryPartitions("acme")
	require.Zero(t, held)
	require.NoError(t, g.Resize(ctx, 6*part), "what acme gave back is globex's")
	g.Release()
	held, _ = db.QueryPartitions("globex")
	require.Zero(t, held)
}
