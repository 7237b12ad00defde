package archive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/timetabledb/timetable/storage"
)

// CheckTable is the check of a table against its verified archive that
// the lifecycle manager makes right before it deletes the table: a scan
// of the table whose item count and content hash must equal the
// manifest's, so that a write that landed after the export (a writer
// whose clock or cache lagged the fence) is found and the table archived
// again rather than deleted with an event its archive lacks. The archive
// itself is not read again: Archive read it back and checked it before it
// marked the manifest verified, and Verify, the operator's check, does
// both.
//
// It returns diff, empty when the table holds what the archive holds and
// what differs otherwise, and err when the check could not finish: the
// table's scan failed, or stopped Options.DeadlineMargin before ctx's
// deadline (an error wrapping ErrStopped and the deadline's error). A
// table already gone has nothing to compare: diff and err are empty.
//
// The scan is parallel, Options.ScanSegments segments at once
// (storage.Segment). Once the table was fenced Options.CheckSettle ago
// (registry.Entry.FencedAt, through Options.Facts) it reads eventually
// consistent, at half the read units on DynamoDB, and a check that stops
// saves each segment's progress (its last key, its items' count and
// content hash) in a checkpoint beside the archive
// (T/check.checkpoint.json; check-N.checkpoint.json for generation N),
// which the next CheckTable of the same archive, table and fence resumes:
// a table larger than one Lambda run can scan is checked in a few runs.
// A table not fenced that long (or with no registry entry) is read
// strongly consistent, and a stopped check of it keeps nothing, since
// writes may still change what its segments already read.
func (a *Archiver) CheckTable(ctx context.Context, table string) (diff string, err error) {
	if err := checkTableName(table); err != nil {
		return "", err
	}
	ctx, cancel := a.withDeadline(ctx)
	defer cancel()
	m, err := a.Manifest(ctx, table)
	if err != nil {
		return "", fmt.Errorf("check %q against its archive: %w", table, err)
	}
	got, err := a.scanTable(ctx, m, true)
	if errors.Is(err, storage.ErrTableNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("check %q against its archive: %w", table, err)
	}
	return tableDiff(got, m.ItemCount, m.ContentSHA256), nil
}

// tableDiff says how a scan of a table differs from its archive, "" when
// it does not.
func tableDiff(scan readResult, items int64, content string) string {
	if scan.count == items && scan.content == content {
		return ""
	}
	return fmt.Sprintf("the table holds %d items (content %s), the archive %d (content %s)",
		scan.count, short(scan.content), items, short(content))
}

// CheckProgress returns how many items the stopped check of a generation
// of table against its archive has read, waiting for the next CheckTable
// to resume it; 0 when there is none.
func (a *Archiver) CheckProgress(ctx context.Context, table string, generation int64) (int64, error) {
	cp, found, err := a.readCheckCheckpoint(ctx, table, generation)
	if err != nil || !found {
		return 0, err
	}
	var n int64
	for _, s := range cp.Segments {
		n += s.Items
	}
	return n, nil
}

// checkCheckpoint is how far a stopped check of a table against its
// archive got.
type checkCheckpoint struct {
	Version    int    `json:"version"`
	Table      string `json:"table"`
	Generation int64  `json:"generation"`
	// TableCreatedAt and FencedAt name the table and the fence its
	// segments were read under; ArchiveItems and ArchiveContent the
	// archive it is checked against. A checkpoint of another is ignored.
	TableCreatedAt time.Time `json:"table_created_at"`
	FencedAt       time.Time `json:"fenced_at"`
	ArchiveItems   int64     `json:"archive_items"`
	ArchiveContent string    `json:"archive_content"`
	// Segments are where each segment of the parallel scan stopped, and
	// what it read up to there.
	Segments []checkSegment `json:"segments"`
	SavedAt  time.Time      `json:"saved_at"`
}

// checkCheckpointVersion is the version of the check checkpoints this
// package writes.
const checkCheckpointVersion = 1

// checkSegment is the progress of one segment of a check's scan.
type checkSegment struct {
	// After is the key of the last item the segment read.
	After storage.Key `json:"after"`
	// Done is set once the segment was scanned to its end.
	Done bool `json:"done,omitempty"`
	// Items and Content are the count and content hash (ContentHash) of
	// the items it read.
	Items   int64  `json:"items"`
	Content string `json:"content"`
}

// checkCheckpointKey returns the key of a generation's check checkpoint.
func checkCheckpointKey(table string, generation int64) string {
	suffix := ""
	if generation > 1 {
		suffix = "-" + strconv.FormatInt(generation, 10)
	}
	return table + "/check" + suffix + ".checkpoint.json"
}

