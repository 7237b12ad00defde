package dynamostore

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/timetabledb/timetable/storage"
)

// CreateTable creates the table with the key schema pk (S, HASH), sk (S,
// RANGE), the spec's billing mode, capacity, class (TableClass), on-demand
// maximum (OnDemandThroughput), warm throughput (WarmThroughput), deletion
// protection (DeletionProtectionEnabled) and tags, and returns once it is
// ACTIVE and, when spec.TTLAttribute is set, has TTL enabled, and when
// spec.PITRDays is set, has point-in-time recovery on
// (UpdateContinuousBackups). DynamoDB Local and dynalite take the class,
// limits and protection without keeping them, and have no point-in-time
// recovery (internal/dynamotest lists what each lacks).
//
// When the table exists or is being created already, CreateTable waits for
// it to be ACTIVE and returns an error wrapping storage.ErrTableExists. It
// leaves the table's capacity and tags alone, and enables TTL only when the
// spec asks for it and the table has none, in case its creator stopped
// before that step.
func (s *Store) CreateTable(ctx context.Context, spec storage.TableSpec) error {
	if err := s.gate.Enter(); err != nil {
		return err
	}
	defer s.gate.Exit()

	billing, throughput := capacityInput(spec.Capacity)
	in := &dynamodb.CreateTableInput{
		TableName:             aws.String(spec.Name),
		AttributeDefinitions:  keyAttributes(),
		KeySchema:             keySchema(),
		BillingMode:           billing,
		ProvisionedThroughput: throughput,
		Tags:                  tagsInput(spec.Tags),
		TableClass:            tableClass(spec.Capacity),
		OnDemandThroughput:    onDemandThroughput(spec.Capacity),
		WarmThroughput:        warmThroughput(spec.Capacity),
	}
	if spec.DeletionProtection {
		in.DeletionProtectionEnabled = aws.Bool(true)
	}
	exists, arn, err := s.createTable(ctx, in)
	if err != nil {
		return fmt.Errorf("create table %q: %w", spec.Name, err)
	}
	wait := s.waitActive
	if in.WarmThroughput != nil {
		wait = s.waitWarm
	}
	if err := wait(ctx, spec.Name); err != nil {
		return fmt.Errorf("create table %q: %w", spec.Name, err)
	}
	if len(spec.Tags) > 0 && !exists {
		s.labelTable(ctx, spec.Name, arn, spec.Tags)
	}
	if spec.TTLAttribute != "" {
		if err := s.enableTTL(ctx, spec.Name, spec.TTLAttribute, exists); err != nil {
			return fmt.Errorf("create table %q: %w", spec.Name, err)
		}
	}
	if autoScaled(spec.Capacity) && !exists {
		if err := s.scale(ctx, spec.Name, spec.Capacity); err != nil {
			return fmt.Errorf("create table %q: %w", spec.Name, err)
		}
	}
	if spec.PITRDays > 0 && !exists {
		if err := s.setPITR(ctx, spec.Name, spec.PITRDays); err != nil {
			return fmt.Errorf("create table %q: %w", spec.Name, err)
		}
	}
	if exists {
		return fmt.Errorf("create table %q: %w", spec.Name, storage.ErrTableExists)
	}
	return nil
}

// createTable sends CreateTable and reports whether the table existed
// already, and the ARN of the table it created. A table of that name still
// being deleted is waited for and created anew.
func (s *Store) createTable(ctx context.Context, in *dynamodb.CreateTableInput) (exists bool, arn string, err error) {
	out, err := s.client.CreateTable(ctx, in, s.callOpts...)
	if err == nil {
		return false, aws.ToString(out.TableDescription.TableArn), nil
	}
	if errorCode(err) == codeLimitExceeded {
		return false, "", s.limitError(ctx, err)
	}
	if !isResourceInUse(err) {
		return false, "", mapError(opCreate, err)
	}
	desc, derr := s.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: in.TableName}, s.callOpts...)
	switch {
	case isNotFound(derr):
		// Deleted in between: create it again.
	case derr != nil:
		return false, "", fmt.Errorf("describe table: %w", mapError(opOther, derr))
	case desc.Table.TableStatus != types.TableStatusDeleting:
		return true, "", nil
	default:
		if err := s.waitGone(ctx, aws.ToString(in.TableName)); err != nil {
			return false, "", err
		}
	}
	out, err = s.client.CreateTable(ctx, in, s.callOpts...)
	switch {
	case err == nil:
		return false, aws.ToString(out.TableDescription.TableArn), nil
	case isResourceInUse(err):
		return true, "", nil
	case errorCode(err) == codeLimitExceeded:
		return false, "", s.limitError(ctx, err)
	}
	return false, "", mapError(opCreate, err)
}

