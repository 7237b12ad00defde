package dynamostore

import (
	"context"
	"fmt"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
)

// TestOpenKeepsConnections runs three BatchWrites of 16 requests each at
// once, 24 requests in flight, twice: the second time must find every
// connection the first opened still open, where the SDK's default pool of
// 10 idle connections per host would have closed 14 of them.
func TestOpenKeepsConnections(t *testing.T) {
	s := openStore(t, Options{WriteConcurrency: 8})
	table := createTable(t, s, storage.TableSpec{Name: tableName(t)})
	var opened atomic.Int64
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
		if !i.Reused {
			opened.Add(1)
		}
	}})
	round := func(r int) {
		var wg sync.WaitGroup
		for w := range 3 {
			wg.Go(func() {
				items := make([]storage.Item, 16*batchSize)
				for i := range items {
					items[i] = storage.Item{PK: fmt.Sprintf("r%d-w%d", r, w), SK: fmt.Sprintf("%04d", i), Attrs: map[string]any{"v": "x"}}
				}
				require.NoError(t, s.BatchWrite(ctx, table, items))
			})
		}
		wg.Wait()
	}
	round(0)
	first := opened.Load()
	require.Positive(t, first)
	round(1)
	require.Zero(t, opened.Load()-first, "connections opened by the second round")
}
