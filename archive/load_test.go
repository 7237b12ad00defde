package archive_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/internal/fenceload"
)

// TestNoAcknowledgedEventHiddenUnderLoad is archiving under load,
// shortened (package fenceload): reconcilers without a lease whose
// clocks run a day ahead fence, archive and delete the oldest day's
// table while a server takes batches of events for it, until the table
// is made again and written into. A fresh server's query of the range
// (the live tables and the archive reader) then answers every acknowledged
// event, once.
func TestNoAcknowledgedEventHiddenUnderLoad(t *testing.T) {
	for _, b := range backends.All(t) {
		t.Run(b.Name, func(t *testing.T) {
			s, cfg := b.Open(t)
			cfg.MetaTable = backends.MetaTable(cfg)
			res, err := fenceload.Run(context.Background(), s, cfg, fenceload.Options{Dir: t.TempDir(), Generations: 2})
			require.NoError(t, err)
			t.Log(res)
			require.GreaterOrEqual(t, res.Generations, int64(2), "the oldest day's table was archived and deleted under the writers at least once")
			require.NotZero(t, res.Refused, "writes to the fenced table were refused")
			require.NotZero(t, res.Acknowledged)
			require.Zero(t, res.Lost, "acknowledged events a query does not answer")
			require.Zero(t, res.Duplicated, "events a query answers twice")
		})
	}
}
