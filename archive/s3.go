package archive

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// s3Target keeps archives in an S3 bucket under a prefix. A PutObject, or
// a completed multipart upload, replaces an object whole, so a reader
// sees the old object or the new one.
type s3Target struct {
	client   *s3.Client
	uploader *manager.Uploader
	bucket   string
	prefix   string // without a trailing slash; may be empty
}

// newS3Target opens a bucket through the standard AWS configuration chain
// (AWS_REGION, AWS_PROFILE, the credential sources, and
// AWS_ENDPOINT_URL_S3 for an S3-compatible server).
func newS3Target(ctx context.Context, bucket, prefix string, o S3Options) (*s3Target, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("load AWS configuration: %w", err)
	}
	client := s3.NewFromConfig(cfg, func(so *s3.Options) {
		so.UsePathStyle = o.UsePathStyle
	})
	uploader := manager.NewUploader(client, func(u *manager.Uploader) {
		u.PartSize = cmp.Or(o.PartSize, DefaultPartSize)
		u.Concurrency = cmp.Or(o.Concurrency, DefaultConcurrency)
	})
	return &s3Target{client: client, uploader: uploader, bucket: bucket, prefix: prefix}, nil
}

func (t *s3Target) String() string {
	if t.prefix == "" {
		return "s3://" + t.bucket
	}
	return "s3://" + t.bucket + "/" + t.prefix
}

func (t *s3Target) key(key string) string {
	if t.prefix == "" {
		return key
	}
	return t.prefix + "/" + key
}

func (t *s3Target) put(ctx context.Context, key string, r io.ReadSeeker, size int64) error {
	_, err := t.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:        aws.String(t.bucket),
		Key:           aws.String(t.key(key)),
		Body:          r,
		ContentLength: aws.Int64(size),
	})
	if err != nil {
		return fmt.Errorf("put %s/%s: %w", t, key, err)
	}
	return nil
}

// create streams an object through S3's upload manager: the bytes
// written go through a pipe to the manager, which sends each part as it
// fills (a PutObject for an object smaller than one part, a multipart
// upload otherwise), so memory holds a few parts and nothing is spooled
// to disk. S3 makes a multipart upload's object visible only when it is
// completed (Commit); Abort, or a failed part, aborts the upload and its
// parts. A process killed mid-upload leaves an incomplete multipart
// upload, invisible and billed: create first aborts the uploads of the
// key left so (a key has one writer at a time: the lifecycle's lease,
// an operator's one command), and a bucket lifecycle rule
// (AbortIncompleteMultipartUpload) removes those of keys never written
// again.
func (t *s3Target) create(ctx context.Context, key string) (objectWriter, error) {
	if err := t.abortLeftovers(ctx, key); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	pr, pw := io.Pipe()
	w := &s3Writer{pw: pw, cancel: cancel, done: make(chan error, 1)}
	go func() {
		_, err := t.uploader.Upload(ctx, &s3.PutObjectInput{
			Bucket: aws.String(t.bucket),
			Key:    aws.String(t.key(key)),
			Body:   pr,
		})
		if err != nil {
			err = fmt.Errorf("upload %s/%s: %w", t, key, err)
		}
		pr.CloseWithError(cmp.Or(err, io.ErrClosedPipe))
		w.done <- err
	}()
	return w, nil
}

// abortLeftovers aborts the incomplete multipart uploads of key. An
// S3-compatible server that does not list uploads (NotImplemented), or
// answers NoSuchUpload for a bucket that never had one (gofakes3), has
// none this could find.
func (t *s3Target) abortLeftovers(ctx context.Context, key string) error {
	full := t.key(key)
	p := s3.NewListMultipartUploadsPaginator(t.client, &s3.ListMultipartUploadsInput{
		Bucket: aws.String(t.bucket),
		Prefix: aws.String(full),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		var ae smithy.APIError
		if errors.As(err, &ae) && (ae.ErrorCode() == "NotImplemented" || ae.ErrorCode() == "NoSuchUpload") {
			return nil
		}
		if err != nil {
			return fmt.Errorf("list the uploads of %s/%s left behind: %w", t, key, err)
		}
		for _, u := range page.Uploads {
			if aws.ToString(u.Key) != full {
				continue
			}
			_, err := t.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
				Bucket: aws.String(t.bucket), Key: u.Key, UploadId: u.UploadId,
			})
			var nu *types.NoSuchUpload
			if err != nil && !errors.As(err, &nu) {
				return fmt.Errorf("abort an upload of %s/%s left behind: %w", t, key, err)
			}
		}
	}
	return nil
}

// s3Writer is an object streamed to S3. Its goroutine, running the
// upload, ends when Commit or Abort returns.
type s3Writer struct {
	pw     *io.PipeWriter
	cancel context.CancelFunc
	done   chan error
	ended  bool
	err    error
}

func (w *s3Writer) Write(p []byte) (int, error) { return w.pw.Write(p) }

func (w *s3Writer) Commit() error {
	if w.ended {
		return w.err
	}
	w.pw.Close()
	w.ended, w.err = true, <-w.done
	w.cancel()
	return w.err
}

func (w *s3Writer) Abort() error {
	if w.ended {
		return nil
	}
	w.cancel()
	w.pw.CloseWithError(errAborted)
	<-w.done
	w.ended, w.err = true, errAborted
	return nil
}

func (t *s3Target) get(ctx context.Context, key string) (io.ReadCloser, error) {
	out, err := t.client.GetObject(ctx, &s3.GetObjectInput{
		Bucket: aws.String(t.bucket),
		Key:    aws.String(t.key(key)),
	})
	if isNoSuchKey(err) {
		return nil, fmt.Errorf("get %s/%s: %w", t, key, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get %s/%s: %w", t, key, err)
	}
	return out.Body, nil
}

// isNoSuchKey reports whether err says an object is absent.
func isNoSuchKey(err error) bool {
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	if errors.As(err, &nsk) || errors.As(err, &nf) {
		return true
	}
	var ae smithy.APIError
	return errors.As(err, &ae) && (ae.ErrorCode() == "NoSuchKey" || ae.ErrorCode() == "NotFound")
}

func (t *s3Target) del(ctx context.Context, key string) error {
	_, err := t.client.DeleteObject(ctx, &s3.DeleteObjectInput{
		Bucket: aws.String(t.bucket),
		Key:    aws.String(t.key(key)),
	})
	if err != nil && !isNoSuchKey(err) {
		return fmt.Errorf("delete %s/%s: %w", t, key, err)
	}
	return nil
}

func (t *s3Target) list(ctx context.Context, match func(name string) bool, fn func(key string) error) error {
	root := ""
	if t.prefix != "" {
		root = t.prefix + "/"
	}
	p := s3.NewListObjectsV2Paginator(t.client, &s3.ListObjectsV2Input{
		Bucket: aws.String(t.bucket),
		Prefix: aws.String(root),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("list %s: %w", t, err)
		}
		for _, o := range page.Contents {
			rel := strings.TrimPrefix(aws.ToString(o.Key), root)
			folder, base, ok := strings.Cut(rel, "/")
			if !ok || folder == "" || strings.Contains(base, "/") || !match(base) {
				continue
			}
			if err := fn(rel); err != nil {
				return err
			}
		}
	}
	return nil
}
