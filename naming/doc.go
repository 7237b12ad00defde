// Package naming formats and parses the names of timetable's physical
// tables. A family's tables share a prefix; after it, the name says which
// event period the table holds and, with write-time grouping, in which
// month its events were written. Two schemes are offered, the two of the
// source documents:
//
//	range (Fineo)  {prefix}{startUnixMs}_{endUnixMs}[_{writeMonth}_{writeYear}]
//	               tt_events_1491696000000_1492300799000_4_2017
//	date (AWS)     {prefix}{YYYY-MM-DD}            day and week (first day)
//	               {prefix}{YYYY-MM-DD-HH}         hour, 6h, 12h
//	               {prefix}{YYYY-MM}               month
//	               {prefix}{YYYY}-Q{n}             quarter
//	               each followed by _w{YYYY-MM} with write-time grouping:
//	               timeseries_2018-10-25_w2018-10
//
// Everything here is a pure function.
//
// # Decisions
//
//   - A name parses only if it is exactly the name Format would give its
//     table: the family's prefix, the right shape for the scheme and the
//     granularity, a period aligned to the granularity (and its week start),
//     and canonical digits (no '+', no zero-padded write month, the end
//     that belongs to the start). Anything else is foreign: Parse returns
//     an error wrapping ErrForeign, and timetable never touches the table.
//     Format(Parse(name)) == name for every name Parse accepts, so a table
//     has one name and a name one table.
//   - In range names, endUnixMs is the next period's start minus 1000 ms,
//     the period's last second inclusive, as in Fineo's published names.
//     Both millisecond numbers are zero-padded to 13 digits, so that names
//     of periods before 2001-09-09 (when Unix milliseconds reached 13
//     digits) still sort in time order; for every later period the names
//     are exactly Fineo's. A period that starts before the epoch (the week
//     around 1970-01-01, unless weeks start on Thursday) is written with a
//     '-' before its 13 digits. Thirteen digits last until 2286-11-20, well
//     past the last time timetable stores (2262).
//   - Write months in range names are Fineo's: month 1 to 12 without zero
//     padding, then the year. Those suffixes sort as strings ("10" before
//     "4"), so among the tables of one period the write months are not in
//     time order. Only the order of the period part follows time: readers
//     take all write months of a period anyway.
//   - Within one family, lexical order of names is time order of their
//     periods, for both schemes: range names have fixed-width numbers (the
//     one pre-epoch period sorts first, since '-' sorts before digits), and
//     date names fixed-width fields with the largest first. The date scheme
//     covers years 0000 to 9999.
//   - Names must be DynamoDB table names: 3 to 255 characters of
//     [A-Za-z0-9_.-]. Namer.Validate checks the prefix and that the longest
//     name the namer can produce fits, so every name Format produces for a
//     Ref the namer can name (see Format) is valid.
package naming
