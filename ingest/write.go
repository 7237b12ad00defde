package ingest

import (
	"context"
	"io"

	"github.com/timetabledb/timetable/admission"
	"github.com/timetabledb/timetable/engine"
)

// Write is one write on its way through the pipeline: what it holds of
// the server's budgets and of its tenant's turns. It is used by one
// goroutine; Done gives everything back.
type Write struct {
	p      *Pipeline
	tenant string
	mode   Mode
	// secret is the key the write was authenticated with, confirmed
	// again once its body has arrived; empty for a tenant configured
	// (WriteAs).
	secret string
	// body is what the write's body holds of Options.BodyBudget, nil
	// without one.
	body   *admission.Hold
	events *admission.Hold
	turn   func()
}

// Write starts a write of tenant, authenticated (Authenticate) with
// the key secret, in mode.
func (p *Pipeline) Write(tenant, secret string, mode Mode) *Write {
	w := &Write{p: p, tenant: tenant, mode: mode, secret: secret, events: p.opts.EventBudget.Hold(tenant)}
	if p.opts.BodyBudget != nil {
		w.body = p.opts.BodyBudget.Hold(tenant)
	}
	return w
}

// WriteAs starts a write of a tenant that no key names (an MQTT
// subscription's, set in its configuration), in mode; the tenant counts
// as active for the CPU pool.
func (p *Pipeline) WriteAs(tenant string, mode Mode) *Write {
	p.opts.CPU.Seen(tenant)
	return p.Write(tenant, "", mode)
}

// Tenant returns the tenant the write is of.
func (w *Write) Tenant() string { return w.tenant }

// wait returns the context a stage waits for room under, and its
// cancel: Options.Wait for Refuse, ctx for Wait, none for Try.
func (w *Write) wait(ctx context.Context) (context.Context, context.CancelFunc) {
	switch w.mode {
	case Wait:
		return ctx, func() {}
	case Try:
		ctx, cancel := context.WithCancel(ctx)
		cancel()
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, w.p.opts.Wait)
}

// takeTurn takes a turn among the tenant's write requests at work
// (tenant.Limits.MaxConcurrentWrites), waiting as the mode says, before
// the write's body is read. A write refused a turn gets a
// *admission.LimitError naming max_concurrent_writes, or ctx's error
// once the caller went away.
func (w *Write) takeTurn(ctx context.Context) error {
	if w.p.opts.Limits == nil {
		return nil
	}
	wctx, cancel := w.wait(ctx)
	defer cancel()
	done, err := w.p.opts.Limits.StartWrite(ctx, wctx, w.tenant)
	if err != nil {
		return err
	}
	w.turn = done
	return nil
}

// Run takes a write through every stage of the pipeline, in order (see
// the package documentation), for a protocol that hands over its body as
// a reader (the HTTP server): a turn among the tenant's writes, its body
// read under the body budget, admitted and decoded by dec (Admit), the
// tables checked together when dec is a TableChecker, and stored
// (Store). declared is the length of the body its sender declared, -1
// when unknown. It returns the events written.
//
// Its errors are Turn's, readBody's (*BodyTooLargeError, *ReadError, the
// body budget's) and Admit's, those that come before any of the body was
// read in an *UnreadError; dec's Refused; and Store's failure in a
// *StoreError.
func (w *Write) Run(ctx context.Context, body io.Reader, declared int64, dec Decoder) (int, error) {
	if err := w.takeTurn(ctx); err != nil {
		return 0, &UnreadError{Err: err}
	}
	buf, err := w.readBody(ctx, body, declared)
	if err != nil {
		return 0, err
	}
	tables, err := w.Admit(ctx, buf, dec)
	if err != nil {
		return 0, err
	}
	if c, ok := dec.(TableChecker); ok && len(tables) > 1 {
		// Every table is checked before any is written, so that a
		// refusal leaves nothing written, and names the problems of
		// every table.
		if err := c.Refused(w.Check(tables)); err != nil {
			return 0, err
		}
	}
	n, err := w.Store(ctx, tables)
	if err != nil {
		return n, &StoreError{Written: n, Err: err}
	}
	return n, nil
}

// StoreError is Run's write refused by the engine or failed in the
// store (Store's error), with the events written before it failed.
type StoreError struct {
	Written int
	Err     error
}

func (e *StoreError) Error() string { return e.Err.Error() }
func (e *StoreError) Unwrap() error { return e.Err }

