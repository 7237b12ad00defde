package dynamostore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/dynamostore/dynamofault"
)

// renderUpdate substitutes the placeholders of a built expression: names
// as they are, values as JSON; clauses are separated by one space.
func renderUpdate(t *testing.T, expr *string, names map[string]string, values map[string]types.AttributeValue) string {
	t.Helper()
	if expr == nil {
		return ""
	}
	var subst []string
	for k, v := range names {
		subst = append(subst, k, v)
	}
	for k, av := range values {
		v, err := fromAttributeValue(av)
		require.NoError(t, err)
		b, err := json.Marshal(v)
		require.NoError(t, err)
		subst = append(subst, k, string(b))
	}
	// The builder ends each update clause with a newline.
	return strings.TrimSpace(strings.ReplaceAll(replaceAll(*expr, subst), "\n", " "))
}

func TestUpdateInput(t *testing.T) {
	for _, tc := range []struct {
		name       string
		conds      []storage.Cond
		actions    []storage.Action
		cond, upd  string
		namesCount int
	}{
		{name: "exists", conds: []storage.Cond{storage.Exists("pk")},
			cond: "attribute_exists (pk)", namesCount: 1},
		{name: "not exists", conds: []storage.Cond{storage.NotExists("sk")},
			cond: "attribute_not_exists (sk)", namesCount: 1},
		{name: "not contains", conds: []storage.Cond{storage.NotContains("tt_ids", "e1")},
			cond: `NOT (contains (tt_ids, "e1"))`, namesCount: 1},
		{name: "size at most", conds: []storage.Cond{storage.SizeAtMost("tt_ids", 249)},
			cond: "size (tt_ids) <= 249", namesCount: 1},
		{name: "at most", conds: []storage.Cond{storage.AtMost("n", "1.5")},
			cond: "n <= 1.5", namesCount: 1},
		{name: "conditions ANDed",
			conds: []storage.Cond{storage.Exists("pk"), storage.NotContains("tt_ids", "e1"), storage.SizeAtMost("tt_ids", 3)},
			cond:  `(attribute_exists (pk)) AND (NOT (contains (tt_ids, "e1"))) AND (size (tt_ids) <= 3)`, namesCount: 2},
		{name: "set", actions: []storage.Action{storage.Set("gear", "D")},
			upd: `SET gear = "D"`, namesCount: 1},
		{name: "set null", actions: []storage.Action{storage.Set("gear", nil)},
			upd: `SET gear = null`, namesCount: 1},
		{name: "set key", actions: []storage.Action{storage.SetKey("speed", "e1", json.Number("88.5"))},
			upd: `SET speed.e1 = 88.5`, namesCount: 2},
		{name: "append", actions: []storage.Action{storage.Append("tt_ids", []any{"e1", "e2"})},
			upd: `SET tt_ids = list_append(if_not_exists(tt_ids, []), ["e1","e2"])`, namesCount: 1},
		{name: "add", actions: []storage.Action{storage.Add("n", "2")},
			upd: `ADD n 2`, namesCount: 1},
		{name: "map layout append",
			conds: []storage.Cond{storage.Exists("speed"), storage.NotContains("tt_ids", "e2")},
			actions: []storage.Action{
				storage.Append("tt_ids", []any{"e2"}),
				storage.SetKey("speed", "e2", json.Number("1")),
				storage.SetKey("speed", "e3", json.Number("2")),
				storage.Add("n", "1"),
			},
			cond:       `(attribute_exists (speed)) AND (NOT (contains (tt_ids, "e2")))`,
			upd:        `ADD n 1 SET tt_ids = list_append(if_not_exists(tt_ids, []), ["e2"]), speed.e2 = 1, speed.e3 = 2`,
			namesCount: 5},
		{name: "names the builder would parse",
			conds:      []storage.Cond{storage.Exists("a.b"), storage.NotExists("c[0]")},
			actions:    []storage.Action{storage.Set("c[0]", "v"), storage.SetKey("m", "[1]k", "w"), storage.SetKey("m", "x.y", "z")},
			cond:       "(attribute_exists (a.b)) AND (attribute_not_exists (c[0]))",
			upd:        `SET c[0] = "v", m.[1]k = "w", m.x.y = "z"`,
			namesCount: 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := updateInput(storage.Update{Table: "t", PK: "p", SK: "s", Conds: tc.conds, Actions: tc.actions})
			require.NoError(t, err)
			require.Equal(t, "t", *in.TableName)
			require.Equal(t, map[string]types.AttributeValue{
				"pk": &types.AttributeValueMemberS{Value: "p"},
				"sk": &types.AttributeValueMemberS{Value: "s"},
			}, in.Key)
			require.Equal(t, tc.cond, renderUpdate(t, in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues))
			require.Equal(t, tc.upd, renderUpdate(t, in.UpdateExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues))
			// Each name is one placeholder, whatever it holds: a name
			// split or parsed by the builder would make more or fewer.
			require.Len(t, in.ExpressionAttributeNames, tc.namesCount)
			for p := range in.ExpressionAttributeNames {
				require.Regexp(t, `^#[0-9]+$`, p)
			}
		})
	}
}

