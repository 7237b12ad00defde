package naming_test

import (
	"fmt"
	"time"

	"github.com/timetabledb/timetable/naming"
	"github.com/timetabledb/timetable/period"
)

func ExampleNamer() {
	// Fineo's scheme: weeks starting Sunday, grouped by write month.
	n := naming.Namer{
		Prefix:            "tt_events_",
		Scheme:            naming.Range,
		Granularity:       period.Granularity{Unit: period.Week},
		WriteTimeGrouping: true,
	}
	if err := n.Validate(); err != nil {
		panic(err)
	}
	event := time.Date(2017, time.April, 12, 8, 0, 0, 0, time.UTC)
	written := time.Date(2017, time.June, 2, 0, 0, 0, 0, time.UTC) // a car that was offline
	name := n.Format(naming.Ref{Period: n.Granularity.Of(event), WriteMonth: period.MonthOf(written)})
	fmt.Println(name)

	r, err := n.Parse(name)
	fmt.Println(r.Period, r.WriteMonth, err)

	_, err = n.Parse("tt_events_1491696000000_1492300799000_06_2017")
	fmt.Println(err)

	// Output:
	// tt_events_1491696000000_1492300799000_6_2017
	// [2017-04-09T00:00:00Z, 2017-04-16T00:00:00Z) 2017-06 <nil>
	// parse table name "tt_events_1491696000000_1492300799000_06_2017": timetable: not a table of this family: write month "06" is not 1 to 12 without leading zeros
}

func ExampleNamer_date() {
	// The AWS blog's scheme: one table a day.
	n := naming.Namer{Prefix: "timeseries_", Scheme: naming.Date, Granularity: period.Granularity{Unit: period.Day}}
	day := time.Date(2018, time.October, 25, 23, 45, 0, 0, time.UTC)
	fmt.Println(n.Format(naming.Ref{Period: n.Granularity.Of(day)}))
	// Output:
	// timeseries_2018-10-25
}
