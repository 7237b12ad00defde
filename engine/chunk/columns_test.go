package chunk

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestReadColumnsAsUnpack reads the columns of generated chunks and
// checks each value against the event Unpack reads: the same times, the
// same events having each field, the same values to the text.
func TestReadColumnsAsUnpack(t *testing.T) {
	fields := []string{"f0", "f3", "f7", "f11", "absent"}
	var cols Columns
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 3))
		evs := valid(t, genEvents(r, 1+r.IntN(300)))
		items, _, err := Pack(Series{Tenant: "t", Table: "m", Series: "s", Shards: 2}, time.Hour, evs)
		require.NoError(t, err)
		for _, it := range items {
			want, err := Unpack(nil, it)
			require.NoError(t, err)
			require.NoError(t, ReadColumns(&cols, it.SK, it.Attrs[AttrData].([]byte), fields))
			require.Len(t, cols.Times, len(want))
			require.Len(t, cols.Fields, len(fields))
			for f, name := range fields {
				c := &cols.Fields[f]
				j := 0
				for i, ev := range want {
					require.Equal(t, ev.Time.UnixNano(), cols.Times[i])
					v, ok := ev.Fields[name]
					require.Equal(t, ok, c.Has(i), "event %d field %s", i, name)
					if !ok {
						continue
					}
					var got any
					switch c.Kind {
					case ColumnInts:
						got = json.Number(strconv.FormatInt(c.Ints[j], 10))
					case ColumnFloats:
						got = json.Number(strconv.FormatFloat(c.Floats[j], 'f', -1, 64))
					case ColumnDecimals:
						got = json.Number(appendDecimal(nil, c.Ints[j], c.Scale))
					default:
						got = c.Values[j]
					}
					require.Equal(t, v, got, "event %d field %s", i, name)
					j++
				}
			}
		}
	}
}

// TestReadColumnsCorrupt reads cut chunks: an error wrapping ErrCorrupt,
// never a panic.
func TestReadColumnsCorrupt(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	items, _, err := Pack(Series{Tenant: "t", Table: "m", Series: "s"}, time.Hour, valid(t, genEvents(r, 200)))
	require.NoError(t, err)
	block, err := decompress(items[0].Attrs[AttrData].([]byte))
	require.NoError(t, err)
	var cols Columns
	for cut := 0; cut < len(block); cut += 1 + len(block)/200 {
		data := append([]byte{storedRaw}, block[:cut]...)
		require.ErrorIs(t, ReadColumns(&cols, items[0].SK, data, []string{"f0", "f1", "f2"}), ErrCorrupt, "cut at %d", cut)
	}
}
