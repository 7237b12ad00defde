package dynamostore

import (
	"context"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/storage"
)

func TestCreateTableSchemaAndSpec(t *testing.T) {
	s := openStore(t, Options{})
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		spec storage.TableSpec
		want storage.Capacity
	}{
		{"provisioned", storage.TableSpec{
			Capacity: storage.Capacity{Billing: storage.Provisioned, Read: 300, Write: 1000},
			Tags:     map[string]string{"family": "events", "tier": "hot", "empty": ""},
		}, storage.Capacity{Billing: storage.Provisioned, Read: 300, Write: 1000}},
		{"on demand", storage.TableSpec{
			Capacity: storage.Capacity{Billing: storage.OnDemand},
		}, storage.Capacity{Billing: storage.OnDemand}},
		{"zero capacity is on demand", storage.TableSpec{}, storage.Capacity{Billing: storage.OnDemand}},
		{"units without billing are provisioned", storage.TableSpec{
			Capacity: storage.Capacity{Read: 2, Write: 3},
		}, storage.Capacity{Billing: storage.Provisioned, Read: 2, Write: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := createTable(t, s, tc.spec)

			// What DynamoDB itself says of the table.
			out, err := s.Client().DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
			require.NoError(t, err)
			require.Equal(t, types.TableStatusActive, out.Table.TableStatus)
			require.ElementsMatch(t, []types.KeySchemaElement{
				{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange},
			}, out.Table.KeySchema)
			require.ElementsMatch(t, []types.AttributeDefinition{
				{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS},
				{AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeS},
			}, out.Table.AttributeDefinitions)

			info, err := s.DescribeTable(ctx, name)
			require.NoError(t, err)
			require.Equal(t, name, info.Name)
			require.Equal(t, storage.StatusActive, info.Status)
			require.Equal(t, tc.want.Normal(), info.Capacity)
			requireTags(t, tc.spec.Tags, info.Tags)
			require.Empty(t, info.TTLAttribute)
			require.False(t, info.CreatedAt.IsZero())
			require.Equal(t, int64(0), info.ItemCount)
		})
	}
}

func TestCreateTableConcurrently(t *testing.T) {
	s := openStore(t, Options{})
	name := tableName(t)
	spec := storage.TableSpec{Name: name, Tags: map[string]string{"k": "v"}}
	const callers = 6
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() { errs[i] = s.CreateTable(context.Background(), spec) })
	}
	wg.Wait()
	deleteAtCleanup(t, s, name)

	created := 0
	for _, err := range errs {
		if err == nil {
			created++
		} else {
			require.ErrorIs(t, err, storage.ErrTableExists)
		}
	}
	require.Equal(t, 1, created)
	// Every caller returned with the table ACTIVE.
	info, err := s.DescribeTable(context.Background(), name)
	require.NoError(t, err)
	require.Equal(t, storage.StatusActive, info.Status)
	requireTags(t, spec.Tags, info.Tags)
}

func TestUpdateTable(t *testing.T) {
	s := openStore(t, Options{})
	ctx := context.Background()
	hot := storage.Capacity{Billing: storage.Provisioned, Read: 300, Write: 1000}
	name := createTable(t, s, storage.TableSpec{Capacity: hot, Tags: map[string]string{"tier": "hot", "family": "events"}})

	warm := storage.Capacity{Billing: storage.Provisioned, Read: 100, Write: 1}
	onDemand := storage.Capacity{Billing: storage.OnDemand}
	for _, step := range []struct {
		name     string
		update   storage.TableUpdate
		capacity storage.Capacity
		tags     map[string]string
	}{
		{"nothing", storage.TableUpdate{}, hot, map[string]string{"tier": "hot", "family": "events"}},
		{"same capacity", storage.TableUpdate{Capacity: &hot}, hot, map[string]string{"tier": "hot", "family": "events"}},
		{"warm", storage.TableUpdate{Capacity: &warm, Tags: map[string]string{"tier": "warm"}}, warm, map[string]string{"tier": "warm", "family": "events"}},
		{"warm again", storage.TableUpdate{Capacity: &warm, Tags: map[string]string{"tier": "warm"}}, warm, map[string]string{"tier": "warm", "family": "events"}},
		{"on demand", storage.TableUpdate{Capacity: &onDemand}, onDemand, map[string]string{"tier": "warm", "family": "events"}},
		{"on demand again", storage.TableUpdate{Capacity: &onDemand}, onDemand, map[string]string{"tier": "warm", "family": "events"}},
		{"back to provisioned", storage.TableUpdate{Capacity: &warm}, warm, map[string]string{"tier": "warm", "family": "events"}},
	} {
		require.NoError(t, s.UpdateTable(ctx, name, step.update), step.name)
		info, err := s.DescribeTable(ctx, name)
		require.NoError(t, err, step.name)
		require.Equal(t, storage.StatusActive, info.Status, step.name)
		require.Equal(t, step.capacity.Normal(), info.Capacity, step.name)
		requireTags(t, step.tags, info.Tags, step.name)
	}

	require.ErrorIs(t, s.UpdateTable(ctx, tableName(t), storage.TableUpdate{Capacity: &warm}), storage.ErrTableNotFound)
}

