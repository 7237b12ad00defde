// Package filter reads the filter expressions of queries and aggregates
// (`filter=level = "ERROR" and temp > 30`) into a storage.Filter, which
// the DynamoDB backend pushes down as a FilterExpression and the embedded
// backend evaluates while it scans.
//
// # Language
//
//	expr       = or
//	or         = and { "or" and }
//	and        = unary { "and" unary }
//	unary      = "not" unary | primary
//	primary    = "(" expr ")" | comparison | function
//	comparison = operand op literal
//	           | operand "between" literal "and" literal
//	           | operand "in" "(" literal { "," literal } ")"
//	operand    = field | "size" "(" field ")"
//	op         = "=" | "!=" | "<>" | "<" | "<=" | ">" | ">="
//	function   = "exists" "(" field ")" | "begins_with" "(" field "," string ")"
//	           | "contains" "(" field "," ( string | number ) ")"
//	field      = name | "`" any text but "`" "`"
//	literal    = string | number | "true" | "false" | "null"
//
// A name is a letter or "_" followed by letters, digits and "_"; any other
// field name is written between backquotes. Strings and numbers are JSON's
// (a string in double quotes with JSON's escapes; a number like 30, -1.5
// or 2e3). Keywords (and, or, not, exists, begins_with, contains, size,
// between, in, true, false, null) are case-insensitive; field names are
// not. not binds tighter than and, and tighter than or.
//
// The meaning is DynamoDB's (see storage.Filter): = compares type and
// value, != holds for an event without the field, <, <=, > and >= compare
// strings bytewise and numbers by value and hold only when the field has
// the literal's type (so they take a string or a number, never true,
// false or null). a between x and y is a >= x and a <= y (x and y of one
// type, x not above y, as DynamoDB demands), and a in (x, y) is a = x or
// a = y, with at most MaxIn values: they are read into those, so
// Format writes them so. contains(a, v) holds for a string holding v, a
// string, or a list with an element equal to v. size(a) is the bytes of
// a string, the elements of a list or map; compared to a number, as a
// missing field for other types (size(a) != 3 holds for a number).
//
// series and time are not fields: an event's series and time are picked
// by the query's parameters, and a bare series or time in an expression
// is a mistake that says so. A field of either name is written in
// backquotes (`series`).
//
// # Limits
//
// An expression is at most MaxLength bytes, nests parentheses and nots at
// most MaxDepth deep, and holds at most MaxOperators operators: DynamoDB's
// 300 in one expression (storage.MaxExpressionOperators), less the 2 that
// the engine adds when it pushes a filter down ("f OR
// attribute_exists(tt_ids)"). Written as DynamoDB's FilterExpression it
// must also fit in DynamoDB's 4 KB, which the engine checks with the
// query's projection (storage.Query.ValidateFilter); only a filter of many
// begins_with on distinct fields comes near it. A mistake is a
// *SyntaxError naming the byte offset where it lies, and which limit.
package filter

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/timetabledb/timetable/storage"
)

// Limits of an expression.
const (
	MaxLength    = 4096
	MaxDepth     = 32
	MaxOperators = storage.MaxExpressionOperators - 2
)

// ErrBadFilter marks an expression that does not parse or cannot be
// applied; *SyntaxError wraps it.
var ErrBadFilter = storage.ErrBadFilter

// SyntaxError is a mistake in an expression.
type SyntaxError struct {
	// Offset is the 0-based byte offset of the mistake.
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("filter: %s at offset %d", e.Msg, e.Offset)
}

// Is reports that a SyntaxError is ErrBadFilter.
func (e *SyntaxError) Is(target error) bool { return target == ErrBadFilter }

// Parse reads an expression.
func Parse(s string) (*storage.Filter, error) {
	if len(s) > MaxLength {
		return nil, &SyntaxError{Offset: MaxLength, Msg: fmt.Sprintf("expression of %d bytes, over the %d-byte length limit", len(s), MaxLength)}
	}
	if !utf8.ValidString(s) {
		return nil, &SyntaxError{Offset: invalidUTF8(s), Msg: "invalid UTF-8"}
	}
	p := &parser{src: s}
	f, err := p.or(0)
	if err != nil {
		return nil, err
	}
	if tok := p.next(); tok.kind != tokEOF {
		return nil, p.errorAt(tok, "expected and, or or the end, found "+tok.describe())
	}
	if err := f.Validate(); err != nil {
		return nil, &SyntaxError{Offset: 0, Msg: strings.TrimPrefix(err.Error(), ErrBadFilter.Error()+": ")}
	}
	if n := f.Operators(); n > MaxOperators {
		return nil, &SyntaxError{Offset: 0, Msg: fmt.Sprintf("%d operators, over %d (DynamoDB's %d in one expression, less the 2 a read adds)", n, MaxOperators, storage.MaxExpressionOperators)}
	}
	return &f, nil
}

func invalidUTF8(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			return i
		}
	}
	return 0
}

// parser is a recursive-descent parser over the tokens of src.
type parser struct {
	src    string
	pos    int
	peeked *token
}

func (p *parser) errorAt(tok token, msg string) error {
	return &SyntaxError{Offset: tok.pos, Msg: msg}
}