// readCheckCheckpoint reads a generation's check checkpoint; found is
// false when there is none.
func (a *Archiver) readCheckCheckpoint(ctx context.Context, table string, generation int64) (cp checkCheckpoint, found bool, err error) {
	r, err := a.target.get(ctx, checkCheckpointKey(table, generation))
	if errors.Is(err, ErrNotFound) {
		return checkCheckpoint{}, false, nil
	}
	if err != nil {
		return checkCheckpoint{}, false, err
	}
	defer r.Close()
	if err := json.NewDecoder(r).Decode(&cp); err != nil {
		return checkCheckpoint{}, false, fmt.Errorf("read check checkpoint of %q: %w: %v", table, ErrFormat, err)
	}
	return cp, true, nil
}

// tableScan is one scan of a table for its check: its segments'
// progress and content hashes. Each segment's goroutine touches only its
// own elements.
type tableScan struct {
	segments []checkSegment
	hashes   []ContentHash
}

// scanTable scans m's table in parallel segments and returns its items'
// count and content hash, as m's format version computes them, or an
// error wrapping storage.ErrTableNotFound when the table is gone. With
// resumable (CheckTable), a scan of a table fenced long enough
// (fencedFor) resumes from the check checkpoint of m's archive and, when
// it stops, saves one and returns an error wrapping ErrStopped.
func (a *Archiver) scanTable(ctx context.Context, m Manifest, resumable bool) (readResult, error) {
	info, err := a.store.DescribeTable(ctx, m.Table)
	if err != nil {
		return readResult{}, fmt.Errorf("scan %q: %w", m.Table, err)
	}
	fencedAt, settled, err := a.fencedFor(ctx, m.Table)
	if err != nil {
		return readResult{}, err
	}
	if m.FormatVersion == 1 {
		return a.scanSorted(ctx, m.Table, settled)
	}
	resumable = resumable && settled
	cpKey := checkCheckpointKey(m.Table, m.generation())
	scan := a.resumeCheck(ctx, m, info.CreatedAt, fencedAt, resumable)
	err = scan.run(ctx, a.store, m.Table, settled)
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			// A backend's error need not say that the deadline ended it.
			err = errors.Join(err, ctx.Err())
		}
		if !resumable || scan.items() == 0 {
			return readResult{}, fmt.Errorf("scan %q: %w", m.Table, err)
		}
		// Saved after the deadline too: what was read is kept for the
		// next check.
		keep, cancel := context.WithTimeout(context.WithoutCancel(ctx), checkpointTimeout)
		defer cancel()
		cp := checkCheckpoint{Version: checkCheckpointVersion, Table: m.Table, Generation: m.generation(),
			TableCreatedAt: info.CreatedAt, FencedAt: fencedAt, ArchiveItems: m.ItemCount, ArchiveContent: m.ContentSHA256,
			Segments: scan.segments, SavedAt: a.opts.Clock.Now().UTC()}
		b, merr := json.Marshal(cp)
		if merr == nil {
			merr = a.target.put(keep, cpKey, strings.NewReader(string(b)), int64(len(b)))
		}
		if merr != nil {
			return readResult{}, fmt.Errorf("scan %q: %w (and its checkpoint was not saved: %v)", m.Table, err, merr)
		}
		a.opts.Logger.Warn("check of a table against its archive stopped; the next resumes where it stopped",
			"table", m.Table, "items", scan.items(), "err", err)
		return readResult{}, fmt.Errorf("scan %q: stopped after %d items, kept for the next check to resume: %w: %w", m.Table, scan.items(), ErrStopped, err)
	}
	var total ContentHash
	for _, h := range scan.hashes {
		total.Merge(h)
	}
	if resumable {
		if err := a.target.del(ctx, cpKey); err != nil {
			a.opts.Logger.Warn("check checkpoint not removed", "table", m.Table, "err", err)
		}
	}
	return readResult{count: total.Count(), content: total.Sum()}, nil
}

// fencedFor returns when the registry says table was fenced, and whether
// that was Options.CheckSettle ago or more: no write lands in the table
// since, and every replica holds its last.
func (a *Archiver) fencedFor(ctx context.Context, table string) (fencedAt time.Time, settled bool, err error) {
	if a.opts.Facts == nil || a.opts.CheckSettle < 0 {
		return time.Time{}, false, nil
	}
	e, found, err := a.opts.Facts(ctx, table)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("registry entry of %q: %w", table, err)
	}
	if !found || !e.Fenced() {
		return time.Time{}, false, nil
	}
	return e.FencedAt, a.opts.Clock.Now().Sub(e.FencedAt) >= a.opts.CheckSettle, nil
}

