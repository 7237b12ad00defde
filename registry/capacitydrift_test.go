package registry

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
)

// TestCapacityDriftOfAutoScaledTables: a provisioned table with a peak is
// auto scaled, and the units Application Auto Scaling moves it to,
// between the floor and the peak, are not drift; units outside them, a
// billing mode changed, or a table without a peak changed, are.
func TestCapacityDriftOfAutoScaledTables(t *testing.T) {
	scaled := storage.Capacity{Billing: storage.Provisioned, Read: 5, Write: 10, MaxRead: 300, MaxWrite: 1000}
	fixed := storage.Capacity{Billing: storage.Provisioned, Read: 5, Write: 10}
	described := func(read, write int64) storage.TableInfo {
		// DescribeTable reports a provisioned table's units, never its
		// scalable target's peak.
		return storage.TableInfo{Status: storage.StatusActive,
			TableSpec: storage.TableSpec{Capacity: storage.Capacity{Billing: storage.Provisioned, Read: read, Write: write, Class: storage.ClassStandard}}}
	}
	for _, c := range []struct {
		name  string
		entry storage.Capacity
		info  storage.TableInfo
		drift bool
	}{
		{"at the floor", scaled, described(5, 10), false},
		{"scaled up", scaled, described(210, 740), false},
		{"at the peak", scaled, described(300, 1000), false},
		{"scaled reads only", scaled, described(42, 10), false},
		{"above the peak", scaled, described(301, 10), true},
		{"below the floor", scaled, described(5, 9), true},
		{"made on demand", scaled, storage.TableInfo{Status: storage.StatusActive, TableSpec: storage.TableSpec{Capacity: storage.Capacity{Billing: storage.OnDemand}}}, true},
		{"no peak, changed", fixed, described(6, 10), true},
		{"no peak, as applied", fixed, described(5, 10), false},
	} {
		e := Entry{State: Active, Capacity: c.entry}
		why := CapacityDrift(e, c.info)
		require.Equal(t, c.drift, why != "", "%s: %q", c.name, why)
	}
}
