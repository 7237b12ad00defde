package dynamostore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/timetabledb/timetable/storage"
)

var _ storage.Exporter = (*Store)(nil)

// exportWaitLimit bounds the wait for an export or import when ctx has
// no deadline: AWS's exports of the largest tables take hours.
const exportWaitLimit = 24 * time.Hour

// ExportTable exports a table to S3 with ExportTableToPointInTime, in
// DYNAMODB_JSON, which reads the table's backups, not its capacity. It
// turns point-in-time recovery on first (UpdateContinuousBackups), which
// the export needs, and waits with the SDK's ExportCompleted waiter
// until the export is done or ctx ends. The request's client token is
// derived from the table's ARN and creation time and the destination, so
// that the same export asked again within AWS's eight hours of
// idempotency (an archive that ran out of time and is run again) is the
// same job, waited for, not a second one.
//
// An endpoint without exports (DynamoDB Local, dynalite) answers
// UnknownOperationException: ExportTable returns an error wrapping
// storage.ErrUnsupported, and, as the endpoint will not learn the call,
// does not ask it again.
func (s *Store) ExportTable(ctx context.Context, table string, dest storage.S3Location) (storage.TableExport, error) {
	if err := s.gate.Enter(); err != nil {
		return storage.TableExport{}, err
	}
	defer s.gate.Exit()
	if s.noExport.Load() {
		return storage.TableExport{}, fmt.Errorf("export table %q: %w", table, storage.ErrUnsupported)
	}
	desc, err := s.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)}, s.callOpts...)
	if err != nil {
		return storage.TableExport{}, fmt.Errorf("export table %q: %w", table, mapError(opOther, err))
	}
	arn := aws.ToString(desc.Table.TableArn)
	if err := s.enablePITRForExport(ctx, table); err != nil {
		return storage.TableExport{}, fmt.Errorf("export table %q: %w", table, err)
	}
	token := clientToken(arn, aws.ToTime(desc.Table.CreationDateTime).UTC().Format(time.RFC3339Nano), dest.Bucket, dest.Prefix)
	in := &dynamodb.ExportTableToPointInTimeInput{
		TableArn:     aws.String(arn),
		S3Bucket:     aws.String(dest.Bucket),
		ExportFormat: types.ExportFormatDynamodbJson,
		ClientToken:  aws.String(token),
	}
	if dest.Prefix != "" {
		in.S3Prefix = aws.String(dest.Prefix)
	}
	out, err := s.client.ExportTableToPointInTime(ctx, in, s.callOpts...)
	if err != nil {
		return storage.TableExport{}, fmt.Errorf("export table %q: %w", table, s.exportError(err))
	}
	exportARN := aws.ToString(out.ExportDescription.ExportArn)
	w := dynamodb.NewExportCompletedWaiter(s.client, func(o *dynamodb.ExportCompletedWaiterOptions) {
		o.MinDelay = s.opts.WaitMinDelay
		o.MaxDelay = s.opts.WaitMaxDelay
		o.ClientOptions = append(o.ClientOptions, s.callOpts...)
	})
	done, err := w.WaitForOutput(ctx, &dynamodb.DescribeExportInput{ExportArn: aws.String(exportARN)}, waitLimit(ctx))
	if err != nil {
		return storage.TableExport{}, fmt.Errorf("export table %q: wait for export %s: %w", table, exportARN, mapError(opOther, err))
	}
	d := done.ExportDescription
	if d.ExportStatus != types.ExportStatusCompleted {
		return storage.TableExport{}, fmt.Errorf("export table %q: export %s %s: %s: %s", table, exportARN, d.ExportStatus,
			aws.ToString(d.FailureCode), aws.ToString(d.FailureMessage))
	}
	id := exportARN[strings.LastIndexByte(exportARN, '/')+1:]
	x := storage.TableExport{
		ARN: exportARN, ID: id,
		ItemCount:   aws.ToInt64(d.ItemCount),
		BilledBytes: aws.ToInt64(d.BilledSizeBytes),
		ExportTime:  aws.ToTime(d.ExportTime),
		ManifestKey: exportKey(dest.Prefix, "AWSDynamoDB/"+id+"/manifest-summary.json"),
	}
	return x, nil
}

