package family_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/period"
	"github.com/timetabledb/timetable/storage"
)

func TestDefaultIsValid(t *testing.T) {
	require.NoError(t, family.Default().Validate())
}

func TestTableForGroupsByWriteMonth(t *testing.T) {
	f := family.Default()
	event := time.Date(2017, 4, 10, 12, 0, 0, 0, time.UTC)
	ref := f.TableFor(event, time.Date(2017, 6, 2, 0, 0, 0, 0, time.UTC))
	require.Equal(t, time.Date(2017, 4, 9, 0, 0, 0, 0, time.UTC), ref.Period.Start)
	require.Equal(t, period.Month{Year: 2017, Month: time.June}, ref.WriteMonth)
	require.Equal(t, "tt_events_1491696000000_1492300799000_6_2017", f.Namer().Format(ref))

	f.WriteTimeGrouping = false
	ref = f.TableFor(event, time.Date(2017, 6, 2, 0, 0, 0, 0, time.UTC))
	require.True(t, ref.WriteMonth.IsZero())
	require.Equal(t, "tt_events_1491696000000_1492300799000", f.Namer().Format(ref))
}

func TestTierAtFollowsTheBlog(t *testing.T) {
	// Daily tables: today's is hot, yesterday's warm, older ones cold, each
	// change Grace after midnight.
	f := family.Default()
	f.Granularity = period.Granularity{Unit: period.Day}
	f.Grace = 15 * time.Minute
	day := time.Date(2018, 10, 25, 0, 0, 0, 0, time.UTC)
	ref := f.TableFor(day, day)
	for _, tc := range []struct {
		at   time.Duration
		tier string
	}{
		{-time.Hour, "hot"}, // prebuilt
		{0, "hot"},
		{23 * time.Hour, "hot"},
		{24*time.Hour + 14*time.Minute, "hot"},
		{24*time.Hour + 15*time.Minute, "warm"},
		{48*time.Hour + 14*time.Minute, "warm"},
		{48*time.Hour + 15*time.Minute, "cold"},
		{400 * 24 * time.Hour, "cold"},
	} {
		require.Equal(t, tc.tier, f.TierAt(ref, day.Add(tc.at)).Name, "at +%v", tc.at)
	}
}

func TestTierAtCountsCalendarMonths(t *testing.T) {
	f := family.Default()
	f.Granularity = period.Granularity{Unit: period.CalendarMonth}
	f.Grace = 0
	feb := time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)
	ref := f.TableFor(feb, feb)
	require.Equal(t, "hot", f.TierAt(ref, time.Date(2024, 2, 29, 23, 0, 0, 0, time.UTC)).Name)
	require.Equal(t, "warm", f.TierAt(ref, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)).Name)
	require.Equal(t, "cold", f.TierAt(ref, time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC)).Name)
}

func TestSpecCarriesTheTags(t *testing.T) {
	f := family.Default()
	f.Shards = 6
	f.TTL = 90 * 24 * time.Hour
	at := time.Date(2017, 4, 10, 12, 0, 0, 0, time.UTC)
	ref := f.TableFor(at, at)
	spec := f.Spec(ref, f.Tiers[0])
	require.Equal(t, "tt_events_1491696000000_1492300799000_4_2017", spec.Name)
	require.Equal(t, storage.Capacity{Billing: storage.OnDemand, Class: storage.ClassStandard}, spec.Capacity)
	require.True(t, spec.DeletionProtection)
	require.Equal(t, family.DefaultPITRDays, spec.PITRDays)
	require.Zero(t, f.Spec(ref, f.Tiers[2]).PITRDays, "no PITR when cold")
	require.Equal(t, storage.ClassInfrequentAccess, f.Spec(ref, f.Tiers[2]).Capacity.Class)
	require.Equal(t, map[string]string{
		family.TagFamily:      "events",
		family.TagPeriodStart: "2017-04-09T00:00:00Z",
		family.TagPeriodEnd:   "2017-04-16T00:00:00Z",
		family.TagWriteMonth:  "2017-04",
		family.TagTier:        "hot",
		family.TagShards:      "6",
		family.TagLayout:      "row",
	}, spec.Tags, "a family from configuration records no id scheme: its tables' entries do")
	f.IDScheme = event.IDScheme2
	spec = f.Spec(ref, f.Tiers[0])
	require.Equal(t, "2", spec.Tags[family.TagIDScheme])
	require.Equal(t, event.IDScheme2, family.IDSchemeOf(spec.Tags))
	require.Equal(t, event.IDScheme1, family.IDSchemeOf(nil), "a table without the tag predates schemes")
	require.Equal(t, event.IDScheme1, family.IDSchemeOf(map[string]string{family.TagIDScheme: "9"}))
	require.Equal(t, family.TTLAttribute, spec.TTLAttribute)
	require.Equal(t, 6, f.ShardsOf(spec.Tags))
	f.Shards = 2
	require.Equal(t, 6, f.ShardsOf(spec.Tags), "a table keeps its shard count")
	require.Equal(t, 2, f.ShardsOf(nil))

	od := family.Tier{Name: "od", Capacity: storage.Capacity{Billing: storage.OnDemand, Read: 5, Write: 5}}
	require.Equal(t, storage.Capacity{Billing: storage.OnDemand, Class: storage.ClassStandard}, f.Spec(ref, od).Capacity)
}

