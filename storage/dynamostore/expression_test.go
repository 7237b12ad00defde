package dynamostore

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
)

// operatorToken matches what DynamoDB counts as an operator or function
// in an expression: AND, OR, NOT, BETWEEN, IN, comparators, arithmetic,
// and the functions. A SET clause's "=" is not one, so update expressions
// are counted without it.
var (
	condOperator   = regexp.MustCompile(`\b(AND|OR|NOT|BETWEEN|IN|attribute_exists|attribute_not_exists|attribute_type|begins_with|contains|size)\b|<=|>=|<>|<|>|=`)
	updateOperator = regexp.MustCompile(`\b(list_append|if_not_exists)\b|[+-]`)
)

// randomUpdate returns an update of up to n conditions and n actions of
// every kind, on attributes with names of various lengths.
func randomUpdate(rng *rand.Rand, n int) storage.Update {
	u := storage.Update{Table: "t", PK: "p", SK: "s"}
	attr := func(i int) string { return fmt.Sprintf("a%d%s", i, strings.Repeat("x", rng.IntN(3))) }
	for i := range rng.IntN(n + 1) {
		switch rng.IntN(7) {
		case 0:
			u.Conds = append(u.Conds, storage.Exists(attr(i)))
		case 1:
			u.Conds = append(u.Conds, storage.NotExists(attr(i)))
		case 2:
			u.Conds = append(u.Conds, storage.NotContains(attr(i), fmt.Sprint("id", i)))
		case 3:
			u.Conds = append(u.Conds, storage.SizeAtMost(attr(i), i))
		case 4:
			u.Conds = append(u.Conds, storage.AtMost(attr(i), json.Number(fmt.Sprint(i))))
		case 5:
			u.Conds = append(u.Conds, storage.Equal(attr(i), fmt.Sprint("v", i)))
		case 6:
			u.Conds = append(u.Conds, storage.AnyOf(storage.NotExists(attr(i)), storage.Equal(attr(i+1000), json.Number("3")), storage.Exists("o")))
		}
	}
	for i := range rng.IntN(n + 1) {
		name := fmt.Sprint("b", i)
		switch rng.IntN(4) {
		case 0:
			u.Actions = append(u.Actions, storage.Set(name, "v"))
		case 1:
			u.Actions = append(u.Actions, storage.SetKey("m", fmt.Sprint("k", i), json.Number("1")))
		case 2:
			u.Actions = append(u.Actions, storage.Append(name, []any{"x"}))
		case 3:
			u.Actions = append(u.Actions, storage.Add(name, json.Number("2")))
		}
	}
	return u
}

// TestExpressionCostIsTheBuiltExpression holds storage.Update.Cost, which
// the engine sizes its map-layout writes by, to the expressions this
// backend builds: the operators exactly, the bytes as a tight upper bound.
//
// It reaches no DynamoDB: it skips in scripts/test.sh's run against
// DynamoDB Local (TIMETABLE_TEST_BACKENDS=dynamodb), as
// backends.NoDynamoDB does, which this package's tests cannot import.
func TestExpressionCostIsTheBuiltExpression(t *testing.T) {
	if os.Getenv("TIMETABLE_TEST_BACKENDS") == "dynamodb" {
		t.Skip("reaches no DynamoDB: run in the other run of scripts/test.sh (TIMETABLE_TEST_BACKENDS=dynamodb)")
	}
	rng := rand.New(rand.NewPCG(7, 11))
	for i := range 2000 {
		u := randomUpdate(rng, 1+i%120)
		cost := u.Cost()
		in, err := updateInput(u)
		if !cost.Fits() {
			require.ErrorIs(t, err, storage.ErrTooComplex)
			continue
		}
		require.NoError(t, err)
		if cond := in.ConditionExpression; cond != nil {
			require.Len(t, condOperator.FindAllString(*cond, -1), cost.CondOperators, *cond)
			require.LessOrEqual(t, len(*cond), cost.CondBytes)
			require.LessOrEqual(t, cost.CondBytes-len(*cond), cost.CondBytes/10+16, "the bound wastes the budget")
		}
		if upd := in.UpdateExpression; upd != nil {
			require.Len(t, updateOperator.FindAllString(*upd, -1), cost.UpdateOperators, *upd)
			require.LessOrEqual(t, len(*upd), cost.UpdateBytes)
			require.LessOrEqual(t, cost.UpdateBytes-len(*upd), cost.UpdateBytes/10+16, "the bound wastes the budget")
		}
	}
}
