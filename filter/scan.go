package filter

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/timetabledb/timetable/storage"
)

// tokenKind is what a token is.
type tokenKind int

const (
	tokEOF tokenKind = iota
	tokError
	tokName       // a bare name or keyword
	tokQuotedName // a `backquoted` name
	tokString     // a JSON string; value holds it decoded
	tokNumber     // a JSON number; value holds it canonical
	tokOp         // a comparison; op holds it
	tokLParen
	tokRParen
	tokComma
)

// token is one lexeme of an expression.
type token struct {
	kind  tokenKind
	pos   int
	text  string // as written, or the name of a quoted name, or why tokError
	value any
	op    storage.FilterOp
}

// isKeyword reports whether the token is the keyword kw.
func (t token) isKeyword(kw string) bool {
	return t.kind == tokName && strings.EqualFold(t.text, kw)
}

// literal returns the value of a literal token.
func (t token) literal() (any, bool) {
	switch {
	case t.kind == tokString, t.kind == tokNumber:
		return t.value, true
	case t.isKeyword("true"):
		return true, true
	case t.isKeyword("false"):
		return false, true
	case t.isKeyword("null"):
		return nil, true
	}
	return nil, false
}

// describe names the token for an error message.
func (t token) describe() string {
	switch t.kind {
	case tokEOF:
		return "the end"
	case tokError:
		return t.text
	case tokQuotedName:
		return "`" + t.text + "`"
	}
	return `"` + t.text + `"`
}

// scan reads the next token.
func (p *parser) scan() token {
	for p.pos < len(p.src) && strings.IndexByte(" \t\r\n", p.src[p.pos]) >= 0 {
		p.pos++
	}
	start := p.pos
	if p.pos == len(p.src) {
		return token{kind: tokEOF, pos: start}
	}
	c := p.src[p.pos]
	single := func(k tokenKind) token {
		p.pos++
		return token{kind: k, pos: start, text: string(c)}
	}
	switch {
	case c == '(':
		return single(tokLParen)
	case c == ')':
		return single(tokRParen)
	case c == ',':
		return single(tokComma)
	case c == '=' || c == '<' || c == '>' || c == '!':
		return p.scanOp()
	case c == '"':
		return p.scanString()
	case c == '`':
		end := strings.IndexByte(p.src[p.pos+1:], '`')
		if end < 0 {
			p.pos = len(p.src)
			return token{kind: tokError, pos: start, text: "an unterminated `name`"}
		}
		name := p.src[p.pos+1 : p.pos+1+end]
		p.pos += end + 2
		if name == "" {
			return token{kind: tokError, pos: start, text: "an empty name ``"}
		}
		return token{kind: tokQuotedName, pos: start, text: name}
	case c == '-' || ('0' <= c && c <= '9'):
		return p.scanNumber()
	case c == '_' || isLetter(c):
		for p.pos < len(p.src) && (p.src[p.pos] == '_' || isLetter(p.src[p.pos]) || isDigit(p.src[p.pos])) {
			p.pos++
		}
		return token{kind: tokName, pos: start, text: p.src[start:p.pos]}
	}
	r, size := utf8.DecodeRuneInString(p.src[p.pos:])
	p.pos += size
	return token{kind: tokError, pos: start, text: "an unexpected " + quoteRune(r)}
}

func (p *parser) scanOp() token {
	start := p.pos
	two := p.src[start:min(start+2, len(p.src))]
	ops := []struct {
		text string
		op   storage.FilterOp
	}{
		{"!=", storage.FilterNe}, {"<>", storage.FilterNe}, {"<=", storage.FilterLe}, {">=", storage.FilterGe},
		{"=", storage.FilterEq}, {"<", storage.FilterLt}, {">", storage.FilterGt},
	}
	for _, o := range ops {
		if strings.HasPrefix(two, o.text) {
			p.pos += len(o.text)
			return token{kind: tokOp, pos: start, text: o.text, op: o.op}
		}
	}
	p.pos++
	return token{kind: tokError, pos: start, text: `an unexpected "!" (write != or not)`}
}

// scanString reads a JSON string with encoding/json.
func (p *parser) scanString() token {
	start := p.pos
	i := p.pos + 1
	for i < len(p.src) {
		switch p.src[i] {
		case '\\':
			i += 2
			continue
		case '"':
			raw := p.src[start : i+1]
			p.pos = i + 1
			var s string
			if err := json.Unmarshal([]byte(raw), &s); err != nil {
				return token{kind: tokError, pos: start, text: "a bad string: " + strings.TrimPrefix(err.Error(), "json: ")}
			}
			return token{kind: tokString, pos: start, text: raw, value: s}
		}
		i++
	}
	p.pos = len(p.src)
	return token{kind: tokError, pos: start, text: "an unterminated string"}
}

// scanNumber reads a JSON number and makes it canonical.
func (p *parser) scanNumber() token {
	start := p.pos
	for p.pos < len(p.src) && strings.IndexByte("+-.eE0123456789", p.src[p.pos]) >= 0 {
		p.pos++
	}
	raw := p.src[start:p.pos]
	var n json.Number
	if err := json.Unmarshal([]byte(raw), &n); err != nil || !json.Valid([]byte(raw)) {
		return token{kind: tokError, pos: start, text: `a bad number "` + raw + `"`}
	}
	c, err := storage.CanonicalNumber(raw)
	if err != nil {
		return token{kind: tokError, pos: start, text: `a number DynamoDB cannot hold "` + raw + `"`}
	}
	return token{kind: tokNumber, pos: start, text: raw, value: c}
}

func isLetter(c byte) bool { return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }

func quoteRune(r rune) string {
	if r == utf8.RuneError {
		return "byte"
	}
	return `"` + string(r) + `"`
}