func TestUpdateInputNoExpression(t *testing.T) {
	in, err := updateInput(storage.Update{Table: "t", PK: "p", SK: "s"})
	require.NoError(t, err)
	require.Nil(t, in.ConditionExpression)
	require.Nil(t, in.UpdateExpression)
	require.Empty(t, in.ExpressionAttributeNames)
	require.Empty(t, in.ExpressionAttributeValues)
}

func TestUpdateInputRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		u    storage.Update
		want error
	}{
		{"empty partition key", storage.Update{SK: "s"}, storage.ErrInvalid},
		{"empty sort key", storage.Update{PK: "p"}, storage.ErrInvalid},
		{"partition key too long", storage.Update{PK: strings.Repeat("p", storage.MaxPKBytes+1), SK: "s"}, storage.ErrItemTooLarge},
		{"sort key too long", storage.Update{PK: "p", SK: strings.Repeat("s", storage.MaxSKBytes+1)}, storage.ErrItemTooLarge},
		{"condition without attribute", storage.Update{Conds: []storage.Cond{storage.Exists("")}}, storage.ErrInvalid},
		{"unknown condition", storage.Update{Conds: []storage.Cond{{Kind: 99, Attr: "a"}}}, storage.ErrInvalid},
		{"not contains of a number", storage.Update{Conds: []storage.Cond{{Kind: storage.CondNotContains, Attr: "a", Value: 1}}}, storage.ErrInvalid},
		{"size of a string", storage.Update{Conds: []storage.Cond{{Kind: storage.CondSizeAtMost, Attr: "a", Value: "1"}}}, storage.ErrInvalid},
		{"at most an int", storage.Update{Conds: []storage.Cond{{Kind: storage.CondAtMost, Attr: "a", Value: 1}}}, storage.ErrInvalid},
		{"at most not a number", storage.Update{Conds: []storage.Cond{storage.AtMost("a", "1x")}}, storage.ErrInvalid},
		{"action without attribute", storage.Update{Actions: []storage.Action{storage.Set("", "v")}}, storage.ErrInvalid},
		{"action on the partition key", storage.Update{Actions: []storage.Action{storage.Set("pk", "v")}}, storage.ErrInvalid},
		{"action on the sort key", storage.Update{Actions: []storage.Action{storage.Add("sk", "1")}}, storage.ErrInvalid},
		{"set key without key", storage.Update{Actions: []storage.Action{storage.SetKey("m", "", "v")}}, storage.ErrInvalid},
		{"unknown action", storage.Update{Actions: []storage.Action{{Kind: 99, Attr: "a"}}}, storage.ErrInvalid},
		{"unsupported value", storage.Update{Actions: []storage.Action{storage.Set("a", 1)}}, storage.ErrInvalid},
		{"append of strings", storage.Update{Actions: []storage.Action{{Kind: storage.ActionAppend, Attr: "a", Value: []string{"x"}}}}, storage.ErrInvalid},
		{"add a string", storage.Update{Actions: []storage.Action{{Kind: storage.ActionAdd, Attr: "a", Value: "1"}}}, storage.ErrInvalid},
		{"two actions on one attribute", storage.Update{Actions: []storage.Action{storage.Set("a", "v"), storage.Add("a", "1")}}, storage.ErrInvalid},
		{"set key after set", storage.Update{Actions: []storage.Action{storage.Set("m", map[string]any{}), storage.SetKey("m", "k", "v")}}, storage.ErrInvalid},
		{"set after set key", storage.Update{Actions: []storage.Action{storage.SetKey("m", "k", "v"), storage.Set("m", map[string]any{})}}, storage.ErrInvalid},
		{"one key twice", storage.Update{Actions: []storage.Action{storage.SetKey("m", "k", "v"), storage.SetKey("m", "k", "w")}}, storage.ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := tc.u
			u.Table = "t"
			if u.PK == "" && u.SK == "" && !strings.HasPrefix(tc.name, "empty") {
				u.PK, u.SK = "p", "s"
			}
			_, err := updateInput(u)
			require.ErrorIs(t, err, tc.want)
		})
	}
}

