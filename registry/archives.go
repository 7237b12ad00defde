package registry

import (
	"encoding/json"
	"fmt"
)

// PastArchive is the verified archive of an earlier generation of a
// table: the generation, the target it was archived to and, for a table a
// compaction had rewritten, the physical table it was archived from
// (Entry.Physical), under whose name the archive is kept.
type PastArchive struct {
	Generation int64  `json:"generation"`
	Target     string `json:"target"`
	Physical   string `json:"physical,omitempty"`
}

// TableName returns the name of the physical table the archive was made
// of, under which the target keeps it: Physical, or the entry's name.
func (a PastArchive) TableName(name string) string {
	if a.Physical != "" {
		return a.Physical
	}
	return name
}

// pastArchives returns the archives of the generations up to and
// including e's that a next generation of its table carries
// (Entry.PastArchives): e's own, when its table is gone with a verified
// archive, after the ones e carries.
func (e Entry) pastArchives() []PastArchive {
	out := append([]PastArchive(nil), e.PastArchives...)
	if !e.State.Live() && e.ArchiveTarget != "" {
		out = append(out, PastArchive{Generation: e.Generation, Target: e.ArchiveTarget, Physical: e.Physical})
	}
	return out
}

// next turns n, an entry about to be registered as the next generation of
// e's table, into that generation, registered only while e is at the
// revision it was read at (Register).
func (e Entry) next(n Entry) Entry {
	n.Generation, n.Revision = e.Generation+1, e.Revision
	n.PastArchives = e.pastArchives()
	n.Physical, n.Rewrite, n.RewriteFailed = "", nil, nil
	return n
}

// encodePastArchives returns the attribute of an entry's past archives:
// empty when it has none, a JSON list otherwise.
func encodePastArchives(as []PastArchive) (string, error) {
	if len(as) == 0 {
		return "", nil
	}
	b, err := json.Marshal(as)
	return string(b), err
}

func decodePastArchives(s string) ([]PastArchive, error) {
	if s == "" {
		return nil, nil
	}
	var as []PastArchive
	if err := json.Unmarshal([]byte(s), &as); err != nil {
		return nil, fmt.Errorf("past archives: %w", err)
	}
	return as, nil
}
