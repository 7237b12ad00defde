package planner

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// fileShape mirrors the configuration file format (package config), strictly:
// ApplyFamily must write nothing else.
type fileShape struct {
	Families []struct {
		Name              string `yaml:"name"`
		Prefix            string `yaml:"prefix"`
		Period            string `yaml:"period"`
		Naming            string `yaml:"naming"`
		WriteTimeGrouping string `yaml:"write_time_grouping"`
		Shards            int    `yaml:"shards"`
		Layout            string `yaml:"layout"`
		Billing           string `yaml:"billing"`
		Tiers             []struct {
			Name     string `yaml:"name"`
			Age      string `yaml:"age"`
			Billing  string `yaml:"billing"`
			Read     int64  `yaml:"read"`
			Write    int64  `yaml:"write"`
			MaxWrite int64  `yaml:"max_write"`
			Class    string `yaml:"class"`
			PITR     bool   `yaml:"pitr"`
		} `yaml:"tiers"`
		Prebuild  string `yaml:"prebuild"`
		Grace     string `yaml:"grace"`
		Retention string `yaml:"retention"`
		TTL       string `yaml:"ttl"`
		Archive   *struct {
			Target string `yaml:"target"`
			Format string `yaml:"format"`
		} `yaml:"archive"`
	} `yaml:"families"`
	Tables map[string]map[string]string `yaml:"tables"`
}

func decodeShape(t *testing.T, doc []byte) fileShape {
	t.Helper()
	var s fileShape
	dec := yaml.NewDecoder(bytes.NewReader(doc))
	dec.KnownFields(true)
	require.NoError(t, dec.Decode(&s), string(doc))
	return s
}

func planFamily(t *testing.T) Family {
	t.Helper()
	r, err := Plan(Input{ItemBytes: 180, Rate: 5000, Peak: 6000, Retention: 90 * day})
	require.NoError(t, err)
	return r.Family
}

func TestApplyFamilyToEmptyFile(t *testing.T) {
	for _, doc := range []string{"", "# just a comment\n", "families:\n"} {
		out, err := ApplyFamily([]byte(doc), planFamily(t))
		require.NoError(t, err)
		s := decodeShape(t, out)
		require.Len(t, s.Families, 1)
		f := s.Families[0]
		require.Equal(t, "events", f.Name)
		require.Equal(t, "tt_events_", f.Prefix)
		require.Equal(t, "day", f.Period)
		require.Equal(t, "range", f.Naming)
		require.Equal(t, "month", f.WriteTimeGrouping)
		require.Equal(t, 6, f.Shards)
		require.Equal(t, "row", f.Layout)
		require.Equal(t, "provisioned", f.Billing)
		require.Equal(t, "90d", f.Retention)
		require.Equal(t, "1h", f.Prebuild)
		require.Equal(t, "15m", f.Grace)
		require.Len(t, f.Tiers, 3)
		require.Equal(t, "hot", f.Tiers[0].Name)
		require.Equal(t, "0", f.Tiers[0].Age)
		// Auto scaled at 70% from the average rate up to the peak.
		require.Equal(t, int64(7143), f.Tiers[0].Write)
		require.Equal(t, int64(8572), f.Tiers[0].MaxWrite)
		require.Equal(t, []bool{true, true, false}, []bool{f.Tiers[0].PITR, f.Tiers[1].PITR, f.Tiers[2].PITR})
		require.Equal(t, "2 periods", f.Tiers[2].Age)
		require.Equal(t, []string{"standard", "standard", "infrequent_access"}, []string{f.Tiers[0].Class, f.Tiers[1].Class, f.Tiers[2].Class})
	}
}

func TestApplyFamilyKeepsTheRest(t *testing.T) {
	doc := `# timetable configuration
families:
  - name: audit   # kept as it is
    prefix: tt_audit_
    period: month
  - name: events
    prefix: tt_events_
    period: week    # was weekly
    shards: 1
    ttl: 30d
tables:
  a_table: {family: events, layout: map, write_path: auto}
`
	out, err := ApplyFamily([]byte(doc), planFamily(t))
	require.NoError(t, err)
	text := string(out)
	require.Contains(t, text, "# timetable configuration")
	require.Contains(t, text, "# kept as it is")
	require.Contains(t, text, "# was weekly")
	s := decodeShape(t, out)
	require.Len(t, s.Families, 2)
	require.Equal(t, "audit", s.Families[0].Name)
	require.Equal(t, "month", s.Families[0].Period)
	require.Equal(t, "events", s.Families[1].Name)
	require.Equal(t, "day", s.Families[1].Period)
	require.Equal(t, 6, s.Families[1].Shards)
	require.Equal(t, "30d", s.Families[1].TTL, "keys the plan does not set are kept")
	require.Equal(t, map[string]string{"family": "events", "layout": "map", "write_path": "auto"}, s.Tables["a_table"])

	// Applying again changes nothing.
	again, err := ApplyFamily(out, planFamily(t))
	require.NoError(t, err)
	require.Equal(t, text, string(again))
}

func TestApplyFamilyAddsANewFamily(t *testing.T) {
	f := planFamily(t)
	f.Name, f.Prefix = "metrics", "tt_metrics_"
	out, err := ApplyFamily([]byte("families:\n  - name: events\n"), f)
	require.NoError(t, err)
	s := decodeShape(t, out)
	require.Len(t, s.Families, 2)
	require.Equal(t, "events", s.Families[0].Name)
	require.Empty(t, s.Families[0].Period)
	require.Equal(t, "metrics", s.Families[1].Name)
	require.Equal(t, "tt_metrics_", s.Families[1].Prefix)
}

func TestApplyFamilyRefusesOtherShapes(t *testing.T) {
	for name, doc := range map[string]string{
		"list at the top":       "- a\n- b\n",
		"families not a list":   "families: {name: events}\n",
		"a family not a map":    "families:\n  - events\n",
		"scalar at the top":     "hello\n",
		"not YAML":              "families: [\n",
		"families a plain text": "families: events\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ApplyFamily([]byte(doc), planFamily(t))
			require.Error(t, err)
			if name != "not YAML" {
				require.ErrorIs(t, err, ErrConfigShape)
			}
		})
	}
}

// A plan that archives writes the archive it priced and the retention at
// which tables leave DynamoDB; a plan that archives nothing removes an
// archive the family had, for it priced deleting tables at retention.
func TestApplyFamilyArchive(t *testing.T) {
	r, err := Plan(Input{ItemBytes: 180, Rate: 600, Retention: 365 * day, ArchiveAfter: 30 * day, ArchiveTarget: "s3://bucket/events"})
	require.NoError(t, err)
	out, err := ApplyFamily([]byte("families:\n  - name: events\n    ttl: 400d\n"), r.Family)
	require.NoError(t, err)
	s := decodeShape(t, out)
	require.Len(t, s.Families, 1)
	require.Equal(t, "30d", s.Families[0].Retention)
	require.Equal(t, "400d", s.Families[0].TTL)
	require.NotNil(t, s.Families[0].Archive, string(out))
	require.Equal(t, "s3://bucket/events", s.Families[0].Archive.Target)
	require.Equal(t, "parquet", string(s.Families[0].Archive.Format))

	r, err = Plan(Input{ItemBytes: 180, Rate: 600, Retention: 90 * day})
	require.NoError(t, err)
	out, err = ApplyFamily(out, r.Family)
	require.NoError(t, err)
	s = decodeShape(t, out)
	require.Equal(t, "90d", s.Families[0].Retention)
	require.Nil(t, s.Families[0].Archive, string(out))
	require.Equal(t, "400d", s.Families[0].TTL)
}
