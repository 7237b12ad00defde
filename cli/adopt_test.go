package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/pebblestore"
)

// A table named as the family's but not tagged with this deployment's
// meta table is left alone until an operator adopts it; one tagged with
// another deployment's needs --force.
func TestTablesAdopt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	store := "--store=pebble:" + dir
	mustRun(t, "", "tenant", "add", "acme", store)
	f := family.Default()
	at := func(s string) time.Time { tm, err := time.Parse(time.RFC3339, s); require.NoError(t, err); return tm }
	byHand := f.Spec(f.TableFor(at("2017-03-01T00:00:00Z"), at("2017-03-01T00:00:00Z")), f.Tiers[0])
	others := f.Spec(f.TableFor(at("2017-02-01T00:00:00Z"), at("2017-02-01T00:00:00Z")), f.Tiers[0])
	others.Tags[family.TagMeta] = "tt_meta_b"
	s, err := pebblestore.Open(dir, pebblestore.Options{})
	require.NoError(t, err)
	for _, spec := range []storage.TableSpec{byHand, others} {
		require.NoError(t, s.CreateTable(context.Background(), spec))
	}
	require.NoError(t, s.Close())

	names := func() []string {
		var ts []engine.TableStatus
		require.NoError(t, json.Unmarshal([]byte(mustRun(t, "", "tables", store, "--format", "json").stdout), &ts))
		var out []string
		for _, tb := range ts {
			out = append(out, tb.Name)
		}
		return out
	}
	mustRun(t, "", "reconcile", store)
	require.NotContains(t, names(), byHand.Name, "not adopted by itself")
	require.NotContains(t, names(), others.Name)

	r := mustRun(t, "", "tables", "adopt", store, byHand.Name)
	require.Contains(t, r.stdout, "adopted "+byHand.Name+` into family "events"`)
	require.Contains(t, names(), byHand.Name)

	r = run(t, "", "tables", "adopt", store, others.Name)
	require.ErrorContains(t, r.err, `belongs to the deployment of meta table "tt_meta_b"`)
	require.Equal(t, ExitUsage, ExitCode(r.err))
	mustRun(t, "", "tables", "adopt", store, "--force", others.Name)
	require.Contains(t, names(), others.Name)

	r = run(t, "", "tables", "adopt", store, "tt_sensors_x")
	require.ErrorContains(t, r.err, "no configured family's naming parses it")

	s, err = pebblestore.Open(dir, pebblestore.Options{})
	require.NoError(t, err)
	info, err := s.DescribeTable(context.Background(), byHand.Name)
	require.NoError(t, err)
	require.Equal(t, engine.DefaultMetaTable, info.Tags[family.TagMeta], "tagged as this deployment's")
	require.NoError(t, s.Close())
}

// Capacity changed outside timetable shows in `tables` as drift, and the
// lifecycle puts it back.
func TestTablesShowDrift(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	store := "--store=pebble:" + dir
	mustRun(t, "", "tenant", "add", "acme", store)
	mustRun(t, "", "write", store, "--tenant", "acme", "--table", "a_table", filepath.Join("testdata", "query", "events.ndjson"))
	var ts []engine.TableStatus
	require.NoError(t, json.Unmarshal([]byte(mustRun(t, "", "tables", store, "--format", "json").stdout), &ts))
	require.NotEmpty(t, ts)
	name := ts[0].Name
	for _, tb := range ts {
		require.Empty(t, tb.Drift)
	}

	s, err := pebblestore.Open(dir, pebblestore.Options{})
	require.NoError(t, err)
	changed := storage.Capacity{Billing: storage.Provisioned, Read: 4321, Write: 1234}
	require.NoError(t, s.UpdateTable(context.Background(), name, storage.TableUpdate{Capacity: &changed}))
	require.NoError(t, s.Close())

	out := mustRun(t, "", "tables", store).stdout
	require.Contains(t, out, "drift: "+name+": capacity changed outside timetable: the store has 4321 RCU/1234 WCU")
	require.NoError(t, json.Unmarshal([]byte(mustRun(t, "", "tables", store, "--format", "json").stdout), &ts))
	require.Contains(t, ts[0].Drift, "4321 RCU/1234 WCU")

	// A class changed outside timetable shows too.
	s, err = pebblestore.Open(dir, pebblestore.Options{})
	require.NoError(t, err)
	info, err := s.DescribeTable(context.Background(), name)
	require.NoError(t, err)
	changed = info.Capacity
	changed.Class = storage.ClassInfrequentAccess
	require.NoError(t, s.UpdateTable(context.Background(), name, storage.TableUpdate{Capacity: &changed}))
	require.NoError(t, s.Close())
	out = mustRun(t, "", "tables", store).stdout
	require.Contains(t, out, "table class changed outside timetable: the store has infrequent_access, the registry standard")
}
