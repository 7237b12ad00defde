package event

import (
	"encoding/binary"
	"errors"
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
	// names interns field names, keys and series, which repeat across a
	// body.
	names map[string]string
	// out receives the events: their fields are encoded into out.fields
	// as they are parsed (appendHashValue's encoding), then the event is
	// added, or its fields cut off again when it is refused.
	out batchWriter
	// members holds the members of the objects being parsed, innermost
	// last, to put them in bytewise key order once an object ends.
	members []member
	// scratch is where the members of an object are reordered.
	scratch []byte
	// arrival holds the field names of the event being parsed in the
	// order they came, and lastArrival those of the event before: events
	// of a body mostly have the same fields in the same order, so a name
	// is first compared with the one at its place in the event before,
	// before it is looked up in names.
	arrival, lastArrival []string
}

// member is a member of an object in out.fields: its key, and where its
// encoding (key and value) starts and ends.
type member struct {
	key        string
	start, end int
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

// errTooLarge is what the parser returns once what it built passes its
// batchWriter's limit; the decoders answer it with a
// *DecodedTooLargeError for the body.
var errTooLarge = errors.New("decoded too large")

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

// head is what an event holds besides its fields: the parser encodes
// those into p.out.fields.
type head struct {
	time       time.Time
	series, id string
}

// event parses the object at p.pos into an event, its fields encoded at
// the end of p.out.fields, which the caller cuts back to where they
// started when the event is refused. On return p.problem is "" if the
// event follows every rule.
func (p *parser) event() (head, error) {
	var ev head
	p.problem = ""
	p.path = p.path[:0]
	p.members = p.members[:0]
	p.pos++ // '{'
	seen := 0
	start := len(p.out.fields)
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
				ev.time, err = p.time()
			case keySeries:
				ev.series, err = p.text("series", p.lim.MaxSeries)
			case keyID:
				ev.id, err = p.text("id", p.lim.MaxID)
			case keyFields:
				// A second "fields" (a problem) replaces the first.
				p.out.fields = p.out.fields[:start]
				err = p.fields()
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
	if len(p.out.fields) == start {
		p.out.fields = append(p.out.fields, tagMap, 0)
	}
	if seen&keyTime == 0 {
		if p.lim.ReceiveTime {
			ev.time = p.now.UTC()
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

// fields parses an event's fields, an object or null for none, and
// encodes them at the end of p.out.fields; none are encoded as nothing.
func (p *parser) fields() error {
	switch p.peek() {
	case '{':
	case 'n':
		return p.literal("null")
	default:
		p.fail("fields: not an object")
		return p.skip()
	}
	p.pos++
	p.ws()
	if p.peek() == '}' {
		p.pos++
		return nil
	}
	start, base := len(p.out.fields), len(p.members)
	p.arrival = p.arrival[:0]
	for {
		p.ws()
		b, err := p.str()
		if err != nil {
			return err
		}
		var name string
		if i := len(p.arrival); i < len(p.lastArrival) && string(b) == p.lastArrival[i] {
			name = p.lastArrival[i]
		} else {
			name = p.intern(b)
		}
		p.arrival = append(p.arrival, name)
		if err := p.colon(); err != nil {
			return err
		}
		if reason := checkFieldName(name, p.lim); reason != "" {
			p.fail(reason)
		}
		p.path = append(p.path[:0], pathElem{key: name})
		at := len(p.out.fields)
		p.out.fields = appendLenString(p.out.fields, name)
		if err := p.value(1); err != nil {
			return err
		}
		p.path = p.path[:0]
		p.members = append(p.members, member{key: name, start: at, end: len(p.out.fields)})
		more, err := p.separator('}', "after a field")
		if err != nil {
			return err
		}
		if !more {
			break
		}
	}
	if count := len(p.members) - base; count > p.lim.MaxFields {
		p.fail(fieldCountReason(count, p.lim))
	}
	if dup := p.endObject(start, base); dup != "" {
		p.fail(fmt.Sprintf("fields: duplicate name %q", dup))
	}
	p.arrival, p.lastArrival = p.lastArrival, p.arrival
	return nil
}

// endObject finishes the encoding of an object whose members, from
// p.members[base:], were encoded from p.out.fields[start:] on: it puts
// them in bytewise key order and the map's tag and length before them.
// It returns a key that two members have, or "".
func (p *parser) endObject(start, base int) (dup string) {
	ms := p.members[base:]
	sorted := true
	for i := 1; i < len(ms); i++ {
		if c := strings.Compare(ms[i-1].key, ms[i].key); c >= 0 {
			sorted = false
			break
		}
	}
	if !sorted {
		slices.SortStableFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
		for i := 1; i < len(ms); i++ {
			if ms[i-1].key == ms[i].key && dup == "" {
				dup = ms[i].key
			}
		}
		p.scratch = append(p.scratch[:0], p.out.fields[start:]...)
		p.out.fields = p.out.fields[:start]
		for _, m := range ms {
			p.out.fields = append(p.out.fields, p.scratch[m.start-start:m.end-start]...)
		}
	}
	p.out.fields = insertHeader(p.out.fields, start, tagMap, len(ms))
	p.members = p.members[:base]
	return dup
}

// insertHeader puts a list's or a map's tag and length at b[start:],
// before its elements.
func insertHeader(b []byte, start int, tag byte, n int) []byte {
	var h [1 + binary.MaxVarintLen64]byte
	h[0] = tag
	k := 1 + binary.PutUvarint(h[1:], uint64(n))
	b = append(b, h[:k]...)
	copy(b[start+k:], b[start:len(b)-k])
	copy(b[start:], h[:k])
	return b
}

// value parses a field value at the given level (1 for a field) and
// encodes it at the end of p.out.fields.
func (p *parser) value(level int) error {
	switch c := p.peek(); c {
	case '"':
		b, err := p.str()
		if err != nil {
			return err
		}
		p.out.fields = appendLenBytes(append(p.out.fields, tagString), b)
		return nil
	case '{':
		if level >= p.lim.MaxDepth {
			p.failHere(depthReason(p.lim))
			p.out.fields = append(p.out.fields, tagNull)
			return p.skip()
		}
		return p.object(level)
	case '[':
		if level >= p.lim.MaxDepth {
			p.failHere(depthReason(p.lim))
			p.out.fields = append(p.out.fields, tagNull)
			return p.skip()
		}
		return p.array(level)
	case 't':
		p.out.fields = append(p.out.fields, tagTrue)
		return p.literal("true")
	case 'f':
		p.out.fields = append(p.out.fields, tagFalse)
		return p.literal("false")
	case 'n':
		p.out.fields = append(p.out.fields, tagNull)
		return p.literal("null")
	default:
		if c != '-' && !isDigit(c) {
			return p.unexpected("a value")
		}
		s, err := p.number()
		if err != nil {
			return err
		}
		b, reason := appendNumber(p.buf[:0], s)
		if reason != "" {
			p.failHere(reason)
			p.out.fields = append(p.out.fields, tagNull)
			return nil
		}
		p.buf = b
		p.out.fields = appendLenBytes(append(p.out.fields, tagNumber), b)
		if p.out.over() {
			return errTooLarge
		}
		return nil
	}
}

// appendLenBytes is appendLenString for bytes.
func appendLenBytes(b, s []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// object parses an object at the given level; its members are one level
// below.
func (p *parser) object(level int) error {
	p.pos++ // '{'
	start, base := len(p.out.fields), len(p.members)
	p.ws()
	if p.peek() == '}' {
		p.pos++
		p.out.fields = append(p.out.fields, tagMap, 0)
		return nil
	}
	for {
		p.ws()
		b, err := p.str()
		if err != nil {
			return err
		}
		k := p.intern(b)
		if err := p.colon(); err != nil {
			return err
		}
		if reason := checkKey(k); reason != "" {
			p.failHere(reason)
		}
		p.path = append(p.path, pathElem{key: k})
		at := len(p.out.fields)
		p.out.fields = appendLenString(p.out.fields, k)
		if err := p.value(level + 1); err != nil {
			return err
		}
		p.path = p.path[:len(p.path)-1]
		p.members = append(p.members, member{key: k, start: at, end: len(p.out.fields)})
		more, err := p.separator('}', "in an object")
		if err != nil {
			return err
		}
		if !more {
			if dup := p.endObject(start, base); dup != "" {
				p.failHere(fmt.Sprintf("duplicate key %q", dup))
			}
			return nil
		}
	}
}

// array parses an array at the given level; its elements are one level
// below.
func (p *parser) array(level int) error {
	p.pos++ // '['
	start := len(p.out.fields)
	p.ws()
	if p.peek() == ']' {
		p.pos++
		p.out.fields = append(p.out.fields, tagList, 0)
		return nil
	}
	for i := 0; ; i++ {
		p.ws()
		p.path = append(p.path, pathElem{index: i})
		if err := p.value(level + 1); err != nil {
			return err
		}
		p.path = p.path[:len(p.path)-1]
		more, err := p.separator(']', "in an array")
		if err != nil {
			return err
		}
		if !more {
			p.out.fields = insertHeader(p.out.fields, start, tagList, i+1)
			return nil
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
		// Most of a string's bytes are plain: passed over a run at a
		// time.
		for p.pos < len(d) && plainByte[d[p.pos]] {
			p.pos++
		}
		if p.pos == len(d) {
			break
		}
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

// plainByte holds the bytes a string holds as they are: ASCII, but for
// the quote, the backslash and control characters.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

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
