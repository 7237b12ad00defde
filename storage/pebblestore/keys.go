package pebblestore

import (
	"encoding/binary"
)

// The key space of the one Pebble DB is split by the first byte:
//
//	0x00 meta key    -> store-wide values (format version, next table id)
//	0x01 + name      -> the catalog record of table name
//	0x02 + id + item -> an item of the table with that id
//
// An item key is 0x02, the table id as 8 big-endian bytes, uvarint(len(pk)),
// pk, sk. The length prefix keeps partitions apart ("p" and "p#" never
// interleave), and everything after it is the sort key verbatim, so the
// items of a partition are contiguous and in bytewise sort-key order, the
// order DynamoDB gives string sort keys.
const (
	metaPrefix    byte = 0x00
	catalogPrefix byte = 0x01
	dataPrefix    byte = 0x02
)

var (
	// formatKey holds formatVersion, so a later layout can refuse or
	// migrate an older DB.
	formatKey = []byte{metaPrefix, 'f', 'o', 'r', 'm', 'a', 't'}
	// nextIDKey holds the next table id, 8 bytes big-endian. Ids are never
	// reused: a table deleted and created again gets a new id, so no stale
	// item of the old table can show through.
	nextIDKey = []byte{metaPrefix, 'n', 'e', 'x', 't', '-', 'i', 'd'}
	// catalogStart and catalogEnd bound the catalog records.
	catalogStart = []byte{catalogPrefix}
	catalogEnd   = []byte{catalogPrefix + 1}
)

// formatVersion is the layout this package writes.
const formatVersion = "1"

// catalogKey returns the key of table name's catalog record.
func catalogKey(name string) []byte {
	k := make([]byte, 0, 1+len(name))
	k = append(k, catalogPrefix)
	return append(k, name...)
}

// tablePrefixLen is the length of the prefix every item key of a table
// starts with.
const tablePrefixLen = 1 + 8

// appendTablePrefix appends the prefix of every item key of table id.
func appendTablePrefix(dst []byte, id uint64) []byte {
	dst = append(dst, dataPrefix)
	return binary.BigEndian.AppendUint64(dst, id)
}

// tableSpan returns the bounds [start, end) of all item keys of table id.
func tableSpan(id uint64) (start, end []byte) {
	return appendTablePrefix(nil, id), appendTablePrefix(nil, id+1)
}

// appendPartitionPrefix appends the prefix of every item key of partition
// pk of table id.
func appendPartitionPrefix(dst []byte, id uint64, pk string) []byte {
	dst = appendTablePrefix(dst, id)
	dst = binary.AppendUvarint(dst, uint64(len(pk)))
	return append(dst, pk...)
}

// appendItemKey appends the key of item (pk, sk) of table id.
func appendItemKey(dst []byte, id uint64, pk, sk string) []byte {
	return append(appendPartitionPrefix(dst, id, pk), sk...)
}

// splitItemKey returns the partition and sort keys of an item key whose
// table prefix has been checked by the caller (the iterator's bounds). ok
// is false for a malformed key.
func splitItemKey(key []byte) (pk, sk []byte, ok bool) {
	rest := key[tablePrefixLen:]
	n, w := binary.Uvarint(rest)
	if w <= 0 || uint64(len(rest)-w) < n {
		return nil, nil, false
	}
	rest = rest[w:]
	return rest[:n], rest[n:], true
}

// keySuccessor returns the smallest key greater than every key that starts
// with prefix, or nil when there is none (prefix is all 0xff). It does not
// modify prefix.
func keySuccessor(prefix []byte) []byte {
	for i := len(prefix) - 1; i >= 0; i-- {
		if prefix[i] != 0xff {
			s := make([]byte, i+1)
			copy(s, prefix)
			s[i]++
			return s
		}
	}
	return nil
}
