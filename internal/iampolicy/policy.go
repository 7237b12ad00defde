package iampolicy

import (
	"fmt"
	"strings"
)

// Effect is a statement's effect.
type Effect string

// The two effects.
const (
	Allow Effect = "Allow"
	Deny  Effect = "Deny"
)

// Statement is one statement of an identity policy. Condition maps an
// operator (StringEquals, ForAllValues:StringLike …) to keys and the
// values any of which may match.
type Statement struct {
	Sid         string
	Effect      Effect
	Action      []string
	NotAction   []string
	Resource    []string
	NotResource []string
	Condition   map[string]map[string][]string
}

// Request is an authorization request: one action on one resource, with
// its context keys (aws:ResourceTag/K, aws:RequestTag/K, aws:TagKeys,
// s3:prefix …), each with its values.
type Request struct {
	Action   string
	Resource string
	Context  map[string][]string
}

// Decision is the outcome of evaluating a request.
type Decision int

// The three outcomes, as IAM's evaluation logic names them.
const (
	ImplicitDeny Decision = iota
	Allowed
	ExplicitDeny
)

func (d Decision) String() string {
	switch d {
	case Allowed:
		return "allowed"
	case ExplicitDeny:
		return "explicitly denied"
	}
	return "implicitly denied"
}

// Evaluate returns the decision of statements on r, and the statement
// that decided it (nil for an implicit deny): an explicit Deny wins over
// every Allow.
func Evaluate(statements []Statement, r Request) (Decision, *Statement, error) {
	var allow *Statement
	for i := range statements {
		s := &statements[i]
		ok, err := s.Matches(r)
		if err != nil {
			return ImplicitDeny, nil, fmt.Errorf("statement %q: %w", s.Sid, err)
		}
		switch {
		case !ok:
		case s.Effect == Deny:
			return ExplicitDeny, s, nil
		case s.Effect == Allow && allow == nil:
			allow = s
		}
	}
	if allow != nil {
		return Allowed, allow, nil
	}
	return ImplicitDeny, nil, nil
}

// Matches reports whether the statement applies to r: its action, its
// resource and all its conditions match. An operator it does not know is
// an error, not a silent false.
func (s Statement) Matches(r Request) (bool, error) {
	if s.Effect != Allow && s.Effect != Deny {
		return false, fmt.Errorf("effect %q: must be Allow or Deny", s.Effect)
	}
	switch {
	case len(s.Action) > 0 && !anyMatch(s.Action, r.Action, true, nil):
		return false, nil
	case len(s.NotAction) > 0 && anyMatch(s.NotAction, r.Action, true, nil):
		return false, nil
	case len(s.Action) == 0 && len(s.NotAction) == 0:
		return false, fmt.Errorf("neither Action nor NotAction")
	}
	switch {
	case len(s.Resource) > 0 && !anyMatch(s.Resource, r.Resource, false, r.Context):
		return false, nil
	case len(s.NotResource) > 0 && anyMatch(s.NotResource, r.Resource, false, r.Context):
		return false, nil
	case len(s.Resource) == 0 && len(s.NotResource) == 0:
		return false, fmt.Errorf("neither Resource nor NotResource")
	}
	for op, keys := range s.Condition {
		for key, values := range keys {
			ok, err := condition(op, values, lookup(r.Context, key), r.Context)
			if err != nil {
				return false, fmt.Errorf("condition %s %s: %w", op, key, err)
			}
			if !ok {
				return false, nil
			}
		}
	}
	return true, nil
}

// lookup returns the values of a context key, whose name IAM compares
// case-insensitively; nil when the request lacks it.
func lookup(ctx map[string][]string, key string) []string {
	if v, ok := ctx[key]; ok {
		return v
	}
	for k, v := range ctx {
		if strings.EqualFold(k, key) {
			return v
		}
	}
	return nil
}

// anyMatch reports whether value matches any of the patterns (with * and
// ? wildcards, and policy variables from ctx).
func anyMatch(patterns []string, value string, fold bool, ctx map[string][]string) bool {
	for _, p := range patterns {
		p, ok := substitute(p, ctx)
		if !ok {
			continue
		}
		if fold {
			p, value = strings.ToLower(p), strings.ToLower(value)
		}
		if glob(p, value) {
			return true
		}
	}
	return false
}
