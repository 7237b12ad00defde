package dynamostore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/timetabledb/timetable/storage"
)

// Update applies a conditional update to one item with a single
// UpdateItem request. See storage.Store.Update for the contract, and the
// package documentation for how the expressions are built.
func (s *Store) Update(ctx context.Context, u storage.Update) error {
	if err := s.gate.Enter(); err != nil {
		return err
	}
	defer s.gate.Exit()

	in, err := updateInput(u)
	if err != nil {
		return fmt.Errorf("update item %q/%q in table %q: %w", u.PK, u.SK, u.Table, err)
	}
	in.ReturnConsumedCapacity = returnCapacity
	if _, err := s.client.UpdateItem(ctx, in, s.callOpts...); err != nil {
		return fmt.Errorf("update item %q/%q in table %q: %w", u.PK, u.SK, u.Table, mapUpdateError(err))
	}
	return nil
}

// updateInput validates u (storage.Update.Validate) and builds its
// UpdateItem request. Only key values over DynamoDB's limits are
// storage.ErrItemTooLarge here; whether the item grows too large only
// DynamoDB can tell.
//
// Names. The expression builder parses the names it is given: a name
// with "[" is taken as a list index or refused, and AppendName moves a
// leading "[n]" of a map key onto the attribute before it. Attribute names
// and map keys are arbitrary strings, so the builder is given aliases
// ("a0", "a1", ... one per distinct name) that it cannot misread, and the
// real names replace the aliases in ExpressionAttributeNames once the
// expression is built. The builder still writes every placeholder and the
// whole syntax; names never enter the expression strings.
func updateInput(u storage.Update) (*dynamodb.UpdateItemInput, error) {
	if err := u.Validate(); err != nil {
		return nil, err
	}
	names := newNameAliases()
	b := expression.NewBuilder()
	if len(u.Conds) > 0 {
		conds := make([]expression.ConditionBuilder, len(u.Conds))
		for i, c := range u.Conds {
			cb, err := condition(c, names)
			if err != nil {
				return nil, fmt.Errorf("%w: condition %d on %q: %w", storage.ErrInvalid, i, c.Attr, err)
			}
			conds[i] = cb
		}
		all := conds[0]
		if len(conds) > 1 {
			all = expression.And(conds[0], conds[1], conds[2:]...)
		}
		b = b.WithCondition(all)
	}
	if len(u.Actions) > 0 {
		var ub expression.UpdateBuilder
		for i, a := range u.Actions {
			var err error
			if ub, err = action(ub, a, names); err != nil {
				return nil, fmt.Errorf("%w: action %d on %q: %w", storage.ErrInvalid, i, a.Attr, err)
			}
		}
		b = b.WithUpdate(ub)
	}

	in := &dynamodb.UpdateItemInput{
		TableName: aws.String(u.Table),
		Key: map[string]types.AttributeValue{
			storage.PKAttr: &types.AttributeValueMemberS{Value: u.PK},
			storage.SKAttr: &types.AttributeValueMemberS{Value: u.SK},
		},
	}
	if len(u.Conds) == 0 && len(u.Actions) == 0 {
		// Nothing to build: UpdateItem without an expression creates the
		// item with its key alone when it is missing.
		return in, nil
	}
	expr, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("%w: build expression: %w", storage.ErrInvalid, err)
	}
	in.ConditionExpression = expr.Condition()
	in.UpdateExpression = expr.Update()
	in.ExpressionAttributeNames, err = names.resolve(expr.Names())
	if err != nil {
		return nil, err
	}
	in.ExpressionAttributeValues = expr.Values()
	return in, nil
}

