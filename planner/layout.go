package planner

import (
	"math"

	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/storage"
)

// Layouts the planner prices: rows, an item an event, and chunks, a
// series' events of a window in one item, by column and compressed
// (package engine/chunk).
const (
	LayoutRow   = string(family.LayoutRow)
	LayoutChunk = string(family.LayoutChunk)
)

// A chunk item's size is ChunkFixedBytes plus ChunkEventBytes an event,
// as storage.ItemSize counts it: its keys and attributes, then the
// events' compressed columns. `timetable plan --sample` measures them on
// the sample with package engine/chunk. Without a sample they follow
// from the row item: a chunk of one event takes DefaultChunkExtraBytes
// more than its row, and an event in a large chunk DefaultChunkRatio of
// its row's bytes. Both are measured on the guide's event shape (an item
// of 180 bytes in the row layout: a sensor's readings of four values, a
// signal strength, its site and model, a second apart) by packing an
// hour of it: a chunk of one event takes 199 bytes (its row 178), and each more event
// 2.63 (chunk blocks of version 2); cli's TestChunkDefaultsAreMeasured measures them again and holds
// these to what it finds. A chunk of one event is larger than its row:
// chunks pay when a request brings several events of a series.
const (
	DefaultChunkExtraBytes = 21
	DefaultChunkRatio      = 0.0148
)

// chunkSize returns the fixed bytes of a chunk item and the bytes of an
// event in it: the input's, or those that follow from the row item.
func (in Input) chunkSize(it Item) (fixed, perEvent float64) {
	if in.ChunkFixedBytes > 0 && in.ChunkEventBytes > 0 {
		return in.ChunkFixedBytes, in.ChunkEventBytes
	}
	perEvent = it.Bytes * DefaultChunkRatio
	return it.Bytes + DefaultChunkExtraBytes - perEvent, perEvent
}

// StoredEvent is what one event costs in a layout: its write units and
// stored item bytes, and the storage overhead DynamoDB adds per item,
// shared by the events of the item.
type StoredEvent struct {
	Layout string `json:"layout"`
	// EventsPerItem is how many events an item holds: 1 for rows; for
	// chunks, the events of one series a request writes at once
	// (Input.BatchEvents), split to stay under DynamoDB's item limit.
	EventsPerItem float64 `json:"events_per_item"`
	WriteUnits    float64 `json:"write_units"`
	Bytes         float64 `json:"bytes"`
	// OverheadBytes is DynamoDB's 100 bytes of storage overhead an item,
	// an event's share.
	OverheadBytes float64 `json:"overhead_bytes"`
}

// chunkEvent returns what an event costs in chunks of n events of one
// series: items under storage.MaxItemSize, each ceil(size/1024) write
// units and one storage overhead.
func (in Input) chunkEvent(it Item, n float64) StoredEvent {
	fixed, perEvent := in.chunkSize(it)
	n = math.Max(1, n)
	per := math.Max(1, math.Floor((storage.MaxItemSize-fixed)/perEvent))
	items := math.Ceil(n / per)
	size := fixed + n/items*perEvent
	return StoredEvent{
		Layout:        LayoutChunk,
		EventsPerItem: n / items,
		WriteUnits:    math.Ceil(size/storage.WriteUnitBytes-fitTolerance) * items / n,
		Bytes:         size * items / n,
		OverheadBytes: StorageOverheadBytes * items / n,
	}
}

// storedEvent returns what an event costs in the input's layout.
func (in Input) storedEvent(it Item) StoredEvent {
	if in.Layout == LayoutChunk {
		return in.chunkEvent(it, in.BatchEvents)
	}
	return StoredEvent{Layout: LayoutRow, EventsPerItem: 1, WriteUnits: it.WriteUnits, Bytes: it.Bytes, OverheadBytes: StorageOverheadBytes}
}

// LayoutCost is a layout's recommended monthly bill, beside the other's.
type LayoutCost struct {
	Event StoredEvent `json:"event"`
	// Period is the period the layout is cheapest with, and Total its
	// month's bill.
	Period string  `json:"period"`
	Total  float64 `json:"total"`
	// Reserved is that bill's reserved capacity, a commitment Total does
	// not include; nil when none saves anything.
	Reserved *Reserved `json:"reserved,omitempty"`
}

// Packing is what the lifecycle's packing of a table as it leaves the
// hot tier costs and saves: an event's share of the chunks of a window of
// each series it packs the table into, and the compaction's read and
// write units a month, as package compact rewrites a table on DynamoDB
// (into its next physical table): an eventually consistent scan of the
// table as written, the writes of the chunks, and a strongly consistent
// scan of the chunks to verify them.
type Packing struct {
	Event StoredEvent `json:"event"`
	// ReadUnits and WriteUnits are the compaction's a month, on demand.
	ReadUnits  float64 `json:"read_units"`
	WriteUnits float64 `json:"write_units"`
}

// PackedLater is what chunks would cost for events written one at a
// time, packed when their table leaves the hot tier: rows while hot,
// then a chunk a window of each series (Packing). It is an option the
// plan shows, not one it applies: the plan recommends a layout for
// events as they are written.
type PackedLater struct {
	Packing
	Bill Bill `json:"bill"`
}

// windowEvents returns the events of one series in a chunk window.
func (in Input) windowEvents() float64 {
	return in.Rate / float64(in.Series) * in.ChunkWindow.Seconds()
}
