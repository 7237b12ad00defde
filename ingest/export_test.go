package ingest

import "context"

// Turn takes the write's turn among its tenant's writes, the first stage
// of Run, for the tests of the turns alone.
func (w *Write) Turn(ctx context.Context) error { return w.takeTurn(ctx) }

// HoldBody makes what the write's body holds of the body budget n bytes,
// as Run does while it reads, for the tests of the body budget alone.
func (w *Write) HoldBody(ctx context.Context, n int64) error { return w.holdBody(ctx, n) }
