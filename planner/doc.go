// Package planner is timetable's capacity planner and cost model: it
// turns an event size and rate into the period, shard count and tier
// schedule of a table family, counts the tables that will be alive, and
// prices the result as DynamoDB bills it: each tier on demand or
// provisioned, in the Standard or Standard-IA table class, with archives
// on S3. It shows its working.
//
// Plan is a pure function: Input in, Report out, no I/O and no clock. The
// Report's JSON form is the stable schema of `timetable plan --format
// json`, versioned by its schema_version field (SchemaVersion).
// WriteTable and ApplyFamily render a report as text and into a YAML
// configuration file; package planner/chart draws it as an SVG chart.
//
// # Basics
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
//  2. Shards. A partition key value, one series' shard, takes at most
//     1,000 write units a second, so the shards are ceil(peak × write
//     units per event / series / 1000): the guide's 5,000 events/s with
//     a 6,000 peak of one series need six. Series are assumed equally
//     busy. Only a series that needs more than MaxShards is an error,
//     ErrTooFast.
//  3. Tiers. The AWS blog's hot, warm and cold tiers, entered at ages 0,
//     1 period and 2 periods as the default family does, the hot and warm
//     with point-in-time recovery (the configuration's default). A
//     provisioned tier has its load over auto scaling's target,
//     TargetUtilization (70%): the hot tier's write capacity covers the
//     whole stream's peak at 70%, auto scaled from the average's when the
//     peak is higher (the bill then prices the peak's, an upper bound);
//     read capacities cover the read load as given, or DynamoDB's least,
//     one unit, when none is: a guess would be billed every hour. Each
//     tier is billed the way Input.Hot, Warm and Cold
//     say, or, by default, whichever is cheaper: on demand pays per
//     request, provisioned capacity pays for every hour, so it wins above
//     the utilisation Prices.BreakEven gives (about 29% at list prices,
//     41% of the peak at the 70% target).
//     Tables that take no more writes are on demand unless read hard.
//     The table class is Standard, and Standard-IA for the cold tier, as
//     in the lifecycle's default tiers.
//  4. Reads. A query reads one series (Input.Series spreads the rate)
//     over Input.ReadRange ending now, from every shard: from the hot
//     table strongly consistent, as the engine reads it (one unit per 4 KB
//     started per shard); from a warm table, which takes no more writes
//     but late events, eventually consistent (half), as the engine reads
//     every table whose period and grace, or write month and grace, are
//     over (registry.Entry.Settled); the warm table only when the range
//     crosses the period's start.
//  5. Period. Every period (hour, 6h, 12h, day, week, month, quarter) is
//     costed; the recommendation is the cheapest whose tables stay under
//     80% of TableQuota, a longer one winning when it costs at most 0.5%
//     and one unit of currency more. Input.Period forces one. The 10 GB
//     a partition key may hold binds only tables with local secondary
//     indexes (the guide dropped the period rule built on it in April
//     2020); the report shows how long a partition key takes to reach it,
//     for reference.
//
// # Tables and cost
//
// Tables are counted in steady operation by Little's law: one period's
// tables start every period, so the mean number of tables in an age band
// is the band's length over the period. A table exists from Prebuild
// before its period until Retention after it (ArchiveAfter when tables
// are archived); it is hot through its period and Grace after it. With
// write-time grouping by month (the default) a table is deleted only when
// its write month too is past retention, so tables of periods shorter
// than a month live on until their month ends: (730 − period)/2 hours
// more on average, which costing uses, and up to 744 − period hours more,
// which the table count uses. Grouping also splits periods that straddle
// a month: a week does in about 20% of cases, a quarter always spans
// three write months. The count includes the prebuilt next table and is
// compared with DynamoDB's default quota of 2,500 tables per region
// (TableQuota, adjustable), the hard limit of 10,000 (TableHardQuota) and
// the 256 tables per region of Fineo's day (FineoTableLimit). With no
// retention tables accumulate without end: the report gives the count
// after Input.Horizon (a year by default) and when the family alone
// reaches the quota.
//
// Monthly costs use AWS's 730-hour month, for the steady state once
// retention is reached, or for the last month of the horizon when data is
// kept forever. Storage is billed on item bytes plus DynamoDB's 100 bytes
// of overhead per item, in GB of 2^30 bytes, each tier's data at its
// class's price: a table entering a tier holds data about its age less
// the prebuild and half a period. Archives are the item bytes times
// Input.ArchiveRatio (DefaultArchiveRatio, measured on Parquet archives)
// at the S3 Standard price, kept from ArchiveAfter to Retention
// (archiving needs Input.ArchiveTarget, which the family names as its
// archive; the lifecycle deletes no archive, so an S3 lifecycle rule
// expires them at Retention). The
// report puts the recommended bill beside every tier provisioned (the
// blog's design), every tier on demand, and no tiering (every table alive
// provisioned at the hot tier's capacity, Standard class).
//
// # Prices
//
// PriceTable is the one table of prices: DynamoDB's us-east-1 list
// prices for both table classes in effect from 2024-11-01, S3 Standard's,
// point-in-time recovery, export and import, the free tier and reserved
// capacity's one- and three-year terms, each with its AWS page and its check ("verified PAGE" where
// the stored copy of AWS's page shows it, "unverified" otherwise), which
// every bill line prints. They are not fetched and may be out of date.
// DefaultPrices returns them; the CLI overrides them from a YAML or JSON
// file with the same keys as Prices' tags, or from flags.
//
// # Caveats
//
// The planner assumes that events arrive at the average rate (the
// capacity is sized for the peak), that the stream's series are about
// equally busy, that every write goes to the hot table, and that queries
// end now (no reads of cold tables). It ignores global secondary
// indexes, on-demand backups, streams, data transfer, the meta table (a
// few items on demand), CloudWatch and the Lambda that runs the
// lifecycle (and the compaction of chunks packed later), and the short
// point-in-time recovery an export turns on in a cold table.
//
// # Reserved capacity
//
// One hot table is always provisioned when the hot tier is provisioned
// in the Standard class: its write capacity at the average rate (its
// floor when auto scaled) and its read capacity, in whole blocks of 100
// units, can be reserved. The plan prices that for the recommended bill,
// each layout's and chunks packed later, with the term that saves the
// most of those no longer than Input.Horizon (a year by default: the
// one-year term; give three years to weigh the three-year term), the
// upfront payment spread over the term. It is a commitment, paid every
// hour of the term whatever is used, so the plan shows it beside its
// totals (Bill.Reserved, "With a commitment" and the layouts' WITH
// RESERVED column), not in them. Its saving assumes the free tier's units
// are not among those reserved. Events written one at a time take a write
// unit each however they are stored later: reserved capacity is what
// cuts that part of their bill.
package planner
