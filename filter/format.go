package filter

import (
	"encoding/json"
	"strings"

	"github.com/timetabledb/timetable/storage"
)

// keywords are the words a bare field name cannot be.
var keywords = []string{"and", "or", "not", "exists", "begins_with", "contains", "size", "between", "in", "true", "false", "null", "series", "time"}

// Format writes f in the filter language, so that Parse reads it back as
// f: operands of and, or and not are parenthesised, and field names that
// are not plain names are backquoted.
func Format(f storage.Filter) string {
	var b strings.Builder
	format(&b, f)
	return b.String()
}

func format(b *strings.Builder, f storage.Filter) {
	switch f.Op {
	case storage.FilterAnd, storage.FilterOr:
		for i, a := range f.Args {
			if i > 0 {
				b.WriteString(" " + f.Op.String() + " ")
			}
			b.WriteByte('(')
			format(b, a)
			b.WriteByte(')')
		}
	case storage.FilterNot:
		b.WriteString("not (")
		format(b, f.Args[0])
		b.WriteByte(')')
	case storage.FilterExists:
		b.WriteString("exists(" + formatField(f.Attr) + ")")
	case storage.FilterBeginsWith, storage.FilterContains:
		b.WriteString(f.Op.String() + "(" + formatField(f.Attr) + ", " + formatValue(f.Value) + ")")
	default:
		operand := formatField(f.Attr)
		if f.Size {
			operand = "size(" + operand + ")"
		}
		b.WriteString(operand + " " + f.Op.String() + " " + formatValue(f.Value))
	}
}

func formatField(name string) string {
	plain := name != "" && (name[0] == '_' || isLetter(name[0]))
	for i := 0; plain && i < len(name); i++ {
		plain = name[i] == '_' || isLetter(name[i]) || isDigit(name[i])
	}
	for _, kw := range keywords {
		plain = plain && !strings.EqualFold(name, kw)
	}
	if plain {
		return name
	}
	return "`" + name + "`"
}

func formatValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case json.Number:
		return string(v)
	}
	out, _ := json.Marshal(v)
	return string(out)
}
