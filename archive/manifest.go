package archive

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
)

// FormatVersion is the version of the archive layout and manifest this
// package writes. A reader refuses a manifest of a later version.
//
// Version 2 changed the content hash to the sum of the items' digests
// (ContentHash), which takes constant memory, and may split the Parquet
// of a table into parts; version 1 manifests (the sorted digests' hash)
// are still read and verified the way they were written.
const FormatVersion = 2

// Names of the objects of the archive of a table's first generation,
// under {prefix}/{table}/. Generation N > 1 (a table made again under the
// name of a deleted one) has its own, beside them: data-N.ndjson.gz and
// manifest-N.json.
const (
	DataObject     = "data.ndjson.gz"
	ManifestObject = "manifest.json"
)

// objectNames returns the names of the data file and the manifest of a
// generation's archive, relative to the table's folder.
func objectNames(generation int64) (data, manifest string) {
	if generation <= 1 {
		return DataObject, ManifestObject
	}
	g := strconv.FormatInt(generation, 10)
	return "data-" + g + ".ndjson.gz", "manifest-" + g + ".json"
}

// isManifest reports whether an object's name is a manifest's, of any
// generation.
func isManifest(name string) bool {
	if name == ManifestObject {
		return true
	}
	g, ok := strings.CutPrefix(name, "manifest-")
	if g, ok = strings.CutSuffix(g, ".json"); !ok {
		return false
	}
	n, err := strconv.ParseInt(g, 10, 64)
	return err == nil && n > 1 && strconv.FormatInt(n, 10) == g
}

// Manifest describes one archive. Its presence means the data file is
// complete; VerifiedAt, when set, means the data was read back from the
// target and matched the table.
type Manifest struct {
	// FormatVersion is the layout version, FormatVersion when written.
	FormatVersion int `json:"format_version"`
	// Table is the source table's name.
	Table string `json:"table"`
	// Generation is the registry's count of the tables made under the
	// name (1 when absent): each generation is archived apart, so that
	// the archive of a deleted table never stands for a table made again
	// under its name.
	Generation int64 `json:"generation,omitempty"`
	// Family, PeriodStart, PeriodEnd, WriteMonth and Tier come from the
	// source table's tags (empty when it had none).
	Family      string `json:"family,omitempty"`
	PeriodStart string `json:"period_start,omitempty"`
	PeriodEnd   string `json:"period_end,omitempty"`
	WriteMonth  string `json:"write_month,omitempty"`
	Tier        string `json:"tier,omitempty"`
	// Tags are all the source table's tags, so that a restore makes a
	// table the engine's catalog recognizes.
	Tags map[string]string `json:"tags,omitempty"`
	// IDScheme is the table's event id scheme, from its registry entry
	// (registry.Entry.IDScheme), when it has one: the stores that keep
	// no tags know it from there alone.
	IDScheme int `json:"id_scheme,omitempty"`
	// Capacity is the source table's capacity when it was archived.
	Capacity Capacity `json:"capacity"`
	// TTLAttribute is the source table's TTL attribute, if any.
	TTLAttribute string `json:"ttl_attribute,omitempty"`
	// Data is the data file's name, relative to the manifest.
	Data string `json:"data"`
	// ItemCount is the number of items, one per line of the data file.
	ItemCount int64 `json:"item_count"`
	// DataBytes is the size of the compressed data file.
	DataBytes int64 `json:"data_bytes"`
	// DataSHA256 is the hex SHA-256 of the compressed data file.
	DataSHA256 string `json:"data_sha256"`
	// ContentSHA256 is the hex SHA-256 of the items independent of their
	// order: see ContentHash.
	ContentSHA256 string `json:"content_sha256"`
	// Parquet lists the archive's Parquet files (format parquet), with
	// their row counts and checksums; empty for an NDJSON archive.
	Parquet []ParquetFile `json:"parquet,omitempty"`
	// Export, for an archive made by the store's own export to S3
	// (Options.Method), names the export and its data files, which hold
	// the items instead of Data.
	Export *NativeExport `json:"export,omitempty"`
	// CreatedAt is when the export started.
	CreatedAt time.Time `json:"created_at"`
	// VerifiedAt is when the data was read back and found to match; nil
	// until then.
	VerifiedAt *time.Time `json:"verified_at,omitempty"`
}

// Capacity is a table's capacity as a manifest records it.
type Capacity struct {
	Billing storage.Billing `json:"billing,omitempty"`
	Read    int64           `json:"read,omitempty"`
	Write   int64           `json:"write,omitempty"`
}

// Verified reports whether the archive was read back and checked.
func (m Manifest) Verified() bool { return m.VerifiedAt != nil }

// newManifest starts the manifest of a table from what the store knows
// of it.
func newManifest(info storage.TableInfo, now time.Time) Manifest {
	tags := info.Tags
	return Manifest{
		FormatVersion: FormatVersion,
		Table:         info.Name,
		Family:        tags[family.TagFamily],
		PeriodStart:   tags[family.TagPeriodStart],
		PeriodEnd:     tags[family.TagPeriodEnd],
		WriteMonth:    tags[family.TagWriteMonth],
		Tier:          tags[family.TagTier],
		Tags:          tags,
		Capacity:      Capacity{Billing: info.Capacity.Billing, Read: info.Capacity.Read, Write: info.Capacity.Write},
		TTLAttribute:  info.TTLAttribute,
		Data:          DataObject,
		CreatedAt:     now,
	}
}

