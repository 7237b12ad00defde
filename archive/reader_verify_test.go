package archive_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/archive"
	"github.com/timetabledb/timetable/clock"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/event"
	"github.com/timetabledb/timetable/family"
	"github.com/timetabledb/timetable/internal/backends"
	"github.com/timetabledb/timetable/lifecycle"
	"github.com/timetabledb/timetable/server"
	"github.com/timetabledb/timetable/storage"
	"github.com/timetabledb/timetable/tenant"
)

// objects reads and writes the objects of a target behind the archiver's
// back, as an operator or a fault would.
type objects interface {
	read(t *testing.T, key string) []byte
	write(t *testing.T, key string, b []byte)
	remove(t *testing.T, key string)
}

// folderObjects are the objects of a file:// target.
type folderObjects string

func (d folderObjects) path(key string) string {
	return filepath.Join(string(d), filepath.FromSlash(key))
}

func (d folderObjects) read(t *testing.T, key string) []byte {
	b, err := os.ReadFile(d.path(key))
	require.NoError(t, err)
	return b
}

func (d folderObjects) write(t *testing.T, key string, b []byte) {
	// In place, as cp does: the file keeps its inode, which a reader
	// holding it open sees change under it.
	require.NoError(t, os.WriteFile(d.path(key), b, 0o644))
}

func (d folderObjects) remove(t *testing.T, key string) { require.NoError(t, os.Remove(d.path(key))) }

// bucketObjects are the objects of the s3:// target of s3Target.
type bucketObjects struct {
	client         *s3.Client
	bucket, prefix string
}

func newBucketObjects(t *testing.T) bucketObjects {
	cfg, err := config.LoadDefaultConfig(context.Background())
	require.NoError(t, err)
	return bucketObjects{client: s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true }), bucket: "archives", prefix: "timetable/prod/"}
}

func (o bucketObjects) read(t *testing.T, key string) []byte {
	out, err := o.client.GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String(o.bucket), Key: aws.String(o.prefix + key)})
	require.NoError(t, err)
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	require.NoError(t, err)
	return b
}

func (o bucketObjects) write(t *testing.T, key string, b []byte) {
	_, err := o.client.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(o.bucket), Key: aws.String(o.prefix + key), Body: bytes.NewReader(b)})
	require.NoError(t, err)
}

func (o bucketObjects) remove(t *testing.T, key string) {
	_, err := o.client.DeleteObject(t.Context(), &s3.DeleteObjectInput{Bucket: aws.String(o.bucket), Key: aws.String(o.prefix + key)})
	require.NoError(t, err)
}

// TestReaderChecksArchives archives two weeks, then damages the
// Parquet file of the first on the target (a flipped byte, cut short,
// replaced by the other week's file of the same schema, removed) and
// reads it through the archive reader: every read of the week fails with a
// DamagedError naming the period and the file, never a short answer;
// once the right file is put back, the same archive reader answers right. A
// file read in place (file://) is checked again when it changes under
// a tier that read it before; the tier keeps its checked copy of an S3
// file, and fetches again after a damaged one. The server answers such a
// read 409, naming the period and the file.
func TestReaderChecksArchives(t *testing.T) {
	for _, tg := range []string{"file", "s3"} {
		t.Run(tg, func(t *testing.T) { testReaderChecksArchives(t, tg) })
	}
}