func TestMapUpdateError(t *testing.T) {
	apiErr := func(code, msg string) error { return &smithy.GenericAPIError{Code: code, Message: msg} }
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"condition failed", apiErr("ConditionalCheckFailedException", "The conditional request failed"), storage.ErrConditionFailed},
		{"invalid path", apiErr("ValidationException", "The document path provided in the update expression is invalid for update"), storage.ErrConditionFailed},
		{"item too large", apiErr("ValidationException", "Item size to update has exceeded the maximum allowed size"), storage.ErrItemTooLarge},
		{"value too large", apiErr("ValidationException", "Item size has exceeded the maximum allowed size"), storage.ErrItemTooLarge},
		{"hash key too large", apiErr("ValidationException", "One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of 2048 bytes"), storage.ErrItemTooLarge},
		{"range key too large", apiErr("ValidationException", "One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of 1024 bytes"), storage.ErrItemTooLarge},
		{"other validation", apiErr("ValidationException", "Invalid UpdateExpression: Two document paths overlap"), nil},
		{"table not found", apiErr("ResourceNotFoundException", "Requested resource not found"), storage.ErrTableNotFound},
		{"throttled", apiErr("ProvisionedThroughputExceededException", "m"), storage.ErrThrottled},
		{"context", context.Canceled, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := mapUpdateError(tc.err)
			require.ErrorIs(t, err, tc.err, "the SDK error stays in the chain")
			for _, s := range []error{storage.ErrConditionFailed, storage.ErrItemTooLarge, storage.ErrTableNotFound, storage.ErrThrottled} {
				require.Equal(t, s == tc.want, errors.Is(err, s), "%v", s)
			}
		})
	}
}

func TestUpdateErrorsNotRetried(t *testing.T) {
	r := newRetryer(backoff{base: 1, max: 1})
	require.False(t, r.IsErrorRetryable(&smithy.GenericAPIError{Code: "ConditionalCheckFailedException"}))
	require.False(t, r.IsErrorRetryable(&smithy.GenericAPIError{Code: "ValidationException"}))
}

// updateStore opens a store on the test server with a fresh table, and
// counts its requests.
func updateStore(t *testing.T) (*Store, string, *requestCounter) {
	t.Helper()
	counter := &requestCounter{}
	s := openStore(t, Options{ClientOptions: []func(*dynamodb.Options){counter.install}})
	name := createTable(t, s, storage.TableSpec{})
	counter.reset()
	return s, name, counter
}

// getAttrs reads an item's attributes, or nil when it is missing.
func getAttrs(t *testing.T, s *Store, table, pk, sk string) map[string]any {
	t.Helper()
	it, err := s.GetItem(context.Background(), table, pk, sk)
	if errors.Is(err, storage.ErrItemNotFound) {
		return nil
	}
	require.NoError(t, err)
	return it.Attrs
}

