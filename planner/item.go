package planner

import (
	"fmt"
	"slices"

	"github.com/timetabledb/timetable/storage"
)

// readUnitBytes is the size one read unit covers.
const readUnitBytes = 4096

// Item describes the stored item of one event.
type Item struct {
	// FieldBytes is the size of the fields when the input gave it; the
	// item adds KeyBytes to it.
	FieldBytes int `json:"field_bytes,omitempty"`
	// KeyBytes is the size of the key attributes added to FieldBytes:
	// "pk", the partition key, "sk" and the sort key.
	KeyBytes int `json:"key_bytes,omitempty"`
	// Bytes is the item size: the mean over a sample.
	Bytes float64 `json:"bytes"`
	// WriteUnits is the number of write units one event takes,
	// ceil(bytes/1024): the mean over a sample.
	WriteUnits float64 `json:"write_units"`
	// Sample is the distribution of a sample's item sizes.
	Sample *Distribution `json:"sample,omitempty"`
}

// Distribution summarizes a sample of item sizes, in bytes. Percentiles
// use the nearest-rank method: P90 is the smallest size at least 90% of
// the sample does not exceed.
type Distribution struct {
	Count int     `json:"count"`
	Min   int     `json:"min"`
	P50   int     `json:"p50"`
	P90   int     `json:"p90"`
	P99   int     `json:"p99"`
	Max   int     `json:"max"`
	Mean  float64 `json:"mean"`
}

// writeUnits returns the write units an item of n bytes takes.
func writeUnits(n int) int { return storage.WriteUnits(n) }

// item sizes the input's events and checks them against DynamoDB's item
// limit.
func (in Input) item() (Item, error) {
	keyBytes, sizes := in.itemSizes()
	over, largest := 0, 0
	total, units := 0.0, 0.0
	for _, n := range sizes {
		if n > storage.MaxItemSize {
			over++
			largest = max(largest, n)
		}
		total += float64(n)
		units += float64(writeUnits(n))
	}
	if over > 0 {
		if len(sizes) == 1 {
			return Item{}, fmt.Errorf("%w: the item is %d bytes, over %d", ErrItemTooLarge, largest, storage.MaxItemSize)
		}
		return Item{}, fmt.Errorf("%w: %d of %d sample items are over %d bytes, the largest %d", ErrItemTooLarge, over, len(sizes), storage.MaxItemSize, largest)
	}
	it := Item{
		Bytes:      total / float64(len(sizes)),
		WriteUnits: units / float64(len(sizes)),
	}
	if in.FieldBytes != 0 {
		it.FieldBytes, it.KeyBytes = in.FieldBytes, keyBytes
	}
	if in.Sample != nil {
		d := distribution(sizes)
		it.Sample = &d
	}
	return it, nil
}

// distribution summarizes a non-empty sample.
func distribution(sizes []int) Distribution {
	s := slices.Clone(sizes)
	slices.Sort(s)
	rank := func(p int) int {
		i := (p*len(s) + 99) / 100 // ceil(p% of n), 1-based
		return s[max(i, 1)-1]
	}
	total := 0
	for _, n := range s {
		total += n
	}
	return Distribution{
		Count: len(s),
		Min:   s[0],
		P50:   rank(50),
		P90:   rank(90),
		P99:   rank(99),
		Max:   s[len(s)-1],
		Mean:  float64(total) / float64(len(s)),
	}
}
