package server_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/server"
)

// TestRefusedNotChanged holds the server to refusing, with a JSON 4xx
// that says why, inputs it used to change silently or crash on.
func TestRefusedNotChanged(t *testing.T) {
	f := newFixture(t, server.Options{AdminToken: adminToken})
	admin := func(method, path, body string) response {
		return f.do(method, path, adminToken, []byte(body), "Content-Type", "application/json")
	}
	t.Run("a query string that does not decode", func(t *testing.T) {
		for _, path := range []string{"/v1/tables/t/events?from=0&bad=%zz", "/v1/tables/t/events?%zz", "/v1/admin/tenants?x=%"} {
			res := f.do("GET", path, f.acme, nil)
			if path[:9] == "/v1/admin" {
				res = admin("GET", path, "")
			}
			require.Equal(t, http.StatusBadRequest, res.status, "%s: %s", path, res.body)
			require.Contains(t, res.json(t)["error"], "the query string does not decode", path)
		}
	})
	t.Run("admin bodies as strict as the event API's", func(t *testing.T) {
		for _, body := range []string{
			`{"name": "beta", "name": "gamma"}`,
			`{"name": "beta"} {"name": "gamma"}`,
			`{"name": "beta"}x`,
			`{"name": "beta"}]`,
		} {
			res := admin("POST", "/v1/admin/tenants", body)
			require.Equal(t, http.StatusBadRequest, res.status, "%s: %s", body, res.body)
		}
		require.Equal(t, http.StatusCreated, admin("POST", "/v1/admin/tenants", "{\"name\": \"beta\"}\n").status)
	})
	t.Run("an empty scope is no scope of all", func(t *testing.T) {
		res := admin("POST", "/v1/admin/tenants/acme/keys", `{"scope": ""}`)
		require.Equal(t, http.StatusBadRequest, res.status, "%s", res.body)
		require.Contains(t, res.json(t)["error"], "bad API key scope")
		res = admin("POST", "/v1/admin/tenants/acme/keys", `{}`)
		require.Equal(t, http.StatusCreated, res.status, "%s", res.body)
		require.Equal(t, "all", res.json(t)["scope"])
	})
	t.Run("a key rotated already is not rotated again", func(t *testing.T) {
		res := admin("POST", "/v1/admin/tenants/acme/keys", `{"scope": "read"}`)
		require.Equal(t, http.StatusCreated, res.status)
		id := res.json(t)["id"].(string)
		res = admin("POST", "/v1/admin/tenants/acme/keys/"+id+"/rotate", `{"grace": "1h"}`)
		require.Equal(t, http.StatusCreated, res.status, "%s", res.body)
		res = admin("POST", "/v1/admin/tenants/acme/keys/"+id+"/rotate", `{"grace": "1h"}`)
		require.Equal(t, http.StatusConflict, res.status, "%s", res.body)
		require.Contains(t, res.json(t)["error"], "already rotated")
	})
	t.Run("the planner's numbers", func(t *testing.T) {
		for _, rate := range []string{"1e300", "1e20", "NaN", "Inf"} {
			res := admin("GET", "/v1/admin/planner?rate="+rate, "")
			require.Equal(t, http.StatusBadRequest, res.status, "%s: %s", rate, res.body)
		}
		for _, q := range []string{"rate=1000", "rate=1e9&series=1e9&item_bytes=409600", "rate=0.001"} {
			res := admin("GET", "/v1/admin/planner?"+q, "")
			require.Less(t, res.status, 500, "%s: %s", q, res.body)
		}
	})
}
