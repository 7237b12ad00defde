package cli

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/tenant"
)

func TestTenant(t *testing.T) {
	store := "--store=pebble:" + filepath.Join(t.TempDir(), "data")

	r := mustRun(t, "", "tenant", "add", "acme", store)
	require.Regexp(t, regexp.MustCompile(`^tt_[A-Za-z0-9_-]{43}\n$`), r.stdout, "the key, alone on stdout")
	require.Contains(t, r.stderr, "cannot be shown again")
	other := mustRun(t, "", "tenant", "add", "globex", store)
	require.NotEqual(t, r.stdout, other.stdout)

	r = run(t, "", "tenant", "add", "acme", store)
	require.ErrorIs(t, r.err, tenant.ErrExists)
	require.Equal(t, ExitFailure, ExitCode(r.err))
	r = run(t, "", "tenant", "add", "Not A Name", store)
	require.ErrorIs(t, r.err, tenant.ErrBadName)
	r = run(t, "", "tenant", "add", store)
	require.Equal(t, ExitUsage, ExitCode(r.err))

	r = mustRun(t, "", "tenant", "list", store)
	require.Equal(t, "NAME    CREATED\nacme    2017-06-15T09:00:00Z\nglobex  2017-06-15T09:00:00Z\n", r.stdout)
	r = mustRun(t, "", "tenant", "list", store, "--format", "json")
	var list []map[string]string
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &list))
	require.Equal(t, []map[string]string{{"name": "acme", "created": "2017-06-15T09:00:00Z"}, {"name": "globex", "created": "2017-06-15T09:00:00Z"}}, list)
	r = run(t, "", "tenant", "list", store, "--format", "yaml")
	require.Equal(t, ExitUsage, ExitCode(r.err))
}
