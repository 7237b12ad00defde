package chunk

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/storage"
)

// packDigest is the SHA-256 of the items Pack makes of generated events
// (genEvents, seeds 7 and 8: events of one series over a few hours,
// repeats included) in windows of 10 minutes, an hour and a day, with
// one shard and three, with an expiry and without: their keys, the
// names of their attributes and their values. It was taken from the
// writer before it kept its windows' time prefixes and its numbers'
// short forms, and pins the bytes every writer change since must keep.
const packDigest = "1bb6f5992c71f7786d7cb7281ed77d0d09980c281b362ff10c798366e0c220c4"

// TestPackWritesTheSameBytes requires Pack to make, byte for byte, the
// items it made before its writer was made faster (packDigest): the
// block format and the keys stay as stored items have them.
func TestPackWritesTheSameBytes(t *testing.T) {
	evs := valid(t, genEvents(rand.New(rand.NewPCG(7, 8)), 400))
	h := sha256.New()
	for _, window := range []time.Duration{10 * time.Minute, time.Hour, 24 * time.Hour} {
		for _, s := range []Series{
			{Tenant: "acme", Table: "t", Series: "s", Shards: 1},
			{Tenant: "acme", Table: "t", Series: "s", Shards: 3, Expiry: Expiry{TTL: 90 * 24 * time.Hour}},
		} {
			items, alone, err := Pack(s, window, evs)
			if err != nil {
				t.Fatal(err)
			}
			if len(alone) != 0 {
				t.Fatalf("%d events alone", len(alone))
			}
			for _, it := range items {
				h.Write([]byte(it.PK + "\x00" + it.SK + "\x00"))
				names := make([]string, 0, len(it.Attrs))
				for name := range it.Attrs {
					names = append(names, name)
				}
				slices.Sort(names)
				for _, name := range names {
					h.Write([]byte(name + "\x00"))
					switch v := it.Attrs[name].(type) {
					case []byte:
						h.Write(v)
					case json.Number:
						h.Write([]byte(v))
					default:
						t.Fatalf("attribute %s of type %T", name, v)
					}
					h.Write([]byte{0})
				}
			}
		}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != packDigest {
		t.Fatalf("Pack's items have the digest %s, not %s", got, packDigest)
	}
}

// PackFields, given each event's fields in a list, makes the items Pack
// makes of the events with their maps: of events in order, out of order
// (with repeats), and with one too large for a chunk, which it returns
// alone with its fields.
func TestPackFieldsAsPack(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	inOrder := valid(t, genEvents(r, 300))
	slices.SortStableFunc(inOrder, func(a, b event.Event) int { return a.Time.Compare(b.Time) })
	inOrder = slices.CompactFunc(inOrder, func(a, b event.Event) bool { return a.Time.Equal(b.Time) })
	shuffled := valid(t, genEvents(r, 300))
	// As TestPackCutsLargeEvents' incompressible event: its row, with
	// its client id, just under the limit.
	blob := make([]byte, storage.MaxItemSize-storage.ItemSize(itemenc.RowItem(testSeries.Tenant, testSeries.Table, event.Event{Time: at(0), Series: testSeries.Series, ID: strings.Repeat("i", 11)}, 0))-len("blob"))
	for i := range blob {
		blob[i] = byte(r.Uint32())
	}
	big := valid(t, []event.Event{
		{Time: at(0), Fields: map[string]any{"v": num("1")}},
		{Time: at(1), ID: strings.Repeat("i", 11), Fields: map[string]any{"blob": blob}},
		{Time: at(2), Fields: map[string]any{"v": num("2"), "w": "a"}},
	})
	require.Len(t, big, 3)
	for name, evs := range map[string][]event.Event{"in order": inOrder, "out of order": shuffled, "one too large": big} {
		t.Run(name, func(t *testing.T) {
			s := testSeries
			s.Shards, s.Expiry = 3, Expiry{TTL: time.Hour}
			want, wantAlone, err := Pack(s, time.Hour, evs)
			require.NoError(t, err)
			bare := slices.Clone(evs)
			fields := make([][]event.Field, len(evs))
			for k, ev := range evs {
				for name, v := range ev.Fields {
					fields[k] = append(fields[k], event.Field{Name: name, Value: v})
				}
				bare[k].Fields = nil
			}
			got, starts, alone, err := PackFields(s, time.Hour, bare, fields, nil)
			require.NoError(t, err)
			if name == "one too large" {
				require.Len(t, alone, 1, "the incompressible event is left out")
			}
			require.Equal(t, want, got)
			require.Equal(t, wantAlone, alone)
			require.Len(t, starts, len(got))
			for k, it := range got {
				first, ok := FirstTime(it.SK)
				require.True(t, ok)
				require.Equal(t, WindowStart(first, time.Hour).UnixNano(), starts[k], "item %d's window", k)
			}
		})
	}
}
