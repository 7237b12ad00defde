package server

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/engine"
)

// listTables answers GET /v1/tables: the tenant's logical tables.
func (s *Server) listTables(w http.ResponseWriter, r *http.Request, tenant string) error {
	if err := checkParams(r.URL.Query()); err != nil {
		return err
	}
	tables, err := s.db.LogicalTables(r.Context(), tenant)
	if err != nil {
		return err
	}
	out := api.LogicalTables{Tables: make([]api.LogicalTable, len(tables))}
	for i, t := range tables {
		out.Tables[i] = api.LogicalTable{Name: t.Name, Family: t.Family, Created: t.Created.UTC(), First: t.First.UTC(), Last: t.Last.UTC()}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
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
	out := api.SeriesPage{Series: page.Series}
	if page.Next != "" {
		out.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(page.Next))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
