package archive

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// List returns the manifest of every archive in the target, verified or
// not, in table-name order. Exports that never finished have no manifest
// and are not listed.
func (a *Archiver) List(ctx context.Context) ([]Manifest, error) {
	var ms []Manifest
	err := a.target.list(ctx, ManifestObject, func(key string) error {
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
	slices.SortFunc(ms, func(x, y Manifest) int { return strings.Compare(x.Table, y.Table) })
	return ms, nil
}