func TestDeleteTable(t *testing.T) {
	s := openStore(t, Options{})
	ctx := context.Background()
	name := tableName(t)
	require.NoError(t, s.CreateTable(ctx, storage.TableSpec{Name: name}))
	require.NoError(t, s.DeleteTable(ctx, name))

	// Gone at once: not described, not listed, creatable again.
	_, err := s.DescribeTable(ctx, name)
	require.ErrorIs(t, err, storage.ErrTableNotFound)
	var listed []string
	require.NoError(t, s.ListTables(ctx, name[:len(name)-1], func(n string) bool {
		listed = append(listed, n)
		return n <= name
	}))
	require.NotContains(t, listed, name)
	require.ErrorIs(t, s.DeleteTable(ctx, name), storage.ErrTableNotFound)
	require.NoError(t, s.CreateTable(ctx, storage.TableSpec{Name: name}))
	require.NoError(t, s.DeleteTable(ctx, name))
}

func TestListTablesStopsEarly(t *testing.T) {
	counter := &requestCounter{}
	s := openStore(t, Options{ClientOptions: []func(*dynamodb.Options){counter.install}})
	ctx := context.Background()
	prefix := tableName(t) + "_"
	var want []string
	for _, suffix := range []string{"c", "a", "b"} {
		want = append(want, createTable(t, s, storage.TableSpec{Name: prefix + suffix}))
	}
	want = []string{want[1], want[2], want[0]}

	counter.reset()
	var got []string
	require.NoError(t, s.ListTables(ctx, prefix, func(name string) bool {
		got = append(got, name)
		return len(got) < 2
	}))
	require.Equal(t, want[:2], got)
	require.Equal(t, 1, counter.count("ListTables"), "one page, no more")

	got = nil
	require.NoError(t, s.ListTables(ctx, want[0], func(name string) bool {
		if name > want[2] {
			return false
		}
		got = append(got, name)
		return true
	}))
	require.Equal(t, want[1:], got, "strictly after")
}

// A family prefix of one or two characters is shorter than DynamoDB's
// shortest ExclusiveStartTableName: the listing still starts there.
func TestListTablesAfterShortPrefix(t *testing.T) {
	s := openStore(t, Options{})
	ctx := context.Background()
	name := createTable(t, s, storage.TableSpec{Name: tableName(t) + "_short"})
	for _, after := range []string{"", "A", "Te"} {
		found := false
		require.NoError(t, s.ListTables(ctx, after, func(n string) bool {
			require.Greater(t, n, after)
			found = found || n == name
			return true
		}), "after %q", after)
		require.True(t, found, "after %q", after)
	}
}

// The local servers ignore table classes: DynamoDB Local refuses an
// UpdateTable that changes only the class ("Nothing to update"). A class
// change is then storage.ErrUnsupported, not sent again, and the rest of
// the update is applied.
func TestUpdateTableClassIgnored(t *testing.T) {
	s := openStore(t, Options{})
	ctx := context.Background()
	onDemand := storage.Capacity{Billing: storage.OnDemand}
	name := createTable(t, s, storage.TableSpec{Capacity: onDemand})
	cold := storage.Capacity{Billing: storage.OnDemand, Class: storage.ClassInfrequentAccess}
	err := s.UpdateTable(ctx, name, storage.TableUpdate{Capacity: &cold})
	require.ErrorIs(t, err, storage.ErrUnsupported)
	require.NotErrorIs(t, err, storage.ErrInvalid)
	require.ErrorContains(t, err, "the endpoint ignores table classes")
	require.True(t, s.noClass.Load())

	// The class is not sent again; the billing is changed.
	warm := storage.Capacity{Billing: storage.Provisioned, Read: 5, Write: 5, Class: storage.ClassInfrequentAccess}
	err = s.UpdateTable(ctx, name, storage.TableUpdate{Capacity: &warm})
	require.ErrorIs(t, err, storage.ErrUnsupported)
	info, err := s.DescribeTable(ctx, name)
	require.NoError(t, err)
	require.Equal(t, storage.Provisioned, info.Capacity.Billing)
	require.Equal(t, int64(5), info.Capacity.Write)
	require.Equal(t, storage.ClassStandard, info.Capacity.Class)
}