// Admit lets in the body of a write once it has arrived whole, and
// decodes it with dec: it confirms the write's key, checks the body's
// bytes against the tenant's byte rate (Refuse), takes the estimate of
// its events out of the events budget, decodes it with a slot of the CPU
// pool, gives back what the body held of the body budget (the events
// hold nothing of it), checks Options.MaxEvents, trims the hold to what
// the events decoded take, and takes their events and bytes from the
// tenant's write rates. It returns the events, by table, which keep
// their hold until Done. A protocol handed a whole message (MQTT) calls
// it; Run calls it for a body it read.
//
// Its errors are the tenant directory's for a key no longer live, the
// budget's (admission.ErrFull, ErrTenantShare, ErrTooLarge), an
// *admission.LimitError of the rates, dec's own, a *TooManyEventsError,
// or ctx's.
func (w *Write) Admit(ctx context.Context, body []byte, dec Decoder) ([]engine.TableEvents, error) {
	defer func() { _ = w.holdBody(context.Background(), 0) }() // giving back never waits nor fails
	if w.secret != "" {
		if _, err := w.p.opts.TenantDirectory.Authenticate(ctx, w.secret); err != nil {
			return nil, err
		}
	}
	bytes := int64(len(body))
	if w.mode != Wait && w.p.opts.Limits != nil {
		if err := w.p.opts.Limits.CheckBytes(ctx, w.tenant, bytes); err != nil {
			return nil, err
		}
	}
	// An estimate over the whole budget takes the whole budget: it is
	// an upper bound, and what the body decodes to decides whether the
	// write is too large.
	budget := w.p.opts.EventBudget
	if err := w.resize(ctx, budget.Bound(admission.BodyBytes(body, dec.Format()))); err != nil {
		return nil, err
	}
	slot, err := w.p.opts.CPU.AcquireFor(ctx, w.tenant)
	if err != nil {
		return nil, err
	}
	tables, err := dec.Decode(body)
	slot()
	_ = w.holdBody(context.Background(), 0) // before the events' hold grows to what they take
	if err != nil {
		return nil, err
	}
	events := 0
	var need int64
	for _, t := range tables {
		events += t.Events.Len()
		need += admission.BatchBytes(t.Events)
	}
	if most := w.p.opts.MaxEvents; most > 0 && events > most {
		return nil, &TooManyEventsError{Events: events, Max: most}
	}
	if err := w.resize(ctx, need); err != nil {
		return nil, err
	}
	if err := w.rate(ctx, events, bytes); err != nil {
		return nil, err
	}
	return tables, nil
}

// resize makes the write's hold of the events budget n, waiting as the
// mode says.
func (w *Write) resize(ctx context.Context, n int64) error {
	if err := w.p.opts.EventBudget.Fits(n); err != nil {
		return err
	}
	wctx, cancel := w.wait(ctx)
	defer cancel()
	return w.events.Resize(wctx, n)
}

// rate takes events and bytes from the tenant's write rates: at once or
// refused (Refuse, Try), or once the rates allow them (Wait).
func (w *Write) rate(ctx context.Context, events int, bytes int64) error {
	l := w.p.opts.Limits
	if l == nil {
		return nil
	}
	if w.mode == Wait {
		return l.WaitWrite(ctx, w.tenant, events, bytes)
	}
	return l.AllowWrite(ctx, w.tenant, events, bytes)
}

// Check returns the engine's refusal of each table's events, nil for a
// table it takes: a dry run of Store that writes nothing (engine.DB.
// CheckWrite), for a protocol that names every problem of a write of
// several tables at once (line protocol) or sets aside the parts the
// engine refuses (MQTT). Store checks every table again before it
// writes any.
func (w *Write) Check(tables []engine.TableEvents) []error {
	errs := make([]error, len(tables))
	for i, t := range tables {
		errs[i] = w.p.db.CheckWrite(w.tenant, t.Table, t.Events)
	}
	return errs
}

// Store writes the events of every table in one engine.DB.WriteTables,
// with a slot of the CPU pool, its tenant active for the pool while it
// writes (a subscription's writes keep it so), and returns what that returns: the
// events written, and the engine's refusal (an *engine.TableError, the
// table budget's) or the store's failure.
func (w *Write) Store(ctx context.Context, tables []engine.TableEvents) (int, error) {
	slot, err := w.p.opts.CPU.AcquireFor(ctx, w.tenant)
	if err != nil {
		return 0, err
	}
	defer slot()
	w.p.opts.CPU.Seen(w.tenant)
	return w.p.db.WriteTables(ctx, w.tenant, tables)
}

// Done gives back what the write holds: its body's and its events'
// memory, and its turn. It is safe to call twice.
func (w *Write) Done() {
	if w.body != nil {
		w.body.Release()
	}
	w.events.Release()
	if w.turn != nil {
		w.turn()
		w.turn = nil
	}
}
