package registry

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/timetabledb/timetable/naming"
	"github.com/timetabledb/timetable/storage"
)

// RewriteStep is where a compaction into a table's next physical table
// (package compact, Rewrite) is.
type RewriteStep string

// The steps of a rewrite, in order.
const (
	// RewriteCopy: the events of the table being read (TableName) are
	// packed into the next table (Rewrite.Table).
	RewriteCopy RewriteStep = "copy"
	// RewriteVerify: the next table is read back and its events
	// compared with those copied.
	RewriteVerify RewriteStep = "verify"
	// RewriteDrop: the entry switched to the next table; the table it
	// replaced (Rewrite.Table) is to be deleted once readers that listed
	// it before the switch are done (Rewrite.SwitchedAt).
	RewriteDrop RewriteStep = "drop"
)

// Rewrite is the progress of a compaction that rewrites a table into a
// new physical table, saved on its entry at each step and checkpoint so
// that a run stopped at any point (a deadline, a kill) resumes.
type Rewrite struct {
	// Step is where the rewrite is.
	Step RewriteStep `json:"step"`
	// Table is the next physical table during copy and verify, and the
	// table replaced during drop.
	Table string `json:"table"`
	// After is where the step's scan resumes: the key of the last item of
	// the last group it finished; zero at the step's start. It is that
	// of a rewrite recorded before scans were parallel (Segments empty),
	// which resumes as one segment.
	After storage.Key `json:"after"`
	// Segments are, during copy and verify, where each segment of the
	// step's parallel scan is; their number is fixed when the copy
	// starts.
	Segments []RewriteSegment `json:"segments,omitempty"`
	// Source is what the copy read of the table being rewritten, in full
	// once the copy is done (during copy, each segment's Sum is its
	// part); Copy what verify read back of the next table.
	Source RewriteSum `json:"source"`
	Copy   RewriteSum `json:"copy"`
	// SwitchedAt is when the entry switched to the next table (drop).
	SwitchedAt time.Time `json:"switched_at,omitzero"`
}

// RewriteFailure records the rewrites of a table whose verification
// failed (the copy did not hold what the table held), so that the next is
// put off rather than tried on every lifecycle cycle.
type RewriteFailure struct {
	// Count is how many rewrites failed in a row; At when the last did,
	// Table the next table it made (deleted), Reason why.
	Count  int       `json:"count"`
	At     time.Time `json:"at"`
	Table  string    `json:"table"`
	Reason string    `json:"reason"`
	// RetryAt is when the next rewrite may start.
	RetryAt time.Time `json:"retry_at"`
}

// RewriteSegment is where one segment of a rewrite's parallel scan is
// (storage.Segment): the key of the last item of the last group it
// finished, what it read up to there, and whether it reached its end.
type RewriteSegment struct {
	After storage.Key `json:"after"`
	Sum   RewriteSum  `json:"sum"`
	Done  bool        `json:"done,omitempty"`
}

// RewriteSum counts and hashes what a rewrite read of one table: its
// events (each once, whatever items held it), and its other items
// (markers, the series index, rollups), copied as they are. The hashes are
// order-independent sums (archive.ContentHash), in hex; empty for none.
type RewriteSum struct {
	Events    int64  `json:"events"`
	EventHash string `json:"event_hash,omitempty"`
	Items     int64  `json:"items"`
	ItemHash  string `json:"item_hash,omitempty"`
}

// TableName returns the name of the physical table that holds the
// entry's events: Name, or the table a compaction rewrote it into
// (Physical).
func (e Entry) TableName() string {
	if e.Physical != "" {
		return e.Physical
	}
	return e.Name
}

// rewriteSep separates a table's name from the number of the rewrite
// that made it. A '.' is in no name a naming.Namer formats, so a
// rewritten table's name never parses as a family's: the listing of the
// store (Compare) knows it only through its entry.
const rewriteSep = ".r"

// NextTableName returns the name of the physical table a rewrite of the
// entry's table makes: its name followed by ".r" and the rewrite's number
// (1 for a table never rewritten), which must be a valid table name.
func (e Entry) NextTableName() (string, error) {
	n := 1
	if i := strings.LastIndex(e.TableName(), rewriteSep); e.Physical != "" && i >= 0 {
		k, err := strconv.Atoi(e.TableName()[i+len(rewriteSep):])
		if err != nil {
			return "", fmt.Errorf("table %q: rewritten table %q has no rewrite number", e.Name, e.Physical)
		}
		n = k + 1
	}
	name := e.Name + rewriteSep + strconv.Itoa(n)
	if err := naming.ValidTableName(name); err != nil {
		return "", fmt.Errorf("rewrite table %q: %w", e.Name, err)
	}
	return name, nil
}

func encodeRewriteFailure(f *RewriteFailure) (string, error) {
	if f == nil {
		return "", nil
	}
	b, err := json.Marshal(f)
	return string(b), err
}

func decodeRewriteFailure(s string) (*RewriteFailure, error) {
	if s == "" {
		return nil, nil
	}
	var f RewriteFailure
	if err := json.Unmarshal([]byte(s), &f); err != nil {
		return nil, fmt.Errorf("rewrite failure: %w", err)
	}
	return &f, nil
}

// encodeRewrite returns the attribute of an entry's rewrite: empty when
// none is under way.
func encodeRewrite(r *Rewrite) (string, error) {
	if r == nil {
		return "", nil
	}
	b, err := json.Marshal(r)
	return string(b), err
}

func decodeRewrite(s string) (*Rewrite, error) {
	if s == "" {
		return nil, nil
	}
	var r Rewrite
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return nil, fmt.Errorf("rewrite: %w", err)
	}
	return &r, nil
}
