package event

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// parser reads events from JSON text in one pass, checking syntax,
// validating and canonicalizing as it goes. Syntax errors are returned as
// *syntaxError and end the parse; an event that is well-formed JSON but
// breaks a rule records its first problem in problem and the parse goes on.
type parser struct {
	data []byte
	pos  int
	lim  *Limits
	now  time.Time

	// problem is the first problem of the event being parsed.
	problem string
	// path locates the value being parsed inside fields, for problems.
	path []pathElem
	// buf holds unescaped strings and canonical numbers.
	buf []byte
	// names interns field names and series, which repeat across a body.
	names map[string]string
	// values holds the text of the string and number values parsed
	// lately; each value is a substring of it (see valueText).
	values strings.Builder
	// fieldsHint is how many fields the last event had: the next one
	// likely has as many.
	fieldsHint int
	// arrival holds the field names of the event being parsed in the
	// order they came, and lastArrival those of the event before: events
	// of a body mostly have the same fields in the same order, so a name
	// is first compared with the one at its place in the event before,
	// before it is looked up in names.
	arrival, lastArrival []string
	// sortBuf is where names that did not come in order are sorted.
	sortBuf []string
	// sortedNames is the field names of the event just parsed in bytewise
	// order, nil when it has none (see Batch.names): the slice of the
	// event before when the names are the same.
	sortedNames []string
}

// valueChunk is the size of the chunks the text of values is copied
// into: one allocation for a few hundred numbers rather than one each.
const valueChunk = 4096

// valueText returns b as a string, copied into the current chunk of values,
// or into a string of its own when it is longer than a chunk.
func (p *parser) valueText(b []byte) string {
	if len(b) > valueChunk/4 {
		return string(b)
	}
	if p.values.Len()+len(b) > p.values.Cap() {
		// Start a new chunk; the values taken from the old one keep it.
		p.values = strings.Builder{}
		p.values.Grow(valueChunk)
	}
	start := p.values.Len()
	p.values.Write(b)
	return p.values.String()[start:]
}

// pathElem is an object key or, when key is "", an array index.
type pathElem struct {
	key   string
	index int
}

// Bounds of the parser's interning of repeated strings.
const (
	maxInterned    = 4096
	maxInternedLen = 64
)

// syntaxError is a place where the input is not JSON.
type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at offset %d", e.msg, e.off) }

func newParser(data []byte, lim *Limits, now time.Time) *parser {
	return &parser{data: data, lim: lim, now: now, names: make(map[string]string)}
}

func (p *parser) errorf(format string, args ...any) error {
	return &syntaxError{off: p.pos, msg: fmt.Sprintf(format, args...)}
}

// unexpected describes the byte at p.pos, or the end of input.
// separator reads what follows an element of a list or object after
// optional space: a ',' (more follow: true) or end, the closing '}' or
// ']' (false). Anything else is an error that says where it stood.
func (p *parser) separator(end byte, where string) (bool, error) {
	p.ws()
	switch p.peek() {
	case ',':
		p.pos++
		return true, nil
	case end:
		p.pos++
		return false, nil
	}
	return false, p.unexpected("',' or '" + string(end) + "' " + where)
}

func (p *parser) unexpected(want string) error {
	if p.pos >= len(p.data) {
		return p.errorf("unexpected end of input, expected %s", want)
	}
	return p.errorf("invalid character %s, expected %s", quoteByte(p.data[p.pos]), want)
}

