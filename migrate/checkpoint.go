package migrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/timetabledb/timetable/metatable"
	"github.com/timetabledb/timetable/storage"
)

// state is how far the copy of a table got.
type state string

const (
	// copying: the table is made or being made, and its items copied
	// up to After.
	copying state = "copying"
	// verified: every item is copied and the hashes matched.
	verified state = "verified"
)

// checkpoint is the record of a table's copy in the target's meta table
// (metatable.Migration).
type checkpoint struct {
	State state
	// After is the key of the last item copied; zero before the first.
	After storage.Key
	// Items counts the items copied up to After (the items of the table
	// once verified), Hash is the content hash verified.
	Items int64
	Hash  string
	// Retried is set once the table was copied again after its hashes
	// differed.
	Retried bool
}

// Attribute names of a checkpoint's item, and of the migration's record.
const (
	attrSource  = "source"
	attrState   = "state"
	attrAfterPK = "after_pk"
	attrAfterSK = "after_sk"
	attrItems   = "items"
	attrHash    = "hash"
	attrRetried = "retried"
)

// loadCheckpoint returns the checkpoint of table, and false when there
// is none.
func (m *Migration) loadCheckpoint(ctx context.Context, table string) (checkpoint, bool, error) {
	pk, sk := metatable.Migration(table)
	it, err := m.to.GetItem(ctx, m.opts.MetaTable, pk, sk)
	if errors.Is(err, storage.ErrItemNotFound) {
		return checkpoint{}, false, nil
	}
	if err != nil {
		return checkpoint{}, false, fmt.Errorf("read the checkpoint of %q: %w", table, err)
	}
	var cp checkpoint
	st, _ := it.Attrs[attrState].(string)
	cp.State = state(st)
	cp.After.PK, _ = it.Attrs[attrAfterPK].(string)
	cp.After.SK, _ = it.Attrs[attrAfterSK].(string)
	cp.Hash, _ = it.Attrs[attrHash].(string)
	cp.Retried, _ = it.Attrs[attrRetried].(bool)
	n, _ := it.Attrs[attrItems].(json.Number)
	cp.Items, err = strconv.ParseInt(string(n), 10, 64)
	if err != nil || (cp.State != copying && cp.State != verified) {
		return checkpoint{}, false, fmt.Errorf("the checkpoint of %q in %q does not parse (state %q, items %q)", table, m.opts.MetaTable, st, n)
	}
	return cp, true, nil
}

// saveCheckpoint writes the checkpoint of table.
func (m *Migration) saveCheckpoint(ctx context.Context, table string, cp checkpoint) error {
	pk, sk := metatable.Migration(table)
	attrs := map[string]any{
		attrState:   string(cp.State),
		attrItems:   json.Number(strconv.FormatInt(cp.Items, 10)),
		attrRetried: cp.Retried,
	}
	if cp.After != (storage.Key{}) {
		attrs[attrAfterPK], attrs[attrAfterSK] = cp.After.PK, cp.After.SK
	}
	if cp.Hash != "" {
		attrs[attrHash] = cp.Hash
	}
	if err := m.to.BatchWrite(ctx, m.opts.MetaTable, []storage.Item{{PK: pk, SK: sk, Attrs: attrs}}); err != nil {
		return fmt.Errorf("save the checkpoint of %q: %w", table, err)
	}
	return nil
}
