package planner_test

import (
	"fmt"
	"time"

	"github.com/timetabledb/timetable/planner"
)

// The AWS developer guide's example: about 600 events per second of about
// 180 bytes each, kept for a year, then the same year with tables moved
// to S3 archives after 30 days.
func ExamplePlan() {
	const day = 24 * time.Hour
	for _, in := range []planner.Input{
		{ItemBytes: 180, Rate: 600, Retention: 365 * day},
		{ItemBytes: 180, Rate: 600, Retention: 365 * day, ArchiveAfter: 30 * day, ArchiveTarget: "s3://bucket/archive"},
	} {
		r, err := planner.Plan(in)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s tables, %d shard, %s a month:", r.Period, r.Shards, planner.FormatMoney(r.Cost.Recommended.Total, r.Prices.Currency))
		for _, t := range r.Tiers {
			fmt.Printf(" %s %s %s", t.Name, t.Billing, t.Class.Name())
		}
		fmt.Println()
	}

	r, err := planner.Plan(planner.Input{ItemBytes: 180, Rate: 5000, Peak: 6000})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("5,000/s with a 6,000 peak: %d shards, hot tier %d WCU\n", r.Shards, r.Tiers[0].Write)
	// Output:
	// day tables, 1 shard, $932.48 a month: hot provisioned standard warm on_demand standard cold on_demand infrequent_access
	// day tables, 1 shard, $564.58 a month: hot provisioned standard warm on_demand standard cold on_demand infrequent_access
	// 5,000/s with a 6,000 peak: 6 shards, hot tier 8572 WCU
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
	//       - {name: hot, age: 0, billing: provisioned, read: 1, write: 858, class: standard, pitr: true}
	//       - {name: warm, age: 1 period, billing: on_demand, class: standard, pitr: true}
	//       - {name: cold, age: 2 periods, billing: on_demand, class: infrequent_access, pitr: false}
	//     prebuild: 1h
	//     grace: 15m
	//     retention: 90d
}
