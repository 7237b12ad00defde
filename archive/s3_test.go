package archive_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/internal/backends"
)

// s3Target starts an S3-compatible server (gofakes3 on its memory
// backend) in the test process, with a bucket, and points the standard
// AWS configuration chain at it. It returns the target URL and the
// options that reach it.
func s3Target(t *testing.T) (string, archive.Options) {
	t.Helper()
	mem := s3mem.New()
	require.NoError(t, mem.CreateBucket("archives"))
	srv := httptest.NewServer(gofakes3.New(mem).Server())
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ENDPOINT_URL_S3", srv.URL)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	return "s3://archives/timetable/prod", archive.Options{S3: archive.S3Options{UsePathStyle: true}}
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
