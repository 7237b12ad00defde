package iampolicy

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// noValue is what AWS::NoValue resolves to: the property or list item
// that holds it is dropped.
type noValue struct{}

// FunctionPolicies returns the statements of the inline policies of the
// template's AWS::Serverless::Function function (its Properties.Policies
// items with a Statement), resolved for params: the template's
// parameters (their Default where params has none) and the pseudo
// parameters AWS::Region, AWS::AccountId and AWS::Partition (aws when
// not given). A SAM policy template or a managed policy among the items
// is an error: this package cannot see what it grants.
func FunctionPolicies(data []byte, function string, params map[string]string) ([]Statement, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("parse template: %w", err)
	}
	doc, err := plain(&root)
	if err != nil {
		return nil, fmt.Errorf("parse template: %w", err)
	}
	tpl, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("parse template: not a mapping")
	}
	r := resolver{params: map[string]string{"AWS::Partition": "aws"}, conditions: mapping(tpl["Conditions"]), done: map[string]bool{}}
	for name, p := range mapping(tpl["Parameters"]) {
		if d, ok := mapping(p)["Default"]; ok {
			r.params[name] = fmt.Sprint(d)
		}
	}
	maps.Copy(r.params, params)

	fn := mapping(mapping(tpl["Resources"])[function])
	if fn == nil {
		return nil, fmt.Errorf("template has no resource %q", function)
	}
	if fn["Type"] != "AWS::Serverless::Function" {
		return nil, fmt.Errorf("resource %q is a %v, not an AWS::Serverless::Function", function, fn["Type"])
	}
	policies, err := r.resolve(mapping(fn["Properties"])["Policies"])
	if err != nil {
		return nil, fmt.Errorf("resource %q: policies: %w", function, err)
	}
	var out []Statement
	for i, p := range list(policies) {
		m := mapping(p)
		if m == nil || m["Statement"] == nil {
			return nil, fmt.Errorf("resource %q: policy %d is not an inline policy with a Statement: %v", function, i, p)
		}
		for _, s := range list(m["Statement"]) {
			st, err := statement(mapping(s))
			if err != nil {
				return nil, fmt.Errorf("resource %q: policy %d: %w", function, i, err)
			}
			out = append(out, st)
		}
	}
	return out, nil
}

// statement converts one resolved statement.
func statement(m map[string]any) (Statement, error) {
	if m == nil {
		return Statement{}, errors.New("statement is not a mapping")
	}
	s := Statement{
		Sid: fmt.Sprint(m["Sid"]), Effect: Effect(fmt.Sprint(m["Effect"])),
		Action: strings1(m["Action"]), NotAction: strings1(m["NotAction"]),
		Resource: strings1(m["Resource"]), NotResource: strings1(m["NotResource"]),
	}
	for _, k := range []string{"Principal", "NotPrincipal"} {
		if m[k] != nil {
			return Statement{}, fmt.Errorf("statement %q: %s is not supported", s.Sid, k)
		}
	}
	for op, keys := range mapping(m["Condition"]) {
		if s.Condition == nil {
			s.Condition = map[string]map[string][]string{}
		}
		s.Condition[op] = map[string][]string{}
		for k, v := range mapping(keys) {
			s.Condition[op][k] = strings1(v)
		}
	}
	return s, nil
}

// strings1 returns a scalar or a list of scalars as strings.
func strings1(v any) []string {
	switch v := v.(type) {
	case nil:
		return nil
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			out = append(out, fmt.Sprint(x))
		}
		return out
	case bool:
		return []string{fmt.Sprint(v)}
	}
	return []string{fmt.Sprint(v)}
}

func mapping(v any) map[string]any { m, _ := v.(map[string]any); return m }
func list(v any) []any             { l, _ := v.([]any); return l }

// shortTags maps a YAML short-form intrinsic to its long name.
var shortTags = map[string]string{
	"!Ref": "Ref", "!Sub": "Fn::Sub", "!GetAtt": "Fn::GetAtt", "!If": "Fn::If",
	"!Equals": "Fn::Equals", "!Not": "Fn::Not", "!And": "Fn::And", "!Or": "Fn::Or",
	"!Join": "Fn::Join", "!Select": "Fn::Select", "!Split": "Fn::Split",
	"!Condition": "Condition", "!ImportValue": "Fn::ImportValue", "!FindInMap": "Fn::FindInMap",
	"!Base64": "Fn::Base64", "!GetAZs": "Fn::GetAZs", "!Cidr": "Fn::Cidr",
}

// plain converts a YAML node to maps, lists and scalars, turning
// CloudFormation's short tags into their long form ({"Fn::Sub": …}).
func plain(n *yaml.Node) (any, error) {
	var v any
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return plain(n.Content[0])
	case yaml.AliasNode:
		return plain(n.Alias)
	case yaml.MappingNode:
		m := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			x, err := plain(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			m[n.Content[i].Value] = x
		}
		v = m
	case yaml.SequenceNode:
		l := []any{}
		for _, c := range n.Content {
			x, err := plain(c)
			if err != nil {
				return nil, err
			}
			l = append(l, x)
		}
		v = l
	case yaml.ScalarNode:
		if _, short := shortTags[n.Tag]; short {
			v = n.Value
		} else if err := n.Decode(&v); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
	}
	long, short := shortTags[n.Tag]
	if !short {
		if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
			return nil, fmt.Errorf("line %d: unknown tag %s", n.Line, n.Tag)
		}
		return v, nil
	}
	if long == "Fn::GetAtt" {
		if s, ok := v.(string); ok {
			res, attr, _ := strings.Cut(s, ".")
			v = []any{res, attr}
		}
	}
	return map[string]any{long: v}, nil
}