func testReaderChecksArchives(t *testing.T, kind string) {
	ctx := context.Background()
	s, cfg := backends.Pebble().Open(t)
	var (
		url  string
		opts archive.Options
		objs objects
	)
	if kind == "file" {
		var dir string
		url, dir = fileTarget(t)
		objs = folderObjects(dir)
	} else {
		url, opts = s3Target(t)
		objs = newBucketObjects(t)
	}
	archivedFamily(&cfg, url)
	first := time.Date(2017, 4, 10, 0, 0, 0, 0, time.UTC) // the week of April 9
	clk := clock.NewManual(first)
	weeks := []time.Time{first, first.AddDate(0, 0, 7)}
	counts := []int{50, 38}
	db, err := engine.Open(ctx, s, engine.Options{Schema: cfg, Clock: clk})
	require.NoError(t, err)
	for w, start := range weeks {
		var evs []event.Event
		for i := range counts[w] {
			evs = append(evs, event.Event{ID: fmt.Sprintf("w%d-%02d", w, i), Time: start.Add(time.Duration(i) * 97 * time.Minute),
				Series: "car-17", Fields: map[string]any{"speed": json.Number(fmt.Sprint(w*100 + i))}})
		}
		clk.Set(start.AddDate(0, 0, 6))
		_, err = db.Write(ctx, "acme", "a_table", evs)
		require.NoError(t, err)
	}
	tenants := tenant.New(s, db.Options().Schema.MetaTable, tenant.Options{Clock: db.Options().Clock})
	apiKey, err := tenants.Add(ctx, "acme", clk.Now())
	require.NoError(t, err)
	require.NoError(t, db.Close())
	clk.Set(first.AddDate(0, 0, 8*7))
	r, err := lifecycle.New(lifecycle.Options{FenceSettle: -1, ClockSkew: -1, Store: s, Families: cfg.Families, Clock: clk, MetaTable: cfg.MetaTable,
		Logger: slog.New(slog.DiscardHandler), OpenArchiver: func(target string, format family.ArchiveFormat) (lifecycle.Archiver, error) {
			o := opts
			o.Clock, o.Format, o.Facts = clk, format, registryFacts(s, cfg)
			return archive.Open(ctx, target, s, o)
		}})
	require.NoError(t, err)
	for range 3 {
		res, err := r.Reconcile(ctx, false)
		require.NoError(t, err)
		for _, x := range res {
			require.NoError(t, x.Err)
		}
	}
	a, err := archive.Open(ctx, url, s, opts)
	require.NoError(t, err)
	ms, err := a.List(ctx)
	require.NoError(t, err)
	require.Len(t, ms, 2, "both weeks archived")
	var mine, other archive.Manifest
	for _, m := range ms {
		require.Len(t, m.Parquet, 1)
		if strings.HasPrefix(m.PeriodStart, "2017-04-09") {
			mine = m
		} else {
			other = m
		}
	}
	require.NotEmpty(t, mine.Table)
	key := mine.Parquet[0].Key
	good := objs.read(t, key)
	swapped := objs.read(t, other.Parquet[0].Key)

	// readerIn is a read-only engine on an archive reader of its own, caching
	// in dir; reader caches in a folder of its own.
	readerIn := func(dir string) *engine.DB {
		archives := archive.NewReader(archive.ReaderOptions{S3: opts.S3, CacheDir: dir})
		t.Cleanup(func() { archives.Close() })
		db, err := engine.Open(ctx, s, engine.Options{Schema: cfg, Clock: clk, Archives: archives, ReadOnly: true})
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		return db
	}
	reader := func() *engine.DB { return readerIn(t.TempDir()) }
	week := engine.Query{Table: "a_table", From: weeks[0], To: weeks[0].Add(7*24*time.Hour - time.Nanosecond), Limit: 1000}
	answersRight := func(db *engine.DB) {
		t.Helper()
		p, err := db.Query(ctx, "acme", week)
		require.NoError(t, err)
		require.Empty(t, p.Gaps)
		require.Len(t, p.Events, counts[0])
		require.Equal(t, "w0-00", p.Events[0].ID)
	}
	failsDamaged := func(db *engine.DB, missing bool) {
		t.Helper()
		for _, q := range []engine.Query{week, {Table: "a_table", From: weeks[0], To: weeks[0].Add(time.Hour), Series: "car-17"}} {
			p, err := db.Query(ctx, "acme", q)
			require.ErrorIs(t, err, storage.ErrDamaged, "not a short answer: %d events", len(p.Events))
			require.Equal(t, missing, errors.Is(err, archive.ErrNotFound))
			var de *archive.DamagedError
			require.ErrorAs(t, err, &de)
			require.Equal(t, mine.Table, de.Table)
			require.Equal(t, key, de.File)
			require.Equal(t, mine.PeriodStart, de.PeriodStart)
			require.Contains(t, err.Error(), key)
			require.Contains(t, err.Error(), "period "+mine.PeriodStart)
			require.Equal(t, url, de.Target)
			require.NotContains(t, err.Error(), url, "the target is for the log, not the client")
			_, err = db.QueryJSON(ctx, "acme", q, nil)
			require.ErrorIs(t, err, storage.ErrDamaged)
			_, err = db.Aggregate(ctx, "acme", engine.AggregateQuery{Table: "a_table", From: q.From, To: q.To, Bucket: time.Hour, Funcs: []string{engine.FnCount}})
			require.ErrorIs(t, err, storage.ErrDamaged)
		}
	}

	// overHTTP answers the week's events from a server on db.
	overHTTP := func(db *engine.DB) (int, string) {
		t.Helper()
		h, err := server.New(db, server.Options{TenantDirectory: tenants, Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		srv := httptest.NewServer(h)
		defer srv.Close()
		req, err := http.NewRequest("GET", srv.URL+"/v1/tables/a_table/events?from="+week.From.Format(time.RFC3339)+"&to="+week.To.Format(time.RFC3339Nano), nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+apiKey)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}

	seasoned := reader() // reads the good file first, and keeps reading
	answersRight(seasoned)
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0x01
	for _, c := range []struct {
		name    string
		damage  func()
		missing bool
	}{
		{"a flipped byte", func() { objs.write(t, key, flipped) }, false},
		{"cut short", func() { objs.write(t, key, good[:len(good)-100]) }, false},
		{"the other week's file", func() { objs.write(t, key, swapped) }, false},
		{"missing", func() { objs.remove(t, key) }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			fresh := reader()
			c.damage()
			failsDamaged(fresh, c.missing)
			failsDamaged(fresh, c.missing) // again: a failure is not kept
			code, body := overHTTP(fresh)
			require.Equal(t, http.StatusConflict, code, body)
			require.Contains(t, body, "stored data damaged")
			require.Contains(t, body, key)
			require.Contains(t, body, mine.PeriodStart)
			require.NotContains(t, body, strings.TrimPrefix(url, "file://"))
			if kind == "file" {
				failsDamaged(seasoned, c.missing)
			} else {
				answersRight(seasoned) // its copy was checked
			}
			objs.write(t, key, good)
			code, body = overHTTP(fresh)
			require.Equal(t, http.StatusOK, code, body)
			answersRight(fresh)
			answersRight(seasoned)
		})
	}

	if kind == "s3" {
		// A fetch into the cache that a kill stopped is removed by the
		// next fetch of its file.
		dir := t.TempDir()
		left := filepath.Join(dir, "timetable-cold-"+mine.Parquet[0].SHA256+".parquet.part123")
		require.NoError(t, os.WriteFile(left, good[:len(good)/2], 0o644))
		answersRight(readerIn(dir))
		require.NoFileExists(t, left)
	}
}