// ImportTable creates a table from gzip-compressed DYNAMODB_JSON files in
// S3 with ImportTable, which writes the table without consuming write
// capacity, and waits with the SDK's ImportCompleted waiter. The table
// has the key schema of every table of the store and spec's billing and
// capacity; ImportTable takes neither tags nor deletion protection nor
// point-in-time recovery, so the tags are added after, best effort as
// everywhere (tags.go), and spec's deletion protection and point-in-time
// recovery once the import is done (an imported table is as safe as a
// created one from then on). spec's TTL, class and auto scaling are not
// set. An endpoint without imports
// answers as for ExportTable.
func (s *Store) ImportTable(ctx context.Context, spec storage.TableSpec, src storage.S3Location) (storage.TableImport, error) {
	if err := s.gate.Enter(); err != nil {
		return storage.TableImport{}, err
	}
	defer s.gate.Exit()
	if s.noExport.Load() {
		return storage.TableImport{}, fmt.Errorf("import table %q: %w", spec.Name, storage.ErrUnsupported)
	}
	billing, throughput := capacityInput(spec.Capacity)
	in := &dynamodb.ImportTableInput{
		InputFormat:          types.InputFormatDynamodbJson,
		InputCompressionType: types.InputCompressionTypeGzip,
		S3BucketSource:       &types.S3BucketSource{S3Bucket: aws.String(src.Bucket), S3KeyPrefix: aws.String(src.Prefix)},
		TableCreationParameters: &types.TableCreationParameters{
			TableName:             aws.String(spec.Name),
			AttributeDefinitions:  keyAttributes(),
			KeySchema:             keySchema(),
			BillingMode:           billing,
			ProvisionedThroughput: throughput,
		},
		ClientToken: aws.String(clientToken("import", spec.Name, src.Bucket, src.Prefix)),
	}
	out, err := s.client.ImportTable(ctx, in, s.callOpts...)
	if err != nil {
		return storage.TableImport{}, fmt.Errorf("import table %q: %w", spec.Name, s.exportError(err))
	}
	importARN := aws.ToString(out.ImportTableDescription.ImportArn)
	w := dynamodb.NewImportCompletedWaiter(s.client, func(o *dynamodb.ImportCompletedWaiterOptions) {
		o.MinDelay = s.opts.WaitMinDelay
		o.MaxDelay = s.opts.WaitMaxDelay
		o.ClientOptions = append(o.ClientOptions, s.callOpts...)
	})
	done, err := w.WaitForOutput(ctx, &dynamodb.DescribeImportInput{ImportArn: aws.String(importARN)}, waitLimit(ctx))
	if err != nil {
		return storage.TableImport{}, fmt.Errorf("import table %q: wait for import %s: %w", spec.Name, importARN, mapError(opOther, err))
	}
	d := done.ImportTableDescription
	if d.ImportStatus != types.ImportStatusCompleted {
		return storage.TableImport{}, fmt.Errorf("import table %q: import %s %s: %s: %s", spec.Name, importARN, d.ImportStatus,
			aws.ToString(d.FailureCode), aws.ToString(d.FailureMessage))
	}
	if err := s.waitActive(ctx, spec.Name); err != nil {
		return storage.TableImport{}, fmt.Errorf("import table %q: %w", spec.Name, err)
	}
	if len(spec.Tags) > 0 {
		s.labelTable(ctx, spec.Name, aws.ToString(d.TableArn), spec.Tags)
	}
	if spec.DeletionProtection {
		in := &dynamodb.UpdateTableInput{TableName: aws.String(spec.Name), DeletionProtectionEnabled: aws.Bool(true)}
		if err := s.sendUpdate(ctx, in, s.waitActive); err != nil {
			return storage.TableImport{}, fmt.Errorf("import table %q: deletion protection: %w", spec.Name, err)
		}
	}
	if spec.PITRDays > 0 {
		if err := s.setPITR(ctx, spec.Name, spec.PITRDays); err != nil {
			return storage.TableImport{}, fmt.Errorf("import table %q: %w", spec.Name, err)
		}
	}
	return storage.TableImport{ARN: importARN, Items: d.ImportedItemCount, Processed: d.ProcessedItemCount, Errors: d.ErrorCount}, nil
}

// enablePITRForExport turns point-in-time recovery on for an export,
// keeping the recovery period the table has. An endpoint without it
// answers UnknownOperationException, and has no export either.
func (s *Store) enablePITRForExport(ctx context.Context, table string) error {
	out, err := s.client.DescribeContinuousBackups(ctx, &dynamodb.DescribeContinuousBackupsInput{TableName: aws.String(table)}, s.callOpts...)
	if err != nil {
		return fmt.Errorf("describe continuous backups: %w", s.exportError(err))
	}
	if d := out.ContinuousBackupsDescription; d != nil && d.PointInTimeRecoveryDescription != nil &&
		d.PointInTimeRecoveryDescription.PointInTimeRecoveryStatus == types.PointInTimeRecoveryStatusEnabled {
		return nil
	}
	_, err = s.client.UpdateContinuousBackups(ctx, &dynamodb.UpdateContinuousBackupsInput{TableName: aws.String(table),
		PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(true)}}, s.callOpts...)
	if err != nil {
		return fmt.Errorf("update continuous backups: %w", s.exportError(err))
	}
	return nil
}

// exportError maps an error of an export or import call: an unknown
// operation is storage.ErrUnsupported, and remembered.
func (s *Store) exportError(err error) error {
	if isUnknownOperation(err) {
		if !s.noExport.Swap(true) {
			s.log.Info("dynamodb endpoint has no export to S3 or import from S3: archives scan the table instead", "err", err)
		}
		return errors.Join(storage.ErrUnsupported, err)
	}
	return mapError(opOther, err)
}

// waitLimit is how long a waiter may wait: until ctx's deadline, or
// exportWaitLimit.
func waitLimit(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		return max(time.Until(d), time.Millisecond)
	}
	return exportWaitLimit
}

// clientToken returns an idempotency token of the parts: the same parts,
// the same token.
func clientToken(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(h[:16])
}

// exportKey joins an export's prefix and a key under it.
func exportKey(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return strings.TrimSuffix(prefix, "/") + "/" + key
}