func quoteByte(c byte) string {
	if c < utf8.RuneSelf {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

// ws skips JSON whitespace.
func (p *parser) ws() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// peek returns the byte at p.pos, or 0 at the end of input.
func (p *parser) peek() byte {
	if p.pos < len(p.data) {
		return p.data[p.pos]
	}
	return 0
}

// fail records reason as the event's problem unless it has one already.
func (p *parser) fail(reason string) {
	if p.problem == "" {
		p.problem = reason
	}
}

// failHere records reason for the value at p.path.
func (p *parser) failHere(reason string) {
	if p.problem != "" {
		return
	}
	var b strings.Builder
	b.WriteString("fields")
	for _, e := range p.path {
		if e.key != "" {
			b.WriteByte('.')
			b.WriteString(e.key)
		} else {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(e.index))
			b.WriteByte(']')
		}
	}
	b.WriteString(": ")
	b.WriteString(reason)
	p.problem = b.String()
}

// intern returns b as a string, shared with earlier equal strings.
func (p *parser) intern(b []byte) string {
	if s, ok := p.names[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(s) <= maxInternedLen && len(p.names) < maxInterned {
		p.names[s] = s
	}
	return s
}

// Bits of the top-level keys an event has shown.
const (
	keyTime = 1 << iota
	keySeries
	keyID
	keyFields
)

// event parses the object at p.pos into an event. On return p.problem is
// "" if the event follows every rule.
func (p *parser) event() (Event, error) {
	var ev Event
	p.problem = ""
	p.path = p.path[:0]
	p.pos++ // '{'
	seen := 0
	p.ws()
	if p.peek() == '}' {
		p.pos++
	} else {
		for {
			p.ws()
			key, err := p.str()
			if err != nil {
				return ev, err
			}
			bit := 0
			switch string(key) {
			case "time":
				bit = keyTime
			case "series":
				bit = keySeries
			case "id":
				bit = keyID
			case "fields":
				bit = keyFields
			default:
				p.fail(fmt.Sprintf("unknown key %q", key))
			}
			if seen&bit != 0 {
				p.fail(fmt.Sprintf("duplicate key %q", key))
			}
			seen |= bit
			if err := p.colon(); err != nil {
				return ev, err
			}
			switch bit {
			case keyTime:
				ev.Time, err = p.time()
			case keySeries:
				ev.Series, err = p.text("series", p.lim.MaxSeries)
			case keyID:
				ev.ID, err = p.text("id", p.lim.MaxID)
			case keyFields:
				ev.Fields, err = p.fields()
			default:
				err = p.skip()
			}
			if err != nil {
				return ev, err
			}
			more, err := p.separator('}', "after an event's value")
			if err != nil {
				return ev, err
			}
			if !more {
				break
			}
		}
	}
	if seen&keyTime == 0 {
		if p.lim.ReceiveTime {
			ev.Time = p.now.UTC()
		} else {
			p.fail(reasonTimeAbsent)
		}
	}
	return ev, nil
}

// colon reads the ':' after an object key and the whitespace around it.
func (p *parser) colon() error {
	p.ws()
	if p.peek() != ':' {
		return p.unexpected("':' after an object key")
	}
	p.pos++
	p.ws()
	return nil
}

// time parses an event's time and checks its bounds.
func (p *parser) time() (time.Time, error) {
	var t time.Time
	switch c := p.peek(); {
	case c == '"':
		s, err := p.str()
		if err != nil {
			return t, err
		}
		var ok bool
		if t, ok = parseRFC3339(s); !ok {
			if _, reason := parseMillis(s); reason == "" {
				p.fail(reasonTimeDigits)
			} else {
				p.fail(reasonTime)
			}
			return t, nil
		}
	case c == '-' || isDigit(c):
		s, err := p.number()
		if err != nil {
			return t, err
		}
		n, reason := parseMillis(s)
		if reason == "" {
			t, reason = p.lim.Precision.timeOf(n)
		}
		if reason != "" {
			p.fail(reason)
			return t, nil
		}
	default:
		p.fail(reasonTime)
		return t, p.skip()
	}
	if reason := checkTime(t, p.lim, p.now); reason != "" {
		p.fail(reason)
	}
	return t, nil
}

// text parses a series or an id: a string, or null for none.
func (p *parser) text(key string, max int) (string, error) {
	switch p.peek() {
	case '"':
		b, err := p.str()
		if err != nil {
			return "", err
		}
		if key == "id" && len(b) == 0 {
			p.fail("id: empty; leave it out to get an idempotent id")
			return "", nil
		}
		var s string
		if key == "series" {
			s = p.intern(b) // series repeat across a body; ids do not
		} else {
			s = string(b)
		}
		if reason := checkText(key, s, max); reason != "" {
			p.fail(reason)
		}
		return s, nil
	case 'n':
		return "", p.literal("null")
	default:
		p.fail(key + ": not a string")
		return "", p.skip()
	}
}

// fields parses an event's fields: an object, or null for none.
func (p *parser) fields() (map[string]any, error) {
	switch p.peek() {
	case '{':
	case 'n':
		return nil, p.literal("null")
	default:
		p.fail("fields: not an object")
		return nil, p.skip()
	}
	p.pos++
	p.ws()
	if p.peek() == '}' {
		p.pos++
		return nil, nil
	}
	m := make(map[string]any, p.fieldsHint)
	count := 0
	repeats := 0 // names found at their place in the event before
	p.arrival = p.arrival[:0]
	for {
		p.ws()
		b, err := p.str()
		if err != nil {
			return nil, err
		}
		var name string
		if i := len(p.arrival); i < len(p.lastArrival) && string(b) == p.lastArrival[i] {
			name = p.lastArrival[i]
			repeats++
		} else {
			name = p.intern(b)
		}
		p.arrival = append(p.arrival, name)
		if err := p.colon(); err != nil {
			return nil, err
		}
		count++
		if reason := checkFieldName(name, p.lim); reason != "" {
			p.fail(reason)
		}
		p.path = append(p.path[:0], pathElem{key: name})
		v, err := p.value(1)
		if err != nil {
			return nil, err
		}
		p.path = p.path[:0]
		if count <= p.lim.MaxFields {
			n := len(m)
			m[name] = v
			if len(m) == n {
				p.fail(fmt.Sprintf("fields: duplicate name %q", name))
			}
		}
		more, err := p.separator('}', "after a field")
		if err != nil {
			return nil, err
		}
		if !more {
			break
		}
	}
	if count > p.lim.MaxFields {
		p.fail(fieldCountReason(count, p.lim))
	}
	p.fieldsHint = len(m)
	if repeats != len(p.arrival) || len(p.arrival) != len(p.lastArrival) {
		p.sortNames()
	} // else the names of the event before, in the same order: sortedNames holds them
	p.arrival, p.lastArrival = p.lastArrival, p.arrival
	return m, nil
}

// fieldNames returns the sorted field names of ev, the event just
// parsed, for its Batch.
func (p *parser) fieldNames(ev Event) []string {
	if ev.Fields == nil {
		return nil
	}
	return p.sortedNames
}

// sortNames sets sortedNames to the names in arrival in bytewise order,
// sharing the slice of the event before when they are the same names.
// Names come sorted when a client encodes its maps as encoding/json does.
func (p *parser) sortNames() {
	names := p.arrival
	if !slices.IsSorted(names) {
		p.sortBuf = append(p.sortBuf[:0], names...)
		slices.Sort(p.sortBuf)
		names = p.sortBuf
	}
	if !slices.Equal(names, p.sortedNames) {
		p.sortedNames = slices.Clone(names)
	}
}

// value parses a field value at the given level (1 for a field).
func (p *parser) value(level int) (any, error) {
	switch c := p.peek(); c {
	case '"':
		b, err := p.str()
		if err != nil {
			return nil, err
		}
		return p.valueText(b), nil
	case '{':
		if level >= p.lim.MaxDepth {
			p.failHere(depthReason(p.lim))
			return nil, p.skip()
		}
		return p.object(level)
	case '[':
		if level >= p.lim.MaxDepth {
			p.failHere(depthReason(p.lim))
			return nil, p.skip()
		}
		return p.array(level)
	case 't':
		return true, p.literal("true")
	case 'f':
		return false, p.literal("false")
	case 'n':
		return nil, p.literal("null")
	default:
		if c != '-' && !isDigit(c) {
			return nil, p.unexpected("a value")
		}
		s, err := p.number()
		if err != nil {
			return nil, err
		}
		b, reason := appendNumber(p.buf[:0], s)
		if reason != "" {
			p.failHere(reason)
			return nil, nil
		}
		p.buf = b
		return json.Number(p.valueText(b)), nil
	}
}

// object parses an object at the given level; its members are one level
// below.
func (p *parser) object(level int) (any, error) {
	p.pos++ // '{'
	m := make(map[string]any)
	p.ws()
	if p.peek() == '}' {
		p.pos++
		return m, nil
	}
	for {
		p.ws()
		b, err := p.str()
		if err != nil {
			return nil, err
		}
		k := p.intern(b)
		if err := p.colon(); err != nil {
			return nil, err
		}
		if reason := checkKey(k); reason != "" {
			p.failHere(reason)
		}
		p.path = append(p.path, pathElem{key: k})
		v, err := p.value(level + 1)
		if err != nil {
			return nil, err
		}
		p.path = p.path[:len(p.path)-1]
		n := len(m)
		m[k] = v
		if len(m) == n {
			p.failHere(fmt.Sprintf("duplicate key %q", k))
		}
		more, err := p.separator('}', "in an object")
		if err != nil {
			return nil, err
		}
		if !more {
			return m, nil
		}
	}
}

// array parses an array at the given level; its elements are one level
// below.
func (p *parser) array(level int) (any, error) {
	p.pos++ // '['
	l := []any{}
	p.ws()
	if p.peek() == ']' {
		p.pos++
		return l, nil
	}
	for i := 0; ; i++ {
		p.ws()
		p.path = append(p.path, pathElem{index: i})
		v, err := p.value(level + 1)
		if err != nil {
			return nil, err
		}
		p.path = p.path[:len(p.path)-1]
		l = append(l, v)
		more, err := p.separator(']', "in an array")
		if err != nil {
			return nil, err
		}
		if !more {
			return l, nil
		}
	}
}

// literal reads true, false or null.
func (p *parser) literal(word string) error {
	if len(p.data)-p.pos >= len(word) && string(p.data[p.pos:p.pos+len(word)]) == word {
		p.pos += len(word)
		return nil
	}
	return p.unexpected("a value")
}

// number reads a JSON number and returns its text.
func (p *parser) number() ([]byte, error) {
	start := p.pos
	d := p.data
	if p.peek() == '-' {
		p.pos++
	}
	switch c := p.peek(); {
	case c == '0':
		p.pos++
	case c >= '1' && c <= '9':
		for p.pos < len(d) && isDigit(d[p.pos]) {
			p.pos++
		}
	default:
		return nil, p.unexpected("a digit")
	}
	if p.peek() == '.' {
		p.pos++
		if !isDigit(p.peek()) {
			return nil, p.unexpected("a digit after the decimal point")
		}
		for p.pos < len(d) && isDigit(d[p.pos]) {
			p.pos++
		}
	}
	if c := p.peek(); c == 'e' || c == 'E' {
		p.pos++
		if c := p.peek(); c == '+' || c == '-' {
			p.pos++
		}
		if !isDigit(p.peek()) {
			return nil, p.unexpected("a digit in the exponent")
		}
		for p.pos < len(d) && isDigit(d[p.pos]) {
			p.pos++
		}
	}
	return d[start:p.pos], nil
}

// str reads a JSON string and returns its contents: a slice of the input
// when it holds no escape, or else of p.buf, valid until the next use of
// p.buf. The string must be valid UTF-8 and its escapes must not leave a
// lone surrogate.
func (p *parser) str() ([]byte, error) {
	if p.peek() != '"' {
		return nil, p.unexpected("a string")
	}
	p.pos++
	start := p.pos
	d := p.data
	for p.pos < len(d) {
		c := d[p.pos]
		switch {
		case c == '"':
			p.pos++
			return d[start : p.pos-1], nil
		case c == '\\':
			return p.escaped(start)
		case c < 0x20:
			return nil, p.errorf("control character %s in a string", quoteByte(c))
		case c < utf8.RuneSelf:
			p.pos++
		default:
			r, size := utf8.DecodeRune(d[p.pos:])
			if r == utf8.RuneError && size == 1 {
				return nil, p.errorf("invalid UTF-8 in a string")
			}
			p.pos += size
		}
	}
	return nil, p.unexpected("'\"' to end the string")
}

// escaped finishes reading a string that started at start and holds an
// escape at p.pos, unescaping it into p.buf.
func (p *parser) escaped(start int) ([]byte, error) {
	d := p.data
	b := append(p.buf[:0], d[start:p.pos]...)
	for p.pos < len(d) {
		c := d[p.pos]
		switch {
		case c == '"':
			p.pos++
			p.buf = b
			return b, nil
		case c == '\\':
			p.pos++
			switch e := p.peek(); e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				p.pos++
				r, err := p.hex4()
				if err != nil {
					return nil, err
				}
				if utf16IsSurrogate(r) {
					if r >= 0xDC00 || p.pos+1 >= len(d) || d[p.pos] != '\\' || d[p.pos+1] != 'u' {
						return nil, p.errorf("lone UTF-16 surrogate in a \\u escape")
					}
					p.pos += 2
					r2, err := p.hex4()
					if err != nil {
						return nil, err
					}
					if r2 < 0xDC00 || r2 > 0xDFFF {
						return nil, p.errorf("lone UTF-16 surrogate in a \\u escape")
					}
					r = 0x10000 + (r-0xD800)<<10 + (r2 - 0xDC00)
				}
				b = utf8.AppendRune(b, r)
				continue
			default:
				return nil, p.unexpected("an escape character")
			}
			p.pos++
		case c < 0x20:
			return nil, p.errorf("control character %s in a string", quoteByte(c))
		case c < utf8.RuneSelf:
			b = append(b, c)
			p.pos++
		default:
			r, size := utf8.DecodeRune(d[p.pos:])
			if r == utf8.RuneError && size == 1 {
				return nil, p.errorf("invalid UTF-8 in a string")
			}
			b = append(b, d[p.pos:p.pos+size]...)
			p.pos += size
		}
	}
	p.buf = b
	return nil, p.unexpected("'\"' to end the string")
}

// hex4 reads the four hex digits of a \u escape.
func (p *parser) hex4() (rune, error) {
	if len(p.data)-p.pos < 4 {
		p.pos = len(p.data)
		return 0, p.unexpected("four hex digits")
	}
	var r rune
	for i := 0; i < 4; i++ {
		c := p.data[p.pos]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, p.unexpected("a hex digit")
		}
		r = r<<4 | rune(c)
		p.pos++
	}
	return r, nil
}