func (p *parser) peek() token {
	if p.peeked == nil {
		tok := p.scan()
		p.peeked = &tok
	}
	return *p.peeked
}

// fieldAndLiteral reads the "(field, literal)" of the function fn,
// through its closing parenthesis: the literal a string, or with numbers
// a string or a number.
func (p *parser) fieldAndLiteral(fn string, numbers bool) (string, token, error) {
	p.next() // (
	field, err := p.field()
	if err != nil {
		return "", token{}, err
	}
	if err := p.expect(tokComma, ","); err != nil {
		return "", token{}, err
	}
	lit := p.next()
	if lit.kind != tokString && !(numbers && lit.kind == tokNumber) {
		want := "a string"
		if numbers {
			want = "a string or a number"
		}
		return "", token{}, p.errorAt(lit, fn+" takes "+want+", found "+lit.describe())
	}
	if err := p.expect(tokRParen, ")"); err != nil {
		return "", token{}, err
	}
	return field, lit, nil
}

func (p *parser) next() token {
	tok := p.peek()
	p.peeked = nil
	return tok
}

func (p *parser) or(depth int) (storage.Filter, error) {
	return p.chain(depth, "or", storage.FilterOr, p.and)
}

func (p *parser) and(depth int) (storage.Filter, error) {
	return p.chain(depth, "and", storage.FilterAnd, p.unary)
}

// chain reads operands joined by the keyword kw into one node of op.
func (p *parser) chain(depth int, kw string, op storage.FilterOp, operand func(int) (storage.Filter, error)) (storage.Filter, error) {
	first, err := operand(depth)
	if err != nil {
		return storage.Filter{}, err
	}
	args := []storage.Filter{first}
	for p.peek().isKeyword(kw) {
		p.next()
		f, err := operand(depth)
		if err != nil {
			return storage.Filter{}, err
		}
		args = append(args, f)
	}
	if len(args) == 1 {
		return first, nil
	}
	return storage.Filter{Op: op, Args: args}, nil
}

func (p *parser) unary(depth int) (storage.Filter, error) {
	tok := p.peek()
	if depth >= MaxDepth {
		return storage.Filter{}, p.errorAt(tok, fmt.Sprintf("nested more than %d deep, the depth limit", MaxDepth))
	}
	if tok.isKeyword("not") {
		p.next()
		f, err := p.unary(depth + 1)
		if err != nil {
			return storage.Filter{}, err
		}
		return storage.Filter{Op: storage.FilterNot, Args: []storage.Filter{f}}, nil
	}
	return p.primary(depth)
}

func (p *parser) primary(depth int) (storage.Filter, error) {
	tok := p.next()
	switch {
	case tok.kind == tokLParen:
		f, err := p.or(depth + 1)
		if err != nil {
			return storage.Filter{}, err
		}
		if c := p.next(); c.kind != tokRParen {
			return storage.Filter{}, p.errorAt(c, "expected ), found "+c.describe())
		}
		return f, nil
	case tok.isKeyword("exists") && p.peek().kind == tokLParen:
		p.next()
		field, err := p.field()
		if err != nil {
			return storage.Filter{}, err
		}
		if err := p.expect(tokRParen, ")"); err != nil {
			return storage.Filter{}, err
		}
		return storage.Filter{Op: storage.FilterExists, Attr: field}, nil
	case tok.isKeyword("begins_with") && p.peek().kind == tokLParen:
		field, s, err := p.fieldAndLiteral("begins_with", false)
		if err != nil {
			return storage.Filter{}, err
		}
		return storage.Filter{Op: storage.FilterBeginsWith, Attr: field, Value: s.value}, nil
	case tok.isKeyword("contains") && p.peek().kind == tokLParen:
		field, lit, err := p.fieldAndLiteral("contains", true)
		if err != nil {
			return storage.Filter{}, err
		}
		return storage.Filter{Op: storage.FilterContains, Attr: field, Value: lit.value}, nil
	case tok.isKeyword("size") && p.peek().kind == tokLParen:
		p.next()
		field, err := p.field()
		if err != nil {
			return storage.Filter{}, err
		}
		if err := p.expect(tokRParen, ")"); err != nil {
			return storage.Filter{}, err
		}
		return p.comparison(tok, field, true)
	case tok.kind == tokName || tok.kind == tokQuotedName:
		if err := notAField(tok); err != nil {
			return storage.Filter{}, err
		}
		return p.comparison(tok, tok.text, false)
	}
	return storage.Filter{}, p.errorAt(tok, "expected a field, not, ( or a function, found "+tok.describe())
}

// MaxIn is the most values IN takes: DynamoDB's limit.
const MaxIn = 100

