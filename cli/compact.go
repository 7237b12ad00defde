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
	every := 0
	retry := false
	cmd := &cobra.Command{
		Use:   "compact",
		Short: "Pack the chunk families' tables, and compact the embedded store to its smallest size on disk",
		Long: `compact first packs the tables of the families of the chunk layout:
events written one at a time (a row or a small chunk each) become one
chunk item per series and window, as the lifecycle packs a table once it
leaves the hot tier (docs/layouts.md, "Packed later"). It prints each
table it packed and the items it wrote and deleted; --chunks=false
leaves them as they are. On DynamoDB (--store dynamodb) each table is
rewritten instead into its next physical table (NAME.r1, then .r2...):
its events packed into the new table, read back and verified (the count
and an order-independent hash of its events and other items), the
registry entry switched to it, and the old table deleted, since deleting
a table is free and deleting its items one by one is not. A run stopped
at any point (a kill) resumes where the registry entry says it was. A
rewrite whose copy does not verify keeps the table and deletes the copy,
and the next rewrite of that table waits (an hour, doubling up to a week):
compact names such a table as put off, and --retry rewrites it now.

It then flushes the embedded (Pebble) store's memory tables to disk and
compacts all its data into the bottom level, where the strongest
compression applies, then prints the size of the store's directory before
and after.

Pebble compacts on its own as events arrive; compact gives disk back at
once, after a tenant's or table's data were deleted, before copying the
store's directory, or to see what the data take. It rewrites the whole
store, so it takes time in proportion to its size. Like every command on
the store it needs the store to itself: stop timetable serve first.

DynamoDB keeps its own storage: there compact only packs. It refuses
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
			if !ok && !chunks {
				return usageErrorf("compact --store %s --chunks=false: only the embedded store (pebble:DIR) is compacted on disk; DynamoDB keeps its own storage", spec)
			}
			store, err := openStore(cmd.Context(), spec, storeOptions{logger: log, existing: true, pebble: cfg.Pebble})
			if err != nil {
				return err
			}
			if !ok {
				clk, err := g.clock()
				if err == nil {
					err = packChunkTables(cmd.Context(), cmd.OutOrStdout(), log, cfg, store, clk.Now(), compact.Options{CheckpointEvery: every, Retry: retry})
				}
				return errors.Join(err, store.Close())
			}
			before, err := dirSize(dir)
			if err == nil && chunks {
				var clk clock.Clock
				if clk, err = g.clock(); err == nil {
					err = packChunkTables(cmd.Context(), cmd.OutOrStdout(), log, cfg, store, clk.Now(), compact.Options{CheckpointEvery: every, Retry: retry})
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
	cmd.Flags().IntVar(&every, "checkpoint-windows", 0, "windows packed between the checkpoints saved on a table's registry entry (0: 256)")
	cmd.Flags().BoolVar(&retry, "retry", false, "rewrite now the tables whose last rewrite did not verify, without waiting for their delay")
	return cmd
}

// packChunkTables compacts (package compact) every live table of the
// configuration's chunk-layout families, in place or into its next
// physical table (compactionOf), writing a line for each table it
// changed. The store is the command's alone, so no fence is needed, and
// the old table of a rewrite is deleted at once. A table whose rewrite is
// put off after a failed verification (compact.ErrRetryLater) is named
// and left, unless opts.Retry.
func packChunkTables(ctx context.Context, w io.Writer, log *slog.Logger, cfg config.Config, store storage.Store, now time.Time, opts compact.Options) error {
	reg := loggedEntries{registryOf(cfg, store), log}
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
			method := compactionOf(store)
			if method == compact.NextGeneration && e.Rewrite == nil && !e.ChunkedAt.IsZero() && e.Settled(e.ChunkedAt) {
				continue // rewritten once it took no more writes: a rewrite copies the whole table
			}
			if e.ChunkWindow() == 0 {
				if e, err = reg.Save(ctx, compact.AsChunks(e, f.ChunkWindow)); err != nil {
					return fmt.Errorf("pack table %q: %w", e.Name, err)
				}
			}
			opts.Method = method
			e, res, err := compact.Entry(ctx, store, reg, e, now, opts)
			if errors.Is(err, compact.ErrRetryLater) {
				if _, err := fmt.Fprintf(w, "%s: put off: %v (--retry rewrites it now)\n", e.Name, err); err != nil {
					return err
				}
				continue
			}
			if err != nil {
				return err
			}
			if res.Dropped != "" {
				if _, err := fmt.Fprintf(w, "%s: rewritten into %s, %d events verified, %d windows packed, %d items written; %s deleted\n", e.Name, e.TableName(), res.Events, res.Packed, res.Written, res.Dropped); err != nil {
					return err
				}
				continue
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

// loggedEntries is the registry, logging each save of a compaction's
// progress at debug level.
type loggedEntries struct {
	*registry.Registry
	log *slog.Logger
}

func (l loggedEntries) Save(ctx context.Context, e registry.Entry) (registry.Entry, error) {
	saved, err := l.Registry.Save(ctx, e)
	step, at := "", e.CompactAfter
	if e.Rewrite != nil {
		step, at = string(e.Rewrite.Step), e.Rewrite.After
	}
	l.log.Debug("compaction progress saved", "table", e.Name, "holds", e.TableName(), "step", step, "after", at.SK, "err", err)
	return saved, err
}