func TestUpdateCreateIfAbsent(t *testing.T) {
	s, table, counter := updateStore(t)
	ctx := context.Background()
	create := func(v string) error {
		return s.Update(ctx, storage.Update{Table: table, PK: "p", SK: "s",
			Conds:   []storage.Cond{storage.NotExists(storage.PKAttr)},
			Actions: []storage.Action{storage.Set("v", v), storage.Set("tt_ids", []any{v})}})
	}
	require.NoError(t, create("first"))
	err := create("second")
	require.ErrorIs(t, err, storage.ErrConditionFailed)
	require.Contains(t, err.Error(), table, "the error names the table")
	require.Equal(t, map[string]any{"v": "first", "tt_ids": []any{"first"}}, getAttrs(t, s, table, "p", "s"))
	require.Equal(t, 2, counter.count("UpdateItem"), "a failed condition is not retried")

	// CondExists on the key holds once the item exists.
	require.NoError(t, s.Update(ctx, storage.Update{Table: table, PK: "p", SK: "s",
		Conds: []storage.Cond{storage.Exists(storage.SKAttr)}, Actions: []storage.Action{storage.Set("v", "third")}}))
	require.Equal(t, "third", getAttrs(t, s, table, "p", "s")["v"])
	require.ErrorIs(t, s.Update(ctx, storage.Update{Table: table, PK: "p", SK: "other",
		Conds: []storage.Cond{storage.Exists(storage.PKAttr)}, Actions: []storage.Action{storage.Set("v", "x")}}),
		storage.ErrConditionFailed)
	require.Nil(t, getAttrs(t, s, table, "p", "other"), "a failed update creates nothing")

	// No condition and no action creates the item with its key alone.
	require.NoError(t, s.Update(ctx, storage.Update{Table: table, PK: "p", SK: "bare"}))
	require.Equal(t, map[string]any{}, getAttrs(t, s, table, "p", "bare"))
}

func TestUpdateConditions(t *testing.T) {
	s, table, _ := updateStore(t)
	ctx := context.Background()
	require.NoError(t, s.Update(ctx, storage.Update{Table: table, PK: "p", SK: "s", Actions: []storage.Action{
		storage.Set("ids", []any{"a", "b"}),
		storage.Set("n", json.Number("5")),
		storage.Set("str", "abc"),
		storage.Set("m", map[string]any{"x": true}),
	}}))
	for _, tc := range []struct {
		cond  storage.Cond
		holds bool
	}{
		{storage.NotContains("ids", "c"), true},
		{storage.NotContains("ids", "a"), false},
		{storage.NotContains("missing", "a"), true},
		{storage.SizeAtMost("ids", 2), true},
		{storage.SizeAtMost("ids", 1), false},
		{storage.SizeAtMost("str", 3), true},
		{storage.SizeAtMost("str", 2), false},
		{storage.SizeAtMost("m", 1), true},
		{storage.SizeAtMost("m", 0), false},
		{storage.SizeAtMost("missing", 10), false},
		{storage.AtMost("n", "5"), true},
		{storage.AtMost("n", "4.99"), false},
		{storage.AtMost("n", "1e3"), true},
		{storage.AtMost("missing", "10"), false},
		{storage.Exists("m"), true},
		{storage.Exists("missing"), false},
		{storage.NotExists("missing"), true},
		{storage.NotExists("n"), false},
	} {
		t.Run(fmt.Sprintf("%d %s %v", tc.cond.Kind, tc.cond.Attr, tc.cond.Value), func(t *testing.T) {
			err := s.Update(ctx, storage.Update{Table: table, PK: "p", SK: "s",
				Conds: []storage.Cond{tc.cond}, Actions: []storage.Action{storage.Add("hits", "1")}})
			if tc.holds {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, storage.ErrConditionFailed)
			}
		})
	}
	// All conditions must hold.
	err := s.Update(ctx, storage.Update{Table: table, PK: "p", SK: "s",
		Conds:   []storage.Cond{storage.NotContains("ids", "c"), storage.AtMost("n", "4")},
		Actions: []storage.Action{storage.Set("hits", json.Number("0"))}})
	require.ErrorIs(t, err, storage.ErrConditionFailed)
	require.Equal(t, json.Number("9"), getAttrs(t, s, table, "p", "s")["hits"], "one hit per condition that held")
}

