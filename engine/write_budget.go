package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/period"
	"github.com/timetabledb/timetable/storage"
)

// TableBudget bounds the physical tables that writes make, which every
// tenant pays for: a table per period, a DynamoDB account holding 2,500
// by default (10,000 at most) for every tenant of the store. A write is
// refused whole, before anything is written, when its events are older
// than the backfill horizon or would make more new tables than the
// budget allows. The lifecycle's tables (prebuilt for current periods)
// do not count, and are never refused by it. The zero value of each
// field is its default.
type TableBudget struct {
	// BackfillHorizon is how old an event may be, by its time, when it
	// is written: an older one is refused (400, naming the event and the
	// setting). Zero means DefaultBackfillHorizon; NoBackfillHorizon
	// turns it off.
	BackfillHorizon time.Duration
	// MaxNewTablesPerRequest bounds the physical tables one write may
	// make, counted over every logical table it names (WriteTables: a
	// line protocol body, a batch of MQTT messages); zero means
	// DefaultMaxNewTablesPerRequest.
	MaxNewTablesPerRequest int
	// MaxNewTablesPerTenantHour bounds the physical tables the writes of
	// one tenant make in each clock hour (UTC). The count is kept in the
	// meta table, so it holds for every server on the store together
	// and across restarts. A write that needs more than this alone is
	// refused as ErrTooManyNewTables, since no wait makes room for it;
	// zero means DefaultMaxNewTablesPerTenantHour.
	MaxNewTablesPerTenantHour int
	// TableQuota is the account's quota of tables, DynamoDB's "Table
	// count for this account" (storage.DefaultTableQuota unless raised
	// in Service Quotas); zero means storage.DefaultTableQuota. Writes
	// make tables only while the store holds fewer than
	// TableQuotaWriteShare of it, so that the last tenth stays for the
	// lifecycle's tables of current periods; at TableQuotaWarnShare the
	// engine logs a warning, as timetable plan warns.
	TableQuota int
}

// Defaults of TableBudget.
const (
	DefaultBackfillHorizon           = 365 * 24 * time.Hour
	DefaultMaxNewTablesPerRequest    = 100
	DefaultMaxNewTablesPerTenantHour = 200
	// NoBackfillHorizon, as TableBudget.BackfillHorizon, takes events of
	// any age (from 1970, event's limit).
	NoBackfillHorizon time.Duration = 1<<63 - 1
)

// Shares of TableBudget.TableQuota, in percent: the warning of timetable
// plan (planner.TableQuotaWarnPercent), and how much of the quota writes
// may fill with tables.
const (
	TableQuotaWarnPercent  = 80
	TableQuotaWritePercent = 90
)

// Errors of the table budget; each refusal names its setting.
var (
	// ErrTooManyNewTables marks a write that would make more physical
	// tables than one request may: a client error (400).
	ErrTooManyNewTables = errors.New("timetable: the request would make too many new tables")
	// ErrTableRate marks a write refused because its tenant made as many
	// tables in this clock hour as it may: a TableRateError says when
	// the next hour starts (429 with Retry-After).
	ErrTableRate = errors.New("timetable: the tenant made too many new tables in this hour")
	// ErrNearTableQuota marks a write that needs a new table while the
	// account's tables are near its quota: a retry does not cure it,
	// raising the quota or keeping fewer tables does (403).
	ErrNearTableQuota = errors.New("timetable: the account's tables are near its quota")
)

// TableRateError is ErrTableRate with the time until the next hour,
// when the tenant may make the tables its write needs.
type TableRateError struct {
	Msg        string
	RetryAfter time.Duration
}

func (e *TableRateError) Error() string { return e.Msg }

// Is reports that a TableRateError is ErrTableRate.
func (e *TableRateError) Is(target error) bool { return target == ErrTableRate }

