package parquetfile

import (
	"reflect"

	"github.com/parquet-go/parquet-go"
)

// orderedGroup is a group node whose fields come in the order they were
// added, where parquet.Group sorts them by name: the file's columns read
// tenant, table, time, series, id, the fields, fields_json.
type orderedGroup struct {
	parquet.Group
	names []string
}

func (g *orderedGroup) add(name string, n parquet.Node) {
	if g.Group == nil {
		g.Group = parquet.Group{}
	}
	g.Group[name] = n
	g.names = append(g.names, name)
}

// Fields returns the fields in the order they were added.
func (g orderedGroup) Fields() []parquet.Field {
	fs := make([]parquet.Field, len(g.names))
	for i, name := range g.names {
		fs[i] = field{Node: g.Group[name], name: name}
	}
	return fs
}

// field is a named node of an orderedGroup. Rows are built column by
// column (parquet.RowBuilder), never from Go values, so Value is unused.
type field struct {
	parquet.Node
	name string
}

func (f field) Name() string                      { return f.name }
func (f field) Value(reflect.Value) reflect.Value { return reflect.Value{} }
