package archive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/timetabledb/timetable/storage"
)

// checkpointTimeout bounds saving a checkpoint, which runs after the
// export's own context may have ended (a Lambda near its deadline).
const checkpointTimeout = time.Minute

// A checkpoint is where an export that stopped (throttled past its
// retries, its deadline near) left off, so that the next Archive of the
// same table resumes its scan there instead of reading the table again
// from the start: on a cold table of 1 RCU, a scan of a few MB is
// throttled long before it ends, and an export that started over each
// cycle would never finish. The items exported so far are the data file
// itself, committed without a manifest; the next export copies it into
// its own data file before it scans on.
type checkpoint struct {
	// Version is checkpointVersion; a checkpoint of another version (the
	// first kept its data apart, in export.partial.ndjson.gz) is ignored.
	Version    int    `json:"version"`
	Table      string `json:"table"`
	Generation int64  `json:"generation"`
	// TableCreatedAt tells the table the scan was of from one made again
	// under its name.
	TableCreatedAt time.Time `json:"table_created_at"`
	// Segments are where each segment of the parallel scan stopped.
	Segments []segmentCheckpoint `json:"segments"`
	// Items, Bytes and DataSHA256 are the data file's so far.
	Items      int64  `json:"items"`
	Bytes      int64  `json:"bytes"`
	DataSHA256 string `json:"data_sha256"`
	// Parquet lists the Parquet parts written so far (format parquet).
	Parquet []ParquetFile `json:"parquet,omitempty"`
	SavedAt time.Time     `json:"saved_at"`
}

// checkpointVersion is the version of the checkpoints this package
// writes.
const checkpointVersion = 2

// segmentCheckpoint is where one segment of a parallel scan stopped.
type segmentCheckpoint struct {
	// After is the key of the segment's last item in the data file.
	After storage.Key `json:"after"`
	// Done is set once the segment was scanned to its end.
	Done bool `json:"done,omitempty"`
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

// checkpointKeys returns the keys of a generation's checkpoint and of
// the partial data file that checkpoints of version 1 kept.
func checkpointKeys(table string, generation int64) (cp, partial string) {
	suffix := ""
	if generation > 1 {
		suffix = "-" + strconv.FormatInt(generation, 10)
	}
	return table + "/export" + suffix + ".checkpoint.json", table + "/export" + suffix + ".partial.ndjson.gz"
}

// loadCheckpoint returns the checkpoint of m's export when there is one
// for the same table; found is false otherwise.
func (a *Archiver) loadCheckpoint(ctx context.Context, m Manifest, created time.Time) (cp checkpoint, found bool, err error) {
	cpKey, _ := checkpointKeys(m.Table, m.generation())
	r, err := a.target.get(ctx, cpKey)
	if errors.Is(err, ErrNotFound) {
		return checkpoint{}, false, nil
	}
	if err != nil {
		return checkpoint{}, false, err
	}
	err = json.NewDecoder(r).Decode(&cp)
	r.Close()
	if err != nil || cp.Version != checkpointVersion || cp.Table != m.Table || cp.Generation != m.generation() ||
		!cp.TableCreatedAt.Equal(created) || len(cp.Segments) == 0 || len(cp.Segments) > storage.MaxSegments {
		// Damaged, of another version, or of another table under the
		// name: start over.
		a.opts.Logger.Warn("export checkpoint ignored", "table", m.Table, "version", cp.Version, "err", err)
		return checkpoint{}, false, nil
	}
	return cp, true, nil
}

// saveCheckpoint stores the checkpoint, after its data file.
func (a *Archiver) saveCheckpoint(ctx context.Context, cp checkpoint) error {
	cpKey, _ := checkpointKeys(cp.Table, cp.Generation)
	b, err := json.Marshal(cp)
	if err != nil {
		return err
	}
	return a.target.put(ctx, cpKey, strings.NewReader(string(b)), int64(len(b)))
}

// dropCheckpoint removes a generation's checkpoint (and a version 1
// checkpoint's partial data).
func (a *Archiver) dropCheckpoint(ctx context.Context, table string, generation int64) error {
	cpKey, partialKey := checkpointKeys(table, generation)
	return errors.Join(a.target.del(ctx, cpKey), a.target.del(ctx, partialKey))
}