func (b *TableBudget) ensureDefaults() {
	if b.BackfillHorizon == 0 {
		b.BackfillHorizon = DefaultBackfillHorizon
	}
	if b.MaxNewTablesPerRequest == 0 {
		b.MaxNewTablesPerRequest = DefaultMaxNewTablesPerRequest
	}
	if b.MaxNewTablesPerTenantHour == 0 {
		b.MaxNewTablesPerTenantHour = DefaultMaxNewTablesPerTenantHour
	}
	if b.TableQuota == 0 {
		b.TableQuota = storage.DefaultTableQuota
	}
}

func (b *TableBudget) validate() error {
	if b.BackfillHorizon < 0 || b.MaxNewTablesPerRequest < 0 || b.MaxNewTablesPerTenantHour < 0 || b.TableQuota < 0 {
		return fmt.Errorf("timetable: the table budget's settings must not be negative: %+v", *b)
	}
	return nil
}

// horizonProblem says why an event of time t written at now is past the
// backfill horizon, or "".
func (b *TableBudget) horizonProblem(t, now time.Time) string {
	if b.BackfillHorizon == NoBackfillHorizon || !t.Before(now.Add(-b.BackfillHorizon)) {
		return ""
	}
	reason := fmt.Sprintf("time %s is older than the backfill horizon of %s (backfill_horizon in the configuration, engine.TableBudget.BackfillHorizon)",
		t.UTC().Format(time.RFC3339Nano), formatDays(b.BackfillHorizon))
	if t.Before(unitMistakes) {
		reason += precisionHint
	}
	return reason
}

// unitMistakes is the first instant not taken for a time in a coarser
// unit read in a finer one: Unix seconds, milliseconds and microseconds
// read as nanoseconds (line protocol's default) or milliseconds land in
// 1970, and seconds read as microseconds before 2001.
var unitMistakes = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)

// precisionHint ends the reason of a time refused before unitMistakes,
// as package event's message of a time before 2001 does.
const precisionHint = "; a time before 2001 is most often Unix seconds, milliseconds or microseconds read in a finer unit: say the precision, precision=s, ms or us"

// formatDays writes a whole number of days as the configuration does.
func formatDays(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return d.String()
}

// tableBudget is the state of a TableBudget this engine keeps: the
// account's table count, and the tenants' counts of the hour that
// refused a write. The tables each tenant made in the hour are
// counted in the meta table (write_budget_hour.go), for every server
// on the store.
type tableBudget struct {
	TableBudget
	mu struct {
		sync.Mutex
		// count is the store's tables when last listed (counted), plus
		// those made since.
		count   int
		counted time.Time
		// spent holds, by tenant, the count of the hour a charge was
		// last refused by, to refuse again without asking the meta
		// table (spentHour).
		spent map[string]spentHour
	}
}

// tableCountTTL is how long the store's table count is trusted before
// it is listed again (the tables this engine makes are added to it).
const tableCountTTL = time.Minute

func newTableBudget(b TableBudget) *tableBudget {
	tb := &tableBudget{TableBudget: b}
	tb.mu.spent = map[string]spentHour{}
	return tb
}

