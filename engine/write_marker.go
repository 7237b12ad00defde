package engine

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/timetabledb/timetable/engine/itemenc"
	"github.com/timetabledb/timetable/storage"
)

// Version markers: every write to a logical table with rollups records,
// for each hour and day (and series) it touches, a marker naming the
// write (a nonce) and when it happened. A stored rollup names the markers
// it covers; a read trusts it only while they are still the current ones
// (see doc.go).

// markKey names one version marker: a unit, a bucket start (Unix nanos)
// and a series.
type markKey struct {
	unit   string
	start  int64
	series string
}

// newNonce returns a random nonce naming one Write call.
func newNonce() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // never fails
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// mark notes the rollup buckets an event item touches.
func (w *tableWrite) mark(series, sk string) {
	t, ok := itemenc.ParseTimeKey(sk[:itemenc.TimeKeyLen])
	if !ok {
		return
	}
	w.markAt(series, t)
}

// markAt is mark for an item of time t.
func (w *tableWrite) markAt(series string, t time.Time) {
	if w.marks == nil {
		w.marks = map[markKey]struct{}{}
	}
	for _, u := range rollupUnits {
		w.marks[markKey{u.name, alignDown(t, u.d).UnixNano(), series}] = struct{}{}
	}
}

// markerItems returns the version markers of a write's marks.
func (w *tableWrite) markerItems(nonce string, at time.Time) []storage.Item {
	out := make([]storage.Item, 0, len(w.marks))
	atNum := json.Number(strconv.FormatInt(at.UnixNano(), 10))
	for k := range w.marks {
		out = append(out, storage.Item{
			PK:    itemenc.MarkerKey(w.tenant, w.ltable),
			SK:    itemenc.MarkerSortKey(k.unit, time.Unix(0, k.start), k.series),
			Attrs: map[string]any{"n": nonce, "at": atNum},
		})
	}
	slices.SortFunc(out, func(a, b storage.Item) int { return strings.Compare(a.SK, b.SK) })
	return out
}
