package iampolicy

import (
	"fmt"
	"strings"
)

// condition evaluates one key of one operator: have are the request's
// values of the key (nil when it lacks the key), want the policy's.
func condition(op string, want, have []string, ctx map[string][]string) (bool, error) {
	qualifier, base, _ := strings.Cut(op, ":")
	if base == "" {
		qualifier, base = "", op
	}
	ifExists := strings.HasSuffix(base, "IfExists")
	base = strings.TrimSuffix(base, "IfExists")

	switch base {
	case "Null":
		if qualifier != "" || ifExists {
			return false, fmt.Errorf("operator %q: Null takes no qualifier", op)
		}
		for _, w := range want {
			if (w == "true") == (have == nil) {
				return true, nil
			}
		}
		return false, nil
	case "Bool":
		if qualifier != "" {
			return false, fmt.Errorf("operator %q: Bool takes no qualifier", op)
		}
		if have == nil {
			return ifExists, nil
		}
		return matchOne(want, have[0], strings.EqualFold, ctx), nil
	}
	var match func(pattern, value string) bool
	negated := false
	switch base {
	case "StringEquals":
		match = func(p, v string) bool { return p == v }
	case "StringNotEquals":
		match, negated = func(p, v string) bool { return p == v }, true
	case "StringLike":
		match = glob
	case "StringNotLike":
		match, negated = glob, true
	default:
		return false, fmt.Errorf("operator %q: not supported", op)
	}
	switch qualifier {
	case "":
		if have == nil {
			return ifExists || negated, nil
		}
		hit := false
		for _, v := range have {
			if matchOne(want, v, match, ctx) {
				hit = true
				break
			}
		}
		return hit != negated, nil
	case "ForAllValues":
		// Every value of the request matches one of the policy's; true
		// for a request without the key.
		for _, v := range have {
			if matchOne(want, v, match, ctx) == negated {
				return false, nil
			}
		}
		return true, nil
	case "ForAnyValue":
		for _, v := range have {
			if matchOne(want, v, match, ctx) != negated {
				return true, nil
			}
		}
		return false, nil
	}
	return false, fmt.Errorf("operator %q: qualifier %q not supported", op, qualifier)
}

// matchOne reports whether value matches any of the policy's values, with
// their policy variables replaced from ctx.
func matchOne(want []string, value string, match func(pattern, value string) bool, ctx map[string][]string) bool {
	for _, w := range want {
		if w, ok := substitute(w, ctx); ok && match(w, value) {
			return true
		}
	}
	return false
}

// substitute replaces the policy variables ${key} of s with the request
// context's single value of the key; ok is false when one is missing or
// has several values. ${*}, ${?} and ${$} are the literal characters.
func substitute(s string, ctx map[string][]string) (string, bool) {
	if !strings.Contains(s, "${") {
		return s, true
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), true
		}
		b.WriteString(s[:i])
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return "", false
		}
		key := s[i+2 : i+j]
		s = s[i+j+1:]
		switch key {
		case "*", "?", "$":
			// A literal: escaped, so glob treats it as itself.
			b.WriteString(`\` + key)
			continue
		}
		v := lookup(ctx, key)
		if len(v) != 1 {
			return "", false
		}
		b.WriteString(v[0])
	}
}

// glob matches value against pattern, where * is any run of characters,
// ? any one, and \ makes the next character literal.
func glob(pattern, value string) bool {
	p, v := []rune(pattern), []rune(value)
	// Positions to retry from after the last *.
	star, mark := -1, 0
	i, j := 0, 0
	for j < len(v) {
		switch {
		case i < len(p) && p[i] == '*':
			star, mark = i, j
			i++
		case i < len(p) && p[i] == '\\' && i+1 < len(p) && p[i+1] == v[j]:
			i, j = i+2, j+1
		case i < len(p) && p[i] != '\\' && (p[i] == '?' || p[i] == v[j]):
			i, j = i+1, j+1
		case star >= 0:
			mark++
			i, j = star+1, mark
		default:
			return false
		}
	}
	for i < len(p) && p[i] == '*' {
		i++
	}
	return i == len(p)
}