// admitNewTables refuses a write whose parts would together make more
// physical tables than the budget allows, before anything is written,
// and charges the tenant's hour for those they make. Tables the engine
// knows, or finds in the registry, cost nothing, so a write that makes
// no table is never refused here.
func (db *DB) admitNewTables(ctx context.Context, tenant string, parts []writePart, now time.Time) error {
	names, spans := db.newTables(parts, now)
	if len(names) == 0 {
		return nil
	}
	// One read of the registry per family, over the times of the events
	// no known table takes: tables another server made, or the
	// lifecycle, are not new.
	for _, sp := range spans {
		if _, err := db.catalog.tables(ctx, sp.family, sp.from, sp.to); err != nil {
			return err
		}
	}
	names, _ = db.newTables(parts, now)
	n := len(names)
	if n == 0 {
		return nil
	}
	b := db.tableBudget
	if n > b.MaxNewTablesPerRequest {
		return fmt.Errorf("%w: %d new physical tables, over the %d a request may make (new_tables.per_request in the configuration, engine.TableBudget.MaxNewTablesPerRequest): write fewer periods in one request",
			ErrTooManyNewTables, n, b.MaxNewTablesPerRequest)
	}
	if n > b.MaxNewTablesPerTenantHour {
		return fmt.Errorf("%w: %d new physical tables, over the %d a tenant may make in an hour (new_tables.per_tenant_hour in the configuration, engine.TableBudget.MaxNewTablesPerTenantHour), so that no wait makes room for them: write fewer periods in one request",
			ErrTooManyNewTables, n, b.MaxNewTablesPerTenantHour)
	}
	count, err := b.tableCount(ctx, db.store, now)
	if err != nil {
		return err
	}
	if limit := b.TableQuota * TableQuotaWritePercent / 100; count+n > limit {
		return fmt.Errorf("%w: the store holds %d tables, and writes make tables only below %d%% of the quota of %d (table_quota in the configuration, engine.TableBudget.TableQuota): raise \"Table count for this account\" in Service Quotas and table_quota, or keep fewer tables",
			ErrNearTableQuota, count, TableQuotaWritePercent, b.TableQuota)
	}
	b.mu.Lock()
	spent := b.mu.spent[tenant]
	b.mu.Unlock()
	if spent.refuses(n, b.MaxNewTablesPerTenantHour, now) {
		return spent.refusal(n, b.MaxNewTablesPerTenantHour, now)
	}
	spent, err = db.meta.chargeNewTables(ctx, tenant, n, b.MaxNewTablesPerTenantHour, now)
	if spent.made > 0 {
		b.mu.Lock()
		b.mu.spent[tenant] = spent
		b.mu.Unlock()
	}
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.mu.count += n
	count = b.mu.count
	b.mu.Unlock()
	if warn := b.TableQuota * TableQuotaWarnPercent / 100; count >= warn {
		db.opts.Logger.Warn("the store's tables are near the account's quota; writes make new tables only below 90% of it",
			"tables", count, "quota", b.TableQuota, "tenant", tenant)
	}
	return nil
}

// familySpan is the range of event times of a write's events, of one
// family, that no table the engine knows takes.
type familySpan struct {
	family   family.Family
	from, to time.Time
}

// newTables returns the names of the tables the parts' events would be
// routed to that the engine does not know yet, across every part (parts
// of one family share its tables), and the spans of their events' times
// by family.
func (db *DB) newTables(parts []writePart, now time.Time) (map[string]bool, []familySpan) {
	names := map[string]bool{}
	var spans []familySpan
	month := period.MonthOf(now)
	for _, part := range parts {
		f := part.pol.Family
		var last physTable
		for e := range part.events.Len() {
			at := part.events.Time(e)
			written := db.writeTime(at, now)
			if db.opts.WriteMonthOfEvent {
				month = period.MonthOf(written)
			}
			if last.name != "" && last.entry.CoversIn(at, month) {
				continue
			}
			if t, ok := db.catalog.cached(f.Name, at, written); ok {
				last = t
				continue
			}
			names[f.Namer().Format(f.TableFor(at, written))] = true
			i := slices.IndexFunc(spans, func(sp familySpan) bool { return sp.family.Name == f.Name })
			if i < 0 {
				spans = append(spans, familySpan{family: f, from: at, to: at})
				continue
			}
			spans[i].from, spans[i].to = minTime(spans[i].from, at), maxTime(spans[i].to, at)
		}
	}
	return names, spans
}

// tableCount returns the tables the store holds, listing them when the
// count is older than tableCountTTL.
func (b *tableBudget) tableCount(ctx context.Context, store storage.Store, now time.Time) (int, error) {
	b.mu.Lock()
	fresh := !b.mu.counted.IsZero() && now.Sub(b.mu.counted) < tableCountTTL && now.After(b.mu.counted.Add(-tableCountTTL))
	count := b.mu.count
	b.mu.Unlock()
	if fresh {
		return count, nil
	}
	n := 0
	if err := store.ListTables(ctx, "", func(string) bool { n++; return true }); err != nil {
		return 0, fmt.Errorf("count tables: %w", err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mu.count, b.mu.counted = n, now
	return n, nil
}
