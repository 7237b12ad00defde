package archive_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/storage"
)

// s3Target starts an S3-compatible server (gofakes3 on its memory
// backend) in the test process, with a bucket, and points the standard
// AWS configuration chain at it. It returns the target URL and the
// options that reach it.
func s3Target(t *testing.T) (string, archive.Options) {
	t.Helper()
	url, opts, _ := s3TargetParts(t)
	return url, opts
}

// s3TargetParts is s3Target, and counts the parts of multipart uploads
// the server receives (UploadPart requests).
func s3TargetParts(t *testing.T) (string, archive.Options, *atomic.Int64) {
	t.Helper()
	mem := s3mem.New()
	require.NoError(t, mem.CreateBucket("archives"))
	var parts atomic.Int64
	fake := gofakes3.New(mem).Server()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && r.URL.Query().Has("partNumber") {
			parts.Add(1)
		}
		fake.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ENDPOINT_URL_S3", srv.URL)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	return "s3://archives/timetable/prod", archive.Options{S3: archive.S3Options{UsePathStyle: true}}, &parts
}

func TestS3MissingBucket(t *testing.T) {
	ctx := context.Background()
	_, opts := s3Target(t)
	s, cfg := backends.Pebble().Open(t)
	table := cfg.Families[0].Prefix + "x"
	makeTable(t, s, table, 1)
	a, err := archive.Open(ctx, "s3://no-such-bucket/p", s, opts)
	require.NoError(t, err)
	require.Error(t, a.Archive(ctx, table))
	_, err = a.List(ctx)
	require.Error(t, err)
}

// TestS3MultipartParts archives a table of incompressible items to S3
// with 5 MiB parts: the data file is sent as a multipart upload of the
// parts the scan filled, and reads back whole. It runs without the race
// detector (scripts/test.sh runs it in its step without it), which slows
// the fake S3 server's handling of every byte of noise twentyfold.
func TestS3MultipartParts(t *testing.T) {
	backends.NoDynamoDB(t)
	if raceEnabled {
		t.Skip("17 MiB through the fake S3 server, run without the race detector (scripts/test.sh)")
	}
	ctx := context.Background()
	url, opts, parts := s3TargetParts(t)
	opts.S3.PartSize = 5 << 20
	s, _ := backends.Pebble().Open(t)
	const table = "tt_events_large"
	require.NoError(t, s.CreateTable(ctx, storage.TableSpec{Name: table}))
	noise := make([]byte, 4096)
	var items []storage.Item
	for i := range 3200 { // 3,200 items of 4 KiB of noise: 13 MiB, base64 17 MiB
		rand.Read(noise)
		items = append(items, storage.Item{PK: fmt.Sprintf("p%d", i%10), SK: fmt.Sprint(i), Attrs: map[string]any{"b": bytes.Clone(noise)}})
	}
	for b := range slices.Chunk(items, 25) {
		require.NoError(t, s.BatchWrite(ctx, table, b))
	}
	a, err := archive.Open(ctx, url, s, opts)
	require.NoError(t, err)
	require.NoError(t, a.Archive(ctx, table))
	m, err := a.Manifest(ctx, table)
	require.NoError(t, err)
	require.Equal(t, int64(len(items)), m.ItemCount)
	want := int((m.DataBytes + opts.S3.PartSize - 1) / opts.S3.PartSize)
	require.GreaterOrEqual(t, want, 3)
	t.Logf("%d bytes sent in %d parts", m.DataBytes, parts.Load())
	require.Equal(t, int64(want), parts.Load(), "parts of %d bytes", m.DataBytes)
	require.NoError(t, a.Verify(ctx, table))
}