func TestUpdateActions(t *testing.T) {
	s, table, _ := updateStore(t)
	ctx := context.Background()
	up := func(actions ...storage.Action) {
		t.Helper()
		require.NoError(t, s.Update(ctx, storage.Update{Table: table, PK: "p", SK: "s", Actions: actions}))
	}
	up(storage.Append("ids", []any{"a"}), storage.Add("n", "2.5"), storage.Set("m", map[string]any{}))
	up(storage.Append("ids", []any{"b", "c"}), storage.Add("n", "-1"), storage.SetKey("m", "k", []any{json.Number("1"), nil}))
	up(storage.Append("ids", []any{}), storage.SetKey("m", "j", "v"), storage.SetKey("m", "k", []byte{0, 1}))
	require.Equal(t, map[string]any{
		"ids": []any{"a", "b", "c"},
		"n":   json.Number("1.5"),
		"m":   map[string]any{"k": []byte{0, 1}, "j": "v"},
	}, getAttrs(t, s, table, "p", "s"))
}

func TestUpdateNames(t *testing.T) {
	s, table, _ := updateStore(t)
	ctx := context.Background()
	names := []string{"a.b", "c[0]", "[1]", "d]", "e[", "x#y", "p:q", "sp ace", ":v0", "#n0", "a0", "size", "é"}
	attrs := map[string]any{}
	var create []storage.Action
	for i, n := range names {
		create = append(create, storage.Set(n, fmt.Sprint(i)))
		attrs[n] = fmt.Sprint(i)
	}
	create = append(create, storage.Set("map.x", map[string]any{}))
	require.NoError(t, s.Update(ctx, storage.Update{Table: table, PK: "p", SK: "s", Actions: create}))

	// Keys of a map are as free as attribute names.
	var setKeys []storage.Action
	m := map[string]any{}
	for i, k := range names {
		setKeys = append(setKeys, storage.SetKey("map.x", k, json.Number(fmt.Sprint(i))))
		m[k] = json.Number(fmt.Sprint(i))
	}
	attrs["map.x"] = m
	var conds []storage.Cond
	for _, n := range names {
		conds = append(conds, storage.Exists(n))
	}
	conds = append(conds, storage.Exists("map.x"), storage.NotExists("map"), storage.NotExists("a"))
	require.NoError(t, s.Update(ctx, storage.Update{Table: table, PK: "p", SK: "s", Conds: conds, Actions: setKeys}))
	require.Equal(t, attrs, getAttrs(t, s, table, "p", "s"))
}

func TestUpdateSetKeyWithoutMap(t *testing.T) {
	s, table, _ := updateStore(t)
	ctx := context.Background()
	require.NoError(t, s.Update(ctx, storage.Update{Table: table, PK: "p", SK: "s", Actions: []storage.Action{storage.Set("v", "1")}}))

	// Unguarded, on a missing map: DynamoDB refuses the path.
	err := s.Update(ctx, storage.Update{Table: table, PK: "p", SK: "s",
		Actions: []storage.Action{storage.SetKey("m", "k", "x"), storage.Set("v", "2")}})
	require.ErrorIs(t, err, storage.ErrConditionFailed)
	// Unguarded, on a missing item.
	err = s.Update(ctx, storage.Update{Table: table, PK: "p", SK: "none",
		Actions: []storage.Action{storage.SetKey("m", "k", "x")}})
	require.ErrorIs(t, err, storage.ErrConditionFailed)
	// A false condition and a missing path at once.
	err = s.Update(ctx, storage.Update{Table: table, PK: "p", SK: "s",
		Conds:   []storage.Cond{storage.NotExists("v")},
		Actions: []storage.Action{storage.SetKey("m", "k", "x")}})
	require.ErrorIs(t, err, storage.ErrConditionFailed)
	// On an attribute that is not a map.
	err = s.Update(ctx, storage.Update{Table: table, PK: "p", SK: "s",
		Actions: []storage.Action{storage.SetKey("v", "k", "x")}})
	require.ErrorIs(t, err, storage.ErrConditionFailed)

	require.Equal(t, map[string]any{"v": "1"}, getAttrs(t, s, table, "p", "s"), "unchanged")
	require.Nil(t, getAttrs(t, s, table, "p", "none"))
}