// resumeCheck returns the scan of a check: from the checkpoint of m's
// archive when resumable and one of the same table, fence and archive is
// found, from the start otherwise.
func (a *Archiver) resumeCheck(ctx context.Context, m Manifest, created, fencedAt time.Time, resumable bool) *tableScan {
	fresh := func() *tableScan {
		n := max(a.opts.ScanSegments, 1)
		return &tableScan{segments: make([]checkSegment, n), hashes: make([]ContentHash, n)}
	}
	if !resumable {
		return fresh()
	}
	cp, found, err := a.readCheckCheckpoint(ctx, m.Table, m.generation())
	if err != nil || !found {
		if err != nil {
			a.opts.Logger.Warn("check checkpoint ignored", "table", m.Table, "err", err)
		}
		return fresh()
	}
	if cp.Version != checkCheckpointVersion || cp.Table != m.Table || cp.Generation != m.generation() ||
		!cp.TableCreatedAt.Equal(created) || !cp.FencedAt.Equal(fencedAt) ||
		cp.ArchiveItems != m.ItemCount || cp.ArchiveContent != m.ContentSHA256 ||
		len(cp.Segments) == 0 || len(cp.Segments) > storage.MaxSegments {
		a.opts.Logger.Warn("check checkpoint of another table, fence or archive ignored", "table", m.Table)
		return fresh()
	}
	scan := &tableScan{segments: cp.Segments, hashes: make([]ContentHash, len(cp.Segments))}
	for i, s := range cp.Segments {
		h, err := parseContentHash(s.Content, s.Items)
		if err != nil {
			a.opts.Logger.Warn("damaged check checkpoint ignored", "table", m.Table, "err", err)
			return fresh()
		}
		scan.hashes[i] = h
	}
	a.opts.Logger.Info("check of a table against its archive resumed", "table", m.Table, "items", scan.items())
	return scan
}

// items returns how many items the scan has read.
func (s *tableScan) items() int64 {
	var n int64
	for _, h := range s.hashes {
		n += h.Count()
	}
	return n
}

// run scans the segments that are not done, in parallel, each from
// where it stopped.
func (s *tableScan) run(ctx context.Context, store Store, table string, eventual bool) error {
	var wg sync.WaitGroup
	errs := make([]error, len(s.segments))
	for i := range s.segments {
		if s.segments[i].Done {
			continue
		}
		seg := storage.Segment{Index: i, Total: len(s.segments), After: s.segments[i].After, Eventual: eventual}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.scanSegment(ctx, store, table, seg)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// scanSegment reads one segment into its hash, moving its progress past
// each item.
func (s *tableScan) scanSegment(ctx context.Context, store Store, table string, seg storage.Segment) error {
	p, h := &s.segments[seg.Index], &s.hashes[seg.Index]
	defer func() { p.Items, p.Content = h.Count(), h.Sum() }()
	it := store.ScanSegment(ctx, table, seg)
	for it.Next() {
		item := it.Item()
		line, err := MarshalItem(item)
		if err != nil {
			it.Close()
			return err
		}
		h.Add(line)
		p.After = item.Key()
	}
	if err := errors.Join(it.Err(), it.Close()); err != nil {
		return err
	}
	p.Done = true
	return nil
}

// scanSorted scans a table in parallel segments into the content hash
// of manifests of format version 1, which keeps every item's digest and
// so is not checkpointed (version 1 archives were small).
func (a *Archiver) scanSorted(ctx context.Context, table string, eventual bool) (readResult, error) {
	var mu sync.Mutex
	content := newContentHasher(1)
	var wg sync.WaitGroup
	n := max(a.opts.ScanSegments, 1)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			it := a.store.ScanSegment(ctx, table, storage.Segment{Index: i, Total: n, Eventual: eventual})
			for it.Next() {
				line, err := MarshalItem(it.Item())
				if err != nil {
					it.Close()
					errs[i] = err
					return
				}
				mu.Lock()
				content.Add(line)
				mu.Unlock()
			}
			errs[i] = errors.Join(it.Err(), it.Close())
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return readResult{}, fmt.Errorf("scan %q: %w", table, err)
	}
	return readResult{count: content.Count(), content: content.Sum()}, nil
}
