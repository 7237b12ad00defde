package bench

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestManySeries runs the many-series benchmark small: it must answer
// every query and report its four figures.
func TestManySeries(t *testing.T) {
	var r Report
	o := Options{Dir: t.TempDir(), Runs: 1, Series: 200, Progress: func(string) {}}
	require.NoError(t, ManySeries(context.Background(), o, &r))
	require.Len(t, r.Rows, 4)
	for _, row := range r.Rows {
		if row.Unit == "ms" {
			require.Positive(t, row.Value, row.Figure)
		}
	}
}
