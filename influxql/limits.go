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
// client left. A query over either is refused whole.
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
// largest int64, no limit at all). It reads the text as the parser's
// scanner does: strings, quoted names and comments are skipped, and a /
// where an operand is expected starts a regular expression, as the
// parser takes it; elsewhere it divides.
func checkText(q string) error {
	stmt, depth, ops := 1, 0, 0
	operand := false // the token before ends an operand
	var word string  // the keyword before, lower case, or ""
	for i := 0; i < len(q); {
		c := q[i]
		prevWord := word
		word = ""
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			word = prevWord // whitespace does not end what came before
			continue
		case c == '-' && strings.HasPrefix(q[i:], "--"):
			if j := strings.IndexByte(q[i:], '\n'); j >= 0 {
				i += j + 1
			} else {
				i = len(q)
			}
			word = prevWord
			continue
		case c == '/' && strings.HasPrefix(q[i:], "/*"):
			// A comment, as the scanner reads it; where the parser
			// would read a regular expression, one starting with * is
			// refused there, before what follows is parsed.
			if j := strings.Index(q[i+2:], "*/"); j >= 0 {
				i += j + 4
			} else {
				i = len(q)
			}
			word = prevWord
			continue
		case c == '\'' || c == '"' || (c == '/' && !operand):
			i = skipQuoted(q, i)
			operand = true
		case c == '$' || c == '_' || isLetter(c):
			j := i + 1
			for j < len(q) && (q[j] == '_' || isLetter(q[j]) || isDigit(q[j])) {
				j++
			}
			w := q[i:j]
			i = j
			switch tok := iql.Lookup(w); {
			case tok == iql.AND || tok == iql.OR:
				ops++
				operand = false
			case tok == iql.IDENT || tok == iql.TRUE || tok == iql.FALSE || c == '$' || prevWord == "::":
				operand = true
			default:
				operand = false
				word = strings.ToLower(w)
			}
		case isDigit(c) || (c == '.' && i+1 < len(q) && isDigit(q[i+1])):
			j := i
			for j < len(q) && (isDigit(q[j]) || q[j] == '.') {
				j++
			}
			digits := q[i:j]
			for j < len(q) {
				r, n := utf8.DecodeRuneInString(q[j:])
				if r != 'µ' && !isLetter(q[j]) {
					break
				}
				j += n
			}
			i = j
			operand = true
			switch prevWord {
			case "limit", "offset", "slimit", "soffset":
				if _, err := strconv.ParseInt(digits, 10, 64); errors.Is(err, strconv.ErrRange) {
					return fmt.Errorf("%s %s in statement %d is %w: at most %d", strings.ToUpper(prevWord), digits, stmt, ErrQueryLimit, int64(1<<63-1))
				}
			}
		case c == '(':
			i++
			if depth++; depth > MaxDepth {
				return fmt.Errorf("statement %d nests parentheses deeper than %d levels, %w (influxql.MaxDepth)", stmt, MaxDepth, ErrQueryLimit)
			}
			operand = false
		case c == ')':
			i++
			depth = max(depth-1, 0)
			operand = true
		case c == ';':
			i++
			stmt, depth, ops, operand = stmt+1, 0, 0, false
		case c == '*' && !operand:
			i++ // a wildcard
			operand = true
		case c == ':' && strings.HasPrefix(q[i:], "::"):
			i += 2
			word, operand = "::", false
		case strings.IndexByte("+-*/%&|^=!<>", c) >= 0:
			i++
			for _, two := range []string{"=~", "!=", "!~", "<=", ">=", "<>"} {
				if strings.HasPrefix(q[i-1:], two) {
					i++
					break
				}
			}
			ops++
			operand = false
		default:
			_, n := utf8.DecodeRuneInString(q[i:])
			i += n
			operand = false
		}
		if ops > MaxOperators {
			return fmt.Errorf("statement %d has more than %d operators, %w (influxql.MaxOperators): split it, or match many tag values with one regular expression (host =~ /^(a|b|c)$/)", stmt, MaxOperators, ErrQueryLimit)
		}
	}
	return nil
}

// skipQuoted returns the index after the string, quoted name or regular
// expression starting at q[i], whose first byte is its quote; a
// backslash escapes the byte after it. An unclosed one runs to the end.
func skipQuoted(q string, i int) int {
	quote := q[i]
	for i++; i < len(q); i++ {
		switch q[i] {
		case '\\':
			i++
		case quote:
			return i + 1
		}
	}
	return len(q)
}

func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
