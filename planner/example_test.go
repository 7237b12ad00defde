package planner_test

import (
	"fmt"

	"github.com/timetabledb/timetable/planner"
)

// The AWS developer guide's example: about 600 events per second of about
// 180 bytes each.
func ExamplePlan() {
	r, err := planner.Plan(planner.Input{ItemBytes: 180, Rate: 600})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("10 GiB fill in %.1f h, %.1f h with headroom\n", r.Partition.FillHours, r.Partition.UsableFillHours)
	fmt.Printf("%s tables, %d shard, hot tier %d WCU\n", r.Period, r.Shards, r.Tiers[0].Write)

	r, err = planner.Plan(planner.Input{ItemBytes: 180, Rate: 5000, Peak: 6000})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("5,000/s with a 6,000 peak: %d shards, hot tier %d WCU\n", r.Shards, r.Tiers[0].Write)
	// Output:
	// 10 GiB fill in 27.6 h, 26.2 h with headroom
	// day tables, 1 shard, hot tier 600 WCU
	// 5,000/s with a 6,000 peak: 6 shards, hot tier 6000 WCU
}

// ApplyFamily writes a plan's family into a configuration file, keeping
// its comments and other keys.
func ExampleApplyFamily() {
	r, err := planner.Plan(planner.Input{ItemBytes: 180, Rate: 600, Retention: 90 * 24 * 3600e9})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := planner.ApplyFamily([]byte("# my config\nmeta_table: tt_meta\n"), r.Family)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(out))
	// Output:
	// # my config
	// meta_table: tt_meta
	// families:
	//   - name: events
	//     prefix: tt_events_
	//     period: day
	//     naming: range
	//     write_time_grouping: month
	//     shards: 1
	//     layout: row
	//     billing: provisioned
	//     tiers:
	//       - {name: hot, age: 0, read: 300, write: 600}
	//       - {name: warm, age: 1 period, read: 100, write: 1}
	//       - {name: cold, age: 2 periods, read: 1, write: 1}
	//     prebuild: 1h
	//     grace: 15m
	//     retention: 90d
}