// resolver resolves intrinsic functions for one set of parameters.
type resolver struct {
	params     map[string]string
	conditions map[string]any
	done       map[string]bool // conditions being evaluated, against cycles
}

// resolve returns v with every intrinsic function replaced by its value.
func (r *resolver) resolve(v any) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 1 {
			for k, arg := range v {
				if k == "Ref" || strings.HasPrefix(k, "Fn::") {
					return r.intrinsic(k, arg)
				}
			}
		}
		out := map[string]any{}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			x, err := r.resolve(v[k])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			if _, drop := x.(noValue); !drop {
				out[k] = x
			}
		}
		return out, nil
	case []any:
		out := []any{}
		for _, x := range v {
			x, err := r.resolve(x)
			if err != nil {
				return nil, err
			}
			if _, drop := x.(noValue); !drop {
				out = append(out, x)
			}
		}
		return out, nil
	}
	return v, nil
}

func (r *resolver) intrinsic(fn string, arg any) (any, error) {
	switch fn {
	case "Ref":
		name := fmt.Sprint(arg)
		if name == "AWS::NoValue" {
			return noValue{}, nil
		}
		if p, ok := r.params[name]; ok {
			return p, nil
		}
		return nil, fmt.Errorf("Ref %s: no such parameter (resources are not resolved)", name)
	case "Fn::Sub":
		return r.sub(arg)
	case "Fn::If":
		l := list(arg)
		if len(l) != 3 {
			return nil, fmt.Errorf("Fn::If takes 3 arguments, has %d", len(l))
		}
		ok, err := r.condition(fmt.Sprint(l[0]))
		if err != nil {
			return nil, err
		}
		if ok {
			return r.resolve(l[1])
		}
		return r.resolve(l[2])
	case "Fn::Equals", "Fn::Not", "Fn::And", "Fn::Or":
		return r.boolean(map[string]any{fn: arg})
	case "Fn::Join":
		l := list(arg)
		if len(l) != 2 {
			return nil, errors.New("Fn::Join takes 2 arguments")
		}
		parts, err := r.resolve(l[1])
		if err != nil {
			return nil, err
		}
		return strings.Join(strings1(parts), fmt.Sprint(l[0])), nil
	}
	return nil, fmt.Errorf("%s is not supported", fn)
}

// sub expands Fn::Sub's ${Name} from the parameters (and the list
// form's variables); ${!x} is the literal ${x}.
func (r *resolver) sub(arg any) (any, error) {
	s, vars := "", map[string]string{}
	switch a := arg.(type) {
	case string:
		s = a
	case []any:
		if len(a) != 2 {
			return nil, errors.New("Fn::Sub takes a string or [string, variables]")
		}
		s = fmt.Sprint(a[0])
		m, err := r.resolve(a[1])
		if err != nil {
			return nil, err
		}
		for k, v := range mapping(m) {
			vars[k] = fmt.Sprint(v)
		}
	default:
		return nil, fmt.Errorf("Fn::Sub of %T", arg)
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return nil, fmt.Errorf("Fn::Sub %q: unclosed ${", s)
		}
		b.WriteString(s[:i])
		name := s[i+2 : i+j]
		s = s[i+j+1:]
		switch v, ok := vars[name]; {
		case strings.HasPrefix(name, "!"):
			b.WriteString("${" + name[1:] + "}")
		case ok:
			b.WriteString(v)
		case r.params[name] != "" || hasKey(r.params, name):
			b.WriteString(r.params[name])
		default:
			return nil, fmt.Errorf("Fn::Sub: ${%s} is no parameter (resources are not resolved)", name)
		}
	}
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }

// condition evaluates the template's condition name.
func (r *resolver) condition(name string) (bool, error) {
	c, ok := r.conditions[name]
	if !ok {
		return false, fmt.Errorf("no condition %q", name)
	}
	if r.done[name] {
		return false, fmt.Errorf("condition %q refers to itself", name)
	}
	r.done[name] = true
	defer delete(r.done, name)
	return r.boolean(c)
}

// boolean evaluates a condition function.
func (r *resolver) boolean(v any) (bool, error) {
	m := mapping(v)
	if len(m) != 1 {
		return false, fmt.Errorf("condition %v: not a condition function", v)
	}
	for fn, arg := range m {
		switch fn {
		case "Condition":
			return r.condition(fmt.Sprint(arg))
		case "Fn::Equals":
			l := list(arg)
			if len(l) != 2 {
				return false, errors.New("Fn::Equals takes 2 arguments")
			}
			a, err := r.resolve(l[0])
			if err != nil {
				return false, err
			}
			b, err := r.resolve(l[1])
			if err != nil {
				return false, err
			}
			return fmt.Sprint(a) == fmt.Sprint(b), nil
		case "Fn::Not":
			l := list(arg)
			if len(l) != 1 {
				return false, errors.New("Fn::Not takes 1 argument")
			}
			ok, err := r.boolean(l[0])
			return !ok, err
		case "Fn::And", "Fn::Or":
			and := fn == "Fn::And"
			for _, c := range list(arg) {
				ok, err := r.boolean(c)
				if err != nil {
					return false, err
				}
				if ok != and {
					return ok, nil
				}
			}
			return and, nil
		}
		return false, fmt.Errorf("%s is not a condition function", fn)
	}
	return false, nil
}
