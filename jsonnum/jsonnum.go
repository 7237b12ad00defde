// Package jsonnum checks JSON number literals: the one home of the rule
// that event (what a stored number may be) and api (which numbers an
// answer writes as they are) both follow.
package jsonnum

// Valid reports whether s is a JSON number literal and nothing
// else: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, which JSON
// encoders write as it is. It checks in one pass, without allocating.
func Valid(s string) bool {
	digits := func(i int) int {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i
	}
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(i + 1)
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		if j := digits(i + 1); j > i+1 {
			i = j
		} else {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if j := digits(i); j > i {
			i = j
		} else {
			return false
		}
	}
	return i == len(s)
}
