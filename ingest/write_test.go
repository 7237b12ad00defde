package ingest_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/admission"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event/lineproto"
	"github.com/timetabledb/timetable/ingest"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/tenant"
)

var now = time.Date(2017, 4, 10, 14, 0, 0, 0, time.UTC)

// fixture is a pipeline over an engine on Pebble, with a tenant acme
// whose key is key.
type fixture struct {
	db       *engine.DB
	registry *tenant.Directory
	key      string
	rates    *clock.Manual
	// opts are the pipeline's options, defaults filled in.
	opts ingest.Options
}

// newPipeline returns a pipeline of opts, whose registry, limits and
// budget default to the fixture's: a budget of 1 MiB, acme limited to
// 10 events a second in bursts of 10, by the manual clock rates.
func newPipeline(t *testing.T, opts ingest.Options) (*fixture, *ingest.Pipeline) {
	t.Helper()
	store, cfg := backends.Pebble().Open(t)
	db, err := engine.Open(context.Background(), store, engine.Options{Schema: cfg, Clock: clock.NewManual(now)})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	f := &fixture{db: db, rates: clock.NewManual(now)}
	f.registry = tenant.New(store, db.Options().Schema.MetaTable, tenant.Options{Clock: db.Options().Clock})
	f.key, err = f.registry.Add(context.Background(), "acme", now)
	require.NoError(t, err)
	if opts.TenantDirectory == nil {
		opts.TenantDirectory = f.registry
	}
	if opts.EventBudget == nil {
		opts.EventBudget = admission.NewBudget("bytes of decoded events", 1<<20, 1)
	}
	if opts.Limits == nil {
		opts.Limits = admission.NewTenants(admission.TenantsOptions{Defaults: tenant.Limits{WriteEventsPerSecond: 10, WriteEventsBurst: 10, MaxConcurrentWrites: 1}, Clock: f.rates})
	}
	f.opts = opts
	p, err := ingest.New(db, opts)
	require.NoError(t, err)
	return f, p
}

// body is an NDJSON body of n events of series s, and its decoder.
func body(n int) ([]byte, ingest.Decoder) {
	var b []byte
	for i := range n {
		b = append(b, []byte(`{"time":"2017-04-10T13:00:0`+string(rune('0'+i%10))+`Z","series":"s","fields":{"v":1}}`+"\n")...)
	}
	return b, ingest.JSON{Table: "m", NDJSON: true, Now: now}
}

// admit is Write.Admit's error.
func admit(w *ingest.Write, body []byte, dec ingest.Decoder) error {
	_, err := w.Admit(context.Background(), body, dec)
	return err
}

// A write goes through every stage and is stored; what it held is given
// back once done.
func TestAWriteGoesThroughEveryStage(t *testing.T) {
	f, p := newPipeline(t, ingest.Options{MaxEvents: 100, Wait: time.Minute})
	ctx := context.Background()
	k, err := p.Authenticate(ctx, f.key)
	require.NoError(t, err)
	require.Equal(t, "acme", k.Tenant)
	w := p.Write(k.Tenant, f.key, ingest.Refuse)
	b, decode := body(3)
	n, err := w.Run(ctx, bytes.NewReader(b), int64(len(b)), decode)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	held, _ := f.opts.EventBudget.Used("acme")
	require.Positive(t, held, "the events hold their memory until done")
	require.Equal(t, 1, f.opts.Limits.Writes("acme"), "and the write its turn")
	w.Done()
	w.Done()
	held, _ = f.opts.EventBudget.Used("")
	require.Zero(t, held)
	require.Zero(t, f.opts.Limits.Writes("acme"))
}