// limitError maps a CreateTable's LimitExceededException. DynamoDB sends
// it for two limits: the tables the account may have (storage.ErrTableQuota,
// which needs an operator) and the table operations it may run at once
// (storage.ErrRefused, gone in minutes). The message tells them apart in
// words only, so the tables are counted: at least Options.TableQuota is
// the quota, fewer is the other limit. When the tables cannot be counted,
// the message decides.
func (s *Store) limitError(ctx context.Context, err error) error {
	n, cerr := s.countTables(ctx, s.opts.TableQuota)
	switch {
	case cerr != nil:
		return mapError(opCreate, err)
	case n >= s.opts.TableQuota:
		return fmt.Errorf("%w: %d tables in the region, the quota is %d: %w", storage.ErrTableQuota, n, s.opts.TableQuota, err)
	}
	return fmt.Errorf("%w: %d tables in the region, under the quota of %d: too many table operations at once: %w", storage.ErrRefused, n, s.opts.TableQuota, err)
}

// countTables counts the tables in the region with ListTables, stopping
// at most.
func (s *Store) countTables(ctx context.Context, most int) (int, error) {
	n := 0
	pages := dynamodb.NewListTablesPaginator(s.client, &dynamodb.ListTablesInput{Limit: aws.Int32(listTablesPageSize)})
	for pages.HasMorePages() && n < most {
		out, err := pages.NextPage(ctx, s.callOpts...)
		if err != nil {
			return n, err
		}
		n += len(out.TableNames)
	}
	return n, nil
}

// capacityInput returns the billing mode and provisioned throughput of a
// CreateTable or UpdateTable request. A zero Capacity, or one whose
// billing is unset and whose units are zero, means on-demand billing.
func capacityInput(c storage.Capacity) (types.BillingMode, *types.ProvisionedThroughput) {
	if c.Billing == storage.OnDemand || (c.Billing == "" && c.Read == 0 && c.Write == 0) {
		return types.BillingModePayPerRequest, nil
	}
	return types.BillingModeProvisioned, &types.ProvisionedThroughput{
		ReadCapacityUnits:  aws.Int64(c.Read),
		WriteCapacityUnits: aws.Int64(c.Write),
	}
}

// tagsInput returns tags in DynamoDB's form, sorted by key so requests are
// reproducible; nil for no tags.
func tagsInput(tags map[string]string) []types.Tag {
	if len(tags) == 0 {
		return nil
	}
	out := make([]types.Tag, 0, len(tags))
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		out = append(out, types.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
	}
	return out
}

// keyAttributes and keySchema are every table's keys: a string partition
// key and a string sort key (storage.PKAttr, storage.SKAttr), for
// CreateTable and ImportTable alike.
func keyAttributes() []types.AttributeDefinition {
	return []types.AttributeDefinition{
		{AttributeName: aws.String(storage.PKAttr), AttributeType: types.ScalarAttributeTypeS},
		{AttributeName: aws.String(storage.SKAttr), AttributeType: types.ScalarAttributeTypeS},
	}
}

func keySchema() []types.KeySchemaElement {
	return []types.KeySchemaElement{
		{AttributeName: aws.String(storage.PKAttr), KeyType: types.KeyTypeHash},
		{AttributeName: aws.String(storage.SKAttr), KeyType: types.KeyTypeRange},
	}
}
