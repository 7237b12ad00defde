package lifecycle_test

import (
	"fmt"
	"time"

	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/storage"
)

func ExamplePlan() {
	// The default family: weekly tables from Sunday, the blog's tiers,
	// prebuilt an hour ahead, 15 minutes of grace.
	f := family.Default()
	thisWeek := f.TableFor(time.Date(2017, 4, 12, 0, 0, 0, 0, time.UTC), time.Date(2017, 4, 12, 0, 0, 0, 0, time.UTC))
	spec := f.Spec(thisWeek, f.Tiers[0])
	actual := []lifecycle.Table{{
		Name: spec.Name, Family: f.Name, Ref: thisWeek, Tier: "hot",
		Capacity: spec.Capacity, Status: storage.StatusActive,
	}}

	// Saturday 23:00: next week's table is due.
	for _, a := range lifecycle.Plan(time.Date(2017, 4, 15, 23, 0, 0, 0, time.UTC), []family.Family{f}, actual) {
		fmt.Println(a.Kind, a.Table, a.Tier, "-", a.Reason)
	}
	// Sunday 00:15, that table made: this week's turns warm.
	next := f.TableFor(time.Date(2017, 4, 16, 0, 0, 0, 0, time.UTC), time.Date(2017, 4, 16, 0, 0, 0, 0, time.UTC))
	nextSpec := f.Spec(next, f.Tiers[0])
	actual = append(actual, lifecycle.Table{Name: nextSpec.Name, Family: f.Name, Ref: next, Tier: "hot", Capacity: nextSpec.Capacity, Status: storage.StatusActive})
	for _, a := range lifecycle.Plan(time.Date(2017, 4, 16, 0, 15, 0, 0, time.UTC), []family.Family{f}, actual) {
		fmt.Println(a.Kind, a.Table, a.Tier, "-", a.Reason)
	}
	// Output:
	// create tt_events_1492300800000_1492905599000_4_2017 hot - period starts 2017-04-16T00:00:00Z, prebuild 1h0m0s
	// update_capacity tt_events_1491696000000_1492300799000_4_2017 warm - tier warm from 2017-04-16T00:15:00Z (age 1 period + grace 15m0s), was hot: on-demand
}
