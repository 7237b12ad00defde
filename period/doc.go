// Package period is timetable's calendar: it cuts UTC time into the
// half-open periods [start, end) that physical tables hold, at one of the
// granularities a family may choose (hour, 6 hours, 12 hours, day, week,
// month, quarter), and names the calendar months that write-time grouping
// uses. It also reads the durations timetable's settings, flags and
// HTTP parameters are written in, where days and weeks are whole UTC days
// ("90d", "12w", "36h": ParseDuration).
//
// Everything here is a pure function of its arguments. Nothing reads the
// clock.
//
// # Decisions
//
//   - All arithmetic is in UTC. Every input time is converted with
//     time.Time.UTC first, so a time given in any location lands in the
//     same period, and every returned time is in UTC. UTC has no daylight
//     saving and Go's time has no leap seconds, so hours and days have
//     fixed lengths and periods are never ambiguous.
//   - Periods are half-open: a period contains its start and not its end,
//     so consecutive periods share a boundary and every instant lies in
//     exactly one of them. Sub-second precision is kept throughout: the
//     last nanosecond before a boundary belongs to the earlier period.
//   - Query ranges are closed, [from, to], because that is what users type
//     ("from 10:00 to 11:00" includes 11:00). Period.Overlaps and
//     Granularity.Overlapping take closed ranges.
//   - Six- and twelve-hour periods start at 00:00, 06:00, 12:00 and 18:00
//     UTC (00:00 and 12:00 for twelve hours). Weeks start at 00:00 UTC on
//     the granularity's WeekStart, Sunday by default, as in Fineo. Months
//     and quarters are calendar months and calendar quarters (January,
//     April, July, October).
//   - The zero Unit is not a unit, so a Granularity left unset is caught by
//     Validate instead of silently meaning "hourly". Methods that compute
//     periods panic on an invalid Granularity, as indexing past a slice
//     does: validate granularities where they enter the program (the
//     configuration), not at every use.
//   - Granularity.Nominal gives months and quarters their mean Gregorian
//     length (365.2425 days / 12 and three times that), so that nominal
//     lengths add up to a year exactly; it is for estimates and ordering
//     (the capacity planner, "two periods old"), never for finding a
//     period's boundaries, which Of, Next and Prev compute on the calendar.
//   - Periods are defined for every time.Time whose year the time package
//     can represent after one more period is added; timetable's own events
//     lie between 1970 and 2262.
package period
