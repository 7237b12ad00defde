package archive

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
)

// List returns the manifest of every archive in the target, verified or
// not, in table-name order and, for a name, generation order. Exports that never finished have no manifest
// and are not listed.
func (a *Archiver) List(ctx context.Context) ([]Manifest, error) {
	var ms []Manifest
	err := a.target.list(ctx, isManifest, func(key string) error {
		m, err := a.readManifest(ctx, key)
		if err != nil {
			return err
		}
		ms = append(ms, m)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list archives in %s: %w", a.target, err)
	}
	slices.SortFunc(ms, func(x, y Manifest) int {
		return cmp.Or(strings.Compare(x.Table, y.Table), cmp.Compare(x.generation(), y.generation()))
	})
	return ms, nil
}