func utf16IsSurrogate(r rune) bool { return 0xD800 <= r && r <= 0xDFFF }

// skip reads any JSON value and discards it. It checks syntax as the rest
// of the parser does but keeps its own stack, so that no input nests it
// deeper in Go's stack.
func (p *parser) skip() error {
	var stack []byte // '{' or '[' of each open container
	for {
		// A value is expected at p.pos.
		p.ws()
		switch c := p.peek(); {
		case c == '{' || c == '[':
			p.pos++
			p.ws()
			if (c == '{' && p.peek() == '}') || (c == '[' && p.peek() == ']') {
				p.pos++
				break
			}
			stack = append(stack, c)
			if c == '{' {
				if err := p.key(); err != nil {
					return err
				}
			}
			continue
		case c == '"':
			if _, err := p.str(); err != nil {
				return err
			}
		case c == 't':
			if err := p.literal("true"); err != nil {
				return err
			}
		case c == 'f':
			if err := p.literal("false"); err != nil {
				return err
			}
		case c == 'n':
			if err := p.literal("null"); err != nil {
				return err
			}
		case c == '-' || isDigit(c):
			if _, err := p.number(); err != nil {
				return err
			}
		default:
			return p.unexpected("a value")
		}
		// A value ended: close containers until one goes on.
		for {
			if len(stack) == 0 {
				return nil
			}
			p.ws()
			top := stack[len(stack)-1]
			c := p.peek()
			if c == ',' {
				p.pos++
				if top == '{' {
					if err := p.key(); err != nil {
						return err
					}
				}
				break
			}
			if (top == '{' && c == '}') || (top == '[' && c == ']') {
				p.pos++
				stack = stack[:len(stack)-1]
				continue
			}
			if top == '{' {
				return p.unexpected("',' or '}' in an object")
			}
			return p.unexpected("',' or ']' in an array")
		}
	}
}

// key reads an object key and its colon.
func (p *parser) key() error {
	p.ws()
	if _, err := p.str(); err != nil {
		return err
	}
	return p.colon()
}
