package admission

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/tenant"
)

// ErrLimited is a request over one of its tenant's limits; a
// *LimitError says which, and when to try again.
var ErrLimited = errors.New("timetable: tenant over its limit")

// LimitError is a request over one of its tenant's limits.
type LimitError struct {
	// Limit names the limit, as the configuration and the admin API do
	// ("write_events_per_second").
	Limit string
	// Value is the limit's value for the tenant.
	Value float64
	// RetryAfter is when the same request may get in, at the soonest.
	RetryAfter time.Duration
	// Never is a request that can never fit: more than the burst.
	Never bool
}

func (e *LimitError) Error() string {
	if e.Never {
		return fmt.Sprintf("%s: this request alone is over %s = %v: split it", ErrLimited, e.Limit, e.Value)
	}
	return fmt.Sprintf("%s %s = %v: retry in %ds", ErrLimited, e.Limit, e.Value, RetrySeconds(e.RetryAfter))
}

// RetrySeconds returns a wait as a Retry-After says it: whole seconds,
// rounded up, at least one, since a client told to retry in 0 seconds
// retries at once, and is refused again.
func RetrySeconds(d time.Duration) int64 {
	return max(1, int64(math.Ceil(d.Seconds())))
}

// Is makes a *LimitError match ErrLimited.
func (e *LimitError) Is(target error) bool { return target == ErrLimited }

// Lookup returns the limits an operator set for a tenant (zero fields
// for the defaults).
type Lookup func(ctx context.Context, tenant string) (tenant.Limits, error)

// TenantsOptions configure Tenants.
type TenantsOptions struct {
	// Defaults are the limits of a tenant without overrides; a zero
	// field is no limit.
	Defaults tenant.Limits
	// Lookup reads a tenant's overrides; nil means none.
	Lookup Lookup
	// Refresh is how long a tenant's overrides are kept before Lookup
	// is asked again: a change made through the admin API holds on
	// every server within it. Zero means ten seconds.
	Refresh time.Duration
	// Clock tells the time of the rate limits and of Refresh; nil means
	// the wall clock.
	Clock clock.Clock
	// Logger receives Lookup's failures; nil means slog.Default().
	Logger *slog.Logger
}

// Tenants keeps each tenant's write rates, concurrent writes and
// concurrent queries. Its
// methods may be called from any number of goroutines at once.
type Tenants struct {
	opts TenantsOptions
	mu   struct {
		sync.Mutex
		byName map[string]*tenantState
	}
}

// tenantState is one tenant's limits and what it uses of them. Its
// fields are guarded by Tenants.mu.
type tenantState struct {
	limits  tenant.Limits
	fetched time.Time
	events  *rate.Limiter
	bytes   *rate.Limiter
	queries int
	// writes holds a turn per write request at work, of
	// limits.MaxConcurrentWrites; a new one is made when the limit
	// changes, the requests at work giving their turns back to the old.
	writes  chan struct{}
	nWrites int
}