// recordEntry takes a table's facts from its registry entry, the record
// timetable keeps, over its tags.
func (m *Manifest) recordEntry(e registry.Entry) {
	m.Family = e.Family()
	m.PeriodStart = e.Ref.Period.Start.Format(time.RFC3339)
	m.PeriodEnd = e.Ref.Period.End.Format(time.RFC3339)
	m.WriteMonth = ""
	if !e.Ref.WriteMonth.IsZero() {
		m.WriteMonth = e.Ref.WriteMonth.String()
	}
	m.Tier = e.Tier
	m.Generation = e.Generation
	m.IDScheme = int(e.IDScheme())
}

// idScheme returns the id scheme of the table's events: its registry
// entry's, else its tags' (event.IDScheme1 when they name none). The
// events of its chunks are given their ids under it.
func (m Manifest) idScheme() event.IDScheme {
	if s := event.IDScheme(m.IDScheme); s.Valid() {
		return s
	}
	return family.IDSchemeOf(m.Tags)
}

// generation returns the manifest's generation, 1 when it names none.
func (m Manifest) generation() int64 { return max(m.Generation, 1) }

// keys returns the target keys of the archive's data file and manifest.
func (m Manifest) keys() (data, manifest string) {
	d, mf := objectNames(m.generation())
	return m.Table + "/" + d, m.Table + "/" + mf
}

// ContentHash computes a hash of a multiset of items that does not
// depend on the order they come in, in constant memory: the sum modulo
// 2^256 of the items' SHA-256 digests (each over the item's DynamoDB JSON
// line, whose attribute names are sorted), read as big-endian numbers. A
// table and its archive have the same content hash and count when they
// hold the same items, whatever order a scan returns them in, and the
// hashes of the segments of a parallel scan add up to the table's (Merge).
// Finding another multiset of items with the same sum takes a search of
// the order of 2^128 operations for a set of any size (the generalized
// birthday bound is what the count and the item encoding leave), far
// beyond what an accident or a bug produces. The zero value is empty.
type ContentHash struct {
	sum   [4]uint64 // most significant limb first
	count int64
}

// Add adds one item, given as its DynamoDB JSON line.
func (h *ContentHash) Add(line []byte) {
	d := sha256.Sum256(line)
	var carry uint64
	for i := 3; i >= 0; i-- {
		h.sum[i], carry = bits.Add64(h.sum[i], binary.BigEndian.Uint64(d[8*i:]), carry)
	}
	h.count++
}

// Merge adds the items another hash holds.
func (h *ContentHash) Merge(o ContentHash) {
	var carry uint64
	for i := 3; i >= 0; i-- {
		h.sum[i], carry = bits.Add64(h.sum[i], o.sum[i], carry)
	}
	h.count += o.count
}

// Count returns the number of items added.
func (h *ContentHash) Count() int64 { return h.count }

// ParseContentHash returns the hash whose Sum is sum, of count items: a
// hash saved part-way (a checkpoint) to be added to. An empty sum of no
// items is the empty hash.
func ParseContentHash(sum string, count int64) (ContentHash, error) {
	if sum == "" && count == 0 {
		return ContentHash{}, nil
	}
	return parseContentHash(sum, count)
}

// parseContentHash returns the hash whose Sum is sum, of count items: a
// hash saved part-way (a check's checkpoint) to be added to.
func parseContentHash(sum string, count int64) (ContentHash, error) {
	b, err := hex.DecodeString(sum)
	if err != nil || len(b) != 32 || count < 0 {
		return ContentHash{}, fmt.Errorf("%w: content hash %q of %d items", ErrFormat, sum, count)
	}
	h := ContentHash{count: count}
	for i := range h.sum {
		h.sum[i] = binary.BigEndian.Uint64(b[8*i:])
	}
	return h, nil
}

// Sum returns the hex hash of the items added so far.
func (h *ContentHash) Sum() string {
	var b [32]byte
	for i, l := range h.sum {
		binary.BigEndian.PutUint64(b[8*i:], l)
	}
	return hex.EncodeToString(b[:])
}

// sortedContentHash is the content hash of manifests of format version 1:
// the SHA-256 of the items' sorted SHA-256 digests. It keeps 32 bytes per
// item, which the small archives made before version 2 afford; it is
// used only to verify them.
type sortedContentHash struct {
	digests [][sha256.Size]byte
}

func (h *sortedContentHash) Add(line []byte) {
	h.digests = append(h.digests, sha256.Sum256(line))
}

func (h *sortedContentHash) Count() int64 { return int64(len(h.digests)) }

func (h *sortedContentHash) Sum() string {
	slices.SortFunc(h.digests, func(a, b [sha256.Size]byte) int { return bytes.Compare(a[:], b[:]) })
	sum := sha256.New()
	for _, d := range h.digests {
		sum.Write(d[:])
	}
	return hex.EncodeToString(sum.Sum(nil))
}

// contentHasher is a content hash of either format version.
type contentHasher interface {
	Add(line []byte)
	Count() int64
	Sum() string
}

// newContentHasher returns the content hash that manifests of a format
// version record.
func newContentHasher(formatVersion int) contentHasher {
	if formatVersion == 1 {
		return &sortedContentHash{}
	}
	return &ContentHash{}
}