func TestAgeString(t *testing.T) {
	require.Equal(t, "0", family.Age{}.String())
	require.Equal(t, "1 period", family.Age{Periods: 1}.String())
	require.Equal(t, "2 periods + 12h0m0s", family.Age{Periods: 2, Duration: 12 * time.Hour}.String())
}

func TestTierForBackfillAndLateData(t *testing.T) {
	// Weekly tables starting Sunday, grouped by write month.
	f := family.Default()
	event := time.Date(2017, 4, 10, 12, 0, 0, 0, time.UTC) // week of 2017-04-09
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		require.NoError(t, err)
		return v
	}
	for _, tc := range []struct {
		name             string
		written, created string
		backfill         bool
		tiers            map[string]string
	}{
		{
			// Made before its period: the blog's schedule.
			name: "prebuilt", written: "2017-04-10T12:00:00Z", created: "2017-04-08T23:00:00Z",
			tiers: map[string]string{"2017-04-16T00:14:00Z": "hot", "2017-04-16T00:15:00Z": "warm", "2017-04-23T00:15:00Z": "cold"},
		},
		{
			// Data of April written in June: backfill through June and
			// the grace, then the tier of its age.
			name: "late", written: "2017-06-20T00:00:00Z", created: "2017-06-20T00:00:00Z", backfill: true,
			tiers: map[string]string{
				"2017-06-20T00:00:00Z": "backfill", "2017-07-01T00:14:00Z": "backfill", "2017-07-01T00:15:00Z": "cold",
			},
		},
		{
			// Late data for last week, in the same write month: the
			// table is made after its period ended.
			name: "last week", written: "2017-04-20T00:00:00Z", created: "2017-04-20T00:00:00Z", backfill: true,
			tiers: map[string]string{
				"2017-04-20T00:00:00Z": "backfill", "2017-05-01T00:14:00Z": "backfill", "2017-05-01T00:15:00Z": "cold",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref := f.TableFor(event, at(tc.written))
			require.Equal(t, tc.backfill, f.IsBackfill(ref, at(tc.created)))
			for now, tier := range tc.tiers {
				got, reason := f.TierFor(ref, at(tc.created), at(now))
				require.Equal(t, tier, got.Name, "at %s", now)
				require.NotEmpty(t, reason)
			}
		})
	}
	got, _ := f.TierFor(f.TableFor(event, event), time.Time{}, at("2017-04-10T00:00:00Z"))
	require.Equal(t, "hot", got.Name, "unknown creation time: the schedule")
	require.Equal(t, storage.Capacity{Billing: storage.OnDemand}, f.Backfill.Capacity)
}

func TestExpiresAtWaitsForPeriodAndWriteMonth(t *testing.T) {
	f := family.Default()
	require.True(t, f.ExpiresAt(f.TableFor(time.Now(), time.Now())).IsZero(), "no retention: never")
	f.Retention = 30 * 24 * time.Hour
	event := time.Date(2017, 4, 10, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		written, want time.Time
	}{
		// The write month (April) ends after the period: it counts.
		{event, time.Date(2017, 5, 31, 0, 0, 0, 0, time.UTC)},
		// Late data written in June: retention counts from June's end.
		{time.Date(2017, 6, 2, 0, 0, 0, 0, time.UTC), time.Date(2017, 7, 31, 0, 0, 0, 0, time.UTC)},
	} {
		require.Equal(t, tc.want, f.ExpiresAt(f.TableFor(event, tc.written)))
	}
	// A week that ends after its write month: the period's end counts.
	straddle := f.TableFor(time.Date(2017, 3, 31, 0, 0, 0, 0, time.UTC), time.Date(2017, 3, 31, 0, 0, 0, 0, time.UTC))
	require.Equal(t, time.Date(2017, 5, 2, 0, 0, 0, 0, time.UTC), f.ExpiresAt(straddle))
	f.WriteTimeGrouping = false
	require.Equal(t, time.Date(2017, 5, 16, 0, 0, 0, 0, time.UTC), f.ExpiresAt(f.TableFor(event, event)))
}

// A family's name goes into table tags: characters DynamoDB's tags refuse
// are refused when the configuration is read, not at CreateTable.
func TestFamilyNameFitsTags(t *testing.T) {
	f := family.Default()
	for _, name := range []string{"events#eu", "événements", "a\nb"} {
		f.Name = name
		require.ErrorContains(t, f.Validate(), "table tags", name)
	}
	for _, name := range []string{"events", "events-eu", "events.eu_2 @x:y/z=w+v"} {
		f.Name = name
		require.NoError(t, f.Validate(), name)
	}
}