func TestUpdateErrors(t *testing.T) {
	s, table, counter := updateStore(t)
	ctx := context.Background()

	err := s.Update(ctx, storage.Update{Table: table + "_missing", PK: "p", SK: "s", Actions: []storage.Action{storage.Set("v", "1")}})
	require.ErrorIs(t, err, storage.ErrTableNotFound)

	// Growing past the limit over two updates: only DynamoDB can tell.
	big := strings.Repeat("x", 300*1024)
	require.NoError(t, s.Update(ctx, storage.Update{Table: table, PK: "p", SK: "s", Actions: []storage.Action{storage.Set("a", big)}}))
	err = s.Update(ctx, storage.Update{Table: table, PK: "p", SK: "s", Actions: []storage.Action{storage.Set("b", big)}})
	require.ErrorIs(t, err, storage.ErrItemTooLarge)
	// One value over the limit.
	err = s.Update(ctx, storage.Update{Table: table, PK: "p", SK: "t", Actions: []storage.Action{storage.Set("a", big+big)}})
	require.ErrorIs(t, err, storage.ErrItemTooLarge)
	require.Equal(t, map[string]any{"a": big}, getAttrs(t, s, table, "p", "s"), "unchanged")
	require.Nil(t, getAttrs(t, s, table, "p", "t"))

	// Refused before sending anything.
	counter.reset()
	err = s.Update(ctx, storage.Update{Table: table, PK: strings.Repeat("p", storage.MaxPKBytes+1), SK: "s", Actions: []storage.Action{storage.Set("v", "1")}})
	require.ErrorIs(t, err, storage.ErrItemTooLarge)
	err = s.Update(ctx, storage.Update{Table: table, PK: "p", SK: "s", Actions: []storage.Action{storage.Set("pk", "1")}})
	require.ErrorIs(t, err, storage.ErrInvalid)
	require.Zero(t, counter.count("UpdateItem"))

	// Keys at the limits are accepted.
	require.NoError(t, s.Update(ctx, storage.Update{Table: table, PK: strings.Repeat("p", storage.MaxPKBytes), SK: strings.Repeat("s", storage.MaxSKBytes)}))

	// After Close.
	closed := openStore(t, Options{})
	require.NoError(t, closed.Close())
	require.ErrorIs(t, closed.Update(ctx, storage.Update{Table: table, PK: "p", SK: "s"}), storage.ErrClosed)
}

