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

// S3Options configure an s3:// target.
type S3Options struct {
	// UsePathStyle addresses buckets as path elements
	// (http://host/bucket/key), as most S3-compatible servers want,
	// instead of host names (http://bucket.host/key).
	UsePathStyle bool
}

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
