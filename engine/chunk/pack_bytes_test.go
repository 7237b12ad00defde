package chunk

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
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
