package archive_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
)

// TestArchiveRemovesWhatAKillLeft leaves behind, beside the objects of a
// table's archive, what archives killed mid-write leave: in a folder the
// temporary files of the data file, the Parquet file and the manifest
// (".data.ndjson.gz.tmp…", as the target names them); in S3 incomplete
// multipart uploads of the keys streamed. The next archive of the table
// writes those objects again, and removes them: none is left.
func TestArchiveRemovesWhatAKillLeft(t *testing.T) {
	const table = "tt_events_1491696000000_1492300799000_4_2017"
	all := []string{
		table + "/" + archive.DataObject,
		table + "/" + archive.ManifestObject,
		"events/period=2017-04-09T00:00:00Z/write_month=2017-04/" + table + "-g1-s0-0.parquet",
	}
	for _, kind := range []string{"file", "s3"} {
		t.Run(kind, func(t *testing.T) {
			keys := all
			ctx := context.Background()
			s, _ := backends.Pebble().Open(t)
			makeTable(t, s, table, 40)
			var (
				url  string
				opts archive.Options
				left func() []string
			)
			if kind == "file" {
				var dir string
				url, dir = fileTarget(t)
				for _, k := range keys {
					p := filepath.Join(dir, filepath.FromSlash(k))
					require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
					for range 3 { // three kills
						f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".tmp*")
						require.NoError(t, err)
						_, err = f.WriteString("part of an object")
						require.NoError(t, err)
						require.NoError(t, f.Close())
					}
				}
				left = func() []string {
					var out []string
					require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
						if err == nil && strings.Contains(d.Name(), ".tmp") {
							out = append(out, p)
						}
						return err
					}))
					return out
				}
			} else {
				url, opts = s3Target(t)
				objs := newBucketObjects(t)
				// The manifest is written by one PutObject, which leaves
				// nothing: the data and Parquet files are streamed.
				keys = []string{keys[0], keys[2]}
				for _, k := range keys {
					for range 3 {
						up, err := objs.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(objs.bucket), Key: aws.String(objs.prefix + k)})
						require.NoError(t, err)
						_, err = objs.client.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(objs.bucket), Key: aws.String(objs.prefix + k),
							UploadId: up.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader("part of an object")})
						require.NoError(t, err)
					}
				}
				left = func() []string {
					out, err := objs.client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(objs.bucket)})
					require.NoError(t, err)
					var keys []string
					for _, u := range out.Uploads {
						keys = append(keys, aws.ToString(u.Key))
					}
					return keys
				}
			}
			require.Len(t, left(), 3*len(keys), "what the kills left")
			opts.Format = family.ArchiveParquet
			a, err := archive.Open(ctx, url, s, opts)
			require.NoError(t, err)
			require.NoError(t, a.Archive(ctx, table))
			m, err := a.Manifest(ctx, table)
			require.NoError(t, err)
			require.True(t, m.Verified())
			require.Len(t, m.Parquet, 1)
			require.Equal(t, keys[len(keys)-1], m.Parquet[0].Key)
			require.Empty(t, left())
		})
	}
}
