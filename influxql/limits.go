package influxql

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	iql "github.com/influxdata/influxql"
)

// Bounds of a statement's text, checked before it is parsed: the parser
// descends a level of its stack for each parenthesis, and the reduction
// of a condition (iql.ConditionExpr) takes time that grows faster than
// its terms, so that an unbounded WHERE would hold a core long after its
// client left. A query over either is refused whole. The parser itself
// cannot be the check: its recursion over the parentheses is the cost
// being bounded, so the text is read by InfluxData's scanner, which
// reads it in one pass, before the parser runs.
const (
	// MaxDepth is the deepest nesting of parentheses in a statement,
	// function calls included.
	MaxDepth = 32
	// MaxOperators is the most operators in a statement: comparisons,
	// AND, OR, arithmetic and signs.
	MaxOperators = 1000
)

// ErrQueryLimit marks a query refused for a bound of this package
// (MaxDepth, MaxOperators, an integer out of range, no statement).
var ErrQueryLimit = errors.New("over a limit")

// checkText refuses a query whose text goes past MaxDepth or
// MaxOperators in a statement, or whose LIMIT, OFFSET, SLIMIT or SOFFSET
// is out of int64's range (which InfluxData's parser would take as the
// largest int64, no limit at all). It reads the text with InfluxData's
// scanner (iql.Scanner), whose tokens the parser reads: strings, quoted
// names and comments are single tokens. The scanner alone cannot tell a
// regular expression from a division, which the parser tells by where
// it is; checkText reads a / where an operand is expected as the parser
// does there, a regular expression (iql.ScanDelimited), and elsewhere,
// or where no regular expression ends, as a division, so that it counts
// at least what the parser builds (FuzzParse).
func checkText(q string) error {
	t := text{q: q}
	t.from(0)
	stmt, depth, ops := 1, 0, 0
	operand := false   // the token before ends an operand
	var prev iql.Token // the token before, whitespace and comments aside
	noRegex := -1      // no regular expression starts before this offset
	for {
		tok, pos, lit := t.s.Scan()
		switch tok {
		case iql.WS, iql.COMMENT:
			continue
		case iql.EOF:
			return nil
		}
		before := prev
		prev = tok
		switch {
		case tok == iql.DIV && !operand:
			// A regular expression: the scanner goes on after it.
			at := t.offset(pos)
			if at >= noRegex {
				r := strings.NewReader(q[at:])
				if _, err := iql.ScanDelimited(r, '/', '/', map[rune]rune{'/': '/'}, true); err == nil {
					t.from(len(q) - r.Len())
					operand = true
					continue
				}
				// No unescaped / ends one before the line's end, so
				// that none starting before it does either: each
				// text is scanned for a regular expression once.
				noRegex = len(q)
				if nl := strings.IndexByte(q[at:], '\n'); nl >= 0 {
					noRegex = at + nl
				}
			}
			ops++ // the parser refuses it, or reads it as a division
		case tok == iql.AND || tok == iql.OR:
			ops++
			operand = false
		case before == iql.DOUBLECOLON:
			operand = true // a cast's type
		case tok == iql.STRING || tok == iql.IDENT || tok == iql.BOUNDPARAM || tok == iql.TRUE || tok == iql.FALSE ||
			tok == iql.NUMBER || tok == iql.DURATIONVAL:
			operand = true
		case tok == iql.INTEGER:
			operand = true
			switch before {
			case iql.LIMIT, iql.OFFSET, iql.SLIMIT, iql.SOFFSET:
				if _, err := strconv.ParseInt(lit, 10, 64); errors.Is(err, strconv.ErrRange) {
					return fmt.Errorf("%s %s in statement %d is %w: at most %d", before, lit, stmt, ErrQueryLimit, int64(1<<63-1))
				}
			}
		case tok == iql.LPAREN:
			if depth++; depth > MaxDepth {
				return fmt.Errorf("statement %d nests parentheses deeper than %d levels, %w (influxql.MaxDepth)", stmt, MaxDepth, ErrQueryLimit)
			}
			operand = false
		case tok == iql.RPAREN:
			depth = max(depth-1, 0)
			operand = true
		case tok == iql.SEMICOLON:
			stmt, depth, ops, operand = stmt+1, 0, 0, false
		case tok == iql.MUL && !operand:
			operand = true // a wildcard
		case tok.Precedence() > 0: // the operators
			ops++
			operand = false
		default:
			operand = false
		}
		if ops > MaxOperators {
			return fmt.Errorf("statement %d has more than %d operators, %w (influxql.MaxOperators): split it, or match many tag values with one regular expression (host =~ /^(a|b|c)$/)", stmt, MaxOperators, ErrQueryLimit)
		}
	}
}

// text is a query's text read by iql.Scanner from an offset on, which
// turns the scanner's positions (a line and a rune in it, from where it
// began) back into offsets of the text. Positions only grow, so that it
// walks the text once.
type text struct {
	q string
	s *iql.Scanner
	// The scanner's position at off, an offset of q.
	line, char, off int
}

// from starts the scanner at offset off.
func (t *text) from(off int) {
	t.s = iql.NewScanner(strings.NewReader(t.q[off:]))
	t.line, t.char, t.off = 0, 0, off
}

// offset returns the offset of q at the scanner's position p, as the
// scanner counts them: a rune a character, "\r\n" and "\r" a line's end.
func (t *text) offset(p iql.Pos) int {
	for t.off < len(t.q) && (t.line < p.Line || (t.line == p.Line && t.char < p.Char)) {
		switch c := t.q[t.off]; c {
		case '\r', '\n':
			t.off++
			if c == '\r' && t.off < len(t.q) && t.q[t.off] == '\n' {
				t.off++
			}
			t.line, t.char = t.line+1, 0
		default:
			_, n := utf8.DecodeRuneInString(t.q[t.off:])
			t.off += n
			t.char++
		}
	}
	return t.off
}
