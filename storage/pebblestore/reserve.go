package pebblestore

import "github.com/cockroachdb/pebble/v2/vfs"

// reserveFS is a file system whose files reserve at most max bytes of disk
// ahead of their end when Pebble asks to preallocate (fallocate with
// FALLOC_FL_KEEP_SIZE on Linux; a no-op on other systems).
//
// Pebble preallocates each write-ahead log in steps of 110% of
// MemTableSize, and a new log starts with every memtable, which grows from
// 256 KiB to MemTableSize, doubling: a store that had received a few MB
// held several logs, each reserving 110% of the default memtable, far
// more disk than its files, however few events it held
// (TestDiskFootprint holds the bound the reservation keeps). The
// reservation spares the file system an extent allocation now and then
// while the log grows; a few MiB ahead does the same for as long as a sync
// takes, so ingest is no slower (Options.WALPreallocateSize).
type reserveFS struct {
	vfs.FS
	max int64
}

// Create creates a file whose reservations reserveFS caps.
func (fs reserveFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, category)
	return fs.wrap(f, err)
}

// ReuseForWrite reuses a file (a recycled write-ahead log) whose
// reservations reserveFS caps.
func (fs reserveFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, category)
	return fs.wrap(f, err)
}

// Unwrap returns the file system reserveFS wraps.
func (fs reserveFS) Unwrap() vfs.FS { return fs.FS }

func (fs reserveFS) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return reserveFile{File: f, max: fs.max}, nil
}

// reserveFile is a file of a reserveFS.
type reserveFile struct {
	vfs.File
	max int64
}

// Preallocate reserves at most max bytes from offset.
func (f reserveFile) Preallocate(offset, length int64) error {
	return f.File.Preallocate(offset, min(length, f.max))
}
