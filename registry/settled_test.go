package registry_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/registry"
)

// A table is settled, and read eventually consistent, once only a late
// event of its period may still reach it; the table of now and a backfill
// being written are not.
func TestEntrySettled(t *testing.T) {
	f := family.Default() // weeks from Sunday, write months, 15 minutes of grace
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		require.NoError(t, err)
		return tm
	}
	// The week of Sunday 2017-04-30 written in April, and in May.
	april := f.TableFor(at("2017-04-30T12:00:00Z"), at("2017-04-30T12:00:00Z"))
	may := f.TableFor(at("2017-04-30T12:00:00Z"), at("2017-05-01T00:00:00Z"))
	// Events of March written in May: a backfill table.
	backfill := f.TableFor(at("2017-03-10T00:00:00Z"), at("2017-05-12T00:00:00Z"))
	tests := []struct {
		name    string
		e       registry.Entry
		now     string
		settled bool
	}{
		{"the table of now", registry.Entry{Policy: f, Ref: april}, "2017-04-30T18:00:00Z", false},
		{"its write month ended, in grace", registry.Entry{Policy: f, Ref: april}, "2017-05-01T00:10:00Z", false},
		{"its write month and grace ended", registry.Entry{Policy: f, Ref: april}, "2017-05-01T00:15:00Z", true},
		{"May's table of the week, during the week", registry.Entry{Policy: f, Ref: may}, "2017-05-03T00:00:00Z", false},
		{"May's table, the week over, in grace", registry.Entry{Policy: f, Ref: may}, "2017-05-07T00:10:00Z", false},
		{"May's table, the week and grace over: late events only", registry.Entry{Policy: f, Ref: may}, "2017-05-07T00:15:00Z", true},
		{"a backfill, in its month", registry.Entry{Policy: f, Ref: backfill, CreatedAt: at("2017-05-12T00:00:00Z")}, "2017-05-20T00:00:00Z", false},
		{"a backfill, its month and grace over", registry.Entry{Policy: f, Ref: backfill, CreatedAt: at("2017-05-12T00:00:00Z")}, "2017-06-01T00:15:00Z", true},
		{"fenced", registry.Entry{Policy: f, Ref: april, FencedAt: at("2017-04-30T13:00:00Z")}, "2017-04-30T14:00:00Z", true},
	}
	for _, tt := range tests {
		require.Equal(t, tt.settled, tt.e.Settled(at(tt.now)), tt.name)
	}
}