// NewTenants returns the limits of tenants under opts.
func NewTenants(opts TenantsOptions) *Tenants {
	if opts.Refresh == 0 {
		opts.Refresh = 10 * time.Second
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	t := &Tenants{opts: opts}
	t.mu.byName = map[string]*tenantState{}
	return t
}

// Limits returns the limits that hold for a tenant: its overrides over
// the defaults.
func (t *Tenants) Limits(ctx context.Context, name string) tenant.Limits {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stateLocked(ctx, name).limits
}

// stateLocked returns a tenant's state, reading its overrides again once
// they are older than Refresh. Lookup runs under the lock: it is one
// read a tenant every Refresh.
func (t *Tenants) stateLocked(ctx context.Context, name string) *tenantState {
	now := t.opts.Clock.Now()
	st := t.mu.byName[name]
	if st != nil && now.Sub(st.fetched) < t.opts.Refresh {
		return st
	}
	limits := t.opts.Defaults
	if st != nil {
		limits = st.limits // the last known, should the lookup fail
	}
	if t.opts.Lookup != nil {
		over, err := t.opts.Lookup(ctx, name)
		switch {
		case err == nil:
			limits = over.Or(t.opts.Defaults)
		case errors.Is(err, tenant.ErrNotFound):
			limits = t.opts.Defaults
		default:
			t.opts.Logger.Warn("tenant limits not read; the last known hold", "tenant", name, "error", err)
		}
	}
	fresh := st == nil
	if fresh {
		// A new limiter starts with its burst whole.
		st = &tenantState{
			events: rate.NewLimiter(rateOf(limits.WriteEventsPerSecond, limits.WriteEventsBurst)),
			bytes:  rate.NewLimiter(rateOf(limits.WriteBytesPerSecond, limits.WriteBytesBurst)),
		}
		t.mu.byName[name] = st
	}
	st.fetched = now
	if fresh {
		st.limits = limits
	} else if st.limits != limits {
		st.limits = limits
		setRate(st.events, now, limits.WriteEventsPerSecond, limits.WriteEventsBurst)
		setRate(st.bytes, now, limits.WriteBytesPerSecond, limits.WriteBytesBurst)
	}
	return st
}

// setRate sets a limiter to perSecond with burst (see rateOf).
func setRate(l *rate.Limiter, now time.Time, perSecond float64, burst int) {
	limit, b := rateOf(perSecond, burst)
	l.SetLimitAt(now, limit)
	l.SetBurstAt(now, b)
}

// rateOf returns the limiter's rate and burst of a limit: a zero rate is
// no limit, and a zero burst one second's worth.
func rateOf(perSecond float64, burst int) (rate.Limit, int) {
	if perSecond <= 0 {
		return rate.Inf, math.MaxInt32
	}
	if burst <= 0 {
		burst = int(math.Ceil(perSecond))
	}
	return rate.Limit(perSecond), burst
}

// AllowWrite takes events and bytes from a tenant's write rates, or
// returns a *LimitError and takes nothing.
func (t *Tenants) AllowWrite(ctx context.Context, name string, events int, bytes int64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.stateLocked(ctx, name)
	now := t.opts.Clock.Now()
	ev := st.events.ReserveN(now, events)
	if err := limitError(ev, now, "write_events_per_second", st.limits.WriteEventsPerSecond, "write_events_burst", st.limits.WriteEventsBurst); err != nil {
		return err
	}
	by := st.bytes.ReserveN(now, int(min(bytes, math.MaxInt32)))
	if err := limitError(by, now, "write_bytes_per_second", st.limits.WriteBytesPerSecond, "write_bytes_burst", st.limits.WriteBytesBurst); err != nil {
		ev.CancelAt(now)
		return err
	}
	return nil
}

// CheckBytes returns the *LimitError AllowWrite would for a write of
// bytes, taking nothing: a server refuses a body over its tenant's byte
// rate before it decodes it, and takes the body's bytes with its events
// once decoded.
func (t *Tenants) CheckBytes(ctx context.Context, name string, bytes int64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.stateLocked(ctx, name)
	now := t.opts.Clock.Now()
	res := st.bytes.ReserveN(now, int(min(bytes, math.MaxInt32)))
	err := limitError(res, now, "write_bytes_per_second", st.limits.WriteBytesPerSecond, "write_bytes_burst", st.limits.WriteBytesBurst)
	if err == nil {
		res.CancelAt(now)
	}
	return err
}

// WaitWrite takes events and bytes from a tenant's write rates, waiting
// until they allow them or ctx ends: for a reader that slows down rather
// than refuses (an MQTT subscription). A write larger than a burst waits
// for the whole burst, and then goes. The rates give the delay by the
// Clock's time; the wait is a timer of the time package.
func (t *Tenants) WaitWrite(ctx context.Context, name string, events int, bytes int64) error {
	t.mu.Lock()
	st := t.stateLocked(ctx, name)
	now := t.opts.Clock.Now()
	var wait time.Duration
	for _, r := range []struct {
		l *rate.Limiter
		n int
	}{{st.events, events}, {st.bytes, int(min(bytes, math.MaxInt32))}} {
		n := min(r.n, r.l.Burst())
		res := r.l.ReserveN(now, n)
		if res.OK() {
			wait = max(wait, res.DelayFrom(now))
		}
	}
	t.mu.Unlock()
	if wait <= 0 {
		return nil
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// limitError returns the error of a reservation that does not let its
// request in now, cancelling it, or nil.
func limitError(res *rate.Reservation, now time.Time, rateName string, rateValue float64, burstName string, burst int) error {
	if !res.OK() {
		return &LimitError{Limit: burstName, Value: float64(burst), Never: true}
	}
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return &LimitError{Limit: rateName, Value: rateValue, RetryAfter: d}
	}
	return nil
}

// StartQuery counts a query of a tenant among its concurrent queries, or
// returns a *LimitError when it has its most running. The query calls
// done once it ends.
func (t *Tenants) StartQuery(ctx context.Context, name string) (done func(), err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.stateLocked(ctx, name)
	if most := st.limits.MaxConcurrentQueries; most > 0 && st.queries >= most {
		return nil, &LimitError{Limit: "max_concurrent_queries", Value: float64(most), RetryAfter: time.Second}
	}
	st.queries++
	return sync.OnceFunc(func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		st.queries--
	}), nil
}

// StartWrite takes a turn among a tenant's write requests at work,
// waiting until one is free or ctx ends, and returns the function that
// gives it back. Once ctx ends it returns a *LimitError naming
// max_concurrent_writes, or ctx's error when the caller went away.
func (t *Tenants) StartWrite(ctx, wait context.Context, name string) (done func(), err error) {
	t.mu.Lock()
	st := t.stateLocked(ctx, name)
	most := st.limits.MaxConcurrentWrites
	if most <= 0 {
		st.nWrites++
		t.mu.Unlock()
		return t.writeDone(st), nil
	}
	if st.writes == nil || cap(st.writes) != most {
		st.writes = make(chan struct{}, most)
	}
	turns := st.writes
	t.mu.Unlock()
	select {
	case turns <- struct{}{}:
	case <-wait.Done():
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &LimitError{Limit: "max_concurrent_writes", Value: float64(most), RetryAfter: time.Second}
	}
	t.mu.Lock()
	st.nWrites++
	t.mu.Unlock()
	counted := t.writeDone(st)
	return sync.OnceFunc(func() {
		<-turns
		counted()
	}), nil
}

// writeDone returns the function that counts a write of st done.
func (t *Tenants) writeDone(st *tenantState) func() {
	return sync.OnceFunc(func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		st.nWrites--
	})
}

// Writes returns the write requests of a tenant at work.
func (t *Tenants) Writes(name string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if st := t.mu.byName[name]; st != nil {
		return st.nWrites
	}
	return 0
}

// Queries returns the queries a tenant has running.
func (t *Tenants) Queries(name string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if st := t.mu.byName[name]; st != nil {
		return st.queries
	}
	return 0
}

// Forget drops what is known of a tenant's overrides, so that the next
// request reads them again: for the server that changed them.
func (t *Tenants) Forget(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if st := t.mu.byName[name]; st != nil {
		st.fetched = time.Time{}
	}
}

// Running returns the queries each tenant has running, for the tenants
// with some.
func (t *Tenants) Running() map[string]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]int{}
	for name, st := range t.mu.byName {
		if st.queries > 0 {
			out[name] = st.queries
		}
	}
	return out
}