// The refusals no wait cures come in every mode: more events than
// MaxEvents, events over the whole budget, a key revoked while the body
// arrived.
func TestWhatNeverFitsIsRefusedInEveryMode(t *testing.T) {
	for _, mode := range []ingest.Mode{ingest.Refuse, ingest.Wait, ingest.Try} {
		f, p := newPipeline(t, ingest.Options{MaxEvents: 2, EventBudget: admission.NewBudget("bytes", 1<<20, 1)})
		ctx := context.Background()
		b, decode := body(3)
		w := p.Write("acme", f.key, mode)
		var many *ingest.TooManyEventsError
		require.ErrorAs(t, admit(w, b, decode), &many)
		require.Equal(t, ingest.TooManyEventsError{Events: 3, Max: 2}, *many)
		w.Done()

		small := admission.NewBudget("bytes", admission.SmallestRequestBytes(1), 1)
		f, p = newPipeline(t, ingest.Options{EventBudget: small})
		b, decode = body(3)
		w = p.Write("acme", f.key, mode)
		require.ErrorIs(t, admit(w, b, decode), admission.ErrTooLarge)
		w.Done()

		keys, err := f.registry.Keys(ctx, "acme")
		require.NoError(t, err)
		w = p.Write("acme", f.key, mode)
		_, err = f.registry.Revoke(ctx, "acme", keys[0].ID, now)
		require.NoError(t, err)
		b, decode = body(1)
		require.ErrorIs(t, admit(w, b, decode), tenant.ErrUnknownKey)
		w.Done()
		all, _ := small.Used("")
		require.Zero(t, all)
	}
}

// What a write waits for when there is no room is its mode: Refuse and
// Try are refused (Refuse once Options.Wait has passed), Wait waits until
// there is room; the same for the tenant's rates and its turns.
func TestTheModeDecidesWaitOrRefuse(t *testing.T) {
	f, p := newPipeline(t, ingest.Options{Wait: time.Millisecond})
	ctx := context.Background()
	budget := f.opts.EventBudget
	require.NoError(t, budget.Acquire(ctx, "globex", budget.Size()))
	b, decode := body(1)
	for _, mode := range []ingest.Mode{ingest.Refuse, ingest.Try} {
		w := p.WriteAs("acme", mode)
		require.ErrorIs(t, admit(w, b, decode), admission.ErrFull)
		w.Done()
	}
	w := p.WriteAs("acme", ingest.Wait)
	admitted := make(chan error)
	go func() { admitted <- admit(w, b, decode) }()
	budget.Release("globex", budget.Size())
	require.NoError(t, <-admitted)
	w.Done()

	// The rates: acme's burst of 10 spent (1 by the write above),
	// Refuse is told when to retry, Wait waits for its reservation.
	b9, decode9 := body(9)
	w = p.Write("acme", f.key, ingest.Refuse)
	require.NoError(t, admit(w, b9, decode9))
	w.Done()
	w = p.Write("acme", f.key, ingest.Refuse)
	var le *admission.LimitError
	require.ErrorAs(t, admit(w, b, decode), &le)
	require.Equal(t, "write_events_per_second", le.Limit)
	w.Done()
	w = p.WriteAs("acme", ingest.Wait)
	// Its reservation is a second away: it waits that second on a
	// timer, then goes on.
	go func() { admitted <- admit(w, b, decode) }()
	require.NoError(t, <-admitted)
	w.Done()

	// The turns: one write of acme at work at once.
	first := p.Write("acme", f.key, ingest.Refuse)
	require.NoError(t, first.Turn(ctx))
	w = p.Write("acme", f.key, ingest.Refuse)
	require.ErrorAs(t, w.Turn(ctx), &le)
	require.Equal(t, "max_concurrent_writes", le.Limit)
	w.Done()
	w = p.WriteAs("acme", ingest.Wait)
	go func() { admitted <- w.Turn(ctx) }()
	first.Done()
	require.NoError(t, <-admitted)
	w.Done()
}

// Check names the engine's refusal of each table and writes nothing;
// Store refuses the whole write for one bad table.
func TestCheckNamesEachTablesRefusal(t *testing.T) {
	f, p := newPipeline(t, ingest.Options{})
	ctx := context.Background()
	b, decode := body(2)
	w := p.Write("acme", f.key, ingest.Refuse)
	defer w.Done()
	events, err := w.Admit(ctx, b, decode)
	require.NoError(t, err)
	tables := []engine.TableEvents{{Table: "good", Events: events[0].Events}, {Table: "no#hash", Events: events[0].Events}}
	errs := w.Check(tables)
	require.NoError(t, errs[0])
	require.ErrorIs(t, errs[1], engine.ErrBadTableName)
	n, err := w.Store(ctx, tables)
	var te *engine.TableError
	require.ErrorAs(t, err, &te)
	require.Equal(t, 1, te.Index)
	require.Zero(t, n)
	ts, err := f.db.LogicalTables(ctx, "acme")
	require.NoError(t, err)
	require.Empty(t, ts, "nothing written")
}

