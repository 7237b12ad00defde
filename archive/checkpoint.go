package archive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/timetabledb/timetable/storage"
)

// checkpointTimeout bounds saving a checkpoint, which runs after the
// export's own context may have ended (a Lambda near its deadline).
const checkpointTimeout = time.Minute

// A checkpoint is where an export that stopped (throttled past its
// retries, its context ended) left off, so that the next Archive of the
// same table resumes its scan there instead of reading the table again
// from the start: on a cold table of 1 RCU, a scan of a few MB is
// throttled long before it ends, and an export that started over each
// cycle would never finish. The items exported so far are kept in the
// target beside it, as the partial data file.
type checkpoint struct {
	Table      string `json:"table"`
	Generation int64  `json:"generation"`
	// TableCreatedAt tells the table the scan was of from one made again
	// under its name.
	TableCreatedAt time.Time `json:"table_created_at"`
	// After is the key of the last item in the partial data file.
	After storage.Key `json:"after"`
	// Items and Bytes are the partial data file's.
	Items   int64     `json:"items"`
	Bytes   int64     `json:"bytes"`
	SavedAt time.Time `json:"saved_at"`
}

// Checkpoint returns how many items the stopped export of a generation
// of table holds, waiting for the next Archive to resume it; 0 when there
// is none.
func (a *Archiver) Checkpoint(ctx context.Context, table string, generation int64) (int64, error) {
	cpKey, _ := checkpointKeys(table, generation)
	r, err := a.target.get(ctx, cpKey)
	if errors.Is(err, ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer r.Close()
	var cp checkpoint
	if err := json.NewDecoder(r).Decode(&cp); err != nil {
		return 0, fmt.Errorf("read export checkpoint of %q: %w: %v", table, ErrFormat, err)
	}
	return cp.Items, nil
}

// checkpointKeys returns the keys of a generation's checkpoint and its
// partial data file.
func checkpointKeys(table string, generation int64) (cp, partial string) {
	suffix := ""
	if generation > 1 {
		suffix = "-" + strconv.FormatInt(generation, 10)
	}
	return table + "/export" + suffix + ".checkpoint.json", table + "/export" + suffix + ".partial.ndjson.gz"
}

// loadCheckpoint returns the checkpoint of m's export, and copies its
// partial data file into spool, when there is one for the same table;
// found is false otherwise, and spool is untouched.
func (a *Archiver) loadCheckpoint(ctx context.Context, m Manifest, created time.Time, spool *os.File) (cp checkpoint, found bool, err error) {
	cpKey, partialKey := checkpointKeys(m.Table, m.generation())
	r, err := a.target.get(ctx, cpKey)
	if errors.Is(err, ErrNotFound) {
		return checkpoint{}, false, nil
	}
	if err != nil {
		return checkpoint{}, false, err
	}
	err = json.NewDecoder(r).Decode(&cp)
	r.Close()
	if err != nil || cp.Table != m.Table || cp.Generation != m.generation() || !cp.TableCreatedAt.Equal(created) {
		// Damaged, or of another table under the name: start over.
		a.opts.Logger.Warn("export checkpoint ignored", "table", m.Table, "err", err)
		return checkpoint{}, false, nil
	}
	pr, err := a.target.get(ctx, partialKey)
	if errors.Is(err, ErrNotFound) {
		return checkpoint{}, false, nil
	}
	if err != nil {
		return checkpoint{}, false, err
	}
	defer pr.Close()
	n, err := io.Copy(spool, pr)
	if err != nil {
		return checkpoint{}, false, fmt.Errorf("read partial export: %w", err)
	}
	if n != cp.Bytes {
		a.opts.Logger.Warn("export checkpoint ignored: partial data of another size", "table", m.Table, "bytes", n, "want", cp.Bytes)
		if err := errors.Join(spool.Truncate(0), seekStart(spool)); err != nil {
			return checkpoint{}, false, err
		}
		return checkpoint{}, false, nil
	}
	return cp, true, nil
}

// saveCheckpoint stores the partial data file spool and the checkpoint,
// the data first: a checkpoint is only ever present with its data.
func (a *Archiver) saveCheckpoint(ctx context.Context, cp checkpoint, spool *os.File) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), checkpointTimeout)
	defer cancel()
	cpKey, partialKey := checkpointKeys(cp.Table, cp.Generation)
	if err := a.target.del(ctx, cpKey); err != nil {
		return err
	}
	if err := seekStart(spool); err != nil {
		return err
	}
	if err := a.target.put(ctx, partialKey, spool, cp.Bytes); err != nil {
		return err
	}
	b, err := json.Marshal(cp)
	if err != nil {
		return err
	}
	return a.target.put(ctx, cpKey, strings.NewReader(string(b)), int64(len(b)))
}

// dropCheckpoint removes a generation's checkpoint and partial data.
func (a *Archiver) dropCheckpoint(ctx context.Context, table string, generation int64) error {
	cpKey, partialKey := checkpointKeys(table, generation)
	return errors.Join(a.target.del(ctx, cpKey), a.target.del(ctx, partialKey))
}

func seekStart(f *os.File) error {
	_, err := f.Seek(0, io.SeekStart)
	return err
}
