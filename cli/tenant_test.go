package cli

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
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

// The key commands work on the store as through a server.
func TestTenantKeysOnTheStore(t *testing.T) {
	store := "--store=pebble:" + filepath.Join(t.TempDir(), "data")
	first := strings.TrimSpace(mustRun(t, "", "tenant", "add", "acme", store).stdout)
	reader := mustRun(t, "", "tenant", "add-key", "acme", "--scope", "read", store)
	require.Regexp(t, `^tt_[A-Za-z0-9_-]{43}\n$`, reader.stdout)
	require.Contains(t, reader.stderr, "scope read")
	r := run(t, "", "tenant", "add-key", "acme", "--scope", "write", store)
	require.Equal(t, ExitUsage, ExitCode(r.err))

	var keys []keyRow
	require.NoError(t, json.Unmarshal([]byte(mustRun(t, "", "tenant", "keys", "acme", "--format", "json", store).stdout), &keys))
	require.Len(t, keys, 2)
	byScope := map[string]string{keys[0].Scope: keys[0].ID, keys[1].Scope: keys[1].ID}
	r = run(t, "", "tenant", "rotate", "acme", store)
	require.ErrorContains(t, r.err, "tenant acme has 2 live keys")
	require.Equal(t, ExitUsage, ExitCode(r.err))

	mustRun(t, "", "tenant", "revoke", "acme", byScope["read"], store)
	rot := mustRun(t, "", "tenant", "rotate", "acme", "--grace", "30m", store)
	require.NotEqual(t, first, strings.TrimSpace(rot.stdout))
	require.Contains(t, rot.stderr, byScope["all"]+" works until 2017-06-15T09:30:00Z")
	out := mustRun(t, "", "tenant", "keys", "acme", store).stdout
	require.Regexp(t, `^ID +SCOPE +STATE +CREATED +EXPIRES\n`, out)
	require.Regexp(t, byScope["all"]+` +all +expiring +2017-06-15T09:00:00Z +2017-06-15T09:30:00Z\n`, out)
	require.Regexp(t, byScope["read"]+` +read +revoked +2017-06-15T09:00:00Z +2017-06-15T09:00:00Z\n`, out)
	r = run(t, "", "tenant", "rotate", "acme", "--key", byScope["read"], store)
	require.ErrorIs(t, r.err, tenant.ErrNoSuchKey, "a revoked key is not rotated")

	mustRun(t, "", "tenant", "remove", "acme", store)
	require.Equal(t, "NAME  CREATED\n", mustRun(t, "", "tenant", "list", store).stdout)
	r = run(t, "", "tenant", "keys", "acme", store)
	require.ErrorIs(t, r.err, tenant.ErrNotFound)
}

// TestTenantRemoveDeletesData removes a tenant with --data delete: its
// events go, another tenant's stay, and --data takes only keep or delete.
func TestTenantRemoveDeletesData(t *testing.T) {
	store, _ := seeded(t)
	mustRun(t, "", "tenant", "add", "globex", store)
	mustRun(t, "", "write", store, "--tenant", "globex", "--table", "a_table", filepath.Join("testdata", "query", "events.ndjson"))
	r := run(t, "", "tenant", "remove", "acme", "--data", "maybe", store)
	require.ErrorContains(t, r.err, `--data "maybe": use keep or delete`)
	require.Equal(t, ExitUsage, ExitCode(r.err))

	r = mustRun(t, "", "tenant", "remove", "acme", "--data", "delete", store)
	require.Regexp(t, `^removed tenant acme: its keys are revoked; deleted \d+ items of its tables a_table\n$`, r.stdout)
	r = run(t, "", "query", store, "--tenant", "acme", "--table", "a_table", "--from", "0", "--to", testNow)
	require.Error(t, r.err, "acme has no table any more")
	r = mustRun(t, "", "query", store, "--tenant", "globex", "--table", "a_table", "--from", "2017-01-01T00:00:00Z", "--to", "2017-06-16T00:00:00Z", "--format", "csv")
	require.Len(t, strings.Split(strings.TrimSpace(r.stdout), "\n"), 9, "globex's eight events and the header")
}
