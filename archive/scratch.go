package archive

import (
	"errors"
	"io/fs"
	"os"
)

// createScratch creates a temporary file in dir (os.TempDir when empty)
// for this process alone, and removes its name at once where the system
// lets an open file lose its name (Unix): the file lives while it is
// open, and a process killed leaves nothing behind in dir. Where it does
// not (Windows), closeScratch removes it.
func createScratch(dir, pattern string) (*os.File, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	_ = os.Remove(f.Name()) // best effort: closeScratch removes what is left
	return f, nil
}

// closeScratch closes a file of createScratch and removes it if its name
// is still there.
func closeScratch(f *os.File) error {
	err := os.Remove(f.Name())
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	return errors.Join(f.Close(), err)
}