// A body's bytes are held in the body budget as they arrive, waiting as
// the mode says, and given back with the rest once the write is done.
func TestABodyIsHeldInTheBodyBudget(t *testing.T) {
	bodies := admission.NewBudget("bytes of request bodies", 1000, 1)
	f, p := newPipeline(t, ingest.Options{BodyBudget: bodies, Wait: time.Millisecond})
	ctx := context.Background()
	w := p.Write("acme", f.key, ingest.Refuse)
	require.NoError(t, w.HoldBody(ctx, 600))
	require.NoError(t, w.HoldBody(ctx, 800))
	other := p.Write("globex", "", ingest.Refuse)
	require.ErrorIs(t, other.HoldBody(ctx, 300), admission.ErrFull)
	require.ErrorIs(t, other.HoldBody(ctx, 1001), admission.ErrTooLarge)
	held, _ := bodies.Used("acme")
	require.Equal(t, int64(800), held)
	w.Done()
	require.NoError(t, other.HoldBody(ctx, 300))
	other.Done()
	all, _ := bodies.Used("")
	require.Zero(t, all)
}

// failing is a reader that fails after its bytes.
type failing struct{ r io.Reader }

func (f failing) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, errors.New("connection reset")
	}
	return n, err
}

// Run reads a body under the body budget and the limit of its size, and
// gives the body's bytes back once it is decoded; what it refuses
// before reading a byte says so (UnreadError), a reader's failure is a
// ReadError, and a TableChecker (line protocol) names every table's
// refusal before anything is stored.
func TestRunReadsTheBody(t *testing.T) {
	bodies := admission.NewBudget("bytes of request bodies", 1<<20, 1)
	f, p := newPipeline(t, ingest.Options{BodyBudget: bodies, MaxBodyBytes: 1000, Wait: time.Millisecond})
	ctx := context.Background()
	run := func(r io.Reader, declared int64, dec ingest.Decoder) (int, error) {
		w := p.Write("acme", f.key, ingest.Refuse)
		defer w.Done()
		n, err := w.Run(ctx, r, declared, dec)
		_, held := bodies.Used("acme")
		require.Zero(t, held, "the body's bytes given back")
		return n, err
	}
	b, dec := body(3)
	n, err := run(bytes.NewReader(b), -1, dec)
	require.NoError(t, err)
	require.Equal(t, 3, n)

	big, _ := body(20)
	_, err = run(bytes.NewReader(big), -1, dec)
	var large *ingest.BodyTooLargeError
	require.ErrorAs(t, err, &large)
	require.Equal(t, int64(1000), large.Max)

	_, err = run(failing{bytes.NewReader(b)}, -1, dec)
	var re *ingest.ReadError
	require.ErrorAs(t, err, &re)
	require.EqualError(t, re.Err, "connection reset")

	require.NoError(t, bodies.Acquire(ctx, "globex", bodies.Size()))
	_, err = run(bytes.NewReader(b), int64(len(b)), dec)
	var unread *ingest.UnreadError
	require.ErrorAs(t, err, &unread)
	require.ErrorIs(t, err, admission.ErrFull)
	bodies.Release("globex", bodies.Size())

	lines := []byte("good v=1 1491829200000000000\nno#hash v=1 1491829200000000000\nno#hash v=2 1491829201000000000\n")
	_, err = run(bytes.NewReader(lines), int64(len(lines)), &ingest.LineProtocol{Options: lineproto.Options{Now: now}})
	var le *lineproto.Error
	require.ErrorAs(t, err, &le)
	require.Len(t, le.Problems, 2)
	require.Equal(t, 2, le.Problems[0].Line)
	require.Contains(t, le.Problems[0].Reason, "is not a table name")
	ts, err := f.db.LogicalTables(ctx, "acme")
	require.NoError(t, err)
	require.Len(t, ts, 1, "nothing of the refused write")
	require.Equal(t, "m", ts[0].Name)
}
