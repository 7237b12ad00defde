package dynamostore

import (
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/timetabledb/timetable/storage"
)

// Items convert by hand rather than through attributevalue.Marshal: package
// storage fixes one Go type per DynamoDB type, and a json.Number must stay
// a number (attributevalue would marshal it as a string). Numbers are sent
// in canonical form (storage.CanonicalNumber), the form DynamoDB keeps.
// Items and updates are validated (storage.Item.Validate,
// storage.Update.Validate) before they are converted, so the conversion
// meets only the types it converts.

// toAttributeValue converts a value of one of storage's attribute types to
// its native DynamoDB attribute value.
func toAttributeValue(v any) (types.AttributeValue, error) {
	switch v := v.(type) {
	case nil:
		return &types.AttributeValueMemberNULL{Value: true}, nil
	case bool:
		return &types.AttributeValueMemberBOOL{Value: v}, nil
	case string:
		return &types.AttributeValueMemberS{Value: v}, nil
	case json.Number:
		n, err := storage.CanonicalNumber(string(v))
		if err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberN{Value: string(n)}, nil
	case []byte:
		return &types.AttributeValueMemberB{Value: v}, nil
	case []any:
		l := make([]types.AttributeValue, len(v))
		for i, e := range v {
			av, err := toAttributeValue(e)
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			l[i] = av
		}
		return &types.AttributeValueMemberL{Value: l}, nil
	case map[string]any:
		m := make(map[string]types.AttributeValue, len(v))
		for k, e := range v {
			av, err := toAttributeValue(e)
			if err != nil {
				return nil, fmt.Errorf("key %q: %w", k, err)
			}
			m[k] = av
		}
		return &types.AttributeValueMemberM{Value: m}, nil
	default:
		return nil, fmt.Errorf("%w: value of type %T, not a storage attribute type", storage.ErrInvalid, v)
	}
}

// fromAttributeValue converts a DynamoDB attribute value to storage's Go
// type for it. Sets, which timetable never writes, read back as lists.
func fromAttributeValue(av types.AttributeValue) (any, error) {
	switch av := av.(type) {
	case *types.AttributeValueMemberNULL:
		return nil, nil
	case *types.AttributeValueMemberBOOL:
		return av.Value, nil
	case *types.AttributeValueMemberS:
		return av.Value, nil
	case *types.AttributeValueMemberN:
		return json.Number(av.Value), nil
	case *types.AttributeValueMemberB:
		return av.Value, nil
	case *types.AttributeValueMemberL:
		l := make([]any, len(av.Value))
		for i, e := range av.Value {
			v, err := fromAttributeValue(e)
			if err != nil {
				return nil, err
			}
			l[i] = v
		}
		return l, nil
	case *types.AttributeValueMemberM:
		m := make(map[string]any, len(av.Value))
		for k, e := range av.Value {
			v, err := fromAttributeValue(e)
			if err != nil {
				return nil, err
			}
			m[k] = v
		}
		return m, nil
	case *types.AttributeValueMemberSS:
		l := make([]any, len(av.Value))
		for i, e := range av.Value {
			l[i] = e
		}
		return l, nil
	case *types.AttributeValueMemberNS:
		l := make([]any, len(av.Value))
		for i, e := range av.Value {
			l[i] = json.Number(e)
		}
		return l, nil
	case *types.AttributeValueMemberBS:
		l := make([]any, len(av.Value))
		for i, e := range av.Value {
			l[i] = e
		}
		return l, nil
	default:
		return nil, fmt.Errorf("attribute value of type %T, which timetable never writes", av)
	}
}

// marshalItem converts an item to DynamoDB's form, key attributes included.
func marshalItem(it storage.Item) (map[string]types.AttributeValue, error) {
	m := make(map[string]types.AttributeValue, len(it.Attrs)+2)
	for name, v := range it.Attrs {
		if name == storage.PKAttr || name == storage.SKAttr {
			return nil, fmt.Errorf("attribute %q is the name of a key attribute", name)
		}
		av, err := toAttributeValue(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", name, err)
		}
		m[name] = av
	}
	m[storage.PKAttr] = &types.AttributeValueMemberS{Value: it.PK}
	m[storage.SKAttr] = &types.AttributeValueMemberS{Value: it.SK}
	return m, nil
}

// unmarshalItem converts an item read from DynamoDB.
func unmarshalItem(m map[string]types.AttributeValue) (storage.Item, error) {
	pk, okPK := m[storage.PKAttr].(*types.AttributeValueMemberS)
	sk, okSK := m[storage.SKAttr].(*types.AttributeValueMemberS)
	if !okPK || !okSK {
		return storage.Item{}, fmt.Errorf("item without string key attributes %q and %q", storage.PKAttr, storage.SKAttr)
	}
	it := storage.Item{PK: pk.Value, SK: sk.Value, Attrs: make(map[string]any, len(m)-2)}
	for name, av := range m {
		if name == storage.PKAttr || name == storage.SKAttr {
			continue
		}
		v, err := fromAttributeValue(av)
		if err != nil {
			return storage.Item{}, fmt.Errorf("attribute %q: %w", name, err)
		}
		it.Attrs[name] = v
	}
	return it, nil
}

// itemKey returns the key of a DynamoDB item, for matching the items
// DynamoDB hands back to those sent. ok is false when the item lacks
// string key attributes.
func itemKey(m map[string]types.AttributeValue) (key [2]string, ok bool) {
	pk, okPK := m[storage.PKAttr].(*types.AttributeValueMemberS)
	sk, okSK := m[storage.SKAttr].(*types.AttributeValueMemberS)
	if !okPK || !okSK {
		return key, false
	}
	return [2]string{pk.Value, sk.Value}, true
}
