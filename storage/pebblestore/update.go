package pebblestore

import (
	"context"
	"errors"

	"github.com/timetabledb/timetable/storage"
)

// Update is being written (issue 5); this placeholder keeps the tree building.
func (s *Store) Update(ctx context.Context, u storage.Update) error { return errors.ErrUnsupported }
