package migrate

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/metatable"
	"github.com/timetabledb/timetable/storage"
)

// carried reports whether an item of the meta table, of partition pk, is
// one a migration copies: not a migration's record or checkpoint (the
// source's own, when it was a migration's target once) nor a lease.
func carried(pk string) bool { return !metatable.IsMigration(pk) && !metatable.IsLease(pk) }

// verify scans table t on both sides at once and compares their content
// hashes and counts. When they match it saves cp as verified and returns
// true; when they differ it logs both and returns false.
func (m *Migration) verify(ctx context.Context, t Table, cp *checkpoint) (bool, error) {
	var src, dst archive.ContentHash
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return contentHash(gctx, m.from, t, &src, "source") })
	g.Go(func() error { return contentHash(gctx, m.to, t, &dst, "target") })
	if err := g.Wait(); err != nil {
		return false, err
	}
	if src.Count() != dst.Count() || src.Sum() != dst.Sum() {
		m.opts.Logger.Warn("a table's copy differs from its source", "table", t.Name,
			"source_items", src.Count(), "source_hash", src.Sum(), "target_items", dst.Count(), "target_hash", dst.Sum())
		return false, nil
	}
	was := *cp
	cp.State, cp.Items, cp.Hash, cp.After = verified, src.Count(), src.Sum(), storage.Key{}
	if *cp == was {
		return true, nil
	}
	if err := m.saveCheckpoint(ctx, t.Name, *cp); err != nil {
		return false, err
	}
	return true, nil
}

// contentHash adds the items of table t in s to h: every item of a data
// table, the items a migration carries of the meta table.
func contentHash(ctx context.Context, s Store, t Table, h *archive.ContentHash, side string) error {
	it := s.Scan(ctx, t.Name)
	defer it.Close()
	for it.Next() {
		item := it.Item()
		if t.Meta && !carried(item.PK) {
			continue
		}
		line, err := archive.MarshalItem(item)
		if err != nil {
			return fmt.Errorf("hash the %s's table %q: %w", side, t.Name, err)
		}
		h.Add(line)
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("scan the %s's table %q: %w", side, t.Name, err)
	}
	return nil
}