// TestUpdateAppendRace races 16 writers appending the same ids to one
// item, in the map layout's way: append if the item exists and lacks the
// id, else create the item if it is missing, else read it to learn that
// another writer stored the id. Every id is stored once, with its field.
func TestUpdateAppendRace(t *testing.T) {
	s, table, _ := updateStore(t)
	ctx := context.Background()
	const writers, ids = 16, 24
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		order := rand.New(rand.NewPCG(uint64(w), 1)).Perm(ids)
		wg.Go(func() {
			for _, i := range order {
				if err := appendOnce(ctx, s, table, fmt.Sprintf("e%02d", i), i); err != nil {
					errs <- fmt.Errorf("writer %d: %w", w, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	got := getAttrs(t, s, table, "p", "ms")
	var want []any
	speed := map[string]any{}
	for i := range ids {
		want = append(want, fmt.Sprintf("e%02d", i))
		speed[fmt.Sprintf("e%02d", i)] = json.Number(fmt.Sprint(i))
	}
	gotIDs := got["tt_ids"].([]any)
	slices.SortFunc(gotIDs, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
	require.Equal(t, want, gotIDs, "every id once")
	require.Equal(t, speed, got["speed"])
	require.Equal(t, json.Number(fmt.Sprint(ids)), got["n"], "one successful update per id")
}

// appendOnce stores event id with speed v in the item p/ms.
func appendOnce(ctx context.Context, s *Store, table, id string, v int) error {
	speed := json.Number(fmt.Sprint(v))
	for range 50 {
		err := s.Update(ctx, storage.Update{Table: table, PK: "p", SK: "ms",
			Conds: []storage.Cond{storage.Exists("speed"), storage.NotContains("tt_ids", id)},
			Actions: []storage.Action{
				storage.Append("tt_ids", []any{id}),
				storage.SetKey("speed", id, speed),
				storage.Add("n", "1"),
			}})
		if !errors.Is(err, storage.ErrConditionFailed) {
			return err
		}
		err = s.Update(ctx, storage.Update{Table: table, PK: "p", SK: "ms",
			Conds: []storage.Cond{storage.NotExists(storage.PKAttr)},
			Actions: []storage.Action{
				storage.Set("tt_ids", []any{id}),
				storage.Set("speed", map[string]any{id: speed}),
				storage.Set("n", json.Number("1")),
			}})
		if !errors.Is(err, storage.ErrConditionFailed) {
			return err
		}
		it, err := s.GetItem(ctx, table, "p", "ms")
		if err != nil {
			return err
		}
		if ids, _ := it.Attrs["tt_ids"].([]any); slices.Contains(ids, any(id)) {
			return nil
		}
	}
	return fmt.Errorf("id %s: no attempt got through", id)
}

// TestUpdateThrottled sends updates through a transport that throttles
// half of them: the SDK's retryer retries them, and each one applies once.
func TestUpdateThrottled(t *testing.T) {
	testEndpoint(t)
	faults := dynamofault.New(dynamofault.Options{Seed: 1,
		Mix:        dynamofault.Mix{dynamofault.Throughput: 0.25, dynamofault.Throttling: 0.25},
		Operations: []string{"UpdateItem"}})
	// Half of all attempts are throttled and table names differ from run
	// to run, so the faults do too: with 10 attempts one of 20 updates ran
	// out of them about once in 50 runs; with 30, once in 50 million.
	s := openStore(t, Options{
		MaxAttempts:    30,
		RetryBaseDelay: time.Millisecond,
		MaxBackoff:     5 * time.Millisecond,
		ClientOptions: []func(*dynamodb.Options){func(o *dynamodb.Options) {
			o.HTTPClient = &http.Client{Transport: faults}
		}},
	})
	table := createTable(t, s, storage.TableSpec{})
	ctx := context.Background()
	const updates = 20
	for i := range updates {
		require.NoError(t, s.Update(ctx, storage.Update{Table: table, PK: "p", SK: "s",
			Conds:   []storage.Cond{storage.NotContains("ids", fmt.Sprint(i))},
			Actions: []storage.Action{storage.Append("ids", []any{fmt.Sprint(i)}), storage.Add("n", "1")}}))
	}
	counts := faults.Counts()
	require.Positive(t, counts[dynamofault.Throughput]+counts[dynamofault.Throttling], "updates were throttled")
	require.Equal(t, json.Number(fmt.Sprint(updates)), getAttrs(t, s, table, "p", "s")["n"])

	// Throttled on every attempt: ErrThrottled once the retries run out.
	always := dynamofault.New(dynamofault.Options{Seed: 1,
		Mix: dynamofault.Mix{dynamofault.Throttling: 1}, Operations: []string{"UpdateItem"}})
	s2 := openStore(t, Options{
		MaxAttempts:    2,
		RetryBaseDelay: time.Millisecond,
		MaxBackoff:     time.Millisecond,
		ClientOptions: []func(*dynamodb.Options){func(o *dynamodb.Options) {
			o.HTTPClient = &http.Client{Transport: always}
		}},
	})
	err := s2.Update(ctx, storage.Update{Table: table, PK: "p", SK: "s", Actions: []storage.Action{storage.Add("n", "1")}})
	require.ErrorIs(t, err, storage.ErrThrottled)
	require.Equal(t, 2, always.Counts()[dynamofault.Throttling])
}
