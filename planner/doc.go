// Package planner is timetable's capacity planner and cost model: it
// turns an event size and rate into the period, shard count and tier
// schedule of a table family, counts the tables that will be alive, and
// prices the result three ways. It does by program the arithmetic the AWS
// developer guide ("Best Practices for Handling Time-Series Data in
// DynamoDB") asks every user to do by hand, and shows its working.
//
// Plan is a pure function: Input in, Report out, no I/O and no clock. The
// Report's JSON form is the stable schema of `timetable plan --format
// json`, versioned by its schema_version field (SchemaVersion).
// WriteTable and ApplyFamily render a report as text and into a YAML
// configuration file; package planner/chart draws it as an SVG chart.
//
// # Basics
//
// The planner follows the guide's steps:
//
//  1. Item size. Events are stored in the row layout: attributes "pk"
//     (tenant#table#series#shard, DefaultPKBytes = 40 bytes unless told),
//     "sk" (a 30-byte time with nine fractional digits, "#", a 22-byte id:
//     SKBytes = 53) and the fields. Input.FieldBytes is the size of the
//     fields alone, counted as DynamoDB counts them (storage.ItemSize), and
//     the key attributes are added; Input.ItemBytes is a whole item, like
//     the guide's "180 bytes"; Input.Sample holds measured item sizes,
//     whose mean drives the plan and whose distribution is reported. An
//     event takes ceil(item/1024) write units.
//  2. Partition fill. A partition holds 10 GB before it splits; AWS counts
//     that in binary units, 10 × 2^30 bytes. The guide asks for "a little
//     room for administrative overhead": the headroom, DefaultHeadroom =
//     0.95, keeps 5% free. That choice reproduces the guide's example: 600
//     events/s of 180 bytes fill the full 10 GiB in 27.6 hours and the
//     usable 9.5 GiB in 26.2 hours, "around 26 or 27 hours" (a decimal 10
//     GB would give 25.7 hours, and a 0.9 headroom 24.9 hours, neither of
//     which the guide's figure matches). Each shard is its own partition,
//     so with N shards one partition receives 1/N of the stream.
//  3. Period. The recommended period is the longest of hour, 6h, 12h, day,
//     week, month and quarter whose longest instance (a 31-day month, a
//     92-day quarter) is no longer than the usable fill time: the guide's
//     "convenient time period slightly smaller than that duration", the
//     headroom being the "slightly". A period that fills the usable
//     partition exactly fits. 600 events/s of 180 bytes gives daily
//     tables.
//  4. Shards. ceil(peak × write units per event / 1000), a partition
//     serving 1,000 write units a second: the guide's 5,000 events/s
//     average with a 6,000 peak needs six. When even an hour of data
//     overflows a partition at that shard count, the planner does not
//     fail: it recommends hourly tables with the shard count that makes an
//     hour fit, and says so in a warning. (That needs a headroom below
//     0.35: a partition taking its full 1,000 write units of up to 1 KB
//     receives at most 3.7 GB an hour.) Only a rate that needs more than
//     MaxShards (a family's limit) is an error, ErrTooFast.
//  5. Tiers. The AWS blog's hot (300 read), warm (1 write, 100 read) and
//     cold (1, 1) tiers, entered at ages 0, 1 period and 2 periods as the
//     default family does. The hot tier's write capacity covers the peak,
//     ceil(peak × write units per event): the guide provisions 6,000 write
//     units for a 6,000 events/s peak, and a table needs no more than that
//     (the blog's fixed 1,000 is its own workload's figure). Shards times
//     1,000 is only the most the shards can take. Given a read load, the
//     hot and warm tiers get the read capacity it needs instead of the
//     blog's figures: a query reads one series (Input.Series spreads the
//     rate) over Input.ReadRange ending now, from every shard, eventually
//     consistent, half a read unit per 4 KB started per shard.
//
// # Tables and cost
//
// Tables are counted in steady operation by Little's law: one period's
// tables start every period, so the mean number of tables in an age band
// is the band's length over the period. A table exists from Prebuild
// before its period to Retention after it; it is hot through its period
// and Grace after it. With write-time grouping by month (the default, as
// in the default family) a table is deleted only when its write month too
// is past retention, so tables of periods shorter than a month live on
// until their month ends: (730 − period)/2 hours more on average, which
// costing uses, and up to 744 − period hours more, which the table count
// uses. Grouping also splits periods that straddle a month: a week does
// in about 20% of cases, a quarter always spans three write months. Late
// data makes tables beyond these, which no plan can foresee. The count
// includes the prebuilt next table, and is compared with DynamoDB's
// default quota of 2,500 tables per region (TableQuota, warned at 80%),
// and with the 256 tables per region of Fineo's day (FineoTableLimit).
// With no retention tables accumulate without end: the report gives the
// count after Input.Horizon (a year by default) and when the family alone
// reaches the quota.
//
// Monthly costs use AWS's 730-hour month. They are for the steady state
// once retention is reached, or for the last month of the horizon when
// data is kept forever, and put side by side: provisioned tiers (each
// tier's mean number of tables times its capacity), on demand (every
// event's write units and the read load's read units, per million), and
// no tiering (every table alive at the hot tier's capacity). Storage is
// billed on item bytes plus DynamoDB's 100 bytes of overhead per item, in
// GB of 2^30 bytes, and added to all three. Without a read load, on
// demand pays for no reads while the provisioned tiers still pay for the
// blog's read capacity. The recommended billing is the cheaper of
// provisioned tiers and on demand.
//
// # Prices
//
// DefaultPrices are DynamoDB's us-east-1 list prices for the Standard
// table class in effect from 2024-11-01, labelled as such in every
// report; they are not fetched and may be out of date. The CLI overrides
// them from a YAML or JSON file with the same keys as Prices' tags, or
// from flags.
//
// # Caveats
//
// The planner assumes, as the guide does, that each shard's partition key
// lands on a partition of its own, that events arrive at the average rate
// (the period is sized for the average, the capacity for the peak), and
// that the stream's series are about equally busy. It does not model
// global secondary indexes, backups, streams or data transfer.
package planner
