package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"syscall"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/config"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/dynamostore"
	"github.com/timetabledb/timetable/storage/pebblestore"
)

// defaultPebbleDir is where the embedded store lives without --store.
const defaultPebbleDir = "./timetable-data"

// storeOptions say how to open a store.
type storeOptions struct {
	logger *slog.Logger
	clock  clock.Clock
	// existing refuses to create an embedded store: a command that only
	// reads has nothing to read in a directory that is not there.
	existing bool
	// pebble are the embedded store's sizes (the configuration's
	// "pebble" key); zero fields are pebblestore's defaults.
	pebble config.PebbleSizes
	// registerer receives the DynamoDB store's metrics; nil for none.
	registerer prometheus.Registerer
}

// openStore opens the store a --store value names: "pebble:DIR" for the
// embedded store in DIR, "dynamodb" for DynamoDB through the standard AWS
// configuration chain (AWS_REGION, AWS_PROFILE, the credential sources,
// AWS_ENDPOINT_URL_DYNAMODB), and "" for pebble:./timetable-data.
func openStore(ctx context.Context, spec string, o storeOptions) (storage.Store, error) {
	if spec == "" {
		spec = "pebble:" + defaultPebbleDir
	}
	kind, dir, _ := strings.Cut(spec, ":")
	switch {
	case kind == "pebble" && dir != "":
		if o.existing {
			if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("no store in %s: write events first, or name the store with --store", dir)
			}
		}
		s, err := pebblestore.Open(dir, pebblestore.Options{
			Logger: o.logger, Clock: o.clock,
			MemTableSize: o.pebble.MemTableSize, WALPreallocateSize: o.pebble.WALPreallocateSize, CacheSize: o.pebble.CacheSize,
		})
		if isLocked(err) {
			return nil, fmt.Errorf("store %s is in use, is `timetable serve` running? Stop it, or go through it with --server URL (or %s): %w", spec, EnvServer, err)
		}
		return s, err
	case spec == "dynamodb":
		return dynamostore.Open(ctx, dynamostore.Options{Logger: o.logger, Registerer: o.registerer})
	}
	return nil, usageErrorf("--store %q: use pebble:DIR or dynamodb", spec)
}

// isLocked reports whether opening a Pebble store failed because another
// process (EAGAIN from the lock file's fcntl) or this one holds it.
func isLocked(err error) bool {
	return err != nil && (errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) ||
		strings.Contains(err.Error(), "lock held by current process"))
}
