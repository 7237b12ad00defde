package archive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"
)

// Errors of archive targets.
var (
	// ErrNotFound marks an archive object, or a whole archive, that the
	// target does not hold.
	ErrNotFound = errors.New("timetable: archive not found")
	// ErrBadTarget marks a target URL this package cannot use.
	ErrBadTarget = errors.New("timetable: bad archive target")
)

// target is where archives are kept: a folder or an S3 prefix. Keys are
// slash-separated paths relative to the target's root.
type target interface {
	// put stores an object from a file-like reader, replacing any object
	// of that key as a whole: a reader of the key sees the old object or
	// the new one, never a part.
	put(ctx context.Context, key string, r io.ReadSeeker, size int64) error
	// create opens an object to be written as a stream of unknown size,
	// in bounded memory and without a local copy. Nothing is visible
	// under the key until Commit, which replaces any object of that key
	// as a whole; Abort discards what was written. The object's upload
	// does not end with ctx, so that an export stopped by its deadline
	// can still commit what it has: only Abort and Commit end it.
	create(ctx context.Context, key string) (objectWriter, error)
	// get opens an object, or returns an error wrapping ErrNotFound.
	get(ctx context.Context, key string) (io.ReadCloser, error)
	// del removes an object; removing one that is absent is not an error.
	del(ctx context.Context, key string) error
	// list calls fn with the key of every object whose name match
	// accepts, in any folder directly under the root ("{folder}/{name}").
	list(ctx context.Context, match func(name string) bool, fn func(key string) error) error
	// String returns the target's URL.
	String() string
}

// objectWriter is an object being written: see target.create. Its
// methods are called from one goroutine.
type objectWriter interface {
	io.Writer
	// Commit completes the object and makes it visible under its key.
	Commit() error
	// Abort discards the object; after Commit it does nothing.
	Abort() error
}

// S3Options configure an s3:// target.
type S3Options struct {
	// PartSize is the size of the parts of a multipart upload, the unit
	// in which a streamed export is sent; zero means DefaultPartSize, and
	// S3 wants at least 5 MiB (manager.MinUploadPartSize). S3 takes at
	// most 10,000 parts, so the part size bounds an archive's size:
	// 16 MiB parts, 156 GiB of compressed data.
	PartSize int64
	// Concurrency is the number of parts uploaded at once; zero means
	// DefaultConcurrency. Memory holds about Concurrency+1 parts.
	Concurrency int

	// UsePathStyle addresses buckets as path elements
	// (http://host/bucket/key), as most S3-compatible servers want,
	// instead of host names (http://bucket.host/key).
	UsePathStyle bool
}

// Defaults of S3Options.
const (
	DefaultPartSize    = 16 << 20
	DefaultConcurrency = 2
)

// parseTarget opens the target a URL names: file:///abs/dir,
// file://relative/dir or s3://bucket/prefix.
func parseTarget(ctx context.Context, raw string, o S3Options) (target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrBadTarget, raw, err)
	}
	switch u.Scheme {
	case "file":
		// file:///abs has an empty host; file://rel/dir puts "rel" in the
		// host, and means a path relative to the working directory.
		dir := u.Host + u.Path
		if u.Host == "" && u.Opaque != "" {
			dir = u.Opaque
		}
		if dir == "" {
			return nil, fmt.Errorf("%w: %q names no folder", ErrBadTarget, raw)
		}
		return newFileTarget(filepath.FromSlash(dir))
	case "s3":
		if u.Host == "" {
			return nil, fmt.Errorf("%w: %q names no bucket", ErrBadTarget, raw)
		}
		return newS3Target(ctx, u.Host, strings.Trim(u.Path, "/"), o)
	}
	return nil, fmt.Errorf("%w: %q: use file:///DIR or s3://BUCKET/PREFIX", ErrBadTarget, raw)
}
