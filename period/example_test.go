package period_test

import (
	"fmt"
	"time"

	"github.com/timetabledb/timetable/period"
)

func ExampleGranularity_Of() {
	g, err := period.ParseGranularity("week")
	if err != nil {
		panic(err)
	}
	t := time.Date(2017, time.April, 12, 10, 30, 0, 0, time.UTC)
	p := g.Of(t)
	fmt.Println(p)
	fmt.Println(g.Next(p).Start.Format(time.DateOnly), g.Prev(p).Start.Format(time.DateOnly))
	fmt.Println(p.Start.UnixMilli(), g.Aligned(p.Start))
	// Output:
	// [2017-04-09T00:00:00Z, 2017-04-16T00:00:00Z)
	// 2017-04-16 2017-04-02
	// 1491696000000 true
}

func ExampleGranularity_Overlapping() {
	g := period.Granularity{Unit: period.Week, WeekStart: time.Monday}
	from := time.Date(2016, time.December, 28, 0, 0, 0, 0, time.UTC)
	to := time.Date(2017, time.January, 9, 0, 0, 0, 0, time.UTC) // closed: this instant counts
	for _, p := range g.Overlapping(from, to) {
		fmt.Println(p.Start.Format("Mon 2006-01-02"))
	}
	// Output:
	// Mon 2016-12-26
	// Mon 2017-01-02
	// Mon 2017-01-09
}

func ExampleMonthOf() {
	m := period.MonthOf(time.Date(2016, time.December, 31, 23, 0, 0, 0, time.FixedZone("EST", -5*3600)))
	fmt.Println(m, m.Next(), m.End())
	// Output:
	// 2017-01 2017-02 2017-02-01 00:00:00 +0000 UTC
}
