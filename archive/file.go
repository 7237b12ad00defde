package archive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// fileTarget keeps archives in a folder of the local file system (or a
// mounted one). An object is written to a temporary file in its folder,
// synced, and renamed over its key, so it is replaced whole.
type fileTarget struct {
	dir string
}

func newFileTarget(dir string) (*fileTarget, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadTarget, err)
	}
	return &fileTarget{dir: abs}, nil
}

func (t *fileTarget) String() string { return "file://" + filepath.ToSlash(t.dir) }

func (t *fileTarget) path(key string) string {
	return filepath.Join(t.dir, filepath.FromSlash(path.Clean("/"+key)))
}

func (t *fileTarget) put(ctx context.Context, key string, r io.ReadSeeker, _ int64) error {
	w, err := t.create(ctx, key)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		return errors.Join(fmt.Errorf("put %s: %w", key, err), w.Abort())
	}
	return w.Commit()
}

// create writes an object in place: to a temporary file in its folder,
// which Commit syncs and renames over the key. It first removes the
// temporary files of the key that a writer killed before its Commit or
// Abort left behind: a key has one writer at a time (the lifecycle's
// lease, an operator's one command), so every other one is such a
// leftover.
func (t *fileTarget) create(_ context.Context, key string) (objectWriter, error) {
	p := t.path(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", key, err)
	}
	if err := removeLeftovers(filepath.Dir(p), tempPrefix(p)); err != nil {
		return nil, fmt.Errorf("create %s: %w", key, err)
	}
	f, err := os.CreateTemp(filepath.Dir(p), tempPrefix(p)+"*")
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", key, err)
	}
	return &fileWriter{f: f, key: key, path: p}, nil
}

// tempPrefix is how the names of the temporary files of the object at
// path p begin: ".{name}.tmp", hidden, beside it.
func tempPrefix(p string) string { return "." + filepath.Base(p) + ".tmp" }

// removeLeftovers removes the files of dir whose names begin with
// prefix: the temporary files of one object.
func removeLeftovers(dir, prefix string) error {
	des, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, de := range des {
		if !de.Type().IsRegular() || !strings.HasPrefix(de.Name(), prefix) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, de.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove a temporary file left behind: %w", err)
		}
	}
	return nil
}

// fileWriter is an object being written to a temporary file.
type fileWriter struct {
	f     *os.File
	key   string
	path  string
	ended bool
}

func (w *fileWriter) Write(p []byte) (int, error) { return w.f.Write(p) }

func (w *fileWriter) Commit() (err error) {
	if w.ended {
		return nil
	}
	w.ended = true
	defer func() {
		if err != nil {
			os.Remove(w.f.Name())
			err = fmt.Errorf("put %s: %w", w.key, err)
		}
	}()
	if err := w.f.Sync(); err != nil {
		w.f.Close()
		return err
	}
	if err := w.f.Close(); err != nil {
		return err
	}
	if err := os.Rename(w.f.Name(), w.path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(w.path))
}

func (w *fileWriter) Abort() error {
	if w.ended {
		return nil
	}
	w.ended = true
	return errors.Join(w.f.Close(), os.Remove(w.f.Name()))
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

func (t *fileTarget) get(_ context.Context, key string) (io.ReadCloser, error) {
	f, err := os.Open(t.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("get %s: %w", key, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	return f, nil
}

func (t *fileTarget) del(_ context.Context, key string) error {
	err := os.Remove(t.path(key))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	return nil
}

func (t *fileTarget) list(_ context.Context, match func(name string) bool, fn func(key string) error) error {
	folders, err := os.ReadDir(t.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list %s: %w", t, err)
	}
	for _, folder := range folders {
		if !folder.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(t.dir, folder.Name()))
		if err != nil {
			return fmt.Errorf("list %s: %w", t, err)
		}
		for _, f := range files {
			if f.Type().IsRegular() && match(f.Name()) {
				if err := fn(folder.Name() + "/" + f.Name()); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
