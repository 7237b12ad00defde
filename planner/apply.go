package planner

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// ErrConfigShape marks a configuration file ApplyFamily cannot edit: its
// top level is not a mapping, or its families key is not a list of
// mappings.
var ErrConfigShape = errors.New("timetable: configuration file has an unexpected shape")

// ApplyFamily returns the YAML configuration doc with the family f written
// into its families list: it replaces the keys f sets in the family of the
// same name, or appends f when there is none. The archive is one of them:
// a family f archives nothing gets none, for its tables are deleted at
// retention as the plan priced them. It edits the document's node tree,
// so comments, key order, other families and every other key (including
// keys of the family that f does not set, such as ttl) are kept. An empty
// doc gives a file holding just f.
func ApplyFamily(doc []byte, f Family) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, fmt.Errorf("apply family %q: read config: %w", f.Name, err)
	}
	if root.Kind == 0 {
		root = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	top := root.Content[0]
	if top.Kind == yaml.ScalarNode && top.Tag == "!!null" {
		*top = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", HeadComment: top.HeadComment, FootComment: top.FootComment}
	}
	if top.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("apply family %q: %w: the top level is not a mapping", f.Name, ErrConfigShape)
	}
	families := mapValue(top, "families")
	switch {
	case families == nil:
		families = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		top.Content = append(top.Content, strNode("families"), families)
	case families.Kind == yaml.ScalarNode && families.Tag == "!!null":
		*families = yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", LineComment: families.LineComment}
	case families.Kind != yaml.SequenceNode:
		return nil, fmt.Errorf("apply family %q: %w: families is not a list", f.Name, ErrConfigShape)
	}
	var target *yaml.Node
	for _, item := range families.Content {
		if item.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("apply family %q: %w: a family is not a mapping", f.Name, ErrConfigShape)
		}
		if name := mapValue(item, "name"); name != nil && name.Value == f.Name {
			target = item
		}
	}
	if target == nil {
		target = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		families.Content = append(families.Content, target)
	}
	for _, kv := range familyNodes(f) {
		setMapValue(target, kv.key, kv.value)
	}
	if f.Archive == nil {
		deleteMapValue(target, "archive")
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&root); err != nil {
		return nil, fmt.Errorf("apply family %q: write config: %w", f.Name, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("apply family %q: write config: %w", f.Name, err)
	}
	return out.Bytes(), nil
}

type keyValue struct {
	key   string
	value *yaml.Node
}

// familyNodes returns the family's keys in the order the config package doc lists
// them.
func familyNodes(f Family) []keyValue {
	tiers := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, t := range f.Tiers {
		content := []*yaml.Node{
			strNode("name"), strNode(t.Name),
			strNode("age"), durationNode(t.Age),
			strNode("billing"), strNode(t.Billing),
		}
		if t.Billing == BillingProvisioned {
			content = append(content, strNode("read"), intNode(t.Read), strNode("write"), intNode(t.Write))
			if t.MaxWrite > 0 {
				content = append(content, strNode("max_write"), intNode(t.MaxWrite))
			}
		}
		// The class is written whatever it is: a tier the file lists
		// without one is of the standard class, and the lifecycle must
		// store each tier in the class the plan priced.
		content = append(content, strNode("class"), strNode(t.Class.Name()))
		// So is point-in-time recovery, which the bill prices.
		content = append(content, strNode("pitr"), boolNode(t.PITR))
		tiers.Content = append(tiers.Content, &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle, Content: content})
	}
	kvs := []keyValue{
		{"name", strNode(f.Name)},
		{"prefix", strNode(f.Prefix)},
		{"period", strNode(f.Period)},
		{"naming", strNode(f.Naming)},
		{"write_time_grouping", strNode(f.WriteTimeGrouping)},
		{"shards", intNode(int64(f.Shards))},
		{"layout", strNode(f.Layout)},
		{"billing", strNode(f.Billing)},
		{"tiers", tiers},
		{"prebuild", durationNode(f.Prebuild)},
		{"grace", durationNode(f.Grace)},
		{"retention", durationNode(f.Retention)},
	}
	if f.ChunkWindow != "" {
		kvs = append(kvs, keyValue{"chunk_window", durationNode(f.ChunkWindow)})
	}
	if f.Archive != nil {
		kvs = append(kvs, keyValue{"archive", &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle, Content: []*yaml.Node{
			strNode("target"), strNode(f.Archive.Target),
			strNode("format"), strNode(string(f.Archive.Format)),
		}}})
	}
	return kvs
}

func boolNode(b bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(b)}
}

func strNode(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func intNode(n int64) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(n, 10)}
}

// durationNode writes a duration or age; "0" is written as a plain 0, as
// the config package doc spells it.
func durationNode(s string) *yaml.Node {
	if s == "0" {
		return intNode(0)
	}
	return strNode(s)
}

// mapValue returns the value of key in a mapping node, or nil.
func mapValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// deleteMapValue removes key and its value from a mapping node.
func deleteMapValue(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}

// setMapValue sets key to v in a mapping node, keeping the comments of a
// value it replaces, or appends the pair.
func setMapValue(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			old := m.Content[i+1]
			v.HeadComment, v.LineComment, v.FootComment = old.HeadComment, old.LineComment, old.FootComment
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, strNode(key), v)
}
