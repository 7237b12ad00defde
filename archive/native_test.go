package archive_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/storage/dynamostore/dynamofault"
)

// TestNativeExportRestore archives a table through DynamoDB's own export
// to S3 (faked by dynamofault, which writes AWS's export layout into the
// S3 server of the test from the table on the local server), checks
// what the manifest records of it, verifies it against the table,
// restores it into a new table through DynamoDB's import from S3, and
// reads the restored items back from the local server: they are the
// table's. A damaged export file then fails the verification.
func TestNativeExportRestore(t *testing.T) {
	ctx := context.Background()
	url, opts := s3Target(t)
	s, cfg, cp := backends.OpenDynamoExports(t)
	table := cfg.Families[0].Prefix + "1491696000000_1492300799000_4_2017"
	want := makeTable(t, s, table, 2*dynamofault.ExportFileItems+50) // three data files
	opts.Clock = clock.NewManual(archivedAt)
	opts.Facts = registered(t, s, cfg.Families[0], table, "cold")
	a, err := archive.Open(ctx, url, s, opts)
	require.NoError(t, err)

	require.NoError(t, a.Archive(ctx, table))
	m, err := a.Manifest(ctx, table)
	require.NoError(t, err)
	require.True(t, m.Verified())
	require.NotNil(t, m.Export, "archived by the store's export")
	require.Len(t, m.Export.Files, 3)
	require.Equal(t, int64(len(want)), m.ItemCount)
	require.Contains(t, m.Export.Summary, table+"/export/AWSDynamoDB/")
	require.NotEmpty(t, m.Parquet, "the archive reader's Parquet is written from the export")
	calls := cp.Calls()
	require.Equal(t, 1, calls["ExportTableToPointInTime"], "%v", calls)
	require.GreaterOrEqual(t, calls["DescribeExport"], 1)
	require.Equal(t, 1, calls["UpdateContinuousBackups"], "PITR turned on for the export")
	require.Positive(t, cp.Settings(table).PITRDays)
	require.NoError(t, a.Verify(ctx, table), "the export holds what the table holds")

	into := cfg.Families[0].Prefix + "restored"
	require.NoError(t, a.Restore(ctx, table, into))
	require.Equal(t, 1, cp.Calls()["ImportTable"], "restored by the store's import")
	require.Equal(t, want, scanAll(t, s, into))
	restored := cp.Settings(into)
	require.True(t, restored.DeletionProtection, "an imported table is protected from deletion")
	require.Positive(t, restored.PITRDays, "an imported table has point-in-time recovery")

	// One item fewer in a data file: the archive no longer verifies.
	awsCfg, err := config.LoadDefaultConfig(ctx)
	require.NoError(t, err)
	client := s3.NewFromConfig(awsCfg, func(o *s3.Options) { o.UsePathStyle = true })
	key := "timetable/prod/" + m.Export.Files[1]
	obj, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("archives"), Key: aws.String(key)})
	require.NoError(t, err)
	zr, err := gzip.NewReader(obj.Body)
	require.NoError(t, err)
	var plain bytes.Buffer
	_, err = plain.ReadFrom(zr)
	require.NoError(t, err)
	obj.Body.Close()
	lines := bytes.SplitAfter(plain.Bytes(), []byte("\n"))
	var damaged bytes.Buffer
	zw := gzip.NewWriter(&damaged)
	zw.Write(bytes.Join(lines[1:], nil))
	zw.Close()
	_, err = client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("archives"), Key: aws.String(key), Body: bytes.NewReader(damaged.Bytes())})
	require.NoError(t, err)
	require.ErrorIs(t, a.Verify(ctx, table), archive.ErrMismatch)
}

// TestNativeExportUnsupported archives on an endpoint without exports
// (the local servers): the default method scans, and method native
// fails, saying the store lacks the call.
func TestNativeExportUnsupported(t *testing.T) {
	ctx := context.Background()
	url, opts := s3Target(t)
	s, cfg := backends.Dynamo().Open(t)
	table := cfg.Families[0].Prefix + "1491696000000_1492300799000_4_2017"
	makeTable(t, s, table, 10)
	opts.Clock = clock.NewManual(archivedAt)
	opts.Facts = registered(t, s, cfg.Families[0], table, "cold")

	native := opts
	native.Method = archive.MethodNative
	a, err := archive.Open(ctx, url, s, native)
	require.NoError(t, err)
	require.ErrorIs(t, a.Archive(ctx, table), storage.ErrUnsupported)

	a, err = archive.Open(ctx, url, s, opts)
	require.NoError(t, err)
	require.NoError(t, a.Archive(ctx, table))
	m, err := a.Manifest(ctx, table)
	require.NoError(t, err)
	require.True(t, m.Verified())
	require.Nil(t, m.Export, "scanned")
}