// condition returns the condition c stands for.
func condition(c storage.Cond, names *nameAliases) (expression.ConditionBuilder, error) {
	var attr expression.NameBuilder
	if c.Kind != storage.CondAnyOf {
		attr = names.name(c.Attr)
	}
	switch c.Kind {
	case storage.CondExists:
		return attr.AttributeExists(), nil
	case storage.CondNotExists:
		return attr.AttributeNotExists(), nil
	case storage.CondNotContains:
		s, ok := c.Value.(string)
		if !ok {
			return expression.ConditionBuilder{}, fmt.Errorf("NotContains needs a string, got %T", c.Value)
		}
		return expression.Not(attr.Contains(&types.AttributeValueMemberS{Value: s})), nil
	case storage.CondSizeAtMost:
		n, ok := c.Value.(int)
		if !ok {
			return expression.ConditionBuilder{}, fmt.Errorf("SizeAtMost needs an int, got %T", c.Value)
		}
		return attr.Size().LessThanEqual(expression.Value(&types.AttributeValueMemberN{Value: strconv.Itoa(n)})), nil
	case storage.CondAtMost:
		n, ok := c.Value.(json.Number)
		if !ok {
			return expression.ConditionBuilder{}, fmt.Errorf("AtMost needs a json.Number, got %T", c.Value)
		}
		av, err := toAttributeValue(n)
		if err != nil {
			return expression.ConditionBuilder{}, err
		}
		return attr.LessThanEqual(expression.Value(av)), nil
	case storage.CondEqual:
		av, err := toAttributeValue(c.Value)
		if err != nil {
			return expression.ConditionBuilder{}, err
		}
		return attr.Equal(expression.Value(av)), nil
	case storage.CondAnyOf:
		alts := make([]expression.ConditionBuilder, len(c.Any))
		for i, alt := range c.Any {
			var err error
			if alts[i], err = condition(alt, names); err != nil {
				return expression.ConditionBuilder{}, fmt.Errorf("alternative %d on %q: %w", i, alt.Attr, err)
			}
		}
		if len(alts) == 1 {
			return alts[0], nil
		}
		return expression.Or(alts[0], alts[1], alts[2:]...), nil
	default:
		return expression.ConditionBuilder{}, fmt.Errorf("unknown condition kind %d", c.Kind)
	}
}

// action adds the clause a stands for to ub.
func action(ub expression.UpdateBuilder, a storage.Action, names *nameAliases) (expression.UpdateBuilder, error) {
	attr := names.name(a.Attr)
	switch a.Kind {
	case storage.ActionSet:
		av, err := toAttributeValue(a.Value)
		if err != nil {
			return ub, err
		}
		return ub.Set(attr, expression.Value(av)), nil
	case storage.ActionSetKey:
		av, err := toAttributeValue(a.Value)
		if err != nil {
			return ub, err
		}
		return ub.Set(attr.AppendName(names.name(a.Key)), expression.Value(av)), nil
	case storage.ActionAppend:
		vs, ok := a.Value.([]any)
		if !ok {
			return ub, fmt.Errorf("Append needs a []any, got %T", a.Value)
		}
		av, err := toAttributeValue(vs)
		if err != nil {
			return ub, err
		}
		empty := &types.AttributeValueMemberL{Value: []types.AttributeValue{}}
		return ub.Set(attr, expression.ListAppend(attr.IfNotExists(expression.Value(empty)), expression.Value(av))), nil
	case storage.ActionAdd:
		n, ok := a.Value.(json.Number)
		if !ok {
			return ub, fmt.Errorf("Add needs a json.Number, got %T", a.Value)
		}
		av, err := toAttributeValue(n)
		if err != nil {
			return ub, err
		}
		return ub.Add(attr, expression.Value(av)), nil
	default:
		return ub, fmt.Errorf("unknown action kind %d", a.Kind)
	}
}

// nameAliases gives each distinct attribute name or map key an alias the
// expression builder takes literally, and maps the aliases back.
type nameAliases struct {
	alias map[string]string // real name → alias
	real  map[string]string // alias → real name
}

func newNameAliases() *nameAliases {
	return &nameAliases{alias: make(map[string]string), real: make(map[string]string)}
}

// name returns a NameBuilder for the alias of real.
func (n *nameAliases) name(real string) expression.NameBuilder {
	a, ok := n.alias[real]
	if !ok {
		a = "a" + strconv.Itoa(len(n.alias))
		n.alias[real] = a
		n.real[a] = real
	}
	return expression.NameNoDotSplit(a)
}

// resolve returns the builder's ExpressionAttributeNames with each alias
// replaced by its real name.
func (n *nameAliases) resolve(built map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(built))
	for placeholder, a := range built {
		real, ok := n.real[a]
		if !ok {
			return nil, fmt.Errorf("%w: the expression builder named %q, not an alias", storage.ErrInvalid, a)
		}
		out[placeholder] = real
	}
	return out, nil
}
