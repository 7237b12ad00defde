package server

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/timetabledb/timetable/engine"
)

// logicalTableJSON is a logical table as GET /v1/tables answers it.
type logicalTableJSON struct {
	Name    string `json:"name"`
	Family  string `json:"family"`
	Created string `json:"created,omitempty"`
	// First and Last are the times of the earliest and latest events
	// written, absent when the table has not been written since
	// timetable began to record them.
	First string `json:"first,omitempty"`
	Last  string `json:"last,omitempty"`
}

// listTables answers GET /v1/tables: the tenant's logical tables.
func (s *Server) listTables(w http.ResponseWriter, r *http.Request, tenant string) error {
	if err := checkParams(r.URL.Query()); err != nil {
		return err
	}
	tables, err := s.db.LogicalTables(r.Context(), tenant)
	if err != nil {
		return err
	}
	out := make([]logicalTableJSON, len(tables))
	for i, t := range tables {
		out[i] = logicalTableJSON{Name: t.Name, Family: t.Family, Created: formatTime(t.Created), First: formatTime(t.First), Last: formatTime(t.Last)}
	}
	writeJSON(w, http.StatusOK, map[string]any{"tables": out})
	return nil
}

// formatTime writes a time as the API does, "" for the zero time.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// seriesPage is GET /v1/tables/{table}/series's answer.
type seriesPage struct {
	Series     []string `json:"series"`
	NextCursor string   `json:"next_cursor,omitempty"`
}

// listSeries answers GET /v1/tables/{table}/series: a page of the
// table's series in bytewise order, those starting with prefix when it
// is given. The cursor is the page's last series in base64url: it names
// no other tenant's data, so it needs no signature.
func (s *Server) listSeries(w http.ResponseWriter, r *http.Request, tenant string) error {
	params := r.URL.Query()
	if err := checkParams(params, "prefix", "limit", "cursor"); err != nil {
		return err
	}
	limit := 0
	if v := params.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > engine.MaxSeriesLimit {
			return fmt.Errorf("%w: limit %q: use an integer from 1 to %d", ErrBadParameter, v, engine.MaxSeriesLimit)
		}
		limit = n
	}
	after, err := base64.RawURLEncoding.DecodeString(params.Get("cursor"))
	if err != nil {
		return fmt.Errorf("%w: cursor: not one this server gave (%v)", ErrBadParameter, err)
	}
	page, err := s.db.ListSeries(r.Context(), tenant, r.PathValue("table"), params.Get("prefix"), string(after), limit)
	if err != nil {
		return err
	}
	out := seriesPage{Series: page.Series}
	if page.Next != "" {
		out.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(page.Next))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
