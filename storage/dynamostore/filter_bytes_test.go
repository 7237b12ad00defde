package dynamostore

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
)

// storage.Query.FilterExpressionBytes bounds the FilterExpression the
// backend writes, so that the 4 KB limit is checked alike on every store.
func TestFilterExpressionBytesBoundsTheExpression(t *testing.T) {
	leaf := func(op storage.FilterOp, i int) storage.Filter {
		f := storage.Filter{Op: op, Attr: fmt.Sprintf("f%d", i)}
		switch op {
		case storage.FilterBeginsWith:
			f.Value = "x"
		case storage.FilterExists:
		default:
			f.Value = json.Number(fmt.Sprint(i))
		}
		return f
	}
	chain := func(op storage.FilterOp, n int, leafOp storage.FilterOp, distinct bool) storage.Filter {
		f := storage.Filter{Op: op}
		for i := range n {
			j := i
			if !distinct {
				j = 0
			}
			f.Args = append(f.Args, leaf(leafOp, j))
		}
		return f
	}
	nots := storage.Filter{Op: storage.FilterNot, Args: []storage.Filter{leaf(storage.FilterEq, 1)}}
	for range 100 {
		nots = storage.Filter{Op: storage.FilterNot, Args: []storage.Filter{nots}}
	}
	for _, f := range []storage.Filter{
		leaf(storage.FilterEq, 1),
		leaf(storage.FilterNe, 1),
		leaf(storage.FilterExists, 1),
		chain(storage.FilterOr, 150, storage.FilterEq, false),
		chain(storage.FilterOr, 149, storage.FilterBeginsWith, true),
		chain(storage.FilterAnd, 12, storage.FilterGe, true),
		nots,
	} {
		for _, attrs := range [][]string{nil, {"a", "b"}, make([]string, 200)} {
			for i := range attrs {
				attrs[i] = fmt.Sprintf("p%d", i)
			}
			q := storage.Query{Table: "t", PK: "p", Low: "a", High: "z", Filter: &f, Attrs: attrs}
			bound := q.FilterExpressionBytes()
			in, _, err := queryInput(q)
			if bound > storage.MaxExpressionBytes {
				require.ErrorIs(t, err, storage.ErrBadFilter)
				continue
			}
			require.NoError(t, err)
			require.LessOrEqual(t, len(aws.ToString(in.FilterExpression)), bound, "%d operators, %d attrs", f.Operators(), len(attrs))
		}
	}
}
