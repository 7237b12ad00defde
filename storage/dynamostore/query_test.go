package dynamostore

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
)

// TestQueryAcrossPages checks the cursor across DynamoDB's 1 MB pages and
// across limits that cut a page: items of about 100 KB make pages of about
// ten items.
func TestQueryAcrossPages(t *testing.T) {
	counter := &requestCounter{}
	s := openStore(t, Options{ClientOptions: []func(*dynamodb.Options){counter.install}})
	ctx := context.Background()
	name := createTable(t, s, storage.TableSpec{})

	const n = 35
	pad := strings.Repeat("x", 100<<10)
	var all []storage.Item
	for i := range n {
		all = append(all, storage.Item{PK: "big", SK: fmt.Sprintf("%04d", i), Attrs: map[string]any{
			"i": json.Number(fmt.Sprint(i)), "pad": pad,
		}})
	}
	require.NoError(t, s.BatchWrite(ctx, name, all))
	// A neighbouring partition that no query of "big" may return.
	require.NoError(t, s.BatchWrite(ctx, name, []storage.Item{{PK: "big2", SK: "0000"}, {PK: "bi", SK: "0000"}}))
	reversed := slices.Clone(all)
	slices.Reverse(reversed)

	counter.reset()
	require.Equal(t, all, drainItems(t, s.Query(ctx, storage.Query{Table: name, PK: "big"})))
	require.GreaterOrEqual(t, counter.count("Query"), 4, "the 3.5 MB partition spans several pages")
	require.Equal(t, reversed, drainItems(t, s.Query(ctx, storage.Query{Table: name, PK: "big", Desc: true})))

	for _, limit := range []int{1, 3, 7, 10, 13, 34, 35, 100} {
		for _, desc := range []bool{false, true} {
			t.Run(fmt.Sprintf("limit %d desc %v", limit, desc), func(t *testing.T) {
				var got []storage.Item
				after := ""
				for {
					page := drainItems(t, s.Query(ctx, storage.Query{Table: name, PK: "big", Desc: desc, Limit: limit, After: after}))
					require.LessOrEqual(t, len(page), limit)
					got = append(got, page...)
					if len(page) < limit {
						break
					}
					after = page[len(page)-1].SK
				}
				want := all
				if desc {
					want = reversed
				}
				require.Equal(t, len(want), len(got))
				require.Equal(t, want, got, "no item skipped or repeated")
			})
		}
	}

	t.Run("limit reads little", func(t *testing.T) {
		counter.reset()
		require.Len(t, drainItems(t, s.Query(ctx, storage.Query{Table: name, PK: "big", Limit: 2})), 2)
		require.Equal(t, 1, counter.calls("Query"), "one call (a retry under load is allowed)")
	})
	t.Run("projection", func(t *testing.T) {
		got := drainItems(t, s.Query(ctx, storage.Query{Table: name, PK: "big", Limit: 2, Attrs: []string{"i", "absent"}}))
		require.Equal(t, []storage.Item{
			{PK: "big", SK: "0000", Attrs: map[string]any{"i": json.Number("0")}},
			{PK: "big", SK: "0001", Attrs: map[string]any{"i": json.Number("1")}},
		}, got)
	})
	t.Run("scan", func(t *testing.T) {
		counter.reset()
		got := drainItems(t, s.Scan(ctx, name))
		require.Len(t, got, n+2)
		require.GreaterOrEqual(t, counter.count("Scan"), 4)
	})
}

// TestQueryMatchesModel compares random queries with what a sorted slice
// says they return.
func TestQueryMatchesModel(t *testing.T) {
	s := openStore(t, Options{})
	ctx := context.Background()
	name := createTable(t, s, storage.TableSpec{})
	var sks []string
	for i := range 60 {
		sks = append(sks, fmt.Sprintf("%03d", i*5))
	}
	items := make([]storage.Item, len(sks))
	for i, sk := range sks {
		items[i] = storage.Item{PK: "p", SK: sk}
	}
	require.NoError(t, s.BatchWrite(ctx, name, items))

	rng := rand.New(rand.NewPCG(1, 2))
	key := func() string {
		if rng.IntN(6) == 0 {
			return ""
		}
		return fmt.Sprintf("%03d", rng.IntN(310)) // existing and missing keys alike
	}
	for range 150 {
		q := storage.Query{Table: name, PK: "p", Low: key(), High: key(), After: key(), Desc: rng.IntN(2) == 0, Limit: rng.IntN(8)}
		var want []string
		for _, sk := range sks {
			if sk >= q.Low && (q.High == "" || sk <= q.High) {
				want = append(want, sk)
			}
		}
		if q.Desc {
			slices.Reverse(want)
		}
		if q.After != "" {
			want = slices.DeleteFunc(want, func(sk string) bool {
				return (!q.Desc && sk <= q.After) || (q.Desc && sk >= q.After)
			})
		}
		if q.Limit > 0 && len(want) > q.Limit {
			want = want[:q.Limit]
		}
		if len(want) == 0 {
			want = nil
		}
		var got []string
		for _, it := range drainItems(t, s.Query(ctx, q)) {
			got = append(got, it.SK)
		}
		require.Equal(t, want, got, "%+v", q)
	}
}
