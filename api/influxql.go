package api

// InfluxQLResponse is the answer of /query, as InfluxDB 1.x writes it:
// one result per statement, in order. Error is set, with no results,
// when the query as a whole could not be read (a parse error).
type InfluxQLResponse struct {
	Results []InfluxQLResult `json:"results"`
	Error   string           `json:"error,omitempty"`
}

// InfluxQLResult is the answer of one statement: its rows, grouped in
// series, or its error. Partial marks a chunk that more chunks of the same
// statement follow (chunked=true).
type InfluxQLResult struct {
	StatementID int              `json:"statement_id"`
	Series      []InfluxQLSeries `json:"series,omitempty"`
	Partial     bool             `json:"partial,omitempty"`
	Error       string           `json:"error,omitempty"`
}

// InfluxQLSeries is one series of a result: a measurement, the tags of
// its group, and rows of values in the order of its columns. Time, when
// a column, is first: an RFC 3339 string, or an integer at the
// request's epoch.
type InfluxQLSeries struct {
	Name    string            `json:"name,omitempty"`
	Tags    map[string]string `json:"tags,omitempty"`
	Columns []string          `json:"columns"`
	Values  [][]any           `json:"values,omitempty"`
	Partial bool              `json:"partial,omitempty"`
}
