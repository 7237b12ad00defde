package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/timetabledb/timetable/storage/pebblestore"
)

func newCompactCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "compact",
		Short: "Compact the embedded store to its smallest size on disk",
		Long: `compact flushes the embedded (Pebble) store's memory tables to disk and
compacts all its data into the bottom level, where the strongest
compression applies, then prints the size of the store's directory before
and after.

Pebble compacts on its own as events arrive; compact gives disk back at
once, after a tenant's or table's data were deleted, before copying the
store's directory, or to see what the data take. It rewrites the whole
store, so it takes time in proportion to its size. Like every command on
the store it needs the store to itself: stop timetable serve first.

DynamoDB keeps its own storage: compact refuses --store dynamodb, and
--server.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if raw := g.serverURL(); raw != "" {
				return usageErrorf("compact with --server %s: compact works on the store itself; stop the server and name its store with --store pebble:DIR", raw)
			}
			log, err := g.logger(cmd.ErrOrStderr(), slog.LevelWarn)
			if err != nil {
				return err
			}
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			spec := g.storeFor(cfg)
			dir, ok := strings.CutPrefix(spec, "pebble:")
			if !ok {
				return usageErrorf("compact --store %s: only the embedded store (pebble:DIR) is compacted; DynamoDB keeps its own storage", spec)
			}
			store, err := openStore(cmd.Context(), spec, storeOptions{logger: log, existing: true, pebble: cfg.Pebble})
			if err != nil {
				return err
			}
			before, err := dirSize(dir)
			if err == nil {
				err = store.(*pebblestore.Store).Compact(cmd.Context())
			}
			// The files compacted away are deleted by the time Close
			// returns.
			if err := errors.Join(err, store.Close()); err != nil {
				return err
			}
			after, err := dirSize(dir)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s: %s, %s before compacting\n", spec, mebibytes(after), mebibytes(before))
			return err
		},
	}
}

// dirSize returns the bytes of the files in dir and below. The store may
// be open, and Pebble deletes obsolete files in the background: a file
// gone between listing and sizing takes no space, and is not an error.
func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		n += info.Size()
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("size of %s: %w", dir, err)
	}
	return n, nil
}

// mebibytes formats a byte count in MiB, to one decimal.
func mebibytes(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
