package migrate

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/timetabledb/timetable/storage"
)

// table copies and verifies one table, resuming from its checkpoint.
func (m *Migration) table(ctx context.Context, t Table) (TableReport, error) {
	cp, found, err := m.loadCheckpoint(ctx, t.Name)
	if err != nil {
		return TableReport{}, err
	}
	if !found && !t.Meta {
		// A table on the target the migration did not make is someone's.
		_, err := m.to.DescribeTable(ctx, t.Name)
		if err == nil {
			return TableReport{}, fmt.Errorf("%w: it has a table %q, which this migration did not make: migrate into a store without it", ErrTargetInUse, t.Name)
		}
		if !errors.Is(err, storage.ErrTableNotFound) {
			return TableReport{}, fmt.Errorf("describe the target's table %q: %w", t.Name, err)
		}
	}
	if !found {
		// Saved before the table is made: a kill between the two resumes.
		cp = checkpoint{State: copying}
		if err := m.saveCheckpoint(ctx, t.Name, cp); err != nil {
			return TableReport{}, err
		}
	}
	r := TableReport{Name: t.Name}
	if cp.State == verified {
		m.opts.Progress(int(cp.Items))
		ok, err := m.verify(ctx, t, &cp)
		if err != nil || ok {
			r.Items, r.Hash = cp.Items, cp.Hash
			return r, err
		}
		// The source changed since: copy it again.
		cp = checkpoint{State: copying}
	} else if cp.Items > 0 {
		m.opts.Progress(int(cp.Items))
		m.opts.Logger.Info("resuming the copy of a table", "table", t.Name, "items", cp.Items)
	}
	if err := m.to.CreateTable(ctx, t.Spec); err != nil && !errors.Is(err, storage.ErrTableExists) {
		return r, fmt.Errorf("create the target's table %q: %w", t.Name, err)
	}
	for {
		n, err := m.copy(ctx, t, &cp)
		r.Copied += n
		if err != nil {
			return r, err
		}
		ok, err := m.verify(ctx, t, &cp)
		if err != nil {
			return r, err
		}
		if ok {
			r.Items, r.Hash = cp.Items, cp.Hash
			m.opts.Logger.Info("table copied and verified", "table", t.Name, "items", cp.Items, "hash", cp.Hash)
			return r, nil
		}
		if cp.Retried {
			return r, fmt.Errorf("%w: table %q, copied twice", ErrDiffers, t.Name)
		}
		cp = checkpoint{State: copying, Retried: true}
		if err := m.saveCheckpoint(ctx, t.Name, cp); err != nil {
			return r, err
		}
	}
}

// copy copies the items of table t after cp.After, a page at a time,
// saving cp after each, and returns how many it wrote.
func (m *Migration) copy(ctx context.Context, t Table, cp *checkpoint) (int64, error) {
	var it storage.Iterator
	if cp.After == (storage.Key{}) {
		it = m.from.Scan(ctx, t.Name)
	} else {
		it = m.from.ScanAfter(ctx, t.Name, cp.After)
	}
	defer it.Close()
	var (
		page   = make([]storage.Item, 0, min(m.opts.PageItems, 1024))
		bytes  int
		last   storage.Key
		copied int64
	)
	flush := func() error {
		if last == (storage.Key{}) {
			return nil
		}
		if err := m.write(ctx, t.Name, page); err != nil {
			return err
		}
		cp.After = last
		cp.Items += int64(len(page))
		if err := m.saveCheckpoint(ctx, t.Name, *cp); err != nil {
			return err
		}
		m.opts.Progress(len(page))
		m.opts.Logger.Debug("page copied", "table", t.Name, "items", cp.Items)
		copied += int64(len(page))
		clear(page)
		page, bytes, last = page[:0], 0, storage.Key{}
		return nil
	}
	for it.Next() {
		item := it.Item()
		last = item.Key()
		if t.Meta && !carried(item.PK) {
			continue
		}
		page = append(page, item)
		bytes += storage.ItemSize(item)
		if len(page) >= m.opts.PageItems || bytes >= m.opts.PageBytes {
			if err := flush(); err != nil {
				return copied, err
			}
		}
	}
	if err := it.Err(); err != nil {
		return copied, fmt.Errorf("scan the source's table %q: %w", t.Name, err)
	}
	if err := flush(); err != nil {
		return copied, err
	}
	return copied, nil
}

// batchItems is the most items of one BatchWriteItem request, the
// bites the write budget is taken in.
const batchItems = 25

// write writes a page into the target's table: Options.Writers parts of
// it at once, each within the budget of write units when there is one,
// and returns once every item of the page is written.
func (m *Migration) write(ctx context.Context, table string, page []storage.Item) error {
	if len(page) == 0 {
		return nil
	}
	part := max(batchItems, (len(page)+m.opts.Writers-1)/m.opts.Writers)
	g, gctx := errgroup.WithContext(ctx)
	for from := 0; from < len(page); from += part {
		items := page[from:min(from+part, len(page))]
		g.Go(func() error { return m.writePart(gctx, table, items) })
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("write %d items into the target's table %q: %w", len(page), table, err)
	}
	return nil
}

// writePart writes items, a BatchWriteItem's 25 at a time once the
// budget has their write units when there is a budget.
func (m *Migration) writePart(ctx context.Context, table string, items []storage.Item) error {
	if m.writes == nil {
		return m.to.BatchWrite(ctx, table, items)
	}
	for len(items) > 0 {
		batch := items[:min(batchItems, len(items))]
		items = items[len(batch):]
		units := 0
		for _, it := range batch {
			units += storage.WriteUnits(storage.ItemSize(it))
		}
		for units > 0 {
			n := min(units, m.writes.Burst())
			if err := m.writes.WaitN(ctx, n); err != nil {
				return fmt.Errorf("wait for write units: %w", err)
			}
			units -= n
		}
		if err := m.to.BatchWrite(ctx, table, batch); err != nil {
			return err
		}
	}
	return nil
}
