package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/timetabledb/timetable/metatable"
	"github.com/timetabledb/timetable/storage"
)

// A tenant's new tables of the hour are counted in the meta table, in
// one item per tenant (metatable.NewTables) that every server on the
// store shares and that outlives a restart. The item holds the clock
// hour it counts (hourAttr, the Unix seconds of its start in UTC) and
// the physical tables the tenant's writes made in it (madeAttr).
const (
	hourAttr = "hour"
	madeAttr = "made"
)

// chargeTries bounds the rounds of chargeNewTables: each round but the
// last is lost only to another server's charge of the same tenant in
// the same instant.
const chargeTries = 5

// spentHour is a tenant's count of new tables in a clock hour, as a
// refused charge read it. A count only grows within its hour, so a
// write that the count refused is refused again without asking the
// meta table, until the hour ends.
type spentHour struct {
	hour time.Time
	made int
}

// refuses reports whether the hour's count leaves no room for n of
// limit at now.
func (s spentHour) refuses(n, limit int, now time.Time) bool {
	return s.hour.Equal(now.UTC().Truncate(time.Hour)) && s.made+n > limit
}

// refusal is the TableRateError of a write of n new tables that the
// count refuses.
func (s spentHour) refusal(n, limit int, now time.Time) *TableRateError {
	return &TableRateError{
		Msg: fmt.Sprintf("%v: %d new physical tables, and the tenant made %d in the hour since %s, of the %d it may (new_tables.per_tenant_hour in the configuration, engine.TableBudget.MaxNewTablesPerTenantHour)",
			ErrTableRate, n, s.made, s.hour.Format(time.RFC3339), limit),
		RetryAfter: max(s.hour.Add(time.Hour).Sub(now), time.Second),
	}
}

// chargeNewTables charges tenant with n new physical tables in the clock
// hour of now, of which the tenant may make limit. When the hour has no
// room for n it charges nothing and returns a *TableRateError saying
// when the next hour starts, and the count it read.
//
// A charge is a conditional update: it adds n when the item counts this
// hour and holds at most limit-n, or else starts the hour with n when
// the item counts an earlier hour or none. Charges racing on several
// servers therefore never exceed limit together; a charge that loses
// a race reads the item and tries again.
func (m *metaTable) chargeNewTables(ctx context.Context, tenant string, n, limit int, now time.Time) (spentHour, error) {
	pk, sk := metatable.NewTables(tenant)
	hour := now.UTC().Truncate(time.Hour)
	room := json.Number(strconv.Itoa(limit - n))
	for range chargeTries {
		h := hour.Unix()
		err := m.store.Update(ctx, storage.Update{Table: m.table, PK: pk, SK: sk,
			Conds:   []storage.Cond{storage.Equal(hourAttr, unixNumber(h)), storage.AtMost(madeAttr, room)},
			Actions: []storage.Action{storage.Add(madeAttr, json.Number(strconv.Itoa(n)))}})
		if !errors.Is(err, storage.ErrConditionFailed) {
			return spentHour{}, chargeError(tenant, err)
		}
		err = m.store.Update(ctx, storage.Update{Table: m.table, PK: pk, SK: sk,
			Conds:   []storage.Cond{storage.AnyOf(storage.NotExists(hourAttr), storage.AtMost(hourAttr, unixNumber(h-1)))},
			Actions: []storage.Action{storage.Set(hourAttr, unixNumber(h)), storage.Set(madeAttr, json.Number(strconv.Itoa(n)))}})
		if !errors.Is(err, storage.ErrConditionFailed) {
			return spentHour{}, chargeError(tenant, err)
		}
		// The item counts this hour with too little room, or a later
		// hour (another server's clock is ahead), or another server
		// started this hour between the two updates.
		item, err := m.store.GetItem(ctx, m.table, pk, sk)
		if errors.Is(err, storage.ErrItemNotFound) {
			continue
		}
		if err != nil {
			return spentHour{}, chargeError(tenant, err)
		}
		stored, made, ok := hourCount(item)
		if !ok {
			return spentHour{}, fmt.Errorf("meta table %q: the new tables item of tenant %q is damaged: %v", m.table, tenant, item.Attrs)
		}
		switch {
		case stored.After(hour):
			hour = stored // charged to the hour the other servers count
		case stored.Equal(hour) && made+n > limit:
			spent := spentHour{hour: hour, made: made}
			return spent, spent.refusal(n, limit, now)
		}
	}
	return spentHour{}, fmt.Errorf("count the new tables of tenant %q: other writes changed the count on each of %d tries: %w", tenant, chargeTries, storage.ErrUnavailable)
}

// chargeError wraps a failure of chargeNewTables; nil stays nil.
func chargeError(tenant string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("count the new tables of tenant %q: %w", tenant, err)
}

// unixNumber is Unix seconds as the item stores them.
func unixNumber(s int64) json.Number { return json.Number(strconv.FormatInt(s, 10)) }

// hourCount reads the hour a new tables item counts and its count.
func hourCount(item storage.Item) (hour time.Time, made int, ok bool) {
	h, okH := item.Attrs[hourAttr].(json.Number)
	m, okM := item.Attrs[madeAttr].(json.Number)
	if !okH || !okM {
		return time.Time{}, 0, false
	}
	hs, err1 := strconv.ParseInt(string(h), 10, 64)
	ms, err2 := strconv.Atoi(string(m))
	if err1 != nil || err2 != nil {
		return time.Time{}, 0, false
	}
	return time.Unix(hs, 0).UTC(), ms, true
}