// comparison reads what follows the operand tok, the field attr or its
// size: an operator and a literal, BETWEEN a AND b, or IN (a, b, ...).
// BETWEEN and IN are written as DynamoDB defines them: attr >= a and
// attr <= b, and attr = a or attr = b ...
func (p *parser) comparison(tok token, attr string, size bool) (storage.Filter, error) {
	op := p.next()
	switch {
	case op.isKeyword("between"):
		lo, err := p.ordered(size, "between")
		if err != nil {
			return storage.Filter{}, err
		}
		if and := p.next(); !and.isKeyword("and") {
			return storage.Filter{}, p.errorAt(and, "expected and in between ... and ..., found "+and.describe())
		}
		hiTok := p.peek()
		hi, err := p.ordered(size, "between")
		if err != nil {
			return storage.Filter{}, err
		}
		if c, ok := compareLiterals(lo, hi); !ok {
			return storage.Filter{}, p.errorAt(hiTok, "between takes two strings or two numbers")
		} else if c > 0 {
			return storage.Filter{}, p.errorAt(hiTok, "between: the lower bound is above the upper one")
		}
		return storage.Filter{Op: storage.FilterAnd, Args: []storage.Filter{
			{Op: storage.FilterGe, Attr: attr, Value: lo, Size: size},
			{Op: storage.FilterLe, Attr: attr, Value: hi, Size: size},
		}}, nil
	case op.isKeyword("in"):
		if err := p.expect(tokLParen, "( after in"); err != nil {
			return storage.Filter{}, err
		}
		var args []storage.Filter
		for {
			lit := p.next()
			v, ok := lit.literal()
			if !ok {
				return storage.Filter{}, p.errorAt(lit, "expected a string, number, true, false or null, found "+lit.describe())
			}
			if _, isNumber := v.(json.Number); size && !isNumber {
				return storage.Filter{}, p.errorAt(lit, "size compares to numbers, not "+lit.text)
			}
			if len(args) == MaxIn {
				return storage.Filter{}, p.errorAt(lit, fmt.Sprintf("in takes at most %d values", MaxIn))
			}
			args = append(args, storage.Filter{Op: storage.FilterEq, Attr: attr, Value: v, Size: size})
			sep := p.next()
			if sep.kind == tokRParen {
				break
			}
			if sep.kind != tokComma {
				return storage.Filter{}, p.errorAt(sep, "expected , or ), found "+sep.describe())
			}
		}
		if len(args) == 1 {
			return args[0], nil
		}
		return storage.Filter{Op: storage.FilterOr, Args: args}, nil
	case op.kind != tokOp:
		return storage.Filter{}, p.errorAt(op, fmt.Sprintf("expected a comparison (=, !=, <, <=, >, >=, between, in) after %s, found %s", tok.describe(), op.describe()))
	}
	lit := p.next()
	v, ok := lit.literal()
	if !ok {
		return storage.Filter{}, p.errorAt(lit, "expected a string, number, true, false or null, found "+lit.describe())
	}
	f := storage.Filter{Op: op.op, Attr: attr, Value: v, Size: size}
	switch v.(type) {
	case json.Number:
	case string:
		if size {
			return storage.Filter{}, p.errorAt(lit, "size compares to numbers, not "+lit.text)
		}
	default:
		if size {
			return storage.Filter{}, p.errorAt(lit, "size compares to numbers, not "+lit.text)
		}
		if op.op != storage.FilterEq && op.op != storage.FilterNe {
			return storage.Filter{}, p.errorAt(lit, fmt.Sprintf("%s compares strings or numbers, not %s", op.text, lit.text))
		}
	}
	return f, nil
}

// ordered reads a bound of between: a number, or a string unless size.
func (p *parser) ordered(size bool, what string) (any, error) {
	lit := p.next()
	switch {
	case lit.kind == tokNumber, lit.kind == tokString && !size:
		return lit.value, nil
	case size:
		return nil, p.errorAt(lit, "size compares to numbers, found "+lit.describe())
	}
	return nil, p.errorAt(lit, what+" takes strings or numbers, found "+lit.describe())
}

// compareLiterals orders two strings or two numbers.
func compareLiterals(a, b any) (int, bool) {
	switch a := a.(type) {
	case string:
		b, ok := b.(string)
		return strings.Compare(a, b), ok
	case json.Number:
		b, ok := b.(json.Number)
		if !ok {
			return 0, false
		}
		return storage.CompareNumbers(a, b)
	}
	return 0, false
}

// notAField refuses the bare names that readers take for fields but
// are an event's own parts: series and time, which a query selects with
// its parameters. A field of that name is written in backquotes.
func notAField(tok token) error {
	if tok.kind != tokName {
		return nil
	}
	switch tok.text {
	case "series":
		return &SyntaxError{Offset: tok.pos, Msg: "series is not a field: select series with the series parameter (series=car-17 on the API, --series on the CLI), or write `series` for a field named series"}
	case "time":
		return &SyntaxError{Offset: tok.pos, Msg: "time is not a field: bound times with from and to, or write `time` for a field named time"}
	}
	return nil
}

// field reads a field name.
func (p *parser) field() (string, error) {
	tok := p.next()
	if tok.kind != tokName && tok.kind != tokQuotedName {
		return "", p.errorAt(tok, "expected a field name, found "+tok.describe())
	}
	return tok.text, nil
}

func (p *parser) expect(kind tokenKind, what string) error {
	if tok := p.next(); tok.kind != kind {
		return p.errorAt(tok, "expected "+what+", found "+tok.describe())
	}
	return nil
}
