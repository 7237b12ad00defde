package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/compact"
	"github.com/timetabledb/timetable/config"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/registry"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/pebblestore"
)

func newCompactCmd(g *globals) *cobra.Command {
	chunks := true
	cmd := &cobra.Command{
		Use:   "compact",
		Short: "Compact the embedded store to its smallest size on disk",
		Long: `compact first packs the tables of the families of the chunk layout:
events written one at a time (a row or a small chunk each) become one
chunk item per series and window, as the lifecycle packs a table once it
leaves the hot tier (docs/layouts.md, "Packed later"). It prints each
table it packed and the items it wrote and deleted; --chunks=false
leaves them as they are.

It then flushes the embedded (Pebble) store's memory tables to disk and
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
			if err == nil && chunks {
				var clk clock.Clock
				if clk, err = g.clock(); err == nil {
					err = packChunkTables(cmd.Context(), cmd.OutOrStdout(), cfg, store, clk.Now())
				}
			}
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
	cmd.Flags().BoolVar(&chunks, "chunks", true, "pack the events of chunk-layout families' tables into chunks first")
	return cmd
}

// packChunkTables compacts (package compact) every live table of the
// configuration's chunk-layout families, writing a line for each table
// it changed. The store is the command's alone, so no fence is needed.
func packChunkTables(ctx context.Context, w io.Writer, cfg config.Config, store storage.Store, now time.Time) error {
	reg := registryOf(cfg, store)
	for _, f := range cfg.Families {
		if f.Layout != family.LayoutChunk {
			continue
		}
		entries, err := reg.List(ctx, f.Name)
		if err != nil {
			return fmt.Errorf("pack the tables of family %q: %w", f.Name, err)
		}
		for _, e := range entries {
			if e.State != registry.Active {
				continue // an archived table stays as its archive has it
			}
			if e.ChunkWindow() == 0 {
				if e, err = reg.Save(ctx, compact.AsChunks(e, f.ChunkWindow)); err != nil {
					return fmt.Errorf("pack table %q: %w", e.Name, err)
				}
			}
			_, res, err := compact.Entry(ctx, store, reg, e, now, compact.Options{})
			if err != nil {
				return err
			}
			if res.Written+res.Deleted > 0 {
				if _, err := fmt.Fprintf(w, "%s: packed %d windows, %d chunk items written, %d items deleted\n", e.Name, res.Packed, res.Written, res.Deleted); err != nil {
					return err
				}
			}
		}
	}
	return nil
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
